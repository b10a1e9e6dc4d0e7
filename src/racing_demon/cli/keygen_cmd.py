"""``racing-demon keygen``: make an Ed25519 key pair for a table or a player; the use case
is ``racing_demon.keys_run.run_keygen``."""

from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

from racing_demon.cli.options import json_option, read_passphrase
from racing_demon.cli.use_cases import echo, usage_problems
from racing_demon.keys_run import KeygenRun, run_keygen
from racing_demon.report.keys import keygen_reporter_named


@click.command(
    short_help="Write an Ed25519 key pair for a table or a player.",
    epilog="""\b
Examples:
  racing-demon keygen table        # table.key and table.pub
  racing-demon keygen keys/table   # keys/table.key and keys/table.pub
  racing-demon keygen alice --dir keys --ask-passphrase
  racing-demon keygen table --passphrase-file secret.txt --force
""",
)
@click.argument("name")
@click.option(
    "--dir",
    "directory",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="The folder NAME is relative to.",
)
@click.option(
    "--passphrase-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Encrypt NAME.key with the passphrase in FILE (a final newline is not part of it).",
)
@click.option("--ask-passphrase", is_flag=True, help="Encrypt NAME.key; prompt for the passphrase.")
@click.option("--force", is_flag=True, help="Replace an existing NAME.key and NAME.pub.")
@json_option
@click.pass_context
def keygen(
    ctx: click.Context,
    name: str,
    directory: Path,
    passphrase_file: Path | None,
    ask_passphrase: bool,
    force: bool,
    as_json: bool,
) -> None:
    """Write a new Ed25519 key pair: NAME.key (private, mode 0600) and NAME.pub.

    NAME is a file name or a path (keys/table), in a folder that exists; a final
    .key or .pub names the same pair (table.key: table.key and table.pub). Prints
    the key id, the SHA-256 of the raw public key, by which logs name the key
    (racing-demon docs log-format 4). Existing files are kept unless --force.
    """
    if passphrase_file is not None and ask_passphrase:
        raise click.UsageError("give --passphrase-file or --ask-passphrase, not both")

    def passphrase() -> bytes | None:
        if passphrase_file is not None:
            return read_passphrase(passphrase_file)
        if ask_passphrase:
            asked: bytes = click.prompt(
                "Passphrase", hide_input=True, confirmation_prompt=True, err=True
            ).encode()
            return asked
        return None

    given = ctx.get_parameter_source("directory") is ParameterSource.COMMANDLINE
    run = KeygenRun(
        name=name,
        directory=directory if given else None,
        passphrase=passphrase,
        replace=force,
        inputs=[] if passphrase_file is None else [passphrase_file],
    )
    with usage_problems():
        run_keygen(run, keygen_reporter_named("json" if as_json else "text", echo))
