"""A simulated duplicate tournament: bots play every table of a plan, and the organiser
reveals the secret once every table has played out (docs/tournament.md).

Each table is one ``simulate`` run with the plan's tag, so it deals the plan's packs and
holds its final record; only when the last table has played does ``reveal_held`` write
every final record, as a real organiser must (revealing earlier would show the players
still playing every pack). The same plan, secret, bots and seed give the same logs.

``run_simulate`` is ``racing-demon tournament simulate`` for any caller, without click
(issue 30, point 2): it checks the plan, the bots and the outputs before any table plays,
and tells its reporter (``racing_demon.report.tournament``) of each table and the whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.deal import check_reveal
from racing_demon.printing import printable
from racing_demon.sim.bots import BotProfile
from racing_demon.sim.run import SimulationUnwritable
from racing_demon.sim.simulate import NAMES, Simulation, receipt_paths, reveal_held, simulate
from racing_demon.tournament.outputs import TournamentUsageError
from racing_demon.tournament.plan import Plan, PlanError, check_plan, load_plan


@dataclass(frozen=True, slots=True)
class TournamentSimulation:
    """Every table's simulation, in table order, and where its log is."""

    plan: Plan
    tables: tuple[Simulation, ...]

    @property
    def logs(self) -> tuple[Path, ...]:
        return tuple(table.path for table in self.tables)


def table_log(folder: Path, plan: Plan, table: int) -> Path:
    """Where table ``table``'s log goes: ``table-07.jsonl``, numbered to sort naturally."""
    width = len(str(plan.shape.tables))
    return folder / f"table-{table:0{width}d}.jsonl"


def seat_names(plan: Plan, table: int, bots: Sequence[BotProfile]) -> tuple[str, ...]:
    """Names that tell every player of the tournament apart: the simulation's names in
    turn, numbered once they run out, and the bot's speed."""
    seats = plan.shape.seats
    names = []
    for seat, bot in enumerate(bots):
        number = (table - 1) * seats + seat
        round_, index = divmod(number, len(NAMES))
        name = NAMES[index] if round_ == 0 else f"{NAMES[index]} {round_ + 1}"
        names.append(f"{name} ({bot.name})")
    return tuple(names)


def simulate_tournament(
    folder: Path,
    plan: Plan,
    secret: bytes,
    bots: Sequence[BotProfile],
    seed: str,
    table_key: Ed25519PrivateKey,
    *,
    player_keys: Sequence[Sequence[Ed25519PrivateKey]] | None = None,
    on_table: Callable[[Simulation], None] | None = None,
    receipts: bool = True,
) -> TournamentSimulation:
    """Play every table of ``plan`` with bots, logging to ``folder`` (``table_log``).

    ``bots`` gives each seat's speed: ``seats`` of them for every table alike, or
    ``tables * seats`` table by table. Table ``t``'s bots draw from the simulation seed
    ``"<seed> table <t>"``. With ``player_keys`` (per table, per seat) every seat signs.
    ``on_table`` sees each table once it has played out. With ``receipts`` each seat's
    client keeps its table's receipts beside the log, as ``simulate``'s do
    (``receipt_paths``), so every table can be audited with them. ``folder`` is made if
    missing. Raises ValueError for inputs that do not fit (a secret that does not open the
    plan's commitment, say) and FileExistsError before anything is written if a log or a
    receipts file exists.
    """
    shape = plan.shape
    if not check_reveal(secret, plan.commitment):
        raise ValueError("the secret does not open the plan's commitment")
    if len(bots) not in (shape.seats, shape.tables * shape.seats):
        raise ValueError(
            f"give {shape.seats} bots (every table alike) or {shape.tables * shape.seats} "
            f"(table by table), not {len(bots)}"
        )
    if player_keys is not None and (
        len(player_keys) != shape.tables or any(len(keys) != shape.seats for keys in player_keys)
    ):
        raise ValueError(f"player keys: {shape.seats} for each of {shape.tables} tables")
    logs = [table_log(folder, plan, table) for table in range(1, shape.tables + 1)]
    outputs = [
        output
        for log in logs
        for output in (log, *(receipt_paths(log, shape.seats) if receipts else ()))
    ]
    existing = [output for output in outputs if output.exists() or output.is_symlink()]
    if existing:
        raise FileExistsError(f"{existing[0]} exists: a log or receipts file is never overwritten")
    folder.mkdir(parents=True, exist_ok=True)
    played = []
    for table, log in enumerate(logs, 1):
        start = (table - 1) * shape.seats % len(bots)
        table_bots = tuple(bots[start : start + shape.seats])
        keys = None if player_keys is None else player_keys[table - 1]
        simulation = simulate(
            log,
            plan.rules,
            table_bots,
            f"{seed} table {table}",
            table_key,
            player_keys=keys,
            receipts=receipts,
            tournament=plan.tag(table),
            dealer_secret=secret,
            names=seat_names(plan, table, table_bots),
        )
        played.append(simulation)
        if on_table is not None:
            on_table(simulation)
    # Every table has played out: only now may the secret be revealed.
    for table, simulation in enumerate(played, 1):
        if simulation.held:
            keys = None if player_keys is None else player_keys[table - 1]
            reveal_held(simulation.path, table_key, secret, player_keys=keys)
    return TournamentSimulation(plan, tuple(played))


