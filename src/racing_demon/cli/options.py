"""Options shared by several commands, as decorators."""

from __future__ import annotations

import functools
import os
import re
import string
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.cli.output import note_input, take_stdin
from racing_demon.files import read_regular
from racing_demon.game.deal import SECRET_BYTES
from racing_demon.game.rules import Rules
from racing_demon.log.keys import KeyFileError, load_private_key, load_public_key, raw_public_bytes
from racing_demon.log.reader import DEFAULT_LIMITS, Limits
from racing_demon.profiles import (
    BUILT_IN,
    DEFAULT_PROFILE,
    ProfileError,
    load_rules,
    pinned_digest,
)
from racing_demon.usage import SECRET_SOURCES

F = TypeVar("F", bound=Callable[..., object])


def _to_rules(ctx: click.Context, param: click.Parameter, value: str) -> Rules:
    if value not in BUILT_IN and Path(value).suffix == ".json":
        note_input(ctx, Path(value))  # a profile file is an input: no output replaces it
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


def _pinned_rules(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    if value not in BUILT_IN and Path(value).suffix == ".json":
        note_input(ctx, Path(value))  # a profile file is an input: no report replaces it
    try:
        return pinned_digest(value)
    except ProfileError as error:
        # One line: a profile file's problems follow a colon, separated by semicolons.
        problems = str(error).replace(":\n  ", ": ").replace("\n  ", "; ")
        raise click.BadParameter(" ".join(problems.split()), ctx, param) from error


def pinned_rules_option(function: F) -> F:
    """``--rules NAME|FILE|SHA256``: the pinned rules, passed on as their digest."""
    return click.option(
        "--rules",
        "rules",
        metavar="NAME|FILE|SHA256",
        callback=_pinned_rules,
        help=f"The rules the log must have: a built-in profile ({', '.join(BUILT_IN)}), a "
        "profile .json file, or a rules digest (64 hex, as reports show it). A log of other "
        "rules does not verify (WRONG_RULES).",
    )(function)


def json_option(function: F) -> F:
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="Print JSON instead of text (racing-demon docs command-line names its schema).",
    )(function)


def _table_key(ctx: click.Context, param: click.Parameter, value: Path | None) -> bytes | None:
    if value is None:
        return None
    note_input(ctx, value)
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


def hex_problem(text: str, length: int) -> str | None:
    """What keeps ``text`` from being ``length`` hex characters (either case), or None.

    Quotes no more of ``text`` than one character that is not hex: ``text`` may be a
    secret with a typo."""
    expected = f"expected {length} hex characters (0-9, a-f)"
    if len(text) != length:
        return f"{expected}, got {len(text)}"
    for position, character in enumerate(text, 1):
        if character not in string.hexdigits:
            return f"{expected}, got {character!r} at position {position}"
    return None


