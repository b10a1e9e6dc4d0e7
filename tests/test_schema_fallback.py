"""The standard library's schema validator answers as jsonschema does (issue 34, point 1:
"The part of the verifier that judges moves and scores ... runs without orjson,
jsonschema, jsonschema-rs or PyNaCl, falling back to the standard library where the fast
libraries are missing, with the same verdicts").

jsonschema (``EcmaValidator``) is the reference. The log-record and rules-profile schemas,
whole and narrowed to each record kind as the verifier reads a record, are fed every line
and every rules document of the sample games and thousands of mutants of them; the
fallback's yes or no, and its errors, must be the reference's, and so must the yes or no
of the schema compiled into a predicate (``predicate``), which passes valid values where
jsonschema-rs is missing. Every keyword of those
schemas must have refused at least one mutant, and a schema with any other keyword is
refused when loaded. Patterns: the subset that ecma_regex translates for ``re`` finds what
regress finds, and any pattern outside it is refused.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_ecma_regex import CASES

from racing_demon import schema
from racing_demon.profiles import builtin_document
from racing_demon.schema import ecma_regex, load_schema, stdlib_validator
from racing_demon.schema.ecma_regex import PatternError, compile_pattern, translated
from racing_demon.schema.predicate import compile_predicate
from racing_demon.schema.stdlib_validator import UnknownKeyword, Validator

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_games"
KINDS = sorted(schema._RECORD_DEFS)

# Values a mutant puts in place of a member: every JSON type, the edges of the schemas'
# bounds and patterns, and what Python confuses (true and 1, 1 and 1.0).
REPLACEMENTS: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    2.5,
    2**53,
    "",
    "x",
    "A" * 41,
    "x" * 201,
    "0" * 32,
    "0" * 32 + "\n",
    "0" * 64,
    "0" * 128,
    "ab" * 16,
    "ab" * 65,
    "ILLEGAL_MOVE",
    "\ud800",
    "table",
    "-table",
    [],
    [None],
    [0, 1],
    {},
    {"x": 1},
]


def sample_values() -> list[dict[str, Any]]:
    """Every line of every sample log, parsed."""
    values = []
    for path in sorted(SAMPLES.rglob("*.jsonl")):
        if "receipts" not in path.name:
            values += [json.loads(line) for line in path.read_text().splitlines()]
    return values


def rules_documents(values: list[dict[str, Any]]) -> list[Any]:
    documents = [builtin_document(name) for name in ("table", "nertz", "peer2peer")]
    documents += [v["body"]["rules"] for v in values if v["body"].get("kind") == "genesis"]
    return documents


def members(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every member and item of ``value``, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key)
            yield from members(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*path, index)
            yield from members(item, (*path, index))


def mutants(value: Any, rng: random.Random, count: int) -> Iterator[Any]:
    """``count`` copies of ``value``, each with one member replaced, removed or added, or
    one array grown past the schemas' bounds."""
    paths = list(members(value))
    for _ in range(count):
        mutant = copy.deepcopy(value)
        path = rng.choice(paths)
        parent = mutant
        for segment in path[:-1]:
            parent = parent[segment]
        action = rng.randrange(4)
        target = parent[path[-1]]
        if action == 3 and isinstance(target, list) and target:
            target *= 17
        elif action == 0:
            parent[path[-1]] = copy.deepcopy(rng.choice(REPLACEMENTS))
        elif action == 1 and isinstance(parent, dict):
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[rng.choice(["extra", "kind", "v", "seat"])] = rng.choice(REPLACEMENTS)
        else:
            parent.append(copy.deepcopy(rng.choice(REPLACEMENTS)))
        yield mutant


def every_replacement(documents: list[Any]) -> Iterator[Any]:
    """Each of ``documents`` with each member replaced by each of REPLACEMENTS in turn."""
    for document in documents:
        for path in members(document):
            for replacement in REPLACEMENTS:
                mutant = copy.deepcopy(document)
                parent = mutant
                for segment in path[:-1]:
                    parent = parent[segment]
                parent[path[-1]] = copy.deepcopy(replacement)
                yield mutant


@pytest.fixture(scope="module")
def values() -> list[dict[str, Any]]:
    return sample_values()


