"""Log format v3 (docs/log-format.md §6, "Notes"): records the match does not see, a
``pause`` and a ``lag``, written by the table between the match's own, judged by the
verifier for their shape and seats only; every earlier log still verifies."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from racing_demon.game.flow import RecordKind
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.log.records import (
    FORMAT_VERSION,
    Lag,
    Pause,
    PauseCause,
    parse_record,
    record_body,
)
from racing_demon.replay import replay
from racing_demon.table import PlayerInfo, Table, TableCode, TableError
from racing_demon.testing.randomplay import play_match
from racing_demon.verify import Settings, Step, Verdict, VerifyCode, verify_log

from tampering import (
    PINNED,
    SECRET,
    TABLE_KEY,
    Value,
    as_format,
    assert_fails,
    first,
    one_hand,
    seal,
    values_of,
    verify_lines,
)

V2_VECTORS = sorted((Path(__file__).parent / "vectors" / "v2").glob("*.jsonl"))
V2_TABLE_KEY = Path(__file__).parent.parent / "sample_games" / "table.pub"
LAG = Lag(rtt_ms=((41, 38), (150,)))


def _noted(path: Path) -> Table:
    """A one-hand match whose table logs what a server's would beside it: a crash's pause
    after the first round, and every fifth round the seats' round trips."""
    rounds = 0

    def after_round(table: Table) -> None:
        nonlocal rounds
        rounds += 1
        if rounds == 1:
            table.note(Pause(cause=PauseCause.CRASH, down_ms=4_200), table.now)
        elif rounds % 5 == 0:
            table.note(LAG, table.now)

    return play_match(
        path,
        one_hand("peer2peer"),
        TABLE_KEY,
        SECRET,
        [bytes([seat]) * 16 for seat in range(2)],
        random.Random(5).choice,
        after_round=after_round,
    )


def _bodies(path: Path) -> list[Value]:
    return [json.loads(line)["body"] for line in path.read_bytes().splitlines()]


def test_a_table_writes_its_notes_and_they_verify(tmp_path: Path) -> None:
    """§6: "A note is no event of the match: the verifier checks its shape ... and the
    match goes on as if it were not there"; notes exist from format v3 on, so in the v4
    logs the table writes."""
    path = tmp_path / "noted.jsonl"
    table = _noted(path)
    assert table.finished
    bodies = _bodies(path)
    assert {body["v"] for body in bodies} == {FORMAT_VERSION} == {4}
    kinds = [body["kind"] for body in bodies]
    assert kinds.count("pause") == 1 and kinds.count("lag") >= 2
    pause = bodies[kinds.index("pause")]
    assert (pause["cause"], pause["down_ms"]) == ("crash", 4_200)
    assert bodies[kinds.index("lag")]["rtt_ms"] == [[41, 38], [150]]
    report = verify_log(path, PINNED)
    assert report.verdict is Verdict.VERIFIED, report.finding


def test_notes_read_and_write_back_the_same_body(tmp_path: Path) -> None:
    path = tmp_path / "noted.jsonl"
    _noted(path)
    for body in _bodies(path):
        if body["kind"] in ("pause", "lag"):
            assert record_body(parse_record(body)) == body


def test_a_replay_passes_over_notes_without_changing_the_table(tmp_path: Path) -> None:
    path = tmp_path / "noted.jsonl"
    _noted(path)
    before = None
    for snapshot in replay(path, SECRET):
        record = snapshot.record
        if record is not None and record.kind in (RecordKind.PAUSE, RecordKind.LAG):
            assert snapshot.flow == before
        before = snapshot.flow


