"""Verify many logs: a folder of them on every core here, or on a Dask cluster.

Every log is verified exactly as ``verify_log`` verifies it alone (docs/log-format.md §7);
this module only decides which logs a command names and where they are verified, and
hands the reports back in the order the logs were named, each as soon as it and every log
before it are done, so a batch's output streams and does not depend on scheduling.
docs/batch-verification.md is the guide.

Here, each log is one task for a pool of processes: a log takes milliseconds to seconds
to verify, against a fraction of a millisecond to hand it over, and one log per task lets
an interrupted batch say exactly what it verified. On a Dask cluster, where handing work
over costs a network round trip, logs travel in chunks that shrink as the work runs out
(a "guided" schedule): each is a share of what remains, so the first are large and the
last hold one log, and no worker waits long at the end for another to finish a big chunk.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import io
import multiprocessing
import os
import re
import signal
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from racing_demon.errors import RacingDemonError
from racing_demon.files import open_regular, shown_name
from racing_demon.log.reader import Limits
from racing_demon.log.receipts import RECEIPTS_SUFFIX
from racing_demon.outcomes import ExitCode, batch_exit_code, exit_code_of
from racing_demon.verify import (
    Report,
    Settings,
    Verdict,
    unreadable_report,
    verify_log,
    verify_stream,
)

LOG_SUFFIX = ".jsonl"
DASK_EXTRA = "pip install 'racing-demon[dask]'"
# How long to wait for a Dask scheduler before saying it cannot be reached (--scheduler-timeout).
DEFAULT_SCHEDULER_TIMEOUT = 30.0

# Logs sent to the pool ahead of the first one not yet verified, per job: enough to keep
# every worker busy past a slow log, few enough that the reports held here stay bounded.
_WINDOW_PER_JOB = 4
# A Dask chunk is at most this share of the logs left per worker, this many logs, these bytes.
_SHARE_PER_WORKER = 4
_MAX_CHUNK_LOGS = 32
_MAX_CHUNK_BYTES = 16 * 1024 * 1024


class ClusterError(RacingDemonError):
    """Verification on a Dask cluster cannot run: the extra is missing, the scheduler is
    out of reach, or a worker runs another version of racing-demon."""


# -- which logs ---------------------------------------------------------------------------


def collect_logs(paths: Iterable[Path]) -> list[Path]:
    """The logs ``paths`` name, in their order: a folder stands for every ``*.jsonl``
    file under it but the players' ``*.receipts.jsonl``, recursively, in natural order
    (``natural_key``); anything else stands for itself.

    Links to folders are not followed (no cycles); a link to a file is. A folder that holds
    no log, or one that cannot be listed, is kept as itself, so verifying it reports it
    UNREADABLE ("no logs found under DIR", or why it cannot be listed): a batch never
    passes by verifying nothing.
    """
    logs: list[Path] = []
    for path in paths:
        if path.is_dir():
            logs += _logs_under(path) or [path]
        else:
            logs.append(path)
    return logs


def _logs_under(folder: Path) -> list[Path]:
    found: list[Path] = []

    def unlisted(error: OSError) -> None:
        found.append(Path(error.filename))

    for top, _, names in os.walk(folder, onerror=unlisted):
        for name in names:
            # A receipts file sits beside its log (simulate writes them so): not a log.
            if name.endswith(LOG_SUFFIX) and not name.endswith(RECEIPTS_SUFFIX):
                path = Path(top, name)
                # Not a pipe or a device: opening one would wait for a writer. A dangling
                # link stays, to be reported.
                if path.is_file() or not path.exists():
                    found.append(path)
    return sorted(found, key=natural_key)


_DIGITS = re.compile(r"([0-9]+)")


def natural_key(path: Path) -> tuple[tuple[tuple[str | int, ...], str], ...]:
    """Sorts paths component by component, each by its runs of digits as numbers and the
    rest as text, as people number files and as ``ls -v`` sorts them: ``g2`` before
    ``g10``, ``round-9/`` before ``round-10/``. Names that differ only in leading zeros
    (``g2``, ``g02``) follow their text, so the order is total."""
    return tuple(
        (
            tuple(int(run) if index % 2 else run for index, run in enumerate(_DIGITS.split(part))),
            part,
        )
        for part in path.parts
    )


# -- on this machine ----------------------------------------------------------------------


def default_jobs() -> int:
    """Every core: ``--jobs``'s default."""
    return os.cpu_count() or 1


