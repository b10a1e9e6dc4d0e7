"""Progress bars on standard error, for the library's use cases that take a progress
callback (``batch.run_batch``, ``sim.run.run_simulation``): drawn by click, only on a
terminal."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

import click


@contextlib.contextmanager
def batch_progress(total: int, shown_as_they_come: bool) -> Iterator[Callable[[], None] | None]:
    """A bar of the logs verified, only for a batch, when standard error is a terminal
    and the logs' lines are not already coming out on one."""
    if total < 2 or not sys.stderr.isatty() or (shown_as_they_come and sys.stdout.isatty()):
        yield None
        return
    with click.progressbar(length=total, label="verifying", file=sys.stderr, show_pos=True) as bar:
        yield lambda: bar.update(1)


_SIMULATION_STEPS = 1000


@contextlib.contextmanager
def simulation_progress() -> Iterator[Callable[[float], None] | None]:
    """A bar of a simulated match, only when standard error is a terminal: it is given
    how much of the match is played, from 0 to 1."""
    if not sys.stderr.isatty():
        yield None
        return
    with click.progressbar(length=_SIMULATION_STEPS, label="simulating", file=sys.stderr) as bar:
        shown = 0

        def advance(done: float) -> None:
            nonlocal shown
            step = min(_SIMULATION_STEPS, round(done * _SIMULATION_STEPS))
            if step > shown:
                bar.update(step - shown)
                shown = step

        yield advance
