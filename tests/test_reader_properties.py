"""Properties of the strict reader, layer by layer, over hostile bytes and over the data model.

(a) whatever the bytes, each layer returns or raises ReadError with a ReadCode and a line
number, and what it accepts is what plain ``json`` reads; (b) every value of the data model
round-trips through its canonical line; (c) any other serialisation of an accepted value is
refused as NOT_CANONICAL, though it parses to the same value.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from racing_demon.log.canonical import (
    MAX_DEPTH,
    MAX_SAFE_INTEGER,
    canonical_bytes,
    canonical_bytes_of_read,
)
from racing_demon.log.reader import (
    DEFAULT_LIMITS,
    Limits,
    ReadCode,
    ReadError,
    _plain_canonical_value,
    _strict_canonical_value,
    iter_raw_lines,
    parse_line,
    parse_read_line,
    read_canonical_line,
    read_lines,
)

GOLDEN = Path(__file__).parent / "golden" / "logs"

# Small limits so that every limit check is reached too.
SMALL = Limits(max_file_bytes=600, max_line_bytes=120, max_records=6, max_depth=4)
LIMITS = st.sampled_from([DEFAULT_LIMITS, SMALL])

# The data model: printable ASCII keys; any text but surrogates, controls included.

keys = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=8)
texts = st.text(max_size=12) | st.sampled_from(
    ["", "\x00", "\x1f", "\x7f", '"', "\\", "\b\f\n\r\t", "\u2028\u2029", "\ufeff", "\U0001f600"]
)
integers = st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER) | st.sampled_from(
    [0, 1, -1, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER]
)
scalars = st.none() | st.booleans() | integers | texts
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=20,
)
objects = st.dictionaries(keys, values, max_size=5)


# Pieces of JSON, near-JSON and hostile encodings.
FRAGMENTS = [
    b"{", b"}", b"[", b"]", b":", b",", b'"', b'"a"', b'"seq"', b'\\"', b"\\", b"\\u", b"00e9",
    b"0", b"1", b"9", b"-", b"-0", b"+", b"e", b"E", b".", b"01", b".5", b"1e9", b"-0.0",
    b"9007199254740991", b"9007199254740992", b"1" * 40, b"true", b"false", b"null", b"NaN",
    b"Infinity", b"-Infinity", b" ", b"\t", b"\x0c", b"\r", b"\n", b"\r\n", b"\x00", b"\x1f",
    b"\x7f", b"\xef\xbb\xbf", b"\xed\xa0\x80", b'"\\ud800"', b"\xc0\xaf", b"\xc3\xa9", b"\xc3",
    b"\xff", b"\xf0\x9f\x98\x80", b"\xe2\x80\xa8", b"[" * 40, b"]" * 40, b'{"a":' * 40,
    b"}" * 40, b"[{" * 20, b'{"a":1,"a":2}', b',"a":0',
]  # fmt: skip
fragment = st.sampled_from(FRAGMENTS)
tokens = st.lists(fragment, max_size=40).map(b"".join)


def edited(raw: bytes, at: int, cut: int, insert: bytes) -> bytes:
    """``raw`` with ``cut`` bytes at ``at`` (modulo its length) replaced by ``insert``."""
    at %= len(raw) + 1
    return raw[:at] + insert + raw[at + cut :]


# A canonical line with a fragment spliced in gets deep into json before it fails, if it does.
small_lines = st.dictionaries(keys, scalars | st.lists(scalars, max_size=3), max_size=4).map(
    canonical_bytes
)
near_canonical = st.builds(edited, small_lines, st.integers(0, 10**4), st.integers(0, 2), fragment)
hostile_line = (
    st.binary(max_size=400)
    | tokens
    | tokens.map(lambda raw: b'{"a":' + raw + b"}")
    | near_canonical
    | small_lines
)
hostile_file = st.lists(hostile_line.map(lambda raw: raw + b"\n") | hostile_line, max_size=8).map(
    b"".join
)


def check_refusal(error: ReadError, number: int | None = None) -> None:
    assert isinstance(error.code, ReadCode)
    assert isinstance(error.line, int)
    assert error.line >= 1
    if number is not None:
        assert error.line == number
    assert str(error).startswith(f"line {error.line}: {error.code}: ")
    event(f"refused: {error.code}")


@pytest.mark.slow
@given(hostile_file, LIMITS)
@settings(max_examples=300, deadline=None)
def test_framing_yields_the_lines_or_refuses(data: bytes, limits: Limits) -> None:
    raws: list[bytes] = []
    try:
        raws.extend(raw for _, raw in iter_raw_lines(io.BytesIO(data), limits))
    except ReadError as error:
        check_refusal(error, len(raws) + 1)
        return
    assert b"".join(raw + b"\n" for raw in raws) == data
    assert all(b"\n" not in raw and b"\r" not in raw for raw in raws)


@given(hostile_line, st.integers(1, 10**6), LIMITS)
@settings(max_examples=300, deadline=None)
def test_a_line_parses_as_json_does_or_is_refused(raw: bytes, number: int, limits: Limits) -> None:
    try:
        value = parse_line(number, raw, limits)
    except ReadError as error:
        check_refusal(error, number)
        parsed: ReadError | None = error
    else:
        event("parsed")
        assert isinstance(value, dict)
        assert value == json.loads(raw.decode())  # stricter than json, never different
        parsed = None
    try:
        line = read_canonical_line(number, raw, limits)
    except ReadError as error:
        check_refusal(error, number)
        # The canonical check comes after parsing, and adds only NOT_CANONICAL.
        assert error.code == (ReadCode.NOT_CANONICAL if parsed is None else parsed.code)
    else:
        event("canonical")
        assert parsed is None
        assert (line.number, line.raw, line.value) == (number, raw, value)
        assert canonical_bytes(line.value) == raw


@pytest.mark.slow
@given(hostile_file, LIMITS)
@settings(max_examples=300, deadline=None)
def test_a_file_reads_or_is_refused(data: bytes, limits: Limits) -> None:
    try:
        lines = list(read_lines(io.BytesIO(data), limits))
    except ReadError as error:
        check_refusal(error)
        assert error.line is not None and error.line <= data.count(b"\n") + 1
        return
    assert b"".join(line.raw + b"\n" for line in lines) == data
    assert [line.number for line in lines] == list(range(1, len(lines) + 1))


def nested(depth: int, leaf: Any) -> dict[str, Any]:
    """An object ``depth`` containers deep (``leaf`` a scalar), alternating lists and objects."""
    value = leaf
    for level in range(depth - 1):
        value = [value] if level % 2 else {"k": value}
    return {"top": value}


@pytest.mark.slow
@given(objects | st.builds(nested, st.integers(1, MAX_DEPTH), scalars))
@settings(max_examples=200, deadline=None)
def test_canonical_values_round_trip(value: dict[str, Any]) -> None:
    raw = canonical_bytes(value)
    assert b"\n" not in raw and b"\r" not in raw  # a line, whatever the strings hold
    # Canonical form is json's sorted, spaceless, raw-UTF-8 output for this data model.
    assert (
        raw == json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    )
    assert canonical_bytes_of_read(value) == raw
    line = read_canonical_line(5, raw)
    assert (line.number, line.raw, line.value) == (5, raw, value)
    assert canonical_bytes(line.value) == raw  # also tells True from 1
    lines = list(read_lines(io.BytesIO((raw + b"\n") * 3)))
    assert [(line.number, line.value) for line in lines] == [(1, value), (2, value), (3, value)]


def reversed_keys(value: Any) -> Any:
    """``value`` with every object's keys in reverse sorted order."""
    if isinstance(value, dict):
        return {key: reversed_keys(value[key]) for key in sorted(value, reverse=True)}
    if isinstance(value, list):
        return [reversed_keys(item) for item in value]
    return value


