"""Verification cost per record beside its references, in one run, on two logs.

    python bench/verify_bench.py [--rounds N] [--json-out PATH]

The logs: the golden table log (three keyed seats, so a table and a player signature on
every submission) and a long simulated match of four keyed seats, played here by random
players at a real table. For each: full verification beside the same number of bare
Ed25519 verifications, by cryptography and by libsodium (PyNaCl), one per signature the
full run checks; ``--fast`` per record beside python-chess's PGN replay per ply. Ratios
are the medians of paired, interleaved rounds. The targets (issues 18 and 33): fast <=
1.5x python-chess (1.0x with the mypyc build); full <= 0.75x bare cryptography; full minus
fast (what the signatures cost as the verifier makes them) <= 1.10x the bare verifications
of the library the verifier uses (libsodium).

A floor goes with them, to show how far any CPython verifier of this format can go: the
cost of only reading each line into a value (orjson, the SHA-256 that ``prev`` needs,
and the sorted re-encoding that proves a line canonical), checking nothing.

And what format v4's races cost (the replay follows each hand's placements to check every
bounce's ``lost_to``): ``--fast`` on the log beside ``--fast`` on the same records
re-sealed as format v3, which has no ``lost_to`` and so no races to follow.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import operator
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import engine_bench
import nacl.bindings
import orjson
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from results import publish

from racing_demon.game.deal import MatchSeed
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.signing import sign
from racing_demon.profiles import builtin_document, custom_variant, rules_from_document
from racing_demon.testing.randomplay import play_match, word_chooser
from racing_demon.testing.tamper import reseal
from racing_demon.verify import Settings, Verdict, verify_log

_CHESS_GAMES = 10  # python-chess replays per round: about as long as one --fast verification

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "golden" / "logs" / "table-3p-signed.jsonl"
TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))  # the golden logs' fixture
SEAT_KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([0xB0 + seat]) * 32) for seat in range(4)]
GOLDEN_SEAT_KEYS = [  # scripts/regen_golden_logs.py's fixtures
    Ed25519PrivateKey.from_private_bytes(bytes([0x50 + seat]) * 32) for seat in range(4)
]
SIMULATED_HANDS = 12  # about 4,700 records for four random players under `table`


def simulated_log(
    path: Path,
    hands: int = SIMULATED_HANDS,
    seats: int = 4,
    table_key: Ed25519PrivateKey = TABLE_KEY,
) -> Path:
    """A whole match of ``seats`` keyed random players, ``hands`` hands long, at ``path``."""
    document = builtin_document("table")
    document["match"] = {"target": None, "max_hands": hands, "lead_tie": "share"}
    play_match(
        path,
        custom_variant(rules_from_document(document)),
        table_key,
        bytes(32),
        [bytes([0xA0 + seat]) * 16 for seat in range(seats)],
        word_chooser(MatchSeed.from_plain(f"verify bench {seats} {hands}")),
        player_keys=SEAT_KEYS[:seats],
        max_rounds=400_000,
    )
    return path


def _as_v3(records: list[dict[str, Any]], seat_keys: list[Ed25519PrivateKey]) -> list[bytes]:
    """The lines of ``records`` as format v3: no ``lost_to``, every signature made again in
    v3 by the table and the seats (``seat_keys``), so that both logs verify."""
    values = copy.deepcopy(records)
    for value in values:
        value["body"]["v"] = 3
        value["body"].pop("lost_to", None)
    genesis = values[0]
    body = canonical_bytes(genesis["body"])
    genesis["sigs"]["players"] = [sign(key, "genesis", body, 3) for key in seat_keys]
    return reseal(values, key=TABLE_KEY, player_keys=seat_keys)


def signature_count(records: list[dict[str, Any]]) -> int:
    """Every signature full verification checks: the table's on each record, a player's on
    each submission, the genesis co-signatures and entropy contributions, the acceptances."""
    count = 0
    for record in records:
        sigs = record["sigs"]
        count += 1 + ("player" in sigs) + len(sigs.get("players", ()))
        count += sum(signature is not None for signature in sigs.get("accepts", ()))
        if record["body"]["kind"] == "genesis" and "players" in sigs:
            count += len(record["body"].get("entropy", ()))
    return count


def _seconds(run: Callable[[], None]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def measure_log(path: Path, rounds: int, seat_keys: list[Ed25519PrivateKey]) -> dict[str, float]:
    """Per-record costs of verifying ``path`` and their ratios to the references.

    Each round times one full verification, one ``--fast`` one, the bare signatures of
    both libraries, python-chess's replay and the reading floor back to back, in an order
    that rotates from round to round; a ratio is the median of the rounds' own ratios. On
    a shared machine whose speed drifts within seconds, pairing keeps the drift out.
    """
    raw_key = raw_public_bytes(TABLE_KEY.public_key())
    lines = path.read_bytes().splitlines()
    records = [orjson.loads(line) for line in lines]
    signatures = signature_count(records)
    message = max(lines, key=len)  # a record-sized message: the longest line
    signature = TABLE_KEY.sign(message)
    public = TABLE_KEY.public_key()
    chess_replay, plies = engine_bench.chess_replay()

    as_v3 = Path(tempfile.mkdtemp()) / "as-v3.jsonl"
    as_v3.write_bytes(b"".join(line + b"\n" for line in _as_v3(records, seat_keys)))

    def full() -> None:
        assert verify_log(path, Settings(table_key=raw_key)).verdict is Verdict.VERIFIED

    def fast_v3() -> None:
        settings = Settings(table_key=raw_key, fast=True)
        assert verify_log(as_v3, settings).verdict is Verdict.VERIFIED

    def fast() -> None:
        assert verify_log(path, Settings(table_key=raw_key, fast=True)).verdict is Verdict.VERIFIED

    def bare_cryptography() -> None:
        for _ in range(signatures):
            public.verify(signature, message)

    def bare_libsodium() -> None:
        for _ in range(signatures):
            nacl.bindings.crypto_sign_open(signature + message, raw_key)

    def chess() -> None:
        for _ in range(_CHESS_GAMES):
            chess_replay()

    def floor() -> None:
        for line in lines:
            hashlib.sha256(line).hexdigest()
            assert orjson.dumps(orjson.loads(line), option=orjson.OPT_SORT_KEYS) == line

    runs = {
        "full": full,
        "fast": fast,
        "fast_v3": fast_v3,
        "cryptography": bare_cryptography,
        "libsodium": bare_libsodium,
        "chess": chess,
        "floor": floor,
    }
    for run in runs.values():
        run()  # warm: imports, caches, the schema validators built
    times: dict[str, list[float]] = {name: [] for name in runs}
    order = list(runs)
    for round_ in range(rounds):
        turn = round_ % len(order)
        for name in order[turn:] + order[:turn]:
            times[name].append(_seconds(runs[name]))
    shutil.rmtree(as_v3.parent)
    count = len(records)
    us = {
        name: [t / count * 1e6 for t in times[name]]
        for name in ("full", "fast", "fast_v3", "floor", "cryptography", "libsodium")
    }
    signatures_us = list(map(operator.sub, us["full"], us["fast"]))
    chess_us = [t / (_CHESS_GAMES * plies) * 1e6 for t in times["chess"]]
    median = statistics.median

    def ratio(numerators: list[float], denominators: list[float]) -> float:
        return median(map(operator.truediv, numerators, denominators))

    return {
        "records": float(count),
        "signatures": float(signatures),
        "rounds": float(rounds),
        "full_us_per_record": median(us["full"]),
        "fast_us_per_record": median(us["fast"]),
        "bare_cryptography_us_per_record": median(us["cryptography"]),
        "bare_libsodium_us_per_record": median(us["libsodium"]),
        "chess_pgn_ply_us": median(chess_us),
        "fast_vs_chess": ratio(us["fast"], chess_us),
        "full_vs_bare_cryptography": ratio(us["full"], us["cryptography"]),
        "signatures_in_full_us_per_record": median(signatures_us),
        "signatures_in_full_vs_bare_libsodium": ratio(signatures_us, us["libsodium"]),
        "signatures_in_full_vs_bare_cryptography": ratio(signatures_us, us["cryptography"]),
        "libsodium_vs_cryptography": ratio(us["libsodium"], us["cryptography"]),
        "read_floor_us_per_record": median(us["floor"]),
        "read_floor_vs_chess": ratio(us["floor"], chess_us),
        "fast_v4_vs_v3": ratio(us["fast"], us["fast_v3"]),
    }


def measure(rounds: int = 11) -> dict[str, dict[str, float]]:
    """The golden log's figures and the simulated four-seat match's."""
    with tempfile.TemporaryDirectory() as folder:
        simulated = simulated_log(Path(folder) / "simulated.jsonl")
        return {
            "golden": measure_log(GOLDEN, rounds, GOLDEN_SEAT_KEYS[:3]),
            "simulated": measure_log(simulated, max(3, rounds // 2), SEAT_KEYS),
        }


def summary(result: dict[str, dict[str, float]]) -> str:
    lines = []
    for name, figures in result.items():
        lines.append(
            f"verify {name} log ({figures['records']:.0f} records, "
            f"{figures['signatures']:.0f} signatures): --fast "
            f"{figures['fast_us_per_record']:.0f} us/record vs python-chess "
            f"{figures['chess_pgn_ply_us']:.1f} us/ply: ratio {figures['fast_vs_chess']:.2f} "
            "(target <= 1.5 pure, 1.0 compiled)"
        )
        lines.append(
            f"  full {figures['full_us_per_record']:.0f} us/record vs bare cryptography "
            f"{figures['bare_cryptography_us_per_record']:.0f} us: ratio "
            f"{figures['full_vs_bare_cryptography']:.2f} (target <= 0.75); full - fast "
            f"{figures['signatures_in_full_us_per_record']:.0f} us vs bare libsodium "
            f"{figures['bare_libsodium_us_per_record']:.0f} us: ratio "
            f"{figures['signatures_in_full_vs_bare_libsodium']:.2f} (target <= 1.10)"
        )
        lines.append(
            f"  floor: reading a record, checking nothing, "
            f"{figures['read_floor_us_per_record']:.1f} us = "
            f"{figures['read_floor_vs_chess']:.2f} x python-chess per ply; libsodium "
            f"{figures['libsodium_vs_cryptography']:.2f} x cryptography per signature"
        )
        lines.append(
            f"  format v4's races: --fast {figures['fast_v4_vs_v3']:.3f} x the same records "
            "as format v3"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11, help="paired rounds (default 11)")
    parser.add_argument("--json-out", type=Path, help="also write the JSON result here")
    args = parser.parse_args()
    result = measure(args.rounds)
    print(summary(result))
    publish(result, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
