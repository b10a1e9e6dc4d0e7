"""What every route and table of a running server shares: ``ServerContext``.

The context owns the data folder, the index, the journal, the table's key and the open
tables (``HostedTable``, one per table from its creation until it is finished or
cancelled). The lobby asks it to create tables and give seats (the index first, then the
host, which starts the table once every seat is filled); at the server's start it hosts
every open table again (waiting ones wait, live ones resume); it records each table's
state in the index as the host reports it, and has each finished game archived
(verified, then listed).

No web stack here: the lobby and the archive (aiohttp) call it; the archive's verifier
is handed in as ``archive`` so that this module stays below them.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import re
import secrets
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.rules import Rules
from racing_demon.log.keys import generate_private_key, raw_public_bytes
from racing_demon.log.signing import check_public_key
from racing_demon.serve.data import DataFolder, is_game_id
from racing_demon.serve.host import HostedTable, SeatKind, SeatSpec, TableSpec
from racing_demon.serve.index import GameRow, Index, SeatRow, TableRow
from racing_demon.serve.journal import Journal
from racing_demon.serve.notes import LastStop, Notes, mark_stopped
from racing_demon.serve.protocol import ServeCode, ServeError
from racing_demon.serve.round_trips import DEFAULT_MAX_RTT_MS, RoundTrips
from racing_demon.sim.bots import BOTS
from racing_demon.sim.simulate import NAMES

WAITING = "waiting"
# The states of a table whose HostedTable runs; a restart resumes them.
LIVE_STATES = ("starting", "playing", "accepting")
OPEN_STATES = (WAITING, *LIVE_STATES)  # what the lobby lists
PERSON = "person"
BOT = "bot"

HEX_KEY = re.compile(r"[0-9a-f]{64}")  # a raw Ed25519 public key, as a join gives it

Archive = Callable[["ServerContext", str], Awaitable[GameRow]]
Warn = Callable[[str], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeSettings:
    """How many tables may be open at once (waiting or live): a bound on what a lobby
    client can make the server hold."""

    max_open_tables: int = 500


@dataclass(frozen=True, slots=True)
class SeatRequest:
    """A seat asked for at a new table: a person's, or a bot of ``bot`` speed."""

    kind: str  # PERSON or BOT
    bot: str | None = None


@dataclass(frozen=True, slots=True)
class NewTable:
    """A table the lobby was asked for, its request checked (``serve.lobby``)."""

    name: str
    rules: Rules
    seats: tuple[SeatRequest, ...]
    max_rtt_ms: int = DEFAULT_MAX_RTT_MS  # the lobby warns of a seat's round trip above it


