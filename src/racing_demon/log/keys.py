"""Ed25519 key pairs on disk, and the key id that names a public key in a log.

``NAME.key`` holds the private key as PKCS#8 PEM (encrypted when a passphrase is given), mode
0600; ``NAME.pub`` holds the public key as SubjectPublicKeyInfo PEM, mode 0644, so standard
tools read both (``openssl pkey -pubin -in NAME.pub -noout -text``).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from racing_demon.errors import RacingDemonError
from racing_demon.files import Output, OutputError, read_regular, shown_name
from racing_demon.log.signing import check_public_key
from racing_demon.log.signing import key_id as key_id  # signing's, so step 5 needs no cryptography

PRIVATE_MODE = 0o600
PUBLIC_MODE = 0o644

_ENCRYPTED_HEADER = b"-----BEGIN ENCRYPTED PRIVATE KEY-----"
# PKCS#8 (plain or encrypted), and the older PEM and OpenSSH private key headers.
_PRIVATE_HEADER = re.compile(rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----")


class KeyFileError(RacingDemonError, ValueError):
    """A key file that cannot be written or read, with a message that says why."""


@dataclass(frozen=True, slots=True)
class KeyFiles:
    """Where the key pair called NAME lives: ``NAME.key`` and ``NAME.pub``."""

    private: Path
    public: Path

    def existing(self) -> tuple[Path, ...]:
        """The files of the pair that already exist (a dangling symlink counts)."""
        return tuple(path for path in (self.private, self.public) if os.path.lexists(path))


KEY_SUFFIXES = (".key", ".pub")


def key_files(directory: Path, name: str) -> KeyFiles:
    """The two files of key pair ``name``: ``NAME.key`` and ``NAME.pub``, relative to
    ``directory``.

    ``name`` may be a path (``keys/table``), as ``ssh-keygen -f`` and ``openssl genpkey
    -out`` take one, and may end in either file's suffix (``table.key`` is the pair
    ``table.key`` and ``table.pub``, not ``table.key.key``). A name that names no file of
    its own (empty, ``.``, ``..``, ending in ``/``, an existing folder) is refused, saying
    why.
    """
    if "\0" in name:
        raise KeyFileError("a key name cannot hold a NUL character")
    # Quoted as typed, its bytes that are not UTF-8 as \xHH, as every message spells a
    # file name (repr would double a backslash and show such a byte as \udcHH).
    quoted = f"'{shown_name(name)}'"
    if "\\" in name:
        # A file name may hold one on POSIX, but whoever typed it meant a Windows folder.
        raise KeyFileError(f"key name {quoted} holds \\: separate folders with /")
    last = name.rsplit("/", 1)[-1]
    stem = last.removesuffix(".key") if last.endswith(".key") else last.removesuffix(".pub")
    if not name:
        raise KeyFileError("the key name is empty: give one, such as table or keys/table")
    if not last:
        raise KeyFileError(
            f"key name {quoted} ends with /: give a file name in that folder, such as "
            f"{shown_name(name)}table"
        )
    if stem in ("", ".", ".."):
        raise KeyFileError(
            f"key name {quoted} names a folder, not a key: give a file name, such as table"
        )
    path = directory / name
    if path.is_dir():
        raise KeyFileError(
            f"{shown_name(path)} is a folder: give a key name in it, such as "
            f"{shown_name(path / 'table')}"
        )
    base = path.with_name(stem)
    return KeyFiles(base.with_name(f"{stem}.key"), base.with_name(f"{stem}.pub"))


def generate_private_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def raw_public_bytes(key: Ed25519PrivateKey | Ed25519PublicKey) -> bytes:
    """The 32-byte public key, encoded as in RFC 8032."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def public_pem(key: Ed25519PrivateKey | Ed25519PublicKey) -> bytes:
    """The public key as SubjectPublicKeyInfo PEM, the ``NAME.pub`` format."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def save_key_pair(
    private_key: Ed25519PrivateKey,
    directory: Path,
    name: str,
    *,
    passphrase: bytes | None = None,
    overwrite: bool = False,
) -> KeyFiles:
    """Write ``NAME.key`` and ``NAME.pub``; refuse if either exists unless ``overwrite``."""
    files = key_files(directory, name)
    if passphrase == b"":
        raise KeyFileError("an empty passphrase protects nothing: give one, or none")
    encryption: serialization.KeySerializationEncryption = (
        serialization.NoEncryption()
        if passphrase is None
        else serialization.BestAvailableEncryption(passphrase)
    )
    contents = (
        (
            files.private,
            private_key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
            ),
            PRIVATE_MODE,
        ),
        (
            files.public,
            public_pem(private_key),
            PUBLIC_MODE,
        ),
    )
    _write_all(contents, overwrite)
    return files


def load_private_key(path: Path, passphrase: bytes | None = None) -> Ed25519PrivateKey:
    """The Ed25519 private key in PEM file ``path``, decrypted with ``passphrase`` if given."""
    data = _read(path)
    try:
        key = serialization.load_pem_private_key(data, passphrase)
    except TypeError as error:
        # cryptography raises TypeError exactly when encryption and passphrase disagree.
        if passphrase is None:
            raise KeyFileError(f"{path} is encrypted: a passphrase is needed") from error
        # Refused rather than ignored: whoever gave one believes the key is protected.
        raise KeyFileError(f"{path} is not encrypted, but a passphrase was given") from error
    except (ValueError, UnsupportedAlgorithm) as error:
        if passphrase is not None and _ENCRYPTED_HEADER in data:
            raise KeyFileError(f"cannot decrypt {path}: wrong passphrase?") from error
        raise KeyFileError(f"{path} is not a PEM private key") from error
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{path} is not an Ed25519 key ({_algorithm(key)} found)")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """The Ed25519 public key in PEM file ``path``; weak or malformed keys are refused."""
    data = _read(path)
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm) as error:
        if _PRIVATE_HEADER.search(data):
            public = path.with_suffix(".pub") if path.suffix == ".key" else "NAME.pub"
            raise KeyFileError(
                f"{path} is a private key: give the public key, {public} (keygen writes "
                "both; the private NAME.key stays with the table)"
            ) from error
        raise KeyFileError(f"{path} is not a PEM public key") from error
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"{path} is not an Ed25519 key ({_algorithm(key)} found)")
    problem = check_public_key(raw_public_bytes(key))
    if problem is not None:
        raise KeyFileError(f"{path}: {problem}")
    return key


def _read(path: Path) -> bytes:
    try:
        return read_regular(path)
    except FileNotFoundError as error:
        raise KeyFileError(f"no key file at {path}") from error
    except OSError as error:
        raise KeyFileError(f"cannot read {path}: {error.strerror}") from error


def _algorithm(key: object) -> str:
    return type(key).__name__.removesuffix("PrivateKey").removesuffix("PublicKey")


def _write_all(contents: tuple[tuple[Path, bytes, int], ...], overwrite: bool) -> None:
    """Write every file or none: nothing that existed is touched unless ``overwrite``, and
    then each is replaced only once every new file is written in full beside its target."""
    outputs = [
        Output(path, overwrite, mode, exact_mode=True, regular_only=True)
        for path, _, mode in contents
    ]
    try:
        for output in outputs:
            with _key_errors(output):
                output.check_free()
        for output, (_, data, _) in zip(outputs, contents, strict=True):
            with _key_errors(output):
                output.open().write(data)
        for output in outputs:
            with _key_errors(output):
                output.commit()
    except BaseException:
        for output in outputs:  # removes only what this call created
            output.discard()
        raise


@contextlib.contextmanager
def _key_errors(output: Output) -> Iterator[None]:
    try:
        yield
    except OutputError as error:
        raise KeyFileError(str(error).removesuffix(" (use --force to replace it)")) from error
    except OSError as error:
        raise KeyFileError(f"cannot write {output.shown}: {error.strerror}") from error
