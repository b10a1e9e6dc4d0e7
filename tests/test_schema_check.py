"""The compiled schema check agrees with jsonschema, the reference, on every record."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from racing_demon.schema import EcmaValidator, load_schema, record_errors
from racing_demon.schema.compiled import SchemaCompileError, compile_schema

GOLDEN = Path(__file__).resolve().parent / "golden" / "logs"
RECORDS = [
    json.loads(line)
    for path in sorted(GOLDEN.glob("*.jsonl"))
    for line in path.read_bytes().splitlines()
]
BY_KIND = {record["body"]["kind"]: record for record in RECORDS}
WHOLE = load_schema("log-record")
REFERENCE = EcmaValidator(WHOLE)
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


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(mutated_records())
def test_the_compiled_check_agrees_with_jsonschema_on_mutated_records(record: Any) -> None:
    assert COMPILED(record) == valid(record)
    assert (record_errors(record) == []) == valid(record)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(json_values)
def test_the_compiled_check_agrees_with_jsonschema_on_any_value(value: Any) -> None:
    assert COMPILED(value) == valid(value)


CLOSED: Any = {"additionalProperties": False}
CLOSED_A: Any = {"properties": {"a": True}, **CLOSED}


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
        ({"pattern": "^[a-f]{2}$"}, "ab\n", False),  # ECMA-262's $ is the end of the string
        ({"pattern": "^[a-f]{2}$"}, "ab", True),
        ({"pattern": "^\\d$"}, "\u0663", False),  # an Arabic-Indic digit is not [0-9]
        ({"minLength": 2}, 5, True),  # other types hold vacuously
        ({"type": ["string", "null"]}, None, True),
        ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, 3, False),
        ({"not": {"required": ["x"]}}, {"x": 1}, False),
        ({"if": {"const": 1}, "then": False, "else": True}, 1, False),
        ({"additionalProperties": {"type": "string"}, "properties": {"a": True}}, {"b": 1}, False),
        ({"additionalProperties": {"type": "string"}, "properties": {"a": True}}, {"a": 1}, True),
        ({"additionalProperties": {"type": "integer"}}, {"a": 1.0, "b": 2}, True),
        ({"additionalProperties": {"type": "integer"}}, {"a": 1, "b": True}, False),
        ({"additionalProperties": False}, {}, True),
        ({"additionalProperties": False}, {"a": None}, False),
        ({"additionalProperties": False, "required": ["a"]}, {"a": 1}, False),
        ({"type": "integer"}, 1e20, True),
        ({"type": "integer"}, 1.5, False),
        ({"type": "number"}, 1.5, True),
        ({"type": ["integer", "boolean"]}, 2.0, True),
        ({"type": []}, None, False),
        ({"const": 1.5}, 1.5, True),
        ({"const": None}, False, False),
        ({"const": False}, 0, False),
        ({"const": "a"}, ["a"], False),
        ({"const": 2**70}, 2.0**70, True),
        ({"enum": ["a", "b", 1]}, 1.0, True),
        ({"enum": ["a", "b", 1]}, True, False),
        ({"enum": []}, None, False),
        ({"enum": ["a", "b"]}, ["a"], False),
        ({"minimum": 1.5}, 1, False),
        ({"maximum": 2**70}, 2**70 + 1, False),
        ({"minimum": 0}, False, True),  # a boolean is not a number: vacuous
        ({"maxItems": 1}, "ab", True),
        ({"items": False}, [], True),
        ({"items": False}, [None], False),
        # What one member of allOf establishes, a later one relies on, and only that.
        ({"allOf": [{"type": "integer"}, {"type": "number", "maximum": 3}]}, 2.0, True),
        ({"allOf": [{"type": "integer"}, {"type": "number", "maximum": 3}]}, True, False),
        ({"allOf": [{"type": "number"}, {"type": "integer"}]}, 1.5, False),
        ({"allOf": [{"type": "number"}, {"type": "integer"}]}, 1.0, True),
        ({"allOf": [{"type": "string"}, {"type": "integer"}]}, "1", False),
        ({"allOf": [{"type": "string"}, {"minItems": 1, "minimum": 5}]}, "", True),
        ({"allOf": [{"required": ["a", "b"]}, CLOSED_A]}, {"a": 1}, False),
        ({"allOf": [{"required": ["a", "b"]}, CLOSED_A]}, {"a": 1, "b": 2}, False),
        ({"allOf": [{"required": ["a", "b"]}, CLOSED_A]}, 5, True),
        ({"allOf": [{"type": "object", "required": ["b"]}, CLOSED_A]}, {"b": 1}, False),
        ({"allOf": [{"type": "object", "required": ["a"]}, CLOSED_A]}, {"a": 1}, True),
        ({"allOf": [{"type": "object", "required": ["a"]}, CLOSED_A]}, {"a": 1, "c": 1}, False),
        ({"$ref": "#/$defs/n", "$defs": {"n": {"type": "integer"}}, "maximum": 1}, 2, False),
        ({"$ref": "#/$defs/n", "$defs": {"n": {"type": "integer"}}, "maximum": 1}, 1.0, True),
        ({"if": {"type": "integer"}, "then": {"minimum": 2}, "else": {"type": "string"}}, 1, False),
        (
            {"if": {"type": "integer"}, "then": {"minimum": 2}, "else": {"type": "string"}},
            2.0,
            True,
        ),
        (
            {"if": {"type": "integer"}, "then": {"minimum": 2}, "else": {"type": "string"}},
            True,
            False,
        ),
        ({"if": {"required": ["a"]}, "then": {"properties": {"a": False}}}, {"a": 1}, False),
        ({"if": {"required": ["a"]}, "else": {"properties": {"b": False}}}, {"b": 1}, False),
        ({"if": {"properties": {"a": {"const": 1}}}, "then": {"required": ["b"]}}, {"a": 1}, False),
        ({"if": {"properties": {"a": {"const": 1}}}, "then": {"required": ["b"]}}, {"a": 2}, True),
        ({"if": False}, None, True),
        ({"not": {"type": "integer"}}, 1.0, False),
        ({"not": {"properties": {"a": {"type": "string"}}}}, {"a": 1}, True),
        ({"not": True}, None, False),
        (
            {"oneOf": [{"properties": {"a": {"type": "string"}}}, {"required": ["a"]}]},
            {"a": "x"},
            False,
        ),
        (
            {"oneOf": [{"properties": {"a": {"type": "string"}}}, {"required": ["a"]}]},
            {"a": 1},
            True,
        ),
        ({"oneOf": [{"pattern": "a"}, {"pattern": "b"}]}, "ab", False),
        ({"oneOf": [{"pattern": "a"}, {"pattern": "b"}]}, "b", True),
        ({"oneOf": [{"type": "null"}]}, None, True),
        ({"oneOf": []}, None, False),
        # Past a handful of names, sets rather than a test per name.
        ({"required": list("abcdefghij")}, dict.fromkeys("abcdefghi"), False),
        ({"required": list("abcdefghij")}, dict.fromkeys("abcdefghij"), True),
        ({"properties": dict.fromkeys("abcdefghij", True), **CLOSED}, {"k": 1}, False),
        ({"properties": dict.fromkeys("abcdefghij", True), **CLOSED}, {"j": 1}, True),
    ],
)
def test_keyword_semantics_follow_jsonschema(schema: Any, instance: Any, expected: bool) -> None:
    assert EcmaValidator(schema).is_valid(instance) is expected
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
        ({1: True}, "keywords are strings"),
        ({"$defs": {"a/b": True}, "$ref": "#/$defs/a/b"}, "only plain names"),
        ({"$defs": {"a~1b": True}, "$ref": "#/$defs/a~1b"}, "only plain names"),
        ({"required": "a"}, "'required' is a list"),
        ({"required": [1]}, "'required' is a list"),
        ({"properties": [{"a": True}]}, "'properties' maps names"),
        ({"minimum": "1"}, "'minimum' is a number"),
        ({"maxLength": True}, "'maxLength' is a number"),
        ({"pattern": "("}, "bad pattern"),
        ({"pattern": "(?<n>a)\\k<m>"}, "bad pattern"),  # no ECMA-262 expression
        ({"type": "integer", "pattern": "a*+"}, "bad pattern"),
        ({"pattern": 1}, "'pattern' is a string"),
        ({"enum": "ab"}, "'enum' is a list"),
        ({"allOf": {"a": True}}, "'allOf' is a list"),
        ({"oneOf": True}, "'oneOf' is a list"),
        # Refused wherever it appears, even where it could never apply.
        ({"type": "string", "items": {"uniqueItems": True}}, "uniqueItems"),
        ({"type": "string", "additionalProperties": {"anyOf": []}}, "anyOf"),
        ({"if": {"prefixItems": []}}, "prefixItems"),
    ],
)
def test_what_it_cannot_check_it_refuses_to_compile(schema: Any, message: str) -> None:
    with pytest.raises(SchemaCompileError, match=message):
        compile_schema(schema)


# -- generated schemas: every keyword, nested and combined -----------------------------

NAMES = ["a", "b", "c"]
TYPES = ["object", "array", "string", "number", "integer", "boolean", "null"]
CONSTANTS = [None, True, False, 0, 1, 1.0, -1, 2.5, "", "a", "ab", [], [1], [True], {"a": 1}]
SCALARS = [
    *(None, True, False, 0, 1, -1, 2, 3, 0.0, -0.0, 1.0, 1.5, 2.0, 1e20, 2**70),
    *("", "a", "b", "ab", "ba", "abc", "a\n", "é", "\r", "1", "\u0663", "_"),
]
# Every generated schema meets all of these, then a few drawn at random.
EVERY = [*SCALARS, [], [1], [True, "a"], {}, {"a": 1}, {"a": "ab", "b": True}, {"z": None}]
instances = st.recursive(
    st.sampled_from(SCALARS),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from([*NAMES, "z"]), inner)
    ),
    max_leaves=8,
)
ASSERTIONS: dict[str, st.SearchStrategy[Any]] = {
    "type": st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), max_size=3, unique=True),
    "const": st.sampled_from(CONSTANTS),
    "enum": st.lists(st.sampled_from(CONSTANTS), max_size=4)
    | st.lists(st.sampled_from(["", "a", "b", "ab"]), min_size=2, max_size=3),
    "required": st.lists(st.sampled_from(NAMES), max_size=3, unique=True),
    "minimum": st.sampled_from([-1, 0, 1, 1.5, 2]),
    "maximum": st.sampled_from([-1, 0, 1, 1.5, 2]),
    "minLength": st.sampled_from([0, 1, 2]),
    "maxLength": st.sampled_from([0, 1, 2]),
    "minItems": st.sampled_from([0, 1, 2]),
    "maxItems": st.sampled_from([0, 1, 2]),
    "pattern": st.sampled_from(
        ["^a", "b$", "^[ab]{2}$", "a|b", "^$", "^a$", "^\\d$", "\\w$", "^.$", "^[^a]$"]
    ),
}


def _keywords(strategies: dict[str, st.SearchStrategy[Any]], size: int) -> st.SearchStrategy[Any]:
    """Schemas with one to ``size`` of the keywords ``strategies`` draws."""
    return st.lists(
        st.sampled_from(sorted(strategies)), min_size=1, max_size=size, unique=True
    ).flatmap(lambda names: st.fixed_dictionaries({name: strategies[name] for name in names}))


def _applicators(inner: st.SearchStrategy[Any]) -> dict[str, st.SearchStrategy[Any]]:
    return {
        **ASSERTIONS,
        "properties": st.dictionaries(st.sampled_from(NAMES), inner, max_size=3),
        "additionalProperties": inner,
        "items": inner,
        "allOf": st.lists(inner, max_size=3),
        "oneOf": st.lists(inner, max_size=3),
        "not": inner,
        "if": inner,
        "then": inner,
        "else": inner,
    }


def _without_lone_then(schema: Any) -> Any:
    if not isinstance(schema, dict) or "if" in schema:
        return schema
    return {key: value for key, value in schema.items() if key not in ("then", "else")}


def _schemas(refs: list[str]) -> st.SearchStrategy[Any]:
    leaves = st.booleans() | _keywords(ASSERTIONS, 3)
    if refs:
        leaves |= st.sampled_from([{"$ref": f"#/$defs/{name}"} for name in refs])
    nested = st.recursive(
        leaves,
        lambda inner: _keywords(_applicators(inner), 3).map(_without_lone_then),
        max_leaves=6,
    )
    return nested


@st.composite
def schemas_with_defs(draw: st.DrawFn) -> Any:
    defs = draw(st.dictionaries(st.sampled_from(["x", "y"]), _schemas([]), max_size=2))
    schema = draw(_schemas(sorted(defs)))
    return {"$defs": defs, "allOf": [schema]} if defs else schema


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(schemas_with_defs(), st.lists(instances, max_size=8))
def test_the_compiled_check_agrees_with_jsonschema_on_generated_schemas(
    schema: Any, values: list[Any]
) -> None:
    check = compile_schema(schema)
    reference = EcmaValidator(schema)
    for value in [*EVERY, *values]:
        assert check(value) is reference.is_valid(value), value


def _mixed(depth: int) -> tuple[Any, Any]:
    """A schema nesting the applicators ``depth`` times, and an instance it accepts."""
    schema: Any = {"type": "integer", "minimum": 0}
    instance: Any = 1
    for level in range(depth):
        wrap = level % 5
        if wrap == 0:
            schema = {"type": "object", "required": ["a"], "properties": {"a": schema}}
            instance = {"a": instance}
        elif wrap == 1:
            schema = {"items": schema, "minItems": 1}
            instance = [instance]
        elif wrap == 2:
            schema = {"not": {"not": schema}}
        elif wrap == 3:
            schema = {"oneOf": [schema, {"type": "string"}]}
        else:
            schema = {"if": {"type": "object"}, "then": {"additionalProperties": schema}}
            instance = {"b": instance}
    return schema, instance


def _blocks(depth: int) -> tuple[Any, Any]:
    """Nested loops and conditionals: too deep for one function past 100 indents."""
    schema: Any = {"type": "integer", "minimum": 0}
    instance: Any = 1
    for level in range(depth):
        if level % 2:
            schema, instance = {"properties": {"a": schema}}, {"a": instance}
        else:
            schema, instance = {"items": schema}, [instance]
    return schema, instance


def _negations(depth: int) -> tuple[Any, Any]:
    """Nested parentheses: too deep for Python's parser past 200."""
    schema: Any = {"type": "integer", "minimum": 0}
    for _ in range(depth):
        schema = {"not": {"not": schema}}
    return schema, 1


