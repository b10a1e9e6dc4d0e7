"""The server's data folder: where everything it keeps lives, with safe modes.

```
DATA/                    0700
  table.key              0600  the table's private key (PEM), made on first start
  table.pub              0644
  index.sqlite3          0600  the SQLite index (serve.index), with its -wal and -shm
  journal/               0700  the shared journal's segments (serve.journal)
  logs/GAME.jsonl        0640  one log per game
  receipts/GAME.seatN.receipts.jsonl   0640  every receipt the server sent seat N
  views/GAME.html        0640  the archive's cached `view` page of a finished game
  stopped.json           0640  when the server last stopped cleanly, until it starts again
```

GAME is a game id, 32 lowercase hex, checked before any path is made from it: it is the
only name that comes from outside and reaches the file system.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.errors import RacingDemonError
from racing_demon.log.keys import (
    KeyFileError,
    generate_private_key,
    load_private_key,
    load_public_key,
    public_pem,
    raw_public_bytes,
    save_key_pair,
)

FOLDER_MODE = 0o700
FILE_MODE = 0o640  # logs, receipts, pages: the owner writes, a group (a backup) may read
INDEX_MODE = 0o600
_GAME_ID = re.compile(r"[0-9a-f]{32}")
_KEY_NAME = "table"


class DataFolderError(RacingDemonError, OSError):
    """A data folder that cannot be used, saying which path and why."""


class BadGameId(RacingDemonError, ValueError):
    """A game id that is not 32 lowercase hex: never made into a path."""


def checked_game(game: str) -> str:
    """``game`` if it is a game id (32 lowercase hex), else BadGameId."""
    if not _GAME_ID.fullmatch(game):
        raise BadGameId(f"{game[:40]!r} is not a game id (32 lowercase hex)")
    return game


def is_game_id(game: str) -> bool:
    return _GAME_ID.fullmatch(game) is not None


@dataclass(frozen=True, slots=True)
class DataFolder:
    """The layout of one data folder (module docs); ``open`` makes what is missing."""

    root: Path

    @classmethod
    def open(cls, root: Path) -> DataFolder:
        """The data folder at ``root``, created (0700) with its sub-folders if missing.
        An existing folder keeps its mode; a path that is not a folder is refused."""
        folder = cls(root)
        for path in (
            root,
            folder.journal_dir,
            folder.logs_dir,
            folder.receipts_dir,
            folder.views_dir,
        ):
            try:
                os.mkdir(path, FOLDER_MODE)
            except FileExistsError:
                if not path.is_dir():
                    raise DataFolderError(f"{path} exists and is not a folder") from None
            except OSError as error:
                raise DataFolderError(f"cannot make {path}: {error.strerror}") from error
        return folder

    @property
    def key_path(self) -> Path:
        return self.root / f"{_KEY_NAME}.key"

    @property
    def public_key_path(self) -> Path:
        return self.root / f"{_KEY_NAME}.pub"

    @property
    def index_path(self) -> Path:
        return self.root / "index.sqlite3"

    @property
    def journal_dir(self) -> Path:
        return self.root / "journal"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def receipts_dir(self) -> Path:
        return self.root / "receipts"

    @property
    def views_dir(self) -> Path:
        return self.root / "views"

    @property
    def stopped_path(self) -> Path:
        return self.root / "stopped.json"

    def log_path(self, game: str) -> Path:
        return self.logs_dir / f"{checked_game(game)}.jsonl"

    def receipts_path(self, game: str, seat: int) -> Path:
        if not 0 <= seat < 8:
            raise ValueError(f"seat {seat} is not a seat (0 to 7)")
        return self.receipts_dir / f"{checked_game(game)}.seat{seat}.receipts.jsonl"

    def view_path(self, game: str) -> Path:
        return self.views_dir / f"{checked_game(game)}.html"

    def table_key(self, signing_key: Path | None = None) -> Ed25519PrivateKey:
        """The table's private key: ``signing_key`` when given (no ``table.key`` is made),
        else ``table.key``, made (0600) on the first start and read on every later one.
        ``table.pub`` always holds its public key, for anyone who verifies the logs."""
        try:
            if signing_key is not None:
                key = load_private_key(signing_key)
            elif os.path.lexists(self.key_path):
                key = load_private_key(self.key_path)
            else:
                key = generate_private_key()
                save_key_pair(key, self.root, _KEY_NAME)
                return key
            self._write_public_key(key)
        except KeyFileError as error:
            raise DataFolderError(str(error)) from error
        return key

    def _write_public_key(self, key: Ed25519PrivateKey) -> None:
        """``table.pub`` for ``key``, replaced only when it names another key."""
        path = self.public_key_path
        if os.path.lexists(path):
            try:
                if raw_public_bytes(load_public_key(path)) == raw_public_bytes(key):
                    return
            except KeyFileError:
                pass  # not a key we can read: replaced by the one in use
            os.unlink(path)
        with open_new(path, mode=0o644) as stream:
            stream.write(public_pem(key))


def open_new(path: Path, *, mode: int = FILE_MODE) -> BinaryIO:
    """A new file at ``path`` created with ``mode`` (never an existing one, never through a
    symlink), open to write."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    os.fchmod(descriptor, mode)  # the umask may have taken bits away
    return os.fdopen(descriptor, "wb")


def open_to_append(path: Path, *, mode: int = FILE_MODE) -> BinaryIO:
    """``path`` open to append, created with ``mode`` if missing (never through a
    symlink): how the host opens a seat's receipts file."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, mode)
    return os.fdopen(descriptor, "ab")
