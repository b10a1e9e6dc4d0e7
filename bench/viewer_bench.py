"""The game viewer: page size, time to the first frame in headless Chromium, and the
memory ``racing-demon view`` holds per record.

    python bench/viewer_bench.py [--rounds 5] [--memory-only] [--json-out viewer.json]

Simulates a 4-seat nertz match of about 2,000 records (the seed is fixed, so every run
measures the same game), writes its page with ``racing-demon view``'s builder and loads it
``--rounds`` times in a fresh headless Chromium tab. Each round also loads a reference page
of the same size (the log's text in a ``<pre>``), interleaved, so the first-frame time can
be read against what the same browser needs just to parse that many bytes.

Targets (issue 17): the page under 1.5 MB, the first frame under 1 s on this machine size.
The first frame is the page's own ``performance.mark("rd-first-frame")``, in ms since the
navigation started; the browser's checks keep running after it and their end is reported
without a target, and so is the pace of playing at 16x (the logged time covered over the
time asked for). Needs Debian's chromium and chromium-driver, and selenium
(``pip install -e '.[test]'``).

Memory (issue 29): ``racing-demon view`` runs in a fresh Python process on a log of about
1,700 records (1x) and one of about 15,000 (8x), played by bench/memory_bench.py's random
players (2,000 and 16,000 events), and on the 1x log's first two lines (the baseline: the
interpreter, the libraries and a page's fixed parts); each process reports its peak
resident memory (``VmHWM``). The three run in turn, three times. The figures are the peak
above the baseline per record at 1x and at 8x, and their ratio (8x over 1x): about 1 when
the memory is linear in the log's length, and the bytes per record say how small its
constant is. ``--memory-only`` measures this alone (no browser needed).

The engine page (issue 34; ``--engine`` measures it alone, with the runtime installed by
``racing-demon runtime install``): the same game's page written with ``view --engine``
(runtime and verifier inlined), opened from file:// ``--rounds`` times, each in a fresh
Chromium (cold: a new profile, nothing cached) and then reloaded in the same one (warm).
Start is the page's own measure, from RDEngine.boot to the verifier imported (Pyodide
started, the bundle written, ``verify.in_page`` imported). Replay is the engine's judgement
of the whole log, per record, run three more times in the warm page (its "run the checks
again" button), each time divided by native ``verify --fast`` of the same log run
in-process right after it: the median of those ratios (the machine's speed drifts too
much for two medians taken minutes apart). Memory is the renderer's peak resident memory
(VmHWM of its process).
Targets: warm start <= 3 s, replay <= 3x native.
"""

from __future__ import annotations

import argparse
import html
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from memory_bench import TABLE_KEY as MEMORY_TABLE_KEY
from memory_bench import make_log
from results import publish
from selenium.common.exceptions import TimeoutException

from racing_demon.log.keys import public_pem
from racing_demon.profiles import load_rules
from racing_demon.runtime import installed, runtime_dir
from racing_demon.sim.bots import BOTS
from racing_demon.sim.simulate import simulate
from racing_demon.testing.browser import find_chromium, headless_chromium
from racing_demon.verify import Settings, verify_log
from racing_demon.viewer import build_page, page_data, render_page
from racing_demon.viewer.engine import EngineOptions, EnginePage

SIZE_TARGET_BYTES = 1_500_000
FIRST_FRAME_TARGET_MS = 1000.0
TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes([9]) * 32)  # benchmark fixtures
PLAYER_KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([10 + seat]) * 32) for seat in range(4)]
SEED = "viewer bench nertz"  # 2,080 records: the "2,000-record game"
WARM_START_TARGET_S = 3.0
REPLAY_VS_NATIVE_TARGET = 3.0


def _game(folder: Path) -> Path:
    log = folder / "bench.jsonl"
    bots = [BOTS[speed] for speed in ("easy", "normal", "hard", "hard")]
    rules = load_rules("nertz")
    simulate(log, rules, bots, SEED, TABLE_KEY, player_keys=PLAYER_KEYS, receipts=False)
    return log


def _driver(profile: Path) -> Any:
    found = find_chromium()
    if found is None:
        raise SystemExit("the viewer bench needs chromium and chromedriver on the PATH")
    return headless_chromium(found, profile)


