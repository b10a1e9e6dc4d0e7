"""The position of one hand: every seat's layout, the shared foundations, the clock.

All values are immutable; the engine returns a new ``State`` for every change and
shares the untouched parts. Pile orientation, used everywhere:

* demon, stock, waste: bottom first, top last (the top of the demon pile is face up);
* a work pile: head (highest card, furthest from the player) first, exposed card last;
* a foundation: one level per rank from the ace up; a level holds one card, or
  several when the tie rule let cards reach it at the same instant.

``State.parse(state.to_text(), state.rules) == state`` (docs/rules.md, "State text").
"""

from __future__ import annotations

import enum
import hashlib
import itertools
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from racing_demon.game.cards import KING, PACK_SIZE, Card, Suit, canonical_pack
from racing_demon.game.rules import DEMON_CARDS, Rules

Pile = tuple[Card, ...]
STATE_FORMAT = "racing-demon/state/v1"


class Phase(enum.StrEnum):
    PLAYING = "playing"
    CALLED = "called"  # a call was made; moves already in motion may land until the grace ends
    ENDED = "ended"


# The replay names the members it tests on every record by module globals: in Python
# 3.11 an enum class has a __getattr__, which makes each `Phase.ENDED` about 900 instructions
# (3.12 drops it), a global about 20.
PLAYING: Final = Phase.PLAYING
CALLED: Final = Phase.CALLED
ENDED: Final = Phase.ENDED


class EndReason(enum.StrEnum):
    CALL = "call"
    DEMON_EMPTY = "demon_empty"  # nertz: the hand ends the moment a demon pile empties
    BLOCKED = "blocked"
    NO_CENTRE = "no_centre"
    ABANDONED = "abandoned"
    RESIGNED = "resigned"


# A weak reference may name a seat: the stuck search keeps each live seat's search
# (racing_demon.game.stall.SEARCHES) for exactly as long as the seat lives. Built, like
# State, by filling its dict at once (a record builds one).
@dataclass(frozen=True, init=False)
class Seat:
    demon: Pile
    work: tuple[Pile, ...]
    stock: Pile
    waste: Pile

    def __init__(self, demon: Pile, work: tuple[Pile, ...], stock: Pile, waste: Pile) -> None:
        self.__dict__.update(demon=demon, work=work, stock=stock, waste=waste)

    @property
    def cycle_size(self) -> int:
        """Cards that turning and recycling pass through."""
        return len(self.stock) + len(self.waste)

    def cards(self) -> Iterator[Card]:
        yield from self.demon
        for pile in self.work:
            yield from pile
        yield from self.stock
        yield from self.waste

    def __str__(self) -> str:
        """The seat's piles as its line of the state text gives them (after ``seat N``)."""
        work = "|".join(_faces(pile) for pile in self.work)
        return (
            f"demon={_faces(self.demon)} work={work} "
            f"stock={_faces(self.stock)} waste={_faces(self.waste)}"
        )

    @classmethod
    def deal(cls, pack: Sequence[Card], work_piles: int) -> Seat:
        """Lay out a shuffled pack (docs/deal-spec.md, "Layout")."""
        if len(pack) != PACK_SIZE:
            raise ValueError(f"a pack has {PACK_SIZE} cards, not {len(pack)}")
        first_stock = DEMON_CARDS + work_piles
        return cls(
            demon=tuple(pack[:DEMON_CARDS]),
            work=tuple((card,) for card in pack[DEMON_CARDS:first_stock]),
            stock=tuple(reversed(pack[first_stock:])),
            waste=(),
        )


@dataclass(frozen=True, slots=True)
class Foundation:
    suit: Suit
    levels: tuple[Pile, ...]
    top_ms: int  # when the top level was reached, for the tie window

    @property
    def rank(self) -> int:
        return len(self.levels)

    @property
    def complete(self) -> bool:
        """A king pile is set aside: nothing more builds on it, but its cards still score."""
        return len(self.levels) == KING

    def cards(self) -> Iterator[Card]:
        for level in self.levels:
            yield from level

    def __str__(self) -> str:
        """The foundation as its line of the state text gives it (after ``foundation``):
        suit, time of the top level, then each level's cards."""
        levels = " ".join(",".join(map(str, level)) for level in self.levels)
        return f"{self.suit} {self.top_ms} {levels}"


