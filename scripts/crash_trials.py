"""Kill a writing table with SIGKILL, again and again, and check what each crash left.

Usage: ``python scripts/crash_trials.py [--trials 100] [--seed S] [--keep DIR]``

Each trial starts a child process that plays a whole match with random players
(racing_demon.testing.randomplay) at a real Table writing a fresh log, and prints how many records
are on disk after every round: each of those was fsynced before the round returned, so the
table acknowledged it. The parent kills the child with SIGKILL after a seeded number of
acknowledgements plus a seeded delay, then checks that:

1. no acknowledged record was lost: the file holds at least as many complete records;
2. the file is a prefix of complete records that verifies as unfinished (perhaps with a torn
   last line), or, if the match ended before the kill, verifies;
3. ``recover`` leaves an unfinished log that ends with a complete record, removing at most
   a torn last line;
4. ``Table.resume`` continues the match from the recovered log to its final record, and the
   whole log then verifies.

Exit status 1 if any trial fails. The keys are the test fixtures of regen_golden_logs.py.
Choices come from SHA-256 of the seed, never from Python's ``random``.
"""

from __future__ import annotations

import argparse
import hashlib
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.deal import MatchSeed
from racing_demon.game.rules import Rules
from racing_demon.log.keys import raw_public_bytes
from racing_demon.profiles import builtin_document, custom_variant, rules_from_document
from racing_demon.recover import Action, recover_log
from racing_demon.table import Table
from racing_demon.testing.randomplay import play_match, play_on, word_chooser
from racing_demon.verify import Settings, Verdict, VerifyCode, verify_log

TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))  # test fixture only
PLAYER_KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([0x50 + seat]) * 32) for seat in range(4)]
PROFILES = ("table", "peer2peer", "nertz")
MAX_ACKS = 250  # rounds before the kill, at most: most short matches last longer
MAX_DELAY_MS = 3


def seeded(seed: str, *labels: object) -> int:
    """A 64-bit number drawn from SHA-256 of the seed and labels."""
    text = ":".join(str(part) for part in (seed, *labels)).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big")


@dataclass(frozen=True)
class Game:
    """One trial's match: everything both the child and the parent need to know."""

    trial: int
    seed: str

    @property
    def rules(self) -> Rules:
        document = builtin_document(PROFILES[self.trial % len(PROFILES)])
        document["match"]["target"] = 30  # a short match keeps a trial short
        return custom_variant(rules_from_document(document))

    @property
    def seats(self) -> int:
        return 2 + seeded(self.seed, self.trial, "seats") % 3

    @property
    def secret(self) -> bytes:
        return hashlib.sha256(f"crash trial {self.seed}:{self.trial}".encode()).digest()

    @property
    def keys(self) -> list[Ed25519PrivateKey]:
        return PLAYER_KEYS[: self.seats]

    def settings(self) -> Settings:
        return Settings(table_key=raw_public_bytes(TABLE_KEY.public_key()), seed=self.secret)


def child(path: Path, game: Game) -> None:
    """Play the match, printing the records on disk after every round."""

    def acknowledge(table: Table) -> None:
        print(table.records, flush=True)

    entropy = [bytes([0xC0 + seat]) * 16 for seat in range(game.seats)]
    choose = word_chooser(MatchSeed.from_plain(f"crash trial {game.seed}:{game.trial}"))
    table = play_match(
        path,
        game.rules,
        TABLE_KEY,
        game.secret,
        entropy,
        choose,
        player_keys=game.keys,
        after_round=acknowledge,
    )
    print(table.records, flush=True)


@dataclass(frozen=True)
class Trial:
    outcome: str  # "killed" or "finished before the kill"
    acknowledged: int
    on_disk: int
    torn_bytes: int
    failures: tuple[str, ...]


