"""One seat that floods a `racing-demon serve` table, in a process of its own.

    python bench/flood_seat.py BASE FRAMES_PER_S

bench/serve_bench.py --flood runs it beside its clients. In their process the flood's
frames would queue behind 200 seats' work in one event loop (the bench's client is near a
whole core at 50 tables), and what that added to their latency would be counted against
the server. It makes a table of its own at BASE (``http://127.0.0.1:PORT``) beside an easy
server bot, joins seat 0, signs what a keyed seat signs, and once its pack came sends
FRAMES_PER_S well-formed submit frames a second, numbered past anything the table logged
(each is refused with a signed receipt: WRONG_NUMBER, or RATE_LIMITED past 10 a second).

Lines on standard output: ``dealt`` once its pack came; after ``stop`` on standard input,
one JSON object, what it sent and had answered between ``mark`` and ``stop`` (the measured
window), then it exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from serve.player import create_table, entropy_answer, genesis_answer, join

TICK_S = 0.01  # frames go out in a burst each tick, FRAMES_PER_S x TICK_S of them


class Flooder:
    """The flooding seat: what it sent and what came back, in all and since ``mark``."""

    def __init__(self, base: str, rate: float) -> None:
        self.base, self.rate = base, rate
        self.sent = self.receipts = self.errors = 0
        self.reasons: Counter[str] = Counter()
        self.dealt = asyncio.Event()  # its pack came: it floods from then on
        self._marked: tuple[int, int, int, Counter[str]] = (0, 0, 0, Counter())
        self.closed_early = False  # the server ended its connection before it was told to stop

    def mark(self) -> None:
        self._marked = (self.sent, self.receipts, self.errors, Counter(self.reasons))

    def since_mark(self) -> dict[str, Any]:
        sent, receipts, errors, reasons = self._marked
        return {
            "sent": self.sent - sent,
            "receipts": self.receipts - receipts,
            "errors": self.errors - errors,
            "reasons": dict(self.reasons - reasons),
            "closed_early": self.closed_early,
        }

    async def run(self, stop: asyncio.Event) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            await self._flood(stop)
        except ConnectionClosed:
            # After stop, the close handshake may wait behind frames the server has not
            # read yet, and the server may end the connection then: that is no failure.
            self.closed_early = not stop.is_set()

    async def _flood(self, stop: asyncio.Event) -> None:
        from websockets.asyncio.client import connect

        game = await asyncio.to_thread(
            create_table,
            self.base,
            [{"kind": "person"}, {"kind": "bot", "bot": "easy"}],
            name="flood",
            profile="nertz",
        )
        seat = await asyncio.to_thread(join, self.base, game, 0, "flooder")
        url = "ws" + self.base.removeprefix("http") + f"/ws/{game}?seat=0&token={seat.token}"
        async with connect(url, proxy=None, max_size=1 << 22) as socket:
            await socket.send(json.dumps({"type": "sync", "from": 0}))
            reader = asyncio.create_task(self._read(socket, game, seat.key))
            await self.dealt.wait()
            number = 0
            while not stop.is_set():
                started = time.monotonic()
                for _ in range(round(self.rate * TICK_S)):
                    frame = {
                        "type": "submit",
                        "ref": f"f{number}",
                        "n": 1_000_000 + number,
                        "move": "0 agree",
                        "seen": {"seq": 0, "hash": "0" * 64},
                        "signature": "0" * 128,
                    }
                    await socket.send(json.dumps(frame))  # waits while the server reads slower
                    self.sent += 1
                    number += 1
                await asyncio.sleep(max(0.0, TICK_S - (time.monotonic() - started)))
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)

    async def _read(self, socket: Any, game: str, key: Any) -> None:
        """Answers the start as the test client does (its checked answers: the format each
        statement is signed in is theirs to know), then counts what answers the flood."""
        from websockets.exceptions import ConnectionClosed

        table_key, commitment, entropy = b"", "", ""
        with contextlib.suppress(ConnectionClosed):
            async for text in socket:
                message = json.loads(text)
                kind = message["type"]
                if kind == "welcome":
                    table_key = bytes.fromhex(message["table_key"])
                elif kind == "commitment":
                    commitment = message["commitment"]
                    entropy = entropy_answer(
                        key,
                        message["statement"],
                        game=game,
                        seat=0,
                        commitment=commitment,
                        answered={},
                    )
                    await socket.send(json.dumps({"type": "entropy", "signature": entropy}))
                elif kind == "genesis":
                    signature = genesis_answer(
                        key,
                        message["body"],
                        game=game,
                        seat=0,
                        commitment=commitment,
                        entropy=entropy,
                        rules_digest=None,
                        table_key=table_key,
                    )
                    await socket.send(json.dumps({"type": "cosign", "signature": signature}))
                elif kind == "pack":
                    self.dealt.set()
                elif kind == "receipt":
                    self.receipts += 1
                    reason = json.loads(message["receipt"])["body"].get("reason", "-")
                    self.reasons[reason] += 1
                elif kind == "error":
                    self.errors += 1
                    self.reasons[f"error {message.get('code')}"] += 1


async def main(base: str, rate: float) -> None:
    flooder, stop = Flooder(base, rate), asyncio.Event()
    flooding = asyncio.create_task(flooder.run(stop))
    dealt = asyncio.create_task(flooder.dealt.wait())
    await asyncio.wait([flooding, dealt], return_when=asyncio.FIRST_COMPLETED)
    if flooding.done():
        flooding.result()  # why it ended before its table dealt
        raise SystemExit("the flooding seat's connection ended before its table dealt")
    print("dealt", flush=True)
    while (line := await asyncio.to_thread(sys.stdin.readline)) not in ("", "stop\n"):
        if line == "mark\n":
            flooder.mark()
    stop.set()
    print(json.dumps(flooder.since_mark()), flush=True)  # before the socket's close handshake
    await flooding


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], float(sys.argv[2])))
