"""A table's outbox: whatever names a journaled line is delivered only once the journal has
made that line durable, in the order the table wrote it (design: "a per-table outbox task
awaits durable in order, then sends")."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from racing_demon.serve.protocol import ServeCode, ServeError
from racing_demon.serve.seats import TableJournal


@dataclass(slots=True)
class _Delivery:
    ticket: int | None  # None: nothing of its own to wait for, only what was queued before
    deliver: Callable[[], None]
    done: asyncio.Future[None] | None  # a submission waits on its receipt's


def _stopped() -> ServeError:
    return ServeError("the table stopped: its journal failed", ServeCode.SERVER_STOPPING)


class Outbox:
    """Deliveries waiting for the journal. ``run`` is the task that sends them; once the
    journal fails (``on_failure`` is told, once), nothing more is sent."""

    def __init__(self, journal: TableJournal, on_failure: Callable[[BaseException], None]) -> None:
        self._journal = journal
        self._on_failure = on_failure
        self._queue: asyncio.Queue[_Delivery] = asyncio.Queue()
        self.failure: BaseException | None = None

    @property
    def waiting(self) -> int:
        """Deliveries not sent yet."""
        return self._queue.qsize()

    def queue(
        self,
        journal: Callable[[], int],
        deliver: Callable[[], None],
        done: asyncio.Future[None] | None = None,
    ) -> None:
        """Journal a line now (``journal`` returns its ticket); ``deliver`` once it is
        durable, then ``done`` is set."""
        try:
            ticket = journal()
        except Exception as error:  # a failed or closed journal: nothing is acknowledged
            self._fail(error)
            if done is not None:
                done.set_exception(_stopped())
            return
        self._queue.put_nowait(_Delivery(ticket, deliver, done))

    def after(self, deliver: Callable[[], None], done: asyncio.Future[None]) -> None:
        """``deliver`` once everything queued before it is delivered (it journals nothing
        of its own), then ``done`` is set."""
        if self.failure is not None:
            done.set_exception(_stopped())
            return
        self._queue.put_nowait(_Delivery(None, deliver, done))

    async def run(self) -> None:
        while True:
            delivery = await self._queue.get()
            try:
                if self.failure is None:
                    if delivery.ticket is not None:
                        await self._journal.durable(delivery.ticket)
                    delivery.deliver()
                    if delivery.done is not None and not delivery.done.done():
                        delivery.done.set_result(None)
                elif delivery.done is not None and not delivery.done.done():
                    delivery.done.set_exception(_stopped())
            except Exception as error:
                self._fail(error)
                if delivery.done is not None and not delivery.done.done():
                    delivery.done.set_exception(_stopped())
            finally:
                self._queue.task_done()

    async def drained(self) -> None:
        """Once every delivery queued so far is sent (or dropped after a failure)."""
        await self._queue.join()

    def _fail(self, error: BaseException) -> None:
        if self.failure is None:
            self.failure = error
            self._on_failure(error)
