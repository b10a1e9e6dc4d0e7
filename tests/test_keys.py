"""Key files: PEM round trips, passphrases, modes, no key ever lost; ``racing-demon keygen``."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from racing_demon.cli import main
from racing_demon.log.keys import (
    PRIVATE_MODE,
    PUBLIC_MODE,
    KeyFileError,
    generate_private_key,
    key_files,
    key_id,
    load_private_key,
    load_public_key,
    public_pem,
    raw_public_bytes,
    save_key_pair,
)
from racing_demon.log.signing import sign, verify

RFC8032_SECRET = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
RFC8032_PUBLIC = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def same_key(a: Ed25519PrivateKey, b: Ed25519PrivateKey) -> bool:
    return raw_public_bytes(a) == raw_public_bytes(b)


# -- key ids -----------------------------------------------------------------------------------


def test_key_id_known_answer() -> None:
    private = Ed25519PrivateKey.from_private_bytes(RFC8032_SECRET)
    assert raw_public_bytes(private) == RFC8032_PUBLIC
    assert raw_public_bytes(private.public_key()) == RFC8032_PUBLIC
    # Computed apart from this code: printf d75a...511a | xxd -r -p | sha256sum
    assert key_id(RFC8032_PUBLIC) == (
        "21fe31dfa154a261626bf854046fd2271b7bed4b6abe45aa58877ef47f9721b9"
    )


@pytest.mark.parametrize("length", [0, 31, 33, 44])
def test_key_id_needs_a_raw_key(length: int) -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        key_id(bytes(length))


# -- saving and loading ------------------------------------------------------------------------


def test_round_trip_without_passphrase(tmp_path: Path) -> None:
    private = generate_private_key()
    files = save_key_pair(private, tmp_path, "table")
    assert files == key_files(tmp_path, "table")
    assert files.private == tmp_path / "table.key"
    assert files.public == tmp_path / "table.pub"
    assert files.private.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----\n")
    assert files.public.read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----\n")
    assert same_key(load_private_key(files.private), private)
    assert raw_public_bytes(load_public_key(files.public)) == raw_public_bytes(private)


def test_round_trip_with_passphrase(tmp_path: Path) -> None:
    private = generate_private_key()
    files = save_key_pair(private, tmp_path, "alice", passphrase=b"correct horse")
    assert files.private.read_bytes().startswith(b"-----BEGIN ENCRYPTED PRIVATE KEY-----\n")
    loaded = load_private_key(files.private, b"correct horse")
    assert same_key(loaded, private)
    signature = sign(loaded, "move", b"{}")
    assert verify(raw_public_bytes(load_public_key(files.public)), "move", b"{}", signature) is None


def test_wrong_passphrase(tmp_path: Path) -> None:
    files = save_key_pair(generate_private_key(), tmp_path, "alice", passphrase=b"right")
    with pytest.raises(KeyFileError, match="wrong passphrase"):
        load_private_key(files.private, b"wrong")


def test_missing_passphrase(tmp_path: Path) -> None:
    files = save_key_pair(generate_private_key(), tmp_path, "alice", passphrase=b"right")
    with pytest.raises(KeyFileError, match="is encrypted: a passphrase is needed"):
        load_private_key(files.private)


def test_passphrase_for_an_unencrypted_key_is_refused(tmp_path: Path) -> None:
    files = save_key_pair(generate_private_key(), tmp_path, "table")
    with pytest.raises(KeyFileError, match="not encrypted, but a passphrase was given"):
        load_private_key(files.private, b"anything")


def test_empty_passphrase_is_refused(tmp_path: Path) -> None:
    with pytest.raises(KeyFileError, match="empty passphrase"):
        save_key_pair(generate_private_key(), tmp_path, "table", passphrase=b"")
    assert list(tmp_path.iterdir()) == []


def test_missing_files(tmp_path: Path) -> None:
    with pytest.raises(KeyFileError, match="no key file at"):
        load_private_key(tmp_path / "nobody.key")
    with pytest.raises(KeyFileError, match="no key file at"):
        load_public_key(tmp_path / "nobody.pub")
    with pytest.raises(KeyFileError, match="cannot read"):
        load_private_key(tmp_path)  # a directory


def test_files_that_are_not_ed25519_pem_keys(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.key"
    garbage.write_text("not a key\n")
    with pytest.raises(KeyFileError, match="is not a PEM private key"):
        load_private_key(garbage)
    with pytest.raises(KeyFileError, match="is not a PEM private key"):
        load_private_key(garbage, b"passphrase")
    with pytest.raises(KeyFileError, match="is not a PEM public key"):
        load_public_key(garbage)

    files = save_key_pair(generate_private_key(), tmp_path, "swapped")
    with pytest.raises(KeyFileError, match="is not a PEM private key"):
        load_private_key(files.public)
    # Issue 29, item 8: 'say it is a private key and to give `NAME.pub`'.
    with pytest.raises(KeyFileError, match=r"is a private key: give the public key, .*swapped.pub"):
        load_public_key(files.private)

    ec_key = ec.generate_private_key(ec.SECP256R1())
    ec_private = tmp_path / "ec.key"
    ec_private.write_bytes(
        ec_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    ec_public = tmp_path / "ec.pub"
    ec_public.write_bytes(
        ec_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    with pytest.raises(KeyFileError, match=r"is not an Ed25519 key \(EC found\)"):
        load_private_key(ec_private)
    with pytest.raises(KeyFileError, match=r"is not an Ed25519 key \(EC found\)"):
        load_public_key(ec_public)


def test_a_weak_public_key_file_is_refused(tmp_path: Path) -> None:
    identity = Ed25519PublicKey.from_public_bytes(bytes([1]) + bytes(31))
    path = tmp_path / "weak.pub"
    path.write_bytes(public_pem(identity))
    with pytest.raises(KeyFileError, match="WEAK_KEY"):
        load_public_key(path)


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_file_modes_do_not_depend_on_the_umask(tmp_path: Path, umask: int) -> None:
    previous = os.umask(umask)
    try:
        files = save_key_pair(generate_private_key(), tmp_path, "table")
        replaced = save_key_pair(generate_private_key(), tmp_path, "table", overwrite=True)
    finally:
        os.umask(previous)
    assert (PRIVATE_MODE, PUBLIC_MODE) == (0o600, 0o644)
    assert replaced == files
    assert mode(files.private) == 0o600
    assert mode(files.public) == 0o644


def test_existing_files_are_never_overwritten_unless_asked(tmp_path: Path) -> None:
    first = generate_private_key()
    files = save_key_pair(first, tmp_path, "table")
    before = (files.private.read_bytes(), files.public.read_bytes())
    with pytest.raises(KeyFileError, match="not replacing existing"):
        save_key_pair(generate_private_key(), tmp_path, "table")
    assert (files.private.read_bytes(), files.public.read_bytes()) == before

    second = generate_private_key()
    save_key_pair(second, tmp_path, "table", overwrite=True)
    assert same_key(load_private_key(files.private), second)
    assert raw_public_bytes(load_public_key(files.public)) == raw_public_bytes(second)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["table.key", "table.pub"]


@pytest.mark.parametrize("present", ["table.key", "table.pub"])
def test_either_file_alone_blocks_the_pair(tmp_path: Path, present: str) -> None:
    (tmp_path / present).write_text("precious\n")
    with pytest.raises(KeyFileError, match=present):
        save_key_pair(generate_private_key(), tmp_path, "table")
    assert [path.name for path in tmp_path.iterdir()] == [present]
    assert (tmp_path / present).read_text() == "precious\n"


def test_a_dangling_symlink_blocks_the_pair(tmp_path: Path) -> None:
    (tmp_path / "table.key").symlink_to(tmp_path / "elsewhere.key")
    with pytest.raises(KeyFileError, match="is not a regular file: not writing there"):
        save_key_pair(generate_private_key(), tmp_path, "table")
    assert not (tmp_path / "elsewhere.key").exists()


def test_an_unwritable_directory_is_reported(tmp_path: Path) -> None:
    with pytest.raises(KeyFileError, match="cannot write"):
        save_key_pair(generate_private_key(), tmp_path / "missing", "table")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "empty"),
        (".", "names a folder"),
        ("..", "names a folder"),
        ("a/..", "names a folder"),
        ("a/", "ends with /"),
        ("a\\b", "separate folders with /"),
        ("nul\0", "NUL"),
    ],
)
def test_names_that_name_no_key_are_refused(tmp_path: Path, name: str, message: str) -> None:
    with pytest.raises(KeyFileError, match=message):
        key_files(tmp_path, name)


@pytest.mark.parametrize(
    ("name", "private"),
    [("a/b", "a/b.key"), ("../table", "../table.key"), ("t.key", "t.key"), ("t.pub", "t.key")],
)
def test_a_key_name_may_be_a_path_with_a_suffix(tmp_path: Path, name: str, private: str) -> None:
    files = key_files(tmp_path, name)
    assert files.private == tmp_path / private
    assert files.public == (tmp_path / private).with_suffix(".pub")


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not on PATH")
def test_openssl_reads_the_public_key(tmp_path: Path) -> None:
    private = Ed25519PrivateKey.from_private_bytes(RFC8032_SECRET)
    files = save_key_pair(private, tmp_path, "table")
    result = subprocess.run(
        ["openssl", "pkey", "-pubin", "-in", str(files.public), "-noout", "-text"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "ED25519 Public-Key" in result.stdout
    shown = "".join(result.stdout.split("pub:")[1].split()).replace(":", "")
    assert shown == RFC8032_PUBLIC.hex()


# -- racing-demon keygen -----------------------------------------------------------------------


def run(*args: str, input: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), input=input)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_keygen_writes_the_pair_and_prints_the_key_id(tmp_path: Path) -> None:
    code, out = run("keygen", "table", "--dir", str(tmp_path))
    assert code == 0
    files = key_files(tmp_path, "table")
    private = load_private_key(files.private)
    assert out.splitlines() == [
        f"key id   {key_id(raw_public_bytes(private))}",
        f"private  {files.private}",
        f"public   {files.public}",
    ]
    assert mode(files.private) == 0o600


def test_keygen_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    assert run("keygen", "table", "--dir", str(tmp_path))[0] == 0
    before = (tmp_path / "table.key").read_bytes()
    code, out = run("keygen", "table", "--dir", str(tmp_path))
    assert code == 2
    assert "not replacing existing" in out and "--force" in out
    assert (tmp_path / "table.key").read_bytes() == before

    code, out = run("keygen", "table", "--dir", str(tmp_path), "--force")
    assert code == 0
    assert (tmp_path / "table.key").read_bytes() != before


def test_keygen_with_a_passphrase_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("open sesame\n")
    code, _ = run("keygen", "alice", "--dir", str(tmp_path), "--passphrase-file", str(secret))
    assert code == 0
    key = tmp_path / "alice.key"
    load_private_key(key, b"open sesame")  # the final newline is not part of it
    with pytest.raises(KeyFileError, match="wrong passphrase"):
        load_private_key(key, b"open sesame\n")


def test_keygen_asks_for_a_passphrase_twice(tmp_path: Path) -> None:
    code, _ = run("keygen", "bob", "--dir", str(tmp_path), "--ask-passphrase", input="pw\npw\n")
    assert code == 0
    load_private_key(tmp_path / "bob.key", b"pw")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["keygen", "no-such-folder/b"], "no folder no-such-folder: make it first"),
        (["keygen", ".."], "names a folder, not a key"),
        (["keygen"], "Missing argument 'NAME'"),
        (["keygen", "t", "--dir", "/nonexistent/keys"], "does not exist"),
        (["keygen", "t", "--passphrase-file", "/nonexistent/pw"], "does not exist"),
        (["keygen", "t", "--passphrase-file", "x", "--ask-passphrase"], "not both"),
    ],
)
def test_keygen_misuse_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x").write_text("pw\n")
    code, out = run(*args)
    assert code == 2
    assert message in out
    assert "Traceback" not in out
    assert not list(tmp_path.glob("*.key"))


def test_keygen_refuses_an_empty_passphrase_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    code, out = run("keygen", "t", "--dir", str(tmp_path), "--passphrase-file", str(empty))
    assert code == 2
    assert "holds no passphrase" in out
    assert not (tmp_path / "t.key").exists()


def test_keygen_help_has_examples() -> None:
    code, out = run("keygen", "--help")
    assert code == 0
    assert "Examples:" in out
    assert "racing-demon keygen table" in out
    assert "racing-demon keygen table" in run("--help")[1]
