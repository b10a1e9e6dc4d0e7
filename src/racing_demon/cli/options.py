"""Options shared by several commands, as decorators."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from racing_demon.log.keys import KeyFileError, load_public_key, raw_public_bytes
from racing_demon.profiles import BUILT_IN, DEFAULT_PROFILE, ProfileError, load_rules
from racing_demon.rules import Rules

F = TypeVar("F", bound=Callable[..., object])


def _to_rules(ctx: click.Context, param: click.Parameter, value: str) -> Rules:
    try:
        return load_rules(value)
    except ProfileError as error:
        raise click.BadParameter(str(error), ctx, param) from error


def rules_option(function: F) -> F:
    return click.option(
        "--rules",
        "rules",
        default=DEFAULT_PROFILE,
        show_default=True,
        metavar="PROFILE",
        callback=_to_rules,
        help=f"A built-in profile ({', '.join(BUILT_IN)}) or a profile .json file.",
    )(function)


def json_option(function: F) -> F:
    return click.option(
        "--json", "as_json", is_flag=True, help="Print JSON (described by a schema in schemas/)."
    )(function)


def _table_key(ctx: click.Context, param: click.Parameter, value: Path | None) -> bytes | None:
    if value is None:
        return None
    try:
        return raw_public_bytes(load_public_key(value))
    except KeyFileError as error:
        raise click.BadParameter(str(error), ctx, param) from error


def table_key_option(*, required: bool) -> Callable[[F], F]:
    """``--table-key PUB``: the pinned table key, loaded and checked (raw 32 bytes)."""
    return click.option(
        "--table-key",
        metavar="PUB",
        required=required,
        type=click.Path(path_type=Path),
        callback=_table_key,
        help="The table's public key (SPKI PEM, as keygen writes it): who must have signed.",
    )
