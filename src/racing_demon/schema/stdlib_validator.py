"""A JSON Schema (draft 2020-12) validator on the standard library alone, for the keywords
our log-record and rules-profile schemas use, and no other.

It stands in for jsonschema and jsonschema-rs where neither exists: in the browser page's
Pyodide, which has no build of jsonschema-rs nor of rpds-py (which jsonschema needs). It
answers yes or no exactly as jsonschema does (tests/test_schema_fallback.py compares them),
and words each error as jsonschema does for the same keyword. A schema that uses any keyword
it does not know is refused when loaded (``UnknownKeyword``), so it never passes a value by
ignoring a constraint. Patterns mean what ECMA-262 means (``racing_demon.schema.ecma_regex``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final

from racing_demon.errors import RacingDemonError
from racing_demon.schema.ecma_regex import compile_pattern

DRAFT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"

Path = tuple[int | str, ...]  # where in the instance, outermost first
Error = tuple[Path, str]  # an error's place and its message


class UnknownKeyword(RacingDemonError, ValueError):
    """A schema this validator cannot read faithfully: a keyword it does not know, or one
    whose value is not of the form it reads."""


# Keywords that say nothing about validity.
_ANNOTATIONS: Final = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "default", "examples"}
)
_TYPE_NAMES: Final = frozenset(
    {"array", "boolean", "integer", "null", "number", "object", "string"}
)
_DEFS_PREFIX: Final = "#/$defs/"
_PLAIN_NAME: Final = re.compile(r"[a-zA-Z][a-zA-Z0-9_]*")  # written .name in a path


def _is_type(instance: object, name: str) -> bool:
    """JSON Schema's types over what ``json.loads`` gives, as jsonschema reads them: a bool
    is no number, and a float with no fraction is an integer."""
    if name == "object":
        return isinstance(instance, dict)
    if name == "array":
        return isinstance(instance, list)
    if name == "string":
        return isinstance(instance, str)
    if name == "null":
        return instance is None
    if name == "boolean":
        return isinstance(instance, bool)
    if isinstance(instance, bool):
        return False
    if name == "integer":
        return isinstance(instance, int) or (isinstance(instance, float) and instance.is_integer())
    return isinstance(instance, int | float)  # "number"


def _equal(one: object, two: object) -> bool:
    """JSON equality: true is not 1 nor false 0, at any depth; 1 and 1.0 are equal."""
    if isinstance(one, str) or isinstance(two, str):
        return one == two
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(map(_equal, one, two))
    if isinstance(one, dict) and isinstance(two, dict):
        return len(one) == len(two) and all(
            key in two and _equal(value, two[key]) for key, value in one.items()
        )
    if isinstance(one, bool) or isinstance(two, bool):
        return one is two
    return one == two


def _json_path(path: Path) -> str:
    """The path as jsonschema's ``json_path`` writes it."""
    parts = ["$"]
    for segment in path:
        if isinstance(segment, int):
            parts.append(f"[{segment}]")
        elif _PLAIN_NAME.fullmatch(segment):
            parts.append(f".{segment}")
        else:
            escaped = segment.replace("\\", "\\\\").replace("'", "\\'")
            parts.append(f"['{escaped}']")
    return "".join(parts)


