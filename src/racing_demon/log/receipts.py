"""Receipts: the table's signed answer to each submission, which the player keeps.

A receipt binds the game, the seat, the submission (its number ``n`` and the SHA-256 of
the statement the player signed), its arrival time, and the outcome: logged as record
``seq``, or refused (not logged) when the log ended at record ``seq``; ``record`` names
that record. It lives outside the log, one per line of a receipts file, in the log's own
framing: the canonical line ``{"body": BODY, "sigs": {"table": SIG}}``, SIG the table's
signature with kind ``receipt`` in format v2 (docs/log-format.md §9).

A receipt has a version of its own, ``v``: a v3 receipt (what the table writes) names its
record by the SHA-256 of the record's body bytes, which only the table's key can sign; a
v2 receipt named it by its chain hash, a hash of the whole line, whose ``sigs`` (the
acceptances, a player's signature) others may change: only the next record's ``prev``
fixes them (docs/log-format.md §9, §10). Both are signed alike, the body's ``v`` inside
what is signed. Nothing in a receipt depends on the log's version: a receipt for a record
of a v1 log is made and checked the same way, which is how the tests derive receipts from
today's logs.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, NamedTuple

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.files import open_regular
from racing_demon.game.flow import Submission
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.reader import (
    DEFAULT_LIMITS,
    Limits,
    ReadError,
    iter_raw_lines,
    read_canonical_line,
)
from racing_demon.log.records import (
    Record,
    body_bytes,
    body_hash,
    chain_hash,
    parse_record,
    parse_signatures,
    statement_of,
)
from racing_demon.log.signing import sign, verify
from racing_demon.log.writer import signed_line
from racing_demon.schema import checked_errors

# A player's receipts file is named so, beside the log: ``<log stem>.seat<N>.receipts.jsonl``
# (a JSON Lines file, as the log is, but never a log).
RECEIPTS_SUFFIX: Final = ".receipts.jsonl"

RECEIPT: Final = "receipt"  # the body's kind, and the kind its signature is made for
RECEIPT_VERSION: Final = 3  # the body's "v" the table writes: the record named by its body
LINE_RECEIPT_VERSION: Final = 2  # the first receipts: the record named by its whole line
RECEIPT_VERSIONS: Final = (LINE_RECEIPT_VERSION, RECEIPT_VERSION)
RECEIPT_SIGNING_VERSION: Final = 2  # the PAE version of every receipt's signature (log.v2.)
REFUSED: Final = "refused"  # the outcome of a submission the table did not log
LOGGED_OUTCOMES: Final = ("move", "tie", "call", "agree", "resign", "bounce")
_WITH_REASON: Final = frozenset({"bounce", REFUSED})


class SubmissionCode(enum.StrEnum):
    """Why the table refused a submission without logging it, in the order it checks: a
    refused receipt's ``reason`` (docs/log-format.md §9)."""

    TIME_BACKWARDS = "TIME_BACKWARDS"
    MATCH_OVER = "MATCH_OVER"
    FINAL_HELD = "FINAL_HELD"
    NO_SUCH_SEAT = "NO_SUCH_SEAT"
    WRONG_NUMBER = "WRONG_NUMBER"
    BAD_MOVE_TEXT = "BAD_MOVE_TEXT"
    NOT_ITS_MOVE = "NOT_ITS_MOVE"
    SEEN_MISSING = "SEEN_MISSING"
    SEEN_UNKNOWN = "SEEN_UNKNOWN"
    UNEXPECTED_SIGNATURE = "UNEXPECTED_SIGNATURE"
    MISSING_SIGNATURE = "MISSING_SIGNATURE"
    BAD_SIGNATURE = "BAD_SIGNATURE"
    # A server's own refusal, before the table's checks: the connection sent submissions
    # faster than its limit allows (docs/protocol.md §9). Not logged; the number stays.
    RATE_LIMITED = "RATE_LIMITED"


@dataclass(frozen=True, slots=True, kw_only=True)
class Receipt:
    """What the table answered to one submission (docs/log-format.md §9): its fields given
    by name, so that no call swaps the adjacent ints (``seat``, ``n``) or hashes."""

    game: str
    seat: int  # the body's "player"
    n: int  # the seat's submission number
    submission: str  # SHA-256 hex of the canonical statement bytes the player signed
    t_ms: int  # when the submission arrived (for a logged one, its record's t_ms)
    outcome: str  # the record kind it was logged as (LOGGED_OUTCOMES), or REFUSED
    reason: str | None  # a bounce's engine code, a refusal's code; None otherwise
    seq: int  # the record it was logged as; for a refusal, the last record written then
    record: str  # that record, as ``record_reference`` names it in receipts of version ``v``
    v: int = RECEIPT_VERSION

    @property
    def logged(self) -> bool:
        return self.outcome != REFUSED


