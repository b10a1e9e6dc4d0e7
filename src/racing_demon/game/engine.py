"""The rules engine: enumerate, check and apply moves; time and the end of a hand.

Three operations are kept apart (docs/rules.md):

* ``legal_moves(state, player)`` lists every legal move of one seat, sorted;
* ``check_move(state, move)`` returns ``None`` or a ``Violation`` that names the
  rule (a stable ``ViolationCode``), the player, the cards and the piles;
* ``apply_move(state, move)`` trusts its input and returns the next state.

There are no turns: moves are applied in the order the log gives them, each at
the time set by ``advance_clock``, which also applies the profile's time rules;
``play_at(state, move, t_ms)`` does all three for a move made at a later time.
The stuck search and the table-wide stall (``check_stall`` / ``apply_stall``) are
``racing_demon.game.stall``'s. This module is pure: it does no I/O and imports no
crypto, schema or CLI library.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final, TypeVar

from racing_demon.game.cards import ACE, Card
from racing_demon.game.moves import (
    DEMON,
    DEMON_ZONE,
    FOUNDATION_ZONE,
    NEW_FOUNDATION,
    NEW_FOUNDATION_ZONE,
    PLAY,
    TURN,
    UNDER_ZONE,
    WASTE,
    WASTE_ZONE,
    WORK_ZONE,
    Move,
    MoveKind,
    Place,
    Zone,
)
from racing_demon.game.rules import Resignation
from racing_demon.game.state import (
    CALLED,
    ENDED,
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


@dataclass(frozen=True, slots=True, kw_only=True)
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


# -- time --------------------------------------------------------------------


def advance_clock(state: State, t_ms: int) -> State:
    """Move the clock to ``t_ms`` and apply the profile's time rules up to then.

    A hand whose deadline passed before ``t_ms`` ends at that deadline: a call's
    grace window closing, no card sent to the centre for ``no_centre_ms``, or no
    action at all for ``idle_abandon_ms``.
    """
    ended = _ended_by(state, t_ms)
    if ended is not None:
        return ended
    if t_ms == state.clock_ms:
        return state  # no time passed: nothing changed
    return _derive(state, clock_ms=t_ms)


def play_at(state: State, move: Move, t_ms: int) -> tuple[State, Violation | None]:
    """``move`` made at ``t_ms``: the position after it and ``None``, or, when it breaks a
    rule, the position at ``t_ms`` and the rule.

    The same as ``advance_clock(state, t_ms)``, then ``check_move`` and, for a legal move,
    ``apply_move`` (a differential test proves it), but a legal move is judged and applied
    at ``t_ms`` directly: the position that differs from ``state`` only in its clock, which
    the move would replace at once, is never built (a replay would build one per record).
    """
    ended = _ended_by(state, t_ms)
    if ended is not None:
        return ended, check_move(ended, move)
    violation = _check_move(state, move, t_ms)
    if violation is None:
        return _apply_move(state, move, t_ms), None
    return advance_clock(state, t_ms), violation


def _ended_by(state: State, t_ms: int) -> State | None:
    """``state`` at ``t_ms`` if one of its deadlines passed by then (it ended there), else
    None: then only the clock changes between ``state`` and ``t_ms``."""
    if t_ms < state.clock_ms:
        raise ValueError(f"time runs backwards: {t_ms} ms after {state.clock_ms} ms")
    deadline = next_deadline(state)
    if deadline is None or t_ms < deadline[0]:
        return None
    end_ms, reason = deadline
    return _derive(state, clock_ms=t_ms, phase=Phase.ENDED, end_reason=reason, ended_ms=end_ms)


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
    """``state`` with the named fields changed, built by name: what ``dataclasses.replace``
    does for the fields the engine changes outside a play, at half its cost on a path
    taken every record (the clock)."""
    return State(
        rules=state.rules,
        hand=state.hand,
        seats=state.seats if seats is _KEEP else seats,
        foundations=state.foundations,
        clock_ms=state.clock_ms if clock_ms is _KEEP else clock_ms,
        start_ms=state.start_ms,
        phase=state.phase if phase is _KEEP else phase,
        end_reason=state.end_reason if end_reason is _KEEP else end_reason,
        ended_by=state.ended_by if ended_by is _KEEP else ended_by,
        grace_until_ms=state.grace_until_ms if grace_until_ms is _KEEP else grace_until_ms,
        ended_ms=state.ended_ms if ended_ms is _KEEP else ended_ms,
        last_centre_ms=state.last_centre_ms,
        last_action_ms=state.last_action_ms if last_action_ms is _KEEP else last_action_ms,
        shifts_since_play=(
            state.shifts_since_play if shifts_since_play is _KEEP else shifts_since_play
        ),
        agreed=state.agreed if agreed is _KEEP else agreed,
        turned_since_play=(
            state.turned_since_play if turned_since_play is _KEEP else turned_since_play
        ),
        landed=state.landed,
    )


# -- check -------------------------------------------------------------------


def check_move(state: State, move: Move) -> Violation | None:
    """``None`` if ``move`` is legal now, else the first rule it breaks.

    Checks run in a fixed order, so a move that breaks two rules always reports
    the same one: seat, phase and time first; then the source and the cards it
    names; then the target (for a work pile, rank before colour).
    """
    return _check_move(state, move, state.clock_ms)


def _check_move(state: State, move: Move, now: int) -> Violation | None:
    """``check_move`` at ``now``, which no deadline of ``state`` may precede: the clock
    enters the rules here only, through ``now`` (play_at judges a move at a later time)."""
    gate = _gate(state, move.seat, move.kind, now)
    if gate is not None:
        return gate
    seat = state.seats[move.seat]
    kind = move.kind
    if kind is PLAY:
        return _check_play(state, seat, move, now)
    if kind is TURN:
        return _check_turn(state, seat, move)
    match kind:
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


def _gate(state: State, seat: int, kind: MoveKind, now: int) -> Violation | None:
    if not 0 <= seat < len(state.seats):
        return Violation(
            code=ViolationCode.NOT_A_SEAT, message=f"there is no seat {seat}", seat=seat
        )
    return why_closed(state, seat, kind, now)


def why_closed(
    state: State, seat: int | None, kind: MoveKind | None, now: int | None = None
) -> Violation | None:
    """Why nothing may happen at ``now``, the state's clock unless given (``None`` for the
    table's own stall): the hand ended, a call leaves only one card in motion per seat to
    land, or play has not started."""
    if state.phase is ENDED:
        return Violation(
            code=ViolationCode.HAND_OVER,
            message=f"the hand ended ({state.end_reason})",
            seat=seat,
        )
    if state.phase is CALLED and (kind is not PLAY or seat in state.landed):
        already = seat in state.landed
        return Violation(
            code=ViolationCode.HAND_OVER,
            message=f"seat {state.ended_by} called: no new move starts"
            + (f"; seat {seat} already landed its card in motion" if already else ""),
            seat=seat,
        )
    if now is None:
        now = state.clock_ms
    if now < state.play_start_ms:
        return Violation(
            code=ViolationCode.TOO_EARLY,
            message=f"play starts at {state.play_start_ms} ms",
            seat=seat,
            expected=f">= {state.play_start_ms} ms",
            found=f"{now} ms",
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
        code=code,
        message=f"{move}: {message}",
        seat=move.seat,
        cards=move.cards if cards is None else cards,
        piles=piles,
        expected=expected,
        found=found,
    )


def _source_cards(seat: Seat, source: Place) -> Pile | None:
    """The cards the source pile offers, deepest first (a whole work pile, or a top)."""
    if source.zone is DEMON_ZONE:
        return seat.demon[-1:]
    if source.zone is WASTE_ZONE:
        return seat.waste[-1:]
    if source.index < len(seat.work):
        return seat.work[source.index]
    return None


def _check_play(state: State, seat: Seat, move: Move, now: int) -> Violation | None:
    source, target, cards = move.source, move.target, move.cards
    assert source is not None and target is not None
    offered = _source_cards(seat, source)
    if offered is None:
        return _refuse(
            ViolationCode.NO_SUCH_PILE, move, f"there is no pile {source}", piles=(str(source),)
        )
    if not offered:
        return _refuse(ViolationCode.EMPTY_PILE, move, f"{source} is empty", piles=(str(source),))
    if len(cards) > 1 and source.zone is not WORK_ZONE:
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
    zone = target.zone
    if zone is NEW_FOUNDATION_ZONE or zone is FOUNDATION_ZONE:
        if len(cards) > 1:
            return _refuse(
                ViolationCode.ONE_CARD_ONLY, move, "a foundation takes one card at a time"
            )
        return _check_foundation(state, move, card, target, now)
    if zone is WORK_ZONE or zone is UNDER_ZONE:
        return _check_work(state, seat, move, card, source, target)
    raise AssertionError(target)  # pragma: no cover - Move rejects other targets


def _check_foundation(
    state: State, move: Move, card: Card, target: Place, now: int
) -> Violation | None:
    if target.zone is NEW_FOUNDATION_ZONE:
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
        if _ties(state, foundation, card, now):
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


def _ties(state: State, foundation: Foundation, card: Card, now: int) -> bool:
    """The tie rule: same level, same instant (within the profile's window)."""
    window = state.rules.tie_window_ms
    return window is not None and card.rank == foundation.rank and now - foundation.top_ms <= window


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
    if source.zone is WORK_ZONE and source.index == target.index:
        return _refuse(ViolationCode.SAME_PILE, move, "a pile cannot move onto itself")
    pile = seat.work[target.index]
    if target.zone is UNDER_ZONE:
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
        and target.zone is FOUNDATION_ZONE
        and move.cards[0].rank == state.foundations[target.index].rank
    )


