"""Rebuild the table from a log, record by record, for ``replay`` and ``audit`` where
verification's pass does not reach (``follow`` is the part a visitor of that pass uses; a
table that resumes after a crash rebuilds its match on the pass, ``table.start.Rebuild``).

Each record goes through the match flow (``racing_demon.game.flow``), the same one that
the table writes with and the verifier judges with, so the replay shows the table after
every record up to the first one the flow does not allow, which stops it with
``ReplayError`` naming the record, its code, the engine's rule and the move
(``racing-demon verify`` gives the verdict, with its step). The deal needs the dealer
secret: the final record reveals it, or the caller passes one for a log that has no final
record yet.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from racing_demon.errors import RacingDemonError
from racing_demon.files import InMemoryLog, LogFile, open_log
from racing_demon.game.cards import Card
from racing_demon.game.flow import (
    FlowCode,
    FlowRefusal,
    HandEnd,
    MatchFlow,
    RecordKind,
    Submission,
)
from racing_demon.game.race import Race, Races
from racing_demon.game.scoring import HandScore, score_hand
from racing_demon.game.state import State
from racing_demon.log.reader import (
    DEFAULT_LIMITS,
    Limits,
    Line,
    ReadCode,
    ReadError,
    read_canonical_line,
    read_lines,
)
from racing_demon.log.records import (
    RECORD_START,
    Final,
    Genesis,
    Record,
    chain_hash,
    could_start_record,
    event_of,
    parse_record,
)
from racing_demon.profiles import rules_from_document
from racing_demon.schema import record_errors
from racing_demon.wording import plural


class ReplayError(RacingDemonError, ValueError):
    """The log cannot be replayed past this record: every record before it was."""

    def __init__(self, seq: int, message: str, record: Record | None = None) -> None:
        super().__init__(f"record {seq}: {message}")
        self.seq = seq
        self.record = record  # the record refused, once its schema held


class EmptyLogError(ReplayError):
    """The log holds no complete record: nothing to replay, and no secret to ask for. The
    file is empty, or its only line is a genesis a crash cut short (``torn_bytes``)."""

    def __init__(self, torn_bytes: int = 0, *, in_file: bool = True) -> None:
        super().__init__(0, "the log is empty")
        self.torn_bytes = torn_bytes
        self.in_file = in_file  # recover repairs a file, never standard input

    def __str__(self) -> str:
        if self.torn_bytes:
            repair = " (racing-demon recover --allow-empty removes it)" if self.in_file else ""
            return (
                f"it holds no complete record: its only line, {plural(self.torn_bytes, 'byte')}, "
                f"is a genesis a crash cut short{repair}"
            )
        return "the file is empty: it holds no record"


class NotALogError(ReplayError):
    """The file's first bytes are not a record's: notes, random bytes, another document."""

    def __init__(self) -> None:
        super().__init__(0, "not a log")

    def __str__(self) -> str:
        return (
            "not a log: its first bytes are not a record's (every record starts "
            f"{RECORD_START.decode()})"
        )


@dataclass
class Snapshot:
    """The table as it stood after one record (mutable: the replay updates it in place)."""

    record: Record | None = None
    names: tuple[str, ...] = ()
    flow: MatchFlow | None = None
    races: Races = field(default_factory=Races)  # the hand in play's
    hands: list[tuple[HandScore, dict[Card, int]]] = field(default_factory=list)
    lost_to: Race | None = None  # the record's, when it bounced a move that lost a race

    @property
    def placed(self) -> dict[Card, int]:
        """Which record placed each centre card of the hand in play (card -> seq)."""
        return self.races.placed

    @property
    def seq(self) -> int:
        return -1 if self.record is None else self.record.seq

    @property
    def state(self) -> State | None:
        """The hand in play, or the last one; None before the first deal."""
        return None if self.flow is None else self.flow.state


# A log to read: its name, or a binary stream a caller opened once for all its readers.
LogSource = LogFile | BinaryIO


@contextmanager
def reading(log: LogSource) -> Iterator[BinaryIO]:
    """``log`` from its start: a name opened here, a stream the caller's and left open."""
    if isinstance(log, Path | InMemoryLog):
        with open_log(log) as stream:
            yield stream
    else:
        log.seek(0)
        yield log


