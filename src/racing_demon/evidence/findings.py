"""The evidence's codes, what is evidence against the table, and the finding and report
types; how a finding's message names a place, a hash and a time."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final


class EvidenceCode(enum.StrEnum):
    """What comparing a receipt, or a copy of the log, with the log found."""

    # Evidence against the table: it signed both sides of a contradiction.
    FORK = "FORK"
    DELAYED = "DELAYED"
    DROPPED = "DROPPED"
    RECEIPT_MISMATCH = "RECEIPT_MISMATCH"
    REFUSAL_UNFOUNDED = "REFUSAL_UNFOUNDED"
    STALE_HEAD = "STALE_HEAD"
    # Reported, but no evidence against the table.
    RECEIPT_INVALID = "RECEIPT_INVALID"
    OTHER_GAME = "OTHER_GAME"
    NOT_YET_LOGGED = "NOT_YET_LOGGED"
    UNCHECKED = "UNCHECKED"
    COPY_INVALID = "COPY_INVALID"
    LAST_LINE_CHANGED = "LAST_LINE_CHANGED"


EVIDENCE: Final = frozenset(
    {
        EvidenceCode.FORK,
        EvidenceCode.DELAYED,
        EvidenceCode.DROPPED,
        EvidenceCode.RECEIPT_MISMATCH,
        EvidenceCode.REFUSAL_UNFOUNDED,
        EvidenceCode.STALE_HEAD,
    }
)
# A receipts file is the player's, but may be anything: past this many lines that are no
# receipt, one more finding counts the rest (so its cost stays that of reading it).
INVALID_SHOWN: Final = 20
# How each receipt version names a record, and what a difference there proves.
NAMED_BY: Final[Mapping[int, str]] = {2: "line", 3: "body"}
RECEIPT_GUARANTEES: Final[Mapping[int, str]] = {
    2: "names a record by the hash of its whole line, signatures included: the next "
    "record's prev fixes every line but the last, so a difference on the log's last line "
    "is no evidence (LAST_LINE_CHANGED)",
    3: "names a record by the hash of its body, which only the table's key signs: a "
    "difference anywhere is evidence",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """What one line of one file says about one record: a receipt, a log's line."""

    file: str
    line: int  # 1-based
    seq: int
    record: str  # the record, named by ``by``: its body hash or its line's chain hash
    t_ms: int
    by: str = "body"  # "body" or "line" (NAMED_BY)


@dataclass(frozen=True, slots=True, kw_only=True)
class EvidenceFinding:
    """One finding: what ``file`` line ``line`` says (``said``), and what it was compared
    with (``compared``: the log's line, another receipt, or the audited log's line for a
    copy's), each None where there is nothing to show."""

    code: EvidenceCode
    file: str  # the receipts file, or the --against copy
    line: int | None
    seat: int | None
    n: int | None
    said: Entry | None
    compared: Entry | None
    message: str
    rule: str | None = None  # the ReceiptCode, ReadCode or VerifyCode behind an invalid line
    members: tuple[str, ...] | None = None  # a copy's FORK: the body members that differ

    @property
    def is_evidence(self) -> bool:
        return self.code in EVIDENCE

    @property
    def seq(self) -> int | None:
        return None if self.said is None else self.said.seq


@dataclass(frozen=True, slots=True, kw_only=True)
class LogScan:
    """How much of the log is a table-signed chain: lines 1 to ``records``."""

    game: str | None  # the genesis's game id, if line 1 is a table-signed genesis
    records: int  # lines read as a table-signed chain, from line 1
    finished: bool  # the chain holds the final record
    damage: str | None  # why line ``records + 1`` is not part of it, if there is one


@dataclass(frozen=True, slots=True, kw_only=True)
class EvidenceReport:
    """Every receipt and copy compared with one log."""

    log: str
    scan: LogScan
    receipt_files: tuple[str, ...]
    against: tuple[str, ...]
    receipts: int  # receipts read and verified
    findings: tuple[EvidenceFinding, ...]
    versions: tuple[tuple[int, int], ...] = ()  # (receipt version, receipts read of it)

    @property
    def agrees(self) -> bool:
        """Every receipt is a receipt, of this game, and agrees with the log; every copy
        agrees (as far as both go)."""
        return not self.findings


def place(file: str, line: int | None) -> str:
    """``file:line``, or the file alone."""
    return file if line is None else f"{file}:{line}"


def short(record: str) -> str:
    """A hash as a message shows it: its first 8 hex digits."""
    return record[:8] + "…"


def in_ms(t_ms: int) -> str:
    """A time of the log, in milliseconds with thousands separated."""
    return f"{t_ms:,} ms"
