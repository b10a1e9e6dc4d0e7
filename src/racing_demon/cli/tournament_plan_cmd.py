"""``racing-demon tournament plan``: write a duplicate tournament's plan and its sheets;
the use case is ``racing_demon.tournament.organise.run_plan``."""

from __future__ import annotations

from pathlib import Path

import click

from racing_demon.cli.options import force_option, json_option
from racing_demon.cli.output import OutputWriter, inputs_of, note_input
from racing_demon.cli.style import verbosity
from racing_demon.cli.tournament_options import terms_options
from racing_demon.cli.use_cases import echo, usage_problems
from racing_demon.game.duplicate import Shape
from racing_demon.game.rules import Rules
from racing_demon.report.tournament import tournament_reporter_named
from racing_demon.tournament.organise import PlanRun, run_plan


@click.command(
    name="plan",
    short_help="Write the plan and its printable sheets.",
    epilog="""\b
Examples:
  racing-demon tournament plan --secret file:secret.txt --name "Club cup" \\
      --tables 4 --seats 4 --hands 3 --contribution alice.json \\
      --contribution bob.json -o plan.json --sheets sheets.html
  racing-demon tournament plan --secret env:CUP_SECRET --name Cup \\
      --tables 16 --seats 3 --hands 2 --rules nertz \\
      --contribution org.json -o plan.json
""",
)
@terms_options
@click.option(
    "--contribution",
    "contributions",
    metavar="FILE",
    multiple=True,
    required=True,
    type=click.Path(path_type=Path),
    help="An entropy contribution (as `tournament contribute` writes it), made to the "
    "terms `tournament commit` published, the same as this plan's; repeat for each, in "
    "any order (the plan lists them in the canonical order).",
)
@click.option(
    "-o",
    "--out",
    "out",
    required=True,
    metavar="FILE",
    help="The plan file to write (- for standard output).",
)
@click.option(
    "--sheets", metavar="FILE", help="Also write the printable sheets: one HTML page per table."
)
@force_option("Replace an existing FILE (never an input).")
@json_option
@click.pass_context
def plan_command(
    ctx: click.Context,
    secret: bytes,
    name: str,
    tables: int,
    seats: int,
    hands: int,
    rules: Rules,
    contributions: tuple[Path, ...],
    out: str,
    sheets: str | None,
    force: bool,
    as_json: bool,
) -> None:
    """Write the plan of a duplicate tournament: the shape, the rules every table
    plays (exactly HANDS hands, no target), the commitment, the contributions,
    the entropy digest, the deal-set checksum, the schedule of packs and the
    plan's own commitment, which every table's log names.

    The options must repeat the terms published with `tournament commit`:
    every contribution answers them. Publish the plan before play. The
    secret stays private until every table has finished. Exit 0 when
    written, 2 when an input cannot be used (a contribution to other terms,
    or whose signature does not verify) or an output exists.
    """
    for path in contributions:
        note_input(ctx, path)
    run = PlanRun(
        secret=secret,
        shape=Shape(name, tables, seats, hands),
        rules=rules,
        contributions=contributions,
        out=out,
        sheets=sheets,
        replace=force,
        inputs=inputs_of(ctx),
    )
    reporter = tournament_reporter_named("json" if as_json else "text", verbosity(), echo)
    with usage_problems():
        run_plan(run, reporter, OutputWriter)