# Frozen, but built by its own __init__ (the defaults are there): a replay builds a State
# for nearly every record, and a frozen dataclass's generated __init__ stores each of the
# 17 fields by a call of object.__setattr__ (about 34k instructions under callgrind), where
# filling the instance's dict at once costs about 18k.
@dataclass(frozen=True, init=False)
class State:
    rules: Rules
    hand: int
    seats: tuple[Seat, ...]
    foundations: tuple[Foundation, ...]
    clock_ms: int
    start_ms: int
    phase: Phase
    end_reason: EndReason | None
    ended_by: int | None  # the caller, the seat that went out, or the seat that resigned
    grace_until_ms: int | None
    ended_ms: int | None
    last_centre_ms: int
    last_action_ms: int
    shifts_since_play: int
    agreed: frozenset[int]
    turned_since_play: tuple[int, ...]
    landed: frozenset[int]  # seats whose card in motion landed after the call

    def __init__(
        self,
        rules: Rules,
        hand: int,
        seats: tuple[Seat, ...],
        foundations: tuple[Foundation, ...] = (),
        clock_ms: int = 0,
        start_ms: int = 0,
        phase: Phase = Phase.PLAYING,
        end_reason: EndReason | None = None,
        ended_by: int | None = None,
        grace_until_ms: int | None = None,
        ended_ms: int | None = None,
        last_centre_ms: int = 0,
        last_action_ms: int = 0,
        shifts_since_play: int = 0,
        agreed: frozenset[int] = frozenset(),
        turned_since_play: tuple[int, ...] = (),
        landed: frozenset[int] = frozenset(),
    ) -> None:
        self.__dict__.update(
            rules=rules,
            hand=hand,
            seats=seats,
            foundations=foundations,
            clock_ms=clock_ms,
            start_ms=start_ms,
            phase=phase,
            end_reason=end_reason,
            ended_by=ended_by,
            grace_until_ms=grace_until_ms,
            ended_ms=ended_ms,
            last_centre_ms=last_centre_ms,
            last_action_ms=last_action_ms,
            shifts_since_play=shifts_since_play,
            agreed=agreed,
            turned_since_play=turned_since_play,
            landed=landed,
        )

    @classmethod
    def deal(cls, rules: Rules, packs: Sequence[Sequence[Card]], hand: int, start_ms: int) -> State:
        """A new hand from one shuffled pack per seat, in seat order."""
        if not rules.min_players <= len(packs) <= rules.max_players:
            raise ValueError(
                f"profile {rules.name!r} is for {rules.min_players} to {rules.max_players} "
                f"players, not {len(packs)}"
            )
        for seat, pack in enumerate(packs):
            if any(card.owner != seat for card in pack):
                raise ValueError(f"the pack dealt to seat {seat} holds cards of another pack")
        play_start = start_ms + rules.countdown_ms
        return cls(
            rules=rules,
            hand=hand,
            seats=tuple(Seat.deal(pack, rules.work_piles) for pack in packs),
            clock_ms=start_ms,
            start_ms=start_ms,
            last_centre_ms=play_start,
            last_action_ms=play_start,
            turned_since_play=(0,) * len(packs),
        )

    @property
    def players(self) -> int:
        return len(self.seats)

    @property
    def play_start_ms(self) -> int:
        return self.start_ms + self.rules.countdown_ms

    def foundation_cards(self) -> Iterator[Card]:
        for foundation in self.foundations:
            yield from foundation.cards()

    def digest(self) -> str:
        """SHA-256 of the state text: equal digests, equal positions."""
        return hashlib.sha256(self.to_text().encode()).hexdigest()

    # -- text form -----------------------------------------------------------

    def to_text(self) -> str:
        header = " ".join(
            [
                "state",
                STATE_FORMAT,
                f"profile={self.rules.name}",
                f"rules={self.rules.digest()}",
                f"hand={self.hand}",
                f"clock={self.clock_ms}",
                f"start={self.start_ms}",
                f"phase={self.phase}",
                f"end={_opt(self.end_reason)}",
                f"by={_opt(self.ended_by)}",
                f"grace={_opt(self.grace_until_ms)}",
                f"ended={_opt(self.ended_ms)}",
                f"centre={self.last_centre_ms}",
                f"action={self.last_action_ms}",
                f"shifts={self.shifts_since_play}",
                f"agreed={_seats(self.agreed)}",
                f"turned={','.join(map(str, self.turned_since_play))}",
                f"landed={_seats(self.landed)}",
            ]
        )
        lines = [header]
        lines += (f"foundation {foundation}" for foundation in self.foundations)
        lines += (f"seat {number} {seat}" for number, seat in enumerate(self.seats))
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        """The text form (``to_text``), which ``print(state)`` shows: the generated repr
        spells out the rules and every card, kilobytes for one position."""
        return self.to_text()

    @classmethod
    def parse(cls, text: str, rules: Rules) -> State:
        """Parse the text form; ``rules`` must be the profile the text names."""
        lines = text.splitlines()
        if not lines or not lines[0].startswith(f"state {STATE_FORMAT} "):
            raise ValueError(f"a state text starts with 'state {STATE_FORMAT}'")
        fields = _key_values(lines[0].split(" ")[2:], _HEADER_KEYS)
        if fields["profile"] != rules.name or fields["rules"] != rules.digest():
            raise ValueError(
                f"state is for profile {fields['profile']!r} with rules {fields['rules']}, "
                f"not {rules.name!r} with rules {rules.digest()}"
            )
        foundations: list[Foundation] = []
        seats: list[Seat] = []
        for line in lines[1:]:
            kind, _, rest = line.partition(" ")
            if kind == "foundation":
                foundations.append(_parse_foundation(rest))
            elif kind == "seat":
                seats.append(_parse_seat(rest, len(seats)))
            else:
                raise ValueError(f"unknown state line {line!r}")
        return cls(
            rules=rules,
            hand=_int(fields["hand"]),
            seats=tuple(seats),
            foundations=tuple(foundations),
            clock_ms=_int(fields["clock"]),
            start_ms=_int(fields["start"]),
            phase=Phase(fields["phase"]),
            end_reason=None if fields["end"] == "-" else EndReason(fields["end"]),
            ended_by=_opt_int(fields["by"]),
            grace_until_ms=_opt_int(fields["grace"]),
            ended_ms=_opt_int(fields["ended"]),
            last_centre_ms=_int(fields["centre"]),
            last_action_ms=_int(fields["action"]),
            shifts_since_play=_int(fields["shifts"]),
            agreed=frozenset(_int_list(fields["agreed"])),
            turned_since_play=tuple(_int_list(fields["turned"])),
            landed=frozenset(_int_list(fields["landed"])),
        )

    # -- invariants ----------------------------------------------------------

    def problems(self) -> list[str]:
        """Every broken invariant, in words; an empty list for a sound position."""
        found: list[str] = []
        counts = Counter(self.foundation_cards())
        for number, seat in enumerate(self.seats):
            counts.update(seat.cards())
            if len(seat.work) != self.rules.work_piles:
                found.append(f"seat {number} has {len(seat.work)} work piles")
            for index, pile in enumerate(seat.work):
                for upper, lower in itertools.pairwise(pile):
                    if not builds_down(upper, lower):
                        found.append(f"seat {number} w{index + 1}: {lower} does not go on {upper}")
            strangers = [card for card in seat.cards() if card.owner != number]
            if strangers:
                found.append(f"seat {number} holds other packs' cards: {strangers}")
        for index, foundation in enumerate(self.foundations):
            if not foundation.levels:
                found.append(f"f{index + 1} is empty: a foundation starts with its ace")
            for rank, level in enumerate(foundation.levels, start=1):
                if not level or any(c.suit != foundation.suit or c.rank != rank for c in level):
                    found.append(f"f{index + 1}: level {rank} is not {rank} of {foundation.suit}")
        expected = {card: 1 for seat in range(self.players) for card in canonical_pack(seat)}
        if counts != expected:
            missing = sorted(map(str, set(expected) - set(counts)))
            repeated = sorted(str(card) for card, n in counts.items() if n > 1)
            strays = sorted(str(card) for card in set(counts) - set(expected))
            found.append(f"cards not conserved: missing {missing} repeated {repeated} {strays}")
        if len(self.turned_since_play) != self.players:
            found.append("one pass counter per seat is required")
        if not (self.agreed | self.landed) <= set(range(self.players)):
            found.append(
                f"agreed {sorted(self.agreed)} or landed {sorted(self.landed)} name no seat"
            )
        found += self._phase_problems()
        return found

    def _phase_problems(self) -> list[str]:
        """The end-of-hand fields must fit the phase, or the engine would misread them."""
        called = self.phase is Phase.CALLED
        ended = self.phase is Phase.ENDED
        found = []
        # A grace window outlives its call into the ended hand, never into a hand in play.
        if (called and self.grace_until_ms is None) or (
            self.phase is Phase.PLAYING and self.grace_until_ms is not None
        ):
            found.append(f"phase {self.phase} with grace {self.grace_until_ms}")
        if (self.end_reason is not None) != ended or (self.ended_ms is not None) != ended:
            found.append(f"phase {self.phase} with end {self.end_reason} at {self.ended_ms}")
        if called and self.ended_by is None:
            found.append("a called hand names its caller")
        if self.landed and not (called or ended):
            found.append("cards land after a call only")
        deadline = next_deadline(self)
        if deadline is not None and deadline[0] <= self.clock_ms:
            found.append(f"the clock {self.clock_ms} ms is past the {deadline[1]} deadline")
        return found


