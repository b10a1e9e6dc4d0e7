"""The viewer's page in a real Chromium: its table equals the replay, its timeline moves as
the issue asks, and a failing log shows where it fails (issue 17, "Tests, in a real browser").

Pages are built by the Python builder from sample games and from freshly simulated games of
every profile; one browser session serves every test.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.audit_run import AuditRun, audit_log
from racing_demon.game.scoring import HandScore
from racing_demon.game.state import State
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.profiles import builtin_document, custom_variant, rules_from_document
from racing_demon.races import Contest, Stake
from racing_demon.replay import ReplayError, find_secret, replay
from racing_demon.sim.bots import EASY, HARD, NORMAL
from racing_demon.sim.simulate import simulate
from racing_demon.verify import Settings
from racing_demon.viewer import build_page

from tampering import TABLE_PUB as TAMPERING_PUB
from tampering import seal, values_of, write

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_games"
TABLE_PUB = raw_public_bytes(load_public_key(SAMPLES / "table.pub"))
SIM_KEY = Ed25519PrivateKey.from_private_bytes(bytes([7]) * 32)
MANIFEST = {
    game["file"]: game for game in json.loads((SAMPLES / "manifest.json").read_text())["games"]
}

SAMPLE_GAMES = (
    "valid/table-4p-tie-signed.jsonl",
    "valid/table-2p-to-100.jsonl",
    "valid/nertz-2p-stall-shifts.jsonl",
    "valid/peer2peer-3p-resigned-signed.jsonl",
    "disputed/illegal-move-re-signed.jsonl",
    "disputed/changed-byte.jsonl",
    "disputed/inflated-score.jsonl",
)
SIMULATED = {"table": (NORMAL, HARD, EASY), "nertz": (HARD, NORMAL), "peer2peer": (NORMAL, HARD)}
WAIT_S = 10.0


@dataclass(frozen=True)
class Game:
    log: Path
    page: Path
    key: bytes


def _simulated(folder: Path, profile: str) -> Path:
    document = builtin_document(profile)
    if document["match"]["target"] is not None:
        document["match"]["target"] = 15  # a short match: a few hands at most
    log = folder / f"sim-{profile}.jsonl"
    simulate(
        log,
        custom_variant(rules_from_document(document)),
        SIMULATED[profile],
        f"viewer-{profile}",
        SIM_KEY,
        receipts=False,
    )
    return log


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Game]:
    folder = tmp_path_factory.mktemp("viewer-pages")
    logs = {name: (SAMPLES / name, TABLE_PUB) for name in SAMPLE_GAMES}
    for profile in SIMULATED:
        logs[f"sim-{profile}"] = (_simulated(folder, profile), raw_public_bytes(SIM_KEY))
    built = {}
    for name, (log, key) in logs.items():
        page = folder / (log.stem + ".html")
        page.write_text(build_page(log, Settings(table_key=key)), encoding="utf-8")
        built[name] = Game(log, page, key)
    return built


# -- the browser side -----------------------------------------------------------

READ_PILES = """
return Array.from(document.querySelectorAll('#rd-table [data-pile]'), (pile) => [
  pile.dataset.pile, pile.dataset.count, pile.dataset.top, pile.dataset.cards ?? null]);
"""

READ_AUDIT = """
return Array.from(document.querySelectorAll('.rd-audit-table[data-hand]'), (table) => [
  Number(table.dataset.hand),
  Array.from(table.querySelectorAll('tbody tr'), (row) => [
    Number(row.dataset.seat),
    ...['demon_left', 'penalty', 'score', 'claimed'].map(
      (field) => row.querySelector(`[data-field=${field}]`).textContent),
    row.querySelectorAll('.rd-placed a[href^="#seq="]').length,
    row.classList.contains('mismatch')])]);
"""

# Each marker's tooltip ends with "<total> after hand <n>".
READ_CHART = """
return Array.from(document.querySelectorAll('#rd-chart .series'), (series) =>
  Array.from(series.querySelectorAll(':scope > :not(polyline):not(text) > title'), (title) =>
    Number(/(-?\\d+) after hand \\d+$/.exec(title.textContent)[1])));
