"""``racing-demon keygen``: make an Ed25519 key pair for a table or a player."""

from __future__ import annotations

import json
from pathlib import Path

import click
from click.core import ParameterSource

from racing_demon.cli.options import json_option, read_passphrase
from racing_demon.files import Output, OutputError, refuse_inputs
from racing_demon.log.keys import (
    KeyFileError,
    generate_private_key,
    key_files,
    key_id,
    raw_public_bytes,
    save_key_pair,
)
from racing_demon.printing import printable
from racing_demon.report.documents import keygen_document


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
    if (
        Path(name).is_absolute()
        and ctx.get_parameter_source("directory") is ParameterSource.COMMANDLINE
    ):
        raise click.UsageError(
            f"NAME '{printable(name)}' is a whole path: give it, or --dir, not both"
        )
    try:
        files = key_files(directory, name)
    except KeyFileError as error:
        raise click.BadParameter(str(error), param_hint="NAME") from error
    if not files.private.parent.is_dir():
        raise click.BadParameter(
            f"no folder {files.private.parent}: make it first, or give another NAME",
            param_hint="NAME",
        )
    for written in (files.private, files.public):
        try:
            refuse_inputs(
                Output(written, replace=force), [] if passphrase_file is None else [passphrase_file]
            )
        except OutputError as error:
            raise click.BadParameter(str(error), param_hint="NAME") from error
    # Checked again, race-free, when writing; checking now spares a passphrase prompt.
    existing = files.existing()
    if existing and not force:
        shown = " and ".join(map(str, existing))
        raise click.UsageError(f"not replacing existing {shown} (use --force to replace the pair)")
    if passphrase_file is not None:
        passphrase: bytes | None = read_passphrase(passphrase_file)
    elif ask_passphrase:
        passphrase = click.prompt(
            "Passphrase", hide_input=True, confirmation_prompt=True, err=True
        ).encode()
    else:
        passphrase = None
    private_key = generate_private_key()
    try:
        save_key_pair(private_key, directory, name, passphrase=passphrase, overwrite=force)
    except KeyFileError as error:
        raise click.UsageError(str(error)) from error
    identity = key_id(raw_public_bytes(private_key))
    if as_json:
        document = keygen_document(
            identity, files.private, files.public, encrypted=passphrase is not None
        )
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    click.echo(f"key id   {identity}")
    click.echo(f"private  {files.private}")
    click.echo(f"public   {files.public}")
