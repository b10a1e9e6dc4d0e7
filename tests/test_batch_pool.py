"""The pool of processes that verifies a batch on this machine, when it is stopped early.

A batch stopped by Ctrl-C, or by its caller closing ``iter_verified``, must end at once:
the running workers ended, nothing of the pool left for Python to wait for at exit. The
work here is plain functions of the standard library, so that what is tested is the pool
and not the verifier.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from racing_demon.batch import local
from racing_demon.batch.local import run_here


def _pool_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread is not threading.main_thread()]


def _threads_end(before: list[threading.Thread], seconds: float = 30) -> list[threading.Thread]:
    """The threads started since ``before`` that are still running after ``seconds``."""
    for thread in _pool_threads():
        if thread not in before:
            thread.join(seconds)
    return [thread for thread in _pool_threads() if thread not in before]


def _assert_ended(workers: list[Any], threads: list[threading.Thread]) -> None:
    """Every thread the pool started gone, so that nothing is left for Python to wait for
    at exit, and both workers ended by SIGTERM (not left to finish their logs). The threads
    first: the pool's manager thread joins the workers itself, and a Process polled from
    two threads at once can read its exit status as lost (255)."""
    assert not _threads_end(threads)
    for worker in workers:
        worker.join(30)
    assert [worker.exitcode for worker in workers] == [-signal.SIGTERM] * 2


def _sigint_on_call(function_name: str, file_name: str, call: int) -> Any:
    """A trace function that sends this process SIGINT when the main thread enters the
    ``call``-th call of ``function_name`` defined in a file named ``file_name``: Ctrl-C
    pressed at the worst moment, every time."""
    named = (function_name, file_name)
    calls = 0

    def trace(frame: FrameType, event: str, _arg: object) -> None:
        nonlocal calls
        code = frame.f_code
        if event == "call" and (code.co_name, Path(code.co_filename).name) == named:
            calls += 1
            if calls == call:
                signal.raise_signal(signal.SIGINT)

    return trace


@pytest.fixture
def python_sigint_handler() -> Iterator[None]:
    """Python's own SIGINT handler, whatever the test runner installed."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("python_sigint_handler")
def test_ctrl_c_while_a_log_is_handed_to_the_pool_is_raised_outside_the_pool() -> None:
    # Raised inside submit(), KeyboardInterrupt could leave the pool's work-id queue locked:
    # its manager thread then waited on the lock forever, and so did the command at exit
    # (5 of 350 interrupted batches of 200 logs on two jobs, before the mend).
    threads = _pool_threads()
    outputs = run_here(abs, list(range(-40, 0)), 2)
    sys.settrace(_sigint_on_call("put", "queue.py", 3))
    try:
        with pytest.raises(KeyboardInterrupt) as interrupted:
            list(outputs)
    finally:
        sys.settrace(None)
    innermost = interrupted.traceback[-1]
    assert Path(innermost.path) == Path(local.__file__), interrupted.traceback
    assert not _threads_end(threads)


@pytest.mark.usefixtures("python_sigint_handler")
def test_ctrl_c_while_waiting_for_a_result_ends_the_batch() -> None:
    threads = _pool_threads()
    outputs = run_here(time.sleep, [0, 120, 120], 2)
    assert next(outputs) is None
    workers = multiprocessing.active_children()
    timer = threading.Timer(0.3, signal.raise_signal, (signal.SIGINT,))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        next(outputs)
    timer.join()
    _assert_ended(workers, threads)


def test_closing_the_batch_ends_the_workers_still_running() -> None:
    # Before the mend the workers were taken from the pool after shutdown() had forgotten
    # them, so none was ended and Python waited at exit for the logs in progress.
    threads = _pool_threads()
    outputs = run_here(time.sleep, [0, 120, 120], 2)
    assert next(outputs) is None
    workers = multiprocessing.active_children()
    assert len(workers) == 2
    outputs.close()
    _assert_ended(workers, threads)


def test_a_batch_that_runs_to_its_end_keeps_the_caller_s_sigint_handler() -> None:
    def handler(_signum: int, _frame: FrameType | None) -> None:
        raise AssertionError("no SIGINT was sent")

    previous = signal.signal(signal.SIGINT, handler)
    try:
        assert list(run_here(abs, list(range(-9, 0)), 2)) == list(range(9, 0, -1))
        assert signal.getsignal(signal.SIGINT) is handler
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("python_sigint_handler")
def test_an_interrupt_deferred_while_talking_to_the_pool_is_raised_when_it_ends() -> None:
    reached = False
    with pytest.raises(KeyboardInterrupt), local._interrupts_deferred():
        signal.raise_signal(signal.SIGINT)
        reached = True
    assert reached
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_ignored_sigint_stays_ignored() -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with local._interrupts_deferred():
            signal.raise_signal(signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
