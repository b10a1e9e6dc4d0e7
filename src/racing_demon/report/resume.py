"""``verify --resume``: the ``--report`` file as the cache of the verdicts it holds.

Like a build tool's log, the report file is written append-only, one line as each log
is done, so an interrupted run loses nothing. Under ``--resume`` each line also carries
a ``cache`` object: the SHA-256 of the bytes verified, the ``cache_key`` of the verifier
and settings, and what the report's text needs beyond the document (the seats, every
schema problem). A resumed run reads the file back, keeps for each log its last line,
and reuses that line's report when the log's bytes hash the same under the same key
and the verdict is ``reusable``; every other log is verified again and gets a new line.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racing_demon.batch import reusable
from racing_demon.errors import RacingDemonError
from racing_demon.files import open_regular
from racing_demon.game.flow import FlowCode
from racing_demon.log.reader import ReadCode
from racing_demon.report.verify import report_document
from racing_demon.verify import Finding, Report, RulesFacts, Step, Verdict, VerifyCode

_NOTE_PREFIX = "named like the built-in profile "
_NOTE_SUFFIX = ", but not it"


class ResumeError(RacingDemonError):
    """A report file that cannot be resumed: not one ``verify --report`` wrote."""


def cache_line(report: Report, sha256: str | None, key: str) -> str:
    """One line of a ``--resume`` report file: ``report_line``'s document and its cache
    entry (no ``sha256`` for a log that could not be read: nothing to reuse)."""
    entry = {
        "sha256": sha256,
        "key": key,
        "seats": report.seats,
        "problems": [] if report.finding is None else list(report.finding.problems),
    }
    return json.dumps({**report_document(report), "cache": entry}, separators=(",", ":"))


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


def report_from_document(document: Mapping[str, Any]) -> Report:
    """The ``Report`` whose ``cache_line`` is ``document``: ``report_document`` undone,
    with the seats and schema problems from the cache entry (absent: none)."""
    cache = document.get("cache") or {}
    finding = document["finding"]
    step = document["step"]
    rules = document["rules"]
    accepted_by = document["accepted_by"]
    return Report(
        source=document["source"],
        verdict=Verdict(document["verdict"]),
        step=None if step is None else Step(step["number"]),
        finding=None
        if finding is None
        else Finding(
            _code(finding["code"]),
            finding["message"],
            line=finding["line"],
            seq=finding["seq"],
            seat=finding["player"],
            move=finding["move"],
            rule=finding["rule"],
            expected=finding["expected"],
            found=finding["found"],
            problems=tuple(cache.get("problems", ())),
        ),
        records=document["records"],
        not_replayed=document["not_replayed"],
        fast=document["fast"],
        pinned=document["pinned"],
        unsafe_unpinned=document["unsafe_unpinned"],
        game=document["game"],
        profile=document["profile"],
        format_version=document["format_version"],
        keyed=document["keyed"],
        seats=cache.get("seats", 0),
        accepted_by=() if accepted_by is None else tuple(accepted_by),
        rules=None if rules is None else _rules(rules),
        tournament_plan=document.get("tournament_plan"),
        hands=tuple(tuple(scores) for scores in document["hands"]),
        totals=tuple(document["totals"]),
        winners=tuple(document["winners"]),
        final_reason=document["final_reason"],
    )


def _code(code: str) -> VerifyCode | ReadCode | FlowCode:
    for family in (VerifyCode, ReadCode, FlowCode):
        with contextlib.suppress(ValueError):
            return family(code)
    raise ValueError(f"unknown reason code {code!r}")


def _rules(rules: Mapping[str, Any]) -> RulesFacts:
    note = rules["note"]
    named_like = None
    if isinstance(note, str) and note.startswith(_NOTE_PREFIX) and note.endswith(_NOTE_SUFFIX):
        named_like = note.removeprefix(_NOTE_PREFIX).removesuffix(_NOTE_SUFFIX)
    return RulesFacts(
        name=rules["name"],
        version=rules["version"],
        sha256=rules["sha256"],
        builtin=rules["builtin"],
        pinned=rules["pinned"],
        named_like=named_like,
        differences=tuple(rules["differences"]),
    )
