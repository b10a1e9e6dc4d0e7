"""A bots-only match on the real server, watched by a spectator to its end, then the log
and the receipts downloaded and checked by the verifier and the audit.

Issue 31, done when: "A person can start `racing-demon serve`, create a table with two
bots, play it to the end with a client written from `docs/protocol.md`, and download a log
that `verify` and `audit --receipts` accept".
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from .player import Player, api, create_table
from .server import assert_verify_and_audit, needs_server, one_hand_rules, running_server

pytestmark = [needs_server, pytest.mark.slow]

MATCH_SECONDS = 400.0  # two hard bots play a hand of nertz in about 40 to 140 s


def test_two_bots_play_to_the_end_and_the_archive_verifies(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        game = create_table(
            server.base,
            [{"kind": "bot", "bot": "hard"}, {"kind": "bot", "bot": "hard"}],
            name="two bots",
            rules=one_hand_rules(),
        )
        spectator = Player(server.base, game, out_dir=tmp_path / "spectator")
        asyncio.run(spectator.run(time.monotonic() + MATCH_SECONDS))
        assert spectator.problems == []
        assert spectator.ended is not None and spectator.ended["verdict"] == "verified"
        assert spectator.copy is not None and spectator.copy.finished
        assert spectator.copy_path is not None
        log = assert_verify_and_audit(
            server, game, tmp_path / "downloads", seats=(0, 1), copies=[spectator.copy_path]
        )
        assert log.read_bytes() == spectator.copy.data()  # every record, exactly as logged
        # The archive lists it ("listed (SQLite: game id, ...) at /games").
        listed = api(server.base, "GET", "/api/games")["games"]
        assert any(game in json.dumps(entry) for entry in listed)
