"""Verification cost per record of logs crafted to be slow, from 1x to 8x their size.

    python bench/crafted_bench.py [--rounds N] [--json-out PATH]

Issue 12, item 10: a log may bring any rules its schema allows, so the cost per record
must not grow with the one dimension an adversary scales. Three shapes, each a valid
signed match written by the real table (tests/crafted.py): many two-millisecond hands,
one long hand of stock turns, and many stall shifts; and, for issue 18, an ordinary
match of four keyed random players (bench/verify_bench.py), scaled in hands. Each is
verified in full and with ``--fast`` at 1, 2, 4 and 8 times its size (the hands shape at
8x is 496 hands, near the 500 every match ends after). Each round times every log once,
in an order that rotates from round to round; a shape's ratio is the median over rounds
of that round's cost per record at 8x over the cost at 1x. Target: <= 1.2 for every
shape and mode.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from results import publish
from verify_bench import simulated_log

from racing_demon.log.keys import raw_public_bytes
from racing_demon.verify import Settings, Verdict, verify_log

import crafted

SCALES = (1, 2, 4, 8)
TARGET = 1.2
SHAPES = {
    **crafted.SHAPES,
    "simulated": (
        lambda path, hands: simulated_log(path, hands, table_key=crafted.TABLE_KEY),
        2,
        "a match of four keyed random players, in hands",
    ),
}


def measure(rounds: int = 5) -> dict[str, dict[str, float]]:
    """Per shape: records and the cost per record at each scale (medians), and the 8x/1x
    ratios for full and ``--fast`` verification (medians of the rounds' own ratios)."""
    key = raw_public_bytes(crafted.TABLE_KEY.public_key())
    modes = {"full": Settings(table_key=key), "fast": Settings(table_key=key, fast=True)}
    with tempfile.TemporaryDirectory() as folder:
        logs: dict[tuple[str, int], tuple[Path, int]] = {}
        for shape, (write, size, _) in SHAPES.items():
            for scale in SCALES:
                path = write(Path(folder) / f"{shape}-{scale}x.jsonl", size * scale)
                logs[shape, scale] = (path, len(path.read_bytes().splitlines()))
        runs = [(shape, scale, mode) for (shape, scale) in logs for mode in modes]

        def seconds(shape: str, scale: int, mode: str) -> float:
            start = time.perf_counter()
            report = verify_log(logs[shape, scale][0], modes[mode])
            elapsed = time.perf_counter() - start
            assert report.verdict is Verdict.VERIFIED, (shape, scale, report.finding)
            return elapsed

        for run in runs:
            seconds(*run)  # warm: imports, caches, the schema validators built
        us: dict[tuple[str, int, str], list[float]] = {run: [] for run in runs}
        for round_ in range(rounds):
            turn = round_ * 7 % len(runs)  # a stride prime to the 32 runs spreads the leads
            for run in runs[turn:] + runs[:turn]:
                us[run].append(seconds(*run) / logs[run[0], run[1]][1] * 1e6)
    median = statistics.median
    result: dict[str, dict[str, float]] = {}
    for shape in SHAPES:
        figures: dict[str, float] = {}
        for scale in SCALES:
            figures[f"records_{scale}x"] = float(logs[shape, scale][1])
            for mode in modes:
                figures[f"{mode}_us_per_record_{scale}x"] = median(us[shape, scale, mode])
        for mode in modes:
            ratios = [
                large / small
                for large, small in zip(us[shape, 8, mode], us[shape, 1, mode], strict=True)
            ]
            figures[f"{mode}_8x_vs_1x"] = median(ratios)
        result[shape] = figures
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="paired rounds (default 5)")
    parser.add_argument("--json-out", type=Path, help="also write the JSON result here")
    args = parser.parse_args()
    result = measure(args.rounds)
    for shape, figures in result.items():
        what = SHAPES[shape][2]
        print(
            f"{shape} ({what}; {figures['records_1x']:.0f} to {figures['records_8x']:.0f} "
            f"records): full {figures['full_us_per_record_1x']:.0f} -> "
            f"{figures['full_us_per_record_8x']:.0f} us/record, ratio "
            f"{figures['full_8x_vs_1x']:.2f}; --fast {figures['fast_us_per_record_1x']:.0f} -> "
            f"{figures['fast_us_per_record_8x']:.0f} us/record, ratio "
            f"{figures['fast_8x_vs_1x']:.2f} (target <= {TARGET})"
        )
    publish(result, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
