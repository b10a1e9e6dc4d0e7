"""Reporters for ``racing-demon verify``: a few lines of text, or one JSON document.

The JSON is described by ``schemas/verification-report.schema.json``, and each line of a
batch's ``--report`` file by ``schemas/verification-report-line.schema.json``. A log's bytes
are hostile, so the text reporter escapes anything unprintable a finding quotes from it: a
move text cannot clear the screen or forge a "VERIFIED" line.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Sequence
from typing import Any

from racing_demon.batch import Summary
from racing_demon.files import STDIN_SOURCE
from racing_demon.log.reader import ReadCode
from racing_demon.outcomes import ExitCode
from racing_demon.printing import printable
from racing_demon.report.text import Colour, Verbosity, paint
from racing_demon.report_document import report_document
from racing_demon.verify import Finding, Report, RulesFacts, Step, Verdict
from racing_demon.verify.assurance import Assurance, assurance_of, checks_held
from racing_demon.verify.step01_framing import NOT_A_LOG
from racing_demon.wording import plural

REPORT_FORMAT = "racing-demon/verification-report/v1"

_HEADLINES = {
    Verdict.VERIFIED: "VERIFIED",
    Verdict.DOES_NOT_VERIFY: "DOES NOT VERIFY",
    Verdict.UNFINISHED: "UNFINISHED",
    Verdict.UNREADABLE: "UNREADABLE",
    Verdict.UNPINNED: "UNPINNED: table signatures not checked",
}
_COLOURS = {
    Verdict.VERIFIED: Colour.GOOD,
    Verdict.DOES_NOT_VERIFY: Colour.BAD,
    Verdict.UNFINISHED: Colour.WARN,
    Verdict.UNREADABLE: Colour.BAD,
    Verdict.UNPINNED: Colour.WARN,
}


def report_text(report: Report, verbosity: Verbosity = Verbosity.NORMAL) -> str:
    """The verdict on the first line, then where it failed, then what was covered; with
    ``QUIET`` the verdict line only, with ``VERBOSE`` every problem found and every step."""
    lines = [_headline(report)]
    if verbosity is Verbosity.QUIET:
        return lines[0]
    if report.finding is not None:
        lines += finding_lines(report.finding, verbosity)
        if report.verdict is Verdict.UNFINISHED and report.finding.code is ReadCode.TORN_LINE:
            lines.append(_recover_hint(report.source, report.finding.line == 1))
    if is_not_a_log(report):
        lines.append(_not_a_log_text(report.records))
        return "\n".join([lines[0], *(f"  {line}" for line in lines[1:])])
    if report.not_replayed and report.records is not None:  # counted whenever replay stopped
        lines.append(f"{report.not_replayed:,} of {plural(report.records, 'record')} not replayed")
    elif report.not_replayed is None and report.verdict is not Verdict.UNREADABLE:
        lines.append("no record replayed: the log is beyond the reader's limits")
    if report.game is not None:
        facts = [f"game {printable(report.game)}", f"profile {printable(report.profile or '?')}"]
        if report.format_version is not None:
            facts.append(f"format v{report.format_version}" + (", keyed" if report.keyed else ""))
        if report.records is not None:
            facts.append(plural(report.records, "record"))
        if report.final_reason is not None:
            facts += [plural(len(report.hands), "hand"), printable(report.final_reason)]
        lines.append(" · ".join(facts))
    if report.rules is not None:
        lines.append(rules_text(report.rules))
        lines += [f"  differs from the built-in profile: {d}" for d in report.rules.differences]
    if report.final_reason is not None:
        winners = ", ".join(map(str, report.winners))
        lines.append(
            f"totals {', '.join(map(str, report.totals))} · "
            + (f"winners: seat {winners}" if winners else "no winner")
        )
    assurance = assurance_of(report)
    if assurance is not None:
        lines += assurance_lines(assurance)
    elif report.verdict is not Verdict.UNREADABLE:
        lines += _coverage(report)
    if verbosity is Verbosity.VERBOSE:
        lines += step_lines(report)
    return "\n".join([lines[0], *(f"  {line}" for line in lines[1:])])


def _recover_hint(source: str, only_line: bool) -> str:
    """A torn last line is what a crash mid-write leaves, and ``recover`` is its repair:
    the verdict says so, with the command to type (cutting a file's only line empties
    the file, which ``recover`` does only with ``--allow-empty``)."""
    option = " --allow-empty" if only_line else ""
    if source == STDIN_SOURCE:  # recover changes a file in place: it needs the file
        return (
            f"a write was cut short: racing-demon recover{option} FILE repairs the file it "
            "came from"
        )
    command = f"racing-demon recover{option} {shlex.quote(printable(source))}"
    if only_line:
        return f"a write was cut short in the genesis: {command} empties the file"
    return f"a write was cut short: {command} repairs the file once no table writes it"


def is_not_a_log(report: Report) -> bool:
    """Whether the report is of a file that is not a log at all (docs/log-format.md §7)."""
    return report.finding is not None and report.finding.rule == NOT_A_LOG


def _not_a_log_text(lines: int | None) -> str:
    if lines is None:
        counted = ""
    elif lines == 1:
        counted = ", so its only line was not read as one"
    else:
        counted = f", so none of its {plural(lines, 'line')} was read as one"
    return f'not a log: its first line is not a record (every record begins {{"body":{{){counted}'


def assurance_lines(assurance: Assurance) -> list[str]:
    """``proved: …`` and ``not proved: …``, a guarantee a line."""
    lines = [f"proved: {text}" for _, text in assurance.proved]
    return lines + [f"not proved: {why}" for _, why in assurance.not_proved]


def _headline(report: Report) -> str:
    verdict = paint(_HEADLINES[report.verdict], _COLOURS[report.verdict])
    headline = f"{verdict}  {printable(report.source)}"
    if report.step is not None:
        headline += f"  (step {report.step.value}, {report.step.title})"
    return headline


def finding_text(finding: Finding) -> str:
    """``line 12 (seq 11), seat 1, move '1 waste>f3 5H': ILLEGAL_MOVE: NOT_NEXT_RANK: ...``"""
    where = []
    if finding.line is not None:
        seq = "" if finding.seq is None else f" (seq {finding.seq})"
        where.append(f"line {finding.line}{seq}")
    if finding.seat is not None:
        where.append(f"seat {finding.seat}")
    if finding.move is not None:
        where.append(f"move {finding.move!r}")  # repr escapes what cannot be printed
    text = paint(", ".join(where), Colour.PLACE) + ": " if where else ""
    text += f"{finding.code}: "
    if finding.rule is not None:
        text += f"{finding.rule}: "
    text += printable(finding.message)
    if finding.expected is not None or finding.found is not None:
        text += f"; expected {printable(finding.expected or '-')}"
        text += f", found {printable(finding.found or '-')}"
    return text


def finding_lines(finding: Finding, verbosity: Verbosity) -> list[str]:
    """The finding's line; with ``VERBOSE``, one line for each problem it found, where the
    usual line names the first and counts the others (``(and 2 more)``)."""
    if verbosity is not Verbosity.VERBOSE or not finding.problems:
        return [finding_text(finding)]
    return [
        finding_text(dataclasses.replace(finding, message=problem)) for problem in finding.problems
    ]


def step_lines(report: Report) -> list[str]:
    """``verify -v``: each numbered step (docs/log-format.md §7) and what became of it,
    saying no more than the verifier knows: a step it left at a failure held only as far
    as the lines before, and the steps after it were not reached."""
    width = max(len(step.title) for step in Step)
    return [
        f"step {step.value:>2}  {step.title.ljust(width)}  {_step_state(report, step)}"
        for step in Step
    ]


def _step_state(report: Report, step: Step) -> str:
    verdict, failed = report.verdict, report.step
    if failed is None:
        if not checks_held(report):
            return "not reached"  # unreadable: no step ran
        if step is Step.SIGNATURES and not report.pinned:
            return "passed, without the table's signatures (no --table-key)"
        if step is Step.SIGNATURES and report.fast:
            return "passed, as far as --fast checks"
        return "passed"
    line = None if report.finding is None else report.finding.line
    if verdict is Verdict.UNFINISHED:
        return _unfinished_state(report, step, failed, line)
    if step is failed:
        return paint("FAILED" if line is None else f"FAILED at line {line}", Colour.BAD)
    # Steps 1-5 run line by line in pass one, 6 once after it, 7-10 record by record.
    if step <= Step.SIGNATURES and failed <= Step.SIGNATURES:
        if step < failed:
            return "passed" if line is None else f"held to line {line}"
        return _held_before(line)
    if step < failed:
        return "passed" if step <= Step.SECRET else _held_before(line)
    return "not reached" if failed <= Step.SECRET else _held_before(line)


def _unfinished_state(report: Report, step: Step, failed: Step, line: int | None) -> str:
    """A log without its final record: the prefix held, and no secret was revealed."""
    replayed = (report.records or 0) - (report.not_replayed or 0)
    if step is failed:
        return paint("unfinished", Colour.WARN)
    if step <= Step.SIGNATURES:
        torn = failed is Step.FRAMING and line is not None
        return _held_before(line) if torn else "passed"
    if step is Step.SECRET:
        return "passed, on the secret given" if replayed else "not reached: nothing reveals it"
    return _held_before(replayed + 1) if replayed else "not reached"


def _held_before(line: int | None) -> str:
    return "not reached" if line is None or line < 2 else f"held to line {line - 1}"


def rules_text(rules: RulesFacts) -> str:
    """``rules table version 2 · built-in · sha256 <64 hex> · pinned (--rules)``, or for a
    custom document ``custom (named like the built-in profile table, but not it)``."""
    name = "?" if rules.name is None else printable(rules.name)
    version = "" if rules.version is None else f" version {rules.version}"
    kind = "built-in" if rules.builtin else "custom"
    if rules.note is not None:
        kind += f" ({rules.note})"
    digest = "sha256 -, not a valid profile" if rules.sha256 is None else f"sha256 {rules.sha256}"
    pinned = "pinned (--rules)" if rules.pinned else "not pinned"
    return f"rules {name}{version} · {kind} · {digest} · {pinned}"


def batch_entry(report: Report, verbosity: Verbosity = Verbosity.NORMAL) -> str:
    """One log of a batch: its verdict at the left margin, a finding's line and the rules'
    indented under it (with ``VERBOSE`` every problem and every step too; with ``QUIET``
    nothing under it). So the lines at the margin are exactly the logs' verdicts, one each,
    for grep and sort to work on; each is printed as soon as its log is verified."""
    lines = [_headline(report)]
    if verbosity is Verbosity.QUIET:
        return lines[0]
    if report.finding is not None:
        lines += [f"  {line}" for line in finding_lines(report.finding, verbosity)]
    if report.rules is not None:
        lines.append(f"  {rules_text(report.rules)}")
    if verbosity is Verbosity.VERBOSE:
        lines += [f"  {line}" for line in step_lines(report)]
    return "\n".join(lines)


def batch_footer(summary: Summary, settings_of: Report, *, planned: int | None = None) -> str:
    """What follows a batch's entries: the summary, indented, and what no verdict covers
    (``settings_of``: any report of the batch, which shares one Settings). ``planned``,
    when the batch was interrupted: how many logs it was to verify."""
    lines = [""]
    if planned is not None:
        lines.append(f"  interrupted: {summary.total:,} of {plural(planned, 'log')} verified")
    lines += [f"  {line}" for line in summary_lines(summary)]
    lines += [f"  {line}" for line in _coverage(settings_of)]
    return "\n".join(lines)


# The summary's rows, in the order of docs/log-format.md §7's verdict table.
_SUMMARY_ROWS = (
    (Verdict.VERIFIED, "verified"),
    (Verdict.DOES_NOT_VERIFY, "does not verify"),
    (Verdict.UNFINISHED, "unfinished"),
    (Verdict.UNPINNED, "unpinned"),
    (Verdict.UNREADABLE, "unreadable"),
)


def summary_lines(summary: Summary) -> list[str]:
    """A table: the logs of each verdict, each verdict's reasons under it, most first."""
    rows = [("verdict", "logs")]
    for verdict, label in _SUMMARY_ROWS:
        rows.append((label, str(summary.counts[verdict])))
        reasons = summary.reasons.get(verdict, {})
        for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
            rows.append((f"  {printable(reason)}", str(count)))
    rows.append(("all", str(summary.total)))
    width = max(len(label) for label, _ in rows) + 2
    digits = max(len(count) for _, count in rows)
    lines = [label.ljust(width) + count.rjust(digits) for label, count in rows]
    lines[-1] += f"  exit {summary.exit_code}"
    return lines