"""


def _wait(browser: Any, condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def _shown(browser: Any) -> int:
    return int(browser.execute_script("return document.getElementById('rd-frame').dataset.seq"))


def _open(browser: Any, page: Path, seq: int | None = None) -> None:
    """Load the page afresh (about:blank first, so that a new hash is a new load)."""
    browser.get("about:blank")
    browser.get(page.as_uri() + ("" if seq is None else f"#seq={seq}"))
    _wait(
        browser,
        lambda: browser.execute_script("return document.body.dataset.ready") == "true",
        f"{page.name} to show its first frame",
    )


CHECKS_DONE = "return document.getElementById('rd-checks').dataset.done"


def _wait_checks(browser: Any) -> None:
    _wait(browser, lambda: browser.execute_script(CHECKS_DONE) == "true", "the browser's checks")


def _wait_shown(browser: Any, seq: int) -> None:
    _wait(browser, lambda: _shown(browser) == seq, f"record {seq} to be shown")


def _move_hash(browser: Any, seq: int) -> None:
    browser.execute_script("location.hash = arguments[0]", f"#seq={seq}")
    _wait_shown(browser, seq)


def _press(browser: Any, key: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    browser.execute_script("document.activeElement.blur()")
    ActionChains(browser).send_keys(key).perform()


# -- the Python side ------------------------------------------------------------


def _expected_piles(state: State) -> dict[str, tuple[str, str, str | None]]:
    """What the DOM contract says each pile shows: (count, top, work cards head first)."""
    piles: dict[str, tuple[str, str, str | None]] = {}
    for number, seat in enumerate(state.seats):
        for name, pile in (("demon", seat.demon), ("waste", seat.waste)):
            piles[f"s{number}.{name}"] = (str(len(pile)), pile[-1].face if pile else "", None)
        piles[f"s{number}.stock"] = (str(len(seat.stock)), "", None)
        for index, work in enumerate(seat.work, start=1):
            faces = " ".join(card.face for card in work)
            piles[f"s{number}.w{index}"] = (str(len(work)), work[-1].face if work else "", faces)
    for index, foundation in enumerate(state.foundations, start=1):
        count = sum(len(level) for level in foundation.levels)
        piles[f"f{index}"] = (str(count), str(foundation.levels[-1][0]), None)
    return piles


def _replayed(
    log: Path, wanted: set[int] | None = None
) -> tuple[dict[int, State], list[HandScore]]:
    """The state after each replayed record (or the wanted ones), and the hands scored."""
    secret = find_secret(log)
    assert secret is not None
    states: dict[int, State] = {}
    hands: list[HandScore] = []
    try:
        for snapshot in replay(log, secret):
            if snapshot.state is not None and (wanted is None or snapshot.seq in wanted):
                states[snapshot.seq] = snapshot.state
            hands = [score for score, _ in snapshot.hands]
    except ReplayError:
        pass  # a failing log: the states up to its failure
    return states, hands


def _records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line)["body"] for line in log.read_text().splitlines()]


def _sample(count: int, size: int) -> list[int]:
    return sorted({round(k * (size - 1) / (count - 1)) for k in range(count)})


# -- tests ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "valid/table-4p-tie-signed.jsonl",
        "valid/table-2p-to-100.jsonl",
        "valid/nertz-2p-stall-shifts.jsonl",
        "valid/peer2peer-3p-resigned-signed.jsonl",
        "disputed/illegal-move-re-signed.jsonl",
        "sim-table",
        "sim-nertz",
        "sim-peer2peer",
    ],
)
def test_table_equals_the_replay(browser: Any, games: dict[str, Game], name: str) -> None:
    """Issue 17: "For a sample of records in several games, the DOM's table equals
    `replay --at SEQ`": every seat's demon and waste top and count, stock count, work piles
    in full, and each foundation's top (with its owner) and count."""
    game = games[name]
    states, _ = _replayed(game.log)
    seqs = sorted(states)
    chosen = {seqs[k] for k in _sample(12, len(seqs))}
    chosen |= {
        b["seq"] for b in _records(game.log) if b["kind"] in ("hand_start", "tie", "bounce")
    } & set(seqs)
    _open(browser, game.page, seqs[0])
    for seq in sorted(chosen):
        _move_hash(browser, seq)
        shown = {
            pile: (count, top, cards)
            for pile, count, top, cards in browser.execute_script(READ_PILES)
        }
        assert shown == _expected_piles(states[seq]), f"{name} at record {seq}"


