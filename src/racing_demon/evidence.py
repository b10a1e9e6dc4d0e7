"""Evidence: players' receipts, and other copies of the log, checked against a log.

The table signs every record and every receipt, so where a receipt and the log disagree,
or two receipts, or two copies of the log, the table has signed both sides and the files
alone prove it (docs/log-format.md §10, docs/threat-model.md §5):

- ``FORK``: the table signed two histories: a receipt naming seq k with a record hash
  other than line k's; two receipts naming one seq with different hashes; two
  table-signed lines of one game and seq that differ (``--against``).
- ``DELAYED``: the receipted submission is in the log, but at another seq or ``t_ms``.
- ``DROPPED``: the receipted submission is not in a finished log (its ``n`` absent, or
  held by another statement), or its seq lies past the end of a finished log.
- ``RECEIPT_MISMATCH``: the line the receipt names is the one it names (same hash), but
  the receipt describes it wrongly (another seat, number, statement, outcome or reason).

The rest is reported but is no evidence against the table: ``RECEIPT_INVALID`` (a line
that is not a receipt signed by the pinned key), ``OTHER_GAME`` (a receipt or a copy of
another game), ``NOT_YET_LOGGED`` (not in an unfinished log so far), ``UNCHECKED`` (past
the point where the log stops being a table-signed chain), ``COPY_INVALID`` (a line of an
``--against`` copy that is not a table-signed line of this game).

Logs are read as streams: what is kept is a few facts about the lines that receipts name
(by seq, and by seat and submission number), never the lines.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, NamedTuple

from racing_demon.files import LogFile, open_log, open_regular, shown_name
from racing_demon.game.flow import RecordKind, Submission
from racing_demon.log.keys import key_id
from racing_demon.log.reader import (
    DEFAULT_LIMITS,
    Limits,
    ReadError,
    iter_raw_lines,
    read_canonical_line,
)
from racing_demon.log.receipts import (
    Receipt,
    ReceiptLine,
    SubmissionCode,
    read_receipts,
    statement_bytes_of,
    submission_hash,
)
from racing_demon.log.records import Genesis, Record, body_bytes, chain_hash, parse_record
from racing_demon.log.signing import verify
from racing_demon.schema import record_errors
from racing_demon.verify.report import VerifyCode
from racing_demon.wording import plural


class EvidenceCode(enum.StrEnum):
    """What comparing a receipt, or a copy of the log, with the log found."""

    # Evidence against the table: it signed both sides of a contradiction.
    FORK = "FORK"
    DELAYED = "DELAYED"
    DROPPED = "DROPPED"
    RECEIPT_MISMATCH = "RECEIPT_MISMATCH"
    REFUSAL_UNFOUNDED = "REFUSAL_UNFOUNDED"
    # Reported, but no evidence against the table.
    RECEIPT_INVALID = "RECEIPT_INVALID"
    OTHER_GAME = "OTHER_GAME"
    NOT_YET_LOGGED = "NOT_YET_LOGGED"
    UNCHECKED = "UNCHECKED"
    COPY_INVALID = "COPY_INVALID"


EVIDENCE: Final = frozenset(
    {
        EvidenceCode.FORK,
        EvidenceCode.DELAYED,
        EvidenceCode.DROPPED,
        EvidenceCode.RECEIPT_MISMATCH,
        EvidenceCode.REFUSAL_UNFOUNDED,
    }
)
# A receipts file is the player's, but may be anything: past this many lines that are no
# receipt, one more finding counts the rest (so its cost stays that of reading it).
INVALID_SHOWN: Final = 20


class Entry(NamedTuple):
    """What one line of one file says about one record: a receipt, a log's line."""

    file: str
    line: int  # 1-based
    seq: int
    record: str  # the record's chain hash
    t_ms: int


@dataclass(frozen=True, slots=True)
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

    @property
    def is_evidence(self) -> bool:
        return self.code in EVIDENCE

    @property
    def seq(self) -> int | None:
        return None if self.said is None else self.said.seq


@dataclass(frozen=True, slots=True)
class LogScan:
    """How much of the log is a table-signed chain: lines 1 to ``records``."""

    game: str | None  # the genesis's game id, if line 1 is a table-signed genesis
    records: int  # lines read as a table-signed chain, from line 1
    finished: bool  # the chain holds the final record
    damage: str | None  # why line ``records + 1`` is not part of it, if there is one


