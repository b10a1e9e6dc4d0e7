"""Fuzzing the verifier: seeded mutants of every valid log are refused, with a code, no crash.

A CI-sized sample of scripts/fuzz_logs.py (the script runs thousands of trials): its own
mutation functions, the same trial numbering, so a failing case here reproduces there with
``--seed``. The mutations are checked too, so that this cannot pass by testing nothing.
"""

from __future__ import annotations

import hashlib
import io
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.log.reader import ReadCode
from racing_demon.verify import Finding, Report, Settings, Verdict, VerifyCode, verify_stream

from conftest import load_script

ROOT = Path(__file__).resolve().parents[1]

fuzz = load_script("fuzz_logs")

# The golden logs' table key, shipped beside the sample game (scripts/regen_golden_logs.py).
PINNED = Settings(table_key=raw_public_bytes(load_public_key(ROOT / "sample_games" / "table.pub")))
SEED = 20240605
# About 0.1 s per mutant on one core: 150 keep this file near 15 s.
TRIALS = 120
FAST_TRIALS = 16  # the rest are marked slow: -m slow runs them (.ci/run does)
REFUSED = {Verdict.DOES_NOT_VERIFY, Verdict.UNFINISHED, Verdict.UNREADABLE}

LOGS, DUPLICATES = fuzz.distinct(fuzz.default_logs())
SAMPLE = [
    (trial, LOGS[trial % len(LOGS)], fuzz.mutation(LOGS[trial % len(LOGS)][1], SEED, trial))
    for trial in range(TRIALS)
]


@pytest.mark.parametrize(
    ("trial", "log", "mutation"),
    [
        pytest.param(
            trial,
            log,
            mutation,
            id=f"{log[0].stem}-{trial}-{mutation.kind}",
            marks=() if trial < FAST_TRIALS else pytest.mark.slow,
        )
        for trial, log, mutation in SAMPLE
    ],
)
def test_mutant_is_refused_with_a_code(trial: int, log: tuple[Path, bytes], mutation: Any) -> None:
    path, data = log
    mutant = mutation.apply(data)
    assert mutant != data
    report = verify_stream(io.BytesIO(mutant), PINNED, f"{path.name}#{trial}")
    reproduce = f"scripts/fuzz_logs.py --seed {SEED}, trial {trial}: {mutation.describe()}"
    assert report.verdict in REFUSED, reproduce
    assert report.finding is not None, reproduce
    assert isinstance(report.finding.code, VerifyCode | ReadCode), reproduce
    assert report.step is not None, reproduce


def test_the_sample_covers_every_log_and_every_kind() -> None:
    assert len(LOGS) == 3  # the sample game is the golden table log, fuzzed once
    assert [path.name for path in DUPLICATES] == ["table-3p-signed.jsonl"]
    assert {log[0] for _, log, _ in SAMPLE} == {path for path, _ in LOGS}
    kinds = Counter(mutation.kind for _, _, mutation in SAMPLE)
    assert set(kinds) == set(fuzz.MoveKind), kinds
    assert min(kinds.values()) >= TRIALS // 8, kinds


@pytest.mark.parametrize(("path", "data"), LOGS, ids=[path.stem for path, _ in LOGS])
def test_every_log_verifies_unmutated(path: Path, data: bytes) -> None:
    assert verify_stream(io.BytesIO(data), PINNED, str(path)).verdict is Verdict.VERIFIED


@pytest.mark.slow
@pytest.mark.parametrize(("path", "data"), LOGS, ids=[path.stem for path, _ in LOGS])
def test_mutations_change_the_bytes_and_are_deterministic(path: Path, data: bytes) -> None:
    lines = fuzz.split_lines(data)
    assert b"".join(lines) == data
    chosen = [fuzz.mutation(data, SEED, trial) for trial in range(200)]
    assert chosen == [fuzz.mutation(data, SEED, trial) for trial in range(200)]
    assert chosen != [fuzz.mutation(data, SEED + 1, trial) for trial in range(200)]
    assert list(fuzz.mutants(data, SEED, 200)) == chosen
    assert len(set(chosen)) > 190  # distinct places, not one mutation over and over
    for mutation in chosen:
        mutant = mutation.apply(data)
        assert mutant == mutation.apply(data)
        assert mutant != data, mutation.describe()
        after = fuzz.split_lines(mutant)
        if mutation.kind is fuzz.MoveKind.BYTE:
            at = mutation.first
            assert len(mutant) == len(data)
            assert (mutant[:at], mutant[at + 1 :]) == (data[:at], data[at + 1 :])
            assert mutant[at] == mutation.second != data[at]
        elif mutation.kind is fuzz.MoveKind.DELETE:
            assert after == lines[: mutation.first] + lines[mutation.first + 1 :]
        elif mutation.kind is fuzz.MoveKind.DUPLICATE:
            assert sorted(after) == sorted([*lines, lines[mutation.first]])
        else:
            assert mutation.first != mutation.second
            assert sorted(after) == sorted(lines)


