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
from collections.abc import Callable, Mapping
from typing import Any, Final

from racing_demon.errors import RacingDemonError
from racing_demon.schema.ecma_regex import compile_pattern

DRAFT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"

Path = tuple[int | str, ...]  # where in the instance, outermost first
# Where in the instance, as the validation goes: the place it lies in and its own segment,
# None at the top. A pair costs less to make at every member than a path; an error's
# place is spelled out only when there is one (``_segments``).
_Where = tuple["_Where", int | str] | None
_Error = tuple[_Where, str]  # an error's place and its message
_Check = Callable[[Any, _Where], tuple[_Error, ...]]  # the errors of an instance at a place
_VALID: Final[tuple[_Error, ...]] = ()


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


def _is_number(instance: object) -> bool:
    return isinstance(instance, int | float) and not isinstance(instance, bool)


def _is_integer(instance: object) -> bool:
    if isinstance(instance, float):
        return instance.is_integer()
    return isinstance(instance, int) and not isinstance(instance, bool)


# JSON Schema's types over what ``json.loads`` gives, as jsonschema reads them: a bool is
# no number, and a float with no fraction is an integer.
_TYPE_TESTS: Final[dict[str, Callable[[object], bool]]] = {
    "object": lambda instance: isinstance(instance, dict),
    "array": lambda instance: isinstance(instance, list),
    "string": lambda instance: isinstance(instance, str),
    "null": lambda instance: instance is None,
    "boolean": lambda instance: isinstance(instance, bool),
    "integer": _is_integer,
    "number": _is_number,
}


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


def _segments(where: _Where) -> Path:
    segments: list[int | str] = []
    while where is not None:
        where, segment = where
        segments.append(segment)
    return tuple(reversed(segments))


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
        self._refs: dict[str, _Check] = {}
        self._validate = self._compiled(schema)

    def errors(self, instance: object) -> list[str]:
        """Every way ``instance`` breaks the schema, ``$.path: message``, ordered by path as
        ``racing_demon.schema.schema_errors`` orders jsonschema's."""
        found = sorted(
            ((_segments(where), message) for where, message in self._validate(instance, None)),
            key=lambda error: list(error[0]),
        )
        return [f"{_json_path(path)}: {message}" for path, message in found]

    def is_valid(self, instance: object) -> bool:
        """Whether ``instance`` is valid."""
        return not self._validate(instance, None)

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

    # -- validating: each schema compiled once into a check of its keywords, taken in the
    # schema's order as jsonschema takes them, the valid path allocating nothing ----------

    def _compiled(self, schema: object) -> _Check:
        if schema is True:
            return _always_valid
        if schema is False:
            return _never_valid
        assert isinstance(schema, dict)  # _check saw to it
        checks = [
            _COMPILERS[keyword](self, value, schema)
            for keyword, value in schema.items()
            if keyword in _COMPILERS
        ]
        if len(checks) == 1:
            return checks[0]

        def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
            found = _VALID
            for each in checks:
                errors = each(instance, where)
                if errors:
                    found += errors
            return found

        return check

    def _member(self, schema: object) -> Callable[[Any, _Where, int | str], tuple[_Error, ...]]:
        """``schema``'s check of a member ``segment`` of the instance at ``where``:
        jsonschema places a false schema's refusal of a member at the member's parent, so
        here too."""
        if schema is False:
            return lambda instance, where, segment: _never_valid(instance, where)
        check = self._compiled(schema)
        return lambda instance, where, segment: check(instance, (where, segment))

    def _referred(self, ref: str) -> _Check:
        """The check ``ref`` names, compiled at its first use (a schema may refer to
        itself)."""

        def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
            target = self._refs.get(ref)
            if target is None:
                target = self._refs[ref] = self._compiled(self._resolve(ref))
            return target(instance, where)

        return check


_Loader = Callable[[Validator, Any, str], None]


