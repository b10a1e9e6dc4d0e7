"""The engine's fast paths give what the plain rules give.

``check_stall`` and ``progress_witness`` keep each seat's search in the stall module's
cache (``stall.SEARCHES``) and take it on only as far as a question needs; ``apply_move``
builds the state after a play directly. Each is compared here with a reference that
does the plain thing from scratch: the engine as it was before the fast paths, kept
verbatim but for the cap on the stuck search the rules added since (docs/rules.md §5),
at every position of random playouts, under other rules and other foundations for the
same seat objects, in every order. The stuck search's reference is its definition,
``racing_demon.game.stuck``, kept in the package beside the fast search it defines.
"""

from __future__ import annotations

import gc
import random
from collections import deque
from copy import deepcopy
from dataclasses import fields, replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from racing_demon.game import engine, stall
from racing_demon.game.cards import ACE, Card, Suit
from racing_demon.game.deal import MatchSeed, derive_pack
from racing_demon.game.engine import Violation, advance_clock, apply_move, legal_moves
from racing_demon.game.moves import Move, MoveKind
from racing_demon.game.rules import Blocked, Rules, StallTrigger
from racing_demon.game.stall import (
    StallOutcome,
    apply_stall,
    check_stall,
    cycle_tops,
    is_stuck,
    progress_witness,
    stall_is_due,
    stall_outcome,
    table_is_stuck,
)
from racing_demon.game.state import (
    EndReason,
    Foundation,
    Phase,
    Seat,
    State,
    next_deadline,
)
from racing_demon.game.stuck import arrangements_by_definition as reference_arrangements
from racing_demon.game.stuck import cycle_tops_by_definition as reference_cycle_tops
from racing_demon.game.stuck import progress_witness_by_definition as reference_witness
from racing_demon.profiles import builtin_document, rules_from_document
from racing_demon.testing.playout import PlayoutEvent, playout

from conftest import S, build, dealt_hands, profiles

# -- the reference: the engine before its fast paths -----------------------------------

# reference_witness, reference_cycle_tops and reference_arrangements are the stuck search's
# definition (game/stuck.py, imported above); the references below ask it every stuck question.


def reference_table_is_stuck(state: State) -> bool:
    return all(reference_witness(state, player) is None for player in range(state.players))


def reference_check_stall(state: State) -> Violation | None:
    closed = engine.why_closed(state, None, None)
    if closed is not None:
        return closed
    rules = state.rules
    # "If everyone is stuck or agrees to stop moving": a seat that agreed is not asked.
    agreed = state.agreed if rules.stall_by_agreement else frozenset()
    if rules.stall_trigger is StallTrigger.FULL_PASS:
        short = [
            str(player)
            for player, seat in enumerate(state.seats)
            if player not in agreed
            and (
                state.turned_since_play[player] < seat.cycle_size
                or (seat.cycle_size == 0 and reference_witness(state, player) is not None)
            )
        ]
        if short:
            return Violation(
                code=engine.ViolationCode.STALL_NOT_DUE,
                message=f"seats {', '.join(short)} have not turned through their whole stock "
                "since the last play",
                seat=None,
            )
        return None
    for player in range(len(state.seats)):
        if player in agreed:
            continue
        witness = reference_witness(state, player)
        if witness is not None:
            return Violation(
                code=engine.ViolationCode.STALL_NOT_DUE,
                message=f"seat {player} can still play: {witness}",
                seat=None,
            )
    return None


def reference_stall_outcome(state: State) -> StallOutcome:
    cycle = max(seat.cycle_size for seat in state.seats)
    if state.rules.blocked_after is Blocked.ONE_SHIFT:
        cycle = 1
    if state.shifts_since_play >= cycle and reference_table_is_stuck(state):
        return StallOutcome.BLOCKED
    return StallOutcome.SHIFT


