"""Strict log reading: one case per refusal, properties over hostile bytes, bounded memory."""

from __future__ import annotations

import io
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from racing_demon.game.flow import RecordKind, Submission
from racing_demon.log.canonical import MAX_SAFE_INTEGER, canonical_bytes
from racing_demon.log.reader import (
    DEFAULT_LIMITS,
    Limits,
    Line,
    ReadCode,
    ReadError,
    RecordLine,
    SchemaError,
    iter_raw_lines,
    parse_line,
    parse_read_line,
    read_canonical_line,
    read_lines,
    read_record,
)
from racing_demon.log.records import Signatures, body_bytes, line_bytes, parse_record
from racing_demon.verify import step05_signatures
from racing_demon.verify.report import StepFailed, VerifyCode

GOOD = b'{"seq":1}\n'
DEEP = 100_000
ROOMY = Limits(max_line_bytes=4 * 1024 * 1024, max_file_bytes=8 * 1024 * 1024)


def second(line: bytes) -> bytes:
    """A file whose line 2 is ``line``, so that each case also checks the line number."""
    return GOOD + line + b"\n"


def empty_lists(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def read_all(data: bytes, limits: Limits = DEFAULT_LIMITS) -> list[Line]:
    return list(read_lines(io.BytesIO(data), limits))


CASES = [
    # Framing.
    pytest.param(b"\xef\xbb\xbf" + GOOD, DEFAULT_LIMITS, ReadCode.BOM, 1, id="utf8-bom"),
    pytest.param(GOOD.replace(b"\n", b"\r\n"), DEFAULT_LIMITS, ReadCode.CR, 1, id="crlf"),
    pytest.param(second(b'{"a":1}\r{"b":2}'), DEFAULT_LIMITS, ReadCode.CR, 2, id="bare-cr"),
    pytest.param(GOOD + b"\n" + GOOD, DEFAULT_LIMITS, ReadCode.EMPTY_LINE, 2, id="empty-line"),
    pytest.param(second(b" \t "), DEFAULT_LIMITS, ReadCode.EMPTY_LINE, 2, id="whitespace-line"),
    pytest.param(GOOD + b'{"seq":2}', DEFAULT_LIMITS, ReadCode.TORN_LINE, 2, id="torn-line"),
    pytest.param(GOOD + b'{"se', DEFAULT_LIMITS, ReadCode.TORN_LINE, 2, id="torn-mid-key"),
    pytest.param(
        second(b'{"a":"' + b"x" * 10 + b'"}'),
        Limits(max_line_bytes=15),
        ReadCode.LINE_TOO_LONG,
        2,
        id="line-too-long",
    ),
    pytest.param(
        GOOD * 5, Limits(max_file_bytes=len(GOOD) * 3), ReadCode.FILE_TOO_LARGE, 4, id="file-size"
    ),
    pytest.param(GOOD * 4, Limits(max_records=3), ReadCode.TOO_MANY_RECORDS, 4, id="too-many"),
    # Bytes and encoding.
    pytest.param(second(b'{"a":"\x00"}'), DEFAULT_LIMITS, ReadCode.NUL, 2, id="nul-in-string"),
    pytest.param(second(b'{"a":1}\x00'), DEFAULT_LIMITS, ReadCode.NUL, 2, id="nul-after-value"),
    pytest.param(second(b'{"a":"\xc0\xaf"}'), DEFAULT_LIMITS, ReadCode.NOT_UTF8, 2, id="overlong"),
    pytest.param(
        second(b'{"a":"\xed\xa0\x80"}'), DEFAULT_LIMITS, ReadCode.NOT_UTF8, 2, id="surrogate"
    ),
    pytest.param(second(b'{"a":"\xff"}'), DEFAULT_LIMITS, ReadCode.NOT_UTF8, 2, id="stray-ff"),
    pytest.param(second(b'{"a":"\xc3"}'), DEFAULT_LIMITS, ReadCode.NOT_UTF8, 2, id="truncated"),
    # Syntax.
    pytest.param(second(b'{"a":1} x'), DEFAULT_LIMITS, ReadCode.BAD_JSON, 2, id="trailing"),
    pytest.param(second(b'{"a":1}{"b":2}'), DEFAULT_LIMITS, ReadCode.BAD_JSON, 2, id="two-values"),
    pytest.param(second(b'{"a":}'), DEFAULT_LIMITS, ReadCode.BAD_JSON, 2, id="missing-value"),
    pytest.param(second(b'{"a":1,}'), DEFAULT_LIMITS, ReadCode.BAD_JSON, 2, id="trailing-comma"),
    pytest.param(second(b"{'a':1}"), DEFAULT_LIMITS, ReadCode.BAD_JSON, 2, id="single-quotes"),
    pytest.param(second(b'{"a":01}'), DEFAULT_LIMITS, ReadCode.BAD_JSON, 2, id="leading-zero"),
    pytest.param(second(b'{"a":"\x01"}'), DEFAULT_LIMITS, ReadCode.BAD_JSON, 2, id="raw-control"),
    pytest.param(second(b'{"a":"\\q"}'), DEFAULT_LIMITS, ReadCode.BAD_JSON, 2, id="bad-escape"),
    pytest.param(second(b'{"a":[1'), DEFAULT_LIMITS, ReadCode.BAD_JSON, 2, id="unterminated"),
    pytest.param(second(b"{\x0c}"), DEFAULT_LIMITS, ReadCode.BAD_JSON, 2, id="form-feed-space"),
    # Keys and numbers.
    pytest.param(second(b'{"a":1,"a":2}'), DEFAULT_LIMITS, ReadCode.DUPLICATE_KEY, 2, id="dup-1"),
    pytest.param(
        second(b'{"a":{"b":{"c":1,"c":1}}}'), DEFAULT_LIMITS, ReadCode.DUPLICATE_KEY, 2, id="dup-3"
    ),
    pytest.param(
        second(b'{"a":1,"\\u0061":2}'), DEFAULT_LIMITS, ReadCode.DUPLICATE_KEY, 2, id="dup-escaped"
    ),
    pytest.param(second(b'{"a":NaN}'), DEFAULT_LIMITS, ReadCode.NAN_OR_INFINITY, 2, id="nan"),
    pytest.param(second(b'{"a":Infinity}'), DEFAULT_LIMITS, ReadCode.NAN_OR_INFINITY, 2, id="inf"),
    pytest.param(
        second(b'{"a":-Infinity}'), DEFAULT_LIMITS, ReadCode.NAN_OR_INFINITY, 2, id="minus-inf"
    ),
    pytest.param(second(b'{"a":1.0}'), DEFAULT_LIMITS, ReadCode.FLOAT, 2, id="one-point-zero"),
    pytest.param(second(b'{"a":1e5}'), DEFAULT_LIMITS, ReadCode.FLOAT, 2, id="exponent"),
    pytest.param(second(b'{"a":1E+5}'), DEFAULT_LIMITS, ReadCode.FLOAT, 2, id="exponent-upper"),
    pytest.param(second(b'{"a":-0.0}'), DEFAULT_LIMITS, ReadCode.FLOAT, 2, id="minus-zero-float"),
    pytest.param(second(b'{"a":-0}'), DEFAULT_LIMITS, ReadCode.NEGATIVE_ZERO, 2, id="minus-zero"),
    pytest.param(
        second(b'{"a":9007199254740992}'), DEFAULT_LIMITS, ReadCode.INT_RANGE, 2, id="2**53"
    ),
    pytest.param(
        second(b'{"a":-9007199254740992}'), DEFAULT_LIMITS, ReadCode.INT_RANGE, 2, id="-2**53"
    ),
    pytest.param(
        second(b'{"a":' + b"9" * 5000 + b"}"), DEFAULT_LIMITS, ReadCode.INT_RANGE, 2, id="5000-dig"
    ),
    pytest.param(
        second(b'{"a":-' + b"1" * 1_000_000 + b"}"), ROOMY, ReadCode.INT_RANGE, 2, id="million-dig"
    ),
    # Depth and shape.
    pytest.param(
        second(b'{"a":' + b"[" * DEEP + b"]" * DEEP + b"}"),
        ROOMY,
        ReadCode.TOO_DEEP,
        2,
        id="deep-arrays",
    ),
    pytest.param(second(b'{"a":' + b"[" * DEEP), ROOMY, ReadCode.TOO_DEEP, 2, id="deep-unclosed"),
    pytest.param(
        second(b'{"a":' * DEEP + b"1" + b"}" * DEEP), ROOMY, ReadCode.TOO_DEEP, 2, id="deep-objects"
    ),
    pytest.param(
        second(b'{"a":' + b"[" * 32 + b"]" * 32 + b"}"),
        DEFAULT_LIMITS,
        ReadCode.TOO_DEEP,
        2,
        id="depth-33",
    ),
    pytest.param(second(b"[1]"), DEFAULT_LIMITS, ReadCode.NOT_OBJECT, 2, id="top-array"),
    pytest.param(second(b'"s"'), DEFAULT_LIMITS, ReadCode.NOT_OBJECT, 2, id="top-string"),
    pytest.param(second(b"12"), DEFAULT_LIMITS, ReadCode.NOT_OBJECT, 2, id="top-number"),
    pytest.param(second(b"null"), DEFAULT_LIMITS, ReadCode.NOT_OBJECT, 2, id="top-null"),
    # Valid JSON, not canonical.
    pytest.param(second(b'{"a": 1}'), DEFAULT_LIMITS, ReadCode.NOT_CANONICAL, 2, id="space"),
    pytest.param(second(b' {"a":1}'), DEFAULT_LIMITS, ReadCode.NOT_CANONICAL, 2, id="lead-space"),
    pytest.param(second(b'{"a":1}\t'), DEFAULT_LIMITS, ReadCode.NOT_CANONICAL, 2, id="trail-tab"),
    pytest.param(second(b'{"b":1,"a":2}'), DEFAULT_LIMITS, ReadCode.NOT_CANONICAL, 2, id="order"),
    pytest.param(second(b'{"a":"\\u0041"}'), DEFAULT_LIMITS, ReadCode.NOT_CANONICAL, 2, id="u0041"),
    pytest.param(second(b'{"a":"\\/"}'), DEFAULT_LIMITS, ReadCode.NOT_CANONICAL, 2, id="solidus"),
    pytest.param(
        second(b'{"a":"\\u00e9"}'), DEFAULT_LIMITS, ReadCode.NOT_CANONICAL, 2, id="escaped-e-acute"
    ),
    pytest.param(
        second(b'{"a":"\\u001F"}'), DEFAULT_LIMITS, ReadCode.NOT_CANONICAL, 2, id="uppercase-hex"
    ),
    pytest.param(
        second(b'{"a":"\\u2028"}'), DEFAULT_LIMITS, ReadCode.NOT_CANONICAL, 2, id="escaped-u2028"
    ),
    pytest.param(
        second(b'{"\xc3\xa9":1}'), DEFAULT_LIMITS, ReadCode.NOT_CANONICAL, 2, id="non-ascii-key"
    ),
    pytest.param(
        second(b'{"a":"\\ud800"}'), DEFAULT_LIMITS, ReadCode.NOT_CANONICAL, 2, id="lone-surrogate"
    ),
]


@pytest.mark.parametrize(("data", "limits", "code", "line"), CASES)
def test_refused_with_code_and_line(data: bytes, limits: Limits, code: ReadCode, line: int) -> None:
    with pytest.raises(ReadError) as caught:
        read_all(data, limits)
    assert (caught.value.code, caught.value.line) == (code, line), str(caught.value)


ACCEPTED = [
    pytest.param(b"", DEFAULT_LIMITS, [], id="empty-file"),
    pytest.param(GOOD, DEFAULT_LIMITS, [{"seq": 1}], id="one-line"),
    pytest.param(b"{}\n", DEFAULT_LIMITS, [{}], id="empty-object"),
    pytest.param(
        b'{"a":9007199254740991,"b":-9007199254740991,"c":0}\n',
        DEFAULT_LIMITS,
        [{"a": MAX_SAFE_INTEGER, "b": -MAX_SAFE_INTEGER, "c": 0}],
        id="safe-integer-bounds",
    ),
    pytest.param(
        b'{"a":"\xe2\x80\xa8\xf0\x9f\x98\x80","b":"\\u001f\\n"}\n',
        DEFAULT_LIMITS,
        [{"a": "\u2028\U0001f600", "b": "\x1f\n"}],
        id="unicode-raw-controls-escaped",
    ),
    pytest.param(
        b'{"a":"' + b"[{" * 100 + b'\\"[{"}\n',
        DEFAULT_LIMITS,
        [{"a": "[{" * 100 + '"[{'}],
        id="brackets-in-strings-are-not-depth",
    ),
    pytest.param(
        b'{"a":' + b"[" * 31 + b"]" * 31 + b"}\n",
        DEFAULT_LIMITS,
        [{"a": empty_lists(31)}],
        id="depth-32",
    ),
    pytest.param(
        GOOD * 3, Limits(max_records=3, max_file_bytes=len(GOOD) * 3), [{"seq": 1}] * 3, id="at-max"
    ),
    pytest.param(
        b'{"a":"xxxxxxxx"}\n', Limits(max_line_bytes=16), [{"a": "xxxxxxxx"}], id="at-max-line"
    ),
]


@pytest.mark.parametrize(("data", "limits", "values"), ACCEPTED)
def test_accepted(data: bytes, limits: Limits, values: list[dict[str, Any]]) -> None:
    lines = read_all(data, limits)
    assert [line.value for line in lines] == values
    assert [line.number for line in lines] == list(range(1, len(values) + 1))
    assert b"".join(line.raw + b"\n" for line in lines) == data


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"a":1,"a":2}', 'duplicate key "a" in $'),
        (b'{"body":{"seq":1,"seq":2}}', 'duplicate key "seq" in $.body'),
        (b'{"a":[0,{"x y":{"c":1,"c":1}}]}', 'duplicate key "c" in $.a[1]["x y"]'),
        # json closes the inner object first, so its duplicate is the one reported.
        (b'{"a":{"b":1,"b":2},"a":3}', 'duplicate key "b" in $.a'),
        # Found before the trailing garbage is reached.
        (b'{"a":{"b":1,"b":2}} x', 'duplicate key "b" in $.a'),
        # A syntax error after the object leaves no path to name.
        (b'{"a":{"b":1,"b":2} x', 'duplicate key "b"'),
    ],
)
def test_duplicate_key_names_the_path(raw: bytes, message: str) -> None:
    with pytest.raises(ReadError) as caught:
        parse_line(7, raw)
    assert caught.value.code is ReadCode.DUPLICATE_KEY
    assert str(caught.value) == f"line 7: DUPLICATE_KEY: {message}"


