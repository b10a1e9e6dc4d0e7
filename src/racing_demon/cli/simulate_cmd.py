"""``racing-demon simulate``: computer players play a whole match and sign its log."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
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
from racing_demon.cli.output import OutputWriter, checked_output
from racing_demon.files import STDOUT
from racing_demon.game.rules import MAX_HANDS, Rules
from racing_demon.game.scoring import Match
from racing_demon.log.keys import KeyFileError, load_private_key
from racing_demon.outcomes import ExitCode
from racing_demon.printing import printable
from racing_demon.profiles import (
    BUILT_IN,
    CUSTOM_SUFFIX,
    builtin_named,
    custom_variant,
    differences_from_builtin,
    rules_from_document,
)
from racing_demon.report.simulation import simulation_document, summary_text
from racing_demon.sim.bots import BOTS, BotProfile
from racing_demon.sim.simulate import (
    TICK_MS,
    Latency,
    Simulation,
    SimulationSeed,
    receipt_paths,
    simulate,
)
from racing_demon.wording import plural

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
    receipts: bool,
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
    if len(bots) == 1:
        bots *= players
    if len(bots) != players:
        raise click.BadParameter(
            f"{plural(len(bots), 'bot')} for {plural(players, 'player')}: name one speed per "
            "seat, or one for all",
            param_hint="--bots",
        )
    if latencies is not None and len(latencies) == 1:
        latencies *= players
    if latencies is not None and len(latencies) != players:
        raise click.BadParameter(
            f"{plural(len(latencies), 'latency', 'latencies')} for {plural(players, 'player')}",
            param_hint="--latency",
        )
    if not rules.min_players <= players <= rules.max_players:
        raise click.BadParameter(
            f"profile {rules.name!r} is for {rules.min_players} to {rules.max_players} players",
            param_hint="--players",
        )
    if rules.name in BUILT_IN and builtin_named(rules) is None:
        # The table refuses to write such a genesis (RESERVED_RULES_NAME): say so up front.
        changed = "; ".join(differences_from_builtin(rules) or ())
        raise click.BadParameter(
            f"the rules are named like the built-in profile {rules.name!r} but are not it "
            f"({changed}): a built-in name is reserved for that very profile; name them "
            f"{rules.name + CUSTOM_SUFFIX!r}",
            param_hint="--rules",
        )
    if hands is not None:
        rules = _with_max_hands(rules, hands)
    if out == STDOUT and as_json:
        raise click.UsageError(
            "--out - writes the log to standard output, where --json would print its "
            "document too: give --out FILE with --json"
        )
    receipts_asked = (
        click.get_current_context().get_parameter_source("receipts")
        is click.core.ParameterSource.COMMANDLINE
    )
    if out == STDOUT and receipts and receipts_asked:
        raise click.BadParameter(
            "--receipts keeps files beside LOG, and --out - has none: give --out FILE, "
            "or --no-receipts",
            param_hint="--out",
        )
    log = Path(out)
    if out != STDOUT:
        for output in (log, *(receipt_paths(log, players) if receipts else ())):
            if output.exists() or output.is_symlink():
                raise click.BadParameter(
                    f"{printable(str(output))} exists: a log or receipts file is never "
                    "overwritten; choose another path",
                    param_hint="--out",
                )
    key = private_key_from(signing_key, passphrase_file, ask_passphrase, "--signing-key")
    seat_keys = (
        None if player_keys is None else _seat_keys(player_keys, players, player_passphrase_file)
    )

    def play(log: Path, *, keep_receipts: bool) -> Simulation:
        with _progress(rules) as on_hand:
            return simulate(
                log,
                rules,
                bots,
                seed,
                key,
                player_keys=seat_keys,
                latencies=latencies,
                tick_ms=tick_ms,
                durable=durable,
                on_hand=on_hand,
                receipts=keep_receipts,
            )

    if out == STDOUT:
        _simulate_to_stdout(play, public_key_hint(signing_key))
        return
    try:
        result = play(log, keep_receipts=receipts)
    except FileExistsError as error:
        shown = printable(str(error.filename or log))
        raise click.BadParameter(
            f"{shown} exists: a log or receipts file is never overwritten",
            param_hint="--out",
        ) from error
    except OSError as error:
        click.echo(f"cannot write {printable(out)}: {error.strerror}", err=True)
        raise SystemExit(ExitCode.UNUSABLE) from error
    if as_json:
        document = simulation_document(result, public_key_hint(signing_key))
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    click.echo(summary_text(result, public_key_hint(signing_key)))


def _simulate_to_stdout(play: Callable[..., Simulation], public_key: str) -> None:
    """``--out -``: the match is played into a file of a fresh temporary folder (the table
    writes, flushes and rereads a real file), then copied to standard output, so a match
    that fails writes nothing there. The summary goes to standard error, out of the log's
    way; receipts would have no LOG to sit beside."""
    with contextlib.ExitStack() as stack:
        # Only the temporary file's errors here: standard output's are the writer's.
        try:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="racing-demon-"))
            log = Path(folder, "simulated.jsonl")
            result = play(log, keep_receipts=False)
        except OSError as error:
            why = error.strerror or str(error)
            click.echo(f"cannot write the temporary log of --out -: {why}", err=True)
            raise SystemExit(ExitCode.UNUSABLE) from error
        with (
            OutputWriter(
                checked_output(STDOUT, replace=False, inputs=(), param_hint="--out"), "--out"
            ) as writer,
            log.open("rb") as stream,
        ):
            while chunk := stream.read(_COPY_CHUNK):
                writer.write(chunk)
    shown = dataclasses.replace(result, path=Path(STDOUT))  # piped on: `verify -` reads it
    click.echo(summary_text(shown, public_key), err=True)


_COPY_CHUNK = 1024 * 1024


def _with_max_hands(rules: Rules, hands: int) -> Rules:
    """The profile as a variant whose match ends after ``hands`` hands at most: a built-in
    profile so altered is no longer that profile, and is named ``<name>-custom``."""
    document = rules.to_document()
    document["match"]["max_hands"] = hands  # --hands has the schema's range: it validates
    return custom_variant(rules_from_document(document))


def _seat_keys(
    directory: Path, players: int, passphrase_file: Path | None
) -> list[Ed25519PrivateKey]:
    """``DIR/seat0.key`` … one private key per seat."""
    passphrase = None if passphrase_file is None else read_passphrase(passphrase_file)
    keys = []
    for seat in range(players):
        path = directory / f"seat{seat}.key"
        try:
            keys.append(load_private_key(path, passphrase))
        except KeyFileError as error:
            make = f"racing-demon keygen seat{seat} --dir {directory}"
            hint = f" (make it with: {make})" if not path.exists() else ""
            raise click.BadParameter(f"{error}{hint}", param_hint="--player-keys") from error
    return keys


def public_key_hint(private: Path) -> str:
    public = private.with_suffix(".pub")
    return str(public) if private.suffix == ".key" and public.exists() else "TABLE.pub"


_PROGRESS_STEPS = 1000


@contextlib.contextmanager
def _progress(rules: Rules) -> Iterator[Callable[[Match], None] | None]:
    """A progress bar on standard error, only if it is a terminal: the leader's total
    towards the target, or the hands towards the limit, whichever is further."""
    if not sys.stderr.isatty():
        yield None
        return
    with click.progressbar(length=_PROGRESS_STEPS, label="simulating", file=sys.stderr) as bar:
        shown = 0

        def on_hand(match: Match) -> None:
            nonlocal shown
            done = 0.0
            if rules.target is not None:
                done = max(0, max(match.totals)) / rules.target
            if rules.max_hands is not None:
                done = max(done, match.played / rules.max_hands)
            step = min(_PROGRESS_STEPS, round(done * _PROGRESS_STEPS))
            if step > shown:
                bar.update(step - shown)
                shown = step

        yield on_hand
