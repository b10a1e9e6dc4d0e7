"""Peak memory verifying long logs: it must not grow with the log's length (streaming).

Usage: ``python bench/memory_bench.py [--events 10000 100000] [--json-out FILE]``

For each size, plays one match of random players at a real table (a fixed-hands variant
of the ``table`` profile, played until the log holds at least that many events), then
verifies it in fresh Python processes, twice:

- the verifier's own objects: a child verifies the largest log first, then starts
  ``tracemalloc`` and verifies the log; its traced peak is what the verification itself
  allocated at most, in the same interpreter state for every size: CPython's free lists
  (2,000 tuples of each size up to 20, and so on) and the verifier's bounded caches already
  full, as in a host that verifies one log after another. Issue 33's target is the ratio
  of these peaks between sizes: at most 1.1. The same with the one-hand log verified first
  is reported beside it: there the free lists fill during the longer log, which counts
  them.
- the process: a child verifies the log alone and reads its peak resident memory
  (``VmHWM``); a child that verifies the one-hand log gives the baseline (the interpreter
  and the libraries), and the figure is each peak above it. It also counts the
  allocator's arenas and the libraries' own buffers, so it is the noisier of the two.

Generating the 100k log takes a minute or two; it is written to /dev/shm when there is one.
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
import resource, sys, tracemalloc
from pathlib import Path
from racing_demon.verify import Settings, Verdict, verify_log
log, key, warm_up = Path(sys.argv[1]), bytes.fromhex(sys.argv[2]), sys.argv[3:]
settings = Settings(table_key=key)
if warm_up:
    verify_log(Path(warm_up[0]), settings)
    tracemalloc.start()
report = verify_log(log, settings)
assert report.verdict is Verdict.VERIFIED, report.finding
if warm_up:
    print(report.records, tracemalloc.get_traced_memory()[1] // 1024)
    sys.exit()
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


def peak_kib(path: Path, warm_up: Path | None = None) -> tuple[int, int]:
    """Records verified and, in KiB, the verifying process's peak resident memory, or with
    ``warm_up`` (a log verified first) the peak that ``tracemalloc`` traced verifying."""
    key = TABLE_KEY.public_key().public_bytes_raw().hex()
    command = [sys.executable, "-c", CHILD, str(path), key, *([str(warm_up)] if warm_up else [])]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout.split()
    return int(output[0]), int(output[1])


def measure(sizes: list[int]) -> dict[str, float]:
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as temporary:
        folder = Path(temporary)
        one_hand = make_log(folder, 1)
        _, baseline = peak_kib(one_hand)
        result: dict[str, float] = {"baseline_peak_kib": float(baseline)}
        logs = {}
        for size in sizes:
            start = time.perf_counter()
            logs[size] = make_log(folder, size)
            result[f"generate_seconds_{size}"] = time.perf_counter() - start
        largest = logs[sizes[-1]]
        for size, path in logs.items():
            records, peak = peak_kib(path)
            result[f"records_{size}"] = float(records)
            result[f"peak_above_baseline_kib_{size}"] = float(peak - baseline)
            result[f"traced_peak_kib_{size}"] = float(peak_kib(path, warm_up=largest)[1])
            result[f"traced_after_one_hand_kib_{size}"] = float(peak_kib(path, warm_up=one_hand)[1])
        if len(sizes) >= 2:
            small, large = sizes[0], sizes[-1]
            for name in ("traced_peak_kib", "traced_after_one_hand_kib", "peak_above_baseline_kib"):
                ratio = result[f"{name}_{large}"] / max(result[f"{name}_{small}"], 1.0)
                result[f"{name.removesuffix('_kib')}_ratio"] = ratio
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
