"""Properties of the strict reader, layer by layer, over hostile bytes and over the data model.

(a) whatever the bytes, each layer returns or raises ReadError with a ReadCode and a line
number, and what it accepts is what plain ``json`` reads; (b) every value of the data model
round-trips through its canonical line; (c) any other serialisation of an accepted value is
refused as NOT_CANONICAL, though it parses to the same value.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
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
    PLAIN_READERS,
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


# The plain path: lines orjson alone proves canonical must read exactly as the strict path
# reads them, and every other line must fall through to the strict path's verdict.

plain_keys = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters='"\\'), max_size=6
)
plain_texts = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters='"\\'), max_size=10
)
# 16-digit integers within range stay on the plain path; those beyond it are outside_lines'.
plain_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-999, 999)
    | st.integers(10**15, MAX_SAFE_INTEGER)
    | integers
    | plain_texts
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
    b" ", b"1.0", b"1.5", b"1e5", b"1E5", b"1e+16", b"-0", b"-0.0", b"NaN", b"Infinity",
    b"9007199254740992", b"1234567890123456", b"-1234567890123456", b"18446744073709551615",
    b"18446744073709551616", b'"1234567890123456"', b'"a"', b'"a":1,', b',"a":1', b"\x7f",
    b"\\", b"\\u0041", b'\\"', b"true", b"1", b"{", b"[", b"]", b"}", b":", b",", b'"',
    b"[" * 5, b"{}", b"[]",
]  # fmt: skip
near_plain = st.builds(
    edited, plain_lines, st.integers(0, 10**4), st.integers(0, 2), st.sampled_from(PLAIN_FRAGMENTS)
)


def orjson_bytes(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


# Lines that orjson reads and writes back byte for byte though the data model refuses them:
# floats, integers beyond +/-(2**53 - 1), keys outside printable ASCII, nesting beyond the
# limit. Only the guards keep them off the plain path.
outside_scalars = (
    st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(-(2**63), 2**64 - 1)
    | st.sampled_from(
        [1.5, 1e5, 0.0, -0.0, 1e16, 1e-7, 5e-324, 2**53, -(2**53), 2**63, 2**64 - 1, -(2**63)]
    )
)
outside_lines = st.dictionaries(
    keys | st.text(max_size=3),
    st.recursive(
        outside_scalars | plain_scalars | texts,
        lambda children: (
            st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=3)
        ),
        max_leaves=8,
    ),
    min_size=1,
    max_size=4,
).map(orjson_bytes)
deep_lines = st.builds(nested, st.integers(1, MAX_DEPTH + 3), plain_scalars).map(orjson_bytes)
near_outside = st.builds(
    edited,
    outside_lines,
    st.integers(0, 10**4),
    st.integers(0, 2),
    st.sampled_from(PLAIN_FRAGMENTS),
)


@st.composite
def duplicated_keys(draw: st.DrawFn) -> bytes:
    """A line in canonical form but for one key written twice, in the top object or below."""
    obj = draw(st.dictionaries(plain_keys, plain_scalars, min_size=1, max_size=4))
    members = [canonical_bytes(key) + b":" + canonical_bytes(obj[key]) for key in sorted(obj)]
    at = draw(st.integers(0, len(members) - 1))
    again = canonical_bytes(sorted(obj)[at]) + b":" + canonical_bytes(draw(plain_scalars))
    members.insert(at + draw(st.integers(0, 1)), again)
    raw = b"{" + b",".join(members) + b"}"
    return b'{"a":' + raw + b"}" if draw(st.booleans()) else raw


Answer = dict[str, Any] | tuple[ReadCode, int | None, str]


def answer(read: Callable[[], dict[str, Any]]) -> Answer:
    try:
        return read()
    except ReadError as error:
        return (error.code, error.line, error.message)


def check_plain_path(raw: bytes, limits: Limits) -> dict[str, Any] | None:
    """The plain path's value for ``raw``, once shown to agree with the strict path, with
    orjson and with the standard library alike (they take the same lines)."""
    plain = _plain_canonical_value(raw, limits.max_depth)
    event("plain path" if plain is not None else "strict path")
    expected = answer(lambda: _strict_canonical_value(3, raw, limits))
    for read in PLAIN_READERS.values():
        assert _plain_canonical_value(raw, limits.max_depth, read) == plain
    if plain is not None:
        assert plain == expected
        assert canonical_bytes(plain) == raw  # also tells True from 1
    assert answer(lambda: read_canonical_line(3, raw, limits).value) == expected
    # Reading again answers as parse_line does, whether the line is canonical or not.
    assert answer(lambda: parse_read_line(3, raw, limits)) == answer(
        lambda: parse_line(3, raw, limits)
    )
    return plain


@pytest.mark.slow
@given(plain_lines | near_plain, LIMITS)
@settings(max_examples=500, deadline=None)
def test_plain_lines_read_as_the_strict_path_reads_them(raw: bytes, limits: Limits) -> None:
    check_plain_path(raw, limits)


@given(plain_lines)
@settings(max_examples=100, deadline=None)
def test_plain_canonical_lines_take_the_plain_path(raw: bytes) -> None:
    plain = check_plain_path(raw, DEFAULT_LIMITS)
    # A string holding ":1.", ",2e" or "[E" looks like a float to the guard: the strict path.
    assume(not re.search(rb'"[^"]*[:,\[]-?[0-9]*[.eE][^"]*"', raw))
    # The depth guard counts brackets inside strings too: more than the limit, strict path.
    assume(raw.count(b"[") + raw.count(b"{") <= DEFAULT_LIMITS.max_depth)
    assert plain is not None


@pytest.mark.slow
@given(outside_lines | near_outside | deep_lines, LIMITS)
@settings(max_examples=500, deadline=None)
def test_lines_orjson_writes_back_read_as_the_strict_path_reads_them(
    raw: bytes, limits: Limits
) -> None:
    check_plain_path(raw, limits)


@given(duplicated_keys(), LIMITS)
@settings(max_examples=200, deadline=None)
def test_a_duplicate_key_leaves_the_plain_path(raw: bytes, limits: Limits) -> None:
    assert isinstance(orjson.loads(raw), dict)  # orjson alone would read it, keeping the last
    assert check_plain_path(raw, limits) is None
    assert answer(lambda: read_canonical_line(3, raw, limits).value)[0] == ReadCode.DUPLICATE_KEY


@pytest.mark.slow
@given(objects.map(canonical_bytes), LIMITS)
@settings(max_examples=300, deadline=None)
def test_escapes_and_non_ascii_read_as_the_strict_path_reads_them(
    raw: bytes, limits: Limits
) -> None:
    check_plain_path(raw, limits)


@given(hostile_line, LIMITS)
@settings(max_examples=300, deadline=None)
def test_hostile_lines_read_as_the_strict_path_reads_them(raw: bytes, limits: Limits) -> None:
    check_plain_path(raw, limits)


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b'{"a":1.0}', ReadCode.FLOAT),
        (b'{"a":1.5}', ReadCode.FLOAT),
        (b'{"a":[2,1.25]}', ReadCode.FLOAT),
        (b'{"a":100000.0}', ReadCode.FLOAT),
        (b'{"a":1e5}', ReadCode.FLOAT),
        (b'{"a":1e+16}', ReadCode.FLOAT),
        (b'{"a":1e-7}', ReadCode.FLOAT),
        (b'{"a":-0.0}', ReadCode.FLOAT),
        (b'{"a":NaN}', ReadCode.NAN_OR_INFINITY),
        (b'{"a":-0}', ReadCode.NEGATIVE_ZERO),
        (b'{"a":9007199254740992}', ReadCode.INT_RANGE),
        (b'{"a":[-9007199254740992]}', ReadCode.INT_RANGE),
        (b'{"a":9223372036854775808}', ReadCode.INT_RANGE),
        (b'{"a":18446744073709551615}', ReadCode.INT_RANGE),
        (b'{"a":-9223372036854775808}', ReadCode.INT_RANGE),
        (b'{"a":1,"a":1}', ReadCode.DUPLICATE_KEY),
        (b'{"a":{"b":1,"b":2}}', ReadCode.DUPLICATE_KEY),
        (b'{"b":1,"a":1}', ReadCode.NOT_CANONICAL),
        (b'{"a": 1}', ReadCode.NOT_CANONICAL),
        (b'{"a\x7f":1}', ReadCode.NOT_CANONICAL),
        (b'{"\xc3\xa9":1}', ReadCode.NOT_CANONICAL),
        (b'{"\\n":1}', ReadCode.NOT_CANONICAL),
        (b'["a"]', ReadCode.NOT_OBJECT),
        (b'{"a":' * 40 + b"1" + b"}" * 40, ReadCode.TOO_DEEP),
        (orjson_bytes(nested(MAX_DEPTH + 1, 1)), ReadCode.TOO_DEEP),
    ],
)
def test_lines_orjson_would_accept_are_refused_as_before(raw: bytes, code: ReadCode) -> None:
    for read in PLAIN_READERS.values():
        assert _plain_canonical_value(raw, MAX_DEPTH, read) is None
    with pytest.raises(ReadError) as refused:
        read_canonical_line(2, raw)
    assert refused.value.code == code


@pytest.mark.parametrize("name", sorted(path.name for path in GOLDEN.glob("*.jsonl")))
def test_records_of_a_real_log_take_the_plain_path(name: str) -> None:
    raws = (GOLDEN / name).read_bytes().splitlines()
    for read in PLAIN_READERS.values():
        plain = [raw for raw in raws if _plain_canonical_value(raw, MAX_DEPTH, read) is not None]
        assert len(plain) == len(raws)
    for raw in raws[:50]:
        assert read_canonical_line(1, raw).value == _strict_canonical_value(1, raw, DEFAULT_LIMITS)
