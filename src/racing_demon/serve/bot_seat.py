"""A bot at a served table: the project's strategy (``sim.bots``) on the live table, at its
profile's pace, in real time, its moves signed with the key the server keeps for its seat.

It submits through the same path as a person's client (the host's submit, which answers
with a receipt only once the record is durable), so a bot waits for its move to be
acknowledged before it looks again, as ``simulate``'s bots wait for their move to show.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable, Iterator

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.engine import advance_clock
from racing_demon.game.flow import Seen
from racing_demon.sim.bots import BotProfile, choose_move, stream_chooser
from racing_demon.table import Table, sign_submission

# The bot's submission: (n, move text, seen, signature), answered once its receipt is sent.
BotSubmit = Callable[[int, str, Seen, str], Awaitable[None]]


def secret_words() -> Iterator[int]:
    """32-bit words from the operating system's generator: a served bot's choices and
    pauses must not be predictable from anything a player can see (never ``random``)."""
    while True:
        yield secrets.randbits(32)


async def play_bot(
    table: Table,
    seat: int,
    profile: BotProfile,
    key: Ed25519PrivateKey,
    now_ms: Callable[[], int],
    submit: BotSubmit,
) -> None:
    """Play seat ``seat`` until the match is played out (the host cancels it sooner)."""
    words = secret_words()
    choose = stream_chooser(words)
    while not table.played_out:
        state = table.state
        now = now_ms()
        view = advance_clock(state, now) if now > state.clock_ms else state
        move = choose_move(view, seat, profile, choose)
        if move is not None:
            text, n, seen = str(move), table.next_n(seat), table.head
            signature = sign_submission(
                key, table.game, view.hand, seat, n, text, seen, table.version
            )
            await submit(n, text, seen, signature)
        await asyncio.sleep(profile.pause_ms(move, words) / 1000)
