"""The key and secret use cases: ``run_keygen``, ``run_seed_new`` and ``run_seed_check`` do
what ``racing-demon keygen``, ``seed new`` and ``seed check`` do, for any caller (the
command line, a server), without click.

Each hands what it made or found to its reporter (text or JSON, chosen by name in
``racing_demon.report.keys``), which decides every word printed, and returns the exit
code. What the caller gets wrong (a key name that names no file, a file that would be
replaced) is a ``UsageProblem``, raised before any key or secret is written.

A private key is written to its file and never reported; a new dealer secret is reported
only when no file is given for it; a secret being checked is never reported (it may
still be private): only its commitment is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from racing_demon.files import STDOUT, Output, OutputError, refuse_inputs
from racing_demon.game.deal import check_reveal, commitment, new_secret
from racing_demon.log.keys import (
    KeyFileError,
    generate_private_key,
    key_files,
    key_id,
    raw_public_bytes,
    save_key_pair,
)
from racing_demon.outcomes import ExitCode
from racing_demon.printing import printable
from racing_demon.usage import UsageProblem


def _no_passphrase() -> bytes | None:
    return None


@dataclass(frozen=True, kw_only=True)
class KeygenRun:
    """Which key pair to make: ``racing-demon keygen``'s options but the reporter's."""

    name: str  # NAME: a file name or a path, with or without .key or .pub
    directory: Path | None = None  # the folder NAME is relative to; None: the current one
    # The private key's passphrase (None: not encrypted), asked for only once the pair's
    # files are known to be free, so that no prompt comes before a refusal.
    passphrase: Callable[[], bytes | None] = _no_passphrase
    replace: bool = False  # replace an existing pair
    inputs: Sequence[Path] = ()  # files read (a passphrase file): never written over


@dataclass(frozen=True, kw_only=True)
class KeyPair:
    """The pair written: its key id (the SHA-256 of the raw public key), its files, and
    whether the private key is encrypted."""

    key_id: str
    private: Path
    public: Path
    encrypted: bool


class KeygenReporter(Protocol):
    """What keygen prints: ``racing_demon.report.keys`` has the text and JSON ones."""

    def generated(self, pair: KeyPair) -> None:
        """The pair, once both files are written."""


def run_keygen(run: KeygenRun, reporter: KeygenReporter) -> ExitCode:
    """Write a new Ed25519 key pair as ``run`` says and report it to ``reporter``.
    Raises UsageProblem before anything is written."""
    name, directory = run.name, Path(".") if run.directory is None else run.directory
    if Path(name).is_absolute() and run.directory is not None:
        raise UsageProblem(f"NAME '{printable(name)}' is a whole path: give it, or --dir, not both")
    try:
        files = key_files(directory, name)
    except KeyFileError as error:
        raise UsageProblem(str(error), "NAME") from error
    if not files.private.parent.is_dir():
        raise UsageProblem(
            f"no folder {files.private.parent}: make it first, or give another NAME", "NAME"
        )
    for written in (files.private, files.public):
        try:
            refuse_inputs(Output(written, replace=run.replace), run.inputs)
        except OutputError as error:
            raise UsageProblem(str(error), "NAME") from error
    # Checked again, race-free, when writing; checking now spares a passphrase prompt.
    existing = files.existing()
    if existing and not run.replace:
        shown = " and ".join(map(str, existing))
        raise UsageProblem(f"not replacing existing {shown} (use --force to replace the pair)")
    passphrase = run.passphrase()
    private_key = generate_private_key()
    try:
        save_key_pair(private_key, directory, name, passphrase=passphrase, overwrite=run.replace)
    except KeyFileError as error:
        raise UsageProblem(str(error)) from error
    identity = key_id(raw_public_bytes(private_key))
    reporter.generated(
        KeyPair(
            key_id=identity,
            private=files.private,
            public=files.public,
            encrypted=passphrase is not None,
        )
    )
    return ExitCode.OK


class SecretWriter(Protocol):
    """Writes the secret's file."""

    def write(self, data: bytes) -> None: ...


# Opens an output, given its option's name for messages (the command line's OutputWriter).
OpenOutput = Callable[[Output, str], AbstractContextManager[SecretWriter]]


@dataclass(frozen=True, kw_only=True)
class SeedRun:
    """Where a new dealer secret goes: ``racing-demon seed new``'s options but the
    reporter's."""

    out: str | None = None  # a new file for the secret, named as given; None: reported


class SeedReporter(Protocol):
    """What seed new and seed check print: ``racing_demon.report.keys`` has the text and
    JSON ones."""

    @property
    def whole_document(self) -> bool:
        """Whether it prints one document, which holds the secret made."""

    def made(self, secret_hex: str, commitment_hex: str) -> None:
        """A new secret and its commitment."""

    def written(self, out: str, commitment_hex: str) -> None:
        """A new secret written to ``out``, and its commitment."""

    def checked(self, commitment_hex: str, *, opens: bool) -> None:
        """Whether a secret (never shown) opens ``commitment_hex``."""


def run_seed_new(run: SeedRun, reporter: SeedReporter, *, open_output: OpenOutput) -> ExitCode:
    """Make a fresh dealer secret, write it to ``run.out`` when given (a new regular file
    of mode 0600, through ``open_output(output, "-o")``), and report it and the commitment
    to publish before play. Raises UsageProblem before writing anything."""
    secret = new_secret()
    if run.out is None:
        reporter.made(secret.hex(), commitment(secret))
        return ExitCode.OK
    if reporter.whole_document:
        raise UsageProblem("--json prints the secret: give -o FILE or --json, not both")
    _write_secret(run.out, secret, open_output)
    reporter.written(run.out, commitment(secret))
    return ExitCode.OK


def _write_secret(name: str, secret: bytes, open_output: OpenOutput) -> None:
    """``secret`` into a new regular file that only its owner can read: never over an
    existing file (a secret replaced is a commitment that can no longer be opened)."""
    if name == STDOUT:
        raise UsageProblem("give a file: without -o the secret is printed", "-o")
    output = Output(Path(name), mode=0o600, exact_mode=True, regular_only=True)
    try:
        output.check_free()
    except OutputError as error:
        # seed new has no --force: a secret is never replaced.
        message = str(error).replace(" (use --force to replace it)", "")
        raise UsageProblem(message, "-o") from error
    with open_output(output, "-o") as writer:
        writer.write(secret.hex().encode("ascii") + b"\n")


@dataclass(frozen=True, kw_only=True)
class SeedCheck:
    """A revealed secret and the commitment it must open (64 lowercase hex)."""

    commitment: str
    secret: bytes


def run_seed_check(check: SeedCheck, reporter: SeedReporter) -> ExitCode:
    """Report whether ``check.secret`` opens ``check.commitment``: 0 when it does, 1 when
    it does not."""
    opens = check_reveal(check.secret, check.commitment)
    reporter.checked(check.commitment, opens=opens)
    return ExitCode.OK if opens else ExitCode.NO
