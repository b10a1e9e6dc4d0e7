"""Verify many logs: a folder of them on every core here, or on a Dask cluster.

Every log is verified exactly as ``verify_log`` verifies it alone (docs/log-format.md §7);
this module only decides which logs a command names and where they are verified, and
hands the reports back in the order the logs were named, each as soon as it and every log
before it are done, so a batch's output streams and does not depend on scheduling.
docs/batch-verification.md is the guide.

Here, each log is one task for a pool of processes: a log takes milliseconds to seconds
to verify, against a fraction of a millisecond to hand it over, and one log per task lets
an interrupted batch say exactly what it verified. On a Dask cluster, where handing work
over costs a network round trip, the logs' names travel in chunks that shrink as the work
runs out (a "guided" schedule): each is a share of what remains, so the first are large
and the last hold one log, and no worker waits long at the end for another to finish a
big chunk. Each worker reads the logs it verifies, so the client sends names, not bytes.

A batch can be resumed: ``iter_resumed`` hashes each log where it is verified and skips
those whose bytes a previous run verified under the same ``cache_key``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib.metadata
import json
import multiprocessing
import os
import re
import signal
import tempfile
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath
from types import ModuleType
from typing import Any, BinaryIO, Generic, TypeVar, cast

from racing_demon.errors import RacingDemonError
from racing_demon.files import open_regular, shown_name
from racing_demon.log.reader import Limits
from racing_demon.log.receipts import RECEIPTS_SUFFIX
from racing_demon.outcomes import ExitCode, batch_exit_code, exit_code_of
from racing_demon.verify import (
    Report,
    Settings,
    Verdict,
    VerifyCode,
    unreadable_report,
    verify_log,
    verify_stream,
)

LOG_SUFFIX = ".jsonl"
DASK_EXTRA = "pip install 'racing-demon[dask]'"
# How long to wait for a Dask scheduler before saying it cannot be reached (--scheduler-timeout).
DEFAULT_SCHEDULER_TIMEOUT = 30.0

# A log as a Dask worker reads it: a path, or a URL that fsspec opens (s3://, file://...).
LogName = Path | str
_Item = TypeVar("_Item")
_Done = TypeVar("_Done")
_Fetched = tuple[Report | None, str | None]  # verify_fetched's: the report, the SHA-256

# Logs sent to the pool ahead of the first one not yet verified, per job: enough to keep
# every worker busy past a slow log, few enough that the reports held here stay bounded.
_WINDOW_PER_JOB = 4
# A Dask chunk is at most this share of the logs left per worker, and this many logs.
_SHARE_PER_WORKER = 4
_MAX_CHUNK_LOGS = 32
# A log is verified from a snapshot held in memory up to this size, then on disk.
_SNAPSHOT_IN_MEMORY = 8 * 1024 * 1024
_READ_BYTES = 1024 * 1024
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


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


def is_url(name: str) -> bool:
    """Whether a LOG names a URL (``scheme://...``) rather than a path."""
    return _URL.match(name) is not None


def collect_names(names: Iterable[str]) -> list[LogName]:
    """``collect_logs`` of names that may be URLs, for a Dask cluster's workers to read:
    a URL of a folder stands for the logs under it as a path's folder does, listed with
    fsspec here (a ``file://`` folder as a local one), each named by its URL."""
    logs: list[LogName] = []
    for name in names:
        logs += _logs_at_url(name) if is_url(name) else collect_logs([Path(name)])
    return logs


def _file_system(url: str) -> tuple[Any, str, bool]:
    """fsspec's file system for ``url``, the path in it, and whether it is this machine's
    own; ValueError for an unknown protocol, ImportError when its package is missing."""
    import fsspec  # type: ignore[import-untyped]  # only here: the dask extra has it
    from fsspec.implementations.local import LocalFileSystem  # type: ignore[import-untyped]

    files, path = fsspec.core.url_to_fs(url)
    return files, path, isinstance(files, LocalFileSystem)


def _logs_at_url(url: str) -> list[LogName]:
    files, path, local = _file_system(url)
    if local:
        if not Path(path).is_dir():
            return [url]
        return [files.unstrip_protocol(str(log)) for log in _logs_under(Path(path))] or [url]
    if not files.isdir(path):
        return [url]
    found = [
        log
        for log in files.find(path)
        if log.endswith(LOG_SUFFIX) and not log.endswith(RECEIPTS_SUFFIX)
    ]
    found.sort(key=lambda log: natural_key(PurePosixPath(log)))
    return [files.unstrip_protocol(log) for log in found] or [url]


_DIGITS = re.compile(r"([0-9]+)")


def natural_key(path: PurePath) -> tuple[tuple[tuple[str | int, ...], str], ...]:
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
        return _no_logs(shown_name(path), settings)
    return verify_log(path, settings)


def _no_logs(source: str, settings: Settings) -> Report:
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
    return _here(functools.partial(verify_named, settings=settings), logs, jobs)


def _here(
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
        while sent < len(items) and sent < order.turn + window:
            running[pool.submit(work, items[sent])] = sent
            sent += 1
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in done:
            yield from order.add(running.pop(future), future.result())


def _in_order(completed: Iterable[tuple[int, _Done]]) -> Iterator[_Done]:
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


# -- reading a log where it is verified ---------------------------------------------------


def verify_fetched(
    name: LogName, settings: Settings, known: str | None = None
) -> tuple[Report | None, str | None]:
    """Read the log ``name`` here (a path, or a URL that fsspec opens), verify it, and
    return its report and the SHA-256 (hex) of the bytes verified; or, when those bytes
    hash to ``known``, no report (a previous run's is theirs) and that SHA-256.

    At most ``max_file_bytes + 1`` bytes are read: enough for the reader to refuse a
    larger file exactly as it refuses the file itself. They are verified from a snapshot
    (in memory up to 8 MiB, then a temporary file), so the SHA-256 is that of the very
    bytes verified, and the reader works on a local seekable file whatever the source.
    A log that cannot be read is UNREADABLE, with the system's or fsspec's reason; a
    folder is "no logs found under DIR", as ``verify_named`` says.
    """
    source = shown_name(name)
    with tempfile.SpooledTemporaryFile(max_size=_SNAPSHOT_IN_MEMORY) as snapshot:
        try:
            opened = _open_where_verified(name)
            if opened is None:
                return _no_logs(source, settings), None
            with opened as stream:
                sha256 = _copy(stream, cast(BinaryIO, snapshot), settings.limits)
        except _ReadFailed as error:
            return unreadable_report(source, settings, f"cannot read {source}: {error}"), None
        if sha256 == known:
            return None, sha256
        snapshot.seek(0)
        return verify_stream(cast(BinaryIO, snapshot), settings, source), sha256


class _ReadFailed(Exception):
    """Why a log could not be opened or read, in words."""


def _open_where_verified(name: LogName) -> BinaryIO | None:
    """``name`` opened for reading, or None for a folder."""
    if isinstance(name, Path):
        return _open_local(name)
    try:
        files, path, local = _file_system(name)
    except (ValueError, ImportError) as error:
        raise _ReadFailed(str(error)) from error
    if local:
        # Opened as any local path is, so that a named pipe never blocks the worker.
        return _open_local(Path(path))
    try:
        stream: BinaryIO = files.open(path, "rb")
    except Exception as error:  # fsspec's backends raise their own kinds, not only OSError
        if _is_folder(files, path):
            return None
        raise _ReadFailed(_words(error)) from error
    return stream


def _open_local(path: Path) -> BinaryIO | None:
    if path.is_dir():
        return None
    try:
        return open_regular(path)
    except OSError as error:
        raise _ReadFailed(_words(error)) from error


def _is_folder(files: Any, path: str) -> bool:
    try:
        return bool(files.isdir(path))
    except Exception:  # a file system that cannot say: it is no folder we can list
        return False


def _words(error: BaseException) -> str:
    """An error as the driver words an unreadable log: the system's reason alone."""
    strerror = getattr(error, "strerror", None)
    return strerror if isinstance(strerror, str) else str(error) or type(error).__name__


def _copy(stream: BinaryIO, snapshot: BinaryIO, limits: Limits) -> str:
    """Copy the first ``max_file_bytes + 1`` bytes of ``stream``; their SHA-256."""
    digest = hashlib.sha256()
    left = limits.max_file_bytes + 1
    try:
        while left > 0 and (chunk := stream.read(min(left, _READ_BYTES))):
            digest.update(chunk)
            snapshot.write(chunk)
            left -= len(chunk)
    except Exception as error:  # as when opening: a remote file system's own kinds too
        raise _ReadFailed(_words(error)) from error
    return digest.hexdigest()


# -- on a Dask cluster --------------------------------------------------------------------


def dask_distributed() -> ModuleType:
    """``dask.distributed``'s package, or ClusterError naming the extra to install."""
    try:
        import distributed
    except ImportError as error:
        raise ClusterError(f"Dask is not installed: {DASK_EXTRA}") from error
    return distributed


def verify_on_dask(
    logs: Sequence[LogName],
    settings: Settings,
    scheduler: str,
    timeout: float = DEFAULT_SCHEDULER_TIMEOUT,
) -> list[Report]:
    """``iter_verified_on_dask``'s reports, as a list."""
    with contextlib.closing(iter_verified_on_dask(logs, settings, scheduler, timeout)) as reports:
        return list(reports)


def iter_verified_on_dask(
    logs: Sequence[LogName],
    settings: Settings,
    scheduler: str,
    timeout: float = DEFAULT_SCHEDULER_TIMEOUT,
) -> Generator[Report, None, None]:
    """``iter_verified``'s reports, verified by the workers of the Dask cluster whose
    scheduler is at ``scheduler`` (``tcp://host:8786``).

    This process sends the logs' names; each worker reads the logs it verifies itself
    (``verify_fetched``), so every worker must reach them under those names: a path on a
    file system they share, or a URL (``s3://``, ``https://``...) that fsspec opens
    there. A log a worker cannot read is UNREADABLE, as here. The workers need
    racing-demon of the same version (a task checks). At most two chunks per worker
    thread are in flight. A scheduler not reached within ``timeout`` seconds is a
    ClusterError that says so.
    """
    work = functools.partial(_verify_on_worker, settings=settings)
    for report, _ in _on_dask(work, [(name, None) for name in logs], scheduler, timeout):
        assert report is not None  # nothing was known, so everything was verified
        yield report


def _verify_on_worker(item: tuple[LogName, str | None], settings: Settings) -> _Fetched:
    name, known = item
    return verify_fetched(name, settings, known)


def _on_dask(
    work: Callable[[_Item], _Done], items: Sequence[_Item], scheduler: str, timeout: float
) -> Generator[_Done, None, None]:
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
        yield from _in_order(_completed_on_dask(client, distributed, work, items, threads))


def _completed_on_dask(
    client: Any,
    distributed: ModuleType,
    work: Callable[[_Item], _Done],
    items: Sequence[_Item],
    threads: int,
) -> Iterator[tuple[int, _Done]]:
    chunks = _chunks(len(items), threads)
    running = distributed.as_completed(loop=client.loop)
    indices: dict[Any, range] = {}
    version = _version()

    def send_more() -> None:
        while len(indices) < 2 * threads and (chunk := next(chunks, None)) is not None:
            batch = [items[index] for index in chunk]
            future = client.submit(_run_chunk, work, batch, version, pure=False)
            indices[future] = chunk
            running.add(future)

    send_more()
    for future in running:
        yield from zip(indices.pop(future), future.result(), strict=True)
        send_more()


def _chunk_size(left: int, workers: int) -> int:
    """The next chunk's number of logs, when ``left`` logs are left to hand out."""
    return max(1, min(_MAX_CHUNK_LOGS, left // (workers * _SHARE_PER_WORKER)))


def _chunks(total: int, workers: int) -> Iterator[range]:
    """The indices of each chunk, in order: ever smaller as fewer logs are left."""
    start = 0
    while start < total:
        size = _chunk_size(total - start, workers)
        yield range(start, min(total, start + size))
        start += size


def _run_chunk(work: Callable[[_Item], _Done], items: list[_Item], version: str) -> list[_Done]:
    """On a worker: ``work`` of each item, refusing to if versions differ."""
    if _version() != version:
        raise ClusterError(
            f"a Dask worker runs racing-demon {_version()} and the client {version}: "
            "install the same version on every worker, or verdicts could differ"
        )
    return [work(item) for item in items]


@functools.cache
def _version() -> str:
    return importlib.metadata.version("racing-demon")


# -- resuming: the verdict cache ----------------------------------------------------------

# Bump when a verdict, a finding or a report field could differ for the same bytes and
# settings: a cached verdict is reused only under the same package version and this.
VERIFIER_FORMAT = 1
_KEY_DOMAIN = b"racing-demon verdict cache\n"


def cache_key(settings: Settings) -> str:
    """What a cached verdict must have been computed under to be reused, as 64 hex: the
    verifier (package version and ``VERIFIER_FORMAT``) and every field of ``settings``
    (the pinned key and rules, ``fast``, ``unsafe_unpinned``, the game id, the secret,
    the limits), hashed, so that a report file that holds it never reveals the secret."""
    values: dict[str, object] = {"verifier": [_version(), VERIFIER_FORMAT]}
    for setting in dataclasses.fields(settings):
        value = getattr(settings, setting.name)
        if isinstance(value, bytes):
            value = value.hex()
        elif isinstance(value, Limits):
            value = dataclasses.asdict(value)
        values[setting.name] = value
    text = json.dumps(values, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(_KEY_DOMAIN + text.encode()).hexdigest()


def reusable(report: Report) -> bool:
    """Whether ``report``'s verdict is a function of the log's bytes and the settings
    alone, so that the same bytes verified under the same key get it again: not a log
    that could not be read (the file may be back), nor one that changed while read."""
    if report.verdict is Verdict.UNREADABLE:
        return False
    return report.finding is None or report.finding.code != VerifyCode.FILE_CHANGED


@dataclass(frozen=True, slots=True)
class Resumed:
    """One log of a resumed batch: its report, or None when its bytes were ``known``'s
    (the caller has that report), and the SHA-256 of the bytes verified (None when it
    could not be read)."""

    source: str
    report: Report | None
    sha256: str | None


def iter_resumed(
    logs: Sequence[LogName],
    settings: Settings,
    known: Mapping[str, str],
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    timeout: float = DEFAULT_SCHEDULER_TIMEOUT,
) -> Generator[Resumed, None, None]:
    """``iter_verified``'s batch (or ``iter_verified_on_dask``'s, given ``scheduler``),
    resuming one that was interrupted: ``known`` maps a log's source (``shown_name``) to
    the SHA-256 of the bytes a previous run verified under this ``cache_key``, with a
    ``reusable`` verdict. Every log is read and hashed again where it is verified, and
    verified again unless its bytes hash to what ``known`` says."""
    items = [(name, known.get(shown_name(name))) for name in logs]
    work = functools.partial(_verify_on_worker, settings=settings)
    results = (
        _here(work, items, jobs) if scheduler is None else _on_dask(work, items, scheduler, timeout)
    )
    with contextlib.closing(results):
        for (name, _), (report, sha256) in zip(items, results, strict=True):
            yield Resumed(shown_name(name), report, sha256)


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
