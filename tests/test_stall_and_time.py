"""Stuck, stall shift, blocked, and the time rules (docs/rules.md §4, §5)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from racing_demon.game import engine, stall
from racing_demon.game.engine import ViolationCode, advance_clock, legal_moves
from racing_demon.game.stall import (
    StallOutcome,
    apply_stall,
    check_stall,
    cycle_tops,
    is_stuck,
    progress_witness,
    stall_outcome,
    table_is_stuck,
)
from racing_demon.game.state import EndReason, Phase, next_deadline
from racing_demon.profiles import builtin_document, rules_from_document

from conftest import S, build, play, refused

# A seat that cannot play: only an ace would fit its exposed twos, and no ace is
# reachable (the rest of the pack lies under the demon top).
BLOCKED_WORK = ("2H", "2D", "2C", "2S")


def stuck_seat(**changes: object) -> S:
    spec = {"demon": "KC", "work": BLOCKED_WORK, "stock": "", "waste": "KS QS", "rest": "demon"}
    spec.update(changes)
    return S(**spec)  # type: ignore[arg-type]


# -- stuck ----------------------------------------------------------------------------


def test_a_playable_demon_top_means_not_stuck() -> None:
    state = build("table", S(demon="AH"), S())
    assert progress_witness(state, 0) == "AH can go to a foundation"


def test_stuck_seat_has_no_witness() -> None:
    # The rest of the pack sits in the demon pile, under a black king.
    state = build("table", stuck_seat(), stuck_seat())
    assert is_stuck(state, 0)
    assert table_is_stuck(state)


def test_a_card_that_a_full_pass_exposes_means_not_stuck() -> None:
    # AS is the waste top only after a recycle and one more packet.
    state = build("table", stuck_seat(waste="KS QS AS 9S 8S 7S", stock=""), stuck_seat())
    assert [card.face for card in cycle_tops(state.seats[0], 3)] == ["7S", "AS"]
    assert progress_witness(state, 0) == "AS can go to a foundation"


def test_a_card_in_the_middle_of_every_packet_is_never_exposed() -> None:
    # Three cards turn as one packet: the middle one (AS) is never the waste top.
    state = build("table", stuck_seat(waste="", stock="9S AS 8S"), stuck_seat())
    assert [card.face for card in cycle_tops(state.seats[0], 3)] == ["9S"]
    assert is_stuck(state, 0)


def test_turn_one_exposes_every_card() -> None:
    document = builtin_document("table")
    document["stock"]["turn"] = 1
    rules = rules_from_document(document)
    state = build(rules, stuck_seat(waste="", stock="9S AS 8S"), stuck_seat())
    assert progress_witness(state, 0) == "AS can go to a foundation"


def test_rearranging_work_piles_can_make_room_for_the_demon() -> None:
    # JD fits nowhere, but JC TD can move onto QH, which empties a pile for JD.
    seat = S(demon="JD", work=("KC QH", "JC TD", "KS", "KH"), waste="KD 2S", rest="demon")
    # The rest of the pack is under JD, so JD is the demon top.
    state = build("table", seat, stuck_seat())
    assert progress_witness(state, 0) == "JD can go to a work pile"


def test_an_exposed_card_freed_by_rearranging_reaches_a_foundation() -> None:
    seat = S(demon="KC", work=("5C 4H 3S", "4D", "KH", "KD"), waste="2S", rest="demon")
    state = build("table", seat, stuck_seat(), foundations=["AH@0 2H@0 3H@0"])
    # 3S onto 4D exposes 4H, which the hearts foundation wants.
    assert progress_witness(state, 0) == "4H can reach a foundation from the work piles"


def test_slide_under_counts_where_the_profile_has_it() -> None:
    seat = stuck_seat(demon="3D")
    state = build("peer2peer", seat, stuck_seat())
    assert progress_witness(state, 0) == "3D can go to a work pile"  # under 2C or 2S
    assert is_stuck(build("table", seat, stuck_seat()), 0)


# -- the stall shift ------------------------------------------------------------------


def test_shift_order_matches_the_rule_text() -> None:
    # Stock top-to-bottom [s1], waste bottom-to-top [w1 w2 w3] -> [w2 w3 s1 w1].
    s1, w1, w2, w3 = "9S", "7S", "5S", "3S"
    seat = stuck_seat(stock=s1, waste=f"{w1} {w2} {w3}")
    state = apply_stall(build("table", seat, stuck_seat()))
    assert state.seats[0].waste == ()
    top_to_bottom = [card.face for card in reversed(state.seats[0].stock)]
    assert top_to_bottom == [w2, w3, s1, w1]
    assert state.shifts_since_play == 1


def test_shift_refused_while_anybody_can_play() -> None:
    state = build("table", stuck_seat(), S(demon="AH"))
    violation = check_stall(state)
    assert violation is not None
    assert violation.code is ViolationCode.STALL_NOT_DUE
    assert violation.message == "seat 1 can still play: AH can go to a foundation"


def test_shift_due_when_the_table_is_stuck() -> None:
    state = build("peer2peer", stuck_seat(), stuck_seat())
    assert check_stall(state) is None
    assert apply_stall(state).shifts_since_play == 1


def test_table_shift_by_agreement_of_every_player() -> None:
    state = build("table", stuck_seat(), S(demon="AH"))
    state = play(state, "0 agree")
    assert check_stall(state) is not None
    state = play(state, "1 agree")
    assert check_stall(state) is None
    assert apply_stall(state).agreed == frozenset()


def test_a_play_voids_the_agreement() -> None:
    state = play(build("table", stuck_seat(), S(demon="AH")), "0 agree", "1 agree")
    state = play(state, "1 demon>f+ AH")
    assert state.agreed == frozenset()
    assert check_stall(state) is not None


def test_blocked_after_a_complete_cycle_of_shifts() -> None:
    state = build("table", stuck_seat(waste="KS QS JS"), stuck_seat(waste="KS QS"))
    # The longest stock cycle has three cards: three shifts bring it round again.
    for shifts in range(3):
        assert check_stall(state) is None
        assert state.shifts_since_play == shifts
        state = apply_stall(state)
    assert stall_outcome(state) is StallOutcome.BLOCKED
    state = apply_stall(state)
    assert state.phase is Phase.ENDED
    assert state.end_reason is EndReason.BLOCKED
    assert refused(state, "0 recycle").code is ViolationCode.HAND_OVER


def test_agreed_shifts_never_block_a_table_where_someone_can_play() -> None:
    # Table rules: blocked when "a complete cycle of these agreed shifts offers no playable card".
    state = build("table", stuck_seat(waste="KS QS"), S(demon="AH", waste="KS"))
    for _ in range(4):
        state = apply_stall(play(state, "0 agree", "1 agree"))
    assert state.shifts_since_play == 4  # past the longest cycle (2 cards)
    assert stall_outcome(play(state, "0 agree", "1 agree")) is StallOutcome.SHIFT


def test_a_play_between_shifts_restarts_the_cycle() -> None:
    state = apply_stall(build("table", stuck_seat(waste="KS QS JS"), stuck_seat(demon="AH")))
    assert state.shifts_since_play == 1
    assert play(state, "1 demon>f+ AH").shifts_since_play == 0


def test_rearranging_work_piles_is_not_a_play() -> None:
    moved = play(
        build("table", stuck_seat(work=("2H", "2D", "", "2S")), stuck_seat(), shifts_since_play=2),
        "0 w4>w3 2S",
    )
    assert moved.shifts_since_play == 2


def test_nertz_shift_after_every_player_had_a_full_pass() -> None:
    state = build("nertz", stuck_seat(waste="", stock="9S 8S 7S 6S"), stuck_seat(waste=""))
    # Seat 1 has no stock at all: its pass is trivially done. Seat 0 must turn all four.
    violation = check_stall(state)
    assert violation is not None
    assert violation.code is ViolationCode.STALL_NOT_DUE
    assert "seats 0" in violation.message
    state = play(state, "0 turn 6S 7S 8S")
    assert check_stall(state) is not None
    state = play(state, "0 turn 9S")
    assert check_stall(state) is None


# -- time --------------------------------------------------------------------------------


def test_peer2peer_countdown() -> None:
    state = build("peer2peer", S(demon="AH"), S(), clock=2999)
    violation = refused(state, "0 demon>f+ AH")
    assert violation.code is ViolationCode.TOO_EARLY
    assert violation.found == "2999 ms"
    play(advance_clock(state, 3000), "0 demon>f+ AH")


def test_peer2peer_three_minutes_without_a_card_to_the_centre() -> None:
    state = build("peer2peer", S(demon="AH", stock="9S 8S 7S"), S())
    assert next_deadline(state) == (303000, EndReason.ABANDONED)  # silent: the idle rule
    state = play(advance_clock(state, 100000), "0 turn 7S 8S 9S")  # not to the centre
    assert next_deadline(state) == (183000, EndReason.NO_CENTRE)  # only shuffling
    assert advance_clock(state, 182999).phase is Phase.PLAYING
    ended = advance_clock(state, 183000)
    assert (ended.phase, ended.end_reason, ended.ended_ms) == (
        Phase.ENDED,
        EndReason.NO_CENTRE,
        183000,
    )
    assert refused(ended, "0 demon>f+ AH").code is ViolationCode.HAND_OVER


def test_a_card_to_the_centre_restarts_the_three_minutes() -> None:
    state = build("peer2peer", S(demon="AH", stock="9S 8S 7S"), S())
    state = play(advance_clock(state, 100000), "0 demon>f+ AH")
    state = play(advance_clock(state, 100001), "0 turn 7S 8S 9S")
    assert next_deadline(state) == (280000, EndReason.NO_CENTRE)


def test_idle_abandonment_where_no_shorter_rule_applies() -> None:
    document = builtin_document("peer2peer")
    document["time"]["no_centre_ms"] = None
    state = build(rules_from_document(document), S(), S())
    ended = advance_clock(state, 3000 + 300000)
    assert ended.end_reason is EndReason.ABANDONED


def test_table_call_grace_lets_cards_in_motion_land() -> None:
    state = build("table", S(waste="AC"), S(demon="2H AH", stock="9S 8S 7S"), clock=1000)
    state = play(state, "0 call")
    assert state.phase is Phase.CALLED
    assert state.grace_until_ms == 2000
    late = advance_clock(state, 2000)
    assert refused(late, "1 turn 7S 8S 9S").code is ViolationCode.HAND_OVER  # no new move starts
    assert refused(late, "0 call").code is ViolationCode.HAND_OVER
    landed = play(late, "1 demon>f+ AH", "0 waste>f+ AC")  # one card in motion per seat
    assert [f.levels[0][0].face for f in landed.foundations] == ["AH", "AC"]
    assert landed.landed == frozenset({0, 1})
    second = refused(landed, "1 demon>f1 2H")  # a second card was not in motion
    assert second.code is ViolationCode.HAND_OVER
    assert "seat 1 already landed its card in motion" in second.message
    assert legal_moves(landed, 1) == []
    over = advance_clock(landed, 2001)
    assert (over.phase, over.end_reason, over.ended_by) == (Phase.ENDED, EndReason.CALL, 0)
    assert refused(over, "1 turn 7S 8S 9S").code is ViolationCode.HAND_OVER


def test_equal_deadlines_end_the_hand_for_no_centre_not_abandonment() -> None:
    document = builtin_document("peer2peer")
    document["time"].update(no_centre_ms=300000, idle_abandon_ms=180000)
    state = build(rules_from_document(document), S(stock="9S 8S 7S"), S())
    state = play(advance_clock(state, 123000), "0 turn 7S 8S 9S")  # the table acts
    assert next_deadline(state) == (303000, EndReason.NO_CENTRE)


def test_a_stall_shift_counts_as_an_action_for_the_idle_rule() -> None:
    state = advance_clock(build("peer2peer", stuck_seat(), stuck_seat()), 50000)
    assert apply_stall(state).last_action_ms == 50000


def test_peer2peer_call_stops_all_play_at_once() -> None:
    state = play(build("peer2peer", S(demon="", waste="AC"), S(demon="AH")), "0 call")
    assert state.phase is Phase.ENDED
    assert refused(state, "1 demon>f+ AH").code is ViolationCode.HAND_OVER
    assert refused(state, "0 waste>f+ AC").code is ViolationCode.HAND_OVER  # the caller too


def test_nertz_ends_when_the_last_demon_card_leaves() -> None:
    state = play(build("nertz", S(demon="AH", rest="stock"), S()), "0 demon>f+ AH")
    assert (state.phase, state.end_reason, state.ended_by) == (
        Phase.ENDED,
        EndReason.DEMON_EMPTY,
        0,
    )


def test_table_does_not_end_when_a_demon_pile_empties() -> None:
    state = play(build("table", S(demon="AH", rest="stock"), S()), "0 demon>f+ AH")
    assert state.phase is Phase.PLAYING


def test_a_position_past_its_own_deadline_is_not_sound() -> None:
    state = build("peer2peer", S(), S())
    assert state.problems() == []
    late = replace(state, clock_ms=303000)  # the idle deadline, without advance_clock
    assert late.problems() == ["the clock 303000 ms is past the abandoned deadline"]


def test_time_never_runs_backwards() -> None:
    state = build("table", S(), S(), clock=50)
    with pytest.raises(ValueError, match="backwards"):
        advance_clock(state, 49)


def test_the_stuck_and_stall_search_is_a_module_of_its_own() -> None:
    """Issue 30, point 3: "the stuck and stall search (engine.py lines 689-1065) into its
    own module in game/". The engine keeps enumerate, check and apply; the stall module
    holds the search, its cap and its cache, and the engine does not import it."""
    searched = {
        "STUCK_SEARCH_CAP",
        "SEARCHES",
        "StallOutcome",
        "apply_stall",
        "check_stall",
        "cycle_tops",
        "is_stuck",
        "progress_witness",
        "stall_is_due",
        "stall_outcome",
        "table_is_stuck",
    }
    assert searched <= set(vars(stall))
    assert not searched & set(vars(engine))
    assert {"legal_moves", "check_move", "apply_move", "advance_clock"} <= set(vars(engine))
    assert all(
        value is not stall and getattr(value, "__module__", None) != stall.__name__
        for value in vars(engine).values()
    )
