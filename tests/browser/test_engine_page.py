"""The engine page: ``view --engine`` pages, in a real headless Chromium, replay the log with
this package's own verifier (Pyodide) and combine its report with check.js's equations.

Issue 34, point 3: "Browser tests: for every sample game (valid, disputed, v1, tournament)
the browser engine's verdict, step, code, line and rule equal `verify --json`'s; and for 20
re-signed mutants." The design (section A): the page's verdict is "the first failure in
docs/log-format.md §7 among (the engine's failure, the JS's first failure whose cause is an
equation)"; the mutants are "moves changed, bounces flipped, scores changed, then re-signed
with the sample table key so only the engine can catch them".

Bounded: a few real pages opened from file:// (each boots Pyodide, seconds apiece), then one
harness page of this file's own, under the engine page's CSP, that boots the engine once
and is fed every other log: it runs the very code the page runs (check.js, engine.js and
RDEngine.pageVerdict). The runtime must be installed (`racing-demon runtime install`):
without it the tests skip locally and fail under CI.
"""

from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.report_document import report_document
from racing_demon.runtime import Runtime, installed, runtime_dir
from racing_demon.testing.tamper import reseal
from racing_demon.verify import Settings, verify_log
from racing_demon.viewer.engine import EngineOptions, EnginePage
from racing_demon.viewer.page import ENGINE_SCRIPT_POLICY, asset, engine_elements
from tests.conftest import invoke
from tests.tampering import EQUATION_FIRST

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_games"
TABLE_PUB = SAMPLES / "table.pub"
PINNED = Settings(table_key=raw_public_bytes(load_public_key(TABLE_PUB)))
# The fixture table key that signed the sample games (scripts/regen_golden_logs.py
# publishes it on purpose): the mutants are re-signed with it, as a dishonest table would.
FIXTURE_TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
FIELDS = ("verdict", "step", "code", "line", "rule")
BOOT_SECONDS = 120  # a cold Pyodide start on a loaded 2-core machine is 3-15 s


def sample_logs() -> list[Path]:
    """Every sample game: valid, disputed, v1 and the tournament's tables (not receipts)."""
    return sorted(
        path for path in SAMPLES.rglob("*.jsonl") if not path.name.endswith(".receipts.jsonl")
    )


def cli_verdict(path: Path) -> dict[str, Any]:
    """What `racing-demon verify --json --table-key sample_games/table.pub LOG` says."""
    document = report_document(verify_log(path, PINNED))
    finding = document.get("finding") or {}
    step = document.get("step") or {}
    return {
        "verdict": document["verdict"],
        "step": step.get("number"),
        "code": finding.get("code"),
        "line": finding.get("line"),
        "rule": finding.get("rule"),
    }


@pytest.fixture(scope="module")
def engine_runtime() -> Runtime:
    """The installed runtime: skipped without it, failed under CI."""
    found = installed(runtime_dir())
    if found is None:
        missing = (
            f"the browser runtime is not installed in {runtime_dir()}: racing-demon runtime install"
        )
        if os.environ.get("CI"):
            pytest.fail(f"the engine page's tests need the runtime under CI: {missing}")
        pytest.skip(missing)
    return found


def wait_for(browser: Any, script: str, seconds: float) -> Any:
    from selenium.common.exceptions import TimeoutException

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            value = browser.execute_script(script)
        except TimeoutException:  # the page's one thread is busy starting the engine
            continue
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"not done within {seconds} s: {script}")


ENGINE_BOX = """
const box = document.getElementById("rd-engine");
if (!box || !["done", "error"].includes(box.dataset.state)) return null;
return {...box.dataset, text: box.innerText};
"""


def page_of(tmp_path: Path, log: Path, *extra: str) -> Path:
    out = tmp_path / f"{log.stem}.html"
    code, output = invoke("view", str(log), "--table-key", str(TABLE_PUB), "-o", str(out), *extra)
    assert code == 0, output
    return out


def shown_verdict(box: dict[str, Any]) -> dict[str, Any]:
    return {
        field: (int(box[field]) if field in ("step", "line") and box[field] else box[field] or None)
        for field in FIELDS
    }


REAL_PAGES = [
    "table-3p-signed.jsonl",  # valid, keyed players
    "disputed/illegal-move-re-signed.jsonl",  # step 8: only the engine sees it
    "disputed/forged-move-signed-by-another-player.jsonl",  # an equation: check.js's
    "tournament/table-2.jsonl",
]


