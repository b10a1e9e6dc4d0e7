"""Schema patterns mean what ECMA-262 means (issue 12, item 7), wherever they are checked.

The answers below are those of ECMAScript's ``new RegExp(pattern, "u").test(text)``, the
JSON Schema meaning of ``{"pattern": pattern}``; a few come from the JSON Schema Test
Suite's optional ``ecmascript-regex`` cases.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from racing_demon.profiles import ProfileError, builtin_document, rules_from_document
from racing_demon.schema import EcmaValidator, schema_errors
from racing_demon.schema.compiled import SchemaCompileError, compile_schema
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
    ("^\\x41\\u00e9\\0$", ["A\u00e9\0"], ["A\u00e9"]),
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
    check = compile_schema(schema)
    reference = EcmaValidator(schema)
    for text, expected in [*((t, True) for t in matching), *((t, False) for t in others)]:
        assert search(pattern, text) is expected, text
        assert check(text) is expected, text
        assert reference.is_valid(text) is expected, text


# ECMA-262 constructs that Python's re reads otherwise, or not at all.
ECMA_ONLY = [
    ("^\\s$", ["\u00a0", "\u2003", "\ufeff"], ["a"]),  # Unicode spaces
    ("^[^]$", ["a", "\n"], [""]),  # any one character
    ("^\\u{1F600}$", ["\U0001f600"], ["u"]),  # a code point escape (u flag)
]


@pytest.mark.parametrize(("pattern", "matching", "others"), ECMA_ONLY)
def test_ecma_262_constructs_keep_their_meaning(
    pattern: str, matching: list[str], others: list[str]
) -> None:
    test_a_pattern_means_what_ecma_262_means(pattern, matching, others)


@pytest.mark.parametrize(
    "pattern", ["(a", "a)", "*a", "[z-a]", "a*+", "a{,2}", "\\1", "(?<n>a)\\k<m>"]
)
def test_a_pattern_that_is_no_ecma_262_expression_is_refused(pattern: str) -> None:
    with pytest.raises(PatternError):
        compile_pattern(pattern)
    with pytest.raises(PatternError):
        EcmaValidator({"pattern": pattern}).is_valid("a")
    with pytest.raises(SchemaCompileError, match="bad pattern"):
        compile_schema({"type": "string", "pattern": pattern})


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
    assert compile_schema({"type": "string", "pattern": "^.*$"})("\ud800") is False
    document = builtin_document("table")
    document["name"] = "\ud800"
    with pytest.raises(ProfileError, match="does not match"):
        rules_from_document(document)
