"""``racing-demon verify``: check signed game logs and replay every move; the use case is
``racing_demon.batch.run_batch``."""

from __future__ import annotations

import click

from racing_demon.batch import (
    DEFAULT_SCHEDULER_TIMEOUT,
    BatchRun,
    ClusterError,
    dask_distributed,
    run_batch,
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
    Unusable,
    claim_stdin_log,
    inputs_of,
    log_from_stdin,
)
from racing_demon.cli.progress import batch_progress
from racing_demon.cli.style import verbosity
from racing_demon.cli.use_cases import echo, usage_problems
from racing_demon.files import WriteFailed
from racing_demon.log.reader import Limits
from racing_demon.report.batch import reporter_named
from racing_demon.verify import Settings
from racing_demon.verify.assurance import Requirement, RequirementError, requirement_named


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


def _given(ctx: click.Context, param: click.Parameter, value: float) -> float | None:
    """The value given on the command line, or None for the default: the use case refuses
    a --scheduler-timeout given without --scheduler."""
    given = ctx.get_parameter_source(param.name or "") is click.core.ParameterSource.COMMANDLINE
    return value if given else None


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
    callback=_given,
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
    scheduler_timeout: float | None,
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
    if table_key is not None and unsafe_unpinned:  # Settings refuses them, in its words
        raise click.UsageError("--unsafe-unpinned contradicts --table-key: give one or the other")
    run = BatchRun(
        logs=logs,
        settings=Settings(
            table_key=table_key,
            fast=fast,
            seed=secret,
            game_id=game_id,
            unsafe_unpinned=unsafe_unpinned,
            limits=limits,
            rules=rules,
            required=required,
        ),
        jobs=jobs,
        scheduler=scheduler,
        scheduler_timeout=scheduler_timeout,
        report=report_name,
        replace=force,
        resume=resume,
        inputs=inputs_of(ctx),
        read_stdin=lambda: log_from_stdin(limits),
    )
    reporter = reporter_named("json" if as_json else "text", verbosity(), echo)
    try:
        with usage_problems():
            code = run_batch(run, reporter, progress=batch_progress)
    except WriteFailed as error:
        raise OutputFailed(str(error)) from error
    except ClusterError as error:
        raise Unusable(str(error)) from error
    if code:
        raise SystemExit(code)
