"""``racing-demon simulate``: computer players play a whole match and sign its log; the
use case is ``racing_demon.sim.run.run_simulation``."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import click
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.cli.options import (
    json_option,
    plain_seed,
    private_key_from,
    read_passphrase,
    rules_option,
    signing_key_option,
)
from racing_demon.cli.progress import simulation_progress
from racing_demon.cli.use_cases import echo, usage_problems
from racing_demon.game.rules import MAX_HANDS, Rules
from racing_demon.outcomes import ExitCode
from racing_demon.report.simulation import simulation_reporter_named
from racing_demon.sim.bots import BOTS, BotProfile
from racing_demon.sim.run import (
    SimulationRun,
    SimulationUnwritable,
    run_simulation,
    seat_keys,
)
from racing_demon.sim.run import public_key_hint as public_key_hint  # tournament simulate's too
from racing_demon.sim.simulate import TICK_MS, Latency, SimulationSeed

_LATENCY = re.compile(r"([0-9]{1,5})(?:/([0-9]{1,5}))?")


def bots_of(ctx: click.Context, param: click.Parameter, value: str) -> tuple[BotProfile, ...]:
    names = value.split(",")
    unknown = [name for name in names if name not in BOTS]
    if unknown:
        raise click.BadParameter(
            f"unknown bot {unknown[0]!r}: choose from {', '.join(BOTS)}", ctx, param
        )
    return tuple(BOTS[name] for name in names)


def simulation_seed(ctx: click.Context, param: click.Parameter, value: str) -> str:
    plain_seed(ctx, param, value)
    try:
        SimulationSeed.from_text(value)
    except ValueError as error:
        raise click.BadParameter(str(error), ctx, param) from error
    return value


def _latencies(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> tuple[Latency, ...] | None:
    if value is None:
        return None
    latencies = []
    for part in value.split(","):
        match = _LATENCY.fullmatch(part)
        if match is None:
            raise click.BadParameter(
                f"expected MEAN or MEAN/JITTER in ms, such as 40 or 40/10, got {part!r}", ctx, param
            )
        mean = int(match[1])
        jitter = mean // 4 if match[2] is None else int(match[2])
        if jitter > mean:
            raise click.BadParameter(f"jitter {jitter} ms is above the mean {mean} ms", ctx, param)
        latencies.append(Latency(mean, jitter))
    return tuple(latencies)


def _given(ctx: click.Context, param: click.Parameter, value: bool) -> bool | None:
    """The value given on the command line, or None for the default: the use case keeps
    receipts beside a LOG by default, and refuses --receipts with --out -."""
    given = ctx.get_parameter_source(param.name or "") is click.core.ParameterSource.COMMANDLINE
    return value if given else None


@click.command(
    short_help="Bots play a whole match; write its signed log.",
    epilog="""\b
Examples:
  racing-demon keygen table
  racing-demon simulate --players 3 --bots easy,normal,hard --seed demo \\
      --signing-key table.key --out demo.jsonl
  racing-demon verify demo.jsonl --table-key table.pub
  racing-demon simulate --players 2 --seed demo --signing-key table.key \\
      --out - | racing-demon verify - --table-key table.pub
\b
  mkdir keys
  for seat in 0 1 2 3; do racing-demon keygen seat$seat --dir keys; done
  racing-demon simulate --rules nertz --players 4 --bots hard --seed cup \\
      --signing-key table.key --player-keys keys --hands 3 --out cup.jsonl
