"""A served table's clock and its timer: table milliseconds since the table started, on
the process's monotonic clock (a resumed table's continue from its last record's time),
and a task that wakes the table at its next deadline."""

from __future__ import annotations

import asyncio
import contextlib
import time

from racing_demon.table import Table


class TableClock:
    def __init__(self) -> None:
        self._base_ms = self._last_ms = 0
        self._started_at = 0.0
        self._frozen = False

    def start(self, base_ms: int) -> None:
        """Start at ``base_ms``: 0 for a new table, the last record's time for a resumed one."""
        self._base_ms = self._last_ms = base_ms
        self._started_at = time.monotonic()

    def freeze(self) -> None:
        """Stop the clock: once played out, the held final record is dated then."""
        self._frozen = True

    def now_ms(self) -> int:
        """The table's time: never backwards, every value given to the table from here."""
        if not self._frozen:
            elapsed_ms = int((time.monotonic() - self._started_at) * 1000)
            self._last_ms = max(self._last_ms, self._base_ms + elapsed_ms)
        return self._last_ms


async def wake_at_deadlines(
    table: Table, clock: TableClock, changed: asyncio.Event, played_out: asyncio.Event
) -> None:
    """Advance ``table`` at its next deadline (a call's grace, the three-minute rule, the
    idle abandon), looking again whenever ``changed`` says a change may have moved it;
    ``played_out`` is set once the match is over."""
    while not table.played_out:
        changed.clear()
        deadline = table.deadline
        if deadline is None:
            await changed.wait()
            continue
        delay_s = (deadline - clock.now_ms()) / 1000
        if delay_s > 0:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for loses a cancellation
            # that comes as the event is set, and the timer would never stop.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay_s):
                    await changed.wait()
            continue
        table.advance(clock.now_ms())
    played_out.set()
