"""Receipts and other copies checked against a log (docs/log-format.md §10): each way a
table can drop, delay or fork a history is proved by the files, with its code.

Receipts are made for every submission of a golden log as the table makes them
(tests/receipting.py); the logs are then edited as a dishonest table holding its key would
edit them (racing_demon.testing.tamper: declarative edits, re-chained and re-signed).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from receipting import (
    GOLDEN_LOGS,
    OTHER_KEY,
    PLAYER_KEYS,
    TABLE_KEY,
    TABLE_PUB,
    body_at,
    golden,
    lines_of,
    receipts_of,
    submission_lines,
    write_log,
    write_receipts,
    write_table_pub,
)

from racing_demon.evidence import EVIDENCE, EvidenceCode, EvidenceReport, gather_evidence
from racing_demon.log.receipts import ReceiptCode, refused_receipt
from racing_demon.log.records import body_hash
from racing_demon.schema import schema_errors
from racing_demon.testing.tamper import (
    Edit,
    Remove,
    Reseal,
    SetFields,
    Swap,
    Truncate,
    apply_edits,
)
from racing_demon.verify import Settings, Verdict, VerifyCode, verify_log

from conftest import invoke

TABLE_3P = "table-3p-signed"
P2P = "peer2peer-2p"
# Seat 1's last submission in the table game: a turn of its stock at line 1289, which the
# table can drop and still write a log that verifies, keyed as it is: it drops it live,
# and the players sign on from the history it shows them (Reseal's players).
LAST_TURN = 1289
LAST_TURN_BODY = {"kind": "move", "player": 1, "n": 438, "move": "1 turn KS"}
TABLE_3P_FINAL = 1297  # the final record's line
# Seat 0's turn bounced CARD_MISMATCH at line 601, which the table can hold back a record.
BOUNCE = 601
TABLE_3P_PLAYERS = tuple(PLAYER_KEYS[:3])


def edited(name: str, *edits: Edit) -> bytes:
    return apply_edits(golden(name), edits, table_key=TABLE_KEY)


def dropped_last_turn() -> bytes:
    """The table game with seat 1's last submission dropped, live."""
    return edited(
        TABLE_3P,
        Remove(LAST_TURN, LAST_TURN_BODY),
        SetFields(TABLE_3P_FINAL - 1, {"kind": "final"}, {"records": TABLE_3P_FINAL - 2}),
        Reseal(LAST_TURN, players=TABLE_3P_PLAYERS),
    )


def gather(
    tmp_path: Path,
    data: bytes,
    receipts_from: bytes,
    against: tuple[bytes, ...] = (),
    seats: tuple[int, ...] | None = None,
) -> EvidenceReport:
    """The evidence of ``receipts_from``'s receipts (every seat's, or those of ``seats``) and
    the copies ``against`` about the log ``data``."""
    log = write_log(tmp_path, data)
    receipts = write_receipts(tmp_path, receipts_from)
    if seats is not None:
        receipts = [receipts[seat] for seat in seats]
    copies = [write_log(tmp_path, copy, f"copy{i}.jsonl") for i, copy in enumerate(against)]
    return gather_evidence(log, TABLE_PUB, receipts, copies)


def found(report: EvidenceReport) -> set[tuple[EvidenceCode, int | None, int | None, int | None]]:
    return {(f.code, f.seat, f.n, f.seq) for f in report.findings}


def verdict(tmp_path: Path, data: bytes) -> Verdict:
    return verify_log(write_log(tmp_path, data, "verified.jsonl"), Settings(TABLE_PUB)).verdict


# -- agreement ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", GOLDEN_LOGS)
def test_receipts_that_agree_with_the_log_are_no_finding(tmp_path: Path, name: str) -> None:
    data = golden(name)
    report = gather(tmp_path, data, data, against=(data, data.splitlines(keepends=True)[0]))
    assert report.findings == () and report.agrees
    assert report.receipts == len(submission_lines(data))
    assert (report.scan.records, report.scan.finished, report.scan.damage) == (
        len(data.splitlines()),
        True,
        None,
    )


