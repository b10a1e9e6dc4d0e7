"""A WebSocket proxy on loopback that loses what a bad network loses (issue 35: "a proxy that
drops 20% of frames and cuts connections at random"), for the resend tests and the bench.

Each play connection (``/ws/...``) is relayed to the server frame by frame. The proxy drops
a share of the frames that carry a submission (client to server) and of those that carry a
receipt (server to client): the two whose loss a resend must repair. Every other frame
passes: on a real network (TCP) a frame is never lost from the middle of a live
connection, so losing a record or a catch-up is losing the connection, which the proxy
also does, cutting each one after a random lifetime. And the network can go away
altogether (``outage``: every connection cut, new ones refused) and come back
(``restore``). Seeded: a run is repeatable as far as the event loop's timing allows.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import ClientSession, WSMsgType, WSServerHandshakeError, web


@dataclass
class LossyProxy:
    """``base`` once started; ``upstream`` the server's base URL."""

    upstream: str
    drop_share: float = 0.2  # of submit frames up, and of receipt frames down
    lifetime_s: tuple[float, float] | None = (1.0, 8.0)  # a connection is cut within this
    seed: int = 35
    base: str = ""
    dropped: dict[str, int] = field(default_factory=lambda: {"submit": 0, "receipt": 0})
    passed: dict[str, int] = field(default_factory=lambda: {"submit": 0, "receipt": 0})
    cuts: int = 0
    connections: int = 0
    down: bool = False  # an outage: every connection cut, none taken, until ``restore``
    # Receipts (their bodies) dropped every time, whatever ``drop_share`` says.
    always_lost: Callable[[dict[str, Any]], bool] | None = None
    # Server messages whose arrival cuts the connection instead (the message is lost).
    cut_at: Callable[[dict[str, Any]], bool] | None = None
    cut_at_count: int = 0  # connections cut that way
    refused: int = 0  # upgrades the server refused (its status passed on to the client)

    async def __aenter__(self) -> LossyProxy:
        self._random = random.Random(self.seed)
        self._session = ClientSession()
        self._sockets: set[web.WebSocketResponse] = set()
        app = web.Application()
        app.router.add_get("/ws/{game}", self._relay)
        app.router.add_get("/{tail:.*}", self._forward)  # a download after the game
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.base = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def outage(self) -> None:
        """The network goes away: every connection is cut and new ones are refused."""
        self.down = True
        for socket in list(self._sockets):
            await socket.close()

    def restore(self) -> None:
        """The network is back."""
        self.down = False

    async def __aexit__(self, *_: object) -> None:
        for socket in list(self._sockets):
            await socket.close()
        await self._session.close()
        await self._runner.cleanup()

    def _lost(self, text: str, kind: str) -> bool:
        """Whether to drop ``text``, a frame that may carry a ``kind`` message."""
        if kind not in text:  # most frames: no parse
            return False
        try:
            message = json.loads(text)
        except ValueError:
            return False
        if message.get("type") != kind:
            return False
        lost = self.always_lost
        if kind == "receipt" and lost is not None and lost(json.loads(message["receipt"])["body"]):
            self.dropped[kind] += 1
            return True
        if self._random.random() < self.drop_share:
            self.dropped[kind] += 1
            return True
        self.passed[kind] += 1
        return False

    async def _forward(self, request: web.Request) -> web.Response:
        """A GET passed to the server as it is (the archive's downloads), unless down."""
        if self.down:
            raise web.HTTPServiceUnavailable()
        async with self._session.get(self.upstream + request.rel_url.path_qs) as answer:
            body = await answer.read()
            return web.Response(body=body, status=answer.status, content_type=answer.content_type)

    async def _relay(self, request: web.Request) -> web.StreamResponse:
        if self.down:
            raise web.HTTPServiceUnavailable()
        url = "ws" + self.upstream.removeprefix("http") + request.rel_url.path_qs
        try:
            upstream = await self._session.ws_connect(url, max_msg_size=1 << 20)
        except WSServerHandshakeError as refused:  # refused before the upgrade: passed on
            self.refused += 1
            return web.Response(status=refused.status, text=refused.message)
        except Exception:  # the server did not answer: the client retries
            raise web.HTTPServiceUnavailable() from None
        socket = web.WebSocketResponse(max_msg_size=1 << 20)
        await socket.prepare(request)
        self._sockets.add(socket)
        self.connections += 1
        lifetime = None if self.lifetime_s is None else self._random.uniform(*self.lifetime_s)

        async def down() -> None:
            async for frame in upstream:
                if frame.type is not WSMsgType.TEXT:
                    break
                if self.cut_at is not None and self.cut_at(json.loads(frame.data)):
                    self.cut_at_count += 1
                    break
                if not self._lost(frame.data, "receipt"):
                    await socket.send_str(frame.data)
            await socket.close()

        async def up() -> None:
            async for frame in socket:
                if frame.type is not WSMsgType.TEXT:
                    break
                if not self._lost(frame.data, "submit"):
                    await upstream.send_str(frame.data)

        relays: list[asyncio.Task[Any]] = [
            asyncio.ensure_future(down()),
            asyncio.ensure_future(up()),
        ]
        try:
            _, waiting = await asyncio.wait(relays, timeout=lifetime, return_when="FIRST_COMPLETED")
            if len(waiting) == len(relays) and not self.down:  # the lifetime ran out
                self.cuts += 1
        finally:
            for task in relays:
                task.cancel()
            self._sockets.discard(socket)
            await upstream.close()
            await socket.close()
        return socket
