"""The audit's reports: text and ``audit --json`` (schemas/audit-report.schema.json).

The reporters of ``racing_demon.audit_run.run_audit`` are chosen by name
(``audit_reporter_named``): ``text`` prints the verification's report, every hand and
claim, then the evidence; ``json`` prints one document. Each is given where to print,
``echo(text, to_stderr)``, as the batch's reporters are (``report.batch``).
"""

from __future__ import annotations

import abc
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from racing_demon.audit import ClaimCheck, HandAudit
from racing_demon.audit_run import Audit
from racing_demon.evidence import (
    NAMED_BY,
    RECEIPT_GUARANTEES,
    Entry,
    EvidenceCode,
    EvidenceFinding,
    EvidenceReport,
)
from racing_demon.printing import printable
from racing_demon.races import Contest, contest_document, measured, within_spread
from racing_demon.report.batch import Echo, print_echo
from racing_demon.report.text import Colour, Verbosity, paint
from racing_demon.report.verify import report_text
from racing_demon.report_document import report_document
from racing_demon.wording import plural


def audit_document(
    hands: Sequence[HandAudit],
    checks: Sequence[ClaimCheck],
    verification: Mapping[str, Any],
    evidence: EvidenceReport | None = None,
    contests: Sequence[Contest] = (),
) -> dict[str, Any]:
    """``audit --json`` (schemas/audit-report.schema.json): the same shape whatever the
    verdict; ``hands``, ``contests`` and ``claims`` are empty when the log does not
    verify."""
    return {
        "format": "racing-demon/audit-report/v1",
        "verification": dict(verification),
        "receipts": None if evidence is None else _receipts_document(evidence),
        "evidence": [] if evidence is None else [_finding(f) for f in evidence.findings],
        "hands": [
            {
                "hand": hand.hand,
                "reason": hand.reason,
                "end_seq": hand.end_seq,
                "seats": [
                    {
                        "seat": seat.seat,
                        "name": seat.name,
                        "placed": [{"card": str(card), "seq": seq} for card, seq in seat.placed],
                        "demon_left": [str(card) for card in seat.demon_left],
                        "placed_points": seat.placed_points,
                        "demon_penalty": seat.demon_penalty,
                        "score": seat.score,
                        "claimed_score": seat.claimed_score,
                        "total": seat.total,
                    }
                    for seat in hand.seats
                ],
            }
            for hand in hands
        ],
        "contests": {
            "plays": [contest_document(contest) for contest in contests],
            "measured": measured(contests),
            "within_spread": within_spread(contests),
        },
        "claims": [
            {
                "claim": dict(check.claim),
                "holds": check.holds,
                "expected": check.expected,
                "found": check.found,
                "records": list(check.records),
                "message": check.message,
            }
            for check in checks
        ],
    }


def contests_text(contests: Sequence[Contest]) -> str:
    """The contested plays, one line each, after a line that counts them."""
    if not contests:
        return "no contested play: no move lost a race"
    lines = [
        f"{plural(len(contests), 'contested play')}; of the {measured(contests)} whose seats' "
        f"round trips are both logged, {within_spread(contests)} decided by less than "
        "their spread:"
    ]
    for contest in contests:
        winner = _seat_words(contest.winner_seat, contest.winner_seq, contest.winner_rtt_ms)
        loser = _seat_words(contest.loser_seat, contest.loser_seq, contest.loser_rtt_ms)
        lost = "the move" if contest.loser_card is None else contest.loser_card.display()
        if contest.winner_card is None:
            won = f"the end of the hand {winner} came before {lost} {loser}"
        else:
            won = f"{contest.winner_card.display()} {winner} beat {lost} {loser}"
        lines.append(
            f"  hand {contest.hand}: {won} by {contest.gap_ms} ms"
            + (" (within the spread)" if contest.within_spread else "")
        )
    return "\n".join(lines)


def _seat_words(seat: int, seq: int, rtt_ms: int | None) -> str:
    trip = "round trip not logged" if rtt_ms is None else f"round trip {rtt_ms} ms"
    return f"(seat {seat}, record {seq}, {trip})"


