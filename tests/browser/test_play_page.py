"""The lobby and the table page in one real browser against the real server (issue 32,
"The page", "The player's key and evidence", "Playing"; docs/client-design §5): the lobby
renders and makes a key whose id it shows, the exported .pub is the key the id names, a
table with a bot is created and joined from the form, the table page draws the table with
the player's own seat first and every pile named, and a move is played by click, by the
documented keys and by a pointer drag, each answered by the table's receipt on the page.
The whole match, races, reloads and restarts are tests/browser/test_play_e2e.py's.
"""

from __future__ import annotations

import hashlib
import re
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_pem_public_key,
)
from serve.pinged import pinged_seat
from serve.player import api
from serve.server import needs_server, one_hand_rules, running_server

T = TypeVar("T")
WAIT_S = 30.0
TURNS = 60  # stock turns to find a card move of the wanted kind before giving up
pytestmark = [needs_server]


@pytest.fixture
def browser(fresh_browser: Any) -> Any:
    """Every test here plays at a table: each takes a browser of its own (conftest's
    fresh_browser says why)."""
    return fresh_browser


CARD_MOVE = re.compile(r"^(\d+) (demon|waste|w\d)>(f\+|f\d+|w\d|u\d) (.+)$")
KEY_FOR_SOURCE = {"demon": "d", "waste": "w"}
STOCK = ("turn", "recycle")  # the moves key T makes


def wait_for(condition: Callable[[], T | None], what: str, timeout: float = WAIT_S) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"waited {timeout:.0f} s for {what}")


def css(driver: Any, selector: str) -> Any:
    return driver.find_element("css selector", selector)


def attribute(driver: Any, selector: str, name: str) -> str:
    return str(css(driver, selector).get_attribute(name) or "")


def download(driver: Any, selector: str, folder: Path) -> bytes:
    """Click the link ``selector`` as a person does and return the bytes Chromium saved
    under its ``download`` name (the pages' CSP lets no script read a blob URL back)."""
    link = css(driver, selector)
    name = str(link.get_attribute("download") or "")
    assert name, f"{selector} has no download name"
    saved = folder / name
    saved.unlink(missing_ok=True)
    link.click()
    wait_for(lambda: saved.is_file() and saved.stat().st_size > 0, f"{name} saved")
    time.sleep(0.2)  # Chromium renames the finished file into place: let it finish
    return saved.read_bytes()


def listed_moves(driver: Any) -> list[str]:
    moves = driver.execute_script(
        "return [...document.querySelectorAll('#rd-moves button[data-move]')]"
        ".map((b) => b.dataset.move)"
    )
    assert isinstance(moves, list)
    return [str(move) for move in moves]


def press(driver: Any, *keys: str) -> None:
    """Keys to the page itself, as a person types them with no button focused."""
    from selenium.webdriver.common.action_chains import ActionChains

    driver.execute_script("document.activeElement && document.activeElement.blur()")
    chain = ActionChains(driver)
    for key in keys:
        chain.send_keys(key)
    chain.perform()


def answered(driver: Any, move: str, before: str) -> dict[str, str]:
    """Wait for the receipt of ``move`` on the page: #rd-last-receipt names it in words
    (RDPlay.moveWords), with an outcome that logged it, and the latency figure is set."""
    words = str(driver.execute_script("return RDPlay.moveWords(arguments[0])", move))

    def shown() -> dict[str, str] | None:
        text = str(css(driver, "#rd-last-receipt").text)
        if text == before or words not in text:
            return None
        return {
            "text": text,
            "outcome": attribute(driver, "#rd-last-receipt", "data-outcome"),
            "latency": attribute(driver, "#rd-latency", "data-ms"),
        }

    receipt = wait_for(shown, f"the receipt of {move!r} on the page")
    assert receipt["outcome"] in {"move", "tie", "bounce"}, receipt
    assert receipt["latency"].isdigit(), receipt
    return receipt