# -- enumerate -----------------------------------------------------------------


def legal_moves(state: State, seat: int) -> list[Move]:
    """Every legal move of ``seat`` now, sorted by ``Move.sort_key``.

    Moves are generated from the rules directly (``check_move`` is for one move
    and explains refusals); tests prove the two agree on every position.
    """
    now = state.clock_ms
    if _gate(state, seat, MoveKind.PLAY, now) is not None:
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
        if foundation.rank > ACE and _ties(state, foundation, foundation.levels[-1][0], now):
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
    return _apply_move(state, move, state.clock_ms)


def _apply_move(state: State, move: Move, now: int) -> State:
    """``apply_move`` at ``now``, the clock of the state it returns."""
    player = move.seat
    seat = state.seats[player]
    kind = move.kind
    if kind is PLAY:
        return _apply_play(state, seat, move, now)
    if kind is TURN:
        count = len(move.cards)
        turned = list(state.turned_since_play)
        turned[player] += count
        seat = Seat(seat.demon, seat.work, seat.stock[:-count], seat.waste + move.cards)
        return _derive(
            state,
            seats=replaced_at(state.seats, player, seat),
            clock_ms=now,
            turned_since_play=tuple(turned),
            last_action_ms=now,
        )
    match kind:
        case MoveKind.RECYCLE:
            seat = Seat(seat.demon, seat.work, tuple(reversed(seat.waste)), ())
            seats = replaced_at(state.seats, player, seat)
            return _derive(state, seats=seats, clock_ms=now, last_action_ms=now)
        case MoveKind.CALL:
            if state.rules.call_grace_ms == 0:
                return _derive(
                    state,
                    clock_ms=now,
                    phase=Phase.ENDED,
                    end_reason=EndReason.CALL,
                    ended_by=player,
                    ended_ms=now,
                    last_action_ms=now,
                )
            return _derive(
                state,
                clock_ms=now,
                phase=Phase.CALLED,
                ended_by=player,
                grace_until_ms=now + state.rules.call_grace_ms,
                last_action_ms=now,
            )
        case MoveKind.AGREE:
            agreed = state.agreed | {player}
            return _derive(state, clock_ms=now, agreed=agreed, last_action_ms=now)
        case MoveKind.RESIGN:
            return _derive(
                state,
                clock_ms=now,
                phase=Phase.ENDED,
                end_reason=EndReason.RESIGNED,
                ended_by=player,
                ended_ms=now,
                last_action_ms=now,
            )


