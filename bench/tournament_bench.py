"""Scoring a 64-table duplicate tournament, against verifying the same logs alone.

    python bench/tournament_bench.py [--tables 64] [--rounds 3] [--json-out FILE]

The tournament is ``--tables`` tables of 4 signing seats, 3 hands of nertz, played by bots
of mixed speeds (``racing_demon.tournament.simulate``) from fixture keys and a fixture secret,
so the same logs come out every time. Playing them takes a minute or two, so they are
kept in the temp folder and played again only when missing or stale (the first log no
longer verifies). Then, in interleaved rounds on the same machine:

* ``score_tournament`` with 1 job: verify every log, check it against the plan, score;
* ``verify_many`` with 1 job on the same logs: the batch verification alone;
* ``score_tournament`` with 2 jobs.

Target: scoring costs at most 1.10x the batch verification of its logs (``score_vs_verify``),
so the checks against the plan and the matchpoints add no more than a tenth. The time per
log and the 2-job speedup are reported without a target (``batch_bench`` has the speedup's).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from results import publish

from racing_demon.batch import verify_many
from racing_demon.game.duplicate import Shape
from racing_demon.log.keys import raw_public_bytes
from racing_demon.profiles import load_rules
from racing_demon.sim.bots import BOTS
from racing_demon.tournament.contribute import Contribution
from racing_demon.tournament.plan import Plan, make_plan
from racing_demon.tournament.score import score_tournament
from racing_demon.tournament.simulate import simulate_tournament
from racing_demon.verify import Settings, Verdict, verify_log

# Fixtures, published on purpose: never for a real tournament.
TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
SECRET = hashlib.sha256(b"tournament bench secret").digest()
SEATS, HANDS = 4, 3
BOTS_BY_SEAT = ("easy", "normal", "hard", "normal")
TARGET = 1.10
CORPUS_VERSION = 1  # bump when the corpus's recipe changes


def player_keys(tables: int) -> list[list[Ed25519PrivateKey]]:
    return [
        [
            Ed25519PrivateKey.from_private_bytes(
                hashlib.sha256(b"bench table %d seat %d" % (table, seat)).digest()
            )
            for seat in range(SEATS)
        ]
        for table in range(1, tables + 1)
    ]


def tournament_plan(tables: int) -> Plan:
    shape = Shape(f"Bench cup of {tables}", tables=tables, seats=SEATS, hands=HANDS)
    contributions = (Contribution("bench", hashlib.sha256(b"bench entropy").digest()),)
    return make_plan(SECRET, shape, load_rules("nertz"), contributions)


def corpus(tables: int) -> tuple[Plan, list[Path]]:
    """The plan and its logs, played now unless a fresh copy is in the temp folder."""
    plan = tournament_plan(tables)
    folder = Path(tempfile.gettempdir()) / f"racing-demon-tournament-bench-v{CORPUS_VERSION}"
    folder /= plan.digest[:16]
    complete = folder / "complete"
    logs = sorted(folder.glob("table-*.jsonl"))
    settings = Settings(table_key=raw_public_bytes(TABLE_KEY.public_key()))
    if complete.exists() and verify_log(logs[0], settings).verdict is Verdict.VERIFIED:
        return plan, logs
    shutil.rmtree(folder, ignore_errors=True)
    started = time.perf_counter()
    bots = [BOTS[name] for name in BOTS_BY_SEAT]
    played = simulate_tournament(
        folder, plan, SECRET, bots, "bench", TABLE_KEY, player_keys=player_keys(tables)
    )
    complete.touch()
    print(f"played {tables} tables into {folder} in {time.perf_counter() - started:.0f} s")
    return plan, list(played.logs)


def _timed_score(plan: Plan, logs: list[Path], jobs: int) -> float:
    started = time.perf_counter()
    standings = score_tournament(plan, logs, raw_public_bytes(TABLE_KEY.public_key()), jobs=jobs)
    seconds = time.perf_counter() - started
    assert not standings.problems, standings.problems[0]
    return seconds


def _timed_verify(plan: Plan, logs: list[Path]) -> float:
    settings = Settings(
        table_key=raw_public_bytes(TABLE_KEY.public_key()), rules=plan.rules.digest()
    )
    started = time.perf_counter()
    reports = verify_many(logs, settings, jobs=1)
    seconds = time.perf_counter() - started
    assert all(report.verdict is Verdict.VERIFIED for report in reports)
    return seconds


def measure(tables: int = 64, rounds: int = 3) -> dict[str, float]:
    """Seconds to score the tournament and to verify its logs (medians of interleaved
    rounds), per log, and the ratios ``score_vs_verify`` (target <= 1.10) and the 2-job
    speedup."""
    plan, logs = corpus(tables)
    score_one, verify_one, score_two = [], [], []
    for _ in range(rounds):
        score_one.append(_timed_score(plan, logs, 1))
        verify_one.append(_timed_verify(plan, logs))
        score_two.append(_timed_score(plan, logs, 2))
    ratios = [score / verify for score, verify in zip(score_one, verify_one, strict=True)]
    records = sum(log.read_bytes().count(b"\n") for log in logs)
    one, two = statistics.median(score_one), statistics.median(score_two)
    return {
        "tables": float(tables),
        "logs": float(len(logs)),
        "records": float(records),
        "bytes": float(sum(log.stat().st_size for log in logs)),
        "cpu_count": float(os.cpu_count() or 1),
        "score_one_job_s": one,
        "score_one_job_ms_per_log": one / len(logs) * 1e3,
        "verify_one_job_s": statistics.median(verify_one),
        "score_two_jobs_s": two,
        "score_two_jobs_ms_per_log": two / len(logs) * 1e3,
        "score_vs_verify": statistics.median(ratios),
        "two_jobs_speedup": one / two,
    }


def summary(figures: dict[str, float]) -> str:
    return (
        f"tournament score, {figures['tables']:.0f} tables ({figures['records']:.0f} records): "
        f"1 job {figures['score_one_job_s']:.1f} s ({figures['score_one_job_ms_per_log']:.0f} "
        f"ms per log), 2 jobs {figures['score_two_jobs_s']:.1f} s; verifying the same logs "
        f"{figures['verify_one_job_s']:.1f} s: ratio {figures['score_vs_verify']:.3f} "
        f"(target <= {TARGET})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=64, help="tables (default 64)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--json-out", type=Path, help="also write the JSON result here")
    args = parser.parse_args()
    figures = measure(args.tables, args.rounds)
    result = {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "tournament": figures,
        "target_score_vs_verify": TARGET,
        "met": figures["score_vs_verify"] <= TARGET,
    }
    print(summary(figures))
    publish(result, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
