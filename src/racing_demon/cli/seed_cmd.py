"""``racing-demon seed``: make a dealer secret and its commitment, or check a reveal."""

from __future__ import annotations

import json
from pathlib import Path

import click

from racing_demon.cli.options import (
    SECRET_SOURCES,
    deprecated,
    hex_problem,
    hex_value,
    json_option,
    secret_option,
)
from racing_demon.cli.output import OutputWriter
from racing_demon.files import STDOUT, Output, OutputError
from racing_demon.game.deal import SECRET_BYTES, check_reveal, commitment, new_secret
from racing_demon.outcomes import ExitCode
from racing_demon.report.documents import seed_check_document
from racing_demon.report.text import seed_document


def _commitment_and_secret(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[str, ...]:
    """COMMITMENT, or the deprecated SECRET COMMITMENT, each 64 hex, in lowercase."""
    if len(values) == 2:
        deprecated(
            "seed check SECRET COMMITMENT",
            f"seed check COMMITMENT --secret SOURCE (SOURCE is {SECRET_SOURCES})",
        )
    elif len(values) != 1:
        raise click.UsageError(
            f"give one COMMITMENT (and --secret SOURCE), got {len(values)} arguments", ctx
        )
    check = hex_value(2 * SECRET_BYTES)
    if len(values) == 2 and (problem := hex_problem(values[0], 2 * SECRET_BYTES)) is not None:
        # Named SECRET: the argument's metavar, COMMITMENT, would blame the commitment.
        raise click.BadParameter(problem, ctx, param_hint="SECRET")
    return tuple(str(check(ctx, param, value)) for value in values)


@click.group(
    short_help="Make a dealer secret and its commitment; check a reveal.",
    epilog="""\b
Examples:
  racing-demon seed new                # before play: publish the commitment
  racing-demon seed new -o secret.txt  # the secret in a new file, mode 0600
  racing-demon seed check COMMITMENT --secret file:secret.txt   # after play
""",
)
def seed() -> None:
    """Commit to a dealer secret before play, and check its reveal after.

    The dealer publishes the commitment before players contribute entropy and
    reveals the secret when the match ends (racing-demon docs deal-spec): no seat can
    foresee the deal, and a dealer that holds none of the seats' keys cannot steer it.
    """


@seed.command(name="new", short_help="Print a new dealer secret and its commitment.")
@json_option
@click.option(
    "-o",
    "--out",
    "out",
    metavar="FILE",
    help="Write the secret (64 hex and a newline) to FILE, a new file of mode 0600 (an "
    "existing FILE is never replaced), and print only the commitment. Read it back with "
    "--secret file:FILE.",
)
def new(as_json: bool, out: str | None) -> None:
    """Print a fresh dealer secret and the commitment to publish before play."""
    secret = new_secret()
    if out is not None:
        if as_json:
            raise click.UsageError("--json prints the secret: give -o FILE or --json, not both")
        _write_secret(out, secret)
        click.echo(f"secret      written to {out} (mode 0600)   keep it private until the end")
        click.echo(f"commitment  {commitment(secret)}   publish before players contribute")
        return
    document = seed_document(secret.hex(), commitment(secret))
    if as_json:
        click.echo(json.dumps(document, indent=2))
        return
    click.echo(f"secret      {document['secret']}   keep private until the match ends")
    click.echo(f"commitment  {document['commitment']}   publish before players contribute")


def _write_secret(name: str, secret: bytes) -> None:
    """``secret`` into a new regular file that only its owner can read: never over an
    existing file (a secret replaced is a commitment that can no longer be opened)."""
    if name == STDOUT:
        raise click.BadParameter("give a file: without -o the secret is printed", param_hint="-o")
    output = Output(Path(name), mode=0o600, exact_mode=True, regular_only=True)
    try:
        output.check_free()
    except OutputError as error:
        # seed new has no --force: a secret is never replaced.
        message = str(error).replace(" (use --force to replace it)", "")
        raise click.BadParameter(message, param_hint="-o") from error
    with OutputWriter(output, "-o") as writer:
        writer.write(secret.hex().encode("ascii") + b"\n")


@seed.command(name="check", short_help="Check that a revealed secret opens its commitment.")
# nargs=-1: the deprecated form put the secret itself first, SECRET COMMITMENT.
@click.argument("arguments", metavar="COMMITMENT", nargs=-1, callback=_commitment_and_secret)
@secret_option("The revealed secret, as `seed new -o FILE` wrote it.")
@json_option
def check(arguments: tuple[str, ...], secret: bytes | None, as_json: bool) -> None:
    """Check that the secret read from --secret SOURCE opens COMMITMENT (64 hex,
    either case).

    Exit 0 when it does, 1 when it does not, 2 when an argument is malformed.
    """
    *given, commitment_hex = arguments
    if given and secret is not None:
        raise click.UsageError("give the secret once: --secret SOURCE, not also SECRET")
    if given:
        secret = bytes.fromhex(given[0])
    if secret is None:
        raise click.UsageError(f"give --secret SOURCE ({SECRET_SOURCES}): the secret to check")
    opens = check_reveal(secret, commitment_hex)
    if as_json:
        click.echo(json.dumps(seed_check_document(commitment_hex, opens=opens), indent=2))
    elif opens:
        click.echo("ok: the secret matches the commitment")
    else:
        click.echo("MISMATCH: this secret does not open this commitment")  # a verdict
    if not opens:
        raise SystemExit(ExitCode.NO)