def test_seeking_backwards_and_far_rebuilds_the_same_table(
    browser: Any, games: dict[str, Game]
) -> None:
    """A frame reached by a jump back (from a keyframe) equals the one reached by stepping."""
    game = games["valid/table-2p-to-100.jsonl"]
    states, _ = _replayed(game.log)
    _open(browser, game.page, max(states))
    for seq in (700, 3, 640, 641, 65, 64, 128, 400):
        _move_hash(browser, seq)
        shown = {
            pile: (count, top, cards)
            for pile, count, top, cards in browser.execute_script(READ_PILES)
        }
        assert shown == _expected_piles(states[seq]), f"record {seq}"


def test_keys_move_through_the_records(browser: Any, games: dict[str, Game]) -> None:
    """The DOM contract's keys: ←/→ one record, Home/End first/last, PageUp/PageDown the
    previous/next hand start, Space play/pause; the hash follows without new history."""
    from selenium.webdriver.common.keys import Keys

    game = games["valid/table-2p-to-100.jsonl"]
    bodies = _records(game.log)
    starts = [b["seq"] for b in bodies if b["kind"] == "hand_start"]
    assert len(starts) > 2  # several hands, so PageUp/PageDown have somewhere to go
    middle = (starts[1] + starts[2]) // 2
    _open(browser, game.page, middle)
    history = browser.execute_script("return history.length")
    steps = [
        (Keys.ARROW_RIGHT, middle + 1),
        (Keys.ARROW_RIGHT, middle + 2),
        (Keys.ARROW_LEFT, middle + 1),
        (Keys.PAGE_DOWN, starts[2]),
        (Keys.PAGE_UP, starts[1]),
        (Keys.PAGE_UP, starts[0]),
        (Keys.END, bodies[-1]["seq"]),
        (Keys.HOME, 0),
        (Keys.ARROW_LEFT, 0),
    ]
    for key, seq in steps:
        _press(browser, key)
        _wait_shown(browser, seq)
        assert browser.execute_script("return location.hash") == f"#seq={seq}"
        slider = browser.execute_script("return Number(document.getElementById('rd-slider').value)")
        assert bodies[slider]["seq"] == seq
    assert browser.execute_script("return history.length") == history
    _press(browser, Keys.SPACE)
    _wait(browser, lambda: _shown(browser) > 0, "Space to start playing")
    _press(browser, Keys.SPACE)
    pressed = "return document.getElementById('rd-play').getAttribute('aria-pressed')"
    assert browser.execute_script(pressed) == "false"
    stopped = _shown(browser)
    time.sleep(0.3)
    assert _shown(browser) == stopped
    # Space on a focused button still plays and pauses, and does not also click the button.
    from selenium.webdriver.common.action_chains import ActionChains

    browser.find_element("id", "rd-next").click()
    after_click = _shown(browser)
    ActionChains(browser).send_keys(Keys.SPACE).perform()
    assert browser.execute_script(pressed) == "true"
    ActionChains(browser).send_keys(Keys.SPACE).perform()
    assert browser.execute_script(pressed) == "false"
    assert _shown(browser) >= after_click


def test_deep_links_open_there_and_hash_changes_move(browser: Any, games: dict[str, Game]) -> None:
    """Issue 17: "a deep link per record (`game.html#seq=120`) that opens there"; the
    contract: `hashchange` moves there, and a link in the words is such a link."""
    game = games["valid/table-4p-tie-signed.jsonl"]
    _open(browser, game.page, 120)
    assert _shown(browser) == 120
    assert (
        browser.execute_script("return document.getElementById('rd-seq').textContent")
        == "record 120 (121 of 230)"
    )
    _move_hash(browser, 7)
    tie = next(b for b in _records(game.log) if b["kind"] == "tie")
    _move_hash(browser, tie["seq"])
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('#rd-description a'),"
        " (a) => a.getAttribute('href'))"
    )
    assert links, "a tie names the card it ties"
    browser.find_element("css selector", "#rd-description a:last-of-type").click()
    target = int(links[-1].removeprefix("#seq="))
    _wait(browser, lambda: _shown(browser) == target, f"the linked record {target}")
    browser.find_element("css selector", f"#rd-nearby a[href='#seq={target + 2}']").click()
    _wait(browser, lambda: _shown(browser) == target + 2, "a record clicked in the nearby list")


