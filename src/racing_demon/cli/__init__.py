"""The command line: thin click commands over the library."""

from __future__ import annotations

import errno
import os
import sys
import traceback
from importlib.metadata import version
from pathlib import Path
from typing import Any

import click

from racing_demon.cli.audit_cmd import audit
from racing_demon.cli.deal_cmd import deal
from racing_demon.cli.docs_cmd import docs
from racing_demon.cli.explain_cmd import explain_command
from racing_demon.cli.keygen_cmd import keygen
from racing_demon.cli.recover_cmd import recover
from racing_demon.cli.replay_cmd import replay_command
from racing_demon.cli.rules_cmd import rules
from racing_demon.cli.seed_cmd import seed
from racing_demon.cli.simulate_cmd import simulate_command
from racing_demon.cli.style import Context, add_output_options
from racing_demon.cli.tournament_cmd import tournament
from racing_demon.cli.verify_cmd import verify
from racing_demon.cli.view_cmd import view
from racing_demon.outcomes import ExitCode


class _Commands(click.Group):
    """The commands, ending as the tools people know end: Ctrl-C exits 130, a reader that
    closed the pipe ends the output quietly (141), and a failed write to standard output
    is one line on standard error and exit 2, never a traceback or a false verdict.

    Every command registered gets the output options (``cli.style``): ``--color``, and on
    the commands that print verdicts ``-q`` and ``-v``."""

    context_class = Context

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        super().add_command(cmd, name)
        add_output_options(cmd, name or cmd.name or "", with_verbosity=_VERDICTS)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            try:
                return super().invoke(ctx)
            finally:
                sys.stdout.flush()  # a write error must surface here, not at the exit
        except (KeyboardInterrupt, click.Abort) as error:
            cause = (
                error.__cause__ or error.__context__ if isinstance(error, click.Abort) else error
            )
            if isinstance(cause, EOFError):  # a prompt met the end of standard input
                click.echo(
                    "racing-demon: standard input ended before the prompt was answered", err=True
                )
                ctx.exit(ExitCode.UNUSABLE)
            if not isinstance(cause, KeyboardInterrupt):
                raise
            click.echo("\ninterrupted", err=True)
            ctx.exit(ExitCode.INTERRUPTED)
        except BrokenPipeError:
            _silence_stdout()
            ctx.exit(ExitCode.BROKEN_PIPE)
        except OSError as error:
            if not _is_stdout_failure(error):
                raise
            _silence_stdout()
            click.echo(f"racing-demon: cannot write standard output: {error.strerror}", err=True)
            ctx.exit(ExitCode.UNUSABLE)


def _is_stdout_failure(error: OSError) -> bool:
    """A write to standard output failed: an error that writing a stream gives, naming no
    file (every file the commands open is named in their errors), raised where the
    commands write their output (``click.echo``) or by the final flush above."""
    if error.filename is not None or error.errno not in _WRITE_ERRORS:
        return False
    raised = traceback.extract_tb(error.__traceback__)[-1]
    in_echo = raised.name == "echo" and Path(raised.filename).parent.name == "click"
    return in_echo or (raised.name == "invoke" and raised.filename == __file__)


# The commands whose text is a verdict on each log: -q prints it alone, -v adds every check.
_VERDICTS = frozenset({"verify", "audit", "tournament score"})

_WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT})


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's own flush at the exit does
    not fail again on what is still buffered."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real descriptor (a test runner's capture)
        pass


@click.group(
    cls=_Commands,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  racing-demon rules
  racing-demon deal --seed demo --players 3
  racing-demon keygen table
  racing-demon seed new
  racing-demon verify game.jsonl --table-key table.pub
  racing-demon view game.jsonl --table-key table.pub -o game.html
""",
)
@click.version_option(version("racing-demon"), prog_name="racing-demon")
def main() -> None:
    """Racing Demon (Nerts, Pounce): verify signed game logs, replay and audit them, and
    deal packs from seeds that anybody can regenerate."""


main.add_command(audit)
main.add_command(deal)
main.add_command(docs)
main.add_command(keygen)
main.add_command(recover)
main.add_command(rules)
main.add_command(seed)
main.add_command(verify)
main.add_command(view)
main.add_command(replay_command, name="replay")
main.add_command(explain_command, name="explain")
main.add_command(simulate_command, name="simulate")
main.add_command(tournament)
