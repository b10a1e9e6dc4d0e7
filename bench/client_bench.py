"""The browser client's speed (issue 32): the time from a click to its receipt shown, and
the frames per second of a spectator's page while a four-seat hand plays at bot speed, in
headless Chromium against a local `racing-demon serve`.

    python bench/client_bench.py [--moves 120] [--seconds 15] [--json-out FILE]

*Click to receipt.* A browser joins the person's seat of a one-hand nertz table with an
easy bot (through the lobby) and plays ``--moves`` moves, each a WebDriver click on a
button of the page's ``#rd-moves`` list (any listed move but resign and call). The page's
own clock times it: from the click event (a capture listener, ``performance.now()``) to
the change of ``#rd-last-receipt`` (a MutationObserver: the receipt is in the page) and
to the next frame after it (``requestAnimationFrame``: the receipt is painted). Beside
it, the page's latency figure (``#rd-latency``: from sending the submit to the receipt's
arrival, in client.js) and the server's own submit-to-receipt time: the same server, the
same table shape, played over loopback by the project's protocol client
(tests/serve/player.py, Python, no browser), the same number of moves. When a hand ends
before enough moves, the page accepts the final and the bench opens another table.

*Frames per second.* A table of four hard bots plays one hand while a spectator's page
(``/play/GAME`` with no seat) draws it; ``requestAnimationFrame`` callbacks are counted
for ``--seconds``, with the longest gap between two and the records the page checked in
that time. The same browser on an idle page (the lobby) gives the reference rate.

Nothing is written into the repository; the JSON goes to standard output (and
``--json-out``), a table to standard error. Needs Debian's chromium and chromium-driver,
selenium, and the serve extra.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser.play_harness import Browser, wait_for  # noqa: E402
from results import publish  # noqa: E402
from selenium.common.exceptions import (  # noqa: E402
    NoSuchElementException,
    StaleElementReferenceException,
)
from serve.player import Player, bot_strategy, create_table, join, steady_pause  # noqa: E402
from serve.server import Server, one_hand_rules, running_server  # noqa: E402

from racing_demon.sim.bots import HARD  # noqa: E402
from racing_demon.testing.browser import find_chromium  # noqa: E402

# Between a receipt shown and the next click: a click comes at least 120 ms after the last
# submission was sent, so client.js's own pacing (docs/protocol.md §10, about 8 new
# submissions a second) never holds one back and the figure stays the click's own cost.
PACE_S = 0.12
# The click's time in three parts (page clock): to the submit frame sent (signing, the
# pending move kept in IndexedDB), on the wire (to the receipt frame's arrival: the server
# and the network, as the Python client sees them), and the page's handling until shown
# (the record that came first and the receipt, each checked and kept before it is shown).
PARTS = {
    "toSend": "click_to_submit_sent",
    "wire": "submit_sent_to_receipt_arrived",
    "handled": "receipt_arrived_to_shown",
}
SKIPPED = (" resign", " call")  # moves that would end the hand the bench is timing

# Installed before the page's own scripts (CDP, outside the page's CSP): when a submit
# leaves the page and when a receipt frame reaches it, before client.js handles it.
WIRE_JS = """
(() => {
  const Native = window.WebSocket;
  const send = Native.prototype.send;
  Native.prototype.send = function (data) {
    if (typeof data === "string" && /"type":\\s*"submit"/.test(data)) {
      window.rdBenchSent = performance.now();
    }
    return send.call(this, data);
  };
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        const head = typeof event.data === "string" ? event.data.slice(0, 40) : "";
        if (/"type":\\s*"receipt"/.test(head) && window.rdBenchArrived === null) {
          window.rdBenchArrived = performance.now();
        }
      });
    }
  };
})();
"""

# Arm the page for one click: the click's time, then the receipt's change and its frame.
ARM_JS = """
const box = document.getElementById("rd-last-receipt");
const bench = (window.rdBench = {clicked: null, shown: null, painted: null});
window.rdBenchSent = null;
window.rdBenchArrived = null;
document.addEventListener("click", (event) => {
  if (bench.clicked === null && event.target.closest("#rd-moves button")) {
    bench.clicked = performance.now();
  }
}, {capture: true, once: true});
const observer = new MutationObserver(() => {
  if (bench.clicked === null) return;
  observer.disconnect();
  bench.shown = performance.now();
  requestAnimationFrame(() => { bench.painted = performance.now(); });
});
observer.observe(box, {attributes: true, childList: true, subtree: true, characterData: true});
"""

READ_JS = """
const bench = window.rdBench;
if (!bench || bench.painted === null) return null;
return {shown: bench.shown - bench.clicked, painted: bench.painted - bench.clicked,
        toSend: window.rdBenchSent - bench.clicked,
        wire: window.rdBenchArrived - window.rdBenchSent,
        handled: bench.shown - window.rdBenchArrived,
        client: Number(document.getElementById("rd-latency").dataset.ms),
        outcome: document.getElementById("rd-last-receipt").dataset.outcome};