def record_reference(line: bytes, v: int = RECEIPT_VERSION) -> str:
    """How a receipt of version ``v`` names the record whose line (without its newline) is
    ``line``: v3 by the SHA-256 of its body bytes (``body_hash``), v2 by its chain hash."""
    return chain_hash(line) if v == LINE_RECEIPT_VERSION else body_hash(line)


# -- the body, and the line ---------------------------------------------------------------


def receipt_body(receipt: Receipt) -> dict[str, Any]:
    """The body of ``receipt``'s line: the one place a receipt body is written."""
    body: dict[str, Any] = {
        "v": receipt.v,
        "kind": RECEIPT,
        "game": receipt.game,
        "player": receipt.seat,
        "n": receipt.n,
        "submission": receipt.submission,
        "t_ms": receipt.t_ms,
        "outcome": receipt.outcome,
        "seq": receipt.seq,
        "record": receipt.record,
    }
    if receipt.reason is not None:
        body["reason"] = receipt.reason
    return body


def parse_receipt(body: Mapping[str, Any]) -> Receipt:
    """The receipt of a body that schemas/receipt.schema.json admitted."""
    return Receipt(
        game=body["game"],
        seat=body["player"],
        n=body["n"],
        submission=body["submission"],
        t_ms=body["t_ms"],
        outcome=body["outcome"],
        reason=body.get("reason"),
        seq=body["seq"],
        record=body["record"],
        v=body["v"],
    )


def seal_receipt(receipt: Receipt, table_key: Ed25519PrivateKey) -> bytes:
    """The receipt's line, without its newline: canonical ``{"body", "sigs": {"table"}}``,
    signed by ``table_key`` with kind ``receipt`` (PAE version RECEIPT_SIGNING_VERSION).

    Raises ``ValueError`` for a receipt whose reason does not fit its outcome.
    """
    if (receipt.reason is not None) != (receipt.outcome in _WITH_REASON):
        raise ValueError(
            f"a {receipt.outcome!r} receipt {'needs' if receipt.reason is None else 'has no'} "
            "reason"
        )
    body = receipt_body(receipt)
    body_bytes = canonical_bytes(body)
    signature = sign(table_key, RECEIPT, body_bytes, RECEIPT_SIGNING_VERSION)
    return signed_line(body, body_bytes, {"table": signature})


# -- making receipts ----------------------------------------------------------------------


def submission_hash(statement_bytes: bytes) -> str:
    """A receipt's ``submission``: SHA-256 hex of the statement's canonical bytes."""
    return hashlib.sha256(statement_bytes).hexdigest()


def statement_bytes_of(record: Record) -> bytes:
    """The canonical bytes of the statement the player of submission ``record`` signed,
    rebuilt from the record (the one place the audit and the tests rebuild one)."""
    event = record.payload
    if not isinstance(event, Submission):
        raise ValueError(f"record {record.seq} is a {record.kind} record, not a submission")
    return canonical_bytes(statement_of(record.game, event))


def logged_receipt(
    record: Record, line: bytes, statement_bytes: bytes, v: int = RECEIPT_VERSION
) -> Receipt:
    """The receipt (of version ``v``) for a submission the table logged as ``record``, whose
    line (without its newline) is ``line``; ``statement_bytes`` are the canonical bytes the
    player signed."""
    event = record.payload
    if not isinstance(event, Submission):
        raise ValueError(f"record {record.seq} is a {record.kind} record, not a submission")
    return Receipt(
        game=record.game,
        seat=event.seat,
        n=event.n,
        submission=submission_hash(statement_bytes),
        t_ms=record.t_ms,
        outcome=event.kind.value,
        reason=event.reason,
        seq=record.seq,
        record=record_reference(line, v),
        v=v,
    )


def receipt_again(line: bytes, table_key: Ed25519PrivateKey) -> bytes:
    """The receipt line the table gave for the submission it logged as ``line`` (the
    record's line, without its newline), made again byte for byte: every field comes from
    the record (its ``t_ms``, kind, reason, ``seq``, body hash, and the statement its
    player signed), and Ed25519 signs deterministically (RFC 8032 §5.1.6), so the same
    key signs the same body into the same bytes. What a submission sent again gets
    (docs/protocol.md §10)."""
    record = parse_record(json.loads(line)["body"])
    return seal_receipt(logged_receipt(record, line, statement_bytes_of(record)), table_key)


