"""What every route and table of a running server shares: ``ServerContext``.

The context owns the data folder, the index, the journal, the table's key and the live
tables (``HostedTable``, one per table that is starting, playing or accepting). The lobby
asks it to create tables and give seats; it starts a table once every seat is filled,
resumes the live ones when the server starts, records each table's state in the index
as the host reports it, and has each finished game archived (verified, then listed).

No web stack here: the lobby and the archive (aiohttp) call it; the archive's verifier
is handed in as ``archive`` so that this module stays below them.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.rules import Rules
from racing_demon.log.keys import generate_private_key, raw_public_bytes
from racing_demon.log.signing import check_public_key
from racing_demon.serve.data import DataFolder, is_game_id
from racing_demon.serve.host import HostedTable, SeatSpec, TableSpec
from racing_demon.serve.index import GameRow, Index, SeatRow, TableRow
from racing_demon.serve.journal import Journal
from racing_demon.serve.protocol import ServeCode, ServeError
from racing_demon.sim.simulate import NAMES

WAITING = "waiting"
STARTING = "starting"
# The states of a table whose HostedTable runs; a restart resumes them.
LIVE_STATES = ("starting", "playing", "accepting")
OPEN_STATES = (WAITING, *LIVE_STATES)  # what the lobby lists
PERSON = "person"
BOT = "bot"

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

    # -- the lobby

    def create_table(self, request: NewTable) -> TableRow:
        """Store a new table (its dealer secret and its bots' keys on disk before anything
        is published), and start it at once when every seat is a bot's."""
        if len(self.index.tables_in(OPEN_STATES)) >= self.settings.max_open_tables:
            raise ServeError(
                f"the server holds {self.settings.max_open_tables} open tables already: "
                "join one, or try again later",
                ServeCode.TABLE_CLOSED,
            )
        game = secrets.token_hex(16)
        bots_only = all(seat.kind == BOT for seat in request.seats)
        table = TableRow(
            game=game,
            name=request.name,
            profile=request.rules.name,
            rules=json.dumps(request.rules.to_document(), sort_keys=True),
            state=STARTING if bots_only else WAITING,
            secret=secrets.token_bytes(32).hex(),
            created=time.time(),
        )
        self.index.add_table(
            table, [_new_seat(game, seat, asked) for seat, asked in enumerate(request.seats)]
        )
        if bots_only:
            self.start_table(game)
        return table

    def join(self, game: str, seat: int, name: str, key_hex: str) -> str:
        """Give seat ``seat`` of ``game`` to the player ``name`` whose Ed25519 public key is
        ``key_hex``; return the seat's token (kept hashed: shown this once). The table
        starts when this filled its last seat. ServeError with the reason otherwise."""
        table = self.open_table(game)
        seats = self.index.seats(game)
        if not 0 <= seat < len(seats):
            raise ServeError(
                f"table {game} has seats 0 to {len(seats) - 1}, not {seat}",
                ServeCode.NO_SUCH_SEAT,
            )
        if table.state != WAITING:
            raise ServeError(
                f"table {game} is {table.state}: its seats are filled", ServeCode.TABLE_CLOSED
            )
        if seats[seat].kind == BOT:
            raise ServeError(f"seat {seat} of table {game} is a bot's", ServeCode.SEAT_TAKEN)
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
        if all(row.taken for row in self.index.seats(game)):
            self.index.set_state(game, STARTING)
            self.start_table(game)
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

    def start_table(self, game: str) -> HostedTable:
        """Start (or, when its log exists, resume) the HostedTable of ``game``, whose seats
        are all filled, as a task of the running loop."""
        table = self.open_table(game)
        seats = self.index.seats(game)
        hosted = HostedTable(
            _spec(table, seats),
            folder=self.folder,
            journal=self.journal,
            table_key=self.table_key,
            resume=self.folder.log_path(game).exists(),
            on_state=self.table_state,
            on_finished=self.table_finished,
        )
        self.tables[game] = hosted
        task = asyncio.get_running_loop().create_task(self._run(hosted), name=f"table {game}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return hosted

    def resume_tables(self) -> int:
        """Start every table the index says was live when the server stopped; how many
        did. One that cannot (its log refused by ``Table.resume``, say) is named in a
        warning and left as it is, for its operator to look at."""
        resumed = 0
        for table in self.index.tables_in(LIVE_STATES):
            try:
                self.start_table(table.game)
            except Exception as error:  # the others still resume; this one stays listed
                self._warn(f"table {table.game} cannot resume: {type(error).__name__}: {error}")
            else:
                resumed += 1
        return resumed

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

    async def stop(self) -> None:
        """Stop every live table (timers and bots; nothing half-written), then their tasks."""
        for hosted in list(self.tables.values()):
            try:
                await hosted.stop()
            except Exception as error:
                self._warn(f"table {hosted.game} did not stop cleanly: {error}")
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.tables.clear()  # a task cancelled before it ran never cleared its entry


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
    """The raw public key ``key_hex`` names (64 hex, a usable Ed25519 point), else BAD_KEY."""
    try:
        if len(key_hex) != 64:
            raise ValueError
        key = bytes.fromhex(key_hex)
    except ValueError:
        raise ServeError(
            "key: give the raw Ed25519 public key as 64 hex characters", ServeCode.BAD_KEY
        ) from None
    problem = check_public_key(key)
    if problem is not None:
        raise ServeError(f"key: {problem.message}", ServeCode.BAD_KEY)
    return key


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _spec(table: TableRow, seats: Sequence[SeatRow]) -> TableSpec:
    """The host's description of a table whose seats are all filled."""
    return TableSpec(
        game=table.game,
        name=table.name,
        rules=Rules.from_document(json.loads(table.rules)),
        dealer_secret=bytes.fromhex(table.secret),
        seats=tuple(
            SeatSpec(
                seat=row.seat,
                kind=row.kind,
                name=row.name or "",
                key=bytes.fromhex(row.public_key or ""),
                bot=row.bot,
                bot_key=None
                if row.bot_private_key is None
                else Ed25519PrivateKey.from_private_bytes(bytes.fromhex(row.bot_private_key)),
            )
            for row in seats
        ),
    )
