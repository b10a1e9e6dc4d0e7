"""The verification report's JSON document, written and read back in one place.

``report_document`` writes a ``Report`` as every JSON report carries it (``verify --json``'s
``reports``, a ``--report`` line, ``audit --json``'s ``verification``, ``recover --json``,
the viewer's verdict: schemas/verification-report.schema.json); ``report_from_document``
reads such a document back into the same ``Report``, as a resumed batch does with the
lines of its report file. The two sit side by side so that a field added to one is added
to the other, and a test reads back every sample game's report.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from racing_demon.game.flow import FlowCode
from racing_demon.log.reader import ReadCode
from racing_demon.outcomes import exit_code_of
from racing_demon.verify import Finding, Report, RulesFacts, Step, Verdict, VerifyCode
from racing_demon.verify.assurance import Assurance, assurance_of

# How ``RulesFacts.note`` words a custom document named like a built-in profile.
_NOTE_PREFIX = "named like the built-in profile "
_NOTE_SUFFIX = ", but not it"


def report_document(report: Report) -> dict[str, Any]:
    """``report`` as every JSON report writes it (schemas/verification-report.schema.json);
    ``report_from_document`` reads it back."""
    finding = report.finding
    return {
        "source": report.source,
        "verdict": report.verdict.value,
        "exit_code": exit_code_of(report),
        "step": None
        if report.step is None
        else {"number": report.step.value, "title": report.step.title},
        "finding": None if finding is None else finding_document(finding),
        "records": report.records,
        "not_replayed": report.not_replayed,
        "fast": report.fast,
        "pinned": report.pinned,
        "unsafe_unpinned": report.unsafe_unpinned,
        "game": report.game,
        "profile": report.profile,
        "rules": None if report.rules is None else rules_document(report.rules),
        "format_version": report.format_version,
        "keyed": report.keyed,
        "accepted_by": list(report.accepted_by)
        if report.keyed and (report.format_version or 0) >= 2
        else None,
        "assurance": _assurance_document(assurance_of(report)),
        "tournament_plan": report.tournament_plan,
        "hands": [list(scores) for scores in report.hands],
        "totals": list(report.totals),
        "winners": list(report.winners),
        "final_reason": report.final_reason,
    }


def rules_document(rules: RulesFacts) -> dict[str, Any]:
    """The rules as a report's JSON shows them (``$defs/rules`` of the report's schema)."""
    return {
        "name": rules.name,
        "version": rules.version,
        "sha256": rules.sha256,
        "builtin": rules.builtin,
        "pinned": rules.pinned,
        "note": rules.note,
        "differences": list(rules.differences),
    }


def _assurance_document(assurance: Assurance | None) -> dict[str, Any] | None:
    if assurance is None:
        return None
    return {
        "proved": [guarantee.value for guarantee, _ in assurance.proved],
        "not_proved": [
            {"guarantee": guarantee.value, "why": why} for guarantee, why in assurance.not_proved
        ],
    }


def finding_document(finding: Finding) -> dict[str, Any]:
    """A finding as every JSON report writes it (schemas/verification-report.schema.json)."""
    return {
        "code": finding.code.value,
        "message": finding.message,
        "line": finding.line,
        "seq": finding.seq,
        "player": finding.seat,
        "move": finding.move,
        "rule": finding.rule,
        "expected": finding.expected,
        "found": finding.found,
    }


def report_from_document(document: Mapping[str, Any]) -> Report:
    """``report_document`` undone: the ``Report`` that ``document`` was written from. The
    seats and every schema problem, which the document does not hold, come from its
    ``cache`` entry when it is a ``--resume`` line (``report.batch.cache_line``; absent:
    none)."""
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
