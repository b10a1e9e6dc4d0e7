"""The batch use case: ``run_batch`` verifies what LOG... names, as ``racing-demon verify``
does, for any caller (the command line, a server), without click.

One call does the whole run: it checks the run's settings against each other, lists the
logs, opens the ``--report`` file (or reads it back as the cache of a ``--resume``),
verifies here or on a Dask cluster, writes each log's line and hands each report to a
``BatchReporter`` in the order of the logs, stops cleanly on Ctrl-C, and returns the
exit code. The reporter (text or JSON, chosen by name in ``racing_demon.report.batch``)
decides every word printed; this module decides what happens.

What the caller gets wrong is a ``BatchUsageError`` (the command line's exit 2, naming
the option when there is one); a cluster that cannot verify is a ``ClusterError``, a
``--report`` file that cannot be written a ``files.WriteFailed``. The ``--report`` file is
written by ``files.OutputWriter``: a new one keeps its whole lines however the run ends, a
replaced one is replaced only by a whole batch.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from concurrent.futures import BrokenExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, BinaryIO, Protocol

from racing_demon.batch.cache import (
    ReportCache,
    ResumeError,
    cache_entry,
    cache_key,
    iter_resumed,
    read_cache,
)
from racing_demon.batch.dask import DEFAULT_SCHEDULER_TIMEOUT, ClusterError, iter_verified_on_dask
from racing_demon.batch.local import iter_verified
from racing_demon.batch.names import LogName, collect_logs, collect_names, is_url
from racing_demon.batch.summary import Summary
from racing_demon.files import (
    STDIN,
    STDOUT,
    LogFile,
    Output,
    OutputError,
    OutputWriter,
    WriteFailed,
    open_to_append,
    read_standard_input,
    refuse_inputs,
)
from racing_demon.outcomes import ExitCode
from racing_demon.printing import printable
from racing_demon.usage import UsageProblem
from racing_demon.verify import Report, Settings, verify_log

_REPORT_OPTION = "--report"


class BatchUsageError(UsageProblem):
    """A run whose settings cannot work together, or whose ``--report`` file cannot be
    used: nothing was verified."""


@dataclass(frozen=True, kw_only=True)
class BatchRun:
    """What to verify and how: ``racing-demon verify``'s options but the reporter's."""

    logs: Sequence[str]  # LOG...: paths, folders, URLs (for a cluster), or "-" alone
    settings: Settings
    jobs: int | None = None  # processes here; None: every core
    scheduler: str | None = None  # a Dask scheduler's address: verify there, not here
    # How long to try to reach the scheduler; None: DEFAULT_SCHEDULER_TIMEOUT. Given
    # without a scheduler, it is refused: it would time nothing.
    scheduler_timeout: float | None = None
    report: str | None = None  # the --report FILE ("-": standard output)
    replace: bool = False  # --force: replace an existing --report FILE
    resume: bool = False  # --resume: the --report FILE is the cache of its verdicts
    inputs: Sequence[Path] = ()  # the other files read (keys...): never the --report FILE
    # How LOG - is read (the command line claims standard input first); None: sys.stdin.
    read_stdin: Callable[[], LogFile] | None = None


@dataclass(frozen=True)
class BatchEnd:
    """How a run ended, for its reporter's last words."""

    summary: Summary  # the verdicts of the logs verified (or reused)
    first: Report | None  # the first log's report, which shows the settings
    planned: int  # how many logs the run was to verify
    interrupted: bool
    resumed_from: str | None  # the --report FILE resumed, if one was
    reused: int  # verdicts taken from it, not verified again
    not_replaced: str | None  # the --report FILE an interrupted run left as it was


class BatchReporter(Protocol):
    """What a run prints: ``racing_demon.report.batch`` has the text and JSON ones."""

    @property
    def whole_document(self) -> bool:
        """Whether it prints one document at the end (which ``--report -`` would spoil)."""

    def begin(self, *, one_log: bool, to_stderr: bool) -> None:
        """Before the first log: whether the run names one log (its whole report is
        printed, not a batch's line), and whether standard output holds the report lines."""

    def line(self, report: Report, cache: Mapping[str, Any] | None) -> str:
        """The ``--report`` file's line of ``report`` (with its ``cache_entry`` when
        resuming): one line of JSON."""

    def verified(self, report: Report) -> None:
        """Each log's report, in the order of the logs, as soon as its turn comes."""

    def end(self, end: BatchEnd) -> None:
        """After the last log, or when the run was interrupted."""


# A context that shows progress and gives what to call after each log, or None: it is
# given how many logs and whether their lines come out one by one on standard output.
Progress = Callable[[int, bool], AbstractContextManager[Callable[[], None] | None]]


