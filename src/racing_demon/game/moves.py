"""Moves: immutable values with a text form that round-trips.

Grammar (docs/rules.md, "Move text"), seats from 0 and piles from 1::

    <seat> turn <faces>          turn the stock; faces in the order they land
    <seat> recycle               turn the whole waste over as the new stock
    <seat> <from>><to> <faces>   move cards; from: demon | waste | w1..w5
                                 to: f+ (new foundation) | f1.. | w1..w5 | u1..u5 (under)
    <seat> call | agree | resign

Examples: ``0 demon>f+ AH``, ``1 waste>f3 5H``, ``0 w2>w4 9D 8S``, ``2 demon>u1 8C``.
Cards are named by face; their owner is always the moving seat. A log names many moves
more than once (the same turn every pass through the stock): ``MoveTexts`` parses each
text once for whoever owns it.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass
from typing import Final

from racing_demon.game.cards import Card


class MoveKind(enum.StrEnum):
    TURN = "turn"
    RECYCLE = "recycle"
    PLAY = "play"  # any card move from demon, waste or a work pile
    CALL = "call"
    AGREE = "agree"
    RESIGN = "resign"


class Zone(enum.IntEnum):
    """Where a card move starts or ends; the order is the sort order of moves."""

    DEMON = 0
    WASTE = 1
    WORK = 2  # onto (or into, when empty) a work pile
    UNDER = 3  # slid under the head of a work pile
    FOUNDATION = 4
    NEW_FOUNDATION = 5


# The replay names the members it tests on every record by module globals: in Python
# 3.11 an enum class has a __getattr__, which makes each `Zone.WORK` about 900 instructions
# (3.12 drops it), a global about 20.
PLAY: Final = MoveKind.PLAY
TURN: Final = MoveKind.TURN
DEMON_ZONE: Final = Zone.DEMON
WASTE_ZONE: Final = Zone.WASTE
WORK_ZONE: Final = Zone.WORK
UNDER_ZONE: Final = Zone.UNDER
FOUNDATION_ZONE: Final = Zone.FOUNDATION
NEW_FOUNDATION_ZONE: Final = Zone.NEW_FOUNDATION


_ZONE_NAMES = {
    Zone.DEMON: "demon",
    Zone.WASTE: "waste",
    Zone.WORK: "w",
    Zone.UNDER: "u",
    Zone.FOUNDATION: "f",
    Zone.NEW_FOUNDATION: "f+",
}
_UNNUMBERED = frozenset({Zone.DEMON, Zone.WASTE, Zone.NEW_FOUNDATION})
SOURCE_ZONES = frozenset({Zone.DEMON, Zone.WASTE, Zone.WORK})
TARGET_ZONES = frozenset({Zone.WORK, Zone.UNDER, Zone.FOUNDATION, Zone.NEW_FOUNDATION})
_KIND_ORDER = {kind: order for order, kind in enumerate(MoveKind)}
_SIMPLE_KINDS = {
    kind.value: kind for kind in (MoveKind.RECYCLE, MoveKind.CALL, MoveKind.AGREE, MoveKind.RESIGN)
}


@dataclass(frozen=True, slots=True)
class Place:
    """A pile named in a move. ``index`` is 0-based; the text is 1-based (``w1`` is index 0)."""

    zone: Zone
    index: int = 0

    def __str__(self) -> str:
        name = _ZONE_NAMES[self.zone]
        return name if self.zone in _UNNUMBERED else f"{name}{self.index + 1}"

    @classmethod
    def parse(cls, text: str) -> Place:
        return _parse_place(text)


# Every move names two places and there are only a few dozen; a replay parses thousands.
@functools.lru_cache(maxsize=64)
def _parse_place(text: str) -> Place:
    if text == "demon":
        return Place(Zone.DEMON)
    if text == "waste":
        return Place(Zone.WASTE)
    if text == "f+":
        return Place(Zone.NEW_FOUNDATION)
    zone = {"w": Zone.WORK, "u": Zone.UNDER, "f": Zone.FOUNDATION}.get(text[:1])
    number = text[1:]
    if zone is None or not (number.isascii() and number.isdigit()) or number[0] == "0":
        raise ValueError(
            f"bad pile {text!r}: expected demon, waste, w<n>, u<n>, f<n> or f+ (n from 1)"
        )
    return Place(zone, int(number) - 1)


DEMON = Place(Zone.DEMON)
WASTE = Place(Zone.WASTE)
NEW_FOUNDATION = Place(Zone.NEW_FOUNDATION)


@dataclass(frozen=True, slots=True)
class Move:
    """One action of one seat. ``cards`` are named explicitly, leading card first."""

    seat: int
    kind: MoveKind
    source: Place | None = None
    target: Place | None = None
    cards: tuple[Card, ...] = ()

    def __post_init__(self) -> None:
        if self.seat < 0:
            raise ValueError(f"seat {self.seat} is negative")
        is_play = self.kind is PLAY
        if is_play != (self.source is not None and self.target is not None):
            raise ValueError(f"a {self.kind} move {'needs' if is_play else 'has no'} piles")
        if (
            self.source is not None
            and self.target is not None
            and (self.source.zone not in SOURCE_ZONES or self.target.zone not in TARGET_ZONES)
        ):
            raise ValueError(f"cards cannot move from {self.source} to {self.target}")
        if (is_play or self.kind is TURN) != bool(self.cards):
            raise ValueError(f"a {self.kind} move {'names' if self.cards else 'names no'} cards")
        for card in self.cards:  # a loop: any() over a generator costs more per move
            if card.owner != self.seat:
                raise ValueError(f"seat {self.seat} can only move cards of its own pack")

    def sort_key(self) -> tuple[int, int, int, int, int, tuple[int, ...]]:
        source = self.source or DEMON
        target = self.target or DEMON
        return (
            _KIND_ORDER[self.kind],
            source.zone,
            source.index,
            target.zone,
            target.index,
            tuple(card.index for card in self.cards),
        )

    def __str__(self) -> str:
        faces = " ".join(card.face for card in self.cards)
        if self.kind is MoveKind.PLAY:
            return f"{self.seat} {self.source}>{self.target} {faces}"
        if self.kind is MoveKind.TURN:
            return f"{self.seat} turn {faces}"
        return f"{self.seat} {self.kind}"

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> Move:
        words = text.split(" ")
        if len(words) < 2 or not (words[0].isascii() and words[0].isdigit()):
            raise ValueError(f"bad move {text!r}: expected '<seat> <action> ...'")
        if str(int(words[0])) != words[0] or "" in words:
            raise ValueError(f"bad move {text!r}: not in canonical form")
        player, action, faces = int(words[0]), words[1], words[2:]
        cards = tuple([Card.from_face(face, player) for face in faces])
        if action in _SIMPLE_KINDS:
            if cards:
                raise ValueError(f"bad move {text!r}: {action} names no cards")
            return cls(player, _SIMPLE_KINDS[action])
        if action == "turn":
            return cls(player, TURN, cards=cards)
        source, arrow, target = action.partition(">")
        if not arrow:
            raise ValueError(f"bad move {text!r}: unknown action {action!r}")
        return cls(player, PLAY, _parse_place(source), _parse_place(target), cards)


MOVE_TEXTS_KEPT = 1024  # about a hand's distinct move texts, where nearly all repeats fall


class MoveTexts:
    """``Move.parse`` that keeps the moves of the last ``kept`` texts it read, for one
    owner (a verification makes its own and drops it with it: no cache is global).

    A text that does not parse raises as ``Move.parse`` does, every time; it is not kept.
    """

    __slots__ = ("parse",)

    def __init__(self, kept: int = MOVE_TEXTS_KEPT) -> None:
        self.parse = functools.lru_cache(maxsize=kept)(Move.parse)
