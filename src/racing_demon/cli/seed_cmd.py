"""``racing-demon seed``: make a dealer secret and its commitment, or check a reveal."""

from __future__ import annotations

import json
import re

import click

from racing_demon.cli.options import json_option
from racing_demon.game.deal import SECRET_BYTES, check_reveal, commitment, new_secret
from racing_demon.outcomes import ExitCode
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
    epilog="""\b
Examples:
  racing-demon seed new                 # before the match: publish the commitment
  racing-demon seed check SECRET COMMITMENT   # after it: check the dealer's reveal
"""
)
def seed() -> None:
    """Commit to a dealer secret before play, and check its reveal after.

    The dealer publishes the commitment before players contribute entropy and
    reveals the secret when the match ends (docs/deal-spec.md), so nobody can
    choose or predict the deal.
    """


@seed.command(name="new")
@json_option
def new(as_json: bool) -> None:
    """Print a fresh dealer secret and the commitment to publish before play."""
    secret = new_secret()
    document = seed_document(secret.hex(), commitment(secret))
    if as_json:
        click.echo(json.dumps(document, indent=2))
        return
    click.echo(f"secret      {document['secret']}   keep private until the match ends")
    click.echo(f"commitment  {document['commitment']}   publish before players contribute")


@seed.command(name="check")
@click.argument("secret", callback=_hex64)
@click.argument("commitment_hex", metavar="COMMITMENT", callback=_hex64)
def check(secret: str, commitment_hex: str) -> None:
    """Check that SECRET opens COMMITMENT (both 64 hex characters).

    Exit 0 when it does, 1 when it does not, 2 when an argument is malformed.
    """
    if check_reveal(bytes.fromhex(secret), commitment_hex):
        click.echo("ok: the secret matches the commitment")
        return
    click.echo("MISMATCH: this secret does not open this commitment", err=True)
    raise SystemExit(ExitCode.NO)
