"""What a hosted table logs beside the match (``serve.notes``, docs/log-format.md §6,
"Notes"): the pause after the server was down, planned or not, and the seats' round trips.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from racing_demon.log.records import Lag, PauseCause
from racing_demon.profiles import builtin_document, custom_variant, rules_from_document
from racing_demon.serve import notes, round_trips
from racing_demon.serve.data import DataFolder
from racing_demon.serve.notes import LastStop, Notes, mark_stopped, take_last_stop
from racing_demon.serve.round_trips import RoundTrips
from racing_demon.table import PlayerInfo, Table
from racing_demon.verify import Settings, Verdict, verify_log

from .hosting import TABLE_KEY, run

GAME = "0123456789abcdef0123456789abcdef"


def _folder(tmp_path: Path) -> DataFolder:
    return DataFolder.open(tmp_path / "data")


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def test_a_clean_stop_is_marked_and_the_next_start_takes_the_mark(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    before = _now_ms()
    mark_stopped(folder.stopped_path, [GAME])
    assert oct(folder.stopped_path.stat().st_mode & 0o777) == "0o640"
    stop = take_last_stop(folder)
    assert stop.planned_at_ms is not None and before <= stop.planned_at_ms <= _now_ms()
    assert stop.planned == {GAME}
    assert not folder.stopped_path.exists()  # taken: a start that fails after it crashed
    assert take_last_stop(folder) == LastStop()  # no mark, and an empty journal


@pytest.mark.parametrize(
    "text", ["", "{", "[]", '{"stopped_at_ms": "soon", "games": []}', '{"stopped_at_ms": 1}']
)
def test_a_mark_that_cannot_be_read_is_no_mark_and_is_removed(tmp_path: Path, text: str) -> None:
    folder = _folder(tmp_path)
    folder.stopped_path.write_text(text)
    assert take_last_stop(folder).planned_at_ms is None
    assert not folder.stopped_path.exists()


def test_after_a_clean_stop_its_tables_log_a_planned_pause_from_the_stop() -> None:
    """docs/log-format.md §6: "`cause` is `planned` when the server had stopped cleanly,
    asked to, with a sound journal, and this table with it"."""
    stop = LastStop(planned_at_ms=_now_ms() - 3_000, planned=frozenset({GAME}))
    pause = Notes(RoundTrips(), stop).pause(GAME)
    assert pause.cause is PauseCause.PLANNED
    assert 3_000 <= pause.down_ms < 13_000
    other = Notes(RoundTrips(), stop).pause("f" * 32)  # it did not stop cleanly
    assert (other.cause, other.down_ms) == (PauseCause.CRASH, 0)


def test_without_the_mark_a_table_logs_a_crash_from_the_journals_last_write(
    tmp_path: Path,
) -> None:
    """docs/log-format.md §6: "for `crash`, from the journal's last write before the start
    (the last moment the server is known to have run; 0 when the journal held nothing)"."""
    folder = _folder(tmp_path)
    segment = folder.journal_dir / "000000000001.journal"
    segment.write_bytes(b"")
    last = time.time() - 7
    os.utime(segment, (last, last))
    pause = Notes(RoundTrips(), take_last_stop(folder)).pause(GAME)
    assert pause.cause is PauseCause.CRASH
    assert 7_000 <= pause.down_ms < 17_000


def _table(path: Path) -> Table:
    document = builtin_document("table")
    document["match"]["max_hands"] = 1
    players = [PlayerInfo("Ada", "red"), PlayerInfo("Bert", "blue")]
    rules = custom_variant(rules_from_document(document))
    return Table.create(path, rules, players, TABLE_KEY, bytes(32), [b"\0" * 16, b"\1" * 16])


def _answered(trips: RoundTrips, game: str, seat: int) -> None:
    assert trips.answer(game, seat, trips.ask(game, seat)) is not None


def test_the_round_trips_measured_are_logged_every_few_seconds_and_only_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35, point 6: "The server measures each seat's round trip itself (pings
    stamped with its own clock) every <= 5 s and logs the samples"."""
    monkeypatch.setattr(notes, "LAG_EVERY_S", 0.05)
    path = tmp_path / "game.jsonl"
    trips = RoundTrips()
    changed = asyncio.Event()
    with _table(path) as table:
        game = table.game
        _answered(trips, game, 0)  # before the match plays: dropped

        async def main() -> None:
            logging = asyncio.create_task(
                Notes(trips).log_round_trips(table, lambda: table.now, changed)
            )
            await asyncio.sleep(0.12)  # two periods with nothing measured: nothing logged
            assert table.records == 2
            _answered(trips, game, 1)
            _answered(trips, game, 1)
            while table.records == 2:
                await asyncio.sleep(0.01)
            assert changed.is_set()
            await asyncio.sleep(0.12)  # the samples were taken: not logged again
            logging.cancel()

        run(main)
        assert table.records == 3
    lag = json.loads(path.read_bytes().splitlines()[-1])["body"]
    assert lag["kind"] == "lag"
    assert [len(samples) for samples in lag["rtt_ms"]] == [0, 2]
    report = verify_log(path, Settings(table_key=TABLE_KEY.public_key().public_bytes_raw()))
    assert report.verdict is Verdict.UNFINISHED


def test_round_trips_kept_for_the_log_are_bounded_per_seat() -> None:
    trips = RoundTrips()
    for _ in range(100):
        _answered(trips, GAME, 0)
    fresh = trips.take_fresh(GAME, 2)
    assert [len(seat) for seat in fresh] == [64, 0]
    assert Lag(rtt_ms=fresh).rtt_ms == fresh
    assert trips.take_fresh(GAME, 2) == ((), ())


def test_a_pong_later_than_the_longest_round_trip_is_no_sample(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A lag record's sample is at most 3,600,000 ms (the schema's bound): a pong to a ping
    asked longer ago than that is none, so no note can break the schema."""
    trips = RoundTrips()
    nonce = trips.ask(GAME, 0)
    asked = time.monotonic()
    monkeypatch.setattr(round_trips.time, "monotonic", lambda: asked + 3_600.5)
    assert trips.answer(GAME, 0, nonce) is None
    assert trips.take_fresh(GAME, 2) == ((), ())


def test_a_closed_connection_hangs_up_its_own_ping_only() -> None:
    trips = RoundTrips()
    old = trips.ask(GAME, 0)
    trips.hang_up(GAME, 0, old)
    assert trips.answer(GAME, 0, old) is None  # no longer asked
    new = trips.ask(GAME, 0)
    trips.hang_up(GAME, 0, old)  # the replaced connection ends after its successor asked
    assert trips.answer(GAME, 0, new) is not None
