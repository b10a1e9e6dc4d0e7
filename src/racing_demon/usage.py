"""What a caller of a use case can ask wrongly: a ``UsageProblem``, before anything is done.

The use cases (``batch.run_batch``, ``sim.run_simulation``, the tournament's ``run_*``,
``audit_run``, ``replay_run``, ``deal_run``, ``keys_run``, ``recover_run``,
``viewer.write``) are what the commands of the same names do, for any caller (the command
line, a server); each refuses settings it cannot use with a ``UsageProblem`` (or its own
subclass of it) before doing anything.
Their messages name a setting as the command line spells it (``--secret``, ``--hand``),
since that is where most callers meet them; a server shows the message to its user as
the command line does.
"""

from __future__ import annotations

from racing_demon.errors import RacingDemonError

# The places a dealer secret is read from, as a message asking for one lists them: it is
# never given itself, where every user of the machine could read it.
SECRET_SOURCES = "file:PATH, env:VAR or stdin"


class UsageProblem(RacingDemonError):
    """Settings that contradict each other or do not fit the input (a secret that opens
    no commitment, a hand the log never dealt): nothing was done. ``option`` names the
    setting at fault, when one is (the command line's ``Invalid value for '--secret'``).
    The message may quote a file's text: a caller shows it through ``printable``.

    Not a ValueError: a use case catches the ValueError of a log that cannot be read,
    which a usage problem is not."""

    def __init__(self, message: str, option: str | None = None) -> None:
        super().__init__(message)
        self.option = option
