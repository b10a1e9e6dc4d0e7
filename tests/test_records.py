"""Typed records and the published JSON Schema agree (docs/log-format.md §6).

Every body the schema admits is read into its typed record and written back to the same
body, over the whole corpus and over records the table writes in random matches; and the
schema's fields of each kind are the typed value's fields, no more and no fewer.
"""

from __future__ import annotations

import ast
import json
import random
from collections.abc import Iterator
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from racing_demon.audit import ClaimCheck, HandAudit, SeatAudit
from racing_demon.audit_run import Audit
from racing_demon.evidence import (
    Entry,
    EvidenceFinding,
    EvidenceGathering,
    EvidenceReport,
    LogScan,
)
from racing_demon.evidence.copies import CopyComparison
from racing_demon.evidence.scan import Facts, Later
from racing_demon.game.flow import (
    HandEnd,
    HandStart,
    MatchEnd,
    MatchFlow,
    RecordKind,
    Seen,
    Stall,
    Submission,
)
from racing_demon.keys_run import KeyPair
from racing_demon.log.reader import RecordLine
from racing_demon.log.receipts import Receipt, ReceiptLine
from racing_demon.log.records import (
    Final,
    Genesis,
    Lag,
    Pause,
    Record,
    SeatEntry,
    Signatures,
    TournamentTag,
    parse_record,
    record_body,
)
from racing_demon.manual import Section, Topic
from racing_demon.profiles import BUILT_IN
from racing_demon.recover import Recovery
from racing_demon.schema import load_schema, record_errors
from racing_demon.sim.bots import BotProfile
from racing_demon.sim.simulate import SeatReport, Tally, _Arrival
from racing_demon.testing.randomplay import play_match
from racing_demon.tournament import matchpoints
from racing_demon.viewer.write import WrittenPage

from tampering import PLAYER_KEYS, SECRET, TABLE_KEY, one_hand

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT / "sample_games").rglob("*.jsonl")) + sorted(
    (ROOT / "tests" / "golden").rglob("*.jsonl")
)
CHAIN_FIELDS = {"game", "seq", "t_ms", "prev"}  # every record's place in the chain
IMPLIED_FIELDS = {"v", "kind"}  # the format version and the kind, from the record's class
# The log (format v1) names a seat index "player"; the typed values call it "seat".
LOG_NAMES = {"seat": "player"}
PAYLOADS: dict[RecordKind, type] = {
    RecordKind.GENESIS: Genesis,
    RecordKind.HAND_START: HandStart,
    RecordKind.STALL: Stall,
    RecordKind.HAND_END: HandEnd,
    RecordKind.FINAL: Final,
    RecordKind.PAUSE: Pause,
    RecordKind.LAG: Lag,
    **{
        kind: Submission
        for kind in (
            RecordKind.MOVE,
            RecordKind.TIE,
            RecordKind.CALL,
            RecordKind.AGREE,
            RecordKind.RESIGN,
            RecordKind.BOUNCE,
        )
    },
}


def _bodies(path: Path) -> Iterator[dict[str, Any]]:
    for raw in path.read_bytes().splitlines():
        try:
            value = json.loads(raw)
        except ValueError:
            continue  # the corpus holds torn and broken lines on purpose
        if not record_errors(value):
            yield value["body"]


def test_the_corpus_is_not_empty() -> None:
    assert len(CORPUS) > 20
    assert sum(1 for path in CORPUS for _ in _bodies(path)) > 5_000


@pytest.mark.parametrize("path", CORPUS, ids=lambda path: path.name)
def test_every_schema_valid_body_of_the_corpus_round_trips(path: Path) -> None:
    for body in _bodies(path):
        record = parse_record(body)
        assert record_body(record) == body
        assert record.kind == body["kind"]


def _typed_fields(payload: type) -> set[str]:
    names = set()
    for name in (field.name for field in fields(payload)):
        if name == "kind":
            continue  # a submission's kind is the body's "kind"
        if name == "end":  # the final record holds the match's end, flattened
            names |= {field.name for field in fields(MatchEnd)}
            continue
        names.add(LOG_NAMES.get(name, name))
    return names


def _schema_fields(kind: RecordKind) -> set[str]:
    definitions = load_schema("log-record")["$defs"]
    name = {
        RecordKind.BOUNCE: "bounce",
        RecordKind.GENESIS: "genesis",
        RecordKind.HAND_START: "hand_start",
        RecordKind.STALL: "stall",
        RecordKind.HAND_END: "hand_end",
        RecordKind.FINAL: "final",
        RecordKind.PAUSE: "pause",
        RecordKind.LAG: "lag",
    }.get(kind, "player")
    return set(definitions[name]["properties"])


@pytest.mark.parametrize("kind", list(RecordKind))
def test_the_schema_fields_of_each_kind_are_its_typed_fields(kind: RecordKind) -> None:
    typed = _typed_fields(PAYLOADS[kind]) | CHAIN_FIELDS | IMPLIED_FIELDS
    schema = _schema_fields(kind)
    if kind is not RecordKind.BOUNCE and PAYLOADS[kind] is Submission:
        typed.discard("reason")  # only a bounce carries the engine's refusal code
        typed.discard("lost_to")  # and the race it lost (format v4)
    if kind is RecordKind.GENESIS:
        typed.discard("prev")  # the chain starts at the genesis
    assert schema == typed


