"""The audited log's table-signed chain as verification's pass reads it (a ``LineVisitor``
of ``racing_demon.verify.driver``): how far it goes, and the facts of the lines that
receipts name (never the lines)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from racing_demon.evidence.findings import LogScan
from racing_demon.game.flow import RecordKind, Submission
from racing_demon.log.reader import Line
from racing_demon.log.receipts import (
    LINE_RECEIPT_VERSION,
    statement_bytes_of,
    submission_hash,
)
from racing_demon.log.records import Genesis, Record, body_hash, chain_hash
from racing_demon.verify.table_chain import ChainBroken


class Facts(NamedTuple):
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


class Later(NamedTuple):
    """The earliest record after some seq: what a refusal naming that seq is held to."""

    t_ms: int
    seq: int
    record: str  # chain hash
    body: str  # body hash
    kind: str


@dataclass
class ChainScanner:
    """The log's table-signed chain, line by line as verification's pass hands it over
    (``chained``, then ``unchained`` where it stops), and the facts of the lines that
    receipts name: the receipts' seqs, their submissions (seat, n), and the seats refused
    at each seq."""

    seqs: set[int]
    submissions: set[tuple[int, int]]
    refused: dict[int, set[int]]  # seq -> the seats of the refusals named there
    by_seq: dict[int, Facts] = field(default_factory=dict)
    next_n: dict[tuple[int, int], int] = field(default_factory=dict)
    by_submission: dict[tuple[int, int], Facts] = field(default_factory=dict)
    following: dict[int, str] = field(default_factory=dict)  # refused seq -> next kind
    tournament: bool = False  # a tournament's table, which holds its final record
    game: str | None = None  # the genesis's, once line 1 is of the chain
    records: int = 0  # lines of the chain, from line 1
    finished: bool = False  # the chain holds the final record
    damage: str | None = None  # why line ``records + 1`` is not of the chain
    _counts: dict[int, int] = field(default_factory=dict)
    # The earliest record after each refused seq, in memory bounded by their number: the
    # refused seqs ascending (``_order``, the first ``_passed`` of them behind the stream),
    # and a stack of groups, each a range of them with the earliest record after all of
    # them so far (times only rise up the stack); a record earlier than the top groups'
    # merges them, since it is now the earliest after each.
    _order: list[int] = field(default_factory=list)
    _passed: int = 0
    _groups: list[tuple[int, int, Later | None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._order = sorted(self.refused)

    def chained(self, line: Line, record: Record) -> None:
        """``line`` extends the table-signed chain (a ``LineVisitor``'s)."""
        if line.number == 1:
            self.game = record.game
            assert isinstance(record.payload, Genesis)  # the chain begins with one
            self.tournament = record.payload.tournament is not None
        self.records = line.number
        self.finished = record.kind is RecordKind.FINAL
        self._keep(line.number, record, line.raw)

    def unchained(self, broken: ChainBroken) -> None:
        """The chain stops before ``broken.line`` (a ``LineVisitor``'s)."""
        self.damage = str(broken)

    @property
    def scan(self) -> LogScan:
        return LogScan(
            game=self.game, records=self.records, finished=self.finished, damage=self.damage
        )

    def earliest_after(self) -> dict[int, Later]:
        """Each refused seq that a record of the chain follows: the earliest such record."""
        return {
            self._order[index]: later
            for start, stop, later in self._groups
            if later is not None
            for index in range(start, stop)
        }

    def _follow(self, record: Record, raw: bytes) -> None:
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
            later = Later(
                t_ms=record.t_ms,
                seq=seq,
                record=chain_hash(raw),
                body=body_hash(raw),
                kind=record.kind.value,
            )
            self._groups.append((start, stop, later))

    def _keep(self, number: int, record: Record, raw: bytes) -> None:
        event = record.payload
        if self.refused:
            self._follow(record, raw)
        if isinstance(event, Submission):
            self._counts[event.seat] = event.n + 1
        for seat in self.refused.get(record.seq, ()):
            self.next_n[(record.seq, seat)] = self._counts.get(seat, 0)
        if isinstance(event, Submission):
            named = (event.seat, event.n) in self.submissions
            if not named and record.seq not in self.seqs:
                return
            statement = submission_hash(statement_bytes_of(record))
            facts = Facts(
                line=number,
                record=chain_hash(raw),
                body=body_hash(raw),
                t_ms=record.t_ms,
                kind=record.kind.value,
                seat=event.seat,
                n=event.n,
                submission=statement,
                reason=event.reason,
            )
            if named:
                self.by_submission.setdefault((event.seat, event.n), facts)
        elif record.seq in self.seqs:
            facts = Facts(
                line=number,
                record=chain_hash(raw),
                body=body_hash(raw),
                t_ms=record.t_ms,
                kind=record.kind.value,
                seat=None,
                n=None,
                submission=None,
                reason=None,
            )
        else:
            return
        if record.seq in self.seqs:
            self.by_seq[record.seq] = facts
