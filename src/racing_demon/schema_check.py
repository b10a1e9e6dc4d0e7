"""A JSON Schema compiled to one Python predicate, for the verifier's hot path.

jsonschema interprets a schema anew for every instance: on a log record that cost more
than the rest of verification, signatures aside. This compiles the small subset of
draft 2020-12 that our schemas use into nested closures that answer only "valid or not";
jsonschema stays the reference and still explains every refusal (``schema.record_errors``).

A keyword outside the subset is refused when compiling, never skipped, so a schema that
grows a new keyword cannot be silently checked less. The semantics follow jsonschema's
where they differ from plain Python: ``true`` is not the integer 1, ``1.0`` is an integer,
``pattern`` searches rather than matches.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

Check = Callable[[Any], bool]

_ANNOTATIONS: Final = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "default", "examples"}
)


class SchemaCompileError(ValueError):
    """The schema uses something this compiler does not implement."""


def compile_schema(schema: Any, defs: Mapping[str, Any] | None = None) -> Check:
    """A predicate equal to "``instance`` is valid under ``schema``"; local ``$ref``s
    (``#/$defs/NAME``) resolve in ``defs`` (default: the schema's own ``$defs``)."""
    if defs is None:
        defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}
    return _Compiler(defs).compile(schema)


def _always(_: Any) -> bool:
    return True


def _never(_: Any) -> bool:
    return False


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_TYPES: Final[dict[str, Check]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": _is_number,
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
}


def _equal(one: Any, other: Any) -> bool:
    """JSON equality: booleans are not numbers, containers compare member by member."""
    if isinstance(one, bool) or isinstance(other, bool):
        return type(one) is type(other) and one == other
    if isinstance(one, list) and isinstance(other, list):
        return len(one) == len(other) and all(map(_equal, one, other))
    if isinstance(one, dict) and isinstance(other, dict):
        return one.keys() == other.keys() and all(_equal(one[k], other[k]) for k in one)
    if _is_number(one) and _is_number(other):
        return bool(one == other)
    return type(one) is type(other) and bool(one == other)


_MISSING: Final = object()


def _all(checks: tuple[Check, ...]) -> Check:
    if len(checks) == 1:
        return checks[0]

    def every(value: Any) -> bool:
        for check in checks:  # noqa: SIM110 - a loop costs less than all() over a generator
            if not check(value):
                return False
        return True

    return every


# The instance type each keyword constrains; it holds vacuously for any other type.
_APPLIES_TO: Final[dict[str, Check]] = {
    "properties": lambda v: isinstance(v, dict),
    "required": lambda v: isinstance(v, dict),
    "additionalProperties": lambda v: isinstance(v, dict),
    "items": lambda v: isinstance(v, list),
    "minItems": lambda v: isinstance(v, list),
    "maxItems": lambda v: isinstance(v, list),
    "pattern": lambda v: isinstance(v, str),
    "minLength": lambda v: isinstance(v, str),
    "maxLength": lambda v: isinstance(v, str),
    "minimum": _is_number,
    "maximum": _is_number,
}
_TYPE_OF_KEYWORD: Final = {
    "properties": "object",
    "required": "object",
    "additionalProperties": "object",
    "items": "array",
    "minItems": "array",
    "maxItems": "array",
    "pattern": "string",
    "minLength": "string",
    "maxLength": "string",
    "minimum": "number",
    "maximum": "number",
}


