"""The test harness of issue 34, point 4 ("a server that rules one bounce wrongly mid-game")
does what it says: on the real server, behind the real protocol, seat 1's first move is
logged as a bounce the rules did not call for, signed by the table
as any record, and `racing-demon verify` finds it there (``WRONGLY_BOUNCED``, step 8).
The browser test (tests/browser/test_play_engine.py) relies on exactly this."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from racing_demon.game.flow import RecordKind, Submission

from .bouncing_serve import NTH, REASON, SEAT
from .play import keyed_match
from .player import Player, http
from .server import BOUNCING, Server, cli, download, needs_server, running_server

pytestmark = [needs_server, pytest.mark.slow]

MATCH_SECONDS = 120.0
ARCHIVE_SECONDS = 40.0


def _bounce_of_the_bot(player: Player) -> int | None:
    """The seq of the harness's bounce in the player's copy, once it is there."""
    copy = player.copy
    if copy is None:
        return None
    for record in copy.records:
        payload = record.payload
        if (
            isinstance(payload, Submission)
            and payload.seat == SEAT
            and payload.kind is RecordKind.BOUNCE
            and payload.reason == REASON
        ):
            return record.seq
    return None


def test_the_bouncing_table_logs_one_legal_move_as_a_bounce_and_verify_finds_it(
    tmp_path: Path,
) -> None:
    async def play() -> tuple[str, int, Player]:
        deadline = time.monotonic() + MATCH_SECONDS
        match = await keyed_match(server, tmp_path, people=1, bots=["hard"], deadline=deadline)
        person = match.players[0]
        while (seq := _bounce_of_the_bot(person)) is None:
            if time.monotonic() > deadline or person.done:
                held = 0 if person.copy is None else len(person.copy.lines)
                raise TimeoutError(
                    f"no bounce of seat {SEAT}'s move {NTH} in time: the person's copy holds "
                    f"{held} records after {person.connects} connections; problems "
                    f"{person.problems}, errors {person.errors[-3:]}"
                )
            await asyncio.sleep(0.1)
        await match.finish()
        return match.game, seq, person

    with running_server(tmp_path, program=BOUNCING) as server:
        game, seq, person = asyncio.run(play())
        # The project's own test client replays its copy with the secret before it accepts
        # (docs/protocol.md §6): it declines this one, for that very record.
        assert [problem.code for problem in person.problems] == ["COPY_DOES_NOT_REPLAY"]
        assert "WRONGLY_BOUNCED" in str(person.problems[0])
        pub = download(server, "/table.pub", tmp_path / "table.pub")
        log = _archived(server, game, tmp_path / f"{game}.jsonl")
    verified = cli("verify", "--json", "--table-key", pub, log)
    assert verified.returncode == 1, verified.stdout + verified.stderr
    report = json.loads(verified.stdout)["reports"][0]
    assert report["step"]["number"] == 8
    assert report["finding"]["code"] == "WRONGLY_BOUNCED"
    assert report["finding"]["seq"] == seq
    assert report["accepted_by"] == []


def _archived(server: Server, game: str, dest: Path) -> Path:
    """The finished game's log, once the table has written its final record (a seat that
    declined by going away is waited for: 15 s)."""
    deadline = time.monotonic() + ARCHIVE_SECONDS
    while True:
        status, data = http(server.base, "GET", f"/games/{game}.jsonl")
        if status == 200:
            dest.write_bytes(data)
            return dest
        if time.monotonic() > deadline:
            raise TimeoutError(f"the game was not archived: {status}")
        time.sleep(0.2)
