"""JSON Schemas shipped as package data, and validation against them."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator


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
