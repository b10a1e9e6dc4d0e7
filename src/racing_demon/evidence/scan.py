"""One pass over the audited log: the longest prefix that is a table-signed chain, and the
facts of the lines that receipts name (never the lines)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from racing_demon.evidence.findings import (
    LogScan,
)
from racing_demon.files import LogFile, open_log
from racing_demon.game.flow import RecordKind, Submission
from racing_demon.log.keys import key_id
from racing_demon.log.reader import (
    Limits,
    ReadError,
    SchemaError,
    iter_raw_lines,
    read_canonical_line,
    read_record,
)
from racing_demon.log.receipts import (
    LINE_RECEIPT_VERSION,
    statement_bytes_of,
    submission_hash,
)
from racing_demon.log.records import (
    Genesis,
    Record,
    body_bytes,
    body_hash,
    chain_hash,
)
from racing_demon.log.signing import verify
from racing_demon.verify.report import VerifyCode


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
        read = read_record(read_canonical_line(number, raw, limits))
    except ReadError as error:
        raise _Damaged(error.code, error.message) from None
    except SchemaError as error:
        raise _Damaged(VerifyCode.SCHEMA, error.problems[0]) from None
    record = read.record
    problem = verify(table_key, record.kind, body_bytes(raw), read.sigs.table, record.v)
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