def _load_one(validator: Validator, value: object, where: str) -> None:
    validator._check(value, where)


def _load_type(validator: Validator, value: object, where: str) -> None:
    names = value if isinstance(value, list) else [value]
    if not names or not all(isinstance(name, str) and name in _TYPE_TESTS for name in names):
        raise UnknownKeyword(f"{where}: {value!r} is not a type or a list of types")


def _load_list(validator: Validator, value: object, where: str) -> None:
    if not isinstance(value, list):
        raise UnknownKeyword(f"{where}: an array expected")


def _load_names(validator: Validator, value: object, where: str) -> None:
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise UnknownKeyword(f"{where}: an array of property names expected")


def _load_bound(validator: Validator, value: object, where: str) -> None:
    if not _is_number(value):
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


_Compiler = Callable[[Validator, Any, dict[str, Any]], _Check]


def _always_valid(instance: Any, where: _Where) -> tuple[_Error, ...]:
    return _VALID


def _never_valid(instance: Any, where: _Where) -> tuple[_Error, ...]:
    return ((where, f"False schema does not allow {instance!r}"),)


def _ref(v: Validator, ref: str, schema: dict[str, Any]) -> _Check:
    return v._referred(ref)


def _type(v: Validator, types: str | list[str], schema: dict[str, Any]) -> _Check:
    names = types if isinstance(types, list) else [types]
    listed = ", ".join(map(repr, names))
    tests = [_TYPE_TESTS[name] for name in names]

    def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
        for test in tests:
            if test(instance):
                return _VALID
        return ((where, f"{instance!r} is not of type {listed}"),)

    return check


def _enum(v: Validator, enums: list[Any], schema: dict[str, Any]) -> _Check:
    # A string equals a string alone: a set of them answers for any instance at once.
    strings = frozenset(enums) if all(isinstance(each, str) for each in enums) else None

    def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
        if strings is not None:
            if isinstance(instance, str) and instance in strings:
                return _VALID
        elif any(_equal(each, instance) for each in enums):
            return _VALID
        return ((where, f"{instance!r} is not one of {enums!r}"),)

    return check


def _const(v: Validator, const: object, schema: dict[str, Any]) -> _Check:
    def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
        if _equal(instance, const):
            return _VALID
        return ((where, f"{const!r} was expected"),)

    return check


def _minimum(v: Validator, bound: float, schema: dict[str, Any]) -> _Check:
    def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
        if _is_number(instance) and instance < bound:
            return ((where, f"{instance!r} is less than the minimum of {bound!r}"),)
        return _VALID

    return check


def _maximum(v: Validator, bound: float, schema: dict[str, Any]) -> _Check:
    def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
        if _is_number(instance) and instance > bound:
            return ((where, f"{instance!r} is greater than the maximum of {bound!r}"),)
        return _VALID

    return check


def _length(kind: type[str] | type[list[Any]], least: int | None, most: int | None) -> _Check:
    """minLength (``kind`` str) or minItems (list) when ``least``, else the max."""

    def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
        if not isinstance(instance, kind):
            return _VALID
        if least is not None and len(instance) < least:
            words = "should be non-empty" if least == 1 else "is too short"
        elif most is not None and len(instance) > most:
            words = "is expected to be empty" if most == 0 else "is too long"
        else:
            return _VALID
        return ((where, f"{instance!r} {words}"),)

    return check


def _min_length(v: Validator, least: int, schema: dict[str, Any]) -> _Check:
    return _length(str, least, None)


def _max_length(v: Validator, most: int, schema: dict[str, Any]) -> _Check:
    return _length(str, None, most)


def _min_items(v: Validator, least: int, schema: dict[str, Any]) -> _Check:
    return _length(list, least, None)


def _max_items(v: Validator, most: int, schema: dict[str, Any]) -> _Check:
    return _length(list, None, most)