def find_card_move(driver: Any, wanted: Callable[[re.Match[str]], bool]) -> re.Match[str]:
    """A listed card move ``wanted`` accepts; the stock is turned (key T) until one comes."""
    for _ in range(TURNS):
        for move in listed_moves(driver):
            found = CARD_MOVE.match(move)
            if found and wanted(found):
                return found
        turn = next((move for move in listed_moves(driver) if move.split(" ")[1] in STOCK), None)
        assert turn is not None, f"no move listed at all: {listed_moves(driver)}"
        before = str(css(driver, "#rd-last-receipt").text)
        press(driver, "t")
        answered(driver, turn, before)
    raise AssertionError(f"no wanted card move came in {TURNS} turns")


def uncovered(found: re.Match[str]) -> bool:
    """A move of one card no other card lies on (a work pile's others fan over it, and a
    pointer on a covered card reaches the one above)."""
    return found.group(2) in KEY_FOR_SOURCE or " " not in found.group(4)


def target_pile(found: re.Match[str]) -> str:
    seat, _source, target, _faces = found.groups()
    return target if target.startswith("f") else f"s{seat}.w{target[1:]}"


def test_the_lobby_and_the_table_page(browser: Any, tmp_path: Path, artifacts: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    with running_server(tmp_path) as server:
        browser.set_window_size(1280, 900)
        browser.get(server.base + "/")
        browser.get_log("browser")  # what came before this page is not its fault

        # "On first visit the page makes an Ed25519 key pair ... it shows the key id, lets
        # the player export the public key (a .pub the CLI reads)."
        shown_id = wait_for(lambda: str(css(browser, "#rd-key-id").text).strip(), "the key id")
        whole_id = attribute(browser, "#rd-key-id", "data-id")
        assert re.fullmatch(r"[0-9a-f]{16}", shown_id) and whole_id.startswith(shown_id)
        wait_for(lambda: attribute(browser, "#rd-export-key", "href"), "the .pub link")
        saved = tmp_path / "downloads"
        browser.execute_cdp_cmd(
            "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(saved)}
        )
        pem = download(browser, "#rd-export-key", saved)
        assert pem.startswith(b"-----BEGIN PUBLIC KEY-----"), pem[:80]
        public = load_pem_public_key(pem)
        assert isinstance(public, Ed25519PublicKey)
        raw = public.public_bytes(Encoding.Raw, PublicFormat.Raw)
        assert hashlib.sha256(raw).hexdigest() == whole_id
        assert attribute(browser, "#rd-export-key", "download").endswith(".pub")

        # Create a table (nertz: no call, no agreement, no resignation) with a bot; the
        # creator joins seat 0 and lands on the table page.
        name = css(browser, "#rd-player-name")
        name.clear()
        name.send_keys("Ada")
        Select(css(browser, "#rd-profile")).select_by_value("nertz")
        Select(css(browser, "#rd-seat-count")).select_by_value("2")
        Select(css(browser, 'select.rd-seat-kind[data-seat="1"]')).select_by_value("bot:easy")
        css(browser, "#rd-create-submit").click()
        wait_for(lambda: "/play/" in browser.current_url, "the table page")
        game = browser.current_url.rsplit("/", 1)[1]
        assert re.fullmatch(r"[0-9a-f]{32}", game)

        # The table page: connected, the deal drawn, the seat's moves listed.
        wait_for(lambda: attribute(browser, "#rd-connection", "data-state") == "open", "open")
        wait_for(lambda: listed_moves(browser), "the seat's moves")
        seats = browser.find_elements("css selector", "#rd-seats .rd-seat")
        assert len(seats) == 2
        own = css(browser, '#rd-seats .rd-seat[data-seat="0"]')
        other = css(browser, '#rd-seats .rd-seat[data-seat="1"]')
        assert (own.location["y"], own.location["x"]) <= (other.location["y"], other.location["x"])
        piles = browser.find_elements("css selector", "#rd-table [data-pile]")
        assert piles and all(pile.get_attribute("aria-label") for pile in piles)
        assert css(browser, '[data-pile="s0.demon"]').get_attribute("aria-label").startswith("Ada")
        assert css(browser, "#rd-turn").is_displayed()
        for hidden in ("#rd-call", "#rd-agree", "#rd-resign", "#rd-warning", "#rd-ended"):
            assert not css(browser, hidden).is_displayed(), hidden
        assert css(browser, "#rd-keys").text.count("Esc")
        assert attribute(browser, "#rd-copy", "data-seq").isdigit()
        log_link = wait_for(lambda: attribute(browser, "#rd-download-log", "href"), "log link")
        assert log_link.startswith("blob:")
        assert attribute(browser, "#rd-download-log", "download") == f"{game}.jsonl"
        assert (
            attribute(browser, "#rd-download-receipts", "download")
            == f"{game}.seat0.receipts.jsonl"
        )
        copy = download(browser, "#rd-download-log", saved)
        with urllib.request.urlopen(f"{server.base}/games/{game}.jsonl", timeout=10) as answer:
            served = answer.read()
        assert copy.endswith(b"\n") and served.startswith(copy), (copy[-200:], served[:200])

        # "Own piles are interactive: click a card then its target ..."
        found = find_card_move(browser, uncovered)
        move, source, faces = found.group(0), found.group(2), found.group(4).split(" ")
        face = f' [data-face="{faces[0]}"]' if source.startswith("w") else ""
        before = str(css(browser, "#rd-last-receipt").text)
        css(browser, f'[data-pile="s0.{source}"]{face}').click()
        css(browser, f'[data-pile="{target_pile(found)}"]').click()
        answered(browser, move, before)

        # "... and keyboard play (a documented key for each pile)": D or W, then F or the
        # work pile's digit (a demon or waste card: one card, so the keys name one move).
        found = find_card_move(browser, lambda m: m.group(2) in KEY_FOR_SOURCE)
        move, target = found.group(0), found.group(3)
        before = str(css(browser, "#rd-last-receipt").text)
        press(
            browser, KEY_FOR_SOURCE[found.group(2)], "f" if target.startswith("f") else target[1:]
        )
        answered(browser, move, before)

        # "... drag and drop": a pointer drag from the card onto its target.
        found = find_card_move(browser, uncovered)
        move, source, faces = found.group(0), found.group(2), found.group(4).split(" ")
        card = css(browser, f'[data-pile="s0.{source}"] [data-face="{faces[0]}"]')
        before = str(css(browser, "#rd-last-receipt").text)
        ActionChains(browser).click_and_hold(card).move_by_offset(12, 12).move_to_element(
            css(browser, f'[data-pile="{target_pile(found)}"]')
        ).release().perform()
        answered(browser, move, before)

        # "every move is playable from it with Tab/Enter alone": a listed move, by Enter.
        move = listed_moves(browser)[0]
        before = str(css(browser, "#rd-last-receipt").text)
        css(browser, f'#rd-moves button[data-move="{move}"]').send_keys(Keys.ENTER)
        answered(browser, move, before)

        # A phone-sized screen: nothing wider than the window.
        browser.set_window_size(360, 740)
        time.sleep(0.3)
        widths = browser.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        browser.save_screenshot(str(artifacts / "play-page-360.png"))
        assert widths[0] <= widths[1], widths
        browser.set_window_size(1280, 900)

        # The strict CSP holds: no inline script or style was refused.
        refused = [
            entry["message"]
            for entry in browser.get_log("browser")
            if "Content Security Policy" in entry["message"]
        ]
        assert refused == []

        # Back in the lobby, the table is listed with this browser's way back to its seat.
        browser.get(server.base + "/")
        row = wait_for(
            lambda: browser.find_elements("css selector", f'#rd-open-tables [data-game="{game}"]'),
            "the table's row",
        )[0]
        assert (
            row.find_element("css selector", "a.rd-watch")
            .get_attribute("href")
            .endswith(f"/play/{game}")
        )
        assert row.find_elements("css selector", "a.rd-return")


def test_the_lobby_shows_each_seat_s_round_trip_and_warns_above_the_table_s_limit(
    browser: Any, tmp_path: Path
) -> None:
    """Issue 35, point 6: "the lobby shows each seat's round trip before the deal and warns
    above the table's limit; a table may set a maximum round trip". A table with a 50 ms
    limit; seat 1's client answers every ping 300 ms late, seat 0's at once."""
    with running_server(tmp_path) as server:
        body = {"name": "lag", "profile": "nertz", "seats": [{"kind": "person"}] * 3}
        game = api(server.base, "POST", "/api/tables", {**body, "max_rtt_ms": 50})["game"]
        row = f'#rd-open-tables [data-game="{game}"]'
        with (
            pinged_seat(server.base, game, 0, "Quick", 0.0),
            pinged_seat(server.base, game, 1, "Slow", 0.3),
        ):
            browser.get(server.base + "/")
            warning = wait_for(
                lambda: browser.find_elements("css selector", f"{row} .rd-slow"), "the warning"
            )[0]
            assert "1" in str(warning.get_attribute("data-seats")).split(",")
            assert "above this table's limit of 50 ms" in warning.text
            seats = str(css(browser, f"{row} .rd-seat-list").text)
            assert re.search(r"seat 1: Slow \(round trip \d+ ms, above this table's 50 ms\)", seats)
            assert "seat 2: free" in seats


HOSTILE = "<img src=x onerror=alert(1)>"


def seated(driver: Any, base: str, table: str, player: str) -> str:
    """From the lobby page, as its buttons do: a table of ``table`` with a bot, seat 0
    joined as ``player``; the table page opened. The game's id."""
    driver.get(base + "/")
    wait_for(lambda: str(css(driver, "#rd-key-id").text).strip(), "the key id")
    driver.set_script_timeout(WAIT_S)
    game = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "(async () => {"
        "  const {game} = await RDClient.lobby.createTable({name: arguments[0],"
        "    rules: arguments[1], seats: [{kind: 'person'}, {kind: 'bot', bot: 'easy'}]});"
        "  await RDClient.lobby.join(game, 0, arguments[2]);"
        "  return game;"
        "})().then(done, (error) => done(String(error)));",
        table,
        one_hand_rules(),
        player,
    )
    assert re.fullmatch(r"[0-9a-f]{32}", str(game)), game
    driver.get(f"{base}/play/{game}")
    wait_for(lambda: attribute(driver, "#rd-connection", "data-state") == "open", "open")
    return str(game)


