"""A hosted table that plays nothing, for the tests of the context's wiring: the lobby,
the command's start and the context see a table made, joined, run and stopped, without a
journal or a clock."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any


class RecordingHost:
    """A HostedTable as the context sees it: it takes joins, runs until stopped, and
    remembers how it was made (``recording_host``)."""

    def __init__(self, spec: Any, **wiring: Any) -> None:
        self.spec, self.wiring, self.game = spec, wiring, spec.game
        self.seats = list(spec.seats)
        self.stopped = asyncio.Event()

    def join(self, seat: int, name: str, key: bytes) -> None:
        self.seats[seat] = dataclasses.replace(self.seats[seat], name=name, key=key)

    async def run(self) -> None:
        await self.stopped.wait()

    async def stop(self) -> None:
        self.stopped.set()


def recording_host(monkeypatch: Any) -> None:
    """Have the context host its tables with ``RecordingHost``."""
    monkeypatch.setattr("racing_demon.serve.context.HostedTable", RecordingHost)
