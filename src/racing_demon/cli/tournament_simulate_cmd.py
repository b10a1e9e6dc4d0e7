"""``racing-demon tournament simulate``: bots play every table of a plan, then the
organiser's secret is revealed in every table's final record (docs/tournament.md)."""

from __future__ import annotations

import json
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
from racing_demon.files import shown_name
from racing_demon.outcomes import ExitCode
from racing_demon.printing import printable
from racing_demon.report.simulation import simulated_table
from racing_demon.sim.bots import BotProfile
from racing_demon.sim.simulate import Simulation, receipt_paths
from racing_demon.tournament.plan import PlanError, check_plan, load_plan
from racing_demon.tournament.simulate import simulate_tournament, table_log
from racing_demon.wording import plural

TOURNAMENT_SIMULATION_FORMAT = "racing-demon/tournament-simulation-report/v1"


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
    try:
        plan = load_plan(plan_file)
        check_plan(plan, secret)
    except PlanError as error:
        raise click.BadParameter(
            f"{printable(str(plan_file))}: {printable(str(error))}", param_hint="PLAN"
        ) from error
    shape = plan.shape
    if len(bots) == 1:
        bots *= shape.seats
    if len(bots) not in (shape.seats, shape.tables * shape.seats):
        raise click.BadParameter(
            f"{len(bots)} bots: name one speed for all, one per seat ({shape.seats}), "
            f"or one per seat of every table ({shape.tables * shape.seats})",
            param_hint="--bots",
        )
    for table in range(1, shape.tables + 1):
        log = table_log(out, plan, table)
        for output in (log, *(receipt_paths(log, shape.seats) if receipts else ())):
            if output.exists() or output.is_symlink():
                raise click.BadParameter(
                    f"{printable(str(output))} exists: a log or receipts file is never "
                    "overwritten; choose another folder",
                    param_hint="--out",
                )
    key = private_key_from(signing_key, passphrase_file, ask_passphrase, "--signing-key")
    # With --json, each table's line is progress on standard error; the document follows.
    on_table = _progress_table if as_json else _report_table
    try:
        played = simulate_tournament(
            out, plan, secret, bots, seed, key, on_table=on_table, receipts=receipts
        )
    except OSError as error:
        click.echo(f"cannot write to {printable(str(out))}: {error.strerror}", err=True)
        raise SystemExit(ExitCode.UNUSABLE) from error
    if as_json:
        document = {
            "format": TOURNAMENT_SIMULATION_FORMAT,
            "plan_file": shown_name(plan_file),
            "plan": plan.digest,
            "out": shown_name(out),
            "table_key": shown_name(public_key_hint(signing_key)),
            "tables": [
                {
                    "table": number,
                    **simulated_table(table),
                    "receipts": [shown_name(path) for path in table.receipts],
                }
                for number, table in enumerate(played.tables, start=1)
            ],
        }
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    if receipts:  # their names follow the logs': docs/tournament.md
        click.echo(
            "kept each seat's receipts beside its table's log "
            "(table-T.seatN.receipts.jsonl: audit LOG --receipts ...)"
        )
    click.echo(
        f"revealed the secret in every table's final record; score with:\n"
        f"  racing-demon tournament score {printable(str(plan_file))} {printable(str(out))} "
        f"--table-key {printable(public_key_hint(signing_key))}"
    )


def _report_table(simulation: Simulation, *, err: bool = False) -> None:
    totals = " ".join(f"{total:>5}" for total in simulation.match.totals)
    click.echo(
        f"{printable(simulation.path.name):<16} {plural(simulation.match.played, 'hand')}, "
        f"totals {totals}, {plural(simulation.tally.submissions, 'submission')}",
        err=err,
    )


def _progress_table(simulation: Simulation) -> None:
    _report_table(simulation, err=True)
