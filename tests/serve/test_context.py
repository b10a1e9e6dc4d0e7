"""The context every route and table shares (issue 31: "Ctrl-C stops it cleanly (tables
resume on the next start)"; "on restart every unfinished table resumes"; "A table
starts when every seat is filled")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from racing_demon.game.rules import Rules
from racing_demon.log.keys import generate_private_key, raw_public_bytes
from racing_demon.profiles import builtin_document
from racing_demon.serve.archive import archive_game
from racing_demon.serve.context import NewTable, SeatRequest, ServerContext
from racing_demon.serve.index import GameRow, SeatRow, TableRow
from racing_demon.serve.protocol import ServeCode, ServeError

from .lobbying import context_in
from .recording import RecordingHost, recording_host
from .test_archive import TABLE_KEY, played, short_rules

TABLE = Rules.from_document(builtin_document("table"))


@pytest.fixture(autouse=True)
def _tables_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    recording_host(monkeypatch)  # the context's wiring, not a table's play


def test_open_tables_are_hosted_again_and_finished_ones_archived(tmp_path: Path) -> None:
    first = context_in(tmp_path / "data", signing_key=TABLE_KEY)
    game, log, _ = played()

    async def before_the_stop() -> tuple[str, str, str]:
        bots = first.create_table(
            NewTable(name="bots", rules=TABLE, seats=(SeatRequest("bot", "easy"),) * 2)
        )
        waiting = first.create_table(
            NewTable(name="people", rules=TABLE, seats=(SeatRequest("person"),) * 2)
        )
        gone = first.create_table(
            NewTable(name="gone", rules=TABLE, seats=(SeatRequest("bot", "hard"),) * 2)
        )
        first.table_state(bots.game, "playing")
        first.table_state(gone.game, "cancelled")
        await first.stop()
        assert first.tables == {}
        return bots.game, waiting.game, gone.game

    bots, waiting, gone = asyncio.run(before_the_stop())
    # A game the host finished, the server stopping before the archive listed it.
    first.index.add_table(
        TableRow(
            game,
            "done",
            "table-custom",
            json.dumps(short_rules().to_document()),
            "finished",
            "00" * 32,
            9.0,
        ),
        [SeatRow(game, seat, "person", None, "p", "00" * 32, None, None) for seat in (0, 1)],
    )
    first.folder.log_path(game).write_bytes(log)
    first.index.close()
    again = context_in(tmp_path / "data", signing_key=TABLE_KEY)

    async def after_the_start() -> None:
        assert again.open_tables() == 1  # one live table resumed
        assert set(again.tables) == {bots, waiting}
        seats = again.tables[bots].spec.seats  # type: ignore[attr-defined]
        assert [seat.bot.name for seat in seats] == ["easy", "easy"]
        await asyncio.sleep(0)  # the archive's task runs
        while again.index.game(game) is None:
            await asyncio.sleep(0.01)
        await again.stop()

    asyncio.run(after_the_start())
    assert again.index.table(waiting).state == "waiting"  # type: ignore[union-attr]
    assert again.index.table(gone).state == "cancelled"  # type: ignore[union-attr]
    assert again.index.game(game).verdict == "verified"  # type: ignore[union-attr]
    assert again.index.unarchived() == ()


def test_a_bots_keys_are_kept_so_a_resumed_bot_signs_as_before(tmp_path: Path) -> None:
    context = context_in(tmp_path / "data")

    async def scenario() -> tuple[bytes, ...]:
        table = context.create_table(
            NewTable(name="b", rules=TABLE, seats=(SeatRequest("bot", "normal"),) * 3)
        )
        keys = tuple(seat.key for seat in context.tables[table.game].spec.seats)  # type: ignore[attr-defined]
        await context.stop()
        context.host_table(table.game)
        again = context.tables[table.game].spec.seats  # type: ignore[attr-defined]
        assert tuple(raw_public_bytes(seat.bot_key) for seat in again) == keys
        await context.stop()
        return keys

    keys = asyncio.run(scenario())
    assert len(set(keys)) == 3


def test_the_host_reports_reach_the_index_and_the_archive(tmp_path: Path) -> None:
    archived: list[str] = []

    async def archive(context: ServerContext, game: str) -> GameRow:
        archived.append(game)
        return GameRow(game, "t", ("a", "b"), "table", (1, 0), (0,), "verified", None, 1.0)

    context = context_in(tmp_path / "data")
    context = ServerContext(
        folder=context.folder,
        index=context.index,
        journal=context.journal,
        table_key=generate_private_key(),
        archive=archive,
    )

    async def scenario() -> str:
        table = context.create_table(
            NewTable(name="p", rules=TABLE, seats=(SeatRequest("person"),) * 2)
        )
        context.table_state(table.game, "accepting")
        assert context.index.table(table.game).state == "accepting"  # type: ignore[union-attr]
        return await context.table_finished(table.game)

    assert asyncio.run(scenario()) == "verified"
    assert len(archived) == 1


def test_a_table_that_fails_is_named_and_the_others_go_on(tmp_path: Path) -> None:
    warnings: list[str] = []
    base = context_in(tmp_path / "data")
    context = ServerContext(
        folder=base.folder,
        index=base.index,
        journal=base.journal,
        table_key=base.table_key,
        archive=archive_game,
        warn=warnings.append,
    )

    async def scenario() -> None:
        table = context.create_table(
            NewTable(name="b", rules=TABLE, seats=(SeatRequest("bot", "easy"),) * 2)
        )
        hosted = context.tables[table.game]

        async def broken() -> None:
            raise RuntimeError("the log is damaged")

        hosted.run = broken  # type: ignore[method-assign]
        await context.stop()
        context.host_table(table.game)
        context.tables[table.game].run = broken  # type: ignore[method-assign]
        await asyncio.sleep(0.05)
        assert table.game not in context.tables
        await context.stop()

    asyncio.run(scenario())
    assert warnings and "RuntimeError: the log is damaged" in warnings[-1]


def test_the_tables_stop_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 31: "Ctrl-C stops it cleanly": each table may wait a few seconds for its last
    records to be durable, so the tables stop at once rather than one after another (two
    hundred tables would take minutes)."""
    started: list[str] = []
    release = asyncio.Event()

    async def slow_stop(host: Any) -> None:
        started.append(host.game)
        await release.wait()
        host.stopped.set()

    monkeypatch.setattr(RecordingHost, "stop", slow_stop)
    context = context_in(tmp_path / "data")

    async def scenario() -> None:
        people = (SeatRequest("person"),) * 2
        for name in ("a", "b", "c"):
            context.create_table(NewTable(name=name, rules=TABLE, seats=people))
        stopping = asyncio.create_task(context.stop())
        await asyncio.sleep(0.05)
        assert len(started) == 3  # all three are stopping before any has stopped
        release.set()
        await stopping

    asyncio.run(scenario())


