"""The archive (issue 31: "every finished game is verified by the project's verifier as it
ends, and listed (SQLite: game id, table, players, profile, result, verdict, time) at
/games; each can be downloaded as its log and its receipts, and opened as the view page";
"no name or path from a client ever reaches the filesystem")."""

from __future__ import annotations

import asyncio
import functools
import json
import tempfile
import types
from pathlib import Path
from typing import Any

import pytest

from racing_demon.game.rules import Rules
from racing_demon.log.keys import generate_private_key
from racing_demon.profiles import builtin_document, custom_variant, rules_from_document
from racing_demon.schema import schema_errors
from racing_demon.serve import archive
from racing_demon.serve.archive import archive_game
from racing_demon.serve.context import ServerContext
from racing_demon.serve.host import TableState
from racing_demon.serve.index import SeatRow, TableRow
from racing_demon.sim.bots import EASY, NORMAL
from racing_demon.sim.simulate import receipt_paths, simulate

from .lobbying import context_in, served

HOSTILE = '<script>alert("x")</script>&'


def short_rules() -> Rules:
    document = builtin_document("table")
    document["match"]["target"] = 15
    return custom_variant(rules_from_document(document))


TABLE_KEY = generate_private_key()


@functools.cache
def played() -> tuple[str, bytes, tuple[bytes, bytes]]:
    """A whole keyed match of two bots (game id, log, each seat's receipts), played once."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "game.jsonl"
        players = [generate_private_key(), generate_private_key()]
        simulate(path, short_rules(), [EASY, NORMAL], "archive", TABLE_KEY, player_keys=players)
        game = json.loads(path.read_bytes().split(b"\n", 1)[0])["body"]["game"]
        receipts = tuple(p.read_bytes() for p in receipt_paths(path, 2))
        return game, path.read_bytes(), (receipts[0], receipts[1])


def finished_game(
    context: ServerContext, *, table_name: str = "Friday", log_edit: Any = None
) -> str:
    """A finished game in ``context``'s data folder, as a HostedTable would leave it."""
    game, log, receipts = played()
    if log_edit is not None:
        log = log_edit(log)
    context.folder.log_path(game).write_bytes(log)
    for seat, data in enumerate(receipts):
        context.folder.receipts_path(game, seat).write_bytes(data)
    context.index.add_table(
        TableRow(
            game,
            table_name,
            "table-custom",
            json.dumps(short_rules().to_document()),
            "accepting",
            "00" * 32,
            1.0,
        ),
        [
            SeatRow(game, seat, "bot", bot, name, "00" * 32, None, None)
            for seat, (bot, name) in enumerate((("easy", HOSTILE), ("normal", "Bert")))
        ],
    )
    return game


def test_a_finished_game_is_verified_listed_and_downloadable(tmp_path: Path) -> None:
    context = context_in(tmp_path / "data", signing_key=TABLE_KEY)
    game = finished_game(context, table_name=HOSTILE)

    async def scenario() -> None:
        row = await archive_game(context, game)
        assert row.verdict == "verified" and row.code is None
        assert row.players == (HOSTILE, "Bert")
        assert row.totals and row.winners
        assert context.index.table(game).state == "finished"  # type: ignore[union-attr]
        async with served(context) as client:
            listing = await (await client.get("/api/games")).json()
            assert schema_errors("serve-lobby", listing) == []
            (only,) = listing["games"]
            assert only["game"] == game and only["verdict"] == "verified"
            assert only["table"] == HOSTILE
            assert only["result"] == {"totals": list(row.totals), "winners": list(row.winners)}
            assert only["log"] == f"/games/{game}.jsonl"

            response = await client.get(f"/games/{game}.jsonl")
            assert response.status == 200
            assert await response.read() == context.folder.log_path(game).read_bytes()
            assert f'filename="{game}.jsonl"' in response.headers["Content-Disposition"]
            assert response.content_type == "application/x-ndjson"
            assert response.headers["X-Content-Type-Options"] == "nosniff"
            for seat in (0, 1):
                response = await client.get(f"/games/{game}/seat{seat}.receipts.jsonl")
                assert response.status == 200
                assert (
                    await response.read() == context.folder.receipts_path(game, seat).read_bytes()
                )

            response = await client.get("/table.pub")
            assert response.status == 200
            assert (await response.read()) == context.folder.public_key_path.read_bytes()

            response = await client.get("/games")
            page = await response.text()
            assert response.status == 200 and response.content_type == "text/html"
            assert "default-src 'none'" in response.headers["Content-Security-Policy"]
            assert response.headers["X-Content-Type-Options"] == "nosniff"
            assert HOSTILE not in page  # every value escaped
            assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;" in page
            assert game in page and "verified" in page

            response = await client.get(f"/games/{game}/view")
            assert response.status == 200 and response.content_type == "text/html"
            assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
            view = await response.read()
            assert context.folder.view_path(game).read_bytes() == view  # cached
            assert view.startswith(b"<!doctype html>") or view.lower().startswith(b"<!doctype")
            again = await client.get(f"/games/{game}/view")
            assert await again.read() == view

    asyncio.run(scenario())


