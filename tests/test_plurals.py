"""A count and its noun agree in every message: issue 29, item 10.

"Plurals: '1 files', '1 findings', '1 hands', '1 other copies'. One helper, used
everywhere." The helper is ``racing_demon.wording.plural`` (tests/test_wording.py); here
the common messages are rendered at a count of one, as a user meets them.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from racing_demon.cli import main
from racing_demon.game.duplicate import Shape
from racing_demon.profiles import load_rules
from racing_demon.table import PlayerInfo, Table
from racing_demon.tournament.plan import Contribution, Plan, make_plan

from tampering import TABLE_KEY

ROOT = Path(__file__).resolve().parents[1]
VALID = ROOT / "sample_games" / "valid"
KEY = ROOT / "sample_games" / "table.pub"
NERTZ = VALID / "nertz-4p-demon-empty-signed.jsonl"
ONE_HAND = VALID / "peer2peer-3p-hold-off.jsonl"  # one deal decides a peer2peer match

# A count of one with a plural noun: what no message may say.
DISAGREEING = re.compile(
    r"\b1 (files|findings|hands|records|receipts|copies|other copies|players|seats|tables|"
    r"bytes|cards|logs|submissions|keys|signatures|entries)\b"
)


def run(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    return result.exit_code, result.stdout + result.stderr


def test_an_audit_of_one_receipts_file_and_one_copy(tmp_path: Path) -> None:
    copy = tmp_path / "copy.jsonl"
    shutil.copy(NERTZ, copy)
    receipts = VALID / "nertz-4p-demon-empty-signed.seat0.receipts.jsonl"
    code, out = run(
        "audit", NERTZ, "--table-key", KEY, "--receipts", receipts, "--against", copy, "-q"
    )
    assert code == 0
    assert "receipts from 1 file and 1 other copy of the log checked against" in out
    assert not DISAGREEING.search(out), out


def test_a_match_of_one_hand_verifies_as_one_hand() -> None:
    code, out = run("verify", ONE_HAND, "--table-key", KEY)
    assert code == 0
    assert " · 82 records · 1 hand · " in out
    assert not DISAGREEING.search(out), out


def test_a_limit_of_one_byte_is_one_byte() -> None:
    code, out = run("verify", ONE_HAND, "--max-file-bytes", "1")
    assert code == 1  # the log does not verify
    assert "FILE_TOO_LARGE: file larger than 1 byte\n" in out


def test_a_simulated_match_of_one_hand(tmp_path: Path) -> None:
    assert run("keygen", "table", "--dir", tmp_path)[0] == 0
    code, out = run(
        *("simulate", "--players", "2", "--seed", "one", "--hands", "1"),
        *("--signing-key", tmp_path / "table.key", "--out", tmp_path / "one.jsonl"),
    )
    assert code == 0
    assert re.search(r"blocked of 1 hand, ", out), out
    assert not DISAGREEING.search(out), out


def one_hand_plan() -> Plan:
    shape = Shape("One-hand cup", tables=2, seats=2, hands=1)
    return make_plan(
        bytes(range(32)), shape, load_rules("nertz"), (Contribution("club", b"c" * 32),)
    )


def test_a_one_hand_tournament_genesis_plays_1_hand(tmp_path: Path) -> None:
    """Issue 29, item 10 ("1 hands"): `replay --at 0`, which shows the genesis (item 7),
    names a one-hand tournament's hands in the singular."""
    plan = one_hand_plan()
    log = tmp_path / "table-1.jsonl"
    players = [PlayerInfo("a", "red"), PlayerInfo("b", "blue")]
    entropy = [b"a" * 16, b"b" * 16]
    with Table.create(
        log, plan.rules, players, TABLE_KEY, bytes(range(32)), entropy, tournament=plan.tag(1)
    ):
        pass
    code, out = run("replay", log, "--at", "0")
    assert code == 0
    assert "tournament One-hand cup: table 1 of 2, 1 hand\n" in out
    assert not DISAGREEING.search(out), out


def test_a_plan_whose_rules_play_another_number_of_hands_than_its_one(tmp_path: Path) -> None:
    """Issue 29, item 10: a plan of one hand whose rules play two is refused in the
    singular ("plays exactly 1 hand")."""
    document = one_hand_plan().to_document()
    document["rules"]["match"]["max_hands"] = 2
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(document))
    code, out = run("tournament", "check", path)
    assert code == 1
    assert "a tournament table plays exactly 1 hand: the rules must have" in out
    # Limits in words, as the documents write them: never Python's None.
    assert "(found target none, max_hands 2, lead_tie share)" in out and "None" not in out
    assert not DISAGREEING.search(out), out
