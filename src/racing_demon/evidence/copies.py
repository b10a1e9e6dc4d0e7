"""A copy of the log (``--against``) read through the verifier's steps 1-5 and compared
with the audited log's table-signed chain, body with body."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from racing_demon.evidence.findings import (
    Entry,
    EvidenceCode,
    EvidenceFinding,
    LogScan,
    _ms,
    _place,
    _short,
)
from racing_demon.files import LogFile, open_log, open_regular, shown_name
from racing_demon.game.flow import RecordKind, Submission
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.reader import (
    Limits,
    Line,
    ReadError,
    RecordLine,
    iter_raw_lines,
    read_lines,
)
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
                read = step03_schema.check_schema(line)  # (3)
                record = read.record
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
                checker.check(read)  # (4) and (5)
            except StepFailed as failed:
                if not same_body and record.game == scan.game and _table_signed(table_key, read):
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
