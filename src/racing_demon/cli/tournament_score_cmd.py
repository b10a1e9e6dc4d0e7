"""``racing-demon tournament score``: verify a tournament's logs against its plan and print
the standings (docs/tournament-scoring.md)."""

from __future__ import annotations

from concurrent.futures import BrokenExecutor
from pathlib import Path

import click

from racing_demon.batch import ClusterError
from racing_demon.cli.options import force_option, json_option, limits_options, table_key_option
from racing_demon.cli.output import OutputWriter, checked_output, inputs_of, note_input
from racing_demon.cli.style import verbosity
from racing_demon.files import Output
from racing_demon.log.reader import Limits
from racing_demon.outcomes import ExitCode
from racing_demon.printing import printable
from racing_demon.report.standings_html import standings_page, viewer_links
from racing_demon.report.text import Verbosity
from racing_demon.report.tournament import report_standings
from racing_demon.tournament.plan import PlanError, load_plan
from racing_demon.tournament.score import (
    NoLogToScore,
    Standings,
    logs_to_score,
    score_tournament,
)
from racing_demon.wording import plural


class _CannotScore(click.ClickException):
    """The plan cannot be used, or the workers could not verify: exit 2."""

    exit_code = ExitCode.UNUSABLE


@click.command(
    short_help="Verify every table's log and print the standings.",
    epilog="""\b
Examples:
  racing-demon tournament score plan.json logs/ --table-key table.pub
  racing-demon tournament score plan.json logs/ --table-key table.pub \\
      --html standings.html
  racing-demon tournament score plan.json logs/ --table-key table.pub --json
  racing-demon tournament score plan.json logs/ --table-key table.pub \\
      --scheduler tcp://dask-host:8786
""",
)
@click.argument("plan_file", metavar="PLAN", type=click.Path(path_type=Path))
@click.argument("logs", metavar="LOGS...", nargs=-1, required=True, type=click.Path(path_type=Path))
@table_key_option(required=True)
@json_option
@click.option(
    "--html",
    "html_name",
    metavar="FILE",
    help="Also write the standings page: standings, problems and a hand record per pack, "
    "linking each player to <log stem>.html beside their log when it exists. An existing "
    "FILE is kept unless --force.",
)
@force_option("Replace an existing --html FILE (never the plan, a log or the key).")
@limits_options
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    metavar="N",
    help="Verify N logs at once in N processes (default: every core).",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    help="Verify on the Dask cluster whose scheduler is at ADDRESS (tcp://host:8786). "
    "Each worker reads its logs: give paths every worker reaches (a shared file system). "
    "It needs the dask extra: pip install 'racing-demon[dask]'.",
)
@click.pass_context
def score_command(
    ctx: click.Context,
    plan_file: Path,
    logs: tuple[Path, ...],
    table_key: bytes,
    as_json: bool,
    html_name: str | None,
    force: bool,
    limits: Limits,
    jobs: int | None,
    scheduler: str | None,
) -> None:
    """Score the duplicate tournament of PLAN from its logs: every *.jsonl file under
    each LOGS folder (or a log named itself).

    Every log is verified with the table's key and the plan's rules pinned (the batch
    verifier: every core, or --scheduler), then checked against the plan: its genesis
    names the plan, one of its tables, the organiser's commitment, the entropy, the
    seats and the rules. A log that fails, a table no log claims, and a table two logs
    claim are named with their table, hand, seat and log, and score nothing. Each
    result is compared with every other result on the same pack: 2 matchpoints per
    result beaten, 1 per tie; players are ranked by percentage, then raw total.

    Exit 0 when every planned table scored; 1 when one did not; 2 when the plan, a log
    or the key cannot be read (a LOGS that is missing, or a folder with no log), an
    output cannot be written, or an option is wrong.
    """
    if jobs is not None and scheduler is not None:
        raise click.UsageError(
            "--jobs counts processes on this machine: with --scheduler, the cluster's workers do"
        )
    note_input(ctx, plan_file)
    try:
        plan = load_plan(plan_file)
        paths = logs_to_score(logs)
    except PlanError as error:
        raise _CannotScore(f"PLAN {printable(str(plan_file))}: {printable(str(error))}") from error
    except NoLogToScore as error:
        raise _CannotScore(
            f"LOGS {printable(str(error.named))}: {printable(error.reason)}"
        ) from error
    page = _page_output(ctx, html_name, force, paths, as_json)
    try:
        standings = score_tournament(
            plan, paths, table_key, limits=limits, jobs=jobs, scheduler=scheduler
        )
    except (ClusterError, BrokenExecutor) as error:
        raise _CannotScore(f"the logs could not be verified: {error}") from error
    if page is not None:
        _write_page(standings, page)
    if as_json or page is None or not page.is_stdout:  # the page alone on standard output
        reporter = "json" if as_json else "text"
        click.echo(report_standings(standings, reporter, verbosity()))
    raise SystemExit(standings.exit_code)


def _page_output(
    ctx: click.Context, html_name: str | None, force: bool, logs: list[Path], as_json: bool
) -> Output | None:
    """Where --html writes the page, refused before any log is verified."""
    if html_name is None:
        return None
    output = checked_output(
        html_name, replace=force, inputs=[*logs, *inputs_of(ctx)], param_hint="--html"
    )
    if output.is_stdout and as_json:
        # The page and the JSON in one stream: neither could be read.
        raise click.BadParameter("--json already goes to standard output", param_hint="--html")
    return output


def _write_page(standings: Standings, output: Output) -> None:
    page = standings_page(standings, viewer_links(standings, output.path)).encode("utf-8")
    with OutputWriter(output, "--html") as writer:
        writer.write(page)
    if not output.is_stdout and verbosity() is not Verbosity.QUIET:
        # On standard error, out of the way of the standings or the JSON.
        click.echo(f"wrote {printable(output.shown)} ({plural(len(page), 'byte')})", err=True)
