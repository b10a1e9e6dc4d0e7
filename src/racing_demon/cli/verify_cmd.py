"""``racing-demon verify``: check signed game logs and replay every move."""

from __future__ import annotations

import contextlib
import json
import signal
import sys
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import BrokenExecutor
from pathlib import Path
from types import FrameType
from typing import Any, BinaryIO

import click

from racing_demon.batch import (
    DEFAULT_SCHEDULER_TIMEOUT,
    ClusterError,
    LogName,
    Summary,
    cache_key,
    collect_logs,
    collect_names,
    dask_distributed,
    is_url,
    iter_resumed,
    iter_verified,
    iter_verified_on_dask,
)
from racing_demon.cli.options import (
    dealer_secret_option,
    force_option,
    hex_value,
    json_option,
    limits_options,
    pinned_rules_option,
    table_key_option,
)
from racing_demon.cli.output import (
    OutputFailed,
    OutputWriter,
    checked_output,
    claim_stdin_log,
    inputs_of,
    log_from_stdin,
)
from racing_demon.cli.style import verbosity
from racing_demon.files import (
    STDIN,
    STDOUT,
    LogFile,
    Output,
    OutputError,
    open_to_append,
    refuse_inputs,
)
from racing_demon.log.reader import Limits
from racing_demon.outcomes import ExitCode
from racing_demon.report.resume import (
    ReportCache,
    ResumeError,
    cache_line,
    read_cache,
)
from racing_demon.report.text import Verbosity, printable
from racing_demon.report.verify import (
    batch_entry,
    batch_footer,
    report_line,
    report_text,
    verification_document,
)
from racing_demon.verify import Report, Settings, verify_log
from racing_demon.verify.assurance import Requirement, RequirementError, requirement_named
from racing_demon.wording import plural


