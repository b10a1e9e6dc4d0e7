"""What the reporters of replay, deal, view, recover, keygen and seed share: where they
print (``echo(text, to_stderr)``, as the batch's and the audit's reporters are given it:
``click.echo`` on the command line, anything a server likes), and the line on standard
error by which a use case says why it failed or warns."""

from __future__ import annotations

from racing_demon.report.batch import Echo, print_echo


class CommandReporter:
    """Prints a result on standard output, and notes on standard error."""

    def __init__(self, echo: Echo = print_echo) -> None:
        self._echo = echo

    def _out(self, text: str) -> None:
        self._echo(text, False)

    def failed(self, message: str) -> None:
        """Why the command could not do its job: one line on standard error."""
        self._echo(message, True)

    def note(self, message: str) -> None:
        """A warning beside the result: one line on standard error."""
        self._echo(message, True)