class Validator:
    """A draft 2020-12 ``schema`` (a dict or a bool) of the keywords this module reads,
    checked whole when made: ``UnknownKeyword`` for any other keyword, anywhere in it."""

    def __init__(self, schema: Mapping[str, Any] | bool) -> None:
        self._root = schema
        self._check(schema, "#")

    def errors(self, instance: object) -> list[str]:
        """Every way ``instance`` breaks the schema, ``$.path: message``, ordered by path as
        ``racing_demon.schema.schema_errors`` orders jsonschema's."""
        found = sorted(self._errors(self._root, instance, ()), key=lambda error: list(error[0]))
        return [f"{_json_path(path)}: {message}" for path, message in found]

    def is_valid(self, instance: object) -> bool:
        """Whether ``instance`` is valid: the first error ends the search."""
        return next(self._errors(self._root, instance, ()), None) is None

    # -- loading: every keyword known, every value of the form read -------------------

    def _check(self, schema: object, where: str) -> None:
        if isinstance(schema, bool):
            return
        if not isinstance(schema, dict):
            raise UnknownKeyword(f"{where}: a schema is an object or a boolean")
        for keyword, value in schema.items():
            here = f"{where}/{keyword}"
            if keyword in _ANNOTATIONS:
                if keyword == "$schema" and value != DRAFT_2020_12:
                    raise UnknownKeyword(f"{here}: only draft 2020-12 is read, not {value!r}")
                continue
            reader = _LOAD.get(keyword)
            if reader is None:
                raise UnknownKeyword(f"{here}: keyword {keyword!r} is not read by this validator")
            reader(self, value, here)

    def _subschemas(self, value: object, where: str) -> None:
        if not isinstance(value, dict):
            raise UnknownKeyword(f"{where}: an object of schemas expected")
        for name, schema in value.items():
            self._check(schema, f"{where}/{name}")

    def _schema_list(self, value: object, where: str) -> None:
        if not isinstance(value, list) or not value:
            raise UnknownKeyword(f"{where}: a non-empty array of schemas expected")
        for index, schema in enumerate(value):
            self._check(schema, f"{where}/{index}")

    def _ref(self, value: object, where: str) -> None:
        if not isinstance(value, str) or self._resolve(value) is None:
            raise UnknownKeyword(f"{where}: {value!r} is not a reference into this schema's $defs")

    def _resolve(self, ref: str) -> object:
        defs = self._root.get("$defs") if isinstance(self._root, dict) else None
        if not ref.startswith(_DEFS_PREFIX) or not isinstance(defs, dict):
            return None
        return defs.get(ref.removeprefix(_DEFS_PREFIX))

    # -- validating: the keywords in the schema's order, as jsonschema takes them -----

    def _errors(self, schema: object, instance: object, path: Path) -> Iterator[Error]:
        if schema is True:
            return
        if schema is False:
            yield path, f"False schema does not allow {instance!r}"
            return
        assert isinstance(schema, dict)  # _check saw to it
        for keyword, value in schema.items():
            check = _CHECKS.get(keyword)
            if check is not None:
                yield from check(self, value, instance, schema, path)


_Loader = Callable[[Validator, Any, str], None]


def _load_one(validator: Validator, value: object, where: str) -> None:
    validator._check(value, where)


def _load_type(validator: Validator, value: object, where: str) -> None:
    names = value if isinstance(value, list) else [value]
    if not names or not all(isinstance(name, str) and name in _TYPE_NAMES for name in names):
        raise UnknownKeyword(f"{where}: {value!r} is not a type or a list of types")


def _load_list(validator: Validator, value: object, where: str) -> None:
    if not isinstance(value, list):
        raise UnknownKeyword(f"{where}: an array expected")


def _load_names(validator: Validator, value: object, where: str) -> None:
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise UnknownKeyword(f"{where}: an array of property names expected")


def _load_bound(validator: Validator, value: object, where: str) -> None:
    if not _is_type(value, "number"):
        raise UnknownKeyword(f"{where}: a number expected")


