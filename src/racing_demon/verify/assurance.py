"""What a verified log proves, and what still rests on the table's word.

A VERIFIED verdict means every check held, but what the checks can prove depends on the
log: its format version, whether its players sign, whether it is a tournament's table, how
it was verified (docs/threat-model.md §1). Every report says both, in these terms, so that
nobody reads more into a verdict than the log holds: an unkeyed game's deal is the table's
word however well it verifies. Each sentence claims exactly what the checks prove, no
more: what a log alone cannot show (a second history a player was shown, when a move
arrived) is said not proved, with what would show it.

``--require`` (``Settings.required``) turns a missing guarantee into a refusal
(``REQUIREMENT_UNMET``), so that an archive can refuse a log re-expressed in a weaker form
(a keyed v2 log rewritten as unkeyed v1 by the table that signed it).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable
from typing import NamedTuple

from racing_demon.verify.report import Finding, Report, Verdict, VerifyCode


class Guarantee(enum.StrEnum):
    """The guarantees a log can give beyond legal moves and right scores, which every
    verified log proves."""

    TABLE_SIGNED = "table_signed"  # the pinned table signed every record's body
    DEAL_BOUND = "deal_bound"  # the deal derives from every seat's bound entropy (v2, keyed)
    MOVES_SIGNED = "moves_signed"  # every submission is its seat's key's (keyed)
    VIEWS_BOUND = "views_bound"  # every submission names a record of this log (v2, keyed)
    RESULT_ACCEPTED = "result_accepted"  # every seat signed the final record (v2, keyed)
    ONE_HISTORY = "one_history"  # no player was shown another history: never by one log
    ARRIVALS = "arrivals"  # when each move arrived: never by the log alone


_PROVED = {
    Guarantee.TABLE_SIGNED: "the pinned table signed the body of every record",
    # The dealer can still abandon a game and start another (docs/deal-spec.md), which no
    # one log shows: the sentence says so rather than "nobody could choose the deal". Nor
    # does the log show whose the listed keys are: a dealer holding one can try keys after
    # committing, each signing other entropy.
    Guarantee.DEAL_BOUND: "every seat's entropy is its signature, under the key the genesis "
    "lists for it, over the dealer's commitment, and the packs derive from the secret and "
    "every seat's entropy: the secret was fixed before any entropy existed, so no seat could "
    "foresee the deal, and a dealer that holds none of the listed keys could not steer it "
    "(only abandon the game, in its players' sight); whose each key is, the log does not show",
    Guarantee.MOVES_SIGNED: "every submission is signed by the key the genesis lists for its seat",
    # `seen` proves that the records players named are this log's, not that nobody was
    # shown a second history: that is ONE_HISTORY, which no log alone proves.
    Guarantee.VIEWS_BOUND: "every submission names, under its player's signature, a record "
    "of this log as the last one its player had seen",
    Guarantee.RESULT_ACCEPTED: "every seat signed, under the key the genesis lists for it, "
    "its acceptance of the final record: the result and the revealed secret",
}

_ARRIVALS = (
    "when each move arrived, and whether one was dropped or refused without cause, rests on "
    "the table's clock: players' receipts show it (audit --receipts)"
)
_ONE_HISTORY = (
    "that no player was shown another history: one log cannot show it; a copy of another "
    "that the table signed proves a fork (audit --against)"
)
_NEVER = {Guarantee.ONE_HISTORY: _ONE_HISTORY, Guarantee.ARRIVALS: _ARRIVALS}
_UNPINNED = (
    "no --table-key: the players' keys are the file's own claim, so their signatures prove "
    "nothing about who played"
)


class Assurance(NamedTuple):
    """What one log's verification proved, and each guarantee it did not, with why."""

    proved: tuple[tuple[Guarantee, str], ...]
    not_proved: tuple[tuple[Guarantee, str], ...]


_FAST = "--fast: players' signatures on moves not checked"
_FAST_VIEWS = "--fast: the records players named as seen are under signatures not checked"
_FAST_TABLE_SIGNED = (
    "the pinned table signed the genesis and the final record, and the chain binds every "
    "other record to them (--fast: the other records' table signatures not checked)"
)


def _tournament_deal(plan: str) -> str:
    """Why a tournament table's deal is not bound by its log: the seats' entropy, however
    well signed, deals nothing there (docs/tournament.md)."""
    return (
        f"a tournament table: the packs are those of plan {plan} (named in the genesis), "
        "from the organiser's secret and the plan's entropy, not the seats' entropy; the deal "
        "rests on the plan and its contributions, and how many of those were signed the log "
        "cannot show: racing-demon tournament check PLAN does"
    )


def checks_held(report: Report) -> bool:
    """Whether every check held: VERIFIED or UNPINNED, or refused only for lacking a
    guarantee that ``--require`` asked for."""
    if report.verdict in (Verdict.VERIFIED, Verdict.UNPINNED):
        return True
    finding = report.finding
    return finding is not None and finding.code is VerifyCode.REQUIREMENT_UNMET