def test_an_agreeing_refusal_is_no_finding(tmp_path: Path) -> None:
    data = golden(P2P)
    line = data.splitlines()[9]
    refusal = refused_receipt(
        str(body_at(data, 1)["game"]), 0, 3, b"{}", 500, "NOT_YOUR_TURN", 9, body_hash(line)
    )
    receipts = tmp_path / "refusals.jsonl"
    receipts.write_bytes(lines_of([refusal]))
    report = gather_evidence(write_log(tmp_path, data), TABLE_PUB, [receipts])
    assert report.findings == () and report.receipts == 1


# -- drops --------------------------------------------------------------------------------


def test_a_dropped_last_submission_is_proved_though_the_log_verifies(tmp_path: Path) -> None:
    """The issue's attack: a table drops a seat's last submission, leaves no gap in its
    ``n`` and writes a log that verifies, every player's signature and acceptance included.
    The seat's receipt proves it."""
    dropped = dropped_last_turn()
    assert verdict(tmp_path, dropped) is Verdict.VERIFIED
    report = gather(tmp_path, dropped, golden(TABLE_3P), seats=(1,))
    assert found(report) == {
        (EvidenceCode.FORK, 1, 438, 1288),  # seq 1288 now holds seat 2's move
        (EvidenceCode.DROPPED, 1, 438, 1288),
    }
    drop = next(f for f in report.findings if f.code is EvidenceCode.DROPPED)
    assert drop.is_evidence and drop.compared is None
    assert drop.said is not None and drop.said.record == body_hash(
        golden(TABLE_3P).splitlines()[LAST_TURN - 1]
    )
    assert "the finished log has 1,296 records" in drop.message
    fork = next(f for f in report.findings if f.code is EvidenceCode.FORK)
    assert fork.compared is not None and fork.compared.record == body_hash(
        dropped.splitlines()[LAST_TURN - 1]
    )
    # Seat 2's receipt says its move named, as the record it had seen, the one dropped:
    # the log holds another statement under its number.
    seat2 = found(gather(tmp_path, dropped, golden(TABLE_3P), seats=(2,)))
    assert seat2 == {(EvidenceCode.FORK, 2, 438, 1289), (EvidenceCode.DROPPED, 2, 438, 1289)}


