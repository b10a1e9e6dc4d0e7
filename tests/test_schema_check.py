"""The hot-path schema check (jsonschema-rs) agrees with jsonschema, the reference, on
every record and receipt: both accept, or both refuse."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from receipting import golden, lines_of, receipts_of

import racing_demon.schema
from racing_demon.schema import (
    EcmaValidator,
    checked_errors,
    load_schema,
    record_errors,
    schema_errors,
)

GOLDEN = Path(__file__).resolve().parent / "golden" / "logs"
SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
RECORDS = [
    json.loads(line)
    for path in sorted(GOLDEN.glob("*.jsonl"))
    for line in path.read_bytes().splitlines()
]
BY_KIND = {record["body"]["kind"]: record for record in RECORDS}
RECEIPTS = [json.loads(line) for line in lines_of(receipts_of(golden("table-3p-signed"))).split()]
BY_OUTCOME = {receipt["body"]["outcome"]: receipt for receipt in RECEIPTS}
WHOLE = load_schema("log-record")
REFERENCE = {name: EcmaValidator(load_schema(name)) for name in ("log-record", "receipt")}
FAST = {name: jsonschema_rs.Draft202012Validator(load_schema(name)) for name in REFERENCE}


def _bounds(node: Any, keyword: str) -> set[int]:
    """Every value of ``keyword`` anywhere in the schemas."""
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


BOTH = [WHOLE, load_schema("receipt")]
# Values on and around every bound the schemas set: where a wrong comparison shows.
EDGE_INTEGERS = sorted(
    {b + d for k in ("minimum", "maximum") for b in _bounds(BOTH, k) for d in (-1, 0, 1)}
    | {2**63 - 1, 2**63, 2**64, 2**70, -(2**63) - 1}
)
# The reader refuses floats, but an integral one is an integer to JSON Schema.
EDGE_FLOATS = sorted({float(b) + d for b in EDGE_INTEGERS if abs(b) < 2**60 for d in (0, 0.5)})
EDGE_LENGTHS = sorted(
    {b + d for k in ("minLength", "maxLength") for b in _bounds(BOTH, k) for d in (-1, 0, 1)}
    | {31, 32, 33, 63, 64, 65, 127, 128, 129}
)
EDGE_SIZES = sorted(
    {max(0, b + d) for k in ("minItems", "maxItems") for b in _bounds(BOTH, k) for d in (-1, 0, 1)}
)

scalars = (
    st.none()
    | st.booleans()
    | st.sampled_from(EDGE_INTEGERS)
    | st.sampled_from(EDGE_FLOATS)
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.sampled_from([1.0, 2.5, -0.0])
    | st.builds(lambda n, c: c * n, st.sampled_from(EDGE_LENGTHS), st.sampled_from("0aZ_é٣"))
    | st.text(max_size=8)
    | st.sampled_from(["move", "genesis", "call", "0" * 32 + "\n", "ab\n", "HAND\n", "a\ud800"])
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
        return st.sampled_from(EDGE_INTEGERS) | st.sampled_from(EDGE_FLOATS)
    if isinstance(value, str):
        return st.builds(
            lambda n, c: (value * n)[:n] if value else c * n,
            st.sampled_from(EDGE_LENGTHS),
            st.sampled_from("0aA"),
        ) | st.builds(lambda end: value + end, st.sampled_from(["\n", "\r\n", "\u2028", "٣", "G"]))
    if isinstance(value, list):
        return st.builds(
            lambda n: (value * n)[:n] if value else [0] * n, st.sampled_from(EDGE_SIZES)
        )
    return json_values


def mutated(samples: dict[str, Any], names: list[str]) -> st.SearchStrategy[Any]:
    """One of ``samples`` with one to three of its members nudged, replaced, deleted or
    added (a member named from ``names``)."""

    @st.composite
    def draw_mutated(draw: st.DrawFn) -> Any:
        value = copy.deepcopy(draw(st.sampled_from(sorted(samples.values(), key=str))))
        for _ in range(draw(st.integers(1, 3))):
            path = draw(st.sampled_from(_paths(value)))
            if not path:
                continue
            parent = value
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
                parent[draw(st.sampled_from(names))] = draw(json_values)
            else:
                parent.append(draw(json_values))
        return value

    return draw_mutated()


def valid(name: str, value: Any) -> bool:
    return REFERENCE[name].is_valid(value)


def fast(name: str, value: Any) -> bool | None:
    """jsonschema-rs's verdict, None where it cannot take the value (a lone surrogate)."""
    try:
        return FAST[name].is_valid(value)
    except ValueError:
        return None


