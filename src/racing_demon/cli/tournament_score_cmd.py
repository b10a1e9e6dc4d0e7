"""``racing-demon tournament score``: verify a tournament's logs against its plan and print
the standings (docs/tournament-scoring.md); the use case is
``racing_demon.tournament.score_run.run_score``."""

from __future__ import annotations

from pathlib import Path

import click

from racing_demon.cli.options import force_option, json_option, limits_options, table_key_option
from racing_demon.cli.output import OutputWriter, inputs_of, note_input
from racing_demon.cli.style import verbosity
from racing_demon.cli.use_cases import echo, usage_problems
from racing_demon.log.reader import Limits
from racing_demon.outcomes import ExitCode
from racing_demon.report.tournament import tournament_reporter_named
from racing_demon.tournament.score_run import CannotScore, ScoreRun, run_score


class _CannotScore(click.ClickException):
    """The plan cannot be used, or the workers could not verify: exit 2."""

    exit_code = ExitCode.UNUSABLE


@click.command(
    name="score",
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
    note_input(ctx, plan_file)
    run = ScoreRun(
        plan_file=plan_file,
        logs=logs,
        table_key=table_key,
        html=html_name,
        replace=force,
        inputs=inputs_of(ctx),
        limits=limits,
        jobs=jobs,
        scheduler=scheduler,
    )
    reporter = tournament_reporter_named("json" if as_json else "text", verbosity(), echo)
    try:
        with usage_problems():
            standings = run_score(run, reporter, OutputWriter)
    except CannotScore as error:
        raise _CannotScore(str(error)) from error
    raise SystemExit(standings.exit_code)
