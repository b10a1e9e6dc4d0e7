"""Canonical JSON: known answers, every refusal with its path, and rfc8785 as an oracle."""

from __future__ import annotations

import enum
import json
from typing import Any

import pytest
import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from racing_demon.log import canonical
from racing_demon.log.canonical import (
    MAX_DEPTH,
    MAX_SAFE_INTEGER,
    CanonicalCode,
    CanonicalError,
    canonical_bytes,
    canonical_bytes_of_read,
    json_path,
)


class Colour(enum.StrEnum):
    RED = "red"


class Rank(enum.IntEnum):
    KING = 13


def nested_lists(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = [value]
    return value


def nested_objects(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = {"a": value}
    return value


KNOWN_ANSWERS = [
    pytest.param(None, b"null", id="null"),
    pytest.param(True, b"true", id="true"),
    pytest.param(False, b"false", id="false"),
    pytest.param(0, b"0", id="zero"),
    pytest.param(-17, b"-17", id="negative"),
    pytest.param(MAX_SAFE_INTEGER, b"9007199254740991", id="max-safe"),
    pytest.param(-MAX_SAFE_INTEGER, b"-9007199254740991", id="min-safe"),
    pytest.param("", b'""', id="empty-string"),
    pytest.param({}, b"{}", id="empty-object"),
    pytest.param([], b"[]", id="empty-array"),
    pytest.param({"a": {}, "b": []}, b'{"a":{},"b":[]}', id="empty-containers"),
    pytest.param(
        {"b": 1, "a": 2, "A": 3, "_": 4, " ": 5, "~": 6, "aa": 7, "": 8},
        b'{"":8," ":5,"A":3,"_":4,"a":2,"aa":7,"b":1,"~":6}',
        id="key-order-by-code-point",
    ),
    pytest.param(
        {"z": [1, [2, {}], {"y": None, "x": True}], "a": {"d": False}},
        b'{"a":{"d":false},"z":[1,[2,{}],{"x":true,"y":null}]}',
        id="nesting",
    ),
    pytest.param(
        '"\\/\b\f\n\r\t',
        b'"\\"\\\\/\\b\\f\\n\\r\\t"',
        id="short-escapes-and-unescaped-solidus",
    ),
    pytest.param(
        "\x00\x01\x0b\x0e\x1a\x1f",
        b'"\\u0000\\u0001\\u000b\\u000e\\u001a\\u001f"',
        id="other-controls-lowercase-hex",
    ),
    pytest.param("\x7f ~", b'"\x7f ~"', id="del-and-space-raw"),
    pytest.param("caf\u00e9", b'"caf\xc3\xa9"', id="latin-1-raw-utf8"),
    pytest.param("\u2028\u2029", b'"\xe2\x80\xa8\xe2\x80\xa9"', id="line-separators-raw"),
    pytest.param("\ufeff\uffff", b'"\xef\xbb\xbf\xef\xbf\xbf"', id="bom-and-nonchar-raw"),
    pytest.param("\U0001f600\U0010ffff", b'"\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf"', id="astral-raw"),
    pytest.param({'"q"\\': 1}, b'{"\\"q\\"\\\\":1}', id="key-escapes"),
    pytest.param({"c": Colour.RED, "k": Rank.KING}, b'{"c":"red","k":13}', id="enum-members"),
    pytest.param(
        # RFC 8785 section 3.2.3, the "string" member of its sample.
        json.loads(r'"\u20ac$\u000F\u000aA' + "'" + r'\u0042\u0022\u005c\\\"\/"'),
        b'"\xe2\x82\xac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"',
        id="rfc8785-string-sample",
    ),
]


@pytest.mark.parametrize(("value", "expected"), KNOWN_ANSWERS)
def test_known_answers(value: object, expected: bytes) -> None:
    assert canonical_bytes(value) == expected
    assert canonical_bytes_of_read(value) == expected


def test_nesting_up_to_the_limit_is_encoded() -> None:
    assert canonical_bytes(nested_lists(MAX_DEPTH)) == b"[" * MAX_DEPTH + b"0" + b"]" * MAX_DEPTH
    assert canonical_bytes(nested_lists(3), max_depth=3) == b"[[[0]]]"
    assert canonical_bytes(nested_objects(2), max_depth=2) == b'{"a":{"a":0}}'


REFUSALS = [
    pytest.param(1.5, CanonicalCode.FLOAT, "$", id="float"),
    pytest.param({"a": [0, float("nan")]}, CanonicalCode.FLOAT, "$.a[1]", id="nan"),
    pytest.param({"a": -0.0}, CanonicalCode.FLOAT, "$.a", id="negative-zero-float"),
    pytest.param(
        {"moves": [0, 1, 2, {"cards": 2**53}]},
        CanonicalCode.INT_RANGE,
        "$.moves[3].cards",
        id="int-above-range",
    ),
    pytest.param([-(2**53)], CanonicalCode.INT_RANGE, "$[0]", id="int-below-range"),
    pytest.param({"a": {True: 1}}, CanonicalCode.KEY_NOT_STR, "$.a", id="bool-key"),
    pytest.param({1: "x"}, CanonicalCode.KEY_NOT_STR, "$", id="int-key"),
    pytest.param({None: "x"}, CanonicalCode.KEY_NOT_STR, "$", id="none-key"),
    pytest.param({"a": 1, 2: 3}, CanonicalCode.KEY_NOT_STR, "$", id="mixed-keys"),
    pytest.param({"\u00e9": 1}, CanonicalCode.KEY_NOT_PRINTABLE_ASCII, "$", id="non-ascii-key"),
    pytest.param({"a\tb": 1}, CanonicalCode.KEY_NOT_PRINTABLE_ASCII, "$", id="tab-key"),
    pytest.param({"\x7f": 1}, CanonicalCode.KEY_NOT_PRINTABLE_ASCII, "$", id="del-key"),
    pytest.param({"a b": ["\ud800"]}, CanonicalCode.LONE_SURROGATE, '$["a b"][0]', id="high"),
    pytest.param(["x\udc00"], CanonicalCode.LONE_SURROGATE, "$[0]", id="low-surrogate"),
    pytest.param(
        ["\ud83d\ude00"], CanonicalCode.LONE_SURROGATE, "$[0]", id="surrogate-pair-code-points"
    ),
    pytest.param({"t": (1, 2)}, CanonicalCode.UNSUPPORTED_TYPE, "$.t", id="tuple"),
    pytest.param({"b": b"x"}, CanonicalCode.UNSUPPORTED_TYPE, "$.b", id="bytes"),
    pytest.param([{1, 2}], CanonicalCode.UNSUPPORTED_TYPE, "$[0]", id="set"),
    pytest.param(
        nested_lists(MAX_DEPTH + 1), CanonicalCode.TOO_DEEP, "$" + "[0]" * MAX_DEPTH, id="deep"
    ),
    pytest.param(
        nested_objects(MAX_DEPTH + 1), CanonicalCode.TOO_DEEP, "$" + ".a" * MAX_DEPTH, id="deep-obj"
    ),
]


@pytest.mark.parametrize(("value", "code", "path"), REFUSALS)
def test_refusals_name_code_and_path(value: object, code: CanonicalCode, path: str) -> None:
    with pytest.raises(CanonicalError) as caught:
        canonical_bytes(value)
    assert (caught.value.code, caught.value.path) == (code, path)
    assert str(caught.value) == f"{path}: {code}: {caught.value.message}"


def test_self_reference_is_refused_not_a_recursion_error() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(CanonicalError) as caught:
        canonical_bytes(loop, max_depth=5)
    assert caught.value.code is CanonicalCode.TOO_DEEP
    assert caught.value.message == "containers nested deeper than 5"


def test_messages_are_ascii_whatever_the_key() -> None:
    with pytest.raises(CanonicalError) as caught:
        canonical_bytes({"\ud800\u00e9": 1})
    assert str(caught.value).isascii()


@pytest.mark.parametrize(
    ("segments", "expected"),
    [
        ([], "$"),
        (["moves", 3, "cards"], "$.moves[3].cards"),
        (["_a1", "1a", "a.b", ""], '$._a1["1a"]["a.b"][""]'),
        (["\u00e9"], '$["\\u00e9"]'),
    ],
)
def test_json_path(segments: list[int | str], expected: str) -> None:
    assert json_path(segments) == expected


def test_key_cache_is_bounded() -> None:
    canonical_bytes({f"k{n}": n for n in range(canonical._MAX_PREFIXES + 100)})
    assert len(canonical._PREFIXES) == canonical._MAX_PREFIXES


# The data model, for the properties below.
safe_ints = st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
keys = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=6)
scalars = st.none() | st.booleans() | safe_ints | st.text()
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=24,
)