def verify_named(path: Path, settings: Settings) -> Report:
    """``verify_log``'s report of one path ``collect_logs`` returned. A folder among them
    is one with no log under it, reported so ("no logs found under DIR"): its contents
    are never a log, and "not a regular file" would not say what is wrong."""
    if path.is_dir():
        source = shown_name(path)
        return unreadable_report(source, settings, f"no logs found under {source}")
    return verify_log(path, settings)


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
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    if jobs == 1 or len(logs) <= 1:
        for path in logs:
            yield verify_named(path, settings)
        return
    pool = ProcessPoolExecutor(
        max_workers=min(jobs, len(logs)),
        mp_context=_process_context(),
        initializer=_ignore_interrupts,
    )
    finished = False
    try:
        yield from _in_pool(pool, logs, settings, _WINDOW_PER_JOB * jobs)
        finished = True
    finally:
        if finished:
            pool.shutdown()
        else:
            _stop_now(pool)


def _in_pool(
    pool: ProcessPoolExecutor, logs: Sequence[Path], settings: Settings, window: int
) -> Iterator[Report]:
    """The reports of ``logs`` in their order, as the pool verifies them, with at most
    ``window`` logs sent ahead of the first one still to hand on, so that the reports
    waiting here for their turn stay few."""
    running: dict[Future[Report], int] = {}
    order = _Order()
    sent = 0
    while order.turn < len(logs):
        while sent < len(logs) and sent < order.turn + window:
            running[pool.submit(verify_named, logs[sent], settings)] = sent
            sent += 1
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in done:
            yield from order.add(running.pop(future), future.result())


def _in_order(completed: Iterable[tuple[int, Report]]) -> Iterator[Report]:
    """The reports of ``completed`` by index 0, 1, 2..., each as soon as its turn comes."""
    order = _Order()
    for index, report in completed:
        yield from order.add(index, report)


class _Order:
    """Puts reports that come in any order back in the order of their logs."""

    def __init__(self) -> None:
        self.turn = 0  # the index of the next report to hand on
        self._waiting: dict[int, Report] = {}

    def add(self, index: int, report: Report) -> Iterator[Report]:
        """The reports whose turn has come now that ``index`` has arrived, in order."""
        self._waiting[index] = report
        while self.turn in self._waiting:
            yield self._waiting.pop(self.turn)
            self.turn += 1


def _stop_now(pool: ProcessPoolExecutor) -> None:
    """Start nothing more and end the running workers: an interrupted batch must not wait
    for the logs in progress, however long they are."""
    pool.shutdown(wait=False, cancel_futures=True)
    # Python 3.14 has terminate_workers(); before it the workers are only in _processes.
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()


def _process_context() -> multiprocessing.context.BaseContext:
    """Fresh workers, not forks of this process: forking a process that runs threads (a
    progress bar, a test runner, a Dask client) can deadlock a child, and Python 3.12 warns
    about it. The fork server starts clean and forks cheaply from there."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _ignore_interrupts() -> None:
    """Ctrl-C reaches the whole process group; the parent alone decides what it stops."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# -- on a Dask cluster --------------------------------------------------------------------


def dask_distributed() -> ModuleType:
    """``dask.distributed``'s package, or ClusterError naming the extra to install."""
    try:
        import distributed
    except ImportError as error:
        raise ClusterError(f"Dask is not installed: {DASK_EXTRA}") from error
    return distributed


def verify_on_dask(
    logs: Sequence[Path],
    settings: Settings,
    scheduler: str,
    timeout: float = DEFAULT_SCHEDULER_TIMEOUT,
) -> list[Report]:
    """``iter_verified_on_dask``'s reports, as a list."""
    with contextlib.closing(iter_verified_on_dask(logs, settings, scheduler, timeout)) as reports:
        return list(reports)


def iter_verified_on_dask(
    logs: Sequence[Path],
    settings: Settings,
    scheduler: str,
    timeout: float = DEFAULT_SCHEDULER_TIMEOUT,
) -> Generator[Report, None, None]:
    """``iter_verified``'s reports, verified by the workers of the Dask cluster whose
    scheduler is at ``scheduler`` (``tcp://host:8786``).

    This process reads each log and sends its bytes, so the workers need racing-demon (the
    same version: a task checks) but not the files. It reads at most ``max_file_bytes + 1``
    bytes of a log: enough for the reader to refuse a larger file exactly as it refuses the
    file itself. A log that cannot be read is reported here by ``verify_log`` itself. At
    most two chunks per worker thread are read ahead, so memory here stays bounded.
    A scheduler not reached within ``timeout`` seconds is a ClusterError that says so.
    """
    distributed = dask_distributed()
    try:
        client = distributed.Client(scheduler, timeout=timeout, set_as_default=False)
    except OSError as error:
        # Dask retries a refused connection until the timeout, then says so at length.
        raise ClusterError(
            f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s "
            "(--scheduler-timeout)"
        ) from error
    except ValueError as error:
        raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: {error}") from error
    with client:
        threads = max(1, sum(client.nthreads().values()))
        yield from _in_order(_completed_on_dask(client, distributed, logs, settings, threads))