def refused_receipt(
    game: str,
    seat: int,
    n: int,
    statement_bytes: bytes,
    t_ms: int,
    reason: str,
    last_seq: int,
    last_record: str,
    v: int = RECEIPT_VERSION,
) -> Receipt:
    """The receipt (of version ``v``) for a submission the table refused without logging
    it, at ``t_ms``, for ``reason`` (the refusal's code), when the log ended at record
    ``last_seq``, which ``last_record`` names (``record_reference``: for v3 its body hash)."""
    return Receipt(
        game=game,
        seat=seat,
        n=n,
        submission=submission_hash(statement_bytes),
        t_ms=t_ms,
        outcome=REFUSED,
        reason=reason,
        seq=last_seq,
        record=last_record,
        v=v,
    )


# -- reading receipts files ---------------------------------------------------------------


class ReceiptCode(enum.StrEnum):
    """Why a line of a receipts file is not a receipt, in the order the checks run."""

    MALFORMED = "MALFORMED"  # framing, strict JSON or canonical form; the rule is the ReadCode
    SCHEMA = "SCHEMA"  # off schemas/receipt.schema.json
    BAD_TABLE_SIGNATURE = "BAD_TABLE_SIGNATURE"  # the rule is the SignatureCode


class ReceiptLine(NamedTuple):
    """A receipt read and verified: its 1-based line, exact bytes and value."""

    line: int
    raw: bytes
    receipt: Receipt


@dataclass(frozen=True, slots=True)
class ReceiptProblem:
    """A line of a receipts file that is not a receipt signed by the pinned table key."""

    line: int | None  # 1-based; None only for a file that holds no line at all
    code: ReceiptCode
    rule: str | None  # the ReadCode or SignatureCode behind MALFORMED or BAD_TABLE_SIGNATURE
    message: str

    def __str__(self) -> str:
        rule = "" if self.rule is None else f" ({self.rule})"
        return f"line {self.line}: {self.code}{rule}: {self.message}"


def read_receipts(
    path: Path, table_key: bytes, limits: Limits = DEFAULT_LIMITS
) -> Iterator[ReceiptLine | ReceiptProblem]:
    """Every line of the receipts file ``path``, as a verified receipt or the problem that
    refuses it. Each line is checked in this order (docs/log-format.md §9): the reader's
    framing and strict JSON, the canonical form (MALFORMED), the schema (SCHEMA), then the
    table's signature under the pinned raw key ``table_key`` (BAD_TABLE_SIGNATURE). A
    framing problem ends the file (nothing after it can be framed); any other problem
    refuses its line only.

    Raises ``OSError`` when the file cannot be opened or read (not a regular file included).
    """
    with open_regular(path) as stream:
        lines = iter_raw_lines(stream, limits)
        while True:
            try:
                number, raw = next(lines)
            except StopIteration:
                return
            except ReadError as error:
                yield ReceiptProblem(error.line, ReceiptCode.MALFORMED, error.code, error.message)
                return
            yield check_receipt_line(number, raw, table_key, limits)


def check_receipt_line(
    number: int, raw: bytes, table_key: bytes, limits: Limits = DEFAULT_LIMITS
) -> ReceiptLine | ReceiptProblem:
    """Line ``number`` of a receipts file (its bytes without the newline, framed), checked
    for strict JSON and canonical form, the schema and the table's signature."""
    try:
        value = read_canonical_line(number, raw, limits).value
    except ReadError as error:
        return ReceiptProblem(number, ReceiptCode.MALFORMED, error.code, error.message)
    problems = checked_errors(RECEIPT, value)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return ReceiptProblem(number, ReceiptCode.SCHEMA, None, problems[0] + more)
    signature = parse_signatures(value["sigs"]).table
    problem = verify(table_key, RECEIPT, body_bytes(raw), signature, RECEIPT_SIGNING_VERSION)
    if problem is not None:
        return ReceiptProblem(
            number,
            ReceiptCode.BAD_TABLE_SIGNATURE,
            problem.code,
            f"the table's signature: {problem.message}",
        )
    return ReceiptLine(line=number, raw=raw, receipt=parse_receipt(value["body"]))
