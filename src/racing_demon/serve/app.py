"""The web side of ``racing-demon serve``: the aiohttp application, the play WebSocket
(``GET /ws/GAME``), and the limits and headers that hold for every connection.

The handler parses (``protocol.parse_client_message``), calls the table, and queues what
the table sends; it never reads a raw message and never touches a file. What it holds a
connection to:

- frames: a text frame over 4 KiB is answered ``TOO_LARGE`` and the connection closed; one
  over four times that is not read at all (aiohttp closes the connection, code 1009); a
  frame that is not a well-formed message (a binary frame, ``BAD_JSON``, ``NOT_OBJECT``,
  ``UNKNOWN_TYPE``, ``BAD_MESSAGE``) is answered with its code and the connection closed
  (1008, the code as the reason): a client that sends one is broken, and whatever it
  meant by it cannot be answered;
- rate: a token bucket per connection, 10 messages a second, bursts of 20 (WebSocket pings
  are control frames, answered by aiohttp: free). A well-formed message without a token is
  still answered: a submission with a signed receipt refusing it (``RATE_LIMITED``, not
  logged, so client and server agree on what became of it), any other message with the
  error ``RATE_LIMITED``; a connection three bursts in debt that sends anything but a
  submission is closed (1008 ``RATE_LIMITED``). A submission's answer waits for the
  journal, so a connection's submissions are paced by its commits whatever it sends;
  then each frame is answered in docs/protocol.md §8's order (``parse_client_message``,
  then ``NOT_SYNCED``, ``SPECTATOR``, and what the table says);
- its reader: at most 2,000 messages wait to be sent to it, then it is closed (1008
  ``SLOW_READER``) rather than buffered without bound;
- its liveness: a ping after 1.5 s without a frame from it, and closed without its pong
  0.75 s later (aiohttp's heartbeat), so the other seats see a lost seat within seconds;
- a planned stop (``announce_stop``, after the context's ``drain``): every connection is
  told ``stopping`` with the time left, and each one made meanwhile right after its
  ``welcome``;
- the upgrade: an ``Origin`` that is present and not this server's own is refused (403
  ``BAD_ORIGIN``), as are an unknown game (404 ``NO_SUCH_TABLE``), a cancelled table (409
  ``TABLE_CLOSED``), a seat that is no person's (404 ``NO_SUCH_SEAT``) or a wrong token
  (403 ``BAD_TOKEN``), before any WebSocket exists.

Every response carries ``X-Content-Type-Options: nosniff``, and every HTML response a
strict ``Content-Security-Policy`` unless its handler set its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import ipaddress
import re
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Final, Protocol
from urllib.parse import urlsplit

from aiohttp import WSCloseCode, WSMsgType, web

from racing_demon.serve import protocol
from racing_demon.serve.data import is_game_id
from racing_demon.serve.host import HostedTable, SeatKind, TableState
from racing_demon.serve.protocol import (
    ClientAccept,
    ClientCosign,
    ClientEntropy,
    ClientMessage,
    ClientPong,
    ClientSubmit,
    ClientSync,
    ServeCode,
    ServeError,
    parse_client_message,
)
from racing_demon.serve.round_trips import PING_EVERY_S, RoundTrips
from racing_demon.table import SubmissionError

READ_LIMIT_BYTES: Final = 4 * protocol.MAX_FRAME_BYTES
RATE_PER_S: Final = 10.0
BURST: Final = 20.0
FLOOD_DEBT: Final = 3 * BURST  # tokens owed: past this, a connection's errors close it
QUEUE_LIMIT: Final = 2_000
# A ping after this long without a frame from the client, and the connection closed if
# its pong is not back within half of it: a seat whose network went away is shown
# disconnected to the others within about 2.25 s (issue 35: within 3 s).
HEARTBEAT_S: Final = 1.5
CLOSE_TIMEOUT_S: Final = 2.0
CSP: Final = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
_SEAT = re.compile(r"[0-9]{1,2}")


class SeatCheck(Protocol):
    def seat_token_ok(self, game: str, seat: int, token: str) -> bool:
        """Whether ``token`` is the one the lobby gave for ``seat`` of ``game``."""
        ...


class PlayContext(SeatCheck, Protocol):
    """What the play handler needs of the server (``serve.context.ServerContext``)."""

    @property
    def tables(self) -> Mapping[str, HostedTable]: ...

    @property
    def stopping_in_ms(self) -> int | None:
        """The milliseconds before a planned stop; None while none is planned."""
        ...

    @property
    def round_trips(self) -> RoundTrips: ...


CONTEXT: Final = web.AppKey("context", PlayContext)
_PEERS: Final = web.AppKey("peers", set["SocketPeer"])  # every open play connection


def make_app(
    context: PlayContext,
    extra_routes: Sequence[Callable[[web.Application], None]] = (),
    *,
    loopback_only: bool = False,
) -> web.Application:
    """The server's application: the play WebSocket, then ``extra_routes`` (the lobby's
    and the archive's ``add_routes``), each called with the application. With
    ``loopback_only`` (a server listening on loopback) a request that names another host
    is refused: a page whose name was rebound to 127.0.0.1 (DNS rebinding) is its own
    origin, so the ``Origin`` check alone would let it in."""
    app = web.Application(middlewares=[_loopback_names_only] if loopback_only else [])
    app[CONTEXT] = context
    app[_PEERS] = set()
    app.router.add_get("/ws/{game}", _play)
    for add_routes in extra_routes:
        add_routes(app)
    app.on_response_prepare.append(_security_headers)
    app.on_shutdown.append(_close_sockets)
    return app


def is_loopback(host: str) -> bool:
    """Whether the host name or address ``host`` is this machine's loopback."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@web.middleware
