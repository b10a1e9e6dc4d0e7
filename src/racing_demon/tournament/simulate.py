"""A simulated duplicate tournament: bots play every table of a plan, and the organiser
reveals the secret once every table has played out (docs/tournament.md).

Each table is one ``simulate`` run with the plan's tag, so it deals the plan's packs and
holds its final record; only when the last table has played does ``reveal_held`` write
every final record, as a real organiser must (revealing earlier would show the players
still playing every pack). The same plan, secret, bots and seed give the same logs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.deal import check_reveal
from racing_demon.sim.bots import BotProfile
from racing_demon.sim.simulate import NAMES, Simulation, receipt_paths, reveal_held, simulate
from racing_demon.tournament.plan import Plan


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
