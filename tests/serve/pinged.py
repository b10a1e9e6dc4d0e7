"""A seat's connection that only answers the server's pings, each after ``delay_s``: a
player whose round trip the server measures as about that long (docs/protocol.md §9,
"Round trips"). It signs nothing, so a table it sits at does not start playing."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from .player import join, ws_url


@contextlib.contextmanager
def pinged_seat(base: str, game: str, seat: int, name: str, delay_s: float) -> Iterator[None]:
    """Join ``seat`` of ``game`` and, in a thread, answer each ``ping`` ``delay_s`` late
    until the block ends."""
    joined = join(base, game, seat, name)
    stop = threading.Event()

    def answer_pings() -> None:
        with (
            contextlib.suppress(ConnectionClosed, OSError),
            connect(ws_url(base, joined.ws), proxy=None) as socket,
        ):
            socket.send(json.dumps({"type": "sync", "from": 0}))
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    message = json.loads(socket.recv(timeout=0.2))
                    if message["type"] == "ping":
                        time.sleep(delay_s)
                        socket.send(json.dumps({"type": "pong", "nonce": message["nonce"]}))

    thread = threading.Thread(target=answer_pings, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(10)