def _completed_on_dask(
    client: Any, distributed: ModuleType, logs: Sequence[Path], settings: Settings, threads: int
) -> Iterator[tuple[int, Report]]:
    chunks = _read_chunks(logs, settings, threads)
    running = distributed.as_completed(loop=client.loop)
    indices: dict[Any, list[int]] = {}
    version = _version()

    def send_more() -> Iterator[tuple[int, Report]]:
        while len(indices) < 2 * threads and (item := next(chunks, None)) is not None:
            if isinstance(item, _Chunk):
                [blobs] = client.scatter([item.blobs], hash=False)
                future = client.submit(_verify_blobs, blobs, settings, version, pure=False)
                indices[future] = item.indices
                running.add(future)
            else:
                yield item

    yield from send_more()
    for future in running:
        yield from zip(indices.pop(future), future.result(), strict=True)
        yield from send_more()


@dataclass
class _Chunk:
    indices: list[int] = field(default_factory=list)
    blobs: list[tuple[str, bytes]] = field(default_factory=list)  # (source, bytes)
    nbytes: int = 0


def _chunk_size(left: int, workers: int) -> int:
    """The next chunk's number of logs, when ``left`` logs are left to hand out."""
    return max(1, min(_MAX_CHUNK_LOGS, left // (workers * _SHARE_PER_WORKER)))


def _read_chunks(
    logs: Sequence[Path], settings: Settings, workers: int
) -> Iterator[_Chunk | tuple[int, Report]]:
    """Chunks of logs read into memory, and the reports of those that cannot be read."""
    chunk = _Chunk()
    size = _chunk_size(len(logs), workers)
    for index, path in enumerate(logs):
        data = _read(path, settings.limits)
        if data is None:
            yield index, verify_named(path, settings)
            continue
        chunk.indices.append(index)
        chunk.blobs.append((shown_name(path), data))
        chunk.nbytes += len(data)
        if len(chunk.indices) >= size or chunk.nbytes >= _MAX_CHUNK_BYTES:
            yield chunk
            chunk = _Chunk()
            size = _chunk_size(len(logs) - index - 1, workers)
    if chunk.indices:
        yield chunk


def _read(path: Path, limits: Limits) -> bytes | None:
    """The first ``max_file_bytes + 1`` bytes of a regular file, or None."""
    try:
        with open_regular(path) as stream:
            return stream.read(limits.max_file_bytes + 1)
    except OSError:
        return None


def _verify_blobs(blobs: list[tuple[str, bytes]], settings: Settings, version: str) -> list[Report]:
    """On a worker: verify logs read by the client, refusing to if versions differ."""
    if _version() != version:
        raise ClusterError(
            f"a Dask worker runs racing-demon {_version()} and the client {version}: "
            "install the same version on every worker, or verdicts could differ"
        )
    return [verify_stream(io.BytesIO(data), settings, source) for source, data in blobs]


@functools.cache
def _version() -> str:
    return importlib.metadata.version("racing-demon")


# -- the summary --------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    """How many logs got each verdict and, for those with a finding, why.

    ``reasons`` maps a verdict to counts of its finding codes; for UNREADABLE, whose code
    is always UNREADABLE, to the system's words instead (``No such file or directory``,
    ``no logs found``). ``exit_code`` combines the logs' as ``batch_exit_code`` does.
    """

    counts: Mapping[Verdict, int]
    reasons: Mapping[Verdict, Mapping[str, int]]
    exit_code: ExitCode

    @classmethod
    def of(cls, reports: Iterable[Report]) -> Summary:
        summary = cls({verdict: 0 for verdict in Verdict}, {}, ExitCode.OK)
        for report in reports:
            summary = summary.plus(report)
        return summary

    def plus(self, report: Report) -> Summary:
        """This summary and one more report: a batch is summed up as it streams, without
        keeping its reports."""
        counts = {**self.counts, report.verdict: self.counts[report.verdict] + 1}
        reasons = {verdict: dict(why) for verdict, why in self.reasons.items()}
        if report.finding is not None:
            why = reasons.setdefault(report.verdict, {})
            reason = _reason(report)
            why[reason] = why.get(reason, 0) + 1
        return Summary(counts, reasons, batch_exit_code((self.exit_code, exit_code_of(report))))

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _reason(report: Report) -> str:
    """An unreadable log's message without its name, which every log's differs by."""
    assert report.finding is not None
    if report.verdict is Verdict.UNREADABLE:
        message = report.finding.message.removeprefix(f"cannot read {report.source}: ")
        return message.removesuffix(f" under {report.source}")
    return str(report.finding.code)
