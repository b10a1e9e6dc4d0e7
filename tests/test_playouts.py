"""Property tests over random playouts (hypothesis chooses the packs and every move).

Invariants: cards are conserved; enumerated moves are exactly the moves that
``check_move`` accepts (against an independently built superset of candidates);
text forms round-trip; a refused move changes nothing; a finished hand has no
legal moves.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import fields

import pytest
from hypothesis import given
from hypothesis import strategies as st

from racing_demon.game.cards import Card, Suit
from racing_demon.game.engine import check_move, legal_moves
from racing_demon.game.moves import NEW_FOUNDATION, Move, MoveKind, Place, Zone
from racing_demon.game.scoring import score_hand
from racing_demon.game.state import Phase, State
from racing_demon.testing.playout import playout

from conftest import dealt_hands


def candidate_moves(state: State, player: int) -> Iterator[Move]:
    """Every move worth asking about, legal or not, built from what the seat holds."""
    seat = state.seats[player]
    piles = state.rules.work_piles + 1  # one pile too many, to meet NO_SUCH_PILE
    yield Move(player, MoveKind.RECYCLE)
    yield Move(player, MoveKind.CALL)
    yield Move(player, MoveKind.AGREE)
    yield Move(player, MoveKind.RESIGN)
    if seat.stock:
        packet = tuple(reversed(seat.stock[-state.rules.turn_count :]))
        yield Move(player, MoveKind.TURN, cards=packet)
        yield Move(player, MoveKind.TURN, cards=packet[::-1])
    any_card = (Card(1, Suit.CLUBS, player),)
    offers: list[tuple[Place, tuple[Card, ...]]] = [
        (Place(Zone.DEMON), seat.demon[-2:]),
        (Place(Zone.WASTE), seat.waste[-2:]),
    ]
    for index in range(piles):
        pile = seat.work[index] if index < len(seat.work) else ()
        offers += [(Place(Zone.WORK, index), pile[start:]) for start in range(len(pile))]
        offers.append((Place(Zone.WORK, index), pile or any_card))
    targets = [NEW_FOUNDATION]
    targets += [Place(Zone.FOUNDATION, i) for i in range(len(state.foundations) + 1)]
    targets += [Place(zone, i) for zone in (Zone.WORK, Zone.UNDER) for i in range(piles)]
    for source, cards in offers:
        for chosen in {cards or any_card, cards[-1:] or any_card}:
            for target in targets:
                yield Move(player, MoveKind.PLAY, source, target, chosen)


def assert_sound(state: State) -> None:
    assert state.problems() == []
    assert State.parse(state.to_text(), state.rules) == state
    for player in range(state.players):
        legal = legal_moves(state, player)
        assert legal == sorted(legal, key=Move.sort_key)
        assert len(set(legal)) == len(legal)
        legal_set = set(legal)
        candidates = set(candidate_moves(state, player))
        assert legal_set <= candidates, legal_set - candidates
        for move in candidates:
            violation = check_move(state, move)
            assert (violation is None) == (move in legal_set), (str(move), violation)
            assert violation is None or violation.seat == player
        for move in legal:
            assert Move.parse(str(move)) == move


# What a card move may change. The engine builds the next state field by field for speed
# (engine._apply_play); a field it forgot would be reset, and this catches it.
PLAY_CHANGES = {
    "seats",
    "foundations",
    "phase",
    "end_reason",
    "ended_by",
    "ended_ms",
    "last_centre_ms",
    "last_action_ms",
    "shifts_since_play",
    "agreed",
    "turned_since_play",
    "landed",
}


def assert_play_changes_only_its_fields(before: State, after: State) -> None:
    for field in fields(State):
        if field.name not in PLAY_CHANGES:
            assert getattr(after, field.name) == getattr(before, field.name), field.name


@pytest.mark.slow
@given(dealt_hands(), st.integers(0, 2**32))
def test_random_playouts_keep_every_invariant(state: State, choices: int) -> None:
    rng = random.Random(choices)  # chooses moves only: deals come from the deal spec
    assert_sound(state)
    final = state
    for step in playout(state, rng.choice, max_steps=80):
        assert_sound(step.after)
        assert step.after.clock_ms >= step.before.clock_ms
        if step.move is not None and step.move.kind is MoveKind.PLAY:
            assert_play_changes_only_its_fields(step.before, step.after)
        final = step.after
    if final.phase is Phase.ENDED:
        assert all(legal_moves(final, player) == [] for player in range(final.players))


@pytest.mark.slow
@given(dealt_hands(), st.integers(0, 2**32))
def test_hands_played_to_the_end(state: State, choices: int) -> None:
    rng = random.Random(choices)
    final = state
    for step in playout(state, rng.choice, max_steps=3000):
        final = step.after
    # Every profile ends a hand by itself: a call or an empty demon pile, the clock, or
    # the blocked rule, which makes the stall cycle finite.
    assert final.phase is Phase.ENDED
    assert final.end_reason is not None
    assert final.problems() == []
    assert all(legal_moves(final, player) == [] for player in range(final.players))
    assert score_hand(final).scores
