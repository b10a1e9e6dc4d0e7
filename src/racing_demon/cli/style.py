"""How the commands' text looks and how much it says: ``--color``, ``-q`` and ``-v``.

The reporters write ANSI colour into their text (``report.text.Colour``) and ``click.echo``
strips it unless colour is on. ``--color`` decides that once, on the command's context,
which every ``click.echo`` of the command consults: ``auto`` (the default) colours a
stream that is a terminal unless ``NO_COLOR`` is set to anything but the empty string
(https://no-color.org), ``always`` colours even a pipe or with ``NO_COLOR``, ``never``
colours nothing. ``FORCE_COLOR`` is not read: as in click and check-jsonschema, the
option is the one way to force colour. The options are added to the commands here, in
one place (``add_output_options``, as each command is registered), so that every command
spells and means them alike; there too every command gets the help formatter, which wraps
at spaces only.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from racing_demon.report.text import Verbosity

# Where the options leave the verbosity, for the command to read: ``ctx.meta`` is shared by
# a command's context and its group's, so it is found from any of them.
_VERBOSITY = "racing_demon.verbosity"

_COLOR_MODES = {"always": True, "never": False}


def _set_color(ctx: click.Context, param: click.Parameter, value: str) -> None:
    if value == "auto":
        # None leaves it to click: colour exactly when the stream written is a terminal.
        ctx.color = False if os.environ.get("NO_COLOR") else None
    else:
        ctx.color = _COLOR_MODES[value]


def _set_level(
    level: Verbosity, other: str
) -> Callable[[click.Context, click.Parameter, bool], None]:
    def callback(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        if not value:
            return
        if ctx.meta.get(_VERBOSITY, level) is not level:
            shown = "/".join(param.opts)
            raise click.UsageError(f"{shown} contradicts {other}: give one or the other")
        ctx.meta[_VERBOSITY] = level

    return callback


def color_option() -> click.Option:
    return click.Option(
        ["--color"],
        type=click.Choice(["auto", "always", "never"]),
        default="auto",
        show_default=True,
        expose_value=False,
        is_eager=True,  # set before any other option's callback can print
        callback=_set_color,
        help="Colour the text: auto colours a terminal unless NO_COLOR is set.",
    )


def verbosity_options() -> list[click.Option]:
    # Imported here, by the commands that take -q and -v: the group's start needs no reporter.
    from racing_demon.report.text import Verbosity

    return [
        click.Option(
            ["-q", "--quiet"],
            is_flag=True,
            expose_value=False,
            callback=_set_level(Verbosity.QUIET, "-v/--verbose"),
            help="Print the verdict lines only.",
        ),
        click.Option(
            ["-v", "--verbose"],
            is_flag=True,
            expose_value=False,
            callback=_set_level(Verbosity.VERBOSE, "-q/--quiet"),
            help="Print every problem found (every schema error) and every step checked.",
        ),
    ]


def verbosity() -> Verbosity:
    """What ``-q`` or ``-v`` asked of the command being run (``NORMAL`` without them)."""
    from racing_demon.report.text import Verbosity

    level = click.get_current_context().meta.get(_VERBOSITY, Verbosity.NORMAL)
    assert isinstance(level, Verbosity)
    return level


# Stands in for "-" while click wraps help: textwrap breaks a line after a hyphen, and a
# name such as "racing-demon docs log-format" or "--max-records" must stay whole.
_UNBROKEN_HYPHEN = "\u2011"


class HelpFormatter(click.HelpFormatter):
    """Click's help formatter, wrapping at spaces only, never after a hyphen."""

    def write_text(self, text: str) -> None:
        super().write_text(text.replace("-", _UNBROKEN_HYPHEN))

    def write_dl(
        self, rows: Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2
    ) -> None:
        kept = [(term, words.replace("-", _UNBROKEN_HYPHEN)) for term, words in rows]
        super().write_dl(kept, col_max, col_spacing)

    def getvalue(self) -> str:
        return super().getvalue().replace(_UNBROKEN_HYPHEN, "-")


class Context(click.Context):
    formatter_class = HelpFormatter


def add_output_options(command: click.Command, name: str, with_verbosity: Collection[str]) -> None:
    """Give ``command`` (named ``name``), or every command of a group, ``--color``, and
    those named in ``with_verbosity`` (``"tournament score"`` for a subcommand) ``-q`` and
    ``-v``; and help wrapped by ``HelpFormatter``."""
    for path, each in _commands(command, name):
        each.context_class = Context
        if isinstance(each, click.Group):
            continue
        each.params.append(color_option())
        if path in with_verbosity:
            each.params += verbosity_options()


def _commands(command: click.Command, path: str) -> Iterator[tuple[str, click.Command]]:
    """``command`` and, if it is a group, every command under it, each with its path."""
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from _commands(sub, f"{path} {name}")