@dataclass(frozen=True, slots=True)
class EvidenceReport:
    """Every receipt and copy compared with one log."""

    log: str
    scan: LogScan
    receipt_files: tuple[str, ...]
    against: tuple[str, ...]
    receipts: int  # receipts read and verified
    findings: tuple[EvidenceFinding, ...]

    @property
    def agrees(self) -> bool:
        """Every receipt is a receipt, of this game, and agrees with the log; every copy
        agrees (as far as both go)."""
        return not self.findings


class _Facts(NamedTuple):
    """What the audit keeps of a log line that a receipt names."""

    line: int
    record: str
    t_ms: int
    kind: str
    seat: int | None
    n: int | None
    submission: str | None
    reason: str | None


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
                        f"{_place(name, item.line)} is not a receipt of the pinned table "
                        f"key: {item.code}"
                        + ("" if item.rule is None else f" ({item.rule})")
                        + f": {item.message}",
                        rule=item.code,
                    )
                )
        if invalid > INVALID_SHOWN:
            findings.append(
                EvidenceFinding(
                    EvidenceCode.RECEIPT_INVALID,
                    name,
                    None,
                    None,
                    None,
                    None,
                    None,
                    f"{name}: {invalid - INVALID_SHOWN} more lines that are not receipts",
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
    judge = _Judge(shown, scan, scanner.by_seq, scanner.by_submission, scanner.next_n)
    for file, item in receipts:
        findings.extend(judge.receipt(file, item))
    findings.extend(judge.between_receipts(receipts))
    for copy in against:
        findings.extend(_compare_copy(log, copy, table_key, limits, scan.game))
    return EvidenceReport(
        shown,
        scan,
        tuple(shown_name(path) for path in receipt_files),
        tuple(shown_name(path) for path in against),
        len(receipts),
        tuple(findings),
    )


# -- reading the log ----------------------------------------------------------------------


class _Damaged(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _signed_line(number: int, raw: bytes, table_key: bytes, limits: Limits) -> Record:
    """Line ``number`` of a log read as a record the pinned table key signed: strict and
    canonical, on the record schema, with a good table signature (the PAE version is the
    record's ``v``). Raises ``_Damaged`` naming the first check that fails."""
    try:
        value = read_canonical_line(number, raw, limits).value
    except ReadError as error:
        raise _Damaged(error.code, error.message) from None
    problems = record_errors(value)
    if problems:
        raise _Damaged(VerifyCode.SCHEMA, problems[0])
    body = value["body"]
    record = parse_record(body)
    problem = verify(table_key, body["kind"], body_bytes(raw), value["sigs"]["table"], body["v"])
    if problem is not None:
        raise _Damaged(VerifyCode.BAD_TABLE_SIGNATURE, f"the table's signature: {problem.message}")
    return record


@dataclass
class _Scanner:
    """One pass over the log: the longest prefix that is a table-signed chain, and the
    facts of the lines that receipts name."""

    path: LogFile
    table_key: bytes
    limits: Limits
    seqs: set[int]
    submissions: set[tuple[int, int]]
    refused: dict[int, set[int]]  # seq -> the seats of the refusals named there
    by_seq: dict[int, _Facts] = field(default_factory=dict)
    next_n: dict[tuple[int, int], int] = field(default_factory=dict)
    _counts: dict[int, int] = field(default_factory=dict)
    by_submission: dict[tuple[int, int], _Facts] = field(default_factory=dict)

    def run(self) -> LogScan:
        game: str | None = None
        records = 0
        finished = False
        previous = ""
        damage: str | None = None
        with open_log(self.path) as stream:
            lines = iter_raw_lines(stream, self.limits)
            try:
                for number, raw in lines:
                    if finished:
                        raise _Damaged(VerifyCode.AFTER_FINAL, "a record after the final record")
                    record = _signed_line(number, raw, self.table_key, self.limits)
                    self._check_chain(number, record, game, previous)
                    if number == 1:
                        game = record.game
                    previous = chain_hash(raw)
                    records = number
                    finished = record.kind is RecordKind.FINAL
                    self._keep(number, record, previous)
            except ReadError as error:
                damage = f"line {error.line}: {error.code}: {error.message}"
            except _Damaged as damaged:
                damage = f"line {records + 1}: {damaged.code}: {damaged.message}"
        return LogScan(game, records, finished, damage)

    def _check_chain(self, number: int, record: Record, game: str | None, previous: str) -> None:
        if number == 1:
            genesis = record.payload
            if not isinstance(genesis, Genesis):
                raise _Damaged(VerifyCode.GENESIS_MISSING, "the first line is not a genesis")
            if genesis.table_key != key_id(self.table_key):
                raise _Damaged(
                    VerifyCode.WRONG_TABLE_KEY,
                    "the log names another table key than the pinned one",
                )
            return
        if record.kind is RecordKind.GENESIS:
            raise _Damaged(VerifyCode.GENESIS_REPEATED, "a genesis after the first line")
        if record.seq != number - 1:
            raise _Damaged(VerifyCode.SEQ_MISMATCH, f"seq {record.seq} on line {number}")
        if record.prev != previous:
            raise _Damaged(VerifyCode.PREV_MISMATCH, "prev is not the previous line's hash")
        if record.game != game:
            raise _Damaged(VerifyCode.GAME_ID_MISMATCH, f"a record of game {record.game}")

    def _keep(self, number: int, record: Record, hash_: str) -> None:
        event = record.payload
        if isinstance(event, Submission):
            self._counts[event.seat] = event.n + 1
        for seat in self.refused.get(record.seq, ()):
            self.next_n[(record.seq, seat)] = self._counts.get(seat, 0)
        if isinstance(event, Submission):
            named = (event.seat, event.n) in self.submissions
            if not named and record.seq not in self.seqs:
                return
            statement = submission_hash(statement_bytes_of(record))
            facts = _Facts(
                number,
                hash_,
                record.t_ms,
                record.kind.value,
                event.seat,
                event.n,
                statement,
                event.reason,
            )
            if named:
                self.by_submission.setdefault((event.seat, event.n), facts)
        elif record.seq in self.seqs:
            facts = _Facts(number, hash_, record.t_ms, record.kind.value, None, None, None, None)
        else:
            return
        if record.seq in self.seqs:
            self.by_seq[record.seq] = facts


# -- judging receipts ---------------------------------------------------------------------


def _place(file: str, line: int | None) -> str:
    return file if line is None else f"{file}:{line}"


def _short(record: str) -> str:
    return record[:8] + "…"


def _ms(t_ms: int) -> str:
    return f"{t_ms:,} ms"


@dataclass(frozen=True, slots=True)
class _Judge:
    log: str
    scan: LogScan
    by_seq: dict[int, _Facts]
    by_submission: dict[tuple[int, int], _Facts]
    next_n: dict[tuple[int, int], int]  # (seq, seat) -> the seat's next n after record seq

    def _entry(self, facts: _Facts) -> Entry:
        return Entry(self.log, facts.line, facts.line - 1, facts.record, facts.t_ms)

    def _end(self) -> str:
        if self.scan.finished:
            return f"the finished log has {plural(self.scan.records, 'record')}"
        if self.scan.damage is None:
            return f"the unfinished log has {plural(self.scan.records, 'record')} so far"
        return (
            f"the log is a table-signed chain for {plural(self.scan.records, 'record')} only "
            f"({self.scan.damage})"
        )

    def receipt(self, file: str, item: ReceiptLine) -> Iterator[EvidenceFinding]:
        receipt = item.receipt
        said = Entry(file, item.line, receipt.seq, receipt.record, receipt.t_ms)
        where = f"receipt {_place(file, item.line)}"
        claim = (
            f"says logged as seq {receipt.seq} ({receipt.outcome}, record "
            f"{_short(receipt.record)}) at {_ms(receipt.t_ms)}"
            if receipt.logged
            else f"says refused ({receipt.reason}) at {_ms(receipt.t_ms)} when the log ended "
            f"at seq {receipt.seq} (record {_short(receipt.record)})"
        )

        def finding(
            code: EvidenceCode, message: str, compared: Entry | None = None
        ) -> EvidenceFinding:
            return EvidenceFinding(
                code, file, item.line, receipt.seat, receipt.n, said, compared, message
            )

        if self.scan.game is None:
            yield finding(EvidenceCode.UNCHECKED, f"{where} {claim}; {self._end()}")
            return
        if receipt.game != self.scan.game:
            yield finding(
                EvidenceCode.OTHER_GAME,
                f"{where} is of game {receipt.game}, the log of game {self.scan.game}",
            )
            return
        facts = self.by_seq.get(receipt.seq)
        if facts is None:  # past the end of the chain
            if not receipt.logged and self.scan.finished:
                yield finding(
                    EvidenceCode.FORK,
                    f"{where} {claim}; {self._end()}: the table signed a longer history",
                )
                return
            if receipt.logged:
                yield from self._locate(finding, where, claim, receipt)
            elif self.scan.damage is None:
                yield finding(EvidenceCode.NOT_YET_LOGGED, f"{where} {claim}; {self._end()}")
            else:
                yield finding(EvidenceCode.UNCHECKED, f"{where} {claim}; {self._end()}")
            return
        line = self._entry(facts)
        if facts.record != receipt.record:
            yield finding(
                EvidenceCode.FORK,
                f"{where} {claim}; the log's seq {receipt.seq} is a {facts.kind} record "
                f"{_short(facts.record)} at {_ms(facts.t_ms)}: the table signed both",
                line,
            )
            if receipt.logged:
                yield from self._locate(finding, where, claim, receipt, forked=True)
            return
        if not receipt.logged:
            yield from self._refusal(finding, where, claim, receipt, facts, line)
            return
        if (facts.seat, facts.n, facts.submission) != (
            receipt.seat,
            receipt.n,
            receipt.submission,
        ):
            if facts.seat is None:
                theirs = f"a {facts.kind} record"
            else:
                theirs = f"seat {facts.seat}'s submission n {facts.n}"
                if facts.submission != receipt.submission:
                    theirs += f" (statement {_short(facts.submission or '')})"
            yield finding(
                EvidenceCode.RECEIPT_MISMATCH,
                f"{where} {claim} for statement {_short(receipt.submission)}; that record is "
                f"{theirs}",
                line,
            )
            yield from self._locate(finding, where, claim, receipt, forked=True)
            return
        if (facts.kind, facts.reason) != (receipt.outcome, receipt.reason):
            logged_as = facts.kind + ("" if facts.reason is None else f" ({facts.reason})")
            yield finding(
                EvidenceCode.RECEIPT_MISMATCH,
                f"{where} {claim}; the log records it as {logged_as}",
                line,
            )
        if facts.t_ms != receipt.t_ms:
            yield finding(
                EvidenceCode.DELAYED,
                f"{where} {claim}; the log records it at {_ms(facts.t_ms)}",
                line,
            )

    def _refusal(
        self,
        finding: Callable[..., EvidenceFinding],
        where: str,
        claim: str,
        receipt: Receipt,
        facts: _Facts,
        line: Entry,
    ) -> Iterator[EvidenceFinding]:
        """A refusal the log itself disproves: the match was not over, or ``n`` was the
        seat's next number. (Why a statement was refused for its text, its signature or
        the record it names, the log cannot tell without the statement itself.)"""
        if receipt.reason == SubmissionCode.MATCH_OVER and facts.kind != RecordKind.FINAL.value:
            yield finding(
                EvidenceCode.REFUSAL_UNFOUNDED,
                f"{where} {claim}; but seq {receipt.seq} is a {facts.kind} record, not the "
                "final one: the match was not over",
                line,
            )
        expected = self.next_n.get((receipt.seq, receipt.seat))
        if receipt.reason == SubmissionCode.WRONG_NUMBER and expected == receipt.n:
            yield finding(
                EvidenceCode.REFUSAL_UNFOUNDED,
                f"{where} {claim}; but after seq {receipt.seq} seat {receipt.seat}'s next "
                f"number was {receipt.n}, the one it sent",
                line,
            )

    def _locate(
        self,
        finding: Callable[..., EvidenceFinding],
        where: str,
        claim: str,
        receipt: Receipt,
        forked: bool = False,
    ) -> Iterator[EvidenceFinding]:
        """Where the log holds the submission a logged receipt names, when not where the
        receipt says."""
        facts = self.by_submission.get((receipt.seat, receipt.n))
        subject = f"seat {receipt.seat}'s submission n {receipt.n}"
        if facts is not None and facts.submission == receipt.submission:
            if (facts.line - 1, facts.t_ms) != (receipt.seq, receipt.t_ms):
                yield finding(
                    EvidenceCode.DELAYED,
                    f"{where} {claim}; the log holds it as seq {facts.line - 1} ({facts.kind}, "
                    f"record {_short(facts.record)}) at {_ms(facts.t_ms)}",
                    self._entry(facts),
                )
            return
        if facts is not None:
            yield finding(
                EvidenceCode.DROPPED,
                f"{where} {claim}; the log's {subject} is another statement "
                f"({_short(facts.submission or '')}, seq {facts.line - 1}): this one was "
                "dropped",
                self._entry(facts),
            )
            return
        if self.scan.finished:
            past = "" if forked else f"seq {receipt.seq} is past its end, and "
            yield finding(
                EvidenceCode.DROPPED,
                f"{where} {claim}; {self._end()}: {past}{subject} is not among them",
            )
        elif self.scan.damage is None:
            yield finding(
                EvidenceCode.NOT_YET_LOGGED,
                f"{where} {claim}; {self._end()}, and {subject} is not among them",
            )
        else:
            yield finding(EvidenceCode.UNCHECKED, f"{where} {claim}; {self._end()}")

    def between_receipts(
        self, receipts: Sequence[tuple[str, ReceiptLine]]
    ) -> Iterator[EvidenceFinding]:
        """Two receipts of one game (the log's, when it has one) naming one seq with
        different record hashes."""
        first: dict[tuple[str, int], tuple[str, ReceiptLine]] = {}
        for file, item in receipts:
            receipt = item.receipt
            if self.scan.game is not None and receipt.game != self.scan.game:
                continue
            earlier = first.setdefault((receipt.game, receipt.seq), (file, item))
            other_file, other = earlier
            if other.receipt.record == receipt.record:
                continue
            yield EvidenceFinding(
                EvidenceCode.FORK,
                file,
                item.line,
                receipt.seat,
                receipt.n,
                Entry(file, item.line, receipt.seq, receipt.record, receipt.t_ms),
                Entry(
                    other_file,
                    other.line,
                    other.receipt.seq,
                    other.receipt.record,
                    other.receipt.t_ms,
                ),
                f"receipt {_place(file, item.line)} names seq {receipt.seq} as record "
                f"{_short(receipt.record)}, receipt {_place(other_file, other.line)} as "
                f"record {_short(other.receipt.record)}: the table signed both",
            )


# -- comparing copies ---------------------------------------------------------------------


def _compare_copy(
    log: LogFile, copy: Path, table_key: bytes, limits: Limits, game: str | None
) -> Iterator[EvidenceFinding]:
    """The first line where ``copy`` and ``log`` hold two table-signed lines of one game
    and seq that differ (FORK); the first line of ``copy`` that differs and is not a
    table-signed line of the game (COPY_INVALID); a copy of another game (OTHER_GAME)."""
    shown, mine = shown_name(copy), shown_name(log)
    reported_invalid = False
    with open_log(log) as ours, open_regular(copy) as theirs:
        our_lines = iter_raw_lines(ours, limits)
        their_lines = iter_raw_lines(theirs, limits)
        while True:
            try:
                number, raw = next(their_lines)
            except StopIteration:
                return
            except ReadError as error:
                if not reported_invalid:
                    yield _invalid_copy(shown, error.line, error.code, error.message)
                return
            try:
                _, our_raw = next(our_lines)
            except (StopIteration, ReadError):
                return  # ours ends, or is damaged, here: the copy may only be longer
            if raw == our_raw:
                continue
            try:
                record = _signed_line(number, raw, table_key, limits)
            except _Damaged as damaged:
                if not reported_invalid:
                    reported_invalid = True
                    yield _invalid_copy(shown, number, damaged.code, damaged.message)
                continue
            if game is not None and record.game != game:
                yield EvidenceFinding(
                    EvidenceCode.OTHER_GAME,
                    shown,
                    number,
                    None,
                    None,
                    None,
                    None,
                    f"copy {_place(shown, number)} is of game {record.game}, the log of game "
                    f"{game}",
                )
                return
            try:
                our_record = _signed_line(number, our_raw, table_key, limits)
            except _Damaged:
                continue  # our line is no table-signed line: the log's verification says so
            if our_record.game != record.game or our_record.seq != record.seq:
                continue
            event = record.payload
            yield EvidenceFinding(
                EvidenceCode.FORK,
                shown,
                number,
                event.seat if isinstance(event, Submission) else None,
                event.n if isinstance(event, Submission) else None,
                Entry(shown, number, record.seq, chain_hash(raw), record.t_ms),
                Entry(mine, number, our_record.seq, chain_hash(our_raw), our_record.t_ms),
                f"copy {_place(shown, number)} holds seq {record.seq} as a {record.kind} "
                f"record {_short(chain_hash(raw))} at {_ms(record.t_ms)}, the log as a "
                f"{our_record.kind} record {_short(chain_hash(our_raw))} at "
                f"{_ms(our_record.t_ms)}: the table signed both",
            )
            return


def _invalid_copy(file: str, line: int | None, code: str, message: str) -> EvidenceFinding:
    return EvidenceFinding(
        EvidenceCode.COPY_INVALID,
        file,
        line,
        None,
        None,
        None,
        None,
        f"copy {_place(file, line)} differs from the log but is not a table-signed line of "
        f"the game: {code}: {message}",
        rule=code,
    )
