"""The server's SQLite index: its tables, their seats, and the finished games.

The standard library's ``sqlite3`` in WAL mode with ``synchronous=FULL``: a commit is on
disk when it returns, so a table's dealer secret and its bots' keys are stored before
its commitment is published, and a seat's token before it is handed out. The schema's
version is ``PRAGMA user_version``; an older one is brought up to date when opened (each
step in one transaction), and a newer one than this code knows is refused.

Every row is a frozen value (``TableRow``, ``SeatRow``, ``GameRow``); every query is
parameterised. The index is used from the event loop's thread only.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from racing_demon.errors import RacingDemonError
from racing_demon.serve.round_trips import DEFAULT_MAX_RTT_MS

SCHEMA_VERSION = 2

_SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tables (
    game TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    profile TEXT NOT NULL,
    rules TEXT NOT NULL,
    state TEXT NOT NULL,
    secret TEXT NOT NULL,
    created REAL NOT NULL,
    max_rtt_ms INTEGER NOT NULL DEFAULT {DEFAULT_MAX_RTT_MS}
);
CREATE INDEX tables_by_state ON tables (state);
CREATE TABLE seats (
    game TEXT NOT NULL REFERENCES tables (game),
    seat INTEGER NOT NULL,
    kind TEXT NOT NULL,
    bot TEXT,
    name TEXT,
    public_key TEXT,
    bot_private_key TEXT,
    token_sha256 TEXT,
    PRIMARY KEY (game, seat)
);
CREATE TABLE games (
    game TEXT PRIMARY KEY,
    table_name TEXT NOT NULL,
    players TEXT NOT NULL,
    profile TEXT NOT NULL,
    result TEXT NOT NULL,
    verdict TEXT NOT NULL,
    code TEXT,
    finished REAL NOT NULL
);
CREATE INDEX games_by_time ON games (finished);
"""

# From each older version to the next: what makes its index this code's.
_UPGRADES = {
    1: f"ALTER TABLE tables ADD COLUMN max_rtt_ms INTEGER NOT NULL DEFAULT {DEFAULT_MAX_RTT_MS};",
}


class IndexFileError(RacingDemonError, OSError):
    """An index that cannot be opened or is newer than this server."""


@dataclass(frozen=True, slots=True)
class TableRow:
    """A table as the lobby made it: ``rules`` is its rules document (JSON text),
    ``secret`` the dealer secret (64 hex), ``state`` the host's (waiting, starting,
    playing, accepting, finished, cancelled), ``created`` a Unix time."""

    game: str
    name: str
    profile: str
    rules: str
    state: str
    secret: str
    created: float
    max_rtt_ms: int = DEFAULT_MAX_RTT_MS  # the lobby warns of a seat's round trip above it


@dataclass(frozen=True, slots=True)
class SeatRow:
    """A seat: a ``person`` (``name``, ``public_key`` and ``token_sha256`` once taken) or a
    ``bot`` (``bot`` its speed, ``bot_private_key`` the raw key the server signs with)."""

    game: str
    seat: int
    kind: str
    bot: str | None
    name: str | None
    public_key: str | None  # 64 hex, raw Ed25519
    bot_private_key: str | None  # 64 hex, raw Ed25519 private key, bot seats only
    token_sha256: str | None

    @property
    def taken(self) -> bool:
        return self.public_key is not None


@dataclass(frozen=True, slots=True)
class GameRow:
    """A finished game as the archive verified it: ``players`` the seats' names,
    ``totals`` and ``winners`` its result (empty when it did not verify), ``verdict`` the
    verifier's and ``code`` its finding's code (None when verified)."""

    game: str
    table_name: str
    players: tuple[str, ...]
    profile: str
    totals: tuple[int, ...]
    winners: tuple[int, ...]
    verdict: str
    code: str | None
    finished: float


