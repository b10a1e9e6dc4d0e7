"""Batch verification here and on a local Dask cluster, 1 worker against 2, in one run.

    python bench/batch_bench.py [--games 300] [--rounds 1] [--no-dask] [--json-out FILE]

The corpus is ``--games`` short matches (one hand; two or three seats; table, peer2peer
and nertz; players signing or not) played by random players at a real table with the
golden logs' fixture keys, every choice drawn from the deal word stream, so the same
games come out every time: game i is the same in every corpus, so a smaller one is the
start of a larger one kept. Playing them takes minutes, so they are kept in the temp
folder and played again only when missing or stale (their first game no longer verifies:
the format changed).

Each round verifies the corpus four ways, in an order that alternates from round to round
so that a drift in the machine's load falls on both sides alike: ``verify_many`` with
``jobs=1`` (in this process) and ``jobs=2`` (two worker processes), and ``verify_on_dask``
on a local Dask cluster of one worker process and on one of two (one thread each; both
clusters are started before the first round and warmed up, so no start-up is timed). The
speedups are the medians of the rounds' paired ratios. The Dask workers read the logs
themselves (the client sends names), as on a real cluster with a shared file system.

Target (issue 6, and issue 18 for Dask): on a 2-core machine, 2 workers at least 1.8x as
fast as 1. Other work on the machine lowers the speedup, so run it on an idle machine:
the ``other_cores`` figures estimate how many cores other programs took.

Also measured, for docs/batch-verification.md's estimate: what a resumed run spends per
log it need not verify again (reading and hashing it: ``iter_resumed``), here and on the
2-worker cluster, where the CPU this process spends (the Dask client's and scheduler's)
is the cost of handing one log out.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import platform
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from results import publish

from racing_demon.batch import iter_resumed, verify_many, verify_on_dask
from racing_demon.game.deal import MatchSeed
from racing_demon.profiles import builtin_document, custom_variant, rules_from_document
from racing_demon.testing.randomplay import play_match, word_chooser
from racing_demon.verify import Settings, Verdict, verify_log

# The golden logs' fixture keys (scripts/regen_golden_logs.py): published, never for real.
TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
PLAYER_KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([0x50 + seat]) * 32) for seat in range(3)]
SECRET = bytes.fromhex("5ec2e7" * 10 + "0000")
SETTINGS = Settings(table_key=TABLE_KEY.public_key().public_bytes_raw())
# (profile, seats, players sign): game i plays VARIANTS[i % len(VARIANTS)].
VARIANTS = [
    (profile, seats, signed)
    for profile in ("table", "peer2peer", "nertz")
    for seats in (2, 3)
    for signed in (False, True)
]
TARGET_SPEEDUP = 1.8
CORPUS_VERSION = 1  # bump when the corpus's recipe changes


def play(path: Path, index: int) -> None:
    """Game ``index`` of the corpus, written to ``path``."""
    profile, seats, signed = VARIANTS[index % len(VARIANTS)]
    document = builtin_document(profile)
    document["match"]["max_hands"] = 1  # one hand: a short log
    play_match(
        path,
        custom_variant(rules_from_document(document)),
        TABLE_KEY,
        SECRET,
        [bytes([0xE0 + seat]) * 16 for seat in range(seats)],
        word_chooser(MatchSeed.from_plain(f"batch bench {index}")),
        player_keys=PLAYER_KEYS[:seats] if signed else None,
        game_id=f"{index:032x}",
    ).close()


def corpus(games: int) -> list[Path]:
    """The corpus's logs: the start of a fresh corpus as large or larger in the temp
    folder, else played now."""
    pattern = re.compile(rf"racing-demon-batch-bench-v{CORPUS_VERSION}-([0-9]+)")
    for kept in sorted(Path(tempfile.gettempdir()).iterdir()):
        match = pattern.fullmatch(kept.name)
        if match and int(match[1]) >= games and _fresh(kept, int(match[1])):
            return _paths(kept, int(match[1]))[:games]
    folder = Path(tempfile.gettempdir()) / f"racing-demon-batch-bench-v{CORPUS_VERSION}-{games}"
    paths = _paths(folder, games)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    started = time.perf_counter()
    with ProcessPoolExecutor() as pool:
        list(pool.map(play, paths, range(games)))
    (folder / "complete").touch()
    print(f"played {games} games into {folder} in {time.perf_counter() - started:.0f} s")
    return paths


def _paths(folder: Path, games: int) -> list[Path]:
    return [folder / f"game-{index:05d}.jsonl" for index in range(games)]


def _fresh(folder: Path, games: int) -> bool:
    first = _paths(folder, games)[0]
    complete = (folder / "complete").exists()
    return complete and verify_log(first, SETTINGS).verdict is Verdict.VERIFIED


def _busy_cpu_seconds() -> float:
    """CPU seconds all processes have used since boot (Linux's /proc/stat), else 0."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


@dataclass
class _Run:
    seconds: float  # wall time
    busy_cores: float  # cores busy on the whole machine meanwhile, on average
    cpu_seconds: float  # CPU used by this process (all the work, with one job)


def _timed(verify: Callable[[], list[Any]]) -> _Run:
    busy, cpu, started = _busy_cpu_seconds(), time.process_time(), time.perf_counter()
    reports = verify()
    seconds = time.perf_counter() - started
    busy, cpu = _busy_cpu_seconds() - busy, time.process_time() - cpu
    assert all(report.verdict is Verdict.VERIFIED for report in reports)
    return _Run(seconds, busy / seconds, cpu)


@contextlib.contextmanager
def _clusters() -> Iterator[dict[int, str]]:
    """Local Dask clusters of 1 and 2 worker processes (one thread each), warmed up: their
    scheduler addresses by number of workers."""
    from distributed import LocalCluster

    with contextlib.ExitStack() as stack:
        addresses = {}
        for workers in (1, 2):
            cluster = stack.enter_context(
                LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",  # any free port: no clash with another
                )
            )
            addresses[workers] = cluster.scheduler_address
        yield addresses


