"""One live table on the event loop: its seats, its match, and what it sends whom.

A ``HostedTable`` plays one game (docs/deal-spec.md, "Order of play", live). Its life:
*waiting* (seats filling) → *starting* (each seat's entropy, then its co-signature of the
genesis, asked over the network; a bot's signed at once with the key the server keeps) →
*playing* → *accepting* (the held final record's body sent, acceptances gathered for at
most 15 s) → *finished* (the archive verifies it) — or *cancelled* (a seat did not sign
within 60 s while starting: nothing written).

``Table`` is synchronous, so every call on it runs on the loop, one at a time. Every line
it writes is journaled at once (``on_line``) and every receipt too; the table's outbox
awaits the journal's ``durable`` for each, in order, and only then sends each ``record``
to every attached peer, each seat its ``pack`` after a ``hand_start``, and each
``receipt`` to its seat: nothing reaches a client before it is on disk. Bots submit
through the same path as people; a timer wakes the table at its next deadline
(``Table.deadline``). A table's clock is milliseconds since it started
(``time.monotonic``); a resumed table's continues from its last record's time.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.deal import Dealer, commitment
from racing_demon.game.flow import RecordKind, Seen
from racing_demon.game.state import State
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.receipts import SubmissionCode
from racing_demon.log.records import (
    ACCEPT,
    ENTROPY,
    FORMAT_VERSION,
    Genesis,
    entropy_statement,
    parse_record,
)
from racing_demon.serve import protocol
from racing_demon.serve.audience import Audience
from racing_demon.serve.bot_seat import play_bot
from racing_demon.serve.clock import TableClock, wake_at_deadlines
from racing_demon.serve.live_view import LiveView
from racing_demon.serve.notes import Notes
from racing_demon.serve.outbox import Outbox
from racing_demon.serve.protocol import ClientSubmit, ServeCode, ServeError
from racing_demon.serve.receipt_desk import ReceiptDesk
from racing_demon.serve.requests import Request, answered_signers
from racing_demon.serve.seats import (
    Peer,
    SeatKind,
    SeatSpec,
    TableJournal,
    TablePaths,
    TableSpec,
    TableState,
    players_of,
)
from racing_demon.serve.sent_log import SentLog, hand_started
from racing_demon.table import ResumeError, SubmissionError, Table
from racing_demon.verify import Settings, Verdict, verify_log

__all__ = [
    "HostedTable",
    "Peer",
    "SeatKind",
    "SeatSpec",
    "TableJournal",
    "TablePaths",
    "TableSpec",
    "TableState",
]

# A table whose seats are not all taken by then is cancelled: the open tables a lobby
# client can make the server hold are bounded (ServeSettings), so they must not be held
# for ever by tables nobody joins.
WAITING_TIMEOUT_S: Final = 30 * 60.0
START_TIMEOUT_S: Final = 60.0  # each of the two rounds of signatures before the genesis
ACCEPT_TIMEOUT_S: Final = 15.0
DRAIN_TIMEOUT_S: Final = 5.0  # stopping: how long queued records may wait for the journal
_GENESIS: Final = RecordKind.GENESIS.value
_LOG = logging.getLogger(__name__)


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
        notes: Notes,
    ) -> None:
        self.game = spec.game
        self._notes = notes
        self._spec = spec
        self._seats = list(spec.seats)
        self._key = table_key
        self._journal = journal
        self._paths = paths
        self._on_state = on_state
        self._on_finished = on_finished  # archives and verifies: the verdict
        self._state = TableState.WAITING
        self._table: Table | None = None
        self._dealer: Dealer | None = None
        self._audience = Audience()
        self._clock = TableClock()
        people = [seat for seat, entry in enumerate(self._seats) if entry.kind is SeatKind.PERSON]
        self._view = LiveView(self._audience, people, self._clock.now_ms)
        self._outbox = Outbox(journal, self._fail)
        self.sent = SentLog(paths.log_path(spec.game))  # what the outbox sent: durable
        self._hand: int | None = None  # the last hand_start sent
        self._request: Request | None = None
        self._signed: dict[str, list[str | None]] = {}  # what the signers answer, by kind
        self._receipts = ReceiptDesk(
            spec.game,
            len(self._seats),
            table_key=table_key,
            journal=journal,
            outbox=self._outbox,
            audience=self._audience,
            sent=self.sent,
            on_failure=self._fail,
        )
        self._filled = asyncio.Event()
        self._changed = asyncio.Event()  # wakes the timer: a deadline may have moved
        self._played_out = asyncio.Event()
        self._helpers: list[asyncio.Task[None]] = []
        self._life: asyncio.Task[None] | None = None
        self._sender: asyncio.Task[None] | None = None
        self._closing: asyncio.Task[None] | None = None
        self._verdict: str | None = None
        self._failure: BaseException | None = None
        if all(seat.taken for seat in self._seats):
            self._filled.set()

    # -- the server's side --------------------------------------------------------------

    @property
    def state(self) -> TableState:
        return self._state

    @property
    def seat_count(self) -> int:
        return len(self._seats)

    def seat_kind(self, seat: int) -> SeatKind:
        return self._seats[seat].kind

    def join(self, seat: int, name: str, key: bytes) -> None:
        """A person takes a free seat (the lobby's join); the table starts once every seat
        is taken. ServeError: TABLE_CLOSED, NO_SUCH_SEAT, SEAT_TAKEN, BAD_KEY."""
        if self._state is not TableState.WAITING:
            raise ServeError(f"the table is {self._state}, not waiting", ServeCode.TABLE_CLOSED)
        if not 0 <= seat < len(self._seats) or self._seats[seat].kind is SeatKind.BOT:
            raise ServeError(f"there is no person's seat {seat}", ServeCode.NO_SUCH_SEAT)
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
            seats=[entry.listed(number) for number, entry in enumerate(self._seats)],
            rules=self._spec.rules.to_document(),
            state=self._state.value,
        )

    async def run(self) -> None:
        """The table's task: until it is finished, cancelled, or stopped (``stop``)."""
        self._sender = asyncio.create_task(self._outbox.run())
        self._life = asyncio.create_task(self._live())
        try:
            await asyncio.wait([self._life])
        finally:
            self._life.cancel()  # when run itself is cancelled (a no-op once it is done)
            await self._close()
        error = self._failure
        if error is None and not self._life.cancelled():
            error = self._life.exception()
        if error is not None:  # nobody stays connected to a table that no longer plays
            self._audience.close_all(
                ServeCode.SERVER_STOPPING, "the table stopped on a fault; it resumes on restart"
            )
            raise error

    async def stop(self) -> None:
        """The server stops: bots and timers stop between two table calls (nothing is
        half-written), what is queued is sent once durable, the files are closed, and every
        connection is closed with ``SERVER_STOPPING``. The table resumes from its log on
        the next start."""
        if self._life is not None and not self._life.done():
            self._life.cancel()
            await asyncio.wait([self._life])
        await self._close()
        self._audience.close_all(ServeCode.SERVER_STOPPING, "the server is stopping")

    # -- a connection's side ------------------------------------------------------------

    async def attach(self, peer: Peer, from_seq: int, held_hash: str | None = None) -> None:
        """Send ``peer`` every durable record from ``from_seq`` (from the log file, off the
        event loop: ``SentLog``), then what its seat is asked now and its pack for the
        hand in play, the table's piles and its seat's moves, then live messages. With
        ``held_hash`` (the chain hash of record ``from_seq - 1`` as the peer holds it), a
        log that holds another record there, or none, is ServeError FORK: nothing sent."""
        if held_hash is not None and (fork := self.sent.fork(from_seq - 1, held_hash)):
            raise ServeError(fork, ServeCode.FORK)
        self._audience.syncing(peer)
        await self.sent.catch_up(peer, from_seq)
        if not self._audience.join(peer, from_seq):
            return  # its seat connected again meanwhile
        seat = peer.seat
        if seat is not None:
            request = self._request
            if request is not None and request.waits_for(seat):
                peer.send(request.message(seat))
            if self._hand is not None:
                peer.send(self._pack(seat, self._hand))
        self._view.attach(peer)
        if self._verdict is not None:
            peer.send(self._ended(seat))

    def detach(self, peer: Peer) -> None:
        self._audience.leave(peer)

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

    async def submit(self, seat: int, submission: ClientSubmit, *, limited: bool = False) -> None:
        """Seat ``seat``'s move, answered once its receipt is durable and sent (``limited``:
        over its connection's rate, refused RATE_LIMITED unless logged already). ServeError
        NOT_ASKED before the deal, TABLE_CLOSED after; SubmissionError with no receipt."""
        sent = submission
        await self._take(seat, sent.ref, sent.n, sent.move, sent.seen, sent.signature, limited)

    # -- the life of the table ----------------------------------------------------------

    async def _live(self) -> None:
        try:
            if not await self._seats_filled():
                return
            if not self._paths.log_path(self.game).exists():
                if not await self._start():
                    return
            elif not self._resume():
                await self._finish()  # the final record was written before a restart
                return
            table = self._table
            assert table is not None
            if not table.played_out:
                self._set_state(TableState.PLAYING)
                timer = wake_at_deadlines(table, self._clock, self._changed, self._played_out)
                lag = self._notes.log_round_trips(table, self._clock.now_ms, self._changed)
                self._helpers = [asyncio.create_task(self._guarded(job)) for job in (timer, lag)]
                for seat, entry in enumerate(self._seats):
                    if entry.bot is not None and entry.bot_key is not None:
                        bot = play_bot(
                            table,
                            seat,
                            entry.bot,
                            entry.bot_key,
                            self._clock.now_ms,
                            self._bot(seat),
                        )
                        self._helpers.append(asyncio.create_task(self._guarded(bot)))
                await self._played_out.wait()
                await self._stop_helpers()
            if not table.finished:
                await self._accept(table)
            await self._outbox.drained()  # the final record is durable and sent
            await self._finish()
        finally:
            await self._stop_helpers()

    async def _seats_filled(self) -> bool:
        """Wait for every seat to be taken; False (cancelled) if they are not in time."""
        try:
            async with asyncio.timeout(WAITING_TIMEOUT_S):
                await self._filled.wait()
        except TimeoutError:
            self._cancel("its seats were not all taken in time")
            return False
        return True

    def _cancel(self, why: str) -> None:
        self._set_state(TableState.CANCELLED)
        self._audience.close_all(ServeCode.TABLE_CLOSED, f"cancelled: {why}")

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
        players = players_of(self._seats)
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
        self._clock.start(0)
        self._table = Table.create(
            self._paths.log_path(self.game),
            spec.rules,
            players,
            self._key,
            spec.secret,
            None,
            player_signers=answered_signers(self._signed, len(self._seats)),
            game_id=self.game,
            durable=False,  # the journal makes each line durable
            on_record=self._on_record,
            hold_final=True,
        )
        self._opened(self._paths.log_path(self.game).read_bytes().split(b"\n", 1)[0])
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
                player_signers=answered_signers(self._signed, len(self._seats)),
                durable=False,
                on_record=self._on_record,
                hold_final=True,
            )
        except ResumeError:
            settings = Settings(table_key=raw_public_bytes(self._key.public_key()))
            if verify_log(path, settings).verdict is not Verdict.VERIFIED:
                raise
            self.sent.sent_before(path.read_bytes().split(b"\n")[:-1])
            return False
        self._table = table
        # Records the resume wrote are queued; every one before them is durable already
        # (the journal's recovery ran before any table resumed).
        lines = path.read_bytes().split(b"\n")[: table.records - self._outbox.waiting]
        self.sent.sent_before(lines)
        if not self._outbox.waiting:  # else the first record it wrote shows every pile
            self._view.resumed(table.records - 1, table.state)
        self._opened(lines[0], lines)
        for line in reversed(lines):
            if (hand := hand_started(line)) is not None:
                self._hand = hand
                break
        # Not before a refusal it gave after its last record: no later record may seem older.
        self._clock.start(max(table.t_ms, self._receipts.latest_t_ms))
        table.note(self._notes.pause(self.game), self._clock.now_ms())  # not once played out
        if table.played_out:
            self._played_out.set()
        return True

    def _opened(self, genesis: bytes, durable_lines: Sequence[bytes] | None = None) -> None:
        """The table is written to: its dealer (for the seats' packs) and receipts files
        (a resumed table's ``durable_lines`` say which submissions it logged)."""
        payload = parse_record(json.loads(genesis)["body"]).payload
        assert isinstance(payload, Genesis)
        self._dealer = payload.dealer(self._spec.secret)
        self._receipts.open(self._paths, durable_lines)

    async def _accept(self, table: Table) -> None:
        """Ask every seat to accept the held final record, then write it."""
        self._set_state(TableState.ACCEPTING)
        self._clock.freeze()  # the final record's time: submissions now are refused at it
        await self._outbox.drained()  # the seats hold every record the final body follows
        body = table.final_body()
        accepts = await self._ask(
            ACCEPT,
            [body] * len(self._seats),
            lambda seat: protocol.final(body),
            ACCEPT_TIMEOUT_S,
            complete=False,
            version=table.version,  # a resumed table's may be older than a new one's
        )
        assert accepts is not None  # a seat that does not answer declines
        self._signed[ACCEPT] = accepts
        table.reveal()

    async def _finish(self) -> None:
        self._set_state(TableState.FINISHED)
        self._verdict = await self._on_finished(self.game)
        for peer in self._audience.each():
            peer.send(self._ended(peer.seat))

    async def _ask(
        self,
        kind: str,
        signed: Sequence[bytes],
        message: Callable[[int], dict[str, Any]],
        timeout_s: float,
        *,
        complete: bool = True,
        version: int = FORMAT_VERSION,
    ) -> list[str | None] | None:
        """Every seat's signature of its ``signed`` bytes in format ``version``: bots' at
        once, people's as they come, for at most ``timeout_s``. None (the table cancelled)
        if one is missing and ``complete``; else a missing one is None."""
        request = Request(kind, signed, message, version)
        self._request = request
        for seat, entry in enumerate(self._seats):
            if entry.bot_key is not None:
                request.sign_for(seat, entry.bot_key)
            else:
                self._audience.to_seat(seat, message(seat))
        try:
            if not await request.gathered(timeout_s) and complete:
                self._cancel(f"seat {request.answered.index(False)} did not sign in time")
                return None
        finally:
            self._request = None
        return request.answers

    def _answer(self, kind: str, seat: int, signature: str | None) -> None:
        request, key = self._request, self._seats[seat].key
        if request is None or key is None:
            raise ServeError(
                f"the table does not ask seat {seat} for its {kind} now", ServeCode.NOT_ASKED
            )
        request.answer(kind, seat, key, signature)

    # -- play -----------------------------------------------------------------------------

    def _bot(self, seat: int) -> Callable[[int, str, Seen, str], Awaitable[None]]:
        async def submit(n: int, move: str, seen: Seen, signature: str) -> None:
            await self._take(seat, None, n, move, seen, signature, False)

        return submit

    def _take(
        self, seat: int, ref: str | None, n: int, move: str, seen: Seen, sig: str, limited: bool
    ) -> asyncio.Future[None]:
        """One submission through the table, its receipt written, journaled and queued:
        the future is done once the receipt is sent. One logged already (the same seat,
        number and signature: sent again) gets its receipt again, and is not judged; one
        ``limited`` (over its connection's rate) is refused RATE_LIMITED unjudged."""
        table = self._table
        if table is None:
            raise ServeError("the match is not dealt yet", ServeCode.NOT_ASKED, ref)
        if self._failure is not None or self._closing is not None:
            # Failed, or the server stops: its files are (being) closed, nothing more is
            # written; a frame read meanwhile is refused, not a crash.
            raise ServeError("the table stopped", ServeCode.SERVER_STOPPING, ref)
        logged_as = self._receipts.book.find(seat, n, sig)
        if logged_as is not None:  # its receipt again, the game over or not
            return self._receipts.again(seat, ref, n, logged_as)
        if self._state is TableState.FINISHED:
            raise ServeError("the table takes no more submissions", ServeCode.TABLE_CLOSED, ref)
        now = self._clock.now_ms()
        try:
            refused = SubmissionCode.RATE_LIMITED if limited else None
            outcome = table.submit(seat, move, now, n, sig, seen, refused)
            receipt = outcome.receipt
            self._receipts.book.logged(seat, n, outcome.seq, sig)
        except SubmissionError as refusal:
            if refusal.receipt is None:
                raise
            receipt = refusal.receipt
        except OSError as error:  # the log file: the table writes nothing more (it resumes)
            self._fail(error)
            raise ServeError("the table stopped", ServeCode.SERVER_STOPPING, ref) from error
        self._changed.set()
        if table.played_out:
            self._played_out.set()
        return self._receipts.send(seat, ref, receipt)

    def _on_record(self, line: bytes, state: State | None) -> None:
        """Every line the table writes (``state``: the table after it): journaled at once,
        sent once durable; after a ``hand_start``, each seat's pack; then the table's piles
        and the people's moves."""

        def deliver() -> None:
            seq = self.sent.sent(line)
            self._audience.record(seq, protocol.record(line))
            hand = hand_started(line)
            if hand is not None:
                self._hand = hand
                for seat in range(len(self._seats)):
                    self._audience.to_seat(seat, self._pack(seat, hand))
            self._view.show(seq, state, new_hand=hand is not None)
            self._view.advise()

        self._outbox.queue(lambda: self._journal.log_line(self.game, line), deliver)

    async def _guarded(self, helper: Awaitable[None]) -> None:
        """A bot or the timer: a failure stops the table rather than leave it waiting."""
        try:
            await helper
        except ServeError:
            pass  # the table is over or stopping: the bot has nothing more to do
        except Exception as error:
            self._fail(error)

    def _fail(self, error: BaseException) -> None:
        """The journal, the log file, a bot or the timer failed: the table stops (``run``
        raises the first failure) and resumes from its log on the next start."""
        if self._failure is not None:
            return
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
                await self._outbox.drained()
        except TimeoutError:
            _LOG.error("table %s: the journal did not confirm the last records", self.game)
        if self._sender is not None:
            self._sender.cancel()
            await asyncio.wait([self._sender])
        self._view.close()
        if self._table is not None:
            self._table.close()
        self._receipts.close()

    # -- helpers --------------------------------------------------------------------------

    def _pack(self, seat: int, hand: int) -> dict[str, Any]:
        assert self._dealer is not None  # a hand started: the table is written to
        return protocol.pack(hand=hand, faces=[card.face for card in self._dealer.pack(hand, seat)])

    def _set_state(self, state: TableState) -> None:
        self._state = state
        self._on_state(self.game, state)

    def _ended(self, seat: int | None) -> dict[str, Any]:
        assert self._verdict is not None
        return protocol.ended(
            verdict=self._verdict,
            log=f"/games/{self.game}.jsonl",
            receipts=None if seat is None else f"/games/{self.game}/seat{seat}.receipts.jsonl",
        )
