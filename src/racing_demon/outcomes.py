"""Exit codes: the one place where an outcome becomes the number a shell sees.

The contract of every command: 0 it did its job (a log verified), 1 the answer is no (a
log does not verify, a claim is wrong, a secret does not open its commitment), 2 the
command could not use its input or output (unreadable, bad usage); and what a shell
reports for a command stopped by a signal.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from racing_demon.evidence import EvidenceReport
    from racing_demon.recover import Recovery
    from racing_demon.verify.report import Report


class ExitCode(enum.IntEnum):
    OK = 0
    NO = 1  # the input was read and checked, and the answer is no
    UNUSABLE = 2  # an input or output the command cannot use, or bad usage
    INTERRUPTED = 130  # 128 + SIGINT: what a shell reports for a command stopped by Ctrl-C
    BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for `yes | head -1`


def exit_code_of(outcome: Report | Recovery) -> ExitCode:
    """The exit code of a verification, or of a recovery.

    A verification passes when the log verified, or was unpinned and that was accepted as
    unsafe; an unreadable log is 2. A recovery passes when it cut a torn tail or had
    nothing to cut; a refusal is 1 (2 when the file could not be read at all), whatever
    the lines before the refused tail verify as.
    """
    # Imported here: the command line reads ExitCode as it starts, before any verifier.
    from racing_demon.recover import Action, Recovery
    from racing_demon.verify.report import Verdict

    if isinstance(outcome, Recovery):
        if outcome.action is Action.REFUSED:
            unreadable = outcome.report.verdict is Verdict.UNREADABLE
            return ExitCode.UNUSABLE if unreadable else ExitCode.NO
        refused = outcome.action in (Action.REFUSED_FINAL, Action.REFUSED_ONLY_LINE)
        return ExitCode.NO if refused else ExitCode.OK
    verdict = outcome.verdict
    if verdict is Verdict.VERIFIED or (verdict is Verdict.UNPINNED and outcome.unsafe_unpinned):
        return ExitCode.OK
    return ExitCode.UNUSABLE if verdict is Verdict.UNREADABLE else ExitCode.NO


def batch_exit_code(codes: Iterable[ExitCode]) -> ExitCode:
    """The exit code of a batch, from its logs' codes: 1 when any log's answer is no (it
    does not verify, is unfinished, or is unpinned unaccepted), else 2 when any could not
    be read, else 0. "Does not verify" is never masked by an unreadable file: a 2 says
    only that some input could not be used, and every log that was read verified.
    A batch of no logs is 0; the command line never verifies one (docs/batch-verification.md).
    """
    seen = set(codes)
    for code in (ExitCode.NO, ExitCode.UNUSABLE):
        if code in seen:
            return code
    return ExitCode.OK


def audit_exit_code(
    report: Report, claims_hold: bool, evidence: EvidenceReport | None = None
) -> ExitCode:
    """The exit code of an audit: 0 when the log verifies, every claim holds and every
    receipt and copy agrees with it; 2 when the log cannot be read; else 1 (a finding that
    is no evidence against the table, such as an invalid receipt, included)."""
    verdict = exit_code_of(report)
    if verdict is not ExitCode.OK:
        return verdict
    agrees = evidence is None or evidence.agrees
    return ExitCode.OK if claims_hold and agrees else ExitCode.NO
