"""The durable point of the server: one append-only journal that every table shares.

A table writes each record to its own log file (flushed, not synced) and hands the line to
``Journal.log_line``; the host writes each receipt to the seat's receipts file and hands it
to ``Journal.receipt``. Both return a ticket at once. One writer thread takes everything
queued, appends it to the current segment with one ``os.write`` and makes it durable with
one ``os.fdatasync``, then resolves the batch's tickets on the event loop in ticket order:
``await journal.durable(ticket)`` returns only then, and nothing is sent to a client
before it has. On this disk one sync costs about as much for 200 records as for one
(docs/serving.md), so the tables share syncs instead of paying one per record per file.

A failed write or sync fails every waiting ticket with JournalError (FAILED) and the
journal takes nothing more: it never acknowledges what may not be on disk.

A segment past ``segment_bytes`` is retired: every log and receipts file it names is
fsynced by path, then the segment is deleted. ``recover_folder``, at start and before any
table resumes, makes every line the segments hold present in its file, refusing a fork,
and deletes them (docs/serving.md, "Recovery at start").

A journal entry is one line: ``L GAME <log line>`` or ``R GAME SEAT <receipt line>``; log
and receipt lines are canonical JSON, with no newline inside.
"""

from __future__ import annotations

import asyncio
import enum
import heapq
import itertools
import os
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import orjson

from racing_demon.errors import RacingDemonError
from racing_demon.serve.data import DataFolder

_GAME: Final = re.compile(rb"[0-9a-f]{32}")
_SEAT: Final = re.compile(rb"0|[1-9][0-9]{0,3}")
_SEGMENT: Final = re.compile(r"[0-9]{12}\.journal")
_FILE_MODE: Final = 0o640  # logs and receipts files (serve-design: the data folder)


class JournalCode(enum.StrEnum):
    """Why the journal refused, or refused to recover."""

    FAILED = "FAILED"  # a write or sync of the journal failed: it takes nothing more
    CLOSED = "CLOSED"  # an append before start or after close
    NOT_RECOVERED = "NOT_RECOVERED"  # start found segments recover_folder has not applied
    BAD_ENTRY = "BAD_ENTRY"  # a complete journal entry that is not one
    FORK = "FORK"  # a file holds another line at a seq than the journal does
    GAP = "GAP"  # records between the log file's end and the journal's first are nowhere


