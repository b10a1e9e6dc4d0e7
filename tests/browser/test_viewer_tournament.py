"""check.js on a duplicate tournament's logs, in a real headless Chromium.

docs/viewer.md, the `packs` check: "for a duplicate tournament's table, the plan's packs
for that table, derived from the secret and the genesis's `tournament` member
(docs/tournament.md steps 3-5; `BAD_TOURNAMENT` when the member names no table of its
tournament)". Every table of a small simulated tournament is checked in the browser and
compared with the Python verifier and with ``game.duplicate`` directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from racing_demon.game.duplicate import DuplicateDeal, Shape
from racing_demon.log.reader import read_lines
from racing_demon.profiles import load_rules
from racing_demon.sim.bots import EASY, HARD, NORMAL
from racing_demon.sim.simulate import reveal_held, simulate
from racing_demon.table import PlayerInfo, Table
from racing_demon.testing.tamper import reseal
from racing_demon.tournament.plan import Contribution, make_plan
from racing_demon.verify import Settings, Verdict, VerifyCode, verify_log
from racing_demon.viewer import build_page

from .test_viewer_checks import (
    FIXTURE_TABLE_KEY,
    PINNED,
    Harness,
    assert_agrees,
    harness_page,
    run_in_browser,
)
from .test_viewer_ui import _open, _wait_checks

SECRET = bytes(range(200, 232))  # the organiser's
SHAPE = Shape("Browser cup", tables=2, seats=3, hands=2)
PLAN = make_plan(SECRET, SHAPE, load_rules("table"), (Contribution("club", b"c" * 16),))


@pytest.fixture(scope="module")
def harness(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Harness:
    page = tmp_path_factory.mktemp("tournament-harness") / "harness.html"
    page.write_text(harness_page(), encoding="utf-8")
    return Harness(browser, page)


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """Both tables played by bots, each holding its final record until both have played
    out, then revealed."""
    folder = tmp_path_factory.mktemp("browser-tournament")
    paths = {number: folder / f"table-{number}.jsonl" for number in (1, 2)}
    for number, path in paths.items():
        result = simulate(
            path,
            PLAN.rules,
            (EASY, NORMAL, HARD),
            f"browser tournament {number}",
            FIXTURE_TABLE_KEY,
            receipts=False,
            tournament=PLAN.tag(number),
            dealer_secret=SECRET,
        )
        assert result.held
    for path in paths.values():
        reveal_held(path, FIXTURE_TABLE_KEY, SECRET)
    return paths


def _values(path: Path) -> list[dict[str, Any]]:
    with path.open("rb") as stream:
        return [line.value for line in read_lines(stream)]


def _sealed(values: list[dict[str, Any]]) -> bytes:
    return b"".join(line + b"\n" for line in reseal(values, key=FIXTURE_TABLE_KEY))


def test_every_table_of_a_tournament_passes_the_packs_check(
    harness: Harness,
    tables: dict[int, Path],
) -> None:
    """docs/tournament.md, step 5: "at table `t`, seat `s` plays pack `k = (s + t - 1) mod S`
    of each hand, its cards owned by (wearing the back of) seat `s`": check.js derives the
    packs of every table as the verifier does, and names the tournament and the table."""
    for number, path in tables.items():
        assert verify_log(path, PINNED).verdict is Verdict.VERIFIED
        results = run_in_browser(harness, path.read_bytes())
        assert {check: result["status"] for check, result in results.items()} == {
            "canonical": "pass",
            "chain": "pass",
            "table-signatures": "pass",
            "player-signatures": "not-applicable",
            "commitment": "pass",
            "entropy": "not-applicable",
            "packs": "pass",
        }
        words = results["packs"]["words"]
        assert f'tournament "{SHAPE.name}" deals table {number} of 2' in words
        assert "2 hands \u00d7 3 seats" in words


def test_check_js_deals_the_packs_game_duplicate_deals(
    harness: Harness,
) -> None:
    """docs/tournament.md, steps 3 and 5, in the browser: the tournament seed and the
    rotation give the very packs ``DuplicateDeal`` gives, table by table and seat by seat."""
    tag = PLAN.tag(2)._asdict()
    answer = harness.call(
        """
        const [secretHex, tag, seats] = args;
        const deal = RDCheck.deal;
        const seed = deal.tournamentSeed(RDCheck.hex.fromHex(secretHex), tag, seats);
        const packs = [];
        for (let hand = 1; hand <= tag.hands; hand += 1)
          for (let seat = 0; seat < seats; seat += 1)
            packs.push(deal.derivePack(seed, hand, deal.packIndex(tag.table, seats, seat)));
        return Promise.all(packs);
        """,
        SECRET.hex(),
        tag,
        SHAPE.seats,
    )
    deal = DuplicateDeal(SHAPE, SHAPE.seed(SECRET, PLAN.entropy), 2)
    expected = [
        [card.index for card in deal.pack(hand, seat)]
        for hand in range(1, SHAPE.hands + 1)
        for seat in range(SHAPE.seats)
    ]
    assert answer == expected


def test_another_tables_packs_fail_where_the_verifier_fails(
    harness: Harness,
    tables: dict[int, Path],
) -> None:
    """docs/log-format.md §7: `PACK_MISMATCH` "at a tournament's table, not the pack the
    plan deals that seat": table 1's log carrying table 2's hand-2 digests fails the
    browser's packs check at the record the verifier names."""
    mine, theirs = _values(tables[1]), _values(tables[2])

    def hand_2(values: list[dict[str, Any]]) -> int:
        return next(
            index
            for index, value in enumerate(values)
            if value["body"]["kind"] == "hand_start" and value["body"]["hand"] == 2
        )

    mine[hand_2(mine)]["body"]["packs"] = theirs[hand_2(theirs)]["body"]["packs"]
    log = _sealed(mine)
    path = tables[1].with_name("moved.jsonl")
    path.write_bytes(log)
    report = verify_log(path, PINNED)
    assert report.finding is not None and str(report.finding.code) == "PACK_MISMATCH"
    results = run_in_browser(harness, log)
    assert_agrees(results, report)
    assert results["packs"]["line"] == hand_2(mine) + 1


