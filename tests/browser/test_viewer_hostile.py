"""The viewer's page on hostile and odd logs, in a real Chromium.

Issue 17: one HTML file "with everything inline (no network access ...)", "for valid and
for failing logs alike"; the design: "every text from the log goes in through textContent,
never as markup". Each page here is built by the Python builder from a log a dishonest
table could write (re-signed with the fixture table key), opened from file://, and watched
for scripts that run, markup that appears, and errors thrown.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.rules import Rules
from racing_demon.log.keys import load_public_key, public_pem, raw_public_bytes
from racing_demon.testing.tamper import reseal
from racing_demon.verify import Settings
from racing_demon.viewer import build_page

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_games"
TABLE_PUB = raw_public_bytes(load_public_key(SAMPLES / "table.pub"))
# The fixture table key that signed the sample games (scripts/regen_golden_logs.py).
FIXTURE_TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
WAIT_S = 15.0

# Run before the page's own scripts: any script the log smuggles in would call these.
WATCH = """
window.rdErrors = [];
window.rdInjected = [];
window.addEventListener('error', (event) => window.rdErrors.push(String(event.message)), true);
window.addEventListener('unhandledrejection',
  (event) => window.rdErrors.push(String(event.reason && (event.reason.stack || event.reason))));
window.alert = (text) => window.rdInjected.push(String(text));
"""

# A name is at most 64 characters and a back 32 (the record schema): these fit.
NAME = "</script><img src=x onerror=alert(1)>\u2028<!--"
OTHER_NAME = "<svg onload=alert(2)>\"'`${x}"
BACK = "<img src=x onerror=alert(3)>"
OTHER_BACK = "<!--<script>alert(4)"
TITLE = "</script><script>alert(5)</script></style><b>bold</b>&lt;i&gt;\u2029"


def _wait(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def _values(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (SAMPLES / name).read_bytes().splitlines()]


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def _hostile_names(folder: Path) -> Path:
    """An unkeyed sample game whose genesis names its seats, backs and rules in markup,
    re-signed by the table: a log that verifies."""
    values = _values("valid/table-2p-to-100.jsonl")
    genesis = values[0]["body"]
    genesis["players"][0].update(name=NAME, back=BACK)
    genesis["players"][1].update(name=OTHER_NAME, back=OTHER_BACK)
    genesis["rules"]["title"] = TITLE
    genesis["rules_sha256"] = Rules.from_document(genesis["rules"]).digest()
    return _write(
        folder / "<img src=x onerror=alert(6)>.jsonl", reseal(values, key=FIXTURE_TABLE_KEY)
    )


class Page:
    def __init__(self, browser: Any) -> None:
        self.browser = browser

    def open(self, log: Path, folder: Path) -> None:
        page = folder / "page.html"
        page.write_text(build_page(log, Settings(table_key=TABLE_PUB)), encoding="utf-8")
        added = self.browser.execute_cdp_cmd(
            "Page.addScriptToEvaluateOnNewDocument", {"source": WATCH}
        )
        try:
            self.browser.get("about:blank")
            self.browser.get(page.as_uri())
            _wait(lambda: self.js("return document.body.dataset.ready") == "true", "first frame")
            _wait(
                lambda: (
                    self.js("return document.getElementById('rd-checks').dataset.done") == "true"
                ),
                "the browser's checks",
            )
        finally:
            self.browser.execute_cdp_cmd(
                "Page.removeScriptToEvaluateOnNewDocument", {"identifier": added["identifier"]}
            )

    def js(self, script: str, *args: object) -> Any:
        return self.browser.execute_script(script, *args)

    def errors(self) -> list[str]:
        return list(self.js("return window.rdErrors"))

    def result(self) -> str:
        return str(self.js("return document.getElementById('rd-checks').dataset.result"))

    def badge(self) -> str:
        return str(self.js("return document.getElementById('rd-browser-result').textContent"))


@pytest.fixture
def page(browser: Any) -> Page:
    return Page(browser)


def test_markup_in_names_backs_title_and_file_name_stays_text(page: Page, tmp_path: Path) -> None:
    """The design: "every text from the log goes in through textContent, never as markup";
    the JSON "can then never close the script element". No script of the log's runs, no
    element of its makes it into the page, and its words are shown as they are."""
    log = _hostile_names(tmp_path)
    page.open(log, tmp_path)
    assert page.js("return window.rdInjected") == []
    assert page.errors() == []
    # Only the page's own two scripts (the data and the module) and no element of the log's.
    assert page.js("return document.scripts.length") == 2
    assert page.js("return document.querySelectorAll('img, b, i, svg:not(#rd-chart)').length") == 0
    header = page.js("return document.getElementById('rd-game').textContent")
    assert log.name in header
    assert "</script><script>alert(5)</script></style><b>bold</b>&lt;i&gt;" in header
    names = page.js(
        "return Array.from(document.querySelectorAll('.rd-name'), (e) => e.textContent)"
    )
    assert names[0].startswith("</script><img src=x onerror=alert(1)>")
    assert names[1] == OTHER_NAME
    assert page.result() == "pass"  # the edited log is re-signed: it still verifies


UNFINISHED = {
    "the sample cut before its final record": lambda: (
        SAMPLES / "disputed" / "truncated.jsonl"
    ).read_bytes(),
    "a genesis alone": lambda: (
        (SAMPLES / "valid" / "table-4p-tie-signed.jsonl").read_bytes().split(b"\n")[0] + b"\n"
    ),
    "an empty file": lambda: b"",
}


@pytest.mark.parametrize("name", list(UNFINISHED), ids=list(UNFINISHED))
def test_an_unfinished_log_is_never_all_checks_pass(page: Page, tmp_path: Path, name: str) -> None:
    """docs/log-format.md §6: a log without its final record "is unfinished and never
    valid"; issue 17: where the page cannot check, it "says so and does not pretend". With
    no secret revealed, the commitment and the packs were not checked: the browser's
    result is incomplete, never the pass of a finished game."""
    log = tmp_path / "unfinished.jsonl"
    log.write_bytes(UNFINISHED[name]())
    page.open(log, tmp_path)
    assert page.errors() == []
    assert page.result() == "incomplete"
    assert "ALL CHECKS PASS" not in page.badge()
    summary = page.js("return document.getElementById('rd-checks-summary').textContent")
    assert "no final record" in summary


def _key_files(folder: Path) -> dict[str, Path]:
    other = Ed25519PrivateKey.from_private_bytes(bytes([9]) * 32)
    private = other.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    files = {
        "another table's key": public_pem(other),
        "a private key": private,
        "garbage": b"\x00\xffnot a key at all\n" * 50,
        "an empty file": b"",
    }
    paths = {}
    for name, data in files.items():
        path = folder / (name.replace(" ", "-").replace("'", "") + ".pub")
        path.write_bytes(data)
        paths[name] = path
    return paths


def test_a_dropped_key_that_is_wrong_never_passes(page: Page, tmp_path: Path) -> None:
    """The design: "A key whose id is not the genesis `table_key` fails `table-signatures`
    at record 0"; a file that is no public key pins nothing and says why, and the
    checks stand as they were."""
    keys = _key_files(tmp_path)
    page.open(SAMPLES / "valid" / "table-4p-tie-signed.jsonl", tmp_path)
    assert page.result() == "pass"
    status = (
        "return [document.getElementById('rd-checks').dataset.pinned,"
        " document.getElementById('rd-key-error').textContent,"
        " document.querySelector('[data-check=\"table-signatures\"]').dataset.status]"
    )
    for name in ("a private key", "garbage", "an empty file"):
        page.browser.find_element("id", "rd-key-input").send_keys(str(keys[name]))
        _wait(lambda: page.js(status)[1] != "", f"{name} to be refused")
        pinned, error, table = page.js(status)
        assert (pinned, table) == ("false", "pass"), name
        assert error.startswith("Not pinned:"), error
        page.js("document.getElementById('rd-key-error').textContent = ''")
    page.browser.find_element("id", "rd-key-input").send_keys(str(keys["another table's key"]))
    _wait(lambda: page.js(status)[0] == "true", "the other key to be pinned")
    _wait(
        lambda: page.js("return document.getElementById('rd-checks').dataset.done") == "true",
        "the checks with the other key",
    )
    assert page.js(status)[2] == "fail"
    assert (
        page.js("return document.querySelector('[data-check=\"table-signatures\"]').dataset.seq")
        == "0"
    )
    assert page.result() == "fail"
    assert page.errors() == []


def test_the_page_says_the_browser_does_not_check_the_moves(page: Page, tmp_path: Path) -> None:
    """Issue 17: "an illegal move that the table re-signed passes the crypto checks and
    shows the embedded rule failure". The browser's ALL CHECKS PASS beside the verifier's
    DOES NOT VERIFY must not read as the browser having checked the game: its checklist
    says what it does not check."""
    page.open(SAMPLES / "disputed" / "illegal-move-re-signed.jsonl", tmp_path)
    assert page.result() == "pass"
    assert page.js("return document.getElementById('rd-verdict').dataset.verdict") == (
        "does_not_verify"
    )
    scope = page.js("return document.getElementById('rd-checks-scope').textContent")
    assert "does not replay the moves against the rules" in scope


def test_a_repeated_seq_links_to_the_failing_copy_not_the_first(page: Page, tmp_path: Path) -> None:
    """The design: "`#rd-failure` shows the finding, with a link to the failing record",
    and a deep link "opens at record 120". In duplicated-record two lines carry seq 41: the
    link to the failing record, and the page's own deep link while it is shown, must lead
    to the failing copy (line 43), never to the verified line before it."""
    log = SAMPLES / "disputed" / "duplicated-record.jsonl"
    shown = (
        "return [document.getElementById('rd-slider').value,"
        " document.getElementById('rd-frame').dataset.verified]"
    )
    page.open(log, tmp_path)
    assert page.js(shown) == ["42", "false"]  # it opens at the failing copy
    page.js("document.getElementById('rd-first').click()")
    page.js("document.querySelector('#rd-failure a').click()")
    _wait(lambda: page.js(shown)[0] != "0", "the failure link to move")
    assert page.js(shown) == ["42", "false"]
    # The page's own deep link for what it shows opens there again.
    page.js("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowLeft'}))")
    page.js("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight'}))")
    link = page.js("return location.hash")
    assert page.errors() == []
    page.browser.get("about:blank")
    page.browser.get((tmp_path / "page.html").as_uri() + link)
    _wait(lambda: page.js("return document.body.dataset.ready") == "true", "the deep link")
    assert page.js(shown) == ["42", "false"], link
