"""The server's data folder: where each file of a game lives (docs/serving.md).

A minimal copy for the journal's branch: the server's own ``data.py`` (key, index, safe
modes) replaces it, keeping these names.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from racing_demon.errors import RacingDemonError

_GAME: Final = re.compile(r"[0-9a-f]{32}")


class BadGameId(RacingDemonError, ValueError):
    """A game id that is not 32 lowercase hex: it never becomes a file name."""


def checked_game(game: str) -> str:
    """``game`` if it is a game id (32 lowercase hex), else BadGameId."""
    if not _GAME.fullmatch(game):
        raise BadGameId(f"{game!r} is not a game id (32 lowercase hex)")
    return game


class DataFolder:
    """The layout of a server's data folder under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def journal_dir(self) -> Path:
        return self.root / "journal"

    def log_path(self, game: str) -> Path:
        return self.root / "logs" / f"{checked_game(game)}.jsonl"

    def receipts_path(self, game: str, seat: int) -> Path:
        if seat < 0:
            raise ValueError(f"seat {seat} is negative")
        return self.root / "receipts" / f"{checked_game(game)}.seat{seat}.receipts.jsonl"
