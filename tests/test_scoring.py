"""Hand scores and match results (docs/rules.md §7, §8)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from racing_demon.game.rules import MAX_HANDS
from racing_demon.game.scoring import HandScore, Match, SeatScore, score_hand
from racing_demon.game.state import EndReason, Phase, State
from racing_demon.profiles import builtin_document, load_rules, rules_from_document

from conftest import Reads, S, build

RANKS = "A23456789TJQK"


def run(suit: str, owner: int, count: int) -> str:
    """A foundation of one owner's cards: ace up to ``count`` cards."""
    return " ".join(f"{rank}{suit}@{owner}" for rank in RANKS[:count])


def ended(state: State, reason: EndReason = EndReason.CALL, by: int | None = 1) -> State:
    return replace(state, phase=Phase.ENDED, end_reason=reason, ended_by=by, ended_ms=0)


def test_seed_000_worked_example() -> None:
    # The table rules' worked example: 24 placed with three demon cards left: 24 - 2*3 = 18.
    # The caller placed 20 with an empty demon pile: 20 - 0 = 20.
    state = build(
        "table",
        S(demon="5C 9D KS"),
        S(rest="stock"),
        foundations=[run("H", 0, 13), run("S", 0, 11), run("C", 1, 13), run("D", 1, 7)],
    )
    hand = score_hand(ended(state))
    assert hand.scores == (18, 20)
    seat0 = hand.seats[0]
    assert (seat0.placed_points, seat0.demon_penalty) == (24, -6)
    assert [card.face for card in seat0.demon_left] == ["5C", "9D", "KS"]
    assert len(seat0.placed) == 24
    assert hand.seats[1].demon_penalty == 0  # the caller pays nothing and gains no bonus


def test_a_hand_score_kept_without_its_cards_scores_the_same() -> None:
    state = build("table", S(demon="5C 9D KS"), S(rest="stock"), foundations=[run("H", 0, 13)])
    hand = score_hand(ended(state))
    kept = hand.without_cards()
    assert (kept.hand, kept.reason, kept.ended_by, kept.scores) == (
        hand.hand,
        hand.reason,
        hand.ended_by,
        hand.scores,
    )
    assert all(seat.placed == () and seat.demon_left == () for seat in kept.seats)
    match = Match(state.rules, 2)
    assert match.record(kept).totals == match.record(hand).totals == hand.scores


def test_seed_003_worked_example() -> None:
    # The Nertz rules' worked example: 5 cards up and 6 left in the nertz pile: 5 - 12 = -7.
    state = build("nertz", S(demon="2C 3C 4C 5C 6C 7C"), S(), foundations=[run("H", 0, 5)])
    assert score_hand(ended(state, EndReason.BLOCKED, None)).scores[0] == -7


def test_the_centre_is_sorted_by_back_and_cards_score_for_their_owner() -> None:
    mixed = "AH@1 2H@0 3H@1 4H@0 5H@0"
    state = build("table", S(demon="9C"), S(), foundations=[mixed])
    hand = score_hand(ended(state, EndReason.BLOCKED, None))
    assert [str(card) for card in hand.seats[0].placed] == ["2H@0", "4H@0", "5H@0"]
    assert [str(card) for card in hand.seats[1].placed] == ["AH@1", "3H@1"]


def test_set_aside_king_piles_still_score() -> None:
    state = build("table", S(), S(), foundations=[run("S", 0, 13)])
    assert state.foundations[0].complete
    assert score_hand(ended(state)).seats[0].placed_points == 13


def test_stock_waste_and_work_piles_score_nothing() -> None:
    state = build("table", S(demon="", work=("KS QH", "9C", "", ""), waste="5D 6D"), S())
    assert score_hand(ended(state)).scores[0] == 0


def test_tied_level_cards_both_score() -> None:
    state = build("table", S(demon="9C"), S(demon="9C"), foundations=["AH@0,AH@1"])
    assert score_hand(ended(state)).seats[1].placed_points == 1


def test_minus_one_variant() -> None:
    document = builtin_document("nertz")
    document["scoring"]["per_demon_card"] = -1
    rules = rules_from_document(document)
    state = build(rules, S(demon="2C 3C 4C 5C 6C 7C"), S(), foundations=[run("H", 0, 5)])
    assert score_hand(ended(state)).scores[0] == -1


def test_a_hand_in_play_has_no_score() -> None:
    with pytest.raises(ValueError, match="has not ended"):
        score_hand(build("table", S(), S()))


# -- the match ---------------------------------------------------------------------


def hand(number: int, *scores: int, reason: EndReason = EndReason.CALL, by: int = 0) -> HandScore:
    seats = tuple(SeatScore(seat, (), (), score, 0) for seat, score in enumerate(scores))
    return HandScore(number, reason, by, seats)


def play_match(profile: str, *hands: tuple[int, ...]) -> Match:
    match = Match(load_rules(profile), len(hands[0]))
    for number, scores in enumerate(hands, start=1):
        match = match.record(hand(number, *scores))
    return match