def test_during_a_planned_stop_the_lobby_makes_no_table_and_gives_no_seat(
    tmp_path: Path,
) -> None:
    """docs/protocol.md §10, "A planned stop": new tables and joins are refused
    ``SERVER_STOPPING`` (before the table's state or the seat is looked at), and the time
    left is what the ``stopping`` message says."""
    context = context_in(tmp_path / "data", signing_key=TABLE_KEY)

    async def main() -> None:
        people = context.create_table(
            NewTable(name="people", rules=TABLE, seats=(SeatRequest("person"),) * 2)
        )
        assert context.stopping_in_ms is None
        context.drain(30)
        left = context.stopping_in_ms
        assert left is not None and 29_000 < left <= 30_000
        with pytest.raises(ServeError) as refused:
            context.create_table(
                NewTable(name="late", rules=TABLE, seats=(SeatRequest("person"),) * 2)
            )
        assert refused.value.code is ServeCode.SERVER_STOPPING
        key = raw_public_bytes(generate_private_key()).hex()
        for game in (people.game, "0" * 32):  # a table, and none: the context asks first
            with pytest.raises(ServeError) as refused:
                context.join(game, 0, "late", key)
            assert refused.value.code is ServeCode.SERVER_STOPPING
        assert [row.seat for row in context.index.seats(people.game) if row.public_key] == []
        await context.stop()

    asyncio.run(main())


def test_once_the_tables_stop_the_lobby_makes_no_table(tmp_path: Path) -> None:
    """SIGINT, or a drain of 0 s: no drain, and from the stop's first step no table is made
    (one made then would be hosted after the tables were stopped)."""
    context = context_in(tmp_path / "data", signing_key=TABLE_KEY)

    async def main() -> None:
        stopping = asyncio.ensure_future(context.stop())
        await asyncio.sleep(0)  # the stop has begun
        with pytest.raises(ServeError) as refused:
            context.create_table(
                NewTable(name="late", rules=TABLE, seats=(SeatRequest("person"),) * 2)
            )
        assert refused.value.code is ServeCode.SERVER_STOPPING
        assert "the server is stopping" in refused.value.message
        await stopping

    asyncio.run(main())


@pytest.mark.parametrize("clean", [True, False])
def test_only_a_clean_stop_is_marked_with_the_tables_that_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean: bool
) -> None:
    """docs/serving.md §5: "once the tables have stopped, the server writes the time and
    the tables that stopped cleanly into `stopped.json`"; a table whose stop failed is left
    out (it resumes as a crash), and a stop that was not clean marks nothing."""

    async def stop(host: Any) -> None:
        if host.game == games[1]:
            raise OSError("a disk went away")
        host.stopped.set()

    context = context_in(tmp_path / "data")
    people = (SeatRequest("person"),) * 2
    games: list[str] = []

    async def scenario() -> None:
        for name in "ab":
            games.append(context.create_table(NewTable(name=name, rules=TABLE, seats=people)).game)
        await context.stop(clean=clean)

    monkeypatch.setattr(RecordingHost, "stop", stop)
    asyncio.run(scenario())
    mark = context.folder.stopped_path
    if not clean:
        assert not mark.exists()
        return
    assert json.loads(mark.read_text())["games"] == [games[0]]
    assert oct(mark.stat().st_mode & 0o777) == "0o640"