async def _loopback_names_only(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    if not is_loopback(urlsplit(f"//{request.host}").hostname or ""):
        return _refused(ServeCode.BAD_ORIGIN, "this server answers to its loopback names only")
    return await handler(request)


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    if response.content_type == "text/html":
        response.headers.setdefault("Content-Security-Policy", CSP)


def announce_stop(app: web.Application) -> None:
    """Tell every connection of ``app`` that the server stops (a planned stop, begun with
    the context's ``drain``): the ``stopping`` message, with the time left."""
    left_ms = app[CONTEXT].stopping_in_ms
    if left_ms is not None:
        for peer in app[_PEERS]:
            peer.send(protocol.stopping(in_ms=left_ms))


async def _close_sockets(app: web.Application) -> None:
    peers: set[SocketPeer] = app[_PEERS]
    for peer in list(peers):
        await peer.going_away()


def _refused(code: ServeCode, message: str) -> web.Response:
    return web.json_response(
        protocol.lobby_error(code, message), status=protocol.LOBBY_STATUS[code]
    )


def _own_origin(request: web.Request) -> bool:
    """No ``Origin`` (not a browser), or this server's own (either scheme: a TLS proxy in
    front makes the browser's https this server's http)."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == request.host.lower()


def _upgrade_refused(request: web.Request) -> web.Response | tuple[HostedTable, int | None]:
    """The table and seat of an upgrade, or the refusal it gets before any WebSocket."""
    context = request.app[CONTEXT]
    if not _own_origin(request):
        return _refused(ServeCode.BAD_ORIGIN, "a page of another origin may not connect")
    game = request.match_info["game"]
    table = context.tables.get(game) if is_game_id(game) else None
    if table is None:
        return _refused(ServeCode.NO_SUCH_TABLE, "there is no such table")
    if table.state is TableState.CANCELLED:
        return _refused(ServeCode.TABLE_CLOSED, "the table was cancelled")
    if "seat" not in request.query:
        return table, None
    text = request.query["seat"]
    if (
        not _SEAT.fullmatch(text)
        or int(text) >= table.seat_count
        or table.seat_kind(int(text)) is SeatKind.BOT
    ):
        return _refused(ServeCode.NO_SUCH_SEAT, "there is no such person's seat")
    seat = int(text)
    if not context.seat_token_ok(game, seat, request.query.get("token", "")):
        return _refused(ServeCode.BAD_TOKEN, "that is not this seat's token")
    return table, seat


async def _play(request: web.Request) -> web.StreamResponse:
    found = _upgrade_refused(request)
    if isinstance(found, web.Response):
        return found
    table, seat = found
    # No compression: the messages are short, and deflating each costs CPU per message.
    socket = web.WebSocketResponse(
        max_msg_size=READ_LIMIT_BYTES, heartbeat=HEARTBEAT_S, compress=False
    )
    await socket.prepare(request)
    peer = SocketPeer(socket, seat, request.transport)
    session = _Session(table, peer, request.app[CONTEXT].round_trips)
    peer.send(table.welcome(seat))
    left_ms = request.app[CONTEXT].stopping_in_ms
    if left_ms is not None:  # connected during a planned stop: told at once
        peer.send(protocol.stopping(in_ms=left_ms))
    request.app[_PEERS].add(peer)  # from its welcome to its end, with nothing awaited first
    try:
        async for frame in socket:
            if frame.type is WSMsgType.TEXT:
                await session.receive(frame.data)
            elif frame.type is WSMsgType.BINARY:
                await session.receive(None)
    finally:
        await session.end()
        table.detach(peer)
        request.app[_PEERS].discard(peer)
        await peer.shut()
    return socket


class SocketPeer:
    """A connection as the table sees it: ``send`` queues, a writer task sends in order,
    and a reader that falls ``QUEUE_LIMIT`` messages behind is closed at once."""

    def __init__(
        self, socket: web.WebSocketResponse, seat: int | None, transport: asyncio.Transport | None
    ) -> None:
        self._socket = socket
        self._seat = seat
        self._transport = transport
        self._queue: deque[str | list[str] | ServeCode] = deque()
        self._ready = asyncio.Event()
        self._closing: ServeCode | None = None
        self._writer = asyncio.create_task(self._write())
        self._cut: asyncio.Task[None] | None = None

    @property
    def seat(self) -> int | None:
        return self._seat

    @property
    def closing(self) -> bool:
        """Whether the connection is being closed (replaced, stopping, too slow, ...)."""
        return self._closing is not None

    def send(self, message: Mapping[str, object]) -> None:
        self._put(protocol.encode(message))

    def send_encoded(self, message: Mapping[str, object], text: str) -> None:
        self._put(text)

    def send_all(self, messages: Sequence[Mapping[str, object]]) -> None:
        self._put([protocol.encode(message) for message in messages])

    def close(self, reason: ServeCode) -> None:
        """Close for ``reason`` once what is queued before it is sent (an error, say)."""
        if self._closing is None:
            self._closing = reason
            self._queue.append(reason)
            self._ready.set()

    def _put(self, item: str | list[str]) -> None:
        if self._closing is not None:
            return
        if len(self._queue) >= QUEUE_LIMIT:
            self._closing = ServeCode.SLOW_READER
            self._queue.clear()
            self._cut = asyncio.get_running_loop().create_task(self.shut())
            return
        self._queue.append(item)
        self._ready.set()

    async def _write(self) -> None:
        with contextlib.suppress(ConnectionError):
            while True:
                while not self._queue:
                    self._ready.clear()
                    await self._ready.wait()
                item = self._queue.popleft()
                if isinstance(item, ServeCode):
                    await self._close_socket(item)
                    return
                for text in [item] if isinstance(item, str) else item:
                    await self._socket.send_str(text)

    async def going_away(self) -> None:
        """The application shuts down: the socket closed at once, ``SERVER_STOPPING``."""
        await self._socket.close(
            code=WSCloseCode.GOING_AWAY, message=ServeCode.SERVER_STOPPING.encode()
        )

    async def shut(self) -> None:
        """The connection is over: a close already queued goes out (within 2 s), then the
        writer stops and the socket is closed, for the reason given if any."""
        if self._closing is not None and self._closing is not ServeCode.SLOW_READER:
            await asyncio.wait([self._writer], timeout=CLOSE_TIMEOUT_S)
        self._writer.cancel()
        await asyncio.wait([self._writer])
        await self._close_socket(self._closing)

    async def _close_socket(self, reason: ServeCode | None) -> None:
        if self._socket.closed:
            return
        code = WSCloseCode.OK
        if reason is ServeCode.SERVER_STOPPING:
            code = WSCloseCode.GOING_AWAY
        elif reason is not None:
            code = WSCloseCode.POLICY_VIOLATION
        message = b"" if reason is None else reason.encode()
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT_S):
                await self._socket.close(code=code, message=message)
        except TimeoutError:  # a reader that takes nothing takes no close frame either
            if self._transport is not None:
                self._transport.abort()


class _TokenBucket:
    """``RATE_PER_S`` tokens a second, at most ``BURST`` saved; every frame takes one, and
    one that finds none runs into debt, at most ``FLOOD_DEBT`` (a flood that stops is
    served again within seconds)."""

    def __init__(self) -> None:
        self._tokens = BURST
        self._stamp = asyncio.get_running_loop().time()

    def take(self) -> float:
        """Take a token: what is left, negative when the frame came without one."""
        now = asyncio.get_running_loop().time()
        refilled = min(BURST, self._tokens + (now - self._stamp) * RATE_PER_S)
        self._tokens = max(-FLOOD_DEBT, refilled - 1)
        self._stamp = now
        return refilled - 1


class _Session:
    """One connection's conversation: ``sync`` first, then the seat's messages, each frame
    checked in docs/protocol.md §8's order."""

    def __init__(self, table: HostedTable, peer: SocketPeer, round_trips: RoundTrips) -> None:
        self._table = table
        self._peer = peer
        self._round_trips = round_trips
        self._bucket = _TokenBucket()
        self._synced = False
        self._over = False
        self._pinger: asyncio.Task[None] | None = None
        self._nonce: tuple[int, str] | None = None  # the seat and nonce of its last ping

    async def end(self) -> None:
        """The connection is over: no more pings, and its last one no longer asked."""
        if self._pinger is not None:
            self._pinger.cancel()
            await asyncio.wait([self._pinger])
        if self._nonce is not None:
            self._round_trips.hang_up(self._table.game, *self._nonce)

    async def _ping(self, seat: int) -> None:
        """A seat's ``ping`` every PING_EVERY_S, each with a new nonce (round_trips)."""
        while not self._peer.closing:
            await asyncio.sleep(PING_EVERY_S)
            nonce = self._round_trips.ask(self._table.game, seat)
            self._nonce = (seat, nonce)
            self._peer.send(protocol.ping(nonce=nonce))

    async def receive(self, text: str | None) -> None:
        """Answer one frame, ``text`` None for a binary one (nothing once the connection
        is closing: a frame read after it was replaced or the server began to stop acts
        for nobody). Every frame takes its token first, whatever it holds."""
        if self._over or self._peer.closing:
            return
        left = self._bucket.take()
        if text is None:
            self._close(ServeError("messages are text frames", ServeCode.BAD_JSON))
            return
        try:
            message = parse_client_message(text)
        except ServeError as malformed:
            self._close(malformed)
            return
        if left < 0 and not isinstance(message, ClientSubmit):
            if left < -FLOOD_DEBT:
                flood = "far more messages than the rate allows: closing"
                self._close(ServeError(flood, ServeCode.RATE_LIMITED, message.ref))
                return
            self._refuse(
                ServeCode.RATE_LIMITED,
                f"more than {RATE_PER_S:.0f} messages a second: not read",
                message.ref,
            )
            return
        try:
            await self._dispatch(message, limited=left < 0)
        except ServeError as refusal:
            if refusal.code is ServeCode.FORK:  # this copy and the log part: nothing to add
                self._close(ServeError(refusal.message, refusal.code, message.ref))
                return
            self._refuse(refusal.code, refusal.message, refusal.ref or message.ref)
        except SubmissionError as refusal:  # a refusal no receipt can hold
            self._refuse(refusal.code, str(refusal), message.ref)

    def _close(self, refusal: ServeError) -> None:
        """Answer with ``refusal``'s error, then close the connection for its code."""
        self._over = True
        self._peer.send(protocol.error_of(refusal))
        self._peer.close(refusal.code)

    def _refuse(self, code: enum.StrEnum, message: str, ref: str | None = None) -> None:
        self._peer.send(protocol.error_message(code, message, ref))

    async def _dispatch(self, message: ClientMessage, *, limited: bool) -> None:
        table, seat = self._table, self._peer.seat
        if isinstance(message, ClientSync):
            if self._synced:
                raise ServeError("sync once per connection", ServeCode.NOT_ASKED)
            self._synced = True
            await table.attach(self._peer, message.from_seq, message.held_hash)
            if seat is not None:
                self._pinger = asyncio.create_task(self._ping(seat))
            return
        if not self._synced:
            raise ServeError("the first message is sync", ServeCode.NOT_SYNCED)
        if seat is None:
            raise ServeError("a spectator only watches", ServeCode.SPECTATOR)
        if isinstance(message, ClientPong):
            if self._round_trips.answer(table.game, seat, message.nonce) is None:
                raise ServeError("no ping outstanding names that nonce", ServeCode.NOT_ASKED)
        elif isinstance(message, ClientEntropy):
            table.entropy(seat, message.signature)
        elif isinstance(message, ClientCosign):
            table.cosign(seat, message.signature)
        elif isinstance(message, ClientAccept):
            table.accept(seat, message.signature)
        elif isinstance(message, ClientSubmit):
            await table.submit(seat, message, limited=limited)
