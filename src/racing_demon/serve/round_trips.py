"""Each seat's round trip, measured by the server alone (docs/protocol.md §9, "Round
trips"): ``RoundTrips``.

Every ``PING_EVERY_S`` a seat's connection is sent ``ping`` with a fresh random nonce, and
the time it was sent on the server's monotonic clock is kept; the client's ``pong`` naming
that nonce gives one sample, the time between the two on the same clock. No client time
enters it, and a client cannot answer a nonce before it has it: it can only look slower
than it is, never faster. The median of a seat's last ``SAMPLES_KEPT`` samples is its
round trip, shown in the lobby beside the table's limit (``DEFAULT_MAX_RTT_MS`` unless
the table sets one). The samples since a table's last ``lag`` record wait to be logged in
the next (``take_fresh``, ``serve.notes``).
"""

from __future__ import annotations

import secrets
import statistics
import time
from collections import deque
from typing import Final

PING_EVERY_S: Final = 2.0
SAMPLES_KEPT: Final = 8
FRESH_KEPT: Final = 64  # a lag record's most per seat (the log-record schema's bound)
LONGEST_MS: Final = 3_600_000  # a pong later than this is no sample (the schema's bound)
DEFAULT_MAX_RTT_MS: Final = 250  # the lobby warns above this, unless the table sets its own

_Seat = tuple[str, int]  # (game, seat)


class RoundTrips:
    """The outstanding ping and the last samples of every seat of every table."""

    def __init__(self) -> None:
        self._asked: dict[_Seat, tuple[str, float]] = {}
        self._samples: dict[_Seat, deque[float]] = {}
        self._fresh: dict[_Seat, deque[int]] = {}  # not logged yet, whole ms

    def ask(self, game: str, seat: int) -> str:
        """A new ping's nonce for ``seat`` of ``game`` (any earlier one unanswered is
        dropped: a late pong is no sample)."""
        nonce = secrets.token_hex(16)
        self._asked[game, seat] = (nonce, time.monotonic())
        return nonce

    def answer(self, game: str, seat: int, nonce: str) -> float | None:
        """The round trip in milliseconds that the pong ``nonce`` closes, kept as a sample;
        None when it names no ping outstanding for that seat, or one asked more than
        LONGEST_MS ago (no sample then: the ping is dropped)."""
        asked = self._asked.get((game, seat))
        if asked is None or asked[0] != nonce:
            return None
        del self._asked[game, seat]
        sample_ms = (time.monotonic() - asked[1]) * 1000
        if sample_ms > LONGEST_MS:
            return None
        self._samples.setdefault((game, seat), deque(maxlen=SAMPLES_KEPT)).append(sample_ms)
        self._fresh.setdefault((game, seat), deque(maxlen=FRESH_KEPT)).append(round(sample_ms))
        return sample_ms

    def take_fresh(self, game: str, seats: int) -> tuple[tuple[int, ...], ...]:
        """Each of the ``seats`` seats' samples of ``game`` since the last call, oldest
        first, in whole ms (at most FRESH_KEPT, the latest): what its next lag record logs."""
        return tuple(tuple(self._fresh.pop((game, seat), ())) for seat in range(seats))

    def hang_up(self, game: str, seat: int, nonce: str) -> None:
        """The connection that was sent the ping ``nonce`` closed: if that ping is still
        outstanding, it is no longer asked (a newer connection's own ping stays)."""
        asked = self._asked.get((game, seat))
        if asked is not None and asked[0] == nonce:
            del self._asked[game, seat]

    def median_ms(self, game: str, seat: int) -> int | None:
        """The seat's round trip: the median of its last samples, whole milliseconds; None
        before its first."""
        samples = self._samples.get((game, seat))
        return None if not samples else round(statistics.median(samples))

    def forget(self, game: str) -> None:
        """The table is finished or gone: nothing of it is kept."""
        for kept in (self._asked, self._samples, self._fresh):
            for key in [key for key in kept if key[0] == game]:
                del kept[key]
