"""What the end-to-end tests of the play pages (and bench/client_bench.py) drive: headless
Chromium sessions each with a profile of its own (its own IndexedDB: its own key), the
frames each page's WebSockets send and receive (Chromium's performance log: the protocol as
the server saw it, beside what the page shows), downloads saved by Chromium itself into a
folder per browser (``Browser.setDownloadBehavior`` over CDP, then a click on the page's
link, as a person downloads), and a loopback proxy that can tamper with one ``record``
line on its way to the page.

Every wait here is bounded and raises ``TimeoutError`` naming what did not happen.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import ClientSession, WSMsgType, WSServerHandshakeError, web
from selenium import webdriver
from selenium.common.exceptions import (
    NoAlertPresentException,
    StaleElementReferenceException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains

from racing_demon.testing.browser import CHROMIUM_FLAGS

WAIT_S = 30.0  # a page's answer to one thing a player did, on a loaded 2-core machine
POLL_S = 0.05
MOVE_CLICK_S = 5.0  # for an element the page redraws to be clickable again
T = TypeVar("T")

# A card move's text (docs/rules.md §3): seat, source, target, faces (leading card first).
CARD_MOVE = re.compile(r"^(\d+) (demon|waste|w[1-5])>(f\+|f\d+|w[1-5]|u[1-5]) (.+)$")
# The documented keys (the page's #rd-keys) of a move's source; a work pile's is its digit.
KEY_FOR_SOURCE = {"demon": "d", "waste": "w"}


def wait_for(condition: Callable[[], T | None], what: str, timeout: float = WAIT_S) -> T:
    """The first truthy value of ``condition()``, polled until ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {timeout:.0f} s: {what}")
        time.sleep(POLL_S)


@dataclass(frozen=True)
class CardMove:
    """A card move's parts: enough to find its source and target on the page."""

    text: str
    seat: int
    source: str  # demon, waste, w1..w5
    target: str  # f+, f1.., w1..w5, u1..u5
    faces: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> CardMove | None:
        found = CARD_MOVE.match(text)
        if found is None:
            return None
        seat, source, target, faces = found.groups()
        return cls(text, int(seat), source, target, tuple(faces.split(" ")))

    @property
    def source_pile(self) -> str:
        return f"s{self.seat}.{self.source}"

    @property
    def target_pile(self) -> str:
        """The pile element a person activates as the target (a slide-under: the pile)."""
        if self.target.startswith("f"):
            return self.target
        return f"s{self.seat}.w{self.target[1:]}"

    @property
    def to_numbered_foundation(self) -> bool:
        return self.target.startswith("f") and self.target != "f+"


@dataclass(frozen=True)
class Frame:
    """One WebSocket text frame the page sent or received, as Chromium logged it."""

    sent: bool
    message: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.message.get("type"))


# The table page's state in one round trip: the ids of the design's §5.
SNAPSHOT_JS = """
const q = (s) => document.querySelector(s);
const attr = (s, n) => { const e = q(s); return e ? e.getAttribute(n) : null; };
const shown = (s) => { const e = q(s); return !!e && !e.hidden && e.checkVisibility(); };
const text = (s) => { const e = q(s); return e ? e.textContent.trim() : null; };
return {
  url: location.href,
  connection: attr("#rd-connection", "data-state"),
  stopping: attr("#rd-connection", "data-stopping-in-ms"),
  seq: attr("#rd-copy", "data-seq"),
  moves: Array.from(document.querySelectorAll("#rd-moves button[data-move]"))
    .filter((b) => !b.disabled).map((b) => b.dataset.move),
  receipt: {outcome: attr("#rd-last-receipt", "data-outcome"),
            reason: attr("#rd-last-receipt", "data-reason"),
            wonBy: attr("#rd-last-receipt", "data-won-by"),
            text: text("#rd-last-receipt")},
  warning: {shown: shown("#rd-warning"), code: attr("#rd-warning", "data-code"),
            text: text("#rd-warning")},
  status: text("#rd-status"),
  finalShown: shown("#rd-final"),
  ended: attr("#rd-ended", "data-verdict"),
  latency: attr("#rd-latency", "data-ms"),
  unsent: Array.from(document.querySelectorAll("#rd-offline-note [data-move]"))
    .map((e) => e.dataset.move),
  hand: text("#rd-hand"),
};
"""

