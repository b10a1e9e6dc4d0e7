"""Verification cost per record beside its references, in one run.

Full verification of the golden table log (every table and player signature) beside the
same number of bare ``Ed25519PublicKey.verify`` calls (one per signature the full run
checks); ``--fast`` per record beside python-chess's PGN replay per ply. Ratios are the
medians of paired, interleaved rounds. These are issue 3's figures (targets: full <=
1.25x bare Ed25519, fast <= 0.5x python-chess); the speed issue owns making them so.

Two floors go with them, to show how far any CPython verifier of this format can go: the
cost of only reading each line into a value (``json.loads``, the SHA-256 that ``prev``
needs, and the C encoder's re-encoding that proves a plain line canonical), checking
nothing; and the part of full verification that the signatures take (full minus fast:
the Ed25519 checks as the verifier makes them, between records, with their messages).
"""

from __future__ import annotations

import hashlib
import json
import operator
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import engine_bench
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.flow import Submission
from racing_demon.log.canonical import MODEL_ENCODER, canonical_bytes
from racing_demon.log.records import parse_record, submission_statement
from racing_demon.verify import Settings, Verdict, verify_log

_CHESS_GAMES = 10  # python-chess replays per round: about as long as one --fast verification

LOG = Path(__file__).resolve().parents[1] / "tests" / "golden" / "logs" / "table-3p-signed.jsonl"
TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))  # the golden logs' fixture


def _seconds(run: Callable[[], None]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def measure(rounds: int = 15) -> dict[str, float]:
    """Per-record costs and their ratios to the references, from paired rounds.

    Each round times one full verification, one ``--fast`` one, the bare signatures and
    python-chess's replay back to back, in an order that rotates from round to round; a
    ratio is the median of the rounds' own ratios. On a shared machine whose speed drifts
    within seconds, pairing keeps the drift out of the ratios.
    """
    raw_key = TABLE_KEY.public_key().public_bytes_raw()
    records = [json.loads(line) for line in LOG.read_bytes().splitlines()]
    signatures = sum(
        1 + ("player" in r["sigs"]) + len(r["sigs"].get("players", [])) for r in records
    )
    typed = [parse_record(r["body"]) for r in records]
    submission = next(r for r in typed if isinstance(r.payload, Submission))
    payload = submission.payload
    assert isinstance(payload, Submission)
    message = canonical_bytes(
        submission_statement(submission.game, payload.hand, payload.seat, payload.n, payload.move)
    )
    signature = TABLE_KEY.sign(message)  # bare Ed25519 over a record-sized message
    public = TABLE_KEY.public_key()
    chess_replay, plies = engine_bench.chess_replay()

    def full() -> None:
        assert verify_log(LOG, Settings(table_key=raw_key)).verdict is Verdict.VERIFIED

    def fast() -> None:
        assert verify_log(LOG, Settings(table_key=raw_key, fast=True)).verdict is Verdict.VERIFIED

    def bare() -> None:
        for _ in range(signatures):
            public.verify(signature, message)

    def chess() -> None:
        for _ in range(_CHESS_GAMES):
            chess_replay()

    lines = LOG.read_bytes().splitlines()

    def floor() -> None:
        for line in lines:
            hashlib.sha256(line).hexdigest()
            assert MODEL_ENCODER.encode(json.loads(line)).encode() == line

    runs = {"full": full, "fast": fast, "bare": bare, "chess": chess, "floor": floor}
    for run in runs.values():
        run()  # warm: imports, caches, the schema compiled
    times: dict[str, list[float]] = {name: [] for name in runs}
    order = list(runs)
    for round_ in range(rounds):
        turn = round_ % len(order)
        for name in order[turn:] + order[:turn]:
            times[name].append(_seconds(runs[name]))
    count = len(records)
    per_record = {
        name: [t / count * 1e6 for t in times[name]] for name in ("full", "fast", "floor")
    }
    signatures_us = list(map(operator.sub, per_record["full"], per_record["fast"]))
    bare_us = [t / count * 1e6 for t in times["bare"]]
    chess_us = [t / (_CHESS_GAMES * plies) * 1e6 for t in times["chess"]]
    median = statistics.median
    return {
        "records": float(count),
        "signatures": float(signatures),
        "rounds": float(rounds),
        "full_us_per_record": median(per_record["full"]),
        "bare_ed25519_same_count_us_per_record": median(bare_us),
        "full_vs_bare_ed25519": median(map(operator.truediv, per_record["full"], bare_us)),
        "fast_us_per_record": median(per_record["fast"]),
        "chess_pgn_ply_us": median(chess_us),
        "fast_vs_chess": median(map(operator.truediv, per_record["fast"], chess_us)),
        "read_floor_us_per_record": median(per_record["floor"]),
        "read_floor_vs_chess": median(map(operator.truediv, per_record["floor"], chess_us)),
        "signatures_in_full_us_per_record": median(signatures_us),
        "signatures_in_full_vs_bare_ed25519": median(map(operator.truediv, signatures_us, bare_us)),
    }


if __name__ == "__main__":
    for name, value in measure().items():
        print(f"{name:40s} {value:10.3f}")
