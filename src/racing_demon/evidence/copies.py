"""A copy of the log (``--against``) read through the verifier's steps 1-5 and compared
with the audited log's table-signed chain, body with body, in step with verification's
pass over the log."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from racing_demon.evidence.findings import (
    Entry,
    EvidenceCode,
    EvidenceFinding,
    in_ms,
    place,
    short,
)
from racing_demon.game.flow import RecordKind, Submission
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.reader import Limits, Line, ReadError, RecordLine, read_lines
from racing_demon.log.records import (
    SEEN_WINDOW,
    Record,
    body_bytes,
    body_hash,
    chain_hash,
    parse_record,
)
from racing_demon.log.signing import verify
from racing_demon.verify import step01_framing, step03_schema, step04_chain, step05_signatures
from racing_demon.verify.report import StepFailed
from racing_demon.verify.table_chain import ChainBroken


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

    def check(self, line: RecordLine) -> None:
        """Steps 4 and 5 for ``line`` (steps 1-3 passed); raises ``StepFailed``."""
        record = line.record
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


@dataclass(kw_only=True)
class CopyComparison:
    """``copy``, a copy of the log (``--against``), open as ``stream``, judged line by line
    by the verifier's steps 1-5 and compared with the log's table-signed chain as
    verification's pass hands it over (a ``LineVisitor``), body with body, as far as both
    go: the first line where the two bodies differ is a FORK when the table signed the
    copy's (same game and seq); the first line the verifier refuses, where it differs from
    the log's, is COPY_INVALID with the verifier's code; a copy of another game is
    OTHER_GAME. A line the verifier refuses though it is the log's own ends the comparison
    with no finding: the log's verification reports it. ``error`` is what reading the
    copy raised, if it could not be read to the end of the comparison."""

    copy: str  # as ``shown_name`` names it
    log: str  # the audited log, named the same way
    stream: BinaryIO
    table_key: bytes
    limits: Limits
    findings: list[EvidenceFinding] = field(default_factory=list)
    error: OSError | None = None
    _game: str | None = None  # the log's, from its genesis
    _done: bool = False
    _differed: bool = False  # an earlier line of the copy is not the log's (its sigs, say)
    _checker: _CopyChecker = field(init=False)
    _lines: Iterator[Line] = field(init=False)

    def __post_init__(self) -> None:
        self._checker = _CopyChecker(self.table_key)
        self._lines = read_lines(self.stream, self.limits)  # (1) and (2)

    def chained(self, line: Line, record: Record) -> None:
        """The log's ``line`` is of its chain: the copy's line of that number is compared
        with it (a ``LineVisitor``'s)."""
        if line.number == 1:
            self._game = record.game
        if self._done:
            return
        try:
            finding = self._compare(line.raw)
        except OSError as error:
            self.error, finding = error, None
            self._done = True
        if finding is not None:
            self.findings.append(finding)

    def unchained(self, broken: ChainBroken) -> None:
        """The log's chain ends: a longer copy is no second history (a ``LineVisitor``'s)."""
        self._done = True

    def _compare(self, our_raw: bytes) -> EvidenceFinding | None:
        """The copy's next line with the log's (``our_raw``): a finding, or None. Sets
        ``_done`` when the comparison ends."""
        shown, theirs = self.copy, self.stream
        try:
            line = next(self._lines)
        except StopIteration:
            self._done = True
            return None
        except ReadError as error:
            self._done = True
            if error.line == 1 and not step01_framing.starts_as_log(theirs):
                # Notes or random bytes: no copy of any log, torn or not.
                message = f"{step01_framing.NOT_A_LOG}: {error.message}"
                return _invalid_copy(shown, error.line, error.code, message)
            if not step01_framing.is_torn_tail(error, self._checker.final_line is not None):
                return _invalid_copy(shown, error.line, error.code, error.message)
            return None  # a torn last line: a prefix, as a crash leaves it
        try:
            read = step03_schema.check_schema(line)  # (3)
            record = read.record
        except StepFailed as failed:
            self._done = True
            return _invalid_copy(shown, line.number, failed.finding.code, failed.finding.message)
        if line.number == 1 and record.game != self._game:
            self._done = True
            return EvidenceFinding(
                code=EvidenceCode.OTHER_GAME,
                file=shown,
                line=line.number,
                seat=None,
                n=None,
                said=None,
                compared=None,
                message=f"a copy of game {record.game}; the log is of game {self._game}",
            )
        same_body = body_bytes(line.raw) == body_bytes(our_raw)
        try:
            self._checker.check(read)  # (4) and (5)
        except StepFailed as failed:
            self._done = True
            if not same_body and record.game == self._game and _table_signed(self.table_key, read):
                return _fork(shown, self.log, line, record, our_raw, failed.finding.code)
            if self._differed or line.raw != our_raw:
                # The log's own line fails here only through the copy's earlier change
                # (a player's signature made again breaks the next line's prev): the
                # copy's damage, not a defect it shares with the log.
                return _invalid_copy(
                    shown, line.number, failed.finding.code, failed.finding.message
                )
            return None
        if not same_body:
            self._done = True
            return _fork(shown, self.log, line, record, our_raw)
        self._differed = self._differed or line.raw != our_raw
        return None


def _table_signed(table_key: bytes, line: RecordLine) -> bool:
    """Whether the pinned key signed this body as the record of its line's seq."""
    record = line.record
    problem = verify(table_key, record.kind, body_bytes(line.raw), line.sigs.table, record.v)
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
        code=EvidenceCode.FORK,
        file=shown,
        line=line.number,
        seat=event.seat if isinstance(event, Submission) else None,
        n=event.n if isinstance(event, Submission) else None,
        said=Entry(file=shown, line=line.number, seq=record.seq, record=theirs, t_ms=record.t_ms),
        compared=Entry(
            file=mine, line=line.number, seq=our_record.seq, record=ours, t_ms=our_record.t_ms
        ),
        message=(
            f"copy {place(shown, line.number)} holds seq {record.seq} as a {record.kind} "
            f"record (body {short(theirs)}) at {in_ms(record.t_ms)}, the log as a "
            f"{our_record.kind} record (body {short(ours)}) at {in_ms(our_record.t_ms)}; the "
            f"bodies differ in {', '.join(members)}{also}: the table signed both"
        ),
        members=members,
    )


def _invalid_copy(file: str, line: int | None, code: str, message: str) -> EvidenceFinding:
    return EvidenceFinding(
        code=EvidenceCode.COPY_INVALID,
        file=file,
        line=line,
        seat=None,
        n=None,
        said=None,
        compared=None,
        message=(
            f"the copy differs from the log here, and the verifier refuses it: {code}: {message}"
        ),
        rule=code,
    )