def audit_text(
    hands: Sequence[HandAudit],
    checks: Sequence[ClaimCheck],
    verbosity: Verbosity = Verbosity.NORMAL,
    contests: Sequence[Contest] = (),
) -> str:
    """Every hand, seat by seat, the contested plays (once a hand is there), then each
    claim's verdict; with ``QUIET`` the claims' verdicts only."""
    lines = []
    for hand in hands if verbosity > Verbosity.QUIET else ():
        lines.append(f"hand {hand.hand}: ended by {printable(hand.reason)} (record {hand.end_seq})")
        for seat in hand.seats:
            claimed = (
                ""
                if seat.claimed_score == seat.score
                else f" (the log claims {seat.claimed_score})"
            )
            lines.append(
                f"  seat {seat.seat} {printable(seat.name)}: "
                f"{len(seat.placed)} placed (+{seat.placed_points}), "
                f"{len(seat.demon_left)} demon left ({seat.demon_penalty}): "
                f"score {seat.score}{claimed}, total {seat.total}"
            )
            centre = " ".join(f"{card.display()}#{seq}" for card, seq in seat.placed) or "-"
            lines.append(f"    centre (card#record): {centre}")
            if seat.demon_left:
                lines.append(f"    demon left: {' '.join(c.display() for c in seat.demon_left)}")
    if hands and verbosity > Verbosity.QUIET:
        lines.append(contests_text(contests))
    for check in checks:
        records = ", ".join(map(str, check.records)) or "-"
        verdict = paint("ok   ", Colour.GOOD) if check.holds else paint("WRONG", Colour.BAD)
        lines.append(f"{verdict} {check.message} (records {records})")
    return "\n".join(lines)


def _receipts_document(evidence: EvidenceReport) -> dict[str, Any]:
    scan = evidence.scan
    return {
        "files": list(evidence.receipt_files),
        "against": list(evidence.against),
        "read": evidence.receipts,
        "versions": [
            {"v": v, "read": read, "names": NAMED_BY[v], "proves": RECEIPT_GUARANTEES[v]}
            for v, read in evidence.versions
        ],
        "log": {
            "records": scan.records,
            "finished": scan.finished,
            "damage": scan.damage,
        },
    }


def _entry(entry: Entry | None) -> dict[str, Any] | None:
    if entry is None:
        return None
    return {
        "file": entry.file,
        "line": entry.line,
        "seq": entry.seq,
        "record": entry.record,
        "by": entry.by,
        "t_ms": entry.t_ms,
    }


def _finding(finding: EvidenceFinding) -> dict[str, Any]:
    return {
        "code": finding.code.value,
        "evidence": finding.is_evidence,
        "file": finding.file,
        "line": finding.line,
        "seat": finding.seat,
        "n": finding.n,
        "seq": finding.seq,
        "said": _entry(finding.said),
        "compared": _entry(finding.compared),
        "rule": finding.rule,
        "members": None if finding.members is None else list(finding.members),
        "message": finding.message,
    }


# Findings about a whole line that is no receipt, or of another game, or a copy's line.
_PLACELESS: Final = frozenset(
    {EvidenceCode.RECEIPT_INVALID, EvidenceCode.OTHER_GAME, EvidenceCode.COPY_INVALID}
)


def _runs(findings: Sequence[EvidenceFinding]) -> list[list[EvidenceFinding]]:
    """The findings in order, a run of the same finding (code, file, rule and message, on
    lines one after another: a file of another table's or another game's receipts) as one."""
    runs: list[list[EvidenceFinding]] = []
    for finding in findings:
        if runs and _continues(runs[-1][-1], finding):
            runs[-1].append(finding)
        else:
            runs.append([finding])
    return runs


def _continues(last: EvidenceFinding, finding: EvidenceFinding) -> bool:
    if last.line is None or (finding.code, finding.file) != (last.code, last.file):
        return False
    if finding.line is None:  # the count of the lines past those shown ends their run
        return finding.code is EvidenceCode.RECEIPT_INVALID
    return (finding.rule, finding.message) == (last.rule, last.message)