def run_trial(folder: Path, game: Game) -> Trial:
    path = folder / f"trial-{game.trial}.jsonl"
    command = [sys.executable, __file__, "--child", str(path), str(game.trial), game.seed]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    wanted = 1 + seeded(game.seed, game.trial, "acks") % MAX_ACKS
    acknowledged = 0
    outcome = "finished before the kill"
    for count, line in enumerate(process.stdout, start=1):
        acknowledged = int(line)
        if count >= wanted:
            time.sleep(seeded(game.seed, game.trial, "delay") % (MAX_DELAY_MS * 1000) / 1e6)
            process.send_signal(signal.SIGKILL)
            outcome = "killed"
            break
    rest = process.stdout.read()  # whatever it printed before it died was acknowledged
    acknowledged = max([acknowledged, *(int(line) for line in rest.split())])
    process.stdout.close()
    process.wait()
    return check(path, game, outcome, acknowledged)


def check(path: Path, game: Game, outcome: str, acknowledged: int) -> Trial:
    failures: list[str] = []
    data = path.read_bytes()
    on_disk = data.count(b"\n")
    if on_disk < acknowledged:
        failures.append(f"{acknowledged} records acknowledged, {on_disk} on disk")
    report = verify_log(path, game.settings())
    finished = report.verdict is Verdict.VERIFIED
    cut = report.verdict is Verdict.UNFINISHED and report.finding is not None
    if not (finished or cut):
        failures.append(f"after the kill: {report.verdict} {report.finding}")
    recovery = recover_log(path, game.settings())
    if recovery.action is Action.REFUSED:
        failures.append(f"recover refused: {recovery.report.finding}")
    torn = recovery.torn_bytes if recovery.action is Action.REMOVED_TORN_LINE else 0
    if not finished and not failures:
        failures.extend(resume(path, game))
    return Trial(outcome, acknowledged, on_disk, torn, tuple(failures))


def resume(path: Path, game: Game) -> list[str]:
    """Continue the match from the recovered log; the whole log must then verify."""
    report = verify_log(path, game.settings())
    if report.verdict is not Verdict.UNFINISHED or report.finding is None:
        return [f"recovered log: {report.verdict}"]
    if report.finding.code is not VerifyCode.UNFINISHED:
        return [f"recovered log: {report.finding.code}"]
    table = Table.resume(path, TABLE_KEY, game.secret)
    choose = word_chooser(MatchSeed.from_plain(f"resumed {game.seed}:{game.trial}"))
    play_on(table, choose, player_keys=game.keys)
    if not table.finished:
        return ["the resumed match did not finish"]
    report = verify_log(path, game.settings())
    if report.verdict is not Verdict.VERIFIED:
        return [f"the resumed log: {report.verdict} {report.finding}"]
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="example: python scripts/crash_trials.py --trials 100 --seed 2026",
    )
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", default="crash")
    parser.add_argument("--keep", type=Path, help="write the logs here and keep them")
    parser.add_argument(
        "--child", nargs=3, metavar=("PATH", "TRIAL", "SEED"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.child:
        path, trial, seed = args.child
        child(Path(path), Game(int(trial), seed))
        return 0
    with tempfile.TemporaryDirectory() as temporary:
        folder = args.keep or Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        return summarise([run_trial(folder, Game(n, args.seed)) for n in range(args.trials)])


def summarise(trials: list[Trial]) -> int:
    outcomes = Counter(trial.outcome for trial in trials)
    failed = [(n, trial) for n, trial in enumerate(trials) if trial.failures]
    print(f"{len(trials)} trials: " + ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items())))
    print(f"torn last lines removed by recover: {sum(1 for t in trials if t.torn_bytes)}")
    print(
        f"records acknowledged then on disk: {sum(t.acknowledged for t in trials)} acknowledged, "
        f"{sum(t.on_disk for t in trials)} on disk"
    )
    for n, trial in failed:
        print(f"FAILED trial {n}: " + "; ".join(trial.failures))
    print("ok" if not failed else f"{len(failed)} trials failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
