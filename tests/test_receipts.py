"""Receipts (docs/log-format.md §9): the body, the table's signature, the reader's checks
in their order, each refusal with its code."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from receipting import (
    GOLDEN_LOGS,
    OTHER_KEY,
    TABLE_KEY,
    TABLE_PUB,
    golden,
    lines_of,
    receipts_of,
)

from racing_demon.game.flow import Submission
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.reader import Limits, ReadCode
from racing_demon.log.receipts import (
    RECEIPT_SIGNING_VERSION,
    REFUSED,
    Receipt,
    ReceiptCode,
    ReceiptLine,
    ReceiptProblem,
    check_receipt_line,
    logged_receipt,
    parse_receipt,
    read_receipts,
    receipt_body,
    refused_receipt,
    seal_receipt,
    statement_bytes_of,
)
from racing_demon.log.records import SUBMISSION, body_bytes, chain_hash, parse_record
from racing_demon.log.signing import SignatureCode, pae, sign, verify
from racing_demon.schema import checked_errors, schema_errors

ROOT = Path(__file__).resolve().parents[1]
LOGGED = Receipt(
    game="0" * 31 + "1",
    seat=1,
    n=14,
    submission="a" * 64,
    t_ms=41_200,
    outcome="move",
    reason=None,
    seq=212,
    record="b" * 64,
)
BOUNCED = replace(LOGGED, outcome="bounce", reason="FOUNDATION_TAKEN")
REFUSAL = refused_receipt("0" * 31 + "1", 2, 7, b"{}", 9_000, "NOT_YOUR_MOVE", 40, "c" * 64)


# -- the body and the signature -----------------------------------------------------------


@pytest.mark.parametrize("receipt", [LOGGED, BOUNCED, REFUSAL], ids=["move", "bounce", "refused"])
def test_a_receipt_body_round_trips_and_is_on_the_schema(receipt: Receipt) -> None:
    body = receipt_body(receipt)
    assert parse_receipt(body) == receipt
    assert body["v"] == 3 and body["kind"] == "receipt" and body["player"] == receipt.seat
    assert ("reason" in body) is (receipt.reason is not None)
    assert schema_errors("receipt", json.loads(seal_receipt(receipt, TABLE_KEY))) == []


def test_a_refusal_names_the_last_record_and_the_statement_hash() -> None:
    assert REFUSAL.outcome == REFUSED and not REFUSAL.logged and LOGGED.logged
    assert (REFUSAL.seq, REFUSAL.record) == (40, "c" * 64)
    assert REFUSAL.submission == hashlib.sha256(b"{}").hexdigest()


def test_a_sealed_receipt_is_a_canonical_line_signed_as_a_v2_receipt() -> None:
    line = seal_receipt(LOGGED, TABLE_KEY)
    value = json.loads(line)
    assert canonical_bytes(value) == line and b"\n" not in line
    assert set(value) == {"body", "sigs"} and set(value["sigs"]) == {"table"}
    body = canonical_bytes(value["body"])
    signature = value["sigs"]["table"]
    assert RECEIPT_SIGNING_VERSION == 2
    assert verify(TABLE_PUB, "receipt", body, signature, 2) is None
    # Bound to its kind and its version: no v1 record, no other kind, verifies with it.
    assert verify(TABLE_PUB, "receipt", body, signature) is not None
    assert verify(TABLE_PUB, "move", body, signature, 2) is not None


def test_the_pae_prefix_carries_the_version_and_v1_is_unchanged() -> None:
    assert pae("move", b"hello") == b"DSSEv1 40 application/vnd.racing-demon.log.v1.move 5 hello"
    assert pae("move", b"hello", 1) == pae("move", b"hello")
    assert pae("receipt", b"hi", 2) == (
        b"DSSEv1 43 application/vnd.racing-demon.log.v2.receipt 2 hi"
    )
    with pytest.raises(ValueError, match="version 5"):
        pae("move", b"hello", 5)


def test_a_reason_must_fit_the_outcome() -> None:
    with pytest.raises(ValueError, match="'bounce' receipt needs reason"):
        seal_receipt(replace(BOUNCED, reason=None), TABLE_KEY)
    with pytest.raises(ValueError, match="'move' receipt has no reason"):
        seal_receipt(replace(LOGGED, reason="HAND_OVER"), TABLE_KEY)


@pytest.mark.parametrize("name", GOLDEN_LOGS)
def test_a_logged_receipt_describes_its_record(name: str) -> None:
    """Every submission of a golden log: the receipt's fields are the record's, its
    ``record`` the hash of the line's body (v3; in v2, of the whole line: issue 28, point 2,
    "name records in receipts by something no one but the table can change"), and its
    ``submission`` the hash of exactly the bytes the player signed (a keyed player's
    signature verifies over them)."""
    data = golden(name)
    receipts = iter(receipts_of(data))
    for line in data.splitlines():
        value = json.loads(line)
        record = parse_record(value["body"])
        event = record.payload
        if not isinstance(event, Submission):
            continue
        receipt = next(receipts)
        assert receipt == Receipt(
            game=record.game,
            seat=event.seat,
            n=event.n,
            submission=hashlib.sha256(statement_bytes_of(record)).hexdigest(),
            t_ms=record.t_ms,
            outcome=record.kind.value,
            reason=event.reason,
            seq=record.seq,
            record=hashlib.sha256(body_bytes(line)).hexdigest(),
            v=3,
        )
        assert logged_receipt(record, line, statement_bytes_of(record)) == receipt
        v2 = logged_receipt(record, line, statement_bytes_of(record), 2)
        assert v2 == replace(receipt, record=chain_hash(line), v=2)
        if "player" in value["sigs"]:
            key = bytes.fromhex(
                json.loads(data.splitlines()[0])["body"]["players"][event.seat]["key"]
            )
            signature = value["sigs"]["player"]
            assert verify(key, SUBMISSION, statement_bytes_of(record), signature, record.v) is None


def test_only_a_submission_gets_a_logged_receipt() -> None:
    genesis = golden("peer2peer-2p").splitlines()[0]
    record = parse_record(json.loads(genesis)["body"])
    with pytest.raises(ValueError, match="record 0 is a genesis record, not a submission"):
        logged_receipt(record, genesis, b"{}")
    with pytest.raises(ValueError, match="not a submission"):
        statement_bytes_of(record)


# -- the reader -------------------------------------------------------------------------


def read(tmp_path: Path, data: bytes, **limits: int) -> list[ReceiptLine | ReceiptProblem]:
    path = tmp_path / "receipts.jsonl"
    path.write_bytes(data)
    return list(read_receipts(path, TABLE_PUB, Limits(**limits)))


def problem(item: ReceiptLine | ReceiptProblem) -> tuple[int | None, ReceiptCode, str | None]:
    assert isinstance(item, ReceiptProblem), item
    return item.line, item.code, item.rule


def test_every_receipt_of_a_golden_log_reads_back(tmp_path: Path) -> None:
    receipts = receipts_of(golden("table-3p-signed"))
    items = read(tmp_path, lines_of(receipts))
    assert [item.receipt for item in items if isinstance(item, ReceiptLine)] == receipts
    assert [item.line for item in items] == list(range(1, len(receipts) + 1))


def resigned(body: dict[str, object], key: object = TABLE_KEY, version: int = 2) -> bytes:
    signature = sign(key, "receipt", canonical_bytes(body), version)  # type: ignore[arg-type]
    return canonical_bytes({"body": body, "sigs": {"table": signature}})


GOOD = seal_receipt(LOGGED, TABLE_KEY)
BODY = receipt_body(LOGGED)


@pytest.mark.parametrize(
    ("line", "code", "rule"),
    [
        pytest.param(b"{nope", ReceiptCode.MALFORMED, ReadCode.BAD_JSON, id="bad-json"),
        pytest.param(
            GOOD.replace(b'"body":', b'"body": '),
            ReceiptCode.MALFORMED,
            ReadCode.NOT_CANONICAL,
            id="not-canonical",
        ),
        pytest.param(
            GOOD.replace(b"{", b'{"body":1,', 1),
            ReceiptCode.MALFORMED,
            ReadCode.DUPLICATE_KEY,
            id="duplicate-key",
        ),
        pytest.param(resigned({**BODY, "v": 1}), ReceiptCode.SCHEMA, None, id="v1"),
        pytest.param(resigned({**BODY, "kind": "move"}), ReceiptCode.SCHEMA, None, id="kind"),
        pytest.param(
            resigned({**BODY, "reason": "HAND_OVER"}), ReceiptCode.SCHEMA, None, id="reason-on-move"
        ),
        pytest.param(
            resigned(receipt_body(replace(BOUNCED, reason=None))),
            ReceiptCode.SCHEMA,
            None,
            id="bounce-without-reason",
        ),
        pytest.param(
            resigned({k: v for k, v in BODY.items() if k != "record"}),
            ReceiptCode.SCHEMA,
            None,
            id="no-record",
        ),
        pytest.param(resigned({**BODY, "extra": 1}), ReceiptCode.SCHEMA, None, id="extra-field"),
        pytest.param(
            resigned({**BODY, "outcome": "stall"}), ReceiptCode.SCHEMA, None, id="outcome-stall"
        ),
        pytest.param(
            resigned({**BODY, "submission": "a" * 63 + "A"}), ReceiptCode.SCHEMA, None, id="hex"
        ),
        pytest.param(
            golden("peer2peer-2p").splitlines()[1], ReceiptCode.SCHEMA, None, id="a-log-record"
        ),
        pytest.param(
            resigned(BODY, OTHER_KEY),
            ReceiptCode.BAD_TABLE_SIGNATURE,
            SignatureCode.BAD_SIGNATURE,
            id="forged",
        ),
        pytest.param(
            resigned(BODY, version=1),
            ReceiptCode.BAD_TABLE_SIGNATURE,
            SignatureCode.BAD_SIGNATURE,
            id="signed-as-v1",
        ),
        pytest.param(
            resigned({**BODY, "t_ms": 1})[:-140] + GOOD[-140:],
            ReceiptCode.BAD_TABLE_SIGNATURE,
            SignatureCode.BAD_SIGNATURE,
            id="body-changed",
        ),
    ],
)
def test_a_line_that_is_not_a_receipt_is_refused_with_its_code(
    tmp_path: Path, line: bytes, code: ReceiptCode, rule: str | None
) -> None:
    """The refused line is line 2; the good lines around it still read."""
    items = read(tmp_path, GOOD + b"\n" + line + b"\n" + GOOD + b"\n")
    assert isinstance(items[0], ReceiptLine) and isinstance(items[2], ReceiptLine)
    assert problem(items[1]) == (2, code, rule)
    assert str(items[1]).startswith(f"line 2: {code}")


def test_the_checks_run_in_order() -> None:
    """Canonical form before the schema, the schema before the signature."""
    off_schema = {**BODY, "extra": 1}
    both = canonical_bytes({"body": off_schema, "sigs": {"table": "0" * 128}}) + b" "
    assert check_receipt_line(1, both, TABLE_PUB).code is ReceiptCode.MALFORMED  # type: ignore[union-attr]
    forged_off_schema = resigned(off_schema, OTHER_KEY)
    assert check_receipt_line(1, forged_off_schema, TABLE_PUB).code is ReceiptCode.SCHEMA  # type: ignore[union-attr]
    assert isinstance(check_receipt_line(1, GOOD, TABLE_PUB), ReceiptLine)


@pytest.mark.parametrize(
    ("data", "line", "rule"),
    [
        pytest.param(GOOD + b"\n" + GOOD, 2, ReadCode.TORN_LINE, id="torn"),
        pytest.param(GOOD + b"\n\n" + GOOD + b"\n", 2, ReadCode.EMPTY_LINE, id="empty-line"),
        pytest.param(GOOD + b"\n" + GOOD + b"\r\n" + GOOD + b"\n", 2, ReadCode.CR, id="crlf"),
    ],
)
def test_a_framing_problem_ends_the_file(
    tmp_path: Path, data: bytes, line: int, rule: ReadCode
) -> None:
    items = read(tmp_path, data)
    assert all(isinstance(item, ReceiptLine) for item in items[:-1])
    assert len(items) == line
    assert problem(items[-1]) == (line, ReceiptCode.MALFORMED, rule)


def test_the_reading_limits_hold(tmp_path: Path) -> None:
    items = read(tmp_path, (GOOD + b"\n") * 3, max_records=2)
    assert problem(items[-1]) == (3, ReceiptCode.MALFORMED, ReadCode.TOO_MANY_RECORDS)
    items = read(tmp_path, GOOD + b"\n", max_line_bytes=100)
    assert problem(items[0]) == (1, ReceiptCode.MALFORMED, ReadCode.LINE_TOO_LONG)


def test_an_empty_file_holds_no_receipt(tmp_path: Path) -> None:
    assert read(tmp_path, b"") == []


def test_a_file_that_cannot_be_read_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        list(read_receipts(tmp_path / "missing.jsonl", TABLE_PUB))
    with pytest.raises(OSError, match="not a regular file"):
        list(read_receipts(tmp_path, TABLE_PUB))


def test_the_docs_example_receipt_verifies_under_the_golden_table_key(tmp_path: Path) -> None:
    """docs/log-format.md §9's worked example: its line reads as the receipt it explains,
    the statement it shows is the one whose hash it binds, and its PAE bytes are the ones
    shown."""
    doc = (ROOT / "docs" / "log-format.md").read_text(encoding="utf-8")
    section = doc[doc.index("## 9.") :].split("\n## ")[0]
    (line,) = re.findall(r"^\{\"body\":\{\"game\".*$", section, re.MULTILINE)
    (item,) = read(tmp_path, line.encode() + b"\n")
    assert isinstance(item, ReceiptLine)
    body = json.loads(line)["body"]
    signed = r"`(DSSEv1 43 application/vnd\.racing-demon\.log\.v2\.receipt \d+ \{[^`]*)`"
    shown = re.search(signed, section)
    assert shown is not None
    assert pae("receipt", canonical_bytes(body), 2).startswith(shown[1].encode())
    assert item.receipt == receipts_of(golden("table-3p-signed"))[-1]
    (statement,) = re.findall(r"its statement\n`(\{[^`]*\})`", section)
    assert hashlib.sha256(statement.encode()).hexdigest() == item.receipt.submission
    assert canonical_bytes(json.loads(statement)) == statement.encode()


def _mutations(value: dict[str, Any]) -> list[object]:
    body = value["body"]
    mutated: list[object] = [value, {**value, "extra": 1}, {"body": body}, {"sigs": {}}]
    for key in [*body, "reason"]:
        mutated.append({**value, "body": {k: v for k, v in body.items() if k != key}})
        for other in ("x", -1, 0, 16, None, True, [], 1.5, "A" * 64, "0" * 64 + "\n"):
            mutated.append({**value, "body": {**body, key: other}})
    for outcome in ("move", "tie", "bounce", "refused", "stall"):
        mutated.append({**value, "body": {**body, "outcome": outcome}})
        mutated.append({**value, "body": {**body, "outcome": outcome, "reason": "HAND_OVER"}})
    mutated.append({**value, "sigs": {"table": "0" * 127}})
    mutated.append({**value, "sigs": {"table": "0" * 128, "player": "0" * 128}})
    return mutated


@pytest.mark.parametrize("receipt", [LOGGED, BOUNCED, REFUSAL], ids=["move", "bounce", "refused"])
def test_the_hot_path_receipt_check_agrees_with_jsonschema(receipt: Receipt) -> None:
    for value in _mutations(json.loads(seal_receipt(receipt, TABLE_KEY))):
        assert bool(checked_errors("receipt", value)) == bool(schema_errors("receipt", value)), (
            value
        )