VARIANTS: dict[str, Callable[[Any], str]] = {
    "json-default": json.dumps,
    "indented": lambda value: json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False),
    "spaces": lambda value: json.dumps(value, sort_keys=True, ensure_ascii=False),
    "unsorted": lambda value: json.dumps(
        reversed_keys(value), separators=(",", ":"), ensure_ascii=False
    ),
    "ascii-escapes": lambda value: json.dumps(value, sort_keys=True, separators=(",", ":")),
    "padded": lambda value: " " + canonical_bytes(value).decode() + "\t",
}


@pytest.mark.slow
@given(objects, st.sampled_from(sorted(VARIANTS)))
@settings(max_examples=200, deadline=None)
def test_any_other_serialisation_is_not_canonical(value: dict[str, Any], variant: str) -> None:
    raw = VARIANTS[variant](value).encode()
    assume(raw != canonical_bytes(value))
    assert parse_line(3, raw) == value  # the same value, in other bytes
    try:
        read_canonical_line(3, raw)
    except ReadError as error:
        assert (error.code, error.line) == (ReadCode.NOT_CANONICAL, 3), str(error)
    else:
        raise AssertionError(f"{variant} accepted as canonical: {raw!r}")
    if b"\n" not in raw:
        try:
            list(read_lines(io.BytesIO(b"{}\n" + raw + b"\n")))
        except ReadError as error:
            assert (error.code, error.line) == (ReadCode.NOT_CANONICAL, 2), str(error)
        else:
            raise AssertionError(f"{variant} read as canonical: {raw!r}")


