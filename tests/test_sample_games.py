"""The sample-game corpus: every game gets the verdict, reason code and exit codes its
manifest promises, from the command line; the folder holds exactly what the manifest lists;
and scripts/regen_sample_games.py regenerates every byte of it.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from racing_demon.schema import schema_errors

from conftest import invoke, load_script

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_games"
TABLE_PUB = str(SAMPLES / "table.pub")
MANIFEST: dict[str, Any] = json.loads((SAMPLES / "manifest.json").read_text(encoding="utf-8"))
GAMES: list[dict[str, Any]] = MANIFEST["games"]
# Issue 4, item 6: what the valid games must show between them.
REQUIRED = {
    "bounced_race",
    "tie",
    "stall_shift",
    "blocked_hand",
    "hold_off_call",
    "demon_empty",
    "no_centre",
    "resignation",
    "several_hands_to_100",
    "shared_victory",
}


@cache
def regen() -> ModuleType:
    return load_script("regen_sample_games")


def by_file(category: str | None = None) -> list[Any]:
    return [
        pytest.param(game, id=game["file"])
        for game in GAMES
        if category is None or game["category"] == category
    ]


def test_the_manifest_follows_its_schema() -> None:
    assert schema_errors("sample-games-manifest", MANIFEST) == []


def test_every_file_is_listed_and_every_listed_file_is_there() -> None:
    listed = {"manifest.json", "README.md", MANIFEST["table_key"]["file"]}
    for game in GAMES:
        listed |= {game["file"], *([game["claim"]] if game["claim"] else [])}
        assert set(game["derived_from"]) <= {g["file"] for g in GAMES if g["category"] == "valid"}
    on_disk = {
        path.relative_to(SAMPLES).as_posix() for path in SAMPLES.rglob("*") if path.is_file()
    }
    assert on_disk == listed
    assert len({game["file"] for game in GAMES}) == len(GAMES)


def test_every_profile_and_player_count_has_a_valid_game() -> None:
    valid = {(g["profile"], g["players"]["count"]) for g in GAMES if g["category"] == "valid"}
    assert valid >= {(p, n) for p in ("table", "peer2peer", "nertz") for n in (2, 3, 4)}
    assert {g["players"]["keyed"] for g in GAMES if g["category"] == "valid"} == {True, False}


def test_expected_codes_are_the_documented_ones() -> None:
    """Each expected code is in docs/log-format.md §7's table, under the expected step."""
    docs = (ROOT / "docs" / "log-format.md").read_text(encoding="utf-8")
    steps = {
        code: int(step) for step, code in re.findall(r"^\| (\d+) \| `([A-Z_]+)` \|", docs, re.M)
    }
    for game in GAMES:
        expected = game["expected"]
        if expected["code"] is not None:
            assert steps[expected["code"]] == expected["step"], game["file"]


def test_the_valid_games_cover_every_scenario() -> None:
    covered = {tag for game in GAMES for tag in game["covers"]}
    assert covered >= REQUIRED
    assert set(MANIFEST["scenarios"]) >= covered
    assert frozenset(REQUIRED) <= regen().REQUIRED


@pytest.mark.parametrize("game", by_file("valid"))
def test_a_valid_game_shows_the_scenarios_it_covers(game: dict[str, Any]) -> None:
    tags = regen().scenario_tags((SAMPLES / game["file"]).read_bytes())
    assert set(game["covers"]) <= tags


@pytest.mark.parametrize("game", by_file())
def test_verify(game: dict[str, Any]) -> None:
    expected = game["expected"]
    code, out = invoke("verify", str(SAMPLES / game["file"]), "--table-key", TABLE_PUB, "--json")
    (report,) = json.loads(out)["reports"]
    finding = report["finding"] or {}
    assert code == report["exit_code"] == expected["exit_code"], out
    assert report["verdict"] == expected["verdict"], out
    assert (report["step"] or {}).get("number") == expected["step"], out
    assert finding.get("code") == expected["code"], out
    assert finding.get("line") == expected["line"], out
    assert finding.get("rule") == expected["rule"], out


@pytest.mark.parametrize("game", by_file())
def test_audit(game: dict[str, Any]) -> None:
    expected = game["expected"]
    args = ["audit", str(SAMPLES / game["file"]), "--table-key", TABLE_PUB, "--json"]
    if game["claim"] is not None:
        args += ["--claim", str(SAMPLES / game["claim"])]
    code, out = invoke(*args)
    assert code == expected["audit_exit_code"], out
    document = json.loads(out)
    assert schema_errors("audit-report", document) == []
    if expected["verdict"] != "verified":  # audit shows the verifier's report and stops
        assert document["verification"]["verdict"] == expected["verdict"]
        assert document["verification"]["finding"]["code"] == expected["code"]
        assert (document["hands"], document["claims"]) == ([], [])
        return
    assert document["verification"]["verdict"] == "verified"
    wrong = [index for index, check in enumerate(document["claims"]) if not check["holds"]]
    assert wrong == expected["wrong_claims"]
    if game["claim"] is not None:
        claims = json.loads((SAMPLES / game["claim"]).read_text(encoding="utf-8"))["claims"]
        assert [check["claim"] for check in document["claims"]] == claims
        for index in wrong:
            assert "is wrong: the log shows" in document["claims"][index]["message"]


def test_the_raw_defects_change_only_what_they_say() -> None:
    def lines(file: str) -> list[bytes]:
        return (SAMPLES / file).read_bytes().splitlines()

    games = {game["file"].removeprefix("disputed/"): game for game in GAMES}
    for name, game in games.items():
        if not name.endswith(".jsonl") or not game["derived_from"]:
            continue
        ours, base = lines(game["file"]), lines(game["derived_from"][0])
        if name == "changed-byte.jsonl":
            differ = [a != b for a, b in zip(b"\n".join(ours), b"\n".join(base), strict=True)]
            assert sum(differ) == 1
        elif name == "removed-record.jsonl":
            assert len(ours) == len(base) - 1 and set(ours) < set(base)
        elif name == "duplicated-record.jsonl":
            assert len(ours) == len(base) + 1 and set(ours) == set(base)
        elif name == "swapped-records.jsonl":
            assert sorted(ours) == sorted(base) and ours != base
        elif name == "truncated.jsonl":
            assert ours == base[: len(ours)] and len(ours) < len(base)


@pytest.mark.slow
def test_regeneration_is_byte_identical() -> None:
    script = regen()
    assert script.stale(SAMPLES, script.outputs()) == []


def test_the_readme_game_is_the_golden_table_game() -> None:
    golden = regen().golden
    assert (SAMPLES / f"{golden.SAMPLE}.jsonl").read_bytes() == golden.path_for(
        golden.SAMPLE
    ).read_bytes()


def test_a_seed_that_lost_its_scenario_stops_the_regeneration() -> None:
    script = regen()
    game = script.GAME_BY_FILE["valid/peer2peer-3p-hold-off.jsonl"]
    lost = script.replace(game, seed="peer2peer-3p 0")  # its bots never hold off the call
    with pytest.raises(script.CorpusError, match="no longer shows hold_off_call; run"):
        script.check_covers(lost, script.render_game(lost))
