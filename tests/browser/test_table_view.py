"""table.js, the one renderer (issue 32, "One renderer: the table is drawn by the same code
that draws the view page"), on a small page of this file's own in a real headless Chromium.

The page is served over loopback HTTP under the play page's policy (`script-src 'self';
style-src 'self'`, no inline anything), loads viewer.css and table.js as the play page does,
and draws pile values of the play page's redacted forms (docs/protocol.md `piles`): a demon
as its top card and a count, a waste as its last three cards and a count, a stock as a count.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "src" / "racing_demon" / "viewer" / "assets"
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>table.js harness</title><link rel="stylesheet" href="viewer.css"></head>
<body><h1>table.js harness</h1>
<div id="rd-frame" class="rd-frame"><div id="rd-table" class="rd-table">
<section class="rd-centre" aria-label="Foundations">
<div id="rd-foundations" class="rd-foundations"></div></section>
<div id="rd-seats" class="rd-seats"></div></div></div>
<script src="table.js"></script><script src="harness.js"></script></body></html>
"""

# Records what the page under test does: every activation table.js reports, every key that
# reached the document, every breach of the policy.
HARNESS = """
window.rdViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.rdViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
window.rdKeysSeen = [];
document.addEventListener("keydown", (event) => window.rdKeysSeen.push(event.key));
window.rdMake = (seat, piles) => {
  window.rdActivations = [];
  window.rdView = new RDTable.TableView({
    seatsElement: document.getElementById("rd-seats"),
    foundationsElement: document.getElementById("rd-foundations"),
    tableElement: document.getElementById("rd-table"),
    seats: [{seat: 0, name: "Ada", back: "blue"}, {seat: 1, name: "Bo", back: "red"}],
    workPiles: 4,
    colours: ["#0072B2", "#D55E00"],
    interactive: seat === null ? null
      : {seat, onActivate: (target) => window.rdActivations.push(target)},
  });
  window.rdView.draw(piles, 1);
};
"""

PILES: dict[str, Any] = {
    "s0.demon": {"cards": ["7H"], "n": 11},
    "s0.stock": {"n": 20},
    "s0.waste": {"cards": ["2C", "9D", "KS"], "n": 8},
    "s0.w1": {"cards": ["9S", "8H", "7C"]},
    "s0.w2": {"cards": ["5D"]},
    "s0.w3": {"cards": []},
    "s0.w4": {"cards": ["QH"]},
    "s1.demon": {"cards": [], "n": 0},
    "s1.stock": {"n": 0},
    "s1.waste": {"cards": ["3S"], "n": 1},
    "s1.w1": {"cards": ["JD"]},
    "s1.w2": {"cards": ["4C"]},
    "s1.w3": {"cards": ["TS"]},
    "s1.w4": {"cards": ["6H"]},
    "f1": {"suit": "H", "levels": [["AH@0"], ["2H@1"]], "complete": False},
    "f2": {"suit": "S", "levels": [["AS@1"], ["2S@0", "2S@1"]], "complete": False},
}

READ_PILES = """
return Object.fromEntries(Array.from(document.querySelectorAll('[data-pile]'), (pile) => [
  pile.dataset.pile, {
    count: pile.dataset.count, top: pile.dataset.top,
    role: pile.getAttribute('role'), label: pile.getAttribute('aria-label'),
    tabindex: pile.getAttribute('tabindex'),
    faces: Array.from(pile.querySelectorAll('.card[data-face]'), (card) => card.dataset.face),
    indexes: Array.from(pile.querySelectorAll('.card[data-face]'),
      (card) => card.dataset.index ?? null),
    counted: pile.querySelector(':scope > .count')?.textContent ?? null}]));
"""


class _Handler(http.server.SimpleHTTPRequestHandler):
    def end_headers(self) -> None:
        self.send_header("Content-Security-Policy", POLICY)
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test's output is the assertions."""


@pytest.fixture(scope="module")
def page_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("table-view")
    for name in ("table.js", "viewer.css"):
        (folder / name).write_bytes((ASSETS / name).read_bytes())
    (folder / "harness.js").write_text(HARNESS, encoding="utf-8")
    (folder / "index.html").write_text(PAGE, encoding="utf-8")
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), partial(_Handler, directory=str(folder))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()
        server.server_close()


def _open(browser: Any, url: str, seat: int | None, piles: dict[str, Any] = PILES) -> None:
    browser.get("about:blank")
    browser.get(url)
    browser.execute_script("rdMake(arguments[0], arguments[1])", seat, piles)


def _pile(browser: Any, pile: str) -> Any:
    return browser.find_element("css selector", f'[data-pile="{pile}"]')


