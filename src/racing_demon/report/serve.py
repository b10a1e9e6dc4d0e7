"""The reporter of ``racing_demon.serve_run.run_serve``: the address it listens on as
standard output's first line (what a script or a test reads to find the port), every
warning and the summary of a clean stop on standard error."""

from __future__ import annotations

from racing_demon.report.base import CommandReporter
from racing_demon.report.echo import Echo, print_echo
from racing_demon.serve_run import Stopped
from racing_demon.wording import plural


class TextServeReporter(CommandReporter):
    def listening(self, url: str) -> None:
        self._out(f"listening on {url}")

    def stopped(self, stopped: Stopped) -> None:
        resumes = (
            f"; {plural(stopped.live_tables, 'live table')} will resume on the next start"
            if stopped.live_tables
            else ""
        )
        self.note(
            f"stopped: {plural(stopped.records, 'record')} made durable in "
            f"{plural(stopped.batches, 'fsync')}{resumes}"
        )


def serve_reporter(echo: Echo = print_echo) -> TextServeReporter:
    return TextServeReporter(echo)
