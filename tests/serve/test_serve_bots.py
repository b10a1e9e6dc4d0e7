"""A person's client and two server bots play a match to its end on the real server,
watched by a spectator; then the log and the receipts are downloaded and checked by the
verifier and the audit.

Issue 31, done when: "A person can start `racing-demon serve`, create a table with two
bots, play it to the end with a client written from `docs/protocol.md`, and download a log
that `verify` and `audit --receipts` accept".
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from racing_demon.sim.bots import HARD

from .play import resign
from .player import Player, api, bot_pause, bot_strategy, create_table, join
from .server import (
    Server,
    assert_verify_and_audit,
    needs_server,
    one_hand_rules,
    running_server,
)

pytestmark = [needs_server, pytest.mark.slow]

MATCH_SECONDS = 60.0
BOTS_ONLY_SECONDS = 400.0  # two hard bots play a hand of nertz in about 40 to 140 s
PLAYED_RECORDS = 40  # then the person resigns: a whole hand of bots takes a minute


async def person_and_two_bots(server: Server, folder: Path) -> tuple[str, Player, Player]:
    deadline = time.monotonic() + MATCH_SECONDS
    seats = [{"kind": "person"}, {"kind": "bot", "bot": "hard"}, {"kind": "bot", "bot": "hard"}]
    game = await asyncio.to_thread(
        create_table, server.base, seats, name="two bots", rules=one_hand_rules()
    )
    spectator = Player(server.base, game, out_dir=folder / "spectator")
    watching = asyncio.create_task(spectator.run(deadline))
    joined = await asyncio.to_thread(join, server.base, game, 0, "Ada")
    person = Player.for_seat(
        server.base,
        joined,
        out_dir=folder / "seat0",
        strategy=bot_strategy(HARD),
        pause=bot_pause(HARD),
    )
    playing = asyncio.create_task(person.run(deadline))
    await person.wait_records(PLAYED_RECORDS, timeout=MATCH_SECONDS)
    await resign(person)
    await asyncio.gather(playing, watching)
    return game, person, spectator


def test_a_person_and_two_bots_play_to_the_end_and_the_archive_verifies(
    tmp_path: Path,
) -> None:
    with running_server(tmp_path) as server:
        game, person, spectator = asyncio.run(person_and_two_bots(server, tmp_path))
        for player in (person, spectator):
            assert player.problems == []
            assert player.ended is not None and player.ended["verdict"] == "verified"
            assert player.copy is not None and player.copy.finished
        assert person.accepted is True
        assert person.copy_path is not None and person.receipts_path is not None
        assert spectator.copy_path is not None and spectator.copy is not None
        log = assert_verify_and_audit(
            server,
            game,
            tmp_path / "downloads",
            seats=(0, 1, 2),
            receipts=[person.receipts_path],
            copies=[person.copy_path, spectator.copy_path],
        )
        assert log.read_bytes() == spectator.copy.data()  # every record, exactly as logged
        # The archive lists it ("listed (SQLite: game id, ...) at /games").
        listed = api(server.base, "GET", "/api/games")["games"]
        assert any(game in json.dumps(entry) for entry in listed)


def test_two_bots_play_a_hand_to_the_end_and_the_data_folder_verifies_as_any_folder(
    tmp_path: Path,
) -> None:
    """Issue 31: "create a table with two bots, play it to the end", and "`racing-demon
    verify` on the data folder's logs works as on any folder". Nobody resigns: the bots
    play the hand out, in real time (the longest test of the server's)."""
    with running_server(tmp_path) as server:
        seats = [{"kind": "bot", "bot": "hard"}, {"kind": "bot", "bot": "hard"}]
        game = create_table(server.base, seats, name="two bots", rules=one_hand_rules())
        spectator = Player(server.base, game, out_dir=tmp_path / "spectator")
        asyncio.run(spectator.run(time.monotonic() + BOTS_ONLY_SECONDS))
        assert spectator.problems == []
        assert spectator.ended is not None and spectator.ended["verdict"] == "verified"
        assert spectator.copy is not None and spectator.copy.finished
        assert spectator.copy_path is not None
        log = assert_verify_and_audit(
            server, game, tmp_path / "downloads", seats=(0, 1), copies=[spectator.copy_path]
        )
        assert log.read_bytes() == spectator.copy.data()
    folder = subprocess.run(
        [
            sys.executable,
            "-m",
            "racing_demon",
            "verify",
            str(server.data / "logs"),
            "--table-key",
            str(server.data / "table.pub"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert folder.returncode == 0, folder.stdout + folder.stderr