# Click the #rd-moves button of a move at a wall-clock instant (ms since the epoch): two
# browsers given the same instant fire within a timer's slack of each other.
SCHEDULE_JS = """
const [move, at] = arguments;
window.rdE2eFired = "";
setTimeout(() => {
  const button = Array.from(document.querySelectorAll("#rd-moves button[data-move]"))
    .find((b) => b.dataset.move === move);
  if (button) button.click();
  window.rdE2eFired = button ? "clicked" : "gone";
}, Math.max(0, at - Date.now()));
"""


class Browser:
    """One headless Chromium with its own profile and download folder."""

    def __init__(self, found: tuple[str, str], folder: Path, name: str) -> None:
        self.name = name
        self.folder = folder
        self.downloads = folder / "downloads"
        self.downloads.mkdir(parents=True, exist_ok=True)
        binary, driver = found
        options = webdriver.ChromeOptions()
        options.binary_location = binary
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={folder / 'profile'}"):
            options.add_argument(flag)
        # The performance log carries every WebSocket frame: what the page really sent.
        options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
        self.driver = webdriver.Chrome(options=options, service=Service(driver))
        self.driver.execute_cdp_cmd(
            "Browser.setDownloadBehavior",
            {"behavior": "allow", "downloadPath": str(self.downloads), "eventsEnabled": True},
        )
        self.frames: list[Frame] = []
        self.sockets: list[str] = []  # URLs of every WebSocket the pages opened, in order
        self.console: list[dict[str, Any]] = []

    def quit(self) -> None:
        with contextlib.suppress(WebDriverException):
            self.driver.quit()

    # -- what the page sent and received --

    def drain(self) -> None:
        """Move Chromium's buffered log entries into ``frames``, ``sockets`` and ``console``."""
        for entry in self.driver.get_log("performance"):  # type: ignore[no-untyped-call]
            event = json.loads(entry["message"])["message"]
            method = event.get("method")
            params = event.get("params", {})
            if method == "Network.webSocketCreated":
                self.sockets.append(str(params.get("url")))
            elif method in ("Network.webSocketFrameSent", "Network.webSocketFrameReceived"):
                payload = params.get("response", {}).get("payloadData", "")
                with contextlib.suppress(ValueError):
                    message = json.loads(payload)
                    if isinstance(message, dict):
                        sent = method.endswith("Sent")
                        self.frames.append(Frame(sent, message))
        self.console.extend(self.driver.get_log("browser"))  # type: ignore[no-untyped-call]

    def submits_past(self, count: int) -> bool:
        return len(self.sent("submit")) > count

    def sent(self, *types: str) -> list[dict[str, Any]]:
        self.drain()
        return [f.message for f in self.frames if f.sent and (not types or f.type in types)]

    def received(self, *types: str) -> list[dict[str, Any]]:
        self.drain()
        return [f.message for f in self.frames if not f.sent and (not types or f.type in types)]

    def receipt_for(self, move: str) -> dict[str, Any] | None:
        """The body of the receipt that answered this page's last ``submit`` of ``move``."""
        refs = [m["ref"] for m in self.sent("submit") if m.get("move") == move]
        return self.receipt_by_ref(refs[-1]) if refs else None

    def receipt_by_ref(self, ref: str) -> dict[str, Any] | None:
        """The body of the receipt that answered this page's last ``submit`` with ``ref``:
        the first receipt with that ref after it (the log spans every page this browser
        opened, earlier tables' pages included, whose refs may repeat this one's)."""
        self.drain()
        asked = [i for i, f in enumerate(self.frames) if f.sent and f.message.get("ref") == ref]
        if not asked:
            return None
        for frame in self.frames[asked[-1] + 1 :]:
            if not frame.sent and frame.type == "receipt" and frame.message.get("ref") == ref:
                body = json.loads(frame.message["receipt"])["body"]
                assert isinstance(body, dict)
                return body
        return None

    # -- the page --

    def open(self, url: str) -> None:
        self.driver.get(url)

    def snapshot(self) -> dict[str, Any]:
        value = self.driver.execute_script(SNAPSHOT_JS)
        assert isinstance(value, dict)
        return value

    def find(self, css: str) -> Any:
        return self.driver.find_element("css selector", css)

    def wait(
        self, what: str, check: Callable[[dict[str, Any]], Any], timeout: float = WAIT_S
    ) -> dict[str, Any]:
        """The page's snapshot once ``check(snapshot)`` holds."""

        last: list[dict[str, Any]] = []

        def ready() -> dict[str, Any] | None:
            snap = self.snapshot()
            last[:] = [snap]
            return snap if check(snap) else None

        try:
            return wait_for(ready, f"{self.name}: {what}", timeout)
        except TimeoutError as error:
            # What the page showed last, and its last words: what a reviewer needs first.
            shown = {k: v for k, v in last[0].items() if k != "moves"} if last else {}
            self.drain()
            severe = [e["message"] for e in self.console if e.get("level") == "SEVERE"]
            raise TimeoutError(
                f"{error}; the page showed {shown}; its console's errors: {severe[-5:]}"
            ) from None

    def join_from_lobby(self, base: str, game: str, seat: int, name: str) -> str:
        """Open the lobby, wait for its key, give a name and join ``seat`` of ``game`` with
        the lobby's button; the key id the lobby showed."""
        self.open(base + "/")
        key_id: str = wait_for(
            lambda: str(self.find("#rd-key-id").text).strip(), f"{self.name}: the lobby's key id"
        )
        assert re.fullmatch(r"[0-9a-f]{16}", key_id), f"{self.name}: no key made: {key_id}"
        field_ = self.find("#rd-player-name")
        field_.clear()
        field_.send_keys(name)
        selector = f'button.rd-join[data-game="{game}"][data-seat="{seat}"]'

        def clicked() -> bool:
            # The lobby redraws its list when it changes: a button may go stale under us.
            with contextlib.suppress(StaleElementReferenceException):
                for button in self.driver.find_elements("css selector", selector):
                    button.click()
                    return True
            return False

        wait_for(clicked, f"{self.name}: the join button of seat {seat}")
        wait_for(
            lambda: self.driver.current_url.endswith(f"/play/{game}"),
            f"{self.name}: the table page after joining",
        )
        return key_id

    def click_pile(self, pile: str, face: str | None = None) -> None:
        """Click a pile (or, in a work pile, the card ``face``) as a person would."""
        css = f'[data-pile="{pile}"]' + (f' [data-face="{face}"]' if face else "")
        self.click(css)

    def click(self, css: str) -> None:
        """A real click on the element ``css`` finds; found again if the page redrew it
        between the finding and the click (the table redraws at every record)."""

        def clicked() -> bool:
            with contextlib.suppress(StaleElementReferenceException):
                self.find(css).click()
                return True
            return False

        wait_for(clicked, f"{self.name}: a click on {css}", MOVE_CLICK_S)

    def play_by_click(self, move: CardMove) -> None:
        """Source then target, clicked: the page submits the listed move they make."""
        face = move.faces[0] if move.source.startswith("w") else None
        self.click_pile(move.source_pile, face)
        self.click_pile(move.target_pile)

    def accept_alert(self) -> None:
        """Say yes to a confirm() the page opened, if it opened one."""
        with contextlib.suppress(NoAlertPresentException):
            self.driver.switch_to.alert.accept()

    def press(self, *keys: str) -> None:
        """Keys to the page itself (focus taken off any button first)."""
        self.driver.execute_script("document.activeElement && document.activeElement.blur()")
        chain = ActionChains(self.driver)
        for key in keys:
            chain.send_keys(key)
        chain.perform()

    def play_by_keys(self, move: CardMove) -> None:
        """The documented keys (``#rd-keys``): the source's key, then ``F`` for a
        foundation or the work pile's digit."""
        source = KEY_FOR_SOURCE.get(move.source, move.source[1:])
        target = "f" if move.target.startswith("f") else move.target[1:]
        self.press(source, target)

    def schedule_move(self, move: str, at_ms: int) -> None:
        self.driver.execute_script(SCHEDULE_JS, move, at_ms)

    def fired(self) -> str:
        """ "clicked" or "gone" once the scheduled click's instant came, "" before."""
        return str(self.driver.execute_script("return window.rdE2eFired || ''"))

    def download(self, link: str) -> bytes:
        """Click the page's download link ``link`` (a CSS selector) and return the bytes
        Chromium saved under the link's ``download`` name."""
        anchor = self.find(link)
        name = str(anchor.get_attribute("download") or "")
        assert name, f"{link} has no download name"
        target = self.downloads / name
        target.unlink(missing_ok=True)
        anchor.click()

        def saved() -> bytes | None:
            partial = list(self.downloads.glob("*.crdownload"))
            return target.read_bytes() if target.exists() and not partial else None

        return wait_for(saved, f"{self.name}: the download {name}")