def measure(games: int = 300, rounds: int = 1, dask: bool | None = None) -> dict[str, float]:
    """Seconds to verify the corpus with 1 job and with 2, and (``dask``, by default when
    Dask is installed) on a local Dask cluster of 1 worker and of 2, medians over
    ``rounds``, and the speedups: the medians of each round's paired ratio (target
    >= 1.8). ``two_vs_one`` is the inverse of the jobs' speedup (<= 1 / 1.8), as
    bench/run.py reads it.

    ``other_cores`` estimates the cores other programs used during the runs: the machine's
    busy time less the verification's own CPU time (measured in the one-job run). Near 0,
    the machine was idle; at 0.5 or more, the speedup reads low for that reason.
    """
    if dask is None:  # the Dask runs need the dask extra
        dask = importlib.util.find_spec("distributed") is not None
    paths = corpus(games)
    ways: dict[str, Callable[[], list[Any]]] = {
        "one_job": lambda: verify_many(paths, SETTINGS, jobs=1),
        "two_jobs": lambda: verify_many(paths, SETTINGS, jobs=2),
    }
    runs: dict[str, list[_Run]] = {}
    with contextlib.ExitStack() as stack:
        if dask:
            addresses = stack.enter_context(_clusters())
            for workers, name in ((1, "dask_one_worker"), (2, "dask_two_workers")):
                address = addresses[workers]
                verify_on_dask(paths[: 4 * workers], SETTINGS, address)  # workers import
                ways[name] = lambda address=address: verify_on_dask(paths, SETTINGS, address)
        for round_ in range(rounds):
            order = list(ways) if round_ % 2 == 0 else list(reversed(ways))
            for name in order:
                runs.setdefault(name, []).append(_timed(ways[name]))
        figures = _figures(paths, runs)
        figures.update(_resume_skip(paths, addresses[2] if dask else None))
    return figures