def test_play_at_16x_advances(browser: Any, games: dict[str, Game]) -> None:
    """Issue 17: "play/pause at 1x, 4x or 16x of the logged time": a second of play at 16x
    goes further than a second at 1x, and never faster than the log's own clock allows."""
    from selenium.webdriver.support.ui import Select

    game = games["valid/table-2p-to-100.jsonl"]
    t_ms = {body["seq"]: body["t_ms"] for body in _records(game.log)}
    reached = {}
    for speed in ("1", "16"):
        _open(browser, game.page, 10)
        Select(browser.find_element("id", "rd-speed")).select_by_value(speed)
        started = time.monotonic()
        browser.find_element("id", "rd-play").click()
        time.sleep(1.0)
        browser.find_element("id", "rd-play").click()
        elapsed_ms = (time.monotonic() - started) * 1000
        reached[speed] = _shown(browser)
        # Each step waits its logged gap, a long pause shortened to 3 s, divided by the speed.
        waited = sum(
            min(t_ms[seq + 1] - t_ms[seq], 3000) for seq in range(10, reached[speed])
        ) / int(speed)
        assert waited <= elapsed_ms
    assert reached["1"] > 10
    assert reached["16"] > reached["1"] + 5


@pytest.mark.parametrize(
    "name", ["disputed/illegal-move-re-signed.jsonl", "disputed/changed-byte.jsonl"]
)
def test_a_failing_log_shows_its_failure(browser: Any, games: dict[str, Game], name: str) -> None:
    """Issue 17: "for a failing log, the first failing record is highlighted with its
    finding, and every frame after it is marked not verified"."""
    expected = MANIFEST[name]["expected"]
    failing = expected["line"] - 1  # seq counts from 0, lines from 1
    game = games[name]
    _open(browser, game.page)
    assert _shown(browser) == failing, "a failing log opens at its failing record"
    verdict = browser.execute_script("return document.getElementById('rd-verdict').dataset.verdict")
    assert verdict == expected["verdict"]
    failure = browser.find_element("id", "rd-failure")
    assert failure.is_displayed()
    assert expected["code"] in failure.text
    assert failure.find_element("css selector", f"a[href='#seq={failing}']")
    assert expected["code"] in browser.find_element("id", "rd-description").text
    last = _records(game.log)[-1]["seq"]
    for seq, verified in (
        (0, True),
        (failing - 1, True),
        (failing, False),
        (failing + 1, False),
        (last, False),
    ):
        _move_hash(browser, seq)
        frame = browser.find_element("id", "rd-frame")
        assert frame.get_attribute("data-verified") == str(verified).lower(), f"record {seq}"
        assert browser.find_element("id", "rd-unverified").is_displayed() is not verified


@pytest.mark.parametrize(
    "name", ["valid/table-2p-to-100.jsonl", "valid/table-4p-tie-signed.jsonl", "sim-nertz"]
)
def test_audit_equals_the_python_scoring(browser: Any, games: dict[str, Game], name: str) -> None:
    """Issue 17: "per hand and seat, the cards placed with links to their records, demon
    cards left, the penalty, recomputed beside claimed"; the numbers are the scoring's."""
    game = games[name]
    _, hands = _replayed(game.log, set())
    claimed = {b["hand"]: b["scores"] for b in _records(game.log) if b["kind"] == "hand_end"}
    _open(browser, game.page)
    _wait(
        browser,
        lambda: (
            browser.execute_script("return document.querySelectorAll('.rd-audit-table').length") > 0
        ),
        "the audit",
    )
    shown = browser.execute_script(READ_AUDIT)
    expected = [
        [
            hand.hand,
            [
                [
                    seat.seat,
                    str(len(seat.demon_left)),
                    str(seat.demon_penalty),
                    str(seat.score),
                    str(claimed[hand.hand][seat.seat]),
                    len(seat.placed),
                    False,
                ]
                for seat in hand.seats
            ],
        ]
        for hand in hands
    ]
    assert shown == expected
    # The chart: a series per seat whose points are the running totals, 0 before hand 1.
    points = browser.execute_script(READ_CHART)
    running = [[0] * len(hands[0].seats)]
    for hand in hands:
        running.append(
            [total + score for total, score in zip(running[-1], hand.scores, strict=True)]
        )
    assert points == [[row[seat] for row in running] for seat in range(len(hands[0].seats))]
    assert browser.execute_script("return document.querySelector('#rd-chart > title').textContent")