class JournalError(RacingDemonError, OSError):
    """The journal cannot make a line durable: failed, closed, or not recovered."""

    def __init__(self, code: JournalCode, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class JournalRecoveryError(RacingDemonError, ValueError):
    """Recovery found what it must not repair; it changed nothing."""

    def __init__(
        self, code: JournalCode, message: str, *, game: str | None = None, seq: int | None = None
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.game = game
        self.seq = seq


@dataclass(frozen=True, slots=True)
class JournalStats:
    """What the writer has made durable: entries, batches (one ``fdatasync`` each), bytes."""

    records: int = 0
    batches: int = 0
    bytes: int = 0

    @property
    def records_per_sync(self) -> float:
        return self.records / self.batches if self.batches else 0.0


@dataclass(frozen=True, slots=True)
class _Entry:
    ticket: int
    game: str
    seat: int | None  # None: a log line
    data: bytes  # the journal line, newline included


@dataclass(slots=True)
class _Segment:
    path: Path
    fd: int
    size: int = 0
    named: set[tuple[str, int | None]] = field(default_factory=set)  # (game, seat)


class _State(enum.Enum):
    NEW = "new"
    OPEN = "open"
    CLOSING = "closing"


def _segments(directory: Path) -> list[Path]:
    """The journal's segments, oldest first (their 12-digit names sort as they were made)."""
    if not directory.is_dir():
        return []
    return sorted(path for path in directory.iterdir() if _SEGMENT.fullmatch(path.name))


def _fsync(path: Path) -> None:
    """Sync a file, or a folder's entries (a file made or removed in it), by path."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_files(paths: Iterable[Path]) -> None:
    """Sync each file and then each folder that holds one: what a retired segment or a
    recovery names must be on disk before the journal forgets it."""
    files = sorted(set(paths))
    for path in [*files, *sorted({path.parent for path in files})]:
        _fsync(path)


class Journal:
    """The journal of one server process (see the module's docstring).

    ``log_line`` and ``receipt`` never block on the disk and may be called from the event
    loop; ``durable``, ``start`` and ``close`` are coroutines of the loop that ``start``
    ran on. Call ``log_line``/``receipt`` only after the line is written (flushed) to its
    own file: a retired segment's files are synced, not rewritten, from the journal.
    """

    def __init__(
        self, folder: DataFolder, *, max_wait_ms: float = 2.0, segment_bytes: int = 64 << 20
    ) -> None:
        if max_wait_ms < 0 or segment_bytes < 1:
            raise ValueError("max_wait_ms must be at least 0, segment_bytes at least 1")
        self._folder = folder
        self._max_wait = max_wait_ms / 1000
        self._segment_bytes = segment_bytes
        # Shared by the loop and the writer thread, under the lock:
        self._wake = threading.Condition()
        self._queue: list[_Entry] = []
        self._queued_at = 0.0  # when the oldest queued entry came
        self._next_ticket = 1
        self._state = _State.NEW
        self._failure: BaseException | None = None
        # The writer thread's own:
        self._segment: _Segment | None = None
        self._segment_number = 0
        self._expected = 1  # the last batch's size: the company a batch waits for
        self._stats = JournalStats()  # replaced whole, so the loop reads a consistent one
        # The loop's own:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._durable_upto = 0
        self._failed: JournalError | None = None
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._stopped: asyncio.Future[None] | None = None

    @property
    def stats(self) -> JournalStats:
        return self._stats

    async def start(self) -> None:
        """Open a new segment and start the writer. The journal folder must hold no
        segment: ``recover_folder`` applies and removes them first (NOT_RECOVERED)."""
        if self._state is not _State.NEW:
            raise JournalError(JournalCode.CLOSED, "the journal was started or closed before")
        directory = self._folder.journal_dir
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        left = _segments(directory)
        if left:
            raise JournalError(
                JournalCode.NOT_RECOVERED,
                f"{directory} holds {len(left)} segment(s) from an earlier run "
                f"(first {left[0].name}): run recover_folder before starting the journal",
            )
        self._loop = asyncio.get_running_loop()
        self._stopped = self._loop.create_future()
        self._open_segment()
        self._state = _State.OPEN
        threading.Thread(target=self._run, name="racing-demon journal", daemon=True).start()

    def log_line(self, game: str, line: bytes) -> int:
        """Queue log line ``line`` (without its newline) of ``game``; returns its ticket."""
        return self._append(game, None, line)

    def receipt(self, game: str, seat: int, line: bytes) -> int:
        """Queue receipt ``line`` (without its newline) sent to ``seat`` of ``game``."""
        if seat < 0:
            raise ValueError(f"seat {seat} is negative")
        return self._append(game, seat, line)

    def _append(self, game: str, seat: int | None, line: bytes) -> int:
        name = game.encode("ascii", "replace")
        if not _GAME.fullmatch(name):
            raise ValueError(f"{game!r} is not a game id (32 lowercase hex)")
        if not line or b"\n" in line:
            raise ValueError("a journaled line is one non-empty line without a newline")
        head = b"L " + name if seat is None else b"R %s %d" % (name, seat)
        with self._wake:
            if self._failure is not None:
                raise JournalError(
                    JournalCode.FAILED,
                    f"the journal failed ({self._failure}): it takes nothing more",
                )
            if self._state is not _State.OPEN:
                raise JournalError(JournalCode.CLOSED, "the journal is not open")
            ticket = self._next_ticket
            self._next_ticket += 1
            if not self._queue:
                self._queued_at = time.monotonic()
            self._queue.append(_Entry(ticket, game, seat, b"%s %s\n" % (head, line)))
            if len(self._queue) in (1, self._expected):
                self._wake.notify()  # the writer waits for a first entry, then for company
        return ticket

    async def durable(self, ticket: int) -> None:
        """Return once ``ticket``'s entry is on disk; JournalError (FAILED) if it never
        will be."""
        if ticket <= self._durable_upto:
            return
        if not 0 < ticket < self._next_ticket:
            raise ValueError(f"no ticket {ticket} was given")
        if self._failed is not None:
            raise self._failure_for(ticket)
        assert self._loop is not None  # a ticket was given, so the journal started
        future: asyncio.Future[None] = self._loop.create_future()
        heapq.heappush(self._waiters, (ticket, next(self._order), future))
        await future

    async def stopped(self) -> None:
        """Once the writer stopped: closed, or failed (then ``close`` raises why)."""
        assert self._stopped is not None, "the journal was not started"
        await asyncio.shield(self._stopped)

    async def close(self) -> None:
        """Write and sync what is queued, sync every file the segments name, remove the
        segments and stop. JournalError (FAILED) if the journal failed."""
        with self._wake:
            started = self._state is not _State.NEW
            self._state = _State.CLOSING
            self._wake.notify()
        if started:
            assert self._stopped is not None
            await asyncio.shield(self._stopped)
        if self._failed is not None:
            raise JournalError(JournalCode.FAILED, str(self._failed)) from self._failed

    # The loop's side of the writer's news; called with call_soon_threadsafe, in order.

    def _resolve(self, upto: int) -> None:
        self._durable_upto = upto
        while self._waiters and self._waiters[0][0] <= upto:
            future = heapq.heappop(self._waiters)[2]
            if not future.done():
                future.set_result(None)

    def _fail(self, error: BaseException) -> None:
        self._failed = JournalError(
            JournalCode.FAILED,
            f"the journal's write or sync failed ({error}): nothing after ticket "
            f"{self._durable_upto} is acknowledged, and the journal takes nothing more",
        )
        self._failed.__cause__ = error
        while self._waiters:
            ticket, _, future = heapq.heappop(self._waiters)
            if not future.done():
                future.set_exception(self._failure_for(ticket))

    def _failure_for(self, ticket: int) -> JournalError:
        assert self._failed is not None
        error = JournalError(JournalCode.FAILED, f"ticket {ticket}: {self._failed}")
        error.__cause__ = self._failed.__cause__
        return error

    def _stopped_now(self) -> None:
        assert self._stopped is not None
        if not self._stopped.done():
            self._stopped.set_result(None)

    # The writer thread.

    def _run(self) -> None:
        assert self._loop is not None
        loop = self._loop
        try:
            while (batch := self._take()) is not None:
                self._write(batch)
                loop.call_soon_threadsafe(self._resolve, batch[-1].ticket)
                segment = self._segment
                assert segment is not None
                if segment.size >= self._segment_bytes:
                    self._open_segment()
                    self._retire([segment])
            assert self._segment is not None
            last, self._segment = self._segment, None
            self._retire([last])
        except Exception as error:  # whatever stopped the writer fails every waiter
            with self._wake:
                self._failure = error
            if self._segment is not None:
                os.close(self._segment.fd)
            loop.call_soon_threadsafe(self._fail, error)
        finally:
            loop.call_soon_threadsafe(self._stopped_now)

    def _take(self) -> list[_Entry] | None:
        """The next batch: everything queued once as many entries wait as the last batch
        held, or the oldest has waited max_wait_ms (a lone writer, or tables that all wait
        in the batch, are not kept waiting; steady traffic shares syncs); None once closing
        and drained."""
        with self._wake:
            while not self._queue and self._state is _State.OPEN:
                self._wake.wait()
            if not self._queue:
                return None
            deadline = self._queued_at + self._max_wait
            while (
                self._state is _State.OPEN
                and len(self._queue) < self._expected
                and (left := deadline - time.monotonic()) > 0
            ):
                self._wake.wait(left)
            batch, self._queue = self._queue, []
            self._expected = len(batch)
        return batch

    def _write(self, batch: list[_Entry]) -> None:
        segment = self._segment
        assert segment is not None
        data = memoryview(b"".join(entry.data for entry in batch))
        total = len(data)
        while data:
            data = data[os.write(segment.fd, data) :]
        # fdatasync where the system has it (Linux); elsewhere fsync, which does more.
        getattr(os, "fdatasync", os.fsync)(segment.fd)
        segment.size += total
        segment.named.update((entry.game, entry.seat) for entry in batch)
        stats = self._stats
        self._stats = JournalStats(
            stats.records + len(batch), stats.batches + 1, stats.bytes + total
        )

    def _open_segment(self) -> None:
        directory = self._folder.journal_dir
        self._segment_number += 1
        path = directory / f"{self._segment_number:012d}.journal"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND
        fd = os.open(path, flags, 0o600)
        _fsync(directory)  # the new segment's name survives a crash
        self._segment = _Segment(path, fd)

    def _retire(self, segments: list[_Segment]) -> None:
        """Sync every file the segments name, then delete them: their lines are then on
        disk in their own files, and the journal may forget them."""
        named: set[tuple[str, int | None]] = set()
        for segment in segments:
            named |= segment.named
        _fsync_files(
            self._folder.log_path(game) if seat is None else self._folder.receipts_path(game, seat)
            for game, seat in named
        )
        for segment in segments:
            os.close(segment.fd)
            segment.path.unlink()
        _fsync(self._folder.journal_dir)


@dataclass(frozen=True, slots=True, kw_only=True)
class Recovery:
    """What ``recover_folder`` did."""

    games: tuple[str, ...]  # every game the journal named, sorted
    lines_appended: int  # log lines the log files lacked
    torn_tails_cut: int  # torn last lines replaced by the journal's whole line
    receipts_appended: int  # receipts the receipts files lacked
    segments_removed: int
    # Torn last lines the journal does not hold (never acknowledged), for recover_log to judge:
    torn_tails_left: tuple[Path, ...] = ()
    journal_bytes_ignored: int = 0  # torn segment tails: entries never acknowledged


@dataclass(slots=True)
class _Journaled:
    """Everything the segments hold, by file."""

    lines: dict[str, dict[int, bytes]] = field(default_factory=dict)  # game -> seq -> line
    receipts: dict[tuple[str, int], list[bytes]] = field(default_factory=dict)
    ignored: int = 0


@dataclass(frozen=True, slots=True)
class _Change:
    """What recovery will do to one file: keep its first ``keep`` bytes (all, if None) and
    append ``append``."""

    path: Path
    keep: int | None
    append: bytes
    lines: int  # how many lines ``append`` adds
    torn_left: bool


def _bad(segment: Path, number: int, why: str) -> JournalRecoveryError:
    return JournalRecoveryError(
        JournalCode.BAD_ENTRY, f"{segment.name} entry {number}: {why}; nothing was changed"
    )


def _read_segment(segment: Path, journaled: _Journaled) -> None:
    data = segment.read_bytes()
    end = data.rfind(b"\n") + 1
    journaled.ignored += len(data) - end  # the writer died mid-write: never acknowledged
    for number, raw in enumerate(data[:end].split(b"\n")[:-1], start=1):
        kind, _, rest = raw.partition(b" ")
        name, _, rest = rest.partition(b" ")
        if not _GAME.fullmatch(name):
            raise _bad(segment, number, "no game id")
        game = name.decode("ascii")
        if kind == b"R":
            seat, _, line = rest.partition(b" ")
            if not _SEAT.fullmatch(seat) or not line:
                raise _bad(segment, number, "a receipt entry without its seat and line")
            kept = journaled.receipts.setdefault((game, int(seat)), [])
            if line not in kept:
                kept.append(line)
            continue
        if kind != b"L":
            raise _bad(segment, number, f"unknown kind {kind[:8]!r}")
        seq = _log_seq(rest, game)
        if seq is None:
            raise _bad(segment, number, f"not a log line of game {game} with a seq")
        lines = journaled.lines.setdefault(game, {})
        if lines.setdefault(seq, rest) != rest:
            raise JournalRecoveryError(
                JournalCode.FORK,
                f"the journal holds two different lines at seq {seq} of game {game}; "
                "nothing was changed",
                game=game,
                seq=seq,
            )


def _log_seq(line: bytes, game: str) -> int | None:
    """The seq of log line ``line`` if it is a record of ``game``."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    body = value.get("body") if isinstance(value, dict) else None
    if not isinstance(body, dict) or body.get("game") != game:
        return None
    seq = body.get("seq")
    return seq if type(seq) is int and seq >= 0 else None


def _split(path: Path) -> tuple[list[bytes], bytes, bool]:
    """A file's complete lines, its torn tail (bytes after the last newline), and whether
    it exists."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], b"", False
    end = data.rfind(b"\n") + 1
    return data[:end].split(b"\n")[:-1], data[end:], True


def _plan_log(folder: DataFolder, game: str, journaled: dict[int, bytes]) -> _Change:
    path = folder.log_path(game)
    lines, torn, _ = _split(path)
    first, last = min(journaled), max(journaled)
    for seq in range(first, last + 1):
        if seq not in journaled:
            raise JournalRecoveryError(
                JournalCode.GAP,
                f"the journal holds seqs {first} and {last} of game {game} but not {seq}; "
                "nothing was changed",
                game=game,
                seq=seq,
            )
    if len(lines) < first:
        raise JournalRecoveryError(
            JournalCode.GAP,
            f"{path.name} ends at seq {len(lines) - 1} and the journal begins at seq {first}: "
            f"seq {len(lines)} of game {game} is nowhere; nothing was changed",
            game=game,
            seq=len(lines),
        )
    for seq in range(first, min(len(lines), last + 1)):
        if lines[seq] != journaled[seq]:
            raise _fork(path, game, seq)
    have = len(lines)
    if torn and have in journaled and not journaled[have].startswith(torn):
        raise _fork(path, game, have)
    append = b"".join(journaled[seq] + b"\n" for seq in range(have, last + 1))
    cut = bool(torn) and have in journaled
    keep = sum(len(line) + 1 for line in lines) if cut else None
    return _Change(path, keep, append, max(0, last + 1 - have), torn_left=bool(torn) and not cut)


def _fork(path: Path, game: str, seq: int) -> JournalRecoveryError:
    return JournalRecoveryError(
        JournalCode.FORK,
        f"{path.name} holds another line at seq {seq} of game {game} than the journal: "
        "a fork, never overwritten; nothing was changed",
        game=game,
        seq=seq,
    )


def _plan_receipts(path: Path, journaled: list[bytes]) -> _Change:
    lines, torn, _ = _split(path)
    present = set(lines)
    missing = [line for line in journaled if line not in present]
    cut = bool(torn) and bool(missing) and missing[0].startswith(torn)
    keep = sum(len(line) + 1 for line in lines) if cut else None
    append = b"".join(line + b"\n" for line in missing)
    if torn and not cut and append:
        append = b"\n" + append  # as ReceiptFiles does: the torn line stays, as evidence
    return _Change(path, keep, append, len(missing), torn_left=bool(torn) and not cut)


def _apply(change: _Change) -> None:
    created = not change.path.exists()
    if created:
        change.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(change.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, _FILE_MODE)
    try:
        if change.keep is not None:
            os.ftruncate(fd, change.keep)
        data = memoryview(change.append)
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)


def recover_folder(folder: DataFolder) -> Recovery:
    """Make every line the journal's segments hold present in its file, then remove the
    segments; run it at start, before the journal starts and before any table resumes.

    (1) Read the segments oldest first; a segment's bytes after its last newline are
    ignored (the writer died mid-write: nothing there was acknowledged). (2) Plan each
    game's log file by seq: a line the file lacks is appended; its torn tail is cut only
    when the journal holds that seq (and it is a prefix of the journal's line); a line
    that differs from the journal's at one seq is a fork: JournalRecoveryError (FORK),
    naming game and seq, and nothing is changed; so is a seq that is nowhere (GAP).
    (3) Plan each receipts file: journaled receipts it lacks are appended, a torn tail
    that begins the first of them is cut. (4) Apply the plans. (5) Sync every file the
    journal names, changed or not, and their folders. (6) Delete the segments.
    """
    directory = folder.journal_dir
    segments = _segments(directory)
    journaled = _Journaled()
    for segment in segments:  # (1)
        _read_segment(segment, journaled)
    changes = [  # (2)
        _plan_log(folder, game, lines) for game, lines in sorted(journaled.lines.items())
    ]
    log_changes = len(changes)
    changes += [  # (3)
        _plan_receipts(folder.receipts_path(game, seat), lines)
        for (game, seat), lines in sorted(journaled.receipts.items())
    ]
    for change in changes:  # (4)
        if change.keep is not None or change.append:
            _apply(change)
    _fsync_files(change.path for change in changes)  # (5)
    for segment in segments:  # (6)
        segment.unlink()
    if segments:
        _fsync(directory)
    games = {game for game in journaled.lines} | {game for game, _ in journaled.receipts}
    return Recovery(
        games=tuple(sorted(games)),
        lines_appended=sum(change.lines for change in changes[:log_changes]),
        torn_tails_cut=sum(change.keep is not None for change in changes),
        receipts_appended=sum(change.lines for change in changes[log_changes:]),
        segments_removed=len(segments),
        torn_tails_left=tuple(c.path for c in changes if c.torn_left),
        journal_bytes_ignored=journaled.ignored,
    )
