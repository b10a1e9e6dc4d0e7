"""Hostile frames against the real server: each kind answered with its code, then many
random ones from several connections; the server still answers the lobby and every table's
log still verifies (unfinished, every record replayed) at the end.

Issue 31: "A submission not signed by the seat's key, for another seat, malformed JSON, an
unknown message, an oversized frame, a replayed message: each gets a protocol error or a
refusal receipt with its code, and the server keeps serving. A fuzz test sends thousands of
hostile frames and checks that every table still verifies and the server still answers."
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from racing_demon.log.receipts import check_receipt_line, record_reference
from racing_demon.verify import Settings, VerifyCode, verify_log

from .play import keyed_match
from .player import Player, api, create_table, ws_url
from .server import Server, download, needs_server, running_server, tables

pytestmark = needs_server

ANSWER_SECONDS = 10.0


class RawClient:
    """A connection that sends whatever it is given and keeps every message it gets."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.messages: list[dict[str, Any]] = []
        self.closed: list[int | None] = []
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None

    async def open(self, sync: bool = True) -> None:
        self._ws = await connect(self.url, proxy=None, open_timeout=ANSWER_SECONDS, max_size=None)
        self._reader = asyncio.create_task(self._read(self._ws))
        if sync:
            await self._ws.send(json.dumps({"type": "sync", "from": 0}))

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for frame in ws:
                with contextlib.suppress(ValueError):
                    self.messages.append(json.loads(frame))
        except ConnectionClosed:
            pass
        self.closed.append(ws.close_code)

    async def send(self, frame: str | bytes) -> None:
        """Send ``frame``; after the server closed the connection, open a new one first."""
        if self._ws is None or self._reader is None or self._reader.done():
            await self.open()
        assert self._ws is not None
        with contextlib.suppress(ConnectionClosed):
            await self._ws.send(frame)

    async def error(self, code: str) -> dict[str, Any]:
        """The first error message of ``code`` (waiting for it), else TimeoutError."""
        deadline = time.monotonic() + ANSWER_SECONDS
        while time.monotonic() < deadline:
            for message in self.messages:
                if message.get("type") == "error" and message.get("code") == code:
                    return message
            await asyncio.sleep(0.02)
        got = [m.get("code") for m in self.messages if m.get("type") == "error"]
        raise TimeoutError(f"no {code} error; errors: {got}")

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader


async def each_kind_answered(server: Server, first: Player, second: Player, game: str) -> None:
    """One frame of every hostile kind, each answered with its code."""
    assert first.seat is not None and second.seat is not None
    # Any move text of the seat's own will do: a move the engine refuses is logged too
    # (a bounce), and the table checks the signature only after the text.
    move, other = f"{first.seat} agree", f"{second.seat} agree"
    # Not signed by the seat's key.
    unsigned = await first.submit(move, signature="ab" * 64)
    assert unsigned.receipt is not None and unsigned.receipt.reason == "BAD_SIGNATURE"
    # A move of another seat, signed by this one.
    foreign = await first.submit(other)
    assert foreign.receipt is not None and foreign.receipt.reason == "NOT_ITS_MOVE"
    # A submission replayed byte for byte (issue 35): the same submission, sent again,
    # gets the receipt it got, the same bytes, and no second record.
    logged = await first.submit(move)
    assert logged.receipt is not None and logged.receipt.logged
    held, repeated = list(first.receipts), first.repeated
    await first.send_raw(first.last_frame)
    assert await _eventually(lambda: first.repeated == repeated + 1)
    assert first.receipts == held  # the answer came again, the same bytes: kept once
    # Entropy nobody asked for.
    await first.send_raw(json.dumps({"type": "entropy", "signature": "00" * 64}))

    spectator = RawClient(ws_url(server.base, f"/ws/{game}"))
    await spectator.open()
    for frame, code in (
        ("{not json", "BAD_JSON"),
        ("[1, 2, 3]", "NOT_OBJECT"),
        (json.dumps({"type": "teleport"}), "UNKNOWN_TYPE"),
        (json.dumps({"type": "sync", "from": "zero"}), "BAD_MESSAGE"),
    ):
        closes = len(spectator.closed)
        await spectator.send(frame)
        await spectator.error(code)
        # A malformed frame closes its connection: the next frame goes to a new one.
        assert await _eventually(lambda: len(spectator.closed) > closes)  # noqa: B023
    await spectator.send(json.dumps({"type": "accept", "signature": None}))
    await spectator.error("SPECTATOR")
    late = RawClient(ws_url(server.base, f"/ws/{game}"))
    await late.open(sync=False)
    await late.send(json.dumps({"type": "accept", "signature": None}))
    await late.error("NOT_SYNCED")
    big = RawClient(ws_url(server.base, f"/ws/{game}"))
    await big.open()
    await big.send(json.dumps({"type": "sync", "from": 0, "pad": "x" * (20 << 10)}))
    # An error TOO_LARGE, or the connection closed (1009): either is an answer.
    await asyncio.wait_for(_closed_or_answered(big), ANSWER_SECONDS)
    assert await _eventually(lambda: any(e.get("code") == "NOT_ASKED" for e in first.errors))
    for client in (spectator, late, big):
        await client.close()


async def _closed_or_answered(client: RawClient) -> None:
    while not client.closed and not any(m.get("code") == "TOO_LARGE" for m in client.messages):
        await asyncio.sleep(0.02)


async def _eventually(check: Any) -> bool:
    deadline = time.monotonic() + ANSWER_SECONDS
    while time.monotonic() < deadline:
        if check():
            return True
        await asyncio.sleep(0.02)
    return False


