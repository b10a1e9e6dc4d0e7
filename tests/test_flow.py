"""The match flow (game/flow.py): which record may follow which, and what it does.

The table writes with ``MatchFlow.due`` and ``MatchFlow.submit``, the verifier and replay
play records with ``MatchFlow.play``; these tests hold the flow to the rules of
docs/log-format.md §6 and §7 directly, and prove that what the flow makes due is what it
then accepts.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from racing_demon.game.deal import MatchSeed
from racing_demon.game.engine import legal_moves
from racing_demon.game.flow import (
    FinalReason,
    FlowCode,
    FlowRefusal,
    HandEnd,
    HandStart,
    MatchEnd,
    MatchFlow,
    RecordKind,
    Stall,
    Submission,
)
from racing_demon.game.state import EndReason, Phase
from racing_demon.profiles import BUILT_IN, load_rules

from tampering import one_hand

SEED = MatchSeed.from_secret(bytes([7]) * 32, [bytes([seat]) * 16 for seat in range(2)])


def dealt(profile: str = "table") -> MatchFlow:
    flow = MatchFlow.begin(load_rules(profile), SEED, 2)
    event = flow.due()
    assert isinstance(event, HandStart) and event.hand == 1
    return flow.play(event, 0)


def refusal(flow: MatchFlow, event: object, t_ms: int) -> FlowRefusal:
    with pytest.raises(FlowRefusal) as caught:
        flow.play(event, t_ms)  # type: ignore[arg-type]
    return caught.value


def test_the_first_thing_due_is_the_first_deal() -> None:
    flow = MatchFlow.begin(load_rules("table"), SEED, 2)
    due = flow.due()
    assert isinstance(due, HandStart)
    assert (due.hand, len(due.packs)) == (1, 2)
    assert flow.play(due, 0).hand_open


def test_a_hand_starts_with_the_packs_the_seed_deals() -> None:
    """§7 step 7: every hand deals the packs the seed gives."""
    flow = MatchFlow.begin(load_rules("table"), SEED, 2)
    due = flow.due()
    assert isinstance(due, HandStart)
    forged = HandStart(hand=1, packs=(due.packs[1], due.packs[0]))
    found = refusal(flow, forged, 0)
    assert (found.code, found.seat) == (FlowCode.PACK_MISMATCH, 0)


def test_hands_are_numbered_one_two_and_never_start_twice() -> None:
    """§7 step 8: a hand starts only after the last one ended, numbered 1, 2, ..."""
    flow = MatchFlow.begin(load_rules("table"), SEED, 2)
    due = flow.due()
    assert isinstance(due, HandStart)
    assert refusal(flow, HandStart(hand=2, packs=due.packs), 0).code is FlowCode.HAND_OUT_OF_ORDER
    started = flow.play(due, 0)
    assert refusal(started, due, 0).code is FlowCode.HAND_OUT_OF_ORDER


def test_a_record_outside_a_hand_or_of_another_hand_is_out_of_order() -> None:
    flow = MatchFlow.begin(load_rules("table"), SEED, 2)
    assert refusal(flow, Stall(hand=1), 0).code is FlowCode.HAND_OUT_OF_ORDER
    started = dealt()
    other = Submission(kind=RecordKind.MOVE, hand=2, seat=0, n=0, move="0 turn 9S AS 4D")
    assert refusal(started, other, 0).code is FlowCode.HAND_OUT_OF_ORDER


def test_a_submission_is_judged_as_the_record_says() -> None:
    """§7 step 8: a move must parse, be its seat's, and be judged as recorded."""
    flow = dealt()
    state = flow.state
    assert state is not None
    t_ms = state.rules.countdown_ms
    move = legal_moves(flow.at(t_ms).state, 0)[0]  # type: ignore[arg-type]
    text = str(move)
    cases = {
        FlowCode.BAD_MOVE_TEXT: Submission(
            kind=RecordKind.MOVE, hand=1, seat=0, n=0, move="0 dance"
        ),
        FlowCode.PLAYER_MISMATCH: Submission(kind=RecordKind.MOVE, hand=1, seat=1, n=0, move=text),
        FlowCode.WRONGLY_BOUNCED: Submission(
            kind=RecordKind.BOUNCE, hand=1, seat=0, n=0, move=text, reason="TOO_EARLY"
        ),
        FlowCode.KIND_MISMATCH: Submission(kind=RecordKind.CALL, hand=1, seat=0, n=0, move=text),
    }
    for code, event in cases.items():
        assert refusal(flow, event, t_ms).code is code, code
    accepted, after = flow.at(t_ms).submit(0, 0, move, text)
    assert accepted.kind is RecordKind.MOVE and accepted.reason is None
    assert flow.play(accepted, t_ms).state == after.state


