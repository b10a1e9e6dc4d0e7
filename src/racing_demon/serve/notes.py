"""What a hosted table logs beside the match (docs/log-format.md §6, "Notes"): a ``pause``
record as it resumes after the server was down, and a ``lag`` record of its seats' round
trips every ``LAG_EVERY_S`` while any were measured.

A clean stop leaves a mark in the data folder (``mark_stopped``: the wall-clock time the
tables stopped, once every one of them had); the next start takes it (``take_last_stop``),
and each table it resumes logs a ``planned`` pause, down from that time. Without the mark
the server did not stop cleanly (a kill, a fault, a power cut): each table logs a
``crash``, down from its log file's last change, the last moment it is known to have run.
Either way the table's clock does not run while it is down (docs/rules.md §11).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from racing_demon.log.records import Lag, Pause, PauseCause
from racing_demon.serve.data import FILE_MODE
from racing_demon.serve.round_trips import RoundTrips
from racing_demon.table import Table

LAG_EVERY_S: Final = 5.0  # the "every <= 5 s"; a ping goes every 2 s


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


def mark_stopped(path: Path) -> None:
    """Mark a clean stop at ``path``, now: written whole (a new file, then renamed over)."""
    part = path.with_name(path.name + ".part")
    with part.open("w", encoding="utf-8") as file:
        os.fchmod(file.fileno(), FILE_MODE)
        json.dump({"stopped_at_ms": _wall_ms()}, file)
        file.flush()
        os.fsync(file.fileno())
    os.replace(part, path)


def take_last_stop(path: Path) -> int | None:
    """The wall-clock time of the server's last clean stop, its mark at ``path`` taken
    away (a start that fails after this is a crash for the next one); None when there is
    no mark, or one that cannot be read."""
    try:
        planned_at = json.loads(path.read_text(encoding="utf-8"))["stopped_at_ms"]
    except (OSError, ValueError, TypeError, KeyError):
        planned_at = None
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    if not isinstance(planned_at, int) or isinstance(planned_at, bool):
        return None
    return planned_at


@dataclass(frozen=True, slots=True)
class Notes:
    """What the server's tables log beside their matches: the round trips the play
    connections measure, and how the server last stopped (``take_last_stop``)."""

    round_trips: RoundTrips
    planned_stop_at_ms: int | None = None  # the wall-clock time of a clean stop; None: none

    def pause(self, log_path: Path) -> Pause:
        """The pause a table whose log is at ``log_path`` logs as it resumes now."""
        now_ms = _wall_ms()
        if self.planned_stop_at_ms is not None:
            down_ms = now_ms - self.planned_stop_at_ms
            return Pause(cause=PauseCause.PLANNED, down_ms=max(0, down_ms))
        last_ms = log_path.stat().st_mtime_ns // 1_000_000
        return Pause(cause=PauseCause.CRASH, down_ms=max(0, now_ms - last_ms))

    async def log_round_trips(
        self, table: Table, now_ms: Callable[[], int], changed: asyncio.Event
    ) -> None:
        """Until the match is played out, every LAG_EVERY_S: a lag record of the samples
        measured since the last one, when there are any (those measured before the first
        wait are dropped: they came before the match was playing). ``changed`` wakes the
        table's timer: writing a record first writes whatever the clock had made due."""
        seats = len(table.players)
        self.round_trips.take_fresh(table.game, seats)
        while not table.played_out:
            await asyncio.sleep(LAG_EVERY_S)
            samples = self.round_trips.take_fresh(table.game, seats)
            if any(samples) and not table.played_out:
                table.note(Lag(rtt_ms=samples), now_ms())
                changed.set()
