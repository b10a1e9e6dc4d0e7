"""A JSON Schema compiled to the source of one Python function, for the verifier's hot path.

jsonschema interprets a schema anew for every instance: on a log record that cost more
than the rest of verification, signatures aside. This compiles the small subset of
draft 2020-12 that our schemas use into Python source that answers only "valid or not",
the way fastjsonschema does: nested schemas become straight-line tests in one function
(a helper function only where one must yield a value, as under ``not``, or nests deeply),
so a record costs a handful of inline comparisons rather than a call per keyword.
jsonschema stays the reference and still explains every refusal (``schema.record_errors``).

A keyword outside the subset is refused when compiling, never skipped, so a schema that
grows a new keyword cannot be silently checked less. The semantics follow jsonschema's
where they differ from plain Python: ``true`` is not the integer 1, ``1.0`` is an integer,
``pattern`` searches rather than matches, and means what ECMA-262 means (``ecma_regex``:
``$`` is the end of the string, ``\\d`` an ASCII digit). A ``$ref`` names a local
``#/$defs/NAME`` and is inlined, so a recursive one is refused.

Only names of our own making and the schema's constants reach the source: strings,
integers, booleans and ``None`` exactly as ``repr`` writes them, anything else (sets,
compiled patterns, floats, containers) as a name bound in a namespace that holds nothing
but those values and the few builtins the code calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from racing_demon.errors import RacingDemonError
from racing_demon.schema.ecma_regex import PatternError, compile_pattern

Check = Callable[[Any], bool]

_ANNOTATIONS: Final = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "default", "examples"}
)
# "then" and "else" are read with their "if".
_IGNORED: Final = _ANNOTATIONS | {"$defs", "then", "else"}

# The instance type each keyword constrains; it holds vacuously for any other type.
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
_KEYWORDS: Final = frozenset(_TYPE_OF_KEYWORD) | {
    "type",
    "const",
    "enum",
    "$ref",
    "allOf",
    "oneOf",
    "not",
    "if",
}

# Source testing that {v} has a JSON type, as jsonschema's type checker decides.
_TYPE_TESTS: Final = {
    "object": "isinstance({v}, dict)",
    "array": "isinstance({v}, list)",
    "string": "isinstance({v}, str)",
    "boolean": "isinstance({v}, bool)",
    "null": "{v} is None",
    "number": "type({v}) is int or (isinstance({v}, _NUMBER) and type({v}) is not bool)",
    "integer": (
        "type({v}) is int or (isinstance({v}, float) and {v}.is_integer())"
        " or (isinstance({v}, int) and type({v}) is not bool)"
    ),
}

# Past this many required names a set comparison costs less than one test per name.
_MAX_INLINE_KEYS: Final = 8
# Nesting beyond this moves into a helper function: Python's compiler limits how deeply
# blocks and parentheses may nest within one.
_MAX_DEPTH: Final = 8


class SchemaCompileError(RacingDemonError, ValueError):
    """The schema uses something this compiler does not implement."""


def compile_schema(schema: Any, defs: Mapping[str, Any] | None = None) -> Check:
    """A predicate equal to "``instance`` is valid under ``schema``"; local ``$ref``s
    (``#/$defs/NAME``) resolve in ``defs`` (default: the schema's own ``$defs``)."""
    if defs is None:
        defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}
    return _Compiler(defs).build(schema)


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


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# Everything the generated source may name besides the schema's constants.
_BUILTINS: Final[dict[str, Any]] = {
    "isinstance": isinstance,
    "type": type,
    "len": len,
    "dict": dict,
    "list": list,
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "_NUMBER": (int, float),
    "_equal": _equal,
}


@dataclass(frozen=True)
class _Block:
    """Statements that return False from the generated function when the instance is
    invalid, and fall through when it is valid."""

    lines: tuple[str, ...]


# A str part is an expression, true when the instance is valid.
_Part = str | _Block


@dataclass(frozen=True)
class _Known:
    """What the tests already generated guarantee where the next one runs, so that it
    need not repeat them: the instance's type, and names an object surely has."""

    json_type: str | None = None
    keys: frozenset[str] = frozenset()


def _holds(json_type: str, known: str | None) -> bool | None:
    """Whether a value of type ``known`` has type ``json_type``; None when not known."""
    if known is None:
        return None
    return known == json_type or (json_type == "number" and known == "integer")


def _indent(lines: list[str] | tuple[str, ...]) -> list[str]:
    return ["    " + line for line in lines]


def _conjunction(tests: list[str]) -> str:
    if not tests:
        return "True"
    return " and ".join(f"({test})" for test in tests)