def reference_apply_stall(state: State) -> State:
    now = state.clock_ms
    if reference_stall_outcome(state) is StallOutcome.BLOCKED:
        return replace(
            state, phase=Phase.ENDED, end_reason=EndReason.BLOCKED, ended_ms=now, agreed=frozenset()
        )

    def shift(seat: Seat) -> Seat:
        top_down = seat.waste + tuple(reversed(seat.stock))
        if top_down:
            top_down = top_down[1:] + top_down[:1]
        return replace(seat, stock=tuple(reversed(top_down)), waste=())

    return replace(
        state,
        seats=tuple(shift(seat) for seat in state.seats),
        shifts_since_play=state.shifts_since_play + 1,
        agreed=frozenset(),
        turned_since_play=(0,) * len(state.seats),
        last_action_ms=now,
    )


def reference_next_deadline(state: State) -> tuple[int, EndReason] | None:
    if state.phase is Phase.ENDED:
        return None
    if state.phase is Phase.CALLED:
        if state.grace_until_ms is None:
            return None
        return state.grace_until_ms + 1, EndReason.CALL
    rules = state.rules
    deadlines = []
    if rules.no_centre_ms is not None and state.last_action_ms > state.last_centre_ms:
        no_centre_ms = max(state.last_centre_ms + rules.no_centre_ms, state.last_action_ms + 1)
        deadlines.append((no_centre_ms, EndReason.NO_CENTRE))
    if rules.idle_abandon_ms is not None:
        deadlines.append((state.last_action_ms + rules.idle_abandon_ms, EndReason.ABANDONED))
    return min(deadlines, key=lambda deadline: deadline[0]) if deadlines else None


def reference_advance_clock(state: State, t_ms: int) -> State:
    deadline = reference_next_deadline(state)
    if deadline is not None and deadline[0] <= t_ms:
        end_ms, reason = deadline
        return replace(state, clock_ms=t_ms, phase=Phase.ENDED, end_reason=reason, ended_ms=end_ms)
    return replace(state, clock_ms=t_ms)


def reference_apply_move(state: State, move: Move) -> State:
    """Every kind but a play, which has no fast path of its own (test_playouts checks it)."""
    player = move.seat
    seat = state.seats[player]
    seats = state.seats
    now = state.clock_ms
    match move.kind:
        case MoveKind.TURN:
            count = len(move.cards)
            turned = list(state.turned_since_play)
            turned[player] += count
            seat = replace(seat, stock=seat.stock[:-count], waste=seat.waste + move.cards)
            seats = (*seats[:player], seat, *seats[player + 1 :])
            return replace(state, seats=seats, turned_since_play=tuple(turned), last_action_ms=now)
        case MoveKind.RECYCLE:
            seat = replace(seat, stock=tuple(reversed(seat.waste)), waste=())
            seats = (*seats[:player], seat, *seats[player + 1 :])
            return replace(state, seats=seats, last_action_ms=now)
        case MoveKind.CALL:
            if state.rules.call_grace_ms == 0:
                return replace(
                    state,
                    phase=Phase.ENDED,
                    end_reason=EndReason.CALL,
                    ended_by=player,
                    ended_ms=now,
                    last_action_ms=now,
                )
            return replace(
                state,
                phase=Phase.CALLED,
                ended_by=player,
                grace_until_ms=now + state.rules.call_grace_ms,
                last_action_ms=now,
            )
        case MoveKind.AGREE:
            return replace(state, agreed=state.agreed | {player}, last_action_ms=now)
        case MoveKind.RESIGN:
            return replace(
                state,
                phase=Phase.ENDED,
                end_reason=EndReason.RESIGNED,
                ended_by=player,
                ended_ms=now,
                last_action_ms=now,
            )
        case MoveKind.PLAY:
            return apply_move(state, move)


# -- comparing ---------------------------------------------------------------------------


def same_state(fast: State, reference: State) -> None:
    assert fast == reference
    assert fast.to_text() == reference.to_text()


def assert_stall_answers_agree(state: State) -> None:
    """Every stuck and stall answer of the engine at ``state`` is the reference's."""
    assert check_stall(state) == reference_check_stall(state)
    assert stall_is_due(state) is (check_stall(state) is None)
    for player in range(state.players):
        assert progress_witness(state, player) == reference_witness(state, player)
        assert is_stuck(state, player) == (reference_witness(state, player) is None)
    assert table_is_stuck(state) == reference_table_is_stuck(state)
    assert stall_outcome(state) is reference_stall_outcome(state)
    for seat in state.seats:
        assert_memo_is_small(seat)


