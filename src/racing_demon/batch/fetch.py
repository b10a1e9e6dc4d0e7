"""Reading a log where it is verified: here, or on a Dask worker, which reads the logs it
verifies itself so that the client sends names, not bytes."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any, BinaryIO, cast

from racing_demon.batch.local import no_logs_report
from racing_demon.batch.names import LogName, file_system
from racing_demon.files import open_regular, shown_name
from racing_demon.log.reader import Limits
from racing_demon.verify import Report, Settings, unreadable_report, verify_stream

Fetched = tuple[Report | None, str | None]  # verify_fetched's: the report, the SHA-256

# A log is verified from a snapshot held in memory up to this size, then on disk.
_SNAPSHOT_IN_MEMORY = 8 * 1024 * 1024
_READ_BYTES = 1024 * 1024


def verify_fetched(
    name: LogName, settings: Settings, known: str | None = None
) -> tuple[Report | None, str | None]:
    """Read the log ``name`` here (a path, or a URL that fsspec opens), verify it, and
    return its report and the SHA-256 (hex) of the bytes verified; or, when those bytes
    hash to ``known``, no report (a previous run's is theirs) and that SHA-256.

    At most ``max_file_bytes + 1`` bytes are read: enough for the reader to refuse a
    larger file exactly as it refuses the file itself. They are verified from a snapshot
    (in memory up to 8 MiB, then a temporary file), so the SHA-256 is that of the very
    bytes verified, and the reader works on a local seekable file whatever the source.
    A log that cannot be read is UNREADABLE, with the system's or fsspec's reason; a
    folder is "no logs found under DIR", as ``verify_named`` says.
    """
    source = shown_name(name)
    with tempfile.SpooledTemporaryFile(max_size=_SNAPSHOT_IN_MEMORY) as snapshot:
        try:
            opened = _open_where_verified(name)
            if opened is None:
                return no_logs_report(source, settings), None
            with opened as stream:
                sha256 = _copy(stream, cast(BinaryIO, snapshot), settings.limits)
        except _ReadFailed as error:
            return unreadable_report(source, settings, f"cannot read {source}: {error}"), None
        if sha256 == known:
            return None, sha256
        snapshot.seek(0)
        return verify_stream(cast(BinaryIO, snapshot), settings, source), sha256


class _ReadFailed(Exception):
    """Why a log could not be opened or read, in words."""


def _open_where_verified(name: LogName) -> BinaryIO | None:
    """``name`` opened for reading, or None for a folder."""
    if isinstance(name, Path):
        return _open_local(name)
    try:
        files, path, local = file_system(name)
    except (ValueError, ImportError) as error:
        raise _ReadFailed(str(error)) from error
    if local:
        # Opened as any local path is, so that a named pipe never blocks the worker.
        return _open_local(Path(path))
    try:
        stream: BinaryIO = files.open(path, "rb")
    except Exception as error:  # fsspec's backends raise their own kinds, not only OSError
        if _is_folder(files, path):
            return None
        raise _ReadFailed(_words(error)) from error
    return stream


def _open_local(path: Path) -> BinaryIO | None:
    if path.is_dir():
        return None
    try:
        return open_regular(path)
    except OSError as error:
        raise _ReadFailed(_words(error)) from error


def _is_folder(files: Any, path: str) -> bool:
    try:
        return bool(files.isdir(path))
    except Exception:  # a file system that cannot say: it is no folder we can list
        return False


def _words(error: BaseException) -> str:
    """An error as the driver words an unreadable log: the system's reason alone."""
    strerror = getattr(error, "strerror", None)
    return strerror if isinstance(strerror, str) else str(error) or type(error).__name__


def _copy(stream: BinaryIO, snapshot: BinaryIO, limits: Limits) -> str:
    """Copy the first ``max_file_bytes + 1`` bytes of ``stream``; their SHA-256."""
    digest = hashlib.sha256()
    left = limits.max_file_bytes + 1
    try:
        while left > 0 and (chunk := stream.read(min(left, _READ_BYTES))):
            digest.update(chunk)
            snapshot.write(chunk)
            left -= len(chunk)
    except Exception as error:  # as when opening: a remote file system's own kinds too
        raise _ReadFailed(_words(error)) from error
    return digest.hexdigest()


def verify_on_worker(item: tuple[LogName, str | None], settings: Settings) -> Fetched:
    name, known = item
    return verify_fetched(name, settings, known)