class KeywordsSeen:
    """Which keywords of the fallback refused something (each compiled check wrapped)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.refused: set[str] = set()
        for keyword, compiler in list(stdlib_validator._COMPILERS.items()):
            wrapped = self._wrapped(keyword, compiler)
            monkeypatch.setitem(stdlib_validator._COMPILERS, keyword, wrapped)

    def _wrapped(self, keyword: str, compiler: Any) -> Any:
        def compiled(*args: Any) -> Any:
            check = compiler(*args)

            def seen(*args: Any) -> Any:
                errors = check(*args)
                if errors:
                    self.refused.add(keyword)
                return errors

            return seen

        return compiled


def schema_keywords(node: Any, names_below: bool = False) -> set[str]:
    """Every keyword a schema uses, at any depth (not the names of its properties)."""
    found: set[str] = set()
    if isinstance(node, dict):
        for key, item in node.items():
            if names_below:
                found |= schema_keywords(item)
                continue
            found.add(key)
            if key in ("properties", "$defs"):
                found |= schema_keywords(item, names_below=True)
            elif key not in ("enum", "const", "required", "default", "examples"):
                found |= schema_keywords(item)
    elif isinstance(node, list):
        for item in node:
            found |= schema_keywords(item)
    return found


def agree(name: str, reference_schema: dict[str, Any], instances: Iterator[Any]) -> int:
    """How many ``instances`` the fallback refused, each as the reference does; the
    compiled predicate answers yes or no as both do."""
    fallback = Validator(reference_schema)
    predicate = compile_predicate(reference_schema)
    reference = schema._ecma_validator()(reference_schema)
    refused = 0
    for instance in instances:
        expected = schema._explained(reference, instance)
        assert fallback.errors(instance) == expected, (name, instance)
        assert fallback.is_valid(instance) is (not expected), (name, instance)
        assert predicate(instance) is (not expected), (name, instance)
        refused += bool(expected)
    return refused


def test_the_fallback_answers_as_jsonschema_on_records_and_their_mutants(
    values: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = KeywordsSeen(monkeypatch)
    rng = random.Random(34)  # the mutants only; no deal depends on it
    whole = load_schema("log-record")
    moves = [v for v in values if v["body"]["kind"] == "move"]
    valid = [v for v in values if v["body"]["kind"] != "move"] + rng.sample(moves, 300)
    assert agree("log-record", whole, iter(valid)) == 0
    sample = rng.sample(values, 100)
    refused = agree("log-record", whole, (m for v in sample for m in mutants(v, rng, 15)))
    assert refused > 700
    for kind in KINDS:
        of_kind = [v for v in values if v["body"]["kind"] == kind][:20]
        narrowed = schema._narrowed(kind)
        agree(kind, narrowed, (m for v in of_kind for m in [v, *mutants(v, rng, 10)]))
    used = schema_keywords(whole) - stdlib_validator._ANNOTATIONS - {"$defs", "then", "else"}
    assert used <= seen.refused, f"no mutant was refused by {sorted(used - seen.refused)}"


def test_the_fallback_answers_as_jsonschema_on_rules_documents_and_their_mutants(
    values: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = KeywordsSeen(monkeypatch)
    rng = random.Random(5869)
    profile = load_schema("rules-profile")
    documents = rules_documents(values)
    assert agree("rules-profile", profile, iter(documents)) == 0
    refused = agree("rules-profile", profile, (m for d in documents for m in mutants(d, rng, 10)))
    refused += agree("rules-profile", profile, every_replacement(documents[:3]))
    assert refused > 1000
    used = schema_keywords(profile) - stdlib_validator._ANNOTATIONS - {"$defs", "then", "else"}
    assert used <= seen.refused, f"no mutant was refused by {sorted(used - seen.refused)}"


TREE = {"type": "array", "items": {"$ref": "#/$defs/tree"}}  # a schema that refers to itself


@pytest.mark.parametrize(
    ("instance", "schema_document"),
    [
        (1.0, {"type": "integer"}),
        (True, {"type": "integer"}),
        (True, {"enum": [1]}),
        (1.0, {"const": 1}),
        ([True], {"const": [1]}),
        ({"a": 1}, {"const": {"a": True}}),
        ("ab", {"not": {"type": "string"}}),
        (3, {"oneOf": [{"type": "integer"}, {"minimum": 0}, {"maximum": 1}]}),
        (3, {"anyOf": [{"type": "string"}, {"maximum": 1}]}),
        ({"b": 1, "a": 2}, {"properties": {"a": {}}, "additionalProperties": False}),
        ({"b": 1}, {"additionalProperties": {"type": "string"}}),
        ("", {"minLength": 1}),
        ("ab", {"maxLength": 0}),
        ([], {"minItems": 1}),
        ([1, 2], {"maxItems": 1, "items": {"type": "string"}}),
        (5, {"if": {"minimum": 3}, "then": {"maximum": 4}, "else": {"minimum": 0}}),
        (-5, {"if": {"minimum": 3}, "then": {"maximum": 4}, "else": {"minimum": 0}}),
        ({"a b": {"c'": 1}}, {"properties": {"a b": {"properties": {"c'": False}}}}),
        (2, {"enum": [1, 2.0]}),
        ([1], {"enum": [1, "a"]}),
        ({"a": []}, {"enum": ["a", "b"]}),
        ("a", {"const": "a", "type": "integer"}),
        ({}, {"type": "object", "properties": {"a": {"description": "nothing asked"}}}),
        ([1, "x"], {"type": "array", "items": {"type": "integer", "minimum": 0}}),
        ({"a": 1}, {"additionalProperties": False}),
        ({"b": 1}, {"properties": {"a": True}, "additionalProperties": {"const": 1}}),
        (
            [[[]], [1]],
            {
                "$defs": {"tree": {"type": "array", "items": {"$ref": "#/$defs/tree"}}},
                "$ref": "#/$defs/tree",
            },
        ),
        (
            [[[]], []],
            {"$defs": {"tree": {"items": {"$ref": "#/$defs/tree"}}}, "$ref": "#/$defs/tree"},
        ),
        ({"kind": "b"}, {"if": {"properties": {"kind": {"const": "a"}}}, "then": False}),
        ({"kind": "a"}, {"if": {"properties": {"kind": {"const": "a"}}}, "then": False}),
        (None, False),
        (None, True),
        ({}, {"type": "object", "enum": [""]}),  # a known type no member of the enum has
        (True, {"type": "boolean", "minimum": 2}),  # a bound says nothing of a bool
        ([1], {"type": "array", "maxLength": 0, "required": ["a"], "pattern": "^a"}),
    ],
)
def test_edge_cases_answer_and_read_as_jsonschema_words_them(
    instance: Any, schema_document: dict[str, Any]
) -> None:
    expected = schema._explained(schema._ecma_validator()(schema_document), instance)
    assert Validator(schema_document).errors(instance) == expected
    assert compile_predicate(schema_document)(instance) is (not expected)


@pytest.mark.parametrize(
    "schema_document",
    [
        {"patternProperties": {"^a": {}}},  # a keyword it does not read
        {"format": "date-time"},
        {"unevaluatedProperties": False},
        {"properties": {"a": {"exclusiveMinimum": 0}}},  # at any depth
        {"$defs": {"unused": {"dependentRequired": {}}}},  # even where nothing refers
        {"$ref": "https://example.com/schema"},  # only this schema's own $defs
        {"$ref": "#/$defs/missing"},
        {"$schema": "http://json-schema.org/draft-07/schema#"},
        {"type": "float"},
        {"minLength": -1},
        {"pattern": "^\\d+$"},  # outside the subset translated: ecma_regex refuses it
    ],
)
def test_a_schema_with_a_keyword_it_cannot_read_is_refused(
    schema_document: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A validator that skipped what it does not know would pass what it should refuse."""
    monkeypatch.setattr(ecma_regex, "_REGRESS", False)
    compile_pattern.cache_clear()
    try:
        with pytest.raises((UnknownKeyword, PatternError)):
            Validator(schema_document)
        with pytest.raises((UnknownKeyword, PatternError)):
            compile_predicate(schema_document)
    finally:
        compile_pattern.cache_clear()