def assert_memo_is_small(seat: Seat) -> None:
    """A seat keeps one search at most, its arrangements shared with every seat holding
    the same piles; and the last question it was asked, with its answer."""
    memo = stall.SEARCHES.get(seat)
    if memo is None:
        return
    assert len(memo.tops) == len(set(memo.tops)) <= 52
    assert len(memo.movers) <= 1 + seat.cycle_size
    assert memo.examined <= stall.STUCK_SEARCH_CAP
    if memo.piles is None:  # the seat's own arrangement is not expanded yet
        assert memo.examined <= 1
    else:
        assert memo.examined <= len(memo.piles.exposed) <= stall.STUCK_SEARCH_CAP
    if memo.fits is not None:
        assert memo.over
    assert memo.asked is not None  # a memo is kept only with the answer it gave


def variants(rules: Rules) -> list[Rules]:
    """Rules that read the same seats differently: the other turn, the other slide-under,
    and the other blocked rule with agreed shifts."""
    document = rules.to_document()
    other_turn = {**document, "stock": {"turn": 4 - rules.turn_count}}
    other_slide = {**document, "work": {"slide_under": not rules.slide_under}}
    other_blocked = Blocked.ONE_SHIFT if rules.blocked_after is Blocked.FULL_CYCLE else None
    other_stall = {
        **document,
        "stall": {
            "trigger": rules.stall_trigger.value,
            "by_agreement": True,
            **({"blocked_after": other_blocked.value} if other_blocked else {}),
        },
    }
    return [rules_from_document(doc) for doc in (other_turn, other_slide, other_stall)]


# -- the properties ----------------------------------------------------------------------


@pytest.mark.slow
@given(dealt_hands(), st.integers(0, 2**32))
def test_fast_paths_agree_with_the_reference_through_a_playout(state: State, choices: int) -> None:
    rng = random.Random(choices)  # chooses moves, orders of questions and clock steps
    others = variants(state.rules)
    for step in playout(state, rng.choice, max_steps=400):
        before = step.before
        # The seats are the same objects in every question below, and the questions come
        # in a random order: each one meets whatever search the others left in the memo.
        questions = [before, replace(before, foundations=())]
        questions += [replace(before, rules=rules) for rules in others]
        rng.shuffle(questions)
        for question in questions:
            assert_stall_answers_agree(question)
        assert next_deadline(before) == reference_next_deadline(before)
        for t_ms in (before.clock_ms, before.clock_ms + rng.choice((1, 250, 30_000, 200_000))):
            same_state(advance_clock(before, t_ms), reference_advance_clock(before, t_ms))
        if rng.random() < 0.25:  # a shift here, due or not (apply_stall trusts its input)
            shifted = apply_stall(before)
            same_state(shifted, reference_apply_stall(before))
            assert_stall_answers_agree(shifted)
        match step.event:
            case PlayoutEvent.MOVE:
                assert step.move is not None
                same_state(step.after, reference_apply_move(before, step.move))
            case PlayoutEvent.STALL:
                same_state(step.after, reference_apply_stall(before))
            case PlayoutEvent.CLOCK:
                same_state(step.after, reference_advance_clock(before, step.after.clock_ms))
        assert_stall_answers_agree(step.after)


@given(dealt_hands(), st.integers(0, 2**32))
def test_every_move_kind_agrees_with_the_reference(state: State, choices: int) -> None:
    """Calls, agreements and resignations, which playouts never make, from playout positions."""
    rng = random.Random(choices)
    for step in playout(state, rng.choice, max_steps=60):
        before = step.before
        for player in range(before.players):
            for kind in (MoveKind.CALL, MoveKind.AGREE, MoveKind.RESIGN):
                move = Move(player, kind)
                if engine.check_move(before, move) is None:
                    same_state(apply_move(before, move), reference_apply_move(before, move))


