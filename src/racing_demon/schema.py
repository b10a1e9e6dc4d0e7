"""JSON Schemas shipped as package data, and validation against them."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator

from racing_demon.schema_check import Check, compile_schema


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The schema ``schemas/<name>.schema.json`` from the installed package."""
    text = resources.files("racing_demon").joinpath("schemas", f"{name}.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator(name: str) -> Draft202012Validator:
    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def schema_errors(name: str, instance: object) -> list[str]:
    """Every way ``instance`` breaks schema ``name``, each with its JSON path."""
    errors = sorted(_validator(name).iter_errors(instance), key=lambda e: list(e.absolute_path))
    return [f"{error.json_path}: {error.message}" for error in errors]


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
}


@cache
def _record_validator(kind: str) -> Draft202012Validator:
    """The log-record schema narrowed to one kind: for a body of that kind it accepts
    exactly what the whole schema accepts, without evaluating the other kinds' branches."""
    return Draft202012Validator(_narrowed(kind))


@cache
def _record_check(kind: str) -> Check:
    return compile_schema(_narrowed(kind), load_schema("log-record")["$defs"])


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
    a compiled check (``schema_check``) passes a valid record, and jsonschema explains an
    invalid one."""
    body = value.get("body") if isinstance(value, dict) else None
    kind = body.get("kind") if isinstance(body, dict) else None
    if not isinstance(kind, str) or kind not in _RECORD_DEFS:
        return schema_errors("log-record", value)
    if _record_check(kind)(value):
        return []
    errors = sorted(_record_validator(kind).iter_errors(value), key=lambda e: list(e.absolute_path))
    # Fail closed should the two ever disagree (a test compares them on mutated records).
    return [f"{error.json_path}: {error.message}" for error in errors] or [
        "$: refused by the compiled schema check, though jsonschema finds no error"
    ]