@pytest.mark.parametrize("name", REAL_PAGES)
def test_a_real_engine_page_opened_from_file_shows_the_cli_verdict(
    name: str, engine_runtime: Runtime, browser: Any, tmp_path: Path
) -> None:
    """Issue 34, point 3: "the page's own verdict then covers moves and scores, and agrees
    with the embedded CLI verdict"; the design: one self-contained file that opens from
    file://, with no network."""
    log = SAMPLES / name
    page = page_of(tmp_path, log, "--engine")
    html = page.read_text("utf-8")
    assert ENGINE_SCRIPT_POLICY in html and "connect-src" not in html
    assert "default-src 'none'" in html
    assert "Mozilla Public License" in html  # the notices travel with the runtime
    browser.get_log("browser")  # what earlier pages logged is theirs
    browser.get(page.as_uri())
    box = wait_for(browser, ENGINE_BOX, BOOT_SECONDS)
    assert box["state"] == "done", box["text"]
    assert shown_verdict(box) == cli_verdict(log), box["text"]
    assert box["agrees"] == "true", box["text"]
    assert (
        "checked here" in box["text"] or "Replayed with this package's own verifier" in box["text"]
    )
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []


def test_a_page_without_the_engine_says_the_moves_were_not_checked_here(
    browser: Any, tmp_path: Path
) -> None:
    """Design C: "Without `--engine` the page ... says plainly that the moves and scores
    were not checked in this browser and how to get a page that does"."""
    page = page_of(tmp_path, SAMPLES / "disputed" / "inflated-score.jsonl")
    browser.get(page.as_uri())
    wait_for(browser, "return document.body.dataset.ready === 'true'", 30)
    box = browser.execute_script(
        "const b = document.getElementById('rd-engine'); return {...b.dataset, text: b.innerText}"
    )
    assert box["state"] == "off"
    assert "not checked in this browser" in box["text"]
    assert "racing-demon runtime install" in box["text"] and "--engine" in box["text"]
    html = page.read_text("utf-8")
    assert "const RDEngine" not in html and 'id="rd-runtime-' not in html


HARNESS = """<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; {policy}">
</head><body>
{engine}
<script type="module">{check}
{engine_js}
globalThis.rdJudge = async (base64, keyHex) => {{
  const bytes = Uint8Array.from(atob(base64), (ch) => ch.charCodeAt(0));
  const tableKey = keyHex ? RDCheck.hex.fromHex(keyHex) : null;
  const checks = await RDCheck.run(bytes, {{ tableKey }});
  const engine = await RDEngine.boot({{ inline: document }});
  const failedEquations = checks.failedEquations;
  const report = await engine.judge(bytes, {{ tableKey: keyHex, failedEquations }});
  return {{ page: RDEngine.pageVerdict(report, checks), equations: report.equations ?? null }};
}};
document.body.dataset.ready = "true";
</script></body></html>
"""


@pytest.fixture(scope="module")
def judge_in_browser(
    engine_runtime: Runtime, browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[bytes], dict[str, Any]]:
    """Judge a log's bytes in the harness page: the page's verdict and the report's
    equations member."""
    engine = "".join(engine_elements(EnginePage.of(engine_runtime, EngineOptions())))
    html = HARNESS.format(
        policy=ENGINE_SCRIPT_POLICY,
        engine=engine,
        check=asset("check.js"),
        engine_js=asset("engine.js"),
    )
    page = tmp_path_factory.mktemp("engine-harness") / "harness.html"
    page.write_text(html, "utf-8")
    browser.get(page.as_uri())
    wait_for(browser, "return document.body.dataset.ready === 'true'", 60)
    browser.set_script_timeout(BOOT_SECONDS)
    key = PINNED.table_key.hex() if PINNED.table_key else None

    def judge(data: bytes) -> dict[str, Any]:
        result: dict[str, Any] = browser.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "rdJudge(arguments[0], arguments[1]).then(done, (e) => done({error: String(e)}));",
            base64.b64encode(data).decode("ascii"),
            key,
        )
        assert "error" not in result, result
        return result

    return judge


@pytest.mark.parametrize("log", sample_logs(), ids=lambda path: str(path.relative_to(SAMPLES)))
def test_every_sample_game_gets_the_cli_verdict_in_the_browser(
    log: Path, judge_in_browser: Callable[[bytes], dict[str, Any]]
) -> None:
    """Issue 34, point 3: "for every sample game (valid, disputed, v1, tournament) the
    browser engine's verdict, step, code, line and rule equal `verify --json`'s"."""
    result = judge_in_browser(log.read_bytes())
    page = {field: result["page"][field] for field in FIELDS}
    assert page == cli_verdict(log)
    assert result["page"]["disagreement"] is None
    assert result["equations"] == "by_host"