def run_batch(
    run: BatchRun, reporter: BatchReporter, *, progress: Progress | None = None
) -> ExitCode:
    """Verify the logs ``run`` names, report them to ``reporter``, and return the exit
    code (docs/batch-verification.md): ``batch_exit_code`` of the logs', or INTERRUPTED
    after Ctrl-C, which stops at once and reports what was verified by then.

    ``progress`` shows a progress bar (the command line's, on a terminal). Raises
    BatchUsageError before anything is verified when the settings contradict each other
    or the report file cannot be used; ClusterError when the workers cannot verify;
    WriteFailed when the report file cannot be written (what was verified before is
    reported, and in it).
    """
    _check(run, reporter)
    from_stdin = STDIN in run.logs
    # The logs are listed before the report exists, so a report inside a folder being
    # verified is never read as one of its logs.
    names = [] if from_stdin else _collect(run.logs, run.scheduler)
    inputs = [*(name for name in names if isinstance(name, Path)), *run.inputs]
    report_file = cache = None
    if run.report is not None and run.resume and Path(run.report).exists():
        cache = _resumed_report(run.report, inputs, cache_key(run.settings))
    elif run.report is not None:
        report_file = _checked_report(run.report, run.replace, inputs)
    to_stderr = report_file is not None and report_file.is_stdout
    one_log = from_stdin or names == [Path(run.logs[0])] or names == [run.logs[0]]
    planned = 1 if from_stdin else len(names)
    verifying = (
        _lines(_verified_here(_read_stdin(run), run.settings), reporter)
        if from_stdin
        else _verified(names, run, cache, reporter)
    )
    reporter.begin(one_log=one_log, to_stderr=to_stderr)
    summary = Summary.of([])
    first: Report | None = None
    interrupted = False
    reused = 0
    with contextlib.ExitStack() as stack:
        writer: OutputWriter | _Appender | None = None
        if report_file is not None:
            writer = stack.enter_context(OutputWriter(report_file, _REPORT_OPTION))
        elif cache is not None:
            writer = stack.enter_context(_Appender(cache.path, run.report or ""))
        shown_as_they_come = not to_stderr
        on_done = stack.enter_context(
            contextlib.nullcontext() if progress is None else progress(planned, shown_as_they_come)
        )
        interrupts = stack.enter_context(_Interrupts())
        verified = stack.enter_context(contextlib.closing(verifying))
        try:
            for report, line in verified:
                with interrupts.held():  # a report is in both outputs or in neither
                    first = first or report
                    summary = summary.plus(report)
                    if line is None:
                        reused += 1  # its line is in the report file already
                    elif writer is not None:
                        writer.write(line.encode() + b"\n")
                    reporter.verified(report)
                if on_done is not None:
                    on_done()
        except KeyboardInterrupt:
            interrupted = True
            if writer is not None:
                writer.incomplete = True
    replaced = report_file is not None and report_file.replaces
    not_replaced = report_file.shown if interrupted and report_file and replaced else None
    resumed_from = None if cache is None else run.report
    reporter.end(BatchEnd(summary, first, planned, interrupted, resumed_from, reused, not_replaced))
    return ExitCode.INTERRUPTED if interrupted else summary.exit_code


def _check(run: BatchRun, reporter: BatchReporter) -> None:
    if run.scheduler is None and run.scheduler_timeout is not None:
        raise BatchUsageError(
            "--scheduler-timeout is how long to wait for --scheduler: give both, or neither"
        )
    if run.jobs is not None and run.scheduler is not None:
        raise BatchUsageError(
            "--jobs counts processes on this machine: with --scheduler, the cluster's workers do"
        )
    if reporter.whole_document and run.report == STDOUT:
        # Its lines and the document on one stream would be neither JSON Lines nor JSON.
        raise BatchUsageError(
            "--report - writes the report lines to standard output, where --json would print "
            "its document too: give --report FILE with --json"
        )
    from_stdin = STDIN in run.logs
    if from_stdin and len(run.logs) > 1:
        raise BatchUsageError("LOG - reads one log from standard input: give no other LOG")
    if not run.resume:
        return
    if run.report is None or run.report == STDOUT:
        raise BatchUsageError(
            "--resume keeps its cache in the --report FILE: give --report FILE (not -)"
        )
    if run.replace:
        raise BatchUsageError(
            "--resume adds to the --report FILE and --force replaces it: give one or the other"
        )
    if from_stdin:
        raise BatchUsageError("--resume hashes logs in files: LOG - cannot be resumed")


def _read_stdin(run: BatchRun) -> LogFile:
    if run.read_stdin is not None:
        return run.read_stdin()
    return read_standard_input(sys.stdin.buffer, run.settings.limits.max_file_bytes)


def _verified_here(log: LogFile, settings: Settings) -> Generator[Report, None, None]:
    """The report of one log, verified in this process: standard input's, which is in
    memory already and nothing to share out."""
    yield verify_log(log, settings)


def _collect(logs: Sequence[str], scheduler: str | None) -> list[LogName]:
    """The logs that LOG... name; URLs (only for the cluster's workers) listed by fsspec."""
    urls = [log for log in logs if is_url(log)]
    if not urls:
        return list(collect_logs(Path(log) for log in logs))
    if scheduler is None:
        raise BatchUsageError(
            f"LOG {urls[0]} is a URL: Dask workers read URLs (give --scheduler); here, give a path"
        )
    try:
        return collect_names(logs)
    except ImportError as error:
        raise BatchUsageError(f"cannot read {urls[0]}: {error}") from error
    except Exception as error:  # fsspec's backends raise their own kinds, not only OSError
        raise BatchUsageError(f"cannot list {urls[0]}: {error}") from error