def test_every_golden_record_and_receipt_passes_both() -> None:
    kinds = {"genesis", "hand_start", "move", "tie", "call", "bounce", "stall", "hand_end", "final"}
    assert kinds <= BY_KIND.keys()
    assert {"move", "bounce"} <= BY_OUTCOME.keys()
    for record in RECORDS:
        assert valid("log-record", record)
        assert FAST["log-record"].is_valid(record)
        assert record_errors(record) == []
    for receipt in RECEIPTS:
        assert valid("receipt", receipt)
        assert FAST["receipt"].is_valid(receipt)
        assert checked_errors("receipt", receipt) == []


RECORD_NAMES = ["extra", "prev", "hand", "n", "reason", "key"]


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(mutated(BY_KIND, RECORD_NAMES))
def test_the_fast_check_agrees_with_jsonschema_on_mutated_records(record: Any) -> None:
    assert fast("log-record", record) in (None, valid("log-record", record))
    assert (record_errors(record) == []) == valid("log-record", record)


@settings(max_examples=200, deadline=None)
@given(mutated(BY_KIND, RECORD_NAMES))
def test_record_errors_refuses_what_jsonschema_refuses(record: Any) -> None:
    assert (record_errors(record) == []) == valid("log-record", record)


@settings(max_examples=300, deadline=None)
@given(mutated(BY_OUTCOME, ["extra", "reason", "player", "n", "seq", "table"]))
def test_the_fast_check_agrees_with_jsonschema_on_mutated_receipts(receipt: Any) -> None:
    assert fast("receipt", receipt) in (None, valid("receipt", receipt))
    assert (checked_errors("receipt", receipt) == []) == valid("receipt", receipt)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(json_values)
def test_the_fast_check_agrees_with_jsonschema_on_any_value(value: Any) -> None:
    for name in FAST:
        assert fast(name, value) in (None, valid(name, value))


def test_a_refusal_is_explained_by_jsonschema() -> None:
    move = copy.deepcopy(BY_KIND["move"])
    move["body"]["game"] += "\n"
    assert record_errors(move) == [
        f"$.body.game: {move['body']['game']!r} does not match '^[0-9a-f]{{32}}$'"
    ]
    receipt = copy.deepcopy(BY_OUTCOME["move"])
    del receipt["body"]["seq"]
    assert checked_errors("receipt", receipt) == ["$.body: 'seq' is a required property"]


@pytest.mark.parametrize("member", ["game", "kind", "move"])
def test_what_jsonschema_rs_cannot_take_jsonschema_decides_alone(member: str) -> None:
    # Only a Python string holds a lone surrogate (json.loads of "\ud800"; the reader
    # refuses it): jsonschema-rs cannot encode it as UTF-8 and raises.
    record = copy.deepcopy(BY_KIND["move"])
    record["body"][member] = "\ud800" * 32
    receipt = copy.deepcopy(BY_OUTCOME["move"])
    receipt["body"][member if member in receipt["body"] else "outcome"] = "\ud800" * 32
    for name, value, check in (
        ("log-record", record, record_errors),
        ("receipt", receipt, lambda value: checked_errors("receipt", value)),
    ):
        # It raises where it must encode the string (to match a pattern), or answers.
        assert fast(name, value) in (None, valid(name, value))
        assert check(value) == schema_errors(name, value)
    record["body"] = {**BY_KIND["move"]["body"], "game": "\ud800" * 32}
    with pytest.raises(ValueError):
        FAST["log-record"].is_valid(record)


