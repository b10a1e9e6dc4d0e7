"""Each seat's round trip, measured by the server alone (issue 35, point 6: "The server
measures each seat's round trip itself (pings stamped with its own clock) every <= 5 s
...; the lobby shows each seat's round trip before the deal and warns above the table's
limit; a table may set a maximum round trip"; docs/protocol.md §9, "Round trips")."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from racing_demon.serve.round_trips import PING_EVERY_S, SAMPLES_KEPT, RoundTrips

from .pinged import pinged_seat
from .player import LobbyError, api
from .server import needs_server, running_server

GAME = "0123456789abcdef0123456789abcdef"


def test_a_pong_is_a_sample_only_for_the_ping_outstanding() -> None:
    trips = RoundTrips()
    assert trips.median_ms(GAME, 0) is None
    assert trips.answer(GAME, 0, "0" * 32) is None  # never asked
    first = trips.ask(GAME, 0)
    second = trips.ask(GAME, 0)  # the first is no longer outstanding
    assert first != second
    assert trips.answer(GAME, 0, first) is None
    assert trips.answer(GAME, 1, second) is None  # another seat's nonce
    sample = trips.answer(GAME, 0, second)
    assert sample is not None and sample >= 0
    assert trips.answer(GAME, 0, second) is None  # answered once
    assert trips.median_ms(GAME, 0) == round(sample)


def test_the_round_trip_is_the_median_of_the_last_samples(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [100.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    trips = RoundTrips()
    for sample_ms in (900, *([10] * SAMPLES_KEPT), 40, 30):
        nonce = trips.ask(GAME, 2)
        clock[0] += sample_ms / 1000
        trips.answer(GAME, 2, nonce)
    # The 900 ms sample has left the window; of the last 8 (six 10s, 40, 30) the median.
    assert trips.median_ms(GAME, 2) == 10
    trips.forget(GAME)
    assert trips.median_ms(GAME, 2) is None


@needs_server
def test_the_lobby_lists_each_seat_s_round_trip_and_the_table_s_limit(tmp_path: Path) -> None:
    """A table made with a 50 ms limit; seat 1's client answers each ping 300 ms late, seat
    0's at once: within a few pings the lobby lists seat 1 near 300 ms, above the limit,
    and seat 0 below it."""
    with running_server(tmp_path) as server:
        body = {"name": "lag", "profile": "nertz", "seats": [{"kind": "person"}] * 3}
        with pytest.raises(LobbyError) as refused:
            api(server.base, "POST", "/api/tables", {**body, "max_rtt_ms": 5})
        assert refused.value.code == "BAD_REQUEST"
        game = api(server.base, "POST", "/api/tables", {**body, "max_rtt_ms": 50})["game"]
        with (
            pinged_seat(server.base, game, 0, "Quick", 0.0),
            pinged_seat(server.base, game, 1, "Slow", 0.3),
        ):
            deadline = time.monotonic() + 4 * PING_EVERY_S + 10
            while True:
                table = api(server.base, "GET", f"/api/tables/{game}")
                trips = [seat["rtt_ms"] for seat in table["seats"]]
                if None not in trips[:2] or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
    assert table["max_rtt_ms"] == 50
    quick, slow, free = trips
    assert free is None  # nobody there
    assert quick is not None and slow is not None, trips
    assert 300 <= slow < 300 + 1000 and slow > table["max_rtt_ms"], trips
    assert quick < slow, trips