def hex_value(length: int) -> Callable[[click.Context, click.Parameter, str | None], str | None]:
    """A click callback: ``length`` hex characters, in either case, passed on in lowercase
    (the case every log, report and digest uses)."""

    def callback(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None:
            return None
        problem = hex_problem(value, length)
        if problem is not None:
            raise click.BadParameter(problem, ctx, param)
        return value.lower()

    return callback


def deprecated(old: str, new: str) -> None:
    """One line on standard error for a spelling that still works for one release."""
    click.echo(
        f"racing-demon: {old} is deprecated and will be removed in the next release: give {new}",
        err=True,
    )


MAX_SEED_CHARACTERS = 1000


def plain_seed(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--seed TEXT``, a plain seed: bounded, as every input is (a seed is a name, not a
    document; the deal and the simulation would take a 100,000-character one whole)."""
    if value is not None and len(value) > MAX_SEED_CHARACTERS:
        raise click.BadParameter(
            f"a seed is at most {MAX_SEED_CHARACTERS:,} characters, got {len(value):,}",
            ctx,
            param,
        )
    return value


_SECRET_HEX = 2 * SECRET_BYTES


def _secret_text(ctx: click.Context, param: click.Parameter, source: str) -> tuple[str, str]:
    """The text ``source`` names, and how to name it in a message (never the text)."""
    if source == "stdin":
        take_stdin("--secret stdin")  # refused if a log (LOG -) reads it too
    kind, _, name = source.partition(":")
    if kind == "file" and name:
        path = Path(name)
        note_input(ctx, path)  # an output must never replace the secret
        try:
            data = read_regular(path)
        except OSError as error:
            raise click.BadParameter(f"cannot read {path}: {error.strerror}", ctx, param) from error
        shown = str(path)
    elif kind == "env" and name:
        value = os.environ.get(name)
        if value is None:
            raise click.BadParameter(f"the environment has no variable {name}", ctx, param)
        data, shown = value.encode("utf-8", "surrogateescape"), f"${name}"
    elif source == "stdin" and sys.stdin.isatty():
        # Typed at a terminal: not echoed, so it is not left on the screen.
        data = click.prompt("Secret", hide_input=True, err=True).encode("utf-8")
        shown = "the terminal"
    elif source == "stdin":
        data, shown = sys.stdin.buffer.readline(), "standard input"
    else:
        # Never echo the value: it may be the secret itself, typed where a source belongs.
        raise click.BadParameter(
            f"give where the secret is ({SECRET_SOURCES}), never the secret itself: "
            "a command line is seen by every user of the machine and kept in shell history",
            ctx,
            param,
        )
    # A file or a line ends with a newline that is no part of the secret.
    return data.decode("ascii", "replace").removesuffix("\n").removesuffix("\r"), shown


def _secret_source(ctx: click.Context, param: click.Parameter, value: str | None) -> bytes | None:
    if value is None:
        return None
    text, shown = _secret_text(ctx, param, value)
    problem = hex_problem(text, _SECRET_HEX)
    if problem is not None:
        raise click.BadParameter(
            f"{shown} holds no secret: {problem} (as `racing-demon seed new -o FILE` writes it)",
            ctx,
            param,
        )
    return bytes.fromhex(text)


def secret_option(help: str, *, required: bool = False) -> Callable[[F], F]:
    """``--secret SOURCE``: a secret (64 hex) read from ``file:PATH``, ``env:VAR`` or
    ``stdin``, passed on as 32 bytes; never given on the command line."""
    return click.option(
        "--secret",
        metavar="SOURCE",
        required=required,
        callback=_secret_source,
        help=f"{help} SOURCE is {SECRET_SOURCES}.",
    )


def _deprecated_seed_secret(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> bytes | None:
    if value is None:
        return None
    deprecated("--seed SECRET", f"--secret {SECRET_SOURCES}")
    problem = hex_problem(value, _SECRET_HEX)
    if problem is not None:
        raise click.BadParameter(problem, ctx, param)
    return bytes.fromhex(value)


def dealer_secret_option(help: str) -> Callable[[F], F]:
    """``--secret SOURCE`` (``secret_option``), and the spelling it replaces, ``--seed
    SECRET`` (the secret itself, on the command line), kept working for one release: the
    command gets one ``secret`` argument, the 32 bytes or None."""

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def with_secret(*args: Any, secret: bytes | None, seed: bytes | None, **kwargs: Any) -> Any:
            if secret is not None and seed is not None:
                raise click.UsageError("give --secret, not also the deprecated --seed")
            return function(*args, secret=seed if secret is None else secret, **kwargs)

        # Hidden: --help shows one way to give the secret, the one that keeps it private.
        hidden = click.option(
            "--seed", metavar="SECRET", hidden=True, callback=_deprecated_seed_secret
        )
        return secret_option(help)(hidden(with_secret))  # type: ignore[return-value]

    return decorate


_SIZE = re.compile(r"([0-9]{1,12})([KMG]?)")
_SIZE_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def _size(ctx: click.Context, param: click.Parameter, value: str | int) -> int:
    """A positive count, with an optional binary suffix: 65536, 64K, 64M, 1G."""
    match = _SIZE.fullmatch(str(value).strip().upper())
    if match is None or int(match[1]) == 0:
        raise click.BadParameter(
            f"expected a positive number such as 65536, 64K or 64M, got {value!r}", ctx, param
        )
    return int(match[1]) * _SIZE_UNITS[match[2]]


def _size_text(size: int) -> str:
    """``size`` with the largest binary suffix that divides it: 67108864 -> 64M."""
    unit = max(
        (u for u, factor in _SIZE_UNITS.items() if size % factor == 0), key=lambda u: _SIZE_UNITS[u]
    )
    return f"{size // _SIZE_UNITS[unit]}{unit}"


def limits_options(function: F) -> F:
    """``--max-file-bytes``, ``--max-line-bytes``, ``--max-records`` (docs/log-format.md §1),
    passed on to the command as one ``limits`` argument."""

    @functools.wraps(function)
    def with_limits(
        *args: Any, max_file_bytes: int, max_line_bytes: int, max_records: int, **kwargs: Any
    ) -> Any:
        limits = Limits(
            max_file_bytes=max_file_bytes, max_line_bytes=max_line_bytes, max_records=max_records
        )
        return function(*args, limits=limits, **kwargs)

    options = (
        ("--max-file-bytes", DEFAULT_LIMITS.max_file_bytes, "Refuse a larger file."),
        ("--max-line-bytes", DEFAULT_LIMITS.max_line_bytes, "Refuse a longer line."),
        ("--max-records", DEFAULT_LIMITS.max_records, "Refuse a file of more lines."),
    )
    decorated: Any = with_limits
    for name, default, help in reversed(options):
        decorated = click.option(
            name,
            default=_size_text(default),
            show_default=True,
            metavar="N",
            callback=_size,
            help=help,
        )(decorated)
    return decorated  # type: ignore[no-any-return]


def force_option(help: str) -> Callable[[F], F]:
    """``--force``: replace an existing output file (never one of the inputs)."""
    return click.option("--force", is_flag=True, help=help)


def private_key_from(
    path: Path, passphrase_file: Path | None, ask: bool, param_hint: str
) -> Ed25519PrivateKey:
    """The private key in ``path``, decrypted with the passphrase in ``passphrase_file`` or
    one asked for (``ask``); a key file that is a public key says so."""
    if passphrase_file is not None:
        passphrase: bytes | None = read_passphrase(passphrase_file)
    elif ask:
        passphrase = click.prompt("Passphrase", hide_input=True, err=True).encode()
    else:
        passphrase = None
    try:
        return load_private_key(path, passphrase)
    except KeyFileError as error:
        hint = ": that is a public key; give the private NAME.key" if _is_public(path) else ""
        raise click.BadParameter(f"{error}{hint}", param_hint=param_hint) from error


def _is_public(path: Path) -> bool:
    try:
        load_public_key(path)
    except KeyFileError:
        return False
    return True


def read_passphrase(path: Path) -> bytes:
    """The passphrase in a file, without the newline an editor adds."""
    try:
        text = read_regular(path)
    except OSError as error:
        raise click.BadParameter(
            f"cannot read {path}: {error.strerror}", param_hint="--passphrase-file"
        ) from error
    # Editors end a file with a newline that nobody means as part of the passphrase.
    passphrase = text[:-2] if text.endswith(b"\r\n") else text.removesuffix(b"\n")
    if not passphrase:
        raise click.BadParameter(f"{path} holds no passphrase", param_hint="--passphrase-file")
    return passphrase


def _deprecated_table_key(
    ctx: click.Context, param: click.Parameter, value: Path | None
) -> Path | None:
    if value is not None:
        deprecated("--table-key KEY for the private key", "--signing-key KEY")
    return value


def signing_key_option(help: str) -> Callable[[F], F]:
    """``--signing-key KEY``: the table's private key file, passed on as its path; and the
    spelling it replaces, ``--table-key KEY``, kept working for one release (everywhere
    else ``--table-key`` is the table's public key)."""

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def with_key(
            *args: Any, signing_key: Path | None, table_key: Path | None, **kwargs: Any
        ) -> Any:
            if signing_key is not None and table_key is not None:
                raise click.UsageError("give --signing-key, not also the deprecated --table-key")
            key = signing_key or table_key
            if key is None:
                raise click.UsageError("Missing option '--signing-key'.")
            return function(*args, signing_key=key, **kwargs)

        path = click.Path(dir_okay=False, path_type=Path)
        old = click.option(
            "--table-key", metavar="KEY", type=path, hidden=True, callback=_deprecated_table_key
        )
        # Required, but checked above: the deprecated spelling may stand in for it, so
        # click is not told, and the help says it as click would.
        new = click.option("--signing-key", metavar="KEY", type=path, help=f"{help}  [required]")
        return new(old(with_key))  # type: ignore[return-value]

    return decorate
