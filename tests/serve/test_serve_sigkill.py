"""SIGKILL at random moments: the server killed mid-match and started again on its data
folder, the clients reconnect and catch up, the match ends, and no receipt a client got
before a kill names a record the log lost.

Issue 31: "Killed at any moment (SIGKILL), the server loses no record whose receipt was
sent: on restart every unfinished table resumes (`Table.resume`), clients reconnect and
catch up from the last `seq` they hold, and `audit --receipts` of every seat's receipts
against the log is clean."
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from pathlib import Path

import pytest

from racing_demon.log.receipts import check_receipt_line, record_reference

from .play import keyed_match
from .player import Player
from .server import Server, assert_verify_and_audit, needs_server, running_server

pytestmark = [needs_server, pytest.mark.slow]

KILLS = 3
MATCH_SECONDS = 120.0  # about 15 s: three kills, then a seat resigns


async def play_through_kills(
    server: Server, folder: Path, rng: random.Random
) -> tuple[str, list[Player], list[list[bytes]]]:
    deadline = time.monotonic() + MATCH_SECONDS
    match = await keyed_match(server, folder, people=2, bots=["hard"], deadline=deadline)
    match.play_on()
    before_kills: list[list[bytes]] = [[] for _ in match.players]
    for _ in range(KILLS):
        await asyncio.sleep(rng.uniform(0.3, 3.0))
        if any(player.done for player in match.players):
            break
        for kept, player in zip(before_kills, match.players, strict=True):
            kept[:] = list(player.receipts)
        await asyncio.to_thread(server.kill)
        await asyncio.sleep(rng.uniform(0.0, 1.0))
        await asyncio.to_thread(server.restart)
        for player in match.players:
            player.base = server.base  # the same port, unless it was taken meanwhile
    await match.finish()
    return match.game, match.players, before_kills


def test_sigkill_mid_match_loses_no_acknowledged_record(tmp_path: Path) -> None:
    seed = secrets.randbits(32)
    with running_server(tmp_path) as server:
        game, players, before_kills = asyncio.run(
            play_through_kills(server, tmp_path, random.Random(seed))
        )
        for player in players:
            assert player.problems == [], (seed, player.problems)
            assert player.ended is not None, seed
            assert player.connects >= 2, seed  # it did reconnect
        log = assert_verify_and_audit(
            server,
            game,
            tmp_path / "downloads",
            seats=(0, 1, 2),
            receipts=[player.receipts_path for player in players],  # type: ignore[misc]
            copies=[player.copy_path for player in players],  # type: ignore[misc]
        )
        lines = log.read_bytes().splitlines()
        table_key = bytes.fromhex(players[0].welcome["table_key"])  # type: ignore[index]
        for player, kept in zip(players, before_kills, strict=True):
            assert player.copy is not None and player.copy.data() == log.read_bytes()
            assert player.receipts[: len(kept)] == kept  # nothing a client got went missing
            for number, line in enumerate(kept, 1):
                checked = check_receipt_line(number, line, table_key)
                receipt = checked.receipt  # type: ignore[union-attr]
                if receipt.logged:  # its record is in the log, as the receipt names it
                    named = record_reference(lines[receipt.seq], receipt.v)
                    assert named == receipt.record, (seed, receipt)
