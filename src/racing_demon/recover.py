"""Recovering a log after the table's process died mid-write.

The table appends each record with one write and an fsync before acknowledging it, so a
crash can leave at most one torn line at the end: bytes of a record that was never
acknowledged. Recovery removes exactly that line, and only when the complete records
before it verify as an unfinished log; anything damaged before the end is refused and the
file is left untouched, because a damaged middle is evidence, not debris.

A last line that has lost only its newline (an editor or ``$(cat …)`` drops it) is no torn
record: it parses, is canonical, chains to the record before it and carries the table's
signature. Cutting it would destroy a record, perhaps the final one, the only record
that reveals the dealer secret and the scores. Recovery restores its newline instead, and
never cuts a tail that names itself a final record (docs/log-format.md §8).

Nor does it touch a file that is not a log (its first bytes are not a record's: notes,
random bytes), nor, unless asked, cut a file's only line: a torn genesis is all a crash
left, but cutting it empties the file.
"""

from __future__ import annotations

import enum
import io
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from racing_demon.errors import RacingDemonError
from racing_demon.files import open_regular, shown_name
from racing_demon.log.reader import ReadCode, ReadError, parse_line
from racing_demon.log.records import RECORD_START, could_start_record
from racing_demon.verify import Report, Settings, Verdict, VerifyCode, verify_stream

# The bytes by which a record names itself final: a tail holding them is never cut.
_FINAL_KIND = b'"kind":"final"'


class Action(enum.StrEnum):
    REMOVED_TORN_LINE = "REMOVED_TORN_LINE"  # or, with dry_run, would remove it
    RESTORED_NEWLINE = "RESTORED_NEWLINE"  # the last record lacked only its newline
    NOTHING_TO_DO = "NOTHING_TO_DO"  # the file ends with a complete record
    REFUSED = "REFUSED"  # the records before the end do not verify: nothing touched
    REFUSED_FINAL = "REFUSED_FINAL"  # a damaged tail that names itself final: nothing touched
    REFUSED_ONLY_LINE = "REFUSED_ONLY_LINE"  # the torn line is the whole file: not without
    # allow_empty, since cutting it empties the file


@dataclass(frozen=True, slots=True, kw_only=True)
class Recovery:
    """What recovery found and did. ``report`` is the verification of the complete records."""

    source: str
    action: Action
    report: Report
    kept_bytes: int
    torn_bytes: int  # the bytes after the last newline: removed, or to remove
    dry_run: bool = False


class RecoveryError(RacingDemonError):
    """The file cannot be recovered at all: it cannot be opened, read or truncated, or it
    is not a log (its first bytes are not a record's)."""


def recover_log(
    path: Path, settings: Settings, *, dry_run: bool = False, allow_empty: bool = False
) -> Recovery:
    """Remove a torn last line from the log at ``path`` if the records before it verify as
    an unfinished log under ``settings``; otherwise change nothing. A torn line that is
    the file's only line is cut only with ``allow_empty`` (the file is then empty).

    Run it only when no table is writing the file. Raises RecoveryError when the file
    cannot be opened, read or truncated, or is not a log at all.
    """
    source = shown_name(path)  # valid UTF-8 in every report, whatever the name
    try:
        with open_regular(path, writable=not dry_run) as file:
            size = os.fstat(file.fileno()).st_size
            if not could_start_record(file.read(len(RECORD_START))):
                raise RecoveryError(
                    f"{source}: not a log: its first bytes are not a record's (every record "
                    f"starts {RECORD_START.decode()}); nothing changed"
                )
            kept = _end_of_last_line(file, size, settings.limits.max_line_bytes)
            if kept is None:
                raise RecoveryError(
                    f"{source}: the last {settings.limits.max_line_bytes + 1} bytes hold no "
                    "newline: that is no torn record but a damaged file"
                )
            torn = size - kept
            if torn:
                # Is the tail a whole record that lost only its newline? Then the file with
                # the newline back holds every record intact.
                whole = verify_stream(_stream(file, size, b"\n"), settings, source)
                if _intact(whole):
                    if not dry_run:
                        _change(file, size, source, lambda fd: os.write(fd, b"\n"))
                    return Recovery(
                        source=source,
                        action=Action.RESTORED_NEWLINE,
                        report=whole,
                        kept_bytes=size,
                        torn_bytes=0,
                        dry_run=dry_run,
                    )
                file.seek(kept)
                tail = file.read(torn)
                if not _torn(tail):
                    # A complete JSON value is no debris of a crash, whatever it fails:
                    # a record the table signed, or evidence of who changed it.
                    return Recovery(
                        source=source,
                        action=Action.REFUSED,
                        report=whole,
                        kept_bytes=kept,
                        torn_bytes=torn,
                        dry_run=dry_run,
                    )
                if _FINAL_KIND in tail:
                    report = verify_stream(_stream(file, kept), settings, source)
                    return Recovery(
                        source=source,
                        action=Action.REFUSED_FINAL,
                        report=report,
                        kept_bytes=kept,
                        torn_bytes=torn,
                        dry_run=dry_run,
                    )
            report = verify_stream(_stream(file, kept), settings, source)
            if not torn:
                # Ending with a complete record, it needs nothing: verified, unfinished, or
                # unpinned (no key given to check the signatures with).
                action = Action.NOTHING_TO_DO if _intact(report) else Action.REFUSED
                return Recovery(
                    source=source,
                    action=action,
                    report=report,
                    kept_bytes=kept,
                    torn_bytes=torn,
                    dry_run=dry_run,
                )
            if not _intact(report) or report.verdict is not Verdict.UNFINISHED:
                return Recovery(
                    source=source,
                    action=Action.REFUSED,
                    report=report,
                    kept_bytes=kept,
                    torn_bytes=torn,
                    dry_run=dry_run,
                )
            if not kept and not allow_empty:
                return Recovery(
                    source=source,
                    action=Action.REFUSED_ONLY_LINE,
                    report=report,
                    kept_bytes=kept,
                    torn_bytes=torn,
                    dry_run=dry_run,
                )
            if not dry_run:
                _change(file, size, source, lambda fd: os.ftruncate(fd, kept))
            return Recovery(
                source=source,
                action=Action.REMOVED_TORN_LINE,
                report=report,
                kept_bytes=kept,
                torn_bytes=torn,
                dry_run=dry_run,
            )
    except OSError as error:
        raise RecoveryError(f"{source}: {error.strerror or error}") from error