def test_a_table_outside_its_tournament_fails_the_packs_check(
    harness: Harness,
    tables: dict[int, Path],
) -> None:
    """docs/viewer.md: "`BAD_TOURNAMENT` when the member names no table of its
    tournament", at the genesis, as the verifier's step 7 refuses it."""
    values = _values(tables[1])
    values[0]["body"]["tournament"]["table"] = 3
    log = _sealed(values)
    path = tables[1].with_name("outside.jsonl")
    path.write_bytes(log)
    report = verify_log(path, PINNED)
    assert report.finding is not None and report.finding.code is VerifyCode.BAD_TOURNAMENT
    packs = run_in_browser(harness, log)["packs"]
    assert (packs["status"], packs["code"], packs["line"]) == ("fail", "BAD_TOURNAMENT", 1)
    assert "table 3 is not a table of tournament" in packs["words"]


def test_the_page_names_the_tournament_and_the_table(browser: Any, tables: dict[int, Path]) -> None:
    """docs/viewer.md: "for a duplicate tournament's table, the page's header names the
    tournament and the table, and the About panel the number of tables and hands and the
    plan's commitment"."""
    log = tables[2]
    page = log.with_suffix(".html")
    page.write_text(build_page(log, Settings(table_key=PINNED.table_key)), encoding="utf-8")
    _open(browser, page)
    _wait_checks(browser)
    header = browser.execute_script("return document.getElementById('rd-game').textContent")
    assert f"{SHAPE.name}, table 2 of 2" in header
    about = browser.execute_script("return document.getElementById('rd-about').textContent")
    assert f"{SHAPE.name} · table 2 of 2 · 2 hands" in about
    assert f"sha256 {PLAN.digest}" in about


def test_a_one_hand_tournament_is_named_in_the_singular(browser: Any, tmp_path: Path) -> None:
    """Issue 29, item 10 ("1 hands"): the About panel of a one-hand tournament's table
    says "1 hand", as wording.plural would."""
    one_hand = Shape("One-hand cup", tables=2, seats=2, hands=1)
    plan = make_plan(SECRET, one_hand, load_rules("nertz"), (Contribution("club", b"c" * 16),))
    log = tmp_path / "table-1.jsonl"
    players = [PlayerInfo("a", "red"), PlayerInfo("b", "blue")]
    with Table.create(
        log, plan.rules, players, FIXTURE_TABLE_KEY, SECRET, [b"a" * 16, b"b" * 16],
        tournament=plan.tag(1),
    ):  # fmt: skip
        pass  # the genesis and the first deal: enough for the header and the About panel
    page = log.with_suffix(".html")
    page.write_text(build_page(log, Settings(table_key=PINNED.table_key, seed=SECRET)))
    _open(browser, page)
    about = browser.execute_script("return document.getElementById('rd-about').textContent")
    assert "One-hand cup · table 1 of 2 · 1 hand" in about and "1 hands" not in about