def test_hostile_names_are_shown_as_text(browser: Any, tmp_path: Path) -> None:
    """Review of issue 32: "test with a hostile display name and table name
    (`<img src=x onerror=alert(1)>`): the seat header's textContent equals it and no img
    element appears"."""
    with running_server(tmp_path) as server:
        game = seated(browser, server.base, HOSTILE, HOSTILE)
        header = wait_for(
            lambda: browser.execute_script(
                "const name = document.querySelector('.rd-seat[data-seat=\"0\"] .rd-name');"
                "return name && name.textContent"
            ),
            "the seat header",
        )
        assert header == HOSTILE
        # Review of issue 32: the words say exactly what was checked before co-signing.
        words = browser.execute_script(
            "return [RDPlay.signedWords({what: 'cosign', keysUnknown: [1]}),"
            " RDPlay.signedWords({what: 'cosign', keysUnknown: []})]"
        )
        assert "seat 1's key was not known to this page when it co-signed" in words[0]
        assert "entropy signature under the key the genesis names was checked" in words[0]
        assert "rules and keys" not in words[0] and "rules and keys" in words[1]
        # Review of issue 32: checkWords "says 'nothing failed' also when checks were not
        # applicable or the copy is unfinished: name only the checks that passed".
        checked = browser.execute_script(
            "return RDPlay.checkWords({finished: false, results: ["
            " {check: 'canonical', status: 'pass'}, {check: 'chain', status: 'pass'},"
            " {check: 'commitment', status: 'not-applicable'}]})"
        )
        assert "nothing failed" not in checked
        assert "passed: canonical, chain" in checked and "commitment (not applicable)" in checked
        assert "unfinished" in checked
        injected = "return document.querySelectorAll('img[src=\"x\"], img[onerror]').length"
        assert browser.execute_script(injected) == 0
        browser.get(server.base + "/")
        row = wait_for(
            lambda: browser.find_elements("css selector", f'#rd-open-tables [data-game="{game}"]'),
            "the table's row",
        )[0]
        assert HOSTILE in str(row.get_attribute("textContent"))
        assert browser.execute_script(injected) == 0

        # Review of issue 32: "hrefs from the server's strings: accept only paths matching
        # ^/games/[0-9a-f]{32} (else no link)". A finished game whose links are not.
        fake = "f" * 32
        browser.execute_script(
            "const [fake, own] = arguments; const real = window.fetch;"
            "window.fetch = async (url, init) => String(url).endsWith('/api/games')"
            "  ? new Response(JSON.stringify({games: ["
            "      {game: fake, table: 't', players: ['a'], profile: 'nertz', result: null,"
            "       verdict: 'verified', code: null, time: 'now',"
            "       log: 'javascript:alert(1)', view: 'https://evil.example/games/' + fake},"
            "      {game: own, table: 'u', players: ['b'], profile: 'nertz', result: null,"
            "       verdict: 'verified', code: null, time: 'now',"
            "       log: '/games/' + own + '.jsonl', view: '/games/' + own + '/view'}]}),"
            "    {status: 200, headers: {'content-type': 'application/json'}})"
            "  : real(url, init);",
            fake,
            "e" * 32,
        )
        finished = wait_for(
            lambda: browser.find_elements("css selector", f'#rd-finished [data-game="{fake}"]'),
            "the finished game's row",
        )[0]
        assert finished.find_elements("css selector", "a.rd-log, a.rd-view") == []
        kept = css(browser, f'#rd-finished [data-game="{"e" * 32}"]')
        assert len(kept.find_elements("css selector", "a.rd-log, a.rd-view")) == 2
        assert browser.execute_script(
            "return [RDClient.gameHref('/games/' + 'a'.repeat(32) + '/seat0.receipts.jsonl'),"
            " RDClient.gameHref('//evil.example/games/' + 'a'.repeat(32)),"
            " RDClient.gameHref('/games/' + 'a'.repeat(32) + '/../../x')]"
        ) == ["/games/" + "a" * 32 + "/seat0.receipts.jsonl", None, None]


