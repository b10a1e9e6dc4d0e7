"""Micro-benchmark: the engine's check + apply of one move beside python-chess's replay of
one PGN ply, in the same run.

Moves come from random playouts of all three profiles (3 seats, seeded, so every run
replays the same moves). Each recorded move is checked and applied ``inner`` times in a
row and the mean of those is its cost; the figure reported is the **median** over all
moves (the issue's target), with the mean beside it. python-chess parses a whole PGN game
and pushes every move; its cost per ply is that time over the plies, median of repeats.
``random`` only chooses playout moves here; deals come from the deal spec.
"""

from __future__ import annotations

import io
import random
import statistics
import time
import timeit
from collections.abc import Callable

import chess.pgn

from racing_demon.game.deal import MatchSeed, deal_hand
from racing_demon.game.engine import apply_move, check_move
from racing_demon.game.moves import Move
from racing_demon.game.state import State
from racing_demon.profiles import BUILT_IN, load_rules
from racing_demon.testing.playout import PlayoutEvent, playout

# Fischer-Spassky, Belgrade 1992, game 1: 85 plies of ordinary middlegame and endgame.
PGN = """[Event "F/S Return Match"]
[Result "1/2-1/2"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O
9. h3 Nb8 10. d4 Nbd7 11. c4 c6 12. cxb5 axb5 13. Nc3 Bb7 14. Bg5 b4 15. Nb1 h6
16. Bh4 c5 17. dxe5 Nxe4 18. Bxe7 Qxe7 19. exd6 Qf6 20. Nbd2 Nxd6 21. Nc4 Nxc4
22. Bxc4 Nb6 23. Ne5 Rae8 24. Bxf7+ Rxf7 25. Nxf7 Rxe1+ 26. Qxe1 Kxf7 27. Qe3 Qg5
28. Qxg5 hxg5 29. b3 Ke6 30. a3 Kd6 31. axb4 cxb4 32. Ra5 Nd5 33. f3 Bc8 34. Kf2 Bf5
35. Ra7 g6 36. Ra6+ Kc5 37. Ke1 Nf4 38. g3 Nxh3 39. Kd2 Kb5 40. Rd6 Kc5 41. Ra6 Nf2
42. g4 Bd3 43. Re6 1/2-1/2
"""


def recorded_moves(hands_per_profile: int = 12) -> list[tuple[State, Move]]:
    moves: list[tuple[State, Move]] = []
    for name in BUILT_IN:
        rules = load_rules(name)
        for number in range(hands_per_profile):
            state, _ = deal_hand(rules, MatchSeed.from_plain(f"bench {number}"), 1, 3)
            choose = random.Random(number).choice
            moves += [
                (step.before, step.move)
                for step in playout(state, choose)
                if step.event is PlayoutEvent.MOVE and step.move is not None
            ]
    return moves


def engine_costs_us(moves: list[tuple[State, Move]], inner: int = 20) -> list[float]:
    costs = []
    clock = time.perf_counter_ns
    for state, move in moves:
        start = clock()
        for _ in range(inner):
            check_move(state, move)
            apply_move(state, move)
        costs.append((clock() - start) / inner / 1000)
    return costs


def chess_replay() -> tuple[Callable[[], None], int]:
    """python-chess replaying the reference game from its PGN, and the game's plies."""
    plies = len(list(chess.pgn.read_game(io.StringIO(PGN)).mainline_moves()))  # type: ignore[union-attr]

    def replay() -> None:
        game = chess.pgn.read_game(io.StringIO(PGN))
        assert game is not None
        board = game.board()
        for move in game.mainline_moves():
            board.push(move)

    return replay, plies


def chess_ply_us(repeats: int = 9, number: int = 30) -> float:
    replay, plies = chess_replay()
    runs = timeit.Timer(replay).repeat(repeat=repeats, number=number)
    return statistics.median(runs) / number / plies * 1e6


def measure() -> dict[str, float]:
    moves = recorded_moves()
    costs = engine_costs_us(moves)
    chess_us = chess_ply_us()
    median = statistics.median(costs)
    return {
        "moves_measured": float(len(moves)),
        "check_apply_median_us": median,
        "check_apply_mean_us": statistics.fmean(costs),
        "chess_pgn_ply_us": chess_us,
        "ratio": median / chess_us,
    }


if __name__ == "__main__":
    result = measure()
    print(f"moves measured:          {result['moves_measured']:8.0f}")
    print(f"check+apply, median:     {result['check_apply_median_us']:8.2f} us per move")
    print(f"check+apply, mean:       {result['check_apply_mean_us']:8.2f} us per move")
    print(f"python-chess PGN ply:    {result['chess_pgn_ply_us']:8.2f} us per ply")
    print(f"ratio (median / chess):  {result['ratio']:8.3f}")