def _values(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def _indices(values: list[dict[str, Any]], kind: str) -> list[int]:
    return [index for index, value in enumerate(values) if value["body"]["kind"] == kind]


def _other_card(move: str) -> str:
    """The move text with its card's rank moved by one (an ace becomes a two)."""
    *rest, card = move.split(" ")
    ranks = "A23456789TJQK"
    rank = ranks[(ranks.index(card[0]) + 1) % len(ranks)]
    return " ".join([*rest, rank + card[1:]])


def _move_changed(values: list[dict[str, Any]], nth: int) -> int:
    index = _indices(values, "move")[nth]
    values[index]["body"]["move"] = _other_card(values[index]["body"]["move"])
    return index


def _move_bounced(values: list[dict[str, Any]], nth: int) -> int:
    index = _indices(values, "move")[nth]
    values[index]["body"]["kind"] = "bounce"
    values[index]["body"]["reason"] = "FOUNDATION_TAKEN"
    return index


def _score_changed(values: list[dict[str, Any]], nth: int) -> int:
    index = _indices(values, "hand_end")[nth]
    values[index]["body"]["scores"][0] += 1
    return index


def _total_changed(values: list[dict[str, Any]], nth: int) -> int:
    index = _indices(values, "final")[nth]
    values[index]["body"]["totals"][-1] -= 1
    return index


# Unkeyed players' logs: a changed submission carries only the table's signature, which
# the dishonest table makes again, so only the replay (steps 7-10) can catch it.
MUTANT_BASES = (
    "valid/table-2p-to-100.jsonl",
    "valid/peer2peer-2p-blocked-shared-victory.jsonl",
    "valid/peer2peer-3p-hold-off.jsonl",
    "valid/nertz-2p-stall-shifts.jsonl",
    "valid/peer2peer-2p-abandoned.jsonl",
)
MUTATIONS: tuple[tuple[str, Callable[[list[dict[str, Any]], int], int], int], ...] = (
    ("move-changed", _move_changed, 7),
    ("move-bounced", _move_bounced, 3),
    ("score-changed", _score_changed, 0),
    ("total-changed", _total_changed, 0),
)


def mutants() -> Iterator[tuple[str, str, Callable[[list[dict[str, Any]], int], int], int]]:
    for base in MUTANT_BASES:
        for name, mutate, nth in MUTATIONS:
            yield base, name, mutate, nth


@pytest.mark.parametrize(
    ("base", "name", "mutate", "nth"),
    list(mutants()),
    ids=[f"{Path(base).stem}-{name}" for base, name, _, _ in mutants()],
)
def test_twenty_re_signed_mutants_get_the_cli_verdict_in_the_browser(
    base: str,
    name: str,
    mutate: Callable[[list[dict[str, Any]], int], int],
    nth: int,
    judge_in_browser: Callable[[bytes], dict[str, Any]],
    tmp_path: Path,
) -> None:
    """Issue 34, point 3: "and for 20 re-signed mutants"; the design: "moves changed,
    bounces flipped, scores changed, then re-signed with the sample table key so only the
    engine can catch them"."""
    values = _values(SAMPLES / base)
    start = mutate(values, nth)
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(
        b"".join(line + b"\n" for line in reseal(values, start, key=FIXTURE_TABLE_KEY))
    )
    expected = cli_verdict(path)
    # Only the engine can catch it: every check up to the secret (steps 1-6) passes.
    assert expected["verdict"] == "does_not_verify" and expected["step"] >= 7, expected
    result = judge_in_browser(path.read_bytes())
    assert {field: result["page"][field] for field in FIELDS} == expected
    assert result["page"]["disagreement"] is None


@pytest.mark.parametrize("change", EQUATION_FIRST, ids=lambda change: change.__name__)
def test_an_equation_that_fails_before_another_check_is_ordered_as_verify_orders_it(
    change: Callable[[list[bytes]], int],
    judge_in_browser: Callable[[bytes], dict[str, Any]],
    tmp_path: Path,
) -> None:
    """Not re-signed: a table signature fails its equation (Web Crypto's to find) on a line
    where a later check fails too, or before the end of an unfinished file. The page gives
    the engine the equations it found failing, so the verdict is verify's, in its order."""
    lines = (SAMPLES / "valid/table-4p-tie-signed.jsonl").read_bytes().splitlines()
    index = change(lines)
    path = tmp_path / "changed.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    expected = cli_verdict(path)
    assert (expected["code"], expected["line"]) == ("BAD_TABLE_SIGNATURE", index + 1)
    result = judge_in_browser(path.read_bytes())
    assert {field: result["page"][field] for field in FIELDS} == expected
    assert result["page"]["disagreement"] is None
