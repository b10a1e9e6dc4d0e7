"""The table answers every submission at once with a receipt (docs/log-format.md §9): the
record it became, or why it was refused. A simulated match keeps each seat's receipts,
and every receipt agrees with the log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.evidence import gather_evidence
from racing_demon.game.engine import legal_moves
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.reader import read_lines
from racing_demon.log.receipts import ReceiptLine, read_receipts
from racing_demon.log.records import chain_hash
from racing_demon.profiles import load_rules
from racing_demon.sim.bots import BOTS
from racing_demon.sim.simulate import receipt_paths, simulate
from racing_demon.table import PlayerInfo, SubmissionCode, SubmissionError, Table

TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes([3]) * 32)
TABLE_PUB = raw_public_bytes(TABLE_KEY)
PLAYER_KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([60 + seat]) * 32) for seat in range(3)]


@pytest.mark.parametrize("keyed", [False, True], ids=["unkeyed", "keyed"])
def test_every_submission_of_a_simulated_match_has_a_receipt_that_agrees(
    tmp_path: Path, keyed: bool
) -> None:
    log = tmp_path / "game.jsonl"
    bots = (BOTS["hard"], BOTS["normal"], BOTS["easy"])
    simulation = simulate(
        log,
        load_rules("peer2peer"),
        bots,
        "receipts",
        TABLE_KEY,
        player_keys=PLAYER_KEYS if keyed else None,
    )
    assert simulation.receipts == receipt_paths(log, 3)
    with log.open("rb") as stream:
        lines = list(read_lines(stream))
    submissions = {line.number - 1: line for line in lines if "n" in line.value["body"]}  # by seq
    kept = [item for path in simulation.receipts for item in read_receipts(path, TABLE_PUB)]
    assert all(isinstance(item, ReceiptLine) for item in kept)
    receipts = [item.receipt for item in kept if isinstance(item, ReceiptLine)]
    assert sorted(receipt.seq for receipt in receipts) == sorted(submissions)
    for receipt in receipts:
        line = submissions[receipt.seq]
        body = line.value["body"]
        assert (receipt.seat, receipt.n, receipt.t_ms, receipt.outcome) == (
            body["player"],
            body["n"],
            body["t_ms"],
            body["kind"],
        )
        assert receipt.record == chain_hash(line.raw)
    evidence = gather_evidence(log, TABLE_PUB, simulation.receipts)
    assert evidence.agrees, evidence.findings


def test_a_submission_after_the_match_gets_a_refusal_receipt(tmp_path: Path) -> None:
    players = [PlayerInfo("a", "r"), PlayerInfo("b", "g")]
    entropy = [bytes([seat + 1]) * 16 for seat in range(2)]
    rules = load_rules("peer2peer")
    path = tmp_path / "g.jsonl"
    table = Table.create(path, rules, players, TABLE_KEY, bytes(32), entropy)
    table.advance(60 * 60_000)  # an hour of silence abandons the match
    assert table.finished
    head = table.head
    with pytest.raises(SubmissionError, match="the match is over") as refused:
        table.submit(0, "0 call", 60 * 60_000, 0)
    assert refused.value.code is SubmissionCode.MATCH_OVER
    assert refused.value.receipt is not None
    body = json.loads(refused.value.receipt)["body"]
    assert (body["outcome"], body["reason"]) == ("refused", "MATCH_OVER")
    assert (body["seq"], body["record"]) == (head.seq, head.hash)
    receipts = tmp_path / "seat0.receipts.jsonl"
    receipts.write_bytes(refused.value.receipt + b"\n")
    assert gather_evidence(path, TABLE_PUB, [receipts]).agrees


def test_an_accepted_and_a_bounced_submission_are_both_receipted(tmp_path: Path) -> None:
    players = [PlayerInfo("a", "r"), PlayerInfo("b", "g")]
    entropy = [bytes([seat + 1]) * 16 for seat in range(2)]
    with Table.create(
        tmp_path / "g.jsonl", load_rules("table"), players, TABLE_KEY, bytes(32), entropy
    ) as table:
        move = str(legal_moves(table.state, 0)[0])
        outcome = table.submit(0, move, 10, 0)
        body = json.loads(outcome.receipt)["body"]
        assert (body["outcome"], body["seq"], body["record"]) == (
            outcome.kind.value,
            outcome.seq,
            outcome.record,
        )
        bounced = table.submit(0, move, 20, 1)  # the same move again: its card has moved
        body = json.loads(bounced.receipt)["body"]
        assert (body["outcome"], body["reason"]) == ("bounce", bounced.reason)
