"""Peak memory verifying long logs: it must not grow with the log's length (streaming).

Usage: ``python bench/memory_bench.py [--events 10000 100000] [--json-out FILE]``

For each size, plays one match of random players at a real table (a fixed-hands variant
of the ``table`` profile, played until the log holds at least that many events), then
verifies it in a fresh Python process and reads that process's peak resident memory
(``VmHWM``). A child that verifies a one-hand log gives the baseline: the interpreter
and the libraries. The figure that matters is each peak above that baseline, and their
ratio between sizes (target: about 1, not the ratio of the sizes). Generating the 100k
log takes minutes; it is written to /dev/shm when there is one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.deal import MatchSeed
from racing_demon.profiles import builtin_document, custom_variant, rules_from_document
from racing_demon.testing.randomplay import play_match, word_chooser

TABLE_KEY = Ed25519PrivateKey.from_private_bytes(
    bytes(range(32))
)  # a fixture, as in the golden logs
RECORDS_PER_HAND = 400  # about, for two random players under `table`: sizes the match

# VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec, so a child would report its
# parent's peak whenever that is larger.
CHILD = """
import resource, sys
from pathlib import Path
from racing_demon.verify import Settings, Verdict, verify_log
report = verify_log(Path(sys.argv[1]), Settings(table_key=bytes.fromhex(sys.argv[2])))
assert report.verdict is Verdict.VERIFIED, report.finding
try:
    status = Path("/proc/self/status").read_text().splitlines()
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
except OSError:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(report.records, peak)
"""


def make_log(folder: Path, events: int) -> Path:
    document = builtin_document("table")
    document["match"] = {
        "target": None,
        "max_hands": max(1, events // RECORDS_PER_HAND + 1),
        "lead_tie": "share",
    }
    path = folder / f"log-{events}.jsonl"
    play_match(
        path,
        custom_variant(rules_from_document(document)),
        TABLE_KEY,
        bytes(32),
        [bytes([0xA0]) * 16, bytes([0xA1]) * 16],
        word_chooser(MatchSeed.from_plain(f"memory bench {events}")),
        max_rounds=4 * events + 1000,
    )
    return path


def peak_kib(path: Path) -> tuple[int, int]:
    """Records verified and the verifying process's peak resident memory in KiB."""
    key = TABLE_KEY.public_key().public_bytes_raw().hex()
    output = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), key], check=True, capture_output=True, text=True
    ).stdout.split()
    return int(output[0]), int(output[1])


def measure(sizes: list[int]) -> dict[str, float]:
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as temporary:
        folder = Path(temporary)
        _, baseline = peak_kib(make_log(folder, 1))
        result: dict[str, float] = {"baseline_peak_kib": float(baseline)}
        for size in sizes:
            start = time.perf_counter()
            path = make_log(folder, size)
            made = time.perf_counter() - start
            records, peak = peak_kib(path)
            path.unlink()
            result[f"records_{size}"] = float(records)
            result[f"peak_above_baseline_kib_{size}"] = float(peak - baseline)
            result[f"generate_seconds_{size}"] = made
        if len(sizes) >= 2:
            small = max(result[f"peak_above_baseline_kib_{sizes[0]}"], 1.0)
            result["peak_ratio_largest_vs_smallest"] = (
                result[f"peak_above_baseline_kib_{sizes[-1]}"] / small
            )
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args(argv)
    result = measure(sorted(args.events))
    for name, value in result.items():
        print(f"{name:40s} {value:12.1f}")
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