@pytest.mark.slow
@given(values)
def test_agrees_with_rfc8785(value: Any) -> None:
    assert canonical_bytes(value) == rfc8785.dumps(value)


@given(values)
def test_orjson_writes_a_model_value_as_its_canonical_bytes(value: object) -> None:
    assert canonical_bytes_of_read(value) == canonical_bytes(value)


@given(values)
def test_the_standard_library_writes_a_model_value_as_its_canonical_bytes(value: object) -> None:
    """What ``canonical_bytes_of_read`` writes where orjson is missing (Pyodide)."""
    assert canonical._MODEL_ENCODER.encode(value).encode() == canonical_bytes(value)


@given(values)
def test_idempotent_through_a_json_round_trip(value: object) -> None:
    encoded = canonical_bytes(value)
    parsed = json.loads(encoded)
    assert parsed == value
    assert canonical_bytes(parsed) == encoded


@given(st.text(st.characters() | st.characters(categories=["Cs"])))
def test_strings_with_surrogates_agree_with_rfc8785(text: str) -> None:
    try:
        expected = rfc8785.dumps(text)
    except rfc8785.CanonicalizationError:
        with pytest.raises(CanonicalError, match="LONE_SURROGATE"):
            canonical_bytes(text)
    else:
        assert canonical_bytes(text) == expected


@given(st.integers())
def test_integer_range_agrees_with_rfc8785(number: int) -> None:
    try:
        expected = rfc8785.dumps(number)
    except rfc8785.IntegerDomainError:
        with pytest.raises(CanonicalError, match="INT_RANGE"):
            canonical_bytes(number)
    else:
        assert canonical_bytes(number) == expected
