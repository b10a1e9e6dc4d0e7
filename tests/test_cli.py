"""The command line: every command, its exit codes, and its JSON against its schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from racing_demon.cli import main
from racing_demon.game.deal import MatchSeed, commitment, derive_pack
from racing_demon.profiles import builtin_document
from racing_demon.schema import schema_errors

from conftest import invoke


def test_deal_prints_every_seat_readably() -> None:
    code, out = invoke("deal", "--seed", "demo", "--players", "3", "--hand", "2")
    assert code == 0
    assert out.startswith('hand 2 · profile table · seed "demo" · 3 players')
    assert out.count("seat ") == 3
    assert "\x1b[" not in out  # no colour when the output is not a terminal
    top = derive_pack(MatchSeed.from_plain("demo"), 2, 1)[12]
    seat1 = out.split("seat 1")[1]
    assert f"demon  {top.display().rjust(3)}" in seat1


def test_deal_json_matches_the_derivation_and_its_schema() -> None:
    code, out = invoke("deal", "--seed", "demo", "--players", "4", "--rules", "nertz", "--json")
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
    first = invoke("deal", "--seed", "same", "--players", "2", "--json")
    assert first == invoke("deal", "--seed", "same", "--players", "2", "--json")
    assert first != invoke("deal", "--seed", "other", "--players", "2", "--json")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["deal", "--players", "2"], "give one of --seed TEXT, --secret SOURCE"),
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
    code, out = invoke(*args)
    assert code == 2
    assert message in out
    assert "Traceback" not in out


def test_rules_lists_the_profiles() -> None:
    code, out = invoke("rules")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == ["table", "peer2peer", "nertz"]


@pytest.mark.parametrize("name", ["table", "peer2peer", "nertz"])
def test_rules_prints_a_profile_document(name: str) -> None:
    code, out = invoke("rules", name)
    assert code == 0
    assert json.loads(out) == builtin_document(name)
    assert schema_errors("rules-profile", json.loads(out)) == []


def test_rules_validates_a_profile_file(tmp_path: Path) -> None:
    document = builtin_document("table")
    document["stock"]["turn"] = 2
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(document))
    code, out = invoke("rules", str(path))
    assert code == 2
    assert "$.stock.turn" in out


def test_help_has_examples() -> None:
    for command in ([], ["deal"], ["rules"], ["seed"]):
        code, out = invoke(*command, "--help")
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


def test_seed_new_prints_a_secret_that_opens_its_commitment() -> None:
    code, out = invoke("seed", "new", "--json")
    assert code == 0
    document = json.loads(out)
    assert schema_errors("seed-report", document) == []
    assert commitment(bytes.fromhex(document["secret"])) == document["commitment"]
    result = CliRunner().invoke(
        main,
        ["seed", "check", document["commitment"], "--secret", "env:SECRET"],
        env={"SECRET": document["secret"]},
    )
    assert (result.exit_code, result.output) == (0, "ok: the secret matches the commitment\n")
    assert json.loads(invoke("seed", "new", "--json")[1])["secret"] != document["secret"]


def test_seed_new_text_names_what_to_publish() -> None:
    code, out = invoke("seed", "new")
    assert code == 0
    secret_line, commitment_line = out.splitlines()
    secret = secret_line.split()[1]
    assert commitment_line.split()[1] == commitment(bytes.fromhex(secret))
    assert "publish" in commitment_line and "private" in secret_line


def test_seed_check_refuses_a_wrong_secret_with_exit_1() -> None:
    """Issue 29, item 9: "`seed check` prints its MISMATCH verdict on standard error;
    verdicts go to standard output"."""
    published = commitment(bytes(32))
    result = CliRunner().invoke(
        main, ["seed", "check", published, "--secret", "env:SECRET"], env={"SECRET": "11" * 32}
    )
    assert result.exit_code == 1
    assert result.stdout == "MISMATCH: this secret does not open this commitment\n"
    assert result.stderr == ""


@pytest.mark.parametrize(
    "args",
    [
        ["seed", "check", "00" * 31, "--secret", "env:SECRET"],
        ["seed", "check", "zz" * 32, "--secret", "env:SECRET"],
        ["seed", "check", "00" * 32, "--secret", "env:NO_SUCH_VARIABLE"],
        ["seed", "check", "00" * 32, "--secret", "00" * 32],
        ["seed", "check", "00" * 32],
    ],
)
def test_seed_check_misuse_exits_2(args: list[str]) -> None:
    code, out = invoke(*args)
    assert code == 2
    assert "Traceback" not in out


SAMPLE = Path(__file__).resolve().parents[1] / "sample_games"
SAMPLE_LOG = str(SAMPLE / "table-3p-signed.jsonl")
SAMPLE_KEY = str(SAMPLE / "table.pub")


@pytest.mark.parametrize(
    ("command", "limit", "value", "code"),
    [
        ("verify", "--max-records", "100", "TOO_MANY_RECORDS"),
        ("verify", "--max-line-bytes", "200", "LINE_TOO_LONG"),
        ("verify", "--max-file-bytes", "64K", "FILE_TOO_LARGE"),
        ("audit", "--max-records", "100", "TOO_MANY_RECORDS"),
    ],
)
def test_reading_limits_are_set_on_the_command_line(
    command: str, limit: str, value: str, code: str
) -> None:
    exit_code, out = invoke(command, SAMPLE_LOG, "--table-key", SAMPLE_KEY, limit, value)
    assert exit_code == 1
    assert f": {code}: " in out
    assert invoke(command, SAMPLE_LOG, "--table-key", SAMPLE_KEY, limit, "1G")[0] == 0


def test_replay_takes_the_same_limits() -> None:
    code, out = invoke("replay", SAMPLE_LOG, "--max-records", "10")
    assert code == 1 and "TOO_MANY_RECORDS" in out
    assert invoke("replay", SAMPLE_LOG, "--max-records", "1M")[0] == 0


@pytest.mark.parametrize("value", ["0", "-5", "1.5", "64X", "K", "9999999999999"])
def test_a_bad_limit_exits_2(value: str) -> None:
    code, out = invoke("verify", SAMPLE_LOG, "--table-key", SAMPLE_KEY, "--max-records", value)
    assert code == 2
    assert "--max-records" in out


@pytest.mark.parametrize("command", ["verify", "replay", "recover"])
def test_a_malformed_secret_exits_2(command: str) -> None:
    result = CliRunner().invoke(
        main, [command, SAMPLE_LOG, "--secret", "env:SECRET"], env={"SECRET": "not-hex"}
    )
    assert result.exit_code == 2
    assert "$SECRET holds no secret: expected 64 hex characters (0-9, a-f), got 7" in result.output