def _figures(paths: list[Path], runs: dict[str, list[_Run]]) -> dict[str, float]:
    games = len(paths)
    work = statistics.median(run.cpu_seconds for run in runs["one_job"])
    figures = {
        "games": float(games),
        "records": float(sum(path.read_bytes().count(b"\n") for path in paths)),
        "bytes": float(sum(path.stat().st_size for path in paths)),
        "cpu_count": float(os.cpu_count() or 1),
        "rounds": float(len(runs["one_job"])),
    }
    for name, timed in runs.items():
        seconds = statistics.median(run.seconds for run in timed)
        figures[f"{name}_s"] = seconds
        figures[f"{name}_ms_per_game"] = seconds / games * 1e3
        figures[f"{name}_other_cores"] = max(run.busy_cores - work / run.seconds for run in timed)
    pairs = [("one_job", "two_jobs", "speedup")]
    if "dask_one_worker" in runs:
        pairs.append(("dask_one_worker", "dask_two_workers", "dask_speedup"))
    for one, two, name in pairs:
        ratios = [a.seconds / b.seconds for a, b in zip(runs[one], runs[two], strict=True)]
        figures[name] = statistics.median(ratios)
    figures["two_vs_one"] = 1 / figures["speedup"]
    return figures


def _resume_skip(paths: list[Path], scheduler: str | None) -> dict[str, float]:
    """What a resumed run spends on a log it verified before (reading and hashing it),
    here in one process and, given ``scheduler``, on the cluster of 2 workers.

    The workers do next to nothing there, so the CPU this process spends is the Dask
    client's and scheduler's: a fixed cost per run (connecting) and one per log handed
    out, told apart by resuming all the logs and half of them (median of two each).
    """
    first = list(iter_resumed(paths, SETTINGS, {}, jobs=1))
    known = {done.source: done.sha256 for done in first if done.sha256 is not None}

    def resumed(logs: list[Path], **where: Any) -> tuple[float, float]:
        cpu, started = time.process_time(), time.perf_counter()
        again = list(iter_resumed(logs, SETTINGS, known, **where))
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        assert all(done.report is None for done in again)
        return seconds, cpu

    games = len(paths)
    figures = {"resume_skip_ms_per_game": resumed(paths, jobs=1)[0] / games * 1e3}
    if scheduler is None:
        return figures
    half = paths[: games // 2]
    whole, halves = [], []
    for _ in range(2):
        whole.append(resumed(paths, scheduler=scheduler))
        halves.append(resumed(half, scheduler=scheduler))
    wall = statistics.median(seconds for seconds, _ in whole)
    cpu_whole = statistics.median(cpu for _, cpu in whole)
    cpu_half = statistics.median(cpu for _, cpu in halves)
    per_log = max(0.0, cpu_whole - cpu_half) / (games - len(half))
    figures["dask_resume_skip_ms_per_game"] = wall / games * 1e3
    figures["dask_client_ms_per_game"] = per_log * 1e3
    figures["dask_client_fixed_s"] = max(0.0, cpu_whole - per_log * games)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300, help="corpus size (default 300)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of runs (default 1)")
    parser.add_argument("--no-dask", action="store_true", help="leave out the Dask runs")
    parser.add_argument("--json-out", type=Path, help="also write the JSON result here")
    args = parser.parse_args()
    figures = measure(args.games, args.rounds, dask=not args.no_dask)
    speedups = [figures["speedup"], figures.get("dask_speedup", TARGET_SPEEDUP)]
    result = {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "batch": figures,
        "target_speedup": TARGET_SPEEDUP,
        "met": min(speedups) >= TARGET_SPEEDUP,
    }
    others = max(value for name, value in figures.items() if name.endswith("other_cores"))
    if others > 0.25:
        print(f"warning: other programs used about {others:.1f} cores during the runs")
    print(
        f"{args.games} games ({figures['records']:.0f} records), median of {args.rounds} "
        f"rounds: jobs 1 {figures['one_job_s']:.2f} s, 2 {figures['two_jobs_s']:.2f} s, "
        f"speedup {figures['speedup']:.2f}x (target >= {TARGET_SPEEDUP}x)"
    )
    if "dask_speedup" in figures:
        print(
            f"Dask workers 1 {figures['dask_one_worker_s']:.2f} s, "
            f"2 {figures['dask_two_workers_s']:.2f} s, speedup {figures['dask_speedup']:.2f}x; "
            f"client and scheduler {figures['dask_client_ms_per_game']:.3f} ms CPU per log "
            f"and {figures['dask_client_fixed_s']:.2f} s per run"
        )
    publish(result, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
