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
from typing import Any

from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from racing_demon.log.canonical import MAX_DEPTH, MAX_SAFE_INTEGER, canonical_bytes
from racing_demon.log.reader import (
    DEFAULT_LIMITS,
    Limits,
    ReadCode,
    ReadError,
    iter_raw_lines,
    parse_line,
    read_canonical_line,
    read_lines,
)

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


@given(objects | st.builds(nested, st.integers(1, MAX_DEPTH), scalars))
@settings(max_examples=200, deadline=None)
def test_canonical_values_round_trip(value: dict[str, Any]) -> None:
    raw = canonical_bytes(value)
    assert b"\n" not in raw and b"\r" not in raw  # a line, whatever the strings hold
    # Canonical form is json's sorted, spaceless, raw-UTF-8 output for this data model.
    assert (
        raw == json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    )
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
