"""Resuming a batch: the verdict cache that ``verify --report FILE --resume`` keeps.

Like a build tool's log, the report file is written append-only, one line as each log
is done, so an interrupted run loses nothing. Under ``--resume`` each line also carries
a ``cache`` object (``cache_entry``): the SHA-256 of the bytes verified, the ``cache_key``
of the verifier and settings, and what the report's text needs beyond the document (the
seats, every schema problem). A resumed run reads the file back (``read_cache``), keeps
for each log its last line, and reuses that line's report when the log's bytes hash the
same under the same key and the verdict is ``reusable``; every other log is verified
again (``iter_resumed``, which hashes each log where it is verified) and gets a new line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racing_demon.batch import version
from racing_demon.batch.dask import DEFAULT_SCHEDULER_TIMEOUT, on_dask
from racing_demon.batch.fetch import verify_on_worker
from racing_demon.batch.local import run_here
from racing_demon.batch.names import LogName
from racing_demon.errors import RacingDemonError
from racing_demon.files import open_regular, shown_name
from racing_demon.log.reader import Limits
from racing_demon.report_document import report_from_document
from racing_demon.verify import Report, Settings, Verdict, VerifyCode
from racing_demon.verify.settings import Equations

# -- resuming: the verdict cache ----------------------------------------------------------

# Bump when a verdict, a finding or a report field could differ for the same bytes and
# settings: a cached verdict is reused only under the same package version and this.
VERIFIER_FORMAT = 1
_KEY_DOMAIN = b"racing-demon verdict cache\n"


def cache_key(settings: Settings) -> str:
    """What a cached verdict must have been computed under to be reused, as 64 hex: the
    verifier (package version and ``VERIFIER_FORMAT``) and every field of ``settings``
    (the pinned key and rules, ``fast``, ``unsafe_unpinned``, the game id, the secret,
    the limits), hashed, so that a report file that holds it never reveals the secret."""
    values: dict[str, object] = {"verifier": [version.package_version(), VERIFIER_FORMAT]}
    for setting in dataclasses.fields(settings):
        value = getattr(settings, setting.name)
        if setting.name == "equations" and value is Equations.CHECKED:
            continue  # as every key was before the setting came: those verdicts were checked
        if setting.name == "failed_equations":
            if not value:
                continue  # likewise
            value = sorted(b"".join(failed).hex() for failed in value)
        if isinstance(value, bytes):
            value = value.hex()
        elif isinstance(value, Limits):
            value = dataclasses.asdict(value)
        values[setting.name] = value
    text = json.dumps(values, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(_KEY_DOMAIN + text.encode()).hexdigest()


def reusable(report: Report) -> bool:
    """Whether ``report``'s verdict is a function of the log's bytes and the settings
    alone, so that the same bytes verified under the same key get it again: not a log
    that could not be read (the file may be back), nor one that changed while read."""
    if report.verdict is Verdict.UNREADABLE:
        return False
    return report.finding is None or report.finding.code != VerifyCode.FILE_CHANGED


@dataclass(frozen=True, slots=True)
class Resumed:
    """One log of a resumed batch: its report, or None when its bytes were ``known``'s
    (the caller has that report), and the SHA-256 of the bytes verified (None when it
    could not be read)."""

    source: str
    report: Report | None
    sha256: str | None


def iter_resumed(
    logs: Sequence[LogName],
    settings: Settings,
    known: Mapping[str, str],
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    timeout: float = DEFAULT_SCHEDULER_TIMEOUT,
) -> Generator[Resumed, None, None]:
    """``iter_verified``'s batch (or ``iter_verified_on_dask``'s, given ``scheduler``),
    resuming one that was interrupted: ``known`` maps a log's source (``shown_name``) to
    the SHA-256 of the bytes a previous run verified under this ``cache_key``, with a
    ``reusable`` verdict. Every log is read and hashed again where it is verified, and
    verified again unless its bytes hash to what ``known`` says."""
    items = [(name, known.get(shown_name(name))) for name in logs]
    work = functools.partial(verify_on_worker, settings=settings)
    results = (
        run_here(work, items, jobs)
        if scheduler is None
        else on_dask(work, items, scheduler, timeout)
    )
    with contextlib.closing(results):
        for (name, _), (report, sha256) in zip(items, results, strict=True):
            yield Resumed(shown_name(name), report, sha256)


class ResumeError(RacingDemonError):
    """A report file that cannot be resumed: not one ``verify --report`` wrote."""


def cache_entry(report: Report, sha256: str | None, key: str) -> dict[str, Any]:
    """The ``cache`` object of a ``--resume`` report line, beside the report's document
    (no ``sha256`` for a log that could not be read: nothing to reuse)."""
    return {
        "sha256": sha256,
        "key": key,
        "seats": report.seats,
        "problems": [] if report.finding is None else list(report.finding.problems),
    }


@dataclass
class ReportCache:
    """The reusable verdicts of a report file under one key: for each log's source, the
    SHA-256 its last line verified (``known``) and where that line starts."""

    path: Path
    known: dict[str, str] = field(default_factory=dict)
    _offsets: dict[str, int] = field(default_factory=dict)

    def report(self, source: str) -> Report:
        """The report of ``source``'s last line, as the run that wrote it made it."""
        with open_regular(self.path) as stream:
            stream.seek(self._offsets[source])
            return report_from_document(json.loads(stream.readline()))


def read_cache(path: Path, key: str) -> ReportCache:
    """The verdicts of the report file ``path`` reusable under ``key``: for each source,
    its last line's, if that line has a cache entry of ``key`` and a ``reusable`` verdict.

    A torn last line (the run was killed while writing it) is cut off, so that the next
    line appended starts on a line of its own. Any other line that is not a report line
    is a ResumeError: the file is not a report, and appending to it would spoil it.
    """
    cache = ReportCache(path)
    with open_regular(path, writable=True) as stream:
        offset = 0
        for number, line in enumerate(stream, start=1):
            if not line.endswith(b"\n"):
                stream.truncate(offset)
                break
            source, sha256 = _entry(line, number, path, key)
            if sha256 is None:
                cache.known.pop(source, None)  # a newer line says: verify it again
                cache._offsets.pop(source, None)
            else:
                cache.known[source] = sha256
                cache._offsets[source] = offset
            offset += len(line)
    return cache


def _entry(line: bytes, number: int, path: Path, key: str) -> tuple[str, str | None]:
    """The source of a report line, and its SHA-256 if its verdict can be reused."""
    try:
        document = json.loads(line)
        source = document["source"]
        if not isinstance(source, str):
            raise TypeError("source is no string")
        report = report_from_document(document)
    except (ValueError, LookupError, TypeError) as error:
        raise ResumeError(
            f"{path} line {number} is not a verify --report line ({error}): "
            "give --resume a report file that verify wrote, or a new one"
        ) from error
    cache = document.get("cache")
    if not isinstance(cache, Mapping) or cache.get("key") != key or not reusable(report):
        return source, None
    sha256 = cache.get("sha256")
    return source, sha256 if isinstance(sha256, str) else None
