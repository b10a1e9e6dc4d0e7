"""The command line: thin click commands over the library."""

from __future__ import annotations

import errno
import os
import sys
from importlib.metadata import version
from typing import Any

import click

from racing_demon.cli.audit_cmd import audit
from racing_demon.cli.deal_cmd import deal
from racing_demon.cli.keygen_cmd import keygen
from racing_demon.cli.recover_cmd import recover
from racing_demon.cli.replay_cmd import replay_command
from racing_demon.cli.rules_cmd import rules
from racing_demon.cli.seed_cmd import seed
from racing_demon.cli.simulate_cmd import simulate_command
from racing_demon.cli.verify_cmd import verify

INTERRUPTED_EXIT = 130  # 128 + SIGINT: what a shell reports for a command stopped by Ctrl-C
BROKEN_PIPE_EXIT = 141  # 128 + SIGPIPE: what a shell reports for `yes | head -1`
_OUTPUT_FAILED_EXIT = 2


class _Commands(click.Group):
    """The commands, ending as the tools people know end: Ctrl-C exits 130, a reader that
    closed the pipe ends the output quietly (141), and a failed write to standard output
    is one line on standard error and exit 2, never a traceback or a false verdict."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            try:
                return super().invoke(ctx)
            finally:
                sys.stdout.flush()  # a write error must surface here, not at the exit
        except (KeyboardInterrupt, click.Abort) as error:
            if isinstance(error, click.Abort) and not _by_ctrl_c(error):
                raise
            click.echo("\ninterrupted", err=True)
            ctx.exit(INTERRUPTED_EXIT)
        except BrokenPipeError:
            _silence_stdout()
            ctx.exit(BROKEN_PIPE_EXIT)
        except OSError as error:
            if not _is_stdout_failure(error):
                raise
            _silence_stdout()
            click.echo(f"racing-demon: cannot write standard output: {error.strerror}", err=True)
            ctx.exit(_OUTPUT_FAILED_EXIT)


def _by_ctrl_c(abort: click.Abort) -> bool:
    # click turns Ctrl-C at a prompt into Abort, raised from the KeyboardInterrupt.
    return isinstance(abort.__cause__ or abort.__context__, KeyboardInterrupt)


def _is_stdout_failure(error: OSError) -> bool:
    """A write to standard output failed: the error names no file (every file the commands
    open is named in their errors) and is one that writing a stream gives."""
    return error.filename is None and error.errno in (
        errno.ENOSPC,
        errno.EIO,
        errno.EFBIG,
        errno.EDQUOT,
        errno.EPIPE,
    )


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
""",
)
@click.version_option(version("racing-demon"), prog_name="racing-demon")
def main() -> None:
    """Racing Demon (Nerts, Pounce): verify signed game logs, replay and audit them, and
    deal packs from seeds that anybody can regenerate."""


main.add_command(audit)
main.add_command(deal)
main.add_command(keygen)
main.add_command(recover)
main.add_command(rules)
main.add_command(seed)
main.add_command(verify)
main.add_command(replay_command, name="replay")
main.add_command(simulate_command, name="simulate")