def _requirements(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[Requirement, ...]:
    try:
        return tuple(dict.fromkeys(requirement_named(value) for value in values))
    except RequirementError as error:
        raise click.BadParameter(str(error), ctx, param) from error


def _scheduler(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Refuse ``--scheduler`` at once, before any work, when Dask is not installed."""
    if value is not None:
        try:
            dask_distributed()
        except ClusterError as error:
            raise click.BadParameter(str(error), ctx, param) from error
    return value


class _ClusterFailed(click.ClickException):
    """The workers, here or on a cluster, could not verify: like unreadable input, exit 2."""

    exit_code = ExitCode.UNUSABLE


@click.command(
    short_help="Verify logs: signatures, chain, deal, every move, scores.",
    epilog="""\b
Examples:
  racing-demon verify game.jsonl --table-key table.pub
  racing-demon verify game.jsonl --table-key table.pub --secret file:secret
  racing-demon verify game.jsonl --table-key table.pub --rules table
  curl -s https://example.org/game.jsonl \\
      | racing-demon verify - --table-key table.pub
  racing-demon verify logs/*.jsonl --table-key table.pub --fast
  racing-demon verify archive/ --table-key table.pub \\
      --require deal_bound --require result_accepted   # refuse weaker logs
  racing-demon verify archive/ --table-key table.pub --report results.jsonl
  racing-demon verify archive/ --table-key table.pub --report - | jq .verdict
  racing-demon verify archive/ --table-key table.pub \\
      --report results.jsonl --resume     # again after Ctrl-C
  racing-demon verify /mnt/archive/ --table-key table.pub \\
      --scheduler tcp://dask-host:8786
  racing-demon verify s3://bucket/archive/ --table-key table.pub \\
      --scheduler tcp://dask-host:8786
  racing-demon verify big.jsonl --table-key table.pub \\
      --max-file-bytes 1G --max-records 5000000

\b
More:
  racing-demon docs log-format 7       # the checks, in the order they fail
  racing-demon docs batch-verification
  racing-demon docs verification-report-line.schema.json   # a --report line
  racing-demon explain CODE            # what a reason code means
""",
)
@click.argument(
    "logs",
    metavar="LOG...",
    nargs=-1,
    required=True,
    type=click.Path(allow_dash=True),
    is_eager=True,  # LOG - claims standard input before --secret stdin reads it
    callback=claim_stdin_log,
)
@table_key_option(required=False)
@pinned_rules_option
@json_option
@click.option(
    "--fast",
    is_flag=True,
    help="Check the table's signatures on the genesis and the final record only (the chain "
    "binds the rest to them) and no player's signature on a move; replay everything.",
)
@dealer_secret_option(
    "The dealer secret (64 hex) the log must reveal; it also replays an unfinished log."
)
@click.option(
    "--game-id",
    metavar="ID",
    callback=hex_value(32),
    help="The game id (32 hex) the log must carry.",
)
@click.option(
    "--require",
    "required",
    metavar="GUARANTEE",
    multiple=True,
    callback=_requirements,
    help="Refuse (exit 1, REQUIREMENT_UNMET) a log whose checks all hold but that lacks "
    "GUARANTEE: one the report lists as proved (table_signed, deal_bound, moves_signed, "
    "views_bound, result_accepted), keyed (every seat lists a key) or v2_or_later (log "
    "format 2 or later). Repeat for several.",
)
@click.option(
    "--unsafe-unpinned",
    is_flag=True,
    help="Without --table-key, accept a log whose table signatures cannot be checked: "
    "anyone could have written it.",
)
@limits_options
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    metavar="N",
    help="Verify N logs at once in N processes (default: every core); 1 verifies in this "
    "process, one log after another.",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    callback=_scheduler,
    help="Verify on the Dask cluster whose scheduler is at ADDRESS (tcp://host:8786), not "
    "here. This machine sends the logs' names and each worker reads its logs: give paths "
    "every worker reaches (a shared file system) or URLs (s3://..., file://...). Needs "
    "pip install 'racing-demon[dask]' and racing-demon on every worker.",
)
@click.option(
    "--scheduler-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_SCHEDULER_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="With --scheduler: how long to try to reach it before exiting 2, in one line.",
)
@click.option(
    "--report",
    "report_name",
    metavar="FILE",
    help="Also write one JSON line per log to FILE as each is verified, in the order of the "
    "logs (their schema is below); - writes them to standard output and the text to "
    "standard error. An existing FILE is kept unless --force.",
)
@force_option("Replace an existing --report FILE (never one of the logs or keys read).")
@click.option(
    "--resume",
    is_flag=True,
    help="Keep the verdicts in --report FILE as a cache and add to it: a log whose bytes "
    "(SHA-256) and settings are those of its last line there is not verified again. Give "
    "the same command again after an interruption. A new FILE is created.",
)
@click.pass_context
def verify(
    ctx: click.Context,
    logs: tuple[str, ...],
    table_key: bytes | None,
    rules: str | None,
    as_json: bool,
    fast: bool,
    secret: bytes | None,
    game_id: str | None,
    required: tuple[Requirement, ...],
    unsafe_unpinned: bool,
    limits: Limits,
    jobs: int | None,
    scheduler: str | None,
    scheduler_timeout: float,
    report_name: str | None,
    force: bool,
    resume: bool,
) -> None:
    """Verify each LOG: framing, schema, canonical bytes, hash chain, signatures, the
    dealer's reveal, the rules and every pack, then replay every move through the rules
    engine and recompute the scores. Every report names the rules the log declares (name,
    version, digest, built-in or custom); --rules pins them.

    A LOG of - is one log read from standard input (at most --max-file-bytes), named
    <stdin>; give it alone. A LOG that is a folder stands for every *.jsonl file under it
    but the receipts files kept beside logs (*.receipts.jsonl), recursively, in natural
    order (g2 before g10); a folder with none is reported
    unreadable: "no logs found under DIR". Several logs are verified in parallel (--jobs,
    or --scheduler); each gets one line (and its finding under it) as soon as it and the
    logs before it are verified, then a summary counts the verdicts and their reasons.
    Ctrl-C stops at once: what was verified by then is printed, summed up and in the
    report, and the exit code is 130. With --resume, the same command then goes on
    where it stopped: each log is hashed again, and one whose last line in the report
    has the same SHA-256, verifier version and settings, and a verdict other than
    unreadable, is printed and counted from there, not verified again.

    Exit 0 when every log verifies; 1 when any log does not, is unfinished, or is
    unpinned without --unsafe-unpinned, even if another could not be read; else 2 when
    a log cannot be read; 2 also when an output cannot be written or an option is
    wrong; 130 when interrupted.
    """
    if table_key is not None and unsafe_unpinned:
        raise click.UsageError("--unsafe-unpinned contradicts --table-key: give one or the other")
    timeout_given = ctx.get_parameter_source("scheduler_timeout")
    if scheduler is None and timeout_given is click.core.ParameterSource.COMMANDLINE:
        raise click.UsageError(
            "--scheduler-timeout is how long to wait for --scheduler: give both, or neither"
        )
    if jobs is not None and scheduler is not None:
        raise click.UsageError(
            "--jobs counts processes on this machine: with --scheduler, the cluster's workers do"
        )
    settings = Settings(
        table_key=table_key,
        fast=fast,
        seed=secret,
        game_id=game_id,
        unsafe_unpinned=unsafe_unpinned,
        limits=limits,
        rules=rules,
        required=required,
    )
    if as_json and report_name == STDOUT:
        # Its lines and the document on one stream would be neither JSON Lines nor JSON.
        raise click.UsageError(
            "--report - writes the report lines to standard output, where --json would print "
            "its document too: give --report FILE with --json"
        )
    from_stdin = STDIN in logs
    if from_stdin and len(logs) > 1:
        raise click.UsageError("LOG - reads one log from standard input: give no other LOG")
    _check_resume(resume, report_name, force, from_stdin)
    # The logs are listed before the report exists, so a report inside a folder being
    # verified is never read as one of its logs.
    names = [] if from_stdin else _collect(logs, scheduler)
    paths = [name for name in names if isinstance(name, Path)]
    inputs = [*paths, *inputs_of(ctx)]
    report_file = cache = None
    if report_name is not None and resume and Path(report_name).exists():
        cache = _resumed_report(report_name, inputs, cache_key(settings))
    elif report_name is not None:
        report_file = checked_output(
            report_name, replace=force, inputs=inputs, param_hint="--report"
        )
    to_stderr = report_file is not None and report_file.is_stdout
    one_log = from_stdin or names == [Path(logs[0])] or names == [logs[0]]
    planned = 1 if from_stdin else len(names)
    verifying = (
        _lines(_verified_here(log_from_stdin(limits), settings))
        if from_stdin
        else _verified(names, settings, jobs, scheduler, scheduler_timeout, resume, cache)
    )
    summary = Summary.of([])
    reports: list[Report] = []  # kept only for --json, which prints them in one document
    first: Report | None = None
    interrupted = False
    reused = 0
    with contextlib.ExitStack() as stack:
        writer: OutputWriter | _Appender | None = None
        if report_file is not None:
            writer = stack.enter_context(OutputWriter(report_file, "--report"))
        elif cache is not None:
            writer = stack.enter_context(_Appender(cache.path, report_name or ""))
        on_done = stack.enter_context(_progress(planned, shown_as_they_come=not to_stderr))
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
                    if as_json or one_log:
                        reports.append(report)
                    else:
                        click.echo(batch_entry(report, verbosity()), err=to_stderr)
                if on_done is not None:
                    on_done()
        except KeyboardInterrupt:
            interrupted = True
            if writer is not None:
                writer.incomplete = True
    if as_json:
        document = verification_document(reports, interrupted=interrupted)
        click.echo(json.dumps(document, indent=2), err=to_stderr)
    elif one_log and reports:
        click.echo(report_text(reports[0], verbosity()), err=to_stderr)  # its whole report
    elif first is not None and verbosity() is not Verbosity.QUIET:
        shown_planned = planned if interrupted else None
        click.echo(batch_footer(summary, first, planned=shown_planned), err=to_stderr)
    if cache is not None and verbosity() is not Verbosity.QUIET:
        shown = printable(report_name or "")
        click.echo(
            f"resumed: {reused:,} of {plural(summary.total, 'verdict')} reused from {shown}",
            err=True,
        )
    if interrupted:
        click.echo(f"interrupted: {summary.total:,} of {plural(planned, 'log')} verified", err=True)
        if report_file is not None and report_file.replaces:
            shown = printable(report_file.shown)
            click.echo(f"{shown} was not replaced: only a whole batch replaces it", err=True)
        raise SystemExit(ExitCode.INTERRUPTED)
    if summary.exit_code:
        raise SystemExit(summary.exit_code)


def _verified_here(log: LogFile, settings: Settings) -> Generator[Report, None, None]:
    """The report of one log, verified in this process: standard input's, which is in
    memory already and nothing to share out."""
    yield verify_log(log, settings)


def _check_resume(resume: bool, report_name: str | None, force: bool, from_stdin: bool) -> None:
    if not resume:
        return
    if report_name is None or report_name == STDOUT:
        raise click.UsageError(
            "--resume keeps its cache in the --report FILE: give --report FILE (not -)"
        )
    if force:
        raise click.UsageError(
            "--resume adds to the --report FILE and --force replaces it: give one or the other"
        )
    if from_stdin:
        raise click.UsageError("--resume hashes logs in files: LOG - cannot be resumed")


def _collect(logs: tuple[str, ...], scheduler: str | None) -> list[LogName]:
    """The logs that LOG... name; URLs (only for the cluster's workers) listed by fsspec."""
    urls = [log for log in logs if is_url(log)]
    if not urls:
        return list(collect_logs(Path(log) for log in logs))
    if scheduler is None:
        raise click.UsageError(
            f"LOG {printable(urls[0])} is a URL: Dask workers read URLs (give --scheduler); "
            "here, give a path"
        )
    try:
        return collect_names(logs)
    except ImportError as error:
        raise click.UsageError(f"cannot read {printable(urls[0])}: {error}") from error
    except Exception as error:  # fsspec's backends raise their own kinds, not only OSError
        raise click.UsageError(f"cannot list {printable(urls[0])}: {error}") from error


def _resumed_report(name: str, inputs: list[Path], key: str) -> ReportCache:
    """The cache that the existing report file ``name`` holds, checked before any log is
    verified: never one of the inputs, and a report file indeed."""
    try:
        refuse_inputs(Output.named(name, replace=True), inputs)
        return read_cache(Path(name), key)
    except (OutputError, ResumeError) as error:
        raise click.BadParameter(printable(str(error)), param_hint="--report") from error
    except OSError as error:
        why = error.strerror or str(error)
        raise click.BadParameter(
            f"cannot resume {printable(name)}: {why}", param_hint="--report"
        ) from error


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

    def _error(self, error: OSError) -> OutputFailed:
        why = error.strerror or str(error)
        return OutputFailed(f"cannot write --report {printable(self._shown)}: {why}")


def _lines(reports: Iterator[Report]) -> Generator[tuple[Report, str | None], None, None]:
    """Each report and its --report line."""
    for report in reports:
        yield report, report_line(report)


def _verified(
    names: list[LogName],
    settings: Settings,
    jobs: int | None,
    scheduler: str | None,
    timeout: float,
    resume: bool,
    cache: ReportCache | None,
) -> Generator[tuple[Report, str | None], None, None]:
    """The reports of ``names`` in their order as they come, here or on the cluster, each
    with the line for the report file, or None when that line is there already."""
    try:
        if resume:
            yield from _resumed(names, settings, jobs, scheduler, timeout, cache)
            return
        if scheduler is not None:
            reports = iter_verified_on_dask(names, settings, scheduler, timeout)
        else:
            paths = [name for name in names if isinstance(name, Path)]
            reports = iter_verified(paths, settings, jobs)
        with contextlib.closing(reports):
            yield from _lines(reports)
    except ClusterError as error:
        raise _ClusterFailed(str(error)) from error
    except BrokenExecutor as error:
        # A worker killed from outside (out of memory, a signal): nothing to retry here.
        raise _ClusterFailed(
            f"a verification worker died ({error}): the logs verified before are printed "
            "and in the report; verify the rest again"
        ) from error


def _resumed(
    names: list[LogName],
    settings: Settings,
    jobs: int | None,
    scheduler: str | None,
    timeout: float,
    cache: ReportCache | None,
) -> Iterator[tuple[Report, str | None]]:
    key = cache_key(settings)
    known = {} if cache is None else cache.known
    done = iter_resumed(names, settings, known, jobs=jobs, scheduler=scheduler, timeout=timeout)
    with contextlib.closing(done):
        for log in done:
            if log.report is None:
                assert cache is not None
                yield cache.report(log.source), None
            else:
                yield log.report, cache_line(log.report, log.sha256, key)


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


@contextlib.contextmanager
def _progress(total: int, *, shown_as_they_come: bool) -> Iterator[Callable[[], None] | None]:
    """A progress bar on standard error, only for a batch, when standard error is a
    terminal and the logs' lines are not already coming out on one."""
    if total < 2 or not sys.stderr.isatty() or (shown_as_they_come and sys.stdout.isatty()):
        yield None
        return
    with click.progressbar(length=total, label="verifying", file=sys.stderr, show_pos=True) as bar:
        yield lambda: bar.update(1)
