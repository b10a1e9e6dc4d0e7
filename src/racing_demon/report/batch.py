"""The reporters of a batch run (``racing_demon.batch.run_batch``), chosen by name.

``text`` prints a line per log as it comes and a summary (or one log's whole report);
``json`` prints one document at the end. Both write the same ``--report`` lines and the
same notes on standard error (resumed, interrupted). A caller names one of ``REPORTERS``
and gives it where to print: an ``echo(text, to_stderr)`` (``report.echo``), which the
command line makes ``click.echo`` and a server anything it likes.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Mapping
from typing import Any

from racing_demon.batch import BatchEnd, cache_entry
from racing_demon.printing import printable
from racing_demon.report.echo import Echo as Echo  # report.audit takes both from here
from racing_demon.report.echo import print_echo as print_echo
from racing_demon.report.text import Verbosity
from racing_demon.report.verify import (
    batch_entry,
    batch_footer,
    report_line,
    report_text,
    verification_document,
)
from racing_demon.report_document import report_document
from racing_demon.verify import Report
from racing_demon.wording import plural


def cache_line(report: Report, sha256: str | None, key: str) -> str:
    """One line of a ``--resume`` report file: ``report_line``'s document and its cache
    entry (``racing_demon.batch.cache_entry``)."""
    return _cached_line(report, cache_entry(report, sha256, key))


def _cached_line(report: Report, cache: Mapping[str, Any]) -> str:
    return json.dumps({**report_document(report), "cache": cache}, separators=(",", ":"))


class Reporter(abc.ABC):
    """What both reporters share: the ``--report`` lines and the notes on standard error."""

    whole_document = False

    def __init__(self, verbosity: Verbosity = Verbosity.NORMAL, echo: Echo = print_echo) -> None:
        self.verbosity = verbosity
        self._echo = echo
        self._one_log = self._to_stderr = False
        self._reports: list[Report] = []

    def begin(self, *, one_log: bool, to_stderr: bool) -> None:
        self._one_log, self._to_stderr = one_log, to_stderr

    def line(self, report: Report, cache: Mapping[str, Any] | None) -> str:
        return report_line(report) if cache is None else _cached_line(report, cache)

    def verified(self, report: Report) -> None:
        self._reports.append(report)

    def end(self, end: BatchEnd) -> None:
        self._last_words(end)
        if end.resumed_from is not None and self.verbosity is not Verbosity.QUIET:
            total = plural(end.summary.total, "verdict")
            shown = printable(end.resumed_from)
            self._echo(f"resumed: {end.reused:,} of {total} reused from {shown}", True)
        if end.interrupted:
            verified = f"{end.summary.total:,} of {plural(end.planned, 'log')}"
            self._echo(f"interrupted: {verified} verified", True)
            if end.not_replaced is not None:
                shown = printable(end.not_replaced)
                self._echo(f"{shown} was not replaced: only a whole batch replaces it", True)

    def _out(self, text: str) -> None:
        self._echo(text, self._to_stderr)

    @abc.abstractmethod
    def _last_words(self, end: BatchEnd) -> None:
        """What it prints when the last log is in (or the run was interrupted)."""


class TextReporter(Reporter):
    """A line per log as it comes (its finding under it), then the summary; a run of one
    log prints that log's whole report instead."""

    def verified(self, report: Report) -> None:
        if self._one_log:
            super().verified(report)
        else:
            self._out(batch_entry(report, self.verbosity))

    def _last_words(self, end: BatchEnd) -> None:
        if self._one_log and self._reports:
            self._out(report_text(self._reports[0], self.verbosity))
        elif end.first is not None and self.verbosity is not Verbosity.QUIET:
            planned = end.planned if end.interrupted else None
            self._out(batch_footer(end.summary, end.first, planned=planned))


class JsonReporter(Reporter):
    """One JSON document at the end: every report, their summary, the exit code."""

    whole_document = True

    def _last_words(self, end: BatchEnd) -> None:
        document = verification_document(self._reports, interrupted=end.interrupted)
        self._out(json.dumps(document, indent=2))


REPORTERS: dict[str, type[Reporter]] = {"text": TextReporter, "json": JsonReporter}


def reporter_named(
    name: str, verbosity: Verbosity = Verbosity.NORMAL, echo: Echo = print_echo
) -> Reporter:
    """The reporter called ``name`` (a key of ``REPORTERS``); KeyError for another."""
    return REPORTERS[name](verbosity, echo)
