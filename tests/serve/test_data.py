"""The data folder (issue 31: "a data folder ... holding the table's key (made on first
start if none is given, mode 0600)"; "no name or path from a client ever reaches the
filesystem (game ids are the only file names); the data folder's key and logs are
created with safe modes")."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from racing_demon.log.keys import (
    generate_private_key,
    load_public_key,
    raw_public_bytes,
    save_key_pair,
)
from racing_demon.serve.data import (
    BadGameId,
    DataFolder,
    DataFolderError,
    open_new,
    open_to_append,
)

GAME = "0123456789abcdef0123456789abcdef"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_folder_and_its_parts_are_private(tmp_path: Path) -> None:
    folder = DataFolder.open(tmp_path / "data")
    for path in (folder.root, folder.journal_dir, folder.logs_dir, folder.receipts_dir):
        assert path.is_dir()
        assert mode(path) == 0o700, path


def test_the_key_is_made_once_0600_and_reused(tmp_path: Path) -> None:
    folder = DataFolder.open(tmp_path / "data")
    first = folder.table_key()
    assert mode(folder.key_path) == 0o600
    assert mode(folder.public_key_path) == 0o644
    again = DataFolder.open(tmp_path / "data").table_key()
    assert raw_public_bytes(again) == raw_public_bytes(first)
    assert raw_public_bytes(load_public_key(folder.public_key_path)) == raw_public_bytes(first)


def test_a_signing_key_given_is_used_and_no_table_key_is_made(tmp_path: Path) -> None:
    mine = generate_private_key()
    files = save_key_pair(mine, tmp_path, "mine")
    folder = DataFolder.open(tmp_path / "data")
    key = folder.table_key(files.private)
    assert raw_public_bytes(key) == raw_public_bytes(mine)
    assert not folder.key_path.exists()
    assert raw_public_bytes(load_public_key(folder.public_key_path)) == raw_public_bytes(mine)


def test_a_stale_public_key_is_replaced_by_the_key_in_use(tmp_path: Path) -> None:
    folder = DataFolder.open(tmp_path / "data")
    folder.table_key()
    other = generate_private_key()
    files = save_key_pair(other, tmp_path, "other")
    folder.table_key(files.private)
    assert raw_public_bytes(load_public_key(folder.public_key_path)) == raw_public_bytes(other)


def test_an_unreadable_signing_key_is_refused_with_its_path(tmp_path: Path) -> None:
    folder = DataFolder.open(tmp_path / "data")
    with pytest.raises(DataFolderError, match="no key file"):
        folder.table_key(tmp_path / "missing.key")


def test_a_file_where_the_folder_should_be_is_refused(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("not a folder")
    with pytest.raises(DataFolderError, match="is not a folder"):
        DataFolder.open(tmp_path / "data")


def test_paths_are_made_from_game_ids_only(tmp_path: Path) -> None:
    folder = DataFolder.open(tmp_path / "data")
    assert folder.log_path(GAME) == folder.logs_dir / f"{GAME}.jsonl"
    assert folder.receipts_path(GAME, 3) == folder.receipts_dir / f"{GAME}.seat3.receipts.jsonl"
    assert folder.view_path(GAME) == folder.views_dir / f"{GAME}.html"
    for hostile in ("../" + GAME[3:], GAME.upper(), GAME + "/x", GAME[:31], "", GAME + "\n"):
        with pytest.raises(BadGameId):
            folder.log_path(hostile)
        with pytest.raises(BadGameId):
            folder.receipts_path(hostile, 0)
        with pytest.raises(BadGameId):
            folder.view_path(hostile)
    with pytest.raises(ValueError):
        folder.receipts_path(GAME, 8)


def test_files_are_created_0640_and_never_through_a_link(tmp_path: Path) -> None:
    folder = DataFolder.open(tmp_path / "data")
    with open_new(folder.log_path(GAME)) as stream:
        stream.write(b"{}\n")
    assert mode(folder.log_path(GAME)) == 0o640
    with open_to_append(folder.receipts_path(GAME, 0)) as stream:
        stream.write(b"{}\n")
    assert mode(folder.receipts_path(GAME, 0)) == 0o640
    target = tmp_path / "elsewhere"
    folder.receipts_path(GAME, 1).symlink_to(target)
    with pytest.raises(OSError):
        open_to_append(folder.receipts_path(GAME, 1))
    assert not target.exists()