def assurance_of(report: Report) -> Assurance | None:
    """What ``report``'s log proves; None unless every check held (``checks_held``)."""
    if not checks_held(report):
        return None
    version, keyed = report.format_version, report.keyed
    holds: dict[Guarantee, str | None] = {}  # None: proved; else why not
    if report.pinned:
        holds[Guarantee.TABLE_SIGNED] = None
    else:
        holds[Guarantee.TABLE_SIGNED] = (
            "no --table-key: nothing proves the table wrote this log"
            + ("" if report.unsafe_unpinned else " (--unsafe-unpinned accepts that)")
        )
    if report.tournament_plan is not None:
        holds[Guarantee.DEAL_BOUND] = _tournament_deal(report.tournament_plan)
    elif not keyed:
        holds[Guarantee.DEAL_BOUND] = (
            "the table wrote every seat's entropy: the deal rests on its word"
        )
    else:
        holds[Guarantee.DEAL_BOUND] = (
            None
            if version != 1
            else "format v1: the entropy is not bound to the commitment, so nothing shows "
            "that the commitment came first"
        )
    if not keyed:
        holds[Guarantee.MOVES_SIGNED] = "no player signs: who moved rests on the table's word"
    else:
        holds[Guarantee.MOVES_SIGNED] = _FAST if report.fast else None
    if version == 1:
        holds[Guarantee.VIEWS_BOUND] = (
            "format v1: submissions do not name the history their players saw"
        )
        holds[Guarantee.RESULT_ACCEPTED] = "format v1: players cannot accept the result"
    elif not keyed:
        holds[Guarantee.VIEWS_BOUND] = "the records players saw rest on the table's word"
        holds[Guarantee.RESULT_ACCEPTED] = "no player signs: nobody accepted the result"
    else:
        # A player names what it saw inside its signed statement: unchecked, it names nothing.
        holds[Guarantee.VIEWS_BOUND] = _FAST_VIEWS if report.fast else None
        declined = [seat for seat in range(report.seats) if seat not in report.accepted_by]
        holds[Guarantee.RESULT_ACCEPTED] = (
            None
            if not declined
            else f"seat{'s' if len(declined) > 1 else ''} "
            f"{', '.join(map(str, declined))} did not accept the result"
        )
    if not report.pinned:
        # Without the table's key the file may be anybody's, the players' keys with it.
        for guarantee in (
            Guarantee.DEAL_BOUND,
            Guarantee.MOVES_SIGNED,
            Guarantee.VIEWS_BOUND,
            Guarantee.RESULT_ACCEPTED,
        ):
            if holds[guarantee] is None:
                holds[guarantee] = _UNPINNED
    holds |= _NEVER
    proved = dict(_PROVED)
    if report.fast:
        proved[Guarantee.TABLE_SIGNED] = _FAST_TABLE_SIGNED
    return Assurance(
        tuple((guarantee, proved[guarantee]) for guarantee, why in holds.items() if why is None),
        tuple((guarantee, why) for guarantee, why in holds.items() if why is not None),
    )


class Requirement(enum.StrEnum):
    """What ``verify --require`` can ask of a log: a guarantee it must prove (every one but
    those no log proves: ``one_history``, ``arrivals``), or a form it must have, so that a
    log rewritten in a weaker form is refused even when its verification skips a check
    (``--fast``)."""

    TABLE_SIGNED = Guarantee.TABLE_SIGNED.value
    DEAL_BOUND = Guarantee.DEAL_BOUND.value
    MOVES_SIGNED = Guarantee.MOVES_SIGNED.value
    VIEWS_BOUND = Guarantee.VIEWS_BOUND.value
    RESULT_ACCEPTED = Guarantee.RESULT_ACCEPTED.value
    KEYED = "keyed"  # every seat lists a key in the genesis
    V2_OR_LATER = "v2_or_later"  # format version 2 or later


class RequirementError(ValueError):
    """A name that is no requirement: the message lists the names there are."""


def requirement_named(name: str) -> Requirement:
    """The requirement ``name`` spells (``-`` for ``_`` too: ``v2-or-later``)."""
    spelt = name.replace("-", "_")
    if spelt in tuple(Requirement):
        return Requirement(spelt)
    names = ", ".join(Requirement)
    for guarantee, why in _NEVER.items():
        if spelt == guarantee:
            raise RequirementError(f"no log proves {guarantee}: {why}; give one of {names}")
    raise RequirementError(f"{name!r} is no requirement: give one of {names}")


def unmet(report: Report, required: Iterable[Requirement]) -> tuple[tuple[Requirement, str], ...]:
    """Each of ``required`` that ``report``'s log does not meet, with why; none when a
    check failed (such a log proves nothing, and its verdict refuses it already)."""
    assurance = assurance_of(report)
    if assurance is None:
        return ()
    why_not: dict[str, str] = {guarantee.value: why for guarantee, why in assurance.not_proved}
    if not report.keyed:
        why_not[Requirement.KEYED] = "no seat lists a key: the table signs for every seat"
    if report.format_version == 1:
        why_not[Requirement.V2_OR_LATER] = (
            "format v1: no entropy bound to the commitment, no history named, no acceptance"
        )
    return tuple(
        (requirement, why_not[requirement])
        for requirement in dict.fromkeys(required)
        if requirement in why_not
    )


def with_requirements(report: Report, required: Iterable[Requirement]) -> Report:
    """``report``, refused (DOES_NOT_VERIFY, ``REQUIREMENT_UNMET``) when its log lacks any
    of ``required``: the finding names the first missing one and why, and counts the rest,
    which ``problems`` lists as ``verify -v`` shows them."""
    missing = unmet(report, required)
    if not missing:
        return report
    problems = tuple(f"--require {requirement}: {why}" for requirement, why in missing)
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    finding = Finding(VerifyCode.REQUIREMENT_UNMET, problems[0] + more, problems=problems)
    return dataclasses.replace(report, verdict=Verdict.DOES_NOT_VERIFY, finding=finding)