def hostile_frames(rng: random.Random, valid: dict[str, Any]) -> Iterator[str | bytes]:
    """Random bytes, broken JSON, wrong types, unknown types, huge values, mutated copies of
    a valid submission: for ever."""
    kinds = ["sync", "entropy", "cosign", "submit", "accept", "ping", "", None, 7]
    odd_values: list[Any] = [
        None,
        True,
        -1,
        2**70,
        1.5,
        "",
        "x" * 300,
        [],
        {},
        [[[[[]]]]],
        "\ufffd",
    ]
    while True:
        choice = rng.randrange(7)
        if choice == 0:
            yield rng.randbytes(rng.randrange(1, 200))
        elif choice == 1:
            text = json.dumps(valid)
            cut = rng.randrange(len(text))
            yield text[:cut] + rng.choice(["", "}", "]]", '"', "\\", "\x00"]) + text[cut + 1 :]
        elif choice == 2:
            yield json.dumps({"type": rng.choice(kinds), "from": rng.choice(odd_values)})
        elif choice == 3:
            mutated = dict(valid)
            key = rng.choice([*mutated, "extra"])
            mutated[key] = rng.choice(odd_values)
            yield json.dumps(mutated)
        elif choice == 4:
            yield json.dumps(valid)  # a replay
        elif choice == 5:
            yield json.dumps({**valid, "move": f"{rng.randrange(-1, 9)} turn 5S 9D KH"})
        else:
            yield "[" * rng.randrange(1, 3000)


async def random_frames(
    server: Server, players: list[Player], games: list[str], count: int, connections: int
) -> None:
    """``count`` hostile frames over the seats' own connections and ``connections``
    spectators' (of every game), each paced under the rate limit."""
    rng = random.Random(secrets.randbits(32))
    assert players[0].last_frame
    frames = hostile_frames(rng, json.loads(players[0].last_frame))
    spectators = [
        RawClient(ws_url(server.base, f"/ws/{games[index % len(games)]}"))
        for index in range(connections)
    ]
    senders: list[Any] = [player.send_raw for player in players] + [c.send for c in spectators]
    per_sender = -(-count // len(senders))

    async def flood(send: Any) -> None:
        for _ in range(per_sender):
            try:
                await send(next(frames))
            except (ConnectionClosed, AssertionError):
                pass
            except InvalidStatus as refused:  # the bots' match ended: its table is gone
                assert refused.response.status_code == 404, refused
                return
            await asyncio.sleep(0.12)  # under 10 messages a second

    await asyncio.gather(*(flood(send) for send in senders))
    for client in spectators:
        await client.close()


async def hostile(
    server: Server, folder: Path, count: int, connections: int
) -> tuple[str, str, list[Player]]:
    deadline = time.monotonic() + 300
    match = await keyed_match(server, folder, people=2, bots=["easy"], deadline=deadline)
    bots_game = await asyncio.to_thread(
        create_table,
        server.base,
        [{"kind": "bot", "bot": "hard"}, {"kind": "bot", "bot": "hard"}],
    )
    first, second = match.players
    await each_kind_answered(server, first, second, match.game)
    match.play_on()  # the table goes on under the flood
    await random_frames(server, match.players, [match.game, bots_game], count, connections)
    # The seats' clients still get every record: the table was not stalled.
    for player in match.players:
        assert player.copy is not None
        if not player.done:
            await player.wait_records(len(player.copy.lines) + 1, timeout=60)
        assert player.problems == []
    for task in match.tasks:
        task.cancel()
    await asyncio.gather(*match.tasks, return_exceptions=True)
    return match.game, bots_game, match.players


def check_still_serving(
    server: Server, folder: Path, games: list[str], players: list[Player]
) -> None:
    assert server.alive()
    # A game may end under the flood (its hand played out): then the archive lists it.
    listed = {table["game"] for table in tables(server)}
    archived = {entry["game"] for entry in api(server.base, "GET", "/api/games")["games"]}
    assert set(games) <= listed | archived, (games, listed, archived)
    create_table(server.base, [{"kind": "bot", "bot": "easy"}, {"kind": "bot", "bot": "easy"}])
    pub = download(server, "/table.pub", folder / "table.pub")
    table_key = bytes.fromhex(players[0].welcome["table_key"])  # type: ignore[index]
    for game in games:
        log = download(server, f"/games/{game}.jsonl", folder / f"{game}.jsonl")
        report = verify_log(log, Settings(table_key=table_key))
        assert report.finding is None or report.finding.code is VerifyCode.UNFINISHED, report
    assert pub.read_bytes()
    lines = (folder / f"{games[0]}.jsonl").read_bytes().splitlines()
    for player in players:
        assert player.copy is not None
        assert player.copy.lines == lines[: len(player.copy.lines)]
        for number, line in enumerate(player.receipts, 1):
            checked = check_receipt_line(number, line, table_key)
            receipt = checked.receipt  # type: ignore[union-attr]
            if receipt.logged and receipt.seq < len(lines):
                assert record_reference(lines[receipt.seq], receipt.v) == receipt.record


def run_fuzz(tmp_path: Path, count: int, connections: int) -> None:
    with running_server(tmp_path) as server:
        keyed, bots, players = asyncio.run(hostile(server, tmp_path, count, connections))
        check_still_serving(server, tmp_path / "downloads", [keyed, bots], players)
        assert server.process is not None and server.process.poll() is None


def test_hostile_frames_of_each_kind_and_a_few_random_ones(tmp_path: Path) -> None:
    run_fuzz(tmp_path, count=40, connections=2)


@pytest.mark.slow
def test_thousands_of_hostile_frames(tmp_path: Path) -> None:
    run_fuzz(tmp_path, count=3000, connections=8)
