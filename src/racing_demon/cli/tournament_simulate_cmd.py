"""``racing-demon tournament simulate``: bots play every table of a plan, then the
organiser's secret is revealed in every table's final record (docs/tournament.md); the
use case is ``racing_demon.tournament.simulate.run_simulate``."""

from __future__ import annotations

import functools
from pathlib import Path

import click

from racing_demon.cli.options import (
    json_option,
    private_key_from,
    secret_option,
    signing_key_option,
)
from racing_demon.cli.simulate_cmd import (
    bots_of,
    public_key_hint,
    simulation_seed,
)
from racing_demon.cli.style import verbosity
from racing_demon.cli.use_cases import echo, usage_problems
from racing_demon.outcomes import ExitCode
from racing_demon.report.tournament import tournament_reporter_named
from racing_demon.sim.bots import BotProfile
from racing_demon.sim.run import SimulationUnwritable
from racing_demon.tournament.simulate import SimulateRun, run_simulate


@click.command(
    name="simulate",
    short_help="Bots play every table of a plan.",
    epilog="""\b
Examples:
  racing-demon tournament simulate plan.json --secret file:secret.txt \\
      --signing-key table.key --bots easy,normal,hard,normal --seed cup \\
      --out logs
  racing-demon tournament score plan.json logs --table-key table.pub
""",
)
@click.argument("plan_file", metavar="PLAN", type=click.Path(path_type=Path))
@secret_option("The organiser's secret: it must open the plan's commitment.", required=True)
@signing_key_option("The table's private key file (NAME.key): it signs every table's log.")
@click.option(
    "--passphrase-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Decrypt the table key with the passphrase in FILE.",
)
@click.option("--ask-passphrase", is_flag=True, help="Decrypt the table key; prompt for it.")
@click.option(
    "--bots",
    default="normal",
    show_default=True,
    metavar="SPEED[,SPEED...]",
    callback=bots_of,
    help="easy, normal or hard: one for every seat, one per seat (every table alike), "
    "or one per seat of every table, table by table.",
)
@click.option(
    "--seed",
    required=True,
    callback=simulation_seed,
    help="The simulation seed of the bots' choices (not the deals: those are the plan's).",
)
@click.option(
    "--out",
    required=True,
    metavar="DIR",
    type=click.Path(file_okay=False, path_type=Path),
    help="The folder for the logs, table-1.jsonl ...; made if missing, no log overwritten.",
)
@click.option(
    "--receipts/--no-receipts",
    default=True,
    show_default=True,
    help="Keep each seat's receipts beside its table's log, as its client would: "
    "table-T.seatN.receipts.jsonl (check them with audit --receipts).",
)
@json_option
def simulate_command(
    plan_file: Path,
    secret: bytes,
    signing_key: Path,
    passphrase_file: Path | None,
    ask_passphrase: bool,
    bots: tuple[BotProfile, ...],
    seed: str,
    out: Path,
    receipts: bool,
    as_json: bool,
) -> None:
    """Play every table of the tournament PLAN with computer players, writing each
    table's signed log to DIR, and reveal the secret once every table has played.

    Every table deals the plan's packs and holds its final record until the last
    table has played out, as a real tournament must. Time is simulated, so a table
    takes seconds; the same plan, secret, bots and seed give the same logs. Each
    seat's client keeps the table's receipt for every submission in
    table-T.seatN.receipts.jsonl beside its log, unless told not to (--no-receipts).
    Exit 0 when every table was played; 2 on bad usage, a plan that does not check,
    a secret that does not open it, or a log or receipts file that exists.
    """
    if passphrase_file is not None and ask_passphrase:
        raise click.UsageError("give --passphrase-file or --ask-passphrase, not both")
    run = SimulateRun(
        plan_file=plan_file,
        secret=secret,
        signing_key=functools.partial(
            private_key_from, signing_key, passphrase_file, ask_passphrase, "--signing-key"
        ),
        table_pub=public_key_hint(signing_key),
        bots=bots,
        seed=seed,
        out=out,
        receipts=receipts,
    )
    reporter = tournament_reporter_named("json" if as_json else "text", verbosity(), echo)
    try:
        with usage_problems():
            run_simulate(run, reporter)
    except SimulationUnwritable as error:
        click.echo(str(error), err=True)
        raise SystemExit(ExitCode.UNUSABLE) from error