@pytest.mark.parametrize(
    ("build", "depth"), [(_mixed, 1), (_mixed, 9), (_mixed, 40), (_blocks, 60), (_negations, 100)]
)
def test_deep_nesting_compiles_and_agrees(
    build: Callable[[int], tuple[Any, Any]], depth: int
) -> None:
    # Deep enough to need helper functions: Python limits nesting within one function.
    schema, instance = build(depth)
    check = compile_schema(schema)
    reference = EcmaValidator(schema)
    broken = json.loads(json.dumps(instance).replace("1", "-1"))
    for value in (instance, broken, "x", None):
        assert check(value) is reference.is_valid(value)
    assert check(instance) is True
    assert check(broken) is False


AWKWARD = ["'", '"', "\\", "\n", "\x00", "\ud800", "é", "'); import os; ('", "{v}", "v1", "_k1"]


@pytest.mark.parametrize("text", AWKWARD)
def test_constants_reach_the_code_only_as_values(text: str) -> None:
    schema = {
        "type": "object",
        "required": [text],
        "additionalProperties": False,
        "properties": {text: {"const": text}, "other": {"enum": [text, "x"]}},
    }
    check = compile_schema(schema)
    reference = EcmaValidator(schema)
    for value in ({text: text}, {text: text, "other": text}, {text: text + "x"}, {"x": text}):
        assert check(value) is reference.is_valid(value)
    assert check({text: text}) is True


@pytest.mark.parametrize(
    "wanted", [2**70, -(2**63) - 1, 2**63, 1e300, float("inf"), -0.0, [1, {"a": [None]}]]
)
def test_large_and_unusual_constants(wanted: Any) -> None:
    for schema in ({"const": wanted}, {"enum": ["a", wanted]}, {"minimum": 0, "maximum": wanted}):
        if "maximum" in schema and not isinstance(wanted, int | float):
            continue
        check = compile_schema(schema)
        reference = EcmaValidator(schema)
        for value in (wanted, copy.deepcopy(wanted), 2**70, 2**70 + 1, 0, 0.0, True, "a"):
            assert check(value) is reference.is_valid(value)
