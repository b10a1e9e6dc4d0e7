"""Files the commands write: refused before any work when they would destroy something,
and write errors reported in one line with exit 2 (docs/threat-model.md §3)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

import click

from racing_demon.files import Output, OutputError, refuse_inputs
from racing_demon.report import printable

# Where options that read a file note it, so an output can be refused for naming it.
_INPUTS = "racing_demon.inputs"


class OutputFailed(click.ClickException):
    """An output could not be written (a full disk, a closed device): exit 2."""

    exit_code = 2


def note_input(ctx: click.Context, path: Path) -> None:
    """Remember ``path`` as one of the command's inputs."""
    ctx.meta.setdefault(_INPUTS, []).append(path)


def inputs_of(ctx: click.Context) -> list[Path]:
    """The input files noted by the command's options so far."""
    return list(ctx.meta.get(_INPUTS, []))


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


class OutputWriter:
    """Writes to an ``Output`` as a context: each ``write`` is flushed at once, so what is
    written is there even if the command is then stopped; the output is committed when the
    context ends normally, and what it created is removed when it ends by an error."""

    def __init__(self, output: Output, option: str) -> None:
        self.output = output
        self._option = option  # named in messages: "cannot write --report r.jsonl: ..."
        self._stream: BinaryIO | None = None

    def __enter__(self) -> OutputWriter:
        try:
            self._stream = self.output.open()
        except OutputError as error:
            raise OutputFailed(f"{self._option}: {printable(str(error))}") from error
        except OSError as error:
            raise self._failed(error) from error
        return self

    def write(self, data: bytes) -> None:
        assert self._stream is not None
        try:
            self._stream.write(data)
            self._stream.flush()
        except OSError as error:
            raise self._failed(error) from error

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if error is not None:
            self.output.discard()
            return
        try:
            self.output.commit()
        except OSError as failure:
            self.output.discard()
            raise self._failed(failure) from failure

    def _failed(self, error: OSError) -> OutputFailed:
        why = error.strerror or str(error)
        return OutputFailed(f"cannot write {self._option} {printable(self.output.shown)}: {why}")