class ServerContext:
    """The running server's shared state (module docs)."""

    def __init__(
        self,
        *,
        folder: DataFolder,
        index: Index,
        journal: Journal,
        table_key: Ed25519PrivateKey,
        archive: Archive,
        settings: ServeSettings | None = None,
        warn: Warn = lambda message: None,
        last_stop: LastStop | None = None,
    ) -> None:
        self.folder = folder
        self.index = index
        self.journal = journal
        self.table_key = table_key
        self.table_public_key = raw_public_bytes(table_key)
        self.settings = settings or ServeSettings()
        self.tables: dict[str, HostedTable] = {}
        self._archive = archive
        self._warn = warn
        self._tasks: set[asyncio.Task[None]] = set()
        self._stops_at: float | None = None  # a planned stop's time (time.monotonic)
        self.round_trips = RoundTrips()  # each seat's, measured by the play connections
        # What the tables log beside their matches; ``last_stop``: what the start found
        # (serve.notes.take_last_stop), none by default: every resumed table's a crash.
        self.notes = Notes(self.round_trips, last_stop or LastStop())

    # -- a planned stop

    def drain(self, seconds: int) -> None:
        """A planned stop in ``seconds``: from now the lobby makes no table and gives no
        seat (SERVER_STOPPING), and the tables play on until ``stop``."""
        self._stops_at = time.monotonic() + seconds

    @property
    def stopping_in_ms(self) -> int | None:
        """The milliseconds left before a planned stop; None while none is planned."""
        if self._stops_at is None:
            return None
        return max(0, round((self._stops_at - time.monotonic()) * 1000))

    def _refuse_while_stopping(self) -> None:
        left_ms = self.stopping_in_ms
        if left_ms is not None:
            when = f"stops in {left_ms / 1000:.0f} s" if left_ms >= 500 else "is stopping"
            raise ServeError(
                f"the server {when}: try again when it is back", ServeCode.SERVER_STOPPING
            )

    # -- the lobby

    def create_table(self, request: NewTable) -> TableRow:
        """Store a new table (its dealer secret and its bots' keys on disk before anything
        is published) and host it: it waits for its people, and starts at once when
        every seat is a bot's."""
        self._refuse_while_stopping()
        if len(self.index.tables_in(OPEN_STATES)) >= self.settings.max_open_tables:
            raise ServeError(
                f"the server holds {self.settings.max_open_tables} open tables already: "
                "join one, or try again later",
                ServeCode.TABLE_CLOSED,
            )
        game = secrets.token_hex(16)
        table = TableRow(
            game=game,
            name=request.name,
            profile=request.rules.name,
            rules=json.dumps(request.rules.to_document(), sort_keys=True),
            state=WAITING,
            secret=secrets.token_bytes(32).hex(),
            created=time.time(),
            max_rtt_ms=request.max_rtt_ms,
        )
        self.index.add_table(
            table, [_new_seat(game, seat, asked) for seat, asked in enumerate(request.seats)]
        )
        self.host_table(game)
        return table

    def join(self, game: str, seat: int, name: str, key_hex: str) -> str:
        """Give seat ``seat`` of ``game`` to the player ``name`` whose Ed25519 public key is
        ``key_hex``; return the seat's token (kept hashed: shown this once). The table
        starts when this filled its last seat. ServeError with the reason otherwise."""
        self._refuse_while_stopping()
        table = self.open_table(game)
        seats = self.index.seats(game)
        if not 0 <= seat < len(seats):
            raise ServeError(
                f"table {game} has seats 0 to {len(seats) - 1}, not {seat}",
                ServeCode.NO_SUCH_SEAT,
            )
        hosted = self.tables.get(game)
        if table.state != WAITING or hosted is None:
            raise ServeError(
                f"table {game} is {table.state}: its seats are filled", ServeCode.TABLE_CLOSED
            )
        if seats[seat].kind == BOT:
            raise ServeError(f"seat {seat} of table {game} is a bot's", ServeCode.NO_SUCH_SEAT)
        key = _checked_key(key_hex)
        for other in seats:
            if other.public_key == key.hex():
                raise ServeError(
                    f"seat {other.seat} of table {game} has this key already: each seat "
                    "signs with its own",
                    ServeCode.BAD_KEY,
                )
        token = secrets.token_hex(32)
        taken = self.index.take_seat(
            game, seat, name=name, public_key=key.hex(), token_sha256=_digest(token)
        )
        if not taken:
            raise ServeError(f"seat {seat} of table {game} is taken", ServeCode.SEAT_TAKEN)
        hosted.join(seat, name, key)  # on disk first: the seat survives a restart
        return token

    def open_table(self, game: str) -> TableRow:
        """The table ``game`` as the index holds it; NO_SUCH_TABLE if there is none."""
        table = self.index.table(game) if is_game_id(game) else None
        if table is None:
            raise ServeError(f"no table {game[:40]!r}", ServeCode.NO_SUCH_TABLE)
        return table

    def seat_token_ok(self, game: str, seat: int, token: str) -> bool:
        """Whether ``token`` is the one the join of seat ``seat`` of ``game`` handed out
        (compared in constant time)."""
        if not is_game_id(game) or len(token) > 128:
            return False
        for row in self.index.seats(game):
            if row.seat == seat and row.token_sha256 is not None:
                return hmac.compare_digest(row.token_sha256, _digest(token))
        return False

    # -- the tables

    def host_table(self, game: str) -> HostedTable:
        """Host the table ``game`` as the index holds it, as a task of the running loop:
        it waits for free seats, starts, resumes from its log, or hands a finished log
        to the archive, as its state and files say (``HostedTable.run``)."""
        table = self.open_table(game)
        hosted = HostedTable(
            _spec(table, self.index.seats(game)),
            table_key=self.table_key,
            journal=self.journal,
            paths=self.folder,
            on_state=self.table_state,
            on_finished=self.table_finished,
            notes=self.notes,
        )
        self.tables[game] = hosted
        self._spawn(self._run(hosted), f"table {game}")
        return hosted

    def open_tables(self) -> int:
        """At the start: host every table the index holds open (waiting ones wait again,
        live ones resume), and archive any finished game the archive did not list before
        the server stopped. How many live tables resumed. A table that cannot be hosted
        is named in a warning and left as it is, for its operator to look at. Each live
        table logs how long it was down and why (``serve.notes``)."""
        resumed = 0
        for table in self.index.tables_in(OPEN_STATES):
            try:
                self.host_table(table.game)
            except Exception as error:  # the others still open
                self._warn(f"table {table.game} cannot resume: {type(error).__name__}: {error}")
            else:
                resumed += table.state in LIVE_STATES
        for game in self.index.unarchived():
            self._spawn(self._archived(game), f"archive {game}")
        return resumed

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _archived(self, game: str) -> None:
        try:
            await self._archive(self, game)
        except Exception as error:
            self._warn(f"game {game} was not archived: {type(error).__name__}: {error}")

    def table_state(self, game: str, state: str) -> None:
        """The host's report of a table's new state, kept in the index."""
        self.index.set_state(game, state)

    async def table_finished(self, game: str) -> str:
        """The host's report that ``game`` wrote its final record: verify and list it;
        the verdict, for the seats' ``ended`` message."""
        row = await self._archive(self, game)
        return row.verdict

    async def _run(self, hosted: HostedTable) -> None:
        try:
            await hosted.run()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # one table's fault must not end the server
            self._warn(f"table {hosted.game} stopped: {type(error).__name__}: {error}")
        finally:
            if self.tables.get(hosted.game) is hosted:
                del self.tables[hosted.game]
                self.round_trips.forget(hosted.game)

    async def stop(self, *, clean: bool = False) -> None:
        """Stop every live table (timers and bots; nothing half-written), all at once: each
        may wait seconds for its last records to be durable. Then their tasks. A stop the
        caller calls ``clean`` (asked by a signal, the journal sound) is marked in the data
        folder with the tables that stopped cleanly (``serve.notes``). From the first call
        the lobby makes no table and gives no seat."""
        self.drain(0)
        hosted = list(self.tables.values())
        stopped = await asyncio.gather(*(self._stop_table(table) for table in hosted))
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.tables.clear()  # a task cancelled before it ran never cleared its entry
        if not clean:
            return
        games = [table.game for table, done in zip(hosted, stopped, strict=True) if done]
        try:  # those tables log a planned pause as they resume
            mark_stopped(self.folder.stopped_path, games)
        except OSError as error:
            self._warn(f"the clean stop was not marked (the next start logs a crash): {error}")

    async def _stop_table(self, hosted: HostedTable) -> bool:
        """Whether ``hosted`` stopped cleanly."""
        try:
            await hosted.stop()
        except Exception as error:
            self._warn(f"table {hosted.game} did not stop cleanly: {error}")
            return False
        return True


