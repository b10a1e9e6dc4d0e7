"""JSON Schemas shipped as package data, and validation against them.

jsonschema-rs passes the valid values of the hot paths (records, receipts, plans, rules);
jsonschema, the reference that explains a refusal, is imported only when a value is
refused or the reference is asked for (``EcmaValidator``): verifying a valid log loads
none of it.

Where neither has a build (the browser page's Pyodide), the standard library stands in
for both, for the schemas whose keywords it reads (it refuses any other schema):
``predicate`` passes the valid values, a schema compiled into one function, and
``stdlib_validator`` explains a refusal, each error worded as jsonschema words it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

try:
    import jsonschema_rs
except ImportError:  # no build of it here (Pyodide): the reference decides alone
    _FAST = False
else:
    _FAST = True

from racing_demon.schema import stdlib_validator
from racing_demon.schema.ecma_regex import PatternError, search
from racing_demon.schema.predicate import Predicate, compile_predicate

if TYPE_CHECKING:
    from jsonschema import ValidationError

    # The stubs' name for a class that jsonschema's create() and extend() make.
    from jsonschema.validators import _Validator


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    from jsonschema import ValidationError

    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    # jsonschema reads these patterns with Python's meaning here and again in
    # additionalProperties; no schema of ours needs them, so they are refused, not misread.
    raise PatternError(f"patternProperties is not read as ECMA-262: {sorted(patterns)}")


@cache
def _ecma_validator() -> type[_Validator]:
    """Draft 2020-12 with every pattern meaning what ECMA-262 means, as JSON Schema says
    (and as jsonschema-rs reads our schemas' patterns, tests/test_ecma_regex.py): the
    reference here, made when first asked for."""
    from jsonschema import Draft202012Validator, validators

    extended: type[_Validator] = validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator, {"pattern": _pattern, "patternProperties": _pattern_properties}
    )
    return extended


def __getattr__(name: str) -> type[_Validator]:
    """``EcmaValidator``, the reference validator class, made on first use."""
    if name == "EcmaValidator":
        return _ecma_validator()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The schema ``schemas/<name>.schema.json`` from the installed package."""
    text = resources.files("racing_demon").joinpath("schemas", f"{name}.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


_Explain = Callable[[object], list[str]]  # every way a value breaks one schema, in order


@cache
def _validator(name: str) -> _Explain:
    return _reference(load_schema(name))


def _reference(schema: dict[str, Any]) -> _Explain:
    """What explains ``schema``'s refusals: jsonschema, or without it the standard
    library's validator."""
    try:
        reference = _ecma_validator()
    except ImportError:  # no build of jsonschema's rpds-py here (Pyodide)
        return stdlib_validator.Validator(schema).errors
    reference.check_schema(schema)
    return functools.partial(_explained, reference(schema))


def schema_errors(name: str, instance: object) -> list[str]:
    """Every way ``instance`` breaks schema ``name``, each with its JSON path."""
    return _validator(name)(instance)


def _explained(validator: _Validator, instance: object) -> list[str]:
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    return [f"{error.json_path}: {error.message}" for error in errors]


@cache
def _fast(name: str) -> jsonschema_rs.Validator:
    return jsonschema_rs.Draft202012Validator(load_schema(name))


def _fast_verdict(name: str, instance: object) -> bool | None:
    """jsonschema-rs's answer, or None for a value it cannot take (a lone surrogate, which
    it cannot encode as UTF-8; a key that is not a string): the reference then decides
    alone. Where it is missing, the schema compiled into a predicate answers."""
    if not _FAST:
        return _predicate(name)(instance)
    try:
        return _fast(name).is_valid(instance)
    except ValueError:
        return None


@cache
def _predicate(name: str) -> Predicate:
    return compile_predicate(load_schema(name))


# Should the fast answer refuse what the reference passes, the value is still refused:
# tests compare them on mutated records and receipts.
_DISAGREEMENT: Final = (
    "$: refused by jsonschema-rs, though jsonschema finds no error"
    if _FAST
    else "$: refused by the compiled schema, though the reference validator finds no error"
)


def checked_errors(name: str, instance: object) -> list[str]:
    """``schema_errors(name, instance)``, faster for the many valid instances of a stream
    (receipts, a plan's thousands of tables): jsonschema-rs passes a valid one, and
    jsonschema explains an invalid one."""
    verdict = _fast_verdict(name, instance)
    if verdict:
        return []
    errors = schema_errors(name, instance)
    return errors if verdict is None else errors or [_DISAGREEMENT]


_RECORD_DEFS = {
    "genesis": "genesis",
    "hand_start": "hand_start",
    "move": "player",
    "tie": "player",
    "call": "player",
    "agree": "player",
    "resign": "player",
    "bounce": "bounce",
    "stall": "stall",
    "hand_end": "hand_end",
    "final": "final",
    "pause": "pause",
    "lag": "lag",
}


@cache
def _record_validator(kind: str) -> _Explain:
    """The log-record schema narrowed to one kind: for a body of that kind it accepts
    exactly what the whole schema accepts, without evaluating the other kinds' branches."""
    return _reference(_narrowed(kind))


def _narrowed(kind: str) -> dict[str, Any]:
    whole = load_schema("log-record")
    defs = whole["$defs"]
    narrowed = {
        "type": "object",
        "additionalProperties": False,
        "required": whole["required"],
        "properties": {
            "body": {"allOf": [defs["common"], defs[_RECORD_DEFS[kind]]]},
            "sigs": whole["properties"]["sigs"],
        },
    }
    # Local references resolved once here: resolving them per record cost more than the
    # rest of the validation.
    inlined: dict[str, Any] = _inline(narrowed, defs)
    return inlined


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and len(node) == 1:
            return _inline(defs[ref.removeprefix("#/$defs/")], defs)
        return {key: _inline(value, defs) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    return node


def record_errors(value: object) -> list[str]:
    """``schema_errors("log-record", value)``, an order of magnitude faster on the hot path:
    jsonschema-rs passes a valid record, and jsonschema, on the schema narrowed to the
    record's kind, explains an invalid one."""
    verdict = _fast_verdict("log-record", value)
    if verdict:
        return []
    body = value.get("body") if isinstance(value, dict) else None
    kind = body.get("kind") if isinstance(body, dict) else None
    if isinstance(kind, str) and kind in _RECORD_DEFS:
        errors = _record_validator(kind)(value)
    else:
        errors = schema_errors("log-record", value)
    return errors if verdict is None else errors or [_DISAGREEMENT]