"""

# Count animation frames for a while: the page's frame rate as it draws the table.
FRAMES_JS = """
const [seconds, done] = [arguments[0], arguments[arguments.length - 1]];
const copy = () => Number(document.getElementById("rd-copy")?.dataset.seq ?? -1);
const first = copy();
const start = performance.now();
let frames = 0, last = start, longest = 0;
function tick(now) {
  frames += 1;
  longest = Math.max(longest, now - last);
  last = now;
  if (now - start < seconds * 1000) requestAnimationFrame(tick);
  else done({frames, ms: now - start, longestGapMs: longest, records: copy() - first});
}
requestAnimationFrame(tick);
"""


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def figures(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(statistics.median(values), 2),
        "p95": round(quantile(values, 0.95), 2),
        "n": len(values),
    }


def playable(moves: list[str]) -> list[str]:
    return [move for move in moves if not move.endswith(SKIPPED)]


def browser_table(server: Server, browser: Browser) -> str:
    rules = one_hand_rules()
    seats = [{"kind": "person"}, {"kind": "bot", "bot": "easy"}]
    game = create_table(server.base, seats, name="client bench", rules=rules)
    browser.join_from_lobby(server.base, game, 0, "Bench")
    browser.wait("dealt", lambda s: s["connection"] == "open" and playable(s["moves"]), 90)
    return game


def click_to_receipt(server: Server, browser: Browser, moves: int) -> dict[str, Any]:
    """Click listed moves until ``moves`` receipts were shown; the page's timings."""
    shown: list[float] = []
    painted: list[float] = []
    client: list[float] = []
    parts: dict[str, list[float]] = {part: [] for part in PARTS}
    outcomes: dict[str, int] = {}
    tables = 1
    browser_table(server, browser)
    deadline = time.monotonic() + 60 + moves * 2.0
    while len(shown) < moves:
        assert time.monotonic() < deadline, f"{len(shown)} of {moves} moves in time"
        snap = browser.snapshot()
        if snap["finalShown"] or snap["ended"]:
            if snap["finalShown"]:
                browser.find("#rd-accept").click()
            browser_table(server, browser)
            tables += 1
            continue
        listed = playable(snap["moves"])
        if not listed:
            time.sleep(PACE_S)
            continue
        move = listed[secrets.randbelow(len(listed))]
        browser.driver.execute_script(ARM_JS)
        try:
            browser.find(f'#rd-moves button[data-move="{move}"]').click()
        except (NoSuchElementException, StaleElementReferenceException):
            continue  # the list was redrawn under us (a bot moved)
        try:
            timing = wait_for(
                lambda: browser.driver.execute_script(READ_JS), "the receipt shown", 15
            )
        except TimeoutError:
            continue  # the page submitted nothing (the move had left its list)
        shown.append(timing["shown"])
        painted.append(timing["painted"])
        client.append(timing["client"])
        for part in PARTS:
            parts[part].append(timing[part])
        outcomes[timing["outcome"]] = outcomes.get(timing["outcome"], 0) + 1
        time.sleep(PACE_S)
    return {
        "click_to_receipt_in_page_ms": figures(shown),
        "click_to_receipt_painted_ms": figures(painted),
        "client_submit_to_receipt_ms": figures(client),
        **{f"{PARTS[part]}_ms": figures(values) for part, values in parts.items()},
        "outcomes": outcomes,
        "tables": tables,
    }


async def protocol_client(server: Server, moves: int, folder: Path) -> list[float]:
    """The server's submit-to-receipt time for the project's protocol client (Python,
    loopback), same table shape; ms per answer."""
    answers: list[float] = []
    while len(answers) < moves:
        rules = one_hand_rules()
        seats = [{"kind": "person"}, {"kind": "bot", "bot": "easy"}]
        game = await asyncio.to_thread(
            create_table, server.base, seats, name="protocol client", rules=rules
        )
        seat = await asyncio.to_thread(join, server.base, game, 0, "Python")
        player = Player.for_seat(
            server.base,
            seat,
            out_dir=folder / game,
            strategy=bot_strategy(HARD),
            pause=steady_pause(int(PACE_S * 1000) + 100),
        )
        task = asyncio.create_task(player.run(time.monotonic() + 120))
        while not task.done() and len(answers) + len(player.answers) < moves:
            await asyncio.sleep(0.1)
        answers += [a.seconds * 1000 for a in player.answers if a.receipt is not None]
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, TimeoutError, ConnectionError):
            await task  # the player stopped mid-hand: its table is left to time out
    return answers[:moves]


