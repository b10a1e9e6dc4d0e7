"""Cards: suits, ranks, and cards that remember whose pack they came from.

Text forms (documented in docs/rules.md):

* a face is a rank letter and a suit letter: ``AH``, ``5H``, ``TS`` (ten), ``KC``;
* a card is its face and its owner's seat: ``5H@1`` is the five of hearts from
  seat 1's pack. Seats are numbered from 0.

``Card.parse(str(card)) == card`` for every card.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass

RANK_LETTERS = "A23456789TJQK"
ACE = 1
KING = 13
PACK_SIZE = 52


class Suit(enum.IntEnum):
    """The four suits, in canonical pack order (clubs, diamonds, hearts, spades)."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def letter(self) -> str:
        return "CDHS"[self]

    def __str__(self) -> str:
        """The suit's text form, its letter (an IntEnum would print its number)."""
        return self.letter

    @property
    def symbol(self) -> str:
        return "♣♦♥♠"[self]

    @property
    def is_red(self) -> bool:
        return self in (Suit.DIAMONDS, Suit.HEARTS)

    @classmethod
    def parse(cls, letter: str) -> Suit:
        index = "CDHS".find(letter)
        if len(letter) != 1 or index < 0:
            raise ValueError(f"unknown suit {letter!r}: expected one of C, D, H, S")
        return cls(index)


# Read by every build-down check: a module global, not `Suit.HEARTS`, which costs about 900
# instructions in Python 3.11 (its enum classes have a __getattr__).
_RED_SUITS = (Suit.DIAMONDS, Suit.HEARTS)


def parse_rank(letter: str) -> int:
    index = RANK_LETTERS.find(letter)
    if len(letter) != 1 or index < 0:
        raise ValueError(f"unknown rank {letter!r}: expected one of {' '.join(RANK_LETTERS)}")
    return index + 1


@dataclass(frozen=True, slots=True)
class Card:
    """One card of one player's pack. ``owner`` is the seat whose back it wears."""

    rank: int
    suit: Suit
    owner: int

    def __post_init__(self) -> None:
        if not ACE <= self.rank <= KING:
            raise ValueError(f"rank {self.rank} is outside 1..13")
        if self.owner < 0:
            raise ValueError(f"owner seat {self.owner} is negative")

    # face and is_red repeat Suit.letter and Suit.is_red inline: both sit on the engine's
    # hot path, where the extra property call is measurable.

    @property
    def face(self) -> str:
        """Rank and suit letters without the owner, e.g. ``5H``."""
        return RANK_LETTERS[self.rank - 1] + "CDHS"[self.suit]

    @property
    def is_red(self) -> bool:
        return self.suit in _RED_SUITS

    @property
    def index(self) -> int:
        """Position in the canonical pack order: suit-major, ace to king (AC=0 … KS=51)."""
        return self.suit * 13 + self.rank - 1

    def display(self) -> str:
        """Human form with a suit symbol and ``10`` for ten, e.g. ``10♥``."""
        rank = "10" if self.rank == 10 else RANK_LETTERS[self.rank - 1]
        return rank + self.suit.symbol

    def __str__(self) -> str:
        return f"{self.face}@{self.owner}"

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse ``5H@1``."""
        face, at, owner = text.partition("@")
        canonical = owner.isascii() and owner.isdigit() and str(int(owner)) == owner
        if not at or not canonical:
            raise ValueError(f"bad card {text!r}: expected a face and a seat, like '5H@1'")
        return cls.from_face(face, int(owner))

    @classmethod
    def from_face(cls, face: str, owner: int) -> Card:
        """Parse a face such as ``5H`` and attach the owner seat."""
        if len(face) != 2:
            raise ValueError(f"bad card face {face!r}: expected rank and suit, like '5H' or 'TS'")
        return _card(face, owner)


# One object per card: a replay parses every card its moves name, and the hands a match
# keeps would otherwise hold a fresh copy of each, so memory would grow with the log.
@functools.lru_cache(maxsize=2048)
def _card(face: str, owner: int) -> Card:
    return Card(parse_rank(face[0]), Suit.parse(face[1]), owner)


def canonical_pack(owner: int) -> tuple[Card, ...]:
    """The 52 cards of one pack in canonical order: AC 2C … KC AD … KS."""
    return tuple(Card(rank, suit, owner) for suit in Suit for rank in range(ACE, KING + 1))
