"""The view use case: ``write_view`` does what ``racing-demon view`` does, for any caller
(the command line, a server), without click.

One call verifies the log, builds its page (``viewer.model``) and writes it, a megabyte
at a time, to an output the caller checked and opens, then hands a ``WrittenPage`` to a
``ViewReporter`` (``racing_demon.report.view``), which says on standard error what was
written and the verdict the page shows. The exit code is 0 whenever the page was
written, whatever the verdict; 2 when the log cannot be read.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from racing_demon.files import LogFile, Output
from racing_demon.outcomes import ExitCode
from racing_demon.printing import printable
from racing_demon.runtime import RuntimeRefused, required
from racing_demon.verify import Report, Settings
from racing_demon.viewer.engine import EngineOptions, EnginePage
from racing_demon.viewer.model import verified_page_data
from racing_demon.viewer.page import page_parts

_PIECE = 1 << 20


class PageWriter(Protocol):
    """Writes the page's bytes to its output."""

    def write(self, data: bytes) -> None: ...


# Opens an output, given its option's name for messages (the command line's OutputWriter:
# a replaced file is replaced only by a whole page).
OpenOutput = Callable[[Output, str], AbstractContextManager[PageWriter]]


@dataclass(frozen=True, kw_only=True)
class ViewRun:
    """What to show and where: ``racing-demon view``'s options but the reporter's."""

    log: LogFile
    settings: Settings  # the pinned table key and rules, the secret, the limits
    output: Output  # checked before: not an input, and free unless it may be replaced
    engine: bool = False  # inline the runtime and the verifier (view --engine)


@dataclass(frozen=True, kw_only=True)
class WrittenPage:
    """The page written: where, how many bytes, the log's records and how many were
    replayed, the verifier's report, and whether the dealer secret was missing."""

    output: Output
    written: int
    records: int
    replayed: int
    report: Report
    secret_missing: bool


class ViewReporter(Protocol):
    """What view prints: ``racing_demon.report.view``."""

    def wrote(self, page: WrittenPage) -> None:
        """The page, once it is written."""

    def failed(self, message: str) -> None:
        """Why the log cannot be read (standard error's line)."""


def write_view(run: ViewRun, reporter: ViewReporter, *, open_output: OpenOutput) -> ExitCode:
    """Write the page of ``run.log`` to ``run.output`` through ``open_output(output,
    "--out")``, report it to ``reporter`` and return the exit code (module docs). With
    ``run.engine`` and no runtime installed, nothing is written: exit 2 and the line that
    says how to install it."""
    engine: EnginePage | None = None
    if run.engine:
        options = EngineOptions(rules=run.settings.rules, limits=run.settings.limits)
        try:
            engine = EnginePage.of(required(), options)
        except RuntimeRefused as refusal:
            reporter.failed(str(refusal))
            return ExitCode.UNUSABLE
    try:
        report, data = verified_page_data(run.log, run.settings)
    except OSError as error:
        reporter.failed(f"cannot read {printable(str(run.log))}: {error.strerror or error}")
        return ExitCode.UNUSABLE
    written = 0
    with open_output(run.output, "--out") as writer:
        for part in page_parts(data, engine=engine):
            # A megabyte at a time: the data's part is most of the page, and encoding it
            # whole would hold it twice.
            for start in range(0, len(part), _PIECE):
                encoded = part[start : start + _PIECE].encode("utf-8")
                writer.write(encoded)
                written += len(encoded)
    replay = data["replay"]
    missing = replay["secret"] == "missing" and bool(replay["records"])
    reporter.wrote(
        WrittenPage(
            output=run.output,
            written=written,
            records=replay["records"],
            replayed=replay["replayed"],
            report=report,
            secret_missing=missing,
        )
    )
    return ExitCode.OK