# Seats of any cards at all, equal ones and other packs' included: the fast paths must
# give the reference's answer even where no sound position could lead.
any_card = st.builds(Card, st.integers(1, 13), st.sampled_from(Suit), st.integers(0, 1))
any_pile = st.lists(any_card, max_size=3).map(tuple)


@st.composite
def any_foundation(draw: st.DrawFn) -> Foundation:
    suit = draw(st.sampled_from(Suit))
    rank = draw(st.integers(1, 13))
    return Foundation(suit, tuple((Card(r, suit, 0),) for r in range(1, rank + 1)), 0)


@st.composite
def any_position(draw: st.DrawFn) -> State:
    rules = draw(profiles())
    work = tuple(draw(st.lists(any_pile, min_size=1, max_size=5)))
    seat = Seat(draw(any_pile), work, draw(any_pile), draw(any_pile))
    foundations = tuple(draw(st.lists(any_foundation(), max_size=6)))
    return State(rules, 1, (seat,), foundations, turned_since_play=(0,))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(any_position(), st.randoms(use_true_random=False))
def test_any_seat_answers_as_the_reference(state: State, rng: random.Random) -> None:
    questions = [state, replace(state, foundations=())]
    questions += [replace(state, rules=rules) for rules in variants(state.rules)]
    questions += [replace(question, foundations=state.foundations[::-1]) for question in questions]
    rng.shuffle(questions)
    for question in questions * 2:
        assert progress_witness(question, 0) == reference_witness(question, 0)
        assert_memo_is_small(question.seats[0])


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(any_position(), st.booleans())
def test_arrangements_come_in_the_reference_order(state: State, slide_under: bool) -> None:
    work = state.seats[0].work
    first = tuple(tuple(card.index for card in pile) for pile in work)
    searched = [first, *stall._arrangements(deque([first]), {tuple(sorted(first))}, slide_under)]
    assert searched == [
        tuple(tuple(card.index for card in pile) for pile in arrangement)
        for arrangement in reference_arrangements(work, slide_under)
    ]


def test_a_cycle_top_equal_to_the_demon_top_changes_nothing() -> None:
    ace, other = Card(ACE, Suit.SPADES, 0), Card(ACE, Suit.SPADES, 1)
    seat = Seat((ace,), ((Card(9, Suit.HEARTS, 0),),), (), (other, ace))
    document = builtin_document("table")
    document["stock"]["turn"] = 1
    state = State(rules_from_document(document), 1, (seat,), (), turned_since_play=(0,))
    assert [card.face for card in cycle_tops(seat, 1)] == ["AS", "AS"]
    for foundations in ((), (Foundation(Suit.SPADES, ((ace,),), 0),)):
        question = replace(state, foundations=foundations)
        assert progress_witness(question, 0) == reference_witness(question, 0)


def test_cycle_tops_is_the_pass_it_describes() -> None:
    pack = [Card(rank, suit, 0) for suit in Suit for rank in range(1, 14)]
    for size in range(30):
        for waste in range(size + 1):
            order = tuple(pack[:size])
            seat = Seat((), (), tuple(reversed(order[waste:])), order[:waste])
            for turn_count in (1, 2, 3, 4):
                assert cycle_tops(seat, turn_count) == reference_cycle_tops(seat, turn_count)


# -- the memo ------------------------------------------------------------------------------


def rearranging_seat() -> State:
    """Seat 0 needs a rearrangement: 3S onto 4D exposes 4H, and more moves empty a pile."""
    seat = S(demon="KC", work=("5C 4H 3S", "4D", "KH", "KD"), waste="2S", rest="demon")
    stuck = S(demon="KC", work=("2H", "2D", "2C", "2S"), waste="KS QS", rest="demon")
    return build("table", seat, stuck, foundations=["AH@0 2H@0 3H@0"])