def find_secret(path: LogSource, limits: Limits = DEFAULT_LIMITS) -> bytes | None:
    """The secret the final record reveals, or None when the log has no final record
    (a torn last line included: what a crash leaves has no final record after it)."""
    for record in _complete_records(path, limits):
        if isinstance(record.payload, Final):
            return bytes.fromhex(record.payload.secret)
    return None


def genesis_and_secret(
    path: LogSource, limits: Limits = DEFAULT_LIMITS, *, in_file: bool | None = None
) -> tuple[Record, bytes | None]:
    """The log's genesis record, and the secret its final record reveals (None when the log
    has no final record yet): what deals every hand of the log. ``in_file``: whether the
    log is a file that recover could repair (by default, unless it was read into memory).

    A line past the genesis that cannot be read does not hide the secret when the last
    line is a final record that reveals one: the replay then shows the table up to the
    damage (the caller checks that the secret opens the genesis commitment)."""
    with reading(path) as stream:
        size = stream.seek(0, os.SEEK_END)
        stream.seek(0)
        if not could_start_record(stream.read(len(RECORD_START))):
            raise NotALogError
    genesis: Record | None = None
    try:
        for record in _complete_records(path, limits):
            if genesis is None:
                if not isinstance(record.payload, Genesis):
                    raise ReplayError(record.seq, f"the log begins with a {record.kind} record")
                genesis = record
            elif isinstance(record.payload, Final):
                return genesis, bytes.fromhex(record.payload.secret)
    except (ReadError, ReplayError):
        if genesis is None:
            raise
        revealed = _last_line_secret(path, limits)
        if revealed is None:
            raise
        return genesis, revealed
    if genesis is None:
        # What is there is a torn only line.
        if in_file is None:
            in_file = not isinstance(path, InMemoryLog)
        raise EmptyLogError(size, in_file=in_file)
    return genesis, None


def _last_line_secret(path: LogSource, limits: Limits) -> bytes | None:
    """The secret the log's last line reveals, if it is a whole final record."""
    with reading(path) as stream:
        end = stream.seek(0, os.SEEK_END)
        start = max(0, end - limits.max_line_bytes - 2)
        stream.seek(start)
        tail = stream.read(end - start)
    _, newline, last = tail.removesuffix(b"\n").rpartition(b"\n")
    if not tail.endswith(b"\n") or not newline:
        return None
    try:
        value = read_canonical_line(0, last, limits).value
    except ReadError:
        return None
    if record_errors(value):
        return None
    final = parse_record(value["body"]).payload
    return bytes.fromhex(final.secret) if isinstance(final, Final) else None


def hands_dealt(path: LogSource, limits: Limits = DEFAULT_LIMITS) -> int:
    """How many hands the log dealt: its ``hand_start`` records, up to a torn last line.
    A hand past these is one the match never played, whatever the seed would deal."""
    return sum(record.kind is RecordKind.HAND_START for record in _complete_records(path, limits))


def _complete_records(path: LogSource, limits: Limits) -> Iterator[Record]:
    """Every record of the log up to a torn last line, if a crash left one."""
    with reading(path) as stream:
        try:
            for line in read_lines(stream, limits):
                yield _record(line.number, line.value)
        except ReadError as error:
            if error.code is not ReadCode.TORN_LINE:
                raise


def _record(number: int, value: dict[str, Any]) -> Record:
    problems = record_errors(value)
    if problems:
        raise ReplayError(number - 1, f"not a log record: {problems[0]}")
    return parse_record(value["body"])


