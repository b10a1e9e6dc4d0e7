"""Resending through a network that loses frames (issue 35, point 1): "10,000 submissions
through a proxy that drops 20% of frames and cuts connections at random: 0 duplicate
records, 0 lost submissions, every client's receipts audit clean."

The real server process; keyed players (tests/serve/player.py, sending each submission
again, unchanged, every second and after each reconnect, docs/protocol.md §10) play as
the hard bot through ``LossyProxy``, which drops a fifth of the submit frames and of the
receipt frames and cuts every connection within 1-8 s. Tables of three seats are played
out (or resigned once enough submissions were made), several at once, until the count is
reached. The default run makes a few hundred submissions; the slow run the 10,000.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .lossy_proxy import LossyProxy
from .play import KeyedMatch, keyed_match
from .player import Player, bot_strategy, steady_pause
from .server import Server, assert_verify_and_audit, needs_server, running_server

pytestmark = [needs_server]

SEATS = 3
RESEND_S = 1.0


@dataclass
class Tally:
    submissions: int = 0  # submit() calls of the players' strategies
    answered: int = 0  # each with its receipt
    unanswered: int = 0  # none within the players' timeout: lost
    resent: int = 0  # submit frames sent again
    games: list[tuple[str, list[Player], Path]] = field(default_factory=list)


def submitted(players: list[Player]) -> tuple[int, int]:
    return sum(len(p.answers) + p.timeouts for p in players), sum(p.timeouts for p in players)


async def play_table(
    server: Server, proxy: LossyProxy, folder: Path, tally: Tally, target: int, deadline: float
) -> None:
    """One table, played by the hard bot's moves until its hand ends or the tally reaches
    ``target``; then seat 0 resigns and every seat answers the final record."""
    from racing_demon.sim.bots import HARD

    match: KeyedMatch = await keyed_match(
        server,
        folder,
        people=SEATS,
        bots=[],
        deadline=deadline,
        play_base=proxy.base,
        resend_s=RESEND_S,
        timeout=60.0,
        check_copy=False,  # many clients share two CPUs; verify and audit check the copies
    )
    for player in match.players:
        player.start_moving(bot_strategy(HARD), steady_pause(80))
    counted = 0
    while not all(task.done() for task in match.tasks):
        now_made, _ = submitted(match.players)
        tally.submissions += now_made - counted
        counted = now_made
        if tally.submissions >= target:
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"{tally.submissions} of {target} submissions in time")
        await asyncio.sleep(0.2)
    if not all(task.done() for task in match.tasks):
        await match.finish()
    made, lost = submitted(match.players)
    tally.submissions += made - counted
    tally.answered += sum(len(p.answers) for p in match.players)
    tally.unanswered += lost
    tally.resent += sum(p.resent for p in match.players)
    tally.games.append((match.game, match.players, folder))


async def lossy_run(
    server: Server, folder: Path, target: int, parallel: int, seconds: float
) -> tuple[Tally, LossyProxy]:
    tally = Tally()
    deadline = time.monotonic() + seconds
    async with LossyProxy(server.base) as proxy:
        number = 0

        async def tables() -> None:
            nonlocal number
            while tally.submissions < target:
                number += 1
                await play_table(server, proxy, folder / f"t{number}", tally, target, deadline)

        await asyncio.gather(*(tables() for _ in range(parallel)))
    return tally, proxy


def check_games(server: Server, tally: Tally) -> None:
    """Every player's problems none, and the log, the server's receipts and every client's
    receipts and copy verify and audit clean; each client holds each receipt once."""
    for game, players, folder in tally.games:
        assert [p.problems for p in players] == [[]] * SEATS, game
        log = assert_verify_and_audit(
            server,
            game,
            folder,
            seats=range(SEATS),
            receipts=[p.receipts_path for p in players if p.receipts_path is not None],
            copies=[p.copy_path for p in players if p.copy_path is not None],
        )
        # Each seat's records and its client's logged receipts match one to one: every
        # record has its receipt, and no receipt names a record the log lacks.
        bodies = [json.loads(line)["body"] for line in log.read_bytes().splitlines()]
        for player in players:
            records = Counter(
                body["n"] for body in bodies if body.get("player") == player.seat and "n" in body
            )
            receipts = Counter(
                body["n"]
                for body in (json.loads(line)["body"] for line in player.receipts)
                if body["outcome"] != "refused"
            )
            assert receipts == records, (game, player.seat)
        # Every answer a client holds is one of its receipts, each kept once.
        for player in players:
            assert len(player.receipts) == len(set(player.receipts))


def lossy(tmp_path: Path, target: int, parallel: int, seconds: float) -> Tally:
    with running_server(tmp_path) as server:
        tally, proxy = asyncio.run(lossy_run(server, tmp_path, target, parallel, seconds))
        check_games(server, tally)
    dropped = proxy.dropped["submit"] + proxy.dropped["receipt"]
    passed = proxy.passed["submit"] + proxy.passed["receipt"]
    print(
        f"{tally.submissions} submissions in {len(tally.games)} games: {tally.answered} "
        f"answered, {tally.unanswered} lost, {tally.resent} sent again; the proxy dropped "
        f"{dropped} of {dropped + passed} submit and receipt frames "
        f"({proxy.dropped}), cut {proxy.cuts} of {proxy.connections} connections"
    )
    assert tally.submissions >= target and tally.unanswered == 0
    assert tally.answered == tally.submissions
    assert proxy.dropped["submit"] > 0 and proxy.dropped["receipt"] > 0 and proxy.cuts > 0
    return tally


def test_submissions_through_a_lossy_network_each_get_one_receipt_and_one_record(
    tmp_path: Path,
) -> None:
    lossy(tmp_path, target=120, parallel=2, seconds=240)


@pytest.mark.slow
def test_ten_thousand_submissions_through_a_lossy_network_lose_nothing_and_log_nothing_twice(
    tmp_path: Path,
) -> None:
    lossy(tmp_path, target=10_000, parallel=8, seconds=1500)


def one_table_losing(tmp_path: Path, **loses: Any) -> tuple[Tally, LossyProxy]:
    """One table played through a proxy that loses only what ``loses`` says (its
    ``always_lost`` or ``cut_at``), its game verified and audited as any."""

    async def main(server: Server) -> tuple[Tally, LossyProxy]:
        tally = Tally()
        deadline = time.monotonic() + 120
        async with LossyProxy(server.base, drop_share=0.0, lifetime_s=None, **loses) as proxy:
            await play_table(server, proxy, tmp_path / "t1", tally, 20, deadline)
        return tally, proxy

    with running_server(tmp_path) as server:
        tally, proxy = asyncio.run(main(server))
        check_games(server, tally)
    return tally, proxy


def test_a_receipt_lost_as_the_game_ends_is_taken_from_the_archive(tmp_path: Path) -> None:
    """docs/protocol.md §4: "a client that missed its ended finds the game in GET /api/games
    and downloads its log and receipts from there". Every answer to seat 0's resignation is
    lost, each resend's too, and the game ends with it: the client takes that receipt from
    the archive's receipts file of its seat, checked as any receipt, and its records and
    receipts still match one to one."""
    tally, proxy = one_table_losing(
        tmp_path, always_lost=lambda body: body.get("outcome") == "resign"
    )
    assert proxy.dropped["receipt"] >= 1 and tally.unanswered == 0


def test_a_seat_that_missed_ended_takes_the_end_from_the_archive(tmp_path: Path) -> None:
    """docs/protocol.md §4: "A finished game has no play connection any more (NO_SUCH_TABLE):
    a client that missed its ended finds the game in GET /api/games and downloads its log
    and receipts from there". Every ``ended`` is lost with its connection: once the table
    is gone, each seat's reconnection is refused 404 and it takes the end from the archive,
    its copy whole and its receipts matching its records."""
    tally, proxy = one_table_losing(tmp_path, cut_at=lambda message: message.get("type") == "ended")
    ((_, players, _),) = tally.games
    assert proxy.cut_at_count >= SEATS and proxy.refused >= SEATS
    assert [p.ended and p.ended["verdict"] for p in players] == ["verified"] * SEATS