def report_line(report: Report) -> str:
    """One line of ``--report``: the log's report document on one line of ASCII."""
    return json.dumps(report_document(report), separators=(",", ":"))


def _coverage(report: Report) -> list[str]:
    """What the verdict does not cover: said every time, never left to be assumed."""
    lines = []
    if report.fast:
        lines.append(
            "--fast: the table's signatures checked on the genesis and the final record only "
            "(the chain binds the rest to them); players' signatures on moves not checked"
        )
    if not report.pinned:
        lines.append(
            "no --table-key: nothing proves the table wrote this log"
            + ("" if report.unsafe_unpinned else " (--unsafe-unpinned accepts that)")
        )
    return lines


def verification_document(
    reports: Sequence[Report], *, interrupted: bool = False
) -> dict[str, Any]:
    """``verify --json``: every log's report, their summary and the exit code of the whole
    run (``batch_exit_code``'s; 130 when it was interrupted, and then ``reports`` holds
    the logs verified before)."""
    summary = Summary.of(reports)
    return {
        "format": REPORT_FORMAT,
        "exit_code": ExitCode.INTERRUPTED if interrupted else summary.exit_code,
        "interrupted": interrupted,
        "summary": summary_document(summary),
        "reports": [report_document(report) for report in reports],
    }


def summary_document(summary: Summary) -> dict[str, Any]:
    """The summary as ``verify --json`` carries it: the logs of every verdict (each one
    present, 0 included), each verdict's reasons, and the total."""
    return {
        "total": summary.total,
        "counts": {verdict.value: summary.counts[verdict] for verdict in Verdict},
        "reasons": {
            verdict.value: dict(sorted(summary.reasons[verdict].items()))
            for verdict in Verdict
            if verdict in summary.reasons
        },
    }
