"""Run every benchmark in one run on one machine and print ratios and JSON.

    python bench/run.py [--quick] [--json-out bench/results/latest.json]

Targets: check+apply median <= 0.5 x python-chess's PGN replay per ply; deriving one pack
<= 1.0 x random.shuffle of 52 items (paired rounds); on the golden two-signature log and
on a long simulated four-seat match alike, ``verify --fast`` per record <= 1.5 x
python-chess per ply (<= 1.0 x with the mypyc build; issue 33), full verification <= 0.75
x the same number of bare cryptography Ed25519 verifications, and full minus ``--fast`` <=
1.10 x the same number of bare libsodium verifications (the library the verifier uses);
the verifier's own objects verifying 100k events no more than verifying 10k (ratio of
the peaks tracemalloc traces <= 1.1; the peak resident memory is reported beside it);
2 verification jobs >= 1.8 x as fast as 1 on a corpus of simulated games, and 2 local
Dask workers >= 1.8 x as fast as 1; the cost per record of logs crafted to be slow, and
of a simulated match, at 8x their size <= 1.2 x at 1x, for each shape, in full and
``--fast``, and for a log crafted to make every record pay for a stuck search at
its cap; the viewer's page for a 2,080-record game under 1.5 MB and its first frame in
headless Chromium under 1 s (ratios to those targets; needs Debian's chromium and
chromium-driver); scoring a 64-table duplicate tournament <= 1.10 x verifying its logs
alone; ``racing-demon --help`` and ``--version`` <= 1.5 x ``python -c "import click"`` in
CPU. Simulated hands per second, and the worst stuck check at the cap, are reported
without a target. Ratios, not absolute times, are what compare across machines; nothing
here is a timed test. A whole run takes several minutes (it plays the corpora it
measures); ``--quick`` skips the memory, batch, crafted-log, stuck-search, viewer and
tournament figures.

With the mypyc build installed (``RACING_DEMON_USE_MYPYC=1 pip install .``), the ``--fast``
ratios to python-chess are reported as ``verify_*_fast_vs_chess_compiled`` instead.
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import batch_bench
import cli_startup_bench
import crafted_bench
import deal_bench
import engine_bench
import memory_bench
import sim_bench
import stuck_bench
import tournament_bench
import verify_bench
import viewer_bench
from results import publish

import racing_demon.game.engine

TARGETS = {
    "engine_vs_chess": 0.5,
    "deal_vs_shuffle": 1.0,
    **{
        f"verify_{log}_{figure}": target
        for log in ("golden", "simulated")
        for figure, target in (
            ("fast_vs_chess", 1.5),
            ("full_vs_bare_cryptography", 0.75),
            ("signatures_in_full_vs_bare_libsodium", 1.10),
        )
    },
    # The same figure when the mypyc build is the one installed (README, "An optional
    # compiled build"): it replaces the pure one in that run.
    **{f"verify_{log}_fast_vs_chess_compiled": 1.0 for log in ("golden", "simulated")},
    "memory_100k_vs_10k": 1.1,
    "batch_2_jobs_vs_1": 1 / 1.8,  # the inverse of the speedup, so that <= reads as met
    "batch_dask_2_workers_vs_1": 1 / 1.8,
    **{
        f"crafted_{shape}_{mode}_8x_vs_1x": crafted_bench.TARGET
        for shape in crafted_bench.SHAPES
        for mode in ("full", "fast")
    },
    "stuck_log_8x_vs_1x": 1.2,
    "viewer_page_vs_1_5_mb": 1.0,
    "viewer_first_frame_vs_1_s": 1.0,
    "tournament_score_vs_verify": tournament_bench.TARGET,
    "cli_help_vs_click": cli_startup_bench.TARGET,
    "cli_version_vs_click": cli_startup_bench.TARGET,
}


def compiled_build() -> bool:
    """Whether the racing_demon imported here is the mypyc build: its engine is a .so."""
    return Path(racing_demon.game.engine.__file__ or "").suffix == ".so"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json-out", type=Path, help="also write the JSON result here")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="skip memory, batch, crafted-log, stuck-search, viewer and tournament figures",
    )
    args = parser.parse_args()
    engine = engine_bench.measure()
    deal = deal_bench.measure()
    verification = verify_bench.measure()
    simulation = [sim_bench.measure("table", players, matches=5) for players in (2, 4)]
    startup = cli_startup_bench.measure()
    ratios = {
        "engine_vs_chess": engine["ratio"],
        "deal_vs_shuffle": deal["ratio"],
        "cli_help_vs_click": startup["help_vs_click"],
        "cli_version_vs_click": startup["version_vs_click"],
        **{
            f"verify_{log}_{figure}": verification[log][figure]
            for log in ("golden", "simulated")
            for figure in (
                "fast_vs_chess",
                "full_vs_bare_cryptography",
                "signatures_in_full_vs_bare_libsodium",
            )
        },
    }
    compiled = compiled_build()
    if compiled:
        for log in ("golden", "simulated"):
            ratios[f"verify_{log}_fast_vs_chess_compiled"] = ratios.pop(
                f"verify_{log}_fast_vs_chess"
            )
    stuck: dict[str, float] = {}
    memory: dict[str, float] = {}
    batch: dict[str, float] = {}
    crafted: dict[str, dict[str, float]] = {}
    viewer: dict[str, float] = {}
    tournament: dict[str, float] = {}
    if not args.quick:
        memory = memory_bench.measure([10_000, 100_000])
        batch = batch_bench.measure()
        ratios["memory_100k_vs_10k"] = memory["traced_peak_ratio"]
        ratios["batch_2_jobs_vs_1"] = batch["two_vs_one"]
        if "dask_speedup" in batch:
            ratios["batch_dask_2_workers_vs_1"] = 1 / batch["dask_speedup"]
        crafted = crafted_bench.measure()
        stuck = stuck_bench.measure()
        ratios["stuck_log_8x_vs_1x"] = stuck["per_slow_record_8x_vs_1x"]
        viewer = viewer_bench.measure()
        ratios["viewer_page_vs_1_5_mb"] = viewer["page_vs_target"]
        ratios["viewer_first_frame_vs_1_s"] = viewer["first_frame_vs_target"]
        tournament = tournament_bench.measure()
        ratios["tournament_score_vs_verify"] = tournament["score_vs_verify"]
        for shape, figures in crafted.items():
            for mode in ("full", "fast"):
                ratios[f"crafted_{shape}_{mode}_8x_vs_1x"] = figures[f"{mode}_8x_vs_1x"]
    result = {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "build": "compiled (mypyc)" if compiled else "pure Python",
        "engine": engine,
        "deal": deal,
        "verification": verification,
        "simulation": simulation,
        "startup": startup,
        "stuck": stuck,
        "memory": memory,
        "batch": batch,
        "crafted": crafted,
        "viewer": viewer,
        "tournament": tournament,
        "ratios": ratios,
        "targets": TARGETS,
        "met": {name: ratios[name] <= TARGETS[name] for name in TARGETS if name in ratios},
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
    print(f"build: {result['build']}")
    print(verify_bench.summary(verification))
    for figures in simulation:
        print(
            f"simulate {figures['profile']}, {figures['players']} players: "
            f"{figures['hands_per_second']} hands/s (no target)"
        )
    print(cli_startup_bench.summary(startup))
    if stuck:
        print(
            f"stuck check at the cap ({stuck['cap_arrangements']:.0f} arrangements): worst "
            f"{stuck['capped_check_worst_ms']:.1f} ms (no target); the slow log's records "
            f"{stuck['us_per_slow_record_1x']:.0f} us at 1x, "
            f"{stuck['us_per_slow_record_8x']:.0f} us at 8x: "
            f"ratio {ratios['stuck_log_8x_vs_1x']:.2f} "
            f"(target <= {TARGETS['stuck_log_8x_vs_1x']})"
        )
    if memory:
        print(
            f"the verifier's own objects at most (tracemalloc, free lists and caches full) "
            f"verifying {memory['records_10000']:.0f} records "
            f"{memory['traced_peak_kib_10000']:.0f} KiB, {memory['records_100000']:.0f} records "
            f"{memory['traced_peak_kib_100000']:.0f} KiB: ratio "
            f"{ratios['memory_100k_vs_10k']:.2f} (target <= {TARGETS['memory_100k_vs_10k']}); "
            f"after a one-hand log only {memory['traced_after_one_hand_ratio']:.2f}; "
            "peak resident memory above the interpreter "
            f"{memory['peak_above_baseline_kib_10000']:.0f} and "
            f"{memory['peak_above_baseline_kib_100000']:.0f} KiB: ratio "
            f"{memory['peak_above_baseline_ratio']:.2f}"
        )
    if batch:
        print(
            f"verify_many {batch['games']:.0f} games: 1 job {batch['one_job_s']:.1f} s, "
            f"2 jobs {batch['two_jobs_s']:.1f} s: speedup {batch['speedup']:.2f}x "
            "(target >= 1.8x)"
        )
        if "dask_speedup" in batch:
            print(
                f"local Dask cluster: 1 worker {batch['dask_one_worker_s']:.1f} s, 2 workers "
                f"{batch['dask_two_workers_s']:.1f} s: speedup {batch['dask_speedup']:.2f}x "
                "(target >= 1.8x)"
            )
    for shape, figures in crafted.items():
        print(
            f"crafted {shape}: cost per record at 8x over 1x: full "
            f"{figures['full_8x_vs_1x']:.2f}, --fast {figures['fast_8x_vs_1x']:.2f} "
            f"(target <= {crafted_bench.TARGET})"
        )
    if viewer:
        print(viewer_bench.summary(viewer))
    if tournament:
        print(tournament_bench.summary(tournament))
    publish(result, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
