"""Opening the files a user names, so that no input can block and no output destroys one.

Every file the package reads or writes goes through here (docs/threat-model.md §3):

- ``open_regular`` opens an input without waiting: a named pipe or a device is refused
  before anything blocks on it, because it could keep a command waiting for ever and
  cannot be read twice.
- ``read_standard_input`` reads a log named ``-`` once, bounded, into an ``InMemoryLog``
  that ``open_log`` opens as often as a regular file: a pipe cannot be read twice.
- ``Output`` creates an output without ever replacing an existing regular file unless
  asked (``replace``), and then only once the new contents are complete, so a failed
  write leaves the old file as it was. ``refuse_inputs`` refuses an output that is one
  of the command's inputs, before anything is read. ``OutputWriter`` writes one line by
  line, for any caller (the command line, a server): a write that fails is a
  ``WriteFailed`` naming the option and the file.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Final

from racing_demon.errors import RacingDemonError
from racing_demon.printing import printable
from racing_demon.wording import plural

STDOUT: Final = "-"
STDIN: Final = "-"
STDIN_SOURCE: Final = "<stdin>"  # how a log read from standard input is named, as Python does

# Not on every system: where there is no O_NONBLOCK there are no named pipes to block on;
# O_BINARY exists only where a descriptor could otherwise translate line ends (Windows).
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_CREATE_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotRegularFileError(RacingDemonError, OSError):
    """An input that is no regular file; ``strerror`` says what it is."""

    def __init__(self, path: Path, mode: int) -> None:
        kind = next((name for test, name in _KINDS if test(mode)), "not a file")
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", str(path))


def open_regular(path: Path, *, writable: bool = False) -> BinaryIO:
    """``path`` opened for binary reading (and writing, if ``writable``), or
    NotRegularFileError for anything else.

    The open itself does not block: a named pipe opened without O_NONBLOCK waits for a
    writer, possibly for ever. The check is made on the open file, so nothing swapped in
    between a check and the open is read.
    """
    descriptor = os.open(path, (os.O_RDWR if writable else os.O_RDONLY) | _NONBLOCK | _BINARY)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, mode)
        if _NONBLOCK:
            os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "r+b" if writable else "rb")
    except BaseException:
        os.close(descriptor)
        raise


def open_to_append(path: Path) -> BinaryIO:
    """The existing regular file ``path`` opened to add to its end (a resumed report)."""
    stream = open_regular(path, writable=True)
    stream.seek(0, os.SEEK_END)
    return stream


@dataclass(frozen=True)
class InMemoryLog:
    """A log read whole from standard input. The commands read a log more than once (the
    verifier's two passes, audit's replay after the verification), which a pipe cannot
    give, so its bytes are kept; ``str`` is its name in messages and reports."""

    data: bytes = field(repr=False)
    source: str = STDIN_SOURCE

    def __str__(self) -> str:
        return self.source


# A log as the readers take it: a file, or standard input's bytes.
LogFile = Path | InMemoryLog


def read_standard_input(stream: BinaryIO, max_bytes: int) -> InMemoryLog:
    """At most ``max_bytes + 1`` bytes of ``stream``: enough for the reader to refuse a
    larger log exactly as it refuses such a file, and never more in memory."""
    return InMemoryLog(stream.read(max_bytes + 1))


def open_log(log: LogFile) -> BinaryIO:
    """``log`` opened for binary reading from its start: ``open_regular`` for a file."""
    if isinstance(log, InMemoryLog):
        return io.BytesIO(log.data)
    return open_regular(log)


def shown_name(log: LogFile | str) -> str:
    """The name of ``log`` as every output shows it, valid UTF-8 whatever the file system
    holds: each byte of a file name that is not UTF-8 is written ``\\xHH``, as Python
    writes bytes, where ``str(path)`` would hold a lone surrogate that no UTF-8 encoder
    (a JSON document's, a terminal's) accepts. ``printing.printable`` shows such a
    surrogate the same way, so a name is spelt alike in text, JSON and messages."""
    return str(log).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


# A key, a passphrase, a profile or a claims file: none comes near this.
SMALL_FILE_BYTES: Final = 1024 * 1024


def read_regular(path: Path, max_bytes: int = SMALL_FILE_BYTES) -> bytes:
    """The bytes of regular file ``path``; OSError (EFBIG) if it holds more than
    ``max_bytes``, which is read no further."""
    with open_regular(path) as stream:
        data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise OSError(errno.EFBIG, f"larger than {plural(max_bytes, 'byte')}", str(path))
    return data


class OutputError(RacingDemonError):
    """An output that must not be written: it exists, or it is one of the inputs."""


@dataclass
class Output:
    """A file a command writes, or standard output for ``-``.

    A regular file that exists is refused unless ``replace``; with ``replace`` the new
    contents are written beside it and moved over it only by ``commit``, so a write that
    fails keeps the old file. A new file is created exclusively (a file that appears in
    between is not replaced) and written in place, so what is written is there at once,
    even if the command is stopped. A name that exists but is not a regular file (a
    terminal, a pipe, ``/dev/null``, or a link to one, such as ``/dev/stdout``) is written
    to as it is, unless ``regular_only``: a private key is only ever a new or replaced
    regular file. Write errors surface as OSError; ``discard`` removes what this output
    created, even after ``commit``.

    A new file gets ``mode`` less the umask, and a replaced file keeps the permissions of
    the one it replaces, as editors do; ``exact_mode`` gives ``mode`` whatever the umask
    or the old file (a private key must be 0600, nothing else).
    """

    path: Path | None  # None: standard output
    replace: bool = False
    mode: int = 0o644
    exact_mode: bool = False
    regular_only: bool = False
    _stream: BinaryIO | None = field(default=None, init=False, repr=False)
    _staged: str | None = field(default=None, init=False, repr=False)
    _created: bool = field(default=False, init=False, repr=False)

    @classmethod
    def named(cls, name: str, *, replace: bool = False, mode: int = 0o644) -> Output:
        return cls(None if name == STDOUT else Path(name), replace, mode)

    @property
    def shown(self) -> str:
        return "standard output" if self.path is None else str(self.path)

    @property
    def is_stdout(self) -> bool:
        return self.path is None

    @property
    def replaces(self) -> bool:
        """Whether the contents are staged beside an existing file, to replace it."""
        return self._staged is not None

    @property
    def created(self) -> bool:
        """Whether this output created its file (which ``discard`` would remove)."""
        return self._created

    def check_free(self) -> None:
        """OutputError if this would replace an existing file without ``replace``, or write
        through a link that leads nowhere; with ``regular_only``, if the name is taken by
        anything but a regular file."""
        if self.path is None:
            return
        try:
            link = os.lstat(self.path)
        except FileNotFoundError:
            return
        try:
            info: os.stat_result | None = os.stat(self.path)
        except FileNotFoundError:
            info = None  # a link to nothing: writing would create a file somewhere else
        regular = info is not None and stat.S_ISREG(info.st_mode)
        if self.regular_only and not (regular and stat.S_ISREG(link.st_mode)):
            raise OutputError(f"{self.path} exists and is not a regular file: not writing there")
        if info is None:
            raise OutputError(f"{self.path} is a link to nothing: not writing through it")
        if regular and not self.replace:
            raise OutputError(f"not replacing existing {self.path} (use --force to replace it)")

    def open(self) -> BinaryIO:
        """The stream to write to; OutputError or OSError if it cannot be opened."""
        assert self._stream is None, "an output is opened once"
        if self.path is None:
            self._stream = sys.stdout.buffer
            return self._stream
        try:
            info: os.stat_result | None = os.stat(self.path)
        except FileNotFoundError:
            info = None
        if info is not None and not stat.S_ISREG(info.st_mode) and not self.regular_only:
            self._stream = open(self.path, "wb")  # noqa: SIM115 (closed by commit/discard)
        elif info is not None and self.replace and stat.S_ISREG(info.st_mode):
            descriptor, self._staged = tempfile.mkstemp(
                dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"
            )
            os.fchmod(descriptor, self.mode if self.exact_mode else stat.S_IMODE(info.st_mode))
            self._stream = os.fdopen(descriptor, "wb")
        else:
            try:
                # O_EXCL: a file made by somebody else since check_free is never replaced.
                descriptor = os.open(self.path, _CREATE_NEW, self.mode)
            except FileExistsError as error:
                raise OutputError(
                    f"not replacing existing {self.path} (use --force to replace it)"
                ) from error
            self._created = True
            if self.exact_mode:
                os.fchmod(descriptor, self.mode)
            self._stream = os.fdopen(descriptor, "wb")
        return self._stream

    def commit(self) -> None:
        """Flush what was written to disk and, when replacing, move it into place."""
        stream = self._stream
        if stream is None:
            return
        stream.flush()
        if self.path is None:
            return
        if self._created or self._staged is not None:
            os.fsync(stream.fileno())
        stream.close()
        if self._staged is not None:
            os.replace(self._staged, self.path)
            self._staged = None

    def discard(self) -> None:
        """Close the output after a failure and remove what this output created."""
        stream, self._stream = self._stream, None
        if stream is None or self.path is None:
            return
        with contextlib.suppress(OSError):
            stream.close()
        doomed = self._staged if self._staged is not None else self.path if self._created else None
        if doomed is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(doomed)


def refuse_inputs(output: Output, inputs: Iterable[Path]) -> None:
    """OutputError if ``output`` names one of ``inputs`` (the same file, however spelt)."""
    if output.path is None:
        return
    try:
        written = os.stat(output.path)
    except OSError:
        return  # what does not exist yet is no input
    for path in inputs:
        try:
            read = os.stat(path)
        except OSError:
            continue
        if (read.st_dev, read.st_ino) == (written.st_dev, written.st_ino):
            raise OutputError(
                f"the output {output.path} is also an input ({path}): it would be destroyed"
            )


class WriteFailed(RacingDemonError):
    """An output that could not be written (a full disk, a closed device), in one line
    naming the option and the file: the command line's exit 2."""