def test_the_schema_fields_of_sigs_are_the_typed_signatures_fields() -> None:
    """Issue 30, point 1: "typed signatures included, not a plain `sigs` dict": the typed
    value has every member the schema allows in ``sigs``, and only the table's is required."""
    sigs = load_schema("log-record")["properties"]["sigs"]
    assert sigs["required"] == ["table"]
    assert list(Signatures._fields) == ["table", "player", "players", "accepts"]
    assert list(Signatures._field_defaults) == ["player", "players", "accepts"]
    assert set(Signatures._fields) == set(sigs["properties"])


def test_a_genesis_lists_its_seats_with_every_schema_field() -> None:
    players = load_schema("log-record")["$defs"]["genesis"]["properties"]["players"]
    schema = set(players["items"]["properties"])
    assert schema == set(SeatEntry._fields)


# Slow (issue 29, item 27: the quick run stays under 3 CPU-minutes):
# ten whole matches played, a property run.
@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    profile=st.sampled_from(BUILT_IN),
    seats=st.integers(2, 4),
    keyed=st.booleans(),
)
def test_records_the_table_writes_round_trip(
    tmp_path_factory: pytest.TempPathFactory, seed: int, profile: str, seats: int, keyed: bool
) -> None:
    path = tmp_path_factory.mktemp("records") / "game.jsonl"
    play_match(
        path,
        one_hand(profile),
        TABLE_KEY,
        SECRET,
        [bytes([seat]) * 16 for seat in range(seats)],
        random.Random(seed).choice,
        player_keys=PLAYER_KEYS[:seats] if keyed else None,
    ).close()
    bodies = [json.loads(raw)["body"] for raw in path.read_bytes().splitlines()]
    assert bodies[-1]["kind"] == "final"
    assert [record_body(parse_record(body)) for body in bodies] == bodies


# -- built by name -----------------------------------------------------------------------

RECORDS_AND_EVENTS = [Record, Genesis, Final, HandStart, Submission, Stall, HandEnd, MatchEnd]
# What the record reader and the receipts file give besides (issue 30, points 1 and 5): a
# receipt is a frozen dataclass; a line's signatures and the line read as a record are
# named tuples built by name (one of each is made for every line the verifier reads).
BUILT_BY_NAME = {
    cls.__name__
    for cls in (
        *RECORDS_AND_EVENTS,
        Receipt,
        Seen,
        SeatEntry,
        TournamentTag,
        Signatures,
        RecordLine,
        ReceiptLine,
    )
}
# The upper floors (issue 30, point 5): the evidence's findings, the entries they compare
# and its report; the audit's rows; and every other value of three or more fields, two
# adjacent ones of one type, that was built by position. (The game's small values, Card,
# Move, Place, Seat, are built by position by design.)
UPPER_FLOORS: list[type] = [
    Entry,
    EvidenceFinding,
    LogScan,
    EvidenceReport,
    CopyComparison,
    EvidenceGathering,
    SeatAudit,
    HandAudit,
    ClaimCheck,
    Audit,
    Recovery,
    KeyPair,
    Topic,
    Section,
    BotProfile,
    SeatReport,
    Tally,
    _Arrival,
    matchpoints.Result,
    matchpoints.PackRecord,
    matchpoints.Entry,
    WrittenPage,
]
# The evidence's facts of a log line stay named tuples, built by name.
BUILT_BY_NAME |= {cls.__name__ for cls in (*UPPER_FLOORS, Facts, Later)}


@pytest.mark.parametrize("cls", [*RECORDS_AND_EVENTS, Receipt], ids=lambda cls: cls.__name__)
def test_records_and_events_take_their_fields_by_name(cls: type) -> None:
    """Issue 30, point 5: "Records and events are NamedTuples built by position (a bounce
    from seven positional arguments, two adjacent ints)". Each is now a frozen dataclass
    whose every field is keyword-only: built by position, it is refused."""
    assert is_dataclass(cls) and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert all(field.kw_only for field in fields(cls))
    with pytest.raises(TypeError, match="positional"):
        cls(*(None for _ in fields(cls)))


@pytest.mark.parametrize("cls", UPPER_FLOORS, ids=lambda cls: f"{cls.__module__}.{cls.__name__}")
def test_the_upper_floors_values_take_their_fields_by_name(cls: type) -> None:
    """Issue 30, point 5: "Use frozen dataclasses with keyword-only fields (or NamedTuples
    built by keyword)". An evidence finding was built from eight positional arguments, four
    of them None side by side; built by position, each of these is now refused."""
    assert is_dataclass(cls)
    assert all(field.kw_only for field in fields(cls) if field.init)
    with pytest.raises(TypeError, match="positional"):
        cls(*(None for field in fields(cls) if field.init))


def test_the_package_builds_every_record_event_and_part_by_name() -> None:
    """Issue 30, point 5: the genesis's parts and a client's ``Seen`` stay named tuples
    (other modules read them as pairs and rows) and the match flow one too; each call in
    the package that builds one names its fields."""
    positional = []
    for path in sorted((ROOT / "src" / "racing_demon").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in BUILT_BY_NAME | {MatchFlow.__name__}:
                positional.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    assert positional == []
