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

The log is read once, by its verification: ``start_evidence`` reads the receipts and
opens the copies, the gathering it returns rides on verification's pass as a
``LineVisitor`` (``racing_demon.verify.driver``), seeing the log's table-signed chain line
by line, and its ``report`` is the evidence. What is kept of the log is a few facts about
the lines that receipts name (by seq, and by seat and submission number), never the lines;
each copy is read in step with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from racing_demon.evidence.copies import CopyComparison
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
from racing_demon.evidence.receipts import Judge
from racing_demon.evidence.scan import ChainScanner
from racing_demon.files import LogFile, open_regular, shown_name
from racing_demon.log.reader import DEFAULT_LIMITS, Limits, Line
from racing_demon.log.receipts import ReceiptLine, read_receipts
from racing_demon.log.records import Record
from racing_demon.verify import Settings, Verdict, verify_log
from racing_demon.verify.table_chain import ChainBroken
from racing_demon.wording import plural

__all__ = [
    "EVIDENCE",
    "INVALID_SHOWN",
    "NAMED_BY",
    "RECEIPT_GUARANTEES",
    "Entry",
    "EvidenceCode",
    "EvidenceFinding",
    "EvidenceGathering",
    "EvidenceReport",
    "LogScan",
    "gather_evidence",
    "start_evidence",
]


@dataclass(kw_only=True)
class EvidenceGathering:
    """Receipts and copies compared with one log as its verification reads it: a
    ``LineVisitor`` of ``verify_log``, whose ``report`` is the evidence once the pass is
    over."""

    log: str  # as ``shown_name`` names it
    receipt_files: tuple[str, ...]
    receipts: list[tuple[str, ReceiptLine]]  # every valid receipt, with its file's name
    invalid: list[EvidenceFinding]  # the receipts files' lines that are no receipt
    scanner: ChainScanner
    copies: list[CopyComparison]

    def chained(self, line: Line, record: Record) -> None:
        self.scanner.chained(line, record)
        for copy in self.copies:
            copy.chained(line, record)

    def unchained(self, broken: ChainBroken) -> None:
        self.scanner.unchained(broken)
        for copy in self.copies:
            copy.unchained(broken)

    def report(self) -> EvidenceReport:
        """The evidence, once the log's pass is over. Raises the ``OSError`` that reading
        a copy raised."""
        for copy in self.copies:
            if copy.error is not None:
                raise copy.error
        scan = self.scanner.scan
        judge = Judge(self.log, self.scanner)
        findings = list(self.invalid)
        for file, item in self.receipts:
            findings.extend(judge.receipt(file, item))
        findings.extend(judge.between_receipts(self.receipts))
        for copy in self.copies:
            findings.extend(copy.findings)
        versions: dict[int, int] = {}
        for _, item in self.receipts:
            versions[item.receipt.v] = versions.get(item.receipt.v, 0) + 1
        return EvidenceReport(
            log=self.log,
            scan=scan,
            receipt_files=self.receipt_files,
            against=tuple(copy.copy for copy in self.copies),
            receipts=len(self.receipts),
            findings=tuple(findings),
            versions=tuple(sorted(versions.items())),
        )


def start_evidence(
    log: LogFile,
    table_key: bytes,
    receipt_files: Sequence[Path],
    against: Sequence[Path],
    files: ExitStack,
    limits: Limits = DEFAULT_LIMITS,
) -> EvidenceGathering:
    """Read every receipt in ``receipt_files`` and open every copy in ``against`` (kept
    open until ``files`` closes), under the pinned raw table key ``table_key``, to be
    compared with ``log`` on its verification's pass.

    Raises ``OSError`` when a file cannot be opened or read, the first in that order.
    Files are named as ``shown_name`` names them: in valid UTF-8, whatever the file
    system holds.
    """
    receipts: list[tuple[str, ReceiptLine]] = []
    invalid: list[EvidenceFinding] = []
    for path in receipt_files:
        name = shown_name(path)
        count = 0
        for item in read_receipts(path, table_key, limits):
            if isinstance(item, ReceiptLine):
                receipts.append((name, item))
                continue
            count += 1
            if count <= INVALID_SHOWN:
                invalid.append(
                    EvidenceFinding(
                        code=EvidenceCode.RECEIPT_INVALID,
                        file=name,
                        line=item.line,
                        seat=None,
                        n=None,
                        said=None,
                        compared=None,
                        message=f"not a receipt of the pinned table key: {item.code}"
                        + ("" if item.rule is None else f" ({item.rule})")
                        + f": {item.message}",
                        rule=item.code,
                    )
                )
        if count > INVALID_SHOWN:
            more = count - INVALID_SHOWN
            invalid.append(
                EvidenceFinding(
                    code=EvidenceCode.RECEIPT_INVALID,
                    file=name,
                    line=None,
                    seat=None,
                    n=None,
                    said=None,
                    compared=None,
                    message=f"{plural(more, 'more line')} not shown, none of them a receipt",
                )
            )
    refused: dict[int, set[int]] = {}  # seq -> the seats refused when the log ended there
    for _, item in receipts:
        if not item.receipt.logged:
            refused.setdefault(item.receipt.seq, set()).add(item.receipt.seat)
    scanner = ChainScanner(
        seqs={item.receipt.seq for _, item in receipts},
        submissions={(item.receipt.seat, item.receipt.n) for _, item in receipts},
        refused=refused,
    )
    shown = shown_name(log)
    copies = [
        CopyComparison(
            copy=shown_name(path),
            log=shown,
            stream=files.enter_context(open_regular(path)),
            table_key=table_key,
            limits=limits,
        )
        for path in against
    ]
    return EvidenceGathering(
        log=shown,
        receipt_files=tuple(shown_name(path) for path in receipt_files),
        receipts=receipts,
        invalid=invalid,
        scanner=scanner,
        copies=copies,
    )


def gather_evidence(
    log: LogFile,
    table_key: bytes,
    receipt_files: Sequence[Path] = (),
    against: Sequence[Path] = (),
    limits: Limits = DEFAULT_LIMITS,
) -> EvidenceReport:
    """Every receipt in ``receipt_files`` and every copy in ``against`` compared with
    ``log``, under the pinned raw table key ``table_key``, on one verification of ``log``
    (``racing-demon audit`` verifies it with the same pass, and says its verdict).

    Raises ``OSError`` when a file cannot be opened or read. Files are named as
    ``shown_name`` names them: in valid UTF-8, whatever the file system holds.
    """
    with ExitStack() as files:
        gathering = start_evidence(log, table_key, receipt_files, against, files, limits)
        settings = Settings(table_key=table_key, limits=limits)
        report = verify_log(log, settings, line_visitors=[gathering])
        if report.verdict is Verdict.UNREADABLE:
            assert report.finding is not None  # an unreadable log's report says why
            raise OSError(report.finding.message)
        return gathering.report()