def frames_per_second(server: Server, browser: Browser, seconds: float) -> dict[str, Any]:
    browser.open(server.base + "/")
    idle = browser.driver.execute_async_script(FRAMES_JS, seconds)
    rules = one_hand_rules()
    game = create_table(
        server.base, [{"kind": "bot", "bot": "hard"}] * 4, name="four bots", rules=rules
    )
    browser.open(f"{server.base}/play/{game}")
    browser.wait("the hand dealt", lambda s: int(s["seq"] or -1) >= 5, 90)
    playing = browser.driver.execute_async_script(FRAMES_JS, seconds)
    fps = playing["frames"] * 1000 / playing["ms"]
    idle_fps = idle["frames"] * 1000 / idle["ms"]
    return {
        "spectator_fps": round(fps, 1),
        "idle_fps": round(idle_fps, 1),
        "fps_ratio": round(fps / idle_fps, 3),
        "longest_frame_gap_ms": round(playing["longestGapMs"], 1),
        "records_per_second": round(playing["records"] * 1000 / playing["ms"], 1),
        "seconds": round(playing["ms"] / 1000, 1),
    }


def measure(moves: int, seconds: float) -> dict[str, Any]:
    found = find_chromium()
    if found is None:
        raise SystemExit("the client bench needs chromium and chromedriver on the PATH")
    with tempfile.TemporaryDirectory(prefix="client-bench-") as scratch:
        folder = Path(scratch)
        with running_server(folder / "server") as server:
            player = Browser(found, folder / "player", "player")
            player.driver.execute_cdp_cmd(
                "Page.addScriptToEvaluateOnNewDocument", {"source": WIRE_JS}
            )
            try:
                clicks = click_to_receipt(server, player, moves)
            finally:
                player.quit()
            reference = asyncio.run(protocol_client(server, moves, folder / "protocol"))
            spectator = Browser(found, folder / "spectator", "spectator")
            try:
                fps = frames_per_second(server, spectator, seconds)
            finally:
                spectator.quit()
    server_figures = figures(reference)
    in_page = clicks["click_to_receipt_in_page_ms"]["p50"]
    return {
        **clicks,
        "server_submit_to_receipt_ms": server_figures,
        "ratio_click_to_receipt_over_server_p50": round(in_page / server_figures["p50"], 2),
        "ratio_client_over_server_p50": round(
            clicks["client_submit_to_receipt_ms"]["p50"] / server_figures["p50"], 2
        ),
        **fps,
    }


def summary(result: dict[str, Any]) -> str:
    rows = [
        ("click to receipt in the page", result["click_to_receipt_in_page_ms"]),
        ("click to receipt painted", result["click_to_receipt_painted_ms"]),
        ("client.js: submit sent to receipt", result["client_submit_to_receipt_ms"]),
        ("  click to submit sent", result["click_to_submit_sent_ms"]),
        ("  submit sent to receipt frame arrived", result["submit_sent_to_receipt_arrived_ms"]),
        ("  receipt frame arrived to shown", result["receipt_arrived_to_shown_ms"]),
        ("protocol client (Python): submit to receipt", result["server_submit_to_receipt_ms"]),
    ]
    lines = ["| what | p50 ms | p95 ms | moves |", "| --- | --- | --- | --- |"]
    lines += [f"| {name} | {f['p50']} | {f['p95']} | {f['n']} |" for name, f in rows]
    lines.append(
        f"\nclick to receipt / server p50: {result['ratio_click_to_receipt_over_server_p50']}; "
        f"spectator {result['spectator_fps']} fps against {result['idle_fps']} idle "
        f"(ratio {result['fps_ratio']}), longest gap {result['longest_frame_gap_ms']} ms, "
        f"{result['records_per_second']} records/s"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=120)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    result = measure(args.moves, args.seconds)
    print(summary(result), file=sys.stderr)
    publish(result, args.json_out)


if __name__ == "__main__":
    main()
