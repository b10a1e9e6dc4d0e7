"""``racing-demon seed``: make a dealer secret and its commitment, or check a reveal."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click

from racing_demon.cli.options import json_option
from racing_demon.cli.output import OutputWriter
from racing_demon.files import STDOUT, Output, OutputError
from racing_demon.game.deal import SECRET_BYTES, check_reveal, commitment, new_secret
from racing_demon.outcomes import ExitCode
from racing_demon.report.documents import seed_check_document
from racing_demon.report.text import seed_document

_HEX64 = re.compile(r"[0-9a-f]{64}")


def _hex64(ctx: click.Context, param: click.Parameter, value: str) -> str:
    if not _HEX64.fullmatch(value):
        raise click.BadParameter(
            f"expected {SECRET_BYTES * 2} lowercase hex characters, got {len(value)} characters",
            ctx,
            param,
        )
    return value


@click.group(
    short_help="Make a dealer secret and its commitment; check a reveal.",
    epilog="""\b
Examples:
  racing-demon seed new                # before play: publish the commitment
  racing-demon seed new -o secret.txt  # the secret in a new file, mode 0600
  racing-demon seed check SECRET COMMITMENT   # after it: check the reveal
""",
)
def seed() -> None:
    """Commit to a dealer secret before play, and check its reveal after.

    The dealer publishes the commitment before players contribute entropy and
    reveals the secret when the match ends (racing-demon docs deal-spec), so nobody can
    choose or predict the deal.
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


@seed.command(name="check")
@click.argument("secret", callback=_hex64)
@click.argument("commitment_hex", metavar="COMMITMENT", callback=_hex64)
@json_option
def check(secret: str, commitment_hex: str, as_json: bool) -> None:
    """Check that SECRET opens COMMITMENT (both 64 hex characters).

    Exit 0 when it does, 1 when it does not, 2 when an argument is malformed.
    """
    opens = check_reveal(bytes.fromhex(secret), commitment_hex)
    if as_json:
        click.echo(json.dumps(seed_check_document(commitment_hex, opens=opens), indent=2))
    elif opens:
        click.echo("ok: the secret matches the commitment")
    else:
        click.echo("MISMATCH: this secret does not open this commitment", err=True)
    if not opens:
        raise SystemExit(ExitCode.NO)
