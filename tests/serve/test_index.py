"""The SQLite index (issue 31: "a SQLite index (the standard library's sqlite3, WAL mode)
of tables and finished games"; "(SQLite: game id, table, players, profile, result,
verdict, time)")."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest

from racing_demon.serve.index import (
    SCHEMA_VERSION,
    GameRow,
    Index,
    IndexFileError,
    SeatRow,
    TableRow,
)

GAME = "0123456789abcdef0123456789abcdef"
OTHER = "f" * 32


def table(game: str = GAME, state: str = "waiting", created: float = 1.0) -> TableRow:
    return TableRow(game, "Friday's table", "table", '{"name": "table"}', state, "ab" * 32, created)


def seats(game: str = GAME) -> list[SeatRow]:
    return [
        SeatRow(game, 0, "person", None, None, None, None, None),
        SeatRow(game, 1, "bot", "easy", "Bert (easy)", "cd" * 32, "ef" * 32, None),
    ]


def test_a_new_index_is_0600_wal_and_versioned(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    Index.open(path).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_an_index_of_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    Index.open(path).close()
    with sqlite3.connect(path) as connection:
        connection.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    with pytest.raises(IndexFileError, match="schema version"):
        Index.open(path)


def test_tables_and_seats_survive_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    index = Index.open(path)
    index.add_table(table(), seats())
    index.close()
    again = Index.open(path)
    assert again.table(GAME) == table()
    assert again.seats(GAME) == tuple(seats())
    assert again.table(OTHER) is None


def test_a_seat_is_taken_once(tmp_path: Path) -> None:
    index = Index.open(tmp_path / "index.sqlite3")
    index.add_table(table(), seats())
    assert index.take_seat(GAME, 0, name="Ann", public_key="12" * 32, token_sha256="34" * 32)
    assert not index.take_seat(GAME, 0, name="Bob", public_key="56" * 32, token_sha256="78" * 32)
    assert not index.take_seat(GAME, 1, name="Bob", public_key="56" * 32, token_sha256="78" * 32)
    assert not index.take_seat(GAME, 2, name="Bob", public_key="56" * 32, token_sha256="78" * 32)
    first = index.seats(GAME)[0]
    assert (first.name, first.public_key, first.token_sha256) == ("Ann", "12" * 32, "34" * 32)
    assert first.taken


def test_tables_by_state_oldest_first(tmp_path: Path) -> None:
    index = Index.open(tmp_path / "index.sqlite3")
    index.add_table(table(OTHER, "playing", created=1.0), seats(OTHER))
    index.add_table(table(GAME, "waiting", created=2.0), seats(GAME))
    assert [row.game for row in index.tables_in(("waiting", "playing"))] == [OTHER, GAME]
    index.set_state(OTHER, "finished")
    assert [row.game for row in index.tables_in(("waiting", "playing"))] == [GAME]


def test_a_table_and_its_seats_are_stored_together_or_not_at_all(tmp_path: Path) -> None:
    index = Index.open(tmp_path / "index.sqlite3")
    broken = [*seats(), seats()[0]]  # seat 0 twice: the second insert fails
    with pytest.raises(sqlite3.IntegrityError):
        index.add_table(table(), broken)
    assert index.table(GAME) is None
    assert index.seats(GAME) == ()


def test_games_round_trip_newest_first(tmp_path: Path) -> None:
    index = Index.open(tmp_path / "index.sqlite3")
    old = GameRow(GAME, "A", ("Ann", "Bert"), "table", (10, -3), (0,), "verified", None, 5.0)
    new = GameRow(OTHER, "B", ("C", "D"), "nertz", (), (), "does_not_verify", "BAD_HASH", 9.0)
    index.add_game(old)
    index.add_game(new)
    assert index.games() == (new, old)
    assert index.game(GAME) == old
    assert index.game("0" * 32) is None


def test_hostile_text_is_stored_as_text(tmp_path: Path) -> None:
    hostile = "x'); DROP TABLE games; --"
    index = Index.open(tmp_path / "index.sqlite3")
    index.add_table(TableRow(GAME, hostile, "table", "{}", "waiting", "00" * 32, 1.0), seats())
    assert index.table(GAME).name == hostile  # type: ignore[union-attr]
    assert index.games() == ()


def test_an_index_of_version_1_is_brought_up_to_date_keeping_its_tables(tmp_path: Path) -> None:
    """The index of a server before tables had a round-trip limit: opened, it gains the
    column (every table the default limit) and the current version, its rows kept."""
    path = tmp_path / "index.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE tables (game TEXT PRIMARY KEY, name TEXT NOT NULL, profile TEXT NOT NULL,"
        " rules TEXT NOT NULL, state TEXT NOT NULL, secret TEXT NOT NULL, created REAL NOT NULL);"
        "CREATE TABLE seats (game TEXT NOT NULL, seat INTEGER NOT NULL, kind TEXT NOT NULL,"
        " bot TEXT, name TEXT, public_key TEXT, bot_private_key TEXT, token_sha256 TEXT,"
        " PRIMARY KEY (game, seat));"
        "CREATE TABLE games (game TEXT PRIMARY KEY, table_name TEXT NOT NULL, players TEXT NOT"
        " NULL, profile TEXT NOT NULL, result TEXT NOT NULL, verdict TEXT NOT NULL, code TEXT,"
        " finished REAL NOT NULL);"
        f"INSERT INTO tables VALUES ('{GAME}', 'old', 'table', '{{}}', 'playing', '00', 1.0);"
        "PRAGMA user_version=1;"
    )
    old.close()
    index = Index.open(path)
    try:
        (row,) = index.tables_in(["playing"])
        assert (row.game, row.name, row.max_rtt_ms) == (GAME, "old", 250)
        index.add_table(
            TableRow(OTHER, "new", "table", "{}", "waiting", "ab" * 32, 2.0, 120), seats(OTHER)
        )
        assert index.table(OTHER) == TableRow(
            OTHER, "new", "table", "{}", "waiting", "ab" * 32, 2.0, 120
        )
    finally:
        index.close()
    version = sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0]
    assert version == SCHEMA_VERSION == 2
