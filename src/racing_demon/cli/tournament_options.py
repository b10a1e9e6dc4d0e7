"""What the ``tournament`` subcommands share: the terms' options (one spelling for
``commit`` and ``plan``), a name's check, where the reporters print, and the library's
refusals made click's (the use cases are ``racing_demon.tournament``'s)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from racing_demon.cli.options import rules_option, secret_option
from racing_demon.game.duplicate import MAX_NAME_BYTES, MAX_TABLES
from racing_demon.game.rules import MAX_HANDS


def tournament_name(ctx: click.Context, param: click.Parameter, value: str) -> str:
    # A byte that is not UTF-8 reaches here as a lone surrogate, which no JSON file holds.
    unencodable = any("\ud800" <= character <= "\udfff" for character in value)
    if not value or unencodable or len(value.encode("utf-8")) > MAX_NAME_BYTES:
        raise click.BadParameter(f"a name is 1 to {MAX_NAME_BYTES} bytes of UTF-8", ctx, param)
    return value


_Command = TypeVar("_Command", bound=Callable[..., Any])


def terms_options(command: _Command) -> _Command:
    """The terms `commit` publishes and `plan` is held to: the organiser's secret, the
    tournament's name and shape, and its rules (one spelling for both commands)."""
    for option in reversed(
        (
            secret_option("The organiser's secret, as `seed new -o FILE` wrote it.", required=True),
            click.option(
                "--name", required=True, callback=tournament_name, help="The tournament's name."
            ),
            click.option(
                "--tables",
                required=True,
                type=click.IntRange(1, MAX_TABLES),
                help="How many tables.",
            ),
            click.option(
                "--seats", required=True, type=click.IntRange(2, 52), help="Seats at every table."
            ),
            click.option(
                "--hands",
                required=True,
                type=click.IntRange(1, MAX_HANDS),
                help="Hands every table plays.",
            ),
            rules_option,
        )
    ):
        command = option(command)
    return command
