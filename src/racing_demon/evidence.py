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

import enum
import json
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, NamedTuple

from racing_demon.files import LogFile, open_log, open_regular, shown_name
from racing_demon.game.flow import RecordKind, Submission
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import key_id
from racing_demon.log.reader import (
    DEFAULT_LIMITS,
    Limits,
    Line,
    ReadError,
    iter_raw_lines,
    read_canonical_line,
    read_lines,
)
from racing_demon.log.receipts import (
    LINE_RECEIPT_VERSION,
    Receipt,
    ReceiptLine,
    SubmissionCode,
    read_receipts,
    statement_bytes_of,
    submission_hash,
)
from racing_demon.log.records import (
    SEEN_WINDOW,
    Genesis,
    Record,
    body_bytes,
    body_hash,
    chain_hash,
    parse_record,
)
from racing_demon.log.signing import verify
from racing_demon.schema import record_errors
from racing_demon.verify import step01_framing, step03_schema, step04_chain, step05_signatures
from racing_demon.verify.report import StepFailed, VerifyCode
from racing_demon.wording import plural


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


class Entry(NamedTuple):
    """What one line of one file says about one record: a receipt, a log's line."""

    file: str
    line: int  # 1-based
    seq: int
    record: str  # the record, named by ``by``: its body hash or its line's chain hash
    t_ms: int
    by: str = "body"  # "body" or "line" (NAMED_BY)


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
    members: tuple[str, ...] | None = None  # a copy's FORK: the body members that differ

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
    versions: tuple[tuple[int, int], ...] = ()  # (receipt version, receipts read of it)

    @property
    def agrees(self) -> bool:
        """Every receipt is a receipt, of this game, and agrees with the log; every copy
        agrees (as far as both go)."""
        return not self.findings


class _Facts(NamedTuple):
    """What the audit keeps of a log line that a receipt names."""

    line: int
    record: str  # the line's chain hash
    body: str  # its body's hash
    t_ms: int
    kind: str
    seat: int | None
    n: int | None
    submission: str | None
    reason: str | None

    def named(self, v: int) -> str:
        """This line as a receipt of version ``v`` names it."""
        return self.record if v == LINE_RECEIPT_VERSION else self.body


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


# -- reading the log ----------------------------------------------------------------------


