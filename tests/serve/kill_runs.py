"""The server killed with SIGKILL at random moments, again and again, its keyed players
playing on through every restart: the runs behind tests/serve/test_serve_sigkill.py and
scripts/serve_kill_trials.py.

Matches are played one after another (two keyed players of this client and a server bot,
one hand of nertz), each through at most ``KILLS_PER_MATCH`` kills: a random stretch of
play, SIGKILL, a random pause, a start on the same data folder. Before each kill every
player's receipts are noted; once a match has ended, every one of those must still be held
by its client and name the record the log holds at its ``seq``, and the log, the server's
and the clients' receipts and the clients' copies must verify and audit clean.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .play import keyed_match
from .player import Player
from .server import Server, assert_kept_receipts_logged, assert_verify_and_audit

KILLS_PER_MATCH = 8
MATCH_SECONDS = 240.0
PLAY_S = (0.2, 1.5)  # the play between two kills
DOWN_S = (0.0, 0.3)  # the pause between a kill and the start


@dataclass
class KillTally:
    kills: int = 0
    matches: int = 0
    receipts_checked: int = 0  # receipts held at a match's last kill, each found in its log
    restart_s: list[float] = field(default_factory=list)  # start to listening


async def one_match(
    server: Server, folder: Path, rng: random.Random, kills: int, tally: KillTally
) -> None:
    """A match through up to ``kills`` kills, then checked (module docs)."""
    deadline = time.monotonic() + MATCH_SECONDS
    match = await keyed_match(server, folder, people=2, bots=["hard"], deadline=deadline)
    match.play_on()
    kept: list[list[bytes]] = [[] for _ in match.players]  # at the last kill (so at each)
    made = 0
    for _ in range(kills):
        await asyncio.sleep(rng.uniform(*PLAY_S))
        if any(player.done for player in match.players):
            break
        for held, player in zip(kept, match.players, strict=True):
            held[:] = list(player.receipts)
        await asyncio.to_thread(server.kill)
        made += 1
        await asyncio.sleep(rng.uniform(*DOWN_S))
        started = time.monotonic()
        await asyncio.to_thread(server.restart)
        tally.restart_s.append(time.monotonic() - started)
        for player in match.players:
            player.base = server.base  # the same port, unless it was taken meanwhile
    await match.finish()
    check_match(server, match.game, match.players, kept, folder / "downloads", made)
    assert made == 0 or all(player.connects >= 2 for player in match.players)  # reconnected
    tally.kills += made
    tally.matches += 1
    tally.receipts_checked += sum(map(len, kept))


def check_match(
    server: Server,
    game: str,
    players: list[Player],
    kept: list[list[bytes]],
    folder: Path,
    kills: int,
) -> None:
    """The match's checks (module docs); a resumed table logs a crash's pause at most once
    for each of the ``kills``."""
    for player in players:
        assert player.problems == [], player.problems
        assert player.ended is not None
    log = assert_verify_and_audit(
        server,
        game,
        folder,
        seats=(0, 1, 2),
        receipts=[p.receipts_path for p in players if p.receipts_path is not None],
        copies=[p.copy_path for p in players if p.copy_path is not None],
    )
    for player, held in zip(players, kept, strict=True):
        assert player.copy is not None and player.copy.data() == log.read_bytes()
        assert player.receipts[: len(held)] == held  # nothing a client got went missing
    assert players[0].welcome is not None
    assert_kept_receipts_logged(log, bytes.fromhex(players[0].welcome["table_key"]), kept)
    pauses = [body for body in bodies_of(log) if body["kind"] == "pause"]
    assert len(pauses) <= kills  # none once the match was played out
    assert {pause["cause"] for pause in pauses} <= {"crash"}


def bodies_of(log: Path) -> list[dict[str, object]]:
    return [json.loads(line)["body"] for line in log.read_bytes().splitlines()]


async def kill_runs(
    server: Server,
    folder: Path,
    seed: int,
    kills: int,
    progress: Callable[[KillTally], None] = lambda tally: None,
) -> KillTally:
    """Matches until ``kills`` kills have been made, each checked as it ends."""
    rng = random.Random(seed)  # when to kill only: nothing of a deal comes from it
    tally = KillTally()
    while tally.kills < kills:
        # A match that ends before its first kill makes none: bounded all the same.
        assert tally.matches <= 2 * kills + 10, f"{tally.matches} matches, {tally.kills} kills"
        left = min(KILLS_PER_MATCH, kills - tally.kills)
        await one_match(server, folder / f"match{tally.matches}", rng, left, tally)
        progress(tally)
    return tally
