"""Verification cost per record beside its references, in one run.

Full verification of the golden table log (every table and player signature) beside the
same number of bare ``Ed25519PublicKey.verify`` calls (one per signature the full run
checks); ``--fast`` per record beside python-chess's PGN replay per ply. Median of
repeats. These are issue 3's figures (targets: full <= 1.25x bare Ed25519, fast <= 0.5x
python-chess); the speed issue owns making them so.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import engine_bench
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.records import PLAYER_KINDS, submission_of
from racing_demon.verify import Settings, Verdict, verify_log

LOG = Path(__file__).resolve().parents[1] / "tests" / "golden" / "logs" / "table-3p-signed.jsonl"
TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))  # the golden logs' fixture


def _median_seconds(run: Callable[[], None], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(repeats: int = 5) -> dict[str, float]:
    raw_key = TABLE_KEY.public_key().public_bytes_raw()
    records = [json.loads(line) for line in LOG.read_bytes().splitlines()]
    signatures = sum(
        1 + ("player" in r["sigs"]) + len(r["sigs"].get("players", [])) for r in records
    )
    message = canonical_bytes(
        submission_of(next(r["body"] for r in records if r["body"]["kind"] in PLAYER_KINDS))
    )
    signature = TABLE_KEY.sign(message)  # bare Ed25519 over a record-sized message
    public = TABLE_KEY.public_key()

    def full() -> None:
        assert verify_log(LOG, Settings(table_key=raw_key)).verdict is Verdict.VERIFIED

    def fast() -> None:
        assert verify_log(LOG, Settings(table_key=raw_key, fast=True)).verdict is Verdict.VERIFIED

    def bare() -> None:
        for _ in range(signatures):
            public.verify(signature, message)

    full_s, fast_s, bare_s = (_median_seconds(f, repeats) for f in (full, fast, bare))
    chess_us = engine_bench.chess_ply_us()
    count = len(records)
    return {
        "records": float(count),
        "signatures": float(signatures),
        "full_us_per_record": full_s / count * 1e6,
        "bare_ed25519_same_count_us_per_record": bare_s / count * 1e6,
        "full_vs_bare_ed25519": full_s / bare_s,
        "fast_us_per_record": fast_s / count * 1e6,
        "chess_pgn_ply_us": chess_us,
        "fast_vs_chess": fast_s / count * 1e6 / chess_us,
    }


if __name__ == "__main__":
    for name, value in measure().items():
        print(f"{name:40s} {value:10.3f}")