@pytest.mark.parametrize(
    ("raw", "code", "message"),
    [
        (b'{"a":' + b"9" * 5000 + b"}", ReadCode.INT_RANGE, "integer of 5000 characters"),
        (b'{"a":"\xc0\xaf"}', ReadCode.NOT_UTF8, "invalid UTF-8 at byte 6"),
        (b'{"a":1} x', ReadCode.BAD_JSON, "Extra data at character 8"),
        (b"[]", ReadCode.NOT_OBJECT, "top level is an array"),
        (b"true", ReadCode.NOT_OBJECT, "top level is a boolean"),
    ],
)
def test_parse_messages(raw: bytes, code: ReadCode, message: str) -> None:
    with pytest.raises(ReadError) as caught:
        parse_line(3, raw)
    assert caught.value.code is code
    assert message in caught.value.message


def test_not_canonical_messages_point_at_the_difference() -> None:
    with pytest.raises(ReadError) as caught:
        read_canonical_line(4, b'{"b":1, "a":2}')
    assert str(caught.value) == (
        "line 4: NOT_CANONICAL: not in canonical form from byte 2: "
        'expected b\'a":2,"b":1}\', found b\'b":1, "a":2}\''
    )
    with pytest.raises(ReadError) as caught:
        read_canonical_line(4, b'{"a":{"\\u00e9":1}}')
    assert caught.value.message == (
        "outside the data model at $.a: KEY_NOT_PRINTABLE_ASCII: object key must be printable "
        'ASCII, got "\\u00e9"'
    )