def replay(path: LogSource, secret: bytes, limits: Limits = DEFAULT_LIMITS) -> Iterator[Snapshot]:
    """Yield the table after every record, in order (the same object, updated)."""
    snapshot = Snapshot()
    with reading(path) as stream:
        for line in read_lines(stream, limits):
            record = _record(line.number, line.value)
            snapshot.record = record
            try:
                _step(snapshot, record, chain_hash(line.raw), secret)
            except ReplayError:
                raise
            except FlowRefusal as refusal:
                raise ReplayError(record.seq, _refused(record, refusal), record) from None
            except (LookupError, ValueError) as error:  # records that fit no real game
                raise ReplayError(record.seq, str(error), record) from error
            yield snapshot


def _refused(record: Record, refusal: FlowRefusal) -> str:
    payload = record.payload
    move = payload.move if isinstance(payload, Submission) else None
    rule = None if refusal.rule is None else str(refusal.rule)
    return refusal_words(refusal.code, rule, move, refusal.message)


def refusal_words(code: FlowCode, rule: str | None, move: str | None, message: str) -> str:
    """A refusal of the match flow with its code, the engine's rule and the move, as a
    finding names them: what ``ReplayError`` says of the record refused."""
    parts = [code.value, *([] if rule is None else [rule]), *([] if move is None else [move])]
    return ": ".join([*parts, message])


def _step(snapshot: Snapshot, record: Record, line_hash: str, secret: bytes) -> None:
    payload = record.payload
    if isinstance(payload, Genesis):
        if snapshot.flow is not None:
            raise ReplayError(record.seq, "a second genesis")
        rules = rules_from_document(payload.rules)
        flow = MatchFlow.begin(rules, payload.dealer(secret), len(payload.players))
    elif snapshot.flow is None:
        raise ReplayError(record.seq, f"a {record.kind} record before the genesis")
    else:
        event = event_of(payload)  # None for a note: the match does not see it
        flow = snapshot.flow if event is None else snapshot.flow.play(event, record.t_ms)
    follow(snapshot, record, flow, line_hash)


class SnapshotWatcher(Protocol):
    """A reader of the table as the replay rebuilds it (``Following``)."""

    def see(self, record: Record, snapshot: Snapshot) -> None:
        """``snapshot`` is the table after ``record``; a ``seq`` 0 starts the match again
        (verification's second pass replays from the genesis)."""


@dataclass
class Following:
    """A visitor of a log's verification pass (the verifier's ``PassVisitor``) that follows
    the replay once into one snapshot and shows it, record by record, to each of its
    ``watchers``: the audit's hands and races read one replay, not one each."""

    watchers: tuple[SnapshotWatcher, ...]
    _snapshot: Snapshot = field(default_factory=Snapshot)

    def visit(self, line: Line, record: Record, flow: MatchFlow) -> None:
        if record.seq == 0:  # a second pass replays again from the genesis
            self._snapshot = Snapshot()
        follow(self._snapshot, record, flow, chain_hash(line.raw))
        for watcher in self.watchers:
            watcher.see(record, self._snapshot)

    def end(self, report: object) -> None:
        """Nothing to finish: each watcher is whole as the last record is seen."""


def follow(snapshot: Snapshot, record: Record, flow: MatchFlow, line_hash: str) -> None:
    """Update ``snapshot`` to the table after ``record`` (its line hashing to
    ``line_hash``), which took the match to ``flow``: what a replay adds to the flow (the
    seats' names, which record placed each centre card, the hands' scores, a lost race)."""
    payload = record.payload
    snapshot.record, snapshot.flow, snapshot.lost_to = record, flow, None
    if isinstance(payload, Genesis):
        snapshot.names = tuple(entry.name for entry in payload.players)
        return
    snapshot.lost_to = snapshot.races.follow(record.seq, line_hash, payload, flow.state)
    if isinstance(payload, HandEnd):
        assert flow.state is not None  # the hand that ended, with its cards
        snapshot.hands.append((score_hand(flow.state), dict(snapshot.placed)))