def _pattern(v: Validator, pattern: str, schema: dict[str, Any]) -> _Check:
    search = compile_pattern(pattern)

    def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
        if isinstance(instance, str) and search(instance) is None:
            return ((where, f"{instance!r} does not match {pattern!r}"),)
        return _VALID

    return check


def _required(v: Validator, names: list[str], schema: dict[str, Any]) -> _Check:
    def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
        if not isinstance(instance, dict):
            return _VALID
        return tuple(
            (where, f"{name!r} is a required property") for name in names if name not in instance
        )

    return check


def _properties(v: Validator, properties: dict[str, Any], schema: dict[str, Any]) -> _Check:
    members = [(name, v._member(subschema)) for name, subschema in properties.items()]

    def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
        found = _VALID
        if isinstance(instance, dict):
            for name, member in members:
                if name in instance:
                    errors = member(instance[name], where, name)
                    if errors:
                        found += errors
        return found

    return check


def _additional_properties(v: Validator, extra: object, schema: dict[str, Any]) -> _Check:
    known = frozenset(schema.get("properties", {}))
    member = v._member(extra)

    def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
        if not isinstance(instance, dict):
            return _VALID
        extras = [name for name in instance if name not in known]
        if not extras or extra is True:
            return _VALID
        if extra is False:
            names = sorted(extras, key=str)
            verb = "was" if len(names) == 1 else "were"
            listed = ", ".join(map(repr, names))
            return ((where, f"Additional properties are not allowed ({listed} {verb} unexpected)"),)
        found = _VALID
        for name in extras:
            found += member(instance[name], where, name)
        return found

    return check


def _items(v: Validator, items: object, schema: dict[str, Any]) -> _Check:
    member = v._member(items)

    def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
        found = _VALID
        if isinstance(instance, list):
            for index, item in enumerate(instance):
                errors = member(item, where, index)
                if errors:
                    found += errors
        return found

    return check


def _all_of(v: Validator, schemas: list[Any], schema: dict[str, Any]) -> _Check:
    checks = [v._compiled(subschema) for subschema in schemas]

    def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
        found = _VALID
        for each in checks:
            errors = each(instance, where)
            if errors:
                found += errors
        return found

    return check


def _any_of(v: Validator, schemas: list[Any], schema: dict[str, Any]) -> _Check:
    checks = [v._compiled(subschema) for subschema in schemas]

    def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
        if any(not each(instance, where) for each in checks):
            return _VALID
        return ((where, f"{instance!r} is not valid under any of the given schemas"),)

    return check


def _one_of(v: Validator, schemas: list[Any], schema: dict[str, Any]) -> _Check:
    checks = [(subschema, v._compiled(subschema)) for subschema in schemas]

    def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
        valid = [subschema for subschema, each in checks if not each(instance, where)]
        if not valid:
            return ((where, f"{instance!r} is not valid under any of the given schemas"),)
        if len(valid) > 1:
            # jsonschema names the ones after the first valid, then the first.
            reprs = ", ".join(map(repr, [*valid[1:], valid[0]]))
            return ((where, f"{instance!r} is valid under each of {reprs}"),)
        return _VALID

    return check


def _not(v: Validator, refused: object, schema: dict[str, Any]) -> _Check:
    refusal = v._compiled(refused)

    def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
        if refusal(instance, where):
            return _VALID
        return ((where, f"{instance!r} should not be valid under {refused!r}"),)

    return check


def _if(v: Validator, condition: object, schema: dict[str, Any]) -> _Check:
    holds = v._compiled(condition)
    then = v._compiled(schema["then"]) if "then" in schema else _always_valid
    otherwise = v._compiled(schema["else"]) if "else" in schema else _always_valid

    def check(instance: Any, where: _Where) -> tuple[_Error, ...]:
        return (otherwise if holds(instance, where) else then)(instance, where)

    return check


# "then" and "else" are read by "if"; "$defs" only through "$ref".
_COMPILERS: Final[dict[str, _Compiler]] = {
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