def next_deadline(state: State) -> tuple[int, EndReason] | None:
    """When and why the hand will end by itself if nothing else happens first."""
    if state.phase is ENDED:
        return None
    if state.phase is CALLED:
        if state.grace_until_ms is None:
            return None  # not a sound position: problems() says so
        return state.grace_until_ms + 1, EndReason.CALL
    rules = state.rules
    deadline = None
    # "Three minutes in which nobody at all has sent a card to the centre, which means the
    # table is only shuffling": the rule needs a table that acts. At a silent one the idle
    # rule decides. A first action after the three minutes lands, and the deal ends a
    # millisecond later, so that no move already accepted is undone.
    if rules.no_centre_ms is not None and state.last_action_ms > state.last_centre_ms:
        no_centre_ms = max(state.last_centre_ms + rules.no_centre_ms, state.last_action_ms + 1)
        deadline = (no_centre_ms, EndReason.NO_CENTRE)
    if rules.idle_abandon_ms is not None:
        idle_ms = state.last_action_ms + rules.idle_abandon_ms
        if deadline is None or idle_ms < deadline[0]:  # on the same millisecond, NO_CENTRE
            deadline = (idle_ms, EndReason.ABANDONED)
    return deadline


def builds_down(upper: Card, lower: Card) -> bool:
    """May ``lower`` sit on ``upper`` in a work pile: one rank lower, opposite colour."""
    return lower.rank == upper.rank - 1 and lower.is_red != upper.is_red