""",
)
@rules_option
@click.option(
    "--players",
    type=click.IntRange(2, 16),
    required=True,
    help="Seats at the table, as the profile allows (table: 2 to 8; peer2peer, nertz: 2 to 4).",
)
@click.option(
    "--bots",
    "bots",
    default="normal",
    show_default=True,
    metavar="SPEED[,SPEED...]",
    callback=bots_of,
    help="easy, normal or hard for each seat in order; one speed for every seat.",
)
@click.option(
    "--seed",
    required=True,
    callback=simulation_seed,
    help="The simulation seed: it derives the deals, the dealer secret and every bot's choice.",
)
@signing_key_option(
    "The table's private key file (NAME.key, as keygen writes it): it signs the log."
)
@click.option(
    "--passphrase-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Decrypt the table key with the passphrase in FILE (a final newline is not part of it).",
)
@click.option("--ask-passphrase", is_flag=True, help="Decrypt the table key; prompt for it.")
@click.option(
    "--player-keys",
    metavar="DIR",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Seats sign their moves with DIR/seat0.key, DIR/seat1.key, ... (keygen seatN --dir DIR).",
)
@click.option(
    "--player-passphrase-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Decrypt every seat's key with the passphrase in FILE.",
)
@click.option(
    "--hands",
    type=click.IntRange(1, MAX_HANDS),
    help="End the match after N hands at most (the profile's max_hands, as a variant).",
)
@click.option(
    "--latency",
    "latencies",
    metavar="MS[,MS...]",
    callback=_latencies,
    help="One-way network latency per seat, MEAN or MEAN/JITTER in ms (default: drawn from "
    "the seed, 20 to 120 ms, jitter a quarter of it); one value for every seat.",
)
@click.option(
    "--tick",
    "tick_ms",
    type=click.IntRange(1, 1000),
    default=TICK_MS,
    show_default=True,
    metavar="MS",
    help="The table takes what arrived each MS ms: cards landing in one tick are simultaneous.",
)
@click.option("--durable", is_flag=True, help="fsync every record, as a real table does (slower).")
@click.option(
    "--receipts/--no-receipts",
    default=True,
    show_default=True,
    callback=_given,
    help="Keep each seat's receipts beside LOG, as its client would: "
    "LOG-STEM.seatN.receipts.jsonl (check them with audit --receipts).",
)
@click.option(
    "--out",
    required=True,
    metavar="LOG",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="The signed log to write; never overwritten. - writes it to standard output once "
    "the match is played (and the summary to standard error), with no receipts.",
)
@json_option
def simulate_command(
    rules: Rules,
    players: int,
    bots: tuple[BotProfile, ...],
    seed: str,
    signing_key: Path,
    passphrase_file: Path | None,
    ask_passphrase: bool,
    player_keys: Path | None,
    player_passphrase_file: Path | None,
    hands: int | None,
    latencies: tuple[Latency, ...] | None,
    tick_ms: int,
    durable: bool,
    receipts: bool | None,
    out: str,
    as_json: bool,
) -> None:
    """Play a whole match between computer players and write its signed log to LOG.

    Each bot acts on its own clock (easy about every 2 s, normal a little faster, hard about
    every 0.7 s) and sends its moves over a simulated network to a real table, so bots race
    for the same foundations and the later card is bounced. Time is simulated, not waited
    for: a match to 100 takes seconds. The same seed, bots and keys give the same log, byte
    for byte; anyone who knows the seed can predict the deals, so never use it for real play
    (racing-demon docs simulation).

    Prints a summary at the end: scores per hand, totals, winners, bounces, ties, stall
    shifts and blocked hands. Each seat's client keeps the table's receipt for every
    submission in LOG-STEM.seatN.receipts.jsonl beside LOG, unless told not to
    (--no-receipts). Exit 0 when the match was played; 2 on bad usage, unreadable keys,
    or an existing LOG or receipts file.
    """
    if passphrase_file is not None and ask_passphrase:
        raise click.UsageError("give --passphrase-file or --ask-passphrase, not both")
    run = SimulationRun(
        rules=rules,
        players=players,
        bots=bots,
        seed=seed,
        table_key=lambda: private_key_from(
            signing_key, passphrase_file, ask_passphrase, "--signing-key"
        ),
        public_key=public_key_hint(signing_key),
        player_keys=_seat_keys_in(player_keys, player_passphrase_file),
        hands=hands,
        latencies=latencies,
        tick_ms=tick_ms,
        durable=durable,
        receipts=receipts,
        out=out,
    )
    reporter = simulation_reporter_named("json" if as_json else "text", echo)
    try:
        with usage_problems():
            run_simulation(run, reporter, progress=simulation_progress)
    except SimulationUnwritable as error:
        click.echo(str(error), err=True)
        raise SystemExit(ExitCode.UNUSABLE) from error


def _seat_keys_in(
    directory: Path | None, passphrase_file: Path | None
) -> Callable[[int], list[Ed25519PrivateKey]] | None:
    """``--player-keys DIR``: the seats' keys, read when the use case asks for them."""
    if directory is None:
        return None

    def keys(players: int) -> list[Ed25519PrivateKey]:
        passphrase = None if passphrase_file is None else read_passphrase(passphrase_file)
        return seat_keys(directory, players, passphrase)

    return keys
