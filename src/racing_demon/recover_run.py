"""The recover use case: ``run_recover`` does what ``racing-demon recover`` does, for any
caller (the command line, a server), without click.

One call removes a torn last line from a log when the complete records before it verify
as an unfinished log (``racing_demon.recover.recover_log``), hands the ``Recovery`` to a
``RecoverReporter`` (text or JSON, chosen by name in ``racing_demon.report.recover``),
which decides every word printed, and returns the exit code (``exit_code_of``'s; 2 when
the file cannot be recovered at all).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from racing_demon.outcomes import ExitCode, exit_code_of
from racing_demon.printing import printable
from racing_demon.recover import Recovery, RecoveryError, recover_log
from racing_demon.verify import Settings


@dataclass(frozen=True, kw_only=True)
class RecoverRun:
    """What to recover: ``racing-demon recover``'s options but the reporter's."""

    log: Path  # a file: it is repaired in place
    settings: Settings  # the table key the kept records' signatures are checked with
    dry_run: bool = False  # say what would be removed; change nothing
    allow_empty: bool = False  # cut a torn line that is the file's only line


class RecoverReporter(Protocol):
    """What recover prints: ``racing_demon.report.recover`` has the text and JSON ones."""

    def recovered(self, recovery: Recovery, *, signatures_checked: bool) -> None:
        """What recovery found and did (or, dry, would do)."""

    def failed(self, message: str) -> None:
        """Why the file cannot be recovered at all (standard error's line)."""


def run_recover(run: RecoverRun, reporter: RecoverReporter) -> ExitCode:
    """Recover the log ``run`` names, report it to ``reporter`` and return the exit code
    (module docs). Run it only when no table is writing the log."""
    try:
        recovery = recover_log(
            run.log, run.settings, dry_run=run.dry_run, allow_empty=run.allow_empty
        )
    except RecoveryError as error:
        reporter.failed(f"cannot recover: {printable(str(error))}")
        return ExitCode.UNUSABLE
    reporter.recovered(recovery, signatures_checked=run.settings.table_key is not None)
    return exit_code_of(recovery)