@pytest.mark.parametrize("which", ["first", "middle", "last"])
def test_a_removed_submission_is_dropped(tmp_path: Path, which: str) -> None:
    """Removed from a keyed log and the rest re-chained and re-signed (the log no longer
    verifies, for its gap in ``n``; the receipts prove the drop on their own)."""
    lines = submission_lines(golden("nertz-4p-signed"))
    line = {"first": lines[0], "middle": lines[len(lines) // 2], "last": lines[-1]}[which]
    body = body_at(golden("nertz-4p-signed"), line)
    removed = edited("nertz-4p-signed", Remove(line, {"n": body["n"]}), Reseal(line))
    report = gather(tmp_path, removed, golden("nertz-4p-signed"))
    assert (EvidenceCode.DROPPED, body["player"], body["n"], line - 1) in found(report)
    assert all(f.is_evidence for f in report.findings)


def test_a_receipt_past_the_end_of_a_finished_log_is_dropped(tmp_path: Path) -> None:
    data = golden(P2P)
    (last,) = receipts_of(data)[-1:]
    beyond = replace(last, n=last.n + 1, seq=400, record="e" * 64, t_ms=last.t_ms + 10)
    receipts = tmp_path / "seat.jsonl"
    receipts.write_bytes(lines_of([beyond]))
    report = gather_evidence(write_log(tmp_path, data), TABLE_PUB, [receipts])
    assert found(report) == {(EvidenceCode.DROPPED, last.seat, last.n + 1, 400)}
    assert "seq 400 is past its end" in report.findings[0].message


# -- delays -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "line", "later"), [(TABLE_3P, BOUNCE, 1), (P2P, 57, 1), (P2P, 57, 3)]
)
def test_a_submission_held_back_is_delayed_though_the_log_verifies(
    tmp_path: Path, name: str, line: int, later: int
) -> None:
    """Moved ``later`` records later, at the time of the record it now follows, and the
    log re-chained and re-signed (live in the keyed game: its players sign on from what
    they are shown): it verifies; the receipt proves the delay."""
    data = golden(name)
    moved_to_t = body_at(data, line + later)["t_ms"]
    players = TABLE_3P_PLAYERS if name == TABLE_3P else ()
    delayed = edited(
        name,
        *(Swap(line + step, {}) for step in range(later)),
        SetFields(line + later, {"kind": "bounce"}, {"t_ms": moved_to_t}),
        Reseal(line, players=players),
    )
    assert verdict(tmp_path, delayed) is Verdict.VERIFIED
    body = body_at(data, line)
    report = gather(tmp_path, delayed, data)
    (delay,) = (
        f
        for f in report.findings
        if f.code is EvidenceCode.DELAYED and (f.seat, f.n) == (body["player"], body["n"])
    )
    assert delay.said is not None and delay.compared is not None
    assert (delay.said.seq, delay.said.t_ms) == (line - 1, body["t_ms"])
    assert (delay.compared.seq, delay.compared.t_ms) == (line - 1 + later, moved_to_t)
    assert (EvidenceCode.FORK, body["player"], body["n"], line - 1) in found(report)


def test_a_receipt_of_another_time_for_the_same_record_is_delayed(tmp_path: Path) -> None:
    """The table signed the record at one time and the receipt at another."""
    data = golden(TABLE_3P)
    receipt = receipts_of(data)[100]
    receipts = tmp_path / "seat.jsonl"
    receipts.write_bytes(lines_of([replace(receipt, t_ms=receipt.t_ms - 4000)]))
    report = gather_evidence(write_log(tmp_path, data), TABLE_PUB, [receipts])
    assert found(report) == {(EvidenceCode.DELAYED, receipt.seat, receipt.n, receipt.seq)}


# -- forks --------------------------------------------------------------------------------

FORK_LINE = 120  # a move of the table game, whose time a fork changes


def forked(name: str = TABLE_3P, line: int = FORK_LINE) -> bytes:
    """Another history of the game from ``line`` on: that record 1 ms later."""
    body = body_at(golden(name), line)
    return edited(
        name,
        SetFields(line, {"kind": body["kind"]}, {"t_ms": int(str(body["t_ms"])) + 1}),
        Reseal(line),
    )


def test_a_receipt_whose_seq_holds_another_record_is_a_fork(tmp_path: Path) -> None:
    other = forked()
    report = gather(tmp_path, golden(TABLE_3P), other)
    forks = [f for f in report.findings if f.code is EvidenceCode.FORK]
    assert forks and {f.seq for f in forks} == {
        seq
        for seq in range(FORK_LINE - 1, len(other.splitlines()))
        if "n" in body_at(other, seq + 1)
    }
    first = min(forks, key=lambda f: f.seq or 0)
    assert first.said is not None and first.compared is not None
    assert first.said.record == body_hash(other.splitlines()[FORK_LINE - 1])
    assert first.compared.record == body_hash(golden(TABLE_3P).splitlines()[FORK_LINE - 1])
    assert "the table signed both" in first.message
    # The forked record itself is in the log, at its seq but another time.
    assert (EvidenceCode.DELAYED, first.seat, first.n, FORK_LINE - 1) in found(report)


def test_two_receipts_naming_one_seq_with_different_records_are_a_fork(tmp_path: Path) -> None:
    """Seat 1 was refused when, it was told, the log ended at seq k with another record
    than the one seat 0's receipt names for seq k: the table showed them two histories.
    The log, cut before k, cannot settle it; the two receipts do."""
    data, other = golden(TABLE_3P), forked()
    seq = FORK_LINE - 1
    game = str(body_at(data, 1)["game"])
    theirs = body_hash(other.splitlines()[seq])
    refusal = refused_receipt(game, 1, 999, b"{}", 50_000, "MATCH_OVER", seq, theirs)
    refusals = tmp_path / "refusals.jsonl"
    refusals.write_bytes(lines_of([refusal]))
    cut = edited(TABLE_3P, Truncate(FORK_LINE - 1, {}))
    log = write_log(tmp_path, cut)
    seats = write_receipts(tmp_path, data)
    report = gather_evidence(log, TABLE_PUB, [*seats, refusals])
    ours = body_at(data, FORK_LINE)
    fork = next(f for f in report.findings if f.code is EvidenceCode.FORK)
    assert (fork.file, fork.line, fork.seat, fork.seq) == (str(refusals), 1, 1, seq)
    assert fork.compared is not None and fork.said is not None
    assert (fork.said.record, fork.compared.record) == (theirs, body_hash(data.splitlines()[seq]))
    assert fork.compared.file == str(seats[int(str(ours["player"]))])
    assert [f.code for f in report.findings if f.seq == seq].count(EvidenceCode.FORK) == 1
    assert not report.scan.finished
    # Against the whole log, the refusal is also a fork of the log itself.
    whole = gather_evidence(write_log(tmp_path, data), TABLE_PUB, [*seats, refusals])
    assert [f.code for f in whole.findings] == [EvidenceCode.FORK, EvidenceCode.FORK]


def test_two_copies_that_diverge_are_a_fork(tmp_path: Path) -> None:
    data, other = golden(TABLE_3P), forked()
    report = gather(tmp_path, data, data, against=(other,))
    (fork,) = report.findings
    body = body_at(data, FORK_LINE)
    assert (fork.code, fork.line, fork.seat, fork.n, fork.seq) == (
        EvidenceCode.FORK,
        FORK_LINE,
        body["player"],
        body["n"],
        FORK_LINE - 1,
    )
    assert fork.said is not None and fork.compared is not None
    assert fork.said.record == body_hash(other.splitlines()[FORK_LINE - 1])
    assert fork.compared.record == body_hash(data.splitlines()[FORK_LINE - 1])
    assert fork.said.t_ms == fork.compared.t_ms + 1
    assert fork.members == ("t_ms",) and "the bodies differ in t_ms" in fork.message


def test_a_copy_that_only_ends_sooner_is_no_fork(tmp_path: Path) -> None:
    data = golden(TABLE_3P)
    cut = edited(TABLE_3P, Truncate(300, {}))
    assert gather(tmp_path, data, data, against=(cut,)).findings == ()
    assert gather(tmp_path, cut, cut, against=(data,)).findings == ()


def test_a_damaged_copy_is_no_fork(tmp_path: Path) -> None:
    """A line changed without the table's signature: a bad copy, not a second history. The
    copy is judged by the verifier's own steps, and carries its finding (issue 28, point
    1: "a copy whose chain or player signatures do not hold is COPY_INVALID with the
    verifier's finding")."""
    data = golden(TABLE_3P)
    damaged = apply_edits(data, (SetFields(FORK_LINE, {}, {"t_ms": 1}),), table_key=TABLE_KEY)
    report = gather(tmp_path, data, data, against=(damaged,))
    (finding,) = report.findings
    verdict = verify_log(tmp_path / "copy0.jsonl", Settings(TABLE_PUB))
    assert verdict.finding is not None
    assert (finding.code, finding.line, finding.rule) == (
        EvidenceCode.COPY_INVALID,
        FORK_LINE,
        verdict.finding.code,
    )
    assert finding.rule == VerifyCode.TIME_BACKWARDS  # step 4 comes before the signatures
    assert verdict.finding.message in finding.message
    assert not finding.is_evidence


@pytest.mark.parametrize("content", [b"my notes", b"my notes\nmore"], ids=["torn", "lines"])
def test_a_copy_that_is_not_a_log_is_invalid_not_agreeing(tmp_path: Path, content: bytes) -> None:
    """Issue 29, item 13 ("say it is not a log"): `audit --against notes.txt`, a line of
    notes without its newline, said "all agree" and exited 0, reading it as a torn prefix
    of the log. A copy whose first bytes are not a record's is COPY_INVALID, NOT_A_LOG."""
    notes = tmp_path / "notes.txt"
    notes.write_bytes(content)
    code, out = audit(tmp_path, golden(P2P), golden(P2P), "--against", str(notes))
    assert code == 1, out
    assert f"COPY_INVALID      {notes}:1: the copy differs from the log here, and the " in out
    assert ": NOT_A_LOG: " in out and "all agree" not in out


def test_a_copy_of_another_game_is_reported_as_such(tmp_path: Path) -> None:
    report = gather(tmp_path, golden(TABLE_3P), golden(TABLE_3P), against=(golden(P2P),))
    (finding,) = report.findings
    assert (finding.code, finding.line, finding.is_evidence) == (EvidenceCode.OTHER_GAME, 1, False)


# -- what is no evidence ------------------------------------------------------------------


def test_a_forged_receipt_is_invalid_and_no_evidence(tmp_path: Path) -> None:
    data = golden(P2P)
    receipt = receipts_of(data)[5]
    forged = tmp_path / "forged.jsonl"
    forged.write_bytes(lines_of([replace(receipt, t_ms=1)], key=OTHER_KEY))
    report = gather_evidence(write_log(tmp_path, data), TABLE_PUB, [forged])
    (finding,) = report.findings
    assert (finding.code, finding.file, finding.line, finding.rule) == (
        EvidenceCode.RECEIPT_INVALID,
        str(forged),
        1,
        ReceiptCode.BAD_TABLE_SIGNATURE,
    )
    assert not finding.is_evidence and report.receipts == 0
    assert "BAD_TABLE_SIGNATURE (BAD_SIGNATURE)" in finding.message


def test_receipts_of_another_game_are_reported_and_no_evidence(tmp_path: Path) -> None:
    report = gather(tmp_path, golden(TABLE_3P), golden(P2P))
    assert {f.code for f in report.findings} == {EvidenceCode.OTHER_GAME}
    assert len(report.findings) == report.receipts == len(submission_lines(golden(P2P)))
    assert not any(f.is_evidence for f in report.findings)


def test_receipts_past_the_end_of_an_unfinished_log_are_not_yet_logged(tmp_path: Path) -> None:
    data = golden(P2P)
    cut = edited(P2P, Truncate(100, {}))
    report = gather(tmp_path, cut, data)
    assert {f.code for f in report.findings} == {EvidenceCode.NOT_YET_LOGGED}
    assert {f.seq for f in report.findings} == {
        line - 1 for line in submission_lines(data) if line > 100
    }
    assert not any(f.is_evidence for f in report.findings)
    assert "the unfinished log has 100 records so far" in report.findings[0].message


def test_receipts_past_a_damaged_line_are_unchecked(tmp_path: Path) -> None:
    data = golden(P2P)
    damaged = apply_edits(data, (SetFields(100, {}, {"t_ms": 1}),), table_key=TABLE_KEY)
    report = gather(tmp_path, damaged, data)
    assert (report.scan.records, report.scan.finished) == (99, False)
    assert report.scan.damage is not None
    assert report.scan.damage.startswith("line 100: BAD_TABLE_SIGNATURE")
    assert {f.code for f in report.findings} == {EvidenceCode.UNCHECKED}
    assert min(f.seq or 0 for f in report.findings) == 99


def test_a_receipt_that_misdescribes_its_record_is_a_mismatch(tmp_path: Path) -> None:
    data = golden(TABLE_3P)
    receipt = receipts_of(data)[10]
    wrong_outcome = replace(receipt, outcome="bounce", reason="FOUNDATION_TAKEN")
    wrong_seat = replace(receipt, seat=(receipt.seat + 1) % 3)
    receipts = tmp_path / "seat.jsonl"
    receipts.write_bytes(lines_of([wrong_outcome, wrong_seat]))
    report = gather_evidence(write_log(tmp_path, data), TABLE_PUB, [receipts])
    mismatches = [f for f in report.findings if f.code is EvidenceCode.RECEIPT_MISMATCH]
    assert [(f.line, f.seat) for f in mismatches] == [(1, receipt.seat), (2, wrong_seat.seat)]
    assert "the log records it as move" in mismatches[0].message
    assert all(f.is_evidence for f in mismatches)


# -- a property ---------------------------------------------------------------------------


@settings(max_examples=12)  # each example re-signs and re-checks a whole log: about 0.5 s
@given(
    name=st.sampled_from(GOLDEN_LOGS),
    pick=st.integers(min_value=0),
    move=st.booleans(),
)
def test_removing_or_moving_any_submission_leaves_evidence(
    tmp_path_factory: pytest.TempPathFactory, name: str, pick: int, move: bool
) -> None:
    data = golden(name)
    lines = submission_lines(data)
    line = lines[pick % len(lines)]
    if move:
        t_ms = body_at(data, line + 1)["t_ms"]
        edits: tuple[Edit, ...] = (
            Swap(line, {}),
            SetFields(line + 1, {}, {"t_ms": t_ms}),
            Reseal(line),
        )
    else:
        edits = (Remove(line, {}), Reseal(line))
    tmp_path = tmp_path_factory.mktemp("evidence")
    report = gather(tmp_path, edited(name, *edits), data)
    body = body_at(data, line)
    proofs = {(f.code, f.seat, f.n) for f in report.findings if f.code in EVIDENCE}
    expected = EvidenceCode.DELAYED if move else EvidenceCode.DROPPED
    assert (expected, body["player"], body["n"]) in proofs


# -- the command --------------------------------------------------------------------------


def audit(
    tmp_path: Path,
    data: bytes,
    receipts_from: bytes,
    *more: str,
    seats: tuple[int, ...] | None = None,
) -> tuple[int, str]:
    log = write_log(tmp_path, data)
    receipts = write_receipts(tmp_path, receipts_from)
    if seats is not None:
        receipts = [receipts[seat] for seat in seats]
    options = [option for path in receipts for option in ("--receipts", str(path))]
    return invoke("audit", str(log), "--table-key", str(write_table_pub(tmp_path)), *options, *more)


def test_the_audit_exits_0_when_every_receipt_agrees(tmp_path: Path) -> None:
    code, out = audit(tmp_path, golden(P2P), golden(P2P))
    assert code == 0, out
    assert out.startswith("VERIFIED")
    assert out.rstrip().endswith(
        "receipts: 172 receipts from 2 files checked against 176 records (finished): all agree"
    )


def test_the_audit_prints_one_line_per_finding_and_exits_1(tmp_path: Path) -> None:
    code, out = audit(tmp_path, dropped_last_turn(), golden(TABLE_3P), seats=(1,))
    assert code == 1
    assert out.startswith("VERIFIED")
    (line,) = (line for line in out.splitlines() if line.startswith("DROPPED"))
    seat1 = tmp_path / "seat1.jsonl"
    assert line.startswith(
        f"DROPPED           seat 1 n 438: receipt {seat1}:439 says logged as seq 1288 (move, body "
    )
    assert line.endswith(
        "at 205,315 ms; the finished log has 1,296 records: seat 1's submission n 438 is not "
        "among them"
    )
    assert "2 findings, 2 of them evidence against the table" in out


def test_the_audit_json_lists_the_evidence_on_its_schema(tmp_path: Path) -> None:
    code, out = audit(tmp_path, golden(TABLE_3P), forked(), "--json")
    assert code == 1
    document = json.loads(out)
    assert schema_errors("audit-report", document) == []
    assert document["hands"] and document["evidence"]
    # The forked record is the log's at another time (DELAYED); every later submission in
    # the other history names records of it as seen: the log holds other statements under
    # their numbers (DROPPED).
    assert {item["code"] for item in document["evidence"]} == {"FORK", "DELAYED", "DROPPED"}
    records = len(golden(TABLE_3P).splitlines())
    assert document["receipts"]["log"] == {"records": records, "finished": True, "damage": None}


def test_the_audit_json_keeps_its_shape_when_the_log_does_not_verify(tmp_path: Path) -> None:
    cut = edited(P2P, Truncate(100, {}))
    for more in ((), ("--receipts", str(write_receipts(tmp_path, golden(P2P))[0]))):
        log = write_log(tmp_path, cut)
        code, out = invoke(
            "audit", str(log), "--table-key", str(write_table_pub(tmp_path)), "--json", *more
        )
        assert code == 1
        document = json.loads(out)
        assert schema_errors("audit-report", document) == []
        assert document["verification"]["verdict"] == "unfinished"
        assert (document["hands"], document["claims"]) == ([], [])
        assert bool(document["evidence"]) is bool(more)


def test_an_invalid_receipt_alone_exits_1(tmp_path: Path) -> None:
    data = golden(P2P)
    forged = tmp_path / "forged.jsonl"
    forged.write_bytes(lines_of(receipts_of(data)[:1], key=OTHER_KEY))
    log = write_log(tmp_path, data)
    pub = write_table_pub(tmp_path)
    code, out = invoke("audit", str(log), "--table-key", str(pub), "--receipts", str(forged))
    assert code == 1
    assert "RECEIPT_INVALID" in out and "1 finding, no evidence against the table" in out


def test_an_unreadable_receipts_file_or_copy_exits_2(tmp_path: Path) -> None:
    log = write_log(tmp_path, golden(P2P))
    pub = str(write_table_pub(tmp_path))
    for option in ("--receipts", "--against"):
        code, out = invoke("audit", str(log), "--table-key", pub, option, str(tmp_path / "no"))
        assert code == 2
        assert f"cannot read {tmp_path / 'no'}" in out
        code, out = invoke("audit", str(log), "--table-key", pub, option, str(tmp_path))
        assert code == 2
        assert "not a regular file" in out
