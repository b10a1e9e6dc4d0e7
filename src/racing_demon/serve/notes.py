"""What a hosted table logs beside the match (docs/log-format.md §6, "Notes"): a ``pause``
record as it resumes after the server was down, and a ``lag`` record of its seats' round
trips every ``LAG_EVERY_S`` while any were measured.

A clean stop (asked by a signal, the journal sound) leaves a mark in the data folder
(``mark_stopped``: its wall-clock time and the tables that stopped cleanly); the next
start takes it before anything changes the folder (``take_last_stop``), and each of those
tables logs a ``planned`` pause, down from that time. Any other table, or every one after
a start that found no mark, logs a ``crash``: down from the journal's last write before
the start (its segments' last change, read before recovery touches them), the last moment
the server is known to have run; 0 when the journal holds nothing. Either way the table's
clock does not run while it is down (docs/rules.md §11).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from racing_demon.log.records import Lag, Pause, PauseCause
from racing_demon.serve.data import FILE_MODE, DataFolder
from racing_demon.serve.round_trips import RoundTrips
from racing_demon.table import Table

LAG_EVERY_S: Final = 5.0  # the "every <= 5 s"; a ping goes every 2 s


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class LastStop:
    """How the server last stopped, as the start found the data folder."""

    planned_at_ms: int | None = None  # a clean stop's wall-clock time; None: no mark
    planned: frozenset[str] = frozenset()  # the games that stopped cleanly then
    last_write_ms: int | None = None  # the journal's last change before this start


def mark_stopped(path: Path, games: Iterable[str]) -> None:
    """Mark a clean stop of ``games`` at ``path``, now: written whole (a new file, then
    renamed over)."""
    part = path.with_name(path.name + ".part")
    with part.open("w", encoding="utf-8") as file:
        os.fchmod(file.fileno(), FILE_MODE)
        json.dump({"stopped_at_ms": _wall_ms(), "games": sorted(games)}, file)
        file.flush()
        os.fsync(file.fileno())
    os.replace(part, path)


def take_last_stop(folder: DataFolder) -> LastStop:
    """How the server last stopped: the clean stop's mark, taken away (a start that fails
    after this is a crash for the next one; a mark that cannot be read is no mark), and
    the journal's last change. Call it before the journal's recovery changes anything."""
    path = folder.stopped_path
    try:
        mark = json.loads(path.read_text(encoding="utf-8"))
        planned_at, games = mark["stopped_at_ms"], mark["games"]
    except (OSError, ValueError, TypeError, KeyError):
        planned_at, games = None, []
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    changes = [
        entry.stat().st_mtime_ns for entry in folder.journal_dir.glob("*") if entry.is_file()
    ]
    last_write = max(changes) // 1_000_000 if changes else None
    if not _is_int(planned_at) or not isinstance(games, list):
        return LastStop(last_write_ms=last_write)
    planned = frozenset(game for game in games if isinstance(game, str))
    return LastStop(planned_at_ms=planned_at, planned=planned, last_write_ms=last_write)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class Notes:
    """What the server's tables log beside their matches: the round trips the play
    connections measure, and how the server last stopped (``take_last_stop``)."""

    round_trips: RoundTrips
    last_stop: LastStop = LastStop()

    def pause(self, game: str) -> Pause:
        """The pause the table of ``game`` logs as it resumes now (the module's docs)."""
        now_ms, stop = _wall_ms(), self.last_stop
        if stop.planned_at_ms is not None and game in stop.planned:
            return Pause(cause=PauseCause.PLANNED, down_ms=max(0, now_ms - stop.planned_at_ms))
        since = stop.last_write_ms
        return Pause(cause=PauseCause.CRASH, down_ms=0 if since is None else max(0, now_ms - since))

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
