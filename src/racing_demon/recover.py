"""Recovering a log after the table's process died mid-write.

The table appends each record with one write and an fsync before acknowledging it, so a
crash can leave at most one torn line at the end: bytes of a record that was never
acknowledged. Recovery removes exactly that line, and only when the complete records
before it verify as an unfinished log; anything damaged before the end is refused and the
file is left untouched, because a damaged middle is evidence, not debris.
"""

from __future__ import annotations

import enum
import io
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from racing_demon.verify import Code, Report, Settings, Verdict, verify_stream


class Action(enum.StrEnum):
    REMOVED_TORN_LINE = "REMOVED_TORN_LINE"  # or, with dry_run, would remove it
    NOTHING_TO_DO = "NOTHING_TO_DO"  # the file ends with a complete record
    REFUSED = "REFUSED"  # the records before the end do not verify: nothing touched


@dataclass(frozen=True, slots=True)
class Recovery:
    """What recovery found and did. ``report`` is the verification of the complete records."""

    source: str
    action: Action
    report: Report
    kept_bytes: int
    torn_bytes: int  # the bytes after the last newline: removed, or to remove
    dry_run: bool = False

    @property
    def exit_code(self) -> int:
        if self.action is Action.REFUSED:
            return 2 if self.report.verdict is Verdict.UNREADABLE else 1
        return 0


class RecoveryError(Exception):
    """The file cannot be recovered at all (it cannot be opened, read or truncated)."""


def recover_log(path: Path, settings: Settings, *, dry_run: bool = False) -> Recovery:
    """Remove a torn last line from the log at ``path`` if the records before it verify as
    an unfinished log under ``settings``; otherwise change nothing.

    Run it only when no table is writing the file. Raises RecoveryError when the file
    cannot be opened, read or truncated.
    """
    source = str(path)
    try:
        with path.open("rb" if dry_run else "r+b") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise RecoveryError(f"{source}: not a regular file")
            size = info.st_size
            kept = _end_of_last_line(file, size, settings.limits.max_line_bytes)
            if kept is None:
                raise RecoveryError(
                    f"{source}: the last {settings.limits.max_line_bytes + 1} bytes hold no "
                    "newline: that is no torn record but a damaged file"
                )
            report = verify_stream(io.BufferedReader(_Prefix(file, kept)), settings, source)
            torn = size - kept
            unfinished = (
                report.verdict is Verdict.UNFINISHED
                and report.finding is not None
                and report.finding.code is Code.UNFINISHED
            )
            if not torn:
                # Ending with a complete record, it needs nothing: verified, unfinished, or
                # unpinned (no key given to check the signatures with).
                intact = unfinished or report.verdict in (Verdict.VERIFIED, Verdict.UNPINNED)
                action = Action.NOTHING_TO_DO if intact else Action.REFUSED
                return Recovery(source, action, report, kept, torn, dry_run)
            if not unfinished:
                return Recovery(source, Action.REFUSED, report, kept, torn, dry_run)
            if not dry_run:
                if os.fstat(file.fileno()).st_size != size:
                    raise RecoveryError(f"{source}: the file grew during recovery: is it in use?")
                os.ftruncate(file.fileno(), kept)
                os.fsync(file.fileno())
            return Recovery(source, Action.REMOVED_TORN_LINE, report, kept, torn, dry_run)
    except OSError as error:
        raise RecoveryError(f"{source}: {error.strerror or error}") from error


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
    """The first ``length`` bytes of an open file, as a seekable read-only stream."""

    def __init__(self, file: BinaryIO, length: int) -> None:
        super().__init__()
        self._fd = file.fileno()
        self._length = length
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        count = min(len(buffer), self._length - self._position)
        if count <= 0:
            return 0
        data = os.pread(self._fd, count, self._position)
        buffer[: len(data)] = data
        self._position += len(data)
        return len(data)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        origin = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._length}
        self._position = max(0, origin[whence] + offset)
        return self._position

    def tell(self) -> int:
        return self._position