# The plain path: lines the C codec alone proves canonical must read exactly as the strict
# path reads them, and every other line must fall through to the strict path's verdict.

plain_keys = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters='"\\'), max_size=6
)
plain_texts = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters='"\\'), max_size=10
)
# Numbers of up to 15 digits stay on the plain path; longer ones leave it, whatever their value.
plain_scalars = (
    st.none() | st.booleans() | st.integers(-(10**15) + 1, 10**15 - 1) | integers | plain_texts
)
plain_lines = st.dictionaries(
    plain_keys,
    st.recursive(
        plain_scalars,
        lambda children: (
            st.lists(children, max_size=3) | st.dictionaries(plain_keys, children, max_size=3)
        ),
        max_leaves=12,
    ),
    max_size=5,
).map(canonical_bytes)
PLAIN_FRAGMENTS = [
    b" ", b"1.0", b"1e5", b"-0", b"NaN", b"Infinity", b"9007199254740992", b"1234567890123456",
    b"-1234567890123456", b'"1234567890123456"', b'"a"', b'"a":1,', b',"a":1', b"\x7f", b"\\",
    b"\\u0041", b"true", b"1", b"{", b"[", b"]", b"}", b":", b",", b'"', b"[" * 5, b"{}", b"[]",
]  # fmt: skip
near_plain = st.builds(
    edited, plain_lines, st.integers(0, 10**4), st.integers(0, 2), st.sampled_from(PLAIN_FRAGMENTS)
)


def strict_reading(number: int, raw: bytes, limits: Limits) -> dict[str, Any] | tuple[str, str]:
    try:
        return _strict_canonical_value(number, raw, limits)
    except ReadError as error:
        return (error.code, error.message)


def check_plain_path(raw: bytes, limits: Limits) -> None:
    plain = _plain_canonical_value(raw, limits.max_depth)
    event("plain path" if plain is not None else "strict path")
    expected = strict_reading(3, raw, limits)
    if plain is not None:
        assert plain == expected
        assert canonical_bytes(plain) == raw  # also tells True from 1
    try:
        found: dict[str, Any] | tuple[str, str] = read_canonical_line(3, raw, limits).value
    except ReadError as error:
        found = (error.code, error.message)
    assert found == expected
    # A second reading of accepted bytes gives the same value, by either path.
    if isinstance(expected, dict):
        assert parse_read_line(3, raw, limits) == expected


@pytest.mark.slow
@given(plain_lines | near_plain)
@settings(max_examples=500, deadline=None)
def test_plain_lines_read_as_the_strict_path_reads_them(raw: bytes) -> None:
    check_plain_path(raw, DEFAULT_LIMITS)


@given(hostile_line, LIMITS)
@settings(max_examples=300, deadline=None)
def test_hostile_lines_read_as_the_strict_path_reads_them(raw: bytes, limits: Limits) -> None:
    check_plain_path(raw, limits)


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b'{"a":1.0}', ReadCode.FLOAT),
        (b'{"a":1e5}', ReadCode.FLOAT),
        (b'{"a":NaN}', ReadCode.NAN_OR_INFINITY),
        (b'{"a":-0}', ReadCode.NEGATIVE_ZERO),
        (b'{"a":9007199254740992}', ReadCode.INT_RANGE),
        (b'{"a":[-9007199254740992]}', ReadCode.INT_RANGE),
        (b'{"a":1,"a":1}', ReadCode.DUPLICATE_KEY),
        (b'{"b":1,"a":1}', ReadCode.NOT_CANONICAL),
        (b'{"a": 1}', ReadCode.NOT_CANONICAL),
        (b'{"a\x7f":1}', ReadCode.NOT_CANONICAL),
        (b'["a"]', ReadCode.NOT_OBJECT),
        (b'{"a":' * 40 + b"1" + b"}" * 40, ReadCode.TOO_DEEP),
    ],
)
def test_plain_lines_the_codec_would_accept_are_refused_as_before(
    raw: bytes, code: ReadCode
) -> None:
    with pytest.raises(ReadError) as refused:
        read_canonical_line(2, raw)
    assert refused.value.code == code


def test_records_of_a_real_log_take_the_plain_path() -> None:
    raws = (GOLDEN / "table-3p-signed.jsonl").read_bytes().splitlines()
    plain = [raw for raw in raws if _plain_canonical_value(raw, MAX_DEPTH) is not None]
    assert len(plain) == len(raws)
    for raw in raws[:50]:
        assert read_canonical_line(1, raw).value == _strict_canonical_value(1, raw, DEFAULT_LIMITS)