@pytest.mark.parametrize("read", [parse_line, parse_read_line, read_canonical_line])
def test_parser_recursion_beyond_a_raised_depth_limit_is_bad_json(
    read: Callable[[int, bytes, Limits], object],
) -> None:
    raw = b'{"a":' + b"[" * DEEP + b"]" * DEEP + b"}"
    with pytest.raises(ReadError) as caught:
        read(1, raw, Limits(max_depth=2 * DEEP))
    assert (caught.value.code, caught.value.message) == (
        ReadCode.BAD_JSON,
        "JSON parser failed: RecursionError",
    )


def test_an_over_long_line_is_not_read_in_full() -> None:
    stream = io.BytesIO(b"x" * 1_000_000 + b"\n")
    with pytest.raises(ReadError, match="LINE_TOO_LONG"):
        list(iter_raw_lines(stream, Limits(max_line_bytes=100)))
    assert stream.tell() == 101


def test_read_error_text() -> None:
    error = ReadError(ReadCode.DUPLICATE_KEY, 7, 'duplicate key "seq" in $.body')
    assert str(error) == 'line 7: DUPLICATE_KEY: duplicate key "seq" in $.body'
    assert str(ReadError(ReadCode.FILE_TOO_LARGE, None, "big")) == "FILE_TOO_LARGE: big"


