"""``racing-demon tournament commit``: publish a tournament's terms; the use case is
``racing_demon.tournament.organise.run_commit``."""

from __future__ import annotations

import click

from racing_demon.cli.options import force_option
from racing_demon.cli.output import OutputWriter, inputs_of
from racing_demon.cli.style import verbosity
from racing_demon.cli.tournament_options import terms_options
from racing_demon.cli.use_cases import echo, usage_problems
from racing_demon.game.duplicate import Shape
from racing_demon.game.rules import Rules
from racing_demon.report.tournament import tournament_reporter_named
from racing_demon.tournament.organise import CommitRun, run_commit


@click.command(
    name="commit",
    short_help="Publish a tournament's terms: its shape, rules and commitment.",
    epilog="""\b
Examples:
  racing-demon tournament commit --secret file:secret.txt --name "Club cup" \\
      --tables 4 --seats 4 --hands 3 -o cup.json
  racing-demon tournament commit --secret env:CUP_SECRET --name Cup \\
      --tables 16 --seats 3 --hands 2 --rules nertz -o cup.json
""",
)
@terms_options
@click.option(
    "-o",
    "--out",
    "out",
    default="-",
    show_default=True,
    metavar="FILE",
    help="The commitment file to write (- for standard output).",
)
@force_option("Replace an existing FILE (never the secret or a profile it read).")
@click.pass_context
def commit_command(
    ctx: click.Context,
    secret: bytes,
    name: str,
    tables: int,
    seats: int,
    hands: int,
    rules: Rules,
    out: str,
    force: bool,
) -> None:
    """Write the commitment file: the tournament's name and shape, the rules
    every table plays (exactly HANDS hands, no target) and the commitment C
    to the secret. Everything the deal depends on besides the secret and the
    contributions.

    Publish it before collecting any contribution: each contributor signs
    these terms, so the plan cannot change them afterwards. Exit 0 when
    written, 2 when an option cannot be used or FILE exists.
    """
    run = CommitRun(
        secret=secret,
        shape=Shape(name, tables, seats, hands),
        rules=rules,
        out=out,
        replace=force,
        inputs=inputs_of(ctx),
    )
    with usage_problems():
        run_commit(run, tournament_reporter_named("text", verbosity(), echo), OutputWriter)
