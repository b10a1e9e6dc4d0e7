"""One live table on the event loop: its seats, its match, and what it sends whom.

A ``HostedTable`` plays one game (docs/deal-spec.md, "Order of play", live). Its life:
*waiting* (seats filling) → *starting* (each seat's entropy, then its co-signature of the
genesis, asked over the network; a bot's signed at once with the key the server keeps) →
*playing* → *accepting* (the held final record's body sent, acceptances gathered for at
most 15 s) → *finished* (the archive verifies it) — or *cancelled* (a seat did not sign
within 60 s while starting: nothing written).

``Table`` is synchronous, so every call on it runs on the loop, one at a time. Every line
it writes is journaled at once (``on_line``) and every receipt too; a per-table outbox
awaits the journal's ``durable`` for each, in order, and only then sends each ``record``
to every attached peer and each ``receipt`` to its seat: nothing reaches a client before
it is on disk. Bots submit through the same path as people; a timer wakes the table at
its next deadline (``Table.deadline``). A table's clock is milliseconds since it started
(``time.monotonic``); a resumed table's continues from its last record's time.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO, Final, Protocol

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.deal import SECRET_BYTES, commitment
from racing_demon.game.flow import RecordKind, Seen
from racing_demon.game.rules import Rules
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.records import ACCEPT, ENTROPY, FORMAT_VERSION, entropy_statement
from racing_demon.log.signing import sign, verify
from racing_demon.serve import protocol
from racing_demon.serve.bot_seat import play_bot
from racing_demon.serve.protocol import ClientSubmit, ServeCode, ServeError
from racing_demon.sim.bots import BotProfile
from racing_demon.sim.simulate import BACKS
from racing_demon.table import PlayerInfo, PlayerSigner, ResumeError, SubmissionError, Table
from racing_demon.verify import Settings, Verdict, verify_log

START_TIMEOUT_S: Final = 60.0  # each of the two rounds of signatures before the genesis
ACCEPT_TIMEOUT_S: Final = 15.0
DRAIN_TIMEOUT_S: Final = 5.0  # stopping: how long queued records may wait for the journal
_GAME = re.compile(r"[0-9a-f]{32}")
_GENESIS: Final = RecordKind.GENESIS.value
_LOG = logging.getLogger(__name__)


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


@dataclass(frozen=True, slots=True, kw_only=True)
class TableSpec:
    """What the server keeps of a table (its index), and the host needs to play it."""

    game: str
    name: str
    rules: Rules
    seats: tuple[SeatSpec, ...]
    secret: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if not _GAME.fullmatch(self.game):
            raise ValueError(f"{self.game!r} is not a game id (32 lowercase hex)")
        if not self.rules.min_players <= len(self.seats) <= self.rules.max_players:
            raise ValueError(f"the {self.rules.name} rules do not seat {len(self.seats)}")
        if len(self.secret) != SECRET_BYTES:
            raise ValueError(f"the dealer secret is {SECRET_BYTES} bytes")


class Peer(Protocol):
    """A connection, as the host sees it: ``send`` never blocks (the app queues)."""

    @property
    def seat(self) -> int | None: ...  # None: a spectator

    def send(self, message: Mapping[str, object]) -> None: ...

    def send_all(self, messages: Sequence[Mapping[str, object]]) -> None:
        """Several messages at once (a catch-up): one entry of the peer's bounded queue."""


class TableJournal(Protocol):
    """The journal as a table uses it (``serve.journal.Journal``)."""

    def log_line(self, game: str, line: bytes) -> int: ...

    def receipt(self, game: str, seat: int, line: bytes) -> int: ...

    async def durable(self, ticket: int) -> None: ...


class TablePaths(Protocol):
    """Where a game's files are (``serve.data.DataFolder``)."""

    def log_path(self, game: str) -> Path: ...

    def receipts_path(self, game: str, seat: int) -> Path: ...


@dataclass(slots=True)
class _Delivery:
    ticket: int
    deliver: Callable[[], None]
    done: asyncio.Future[None] | None = None  # a submission waits on its receipt's