class OutputWriter:
    """Writes to an ``Output`` as a context: each ``write`` is flushed at once, so what is
    written is there even if the caller is then stopped.

    When the context ends normally the output is committed, unless the caller marked it
    ``incomplete`` (an interrupted batch). A replaced file is replaced only by a complete
    output: otherwise the old file stays and the new contents are dropped. A new file keeps
    the whole lines it holds however the context ends, unless a write to it failed; then,
    or when nothing was written, it is removed. A failed write is a ``WriteFailed``; a
    reader that closed the pipe is no write error: BrokenPipeError passes through, for the
    command line to end quietly.
    """

    def __init__(self, output: Output, option: str) -> None:
        self.output = output
        self.incomplete = False
        self._option = option  # named in messages: "cannot write --report r.jsonl: ..."
        self._stream: BinaryIO | None = None
        self._written = self._failed = False

    def __enter__(self) -> OutputWriter:
        try:
            self._stream = self.output.open()
        except OutputError as error:
            raise WriteFailed(f"{self._option}: {printable(str(error))}") from error
        except BrokenPipeError:
            raise
        except OSError as error:
            raise self._error(error) from error
        return self

    def write(self, data: bytes) -> None:
        assert self._stream is not None
        try:
            self._stream.write(data)
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            self._failed = True
            raise self._error(error) from error
        self._written = True

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        complete = error is None and not self.incomplete
        keep_lines = self.output.created and self._written and not self._failed
        if not (complete or keep_lines):
            self.output.discard()
            return
        try:
            self.output.commit()
        except BrokenPipeError:
            if error is None:
                raise
        except OSError as failure:
            self.output.discard()
            if error is None:
                raise self._error(failure) from failure

    def _error(self, error: OSError) -> WriteFailed:
        why = error.strerror or str(error)
        return WriteFailed(f"cannot write {self._option} {printable(self.output.shown)}: {why}")