@contextlib.contextmanager
def browsers(found: tuple[str, str], folder: Path, *names: str) -> Iterator[list[Browser]]:
    opened: list[Browser] = []
    try:
        for name in names:
            opened.append(Browser(found, folder / name, name))
        yield opened
    finally:
        for browser in opened:
            browser.quit()


# -- the tampering proxy ---------------------------------------------------------------------

_HOP_BY_HOP = {
    "host",
    "origin",
    "connection",
    "keep-alive",
    "upgrade",
    "content-length",
    "transfer-encoding",
    "accept-encoding",
    "sec-websocket-key",
    "sec-websocket-version",
    "sec-websocket-extensions",
    "sec-websocket-protocol",
}
_T_MS = re.compile(r'"t_ms":(\d+)')


@dataclass
class Tampered:
    seq: int
    original: str
    altered: str
    at: float  # time.monotonic() when the altered line went to the page


@dataclass
class TamperProxy:
    """A server as the page sees it that tampers: every request and WebSocket of the
    browser goes through here to ``upstream`` (the real server), on 127.0.0.1 only.
    ``arm(predicate)`` makes the next ``record`` whose body satisfies it arrive with its
    ``t_ms`` one more (still canonical, its chain intact, its table signature now false).
    A server message that satisfies ``cut_at`` is lost with its connection instead (``cut``
    counts them). The frames the page sends are kept with their time, each upgrade is
    counted, and each one the server refused (its status passed on to the page)."""

    upstream: str
    base: str = ""
    client_frames: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    upgrades: int = 0
    closed: int = 0
    tampered: Tampered | None = None
    cut_at: Callable[[dict[str, Any]], bool] | None = None
    cut: int = 0
    refused: int = 0

    def __post_init__(self) -> None:
        self._predicate: Callable[[dict[str, Any]], bool] | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self._session: ClientSession | None = None

    def start(self) -> str:
        self._thread.start()
        self.base = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(WAIT_S)
        return self.base

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(WAIT_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(WAIT_S)
        self._loop.close()

    def arm(self, predicate: Callable[[dict[str, Any]], bool]) -> None:
        self._predicate = predicate

    def frames_since(self, moment: float) -> list[dict[str, Any]]:
        return [message for at, message in list(self.client_frames) if at >= moment]

    async def _start(self) -> str:
        self._session = ClientSession(auto_decompress=False)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server  # the bound port of port 0
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        return f"http://127.0.0.1:{port}"

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    def _headers(self, request: web.Request) -> dict[str, str]:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        if "Origin" in request.headers:
            # The page's origin is this proxy's; to the server it comes from its own.
            headers["Origin"] = self.upstream
        return headers

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return await self._bridge(request)
        assert self._session is not None
        async with self._session.request(
            request.method,
            self.upstream + str(request.rel_url),
            headers=self._headers(request),
            data=await request.read() or None,
            allow_redirects=False,
        ) as answer:
            body = await answer.read()
            headers = {
                k: v
                for k, v in answer.headers.items()
                if k.lower() not in ("content-length", "transfer-encoding", "connection")
            }
            return web.Response(status=answer.status, body=body, headers=headers)

    def _alter(self, text: str) -> str:
        if self._predicate is None or self.tampered is not None:
            return text
        message = json.loads(text)
        if message.get("type") != "record":
            return text
        line = message["line"]
        body = json.loads(line)["body"]
        if not self._predicate(body):
            return text
        altered = _T_MS.sub(lambda m: f'"t_ms":{int(m.group(1)) + 1}', line, count=1)
        self.tampered = Tampered(body["seq"], line, altered, time.monotonic())
        return json.dumps({**message, "line": altered})

    async def _bridge(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        url = "ws" + self.upstream.removeprefix("http") + str(request.rel_url)
        try:
            upstream = await self._session.ws_connect(
                url, headers=self._headers(request), max_msg_size=0
            )
        except WSServerHandshakeError as refused:
            self.refused += 1
            return web.Response(status=refused.status, text=refused.message)
        page = web.WebSocketResponse(max_msg_size=0)
        await page.prepare(request)
        self.upgrades += 1

        async def down() -> None:
            async for message in upstream:
                if message.type is not WSMsgType.TEXT:
                    break
                if self.cut_at is not None and self.cut_at(json.loads(message.data)):
                    self.cut += 1
                    break
                await page.send_str(self._alter(message.data))

        async def up() -> None:
            async for message in page:
                if message.type is not WSMsgType.TEXT:
                    break
                with contextlib.suppress(ValueError):
                    self.client_frames.append((time.monotonic(), json.loads(message.data)))
                await upstream.send_str(message.data)

        tasks = [asyncio.ensure_future(down()), asyncio.ensure_future(up())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await upstream.close()
            await page.close()
            self.closed += 1
        return page