def _statements(parts: list[_Part]) -> list[str]:
    """``parts`` as statements returning False at the first that fails."""
    lines: list[str] = []
    tests: list[str] = []
    for part in parts:
        if isinstance(part, str):
            tests.append(part)
            continue
        if tests:
            lines += [f"if not ({_conjunction(tests)}):", "    return False"]
            tests = []
        lines += part.lines
    if tests:
        lines += [f"if not ({_conjunction(tests)}):", "    return False"]
    return lines


class _Compiler:
    def __init__(self, defs: Mapping[str, Any]) -> None:
        self._defs = defs
        self._resolving: set[str] = set()
        self._namespace: dict[str, Any] = {"__builtins__": {}, **_BUILTINS}
        self._functions: list[str] = []
        self._count = 0

    def build(self, schema: Any) -> Check:
        var = self._fresh("v")
        name = self._function(self._node(schema, var, _Known(), 0)[0], var)
        source = "\n\n".join(self._functions)
        exec(compile(source, "<compiled JSON Schema>", "exec"), self._namespace)
        check: Check = self._namespace[name]
        return check

    # -- names and constants in the generated source ------------------------------------

    def _fresh(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    def _bind(self, value: Any) -> str:
        name = self._fresh("_k")
        self._namespace[name] = value
        return name

    def _literal(self, value: Any) -> str:
        """``value`` as source: its ``repr`` where that is a plain literal, else a name."""
        if value is None or type(value) in (bool, str):
            return repr(value)
        if type(value) is int and -(2**63) <= value < 2**63:
            return repr(value)
        return self._bind(value)

    def _function(self, parts: list[_Part], var: str) -> str:
        """Define a function of ``var`` true when ``parts`` hold; its name."""
        name = self._fresh("_f")
        lines = [f"def {name}({var}):", *_indent(_statements(parts)), "    return True"]
        self._functions.append("\n".join(lines))
        return name

    def _expression(self, parts: list[_Part], var: str) -> str:
        tests = [part for part in parts if isinstance(part, str)]
        if len(tests) == len(parts):
            return _conjunction(tests)
        return f"{self._function(parts, var)}({var})"

    # -- schemas ---------------------------------------------------------------------

    def _sub(self, schema: Any, var: str, known: _Known, depth: int) -> list[_Part]:
        """A schema nested in another: inline, or past ``_MAX_DEPTH`` a helper's call."""
        if depth < _MAX_DEPTH:
            return self._node(schema, var, known, depth + 1)[0]
        parts = self._node(schema, var, known, 0)[0]
        return [f"{self._function(parts, var)}({var})"] if parts else []

    def _node(self, node: Any, var: str, known: _Known, depth: int) -> tuple[list[_Part], _Known]:
        """Tests that ``var`` is valid under ``node``, and what they guarantee after."""
        if node is True:
            return [], known
        if node is False:
            return ["False"], known
        if not isinstance(node, dict):
            raise SchemaCompileError(f"a schema is an object or a boolean, not {node!r}")
        if not all(isinstance(keyword, str) for keyword in node):
            raise SchemaCompileError(f"keywords are strings: {sorted(map(repr, node))}")
        unsupported = sorted(node.keys() - _IGNORED - _KEYWORDS)
        if unsupported:
            raise SchemaCompileError(f"unsupported keyword {unsupported[0]!r}")
        if ("then" in node or "else" in node) and "if" not in node:
            raise SchemaCompileError("'then' or 'else' without 'if'")
        parts: list[_Part] = []
        if "type" in node:
            test, known = self._type(node["type"], var, known)
            parts += test
        for json_type in ("object", "array", "string", "number"):
            if not any(_TYPE_OF_KEYWORD.get(keyword) == json_type for keyword in node):
                continue
            holds = _holds(json_type, known.json_type)
            # Compiled even where it holds vacuously, so that it is refused if it must be.
            group, after = self._group(
                json_type, node, var, known if holds else _Known(json_type), depth
            )
            if holds:
                parts += group
                known = after
            elif holds is None and group:
                parts.append(self._guarded(json_type, group, var))
        if "const" in node:
            parts.append(self._equals(node["const"], var))
        if "enum" in node:
            parts.append(self._enum(node["enum"], var))
        if "$ref" in node:
            more, known = self._ref(node["$ref"], var, known, depth)
            parts += more
        if "allOf" in node:
            for member in self._schemas(node, "allOf"):
                more, known = self._node(member, var, known, depth)
                parts += more
        if "if" in node:
            parts += self._if(node, var, known, depth)
        if "not" in node:
            negated = self._sub(node["not"], var, known, depth)
            parts.append(f"not ({self._expression(negated, var)})")
        if "oneOf" in node:
            parts.append(self._one_of(node, var, known, depth))
        return parts, known

    def _type(self, declared: Any, var: str, known: _Known) -> tuple[list[_Part], _Known]:
        names = declared if isinstance(declared, list) else [declared]
        if not all(isinstance(name, str) and name in _TYPE_TESTS for name in names):
            raise SchemaCompileError(f"unknown type {declared!r}")
        if known.json_type is not None:
            if any(_holds(name, known.json_type) for name in names):
                return [], known
            if known.json_type == "number" and "integer" in names:
                names = ["integer"]
            else:
                return ["False"], known
        if not names:
            return ["False"], known
        tests = [_TYPE_TESTS[name].format(v=var) for name in names]
        test = tests[0] if len(tests) == 1 else " or ".join(f"({one})" for one in tests)
        return [test], _Known(names[0]) if len(set(names)) == 1 else known

    def _guarded(self, json_type: str, parts: list[_Part], var: str) -> _Part:
        """``parts``, which hold vacuously unless ``var`` has type ``json_type``."""
        test = _TYPE_TESTS[json_type].format(v=var)
        tests = [part for part in parts if isinstance(part, str)]
        if len(tests) == len(parts):
            return f"not ({test}) or ({_conjunction(tests)})"
        return _Block((f"if {test}:", *_indent(_statements(parts))))

    def _group(
        self, json_type: str, node: dict[str, Any], var: str, known: _Known, depth: int
    ) -> tuple[list[_Part], _Known]:
        """The tests of the keywords for ``json_type``, given that ``var`` has that type."""
        if json_type == "object":
            return self._object(node, var, known, depth)
        parts: list[_Part] = []
        if json_type == "array":
            parts += self._range(node, "minItems", "maxItems", f"len({var})")
            if "items" in node:
                item = self._fresh("v")
                each = self._sub(node["items"], item, _Known(), depth)
                if each:
                    parts.append(_Block((f"for {item} in {var}:", *_indent(_statements(each)))))
        elif json_type == "string":
            parts += self._range(node, "minLength", "maxLength", f"len({var})")
            if "pattern" in node:
                parts.append(f"{self._pattern(node['pattern'])}({var})")  # a match is true
        else:
            parts += self._range(node, "minimum", "maximum", var)
        return parts, known

    def _object(
        self, node: dict[str, Any], var: str, known: _Known, depth: int
    ) -> tuple[list[_Part], _Known]:
        properties = node.get("properties", {})
        if not isinstance(properties, dict) or not all(isinstance(n, str) for n in properties):
            raise SchemaCompileError(f"'properties' maps names to schemas, not {properties!r}")
        required = node.get("required", [])
        if not isinstance(required, list) or not all(isinstance(n, str) for n in required):
            raise SchemaCompileError(f"'required' is a list of names, not {required!r}")
        parts: list[_Part] = []
        missing = [name for name in dict.fromkeys(required) if name not in known.keys]
        if len(missing) > _MAX_INLINE_KEYS:
            parts.append(f"{var}.keys() >= {self._bind(frozenset(missing))}")
        elif missing:
            parts.append(" and ".join(f"{self._literal(name)} in {var}" for name in missing))
        present = known.keys | frozenset(required)
        if "additionalProperties" in node:
            parts += self._additional(node["additionalProperties"], properties, present, var, depth)
        for name, schema in properties.items():
            member = self._fresh("v")
            tests = self._sub(schema, member, _Known(), depth)
            if not tests:
                continue
            lines = [f"{member} = {var}[{self._literal(name)}]", *_statements(tests)]
            if name not in present:
                lines = [f"if {self._literal(name)} in {var}:", *_indent(lines)]
            parts.append(_Block(tuple(lines)))
        return parts, _Known(known.json_type, present)

    def _additional(
        self,
        schema: Any,
        properties: dict[str, Any],
        present: frozenset[str],
        var: str,
        depth: int,
    ) -> list[_Part]:
        names = frozenset(properties)
        if schema is False:
            if not present <= names:
                return ["False"]  # a name it must have is one it may not have
            optional = sorted(names - present)
            if len(optional) > _MAX_INLINE_KEYS:
                return [f"{var}.keys() <= {self._bind(names)}"]
            # Holding every name in ``present``, it holds no other than ``names`` exactly
            # when its size is that of ``present`` and the optional names it holds.
            counted = [str(len(present)), *(f"({self._literal(n)} in {var})" for n in optional)]
            return [f"len({var}) == {' + '.join(counted)}"]
        member = self._fresh("v")
        tests = self._sub(schema, member, _Known(), depth)
        if not tests:
            return []
        if not names:
            return [_Block((f"for {member} in {var}.values():", *_indent(_statements(tests))))]
        key = self._fresh("v")
        lines = [
            f"for {key}, {member} in {var}.items():",
            f"    if {key} not in {self._bind(names)}:",
            *_indent(_indent(_statements(tests))),
        ]
        return [_Block(tuple(lines))]

    def _range(self, node: dict[str, Any], low: str, high: str, value: str) -> list[_Part]:
        bounds: list[str | None] = []
        for keyword in (low, high):
            bound = node.get(keyword)
            if keyword in node and not _is_number(bound):
                raise SchemaCompileError(f"{keyword!r} is a number, not {bound!r}")
            bounds.append(None if bound is None else self._literal(bound))
        lowest, highest = bounds
        if lowest is not None and highest is not None:
            return [f"{lowest} <= {value} <= {highest}"]
        if lowest is not None:
            return [f"{value} >= {lowest}"]
        if highest is not None:
            return [f"{value} <= {highest}"]
        return []

    def _pattern(self, pattern: Any) -> str:
        if not isinstance(pattern, str):
            raise SchemaCompileError(f"'pattern' is a string, not {pattern!r}")
        try:
            return self._bind(compile_pattern(pattern))
        except PatternError as error:
            raise SchemaCompileError(f"bad pattern {error}") from None

    def _equals(self, wanted: Any, var: str) -> str:
        if wanted is None or isinstance(wanted, bool):
            return f"{var} is {wanted!r}"
        if type(wanted) is str:
            return f"type({var}) is str and {var} == {wanted!r}"
        if type(wanted) in (int, float):
            number = _TYPE_TESTS["number"].format(v=var)
            return f"({number}) and {var} == {self._literal(wanted)}"
        return f"_equal({var}, {self._bind(wanted)})"

    def _enum(self, options: Any, var: str) -> str:
        if not isinstance(options, list):
            raise SchemaCompileError(f"'enum' is a list, not {options!r}")
        strings = [option for option in options if type(option) is str]
        tests = [self._equals(option, var) for option in options if type(option) is not str]
        if len(strings) > 1:
            tests.append(f"type({var}) is str and {var} in {self._bind(frozenset(strings))}")
        elif strings:
            tests.append(self._equals(strings[0], var))
        return " or ".join(f"({test})" for test in tests) or "False"

    def _ref(self, ref: Any, var: str, known: _Known, depth: int) -> tuple[list[_Part], _Known]:
        if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            raise SchemaCompileError(f"only local #/$defs/ references, not {ref!r}")
        name = ref.removeprefix("#/$defs/")
        if any(char in name for char in "/~%"):
            # jsonschema would read these as JSON Pointer syntax, which is not implemented.
            raise SchemaCompileError(f"only plain names in references, not {ref!r}")
        if name not in self._defs:
            raise SchemaCompileError(f"unknown reference {ref!r}")
        if name in self._resolving:
            raise SchemaCompileError(f"recursive reference {ref!r}")
        self._resolving.add(name)
        try:
            return self._node(self._defs[name], var, known, depth)
        finally:
            self._resolving.discard(name)

    def _schemas(self, node: dict[str, Any], keyword: str) -> list[Any]:
        schemas = node[keyword]
        if not isinstance(schemas, list):
            raise SchemaCompileError(f"{keyword!r} is a list of schemas, not {schemas!r}")
        return schemas

    def _if(self, node: dict[str, Any], var: str, known: _Known, depth: int) -> list[_Part]:
        condition = self._expression(self._sub(node["if"], var, known, depth), var)
        then = self._sub(node.get("then", True), var, known, depth)
        otherwise = self._sub(node.get("else", True), var, known, depth)
        if not then and not otherwise:
            return []
        then_tests = [part for part in then if isinstance(part, str)]
        else_tests = [part for part in otherwise if isinstance(part, str)]
        if len(then_tests) == len(then) and len(else_tests) == len(otherwise):
            then_value, else_value = _conjunction(then_tests), _conjunction(else_tests)
            return [f"({then_value}) if ({condition}) else ({else_value})"]
        if not then:
            lines = [f"if not ({condition}):", *_indent(_statements(otherwise))]
        else:
            lines = [f"if {condition}:", *_indent(_statements(then))]
            if otherwise:
                lines += ["else:", *_indent(_statements(otherwise))]
        return [_Block(tuple(lines))]

    def _one_of(self, node: dict[str, Any], var: str, known: _Known, depth: int) -> str:
        branches = [
            self._expression(self._sub(branch, var, known, depth), var)
            for branch in self._schemas(node, "oneOf")
        ]
        if len(branches) == 1:
            return branches[0]
        counted = " + ".join(f"(1 if ({branch}) else 0)" for branch in branches)
        return f"{counted} == 1" if branches else "False"