def test_a_value_only_jsonschema_rs_refuses_is_still_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fail closed should the two ever disagree: the value is refused, and the message
    says that jsonschema itself found nothing."""
    record, receipt = BY_KIND["move"], BY_OUTCOME["move"]
    disagree = ["$: refused by jsonschema-rs, though jsonschema finds no error"]
    monkeypatch.setattr(racing_demon.schema, "_fast_verdict", lambda name, value: False)
    assert record_errors(record) == disagree
    assert checked_errors("receipt", receipt) == disagree
    # An invalid value keeps jsonschema's explanation.
    assert record_errors({"body": {}}) == schema_errors("log-record", {"body": {}})
    # Where jsonschema-rs gives no verdict, jsonschema's own (none) stands.
    monkeypatch.setattr(racing_demon.schema, "_fast_verdict", lambda name, value: None)
    assert record_errors(record) == []
    assert checked_errors("receipt", receipt) == []


@pytest.mark.parametrize("path", sorted(SCHEMAS.glob("*.schema.json")), ids=lambda p: p.name)
def test_jsonschema_rs_builds_every_schema(path: Path) -> None:
    jsonschema_rs.Draft202012Validator(json.loads(path.read_text()))


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
        ({"type": "integer"}, 1e20, True),
        ({"type": "integer"}, 1.5, False),
        ({"type": "integer"}, 2**70, True),
        ({"type": "number"}, False, False),
        ({"pattern": "b"}, "abc", True),  # search, not match
        ({"pattern": "^[a-f]{2}$"}, "ab\n", False),  # ECMA-262's $ is the end of the string
        ({"pattern": "^\\d$"}, "\u0663", False),  # an Arabic-Indic digit is not [0-9]
        ({"minLength": 2}, 5, True),  # other types hold vacuously
        ({"maxLength": 1}, "\U0001f600", True),  # a length counts code points
        ({"type": ["string", "null"]}, None, True),
        ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, 3, False),
        ({"not": {"required": ["x"]}}, {"x": 1}, False),
        ({"if": {"const": 1}, "then": False, "else": True}, 1, False),
        ({"additionalProperties": {"type": "string"}, "properties": {"a": True}}, {"b": 1}, False),
        ({"additionalProperties": False, "required": ["a"]}, {"a": 1}, False),
        ({"const": 2**70}, 2.0**70, True),
        ({"enum": ["a", "b", 1]}, 1.0, True),
        ({"enum": ["a", "b", 1]}, True, False),
        ({"maximum": 2**70}, 2**70 + 1, False),
        ({"maximum": 9007199254740991}, 9007199254740992, False),
        ({"maximum": 9007199254740991}, 9007199254740992.0, False),
        ({"minimum": 0}, -(2**70), False),
        ({"minimum": 0}, False, True),  # a boolean is not a number: vacuous
        ({"items": False}, [None], False),
        ({"allOf": [{"required": ["a", "b"]}, CLOSED_A]}, {"a": 1, "b": 2}, False),
        ({"$ref": "#/$defs/n", "$defs": {"n": {"type": "integer"}}, "maximum": 1}, 2, False),
        ({"if": {"properties": {"a": {"const": 1}}}, "then": {"required": ["b"]}}, {"a": 1}, False),
        ({"uniqueItems": True}, [1, 1.0], False),
        ({"uniqueItems": True}, [1, True], True),
        ({"uniqueItems": True}, [{"a": 0}, {"a": False}], True),
        ({"propertyNames": {"pattern": "^[a-z]+$"}}, {"ab\n": 1}, False),
    ],
)
def test_keyword_semantics_follow_jsonschema(schema: Any, instance: Any, expected: bool) -> None:
    assert EcmaValidator(schema).is_valid(instance) is expected
    assert jsonschema_rs.Draft202012Validator(schema).is_valid(instance) is expected


# -- generated schemas: the keywords our schemas use, nested and combined ----------------

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
    "type": st.sampled_from(TYPES)
    | st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True),
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
        "allOf": st.lists(inner, min_size=1, max_size=3),
        "oneOf": st.lists(inner, min_size=1, max_size=3),
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
def test_the_fast_check_agrees_with_jsonschema_on_generated_schemas(
    schema: Any, values: list[Any]
) -> None:
    EcmaValidator.check_schema(schema)  # jsonschema-rs builds only a valid schema
    check = jsonschema_rs.Draft202012Validator(schema).is_valid
    reference = EcmaValidator(schema)
    for value in [*EVERY, *values]:
        assert check(value) is reference.is_valid(value), value
