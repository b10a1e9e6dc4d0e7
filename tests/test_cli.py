"""The command line: every command, its exit codes, and its JSON against its schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from racing_demon.cli import main
from racing_demon.deal import MatchSeed, derive_pack
from racing_demon.profiles import builtin_document
from racing_demon.schema import schema_errors


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_deal_prints_every_seat_readably() -> None:
    code, out = run("deal", "--seed", "demo", "--players", "3", "--hand", "2")
    assert code == 0
    assert out.startswith('hand 2 · profile table · seed "demo" · 3 players')
    assert out.count("seat ") == 3
    assert "\x1b[" not in out  # no colour when the output is not a terminal
    top = derive_pack(MatchSeed.from_plain("demo"), 2, 1)[12]
    seat1 = out.split("seat 1")[1]
    assert f"demon  {top.display().rjust(3)}" in seat1


def test_deal_json_matches_the_derivation_and_its_schema() -> None:
    code, out = run("deal", "--seed", "demo", "--players", "4", "--rules", "nertz", "--json")
    assert code == 0
    document = json.loads(out)
    assert schema_errors("deal-report", document) == []
    assert document["profile"] == "nertz"
    pack = derive_pack(MatchSeed.from_plain("demo"), 1, 3)
    seat = document["seats"][3]
    assert seat["pack"] == [card.face for card in pack]
    assert seat["demon"][0] == pack[12].face  # top first
    assert seat["work"] == [[card.face] for card in pack[13:17]]
    assert seat["stock"] == [card.face for card in pack[17:]]  # turning order


def test_deal_is_reproducible() -> None:
    first = run("deal", "--seed", "same", "--players", "2", "--json")
    assert first == run("deal", "--seed", "same", "--players", "2", "--json")
    assert first != run("deal", "--seed", "other", "--players", "2", "--json")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["deal", "--players", "2"], "Missing option '--seed'"),
        (["deal", "--seed", "x", "--players", "1"], "--players"),
        (["deal", "--seed", "x", "--players", "5", "--rules", "peer2peer"], "2 to 4 players"),
        (["deal", "--seed", "", "--players", "2"], "seed"),
        (["deal", "--seed", "x", "--players", "2", "--hand", "0"], "--hand"),
        (["deal", "--seed", "x", "--players", "2", "--rules", "house"], "unknown profile"),
        (["rules", "house"], "unknown profile"),
        (["shuffle"], "No such command"),
    ],
)
def test_misuse_exits_2_with_a_clear_message(args: list[str], message: str) -> None:
    code, out = run(*args)
    assert code == 2
    assert message in out
    assert "Traceback" not in out


def test_rules_lists_the_profiles() -> None:
    code, out = run("rules")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == ["table", "peer2peer", "nertz"]


@pytest.mark.parametrize("name", ["table", "peer2peer", "nertz"])
def test_rules_prints_a_profile_document(name: str) -> None:
    code, out = run("rules", name)
    assert code == 0
    assert json.loads(out) == builtin_document(name)
    assert schema_errors("rules-profile", json.loads(out)) == []


def test_rules_validates_a_profile_file(tmp_path: Path) -> None:
    document = builtin_document("table")
    document["stock"]["turn"] = 2
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(document))
    code, out = run("rules", str(path))
    assert code == 2
    assert "$.stock.turn" in out


def test_help_has_examples() -> None:
    for command in ([], ["deal"], ["rules"]):
        code, out = run(*command, "--help")
        assert code == 0
        assert "Examples:" in out


def test_python_dash_m_works() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "racing_demon", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0
    assert result.stdout.startswith("racing-demon, version ")
