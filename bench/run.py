"""Run every benchmark in one process on one machine and print ratios and JSON.

    python bench/run.py [--json-out bench/results/latest.json]

Targets: check+apply median <= 0.5 x python-chess's PGN replay per ply; deriving one
pack <= 1.0 x random.shuffle of 52 items; full verification <= 1.25 x the same number of
bare Ed25519 verifications; verify --fast <= 0.5 x python-chess per record. Ratios, not
absolute times, are what compare across machines; nothing here is a timed test.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import deal_bench
import engine_bench
import verify_bench

TARGETS = {
    "engine_vs_chess": 0.5,
    "deal_vs_shuffle": 1.0,
    "verify_full_vs_ed25519": 1.25,
    "verify_fast_vs_chess": 0.5,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json-out", type=Path, help="also write the JSON result here")
    args = parser.parse_args()
    engine = engine_bench.measure()
    deal = deal_bench.measure()
    verification = verify_bench.measure()
    ratios = {
        "engine_vs_chess": engine["ratio"],
        "deal_vs_shuffle": deal["ratio"],
        "verify_full_vs_ed25519": verification["full_vs_bare_ed25519"],
        "verify_fast_vs_chess": verification["fast_vs_chess"],
    }
    result = {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "engine": engine,
        "deal": deal,
        "verification": verification,
        "ratios": ratios,
        "targets": TARGETS,
        "met": {name: ratios[name] <= TARGETS[name] for name in TARGETS},
    }
    print(
        f"check+apply {engine['check_apply_median_us']:.2f} us (median) vs python-chess "
        f"{engine['chess_pgn_ply_us']:.2f} us per ply: ratio {ratios['engine_vs_chess']:.3f} "
        f"(target <= {TARGETS['engine_vs_chess']})"
    )
    print(
        f"derive_pack {deal['derive_pack_us']:.2f} us vs random.shuffle "
        f"{deal['random_shuffle_us']:.2f} us: ratio {ratios['deal_vs_shuffle']:.3f} "
        f"(target <= {TARGETS['deal_vs_shuffle']})"
    )
    print(
        f"verify full {verification['full_us_per_record']:.0f} us/record vs bare Ed25519 "
        f"{verification['bare_ed25519_same_count_us_per_record']:.0f} us (same number of "
        f"signatures): ratio {ratios['verify_full_vs_ed25519']:.2f} "
        f"(target <= {TARGETS['verify_full_vs_ed25519']})"
    )
    print(
        f"verify --fast {verification['fast_us_per_record']:.0f} us/record vs python-chess "
        f"{verification['chess_pgn_ply_us']:.1f} us/ply: "
        f"ratio {ratios['verify_fast_vs_chess']:.2f} "
        f"(target <= {TARGETS['verify_fast_vs_chess']})"
    )
    text = json.dumps(result, indent=2)
    print(text)
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