def _torn(tail: bytes) -> bool:
    """Whether ``tail`` is what a write cut short leaves: the start of a JSON object line,
    which never parses (it stops inside the object, or inside a character)."""
    try:
        parse_line(0, tail)
    except ReadError as error:
        return error.code in (ReadCode.BAD_JSON, ReadCode.NOT_UTF8)
    return False


def _intact(report: Report) -> bool:
    """Verified, unpinned (no key to check the table's signatures) or a prefix of a log
    whose every record holds: nothing in it is damaged."""
    if report.verdict is Verdict.UNFINISHED:
        return report.finding is not None and report.finding.code is VerifyCode.UNFINISHED
    return report.verdict in (Verdict.VERIFIED, Verdict.UNPINNED)


def _stream(file: BinaryIO, length: int, extra: bytes = b"") -> io.BufferedReader:
    return io.BufferedReader(_Prefix(file, length, extra))


def _change(file: BinaryIO, size: int, source: str, change: Callable[[int], object]) -> None:
    """Make ``change`` to the file at its end and fsync it, unless it grew since it was read."""
    descriptor = file.fileno()
    if os.fstat(descriptor).st_size != size:
        raise RecoveryError(f"{source}: the file grew during recovery: is it in use?")
    os.lseek(descriptor, size, os.SEEK_SET)
    change(descriptor)
    os.fsync(descriptor)


def _end_of_last_line(file: BinaryIO, size: int, max_line_bytes: int) -> int | None:
    """The offset just after the file's last newline (0 if a torn first line is all there
    is); None if the last ``max_line_bytes + 1`` bytes hold no newline in a longer file."""
    window = min(size, max_line_bytes + 1)
    file.seek(size - window)
    tail = file.read(window)
    newline = tail.rfind(b"\n")
    if newline >= 0:
        return size - window + newline + 1
    return 0 if window == size else None


class _Prefix(io.RawIOBase):
    """The first ``length`` bytes of an open file followed by ``extra``, as a seekable
    read-only stream."""

    def __init__(self, file: BinaryIO, length: int, extra: bytes = b"") -> None:
        super().__init__()
        self._fd = file.fileno()
        self._file_length = length
        self._extra = extra
        self._length = length + len(extra)
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        count = min(len(buffer), self._length - self._position)
        if count <= 0:
            return 0
        if self._position < self._file_length:
            data = os.pread(
                self._fd, min(count, self._file_length - self._position), self._position
            )
        else:
            start = self._position - self._file_length
            data = self._extra[start : start + count]
        buffer[: len(data)] = data
        self._position += len(data)
        return len(data)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        origin = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._length}
        self._position = max(0, origin[whence] + offset)
        return self._position

    def tell(self) -> int:
        return self._position
