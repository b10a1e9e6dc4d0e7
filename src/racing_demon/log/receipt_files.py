"""Keeping each seat's receipts in the file that ``racing-demon audit --receipts`` reads.

The table answers every submission with a receipt (``Outcome.receipt``, or a
``SubmissionError``'s ``receipt``): one signed JSON line *without* its newline
(docs/log-format.md §9). A receipts file is framed like a log, every line ending in
``\\n``, so a receipt written as it comes leaves the file's last line torn, and ``audit``
refuses it. ``ReceiptFiles`` is the one call a server (or a client) makes per receipt:
``keep(seat, receipt)`` appends it as a line to the seat's file, named as ``simulate``
names it, ``<log stem>.seat<N>.receipts.jsonl`` beside the log.

Durability, as the table's for its records: each receipt is written with one ``write`` of
its line and newline, flushed and ``fsync``ed before ``keep`` returns (``durable=False``
skips the fsync: simulations and tests only), and a file ``keep`` creates has its folder
``fsync``ed once, so that its name survives a crash too. Keep a receipt before handing it
to its player, and a crash loses none that a player holds.

An existing file is appended to, never replaced (a resumed table keeps adding to it). A
last line without its newline (a crash cut a write short) is ended with one first: the
torn line stays as it is, evidence that ``audit`` refuses as malformed, and the receipts
after it are read. After a failed write the file takes nothing more.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from racing_demon.errors import RacingDemonError
from racing_demon.files import NotRegularFileError
from racing_demon.log.receipts import RECEIPTS_SUFFIX

_APPEND: Final = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)  # a named pipe is refused, not waited on


class ReceiptFileError(RacingDemonError, OSError):
    """A receipts file whose earlier write failed: it takes nothing more."""


def receipts_path(log: Path, seat: int) -> Path:
    """Where seat ``seat``'s receipts of the match logged at ``log`` are kept:
    ``<log stem>.seat<N>.receipts.jsonl`` beside it."""
    return log.with_name(f"{log.stem}.seat{seat}{RECEIPTS_SUFFIX}")


class ReceiptFiles:
    """The receipts files of a table's seats, each opened (created if need be) at its first
    receipt; ``keep(seat, receipt)`` appends one. A context manager that closes them."""

    def __init__(self, log: Path, *, durable: bool = True) -> None:
        self._log = log
        self._durable = durable
        self._open: dict[int, int] = {}  # seat -> file descriptor
        self._failed: dict[int, str] = {}

    def path(self, seat: int) -> Path:
        """Seat ``seat``'s receipts file: ``receipts_path(log, seat)``."""
        return receipts_path(self._log, seat)

    def keep(self, seat: int, receipt: bytes) -> None:
        """Append ``receipt`` (one line, as the table gives it, without a newline) to seat
        ``seat``'s file, on disk before this returns (unless not ``durable``). ValueError
        for bytes that are not one line; ReceiptFileError once a write to that file failed;
        OSError from the file system as it comes."""
        if not receipt or b"\n" in receipt or b"\r" in receipt:
            raise ValueError("a receipt is one non-empty line without CR or LF")
        if seat in self._failed:
            raise ReceiptFileError(
                f"{self.path(seat)}: an earlier write failed ({self._failed[seat]}): "
                "no receipt is added after it"
            )
        descriptor = self._descriptor(seat)
        try:
            _write_all(descriptor, receipt + b"\n")
            if self._durable:
                os.fsync(descriptor)
        except OSError as error:
            # A partial write may have left a torn line: a receipt appended after it would
            # be glued to it.
            self._failed[seat] = error.strerror or str(error)
            raise

    def close(self) -> None:
        while self._open:
            _, descriptor = self._open.popitem()
            os.close(descriptor)

    def __enter__(self) -> ReceiptFiles:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _descriptor(self, seat: int) -> int:
        if seat not in self._open:
            if seat < 0:
                raise ValueError(f"there is no seat {seat}")
            path = self.path(seat)
            created = not os.path.lexists(path)
            descriptor = os.open(path, _APPEND | _NONBLOCK, 0o644)
            try:
                mode = os.fstat(descriptor).st_mode
                if not stat.S_ISREG(mode):
                    raise NotRegularFileError(path, mode)
                if _NONBLOCK:
                    os.set_blocking(descriptor, True)
                size = os.fstat(descriptor).st_size
                if size and _last_byte(descriptor, size) != b"\n":
                    _write_all(descriptor, b"\n")  # end the torn line: it stays evidence
                if created and self._durable:
                    _sync_folder(path.parent)
            except BaseException:
                os.close(descriptor)
                raise
            self._open[seat] = descriptor
        return self._open[seat]


def _write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def _last_byte(descriptor: int, size: int) -> bytes:
    os.lseek(descriptor, size - 1, os.SEEK_SET)  # writes still go to the end: O_APPEND
    return os.read(descriptor, 1)


def _sync_folder(folder: Path) -> None:
    """fsync a folder, so that a file just created in it survives a crash: POSIX only (a
    folder cannot be opened so elsewhere)."""
    if os.name != "posix":
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
