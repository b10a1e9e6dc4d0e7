"""Computer players: the strategy on built positions, its completeness, and the clocks."""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterator, Sequence
from dataclasses import replace

import pytest

from racing_demon.game.deal import MatchSeed, deal_hand, word_stream
from racing_demon.game.engine import apply_move, is_progress, legal_moves
from racing_demon.game.moves import Move, MoveKind
from racing_demon.game.stall import is_stuck
from racing_demon.game.state import Phase, State
from racing_demon.profiles import load_rules
from racing_demon.sim.bots import BOTS, EASY, HARD, NORMAL, BotProfile, choose_move, stream_chooser
from racing_demon.testing.playout import playout

from conftest import S, build, play


def first(options: Sequence[Move]) -> Move:
    return options[0]


def only(options: Sequence[Move]) -> Move:
    """The strategy must have found exactly one best move."""
    assert len(options) == 1, options
    return options[0]


def decide(state: State, bot: BotProfile = HARD, seat: int = 0) -> str | None:
    move = choose_move(state, seat, bot, only)
    return None if move is None else str(move)


HEARTS_TO_4 = "AH@1 2H@1 3H@1 4H@1"
CLUBS_TO_6 = "AC@1 2C@1 3C@1 4C@1 5C@1 6C@1"
KINGS = ("KD", "KH", "KS", "KC")


# --- order of preference ---------------------------------------------------------------


def test_the_demon_goes_to_the_centre_before_the_waste() -> None:
    state = build(
        "table",
        S(demon="KD 5H", work=("TD", "KC", "QC", "JH"), waste="2D 7C"),
        S(),
        foundations=(HEARTS_TO_4, CLUBS_TO_6),
    )
    assert decide(state) == "0 demon>f1 5H"


def test_foundation_plays_come_before_the_demon_onto_a_work_pile() -> None:
    state = build(
        "table",
        S(demon="KD 9S", work=("TD", "KC", "QC", "JH"), waste="2D 7C"),
        S(),
        foundations=(HEARTS_TO_4, CLUBS_TO_6),
    )
    assert "0 demon>w1 9S" in map(str, legal_moves(state, 0))
    assert decide(state) == "0 waste>f2 7C"


def test_an_exposed_work_card_goes_to_the_centre_before_the_demon_moves() -> None:
    state = build(
        "table",
        S(demon="9S", work=("TD", "7C", "QC", "JH")),
        S(),
        foundations=(CLUBS_TO_6,),
    )
    assert decide(state) == "0 w2>f1 7C"


def test_the_demon_top_goes_onto_a_work_pile_before_the_waste_does() -> None:
    state = build("table", S(demon="9S", work=("TD", "TH", "KC", "KH"), waste="9C"), S())
    assert {str(choose_move(state, 0, HARD, pick)) for pick in (first, lambda o: o[-1])} == {
        "0 demon>w1 9S",
        "0 demon>w2 9S",
    }  # both are as good: the choice stream picks
    waste_only = build("table", S(demon="9D", work=("TD", "TH", "KC", "KH"), waste="9C"), S())
    assert choose_move(waste_only, 0, HARD, first) == Move.parse("0 waste>w1 9C")


def test_an_empty_work_pile_takes_the_demon_card() -> None:
    state = build("table", S(demon="5C", work=("7H", "", "KD", "KH")), S())
    assert decide(state) == "0 demon>w2 5C"


def test_a_built_pile_is_used_before_the_empty_one() -> None:
    state = build("table", S(demon="5C", work=("6H", "", "KD", "KH")), S())
    assert "0 demon>w2 5C" in map(str, legal_moves(state, 0))
    assert decide(state) == "0 demon>w1 5C"


def test_slide_under_takes_a_demon_card_in_peer2peer() -> None:
    state = build("peer2peer", S(demon="8C", work=("7H", "KS", "KD", "KH")), S())
    assert decide(state) == "0 demon>u1 8C"