def _first_frame_ms(driver: Any, page: Path) -> tuple[float, float]:
    """The page's first-frame mark and the time its checklist settled, in ms."""
    driver.get("about:blank")
    driver.get(page.as_uri())
    first = driver.execute_async_script(
        """const done = arguments[arguments.length - 1];
        const look = () => {
          const mark = performance.getEntriesByName("rd-first-frame")[0];
          mark ? done(mark.startTime) : setTimeout(look, 5);
        };
        look();"""
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        settled = driver.execute_script(
            "return document.getElementById('rd-checks').dataset.done === 'true'"
            " ? performance.now() : null"
        )
        if settled is not None:
            return float(first), float(settled)
        time.sleep(0.02)
    raise RuntimeError("the page's checks did not settle within 60 s")


def _play_pace(driver: Any, page: Path, seconds: float = 2.0) -> float:
    """Playing at 16x for ``seconds``: the logged time covered (long pauses shortened to
    3 s, as the page shortens them) over the time 16x asks for; 1.0 keeps the pace."""
    driver.get("about:blank")
    driver.get(page.as_uri() + "#seq=1")
    driver.execute_async_script(
        """const done = arguments[arguments.length - 1];
        const look = () => document.body.dataset.ready === "true" ? done() : setTimeout(look, 5);
        look();"""
    )
    driver.execute_script(
        "const menu = document.getElementById('rd-speed'); menu.value = '16';"
        "menu.dispatchEvent(new Event('change'));"
        "window.rdPlayStarted = performance.now();"
        "document.getElementById('rd-play').click();"
    )
    time.sleep(seconds)
    shown, elapsed_ms = driver.execute_script(
        "document.getElementById('rd-play').click();"
        "return [Number(document.getElementById('rd-frame').dataset.seq),"
        " performance.now() - window.rdPlayStarted];"
    )
    return float(shown), float(elapsed_ms)


def _reference_ms(driver: Any, page: Path) -> float:
    """Time to the load event of a plain page of the same size, in ms."""
    driver.get("about:blank")
    driver.get(page.as_uri())
    return float(
        driver.execute_script("return performance.getEntriesByType('navigation')[0].loadEventEnd")
    )


def measure(rounds: int = 5) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        log = _game(folder)
        t_ms = [json.loads(line)["body"]["t_ms"] for line in log.open("rb")]
        records = len(t_ms)
        public = TABLE_KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        started = time.perf_counter()
        text = build_page(log, Settings(table_key=public))
        build_s = time.perf_counter() - started
        page = folder / "game.html"
        page.write_text(text, encoding="utf-8")
        size = page.stat().st_size
        reference = folder / "reference.html"
        body = html.escape(log.read_text(encoding="utf-8"))
        padding = max(0, size - len(body))
        reference.write_text(f"<!doctype html><pre>{body}</pre><!--{'x' * padding}-->")
        driver = _driver(folder / "profile")
        try:
            first: list[float] = []
            settled: list[float] = []
            plain: list[float] = []
            paces: list[float] = []
            for _ in range(rounds):
                frame_ms, checks_ms = _first_frame_ms(driver, page)
                first.append(frame_ms)
                settled.append(checks_ms)
                plain.append(_reference_ms(driver, reference))
                shown, elapsed_ms = _play_pace(driver, page)
                covered = sum(min(t_ms[k] - t_ms[k - 1], 3000) for k in range(2, int(shown) + 1))
                paces.append(covered / (16 * elapsed_ms))
        finally:
            driver.quit()
    first_ms = statistics.median(first)
    return {
        "records": float(records),
        "page_bytes": float(size),
        "page_vs_target": size / SIZE_TARGET_BYTES,
        "build_s": build_s,
        "first_frame_ms": first_ms,
        "first_frame_vs_target": first_ms / FIRST_FRAME_TARGET_MS,
        "checks_done_ms": statistics.median(settled),
        "reference_load_ms": statistics.median(plain),
        "first_frame_vs_reference_load": first_ms / statistics.median(plain),
        "play_16x_pace": statistics.median(paces),
        **measure_memory(),
    }


# VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec (bench/memory_bench.py).
MEMORY_CHILD = """
import resource, sys
from pathlib import Path
from racing_demon.cli import main
main(["view", sys.argv[1], "--table-key", sys.argv[2], "-o", sys.argv[3], "--force"],
     standalone_mode=False)
try:
    status = Path("/proc/self/status").read_text().splitlines()
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
except OSError:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(peak)
"""
MEMORY_EVENTS = (2_000, 16_000)  # the 1x and 8x logs, in events as memory_bench counts them


def _view_peak_kib(log: Path, key: Path, page: Path) -> int:
    """The peak resident memory, in KiB, of a process that writes ``log``'s page."""
    output = subprocess.run(
        [sys.executable, "-c", MEMORY_CHILD, str(log), str(key), str(page)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return int(output.split()[-1])


def measure_memory(rounds: int = 3) -> dict[str, float]:
    shm = Path("/dev/shm")
    with tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as scratch:
        folder = Path(scratch)
        one, eight = (make_log(folder, events) for events in MEMORY_EVENTS)
        base = folder / "base.jsonl"
        base.write_bytes(b"".join(one.read_bytes().splitlines(keepends=True)[:2]))
        key = folder / "table.pub"
        key.write_bytes(public_pem(MEMORY_TABLE_KEY))
        logs = {"base": base, "1x": one, "8x": eight}
        records = {name: len(log.read_bytes().splitlines()) for name, log in logs.items()}
        peaks: dict[str, list[int]] = {name: [] for name in logs}
        for _ in range(rounds):
            for name, log in logs.items():  # interleaved, so a busy spell hits all three
                peaks[name].append(_view_peak_kib(log, key, folder / f"{name}.html"))
    peak = {name: statistics.median(values) for name, values in peaks.items()}
    per_record = {
        name: 1024 * (peak[name] - peak["base"]) / (records[name] - records["base"])
        for name in ("1x", "8x")
    }
    return {
        "memory_records_1x": float(records["1x"]),
        "memory_records_8x": float(records["8x"]),
        "memory_baseline_peak_kib": float(peak["base"]),
        "memory_peak_kib_1x": float(peak["1x"]),
        "memory_peak_kib_8x": float(peak["8x"]),
        "memory_bytes_per_record_1x": per_record["1x"],
        "memory_bytes_per_record_8x": per_record["8x"],
        "memory_per_record_8x_vs_1x": per_record["8x"] / per_record["1x"],
    }


def _engine_box(driver: Any, seconds: float = 180) -> dict[str, str]:
    """The engine box's data once the page's engine has judged the log."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            box = driver.execute_script(
                "const b = document.getElementById('rd-engine');"
                "const state = b.dataset.state;"
                "return state === 'done' || state === 'error' ? {...b.dataset} : null"
            )
        except TimeoutException:  # the page's one thread is busy starting or judging
            continue
        if box is not None:
            if box["state"] != "done":
                raise RuntimeError(f"the engine could not run: {box}")
            return dict(box)
        time.sleep(0.05)
    raise RuntimeError(f"the engine did not judge within {seconds} s")


def _renderer_peak_kib(driver: Any) -> int:
    """The largest peak resident memory (VmHWM) among the renderer processes of this
    driver's browser: the processes descended from its chromedriver."""
    parents: dict[int, int] = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                stat = (proc / "stat").read_text()
                parents[int(proc.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    mine = {driver.service.process.pid}
    grown = True
    while grown:
        more = {pid for pid, parent in parents.items() if parent in mine} - mine
        mine |= more
        grown = bool(more)
    peaks = [0]
    for pid in mine:
        try:
            if b"--type=renderer" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            status = Path(f"/proc/{pid}/status").read_text().splitlines()
            peaks.extend(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
        except OSError:
            continue
    return max(peaks)


def measure_engine(rounds: int = 3) -> dict[str, float]:
    runtime = installed(runtime_dir())
    if runtime is None:
        raise SystemExit("the engine bench needs the runtime: racing-demon runtime install")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        log = _game(folder)
        records = len(log.read_bytes().splitlines())
        public = TABLE_KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        settings = Settings(table_key=public)
        engine = EnginePage.of(runtime, EngineOptions())
        page = folder / "engine.html"
        page.write_text(render_page(page_data(log, settings), engine=engine), encoding="utf-8")
        page_bytes = page.stat().st_size
        native_settings = Settings(table_key=public, fast=True)
        verify_log(log, native_settings)  # warm: imports, caches
        native: list[float] = []
        ratios: list[float] = []
        cold: list[float] = []
        warm: list[float] = []
        replay: list[float] = []
        memory: list[int] = []
        for round_ in range(rounds):
            profile = folder / f"profile-{round_}"
            driver = _driver(profile)
            try:
                driver.get(page.as_uri())
                cold.append(float(_engine_box(driver)["bootMs"]))
                driver.get("about:blank")
                driver.get(page.as_uri())
                warm.append(float(_engine_box(driver)["bootMs"]))
                for _ in range(3):
                    driver.execute_script(
                        "document.getElementById('rd-engine').dataset.state = 'again';"
                        "document.getElementById('rd-rerun').click();"
                    )
                    replay.append(float(_engine_box(driver)["judgeMs"]) / 1000)
                    # Native right after each judgement, so that each ratio is taken in one
                    # moment's conditions: this machine's speed drifts by half in minutes.
                    started = time.perf_counter()
                    verify_log(log, native_settings)
                    native.append(time.perf_counter() - started)
                    ratios.append(replay[-1] / native[-1])
                memory.append(_renderer_peak_kib(driver))
            finally:
                driver.quit()
    native_per_record = statistics.median(native) / records
    replay_per_record = statistics.median(replay) / records
    replay_vs_native = statistics.median(ratios)
    warm_s = statistics.median(warm) / 1000
    return {
        "engine_records": float(records),
        "engine_page_bytes": float(page_bytes),
        "engine_start_cold_s": statistics.median(cold) / 1000,
        "engine_start_warm_s": warm_s,
        "engine_start_warm_vs_target": warm_s / WARM_START_TARGET_S,
        "engine_replay_us_per_record": replay_per_record * 1e6,
        "native_fast_us_per_record": native_per_record * 1e6,
        "engine_replay_vs_native_fast": replay_vs_native,
        "engine_replay_vs_target": replay_vs_native / REPLAY_VS_NATIVE_TARGET,
        "engine_renderer_peak_mib": statistics.median(memory) / 1024,
    }


def engine_summary(figures: dict[str, float]) -> str:
    return (
        f"engine page of {figures['engine_records']:.0f} records: "
        f"{figures['engine_page_bytes'] / 1e6:.1f} MB; engine start cold "
        f"{figures['engine_start_cold_s']:.2f} s, warm {figures['engine_start_warm_s']:.2f} s "
        f"= {figures['engine_start_warm_vs_target']:.2f} x the 3 s target; replay "
        f"{figures['engine_replay_us_per_record']:.0f} us a record = "
        f"{figures['engine_replay_vs_native_fast']:.2f} x native verify --fast "
        f"({figures['native_fast_us_per_record']:.0f} us; median of the paired ratios) = "
        f"{figures['engine_replay_vs_target']:.2f} x the 3x target; renderer peak "
        f"{figures['engine_renderer_peak_mib']:.0f} MiB"
    )


def memory_summary(figures: dict[str, float]) -> str:
    return (
        f"view's peak memory above the baseline ({figures['memory_baseline_peak_kib'] / 1024:.0f}"
        f" MiB): {figures['memory_bytes_per_record_1x']:.0f} bytes a record at "
        f"{figures['memory_records_1x']:.0f} records, "
        f"{figures['memory_bytes_per_record_8x']:.0f} at {figures['memory_records_8x']:.0f}: "
        f"ratio {figures['memory_per_record_8x_vs_1x']:.2f} (8x over 1x)"
    )


def summary(figures: dict[str, float]) -> str:
    if "page_bytes" not in figures:
        return memory_summary(figures)
    page = (
        f"viewer page of {figures['records']:.0f} records: {figures['page_bytes'] / 1e6:.2f} MB "
        f"= {figures['page_vs_target']:.2f} x the 1.5 MB target; first frame "
        f"{figures['first_frame_ms']:.0f} ms = {figures['first_frame_vs_target']:.2f} x the 1 s "
        f"target ({figures['first_frame_vs_reference_load']:.2f} x loading a plain page of the "
        f"same size, {figures['reference_load_ms']:.0f} ms); the browser's checks done at "
        f"{figures['checks_done_ms']:.0f} ms; built in {figures['build_s']:.2f} s; playing at "
        f"16x keeps {figures['play_16x_pace']:.2f} of the logged pace (no target)"
    )
    return f"{page}; {memory_summary(figures)}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="page loads of each kind")
    parser.add_argument(
        "--memory-only", action="store_true", help="measure view's memory alone (no browser)"
    )
    parser.add_argument(
        "--engine", action="store_true", help="measure the engine page alone (view --engine)"
    )
    parser.add_argument("--json-out", type=Path, help="also write the JSON result here")
    args = parser.parse_args()
    if args.engine:
        figures = measure_engine(args.rounds)
        print(engine_summary(figures))
        publish(figures, args.json_out)
        return 0
    figures = measure_memory() if args.memory_only else measure(args.rounds)
    print(summary(figures))
    publish(figures, args.json_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
