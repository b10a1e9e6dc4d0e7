"""``racing-demon tournament check``: check a plan, and with the revealed secret its deal
set; the use case is ``racing_demon.tournament.organise.run_check``."""

from __future__ import annotations

from pathlib import Path

import click

from racing_demon.cli.options import force_option, json_option, secret_option
from racing_demon.cli.output import OutputWriter, inputs_of, note_input
from racing_demon.cli.style import verbosity
from racing_demon.cli.use_cases import echo, usage_problems
from racing_demon.outcomes import ExitCode
from racing_demon.report.tournament import tournament_reporter_named
from racing_demon.tournament.organise import CheckRun, run_check


@click.command(
    name="check",
    short_help="Check a plan; with --secret, its deal set too.",
    epilog="""\b
Examples:
  racing-demon tournament check plan.json            # before play
  racing-demon tournament check plan.json --json
  racing-demon tournament check plan.json --secret file:secret.txt  # after
  racing-demon tournament check plan.json --sheets sheets.html
""",
)
@click.argument("plan_file", metavar="PLAN", type=click.Path(path_type=Path))
@secret_option("The revealed secret: it must open the commitment and deal the published deal set.")
@json_option
@click.option("--sheets", metavar="FILE", help="Write the printable sheets of a plan that checks.")
@force_option("Replace an existing sheets FILE.")
@click.pass_context
def check_command(
    ctx: click.Context,
    plan_file: Path,
    secret: bytes | None,
    as_json: bool,
    sheets: str | None,
    force: bool,
) -> None:
    """Check a plan from the file alone: strict JSON, the schema, the rules and
    their digest, every signed contribution (over the plan's terms) and their
    canonical order, the entropy digest, the schedule (the rotation) and the
    plan's commitment. With the revealed --secret, also that it opens the
    commitment and deals the published deal set. The report counts the
    unsigned contributions and, for an older plan, names what no
    contribution binds.

    Exit 0 when the plan checks, 1 when it does not (the reason code and the
    member are printed), 2 when PLAN cannot be read or an option is wrong.
    """
    note_input(ctx, plan_file)
    run = CheckRun(
        plan_file=plan_file, secret=secret, sheets=sheets, replace=force, inputs=inputs_of(ctx)
    )
    reporter = tournament_reporter_named("json" if as_json else "text", verbosity(), echo)
    with usage_problems():
        check = run_check(run, reporter, OutputWriter)
    if check.exit_code is not ExitCode.OK:
        raise SystemExit(check.exit_code)
