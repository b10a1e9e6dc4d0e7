"""Stand-ins for the serve modules other helpers build (the host, the journal, the
protocol), installed only while those modules are missing from the package, so that the
data folder, index, lobby and archive can be tested on their own. Once the real modules
are merged, ``install`` finds them and does nothing; ``RecordingHost`` stays, for the
tests of the context's wiring (``recording_host``)."""

from __future__ import annotations

import asyncio
import dataclasses
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


LOBBY_SCHEMA = "serve-lobby"
LOBBY_STATUS = {
    ServeCode.BAD_REQUEST: 400,
    ServeCode.BAD_KEY: 400,
    ServeCode.BAD_TOKEN: 403,
    ServeCode.NO_SUCH_TABLE: 404,
    ServeCode.NO_SUCH_SEAT: 404,
    ServeCode.SEAT_TAKEN: 409,
    ServeCode.TABLE_CLOSED: 409,
}


def lobby_error(code: ServeCode, message: str) -> dict[str, Any]:
    return {"error": {"code": str(code), "message": message}}


class SeatKind(enum.StrEnum):
    PERSON = "person"
    BOT = "bot"


@dataclass(frozen=True, kw_only=True)
class SeatSpec:
    kind: SeatKind
    name: str | None = None
    key: bytes | None = None
    bot: Any = None
    bot_key: Any = None

    @classmethod
    def bot_seat(cls, name: str, profile: Any, key: Any) -> SeatSpec:
        from racing_demon.log.keys import raw_public_bytes

        return cls(
            kind=SeatKind.BOT, name=name, key=raw_public_bytes(key), bot=profile, bot_key=key
        )


@dataclass(frozen=True, kw_only=True)
class TableSpec:
    game: str
    name: str
    rules: Any
    seats: tuple[SeatSpec, ...]
    secret: bytes


class RecordingHost:
    """A HostedTable as the context sees it, that plays nothing: it takes joins, runs until
    stopped, and remembers how it was made, so that the context's wiring can be tested
    without a journal or a clock (``recording_host``)."""

    def __init__(self, spec: Any, **wiring: Any) -> None:
        self.spec, self.wiring, self.game = spec, wiring, spec.game
        self.seats = list(spec.seats)
        self.stopped = asyncio.Event()

    def join(self, seat: int, name: str, key: bytes) -> None:
        self.seats[seat] = dataclasses.replace(self.seats[seat], name=name, key=key)

    async def run(self) -> None:
        await self.stopped.wait()

    async def stop(self) -> None:
        self.stopped.set()


def recording_host(monkeypatch: Any) -> None:
    """Have the context host its tables with ``RecordingHost``."""
    monkeypatch.setattr("racing_demon.serve.context.HostedTable", RecordingHost)


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


@dataclass(frozen=True)
class Recovery:
    lines_appended: int = 0
    torn_tails_cut: int = 0
    receipts_appended: int = 0
    segments_removed: int = 0


def recover_folder(folder: Any) -> Recovery:
    return Recovery()


def make_app(context: Any, extra_routes: Any = ()) -> Any:
    from aiohttp import web

    app = web.Application()
    for add_routes in extra_routes:
        add_routes(app)
    return app


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
        LOBBY_SCHEMA=LOBBY_SCHEMA,
        LOBBY_STATUS=LOBBY_STATUS,
    )
    _module("racing_demon.serve.journal", Journal=Journal, recover_folder=recover_folder)
    _module("racing_demon.serve.app", make_app=make_app)
    _module(
        "racing_demon.serve.host",
        HostedTable=RecordingHost,
        SeatKind=SeatKind,
        SeatSpec=SeatSpec,
        TableSpec=TableSpec,
    )
