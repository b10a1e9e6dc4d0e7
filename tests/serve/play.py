"""Scripted play for the server tests: seats that hold their foundation cards until two of
them can race for one foundation, and the match's setup with keyed players."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from racing_demon.game.engine import legal_moves
from racing_demon.game.flow import HandEnd, RecordKind, Submission
from racing_demon.game.moves import Move, MoveKind, Zone
from racing_demon.game.state import State
from racing_demon.profiles import rules_from_document
from racing_demon.sim.bots import HARD, choose_move

from .player import Answer, Player, bot_pause, bot_strategy, create_table, join
from .server import Server, one_hand_rules

PATIENCE = 20  # rounds of holding before one round of play


def _pick(options: Sequence[Move], /) -> Move:
    return options[secrets.randbelow(len(options))]


def holding(state: State | None, seat: int) -> Move | None:
    """The bot's move, except that a card for a numbered foundation is held (a stock turn
    instead): cards that fit the centre pile up until two seats can race for one."""
    if state is None:
        return None
    move = choose_move(state, seat, HARD, _pick)
    if move is not None and move.target is not None and move.target.zone is Zone.FOUNDATION:
        turns = [m for m in legal_moves(state, seat) if m.kind in (MoveKind.TURN, MoveKind.RECYCLE)]
        return turns[0] if turns else None
    return move


def playing(state: State | None, seat: int) -> Move | None:
    """The hard bot's move."""
    return None if state is None else choose_move(state, seat, HARD, _pick)


def race_moves(first: Player, second: Player) -> tuple[Move, Move] | None:
    """A card of each seat that both fit the same numbered foundation now, if any: each
    seat's moves from its own view (its pack), the foundations the same in both."""
    targets = []
    for player in (first, second):
        state = player.position()
        if state is None or player.seat is None:
            return None
        targets.append(
            {
                move.target.index: move
                for move in legal_moves(state, player.seat)
                if move.target is not None and move.target.zone is Zone.FOUNDATION
            }
        )
    common = sorted(set(targets[0]) & set(targets[1]))
    return (targets[0][common[0]], targets[1][common[0]]) if common else None


async def in_step(players: Sequence[Player], timeout: float = 10.0) -> None:
    """Until every player's copy holds the same records (a bot may be adding more)."""
    deadline = time.monotonic() + timeout
    while True:
        lengths = {0 if p.copy is None else len(p.copy.lines) for p in players}
        if len(lengths) == 1 and 0 not in lengths:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"copies of {sorted(lengths)} records")
        await asyncio.sleep(0.01)


async def race(first: Player, second: Player, deadline: float) -> tuple[Answer, Answer] | None:
    """Both seats play a card to the same foundation naming the same seen record; again
    (a bot may take the foundation first) until one lands and the other is bounced. None
    if the hand ended first (a demon emptied while the seats held their cards back)."""
    rounds = 0
    while time.monotonic() < deadline:
        await in_step((first, second))
        if hand_over(first):
            return None
        pair = race_moves(first, second)
        if pair is None:
            rounds += 1
            # Held too long (the card a race needs may be buried): play one round as the
            # bot does, foundations included, so that the centre moves on.
            choose = holding if rounds % PATIENCE else playing
            held = [choose(player.position(), player.seat or 0) for player in (first, second)]
            for player, move in zip((first, second), held, strict=True):
                if move is not None:
                    await player.submit(str(move))
            if held == [None, None]:
                await asyncio.sleep(0.05)  # nothing to do: a stall may be coming
            continue
        assert first.copy is not None
        seen = first.copy.head
        answers = await asyncio.gather(
            first.submit(str(pair[0]), seen=seen), second.submit(str(pair[1]), seen=seen)
        )
        outcomes = sorted(
            (answer.receipt.outcome, answer.receipt.reason or "")
            for answer in answers
            if answer.receipt is not None
        )
        if outcomes == [("bounce", "FOUNDATION_TAKEN"), ("move", "")]:
            return answers[0], answers[1]
    raise TimeoutError("no race for one foundation in time")


async def resign(player: Player, timeout: float = 30.0) -> None:
    """The seat stops playing and resigns: its receipt, or after a lost connection the
    records it catches up with, say the table logged it."""
    await player.stop_moving()
    deadline = time.monotonic() + timeout
    while not resigned(player) and not hand_over(player):  # or the hand ended by itself
        if time.monotonic() > deadline:
            raise TimeoutError(f"seat {player.seat} could not resign")
        if not player.connected or player.position() is None:
            await asyncio.sleep(0.05)  # reconnecting (a restarted server), or not dealt
            continue
        with contextlib.suppress(ConnectionError, TimeoutError):
            answer = await player.submit(f"{player.seat} resign")
            assert answer.receipt is not None, answer
            assert answer.receipt.outcome in ("resign", "refused"), answer


def hand_over(player: Player) -> bool:
    """Whether the player's copy ends with the hand in play ended (or the match)."""
    copy = player.copy
    return copy is not None and any(
        isinstance(record.payload, HandEnd) for record in copy.records[-3:]
    )


def resigned(player: Player) -> bool:
    """Whether the player's copy holds its seat's resign record."""
    copy = player.copy
    return copy is not None and any(
        isinstance(record.payload, Submission)
        and record.payload.seat == player.seat
        and record.payload.kind is RecordKind.RESIGN
        for record in copy.records
    )


@dataclass
class KeyedMatch:
    """A table of keyed players (this client) and server bots, the players connected."""

    game: str
    players: list[Player]
    tasks: list[asyncio.Task[None]]
    rules_digest: str

    def play_on(self) -> None:
        """Every player plays as the hard bot from now on, so the hand ends."""
        for player in self.players:
            player.start_moving(bot_strategy(HARD), bot_pause(HARD))

    async def finish(self, resigning: int = 0) -> None:
        """Seat ``resigning`` resigns (the rules let that end the match: a hand of bots
        would take a minute), then every player answers the final record and ends."""
        await resign(self.players[resigning])
        await asyncio.gather(*self.tasks)


async def keyed_match(
    server: Server,
    folder: Path,
    *,
    people: int,
    bots: Sequence[str],
    deadline: float,
    play_base: str | None = None,
    **options: Any,
) -> KeyedMatch:
    """Create a one-hand table of ``people`` seats for this client and ``bots`` for the
    server; join and connect each player in turn (the last join starts the table), through
    ``play_base`` (a proxy) if given, each ``Player`` made with ``options``."""
    rules = one_hand_rules()
    digest = rules_from_document(rules).digest()
    seats = [{"kind": "person"}] * people + [{"kind": "bot", "bot": bot} for bot in bots]
    game = await asyncio.to_thread(
        create_table, server.base, seats, name="keyed players", rules=rules
    )
    players: list[Player] = []
    tasks: list[asyncio.Task[None]] = []
    for seat in range(people):
        joined = await asyncio.to_thread(join, server.base, game, seat, f"Player {seat}")
        player = Player.for_seat(
            play_base or server.base,
            joined,
            out_dir=folder / f"seat{seat}",
            rules_digest=digest,
            **options,
        )
        players.append(player)
        tasks.append(asyncio.create_task(player.run(deadline)))
    for player in players:
        await player.wait_pack(timeout=max(deadline - time.monotonic(), 0))
    return KeyedMatch(game, players, tasks, digest)