def test_browser_checklist_is_rendered(browser: Any, games: dict[str, Game]) -> None:
    """The contract's `#rd-checks`: one item per check, in order, settled with a result."""
    game = games["valid/table-4p-tie-signed.jsonl"]
    _open(browser, game.page)
    _wait_checks(browser)
    items = browser.execute_script(
        "return Array.from(document.querySelectorAll('#rd-checks li'),"
        " (li) => [li.dataset.check, li.dataset.status])"
    )
    assert [check for check, _ in items] == [
        "canonical",
        "chain",
        "table-signatures",
        "player-signatures",
        "commitment",
        "entropy",
        "packs",
    ]
    assert {status for _, status in items} <= {
        "pass",
        "fail",
        "unsupported",
        "not-applicable",
        "unpinned",
    }
    result = browser.execute_script("return document.getElementById('rd-checks').dataset.result")
    assert result in ("pass", "fail", "incomplete")


def test_screenshot_of_a_mid_game_frame(
    browser: Any, games: dict[str, Game], artifacts: Path
) -> None:
    """Issue 17: "a screenshot of a mid-game frame is written by the test run (not
    committed) so a reviewer can look at it"; also one at a phone's width."""
    game = games["valid/table-4p-tie-signed.jsonl"]
    tie = next(b for b in _records(game.log) if b["kind"] == "tie")
    size = browser.get_window_size()
    try:
        _open(browser, game.page, tie["seq"])
        _wait_checks(browser)
        browser.save_screenshot(str(artifacts / "viewer-midgame.png"))
        browser.set_window_size(390, 1400)
        _open(browser, game.page, tie["seq"])
        browser.save_screenshot(str(artifacts / "viewer-phone.png"))
        overflow = browser.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, "nothing scrolls sideways at a phone's width"
    finally:
        browser.set_window_size(size["width"], size["height"])
    assert (artifacts / "viewer-midgame.png").stat().st_size > 10_000


def test_a_dropped_key_pins_and_reruns_the_checks(browser: Any, games: dict[str, Game]) -> None:
    """The contract: the reader's own `.pub` file in `#rd-key-input` pins the key, the
    checks re-run, and `#rd-checks` gets `data-pinned="true"`."""
    game = games["valid/table-4p-tie-signed.jsonl"]
    _open(browser, game.page)
    _wait_checks(browser)
    assert (
        browser.execute_script("return document.getElementById('rd-checks').dataset.pinned")
        == "false"
    )
    browser.find_element("id", "rd-key-input").send_keys(str(SAMPLES / "table.pub"))
    _wait(
        browser,
        lambda: (
            browser.execute_script("return document.getElementById('rd-checks').dataset.pinned")
            == "true"
        ),
        "the key to be pinned",
    )
    _wait_checks(browser)
    assert "pinned by you" in browser.find_element("id", "rd-key-state").text
    assert browser.find_element("id", "rd-key-error").text == ""


def test_a_claimed_score_that_differs_is_marked(browser: Any, games: dict[str, Game]) -> None:
    """Issue 17: the audit shows "recomputed beside claimed"; the contract: "a mark where
    they differ". inflated-score's hand_end claims more for seat 1 than its cards score."""
    game = games["disputed/inflated-score.jsonl"]
    _, hands = _replayed(game.log, set())
    assert not hands  # the replay refuses that hand_end: the page scores it as it stood
    claimed = next(b for b in _records(game.log) if b["kind"] == "hand_end")["scores"]
    _open(browser, game.page)
    _wait(
        browser,
        lambda: (
            browser.execute_script("return document.querySelectorAll('.rd-audit-table').length")
            == 1
        ),
        "the audit",
    )
    [[hand, rows]] = browser.execute_script(READ_AUDIT)
    assert hand == 1
    for seat, _demon, _penalty, score, shown_claim, _placed, marked in rows:
        assert shown_claim == str(claimed[seat])
        assert marked is (score != shown_claim)
    assert any(marked for *_, marked in rows)
    assert "refused" in browser.find_element("css selector", ".rd-audit-table caption").text


# Run before the page's own scripts: Web Crypto as in a browser without Ed25519.
NO_ED25519 = """
const importKey = crypto.subtle.importKey.bind(crypto.subtle);
crypto.subtle.importKey = (format, data, algorithm, ...rest) =>
  (algorithm?.name ?? algorithm) === "Ed25519"
    ? Promise.reject(new DOMException("Unrecognized name", "NotSupportedError"))
    : importKey(format, data, algorithm, ...rest);
"""