def _apply_play(state: State, seat: Seat, move: Move, now: int) -> State:
    # The hot path of every replay: values are built directly, since dataclasses.replace
    # costs more than the whole rules check.
    source, target, cards = move.source, move.target, move.cards
    assert source is not None and target is not None
    demon, work, waste = seat.demon, seat.work, seat.waste
    if source.zone is DEMON_ZONE:
        demon = demon[:-1]
    elif source.zone is WASTE_ZONE:
        waste = waste[:-1]
    else:
        work = replaced_at(work, source.index, work[source.index][: -len(cards)])
    foundations = state.foundations
    to_centre = False
    if target.zone is WORK_ZONE:
        work = replaced_at(work, target.index, work[target.index] + cards)
    elif target.zone is UNDER_ZONE:
        work = replaced_at(work, target.index, cards + work[target.index])
    elif target.zone is NEW_FOUNDATION_ZONE:
        foundations += (Foundation(cards[0].suit, (cards,), now),)
        to_centre = True
    else:
        foundation = foundations[target.index]
        if cards[0].rank == foundation.rank:  # a tie joins the top level
            levels = (*foundation.levels[:-1], foundation.levels[-1] + cards)
            foundation = Foundation(foundation.suit, levels, foundation.top_ms)
        else:
            foundation = Foundation(foundation.suit, (*foundation.levels, cards), now)
        foundations = replaced_at(foundations, target.index, foundation)
        to_centre = True
    seats = replaced_at(state.seats, move.seat, Seat(demon, work, seat.stock, waste))
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
        landed=state.landed | {move.seat} if state.phase is CALLED else state.landed,
    )


def replaced_at(items: tuple[_T, ...], index: int, item: _T) -> tuple[_T, ...]:
    """``items`` with the one at ``index`` replaced by ``item``."""
    return (*items[:index], item, *items[index + 1 :])


def is_progress(move: Move) -> bool:
    """A play: a card to the centre, or out of the demon pile or the waste."""
    return move.kind is PLAY and (
        move.source is not None
        and move.target is not None
        and (
            move.source.zone is not WORK_ZONE
            or move.target.zone in (FOUNDATION_ZONE, NEW_FOUNDATION_ZONE)
        )
    )
