"""A planned stop (issue 35, point 3): "A planned stop (SIGTERM) announces itself to every
client (a drain notice, configurable, default 30 s), pauses the tables' clocks ... and
resumes every table on start"; "a planned restart loses 0 moves and pauses a table <= 5 s
plus the restart time".

The real server process with ``--drain``: SIGTERM tells every connection ``stopping``
(docs/protocol.md §10, "A planned stop"), the lobby refuses new tables meanwhile
(SERVER_STOPPING, 503), the table plays on until the drain is over, the server exits 0,
and started again the table resumes, its players reconnect, and the match ends with every
receipt's record in the log. A second SIGTERM, or SIGINT, ends the drain at once.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path

from websockets.asyncio.client import connect

from .kill_runs import bodies_of
from .play import keyed_match
from .player import Player, create_table, http, ws_url
from .server import (
    Server,
    assert_kept_receipts_logged,
    assert_verify_and_audit,
    needs_server,
    running_server,
)

pytestmark = [needs_server]

DRAIN_S = 5
MATCH_SECONDS = 120.0


async def until(check: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        await asyncio.sleep(0.02)


def answered_between(players: list[Player], start: float, end: float) -> int:
    return sum(start < answer.at < end for player in players for answer in player.answers)


async def planned_restart(
    server: Server, folder: Path
) -> tuple[str, list[Player], list[list[bytes]]]:
    deadline = time.monotonic() + MATCH_SECONDS
    match = await keyed_match(server, folder, people=2, bots=["hard"], deadline=deadline)
    players = match.players
    match.play_on()
    await until(lambda: all(p.answers for p in players), 60, "moves before the stop")

    asked = time.monotonic()
    server.terminate()
    await until(lambda: all(p.stopping for p in players), DRAIN_S - 1, "every player told")
    for player in players:
        (_, in_ms), *_ = player.stopping
        assert 0 < in_ms <= DRAIN_S * 1000
    status, body = await asyncio.to_thread(
        http,
        server.base,
        "POST",
        "/api/tables",
        {"name": "late", "profile": "nertz", "seats": [{"kind": "bot", "bot": "easy"}] * 2},
    )
    assert status == 503 and json.loads(body)["error"]["code"] == "SERVER_STOPPING"

    assert await asyncio.to_thread(server.wait, DRAIN_S + 15) == 0
    stopped = time.monotonic()
    assert stopped - asked >= DRAIN_S * 0.9  # the tables were given the drain
    told = max(p.stopping[0][0] for p in players)
    assert answered_between(players, told, stopped) > 0  # and played on meanwhile
    kept = [list(p.receipts) for p in players]
    last_before = [max(answer.at for answer in p.answers) for p in players]

    await asyncio.to_thread(server.restart)
    started = time.monotonic()
    for player in players:
        player.base = server.base  # the same port, unless it was taken meanwhile
    await until(
        lambda: all(answered_between([p], started, float("inf")) for p in players),
        60,
        "moves after the restart",
    )
    for player, before in zip(players, last_before, strict=True):
        first_after = min(a.at for a in player.answers if a.at > started)
        print(
            f"seat {player.seat}: last receipt {stopped - before:.3f} s before the exit, the "
            f"restart took {started - stopped:.3f} s, the next receipt came "
            f"{first_after - started:.3f} s after it (paused {first_after - before:.3f} s)"
        )
    await match.finish()
    return match.game, players, kept


def test_sigterm_drains_tells_every_player_and_the_table_resumes_losing_nothing(
    tmp_path: Path,
) -> None:
    with running_server(tmp_path, "--drain", str(DRAIN_S)) as server:
        game, players, kept = asyncio.run(planned_restart(server, tmp_path))
        assert f"SIGTERM: stopping in {DRAIN_S} s" in server.stderr()
        assert "resumed 1 live table" in server.stderr()
        for player in players:
            assert player.problems == [] and player.ended is not None
        log = assert_verify_and_audit(
            server,
            game,
            tmp_path / "downloads",
            seats=(0, 1, 2),
            receipts=[p.receipts_path for p in players if p.receipts_path is not None],
            copies=[p.copy_path for p in players if p.copy_path is not None],
        )
        for player, before in zip(players, kept, strict=True):
            assert player.receipts[: len(before)] == before
        assert_kept_receipts_logged(log, bytes.fromhex(players[0].welcome["table_key"]), kept)  # type: ignore[index]
        # docs/log-format.md §6, "Notes": the resumed table logs its pause, a planned one
        (pause,) = [body for body in bodies_of(log) if body["kind"] == "pause"]
        assert pause["cause"] == "planned" and 0 <= pause["down_ms"] < 60_000  # type: ignore[operator]


def signalled_to_drain(server: Server) -> None:
    server.terminate()
    deadline = time.monotonic() + 10
    while "SIGTERM: stopping in 600 s" not in server.stderr():
        assert time.monotonic() < deadline, server.stderr()
        time.sleep(0.02)


async def told_on_connecting(server: Server, game: str) -> dict[str, object]:
    async with connect(ws_url(server.base, f"/ws/{game}")) as socket:
        welcome = json.loads(await socket.recv())
        assert welcome["type"] == "welcome"
        return json.loads(await socket.recv())  # type: ignore[no-any-return]


def test_a_connection_made_while_draining_is_told_and_a_second_signal_stops_at_once(
    tmp_path: Path,
) -> None:
    with running_server(tmp_path, "--drain", "600") as server:
        game = create_table(server.base, [{"kind": "bot", "bot": "easy"}] * 2)
        signalled_to_drain(server)
        stopping = asyncio.run(told_on_connecting(server, game))
        assert stopping["type"] == "stopping"
        assert 590_000 < stopping["in_ms"] <= 600_000  # type: ignore[operator]
        server.interrupt()
        assert server.wait(15) == 0  # not the 600 s


def test_a_second_sigterm_stops_at_once_even_before_the_drain_began(tmp_path: Path) -> None:
    # Once the drain has begun, and 50 ms after the first: delivered, perhaps not yet
    # handled (two sent at one instant can reach a process as one: the system does not
    # queue a signal of a kind already pending).
    for drained in (True, False):
        with running_server(tmp_path / str(drained), "--drain", "600") as server:
            if drained:
                signalled_to_drain(server)
            else:
                server.terminate()
                time.sleep(0.05)
            server.terminate()
            assert server.wait(15) == 0  # not the 600 s
