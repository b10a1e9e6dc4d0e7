"""Fuzz the verifier: seeded mutants of valid signed logs must all be refused, with a code.

Usage: ``python scripts/fuzz_logs.py [LOG ...] [--trials N] [--seed S] [--table-key PUB]``.

Each trial takes one valid log (by default every ``*.jsonl`` in ``sample_games/`` and
``tests/golden/logs/``, byte-identical files once) and applies one mutation: a single byte
changed to any other value (anywhere, the newlines included), a line deleted, a line
duplicated (right after itself or anywhere else), or two lines swapped (neighbours or any
two). The mutant goes through the library verifier (``verify_stream``) with the log's table
key pinned, and must be refused (DOES_NOT_VERIFY, UNFINISHED or UNREADABLE) with a reason
code, without any exception escaping. The summary counts verdicts, steps and reason codes,
and lists every mutant that was accepted, refused without a code, or crashed the verifier,
each with the seed, trial and mutation that reproduce it. Exit status: 0 if every mutant was
refused with a code, 1 otherwise, 2 if an input log does not verify to begin with.

Every choice is drawn from SHA-256 of the seed, the trial and a counter, never from Python's
``random``: the same seed gives the same mutants on every platform and Python version.
A mutant that is byte-identical to its log (which none of the four kinds can produce, but
the check is cheap) is skipped and counted, since it must verify.
"""

from __future__ import annotations

import argparse
import enum
import hashlib
import io
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from racing_demon.log.keys import KeyFileError, load_public_key, raw_public_bytes
from racing_demon.verify import Report, Settings, Verdict, verify_stream

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIRS = (ROOT / "sample_games", ROOT / "tests" / "golden" / "logs")
# The golden logs' and the sample game's table key (scripts/regen_golden_logs.py: TABLE_KEY).
DEFAULT_TABLE_KEY = ROOT / "sample_games" / "table.pub"
REFUSED = frozenset({Verdict.DOES_NOT_VERIFY, Verdict.UNFINISHED, Verdict.UNREADABLE})

EPILOG = """\
example:
  python scripts/fuzz_logs.py --trials 5000 --seed 7
  python scripts/fuzz_logs.py my-game.jsonl --table-key table.pub --trials 200 --save out/
"""


# (1) Seeded choices.


class Draws:
    """Uniform integers for one trial, from SHA-256 of ``"{seed}:{trial}:{counter}"``.

    ``below(n)`` rejects the top ``2**64 % n`` values of each 64-bit word and draws again,
    so it has no modulo bias (and for the bounds used here a rejection is rarer than 1 in
    10**12, so it almost never costs a second hash).
    """

    def __init__(self, seed: int, trial: int) -> None:
        self.seed = seed
        self.trial = trial
        self.counter = 0

    def word(self) -> int:
        """The next 64-bit word of this trial's stream."""
        text = f"{self.seed}:{self.trial}:{self.counter}".encode()
        self.counter += 1
        return int.from_bytes(hashlib.sha256(text).digest()[:8], "big")

    def below(self, bound: int) -> int:
        """A uniform integer in ``[0, bound)``."""
        if bound < 1:
            raise ValueError(f"cannot draw below {bound}")
        limit = 2**64 - 2**64 % bound
        while (word := self.word()) >= limit:
            pass
        return word % bound


# (2) Mutations.


class MoveKind(enum.StrEnum):
    BYTE = "byte"
    DELETE = "delete"
    DUPLICATE = "duplicate"
    SWAP = "swap"


