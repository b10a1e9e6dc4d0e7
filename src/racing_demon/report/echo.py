"""Where the reporters print: an ``Echo`` that the caller gives them, ``click.echo`` on the
command line, anything a server likes, ``print_echo`` by default."""

from __future__ import annotations

import sys
from collections.abc import Callable

# Prints a text on standard output, or standard error when the flag says so.
Echo = Callable[[str, bool], None]


def print_echo(text: str, to_stderr: bool) -> None:
    """``Echo`` on this process's streams, for a caller without a command line. The text
    keeps the reporters' ANSI colour (``report.text``), which ``click.echo`` strips off a
    stream that is no terminal."""
    print(text, file=sys.stderr if to_stderr else sys.stdout, flush=True)