class _Damaged(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _table_signed_line(number: int, raw: bytes, table_key: bytes, limits: Limits) -> Record:
    """Line ``number`` of the audited log read as a record the pinned table key signed:
    strict and canonical, on the record schema, with a good table signature (the PAE
    version is the record's ``v``). Raises ``_Damaged`` naming the first check that
    fails. (What else the log's verification refuses, it reports itself: the audit keeps
    comparing receipts with what the table signed.)"""
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


class _Later(NamedTuple):
    """The earliest record after some seq: what a refusal naming that seq is held to."""

    t_ms: int
    seq: int
    record: str  # chain hash
    body: str  # body hash
    kind: str


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
    by_submission: dict[tuple[int, int], _Facts] = field(default_factory=dict)
    following: dict[int, str] = field(default_factory=dict)  # refused seq -> next kind
    tournament: bool = False  # a tournament's table, which holds its final record
    _counts: dict[int, int] = field(default_factory=dict)
    # The earliest record after each refused seq, in memory bounded by their number: the
    # refused seqs ascending (``_order``, the first ``_passed`` of them behind the stream),
    # and a stack of groups, each a range of them with the earliest record after all of
    # them so far (times only rise up the stack); a record earlier than the top groups'
    # merges them, since it is now the earliest after each.
    _order: list[int] = field(default_factory=list)
    _passed: int = 0
    _groups: list[tuple[int, int, _Later | None]] = field(default_factory=list)

    def run(self) -> LogScan:
        game: str | None = None
        records = 0
        finished = False
        previous = ""
        damage: str | None = None
        self._order = sorted(self.refused)
        with open_log(self.path) as stream:
            lines = iter_raw_lines(stream, self.limits)
            try:
                for number, raw in lines:
                    if finished:
                        raise _Damaged(VerifyCode.AFTER_FINAL, "a record after the final record")
                    record = _table_signed_line(number, raw, self.table_key, self.limits)
                    self._check_chain(number, record, game, previous)
                    if number == 1:
                        game = record.game
                        assert isinstance(record.payload, Genesis)  # _check_chain's
                        self.tournament = record.payload.tournament is not None
                    previous = chain_hash(raw)
                    records = number
                    finished = record.kind is RecordKind.FINAL
                    self._keep(number, record, raw, previous)
            except ReadError as error:
                damage = f"line {error.line}: {error.code}: {error.message}"
            except _Damaged as damaged:
                damage = f"line {records + 1}: {damaged.code}: {damaged.message}"
        return LogScan(game, records, finished, damage)

    def earliest_after(self) -> dict[int, _Later]:
        """Each refused seq that a record of the chain follows: the earliest such record."""
        return {
            self._order[index]: later
            for start, stop, later in self._groups
            if later is not None
            for index in range(start, stop)
        }

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

    def _follow(self, record: Record, raw: bytes, hash_: str) -> None:
        """``record`` follows every refused seq before it: the earliest such, for each."""
        seq = record.seq
        if seq - 1 in self.refused:
            self.following[seq - 1] = record.kind.value
        if self.tournament and record.kind is RecordKind.FINAL:
            # Held and written at the reveal, dated by the table then (a table resumed for
            # the reveal, at its last record's time): its time says nothing of when the
            # refusals before the reveal came. Left out, it can neither excuse a refusal
            # (a final dated before the records it follows would be the earliest after
            # every seq) nor accuse one.
            return
        while self._passed < len(self._order) and self._order[self._passed] < seq:
            self._groups.append((self._passed, self._passed + 1, None))
            self._passed += 1
        stop = None
        start = 0
        while self._groups and (
            self._groups[-1][2] is None or self._groups[-1][2].t_ms > record.t_ms
        ):
            start, top, _ = self._groups.pop()
            stop = top if stop is None else stop
        if stop is not None:
            later = _Later(record.t_ms, seq, hash_, body_hash(raw), record.kind.value)
            self._groups.append((start, stop, later))

    def _keep(self, number: int, record: Record, raw: bytes, hash_: str) -> None:
        event = record.payload
        if self.refused:
            self._follow(record, raw, hash_)
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
                body_hash(raw),
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
            facts = _Facts(
                number,
                hash_,
                body_hash(raw),
                record.t_ms,
                record.kind.value,
                None,
                None,
                None,
                None,
            )
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


def _said(file: str, item: ReceiptLine) -> Entry:
    receipt = item.receipt
    return Entry(file, item.line, receipt.seq, receipt.record, receipt.t_ms, NAMED_BY[receipt.v])


def _named(receipt: Receipt) -> str:
    return f"{'line' if receipt.v == LINE_RECEIPT_VERSION else 'body'} {_short(receipt.record)}"


class _Judge:
    def __init__(self, log: str, scan: LogScan, scanner: _Scanner) -> None:
        self.log = log
        self.scan = scan
        self.by_seq = scanner.by_seq
        self.by_submission = scanner.by_submission
        self.next_n = scanner.next_n  # (seq, seat) -> the seat's next n after record seq
        self.following = scanner.following
        self.earliest_after = scanner.earliest_after()
        self.tournament = scanner.tournament

    def _entry(self, facts: _Facts, v: int) -> Entry:
        return Entry(self.log, facts.line, facts.line - 1, facts.named(v), facts.t_ms, NAMED_BY[v])

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
        said = _said(file, item)
        where = f"receipt {_place(file, item.line)}"
        claim = (
            f"says logged as seq {receipt.seq} ({receipt.outcome}, {_named(receipt)}) at "
            f"{_ms(receipt.t_ms)}"
            if receipt.logged
            else f"says refused ({receipt.reason}) at {_ms(receipt.t_ms)} when the log ended "
            f"at seq {receipt.seq} ({_named(receipt)})"
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
                f"a receipt of game {receipt.game}; the log is of game {self.scan.game}",
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
        line = self._entry(facts, receipt.v)
        if facts.named(receipt.v) != receipt.record:
            theirs = (
                f"the log's seq {receipt.seq} is a {facts.kind} record "
                f"({line.by} {_short(line.record)}) at {_ms(facts.t_ms)}"
            )
            if receipt.v == LINE_RECEIPT_VERSION and facts.line == self.scan.records:
                yield finding(
                    EvidenceCode.LAST_LINE_CHANGED,
                    f"{where} {claim}; {theirs}, the last line of its table-signed chain: a "
                    "v2 receipt names the whole line, signatures included, and no later "
                    "record fixes this one's (an acceptance dropped changes it): no evidence",
                    line,
                )
            else:
                yield finding(
                    EvidenceCode.FORK, f"{where} {claim}; {theirs}: the table signed both", line
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
        """A refusal the log itself disproves: its head was not the log's head then, the
        match was not over (or not held at its end), or ``n`` was the seat's next number.
        (Why a statement was refused for its text, its signature or the record it names,
        the log cannot tell without the statement itself.)"""
        later = self.earliest_after.get(receipt.seq)
        # Equal times are no evidence: the table may take a submission and write a record
        # in one millisecond, in either order. (A tournament's final record is never a
        # ``later``: ``_Scanner._follow``.)
        if later is not None and later.t_ms < receipt.t_ms:
            by = NAMED_BY[receipt.v]
            yield finding(
                EvidenceCode.STALE_HEAD,
                f"{where} {claim}; but the log's seq {later.seq} ({later.kind}) follows it and "
                f"was written at {_ms(later.t_ms)}, before the refusal: the table named an "
                "old record as its head",
                Entry(
                    self.log,
                    later.seq + 1,
                    later.seq,
                    later.record if by == "line" else later.body,
                    later.t_ms,
                    by,
                ),
            )
        over = receipt.reason == SubmissionCode.MATCH_OVER and facts.kind != RecordKind.FINAL.value
        # A v2 receipt's table had no FINAL_HELD: holding a tournament's final record, it
        # refused with MATCH_OVER, naming its last hand_end. Such a refusal is held to
        # FINAL_HELD's rule.
        held = over and receipt.v == LINE_RECEIPT_VERSION and self.tournament
        if over and not held:
            yield finding(
                EvidenceCode.REFUSAL_UNFOUNDED,
                f"{where} {claim}; but seq {receipt.seq} is a {facts.kind} record, not the "
                "final one: the match was not over",
                line,
            )
        if receipt.reason == SubmissionCode.FINAL_HELD or held:
            next_kind = self.following.get(receipt.seq)
            if facts.kind != RecordKind.HAND_END.value:
                yield finding(
                    EvidenceCode.REFUSAL_UNFOUNDED,
                    f"{where} {claim}; but seq {receipt.seq} is a {facts.kind} record, not "
                    "the last hand_end: the match was not played out",
                    line,
                )
            elif next_kind is not None and next_kind != RecordKind.FINAL.value:
                yield finding(
                    EvidenceCode.REFUSAL_UNFOUNDED,
                    f"{where} {claim}; but the record after seq {receipt.seq} is a "
                    f"{next_kind} record, not the final one: the match was not played out",
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
                entry = self._entry(facts, receipt.v)
                yield finding(
                    EvidenceCode.DELAYED,
                    f"{where} {claim}; the log holds it as seq {facts.line - 1} ({facts.kind}, "
                    f"{entry.by} {_short(entry.record)}) at {_ms(facts.t_ms)}",
                    entry,
                )
            return
        if facts is not None:
            yield finding(
                EvidenceCode.DROPPED,
                f"{where} {claim}; the log's {subject} is another statement "
                f"({_short(facts.submission or '')}, seq {facts.line - 1}): this one was "
                "dropped",
                self._entry(facts, receipt.v),
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
        """Two receipts of one version and game (the log's, when it has one) naming one seq
        by different records: each later receipt compared with the first naming that seq.
        Receipts of two versions name records by different hashes: only the log compares
        them."""
        first: dict[tuple[int, str, int], tuple[str, ReceiptLine]] = {}
        for file, item in receipts:
            receipt = item.receipt
            if self.scan.game is not None and receipt.game != self.scan.game:
                continue
            earlier = first.setdefault((receipt.v, receipt.game, receipt.seq), (file, item))
            other_file, other = earlier
            if other.receipt.record == receipt.record:
                continue
            both = (
                f"receipt {_place(file, item.line)} names seq {receipt.seq} as "
                f"{_named(receipt)}, receipt {_place(other_file, other.line)} as "
                f"{_named(other.receipt)}"
            )
            # A v2 receipt names the whole line; a submission's line never changes once
            # written, and a later record fixes any line. Two refusals may name a last line
            # (the final record) before and after someone changed its signatures.
            settled = (
                receipt.v != LINE_RECEIPT_VERSION
                or receipt.logged
                or other.receipt.logged
                or receipt.seq + 1 < self.scan.records
            )
            yield EvidenceFinding(
                EvidenceCode.FORK if settled else EvidenceCode.LAST_LINE_CHANGED,
                file,
                item.line,
                receipt.seat,
                receipt.n,
                _said(file, item),
                _said(other_file, other),
                f"{both}: the table signed both"
                if settled
                else f"{both}: two v2 refusals, and no record of the log's table-signed chain "
                "follows that seq to fix the line's signatures: no evidence",
            )


# -- comparing copies ---------------------------------------------------------------------


@dataclass
class _CopyChecker:
    """A copy read through the verifier's steps 1-5 (framing and canonical form as the
    reader reads it, then schema, chain and every signature), with what pass one of the
    verifier keeps between lines (racing_demon.verify.driver)."""

    table_key: bytes
    genesis: Record | None = None
    player_keys: step05_signatures.PlayerKeys = ()
    final_line: int | None = None
    recent_hashes: deque[str] = field(default_factory=lambda: deque(maxlen=SEEN_WINDOW))
    last_t_ms: int = 0
    submissions: dict[int, int] = field(default_factory=dict)

    def check(self, line: Line, record: Record) -> None:
        """Steps 4 and 5 for ``line`` (steps 1-3 passed); raises ``StepFailed``."""
        step04_chain.check_chain(
            line.number,
            record,
            genesis=self.genesis,
            final_line=self.final_line,
            recent_hashes=self.recent_hashes,
            last_t_ms=self.last_t_ms,
            wanted_game=None,
        )
        payload = record.payload
        seat = payload.seat if isinstance(payload, Submission) else -1
        self.player_keys = step05_signatures.check_signatures(
            line,
            record,
            table_key=self.table_key,
            fast=False,
            player_keys=self.player_keys,
            next_n=self.submissions.get(seat, 0),
        )
        if line.number == 1:
            self.genesis = record
        elif record.kind is RecordKind.FINAL:
            self.final_line = line.number
        if seat >= 0:
            self.submissions[seat] = self.submissions.get(seat, 0) + 1
        self.recent_hashes.append(chain_hash(line.raw))
        self.last_t_ms = record.t_ms


def _members(ours: bytes, theirs: bytes) -> tuple[str, ...]:
    """The members of two record bodies (their canonical bytes) that differ."""
    a, b = json.loads(ours), json.loads(theirs)
    return tuple(
        sorted(
            name
            for name in a.keys() | b.keys()
            if name not in a
            or name not in b
            or canonical_bytes(a[name]) != canonical_bytes(b[name])
        )
    )


def _compare_copy(
    log: LogFile, copy: Path, table_key: bytes, limits: Limits, scan: LogScan
) -> Iterator[EvidenceFinding]:
    """``copy`` judged line by line by the verifier's steps 1-5 and compared with the log's
    table-signed chain, body with body, as far as both go: the first line where the two
    bodies differ is a FORK when the table signed the copy's (same game and seq); the first
    line the verifier refuses, where it differs from the log's, is COPY_INVALID with the
    verifier's code; a copy of another game is OTHER_GAME. A line the verifier refuses
    though it is the log's own ends the comparison with no finding: the log's verification
    reports it."""
    shown, mine = shown_name(copy), shown_name(log)
    checker = _CopyChecker(table_key)
    differed = False  # an earlier line of the copy is not the log's (its sigs, say)
    with open_log(log) as ours, open_regular(copy) as theirs:
        our_lines = iter_raw_lines(ours, limits)
        their_lines = read_lines(theirs, limits)  # (1) and (2)
        while True:
            try:
                line = next(their_lines)
            except StopIteration:
                return
            except ReadError as error:
                if error.line is not None and error.line > scan.records:
                    return  # past the log's chain: nothing to compare it with
                if error.line == 1 and not step01_framing.starts_as_log(theirs):
                    # Notes or random bytes: no copy of any log, torn or not.
                    message = f"{step01_framing.NOT_A_LOG}: {error.message}"
                    yield _invalid_copy(shown, error.line, error.code, message)
                elif not step01_framing.is_torn_tail(error, checker.final_line is not None):
                    yield _invalid_copy(shown, error.line, error.code, error.message)
                return  # a torn last line: a prefix, as a crash leaves it
            if line.number > scan.records:
                return  # the log's chain ends here: the copy may only be longer
            try:
                _, our_raw = next(our_lines)
            except (StopIteration, ReadError):
                return  # the log changed since it was scanned
            try:
                record = step03_schema.check_schema(line)  # (3)
            except StepFailed as failed:
                yield _invalid_copy(shown, line.number, failed.finding.code, failed.finding.message)
                return
            if line.number == 1 and record.game != scan.game:
                yield EvidenceFinding(
                    EvidenceCode.OTHER_GAME,
                    shown,
                    line.number,
                    None,
                    None,
                    None,
                    None,
                    f"a copy of game {record.game}; the log is of game {scan.game}",
                )
                return
            same_body = body_bytes(line.raw) == body_bytes(our_raw)
            try:
                checker.check(line, record)  # (4) and (5)
            except StepFailed as failed:
                if (
                    not same_body
                    and record.game == scan.game
                    and _table_signed(table_key, line, record)
                ):
                    yield _fork(shown, mine, line, record, our_raw, failed.finding.code)
                elif differed or line.raw != our_raw:
                    # The log's own line fails here only through the copy's earlier change
                    # (a player's signature made again breaks the next line's prev): the
                    # copy's damage, not a defect it shares with the log.
                    yield _invalid_copy(
                        shown, line.number, failed.finding.code, failed.finding.message
                    )
                return
            if not same_body:
                yield _fork(shown, mine, line, record, our_raw)
                return
            differed = differed or line.raw != our_raw


def _table_signed(table_key: bytes, line: Line, record: Record) -> bool:
    """Whether the pinned key signed this body as the record of its line's seq."""
    problem = verify(
        table_key, record.kind, body_bytes(line.raw), line.value["sigs"]["table"], record.v
    )
    return problem is None and record.seq == line.number - 1


def _fork(
    shown: str, mine: str, line: Line, record: Record, our_raw: bytes, refused: str | None = None
) -> EvidenceFinding:
    our_record = parse_record(json.loads(body_bytes(our_raw)))
    members = _members(body_bytes(our_raw), body_bytes(line.raw))
    theirs, ours = body_hash(line.raw), body_hash(our_raw)
    event = record.payload
    also = (
        ""
        if refused is None
        else f" (the copy fails the verifier there, {refused}, but the table signed its body)"
    )
    return EvidenceFinding(
        EvidenceCode.FORK,
        shown,
        line.number,
        event.seat if isinstance(event, Submission) else None,
        event.n if isinstance(event, Submission) else None,
        Entry(shown, line.number, record.seq, theirs, record.t_ms),
        Entry(mine, line.number, our_record.seq, ours, our_record.t_ms),
        f"copy {_place(shown, line.number)} holds seq {record.seq} as a {record.kind} record "
        f"(body {_short(theirs)}) at {_ms(record.t_ms)}, the log as a {our_record.kind} "
        f"record (body {_short(ours)}) at {_ms(our_record.t_ms)}; the bodies differ in "
        f"{', '.join(members)}{also}: the table signed both",
        members=members,
    )


def _invalid_copy(file: str, line: int | None, code: str, message: str) -> EvidenceFinding:
    return EvidenceFinding(
        EvidenceCode.COPY_INVALID,
        file,
        line,
        None,
        None,
        None,
        None,
        f"the copy differs from the log here, and the verifier refuses it: {code}: {message}",
        rule=code,
    )
