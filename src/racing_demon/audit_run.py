"""The audit use case: ``run_audit`` does what ``racing-demon audit`` does, for any caller
(the command line, a server), without click.

One call verifies the log (against pinned rules too), gathers the evidence that players'
receipts and other copies of the log give against the table, rebuilds every hand of a
verified log and checks the claims against it, lists its contested plays (``races``),
hands the whole ``Audit`` to an ``AuditReporter`` and returns the exit code. The reporter
(text or JSON, chosen by name in ``racing_demon.report.audit``) decides every word
printed; this module decides what is read and checked.

The log is opened once, whatever the options: one verified pass rebuilds the hands and
the races and gives the evidence the log's table-signed chain. A claim file that is not one is a
``ClaimsError``; a receipts file or copy that cannot be read is an ``AuditUnreadable``
(the command line's exit 2 for each).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from racing_demon.audit import ClaimCheck, HandAudit, Hands, check_claims
from racing_demon.errors import RacingDemonError
from racing_demon.evidence import EvidenceReport, start_evidence
from racing_demon.files import LogFile, read_regular
from racing_demon.log.reader import DEFAULT_LIMITS, Limits
from racing_demon.outcomes import ExitCode, audit_exit_code
from racing_demon.printing import printable
from racing_demon.races import Contest, Races
from racing_demon.replay import Following
from racing_demon.schema import schema_errors
from racing_demon.verify import Report, Settings, Verdict, verify_log

Claim = Mapping[str, int]


class ClaimsError(RacingDemonError):
    """A claim file that cannot be read, is not JSON, or breaks its schema."""


class AuditUnreadable(RacingDemonError):
    """A receipts file or copy of the log that cannot be read: the message names the
    file."""


def read_claims(path: Path) -> list[Claim]:
    """The claims of a claim file (schemas/audit-claims.schema.json)."""
    shown = printable(str(path))
    try:
        document = json.loads(read_regular(path).decode("utf-8"))
    except OSError as error:
        raise ClaimsError(f"cannot read {shown}: {error.strerror}") from error
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ClaimsError(f"{shown} is not JSON: {error}") from error
    problems = schema_errors("audit-claims", document)
    if problems:
        raise ClaimsError(f"{shown}: " + "; ".join(problems))
    claims: list[Claim] = document["claims"]
    return claims


@dataclass(frozen=True, kw_only=True)
class AuditRun:
    """What to audit: ``racing-demon audit``'s options but the reporter's."""

    log: LogFile
    table_key: bytes  # the pinned table's raw public key
    rules: str | None = None  # the pinned rules' digest
    claims: Sequence[Claim] = ()
    receipts: Sequence[Path] = ()  # files of the table's receipts, a player's each
    against: Sequence[Path] = ()  # other copies of the log
    limits: Limits = DEFAULT_LIMITS


@dataclass(frozen=True, kw_only=True)
class Audit:
    """What an audit found: the verification, every hand and every contested play (none
    unless the log verified), each claim's check, and the evidence (None without receipts
    or copies, or when the log could not be read)."""

    report: Report
    hands: tuple[HandAudit, ...]
    checks: tuple[ClaimCheck, ...]
    evidence: EvidenceReport | None
    contests: tuple[Contest, ...] = ()

    @property
    def exit_code(self) -> ExitCode:
        holds = all(check.holds for check in self.checks)
        return audit_exit_code(self.report, holds, self.evidence)


class AuditReporter(Protocol):
    """What an audit prints: ``racing_demon.report.audit`` has the text and JSON ones."""

    def audited(self, audit: Audit) -> None:
        """The audit, once it is whole."""


def audit_log(run: AuditRun) -> Audit:
    """Audit the log ``run`` names; raises AuditUnreadable (docs above).

    The log is opened once: its verification's one pass replays it once, rebuilding the
    hands (``Hands``) and the races (``Races``) from the same snapshots
    (``replay.Following``), and hands its table-signed chain to the evidence
    (``EvidenceGathering``), which read the receipts and opened the copies before it."""
    settings = Settings(table_key=run.table_key, limits=run.limits, rules=run.rules)
    hands, races = Hands(), Races()
    with ExitStack() as files:
        gathering = None
        unreadable = None  # a receipts file or copy, told only if the log can be read
        if run.receipts or run.against:
            try:
                gathering = start_evidence(
                    run.log, run.table_key, run.receipts, run.against, files, run.limits
                )
            except OSError as error:
                unreadable = error
        report = verify_log(
            run.log,
            settings,
            visitors=[Following((hands, races))],
            line_visitors=() if gathering is None else [gathering],
        )
        if report.verdict is Verdict.UNREADABLE:
            return Audit(report=report, hands=(), checks=(), evidence=None)
        try:
            if unreadable is not None:
                raise unreadable
            evidence = None if gathering is None else gathering.report()
        except OSError as error:  # a receipts file or copy unreadable
            shown = printable(str(error.filename or run.log))
            raise AuditUnreadable(f"cannot read {shown}: {error.strerror or error}") from error
    if report.verdict is not Verdict.VERIFIED:
        return Audit(report=report, hands=(), checks=(), evidence=evidence)
    audited = tuple(hands.hands)
    checks = check_claims(audited, run.claims, final_seq=(report.records or 1) - 1)
    contests = tuple(races.contests)
    return Audit(report=report, hands=audited, checks=checks, evidence=evidence, contests=contests)


def run_audit(run: AuditRun, reporter: AuditReporter) -> ExitCode:
    """Audit the log ``run`` names, report it to ``reporter`` and return the exit code
    (``audit_exit_code``'s). Raises AuditUnreadable before anything is reported."""
    audit = audit_log(run)
    reporter.audited(audit)
    return audit.exit_code
