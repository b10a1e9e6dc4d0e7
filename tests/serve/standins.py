"""Stand-ins for the serve modules other helpers build (the host, the journal, the
protocol), installed only while those modules are missing from the package, so that the
data folder, index, lobby and archive can be tested on their own. Once the real modules
are merged, ``install`` finds them and does nothing."""

from __future__ import annotations

import asyncio
import enum
import importlib
import sys
import types
from dataclasses import dataclass
from typing import Any


class ServeCode(enum.StrEnum):
    BAD_JSON = "BAD_JSON"
    NOT_OBJECT = "NOT_OBJECT"
    BAD_MESSAGE = "BAD_MESSAGE"
    TOO_LARGE = "TOO_LARGE"
    BAD_REQUEST = "BAD_REQUEST"
    NO_SUCH_TABLE = "NO_SUCH_TABLE"
    NO_SUCH_SEAT = "NO_SUCH_SEAT"
    SEAT_TAKEN = "SEAT_TAKEN"
    BAD_KEY = "BAD_KEY"
    BAD_TOKEN = "BAD_TOKEN"
    TABLE_CLOSED = "TABLE_CLOSED"


class ServeError(ValueError):
    def __init__(self, message: str, code: ServeCode, ref: str | None = None) -> None:
        super().__init__(message)
        self.message, self.code, self.ref = message, code, ref


def lobby_error(code: ServeCode, message: str) -> dict[str, Any]:
    return {"error": {"code": str(code), "message": message}}


@dataclass(frozen=True, kw_only=True)
class SeatSpec:
    seat: int
    kind: str
    name: str
    key: bytes
    bot: str | None
    bot_key: Any


@dataclass(frozen=True, kw_only=True)
class TableSpec:
    game: str
    name: str
    rules: Any
    dealer_secret: bytes
    seats: tuple[SeatSpec, ...]


class HostedTable:
    """Runs until stopped; remembers how it was made."""

    def __init__(self, spec: TableSpec, **wiring: Any) -> None:
        self.spec, self.wiring, self.game = spec, wiring, spec.game
        self.stopped = asyncio.Event()

    async def run(self) -> None:
        await self.stopped.wait()

    async def stop(self) -> None:
        self.stopped.set()


@dataclass(frozen=True)
class JournalStats:
    records: int = 0
    batches: int = 0
    bytes: int = 0


class Journal:
    def __init__(self, folder: Any, **options: Any) -> None:
        self.folder = folder
        self.started = self.closed = False

    async def start(self) -> None:
        self.started = True

    async def close(self) -> None:
        self.closed = True

    @property
    def stats(self) -> JournalStats:
        return JournalStats()


def recover_folder(folder: Any) -> None:
    pass


def make_app(context: Any) -> Any:
    from aiohttp import web

    return web.Application()


def _module(name: str, **members: Any) -> None:
    try:
        importlib.import_module(name)
    except ImportError:
        module = types.ModuleType(name, "a test stand-in (tests/serve/standins.py)")
        module.__dict__.update(members)
        sys.modules[name] = module


def install() -> None:
    _module(
        "racing_demon.serve.protocol",
        ServeCode=ServeCode,
        ServeError=ServeError,
        lobby_error=lobby_error,
    )
    _module("racing_demon.serve.journal", Journal=Journal, recover_folder=recover_folder)
    _module("racing_demon.serve.app", make_app=make_app)
    _module(
        "racing_demon.serve.host", HostedTable=HostedTable, SeatSpec=SeatSpec, TableSpec=TableSpec
    )
