"""The simulation use case: ``run_simulation`` does what ``racing-demon simulate`` does,
for any caller (the command line, a server), without click.

One call checks the run's settings against each other and the profile, refuses an output
that exists before any key is asked for, plays the match (``simulate.simulate``) into
LOG, or into a temporary file copied to standard output for ``-``, and hands the result
to a ``SimulationReporter``. The reporter (text or JSON, chosen by name in
``racing_demon.report.simulation``) decides every word printed; this module decides what
is played and written.

What the caller gets wrong is a ``SimulationUsageError`` (the command line's exit 2,
naming the option when there is one); a LOG that cannot be written is a
``SimulationUnwritable`` (exit 2), standard output that cannot be a ``files.WriteFailed``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.errors import RacingDemonError
from racing_demon.files import STDOUT, Output, OutputWriter
from racing_demon.game.rules import MAX_HANDS, Rules
from racing_demon.game.scoring import Match
from racing_demon.log.keys import KeyFileError, load_private_key
from racing_demon.printing import printable
from racing_demon.profiles import (
    BUILT_IN,
    CUSTOM_SUFFIX,
    builtin_named,
    custom_variant,
    differences_from_builtin,
    rules_from_document,
)
from racing_demon.sim.bots import BotProfile
from racing_demon.sim.simulate import TICK_MS, Latency, Simulation, receipt_paths, simulate
from racing_demon.usage import UsageProblem
from racing_demon.wording import plural

_OUT_OPTION = "--out"
_COPY_CHUNK = 1024 * 1024


class SimulationUsageError(UsageProblem):
    """A run whose settings do not fit each other or the profile, or whose output exists:
    nothing was played."""


class SimulationUnwritable(RacingDemonError):
    """A log or its receipts (a tournament's table's too), or the temporary file a log for
    standard output is played into, could not be written: the message names it (the
    command line's exit 2)."""


@dataclass(frozen=True, kw_only=True)
class SimulationRun:
    """What to play and where to write it: ``racing-demon simulate``'s options but the
    reporter's."""

    rules: Rules
    players: int
    bots: Sequence[BotProfile]  # one per seat, or one for every seat
    seed: str  # the simulation seed (``SimulationSeed``)
    # The table's private key, asked for only once the run is checked and its outputs are
    # free (the command line may prompt for its passphrase); a caller holding the key
    # gives ``lambda: key``.
    table_key: Callable[[], Ed25519PrivateKey]
    public_key: str = "TABLE.pub"  # how the summary names the table's public key
    # Each seat's private key, given the number of seats, asked for after the table's;
    # None: the seats sign nothing.
    player_keys: Callable[[int], Sequence[Ed25519PrivateKey]] | None = None
    hands: int | None = None  # end the match after this many hands at most
    latencies: Sequence[Latency] | None = None  # one per seat, or one for every seat
    tick_ms: int = TICK_MS
    durable: bool = False
    # Keep each seat's receipts beside LOG; None: yes, but none for standard output.
    receipts: bool | None = None
    out: str  # LOG, or "-" for standard output


class SimulationReporter(Protocol):
    """What a run prints: ``racing_demon.report.simulation`` has the text and JSON ones."""

    @property
    def whole_document(self) -> bool:
        """Whether it prints a document on standard output (which ``--out -`` would spoil)."""

    def played(self, result: Simulation, public_key: str, *, to_stderr: bool) -> None:
        """The match played, once its log is written; on standard error when the log went
        to standard output."""


# A context that shows progress and gives what to call after each hand with how much of
# the match is played (0 to 1), or None.
Progress = Callable[[], AbstractContextManager[Callable[[float], None] | None]]


def run_simulation(
    run: SimulationRun, reporter: SimulationReporter, *, progress: Progress | None = None
) -> Simulation:
    """Play the match ``run`` describes, write its log (and receipts), report it to
    ``reporter``, and return it: every failure raises (the command line exits 0 when
    none did).

    Raises SimulationUsageError before anything is played (and before any key is asked
    for) when the settings do not fit or an output exists; SimulationUnwritable when the
    log cannot be written; WriteFailed when standard output cannot. The key sources'
    own errors pass through.
    """
    bots, latencies, rules = _checked(run, reporter)
    receipts = run.receipts is not False
    log = Path(run.out)
    if run.out != STDOUT:
        _refuse_existing((log, *(receipt_paths(log, run.players) if receipts else ())))
    key = run.table_key()
    seat_keys = None if run.player_keys is None else run.player_keys(run.players)

    def play(log: Path, *, keep_receipts: bool) -> Simulation:
        with contextlib.nullcontext() if progress is None else progress() as advance:
            return simulate(
                log,
                rules,
                bots,
                run.seed,
                key,
                player_keys=seat_keys,
                latencies=latencies,
                tick_ms=run.tick_ms,
                durable=run.durable,
                on_hand=None if advance is None else lambda match: advance(share(rules, match)),
                receipts=keep_receipts,
            )

    if run.out == STDOUT:
        result = _played_to_stdout(play)
        reporter.played(result, run.public_key, to_stderr=True)
        return result
    try:
        result = play(log, keep_receipts=receipts)
    except FileExistsError as error:
        shown = printable(str(error.filename or log))
        raise SimulationUsageError(
            f"{shown} exists: a log or receipts file is never overwritten", _OUT_OPTION
        ) from error
    except OSError as error:
        raise SimulationUnwritable(
            f"cannot write {printable(run.out)}: {error.strerror}"
        ) from error
    reporter.played(result, run.public_key, to_stderr=False)
    return result


def _checked(
    run: SimulationRun, reporter: SimulationReporter
) -> tuple[Sequence[BotProfile], Sequence[Latency] | None, Rules]:
    """The bots and latencies, one per seat, and the rules to play (``--hands`` made a
    variant of them); SimulationUsageError for settings that do not fit."""
    players, rules = run.players, run.rules
    bots = tuple(run.bots) * players if len(run.bots) == 1 else run.bots
    if len(bots) != players:
        raise SimulationUsageError(
            f"{plural(len(bots), 'bot')} for {plural(players, 'player')}: name one speed per "
            "seat, or one for all",
            "--bots",
        )
    latencies = run.latencies
    if latencies is not None and len(latencies) == 1:
        latencies = tuple(latencies) * players
    if latencies is not None and len(latencies) != players:
        raise SimulationUsageError(
            f"{plural(len(latencies), 'latency', 'latencies')} for {plural(players, 'player')}",
            "--latency",
        )
    if not rules.min_players <= players <= rules.max_players:
        raise SimulationUsageError(
            f"profile {rules.name!r} is for {rules.min_players} to {rules.max_players} players",
            "--players",
        )
    if rules.name in BUILT_IN and builtin_named(rules) is None:
        # The table refuses to write such a genesis (RESERVED_RULES_NAME): say so up front.
        changed = "; ".join(differences_from_builtin(rules) or ())
        raise SimulationUsageError(
            f"the rules are named like the built-in profile {rules.name!r} but are not it "
            f"({changed}): a built-in name is reserved for that very profile; name them "
            f"{rules.name + CUSTOM_SUFFIX!r}",
            "--rules",
        )
    if run.hands is not None and not 1 <= run.hands <= MAX_HANDS:
        raise SimulationUsageError(
            f"a match has 1 to {MAX_HANDS} hands, not {run.hands}", "--hands"
        )
    if run.hands is not None:
        rules = _with_max_hands(rules, run.hands)
    if run.out == STDOUT and reporter.whole_document:
        raise SimulationUsageError(
            "--out - writes the log to standard output, where --json would print its "
            "document too: give --out FILE with --json"
        )
    if run.out == STDOUT and run.receipts:
        raise SimulationUsageError(
            "--receipts keeps files beside LOG, and --out - has none: give --out FILE, "
            "or --no-receipts",
            _OUT_OPTION,
        )
    return bots, latencies, rules


def _refuse_existing(outputs: Sequence[Path]) -> None:
    for output in outputs:
        if output.exists() or output.is_symlink():
            raise SimulationUsageError(
                f"{printable(str(output))} exists: a log or receipts file is never "
                "overwritten; choose another path",
                _OUT_OPTION,
            )


def _played_to_stdout(play: Callable[..., Simulation]) -> Simulation:
    """``--out -``: the match is played into a file of a fresh temporary folder (the table
    writes, flushes and rereads a real file), then copied to standard output, so a match
    that fails writes nothing there; receipts would have no LOG to sit beside. The result
    names the log ``-``: piped on, ``verify -`` reads it."""
    with contextlib.ExitStack() as stack:
        # Only the temporary file's errors here: standard output's are the writer's.
        try:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="racing-demon-"))
            log = Path(folder, "simulated.jsonl")
            result = play(log, keep_receipts=False)
        except OSError as error:
            why = error.strerror or str(error)
            raise SimulationUnwritable(
                f"cannot write the temporary log of --out -: {why}"
            ) from error
        with OutputWriter(Output.named(STDOUT), _OUT_OPTION) as writer, log.open("rb") as stream:
            while chunk := stream.read(_COPY_CHUNK):
                writer.write(chunk)
    return dataclasses.replace(result, path=Path(STDOUT))


