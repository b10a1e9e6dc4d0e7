"""The command line: thin click commands over the library.

A command's module is imported when the command is run (or its help shown), not before:
the commands stand on the verifier, the simulator, the tournaments and the schemas, and
``racing-demon --help`` or ``--version`` needs none of them (bench/cli_startup_bench.py).
"""

from __future__ import annotations

import errno
import importlib
import io
import os
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from racing_demon import __version__
from racing_demon.cli.style import Context, add_output_options
from racing_demon.outcomes import ExitCode

# Each command: the module of racing_demon.cli that defines it, its name there, and its
# short help as `racing-demon --help` lists it (the command's own short_help: a test keeps
# the two the same), so that the listing imports no command.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "audit": (
        "audit_cmd",
        "audit",
        "Audit a log: every hand's score, claims, receipts, copies.",
    ),
    "deal": ("deal_cmd", "deal", "Print each seat's layout for one hand."),
    "docs": ("docs_cmd", "docs", "Print the guides and schemas shipped with racing-demon."),
    "explain": (
        "explain_cmd",
        "explain_command",
        "Explain a reason code in one sentence, or list every code.",
    ),
    "keygen": ("keygen_cmd", "keygen", "Write an Ed25519 key pair for a table or a player."),
    "recover": ("recover_cmd", "recover", "Remove the torn last line a crash left in a log."),
    "replay": ("replay_cmd", "replay_command", "Show the table after any record of a log."),
    "rules": ("rules_cmd", "rules", "List the rule profiles, or print one."),
    "seed": ("seed_cmd", "seed", "Make a dealer secret and its commitment; check a reveal."),
    "runtime": (
        "runtime_cmd",
        "runtime",
        "Install or show the browser runtime of view --engine.",
    ),
    "serve": ("serve_cmd", "serve", "Host tables for people and bots over WebSockets."),
    "simulate": (
        "simulate_cmd",
        "simulate_command",
        "Bots play a whole match; write its signed log.",
    ),
    "tournament": (
        "tournament_cmd",
        "tournament",
        "Plan, check, simulate and score duplicate tournaments.",
    ),
    "verify": (
        "verify_cmd",
        "verify",
        "Verify logs: signatures, chain, deal, every move, scores.",
    ),
    "view": ("view_cmd", "view", "Write an HTML page that replays a log and re-verifies it."),
}


class _Commands(click.Group):
    """The commands, loaded as they are named, and ending as the tools people know end:
    Ctrl-C exits 130, a reader that closed the pipe ends the output quietly (141), and a
    failed write to standard output is one line on standard error and exit 2, never a
    traceback or a false verdict: for the group's own --help and --version as for any
    command.

    Every command loaded gets the output options (``cli.style``): ``--color``, and on the
    commands that print verdicts ``-q`` and ``-v``."""

    context_class = Context

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute, _ = COMMANDS[cmd_name]
            command = getattr(importlib.import_module(f"racing_demon.cli.{module}"), attribute)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        super().add_command(cmd, name)
        add_output_options(cmd, name or cmd.name or "", with_verbosity=_VERDICTS)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][2]) for name in self.list_commands(ctx)])

    def main(self, *args: Any, **kwargs: Any) -> Any:
        _buffer_stdout()
        return super().main(*args, **kwargs)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        with _ending_as_tools_do():  # the eager --help and --version print here
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with _ending_as_tools_do():
            return super().invoke(ctx)


@contextmanager
def _ending_as_tools_do() -> Iterator[None]:
    """What the group parses or runs ends as ``_Commands`` says, in one place for both."""
    try:
        try:
            yield
        finally:
            sys.stdout.flush()  # a write error must surface here, not at the exit
    except (KeyboardInterrupt, click.Abort) as error:
        cause = error.__cause__ or error.__context__ if isinstance(error, click.Abort) else error
        if isinstance(cause, EOFError):  # a prompt met the end of standard input
            click.echo(
                "racing-demon: standard input ended before the prompt was answered", err=True
            )
            raise click.exceptions.Exit(ExitCode.UNUSABLE) from error
        if not isinstance(cause, KeyboardInterrupt):
            raise
        click.echo("\ninterrupted", err=True)
        raise click.exceptions.Exit(ExitCode.INTERRUPTED) from error
    except BrokenPipeError as error:
        _silence_stdout()
        raise click.exceptions.Exit(ExitCode.BROKEN_PIPE) from error
    except OSError as error:
        if not _is_stdout_failure(error):
            raise
        _silence_stdout()
        click.echo(f"racing-demon: cannot write standard output: {error.strerror}", err=True)
        raise click.exceptions.Exit(ExitCode.UNUSABLE) from error


def _is_stdout_failure(error: OSError) -> bool:
    """A write to standard output failed: an error that writing a stream gives, naming no
    file (every file the commands open is named in their errors), raised where the
    commands write their output (``click.echo``, the pager of ``docs``) or by the final
    flush above."""
    if error.filename is not None or error.errno not in _WRITE_ERRORS:
        return False
    raised = traceback.extract_tb(error.__traceback__)[-1]
    in_click = raised.name in _CLICK_WRITERS and _folder_name(raised.filename) == "click"
    return in_click or (raised.name == "_ending_as_tools_do" and raised.filename == __file__)


def _folder_name(path: str) -> str:
    return os.path.basename(os.path.dirname(path))


# The commands whose text is a verdict on each log: -q prints it alone, -v adds every check.
_VERDICTS = frozenset({"verify", "audit", "tournament score"})

_WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT})

# Where click writes standard output: echo, and echo_via_pager's stream (without a pager).
_CLICK_WRITERS = frozenset({"echo", "echo_via_pager", "write"})


def _buffer_stdout() -> None:
    """Give an unbuffered standard output (PYTHONUNBUFFERED, python -u) a buffered writer,
    flushed at every line as before. A raw file writes what a pipe takes and returns the
    count, which a text stream ignores: a page cut at 64 KiB would end in exit 0 and
    "wrote N bytes". A buffered writer writes the rest, or raises (BrokenPipeError: 141)."""
    stream = sys.stdout
    if isinstance(stream, io.TextIOWrapper) and isinstance(stream.buffer, io.RawIOBase):
        sys.stdout = io.TextIOWrapper(
            io.BufferedWriter(stream.buffer),
            encoding=stream.encoding,
            errors=stream.errors,
            line_buffering=True,
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
  racing-demon view game.jsonl --table-key table.pub -o game.html
""",
)
@click.version_option(__version__, prog_name="racing-demon")
def main() -> None:
    """Racing Demon (Nerts, Pounce): verify signed game logs, replay and audit them, and
    deal packs from seeds that anybody can regenerate."""