@pytest.mark.parametrize("name", ["max_file_bytes", "max_line_bytes", "max_records", "max_depth"])
def test_limits_below_one_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match=f"Limits.{name} must be at least 1"):
        Limits(**{name: 0})


# Properties over hostile bytes. Small limits so that the limit checks are reached too.
SMALL = Limits(max_file_bytes=600, max_line_bytes=120, max_records=6, max_depth=4)

keys = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=4)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.text(max_size=6)
)
records = st.dictionaries(
    keys,
    st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=3)
        ),
        max_leaves=8,
    ),
    max_size=4,
)


INSERTS = [b"\n", b"\r", b" ", b"[", b"{", b'"', b"\\", b"-0", b".5", b"e9", b"\xc0\xaf", b"\x00"]


def read_or_refuse(data: bytes, limits: Limits) -> list[Line] | ReadError:
    """The Lines read, or the ReadError; any other exception fails the test."""
    try:
        lines = read_all(data, limits)
    except ReadError as error:
        assert isinstance(error.code, ReadCode)
        assert error.line is not None
        assert 1 <= error.line <= data.count(b"\n") + 1
        return error
    for line in lines:
        assert canonical_bytes(line.value) == line.raw
    return lines


@given(st.binary(max_size=700), st.sampled_from([DEFAULT_LIMITS, SMALL]))
def test_arbitrary_bytes_read_or_refuse(data: bytes, limits: Limits) -> None:
    read_or_refuse(data, limits)


