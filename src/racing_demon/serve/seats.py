"""What a served table is made of: its seats and its spec, as the server keeps them, and
what the table needs of the world around it (its peers, the journal, the data folder's
paths). ``racing_demon.serve.host`` plays it."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.deal import SECRET_BYTES
from racing_demon.game.rules import Rules
from racing_demon.log.keys import raw_public_bytes
from racing_demon.serve.data import is_game_id
from racing_demon.serve.protocol import ServeCode
from racing_demon.sim.bots import BotProfile
from racing_demon.sim.simulate import BACKS
from racing_demon.table import PlayerInfo


class TableState(enum.StrEnum):
    WAITING = "waiting"
    STARTING = "starting"
    PLAYING = "playing"
    ACCEPTING = "accepting"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class SeatKind(enum.StrEnum):
    PERSON = "person"
    BOT = "bot"


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatSpec:
    """One seat: a person's (its name and raw Ed25519 public key from the lobby's join,
    None while the seat is free) or a bot's (its profile, and the key the server made for
    it and keeps: the server is the bot's client)."""

    kind: SeatKind
    name: str | None = None
    key: bytes | None = None
    bot: BotProfile | None = None
    bot_key: Ed25519PrivateKey | None = field(default=None, repr=False, compare=False)

    @classmethod
    def bot_seat(cls, name: str, profile: BotProfile, key: Ed25519PrivateKey) -> SeatSpec:
        return cls(
            kind=SeatKind.BOT,
            name=name,
            key=raw_public_bytes(key.public_key()),
            bot=profile,
            bot_key=key,
        )

    def __post_init__(self) -> None:
        if (self.name is None) != (self.key is None):
            raise ValueError("a taken seat has a name and a key, a free one neither")
        if self.key is not None and len(self.key) != 32:
            raise ValueError("a seat's key is a raw 32-byte Ed25519 public key")
        if self.kind is SeatKind.BOT:
            if self.bot is None or self.bot_key is None or self.key is None:
                raise ValueError("a bot's seat names its profile, its key and its name")
            if raw_public_bytes(self.bot_key.public_key()) != self.key:
                raise ValueError("a bot's key is the public half of its private key")
        elif self.bot is not None or self.bot_key is not None:
            raise ValueError("a person's seat has no bot profile and no private key")

    @property
    def taken(self) -> bool:
        return self.key is not None

    def listed(self, seat: int) -> dict[str, object]:
        """The seat as ``welcome`` lists it (name and key null while it is free)."""
        key = None if self.key is None else self.key.hex()
        return {"seat": seat, "name": self.name, "kind": self.kind.value, "key": key}


@dataclass(frozen=True, slots=True, kw_only=True)
class TableSpec:
    """What the server keeps of a table (its index), and the host needs to play it."""

    game: str
    name: str
    rules: Rules
    seats: tuple[SeatSpec, ...]
    secret: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if not is_game_id(self.game):
            raise ValueError(f"{self.game!r} is not a game id (32 lowercase hex)")
        if not self.rules.min_players <= len(self.seats) <= self.rules.max_players:
            raise ValueError(f"the {self.rules.name} rules do not seat {len(self.seats)}")
        if len(self.secret) != SECRET_BYTES:
            raise ValueError(f"the dealer secret is {SECRET_BYTES} bytes")


def players_of(seats: Sequence[SeatSpec]) -> list[PlayerInfo]:
    """The genesis's players of a table whose every seat is taken."""
    players = []
    for seat, entry in enumerate(seats):
        assert entry.name is not None  # every seat is taken before the start
        players.append(PlayerInfo(entry.name, BACKS[seat % len(BACKS)], entry.key))
    return players


class Peer(Protocol):
    """A connection, as the host sees it: ``send`` never blocks (the app queues)."""

    @property
    def seat(self) -> int | None: ...  # None: a spectator

    def send(self, message: Mapping[str, object]) -> None: ...

    def send_encoded(self, message: Mapping[str, object], text: str) -> None:
        """``send(message)``, its frame's text (``protocol.encode(message)``) given: a
        message for many peers (a record) is encoded once, not once for each."""

    def send_all(self, messages: Sequence[Mapping[str, object]]) -> None:
        """Several messages at once (a catch-up): one entry of the peer's bounded queue."""

    def close(self, reason: ServeCode) -> None:
        """Close the connection for ``reason`` once what was sent before it is out."""


class TableJournal(Protocol):
    """The journal as a table uses it (``serve.journal.Journal``)."""

    def log_line(self, game: str, line: bytes) -> int: ...

    def receipt(self, game: str, seat: int, line: bytes) -> int: ...

    async def durable(self, ticket: int) -> None: ...


class TablePaths(Protocol):
    """Where a game's files are (``serve.data.DataFolder``)."""

    def log_path(self, game: str) -> Path: ...

    def receipts_path(self, game: str, seat: int) -> Path: ...
