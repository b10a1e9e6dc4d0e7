"""Evidence: players' receipts, and other copies of the log, checked against a log.

Evidence is only ever what the table itself signed: where a receipt and the log disagree,
or two receipts, or two copies of the log, and the table signed both sides, the files
alone prove it (docs/log-format.md §10, docs/threat-model.md §5):

- ``FORK``: the table signed two histories: a receipt naming seq k by another record than
  line k (a v3 receipt by its body hash, a v2 receipt by its line's hash where the next
  record fixes the line); two receipts naming one seq otherwise; two table-signed bodies
  of one game and seq that differ (``--against``, naming the members that differ).
- ``DELAYED``: the receipted submission is in the log, but at another seq or ``t_ms``.
- ``DROPPED``: the receipted submission is not in a finished log (its ``n`` absent, or
  held by another statement), or its seq lies past the end of a finished log.
- ``RECEIPT_MISMATCH``: the line the receipt names is the one it names (same hash), but
  the receipt describes it wrongly (another seat, number, statement, outcome or reason).
- ``REFUSAL_UNFOUNDED``: a refusal whose reason the log disproves.
- ``STALE_HEAD``: a refusal naming as the log's end a record that a later one, written
  before the refusal, had already followed: the table hid its head.

The rest is reported but is no evidence against the table: ``RECEIPT_INVALID`` (a line
that is not a receipt signed by the pinned key), ``OTHER_GAME`` (a receipt or a copy of
another game), ``NOT_YET_LOGGED`` (not in an unfinished log so far), ``UNCHECKED`` (past
the point where the log stops being a table-signed chain), ``COPY_INVALID`` (a copy the
verifier's steps 1-5 refuse where it differs from the log), ``LAST_LINE_CHANGED`` (a v2
receipt's line hash differs on a line whose signatures nothing the table signed fixes).

Logs are read as streams: what is kept is a few facts about the lines that receipts name
(by seq, and by seat and submission number), never the lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from racing_demon.evidence.copies import _compare_copy
from racing_demon.evidence.findings import (
    EVIDENCE,
    INVALID_SHOWN,
    NAMED_BY,
    RECEIPT_GUARANTEES,
    Entry,
    EvidenceCode,
    EvidenceFinding,
    EvidenceReport,
    LogScan,
)
from racing_demon.evidence.receipts import _Judge
from racing_demon.evidence.scan import _Scanner
from racing_demon.files import LogFile, shown_name
from racing_demon.log.reader import DEFAULT_LIMITS, Limits
from racing_demon.log.receipts import ReceiptLine, read_receipts
from racing_demon.wording import plural

__all__ = [
    "EVIDENCE",
    "INVALID_SHOWN",
    "NAMED_BY",
    "RECEIPT_GUARANTEES",
    "Entry",
    "EvidenceCode",
    "EvidenceFinding",
    "EvidenceReport",
    "LogScan",
    "gather_evidence",
]


def gather_evidence(
    log: LogFile,
    table_key: bytes,
    receipt_files: Sequence[Path] = (),
    against: Sequence[Path] = (),
    limits: Limits = DEFAULT_LIMITS,
) -> EvidenceReport:
    """Every receipt in ``receipt_files`` and every copy in ``against`` compared with
    ``log``, under the pinned raw table key ``table_key``.

    Raises ``OSError`` when a file cannot be opened or read. Files are named as
    ``shown_name`` names them: in valid UTF-8, whatever the file system holds.
    """
    shown = shown_name(log)
    receipts: list[tuple[str, ReceiptLine]] = []
    findings: list[EvidenceFinding] = []
    for path in receipt_files:
        name = shown_name(path)
        invalid = 0
        for item in read_receipts(path, table_key, limits):
            if isinstance(item, ReceiptLine):
                receipts.append((name, item))
                continue
            invalid += 1
            if invalid <= INVALID_SHOWN:
                findings.append(
                    EvidenceFinding(
                        EvidenceCode.RECEIPT_INVALID,
                        name,
                        item.line,
                        None,
                        None,
                        None,
                        None,
                        f"not a receipt of the pinned table key: {item.code}"
                        + ("" if item.rule is None else f" ({item.rule})")
                        + f": {item.message}",
                        rule=item.code,
                    )
                )
        if invalid > INVALID_SHOWN:
            more = invalid - INVALID_SHOWN
            findings.append(
                EvidenceFinding(
                    EvidenceCode.RECEIPT_INVALID,
                    name,
                    None,
                    None,
                    None,
                    None,
                    None,
                    f"{plural(more, 'more line')} not shown, none of them a receipt",
                )
            )
    seqs = {item.receipt.seq for _, item in receipts}
    refused: dict[int, set[int]] = {}  # seq -> the seats refused when the log ended there
    for _, item in receipts:
        if not item.receipt.logged:
            refused.setdefault(item.receipt.seq, set()).add(item.receipt.seat)
    submissions = {(item.receipt.seat, item.receipt.n) for _, item in receipts}
    scanner = _Scanner(log, table_key, limits, seqs, submissions, refused)
    scan = scanner.run()
    judge = _Judge(shown, scan, scanner)
    for file, item in receipts:
        findings.extend(judge.receipt(file, item))
    findings.extend(judge.between_receipts(receipts))
    for copy in against:
        findings.extend(_compare_copy(log, copy, table_key, limits, scan))
    versions: dict[int, int] = {}
    for _, item in receipts:
        versions[item.receipt.v] = versions.get(item.receipt.v, 0) + 1
    return EvidenceReport(
        shown,
        scan,
        tuple(shown_name(path) for path in receipt_files),
        tuple(shown_name(path) for path in against),
        len(receipts),
        tuple(findings),
        tuple(sorted(versions.items())),
    )