def test_a_work_pile_is_emptied_to_make_room_for_the_demon_card() -> None:
    state = build("table", S(demon="5C", work=("7H", "8S", "KD", "KH")), S())
    assert decide(state) == "0 w1>w2 7H"
    assert decide(play(state, "0 w1>w2 7H")) == "0 demon>w1 5C"


def test_a_tail_is_moved_to_uncover_a_card_the_centre_wants() -> None:
    state = build(
        "table",
        S(demon="5C", work=("3S 2H", "3C", "KD", "KH")),
        S(),
        foundations=("AS@1 2S@1",),
    )
    assert decide(state) == "0 w1>w2 2H"
    assert decide(play(state, "0 w1>w2 2H")) == "0 w1>f1 3S"


# --- turning the stock -------------------------------------------------------------------


def test_the_stock_is_turned_only_when_nothing_else_is_worth_doing() -> None:
    idle = build("table", S(demon="5C", work=("9H", "KS", "KD", "KH"), waste="2C"), S())
    move = choose_move(idle, 0, HARD, only)
    assert move is not None and move.kind is MoveKind.TURN
    playable = build("table", S(demon="5C", work=("9H", "KS", "KD", "KH"), waste="8S"), S())
    assert decide(playable) == "0 waste>w1 8S"


def test_an_empty_stock_is_recycled() -> None:
    state = build(
        "table", S(demon="5C", work=KINGS, stock="", waste="2C 3C 4C 6C", rest="demon"), S()
    )
    assert decide(state) == "0 recycle"


def test_after_a_whole_pass_the_bot_turns_on_only_towards_a_card_that_plays() -> None:
    hopeful = build(
        "table",
        S(demon="9S", work=KINGS, stock="AC 2D 3D 4D", rest="demon"),
        S(),
        turned_since_play=(10, 0),
    )
    assert decide(hopeful) == "0 turn 4D 3D 2D"  # the ace comes up next


def test_a_stuck_bot_agrees_to_a_stall_shift_where_the_profile_has_one() -> None:
    seat = S(demon="9S", work=KINGS, stock="2D 3D 4D", rest="demon")
    table = build("table", seat, S(), turned_since_play=(10, 0))
    assert is_stuck(table, 0)
    assert decide(table) == "0 agree"
    assert decide(play(table, "0 agree")) is None
    nertz = build("nertz", seat, S(), turned_since_play=(10, 0))
    assert decide(nertz) is None


# --- calling -----------------------------------------------------------------------------


def _empty_demon(profile: str, opponent_demon: str) -> State:
    return build(
        profile,
        S(demon="", work=("TD", "KC", "QC", "JH"), waste="2D 7C"),
        S(demon=opponent_demon),
        foundations=(CLUBS_TO_6,),
    )


@pytest.mark.parametrize("profile", ["table", "peer2peer"])
def test_a_bot_holds_off_calling_while_it_still_gains(profile: str) -> None:
    state = _empty_demon(profile, "9S 8S 7S 6S")
    assert decide(state, EASY) == "0 call"
    assert decide(state, NORMAL) == "0 waste>f1 7C"
    assert decide(state, HARD) == "0 waste>f1 7C"
    nothing_left = play(state, "0 waste>f1 7C")
    assert decide(nothing_left, HARD) == "0 call"  # no more gain: call


def test_a_bot_calls_at_once_when_an_opponent_is_about_to_go_out() -> None:
    state = _empty_demon("table", "9S 8S 7S")
    assert decide(state, HARD) == "0 call"


def test_no_new_move_starts_after_a_call_or_before_play_starts() -> None:
    state = _empty_demon("table", "9S 8S 7S")
    called = play(state, "0 call")
    assert called.phase is Phase.CALLED
    assert choose_move(called, 1, HARD, first) is None
    hand, _ = deal_hand(load_rules("peer2peer"), MatchSeed.from_plain("bots"), 1, 2)
    assert hand.clock_ms < hand.play_start_ms
    assert choose_move(hand, 0, HARD, first) is None