class _Compiler:
    def __init__(self, defs: Mapping[str, Any]) -> None:
        self._defs = defs
        self._resolving: set[str] = set()

    def compile(self, node: Any) -> Check:
        if node is True:
            return _always
        if node is False:
            return _never
        if not isinstance(node, dict):
            raise SchemaCompileError(f"a schema is an object or a boolean, not {node!r}")
        keywords = set(node) - _ANNOTATIONS - {"$defs", "then", "else"}
        if ("then" in node or "else" in node) and "if" not in node:
            raise SchemaCompileError("'then' or 'else' without 'if'")
        if "patternProperties" in node:
            raise SchemaCompileError("unsupported keyword 'patternProperties'")
        # With one declared type checked first, the type-specific keywords need no guard,
        # and those of other types hold vacuously.
        declared = node.get("type")
        single = declared if isinstance(declared, str) else None
        checks: list[Check] = []
        if "type" in keywords:
            checks.append(self._type(node))
        for keyword in sorted(keywords - {"type"}):
            make = _KEYWORDS.get(keyword)
            if make is None:
                raise SchemaCompileError(f"unsupported keyword {keyword!r}")
            check = make(self, node)
            if check is _always:
                continue
            applies = _APPLIES_TO.get(keyword)
            if (
                applies is None
                or single == _TYPE_OF_KEYWORD[keyword]
                or (single == "integer" and _TYPE_OF_KEYWORD[keyword] == "number")
            ):
                checks.append(check)
            elif single is None:
                checks.append(_guarded(applies, check))
        return _all(tuple(checks)) if checks else _always

    # -- keywords: each check may assume the instance has the keyword's type ----------

    def _ref(self, node: dict[str, Any]) -> Check:
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            raise SchemaCompileError(f"only local #/$defs/ references, not {ref!r}")
        name = ref.removeprefix("#/$defs/")
        if name not in self._defs:
            raise SchemaCompileError(f"unknown reference {ref!r}")
        if name in self._resolving:
            raise SchemaCompileError(f"recursive reference {ref!r}")
        self._resolving.add(name)
        try:
            return self.compile(self._defs[name])
        finally:
            self._resolving.discard(name)

    def _type(self, node: dict[str, Any]) -> Check:
        names = node["type"] if isinstance(node["type"], list) else [node["type"]]
        try:
            tests = tuple(_TYPES[name] for name in names)
        except (KeyError, TypeError):
            raise SchemaCompileError(f"unknown type {node['type']!r}") from None
        if len(tests) == 1:
            return tests[0]
        return lambda value: any(test(value) for test in tests)

    def _properties(self, node: dict[str, Any]) -> Check:
        pairs = tuple(
            (name, check)
            for name, schema in node["properties"].items()
            if (check := self.compile(schema)) is not _always
        )

        def properties(value: dict[str, Any]) -> bool:
            for name, check in pairs:
                member = value.get(name, _MISSING)
                if member is not _MISSING and not check(member):
                    return False
            return True

        return properties

    def _additional(self, node: dict[str, Any]) -> Check:
        known = frozenset(node.get("properties", {}))
        extra = self.compile(node["additionalProperties"])
        if extra is _never:
            return lambda value: value.keys() <= known
        return lambda value: all(extra(value[key]) for key in value.keys() - known)

    def _required(self, node: dict[str, Any]) -> Check:
        names = frozenset(node["required"])
        return lambda value: names <= value.keys()

    def _minimum(self, node: dict[str, Any]) -> Check:
        bound = node["minimum"]
        return lambda value: value >= bound

    def _maximum(self, node: dict[str, Any]) -> Check:
        bound = node["maximum"]
        return lambda value: value <= bound

    def _const(self, node: dict[str, Any]) -> Check:
        wanted = node["const"]
        return lambda value: _equal(value, wanted)

    def _enum(self, node: dict[str, Any]) -> Check:
        options = tuple(node["enum"])
        return lambda value: any(_equal(value, option) for option in options)

    def _items(self, node: dict[str, Any]) -> Check:
        check = self.compile(node["items"])
        return lambda value: all(map(check, value))

    def _min_items(self, node: dict[str, Any]) -> Check:
        bound = node["minItems"]
        return lambda value: len(value) >= bound

    def _max_items(self, node: dict[str, Any]) -> Check:
        bound = node["maxItems"]
        return lambda value: len(value) <= bound

    def _pattern(self, node: dict[str, Any]) -> Check:
        search = re.compile(node["pattern"]).search
        return lambda value: search(value) is not None

    def _min_length(self, node: dict[str, Any]) -> Check:
        bound = node["minLength"]
        return lambda value: len(value) >= bound

    def _max_length(self, node: dict[str, Any]) -> Check:
        bound = node["maxLength"]
        return lambda value: len(value) <= bound

    def _all_of(self, node: dict[str, Any]) -> Check:
        return _all(tuple(self.compile(schema) for schema in node["allOf"]))

    def _one_of(self, node: dict[str, Any]) -> Check:
        checks = tuple(self.compile(schema) for schema in node["oneOf"])
        return lambda value: sum(1 for check in checks if check(value)) == 1

    def _not(self, node: dict[str, Any]) -> Check:
        check = self.compile(node["not"])
        return lambda value: not check(value)

    def _if(self, node: dict[str, Any]) -> Check:
        condition = self.compile(node["if"])
        then = self.compile(node.get("then", True))
        otherwise = self.compile(node.get("else", True))
        return lambda value: then(value) if condition(value) else otherwise(value)


def _guarded(applies: Check, check: Check) -> Check:
    return lambda value: not applies(value) or check(value)


_KEYWORDS: Final[dict[str, Callable[[_Compiler, dict[str, Any]], Check]]] = {
    "$ref": _Compiler._ref,
    "additionalProperties": _Compiler._additional,
    "type": _Compiler._type,
    "properties": _Compiler._properties,
    "required": _Compiler._required,
    "minimum": _Compiler._minimum,
    "maximum": _Compiler._maximum,
    "const": _Compiler._const,
    "enum": _Compiler._enum,
    "items": _Compiler._items,
    "minItems": _Compiler._min_items,
    "maxItems": _Compiler._max_items,
    "pattern": _Compiler._pattern,
    "minLength": _Compiler._min_length,
    "maxLength": _Compiler._max_length,
    "allOf": _Compiler._all_of,
    "oneOf": _Compiler._one_of,
    "not": _Compiler._not,
    "if": _Compiler._if,
}