def test_without_ed25519_the_page_says_so(browser: Any, games: dict[str, Game]) -> None:
    """Issue 17: "Where the browser lacks Ed25519, it says so and does not pretend"."""
    game = games["valid/table-4p-tie-signed.jsonl"]
    added = browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NO_ED25519})
    try:
        _open(browser, game.page)
        _wait_checks(browser)
        checks = browser.find_element("id", "rd-checks")
        assert checks.get_attribute("data-result") == "incomplete"
        table = checks.find_element("css selector", "li[data-check='table-signatures']")
        assert table.get_attribute("data-status") == "unsupported"
        assert "lacks Ed25519" in browser.find_element("id", "rd-checks-summary").text
        assert "INCOMPLETE" in browser.find_element("id", "rd-browser-result").text
    finally:
        browser.execute_cdp_cmd(
            "Page.removeScriptToEvaluateOnNewDocument", {"identifier": added["identifier"]}
        )


def test_the_about_panel_shows_the_digest_of_the_bytes_the_browser_checked(
    browser: Any, games: dict[str, Game]
) -> None:
    """docs/viewer.md: "the page's About panel shows the log's SHA-256, to compare with a
    copy of your own": once the checks ran, the one this browser computed."""
    game = games["valid/table-4p-tie-signed.jsonl"]
    _open(browser, game.page)
    _wait_checks(browser)
    shown = browser.execute_script("return document.getElementById('rd-log-digest').textContent")
    digest = hashlib.sha256(game.log.read_bytes()).hexdigest()
    assert f"sha256 {digest} (computed by this browser" in shown


def test_a_bounce_marks_the_piles_its_move_named(browser: Any, games: dict[str, Game]) -> None:
    """docs/viewer.md: a bounced move's piles (where its card was, where it was meant to go)
    are marked, since the bounce changed neither; an accepted move's are not."""
    game = games["valid/table-4p-tie-signed.jsonl"]
    bodies = _records(game.log)
    bounce = next(body for body in bodies if body["kind"] == "bounce")
    accepted = next(body for body in bodies if body["kind"] == "move")
    named = (
        "return Array.from(document.querySelectorAll('#rd-table [data-named=\"true\"]'),"
        " (pile) => pile.dataset.pile)"
    )
    _open(browser, game.page, bounce["seq"])
    _wait_shown(browser, bounce["seq"])
    assert set(browser.execute_script(named)) == _move_pile_ids(bounce)
    _move_hash(browser, accepted["seq"])
    assert browser.execute_script(named) == []


def _move_pile_ids(body: dict[str, Any]) -> set[str]:
    """The piles a card move's text names (``3 waste>f2 3H``), as the page's pile ids."""
    seat, places = body["player"], body["move"].split()[1]
    return {
        place if place.startswith("f") else f"s{seat}.{place}"
        for place in places.split(">")
        if place != "f+"
    }


def test_a_key_file_dropped_on_the_drop_zone_pins_it(browser: Any, games: dict[str, Game]) -> None:
    """Issue 17: the page "lets the reader drop their own copy of the table's public key
    onto the page to pin it": a drop event on `#rd-key-drop` that carries the .pub file."""
    game = games["valid/table-4p-tie-signed.jsonl"]
    _open(browser, game.page)
    _wait_checks(browser)
    browser.execute_script(
        """const carried = new DataTransfer();
        carried.items.add(new File([arguments[0]], "table.pub"));
        const zone = document.getElementById("rd-key-drop");
        zone.dispatchEvent(new DragEvent("drop", {dataTransfer: carried, bubbles: true,
                                                 cancelable: true}));""",
        (SAMPLES / "table.pub").read_text(),
    )
    _wait(
        browser,
        lambda: (
            browser.execute_script("return document.getElementById('rd-checks').dataset.pinned")
            == "true"
        ),
        "the dropped key to be pinned",
    )
    _wait_checks(browser)
    assert "pinned by you (table.pub)" in browser.find_element("id", "rd-key-state").text
    assert browser.find_element("id", "rd-checks").get_attribute("data-result") == "pass"


# -- issue 29: what a newcomer read on the page ----------------------------------------

