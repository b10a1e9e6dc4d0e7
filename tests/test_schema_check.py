"""The compiled schema check agrees with jsonschema, the reference, on every record."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from racing_demon.schema import load_schema, record_errors
from racing_demon.schema_check import SchemaCompileError, compile_schema

GOLDEN = Path(__file__).resolve().parent / "golden" / "logs"
RECORDS = [
    json.loads(line)
    for path in sorted(GOLDEN.glob("*.jsonl"))
    for line in path.read_bytes().splitlines()
]
BY_KIND = {record["body"]["kind"]: record for record in RECORDS}
WHOLE = load_schema("log-record")
REFERENCE = Draft202012Validator(WHOLE)
COMPILED = compile_schema(WHOLE)


def _bounds(node: Any, keyword: str) -> set[int]:
    """Every value of ``keyword`` anywhere in the schema."""
    found: set[int] = set()
    if isinstance(node, dict):
        if isinstance(node.get(keyword), int):
            found.add(node[keyword])
        for value in node.values():
            found |= _bounds(value, keyword)
    elif isinstance(node, list):
        for value in node:
            found |= _bounds(value, keyword)
    return found


# Values on and around every bound the schema sets: where a wrong comparison shows.
EDGE_INTEGERS = sorted(
    {b + d for k in ("minimum", "maximum") for b in _bounds(WHOLE, k) for d in (-1, 0, 1)}
)
EDGE_LENGTHS = sorted(
    {b + d for k in ("minLength", "maxLength") for b in _bounds(WHOLE, k) for d in (-1, 0, 1)}
    | {31, 32, 33, 63, 64, 65, 127, 128, 129}
)
EDGE_SIZES = sorted(
    {max(0, b + d) for k in ("minItems", "maxItems") for b in _bounds(WHOLE, k) for d in (-1, 0, 1)}
)

scalars = (
    st.none()
    | st.booleans()
    | st.sampled_from(EDGE_INTEGERS)
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.sampled_from([1.0, 2.5, -0.0])
    | st.builds(lambda n, c: c * n, st.sampled_from(EDGE_LENGTHS), st.sampled_from("0aZ_é"))
    | st.text(max_size=8)
    | st.sampled_from(["move", "genesis", "call", "complete", "0" * 32 + "\n", "ab\n"])
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.builds(lambda n, x: [x] * n, st.sampled_from(EDGE_SIZES), inner)
        | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


def valid(value: Any) -> bool:
    return REFERENCE.is_valid(value)


def test_every_golden_record_passes_both() -> None:
    kinds = {"genesis", "hand_start", "move", "tie", "call", "bounce", "stall", "hand_end", "final"}
    assert kinds <= BY_KIND.keys()
    for record in RECORDS:
        assert valid(record)
        assert COMPILED(record)
        assert record_errors(record) == []


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


def _nudged(value: Any) -> st.SearchStrategy[Any]:
    if isinstance(value, bool) or value is None:
        return json_values
    if isinstance(value, int):
        return st.sampled_from(EDGE_INTEGERS)
    if isinstance(value, str):
        return st.builds(
            lambda n, c: (value * n)[:n] if value else c * n,
            st.sampled_from(EDGE_LENGTHS),
            st.sampled_from("0aA"),
        )
    if isinstance(value, list):
        return st.builds(
            lambda n: (value * n)[:n] if value else [0] * n, st.sampled_from(EDGE_SIZES)
        )
    return json_values


@st.composite
def mutated_records(draw: st.DrawFn) -> Any:
    record = copy.deepcopy(draw(st.sampled_from(sorted(BY_KIND.values(), key=str))))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(record)))
        if not path:
            continue
        parent = record
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        action = draw(st.sampled_from(["nudge", "nudge", "replace", "delete", "add"]))
        if action == "nudge":  # the same type, at an edge: where a wrong bound shows
            parent[last] = draw(_nudged(parent[last]))
        elif action == "replace":
            parent[last] = draw(json_values)
        elif action == "delete":
            del parent[last]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "prev", "hand", "n", "reason", "key"]))] = draw(
                json_values
            )
        else:
            parent.append(draw(json_values))
    return record


@settings(max_examples=1500, deadline=None)
@given(mutated_records())
def test_the_compiled_check_agrees_with_jsonschema_on_mutated_records(record: Any) -> None:
    assert COMPILED(record) == valid(record)
    assert (record_errors(record) == []) == valid(record)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_the_compiled_check_agrees_with_jsonschema_on_any_value(value: Any) -> None:
    assert COMPILED(value) == valid(value)


@pytest.mark.parametrize(
    ("schema", "instance", "expected"),
    [
        ({"const": 1}, True, False),  # a boolean is not a number
        ({"const": True}, 1, False),
        ({"enum": [0]}, False, False),
        ({"const": [1, {"a": True}]}, [1, {"a": True}], True),
        ({"const": 1}, 1.0, True),
        ({"type": "integer"}, 1.0, True),  # jsonschema: an integral float is an integer
        ({"type": "integer"}, True, False),
        ({"type": "number"}, False, False),
        ({"pattern": "b"}, "abc", True),  # search, not match
        ({"pattern": "^[a-f]{2}$"}, "ab\n", True),  # Python's $ accepts a final newline
        ({"minLength": 2}, 5, True),  # other types hold vacuously
        ({"type": ["string", "null"]}, None, True),
        ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, 3, False),
        ({"not": {"required": ["x"]}}, {"x": 1}, False),
        ({"if": {"const": 1}, "then": False, "else": True}, 1, False),
        ({"additionalProperties": {"type": "string"}, "properties": {"a": True}}, {"b": 1}, False),
    ],
)
def test_keyword_semantics_follow_jsonschema(schema: Any, instance: Any, expected: bool) -> None:
    assert Draft202012Validator(schema).is_valid(instance) is expected
    assert compile_schema(schema)(instance) is expected


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"uniqueItems": True}, "unsupported keyword 'uniqueItems'"),
        ({"patternProperties": {"a": True}}, "patternProperties"),
        ({"$ref": "https://example.invalid/x.json"}, "only local"),
        ({"$ref": "#/$defs/missing"}, "unknown reference"),
        ({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}, "recursive"),
        ({"then": True}, "without 'if'"),
        ({"type": "decimal"}, "unknown type"),
        ([], "an object or a boolean"),
    ],
)
def test_what_it_cannot_check_it_refuses_to_compile(schema: Any, message: str) -> None:
    with pytest.raises(SchemaCompileError, match=message):
        compile_schema(schema)