def split_lines(data: bytes) -> list[bytes]:
    """The lines of ``data``, each with its ``\\n`` (a last line without one kept as is)."""
    lines = [line + b"\n" for line in data.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


@dataclass(frozen=True, slots=True)
class Mutation:
    """One change to a log, independent of the log's bytes once chosen.

    ``first`` is a byte offset (BYTE) or a 0-based line index (the others); ``second`` is
    the new byte value (BYTE), the line index the copy is inserted at, counted in the
    original lines (DUPLICATE), the other line (SWAP), or 0 (DELETE).
    """

    kind: MoveKind
    first: int
    second: int = 0

    def describe(self) -> str:
        """Human-readable, with 1-based lines: ``swap lines 12 and 13``."""
        if self.kind is MoveKind.BYTE:
            return f"byte at offset {self.first} -> 0x{self.second:02x}"
        if self.kind is MoveKind.DELETE:
            return f"delete line {self.first + 1}"
        if self.kind is MoveKind.DUPLICATE:
            return f"duplicate line {self.first + 1} before original line {self.second + 1}"
        return f"swap lines {self.first + 1} and {self.second + 1}"

    def apply(self, data: bytes) -> bytes:
        """The mutant of ``data``; ValueError if the mutation does not fit it."""
        if self.kind is MoveKind.BYTE:
            if not (0 <= self.first < len(data) and 0 <= self.second < 256):
                raise ValueError(f"{self.describe()} does not fit {len(data)} bytes")
            return data[: self.first] + bytes([self.second]) + data[self.first + 1 :]
        lines = split_lines(data)
        if not 0 <= self.first < len(lines):
            raise ValueError(f"{self.describe()} does not fit {len(lines)} lines")
        if self.kind is MoveKind.DELETE:
            del lines[self.first]
        elif self.kind is MoveKind.DUPLICATE:
            if not 0 <= self.second <= len(lines):
                raise ValueError(f"{self.describe()} does not fit {len(lines)} lines")
            lines.insert(self.second, lines[self.first])
        else:
            if not 0 <= self.second < len(lines):
                raise ValueError(f"{self.describe()} does not fit {len(lines)} lines")
            lines[self.first], lines[self.second] = lines[self.second], lines[self.first]
        return b"".join(lines)


def mutation(data: bytes, seed: int, trial: int) -> Mutation:
    """Trial ``trial``'s mutation of ``data``: kind, then place, each uniform.

    Line mutations need at least two lines; on a shorter log every trial changes a byte.
    """
    draws = Draws(seed, trial)
    count = len(split_lines(data))
    kinds = list(MoveKind) if count >= 2 else [MoveKind.BYTE]
    kind = kinds[draws.below(len(kinds))]
    if kind is MoveKind.BYTE:
        if not data:
            raise ValueError("an empty log cannot be mutated")
        at = draws.below(len(data))
        # One of the 255 values other than the old one, uniformly.
        return Mutation(kind, at, (data[at] + 1 + draws.below(255)) % 256)
    line = draws.below(count)
    if kind is MoveKind.DELETE:
        return Mutation(kind, line)
    if kind is MoveKind.DUPLICATE:
        # Half the time right after itself (a replayed write), else anywhere.
        where = line + 1 if draws.below(2) else draws.below(count + 1)
        return Mutation(kind, line, where)
    # Half the time a neighbour (a reordering), else any other line.
    if draws.below(2):
        other = line + 1 if line + 1 < count else line - 1
    else:
        other = (line + 1 + draws.below(count - 1)) % count
    return Mutation(kind, line, other)


def mutants(data: bytes, seed: int, count: int, start: int = 0) -> Iterator[Mutation]:
    """The mutations of trials ``start`` to ``start + count - 1`` that change ``data``."""
    for trial in range(start, start + count):
        candidate = mutation(data, seed, trial)
        if candidate.apply(data) != data:
            yield candidate


# (3) Running the verifier.


@dataclass(frozen=True, slots=True)
class Failure:
    """A mutant the verifier accepted, refused without a code, or crashed on."""

    log: Path
    seed: int
    trial: int
    mutation: Mutation
    problem: str

    def describe(self) -> str:
        return (
            f"{self.log} --seed {self.seed} trial {self.trial}: "
            f"{self.mutation.describe()}: {self.problem}"
        )


@dataclass
class Summary:
    trials: int = 0
    identical: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    verdicts: Counter[str] = field(default_factory=Counter)
    steps: Counter[str] = field(default_factory=Counter)
    codes: Counter[str] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    crashes: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures


def problem_with(report: Report) -> str | None:
    """Why a mutant's report is wrong: accepted, or refused without a reason code."""
    if report.verdict not in REFUSED:
        return f"ACCEPTED: verdict {report.verdict}"
    if report.finding is None or not report.finding.code:
        return f"NO REASON CODE: verdict {report.verdict}"
    return None


def check(
    log: Path, data: bytes, seed: int, trial: int, settings: Settings, summary: Summary
) -> bytes:
    """Run trial ``trial`` on ``data`` and record it in ``summary``; return the mutant."""
    chosen = mutation(data, seed, trial)
    mutant = chosen.apply(data)
    if mutant == data:
        summary.identical += 1
        return mutant
    summary.trials += 1
    summary.kinds[chosen.kind] += 1
    try:
        report = verify_stream(io.BytesIO(mutant), settings, f"{log.name}#{trial}")
    except Exception as error:  # any exception escaping the verifier is a crash
        summary.crashes += 1
        crash = f"CRASH: {type(error).__name__}: {error}"
        summary.failures.append(Failure(log, seed, trial, chosen, crash))
        return mutant
    summary.verdicts[report.verdict] += 1
    summary.steps["-" if report.step is None else f"{report.step.value} {report.step.title}"] += 1
    summary.codes["-" if report.finding is None else str(report.finding.code)] += 1
    if (problem := problem_with(report)) is not None:
        summary.failures.append(Failure(log, seed, trial, chosen, problem))
    return mutant


def default_logs() -> list[Path]:
    return sorted(path for folder in DEFAULT_DIRS for path in folder.glob("*.jsonl"))


def distinct(paths: Sequence[Path]) -> tuple[list[tuple[Path, bytes]], list[Path]]:
    """The logs to fuzz, each content once (first path wins), and the duplicate paths."""
    seen: set[bytes] = set()
    logs: list[tuple[Path, bytes]] = []
    duplicates: list[Path] = []
    for path in paths:
        data = path.read_bytes()
        digest = hashlib.sha256(data).digest()
        if digest in seen:
            duplicates.append(path)
        else:
            seen.add(digest)
            logs.append((path, data))
    return logs, duplicates


def fuzz(
    logs: Sequence[tuple[Path, bytes]],
    settings: Settings,
    seed: int,
    trials: int,
    save: Path | None = None,
) -> Summary:
    """Trials ``0..trials-1``, trial ``t`` on log ``t % len(logs)``."""
    summary = Summary()
    started = time.perf_counter()
    for trial in range(trials):
        log, data = logs[trial % len(logs)]
        failed = len(summary.failures)
        mutant = check(log, data, seed, trial, settings, summary)
        if save is not None and len(summary.failures) > failed:
            save.mkdir(parents=True, exist_ok=True)
            (save / f"{log.stem}-seed{seed}-trial{trial}.jsonl").write_bytes(mutant)
    summary.seconds = time.perf_counter() - started
    return summary


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{key} {count}" for key, count in counter.most_common()) or "none"


def print_summary(summary: Summary, logs: Sequence[Path], duplicates: Sequence[Path]) -> None:
    print(f"logs: {', '.join(map(str, logs))}")
    if duplicates:
        print(f"skipped as byte-identical to a log above: {', '.join(map(str, duplicates))}")
    print(f"trials: {summary.trials} in {summary.seconds:.1f} s", end="")
    print(f" ({summary.identical} mutants identical to their log skipped)")
    print(f"mutations: {_counts(summary.kinds)}")
    print(f"verdicts: {_counts(summary.verdicts)}")
    print("steps:")
    for step, count in sorted(summary.steps.items()):
        print(f"  {step}: {count}")
    print("reason codes:")
    for code, count in summary.codes.most_common():
        print(f"  {code}: {count}")
    accepted = sum(1 for failure in summary.failures if failure.problem.startswith("ACCEPTED"))
    print(f"accepted: {accepted}")
    print(f"crashes: {summary.crashes}")
    print(f"refused without a reason code: {len(summary.failures) - accepted - summary.crashes}")
    for failure in summary.failures:
        print(f"  {failure.describe()}")
    print("OK: every mutant was refused with a reason code" if summary.ok else "FAILED")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "logs",
        nargs="*",
        type=Path,
        metavar="LOG",
        help="valid signed logs (default: sample_games/*.jsonl and tests/golden/logs/*.jsonl)",
    )
    parser.add_argument("--trials", type=int, default=5000, help="mutants to try (default 5000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the mutations (default 0)")
    parser.add_argument(
        "--table-key",
        type=Path,
        default=DEFAULT_TABLE_KEY,
        metavar="PUB",
        help="the table's public key, PEM, pinned for every log (default: sample_games/table.pub)",
    )
    parser.add_argument(
        "--save", type=Path, metavar="DIR", help="write each failing mutant to DIR as a file"
    )
    args = parser.parse_args(argv)
    if args.trials < 1:
        parser.error("--trials must be at least 1")
    try:
        settings = Settings(table_key=raw_public_bytes(load_public_key(args.table_key)))
    except KeyFileError as error:
        parser.error(str(error))
    paths = args.logs or default_logs()
    if not paths:
        parser.error("no logs to fuzz")
    logs, duplicates = distinct(paths)
    for path, data in logs:
        # A log that does not verify as it is would make every refusal meaningless.
        report = verify_stream(io.BytesIO(data), settings, str(path))
        if report.verdict is not Verdict.VERIFIED:
            code = None if report.finding is None else report.finding.code
            print(f"{path} does not verify to begin with: {report.verdict} {code}", file=sys.stderr)
            return 2
    summary = fuzz(logs, settings, args.seed, args.trials, args.save)
    print_summary(summary, [path for path, _ in logs], duplicates)
    return 0 if summary.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