def test_a_bot_never_aims_at_a_tie() -> None:
    state = build(
        "table",
        S(demon="QD 4H", work=KINGS),
        S(),
        foundations=(HEARTS_TO_4,),
        clock=0,
    )
    assert "0 demon>f1 4H" in map(str, legal_moves(state, 0))  # the tie rule's instant
    assert decide(state) != "0 demon>f1 4H"


# --- completeness: a bot that can still play gets there ------------------------------------


def _positions(seed: int) -> Iterator[State]:
    rng = random.Random(seed)
    profile = ("table", "peer2peer", "nertz")[seed % 3]
    state, _ = deal_hand(load_rules(profile), MatchSeed.from_plain(f"bots {seed}"), 1, 2)
    for number, step in enumerate(playout(state, rng.choice, max_steps=400)):
        if number % 7 == 0 and step.after.phase is Phase.PLAYING:
            yield step.after


@pytest.mark.parametrize("seed", range(6))
def test_bots_send_legal_moves_and_reach_a_play_unless_stuck(seed: int) -> None:
    """After a whole pass, a bot that is not stuck (the engine's own test) reaches a play by
    its own moves alone; a stuck one only agrees, calls or waits."""
    choose = stream_chooser(word_stream(MatchSeed.from_plain(f"choices {seed}"), 1, 0))
    checked = 0
    for position in _positions(seed):
        for seat in range(position.players):
            state = replace(position, turned_since_play=(10**6,) * position.players)
            move = choose_move(state, seat, HARD, choose)
            assert move is None or move in legal_moves(state, seat)
            if is_stuck(state, seat):
                assert move is None or move.kind in (MoveKind.AGREE, MoveKind.CALL)
                continue
            for _ in range(100):
                assert move is not None, state.to_text()
                if is_progress(move) or move.kind is MoveKind.CALL:
                    break
                state = apply_move(state, move)
                move = choose_move(state, seat, HARD, choose)
            else:
                raise AssertionError(f"seat {seat} never played from\n{position.to_text()}")
            checked += 1
    assert checked > 20


# --- clocks ------------------------------------------------------------------------------


@pytest.mark.parametrize("bot", BOTS.values(), ids=BOTS.keys())
def test_pauses_average_their_mean_within_the_jitter(bot: BotProfile) -> None:
    words = word_stream(MatchSeed.from_plain(f"clock {bot.name}"), 1, 0)
    turn = Move.parse("0 recycle")
    for move in (None, turn):
        mean = bot.mean_ms(move)
        pauses = [bot.pause_ms(move, words) for _ in range(4000)]
        spread = mean * bot.jitter_percent // 100
        assert min(pauses) >= mean - spread
        assert max(pauses) <= mean + spread
        assert statistics.fmean(pauses) == pytest.approx(mean, rel=0.02)
        assert statistics.pstdev(pauses) > spread / 3  # really jittered


def test_the_speeds_follow_seed_003() -> None:
    """Nertz rules: "On Easy they make a move about every two seconds, on Normal a little
    faster, and on Hard roughly every 0.7 seconds, turning their stock faster than they play
    cards." """
    turn = Move.parse("0 recycle")
    assert EASY.mean_ms(None) == 2000
    assert HARD.mean_ms(None) > HARD.mean_ms(turn)  # hard turns faster than it plays
    assert HARD.mean_ms(turn) < 700 < HARD.mean_ms(None)
    assert HARD.mean_ms(None) < NORMAL.mean_ms(None) < EASY.mean_ms(None)
    assert NORMAL.mean_ms(None) >= 0.7 * EASY.mean_ms(None)  # "a little faster"


def test_a_bot_profile_refuses_nonsense() -> None:
    with pytest.raises(ValueError, match="jitter"):
        BotProfile(name="x", play_ms=1000, turn_ms=1000, jitter_percent=100, hold_off=False)
    with pytest.raises(ValueError, match="at least 1 ms"):
        BotProfile(name="x", play_ms=0, turn_ms=1000, jitter_percent=10, hold_off=False)
