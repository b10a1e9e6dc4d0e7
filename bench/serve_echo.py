"""What one WebSocket message costs the server's web stack: an echo through aiohttp.

    python bench/serve_echo.py [--connections 10] [--messages 2000] [--rounds 3]
                               [--json-out FILE]

The server is a child process (``--serve``): aiohttp's own server on 127.0.0.1, port 0,
one route ``/ws`` that parses each text message as JSON and answers it with one JSON
message, as the research's stand-in did (/work/shared/research/server-limits.md §2).
The client is this process: the ``websockets`` library, ``--connections`` connections,
each sending ``--messages`` messages of 200 bytes, the next as soon as the answer came
(one in flight per connection), no compression. Before and after each round the client
asks the server for its ``time.process_time()`` (user + system CPU of the server process,
threads included); a round's figure is that difference over the messages answered.

A figure is the median of the rounds (min-max beside it). The client runs on the same
cores, so the figure is the server's own CPU, not a throughput; the research measured
42-48 µs per message for aiohttp in this mode, 57-70 µs for ``websockets`` and 77-100 µs
for Starlette on uvicorn. Bounded: ``connections x messages x rounds`` messages.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from results import publish

_PAYLOAD = "x" * 160


async def _serve() -> None:
    from aiohttp import WSMsgType, web

    async def socket(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(compress=False)
        await ws.prepare(request)
        async for message in ws:
            if message.type is not WSMsgType.TEXT:
                break
            if message.data == "cpu":
                await ws.send_str(repr(time.process_time()))
                continue
            value = json.loads(message.data)
            await ws.send_str(json.dumps({"type": "receipt", "ref": value["ref"], "ok": True}))
        return ws

    app = web.Application()
    app.router.add_get("/ws", socket)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(runner.addresses[0][1], flush=True)
    await asyncio.Event().wait()


async def _round(url: str, connections: int, messages: int) -> dict[str, float]:
    from websockets.asyncio.client import connect

    sockets = [await connect(url, compression=None) for _ in range(connections)]
    control = sockets[0]

    async def cpu() -> float:
        await control.send("cpu")
        return float(await control.recv())

    async def talk(ws: Any, seat: int) -> None:
        for number in range(messages):
            # 200 bytes of JSON, as the research's client sent.
            text = json.dumps({"type": "submit", "ref": f"{seat}-{number}", "move": _PAYLOAD})
            await ws.send(text)
            await ws.recv()

    before, started = await cpu(), time.perf_counter()
    await asyncio.gather(*(talk(ws, seat) for seat, ws in enumerate(sockets)))
    after, wall = await cpu(), time.perf_counter() - started
    for ws in sockets:
        await ws.close()
    count = connections * messages
    return {"cpu_us_per_message": (after - before) / count * 1e6, "messages_per_s": count / wall}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--connections", type=int, default=10)
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json-out", type=Path)
    options = parser.parse_args(argv)
    if options.serve:
        asyncio.run(_serve())
        return 0
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        url = f"ws://127.0.0.1:{int(server.stdout.readline())}/ws"
        rounds = [
            asyncio.run(_round(url, options.connections, options.messages))
            for _ in range(options.rounds)
        ]
    finally:
        server.terminate()
        server.wait(timeout=10)
    cpu = [r["cpu_us_per_message"] for r in rounds]
    rate = [r["messages_per_s"] for r in rounds]
    publish(
        {
            "bench": "serve_echo",
            "python": platform.python_version(),
            "connections": options.connections,
            "messages_per_connection": options.messages,
            "rounds": options.rounds,
            "server_cpu_us_per_message": round(statistics.median(cpu), 1),
            "server_cpu_us_per_message_range": [round(min(cpu), 1), round(max(cpu), 1)],
            "messages_per_s": round(statistics.median(rate)),
        },
        options.json_out,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