@given(st.lists(records, min_size=1, max_size=5), st.data())
def test_mutated_logs_read_or_refuse(values: list[dict[str, Any]], data: st.DataObject) -> None:
    log = bytearray(b"".join(canonical_bytes(value) + b"\n" for value in values))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(log)))
        mutation = data.draw(st.sampled_from(["flip", "insert", "delete", "truncate"]))
        if mutation == "flip" and at < len(log):
            log[at] ^= 1 << data.draw(st.integers(0, 7))
        elif mutation == "insert":
            log[at:at] = data.draw(st.binary(min_size=1, max_size=3) | st.sampled_from(INSERTS))
        elif mutation == "delete":
            del log[at : at + data.draw(st.integers(1, 3))]
        else:
            del log[at:]
    read_or_refuse(bytes(log), data.draw(st.sampled_from([DEFAULT_LIMITS, SMALL])))


@given(st.lists(records, max_size=5))
def test_canonical_logs_round_trip(values: list[dict[str, Any]]) -> None:
    data = b"".join(canonical_bytes(value) + b"\n" for value in values)
    assert [line.value for line in read_all(data)] == values


# Streaming: peak memory must not grow with the number of lines.


def peak_bytes_reading(path: Path) -> int:
    with path.open("rb") as stream:
        tracemalloc.start()
        try:
            count = sum(1 for _ in read_lines(stream))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert count == int(path.stem)
    return peak


@pytest.mark.slow
def test_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    peaks = []
    for count in (20_000, 200_000):
        path = tmp_path / f"{count}"
        with path.open("wb") as out:
            out.writelines(b'{"n":%d}\n' % n for n in range(count))
        peaks.append(peak_bytes_reading(path))
    small, large = peaks
    # Reading the whole file at once would peak at over 1 MB for the larger one.
    assert large < 2 * small + 64 * 1024, peaks


