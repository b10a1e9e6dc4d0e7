"""``racing-demon seed``: make a dealer secret and its commitment, or check a reveal; the
use cases are ``racing_demon.keys_run.run_seed_new`` and ``run_seed_check``."""

from __future__ import annotations

import click

from racing_demon.cli.options import (
    deprecated,
    hex_problem,
    hex_value,
    json_option,
    secret_option,
)
from racing_demon.cli.output import OutputWriter
from racing_demon.cli.use_cases import echo, usage_problems
from racing_demon.game.deal import SECRET_BYTES
from racing_demon.keys_run import SeedCheck, SeedRun, run_seed_check, run_seed_new
from racing_demon.report.keys import seed_reporter_named
from racing_demon.usage import SECRET_SOURCES


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
    reporter = seed_reporter_named("json" if as_json else "text", echo)
    with usage_problems():
        run_seed_new(SeedRun(out=out), reporter, open_output=OutputWriter)


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
    reporter = seed_reporter_named("json" if as_json else "text", echo)
    code = run_seed_check(SeedCheck(commitment=commitment_hex, secret=secret), reporter)
    if code:
        raise SystemExit(code)