READ_COUNTER = "return document.getElementById('rd-seq').textContent"


def test_the_counter_agrees_with_itself(browser: Any, games: dict[str, Game]) -> None:
    """Issue 29, item 15: "The counter runs `record 1 of 1297` … `record 1296 of 1297`:
    make it agree with itself (seq shown as seq, or a count from 1 to N)." The seq is shown
    as the record's name, and beside it the position, from 1 to N."""
    from selenium.webdriver.common.keys import Keys

    game = games["valid/table-4p-tie-signed.jsonl"]
    _open(browser, game.page, 0)
    assert browser.execute_script(READ_COUNTER) == "record 0 (1 of 230)"
    _press(browser, Keys.END)
    _wait_shown(browser, 229)
    assert browser.execute_script(READ_COUNTER) == "record 229 (230 of 230)"
    slider = browser.find_element("id", "rd-slider")
    assert slider.get_attribute("aria-valuetext") == "record 229 (230 of 230)"


def test_custom_rules_are_named_custom_with_what_they_change(
    browser: Any, games: dict[str, Game]
) -> None:
    """Issue 29, item 16: "The subtitle says 'table rules' for custom rules: say custom and
    what differs." This game plays the table profile with one hand only."""
    game = games["valid/table-4p-tie-signed.jsonl"]
    _open(browser, game.page)
    header = browser.find_element("id", "rd-game").text
    assert "custom rules table-custom: match.max_hands: 1 (table: null)" in header
    assert "table rules" not in header
    built_in = games["valid/table-2p-to-100.jsonl"]
    _open(browser, built_in.page)
    header = browser.find_element("id", "rd-game").text
    assert "Racing Demon, table rules" in header and "custom" not in header


