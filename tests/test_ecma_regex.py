"""Schema patterns mean what ECMA-262 means (issue 12, item 7), wherever they are checked.

The answers below are those of ECMAScript's ``new RegExp(pattern, "u").test(text)``, the
JSON Schema meaning of ``{"pattern": pattern}``; a few come from the JSON Schema Test
Suite's optional ``ecmascript-regex`` cases. Three readers must give them: regress (the
ECMA-262 engine behind ``schema.ecma_regex``), jsonschema with it (``EcmaValidator``, the
reference), and jsonschema-rs (the hot-path check), which is no full ECMA-262 engine (it
translates ECMA-262 into Rust's regex syntax), so every pattern of every schema is also
compared between it and regress on strings made to sit next to a match.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from racing_demon.profiles import ProfileError, builtin_document, rules_from_document
from racing_demon.schema import EcmaValidator, schema_errors
from racing_demon.schema.ecma_regex import PatternError, compile_pattern, search

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"

# pattern, strings it matches, strings it does not.
CASES = [
    ("^[a-z]+$", ["abc"], ["abc\n", "\nabc", "ab\nc", ""]),
    ("^[0-9a-f]{32}$", ["0" * 32], ["0" * 32 + "\n", "0" * 31, "0" * 32 + "\n\n"]),
    ("^([0-9a-f]{2}){16,64}$", ["ab" * 16, "ab" * 64], ["ab" * 16 + "\n", "ab" * 65, "a" * 33]),
    ("^[A-Z_]{3,40}$", ["HAND_OVER"], ["HAND_OVER\n", "AB"]),
    ("abc$", ["xabc"], ["abc\n"]),
    ("^abc", ["abcx"], ["x\nabc"]),  # ^ is the start of the string, not of a line
    ("^\\d+$", ["0123456789"], ["\u0663", "\uff11", "\u00b2", "1\n"]),  # ASCII digits only
    ("^\\D$", ["a", "\u0663"], ["1"]),
    ("^\\w+$", ["aZ_09"], ["é", "\u0663", "a-b", "ab\n"]),  # ASCII word characters only
    ("^\\W$", ["é", "-"], ["a", "_"]),
    ("^[\\d\\w]$", ["1", "a"], ["\u0663", "é"]),
    ("^[^\\d]$", ["a", "\u0663"], ["1"]),
    ("^a.c$", ["abc", "a\u00e9c", "a\U0001f600c"], ["a\nc", "a\rc", "a\u2028c", "a\u2029c"]),
    ("^[^\\n]*$", ["", "a\rb"], ["a\nb", "\n"]),
    ("^\\t$", ["\t"], ["\\t"]),
    ("^\\x41\\u00e9$", ["A\u00e9"], ["A"]),
    ("^[a-z0-9][a-z0-9_-]{0,39}$", ["table", "my-variant_2"], ["-x", "Table", "x\n"]),
    ("^(valid|disputed)/[a-z]+\\.(jsonl|pub)$", ["valid/a.jsonl"], ["valid/a.jsonl\n", "x/a.pub"]),
    ("\\.claim\\.json$", ["a.claim.json"], ["a.claim.json\n", "a_claim.json"]),
    ("^[\\]\\-\\\\^]+$", ["]-\\^"], ["a"]),  # escaped members of a class
    ("^a{2}b{1,}c{0,1}?$", ["aab", "aabbc"], ["ab", "aab\n"]),
    ("^(?:ab)*$", ["", "abab"], ["aba"]),
    ("^a+?$|^b*$", ["aa", "", "bb"], ["ab"]),
    ("^\\/\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\$\\^$", ["/.*+?()[]{}|$^"], [""]),
    ("[-a]", ["-"], ["b"]),
    ("^[é-ü]$", ["ö"], ["e"]),
]


@pytest.mark.parametrize(("pattern", "matching", "others"), CASES)
def test_a_pattern_means_what_ecma_262_means(
    pattern: str, matching: list[str], others: list[str]
) -> None:
    schema = {"type": "string", "pattern": pattern}
    check = jsonschema_rs.Draft202012Validator(schema).is_valid
    reference = EcmaValidator(schema)
    for text, expected in [*((t, True) for t in matching), *((t, False) for t in others)]:
        assert search(pattern, text) is expected, text
        assert check(text) is expected, text
        assert reference.is_valid(text) is expected, text


# ECMA-262 constructs that Python's re reads otherwise, or not at all.
ECMA_ONLY = [
    ("^\\s$", ["\u00a0", "\u2003", "\ufeff"], ["a"]),  # Unicode spaces
    ("^\\u{1F600}$", ["\U0001f600"], ["u"]),  # a code point escape (u flag)
]


@pytest.mark.parametrize(("pattern", "matching", "others"), ECMA_ONLY)
def test_ecma_262_constructs_keep_their_meaning(
    pattern: str, matching: list[str], others: list[str]
) -> None:
    test_a_pattern_means_what_ecma_262_means(pattern, matching, others)


# ECMA-262 constructs jsonschema-rs does not translate: it refuses to build a validator
# (the pattern "is not a regex"), so a schema using one fails loudly, never misread.
NOT_FOR_JSONSCHEMA_RS = [
    ("^\\x41\\u00e9\\0$", ["A\u00e9\0"], ["A\u00e9"]),  # \0, the NUL escape
    ("^[^]$", ["a", "\n"], [""]),  # any one character
]


@pytest.mark.parametrize(("pattern", "matching", "others"), NOT_FOR_JSONSCHEMA_RS)
def test_what_jsonschema_rs_cannot_read_it_refuses_to_build(
    pattern: str, matching: list[str], others: list[str]
) -> None:
    schema = {"type": "string", "pattern": pattern}
    reference = EcmaValidator(schema)
    for text, expected in [*((t, True) for t in matching), *((t, False) for t in others)]:
        assert search(pattern, text) is expected, text
        assert reference.is_valid(text) is expected, text
    with pytest.raises(jsonschema_rs.ValidationError, match='is not a "regex"'):
        jsonschema_rs.Draft202012Validator(schema)


@pytest.mark.parametrize(
    "pattern", ["(a", "a)", "*a", "[z-a]", "a*+", "a{,2}", "\\1", "(?<n>a)\\k<m>"]
)
def test_a_pattern_that_is_no_ecma_262_expression_is_refused(pattern: str) -> None:
    with pytest.raises(PatternError):
        compile_pattern(pattern)
    with pytest.raises(PatternError):
        EcmaValidator({"pattern": pattern}).is_valid("a")
    if pattern == "a*+":
        # jsonschema-rs reads it as a possessive quantifier; no schema of ours can hold
        # it, as regress compiles every one (below).
        assert jsonschema_rs.Draft202012Validator({"pattern": pattern}).is_valid("aa")
        return
    with pytest.raises(jsonschema_rs.ValidationError):
        jsonschema_rs.Draft202012Validator({"pattern": pattern})


def _patterns(node: Any) -> list[str]:
    if isinstance(node, dict):
        assert "patternProperties" not in node  # jsonschema would read it with Python's re
        own = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
        return own + [found for value in node.values() for found in _patterns(value)]
    if isinstance(node, list):
        return [found for value in node for found in _patterns(value)]
    return []


@pytest.mark.parametrize("path", sorted(SCHEMAS.glob("*.schema.json")), ids=lambda p: p.name)
def test_every_pattern_of_every_schema_compiles(path: Path) -> None:
    for pattern in _patterns(json.loads(path.read_text())):
        compile_pattern(pattern)
        jsonschema_rs.Draft202012Validator({"pattern": pattern})


SCHEMA_PATTERNS = sorted(
    {
        pattern
        for path in SCHEMAS.glob("*.schema.json")
        for pattern in _patterns(json.loads(path.read_text()))
    }
)
FAST_PATTERNS = {
    pattern: jsonschema_rs.Draft202012Validator({"type": "string", "pattern": pattern}).is_valid
    for pattern in SCHEMA_PATTERNS
}
# Where a reading other than ECMA-262's would show: line ends (``$`` before a final
# newline, ``.``), digits and letters outside ASCII (``\d``, ``\w``, case folding: the
# Kelvin sign, the long s, the dotted I), spaces, astral code points (one character with
# the u flag, two UTF-16 units without), a combining mark, NUL.
TRICKY = [
    *("\n", "\r", "\r\n", "\u2028", "\u2029", "\u0085", "\x00", "\t", " ", "\u00a0", "\ufeff"),
    *("\u0663", "\uff11", "\u00b2", "\U0001d7d8", "\u212a", "\u017f", "\u0130", "\u00e9", "\u0301"),
    *("\U0001f600", "\U00010000", "\uffff"),
    *"09afgzAFKSZ_-/.=+@$",  # and plain ASCII, one character each
]


@st.composite
def near_matches(draw: st.DrawFn, pattern: str) -> str:
    """A string ``pattern`` matches (Python's re reading of it, close enough as a start)
    or one made of ``TRICKY`` pieces, with up to three pieces inserted, replaced or cut."""
    pieces = st.sampled_from(TRICKY)
    text = draw(st.from_regex(pattern) | st.lists(pieces, max_size=8).map("".join))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 1)) if at < len(text) else 0
        text = text[:at] + draw(pieces | st.just("")) + text[at + cut :]
    return text


@pytest.mark.slow  # a thousand examples over every schema pattern
@settings(max_examples=1000, deadline=None)
@given(st.sampled_from(SCHEMA_PATTERNS).flatmap(lambda p: st.tuples(st.just(p), near_matches(p))))
def test_jsonschema_rs_reads_every_schema_pattern_as_ecma_262(case: tuple[str, str]) -> None:
    pattern, text = case
    assert FAST_PATTERNS[pattern](text) is search(pattern, text)


@pytest.mark.parametrize("pattern", SCHEMA_PATTERNS)
def test_every_schema_pattern_on_each_tricky_piece(pattern: str) -> None:
    for piece in TRICKY:
        for text in (piece, piece * 2, "0" + piece, piece + "0" * 32, "0" * 64 + piece):
            assert FAST_PATTERNS[pattern](text) is search(pattern, text), text


def test_pattern_properties_are_refused_rather_than_read_with_pythons_meaning() -> None:
    schema = {"patternProperties": {"^a$": {"type": "integer"}}, "additionalProperties": False}
    with pytest.raises(PatternError, match="patternProperties"):
        EcmaValidator(schema).is_valid({"a\n": 1})


def test_schema_errors_read_patterns_as_ecma_262() -> None:
    seed = {"format": "racing-demon/seed-report/v1", "secret": "0" * 64, "commitment": "1" * 64}
    assert schema_errors("seed-report", seed) == []
    newline = {**seed, "secret": "0" * 64 + "\n"}
    assert schema_errors("seed-report", newline) == [
        f"$.secret: {'0' * 64 + chr(10)!r} does not match '^[0-9a-f]{{64}}$'"
    ]


def test_a_profile_name_ending_in_a_newline_is_refused() -> None:
    document = builtin_document("table")
    rules_from_document(document)
    document["name"] = "table\n"
    with pytest.raises(ProfileError, match="does not match"):
        rules_from_document(document)


def test_a_lone_surrogate_matches_no_pattern() -> None:
    # Only a Python string can hold one (json.loads of "\ud800"): refused, never a crash.
    assert search("^[a-z]+$", "ab\ud800") is False
    # jsonschema-rs cannot encode it as UTF-8: it raises, and jsonschema decides
    # (tests/test_schema_check.py).
    with pytest.raises(ValueError):
        jsonschema_rs.Draft202012Validator({"type": "string", "pattern": "^.*$"}).is_valid("\ud800")
    document = builtin_document("table")
    document["name"] = "\ud800"
    with pytest.raises(ProfileError, match="does not match"):
        rules_from_document(document)
