"""What a command that makes one call to a library use case needs around it: where the
use case's reporter prints, and its ``UsageProblem`` as click's usage error (exit 2)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click

from racing_demon.printing import printable
from racing_demon.usage import UsageProblem


def echo(text: str, to_stderr: bool) -> None:
    """A reporter's ``Echo`` on the command line: ``click.echo``, which strips the
    reporter's colour off a stream that is no terminal unless ``--color`` says otherwise."""
    click.echo(text, err=to_stderr)


@contextmanager
def usage_problems() -> Iterator[None]:
    """A ``UsageProblem`` raised inside (any use case's) as click's ``Invalid value for
    OPTION``, or as its usage error when it names no option (exit 2); its message shown
    printably, since it may quote a file's text."""
    try:
        yield
    except UsageProblem as problem:
        if problem.option is None:
            raise click.UsageError(printable(str(problem))) from problem
        raise click.BadParameter(printable(str(problem)), param_hint=problem.option) from problem