def _new_seat(game: str, seat: int, asked: SeatRequest) -> SeatRow:
    if asked.kind == PERSON:
        return SeatRow(game, seat, PERSON, None, None, None, None, None)
    key = generate_private_key()
    return SeatRow(
        game=game,
        seat=seat,
        kind=BOT,
        bot=asked.bot,
        name=f"{NAMES[seat % len(NAMES)]} ({asked.bot})",
        public_key=raw_public_bytes(key).hex(),
        bot_private_key=key.private_bytes_raw().hex(),
        token_sha256=None,
    )


def _checked_key(key_hex: str) -> bytes:
    """The raw public key ``key_hex`` names (64 lowercase hex, a usable Ed25519 point,
    not one of small order), else BAD_KEY."""
    if not HEX_KEY.fullmatch(key_hex):
        raise ServeError(
            "key: give the raw Ed25519 public key as 64 lowercase hex", ServeCode.BAD_KEY
        )
    key = bytes.fromhex(key_hex)
    problem = check_public_key(key)
    if problem is not None:
        raise ServeError(f"key: {problem.message}", ServeCode.BAD_KEY)
    return key


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _spec(table: TableRow, seats: Sequence[SeatRow]) -> TableSpec:
    """The host's description of a table as the index holds it."""
    return TableSpec(
        game=table.game,
        name=table.name,
        rules=Rules.from_document(json.loads(table.rules)),
        seats=tuple(_seat_spec(row) for row in seats),
        secret=bytes.fromhex(table.secret),
    )


def _seat_spec(row: SeatRow) -> SeatSpec:
    if row.bot is not None and row.bot_private_key is not None:
        key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(row.bot_private_key))
        return SeatSpec.bot_seat(row.name or "", BOTS[row.bot], key)
    if row.public_key is None:
        return SeatSpec(kind=SeatKind.PERSON)
    return SeatSpec(kind=SeatKind.PERSON, name=row.name, key=bytes.fromhex(row.public_key))