def test_a_note_first_writes_what_the_clock_made_due(tmp_path: Path) -> None:
    """The peer2peer idle abandon is due five minutes after the last action: a note ten
    minutes later comes after the records that end the match, or not at all."""
    path = tmp_path / "idle.jsonl"
    with _table(path) as table:
        assert table.note(LAG, 1_000)
        assert not table.note(LAG, 10 * 60_000)  # the match was abandoned at 5 min 1 s
        assert table.finished
    kinds = [body["kind"] for body in _bodies(path)]
    assert kinds[-2:] == ["hand_end", "final"]
    assert kinds.count("lag") == 1
    assert verify_log(path, PINNED).verdict is Verdict.VERIFIED


def test_a_note_before_the_tables_clock_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    with _table(tmp_path / "early.jsonl") as table:
        table.advance(2_000)
        records = table.records
        with pytest.raises(TableError) as refused:
            table.note(LAG, 1_999)
        assert refused.value.code is TableCode.CLOCK_BACKWARDS
        assert table.records == records


def test_a_lag_record_for_another_number_of_seats_is_refused(tmp_path: Path) -> None:
    """§7, step 8: "a ``lag`` record must list one seat's round trips for each seat
    (LAG_SEATS)"."""
    values = values_of("short")
    at = first(values, "move")
    lag = {**values[at]["body"], "kind": "lag", "rtt_ms": [[40], [150], [9]]}
    for name in ("hand", "player", "n", "move", "seen"):
        lag.pop(name)
    _insert(values, at, lag)
    finding = assert_fails(
        verify_lines(tmp_path, seal(values)), Step.REPLAY, VerifyCode.LAG_SEATS, at + 1
    )
    assert (finding.expected, finding.found) == ("2", "3")


@pytest.mark.parametrize(
    ("note", "version"),
    [
        pytest.param({"kind": "pause", "cause": "crash", "down_ms": 5}, 2, id="pause-in-v2"),
        pytest.param({"kind": "lag", "rtt_ms": [[1], []]}, 1, id="lag-in-v1"),
        pytest.param({"kind": "pause", "cause": "nap", "down_ms": 5}, 3, id="unknown-cause"),
        pytest.param({"kind": "lag", "rtt_ms": [[-1], []]}, 3, id="negative-sample"),
        pytest.param({"kind": "lag", "rtt_ms": [[1], [2]], "seat": 0}, 3, id="extra-member"),
    ],
)
def test_a_note_of_the_wrong_shape_or_in_an_older_format_fails_the_schema(
    tmp_path: Path, note: Value, version: int
) -> None:
    """§6: notes exist from format v3 on; the schema gives each its members."""
    values = as_format(values_of("short"), version)
    at = first(values, "move")
    common = {name: values[at]["body"][name] for name in ("v", "game", "seq", "prev", "t_ms")}
    _insert(values, at, {**common, **note})
    assert_fails(verify_lines(tmp_path, seal(values)), Step.SCHEMA, VerifyCode.SCHEMA, at + 1)


@pytest.mark.parametrize("path", V2_VECTORS, ids=[path.stem for path in V2_VECTORS])
def test_every_format_v2_log_still_verifies(path: Path) -> None:
    """The golden logs racing-demon wrote in format v2, kept byte for byte."""
    assert {json.loads(line)["body"]["v"] for line in path.read_bytes().splitlines()} == {2}
    settings = Settings(table_key=raw_public_bytes(load_public_key(V2_TABLE_KEY)))
    report = verify_log(path, settings)
    assert report.verdict is Verdict.VERIFIED, report.finding


def _insert(values: list[Value], at: int, body: Value) -> None:
    """``body`` as the record at ``at`` (sealed later), the final record counting it."""
    values.insert(at, {"body": body, "sigs": {"table": ""}})
    values[-1]["body"]["records"] += 1


def _table(path: Path) -> Table:
    """A new unkeyed two-seat one-hand peer2peer table: nothing played yet."""
    players = [PlayerInfo("Ada", "red"), PlayerInfo("Bert", "blue")]
    entropy = [b"\x00" * 16, b"\x01" * 16]
    return Table.create(path, one_hand("peer2peer"), players, TABLE_KEY, SECRET, entropy)
