"""The schema compiled into a predicate (``racing_demon.schema.predicate``) answers as
jsonschema and the standard library's validator do, for any schema of the keywords they
read and any value: random schemas, nested through every keyword that takes a subschema
(and a ``$ref`` to a schema that refers to itself), against random JSON values, in
particular those Python confuses (true and 1, 1 and 1.0). tests/test_schema_fallback.py
holds the three to one answer on the log-record and rules-profile schemas; this file
covers the compiler's other paths: the known type that spares a test, the keywords that
cannot apply, an empty block, a condition without a ``then``."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from racing_demon import schema
from racing_demon.schema.predicate import compile_predicate
from racing_demon.schema.stdlib_validator import Validator

NAMES = ["a", "b", "kind"]
TYPES = ["object", "array", "string", "null", "boolean", "integer", "number"]
PATTERNS = ["^a", "b$", "^[0-9a-f]{2}$", "x+", "^(ab|c)*$"]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([1.0, 2.5, -0.0, 0.0])
    | st.sampled_from(["", "a", "ab", "b", "x", "0f", "kind", "abc\n"])
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(NAMES), children, max_size=3)
    ),
    max_leaves=8,
)


def _keyword(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """One keyword and its value, ``children`` the subschemas."""
    counts = st.integers(0, 3)
    return st.one_of(
        st.builds(
            lambda t: {"type": t},
            st.sampled_from(TYPES)
            | st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True),
        ),
        st.builds(lambda e: {"enum": e}, st.lists(scalars, min_size=1, max_size=3)),
        st.builds(lambda e: {"enum": e}, st.lists(st.integers(-1, 2), min_size=1, max_size=3)),
        st.builds(lambda c: {"const": c}, values),
        st.builds(lambda n: {"minimum": n}, st.integers(-2, 2) | st.just(1.5)),
        st.builds(lambda n: {"maximum": n}, st.integers(-2, 2) | st.just(0.5)),
        st.builds(lambda n: {"minLength": n}, counts),
        st.builds(lambda n: {"maxLength": n}, counts),
        st.builds(lambda n: {"minItems": n}, counts),
        st.builds(lambda n: {"maxItems": n}, counts),
        st.builds(lambda p: {"pattern": p}, st.sampled_from(PATTERNS)),
        st.builds(
            lambda r: {"required": r}, st.lists(st.sampled_from(NAMES), max_size=2, unique=True)
        ),
        st.builds(
            lambda p: {"properties": p},
            st.dictionaries(st.sampled_from(NAMES), children, max_size=2),
        ),
        st.builds(
            lambda p, extra: {"properties": p, "additionalProperties": extra},
            st.dictionaries(st.sampled_from(NAMES), children, max_size=2),
            children,
        ),
        st.builds(lambda s: {"items": s}, children),
        st.builds(lambda s: {"allOf": s}, st.lists(children, min_size=1, max_size=2)),
        st.builds(lambda s: {"anyOf": s}, st.lists(children, min_size=1, max_size=2)),
        st.builds(lambda s: {"oneOf": s}, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda s: {"not": s}, children),
        st.builds(
            lambda condition, then, otherwise, which: {
                "if": condition,
                **({"then": then} if which & 1 else {}),
                **({"else": otherwise} if which & 2 else {}),
            },
            children,
            children,
            children,
            st.integers(0, 3),
        ),
    )


def _merged(parts: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for part in parts:
        merged.update(part)
    return merged


def _typed(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A type beside other keywords: the compiler leaves out what cannot apply to it."""
    return st.builds(
        lambda t, rest: {**_merged(rest), "type": t},
        st.sampled_from(TYPES),
        st.lists(_keyword(children), min_size=1, max_size=2),
    )


schemas = st.recursive(
    st.booleans() | st.just({}),
    lambda children: (
        st.lists(_keyword(children), min_size=1, max_size=3).map(_merged) | _typed(children)
    ),
    max_leaves=6,
)
# A tree: the schema refers to itself through $defs at some depth.
TREE = {
    "$defs": {
        "tree": {
            "anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#/$defs/tree"}}]
        }
    },
    "$ref": "#/$defs/tree",
}


def _agree(schema_document: Any, instance: Any) -> None:
    expected = not schema._explained(schema._ecma_validator()(schema_document), instance)
    assert Validator(schema_document).is_valid(instance) is expected, (schema_document, instance)
    assert compile_predicate(schema_document)(instance) is expected, (schema_document, instance)


@given(schemas, values)
@settings(max_examples=1500, deadline=None)
def test_a_random_schema_answers_as_jsonschema_does(schema_document: Any, instance: Any) -> None:
    _agree(schema_document, instance)


@given(
    st.recursive(
        st.integers(-1, 1) | st.just("x") | st.just(True), lambda c: st.lists(c, max_size=3)
    )
)
@settings(max_examples=100, deadline=None)
def test_a_schema_that_refers_to_itself_answers_as_jsonschema_does(instance: Any) -> None:
    _agree(TREE, instance)


def test_a_known_type_spares_its_test_and_what_cannot_apply() -> None:
    """Under "type": "string" a bound on numbers says nothing and is not written; under
    "type": "object" members are read without testing the type again."""
    predicate = compile_predicate({"type": "string", "minimum": 5, "maxLength": 1})
    assert predicate("a") and not predicate("ab") and not predicate(3)
    nested = compile_predicate(
        {
            "type": "object",
            "required": ["a"],
            "properties": {"a": {"type": "integer", "maximum": 2}},
        }
    )
    assert nested({"a": 2}) and not nested({"a": 3}) and not nested({"a": True})
    assert not nested({}) and not nested([])