def test_a_paused_search_is_taken_on_for_other_foundations() -> None:
    state = rearranging_seat()
    assert progress_witness(state, 0) == "4H can reach a foundation from the work piles"
    memo = stall.SEARCHES.get(state.seats[0])
    assert memo is not None
    assert not memo.over  # stopped at the 4H: more arrangements are still to search
    for foundations in ((), state.foundations, ()):
        question = replace(state, foundations=foundations)
        assert progress_witness(question, 0) == reference_witness(question, 0)
    memo = stall.SEARCHES.get(state.seats[0])
    assert memo is not None
    assert memo.over  # without a hearts foundation the search ran to its end


def test_an_unmoved_seat_keeps_its_search() -> None:
    state = rearranging_seat()
    check_stall(state)
    kept = stall.SEARCHES.get(state.seats[0])
    recycle = next(move for move in legal_moves(state, 1) if move.kind is MoveKind.RECYCLE)
    after = apply_move(state, recycle)
    assert after.seats[0] is state.seats[0]
    check_stall(after)
    assert stall.SEARCHES.get(after.seats[0]) is kept


def test_the_search_is_no_part_of_the_seat() -> None:
    """Issue 30, point 5: "a stall cache owned by the stall module", not a memo set on a
    frozen value: a seat is its four piles, and an equal seat built apart is searched
    apart."""
    state = rearranging_seat()
    fresh = State.parse(state.to_text(), state.rules)
    progress_witness(state, 0)
    assert stall.SEARCHES.get(state.seats[0]) is not None
    assert stall.SEARCHES.get(fresh.seats[0]) is None
    assert state.seats[0] == fresh.seats[0]
    assert hash(state.seats[0]) == hash(fresh.seats[0])
    assert repr(state.seats[0]) == repr(fresh.seats[0])
    assert state == fresh and state.to_text() == fresh.to_text()
    assert [field.name for field in fields(Seat)] == ["demon", "work", "stock", "waste"]


def test_no_seat_outlives_its_states() -> None:
    """The stall module's cache keeps no seat (or state) alive, and its entries go with
    their seats."""

    def live_seats() -> int:
        gc.collect()
        return sum(isinstance(thing, Seat) for thing in gc.get_objects())

    before = live_seats()
    cached = len(stall.SEARCHES)
    rules = rules_from_document(builtin_document("table"))
    seed = MatchSeed.from_plain("no seat outlives its states")
    state = State.deal(rules, [derive_pack(seed, 1, seat) for seat in range(3)], 1, 0)
    for step in playout(state, random.Random(7).choice, max_steps=3000):
        check_stall(step.after)
    assert len(stall.SEARCHES) > cached
    del state, step
    assert live_seats() == before
    assert len(stall.SEARCHES) == cached


def test_the_last_answer_is_kept_for_the_centre_it_answers() -> None:
    """A seat asked again of a centre that takes or refuses each card its answer read as
    before gives that answer from the memo, whatever tuple the foundations are; a centre
    that changes one of those cards is asked afresh. (Issue 33, point 1: "a check of what
    the record could have changed, with the seats' last answers kept by the stall module".)"""
    state = rearranging_seat()
    seat = state.seats[0]
    answer = progress_witness(state, 0)
    memo = stall.SEARCHES.get(seat)
    assert memo is not None
    assert memo.asked == stall.SEARCHES.centre_keys(state.foundations) and memo.answer == answer
    assert progress_witness(state, 0) == answer and stall.SEARCHES.get(seat) is memo
    equal = replace(state, foundations=tuple(list(state.foundations)))
    assert equal.foundations is not state.foundations
    assert progress_witness(equal, 0) == answer
    # A diamonds foundation: the centre now takes 2D, which seat 0 holds deep in its demon.
    diamonds = build(
        "table",
        S(demon="KC", work=("5C 4H 3S", "4D", "KH", "KD"), waste="2S", rest="demon"),
        S(demon="KC", work=("2H", "2D", "2C", "2S"), waste="KS QS", rest="demon"),
        foundations=["AH@0 2H@0 3H@0", "AD@1"],
    )
    other = replace(state, foundations=diamonds.foundations)
    assert stall.SEARCHES.centre_keys(other.foundations) != memo.asked
    assert progress_witness(other, 0) == reference_witness(other, 0) == answer
    kept = stall.SEARCHES.get(seat)
    assert kept is not None and kept.examined == memo.examined and kept.tops == memo.tops
    # Without the hearts the 4H the answer named goes nowhere: the search is taken on.
    for foundations in ((), state.foundations, ()):
        question = replace(state, foundations=foundations)
        assert progress_witness(question, 0) == reference_witness(question, 0)
    searched = stall.SEARCHES.get(seat)
    assert not memo.over and searched is not None and searched.over


