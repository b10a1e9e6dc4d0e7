"""The table and the verifier judge a bounce alike (the match flow makes it so).

After a bounce the flow recomputes what is due, as the verifier does when it replays the
bounce: on a table where every seat is stuck the moment the countdown ends, a bounce at that
instant makes a stall due, which the table writes at once, and ``Table.resume`` after a
crash right after the bounce writes the same. The deal below (the table profile with a 1 s
countdown, this secret and entropy) was found by a search: both seats are stuck when play
starts.
"""

from __future__ import annotations

import json
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.engine import legal_moves
from racing_demon.game.rules import Rules
from racing_demon.game.stall import check_stall
from racing_demon.log.keys import raw_public_bytes
from racing_demon.profiles import builtin_document, custom_variant, rules_from_document
from racing_demon.table import PlayerInfo, Table
from racing_demon.verify import Settings, Verdict, verify_log

KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
SECRET = bytes([9]) * 32
ENTROPY = [(19715).to_bytes(8, "big") * 2, bytes([1]) * 16]
PLAYERS = [PlayerInfo("A", "red"), PlayerInfo("B", "blue")]
SETTINGS = Settings(table_key=raw_public_bytes(KEY.public_key()), seed=SECRET)


def countdown_rules() -> Rules:
    document = builtin_document("table")
    document["time"]["countdown_ms"] = 1000
    return custom_variant(rules_from_document(document))


def stuck_table(path: Path) -> Table:
    table = Table.create(path, countdown_rules(), PLAYERS, KEY, SECRET, ENTROPY, game_id="ab" * 16)
    table.advance(1000)
    assert check_stall(table.state) is None  # both seats stuck once play starts
    return table


def kinds(path: Path) -> list[str]:
    return [json.loads(line)["body"]["kind"] for line in path.read_bytes().splitlines()]


def test_the_table_writes_the_stall_a_bounce_makes_due(tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    table = stuck_table(path)
    table.submit(0, "0 call", 1000, 0)  # DEMON_NOT_EMPTY: a bounce
    turn = next(str(move) for move in legal_moves(table.state, 0) if "turn" in str(move))
    table.submit(0, turn, 1001, 1)
    table.close()

    report = verify_log(path, SETTINGS)

    assert report.verdict is Verdict.UNFINISHED, (report.step, report.finding)
    assert kinds(path)[:4] == ["genesis", "hand_start", "bounce", "stall"]


def test_resume_after_a_bounce_writes_what_the_table_would_have(tmp_path: Path) -> None:
    whole, cut = tmp_path / "whole.jsonl", tmp_path / "cut.jsonl"
    table = stuck_table(whole)
    table.submit(0, "0 call", 1000, 0)
    table.close()
    cut.write_bytes(whole.read_bytes())  # a crash right after the bounce was written

    Table.resume(cut, KEY, SECRET).close()

    assert cut.read_bytes() == whole.read_bytes(), kinds(cut)