@dataclass(frozen=True, kw_only=True)
class SimulateRun:
    """``tournament simulate``'s settings. ``signing_key`` (the table's) is asked for
    only once the plan, the bots and the outputs check; ``table_pub`` is how the report
    names its public key, for the command that scores the logs."""

    plan_file: Path
    secret: bytes
    signing_key: Callable[[], Ed25519PrivateKey]
    table_pub: str
    bots: Sequence[BotProfile]  # one for every seat, one per seat, or one per seat of each table
    seed: str
    out: Path
    receipts: bool = True


class SimulationReporter(Protocol):
    """What ``run_simulate`` prints: ``racing_demon.report.tournament`` has the text and
    JSON ones."""

    def table_played(self, simulation: Simulation) -> None:
        """Each table, once it has played out."""

    def simulated(self, run: SimulateRun, played: TournamentSimulation) -> None:
        """Every table, once the secret is revealed in each."""


def run_simulate(run: SimulateRun, reporter: SimulationReporter) -> TournamentSimulation:
    """Play every table of the plan in ``run.plan_file`` with ``run.bots``, report each and
    the whole, and return them. Raises TournamentUsageError before any table plays (a plan
    that does not check or that the secret does not open, bots that do not fit it, a log
    or receipts file that exists), SimulationUnwritable when a log cannot be written."""
    try:
        plan = load_plan(run.plan_file)
        check_plan(plan, run.secret)
    except PlanError as error:
        raise TournamentUsageError(f"{run.plan_file}: {error}", "PLAN") from error
    shape = plan.shape
    bots = tuple(run.bots) * shape.seats if len(run.bots) == 1 else tuple(run.bots)
    if len(bots) not in (shape.seats, shape.tables * shape.seats):
        raise TournamentUsageError(
            f"{len(bots)} bots: name one speed for all, one per seat ({shape.seats}), "
            f"or one per seat of every table ({shape.tables * shape.seats})",
            "--bots",
        )
    for table in range(1, shape.tables + 1):
        log = table_log(run.out, plan, table)
        for output in (log, *(receipt_paths(log, shape.seats) if run.receipts else ())):
            if output.exists() or output.is_symlink():
                raise TournamentUsageError(
                    f"{output} exists: a log or receipts file is never overwritten; "
                    "choose another folder",
                    "--out",
                )
    key = run.signing_key()
    try:
        played = simulate_tournament(
            run.out,
            plan,
            run.secret,
            bots,
            run.seed,
            key,
            on_table=reporter.table_played,
            receipts=run.receipts,
        )
    except OSError as error:
        shown = printable(str(run.out))
        raise SimulationUnwritable(f"cannot write to {shown}: {error.strerror}") from error
    reporter.simulated(run, played)
    return played
