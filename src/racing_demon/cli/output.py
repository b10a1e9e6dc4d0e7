"""Files the commands write: refused before any work when they would destroy something,
and write errors reported in one line with exit 2 (docs/threat-model.md §3)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, TypeVar

import click

from racing_demon import files
from racing_demon.files import (
    STDIN,
    InMemoryLog,
    LogFile,
    Output,
    OutputError,
    WriteFailed,
    read_standard_input,
    refuse_inputs,
)
from racing_demon.log.reader import Limits
from racing_demon.outcomes import ExitCode
from racing_demon.printing import printable

# Where options that read a file note it, so an output can be refused for naming it.
_INPUTS = "racing_demon.inputs"
# Who reads standard input: it can give one thing only (a secret, or a log).
_STDIN = "racing_demon.stdin"
# Set while the command line is parsed when a LOG is -: the log is read later, in the
# command, but an option (--secret stdin) must not read its first line before then.
_STDIN_LOG = "racing_demon.stdin_log"
# What a LOG parameter holds: one name, several, or none (an option not given).
_Logs = TypeVar("_Logs", str, Path, tuple[str, ...], Path | None)


class Unusable(click.ClickException):
    """What the command cannot use (a Dask cluster out of reach): exit 2, in one line."""

    exit_code = ExitCode.UNUSABLE


class OutputFailed(Unusable):
    """An output could not be written (a full disk, a closed device): exit 2."""


def note_input(ctx: click.Context, path: Path) -> None:
    """Remember ``path`` as one of the command's inputs."""
    ctx.meta.setdefault(_INPUTS, []).append(path)


def inputs_of(ctx: click.Context) -> list[Path]:
    """The input files noted by the command's options so far."""
    return list(ctx.meta.get(_INPUTS, []))


def take_stdin(what: str) -> BinaryIO:
    """Standard input, for ``what`` (``--secret stdin``, ``LOG -``) and nothing else: what
    one reader leaves of it is no input the next could use, so a second is refused."""
    ctx = click.get_current_context()
    taken = ctx.meta.get(_STDIN)
    if taken is None and what != "LOG -" and ctx.meta.get(_STDIN_LOG):
        taken, what = what, "LOG -"
    if taken is not None:
        raise click.UsageError(
            f"standard input can give one thing only: {taken} reads it, so {what} cannot"
        )
    ctx.meta[_STDIN] = what
    return sys.stdin.buffer


def claim_stdin_log(ctx: click.Context, param: click.Parameter, value: _Logs) -> _Logs:
    """A callback for an eager LOG parameter: a LOG of ``-`` claims standard input before
    any option (``--secret stdin``) can read from it."""
    if STDIN in [str(name) for name in (value if isinstance(value, tuple) else (value,))]:
        ctx.meta[_STDIN_LOG] = True
    return value


def named_log(name: str, limits: Limits) -> LogFile:
    """The log a LOG argument names: ``-`` is the one log on standard input, read now, at
    most ``limits.max_file_bytes + 1`` bytes (the reader refuses a larger one as it
    refuses such a file); any other name is a path, ``./-`` a file named ``-``."""
    if name == STDIN:
        return log_from_stdin(limits)
    return Path(name)


def log_from_stdin(limits: Limits) -> InMemoryLog:
    return read_standard_input(take_stdin("LOG -"), limits.max_file_bytes)


def checked_output(
    name: str, *, replace: bool, inputs: Iterable[Path], param_hint: str, mode: int = 0o644
) -> Output:
    """The output ``name`` (``-`` for standard output), refused with exit 2 if it exists
    and ``replace`` is not given, or if it is one of ``inputs``: before anything is read."""
    output = Output.named(name, replace=replace, mode=mode)
    try:
        refuse_inputs(output, inputs)
        output.check_free()
    except OutputError as error:
        raise click.BadParameter(printable(str(error)), param_hint=param_hint) from error
    return output


class OutputWriter(files.OutputWriter):
    """``files.OutputWriter`` for a command: a write that fails ends it with exit 2, in one
    line naming the option and the file."""

    def __enter__(self) -> OutputWriter:
        with _failing_as_click_does():
            super().__enter__()
        return self

    def write(self, data: bytes) -> None:
        with _failing_as_click_does():
            super().write(data)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        with _failing_as_click_does():
            super().__exit__(kind, error, traceback)


@contextlib.contextmanager
def _failing_as_click_does() -> Iterator[None]:
    try:
        yield
    except WriteFailed as error:
        raise OutputFailed(str(error)) from error