def _checked_report(name: str, replace: bool, inputs: list[Path]) -> Output:
    """The ``--report`` output, refused before anything is read if it exists and is not to
    be replaced, or if it is one of ``inputs``."""
    output = Output.named(name, replace=replace)
    try:
        refuse_inputs(output, inputs)
        output.check_free()
    except OutputError as error:
        raise BatchUsageError(str(error), _REPORT_OPTION) from error
    return output


def _resumed_report(name: str, inputs: list[Path], key: str) -> ReportCache:
    """The cache that the existing report file ``name`` holds, checked before any log is
    verified: never one of the inputs, and a report file indeed."""
    try:
        refuse_inputs(Output.named(name, replace=True), inputs)
        return read_cache(Path(name), key)
    except (OutputError, ResumeError) as error:
        raise BatchUsageError(str(error), _REPORT_OPTION) from error
    except OSError as error:
        why = error.strerror or str(error)
        raise BatchUsageError(f"cannot resume {name}: {why}", _REPORT_OPTION) from error


class _Appender:
    """Adds lines to the report file being resumed, each flushed at once; it is never
    removed or replaced, whatever happens."""

    def __init__(self, path: Path, shown: str) -> None:
        self._path, self._shown = path, shown
        self._stream: BinaryIO | None = None
        self.incomplete = False  # as OutputWriter's: an appended file is complete line by line

    def __enter__(self) -> _Appender:
        try:
            self._stream = open_to_append(self._path)
        except OSError as error:
            raise self._error(error) from error
        return self

    def write(self, data: bytes) -> None:
        assert self._stream is not None
        try:
            self._stream.write(data)
            self._stream.flush()
        except OSError as error:
            raise self._error(error) from error

    def __exit__(self, *_: object) -> None:
        if self._stream is not None:
            self._stream.close()

    def _error(self, error: OSError) -> WriteFailed:
        why = error.strerror or str(error)
        return WriteFailed(printable(f"cannot write {_REPORT_OPTION} {self._shown}: {why}"))


def _lines(
    reports: Iterator[Report], reporter: BatchReporter
) -> Generator[tuple[Report, str | None], None, None]:
    """Each report and its --report line."""
    for report in reports:
        yield report, reporter.line(report, None)


def _verified(
    names: list[LogName], run: BatchRun, cache: ReportCache | None, reporter: BatchReporter
) -> Generator[tuple[Report, str | None], None, None]:
    """The reports of ``names`` in their order as they come, here or on the cluster, each
    with the line for the report file, or None when that line is there already."""
    try:
        if run.resume:
            yield from _resumed(names, run, cache, reporter)
            return
        if run.scheduler is not None:
            reports = iter_verified_on_dask(names, run.settings, run.scheduler, _timeout(run))
        else:
            paths = [name for name in names if isinstance(name, Path)]
            reports = iter_verified(paths, run.settings, run.jobs)
        with contextlib.closing(reports):
            yield from _lines(reports, reporter)
    except BrokenExecutor as error:
        # A worker killed from outside (out of memory, a signal): nothing to retry here.
        raise ClusterError(
            f"a verification worker died ({error}): the logs verified before are printed "
            "and in the report; verify the rest again"
        ) from error


def _timeout(run: BatchRun) -> float:
    return DEFAULT_SCHEDULER_TIMEOUT if run.scheduler_timeout is None else run.scheduler_timeout


def _resumed(
    names: list[LogName], run: BatchRun, cache: ReportCache | None, reporter: BatchReporter
) -> Iterator[tuple[Report, str | None]]:
    key = cache_key(run.settings)
    known = {} if cache is None else cache.known
    done = iter_resumed(
        names,
        run.settings,
        known,
        jobs=run.jobs,
        scheduler=run.scheduler,
        timeout=_timeout(run),
    )
    with contextlib.closing(done):
        for log in done:
            if log.report is None:
                assert cache is not None
                yield cache.report(log.source), None
            else:
                yield (
                    log.report,
                    reporter.line(log.report, cache_entry(log.report, log.sha256, key)),
                )


class _Interrupts:
    """Ctrl-C raises KeyboardInterrupt as ever, but not while ``held``: then it waits until
    the held block is done, so that a report is never printed without being in the report
    file, or the other way round."""

    def __init__(self) -> None:
        self._holding = self._pending = False
        self._previous: Any = None

    def __enter__(self) -> _Interrupts:
        # Only over Python's own handler: a caller that ignores SIGINT keeps ignoring it.
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._interrupted)
        return self

    def __exit__(self, *_: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def _interrupted(self, signum: int, frame: FrameType | None) -> None:
        if not self._holding:
            raise KeyboardInterrupt
        self._pending = True

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
            if self._pending:
                self._pending = False
                raise KeyboardInterrupt
