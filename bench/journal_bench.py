"""The server's journal: records per second and records per fdatasync, 1, 10 and 200 writers.

    python bench/journal_bench.py [--seconds 2] [--rounds 3] [--dir DIR] [--json-out FILE]

Each writer is an asyncio task that plays a table's part in a loop: journal a log line of
its own game (lines of the golden logs, ≈ 600 bytes), await ``durable``, again. So each
writer has one record in flight, as a table whose outbox waits for its record before it
sends anything. Measured for 1, 10 and 200 writers, with the default ``max_wait_ms`` (2)
and with 0 (no lingering for company), each run bounded by ``--seconds``; the runs of a
round are interleaved in an order that turns each round, so a drift in the machine's load
falls on all alike. Figures: records/s (wall time), records per ``fdatasync``
(``JournalStats``), process CPU per record, and per writer count the gain over one
writer. Then the paced case, as people play: 800 writers (200 four-seat tables), each
journaling a record every 250 ms times 0.75-1.25 (≈ 3,200 records/s): records per
``fdatasync``, syncs per second, and the p50/p99 of ``log_line`` to ``durable``.
Medians (min-max) of the rounds. The log files are created empty: this measures
the journal alone (the tables' own flushed writes are their cost, not its).

The journal's folder is a temporary one under ``--dir`` (default: the system's temp
folder; pick one on the disk the server's data folder will use).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from racing_demon.serve.data import DataFolder
from racing_demon.serve.journal import Journal

ROOT = Path(__file__).resolve().parents[1]
LINES = [
    line
    for name in ("table-3p-signed", "peer2peer-2p", "nertz-4p-signed")
    for line in (ROOT / "tests" / "golden" / "logs" / f"{name}.jsonl").read_bytes().splitlines()
]
WRITERS = (1, 10, 200)
WAITS = (2.0, 0.0)


async def _measure(
    root: Path, writers: int, max_wait_ms: float, seconds: float
) -> dict[str, float]:
    folder = DataFolder(root)
    (root / "logs").mkdir(parents=True)
    games = [f"{writer + 1:032x}" for writer in range(writers)]
    for game in games:
        folder.log_path(game).touch()
    journal = Journal(folder, max_wait_ms=max_wait_ms)
    await journal.start()
    stop = time.monotonic() + seconds

    async def writer(number: int) -> int:
        done = 0
        while time.monotonic() < stop:
            line = LINES[(number * 97 + done) % len(LINES)]
            await journal.durable(journal.log_line(games[number], line))
            done += 1
        return done

    cpu, wall = time.process_time(), time.monotonic()
    await asyncio.gather(*(writer(n) for n in range(writers)))
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    stats = journal.stats
    await journal.close()
    return {
        "records_per_s": stats.records / wall,
        "records_per_sync": stats.records_per_sync,
        "cpu_us_per_record": cpu / stats.records * 1e6,
    }


async def _paced(root: Path, max_wait_ms: float, seconds: float) -> dict[str, float]:
    folder = DataFolder(root)
    (root / "logs").mkdir(parents=True)
    writers = 800
    games = [f"{writer // 4 + 1:032x}" for writer in range(writers)]
    for game in set(games):
        folder.log_path(game).touch()
    journal = Journal(folder, max_wait_ms=max_wait_ms)
    await journal.start()
    latencies: list[float] = []
    start = time.monotonic()
    stop = start + seconds

    async def writer(number: int) -> None:
        due, done = start + 0.25 * number / writers, 0
        while (now := time.monotonic()) < stop:
            await asyncio.sleep(max(0.0, due - now))
            sent = time.monotonic()
            line = LINES[(number * 97 + done) % len(LINES)]
            await journal.durable(journal.log_line(games[number], line))
            latencies.append(time.monotonic() - sent)
            done += 1
            due += 0.25 * (0.75 + 0.5 * ((number * 37 + done * 11) % 100) / 100)

    cpu, wall = time.process_time(), time.monotonic()
    await asyncio.gather(*(writer(n) for n in range(writers)))
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    stats = journal.stats
    await journal.close()
    latencies.sort()
    return {
        "records_per_s": stats.records / wall,
        "records_per_sync": stats.records_per_sync,
        "syncs_per_s": stats.batches / wall,
        "p50_ms": latencies[len(latencies) // 2] * 1000,
        "p99_ms": latencies[len(latencies) * 99 // 100] * 1000,
        "cpu_us_per_record": cpu / stats.records * 1e6,
    }


def _spread(values: list[float]) -> str:
    median = statistics.median(values)
    return f"{median:,.1f} ({min(values):,.1f}-{max(values):,.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--json-out", type=Path, default=None)
    options = parser.parse_args()
    cases = [(writers, wait) for wait in WAITS for writers in WRITERS]
    results: dict[tuple[int, float], list[dict[str, float]]] = {case: [] for case in cases}
    paced: dict[float, list[dict[str, float]]] = {wait: [] for wait in WAITS}
    for round_number in range(options.rounds):
        turn = round_number % len(cases)
        for writers, wait in cases[turn:] + cases[:turn]:
            with tempfile.TemporaryDirectory(dir=options.dir) as temp:
                measured = asyncio.run(_measure(Path(temp), writers, wait, options.seconds))
            results[writers, wait].append(measured)
        for wait in WAITS[turn % 2 :] + WAITS[: turn % 2]:
            with tempfile.TemporaryDirectory(dir=options.dir) as temp:
                paced[wait].append(asyncio.run(_paced(Path(temp), wait, options.seconds)))
    print(
        "| max_wait_ms | writers | records/s | records per fdatasync | CPU µs/record "
        "| gain over 1 writer |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for writers, wait in cases:
        runs = results[writers, wait]
        alone = results[1, wait]
        gains = [
            run["records_per_s"] / one["records_per_s"]
            for run, one in zip(runs, alone, strict=True)
        ]
        print(
            f"| {wait:g} | {writers} | {_spread([r['records_per_s'] for r in runs])} "
            f"| {_spread([r['records_per_sync'] for r in runs])} "
            f"| {_spread([r['cpu_us_per_record'] for r in runs])} | {_spread(gains)} |"
        )
    print()
    print(
        "| paced, 800 writers: max_wait_ms | records/s | records per fdatasync | fdatasyncs/s "
        "| p50 ms | p99 ms | CPU µs/record |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for wait, runs in paced.items():
        print(
            f"| {wait:g} | "
            + " | ".join(
                _spread([run[key] for run in runs])
                for key in (
                    "records_per_s",
                    "records_per_sync",
                    "syncs_per_s",
                    "p50_ms",
                    "p99_ms",
                    "cpu_us_per_record",
                )
            )
            + " |"
        )
    if options.json_out is not None:
        options.json_out.write_text(
            json.dumps(
                {
                    "closed": [
                        {"writers": writers, "max_wait_ms": wait, "runs": results[writers, wait]}
                        for writers, wait in cases
                    ],
                    "paced": [{"max_wait_ms": wait, "runs": runs} for wait, runs in paced.items()],
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
