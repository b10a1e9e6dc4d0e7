"""Which logs a command names: a folder stands for the logs under it, a URL for those at it."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path, PurePath, PurePosixPath
from typing import Any

from racing_demon.log.receipts import RECEIPTS_SUFFIX

LOG_SUFFIX = ".jsonl"
# A log as a Dask worker reads it: a path, or a URL that fsspec opens (s3://, file://...).
LogName = Path | str
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def collect_logs(paths: Iterable[Path]) -> list[Path]:
    """The logs ``paths`` name, in their order: a folder stands for every ``*.jsonl``
    file under it but the players' ``*.receipts.jsonl``, recursively, in natural order
    (``natural_key``); anything else stands for itself.

    Links to folders are not followed (no cycles); a link to a file is. A folder that holds
    no log, or one that cannot be listed, is kept as itself, so verifying it reports it
    UNREADABLE ("no logs found under DIR", or why it cannot be listed): a batch never
    passes by verifying nothing.
    """
    logs: list[Path] = []
    for path in paths:
        if path.is_dir():
            logs += _logs_under(path) or [path]
        else:
            logs.append(path)
    return logs


def _logs_under(folder: Path) -> list[Path]:
    found: list[Path] = []

    def unlisted(error: OSError) -> None:
        found.append(Path(error.filename))

    for top, _, names in os.walk(folder, onerror=unlisted):
        for name in names:
            # A receipts file sits beside its log (simulate writes them so): not a log.
            if name.endswith(LOG_SUFFIX) and not name.endswith(RECEIPTS_SUFFIX):
                path = Path(top, name)
                # Not a pipe or a device: opening one would wait for a writer. A dangling
                # link stays, to be reported.
                if path.is_file() or not path.exists():
                    found.append(path)
    return sorted(found, key=natural_key)


def is_url(name: str) -> bool:
    """Whether a LOG names a URL (``scheme://...``) rather than a path."""
    return _URL.match(name) is not None


def collect_names(names: Iterable[str]) -> list[LogName]:
    """``collect_logs`` of names that may be URLs, for a Dask cluster's workers to read:
    a URL of a folder stands for the logs under it as a path's folder does, listed with
    fsspec here (a ``file://`` folder as a local one), each named by its URL."""
    logs: list[LogName] = []
    for name in names:
        logs += _logs_at_url(name) if is_url(name) else collect_logs([Path(name)])
    return logs


def file_system(url: str) -> tuple[Any, str, bool]:
    """fsspec's file system for ``url``, the path in it, and whether it is this machine's
    own; ValueError for an unknown protocol, ImportError when its package is missing."""
    import fsspec  # type: ignore[import-untyped]  # only here: the dask extra has it
    from fsspec.implementations.local import LocalFileSystem  # type: ignore[import-untyped]

    files, path = fsspec.core.url_to_fs(url)
    return files, path, isinstance(files, LocalFileSystem)


def _logs_at_url(url: str) -> list[LogName]:
    files, path, local = file_system(url)
    if local:
        if not Path(path).is_dir():
            return [url]
        return [files.unstrip_protocol(str(log)) for log in _logs_under(Path(path))] or [url]
    if not files.isdir(path):
        return [url]
    found = [
        log
        for log in files.find(path)
        if log.endswith(LOG_SUFFIX) and not log.endswith(RECEIPTS_SUFFIX)
    ]
    found.sort(key=lambda log: natural_key(PurePosixPath(log)))
    return [files.unstrip_protocol(log) for log in found] or [url]


_DIGITS = re.compile(r"([0-9]+)")


def natural_key(path: PurePath) -> tuple[tuple[tuple[str | int, ...], str], ...]:
    """Sorts paths component by component, each by its runs of digits as numbers and the
    rest as text, as people number files and as ``ls -v`` sorts them: ``g2`` before
    ``g10``, ``round-9/`` before ``round-10/``. Names that differ only in leading zeros
    (``g2``, ``g02``) follow their text, so the order is total."""
    return tuple(
        (
            tuple(int(run) if index % 2 else run for index, run in enumerate(_DIGITS.split(part))),
            part,
        )
        for part in path.parts
    )
