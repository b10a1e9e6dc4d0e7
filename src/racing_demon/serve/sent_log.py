"""The records of a served table's log that its outbox has sent (each durable), and where
each one's line starts in the log file: a peer that syncs from an earlier seq is sent the
ones it lacks from the file, read off the event loop, only the bytes it needs, a few
records at a time (never the whole log held for it at once)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from racing_demon.game.flow import RecordKind
from racing_demon.serve import protocol
from racing_demon.serve.seats import Peer

CATCH_UP_LINES: Final = 256  # records read from the log file, and queued, at a time


class SentLog:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._starts = [0]  # where each sent line starts, and where the last one ends

    @property
    def count(self) -> int:
        """How many records were sent: the seq of the next one."""
        return len(self._starts) - 1

    @property
    def size(self) -> int:
        """The bytes of the log file the sent records fill: its durable prefix."""
        return self._starts[-1]

    def sent(self, line: bytes) -> int:
        """Record that ``line`` (the next seq's) was sent; its seq."""
        self._starts.append(self._starts[-1] + len(line) + 1)
        return self.count - 1

    def sent_before(self, lines: Sequence[bytes]) -> None:
        """The log's first ``lines``, sent before the table was hosted again (durable)."""
        for line in lines:
            self.sent(line)

    def line(self, seq: int) -> bytes:
        """The line of sent record ``seq``, read from the log file at once: one line of a
        few hundred bytes, which the page cache holds (a catch-up's many go to a thread)."""
        (line,) = read_lines(self._path, self._starts[seq], self._starts[seq + 1])
        return line

    def fork(self, seq: int, held_hash: str) -> str | None:
        """What differs when a client says it holds record ``seq`` with chain hash
        ``held_hash`` (a line the log does not hold there, or no line), else None."""
        if seq >= self.count:
            return f"the client holds record {seq}; the log holds {self.count} records"
        logged = hashlib.sha256(self.line(seq)).hexdigest()
        if logged != held_hash:
            return f"record {seq}: the log's line has hash {logged}, the client's {held_hash}"
        return None

    async def catch_up(self, peer: Peer, from_seq: int) -> None:
        """Send ``peer`` every sent record from ``from_seq`` on, records sent meanwhile
        included: once it returns, the peer holds all ``count`` of them."""
        loop = asyncio.get_running_loop()
        done = from_seq
        while done < self.count:
            end = min(self.count, done + CATCH_UP_LINES)
            start_byte, end_byte = self._starts[done], self._starts[end]
            lines = await loop.run_in_executor(None, read_lines, self._path, start_byte, end_byte)
            peer.send_all([protocol.record(line) for line in lines])
            done = end


def read_lines(path: Path, start: int, end: int) -> list[bytes]:
    """The whole lines of the log file ``path`` between byte ``start`` and byte ``end``
    (a catch-up's, run in a worker thread)."""
    with path.open("rb") as file:
        file.seek(start)
        data = file.read(end - start)
    return data.split(b"\n")[:-1]


def hand_started(line: bytes) -> int | None:
    """The hand a ``hand_start`` line starts (None for any other record)."""
    if b"hand_start" not in line:  # most lines: no parse
        return None
    body = json.loads(line)["body"]
    return int(body["hand"]) if body["kind"] == RecordKind.HAND_START.value else None
