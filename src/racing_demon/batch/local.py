"""Verify many logs on this machine: one log per task for a pool of processes.

A log takes milliseconds to seconds to verify, against a fraction of a millisecond to hand
it over, and one log per task lets an interrupted batch say exactly what it verified.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from types import FrameType
from typing import Generic, TypeVar

from racing_demon.files import shown_name
from racing_demon.verify import Report, Settings, unreadable_report, verify_log

_Item = TypeVar("_Item")
_Done = TypeVar("_Done")

# Logs sent to the pool ahead of the first one not yet verified, per job: enough to keep
# every worker busy past a slow log, few enough that the reports held here stay bounded.
_WINDOW_PER_JOB = 4

# The longest a Ctrl-C waits (seconds) while the pool is busy: the wait for a result is
# cut into pieces this long, since no interrupt is let in while talking to the pool.
_INTERRUPT_LATENCY = 0.1


def default_jobs() -> int:
    """Every core: ``--jobs``'s default."""
    return os.cpu_count() or 1


def verify_named(path: Path, settings: Settings) -> Report:
    """``verify_log``'s report of one path ``collect_logs`` returned. A folder among them
    is one with no log under it, reported so ("no logs found under DIR"): its contents
    are never a log, and "not a regular file" would not say what is wrong."""
    if path.is_dir():
        return no_logs_report(shown_name(path), settings)
    return verify_log(path, settings)


def no_logs_report(source: str, settings: Settings) -> Report:
    return unreadable_report(source, settings, f"no logs found under {source}")


def verify_many(logs: Sequence[Path], settings: Settings, jobs: int | None = None) -> list[Report]:
    """Each log's ``verify_named`` report, in the order of ``logs``: ``iter_verified``'s."""
    with contextlib.closing(iter_verified(logs, settings, jobs)) as reports:
        return list(reports)


def iter_verified(
    logs: Sequence[Path], settings: Settings, jobs: int | None = None
) -> Generator[Report, None, None]:
    """Each log's ``verify_named`` report, in the order of ``logs``, each as soon as it and
    every log before it are verified.

    ``jobs`` processes verify at once (default: every core). One job, or one log, runs in
    this process with no pool. Closing the generator early (or an exception in it, such
    as KeyboardInterrupt) cancels what has not started and ends the running workers at
    once. The workers are started afresh, so a script that calls this with several jobs
    needs the ``if __name__ == "__main__":`` guard, as for any ``multiprocessing`` pool.
    """
    return run_here(functools.partial(verify_named, settings=settings), logs, jobs)


def run_here(
    work: Callable[[_Item], _Done], items: Sequence[_Item], jobs: int | None
) -> Generator[_Done, None, None]:
    """``work`` of each item, in order, on ``jobs`` processes here (``iter_verified``)."""
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    if jobs == 1 or len(items) <= 1:
        for item in items:
            yield work(item)
        return
    pool = ProcessPoolExecutor(
        max_workers=min(jobs, len(items)),
        mp_context=_process_context(),
        initializer=_ignore_interrupts,
    )
    finished = False
    try:
        yield from _in_pool(pool, work, items, _WINDOW_PER_JOB * jobs)
        finished = True
    finally:
        with _interrupts_deferred():
            if finished:
                pool.shutdown()
            else:
                _stop_now(pool)


def _in_pool(
    pool: ProcessPoolExecutor,
    work: Callable[[_Item], _Done],
    items: Sequence[_Item],
    window: int,
) -> Iterator[_Done]:
    """``work`` of each item in their order, as the pool does it, with at most ``window``
    items sent ahead of the first one still to hand on, so that the results waiting here
    for their turn stay few."""
    running: dict[Future[_Done], int] = {}
    order: _Order[_Done] = _Order()
    sent = 0
    while order.turn < len(items):
        with _interrupts_deferred():
            while sent < len(items) and sent < order.turn + window:
                running[pool.submit(work, items[sent])] = sent
                sent += 1
            done, _ = wait(running, timeout=_INTERRUPT_LATENCY, return_when=FIRST_COMPLETED)
            results = [(running.pop(future), future.result()) for future in done]
        for index, result in results:
            yield from order.add(index, result)


def in_order(completed: Iterable[tuple[int, _Done]]) -> Iterator[_Done]:
    """The results of ``completed`` by index 0, 1, 2..., each as soon as its turn comes."""
    order: _Order[_Done] = _Order()
    for index, done in completed:
        yield from order.add(index, done)


class _Order(Generic[_Done]):
    """Puts results that come in any order back in the order of their logs."""

    def __init__(self) -> None:
        self.turn = 0  # the index of the next result to hand on
        self._waiting: dict[int, _Done] = {}

    def add(self, index: int, done: _Done) -> Iterator[_Done]:
        """The results whose turn has come now that ``index`` has arrived, in order."""
        self._waiting[index] = done
        while self.turn in self._waiting:
            yield self._waiting.pop(self.turn)
            self.turn += 1


def _stop_now(pool: ProcessPoolExecutor) -> None:
    """Start nothing more and end the running workers: an interrupted batch must not wait
    for the logs in progress, however long they are."""
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:  # Python 3.14: it shuts the pool down, then ends the workers
        terminate()
        return
    # Before 3.14 the workers are only in _processes, which shutdown() empties: take them first.
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        worker.terminate()


@contextlib.contextmanager
def _interrupts_deferred() -> Iterator[None]:
    """Ctrl-C waits until the block ends, where the SIGINT handler in place is called.

    Raised inside ``concurrent.futures``, KeyboardInterrupt can leave one of its locks
    held (submit() interrupted in the work-id queue's put, say): the pool's manager thread
    then waits on it forever, and Python joins that thread at exit, so the command never
    ends. Outside the main thread there is nothing to defer: no handler runs there."""
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous) or threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[FrameType | None] = []
    signal.signal(signal.SIGINT, lambda _signum, frame: caught.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            previous(signal.SIGINT, caught[0])


def _process_context() -> multiprocessing.context.BaseContext:
    """Fresh workers, not forks of this process: forking a process that runs threads (a
    progress bar, a test runner, a Dask client) can deadlock a child, and Python 3.12 warns
    about it. The fork server starts clean and forks cheaply from there."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _ignore_interrupts() -> None:
    """Ctrl-C reaches the whole process group; the parent alone decides what it stops."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