def test_the_engine_and_the_stall_module_keep_no_other_state() -> None:
    """Every answer is kept in one place a host can see (``stall.SEARCHES``, for as long
    as its seat lives): replaying rebinds and fills nothing else global, in the engine or
    the stall module, that two replays in one process would share."""

    def globals_now() -> dict[str, tuple[int, object]]:
        return {
            f"{module.__name__}.{name}": (
                id(value),
                deepcopy(value) if isinstance(value, dict | list | set) else None,
            )
            for module in (engine, stall)
            for name, value in vars(module).items()
            if not name.startswith("__") and value is not stall.SEARCHES
        }

    before = globals_now()
    rules = rules_from_document(builtin_document("table"))
    seed = MatchSeed.from_plain("the engine keeps no module state")
    state = State.deal(rules, [derive_pack(seed, 1, seat) for seat in range(3)], 1, 0)
    for step in playout(state, random.Random(3).choice, max_steps=500):
        check_stall(step.after)
        table_is_stuck(step.after)
    assert globals_now() == before


def test_the_clock_standing_still_changes_nothing() -> None:
    state = rearranging_seat()
    assert advance_clock(state, state.clock_ms) is state
    # A position already past its deadline (which no replay builds) still ends there.
    rules = rules_from_document(builtin_document("peer2peer"))
    assert rules.no_centre_ms is not None
    late = replace(
        state,
        rules=rules,
        clock_ms=state.last_centre_ms + rules.no_centre_ms,
        last_action_ms=state.last_centre_ms + 1,  # the table acted: the no-centre rule runs
    )
    same_state(advance_clock(late, late.clock_ms), reference_advance_clock(late, late.clock_ms))
    assert advance_clock(late, late.clock_ms).phase is Phase.ENDED


@pytest.mark.parametrize("idle_ms", [-1, 0, 1])
def test_the_no_centre_deadline_wins_a_tie(idle_ms: int) -> None:
    # A tie needs the idle rule shorter than the no-centre rule: with peer2peer's three and
    # five minutes a table that acted always reaches the no-centre deadline first.
    document = builtin_document("peer2peer")
    document["time"].update(no_centre_ms=300_000, idle_abandon_ms=180_000)
    rules = rules_from_document(document)
    assert rules.no_centre_ms is not None and rules.idle_abandon_ms is not None
    state = replace(
        rearranging_seat(),
        rules=rules,
        last_centre_ms=0,
        last_action_ms=rules.no_centre_ms - rules.idle_abandon_ms + idle_ms,
    )
    assert next_deadline(state) == reference_next_deadline(state)
    reason = EndReason.ABANDONED if idle_ms < 0 else EndReason.NO_CENTRE
    assert next_deadline(state) == (rules.no_centre_ms + min(idle_ms, 0), reason)


@pytest.mark.pure_python  # puts object() in typed fields, which compiled code refuses
def test_derive_carries_every_field() -> None:
    """A field ``_derive`` forgot would be reset to its default (or shifted) silently."""
    state = rearranging_seat()
    for field in fields(State):
        marked: dict[str, Any] = {field.name: object()}
        derived = engine._derive(replace(state, **marked))
        for other in fields(State):
            expected = marked.get(other.name, getattr(state, other.name))
            assert getattr(derived, other.name) is expected, (field.name, other.name)
    changeable = engine._derive.__kwdefaults__ or {}
    assert set(changeable) <= {field.name for field in fields(State)}
    for name in changeable:
        changed: dict[str, Any] = {name: object()}
        assert getattr(engine._derive(state, **changed), name) is changed[name]
        assert engine._derive(state, **changed) == replace(state, **changed)
