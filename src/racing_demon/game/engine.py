"""The rules engine: enumerate, check and apply moves; time, stall and end of hand.

Three operations are kept apart (docs/rules.md):

* ``legal_moves(state, player)`` lists every legal move of one seat, sorted;
* ``check_move(state, move)`` returns ``None`` or a ``Violation`` that names the
  rule (a stable ``ViolationCode``), the player, the cards and the piles;
* ``apply_move(state, move)`` trusts its input and returns the next state.

There are no turns: moves are applied in the order the log gives them, each at
the time set by ``advance_clock``, which also applies the profile's time rules.
The table-wide stall is ``check_stall`` / ``apply_stall``. This module is pure:
it does no I/O and imports no crypto, schema or CLI library.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Iterator, Set
from dataclasses import dataclass
from typing import Final, NamedTuple, TypeVar

from racing_demon.game.cards import ACE, KING, Card, canonical_pack
from racing_demon.game.frozen import quick_init
from racing_demon.game.moves import DEMON, NEW_FOUNDATION, WASTE, Move, MoveKind, Place, Zone
from racing_demon.game.rules import Blocked, Resignation, Rules, StallTrigger
from racing_demon.game.state import (
    EndReason,
    Foundation,
    Phase,
    Pile,
    Seat,
    State,
    builds_down,
    next_deadline,
)
from racing_demon.wording import plural

_T = TypeVar("_T")


class ViolationCode(enum.StrEnum):
    """Stable reason codes for every refusal (docs/rules.md, "Reason codes")."""

    NOT_A_SEAT = "NOT_A_SEAT"
    HAND_OVER = "HAND_OVER"
    TOO_EARLY = "TOO_EARLY"
    NO_SUCH_PILE = "NO_SUCH_PILE"
    EMPTY_PILE = "EMPTY_PILE"
    CARD_MISMATCH = "CARD_MISMATCH"
    ONE_CARD_ONLY = "ONE_CARD_ONLY"
    SAME_PILE = "SAME_PILE"
    NOT_AN_ACE = "NOT_AN_ACE"
    ACE_STARTS_NEW = "ACE_STARTS_NEW"
    WRONG_SUIT = "WRONG_SUIT"
    NOT_NEXT_RANK = "NOT_NEXT_RANK"
    FOUNDATION_TAKEN = "FOUNDATION_TAKEN"
    NOT_ONE_LOWER = "NOT_ONE_LOWER"
    NOT_ONE_HIGHER = "NOT_ONE_HIGHER"
    SAME_COLOUR = "SAME_COLOUR"
    UNDER_NOT_ALLOWED = "UNDER_NOT_ALLOWED"
    UNDER_EMPTY_PILE = "UNDER_EMPTY_PILE"
    STOCK_EMPTY = "STOCK_EMPTY"
    STOCK_NOT_EMPTY = "STOCK_NOT_EMPTY"
    WASTE_EMPTY = "WASTE_EMPTY"
    CALL_NOT_ALLOWED = "CALL_NOT_ALLOWED"
    DEMON_NOT_EMPTY = "DEMON_NOT_EMPTY"
    AGREEMENT_NOT_ALLOWED = "AGREEMENT_NOT_ALLOWED"
    ALREADY_AGREED = "ALREADY_AGREED"
    RESIGN_NOT_ALLOWED = "RESIGN_NOT_ALLOWED"
    STALL_NOT_DUE = "STALL_NOT_DUE"


@quick_init  # built for nearly every record: check_stall's answer
@dataclass(frozen=True, slots=True)
class Violation:
    """Why a move or a stall was refused."""

    code: ViolationCode
    message: str
    seat: int | None
    cards: tuple[Card, ...] = ()
    piles: tuple[str, ...] = ()
    expected: str | None = None
    found: str | None = None

    @property
    def lost_race(self) -> bool:
        """The move was legal once, but another card reached its foundation level first."""
        return self.code is ViolationCode.FOUNDATION_TAKEN

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class StallOutcome(enum.StrEnum):
    SHIFT = "shift"
    BLOCKED = "blocked"


# -- time --------------------------------------------------------------------


def advance_clock(state: State, t_ms: int) -> State:
    """Move the clock to ``t_ms`` and apply the profile's time rules up to then.

    A hand whose deadline passed before ``t_ms`` ends at that deadline: a call's
    grace window closing, no card sent to the centre for ``no_centre_ms``, or no
    action at all for ``idle_abandon_ms``.
    """
    if t_ms < state.clock_ms:
        raise ValueError(f"time runs backwards: {t_ms} ms after {state.clock_ms} ms")
    deadline = next_deadline(state)
    if deadline is not None and deadline[0] <= t_ms:
        end_ms, reason = deadline
        return _derive(state, clock_ms=t_ms, phase=Phase.ENDED, end_reason=reason, ended_ms=end_ms)
    if t_ms == state.clock_ms:
        return state  # no time passed: nothing changed
    return _derive(state, clock_ms=t_ms)


class _Keep(enum.Enum):
    KEEP = enum.auto()  # what _derive is not told to change stays as it is


_KEEP: Final = _Keep.KEEP


def _derive(
    state: State,
    *,
    seats: tuple[Seat, ...] | _Keep = _KEEP,
    clock_ms: int | _Keep = _KEEP,
    phase: Phase | _Keep = _KEEP,
    end_reason: EndReason | _Keep | None = _KEEP,
    ended_by: int | _Keep | None = _KEEP,
    grace_until_ms: int | _Keep | None = _KEEP,
    ended_ms: int | _Keep | None = _KEEP,
    last_action_ms: int | _Keep = _KEEP,
    shifts_since_play: int | _Keep = _KEEP,
    agreed: frozenset[int] | _Keep = _KEEP,
    turned_since_play: tuple[int, ...] | _Keep = _KEEP,
) -> State:
    """``state`` with the named fields changed: ``dataclasses.replace`` for the fields the
    engine changes outside a play, at a third of its cost on a path taken every record."""
    return State(
        state.rules,
        state.hand,
        state.seats if seats is _KEEP else seats,
        state.foundations,
        state.clock_ms if clock_ms is _KEEP else clock_ms,
        state.start_ms,
        state.phase if phase is _KEEP else phase,
        state.end_reason if end_reason is _KEEP else end_reason,
        state.ended_by if ended_by is _KEEP else ended_by,
        state.grace_until_ms if grace_until_ms is _KEEP else grace_until_ms,
        state.ended_ms if ended_ms is _KEEP else ended_ms,
        state.last_centre_ms,
        state.last_action_ms if last_action_ms is _KEEP else last_action_ms,
        state.shifts_since_play if shifts_since_play is _KEEP else shifts_since_play,
        state.agreed if agreed is _KEEP else agreed,
        state.turned_since_play if turned_since_play is _KEEP else turned_since_play,
        state.landed,
    )


# -- check -------------------------------------------------------------------


def check_move(state: State, move: Move) -> Violation | None:
    """``None`` if ``move`` is legal now, else the first rule it breaks.

    Checks run in a fixed order, so a move that breaks two rules always reports
    the same one: seat, phase and time first; then the source and the cards it
    names; then the target (for a work pile, rank before colour).
    """
    gate = _gate(state, move.seat, move.kind)
    if gate is not None:
        return gate
    seat = state.seats[move.seat]
    match move.kind:
        case MoveKind.PLAY:
            return _check_play(state, seat, move)
        case MoveKind.TURN:
            return _check_turn(state, seat, move)
        case MoveKind.RECYCLE:
            if seat.stock:
                return _refuse(
                    ViolationCode.STOCK_NOT_EMPTY,
                    move,
                    "the stock is not empty yet",
                    piles=("stock",),
                    found=plural(len(seat.stock), "card"),
                )
            if not seat.waste:
                return _refuse(
                    ViolationCode.WASTE_EMPTY,
                    move,
                    "there is no waste to turn over",
                    piles=("waste",),
                )
            return None
        case MoveKind.CALL:
            if not state.rules.call_allowed:
                return _refuse(
                    ViolationCode.CALL_NOT_ALLOWED,
                    move,
                    f"profile {state.rules.name!r} has no call",
                )
            if seat.demon:
                return _refuse(
                    ViolationCode.DEMON_NOT_EMPTY,
                    move,
                    "only an empty demon pile may call",
                    cards=seat.demon[-1:],
                    piles=("demon",),
                    expected=plural(0, "card"),
                    found=plural(len(seat.demon), "card"),
                )
            return None
        case MoveKind.AGREE:
            if not state.rules.stall_by_agreement:
                return _refuse(
                    ViolationCode.AGREEMENT_NOT_ALLOWED,
                    move,
                    f"profile {state.rules.name!r} has no agreed stall shift",
                )
            if move.seat in state.agreed:
                return _refuse(ViolationCode.ALREADY_AGREED, move, "this seat has already agreed")
            return None
        case MoveKind.RESIGN:
            if state.rules.resignation is Resignation.REFUSED:
                return _refuse(
                    ViolationCode.RESIGN_NOT_ALLOWED,
                    move,
                    f"profile {state.rules.name!r} has no resignation",
                )
            return None


def _gate(state: State, seat: int, kind: MoveKind) -> Violation | None:
    if not 0 <= seat < len(state.seats):
        return Violation(ViolationCode.NOT_A_SEAT, f"there is no seat {seat}", seat)
    return _closed(state, seat, kind)


def _closed(state: State, seat: int | None, kind: MoveKind | None) -> Violation | None:
    """Why nothing may happen now (``None`` for the table's own stall): the hand ended, a
    call leaves only one card in motion per seat to land, or play has not started."""
    if state.phase is Phase.ENDED:
        return Violation(ViolationCode.HAND_OVER, f"the hand ended ({state.end_reason})", seat)
    if state.phase is Phase.CALLED and (kind is not MoveKind.PLAY or seat in state.landed):
        already = seat in state.landed
        return Violation(
            ViolationCode.HAND_OVER,
            f"seat {state.ended_by} called: no new move starts"
            + (f"; seat {seat} already landed its card in motion" if already else ""),
            seat,
        )
    if state.clock_ms < state.play_start_ms:
        return Violation(
            ViolationCode.TOO_EARLY,
            f"play starts at {state.play_start_ms} ms",
            seat,
            expected=f">= {state.play_start_ms} ms",
            found=f"{state.clock_ms} ms",
        )
    return None


def _refuse(
    code: ViolationCode,
    move: Move,
    message: str,
    *,
    cards: tuple[Card, ...] | None = None,
    piles: tuple[str, ...] | None = None,
    expected: str | None = None,
    found: str | None = None,
) -> Violation:
    if piles is None:
        piles = tuple(str(place) for place in (move.source, move.target) if place is not None)
    return Violation(
        code,
        f"{move}: {message}",
        move.seat,
        move.cards if cards is None else cards,
        piles,
        expected,
        found,
    )


def _source_cards(seat: Seat, source: Place) -> Pile | None:
    """The cards the source pile offers, deepest first (a whole work pile, or a top)."""
    if source.zone is Zone.DEMON:
        return seat.demon[-1:]
    if source.zone is Zone.WASTE:
        return seat.waste[-1:]
    if source.index < len(seat.work):
        return seat.work[source.index]
    return None


def _check_play(state: State, seat: Seat, move: Move) -> Violation | None:
    source, target, cards = move.source, move.target, move.cards
    assert source is not None and target is not None
    offered = _source_cards(seat, source)
    if offered is None:
        return _refuse(
            ViolationCode.NO_SUCH_PILE, move, f"there is no pile {source}", piles=(str(source),)
        )
    if not offered:
        return _refuse(ViolationCode.EMPTY_PILE, move, f"{source} is empty", piles=(str(source),))
    if len(cards) > 1 and source.zone is not Zone.WORK:
        return _refuse(
            ViolationCode.ONE_CARD_ONLY, move, f"only the top card of {source} is available"
        )
    if offered[-len(cards) :] != cards:
        actual = " ".join(card.face for card in offered[-len(cards) :])
        return _refuse(
            ViolationCode.CARD_MISMATCH,
            move,
            f"{source} offers {actual}",
            expected=actual,
            found=" ".join(c.face for c in cards),
        )
    card = cards[0]
    match target.zone:
        case Zone.NEW_FOUNDATION | Zone.FOUNDATION:
            if len(cards) > 1:
                return _refuse(
                    ViolationCode.ONE_CARD_ONLY, move, "a foundation takes one card at a time"
                )
            return _check_foundation(state, move, card, target)
        case Zone.WORK | Zone.UNDER:
            return _check_work(state, seat, move, card, source, target)
    raise AssertionError(target)  # pragma: no cover - Move rejects other targets


def _check_foundation(state: State, move: Move, card: Card, target: Place) -> Violation | None:
    if target.zone is Zone.NEW_FOUNDATION:
        if card.rank != ACE:
            return _refuse(
                ViolationCode.NOT_AN_ACE,
                move,
                "only an ace starts a new foundation",
                expected="an ace",
                found=card.face,
            )
        return None
    if target.index >= len(state.foundations):
        return _refuse(
            ViolationCode.NO_SUCH_PILE,
            move,
            f"there is no foundation {target}",
            piles=(str(target),),
        )
    foundation = state.foundations[target.index]
    wanted = _wanted(foundation)
    if card.suit != foundation.suit:
        return _refuse(
            ViolationCode.WRONG_SUIT,
            move,
            f"{target} builds {foundation.suit.name.lower()}",
            expected=wanted,
            found=card.face,
        )
    if card.rank == ACE:
        return _refuse(
            ViolationCode.ACE_STARTS_NEW,
            move,
            "an ace starts a new foundation (f+)",
            expected=wanted,
            found=card.face,
        )
    if card.rank <= foundation.rank:
        if _ties(state, foundation, card):
            return None
        return _refuse(
            ViolationCode.FOUNDATION_TAKEN,
            move,
            f"{target} already took its {card.face[0]} (lost race); the card stays",
            expected=wanted,
            found=card.face,
        )
    if card.rank > foundation.rank + 1:
        return _refuse(
            ViolationCode.NOT_NEXT_RANK,
            move,
            f"{target} wants {wanted}",
            expected=wanted,
            found=card.face,
        )
    return None


def _wanted(foundation: Foundation) -> str:
    if foundation.complete:
        return "nothing (complete)"
    top = foundation.levels[-1][0]
    return Card(top.rank + 1, top.suit, top.owner).face


def _ties(state: State, foundation: Foundation, card: Card) -> bool:
    """The tie rule: same level, same instant (within the profile's window)."""
    window = state.rules.tie_window_ms
    return (
        window is not None
        and card.rank == foundation.rank
        and state.clock_ms - foundation.top_ms <= window
    )


def _check_work(
    state: State, seat: Seat, move: Move, card: Card, source: Place, target: Place
) -> Violation | None:
    if target.index >= len(seat.work):
        return _refuse(
            ViolationCode.NO_SUCH_PILE,
            move,
            f"there is no work pile {target}",
            piles=(str(target),),
        )
    if source.zone is Zone.WORK and source.index == target.index:
        return _refuse(ViolationCode.SAME_PILE, move, "a pile cannot move onto itself")
    pile = seat.work[target.index]
    if target.zone is Zone.UNDER:
        if not state.rules.slide_under:
            return _refuse(
                ViolationCode.UNDER_NOT_ALLOWED,
                move,
                f"profile {state.rules.name!r} has no slide-under",
            )
        if len(move.cards) > 1:
            return _refuse(ViolationCode.ONE_CARD_ONLY, move, "only one card slides under a pile")
        if not pile:
            return _refuse(
                ViolationCode.UNDER_EMPTY_PILE, move, f"{target} is empty: move into it instead"
            )
        return _check_neighbour(move, card, pile[0], +1)
    return _check_neighbour(move, card, pile[-1], -1) if pile else None


def _check_neighbour(move: Move, card: Card, neighbour: Card, step: int) -> Violation | None:
    """``card`` must be ``step`` ranks from ``neighbour`` (+1: under it, -1: onto it) and
    of the opposite colour. Rank is checked before colour."""
    under = step > 0
    expected = f"one rank {'above' if under else 'below'} {neighbour.face}, opposite colour"
    if card.rank != neighbour.rank + step:
        return _refuse(
            ViolationCode.NOT_ONE_HIGHER if under else ViolationCode.NOT_ONE_LOWER,
            move,
            f"only {expected} {'slides under' if under else 'goes on'} {neighbour.face}",
            expected=expected,
            found=card.face,
        )
    if card.is_red == neighbour.is_red:
        return _refuse(
            ViolationCode.SAME_COLOUR,
            move,
            f"{card.face} has the colour of {neighbour.face}",
            expected=expected,
            found=card.face,
        )
    return None


def _packet(seat: Seat, turn_count: int) -> Pile:
    """The cards a turn lays on the waste, in the order they land (last one on top)."""
    return tuple(reversed(seat.stock[-turn_count:]))


def _check_turn(state: State, seat: Seat, move: Move) -> Violation | None:
    if not seat.stock:
        return _refuse(
            ViolationCode.STOCK_EMPTY,
            move,
            "the stock is empty: recycle the waste",
            piles=("stock",),
        )
    packet = _packet(seat, state.rules.turn_count)
    if move.cards != packet:
        actual = " ".join(card.face for card in packet)
        return _refuse(
            ViolationCode.CARD_MISMATCH,
            move,
            f"the stock turns {actual}",
            piles=("stock",),
            expected=actual,
            found=" ".join(c.face for c in move.cards),
        )
    return None


def is_tie(state: State, move: Move) -> bool:
    """Whether a legal move joins a foundation's top level under the tie rule."""
    target = move.target
    return (
        target is not None
        and target.zone is Zone.FOUNDATION
        and move.cards[0].rank == state.foundations[target.index].rank
    )


# -- enumerate -----------------------------------------------------------------


def legal_moves(state: State, seat: int) -> list[Move]:
    """Every legal move of ``seat`` now, sorted by ``Move.sort_key``.

    Moves are generated from the rules directly (``check_move`` is for one move
    and explains refusals); tests prove the two agree on every position.
    """
    if _gate(state, seat, MoveKind.PLAY) is not None:
        return []
    rules = state.rules
    own = state.seats[seat]
    moves: list[Move] = []
    if state.phase is Phase.PLAYING:
        if own.stock:
            moves.append(Move(seat, MoveKind.TURN, cards=_packet(own, rules.turn_count)))
        elif own.waste:
            moves.append(Move(seat, MoveKind.RECYCLE))
        if rules.call_allowed and not own.demon:
            moves.append(Move(seat, MoveKind.CALL))
        if rules.stall_by_agreement and seat not in state.agreed:
            moves.append(Move(seat, MoveKind.AGREE))
        if rules.resignation is not Resignation.REFUSED:
            moves.append(Move(seat, MoveKind.RESIGN))
    next_level: dict[tuple[int, int], list[int]] = {}
    for index, foundation in enumerate(state.foundations):
        if not foundation.complete:
            next_level.setdefault((foundation.suit, foundation.rank + 1), []).append(index)
        if foundation.rank > ACE and _ties(state, foundation, foundation.levels[-1][0]):
            next_level.setdefault((foundation.suit, foundation.rank), []).append(index)
    singles: list[tuple[Place, Card]] = []
    if own.demon:
        singles.append((DEMON, own.demon[-1]))
    if own.waste:
        singles.append((WASTE, own.waste[-1]))
    singles += [(Place(Zone.WORK, i), pile[-1]) for i, pile in enumerate(own.work) if pile]
    for source, card in singles:
        cards = (card,)
        if card.rank == ACE:
            moves.append(Move(seat, MoveKind.PLAY, source, NEW_FOUNDATION, cards))
        for index in next_level.get((card.suit, card.rank), ()):
            moves.append(Move(seat, MoveKind.PLAY, source, Place(Zone.FOUNDATION, index), cards))
        for index, pile in enumerate(own.work):
            if source.zone is Zone.WORK and source.index == index:
                continue
            if not pile or builds_down(pile[-1], card):
                moves.append(Move(seat, MoveKind.PLAY, source, Place(Zone.WORK, index), cards))
            if rules.slide_under and pile and builds_down(card, pile[0]):
                moves.append(Move(seat, MoveKind.PLAY, source, Place(Zone.UNDER, index), cards))
    for index, pile in enumerate(own.work):
        for start in range(len(pile) - 1):
            tail = pile[start:]
            for other_index, other in enumerate(own.work):
                if other_index != index and (not other or builds_down(other[-1], tail[0])):
                    target = Place(Zone.WORK, other_index)
                    moves.append(Move(seat, MoveKind.PLAY, Place(Zone.WORK, index), target, tail))
    moves.sort(key=Move.sort_key)
    return moves


# -- apply -------------------------------------------------------------------


def apply_move(state: State, move: Move) -> State:
    """The state after a legal ``move`` (check it first: this trusts its input)."""
    player = move.seat
    seat = state.seats[player]
    now = state.clock_ms
    match move.kind:
        case MoveKind.PLAY:
            return _apply_play(state, seat, move)
        case MoveKind.TURN:
            count = len(move.cards)
            turned = list(state.turned_since_play)
            turned[player] += count
            seat = Seat(seat.demon, seat.work, seat.stock[:-count], seat.waste + move.cards)
            return _derive(
                state,
                seats=_with(state.seats, player, seat),
                turned_since_play=tuple(turned),
                last_action_ms=now,
            )
        case MoveKind.RECYCLE:
            seat = Seat(seat.demon, seat.work, tuple(reversed(seat.waste)), ())
            return _derive(state, seats=_with(state.seats, player, seat), last_action_ms=now)
        case MoveKind.CALL:
            if state.rules.call_grace_ms == 0:
                return _derive(
                    state,
                    phase=Phase.ENDED,
                    end_reason=EndReason.CALL,
                    ended_by=player,
                    ended_ms=now,
                    last_action_ms=now,
                )
            return _derive(
                state,
                phase=Phase.CALLED,
                ended_by=player,
                grace_until_ms=now + state.rules.call_grace_ms,
                last_action_ms=now,
            )
        case MoveKind.AGREE:
            return _derive(state, agreed=state.agreed | {player}, last_action_ms=now)
        case MoveKind.RESIGN:
            return _derive(
                state,
                phase=Phase.ENDED,
                end_reason=EndReason.RESIGNED,
                ended_by=player,
                ended_ms=now,
                last_action_ms=now,
            )


def _apply_play(state: State, seat: Seat, move: Move) -> State:
    # The hot path of every replay: values are built directly, since dataclasses.replace
    # costs more than the whole rules check.
    source, target, cards = move.source, move.target, move.cards
    assert source is not None and target is not None
    now = state.clock_ms
    demon, work, waste = seat.demon, seat.work, seat.waste
    if source.zone is Zone.DEMON:
        demon = demon[:-1]
    elif source.zone is Zone.WASTE:
        waste = waste[:-1]
    else:
        work = _with(work, source.index, work[source.index][: -len(cards)])
    foundations = state.foundations
    to_centre = False
    if target.zone is Zone.WORK:
        work = _with(work, target.index, work[target.index] + cards)
    elif target.zone is Zone.UNDER:
        work = _with(work, target.index, cards + work[target.index])
    elif target.zone is Zone.NEW_FOUNDATION:
        foundations += (Foundation(cards[0].suit, (cards,), now),)
        to_centre = True
    else:
        foundation = foundations[target.index]
        if cards[0].rank == foundation.rank:  # a tie joins the top level
            levels = (*foundation.levels[:-1], foundation.levels[-1] + cards)
            foundation = Foundation(foundation.suit, levels, foundation.top_ms)
        else:
            foundation = Foundation(foundation.suit, (*foundation.levels, cards), now)
        foundations = _with(foundations, target.index, foundation)
        to_centre = True
    seats = _with(state.seats, move.seat, Seat(demon, work, seat.stock, waste))
    # Rearranging work piles is not a play: it must not reset the stall bookkeeping.
    played = is_progress(move)
    ends = state.rules.end_on_empty_demon and source.zone is Zone.DEMON and not demon
    return State(
        rules=state.rules,
        hand=state.hand,
        seats=seats,
        foundations=foundations,
        clock_ms=now,
        start_ms=state.start_ms,
        phase=Phase.ENDED if ends else state.phase,
        end_reason=EndReason.DEMON_EMPTY if ends else state.end_reason,
        ended_by=move.seat if ends else state.ended_by,
        grace_until_ms=state.grace_until_ms,
        ended_ms=now if ends else state.ended_ms,
        last_centre_ms=now if to_centre else state.last_centre_ms,
        last_action_ms=now,
        shifts_since_play=0 if played else state.shifts_since_play,
        agreed=frozenset() if played else state.agreed,
        turned_since_play=(0,) * len(seats) if played else state.turned_since_play,
        landed=state.landed | {move.seat} if state.phase is Phase.CALLED else state.landed,
    )


def _with(items: tuple[_T, ...], index: int, item: _T) -> tuple[_T, ...]:
    return (*items[:index], item, *items[index + 1 :])


# -- stuck, stall, blocked -----------------------------------------------------


def is_progress(move: Move) -> bool:
    """A play: a card to the centre, or out of the demon pile or the waste."""
    return move.kind is MoveKind.PLAY and (
        move.source is not None
        and move.target is not None
        and (
            move.source.zone is not Zone.WORK
            or move.target.zone in (Zone.FOUNDATION, Zone.NEW_FOUNDATION)
        )
    )


def progress_witness(state: State, seat: int) -> str | None:
    """How ``seat`` could still play, or ``None`` when the seat is stuck.

    A seat is stuck when no sequence of its own non-scoring moves (turning and
    recycling the stock, rearranging work piles) reaches a position where it
    could make a play: send a card to a foundation, or move its demon top or a
    waste card onto, into or under a work pile (docs/rules.md, "Stuck"). Of the
    work-pile arrangements, breadth first, the search examines the first
    ``STUCK_SEARCH_CAP`` only: beyond them a seat is stuck by definition.
    ``racing_demon.game.stuck`` writes that definition out plainly, from scratch; this
    search, kept with the seat, must give its answers (the tests compare the two).
    """
    return _witness(state.seats[seat], state.rules, state.foundations)


def is_stuck(state: State, seat: int) -> bool:
    return progress_witness(state, seat) is None


def table_is_stuck(state: State) -> bool:
    return all(_witness(seat, state.rules, state.foundations) is None for seat in state.seats)


def cycle_tops(seat: Seat, turn_count: int) -> list[Card]:
    """Every card that becomes the waste top during a full pass through the stock.

    A pass turns from the current position by ``turn_count`` to the end, recycles, and
    turns from the start until it meets a position it has been at: the one it began at
    if that is a multiple of ``turn_count``, else the end.
    """
    order = seat.waste + tuple(reversed(seat.stock))  # the order cards are turned
    if not order:
        return []
    step, position = turn_count, len(seat.waste)
    if not position:
        return [*order[step - 1 : -1 : step], order[-1]]
    again = order[step - 1 : position - 1 if position % step == 0 else -1 : step]
    return [*order[position - 1 : -1 : step], order[-1], *again]


# The witness of a seat is worked out in two parts. What its own moves bring within reach
# depends on the seat and two rules only, so it is kept with the seat (Seat.memo), and a
# seat that did not move is not searched again; what the centre takes is asked afresh
# when the foundations are not the ones the seat was last asked about. Cards there are
# named by Card.index, which fixes the rank, colour and face, all that the search asks
# and the witness names.

_Indexed = tuple[tuple[int, ...], ...]  # work piles, each card as its index

_PACK = canonical_pack(0)
_FACE = tuple(card.face for card in _PACK)
_ACES = frozenset(card.index for card in _PACK if card.rank == ACE)
# ``c`` goes onto ``t`` when _FIT[c] == _ONTO[t], and under ``h`` when _FIT[c] == _UNDER[h]:
# builds_down's one rank lower and opposite colour, as one integer.
_FIT = tuple(2 * card.rank + card.is_red for card in _PACK)
_ONTO = tuple(2 * (card.rank - 1) + (not card.is_red) for card in _PACK)
_UNDER = tuple(2 * (card.rank + 1) + (not card.is_red) for card in _PACK)


# The most arrangements of a seat's work piles the stuck search examines (docs/rules.md,
# "Stuck"): a seat whose first STUCK_SEARCH_CAP arrangements, breadth first, show no play is
# stuck. Games find their play by the 10th and never meet more than 64; a crafted seat has
# 475,136, over ten seconds of search, and 256 cost a few milliseconds (bench/stuck_bench.py).
STUCK_SEARCH_CAP: Final = 256


class _Reach(NamedTuple):
    """What a seat's own non-scoring moves bring within reach, with the breadth-first
    search of its work-pile arrangements taken as far as a question has needed it, and
    the last question's answer. (A named tuple: one is built for most questions a replay
    asks, and a frozen dataclass costs several times as much to build.)"""

    turn_count: int
    slide_under: bool
    movers: tuple[int, ...]  # the demon top, then every waste top of a pass
    # Every work-pile top of the arrangements met so far, first met first: a top met again
    # adds nothing, since the first sight of it already answers.
    tops: tuple[int, ...]
    fits: str | None  # the first mover onto a work pile: the search ends there
    # Where the search stands: the arrangements still to expand (the first perhaps in part)
    # and the ones met, as _arrangements keeps them; empty: over. None: the seat's own
    # arrangement is not expanded yet (and examined says whether it was examined).
    frontier: tuple[_Indexed, ...] | None
    seen: frozenset[_Indexed]
    # Arrangements examined so far: a resumed search stops at the cap where a search run
    # in one go would, so no answer depends on the order the questions came in.
    examined: int
    # The foundations of the last question (held, so never reused) and its answer: a seat
    # that did not move is asked again after every record, mostly of the same foundations.
    asked: tuple[Foundation, ...] | None
    answer: str | None


def _centre_keys(foundations: tuple[Foundation, ...]) -> frozenset[int]:
    """The index of every card the centre takes now: an ace, or the next card of a
    foundation not yet complete."""
    keys = set(_ACES)
    for foundation in foundations:
        rank = len(foundation.levels)
        if rank < KING:
            keys.add(foundation.suit * KING + rank)  # the index of rank + 1 of its suit
    return frozenset(keys)


def _witness(seat: Seat, rules: Rules, foundations: tuple[Foundation, ...]) -> str | None:
    """``progress_witness``: a mover to the centre, else the first arrangement with a top
    for the centre or a place for a mover (the top first), else ``None``."""
    reach = seat.memo
    if not (
        isinstance(reach, _Reach)
        and reach.turn_count == rules.turn_count
        and reach.slide_under == rules.slide_under
    ):
        reach = _reach(seat, rules)
    elif reach.asked is foundations:
        return reach.answer
    to_centre = _centre_keys(foundations)
    # Plain loops: a generator costs more than the few cards each one looks at.
    for card in reach.movers:
        if card in to_centre:
            answer: str | None = f"{_FACE[card]} can go to a foundation"
            break
    else:
        for card in reach.tops:
            if card in to_centre:
                answer = f"{_FACE[card]} can reach a foundation from the work piles"
                break
        else:
            if reach.frontier == ():
                answer = reach.fits
            else:
                reach, answer = _search(seat, reach, to_centre)
    _remember(seat, reach._replace(asked=foundations, answer=answer))
    return answer


def _reach(seat: Seat, rules: Rules) -> _Reach:
    # The demon top, then the cycle tops. A card named twice (as only an unsound seat can
    # hold) answers at its first place, so a repeat needs no weeding out.
    movers = [card.index for card in (*seat.demon[-1:], *cycle_tops(seat, rules.turn_count))]
    return _Reach(
        rules.turn_count,
        rules.slide_under,
        tuple(movers),
        (),
        None,
        None,
        frozenset(),
        0,
        None,
        None,
    )


def _remember(seat: Seat, reach: _Reach) -> None:
    object.__setattr__(seat, "memo", reach)  # a memo, outside the seat's value


def _search(seat: Seat, reach: _Reach, to_centre: Set[int]) -> tuple[_Reach, str | None]:
    """Take the search on to the next arrangement with a top for the centre or a place
    for a mover (the caller found no top met before for it): how far it went, and the
    answer."""
    movers, slide_under = reach.movers, reach.slide_under
    tops = dict.fromkeys(reach.tops)
    centre = fits = None
    examined = reach.examined
    frontier: deque[_Indexed] | None = None
    seen: set[_Indexed] = set()
    if not examined:
        # The seat's own arrangement, read off its cards: most searches end there, and the
        # rest is set up only if they do not.
        own = seat.work
        exposed = [pile[-1].index for pile in own if pile]
        examined = 1
        tops.update(dict.fromkeys(exposed))
        heads = [pile[0].index for pile in own if pile] if slide_under else []
        fits = _place(movers, exposed, len(own), heads)
        centre = _first_in(exposed, to_centre)
    if centre is None and fits is None and examined < STUCK_SEARCH_CAP:
        if reach.frontier is None:
            first = tuple(tuple(card.index for card in pile) for pile in seat.work)
            frontier, seen = deque([first]), {tuple(sorted(first))}
        else:
            frontier, seen = deque(reach.frontier), set(reach.seen)
        for work in _arrangements(frontier, seen, slide_under):
            examined += 1
            # Both parts of every arrangement met are kept, whatever this question needs.
            exposed = [pile[-1] for pile in work if pile]
            tops.update(dict.fromkeys(exposed))
            heads = [pile[0] for pile in work if pile] if slide_under else []
            fits = _place(movers, exposed, len(work), heads)
            centre = _first_in(exposed, to_centre)
            if centre is not None or fits is not None or examined == STUCK_SEARCH_CAP:
                break
    over = (
        fits is not None or examined == STUCK_SEARCH_CAP or (frontier is not None and not frontier)
    )
    reach = _Reach(
        reach.turn_count,
        slide_under,
        movers,
        tuple(tops),
        fits,
        () if over else None if frontier is None else tuple(frontier),
        frozenset() if over or frontier is None else frozenset(seen),
        examined,
        None,
        None,
    )
    if centre is not None:
        return reach, f"{_FACE[centre]} can reach a foundation from the work piles"
    return reach, fits


def _first_in(cards: list[int], to_centre: Set[int]) -> int | None:
    """The first of ``cards`` the centre takes (a loop: cheaper than next() of a generator)."""
    for card in cards:
        if card in to_centre:
            return card
    return None


def _place(movers: tuple[int, ...], exposed: list[int], piles: int, heads: list[int]) -> str | None:
    """The first mover that goes onto, into or under one of ``piles`` work piles, whose
    non-empty ones show ``exposed`` on top and have ``heads`` (given with slide-under only)."""
    if not movers:
        return None
    if len(exposed) < piles:  # anything goes into an empty pile
        return f"{_FACE[movers[0]]} can go to a work pile"
    places = {_ONTO[card] for card in exposed}
    places.update(_UNDER[card] for card in heads)
    for card in movers:
        if _FIT[card] in places:
            return f"{_FACE[card]} can go to a work pile"
    return None


def _arrangements(
    frontier: deque[_Indexed], seen: set[_Indexed], slide_under: bool
) -> Iterator[_Indexed]:
    """Arrangements not yet seen that rearranging reaches, breadth first, from ``frontier``.

    A node leaves the frontier only once expanded, so a search stopped after any yield
    resumes from the same ``frontier`` and ``seen``. Pile order does not matter for what
    a seat can play, so an arrangement is seen as its sorted piles.
    """
    while frontier:
        for nxt in _rearrangements(frontier[0], slide_under):
            key = tuple(sorted(nxt))
            if key not in seen:
                seen.add(key)
                frontier.append(nxt)
                yield nxt
        frontier.popleft()


def _rearrangements(piles: _Indexed, slide_under: bool) -> Iterator[_Indexed]:
    """Every single move of a tail onto or into a pile, or of a top under one."""
    targets: dict[int, list[int]] = {}  # by the _FIT a card needs: the piles it goes onto
    empty = []
    for j, other in enumerate(piles):
        if other:
            targets.setdefault(_ONTO[other[-1]], []).append(j)
        else:
            empty.append(j)
    for i, pile in enumerate(piles):
        for start, card in enumerate(pile):
            onto = targets.get(_FIT[card], [])
            if start and empty:  # a whole pile into an empty one changes nothing
                onto = sorted([*onto, *empty])
            for j in onto:
                if j != i:
                    yield _with(_with(piles, i, pile[:start]), j, piles[j] + pile[start:])
        if slide_under and pile:
            fit = _FIT[pile[-1]]
            for j, other in enumerate(piles):
                if j != i and other and _UNDER[other[0]] == fit:
                    yield _with(_with(piles, i, pile[:-1]), j, (pile[-1], *other))


def check_stall(state: State) -> Violation | None:
    """``None`` if a stall shift (or, after a full cycle, the blocked end) is due now."""
    closed = _closed(state, None, None)
    if closed is not None:
        return closed
    rules = state.rules
    # "If everyone is stuck or agrees to stop moving": a seat that agreed waits for the
    # shift whether or not it could still play, so only the others are asked.
    agreed = state.agreed if rules.stall_by_agreement else frozenset()
    if rules.stall_trigger is StallTrigger.FULL_PASS:
        # A seat with nothing to turn has had its pass only once it cannot play: else a
        # table of empty stocks would owe a shift after every shift.
        short = [
            str(player)
            for player, seat in enumerate(state.seats)
            if player not in agreed
            and (
                state.turned_since_play[player] < seat.cycle_size
                or (seat.cycle_size == 0 and not is_stuck(state, player))
            )
        ]
        if short:
            return Violation(
                ViolationCode.STALL_NOT_DUE,
                f"seats {', '.join(short)} have not turned through their whole stock since "
                "the last play",
                None,
            )
        return None
    for player, seat in enumerate(state.seats):
        if player in agreed:
            continue
        witness = _witness(seat, rules, state.foundations)
        if witness is not None:
            return Violation(
                ViolationCode.STALL_NOT_DUE, f"seat {player} can still play: {witness}", None
            )
    return None


def stall_outcome(state: State) -> StallOutcome:
    """What a due stall does: shift, or end the hand once the shifts failed.

    Each shift rotates every seat's stock cycle by one card, so after as many
    shifts as the longest cycle, with no play in between, every grouping has come
    round. If the table is stuck then too, the cycle offered no playable card and
    the hand is blocked (docs/rules.md, "Stall and blocked"). A profile may block
    after one failed shift instead (``Blocked.ONE_SHIFT``).
    """
    if state.rules.blocked_after is Blocked.ONE_SHIFT:
        failed = state.shifts_since_play >= 1
    else:
        failed = state.shifts_since_play >= max(seat.cycle_size for seat in state.seats)
    if failed and table_is_stuck(state):
        return StallOutcome.BLOCKED
    return StallOutcome.SHIFT


def apply_stall(state: State) -> State:
    """Apply a due stall (check it first): every seat shifts, or the hand is blocked."""
    now = state.clock_ms
    if stall_outcome(state) is StallOutcome.BLOCKED:
        return _derive(
            state, phase=Phase.ENDED, end_reason=EndReason.BLOCKED, ended_ms=now, agreed=frozenset()
        )
    return _derive(
        state,
        seats=tuple(_shift(seat) for seat in state.seats),
        shifts_since_play=state.shifts_since_play + 1,
        agreed=frozenset(),
        turned_since_play=(0,) * len(state.seats),
        last_action_ms=now,
    )


def _shift(seat: Seat) -> Seat:
    """Waste over onto the stock, then the top card to the bottom.

    Top to bottom, stock [s1] and waste (bottom to top) [w1, w2, w3] become
    [w2, w3, s1, w1].
    """
    top_down = seat.waste + tuple(reversed(seat.stock))
    if top_down:
        top_down = top_down[1:] + top_down[:1]
    return Seat(seat.demon, seat.work, tuple(reversed(top_down)), ())
