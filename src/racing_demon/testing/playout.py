"""Random playouts of one hand, for property tests, benchmarks and fuzzing.

The caller supplies ``choose`` (e.g. ``random.Random(seed).choice`` or a
hypothesis-driven chooser), so this module holds no randomness of its own and
never touches how deals are made.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from racing_demon.game.engine import advance_clock, apply_move, is_progress, legal_moves
from racing_demon.game.moves import Move, MoveKind
from racing_demon.game.stall import apply_stall, check_stall
from racing_demon.game.state import Phase, State

Choose = Callable[[Sequence[Any]], Any]
STEP_MS = (0, 0, 1, 7, 40, 250, 1200)  # zero steps make same-instant races and ties
_BUCKETS = ("play", "play", "play", "other")


class PlayoutEvent(enum.Enum):
    MOVE = "move"
    STALL = "stall"  # a stall shift, or the blocked end
    CLOCK = "clock"  # the clock passed a deadline and the hand ended


@dataclass(frozen=True, slots=True)
class PlayoutStep:
    before: State
    event: PlayoutEvent
    after: State
    move: Move | None = None


def playout(state: State, choose: Choose, max_steps: int = 2000) -> Iterator[PlayoutStep]:
    """Play until the hand ends or ``max_steps`` rounds passed; yield every event.

    Mostly plays (cards to the centre, out of the demon or the waste) and calls;
    one event in four is any other legal move, so turning, recycling and
    rearranging happen too. A stall is applied when no play is left and it is due.
    Nobody resigns or agrees, so hands end by the profile's own rules.
    """
    for _ in range(max_steps):
        after = advance_clock(state, state.clock_ms + choose(STEP_MS))
        if after.phase is Phase.ENDED:
            yield PlayoutStep(state, PlayoutEvent.CLOCK, after)
            return
        state = after
        moves = [
            move
            for player in range(state.players)
            for move in legal_moves(state, player)
            if move.kind not in (MoveKind.RESIGN, MoveKind.AGREE)
        ]
        plays = [move for move in moves if is_progress(move) or move.kind is MoveKind.CALL]
        if plays and choose(_BUCKETS) == "play":
            moves = plays
        elif not plays and state.phase is Phase.PLAYING and check_stall(state) is None:
            after = apply_stall(state)
            yield PlayoutStep(state, PlayoutEvent.STALL, after)
            state = after
            if state.phase is Phase.ENDED:
                return
            continue
        if not moves:
            continue
        move = choose(moves)
        after = apply_move(state, move)
        yield PlayoutStep(state, PlayoutEvent.MOVE, after, move)
        state = after
        if state.phase is Phase.ENDED:
            return
