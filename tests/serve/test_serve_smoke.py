"""The quick run's end-to-end check: the real `racing-demon serve` process started on a
free loopback port, a table created over HTTP, a person's client (tests/serve/player.py,
written from docs/protocol.md) joined beside a server bot, a few moves played and
answered with receipts, and the server stopped with Ctrl-C.

Issue 31: "`.ci/run` starts the server itself in its tests"; "Tests start the real server
process on a free loopback port and talk to it with a real WebSocket client library".
"""

from __future__ import annotations

import asyncio
import time
import urllib.request
from pathlib import Path

from racing_demon.log.receipts import check_receipt_line
from racing_demon.serve import pages

from .play import holding
from .player import Player, create_table, http, join
from .server import Server, needs_server, one_hand_rules, running_server, tables

pytestmark = needs_server

MOVES = 3


async def a_few_moves(server: Server, folder: Path) -> Player:
    deadline = time.monotonic() + 20
    game = await asyncio.to_thread(
        create_table,
        server.base,
        [{"kind": "person"}, {"kind": "bot", "bot": "easy"}],
        rules=one_hand_rules(),
    )
    joined = await asyncio.to_thread(join, server.base, game, 0, "Ada")
    player = Player.for_seat(server.base, joined, out_dir=folder)
    playing = asyncio.create_task(player.run(deadline))
    try:
        await player.wait_pack(timeout=10)
        for _ in range(MOVES):
            move = holding(player.position(), 0)
            assert move is not None
            answer = await player.submit(str(move))
            assert answer.receipt is not None and answer.receipt.logged, answer
    finally:
        playing.cancel()
        await asyncio.gather(playing, return_exceptions=True)
    return player


def test_the_real_server_starts_hosts_a_table_takes_moves_and_stops(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        player = asyncio.run(a_few_moves(server, tmp_path / "seat0"))
        assert player.problems == []
        assert player.copy is not None and len(player.copy.lines) > MOVES
        assert player.welcome is not None
        table_key = bytes.fromhex(player.welcome["table_key"])
        for number, line in enumerate(player.receipts, 1):
            assert check_receipt_line(number, line, table_key).receipt.logged  # type: ignore[union-attr]
        assert [table["state"] for table in tables(server)] == ["playing"]
        # Issue 32: the server serves the browser client's files, under the pages' policy,
        # and the seat's client is shown the table and its moves as its own view has them.
        assert player.view_problems == [] and player.advice_checked and player.shown_checked
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with direct.open(server.base + "/static/check.js", timeout=10) as answer:
            assert answer.status == 200 and answer.headers["Content-Type"].startswith(
                "text/javascript"
            )
            assert answer.headers["Content-Security-Policy"] == pages.CSP
        assert http(server.base, "GET", "/play/not-a-game")[0] == 404
    assert server.process is not None and server.process.returncode == 0  # Ctrl-C: clean