def schema_patterns(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["pattern"]} if isinstance(node.get("pattern"), str) else set()
        return found.union(*(schema_patterns(item) for item in node.values()))
    if isinstance(node, list):
        return set().union(*(schema_patterns(item) for item in node))
    return set()


OUR_PATTERNS = sorted(
    schema_patterns(load_schema("log-record")) | schema_patterns(load_schema("rules-profile"))
)


@pytest.mark.parametrize("pattern", OUR_PATTERNS)
def test_our_patterns_are_translated_and_find_what_regress_finds(pattern: str) -> None:
    rng = random.Random(pattern)
    alphabet = "0123456789abcdefABCDEF_-xz\n\r\u0663\u00e9 "
    texts = ["", "\n", "\ud800", "0" * 32 + "\ud800"]
    for length in (1, 2, 3, 16, 31, 32, 33, 40, 41, 64, 127, 128, 129):
        texts += ["".join(rng.choice(alphabet) for _ in range(length)) for _ in range(20)]
        texts += [char * length + tail for char in "0aA_z" for tail in ("", "\n", "-", "\u0663")]
    regress_search = compile_pattern(pattern)
    fallback = translated(pattern)
    for text in texts:
        by_regress = regress_search(text) is not None
        assert fallback_finds(fallback, text) is by_regress, (pattern, text)


def fallback_finds(fallback: Any, text: str) -> bool:
    """The fallback's answer as compile_pattern gives it: no match in a lone surrogate."""
    return "\ud800" not in text and fallback.search(text) is not None


@pytest.mark.parametrize(("pattern", "matching", "others"), CASES)
def test_the_translated_subset_never_disagrees_and_refuses_the_rest(
    pattern: str, matching: list[str], others: list[str]
) -> None:
    """test_ecma_regex's cases, ECMAScript's answers: translated right, or refused."""
    try:
        fallback = translated(pattern)
    except PatternError:
        return
    assert [fallback.search(text) is not None for text in matching] == [True] * len(matching)
    assert [fallback.search(text) is not None for text in others] == [False] * len(others)


def test_the_subset_refuses_what_it_cannot_read_alike() -> None:
    for pattern in ("^a.c$", "\\d", "a{,3}", "(?:a)", "^*", "a{2", "[a", "(a", "a)", "()", "é"):
        with pytest.raises(PatternError):
            translated(pattern)
    assert {pattern for pattern, _, _ in CASES if accepted(pattern)} >= {
        "^[a-z]+$",
        "^[0-9a-f]{32}$",
        "^([0-9a-f]{2}){16,64}$",
        "^[A-Z_]{3,40}$",
        "^[a-z0-9][a-z0-9_-]{0,39}$",
    }


def accepted(pattern: str) -> bool:
    try:
        translated(pattern)
    except PatternError:
        return False
    return True
