"""``racing-demon tournament contribute``: make an entropy contribution to a tournament;
the use case is ``racing_demon.tournament.organise.run_contribute``."""

from __future__ import annotations

import functools
from pathlib import Path

import click

from racing_demon.cli.options import force_option, private_key_from
from racing_demon.cli.output import OutputWriter
from racing_demon.cli.style import verbosity
from racing_demon.cli.tournament_options import tournament_name
from racing_demon.cli.use_cases import echo, usage_problems
from racing_demon.report.tournament import tournament_reporter_named
from racing_demon.tournament.organise import ContributeRun, run_contribute


@click.command(
    name="contribute",
    short_help="Make an entropy contribution to a tournament.",
    epilog="""\b
Examples:
  racing-demon tournament contribute cup.json --by alice --key alice.key \\
      -o alice.json
  racing-demon tournament contribute cup.json --by organiser \\
      -o organiser.json   # unsigned
""",
)
@click.argument("terms_file", metavar="COMMITMENT", type=click.Path(path_type=Path))
@click.option(
    "--by", required=True, callback=tournament_name, help="Your name, as the plan will list it."
)
@click.option(
    "--key",
    type=click.Path(path_type=Path),
    help="Sign with this private key (NAME.key, as keygen writes it); without it the "
    "contribution is 32 random bytes, unsigned: the organiser's word.",
)
@click.option(
    "--passphrase-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Decrypt the key with the passphrase in FILE.",
)
@click.option("--ask-passphrase", is_flag=True, help="Decrypt the key; prompt for the passphrase.")
@click.option(
    "-o",
    "--out",
    "out",
    default="-",
    show_default=True,
    metavar="FILE",
    help="The contribution file to write (- for standard output).",
)
@force_option("Replace an existing FILE.")
def contribute_command(
    terms_file: Path,
    by: str,
    key: Path | None,
    passphrase_file: Path | None,
    ask_passphrase: bool,
    out: str,
    force: bool,
) -> None:
    """Make an entropy contribution to the tournament whose organiser
    published the commitment file COMMITMENT (`tournament commit` writes it),
    and hand the file to the organiser.

    With --key it is your Ed25519 signature over the tournament's terms (its
    name, tables, seats, hands, rules and commitment C) and your name: it
    proves the contribution came after them, so the organiser could not have
    chosen the secret, the shape or the rules knowing it. Signing is
    deterministic: the same terms give the same contribution. Exit 0 when
    written, 2 when COMMITMENT, an option or the key cannot be used.
    """
    if key is None and (passphrase_file is not None or ask_passphrase):
        raise click.UsageError("a passphrase decrypts --key: give --key too")
    if passphrase_file is not None and ask_passphrase:
        raise click.UsageError("give --passphrase-file or --ask-passphrase, not both")
    run = ContributeRun(
        terms_file=terms_file,
        by=by,
        signing_key=None
        if key is None
        else functools.partial(private_key_from, key, passphrase_file, ask_passphrase, "--key"),
        out=out,
        replace=force,
        inputs=[path for path in (terms_file, key, passphrase_file) if path is not None],
    )
    with usage_problems():
        run_contribute(run, tournament_reporter_named("text", verbosity(), echo), OutputWriter)