def _card(browser: Any, pile: str, face: str) -> Any:
    return browser.find_element("css selector", f'[data-pile="{pile}"] .card[data-face="{face}"]')


def _press(browser: Any, card: Any) -> Any:
    """An action chain with the pointer on the part of ``card`` that shows: its top edge,
    since in a work pile the next card covers the rest of it."""
    from selenium.webdriver.common.action_chains import ActionChains

    height = card.size["height"]
    return ActionChains(browser).move_to_element_with_offset(card, 0, 4 - height // 2)


def _activations(browser: Any) -> list[dict[str, Any]]:
    return list(browser.execute_script("return window.rdActivations.splice(0)"))


def test_redacted_piles_are_drawn_with_their_counts(browser: Any, page_url: str) -> None:
    """The design: "a demon or waste value may carry `n` (the count) with fewer `cards` than
    `n`: draw the given cards on top and count `n`"; every card has `data-face`, a work
    pile's cards `data-index` (0 = bottom); every pile keeps `data-pile`, `data-count`,
    `data-top`, `role="group"` and an `aria-label` naming seat and pile ("Ada's work 2")."""
    _open(browser, page_url, None)
    piles = browser.execute_script(READ_PILES)
    demon = piles["s0.demon"]
    assert (demon["count"], demon["top"], demon["faces"], demon["counted"]) == (
        "11",
        "7H",
        ["7H"],
        "11",
    )
    waste = piles["s0.waste"]
    assert (waste["count"], waste["top"], waste["faces"], waste["counted"]) == (
        "8",
        "KS",
        ["2C", "9D", "KS"],
        "8",
    )
    assert (piles["s0.stock"]["count"], piles["s0.stock"]["faces"]) == ("20", [])
    assert (piles["s1.demon"]["count"], piles["s1.demon"]["top"]) == ("0", "")
    work = piles["s0.w1"]
    assert (work["count"], work["top"], work["faces"], work["indexes"]) == (
        "3",
        "7C",
        ["9S", "8H", "7C"],
        ["0", "1", "2"],
    )
    assert piles["f2"]["faces"] == ["2S", "2S"] and piles["f2"]["count"] == "3"
    assert piles["s0.w2"]["label"] == "Ada's work 2" and piles["s1.demon"]["label"] == "Bo's demon"
    assert piles["f1"]["label"] == "foundation 1"
    assert all(pile["role"] == "group" and pile["tabindex"] is None for pile in piles.values())
    assert "f+" not in piles  # the new foundation's zone is for play only
    # Colour is never the only cue: a card names its rank, suit and pack in words.
    label = _card(browser, "s0.demon", "7H").get_attribute("aria-label")
    assert label == "7 of hearts, Ada's pack"
    owned = _card(browser, "f1", "2H")
    assert owned.find_element("css selector", ".initial").text == "B"
    assert browser.execute_script("return window.rdViolations") == []


def test_a_click_on_a_card_or_pile_activates_it(browser: Any, page_url: str) -> None:
    """The design: "click on a card or pile calls `onActivate({pile: id, index})` (index: the
    card's position in a work pile, else null)"; "Stock click → `onActivate({pile:
    "sN.stock", index: null})`"; the player's seat and every foundation, plus a "new
    foundation" drop zone with `data-pile="f+"`, become operable; nobody else's piles."""
    _open(browser, page_url, 0)
    piles = browser.execute_script(READ_PILES)
    for pile in ("s0.demon", "s0.stock", "s0.waste", "s0.w1", "f1", "f2", "f+"):
        assert (piles[pile]["role"], piles[pile]["tabindex"]) == ("button", "0"), pile
    for pile in ("s1.demon", "s1.w1", "s1.stock"):
        assert (piles[pile]["role"], piles[pile]["tabindex"]) == ("group", None), pile
    assert piles["f+"]["label"] == "new foundation"
    assert _pile(browser, "s0.w1").get_attribute("aria-label") == "Ada's work 1"
    assert _pile(browser, "s0.demon").get_attribute("aria-description") == (
        "7 of hearts, Ada's pack on top, 11 cards"
    )
    # The player's own seat comes first on the table, whatever its number.
    browser.execute_script("rdMake(1, arguments[0])", PILES)
    first = browser.execute_script(
        "return [...document.querySelectorAll('.rd-seat')]"
        ".sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top"
        " || a.getBoundingClientRect().left - b.getBoundingClientRect().left)[0].dataset.seat"
    )
    assert first == "1"
    browser.execute_script("rdMake(0, arguments[0])", PILES)

    _press(browser, _card(browser, "s0.w1", "8H")).click().perform()
    _pile(browser, "f2").click()
    _pile(browser, "s0.stock").click()
    _press(browser, _card(browser, "s0.waste", "KS")).click().perform()
    _pile(browser, "f+").click()
    _pile(browser, "s1.w1").click()  # another seat's pile: not the player's to operate
    assert _activations(browser) == [
        {"pile": "s0.w1", "index": 1},
        {"pile": "f2", "index": None},
        {"pile": "s0.stock", "index": None},
        {"pile": "s0.waste", "index": None},
        {"pile": "f+", "index": None},
    ]
    assert browser.execute_script("return window.rdViolations") == []


def test_enter_and_space_activate_the_focused_pile(browser: Any, page_url: str) -> None:
    """The design: operable piles are "focusable (`tabindex=0`), `role="button"`, Enter/Space
    activate"; the key goes no further than the pile (a page's own Space must not also turn
    the stock)."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    _open(browser, page_url, 0)
    browser.execute_script("arguments[0].focus()", _pile(browser, "s0.demon"))
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    ActionChains(browser).send_keys(Keys.TAB).perform()  # the stock, next in the seat
    focused = browser.execute_script("return document.activeElement.dataset.pile")
    assert focused == "s0.stock"
    ActionChains(browser).send_keys(Keys.SPACE).perform()
    browser.execute_script("arguments[0].focus()", _pile(browser, "f+"))
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    assert _activations(browser) == [
        {"pile": "s0.demon", "index": None},
        {"pile": "s0.stock", "index": None},
        {"pile": "f+", "index": None},
    ]
    assert browser.execute_script("return window.rdKeysSeen") == ["Tab"]
    assert browser.execute_script("return window.scrollY") == 0  # Space scrolled nothing


def test_a_pointer_drag_activates_the_source_then_the_target(browser: Any, page_url: str) -> None:
    """The design: "pointer drag (pointerdown on a card, pointerup over a pile — Pointer
    Events, not HTML5 drag-and-drop, so that Selenium's ActionChains can drive it) calls
    `onActivate` for the source then the target"; a drag released over nothing operable, or
    over its own pile, activates nothing, and no click follows a drag."""
    _open(browser, page_url, 0)

    def drag(source: Any, target: Any) -> None:
        _press(browser, source).click_and_hold().move_by_offset(12, 12).move_to_element(
            target
        ).release().perform()

    drag(_card(browser, "s0.demon", "7H"), _pile(browser, "f2"))
    assert _activations(browser) == [
        {"pile": "s0.demon", "index": None},
        {"pile": "f2", "index": None},
    ]
    drag(_card(browser, "s0.w1", "8H"), _pile(browser, "s0.w4"))
    assert _activations(browser) == [
        {"pile": "s0.w1", "index": 1},
        {"pile": "s0.w4", "index": None},
    ]
    drag(_card(browser, "s0.waste", "KS"), _pile(browser, "f+"))
    assert _activations(browser) == [
        {"pile": "s0.waste", "index": None},
        {"pile": "f+", "index": None},
    ]
    drag(_card(browser, "s0.w2", "5D"), _pile(browser, "s1.w1"))  # no pile of the player's
    drag(_card(browser, "s0.w2", "5D"), _pile(browser, "s0.w2"))  # back where it was
    assert _activations(browser) == []
    leftover = ".rd-drag-ghost, .drop-over, .drag-source"
    assert browser.find_elements("css selector", leftover) == []
    # A click after a drag is a click again.
    _pile(browser, "f1").click()
    assert _activations(browser) == [{"pile": "f1", "index": None}]
    assert browser.execute_script("return window.rdViolations") == []


def test_selection_and_targets_are_marked_and_survive_a_redraw(browser: Any, page_url: str) -> None:
    """The design: `setSelected(id, index | null)` marks a selected pile/card (class
    "selected", aria-pressed), `setTargets(ids)` the legal targets (class "target"; [] clears);
    `setSeatFlag`, `setSeatTotal` the seat header's flag and total."""
    _open(browser, page_url, 0)
    browser.execute_script(
        "rdView.setSelected('s0.w1', 1); rdView.setTargets(['f2', 'f+', 's0.w4'])"
    )
    marks = """
    return {
      selected: Array.from(document.querySelectorAll('.pile.selected'), (p) => p.dataset.pile),
      pressed: Array.from(document.querySelectorAll('[aria-pressed="true"]'),
        (p) => p.dataset.pile),
      cards: Array.from(document.querySelectorAll('.card.selected'), (card) => card.dataset.face),
      targets: Array.from(document.querySelectorAll('.pile.target'), (p) => p.dataset.pile).sort(),
    };"""
    expected = {
        "selected": ["s0.w1"],
        "pressed": ["s0.w1"],
        "cards": ["8H", "7C"],
        "targets": ["f+", "f2", "s0.w4"],
    }
    assert browser.execute_script(marks) == expected
    # A new value for the selected pile and a new foundation: the marks stay where they were.
    browser.execute_script(
        """rdView.draw({...arguments[0], 's0.w1': {cards: ['9S', '8H', '7C', '6D']},
          f3: {suit: 'C', levels: [['AC@1']], complete: false}}, 1, new Set(['s0.w1', 'f3']))""",
        PILES,
    )
    assert browser.execute_script(marks) == {**expected, "cards": ["8H", "7C", "6D"]}
    assert _pile(browser, "f3").get_attribute("role") == "button"
    assert (
        browser.execute_script(
            "return [...document.getElementById('rd-foundations').children].at(-1)"
            ".querySelector('[data-pile]').dataset.pile"
        )
        == "f+"
    )  # the new foundation's zone stays after the foundations
    browser.execute_script("rdView.setSelected('s0.demon', null)")
    assert browser.execute_script(marks)["cards"] == ["7H"]
    browser.execute_script("rdView.setSelected(null); rdView.setTargets([])")
    assert browser.execute_script(marks) == {
        "selected": [],
        "pressed": [],
        "cards": [],
        "targets": [],
    }
    browser.execute_script("rdView.setSeatFlag(1, 'called'); rdView.setSeatTotal(0, 'total 12')")
    headers = browser.execute_script(
        "return Array.from(document.querySelectorAll('.rd-seat'), (seat) => ["
        "seat.querySelector('.rd-seat-flag').textContent,"
        " seat.querySelector('.rd-seat-total').textContent])"
    )
    assert headers == [["", "total 12"], ["called", ""]]
    assert browser.execute_script("return rdView.pileElement('f+').dataset.pile") == "f+"
    assert browser.execute_script("return rdView.pileElement('f9') === undefined") is True


def test_a_phone_sized_screen_fits_the_table(browser: Any, page_url: str) -> None:
    """Issue 32: "it works on a phone-sized screen"; the design: "Phone-sized screens (360 px
    wide): the seats wrap, the own seat first ..., cards scale (CSS only)"."""
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 360, "height": 740, "deviceScaleFactor": 2, "mobile": True},
    )
    try:
        _open(browser, page_url, 1)
        layout = browser.execute_script(
            """
            const seats = [...document.querySelectorAll('.rd-seat')];
            const box = (node) => node.getBoundingClientRect();
            return {
              width: document.documentElement.clientWidth,
              scroll: document.documentElement.scrollWidth,
              order: seats.sort((a, b) => box(a).top - box(b).top).map((seat) => seat.dataset.seat),
              rows: seats.map((seat) => new Set(Array.from(seat.querySelectorAll('.pile'),
                (pile) => Math.round(box(pile).top))).size),
              cardWidth: box(document.querySelector('.card[data-face]')).width,
            };"""
        )
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert layout["width"] == 360
    assert layout["scroll"] <= 360, layout  # nothing wider than the screen
    assert layout["order"] == ["1", "0"]  # one seat a row, the player's own first
    assert layout["rows"] == [1, 1]  # a seat's piles on one row
    assert layout["cardWidth"] < 30  # smaller than on a laptop (2.6rem, 39 px)


BACKS = (
    ["red", "blue"],
    ["light blue", "Blue", "sky blue", "navy"],
    ["red"] * 10,
    ["purple", "pink", "PINK stripes"],
    ["", "green", "green"],
    ["red\x1cback", "black\u3000card", "\ufeffred", "yellow\x85"],
    ["tartan", "plaid", "paisley", "gold", "silver", "bronze", "teal", "mauve", "grey"],
)


def test_seat_colours_are_the_viewers(browser: Any, page_url: str) -> None:
    """Issue 32: "Colour is never the only cue (the viewer's palette and marks)": the play
    page colours its seats with `RDTable.seatColours`, which must give the colours the view
    page's data gives (viewer/model.py `seat_colours`) for the same backs."""
    from racing_demon.viewer.model import SEAT_COLOURS, seat_colours

    _open(browser, page_url, None)
    answers = browser.execute_script(
        "return arguments[0].map((backs) => RDTable.seatColours(backs))", list(BACKS)
    )
    assert answers == [seat_colours(backs) for backs in BACKS]
    assert browser.execute_script("return RDTable.PALETTE") == list(SEAT_COLOURS)