def share(rules: Rules, match: Match) -> float:
    """How much of the match is played, from 0 to 1: the leader's total towards the
    target, or the hands towards the limit, whichever is further."""
    done = 0.0
    if rules.target is not None:
        done = max(0, max(match.totals)) / rules.target
    if rules.max_hands is not None:
        done = max(done, match.played / rules.max_hands)
    return done


def _with_max_hands(rules: Rules, hands: int) -> Rules:
    """The profile as a variant whose match ends after ``hands`` hands at most: a built-in
    profile so altered is no longer that profile, and is named ``<name>-custom``."""
    document = rules.to_document()
    document["match"]["max_hands"] = hands  # checked against the schema's range: it validates
    return custom_variant(rules_from_document(document))


def seat_keys(
    directory: Path, players: int, passphrase: bytes | None = None
) -> list[Ed25519PrivateKey]:
    """``DIR/seat0.key`` … one private key per seat (``keygen seatN --dir DIR``);
    SimulationUsageError naming a missing one and how to make it."""
    keys = []
    for seat in range(players):
        path = directory / f"seat{seat}.key"
        try:
            keys.append(load_private_key(path, passphrase))
        except KeyFileError as error:
            make = f"racing-demon keygen seat{seat} --dir {directory}"
            hint = f" (make it with: {make})" if not path.exists() else ""
            raise SimulationUsageError(f"{error}{hint}", "--player-keys") from error
    return keys


def public_key_hint(private: Path) -> str:
    """How to name the table's public key in the summary: NAME.pub beside the NAME.key
    that signs, when it is there."""
    public = private.with_suffix(".pub")
    return str(public) if private.suffix == ".key" and public.exists() else "TABLE.pub"
