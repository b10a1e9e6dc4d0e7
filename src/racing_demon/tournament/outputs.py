"""What the tournament's use cases share with their callers: the refusal of a run's
settings, and the files they write (issue 30, point 2).

An output is checked before any work (it exists and is not to be replaced, or it is one
of the run's inputs) and written through the caller's ``open_output``: the command line's
``OutputWriter``, which names the option in one line and exit 2 when a write fails, or
anything a server likes; ``plain_output`` is the default, for a caller without one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import BinaryIO, Protocol

from racing_demon.files import Output, OutputError, refuse_inputs
from racing_demon.usage import UsageProblem


class TournamentUsageError(UsageProblem):
    """A run whose settings cannot be used: nothing was written."""


class Writer(Protocol):
    """Writes an output; it is whole once its context ends without an error."""

    def write(self, data: bytes, /) -> object: ...


OpenOutput = Callable[[Output, str], AbstractContextManager[Writer]]


def checked_output(
    name: str, *, replace: bool, inputs: Iterable[Path], option: str, mode: int = 0o644
) -> Output:
    """The output ``name`` (``-`` for standard output), refused (TournamentUsageError
    naming ``option``) if it exists and is not to be replaced, or is one of ``inputs``."""
    output = Output.named(name, replace=replace, mode=mode)
    try:
        refuse_inputs(output, inputs)
        output.check_free()
    except OutputError as error:
        raise TournamentUsageError(str(error), option) from error
    return output


def write_output(open_output: OpenOutput, output: Output, option: str, data: bytes) -> None:
    """``data`` written to ``output`` through the caller's writer."""
    with open_output(output, option) as writer:
        writer.write(data)


@contextlib.contextmanager
def plain_output(output: Output, option: str) -> Iterator[BinaryIO]:
    """``output`` opened for a caller with no writer of its own: committed when the
    context ends normally, else discarded (a replaced file then stays as it was). Its
    errors are OutputError and OSError, as they come; ``option`` is not needed to say them."""
    stream = output.open()
    try:
        yield stream
    except BaseException:
        output.discard()
        raise
    output.commit()
