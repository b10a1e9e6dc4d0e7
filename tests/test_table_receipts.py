"""The table answers every submission at once with a receipt (docs/log-format.md §9): the
record it became, or why it was refused. A simulated match keeps each seat's receipts,
and every receipt agrees with the log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.evidence import INVALID_SHOWN, EvidenceCode, gather_evidence
from racing_demon.game.engine import legal_moves
from racing_demon.game.flow import Seen
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.reader import read_lines
from racing_demon.log.receipts import ReceiptLine, read_receipts, refused_receipt, seal_receipt
from racing_demon.log.records import body_hash
from racing_demon.profiles import load_rules
from racing_demon.sim.bots import BOTS
from racing_demon.sim.simulate import receipt_paths, simulate
from racing_demon.table import (
    PlayerInfo,
    SubmissionCode,
    SubmissionError,
    Table,
    player_signer,
)
from racing_demon.verify import Settings, Verdict, verify_log

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
        assert receipt.record == body_hash(line.raw)
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
    assert (body["seq"], body["record"]) == (
        head.seq,
        body_hash(path.read_bytes().splitlines()[-1]),
    )
    receipts = tmp_path / "seat0.receipts.jsonl"
    receipts.write_bytes(refused.value.receipt + b"\n")
    assert gather_evidence(path, TABLE_PUB, [receipts]).agrees


def test_an_accepted_and_a_bounced_submission_are_both_receipted(tmp_path: Path) -> None:
    players = [PlayerInfo("a", "r"), PlayerInfo("b", "g")]
    entropy = [bytes([seat + 1]) * 16 for seat in range(2)]
    path = tmp_path / "g.jsonl"
    with Table.create(path, load_rules("table"), players, TABLE_KEY, bytes(32), entropy) as table:
        move = str(legal_moves(table.state, 0)[0])
        outcome = table.submit(0, move, 10, 0)
        body = json.loads(outcome.receipt)["body"]
        assert (body["outcome"], body["seq"], body["record"]) == (
            outcome.kind.value,
            outcome.seq,
            body_hash(path.read_bytes().splitlines()[outcome.seq]),
        )
        bounced = table.submit(0, move, 20, 1)  # the same move again: its card has moved
        body = json.loads(bounced.receipt)["body"]
        assert (body["outcome"], body["reason"]) == ("bounce", bounced.reason)


# -- what the review found: refusals the log disproves, and a table that stays sound ------


def _two_seats(tmp_path: Path) -> tuple[Path, Table]:
    players = [PlayerInfo("a", "r"), PlayerInfo("b", "g")]
    entropy = [bytes([seat + 1]) * 16 for seat in range(2)]
    path = tmp_path / "g.jsonl"
    return path, Table.create(path, load_rules("table"), players, TABLE_KEY, bytes(32), entropy)


def _receipts_file(tmp_path: Path, *receipts: bytes) -> Path:
    path = tmp_path / "seat0.receipts.jsonl"
    path.write_bytes(b"".join(receipt + b"\n" for receipt in receipts))
    return path


def test_a_refusal_that_the_log_disproves_is_evidence(tmp_path: Path) -> None:
    """A dishonest table answers a move with a signed refusal and logs nothing: the match
    was not over, or the number was the seat's next; the log shows it."""
    path, table = _two_seats(tmp_path)
    move = str(legal_moves(table.state, 0)[0])
    table.submit(0, move, 10, 0)
    head = table.head.seq, body_hash(path.read_bytes().splitlines()[-1])
    statement = b'{"the statement":"as the player signed it"}'
    lies = [
        refused_receipt(table.game, 0, 1, statement, 20, "MATCH_OVER", *head),
        refused_receipt(table.game, 0, 1, statement, 20, "WRONG_NUMBER", *head),
    ]
    honest = refused_receipt(table.game, 0, 5, statement, 20, "WRONG_NUMBER", *head)
    table.close()
    receipts = _receipts_file(
        tmp_path, *(seal_receipt(receipt, TABLE_KEY) for receipt in (*lies, honest))
    )
    findings = gather_evidence(path, TABLE_PUB, [receipts]).findings
    assert [(finding.code, finding.line) for finding in findings] == [
        (EvidenceCode.REFUSAL_UNFOUNDED, 1),
        (EvidenceCode.REFUSAL_UNFOUNDED, 2),
    ]
    assert all(finding.is_evidence for finding in findings)


def test_a_malformed_seen_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    path, table = _two_seats(tmp_path)
    move = str(legal_moves(table.state, 0)[0])
    before = path.read_bytes()
    for seen in (
        Seen(seq=10**6, hash=None),  # type: ignore[arg-type]
        Seen(seq=True, hash=table.head.hash),
        Seen(seq=0, hash="A" * 64),
    ):
        with pytest.raises(SubmissionError) as refused:
            table.submit(0, move, 10, 0, None, seen)
        assert refused.value.code is SubmissionCode.SEEN_UNKNOWN
    assert path.read_bytes() == before
    table.close()


def test_time_runs_on_the_tables_clock_not_only_its_records(tmp_path: Path) -> None:
    _, table = _two_seats(tmp_path)
    move = str(legal_moves(table.state, 0)[0])
    with pytest.raises(SubmissionError):
        table.submit(0, move, 5000, 3)  # refused (not its number), but the clock moved on
    with pytest.raises(SubmissionError) as refused:
        table.submit(0, move, 4000, 0)
    assert refused.value.code is SubmissionCode.TIME_BACKWARDS
    assert refused.value.receipt is not None
    table.close()


def test_a_seat_whose_client_fails_to_accept_cannot_keep_the_match_from_ending(
    tmp_path: Path,
) -> None:
    keys = PLAYER_KEYS[:2]
    players = [PlayerInfo(f"p{seat}", "b", raw_public_bytes(key)) for seat, key in enumerate(keys)]

    def timing_out(kind: str, message: bytes, version: int) -> str | None:
        if kind == "accept":
            raise TimeoutError("the client did not answer")
        return player_signer(keys[1])(kind, message, version)

    path = tmp_path / "g.jsonl"
    table = Table.create(
        path,
        load_rules("peer2peer"),
        players,
        TABLE_KEY,
        bytes(32),
        None,
        player_signers=[player_signer(keys[0]), timing_out],
        game_id="cd" * 16,
    )
    table.advance(60 * 60_000)  # abandoned: the final record is due
    assert table.finished
    report = verify_log(path, Settings(table_key=TABLE_PUB))
    assert report.verdict is Verdict.VERIFIED, report.finding
    assert report.accepted_by == (0,)


def test_a_receipts_file_of_junk_costs_a_bounded_report(tmp_path: Path) -> None:
    path, table = _two_seats(tmp_path)
    table.close()
    junk = tmp_path / "junk.receipts.jsonl"
    junk.write_bytes(b"{}\n" * 5000)
    findings = gather_evidence(path, TABLE_PUB, [junk]).findings
    assert len(findings) == INVALID_SHOWN + 1
    assert (
        findings[-1].message
        == f"{5000 - INVALID_SHOWN:,} more lines not shown, none of them a receipt"
    )