def _load_count(validator: Validator, value: object, where: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise UnknownKeyword(f"{where}: a count (an integer, 0 or more) expected")


def _load_pattern(validator: Validator, value: object, where: str) -> None:
    if not isinstance(value, str):
        raise UnknownKeyword(f"{where}: a pattern is a string")
    compile_pattern(value)  # PatternError for one it cannot read


def _load_nothing(validator: Validator, value: object, where: str) -> None:
    """``const``: any value."""


_LOAD: Final[dict[str, _Loader]] = {
    "$defs": Validator._subschemas,
    "$ref": Validator._ref,
    "type": _load_type,
    "enum": _load_list,
    "const": _load_nothing,
    "minimum": _load_bound,
    "maximum": _load_bound,
    "minLength": _load_count,
    "maxLength": _load_count,
    "minItems": _load_count,
    "maxItems": _load_count,
    "pattern": _load_pattern,
    "required": _load_names,
    "properties": Validator._subschemas,
    "additionalProperties": _load_one,
    "items": _load_one,
    "allOf": Validator._schema_list,
    "anyOf": Validator._schema_list,
    "oneOf": Validator._schema_list,
    "not": _load_one,
    "if": _load_one,
    "then": _load_one,
    "else": _load_one,
}

_Check = Callable[[Validator, Any, object, dict[str, Any], Path], Iterator[Error]]


def _ref(
    v: Validator, ref: str, instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    yield from v._errors(v._resolve(ref), instance, path)


def _type(
    v: Validator, types: str | list[str], instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    names = types if isinstance(types, list) else [types]
    if not any(_is_type(instance, name) for name in names):
        yield path, f"{instance!r} is not of type {', '.join(map(repr, names))}"


def _enum(
    v: Validator, enums: list[Any], instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    if not any(_equal(each, instance) for each in enums):
        yield path, f"{instance!r} is not one of {enums!r}"


def _const(
    v: Validator, const: object, instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    if not _equal(instance, const):
        yield path, f"{const!r} was expected"


def _minimum(
    v: Validator, bound: float, instance: Any, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    if _is_type(instance, "number") and instance < bound:
        yield path, f"{instance!r} is less than the minimum of {bound!r}"


def _maximum(
    v: Validator, bound: float, instance: Any, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    if _is_type(instance, "number") and instance > bound:
        yield path, f"{instance!r} is greater than the maximum of {bound!r}"


def _too_short(instance: Sequence[Any], least: int) -> str:
    return f"{instance!r} {'should be non-empty' if least == 1 else 'is too short'}"


def _too_long(instance: Sequence[Any], most: int) -> str:
    return f"{instance!r} {'is expected to be empty' if most == 0 else 'is too long'}"


def _min_length(
    v: Validator, least: int, instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    if isinstance(instance, str) and len(instance) < least:
        yield path, _too_short(instance, least)


def _max_length(
    v: Validator, most: int, instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    if isinstance(instance, str) and len(instance) > most:
        yield path, _too_long(instance, most)


def _min_items(
    v: Validator, least: int, instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    if isinstance(instance, list) and len(instance) < least:
        yield path, _too_short(instance, least)


def _max_items(
    v: Validator, most: int, instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    if isinstance(instance, list) and len(instance) > most:
        yield path, _too_long(instance, most)


def _pattern(
    v: Validator, pattern: str, instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    if isinstance(instance, str) and compile_pattern(pattern)(instance) is None:
        yield path, f"{instance!r} does not match {pattern!r}"


def _required(
    v: Validator, names: list[str], instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    if isinstance(instance, dict):
        for name in names:
            if name not in instance:
                yield path, f"{name!r} is a required property"


def _properties(
    v: Validator,
    properties: dict[str, Any],
    instance: object,
    schema: dict[str, Any],
    path: Path,
) -> Iterator[Error]:
    if isinstance(instance, dict):
        for name, subschema in properties.items():
            if name in instance:
                yield from _descend(v, subschema, instance[name], path, name)


def _additional_properties(
    v: Validator, extra: object, instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    if not isinstance(instance, dict):
        return
    known = schema.get("properties", {})
    extras = [name for name in instance if name not in known]
    if extra is False:
        if extras:
            names = sorted(extras, key=str)
            verb = "was" if len(names) == 1 else "were"
            listed = ", ".join(map(repr, names))
            yield path, f"Additional properties are not allowed ({listed} {verb} unexpected)"
    elif extra is not True:
        for name in extras:
            yield from _descend(v, extra, instance[name], path, name)


def _items(
    v: Validator, items: object, instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    if isinstance(instance, list):
        for index, item in enumerate(instance):
            yield from _descend(v, items, item, path, index)


def _descend(
    v: Validator, schema: object, instance: object, path: Path, segment: int | str
) -> Iterator[Error]:
    """``schema``'s errors on the member ``segment`` of the instance at ``path``. jsonschema
    places a false schema's refusal of a member at the member's parent: so here too."""
    yield from v._errors(schema, instance, path if schema is False else (*path, segment))


def _all_of(
    v: Validator, schemas: list[Any], instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    for subschema in schemas:
        yield from v._errors(subschema, instance, path)


def _valid(v: Validator, schema: object, instance: object, path: Path) -> bool:
    return next(v._errors(schema, instance, path), None) is None


def _any_of(
    v: Validator, schemas: list[Any], instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    if not any(_valid(v, subschema, instance, path) for subschema in schemas):
        yield path, f"{instance!r} is not valid under any of the given schemas"


def _one_of(
    v: Validator, schemas: list[Any], instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    valid = [subschema for subschema in schemas if _valid(v, subschema, instance, path)]
    if not valid:
        yield path, f"{instance!r} is not valid under any of the given schemas"
    elif len(valid) > 1:
        # jsonschema names the ones after the first valid, then the first.
        reprs = ", ".join(map(repr, [*valid[1:], valid[0]]))
        yield path, f"{instance!r} is valid under each of {reprs}"


def _not(
    v: Validator, refused: object, instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    if _valid(v, refused, instance, path):
        yield path, f"{instance!r} should not be valid under {refused!r}"


def _if(
    v: Validator, condition: object, instance: object, schema: dict[str, Any], path: Path
) -> Iterator[Error]:
    branch = "then" if _valid(v, condition, instance, path) else "else"
    if branch in schema:
        yield from v._errors(schema[branch], instance, path)


# "then" and "else" are read by "if"; "$defs" only through "$ref".
_CHECKS: Final[dict[str, _Check]] = {
    "$ref": _ref,
    "type": _type,
    "enum": _enum,
    "const": _const,
    "minimum": _minimum,
    "maximum": _maximum,
    "minLength": _min_length,
    "maxLength": _max_length,
    "minItems": _min_items,
    "maxItems": _max_items,
    "pattern": _pattern,
    "required": _required,
    "properties": _properties,
    "additionalProperties": _additional_properties,
    "items": _items,
    "allOf": _all_of,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "not": _not,
    "if": _if,
}
