"""The reporter of ``racing_demon.viewer.write.write_view``: on standard error, what was
written and the verdict the page shows, and what the page cannot show or check."""

from __future__ import annotations

from racing_demon.printing import printable
from racing_demon.report.base import CommandReporter
from racing_demon.report.batch import Echo, print_echo
from racing_demon.report.verify import finding_text
from racing_demon.verify import Verdict
from racing_demon.viewer.write import WrittenPage
from racing_demon.wording import plural


class TextViewReporter(CommandReporter):
    def wrote(self, page: WrittenPage) -> None:
        report = page.report
        summary = f"{report.verdict.value}"
        if report.finding is not None:
            summary += f": {finding_text(report.finding)}"
        self.note(
            f"wrote {printable(page.output.shown)} ({plural(page.written, 'byte')}): "
            f"{plural(page.records, 'record')}, {page.replayed:,} replayed; "
            f"verdict {summary}"
        )
        if page.secret_missing:
            self.note(
                "no table to show: the log has no final record to reveal the dealer secret; "
                "give it with --secret SOURCE"
            )
        if report.verdict is Verdict.UNPINNED:
            self.note(
                "no --table-key: the page checks no table signature until its reader drops "
                "the table's public key on it"
            )


VIEW_REPORTERS: dict[str, type[TextViewReporter]] = {"text": TextViewReporter}


def view_reporter_named(name: str, echo: Echo = print_echo) -> TextViewReporter:
    """The view reporter called ``name`` (a key of ``VIEW_REPORTERS``: the page is the
    document, and what is printed beside it is text); KeyError for another."""
    return VIEW_REPORTERS[name](echo)