def test_a_body_is_cut_from_its_line_as_its_canonical_bytes() -> None:
    # What the table signs is the body's canonical bytes; the verifier cuts them from the line.
    for path in sorted((Path(__file__).parent / "golden" / "logs").glob("*.jsonl")):
        for line in read_lines(io.BytesIO(path.read_bytes())):
            assert body_bytes(line.raw) == canonical_bytes(line.value["body"])
    # A body may hold a "sigs" member of its own (a rules document can): the last one counts.
    body = {"kind": "genesis", "rules": {"a": 1, "sigs": {"b": 2}}, "x": ',"sigs":'}
    line = line_bytes(body, {"table": "ab" * 64})
    assert body_bytes(line) == canonical_bytes(body)


# (4) Records: the one place a line of a log becomes its typed record and signatures.

NERTZ = Path(__file__).resolve().parent / "golden" / "logs" / "nertz-4p-signed.jsonl"


def _record_lines(path: Path) -> list[RecordLine]:
    with path.open("rb") as stream:
        return [read_record(line) for line in read_lines(stream)]


def test_a_record_line_carries_typed_signatures_as_the_format_defines_them() -> None:
    """Issue 30, point 1: "One record reader (typed signatures included, not a plain `sigs`
    dict)". Every line's ``sigs`` are read once into ``Signatures``: the table's on every
    line, the players' co-signatures on the genesis, a keyed seat's on its submissions
    (docs/log-format.md §6)."""
    lines = _record_lines(NERTZ)
    for read in lines:
        assert isinstance(read.sigs, Signatures)
        value = read_canonical_line(read.number, read.raw).value
        assert read.record == parse_record(value["body"])
        sigs = value["sigs"]
        assert read.sigs.table == sigs["table"]
        assert read.sigs.player == sigs.get("player")
        assert read.sigs.players == (tuple(sigs["players"]) if "players" in sigs else None)
        assert read.sigs.accepts == (tuple(sigs["accepts"]) if "accepts" in sigs else None)
    genesis, *middle, final = lines
    assert genesis.sigs.players is not None and len(genesis.sigs.players) == 4
    assert all(read.sigs.players is None for read in [*middle, final])
    assert all(
        (read.sigs.player is not None) == isinstance(read.record.payload, Submission)
        for read in middle
    )


def test_a_line_off_the_record_schema_is_refused_with_every_problem() -> None:
    raw = line_bytes({"kind": "stall", "seq": -1}, {"table": "zz"})
    with pytest.raises(SchemaError) as refused:
        read_record(read_canonical_line(3, raw))
    assert refused.value.line == 3
    assert len(refused.value.problems) > 1
    assert all(problem.startswith("$") for problem in refused.value.problems)


def _without_player_signature(read: RecordLine) -> RecordLine:
    return read._replace(sigs=read.sigs._replace(player=None))


def test_the_signature_step_reads_the_typed_signatures_not_the_json() -> None:
    """Issue 30, point 1: the verifier's steps read the record reader's typed signatures.
    A keyed seat's move whose typed ``player`` signature is taken away (its bytes keep it)
    is refused as unsigned: step 5 judges what the reader typed, not a dict of its own."""
    lines = _record_lines(NERTZ)
    keys: step05_signatures.PlayerKeys = ()
    submissions: dict[int, int] = {}
    for read in lines:
        payload = read.record.payload
        if isinstance(payload, Submission) and read.record.kind is RecordKind.MOVE:
            with pytest.raises(StepFailed) as failed:
                step05_signatures.check_signatures(
                    _without_player_signature(read),
                    table_key=None,
                    fast=False,
                    player_keys=keys,
                    next_n=submissions.get(payload.seat, 0),
                )
            assert failed.value.finding.code is VerifyCode.MISSING_PLAYER_SIGNATURE
            assert failed.value.finding.line == read.number
            return
        keys = step05_signatures.check_signatures(
            read, table_key=None, fast=False, player_keys=keys, next_n=0
        )
        if isinstance(payload, Submission):
            submissions[payload.seat] = submissions.get(payload.seat, 0) + 1
    pytest.fail("no move in the golden log")