class Index:
    """The open index (module docs)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._db = connection

    @classmethod
    def open(cls, path: Path) -> Index:
        """The index at ``path``, created (0600) with the current schema if missing."""
        try:
            if not os.path.lexists(path):
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            connection = sqlite3.connect(path, isolation_level=None)
        except (OSError, sqlite3.Error) as error:
            raise IndexFileError(f"cannot open the index {path}: {error}") from error
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            connection.execute("PRAGMA foreign_keys=ON")
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                connection.executescript(
                    f"BEGIN; {_SCHEMA} PRAGMA user_version={SCHEMA_VERSION}; COMMIT;"
                )
            elif version > SCHEMA_VERSION:
                raise IndexFileError(
                    f"the index {path} has schema version {version}; this server knows "
                    f"{SCHEMA_VERSION}"
                )
            for older in range(version or SCHEMA_VERSION, SCHEMA_VERSION):
                connection.executescript(
                    f"BEGIN; {_UPGRADES[older]} PRAGMA user_version={older + 1}; COMMIT;"
                )
        except sqlite3.Error as error:
            connection.close()
            raise IndexFileError(f"cannot use the index {path}: {error}") from error
        except IndexFileError:
            connection.close()
            raise
        return cls(connection)

    def close(self) -> None:
        self._db.close()

    # -- meta

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # -- tables and seats

    def add_table(self, table: TableRow, seats: Sequence[SeatRow]) -> None:
        """Store a new table and its seats in one transaction (on disk when it returns)."""
        with _transaction(self._db):
            self._db.execute(
                "INSERT INTO tables (game, name, profile, rules, state, secret, created, "
                "max_rtt_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    table.game,
                    table.name,
                    table.profile,
                    table.rules,
                    table.state,
                    table.secret,
                    table.created,
                    table.max_rtt_ms,
                ),
            )
            self._db.executemany(
                "INSERT INTO seats (game, seat, kind, bot, name, public_key, bot_private_key, "
                "token_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        seat.game,
                        seat.seat,
                        seat.kind,
                        seat.bot,
                        seat.name,
                        seat.public_key,
                        seat.bot_private_key,
                        seat.token_sha256,
                    )
                    for seat in seats
                ],
            )

    def table(self, game: str) -> TableRow | None:
        row = self._db.execute(f"SELECT {_TABLE_COLUMNS} FROM tables WHERE game = ?", (game,))
        found = row.fetchone()
        return None if found is None else TableRow(*found)

    def tables_in(self, states: Iterable[str]) -> tuple[TableRow, ...]:
        """The tables in any of ``states``, oldest first."""
        wanted = tuple(states)
        marks = ", ".join("?" * len(wanted))
        rows = self._db.execute(
            f"SELECT {_TABLE_COLUMNS} FROM tables WHERE state IN ({marks}) ORDER BY created, game",
            wanted,
        )
        return tuple(TableRow(*row) for row in rows)

    def unarchived(self) -> tuple[str, ...]:
        """The tables the host finished whose game the archive has not listed (the server
        stopped in between)."""
        rows = self._db.execute(
            "SELECT game FROM tables WHERE state = 'finished' "
            "AND game NOT IN (SELECT game FROM games) ORDER BY created, game"
        )
        return tuple(str(row[0]) for row in rows)

    def set_state(self, game: str, state: str) -> None:
        self._db.execute("UPDATE tables SET state = ? WHERE game = ?", (state, game))

    def seats(self, game: str) -> tuple[SeatRow, ...]:
        rows = self._db.execute(
            f"SELECT {_SEAT_COLUMNS} FROM seats WHERE game = ? ORDER BY seat", (game,)
        )
        return tuple(SeatRow(*row) for row in rows)

    def take_seat(
        self, game: str, seat: int, *, name: str, public_key: str, token_sha256: str
    ) -> bool:
        """Give a free person's seat to a player; False if it is not free (taken, a bot's,
        or no such seat). Compared and set in one statement: two joins cannot both win."""
        cursor = self._db.execute(
            "UPDATE seats SET name = ?, public_key = ?, token_sha256 = ? "
            "WHERE game = ? AND seat = ? AND kind = 'person' AND public_key IS NULL",
            (name, public_key, token_sha256, game, seat),
        )
        return cursor.rowcount == 1

    # -- finished games

    def add_game(self, game: GameRow) -> None:
        """Store a finished game (a second verification of it replaces the first)."""
        self._db.execute(
            "INSERT OR REPLACE INTO games (game, table_name, players, profile, result, "
            "verdict, code, finished) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                game.game,
                game.table_name,
                json.dumps(list(game.players)),
                game.profile,
                json.dumps({"totals": list(game.totals), "winners": list(game.winners)}),
                game.verdict,
                game.code,
                game.finished,
            ),
        )

    def game(self, game: str) -> GameRow | None:
        rows = self._db.execute(f"SELECT {_GAME_COLUMNS} FROM games WHERE game = ?", (game,))
        found = rows.fetchone()
        return None if found is None else _game_row(found)

    def games(self, *, limit: int = 1000) -> tuple[GameRow, ...]:
        """The finished games, newest first, at most ``limit``."""
        rows = self._db.execute(
            f"SELECT {_GAME_COLUMNS} FROM games ORDER BY finished DESC, game LIMIT ?", (limit,)
        )
        return tuple(_game_row(row) for row in rows)


_TABLE_COLUMNS = "game, name, profile, rules, state, secret, created, max_rtt_ms"
_SEAT_COLUMNS = "game, seat, kind, bot, name, public_key, bot_private_key, token_sha256"
_GAME_COLUMNS = "game, table_name, players, profile, result, verdict, code, finished"


def _game_row(row: Any) -> GameRow:
    game, table_name, players, profile, result, verdict, code, finished = row
    scores = json.loads(result)
    return GameRow(
        game=game,
        table_name=table_name,
        players=tuple(json.loads(players)),
        profile=profile,
        totals=tuple(scores["totals"]),
        winners=tuple(scores["winners"]),
        verdict=verdict,
        code=code,
        finished=finished,
    )


@contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, or ``ROLLBACK`` on an error (the connection is in
    autocommit mode, so every other statement is a transaction of its own)."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