def test_a_failure_of_the_browser_s_own_storage_is_not_shown_as_the_server_s(
    browser: Any, tmp_path: Path
) -> None:
    """Review of issue 32: "CLIENT_ERROR (this browser's own storage/crypto failing) ... must
    not be shown as 'the server sent something that does not verify'": the warning's
    headline by code, and a reload goes on."""
    with running_server(tmp_path) as server:
        game = seated(browser, server.base, "full disk", "Ada")
        wait_for(lambda: listed_moves(browser), "the seat's moves")
        browser.execute_script(
            "IDBObjectStore.prototype.put = function () {"
            "  throw new DOMException('the disk is full', 'QuotaExceededError'); };"
        )
        wait_for(lambda: css(browser, "#rd-warning").is_displayed(), "the warning")
        assert attribute(browser, "#rd-warning", "data-code") == "CLIENT_ERROR"
        words = str(css(browser, "#rd-warning").get_attribute("textContent"))
        assert "the server sent something that does not verify" not in words, words
        assert "this browser failed" in words and "QuotaExceededError" in words, words
        assert "Reload" in words, words
        assert not css(browser, "#rd-download-evidence").is_displayed()  # nothing refused
        status = str(css(browser, "#rd-status").text)
        assert "does not verify" not in status, status
        browser.get(f"{server.base}/play/{game}")  # a reload: IndexedDB's own put again
        wait_for(lambda: attribute(browser, "#rd-connection", "data-state") == "open", "open")
        assert not css(browser, "#rd-warning").is_displayed()