def _finding_line(run: Sequence[EvidenceFinding]) -> str:
    finding = run[0]
    shown = [item for item in run if item.line is not None]
    message = "; ".join(dict.fromkeys(item.message for item in run))
    if len(shown) > 1:
        first, last = shown[0].line, shown[-1].line
        subject = f"{printable(finding.file)}: {plural(len(shown), 'line')} ({first} to {last})"
    elif finding.code in _PLACELESS:  # their messages do not name the line they are about
        subject = printable(_place(finding.file, finding.line))
        if finding.seat is not None:
            subject += f" (seat {finding.seat} n {finding.n})"
    elif finding.seat is not None:
        subject = f"seat {finding.seat} n {finding.n}"
    elif finding.said is not None:
        subject = f"seq {finding.said.seq}"
    else:
        subject = printable(_place(finding.file, finding.line))
    return f"{finding.code.value:<17} {subject}: {printable(message)}"


def evidence_text(evidence: EvidenceReport, verbosity: Verbosity = Verbosity.NORMAL) -> str:
    """One line per finding (a run of the same finding on one line), what each receipt
    version read proves, then what was compared with what and the verdict (with
    ``QUIET``, that last line only)."""
    lines: list[str] = []
    if verbosity > Verbosity.QUIET:
        lines.extend(_finding_line(run) for run in _runs(evidence.findings))
        lines.extend(
            f"v{v} receipts ({read:,}): {RECEIPT_GUARANTEES[v]}" for v, read in evidence.versions
        )
    scan = evidence.scan
    state = "finished" if scan.finished else "unfinished"
    if scan.damage is not None:
        state = f"a table-signed chain up to there only; {printable(scan.damage)}"
    compared = (
        f"{plural(evidence.receipts, 'receipt')} from {plural(len(evidence.receipt_files), 'file')}"
    )
    if evidence.against:
        compared += f" and {plural(len(evidence.against), 'other copy', 'other copies')} of the log"
    verdict = (
        paint("all agree", Colour.GOOD)
        if evidence.agrees
        else paint(_findings_text(evidence.findings), Colour.BAD)
    )
    lines.append(
        f"receipts: {compared} checked against {plural(scan.records, 'record')} "
        f"({state}): {verdict}"
    )
    return "\n".join(lines)


def _findings_text(findings: Sequence[EvidenceFinding]) -> str:
    """``3 findings, 2 of them evidence against the table``; of one finding, whether it is."""
    proofs = sum(finding.is_evidence for finding in findings)
    if len(findings) == 1:
        return f"1 finding, {'' if proofs else 'no '}evidence against the table"
    return f"{plural(len(findings), 'finding')}, {proofs} of them evidence against the table"


def _place(file: str, line: int | None) -> str:
    return file if line is None else f"{file}:{line}"


class Reporter(abc.ABC):
    """What both audit reporters share: the verbosity asked, and where to print."""

    def __init__(self, verbosity: Verbosity = Verbosity.NORMAL, echo: Echo = print_echo) -> None:
        self.verbosity = verbosity
        self._echo = echo

    @abc.abstractmethod
    def audited(self, audit: Audit) -> None:
        """Print the whole audit (``racing_demon.audit_run.AuditReporter``)."""


class TextAuditReporter(Reporter):
    """The verification's report, then every hand, the contested plays and each claim
    (nothing when there are no hands, or with ``QUIET`` and no claims), then the evidence
    when there is some."""

    def audited(self, audit: Audit) -> None:
        self._echo(report_text(audit.report, self.verbosity), False)
        hands_text = audit_text(audit.hands, audit.checks, self.verbosity, audit.contests)
        if hands_text:
            self._echo(hands_text, False)
        if audit.evidence is not None:
            self._echo(evidence_text(audit.evidence, self.verbosity), False)


class JsonAuditReporter(Reporter):
    """``audit --json``: one document (``audit_document``), whatever the verbosity."""

    def audited(self, audit: Audit) -> None:
        verification = report_document(audit.report)
        document = audit_document(
            audit.hands, audit.checks, verification, audit.evidence, audit.contests
        )
        self._echo(json.dumps(document, indent=2, ensure_ascii=False), False)


AUDIT_REPORTERS: dict[str, type[Reporter]] = {
    "text": TextAuditReporter,
    "json": JsonAuditReporter,
}


def audit_reporter_named(
    name: str, verbosity: Verbosity = Verbosity.NORMAL, echo: Echo = print_echo
) -> Reporter:
    """The audit reporter called ``name`` (a key of ``AUDIT_REPORTERS``); KeyError for another."""
    return AUDIT_REPORTERS[name](verbosity, echo)