def test_a_submission_before_play_starts_is_bounced_with_the_engine_code() -> None:
    flow = dealt("peer2peer")  # a countdown before play
    state = flow.state
    assert state is not None and state.rules.countdown_ms > 0
    move = legal_moves(flow.at(state.rules.countdown_ms).state, 0)[0]  # type: ignore[arg-type]
    bounce, after = flow.submit(0, 0, move, str(move))
    assert (bounce.kind, bounce.reason) == (RecordKind.BOUNCE, "TOO_EARLY")
    assert after.state is flow.state and after.stall_due is None  # a bounce changes nothing
    assert flow.play(bounce, 0).state == state
    wrong = Submission(
        kind=RecordKind.BOUNCE, hand=1, seat=0, n=0, move=str(move), reason="FOUNDATION_TAKEN"
    )
    assert refusal(flow, wrong, 0).code is FlowCode.BOUNCE_REASON_MISMATCH


def test_the_final_record_comes_only_when_the_match_is_over() -> None:
    """§7 step 10: the final record follows the last hand's end, where the match rule
    ends the match."""
    flow = dealt()
    end = MatchEnd(reason=FinalReason.COMPLETE, hands=(), totals=(0, 0), winners=())
    assert refusal(flow, end, 0).code is FlowCode.HAND_NOT_ENDED


def _play_out(flow: MatchFlow, chooser: random.Random, profile: str) -> list[object]:
    """Play random legal moves, writing what falls due as the table does."""
    events: list[object] = []
    t_ms = 0
    for _ in range(20_000):
        due = flow.due()
        if due is not None:
            flow = flow.play(due, t_ms)
            events.append(due)
            if isinstance(due, MatchEnd):
                return events
            continue
        t_ms += chooser.choice((0, 50, 400))
        deadline = flow.deadline()
        if deadline is not None and deadline <= t_ms:
            t_ms = deadline
        flow = flow.at(t_ms)
        state = flow.state
        assert state is not None
        if state.phase is Phase.ENDED:
            continue
        seat = chooser.randrange(state.players)
        moves = legal_moves(state, seat)
        if moves:
            move = chooser.choice(moves)
            event, flow = flow.submit(seat, 0, move, str(move))
            events.append(event)
    raise AssertionError(f"{profile}: no end after 20,000 steps")


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), profile=st.sampled_from(BUILT_IN))
def test_what_the_flow_makes_due_it_accepts_and_every_match_ends(seed: int, profile: str) -> None:
    flow = MatchFlow.begin(one_hand(profile), SEED, 2)
    events = _play_out(flow, random.Random(seed), profile)
    ends = [event for event in events if isinstance(event, HandEnd)]
    assert ends and all(end.reason in set(EndReason) for end in ends)
    # One hand, unless the lead is tied where Nertz plays on (docs/rules.md §8).
    totals = [0, 0]
    for end in ends[:-1]:
        totals = [total + score for total, score in zip(totals, end.scores, strict=True)]
        assert profile == "nertz" and totals.count(max(totals)) > 1, ends
    assert isinstance(events[-1], MatchEnd)
    assert events[-1].hands == tuple(end.scores for end in ends)
    assert any(isinstance(event, Stall) for event in events) or all(
        end.reason is not EndReason.BLOCKED for end in ends
    )