def test_table_plays_fresh_hands_until_someone_reaches_100() -> None:
    match = play_match("table", (40, 30), (40, 35))
    assert not match.over
    match = match.record(hand(3, 25, 10))
    assert match.over
    assert match.totals == (105, 75)
    assert match.winners == (0,)


def test_table_equal_highest_totals_share_the_victory() -> None:
    match = play_match("table", (60, 60, 10), (45, 45, 99))
    assert match.totals == (105, 105, 109)
    assert match.winners == (2,)
    shared = play_match("table", (60, 60, 10), (45, 45, 30))
    assert shared.winners == (0, 1)


def test_table_highest_total_wins_not_the_first_past_100() -> None:
    match = play_match("table", (95, 50), (5, 60))
    assert match.winners == (1,)


def test_table_blocked_hand_counts_and_may_end_the_match() -> None:
    match = Match(load_rules("table"), 2).record(hand(1, 90, 20))
    match = match.record(hand(2, 12, -8, reason=EndReason.BLOCKED))
    assert match.over
    assert match.winners == (0,)


def test_peer2peer_one_deal_decides_and_equal_scores_share() -> None:
    assert play_match("peer2peer", (12, 3)).winners == (0,)
    assert play_match("peer2peer", (7, 7, -4)).winners == (0, 1)


def test_nertz_tie_for_the_lead_plays_another_round() -> None:
    match = play_match("nertz", (60, 60), (45, 45))
    assert match.totals == (105, 105)
    assert not match.over
    match = match.record(hand(3, 2, 5))
    assert match.winners == (1,)


def test_nertz_short_game_to_50() -> None:
    document = builtin_document("nertz")
    document["match"]["target"] = 50
    match = Match(rules_from_document(document), 2).record(hand(1, 51, 20))
    assert match.winners == (0,)


def test_fixed_number_of_rounds_variant() -> None:
    document = builtin_document("table")
    document["match"]["max_hands"] = 2
    match = Match(rules_from_document(document), 2).record(hand(1, 10, 5))
    assert not match.over
    assert match.record(hand(2, 1, 2)).winners == (0,)


def test_abandoned_match_has_no_result() -> None:
    match = Match(load_rules("peer2peer"), 2).record(hand(1, 5, 3, reason=EndReason.ABANDONED))
    assert match.over
    assert match.abandoned
    assert match.winners == ()


def test_resignation_ends_the_match_against_that_player() -> None:
    resigned = hand(1, 30, 12, 9, reason=EndReason.RESIGNED, by=0)
    match = Match(load_rules("table"), 3).record(resigned)
    assert match.over
    assert match.winners == (1,)


def test_recording_after_the_end_or_out_of_order_is_refused() -> None:
    match = play_match("peer2peer", (1, 0))
    with pytest.raises(ValueError, match="over"):
        match.record(hand(2, 1, 0))
    with pytest.raises(ValueError, match="recorded as hand 1"):
        Match(load_rules("table"), 2).record(hand(2, 1, 0))


def test_every_match_ends_after_the_cap_even_a_tie_for_the_lead_played_on() -> None:
    match = Match(load_rules("nertz"), 2)  # to 100, a tied lead plays another hand
    for number in range(1, MAX_HANDS + 1):
        assert not match.over
        match = match.record(hand(number, 60, 60))  # tied, far past the target
    assert match.over
    assert match.played == MAX_HANDS
    assert match.winners == (0, 1)  # the ordinary rule: equal highest totals share
    with pytest.raises(ValueError, match="over"):
        match.record(hand(MAX_HANDS + 1, 1, 0))


def test_a_match_of_only_a_target_nobody_reaches_ends_after_the_cap() -> None:
    match = Match(load_rules("table"), 2)
    for number in range(1, MAX_HANDS + 1):
        match = match.record(hand(number, 0, -1))
    assert match.over
    assert match.totals == (0, -MAX_HANDS)
    assert match.winners == (0,)


@pytest.mark.pure_python  # counts HandScore.scores, a native attribute when compiled
def test_recording_a_hand_reads_only_that_hand_however_many_came_before(
    hand_score_reads: Reads,
) -> None:
    """Issue 12: ``record`` and ``over`` re-added every hand so far, so a match of n
    hands read n * n / 2 hand scores. Now each hand's scores are read once, when it is
    recorded, and the match's questions are answered from running totals."""
    match = Match(load_rules("table"), 2)
    for number in range(1, MAX_HANDS + 1):
        match = match.record(hand(number, 0, 0))
        assert (match.over, match.totals, match.winners, match.abandoned) == (
            number == MAX_HANDS,
            (0, 0),
            (0, 1) if number == MAX_HANDS else (),
            False,
        )
    assert hand_score_reads.count == MAX_HANDS


def test_matches_that_recorded_the_same_hands_are_equal() -> None:
    first = play_match("table", (10, 5), (3, 4))
    assert first == play_match("table", (10, 5), (3, 4))
    assert first.hands == (hand(1, 10, 5), hand(2, 3, 4))
    assert first != play_match("table", (3, 4), (10, 5))  # the same totals, other hands