def test_mutation_text() -> None:
    assert fuzz.Mutation(fuzz.MoveKind.BYTE, 7, 0x41).describe() == "byte at offset 7 -> 0x41"
    assert fuzz.Mutation(fuzz.MoveKind.DELETE, 0).describe() == "delete line 1"
    assert fuzz.Mutation(fuzz.MoveKind.DUPLICATE, 2, 3).describe() == (
        "duplicate line 3 before original line 4"
    )
    assert fuzz.Mutation(fuzz.MoveKind.SWAP, 4, 1).describe() == "swap lines 5 and 2"
    data = b"a\nb\nc\n"
    assert fuzz.Mutation(fuzz.MoveKind.BYTE, 5, 0x21).apply(data) == b"a\nb\nc!"
    assert fuzz.Mutation(fuzz.MoveKind.DELETE, 1).apply(data) == b"a\nc\n"
    assert fuzz.Mutation(fuzz.MoveKind.DUPLICATE, 0, 3).apply(data) == b"a\nb\nc\na\n"
    assert fuzz.Mutation(fuzz.MoveKind.SWAP, 0, 2).apply(data) == b"c\nb\na\n"
    with pytest.raises(ValueError, match="does not fit"):
        fuzz.Mutation(fuzz.MoveKind.SWAP, 0, 3).apply(data)


def test_draws_are_sha256_words_without_modulo_bias() -> None:
    draws = fuzz.Draws(5, 9)
    assert draws.word() == int.from_bytes(hashlib.sha256(b"5:9:0").digest()[:8], "big")
    assert draws.word() == int.from_bytes(hashlib.sha256(b"5:9:1").digest()[:8], "big")
    assert {fuzz.Draws(1, trial).below(3) for trial in range(60)} == {0, 1, 2}
    assert fuzz.Draws(1, 1).below(1) == 0
    with pytest.raises(ValueError):
        fuzz.Draws(1, 1).below(0)


def test_main_with_a_few_trials_passes(capsys: pytest.CaptureFixture[str]) -> None:
    small = ROOT / "tests" / "golden" / "logs" / "peer2peer-2p.jsonl"  # the fastest to verify
    assert fuzz.main([str(small), "--trials", "6", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "trials: 6 in" in out
    assert "crashes: 0" in out
    assert "OK: every mutant was refused with a reason code" in out


def test_main_refuses_a_log_that_does_not_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, data = LOGS[0]
    broken = tmp_path / path.name
    broken.write_bytes(b"\n" + data)
    assert fuzz.main([str(broken), "--trials", "1"]) == 2
    assert "does not verify to begin with" in capsys.readouterr().err


def test_an_accepted_or_codeless_mutant_fails_the_run() -> None:
    assert fuzz.problem_with(Report("x", Verdict.VERIFIED)).startswith("ACCEPTED")
    assert fuzz.problem_with(Report("x", Verdict.UNPINNED)).startswith("ACCEPTED")
    assert fuzz.problem_with(Report("x", Verdict.DOES_NOT_VERIFY)).startswith("NO REASON CODE")
    found = Finding(VerifyCode.SEQ_MISMATCH, "seq")
    assert fuzz.problem_with(Report("x", Verdict.DOES_NOT_VERIFY, finding=found)) is None


@pytest.mark.parametrize("outcome", ["verified", "crash"])
def test_the_run_reports_what_it_cannot_accept(
    outcome: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def fake(stream: io.BytesIO, settings: Settings, source: str) -> Report:
        if outcome == "crash":
            raise RuntimeError("boom")
        return Report(source, Verdict.VERIFIED)

    monkeypatch.setattr(fuzz, "verify_stream", fake)
    path, data = LOGS[0]
    summary = fuzz.fuzz([(path, data)], PINNED, SEED, 3, save=tmp_path)
    assert not summary.ok
    assert len(summary.failures) == 3
    assert summary.crashes == (3 if outcome == "crash" else 0)
    problem = "CRASH: RuntimeError: boom" if outcome == "crash" else "ACCEPTED"
    assert all(failure.problem.startswith(problem) for failure in summary.failures)
    assert len(list(tmp_path.glob("*.jsonl"))) == 3
