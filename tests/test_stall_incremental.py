"""The incremental stall check answers what the full one answers, after every record.

Issue 33, point 1: "`check_stall` over every seat after every record (13% of
verification) becomes a check of what the record could have changed, with the seats'
last answers kept by the stall module." A seat gives its kept answer again while it did
not move and the centre takes or refuses every card the answer read as before, and the
first seat that can play ends the question; the worded ``check_stall`` takes the kept
answers too. The full check is the same question asked of a stall module that
keeps nothing (a fresh ``SeatSearches``): every seat searched from scratch. Here the two
are compared after every record of random hands (agreements, stalls and rule variants
included) and of every sample and golden log replayed through the match flow.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from racing_demon.game import flow, stall
from racing_demon.game.deal import MatchSeed, derive_pack
from racing_demon.game.engine import Violation, advance_clock, apply_move, legal_moves
from racing_demon.game.moves import MoveKind
from racing_demon.game.rules import Rules
from racing_demon.game.stall import (
    SeatSearches,
    apply_stall,
    check_stall,
    progress_witness,
    stall_is_due,
)
from racing_demon.game.state import Phase, State
from racing_demon.game.stuck import progress_witness_by_definition as reference_witness
from racing_demon.profiles import builtin_document, rules_from_document
from racing_demon.testing.playout import STEP_MS, playout
from racing_demon.verify import Settings, verify_log

from conftest import S, build, dealt_hands

ROOT = Path(__file__).resolve().parents[1]
LOGS = sorted(
    [
        *(ROOT / "sample_games").rglob("*.jsonl"),
        *(ROOT / "tests" / "golden" / "logs").glob("*.jsonl"),
    ]
)


def full_check(state: State) -> Violation | None:
    """``check_stall`` of a stall module that keeps nothing: every seat searched afresh."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stall, "SEARCHES", SeatSearches())
        return check_stall(state)


def other_rules(rules: Rules) -> list[Rules]:
    """Rules that read the same seats otherwise: the other slide-under, the other turn."""
    document = rules.to_document()
    return [
        rules_from_document({**document, "work": {"slide_under": not rules.slide_under}}),
        rules_from_document({**document, "stock": {"turn": 4 - rules.turn_count}}),
    ]


def assert_incremental_is_full(state: State, rng: random.Random) -> None:
    """The incremental answer first, as the match flow asks it after a record; now and
    then the worded refusal too, which fills the kept answers in another order, and the
    same seats under other rules, which meet the work-pile searches the first rules
    left for them to share."""
    full = full_check(state)
    assert stall_is_due(state) is (full is None)
    if rng.random() < 0.2:
        assert check_stall(state) == full
    if rng.random() < 0.2:
        for rules in other_rules(state.rules):
            other = replace(state, rules=rules)
            assert check_stall(other) == full_check(other)


def random_hand(state: State, rng: random.Random, max_steps: int) -> Iterator[State]:
    """Every state of a random hand from ``state``: any legal move but a resignation
    (agreements included), the clock stepped now and then, and a due stall applied."""
    yield state
    for _ in range(max_steps):
        after = advance_clock(state, state.clock_ms + rng.choice(STEP_MS))
        if after is not state:
            yield after
        state = after
        if state.phase is Phase.ENDED:
            return
        if state.phase is Phase.PLAYING and full_check(state) is None and rng.random() < 0.8:
            state = apply_stall(state)
            yield state
            continue
        moves = [
            move
            for player in range(state.players)
            for move in legal_moves(state, player)
            if move.kind is not MoveKind.RESIGN
            and (move.kind is not MoveKind.AGREE or rng.random() < 0.1)
        ]
        if not moves:
            continue
        state = apply_move(state, rng.choice(moves))
        yield state


@settings(max_examples=15, deadline=None)
@given(dealt_hands(), st.integers(0, 2**32))
def test_the_incremental_check_is_the_full_check_through_random_hands(
    state: State, choices: int
) -> None:
    rng = random.Random(choices)
    for after in random_hand(state, rng, max_steps=150):
        assert_incremental_is_full(after, rng)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(dealt_hands(), st.integers(0, 2**32))
def test_the_incremental_check_is_the_full_check_through_long_random_hands(
    state: State, choices: int
) -> None:
    rng = random.Random(choices)
    for after in random_hand(state, rng, max_steps=1500):
        assert_incremental_is_full(after, rng)


@pytest.mark.slow  # every stall question of the whole corpus, each asked twice
def test_the_incremental_check_is_the_full_check_on_every_sample_and_golden_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every stall question the match flow asks while the corpus is verified, answered
    both ways; the verification itself goes on with the incremental answer."""
    asked: list[bool] = []

    def compared_due(state: State) -> bool:
        due = stall_is_due(state)
        assert due is (full_check(state) is None), state.to_text()
        asked.append(due)
        return due

    def compared_check(state: State) -> Violation | None:
        violation = check_stall(state)
        assert violation == full_check(state), state.to_text()
        return violation

    monkeypatch.setattr(flow, "stall_is_due", compared_due)
    monkeypatch.setattr(flow, "check_stall", compared_check)
    assert len(LOGS) > 20
    for log in LOGS:
        verify_log(log, Settings(fast=True, unsafe_unpinned=True))
    assert len(asked) > 5_000 and any(asked)


def test_seats_holding_the_same_work_piles_share_their_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 33, point 1: "The work-pile search shared between seats: in the golden log 242
    of 393 searches repeat piles already searched." A seat that turned its stock holds the
    piles it held before: its search meets no arrangement anew, and answers as the
    definition does."""
    piles = ("5C 4H 3S", "4D", "KH", "KD")
    other = S(demon="KC", work=("2H", "2D", "2C", "2S"), waste="KS QS", rest="demon")
    before = build("table", S(demon="KC", work=piles, waste="2S", rest="demon"), other)
    assert progress_witness(before, 0) == reference_witness(before, 0)
    searched = stall.SEARCHES.get(before.seats[0])
    assert searched is not None and searched.piles is not None and searched.examined > 1

    expanded: list[object] = []
    rearrangements = stall._rearrangements

    def counted(piles: Any, slide_under: bool) -> Any:
        expanded.append(piles)
        return rearrangements(piles, slide_under)

    monkeypatch.setattr(stall, "_rearrangements", counted)
    after = build("table", S(demon="KC", work=piles, stock="2S", rest="demon"), other)
    assert after.seats[0] is not before.seats[0]
    assert progress_witness(after, 0) == reference_witness(after, 0)
    shared = stall.SEARCHES.get(after.seats[0])
    assert shared is not None and shared.piles is searched.piles
    assert shared.examined <= searched.examined and expanded == []


def test_a_search_shared_under_one_slide_under_rule_is_not_read_under_the_other() -> None:
    """The shared work-pile searches are kept by the piles and the slide-under rule: the
    same piles rearrange otherwise without it. Every seat of a hand, after every move,
    asked under both rules, answers as the definition does (in this hand, a seat's
    arrangements with slide-under would give 6S a place it has not without)."""
    document = builtin_document("table")
    rules = {
        slide: rules_from_document({**document, "work": {"slide_under": slide}})
        for slide in (True, False)
    }
    seed = MatchSeed.from_plain("slide 5")
    state = State.deal(rules[True], [derive_pack(seed, 1, seat) for seat in range(3)], 1, 0)
    for step in playout(state, random.Random(5).choice, max_steps=300):
        for slide in (True, False):
            question = replace(step.after, rules=rules[slide])
            for player in range(question.players):
                assert progress_witness(question, player) == reference_witness(question, player)