_HEADER_KEYS = (
    "profile",
    "rules",
    "hand",
    "clock",
    "start",
    "phase",
    "end",
    "by",
    "grace",
    "ended",
    "centre",
    "action",
    "shifts",
    "agreed",
    "turned",
    "landed",
)


def _opt(value: object) -> str:
    return "-" if value is None else str(value)


def _int(text: str) -> int:
    """A canonical non-negative integer: digits only, no sign, underscore or leading zero."""
    if not (text.isascii() and text.isdigit()) or (text[0] == "0" and text != "0"):
        raise ValueError(f"expected a non-negative integer in canonical form, not {text!r}")
    return int(text)


def _opt_int(text: str) -> int | None:
    return None if text == "-" else _int(text)


def _int_list(text: str) -> list[int]:
    return [] if text == "-" else [_int(part) for part in text.split(",")]


def _seats(seats: frozenset[int]) -> str:
    return ",".join(map(str, sorted(seats))) or "-"


def _faces(pile: Pile) -> str:
    return ",".join(card.face for card in pile) or "-"


def _parse_faces(text: str, owner: int) -> Pile:
    return () if text == "-" else tuple(Card.from_face(face, owner) for face in text.split(","))


def _key_values(words: list[str], keys: Sequence[str]) -> dict[str, str]:
    pairs = [word.partition("=") for word in words]
    if [key for key, _, _ in pairs] != list(keys) or any(not eq for _, eq, _ in pairs):
        raise ValueError(f"expected the fields {' '.join(keys)} in that order, as key=value")
    return {key: value for key, _, value in pairs}


def _parse_foundation(text: str) -> Foundation:
    suit, top_ms, *levels = text.split(" ")
    return Foundation(
        suit=Suit.parse(suit),
        levels=tuple(tuple(Card.parse(card) for card in level.split(",")) for level in levels),
        top_ms=_int(top_ms),
    )


def _parse_seat(text: str, expected_number: int) -> Seat:
    number, *rest = text.split(" ")
    if number != str(expected_number):
        raise ValueError(f"seat lines must be in order: expected seat {expected_number}")
    owner = expected_number
    fields = _key_values(rest, ("demon", "work", "stock", "waste"))
    return Seat(
        demon=_parse_faces(fields["demon"], owner),
        work=tuple(_parse_faces(pile, owner) for pile in fields["work"].split("|")),
        stock=_parse_faces(fields["stock"], owner),
        waste=_parse_faces(fields["waste"], owner),
    )