class _Request:
    """What the table asks every seat to sign now (entropy, co-signature, acceptance)."""

    def __init__(
        self, kind: str, signed: Sequence[bytes], message: Callable[[int], dict[str, Any]]
    ) -> None:
        self.kind = kind
        self.signed = signed  # each seat's bytes to sign
        self.message = message  # the message that asks a seat
        self.answers: list[str | None] = [None] * len(signed)
        self.answered = [False] * len(signed)
        self.came = asyncio.Event()

    def answer(self, seat: int, signature: str | None) -> None:
        self.answers[seat], self.answered[seat] = signature, True
        self.came.set()


class HostedTable:
    """One game on the event loop (the module's docstring). ``run`` is its task."""

    def __init__(
        self,
        spec: TableSpec,
        *,
        table_key: Ed25519PrivateKey,
        journal: TableJournal,
        paths: TablePaths,
        on_state: Callable[[str, TableState], None],
        on_finished: Callable[[str], Awaitable[str]],
    ) -> None:
        self.game = spec.game
        self._spec = spec
        self._seats = list(spec.seats)
        self._key = table_key
        self._journal = journal
        self._paths = paths
        self._on_state = on_state
        self._on_finished = on_finished  # archives and verifies: the verdict
        self._state = TableState.WAITING
        self._table: Table | None = None
        self._peers: dict[Peer, int] = {}  # each peer: the first seq it asked for
        self._outbox: asyncio.Queue[_Delivery] = asyncio.Queue()
        self._delivered = 0  # records sent: the seq the outbox sends next
        self._request: _Request | None = None
        self._signed: dict[str, list[str | None]] = {}  # what the signers answer, by kind
        self._receipt_files: list[BinaryIO] = []
        self._filled = asyncio.Event()
        self._changed = asyncio.Event()  # wakes the timer: a deadline may have moved
        self._played_out = asyncio.Event()
        self._helpers: list[asyncio.Task[None]] = []
        self._life: asyncio.Task[None] | None = None
        self._sender: asyncio.Task[None] | None = None
        self._base_ms = self._last_ms = 0
        self._started_at = 0.0
        self._frozen = False  # once played out, the table's clock stops
        self._verdict: str | None = None
        self._failure: BaseException | None = None
        self._closing: asyncio.Task[None] | None = None
        if all(seat.taken for seat in self._seats):
            self._filled.set()

    # -- the server's side --------------------------------------------------------------

    @property
    def state(self) -> TableState:
        return self._state

    @property
    def seat_count(self) -> int:
        return len(self._seats)

    def join(self, seat: int, name: str, key: bytes) -> None:
        """A person takes a free seat (the lobby's join); the table starts once every seat
        is taken. ServeError: TABLE_CLOSED, NO_SUCH_SEAT, SEAT_TAKEN, BAD_KEY."""
        if self._state is not TableState.WAITING:
            raise ServeError(
                f"the table is {self._state}: its seats are taken", ServeCode.TABLE_CLOSED
            )
        if not 0 <= seat < len(self._seats):
            raise ServeError(f"there is no seat {seat}", ServeCode.NO_SUCH_SEAT)
        if self._seats[seat].taken:
            raise ServeError(f"seat {seat} is taken", ServeCode.SEAT_TAKEN)
        if len(key) != 32:
            raise ServeError("a key is a raw 32-byte Ed25519 public key", ServeCode.BAD_KEY)
        self._seats[seat] = replace(self._seats[seat], name=name, key=key)
        if all(seat.taken for seat in self._seats):
            self._filled.set()

    def welcome(self, seat: int | None) -> dict[str, Any]:
        """The first message of a connection (``seat`` None: a spectator's)."""
        return protocol.welcome(
            game=self.game,
            seat=seat,
            table_key=raw_public_bytes(self._key.public_key()).hex(),
            seats=[
                {
                    "seat": number,
                    "name": entry.name,
                    "kind": entry.kind.value,
                    "key": None if entry.key is None else entry.key.hex(),
                }
                for number, entry in enumerate(self._seats)
            ],
            rules=self._spec.rules.to_document(),
            state=self._state.value,
        )

    async def run(self) -> None:
        """The table's task: until it is finished, cancelled, or stopped (``stop``)."""
        self._sender = asyncio.create_task(self._send_durable())
        self._life = asyncio.create_task(self._live())
        try:
            await asyncio.wait([self._life])
        finally:
            if not self._life.done():
                self._life.cancel()
            await self._close()
        if self._failure is not None:
            raise self._failure
        if not self._life.cancelled() and (error := self._life.exception()) is not None:
            raise error

    async def stop(self) -> None:
        """The server stops: bots and timers stop between two table calls (nothing is
        half-written), what is queued is sent once durable, and the files are closed. The
        table resumes from its log on the next start."""
        for peer in list(self._peers):
            peer.send(protocol.error_message(ServeCode.SERVER_STOPPING, "the server is stopping"))
        if self._life is not None and not self._life.done():
            self._life.cancel()
            await asyncio.wait([self._life])
        await self._close()

    # -- a connection's side ------------------------------------------------------------

    def attach(self, peer: Peer, from_seq: int) -> None:
        """Send ``peer`` every durable record from ``from_seq`` (read from the log file),
        then the live ones, and what its seat is asked now."""
        self._peers[peer] = from_seq
        if from_seq < self._delivered:
            lines = self._paths.log_path(self.game).read_bytes().split(b"\n")
            peer.send_all([protocol.record(line) for line in lines[from_seq : self._delivered]])
        seat = peer.seat
        if seat is not None:
            if sum(other.seat == seat for other in self._peers) == 1:
                self._broadcast(protocol.seat(seat=seat, connected=True), but=peer)
            request = self._request
            if request is not None and not request.answered[seat]:
                peer.send(request.message(seat))
        if self._verdict is not None:
            peer.send(self._ended(seat))

    def detach(self, peer: Peer) -> None:
        if self._peers.pop(peer, None) is None:
            return
        seat = peer.seat
        if seat is not None and not any(other.seat == seat for other in self._peers):
            self._broadcast(protocol.seat(seat=seat, connected=False))

    def entropy(self, seat: int, signature: str) -> None:
        """Seat ``seat``'s entropy: its signature of the commitment statement it was sent.
        ServeError NOT_ASKED (not asked now, or answered), BAD_SIGNATURE."""
        self._answer(ENTROPY, seat, signature)

    def cosign(self, seat: int, signature: str) -> None:
        """Seat ``seat``'s co-signature of the genesis body it was sent."""
        self._answer(_GENESIS, seat, signature)

    def accept(self, seat: int, signature: str | None) -> None:
        """Seat ``seat``'s acceptance of the final body it was sent; None declines."""
        self._answer(ACCEPT, seat, signature)

    async def submit(self, seat: int, submission: ClientSubmit) -> None:
        """Seat ``seat``'s move: returns once its receipt (accepted, bounced or refused) is
        durable and sent to the seat. ServeError NOT_ASKED before the match is dealt,
        TABLE_CLOSED once it is over; SubmissionError for a refusal no receipt can hold."""
        if self._table is None:
            raise ServeError("the match is not dealt yet", ServeCode.NOT_ASKED, submission.ref)
        await self._take(
            seat,
            submission.ref,
            submission.n,
            submission.move,
            submission.seen,
            submission.signature,
        )

    # -- the life of the table ----------------------------------------------------------

    async def _live(self) -> None:
        try:
            await self._filled.wait()
            if not self._paths.log_path(self.game).exists():
                if not await self._start():
                    return
            elif not self._resume():
                await self._finish()  # the server stopped before the archive had it
                return
            table = self._table
            assert table is not None
            if not table.played_out:
                self._set_state(TableState.PLAYING)
                self._helpers = [asyncio.create_task(self._timer())]
                for seat, entry in enumerate(self._seats):
                    if entry.bot is not None and entry.bot_key is not None:
                        bot = play_bot(
                            table, seat, entry.bot, entry.bot_key, self._now_ms, self._bot(seat)
                        )
                        self._helpers.append(asyncio.create_task(self._guarded(bot)))
                await self._played_out.wait()
                await self._stop_helpers()
            if not table.finished:
                await self._accept(table)
            await self._outbox.join()  # the final record is durable and sent
            await self._finish()
        finally:
            await self._stop_helpers()

    async def _finish(self) -> None:
        self._set_state(TableState.FINISHED)
        self._verdict = await self._on_finished(self.game)
        for peer in list(self._peers):
            peer.send(self._ended(peer.seat))

    async def _start(self) -> bool:
        """Gather every seat's entropy, then its co-signature, and create the table; False
        (cancelled, nothing written) if a seat does not answer in time."""
        self._set_state(TableState.STARTING)
        seats, spec = len(self._seats), self._spec
        promise = commitment(spec.secret)
        statements = [
            canonical_bytes(entropy_statement(self.game, seat, promise)) for seat in range(seats)
        ]
        entropy = await self._ask(
            ENTROPY,
            statements,
            lambda seat: protocol.commitment(
                game=self.game, commitment=promise, statement=statements[seat]
            ),
            START_TIMEOUT_S,
        )
        if entropy is None:
            return False
        players = self._players()
        body = Table.genesis_body(
            spec.rules,
            players,
            self._key,
            spec.secret,
            [bytes.fromhex(signature or "") for signature in entropy],
            self.game,
        )
        cosigned = await self._ask(
            _GENESIS, [body] * seats, lambda seat: protocol.genesis(body), START_TIMEOUT_S
        )
        if cosigned is None:
            return False
        self._signed = {ENTROPY: entropy, _GENESIS: cosigned}
        self._start_clock(0)
        self._table = Table.create(
            self._paths.log_path(self.game),
            spec.rules,
            players,
            self._key,
            spec.secret,
            None,
            player_signers=self._signers(),
            game_id=self.game,
            durable=False,  # the journal makes each line durable
            on_line=self._on_line,
            hold_final=True,
        )
        self._open_receipts()
        return True

    def _resume(self) -> bool:
        """Continue the table from its log after a restart; False for a log whose final
        record is written."""
        path = self._paths.log_path(self.game)
        try:
            table = Table.resume(
                path,
                self._key,
                self._spec.secret,
                player_signers=self._signers(),
                durable=False,
                on_line=self._on_line,
                hold_final=True,
            )
        except ResumeError:
            settings = Settings(table_key=raw_public_bytes(self._key.public_key()))
            if verify_log(path, settings).verdict is not Verdict.VERIFIED:
                raise
            self._delivered = path.read_bytes().count(b"\n")
            self._table = None
            return False
        self._table = table
        # Records the resume wrote are queued; every one before them is durable already
        # (the journal's recovery ran before any table resumed).
        self._delivered = table.records - self._outbox.qsize()
        self._start_clock(table.t_ms)
        self._open_receipts()
        if table.played_out:
            self._played_out.set()
        return True

    async def _accept(self, table: Table) -> None:
        """Ask every seat to accept the held final record, then write it."""
        self._set_state(TableState.ACCEPTING)
        self._frozen = True  # the final record's time: submissions now are refused at it
        await self._outbox.join()  # the seats hold every record the final body follows
        body = table.final_body()
        accepts = await self._ask(
            ACCEPT,
            [body] * len(self._seats),
            lambda seat: protocol.final(body),
            ACCEPT_TIMEOUT_S,
            complete=False,
        )
        assert accepts is not None  # a seat that does not answer declines
        self._signed[ACCEPT] = accepts
        table.reveal()

    async def _ask(
        self,
        kind: str,
        signed: Sequence[bytes],
        message: Callable[[int], dict[str, Any]],
        timeout_s: float,
        *,
        complete: bool = True,
    ) -> list[str | None] | None:
        """Every seat's signature of its ``signed`` bytes: bots' at once, people's as they
        come, for at most ``timeout_s``. None (the table cancelled) if one is missing
        and ``complete``; else a missing one is None."""
        request = _Request(kind, signed, message)
        self._request = request
        for seat, entry in enumerate(self._seats):
            if entry.bot_key is not None:
                request.answer(seat, sign(entry.bot_key, kind, signed[seat], FORMAT_VERSION))
            else:
                self._send_to_seat(seat, message(seat))
        try:
            async with asyncio.timeout(timeout_s):
                while not all(request.answered):
                    await request.came.wait()
                    request.came.clear()
        except TimeoutError:
            if complete:
                missing = [seat for seat, done in enumerate(request.answered) if not done]
                self._cancel(f"seat {missing[0]} did not sign its {kind} in time")
                return None
        finally:
            self._request = None
        return request.answers

    def _answer(self, kind: str, seat: int, signature: str | None) -> None:
        request = self._request
        if request is None or request.kind != kind or request.answered[seat]:
            raise ServeError(
                f"the table does not ask seat {seat} for its {kind} now", ServeCode.NOT_ASKED
            )
        if signature is not None:
            key = self._seats[seat].key
            assert key is not None  # every seat is taken before anything is asked
            problem = verify(key, kind, request.signed[seat], signature, FORMAT_VERSION)
            if problem is not None:
                raise ServeError(
                    f"seat {seat}'s {kind} signature does not verify: {problem}",
                    ServeCode.BAD_SIGNATURE,
                )
        request.answer(seat, signature)

    def _cancel(self, why: str) -> None:
        self._set_state(TableState.CANCELLED)
        self._broadcast(protocol.error_message(ServeCode.TABLE_CLOSED, f"cancelled: {why}"))

    # -- play -----------------------------------------------------------------------------

    def _bot(self, seat: int) -> Callable[[int, str, Seen, str], Awaitable[None]]:
        async def submit(n: int, move: str, seen: Seen, signature: str) -> None:
            await self._take(seat, None, n, move, seen, signature)

        return submit

    def _take(
        self, seat: int, ref: str | None, n: int, move: str, seen: Seen, signature: str
    ) -> asyncio.Future[None]:
        """One submission through the table, its receipt journaled and queued: the future
        is done once the receipt is sent."""
        table = self._table
        if table is None or self._state in (TableState.FINISHED, TableState.CANCELLED):
            raise ServeError("the match is over", ServeCode.TABLE_CLOSED, ref)
        if self._failure is not None:
            raise ServeError("the table stopped", ServeCode.SERVER_STOPPING, ref)
        try:
            receipt = table.submit(seat, move, self._now_ms(), n, signature, seen).receipt
        except SubmissionError as refusal:
            if refusal.receipt is None:
                raise
            receipt = refusal.receipt
        self._changed.set()
        if table.played_out:
            self._played_out.set()
        file = self._receipt_files[seat]
        file.write(receipt + b"\n")
        file.flush()
        done = asyncio.get_running_loop().create_future()

        def deliver() -> None:
            if ref is not None:
                self._send_to_seat(seat, protocol.receipt(ref=ref, receipt=receipt))

        self._queue(lambda: self._journal.receipt(self.game, seat, receipt), deliver, done)
        return done

    def _on_line(self, line: bytes) -> None:
        """Every line the table writes: journaled at once, sent once durable."""

        def deliver() -> None:
            seq = self._delivered
            self._delivered += 1
            message = protocol.record(line)
            for peer, first in list(self._peers.items()):
                if first <= seq:
                    peer.send(message)

        self._queue(lambda: self._journal.log_line(self.game, line), deliver)

    def _queue(
        self,
        journal: Callable[[], int],
        deliver: Callable[[], None],
        done: asyncio.Future[None] | None = None,
    ) -> None:
        """Journal a line now; deliver what names it once it is durable."""
        try:
            ticket = journal()
        except Exception as error:  # a failed or closed journal: nothing is acknowledged
            self._fail(error)
            if done is not None:
                done.set_exception(ServeError("the table stopped", ServeCode.SERVER_STOPPING))
            return
        self._outbox.put_nowait(_Delivery(ticket, deliver, done))

    async def _send_durable(self) -> None:
        """The outbox: each delivery once its ticket is durable, in order. If the journal
        fails, nothing more is sent, and the table stops."""
        while True:
            delivery = await self._outbox.get()
            try:
                if self._failure is None:
                    await self._journal.durable(delivery.ticket)
                    delivery.deliver()
                    if delivery.done is not None and not delivery.done.done():
                        delivery.done.set_result(None)
                elif delivery.done is not None and not delivery.done.done():
                    delivery.done.set_exception(
                        ServeError("the table stopped", ServeCode.SERVER_STOPPING)
                    )
            except Exception as error:
                self._fail(error)
                if delivery.done is not None and not delivery.done.done():
                    delivery.done.set_exception(
                        ServeError("the table stopped", ServeCode.SERVER_STOPPING)
                    )
            finally:
                self._outbox.task_done()

    async def _timer(self) -> None:
        """Wake the table at its next deadline (a call's grace, the three-minute rule, the
        idle abandon), and again whenever a change may have moved it."""
        table = self._table
        assert table is not None
        while not table.played_out:
            self._changed.clear()
            deadline = table.deadline
            if deadline is None:
                await self._changed.wait()
                continue
            delay_s = (deadline - self._now_ms()) / 1000
            if delay_s > 0:
                # asyncio.timeout, not wait_for: Python 3.11's wait_for loses a cancellation
                # that comes as the event is set, and the timer would never stop.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay_s):
                        await self._changed.wait()
                continue
            table.advance(self._now_ms())
            if table.played_out:
                self._played_out.set()

    async def _guarded(self, helper: Awaitable[None]) -> None:
        """A bot: a failure stops the table rather than leave it waiting for ever."""
        try:
            await helper
        except ServeError:
            pass  # the table is over or stopping: the bot has nothing more to do
        except Exception as error:
            self._fail(error)

    def _fail(self, error: BaseException) -> None:
        if self._failure is None:
            _LOG.error("table %s stops: %s", self.game, error, exc_info=error)
            self._failure = error
            if self._life is not None:
                self._life.cancel()

    async def _stop_helpers(self) -> None:
        helpers, self._helpers = self._helpers, []
        for helper in helpers:
            helper.cancel()
        if helpers:
            await asyncio.wait(helpers)

    async def _close(self) -> None:
        """Once, whoever asks first (``run`` ending, ``stop``): both wait until it is done."""
        if self._closing is None:
            self._closing = asyncio.create_task(self._close_once())
        await asyncio.wait([self._closing])

    async def _close_once(self) -> None:
        try:
            async with asyncio.timeout(DRAIN_TIMEOUT_S):
                await self._outbox.join()
        except TimeoutError:
            _LOG.error("table %s: the journal did not confirm the last records", self.game)
        if self._sender is not None:
            self._sender.cancel()
            await asyncio.wait([self._sender])
        if self._table is not None:
            self._table.close()
        for file in self._receipt_files:
            file.close()

    # -- helpers --------------------------------------------------------------------------

    def _players(self) -> list[PlayerInfo]:
        players = []
        for seat, entry in enumerate(self._seats):
            assert entry.name is not None  # every seat is taken before the start
            players.append(PlayerInfo(entry.name, BACKS[seat % len(BACKS)], entry.key))
        return players

    def _signers(self) -> list[PlayerSigner]:
        """The seats' signers as the table asks them: the answers gathered over the
        network before it asks (None: not answered)."""

        def signer(seat: int) -> PlayerSigner:
            def answer(kind: str, message: bytes) -> str | None:
                answers = self._signed.get(kind)
                return None if answers is None else answers[seat]

            return answer

        return [signer(seat) for seat in range(len(self._seats))]

    def _open_receipts(self) -> None:
        """Each seat's receipts file, appended to (a resumed table's holds the receipts
        sent before the restart)."""
        for seat in range(len(self._seats)):
            path = self._paths.receipts_path(self.game, seat)
            descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
            self._receipt_files.append(os.fdopen(descriptor, "ab"))

    def _start_clock(self, base_ms: int) -> None:
        self._base_ms = self._last_ms = base_ms
        self._started_at = time.monotonic()

    def _now_ms(self) -> int:
        """The table's clock: never backwards, and stopped once the match is played out
        (the held final record is dated then)."""
        if not self._frozen:
            elapsed_ms = int((time.monotonic() - self._started_at) * 1000)
            self._last_ms = max(self._last_ms, self._base_ms + elapsed_ms)
        return self._last_ms

    def _set_state(self, state: TableState) -> None:
        self._state = state
        self._on_state(self.game, state)

    def _send_to_seat(self, seat: int, message: Mapping[str, object]) -> None:
        for peer in list(self._peers):
            if peer.seat == seat:
                peer.send(message)

    def _broadcast(self, message: Mapping[str, object], but: Peer | None = None) -> None:
        for peer in list(self._peers):
            if peer is not but:
                peer.send(message)

    def _ended(self, seat: int | None) -> dict[str, Any]:
        assert self._verdict is not None
        return protocol.ended(
            verdict=self._verdict,
            log=f"/games/{self.game}.jsonl",
            receipts=None if seat is None else f"/games/{self.game}/seat{seat}.receipts.jsonl",
        )