def _rgb(colour: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", colour)[:3])


def test_on_a_failing_log_the_failure_comes_first_and_the_browser_gives_no_verdict(
    browser: Any, games: dict[str, Game]
) -> None:
    """Issue 29, item 17: "A green 'This browser ALL CHECKS PASS' beside a red 'DOES NOT
    VERIFY' reads as 'the game is fine'. The browser's badge names what it checked
    (signatures, chain, deal) and never reads as a verdict on the moves; on a failing log
    the page's first impression is the failure." The table re-signed an illegal move:
    every check the browser makes passes."""
    game = games["disputed/illegal-move-re-signed.jsonl"]
    _open(browser, game.page)
    _wait_checks(browser)
    badge = browser.find_element("id", "rd-browser-result")
    assert badge.get_attribute("data-result") == "pass"
    words = badge.text
    for checked in ("signatures", "chain", "deal"):
        assert checked in words
    assert "not the moves" in words
    assert "PASS" not in words.upper().replace("PASSED", "")
    summary = browser.find_element("id", "rd-checks-summary")
    assert "moves and the scores are not checked here" in summary.text
    red, green, blue = _rgb(summary.value_of_css_property("color"))
    assert not (green > red + 40 and green > blue), "the checklist is not green either"
    red, green, blue = _rgb(badge.value_of_css_property("color"))
    assert not (green > red + 40 and green > blue), "the badge is not green beside a failure"
    failure = browser.find_element("id", "rd-failure")
    verdict = browser.find_element("id", "rd-verdict")
    assert failure.is_displayed() and "does not verify" in failure.text
    assert failure.rect["y"] < verdict.rect["y"] < badge.rect["y"] + 1
    assert failure.rect["y"] < 40, "the failure is at the top of the page"
    # Beside a log that verifies, the same badge may be green: it agrees with the verdict.
    _open(browser, games["valid/table-2p-to-100.jsonl"].page)
    _wait_checks(browser)
    badge = browser.find_element("id", "rd-browser-result")
    red, green, blue = _rgb(badge.value_of_css_property("color"))
    assert badge.get_attribute("data-result") == "pass" and green > red


def test_what_was_not_replayed_is_said(
    browser: Any, games: dict[str, Game], tmp_path: Path
) -> None:
    """Issue 29, item 18: "An unfinished log without `--secret` shows an empty table with
    no hint: say that the dealer secret (`view --secret`) is what is missing. A log that
    fails before its first `hand_end` says 'No hand ended in this log' above an empty
    chart, though the hand did end after the failure: say what was and was not
    replayed." """
    game = games["disputed/illegal-move-re-signed.jsonl"]
    _open(browser, game.page)
    audit = browser.find_element("id", "rd-audit-hands").text
    assert "No hand ended" not in audit
    assert "hand_end record (record 80) was not replayed" in audit
    assert "stopped after record 43" in audit and "failing record 44" in audit
    chart = browser.execute_script("return document.querySelector('#rd-chart desc').textContent")
    assert "No hand was replayed to its end" in chart

    truncated = SAMPLES / "disputed" / "truncated.jsonl"
    page = tmp_path / "truncated.html"
    page.write_text(build_page(truncated, Settings(table_key=TABLE_PUB)), encoding="utf-8")
    _open(browser, page)
    banner = browser.find_element("id", "rd-unverified")
    assert banner.is_displayed()
    assert "dealer's secret" in banner.text and "--secret" in banner.text
    assert "--secret" in browser.find_element("id", "rd-failure").text


READ_CONTESTS = """
const table = document.querySelector('.rd-contests');
return table === null ? null : [Number(table.dataset.contests),
  Array.from(table.querySelectorAll('tbody tr'), (row) => [Number(row.dataset.loserSeq),
    row.classList.contains('rd-close'), row.cells[3].textContent, row.cells[4].textContent,
    row.cells[1].textContent.includes('ended the hand')])];
"""


def _contest_rows(contests: tuple[Contest, ...]) -> list[list[object]]:
    def trip(ms: int | None) -> str:
        return "—" if ms is None else f"{ms} ms"

    return [
        [
            c.loser_seq,
            c.within_spread,
            f"{c.gap_ms} ms",
            f"{trip(c.winner_rtt_ms)} / {trip(c.loser_rtt_ms)}",
            c.stake is Stake.HAND_END,
        ]
        for c in contests
    ]


@pytest.mark.parametrize(
    "name",
    [
        "valid/table-4p-tie-signed.jsonl",
        "valid/peer2peer-3p-resigned-signed.jsonl",
    ],
)
def test_the_contested_plays_are_the_audits(
    browser: Any, games: dict[str, Game], name: str
) -> None:
    """Issue 35, point 6: "After a game, `audit` (and the viewer) list the contested plays"."""
    game = games[name]
    contests = audit_log(AuditRun(log=game.log, table_key=game.key)).contests
    _open(browser, game.page)
    shown = browser.execute_script(READ_CONTESTS)
    if not contests:
        assert shown is None  # no table for a game where no card lost its race
    else:
        assert shown == [len(contests), _contest_rows(contests)]


def test_the_contested_plays_show_the_logged_round_trips(browser: Any, tmp_path: Path) -> None:
    """With lag records (format v3) each contest shows both seats' round trips, and one
    decided by less than their spread is marked."""
    values = values_of("nertz")
    body = values[0]["body"]
    lag = {"v": body["v"], "game": body["game"], "seq": 1, "t_ms": 0, "prev": "", "kind": "lag"}
    values.insert(1, {"body": {**lag, "rtt_ms": [[20], [150]]}, "sigs": {}})
    values[-1]["body"]["records"] += 1
    log = write(tmp_path, seal(values))
    contests = audit_log(AuditRun(log=log, table_key=TAMPERING_PUB)).contests
    assert contests and any(contest.within_spread for contest in contests)
    page = tmp_path / "contests.html"
    page.write_text(build_page(log, Settings(table_key=TAMPERING_PUB)), encoding="utf-8")
    _open(browser, page)
    assert browser.execute_script(READ_CONTESTS) == [len(contests), _contest_rows(contests)]


def test_a_move_after_the_hand_was_called_shows_the_call_as_the_winner(
    browser: Any, tmp_path: Path
) -> None:
    """Issue 35, point 4: a bounce names the record that took the spot "for every bounce
    reason that has a winner": a HAND_OVER bounce lost its race to the seat that called."""
    log = SAMPLES / "disputed" / "wrong-claim.jsonl"  # record 166 came after 165's call
    contests = audit_log(AuditRun(log=log, table_key=TABLE_PUB)).contests
    assert [c.stake for c in contests] == [Stake.HAND_END]
    page = tmp_path / "called.html"
    page.write_text(build_page(log, Settings(table_key=TABLE_PUB)), encoding="utf-8")
    _open(browser, page)
    assert browser.execute_script(READ_CONTESTS) == [1, _contest_rows(contests)]