def test_a_log_that_does_not_verify_is_listed_with_its_code(tmp_path: Path) -> None:
    context = context_in(tmp_path / "data", signing_key=TABLE_KEY)

    def tamper(log: bytes) -> bytes:
        lines = log.split(b"\n")
        lines[3] = lines[3].replace(b'"t_ms":', b'"t_ms": ', 1)  # not canonical any more
        return b"\n".join(lines)

    game = finished_game(context, log_edit=tamper)
    row = asyncio.run(archive_game(context, game))
    assert row.verdict == "does_not_verify"
    assert row.code is not None
    assert row.totals == () and row.winners == ()
    assert context.index.game(game) == row


def test_a_log_signed_by_another_table_key_does_not_verify(tmp_path: Path) -> None:
    context = context_in(tmp_path / "data", signing_key=None)
    game = finished_game(context)
    row = asyncio.run(archive_game(context, game))
    assert (row.verdict, row.code) == ("does_not_verify", "WRONG_TABLE_KEY")


def test_files_are_served_by_game_ids_and_receipts_and_pages_once_finished(
    tmp_path: Path,
) -> None:
    context = context_in(tmp_path / "data", signing_key=TABLE_KEY)
    game = finished_game(context)  # listed as a table, not yet archived

    async def scenario() -> None:
        async with served(context) as client:
            # A live game's log is what its spectators are sent: anybody may fetch it.
            assert (await client.get(f"/games/{game}.jsonl")).status == 200
            paths = [
                f"/games/{game}/seat0.receipts.jsonl",
                f"/games/{game}/view",
                f"/games/{'0' * 32}.jsonl",
                "/games/..%2Findex.sqlite3.jsonl",
                "/games/../table.key",
                "/games/%2E%2E/table.key",
                f"/games/{game.upper()}.jsonl",
                f"/games/{game}/seat8.receipts.jsonl",
                "/table.key",
                "/index.sqlite3",
            ]
            for path in paths:
                response = await client.get(path)
                assert response.status == 404, path
            await archive_game(context, game)
            assert (await client.get(f"/games/{game}/seat0.receipts.jsonl")).status == 200
            assert (await client.get(f"/games/{game}/seat2.receipts.jsonl")).status == 404

    asyncio.run(scenario())


def test_a_page_asked_for_many_times_at_once_is_made_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing a client sends can make the server do the same heavy work over and over."""
    context = context_in(tmp_path / "data", signing_key=TABLE_KEY)
    game = finished_game(context)
    made: list[Path] = []
    real = archive.write_page

    def counted(log: Path, settings: Any, page: Path) -> Any:
        made.append(page)
        return real(log, settings, page)

    monkeypatch.setattr(archive, "write_page", counted)

    async def scenario() -> None:
        await archive_game(context, game)
        async with served(context) as client:
            answers = await asyncio.gather(*(client.get(f"/games/{game}/view") for _ in range(5)))
            pages = {await answer.read() for answer in answers}
            assert [answer.status for answer in answers] == [200] * 5
            assert len(pages) == 1

    asyncio.run(scenario())
    assert made == [context.folder.view_path(game)]


class LiveTable:
    """A hosted table as the archive sees it: playing, its outbox having sent ``size``
    bytes of its log."""

    def __init__(self, size: int) -> None:
        self.state = TableState.PLAYING
        self.sent = types.SimpleNamespace(size=size)


def test_a_live_games_log_is_served_only_as_far_as_it_is_durable(tmp_path: Path) -> None:
    """docs/protocol.md §11: "a record a client has seen is never taken back": a live
    game's log download holds the records the table has sent (each durable), not the
    lines written after them, which a crash may still take (or tear)."""
    context = context_in(tmp_path / "data", signing_key=TABLE_KEY)
    game = finished_game(context)
    log = context.folder.log_path(game).read_bytes()
    durable = sum(len(line) + 1 for line in log.splitlines()[:3])
    context.tables[game] = LiveTable(durable)  # type: ignore[assignment]

    async def scenario() -> None:
        async with served(context) as client:
            response = await client.get(f"/games/{game}.jsonl")
            assert response.status == 200 and await response.read() == log[:durable]
            assert response.headers["Content-Type"] == "application/x-ndjson"
            del context.tables[game]  # the table no longer writes: its whole file
            assert await (await client.get(f"/games/{game}.jsonl")).read() == log

    asyncio.run(scenario())
