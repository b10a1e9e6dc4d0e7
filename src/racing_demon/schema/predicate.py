"""A schema compiled into one Python function that answers valid or not, and nothing else.

Where jsonschema-rs has no build (the browser page's Pyodide), this is what passes the
valid values of the hot paths, a record per line of a log: the standard library's
validator (``stdlib_validator``), which words every error as jsonschema does, calls a
closure per keyword and builds a path per member, and costs about five times as much on a
valid record; it explains the values this function refuses. The function is written as
source text, one nested block per subschema, with a function of its own only where a
keyword needs a subschema's answer as a value (``anyOf``, ``oneOf``, ``not``, ``if``'s
condition, a ``$ref`` to a schema that refers to itself), and compiled once per schema.
It reads the keywords ``stdlib_validator`` reads, with the same meaning (the same type
tests, JSON equality and ECMA-262 patterns): a schema that validator refuses is refused
here (``UnknownKeyword``), and tests/test_schema_fallback.py holds the two, and
jsonschema, to one answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple

from racing_demon.schema.ecma_regex import compile_pattern
from racing_demon.schema.stdlib_validator import _DEFS_PREFIX, Validator, _equal

Predicate = Callable[[object], bool]

# Each type's test as an expression of the value named {x}, as jsonschema reads the types:
# a bool is no number, and a float with no fraction is an integer.
_TYPE_EXPRESSIONS: Final = {
    "object": "isinstance({x}, dict)",
    "array": "isinstance({x}, list)",
    "string": "isinstance({x}, str)",
    "null": "{x} is None",
    "boolean": "isinstance({x}, bool)",
    "integer": "(isinstance({x}, int) and not isinstance({x}, bool)"
    " or isinstance({x}, float) and {x}.is_integer())",
    "number": "(isinstance({x}, (int, float)) and not isinstance({x}, bool))",
}
_BOUND_TESTS: Final = {"minimum": "<", "maximum": ">"}
_LENGTH_TESTS: Final = {
    "minLength": ("string", "<"),
    "maxLength": ("string", ">"),
    "minItems": ("array", "<"),
    "maxItems": ("array", ">"),
}
# What a keyword that reads one kind of value tests first; any other value passes it.
_KIND_TESTS: Final = {
    kind: _TYPE_EXPRESSIONS[kind] for kind in ("object", "array", "string", "number")
}
# The known types under which each kind's test holds.
_KIND_HOLDS: Final = {
    "object": {"object"},
    "array": {"array"},
    "string": {"string"},
    "number": {"integer", "number"},
}


class _Value(NamedTuple):
    """A value's name in the source, and the one type it is known to have, if any."""

    name: str
    known: str | None

    def __str__(self) -> str:
        return self.name

    def guard(self, kind: str) -> str | None:
        """What precedes a test that reads values of ``kind`` only: nothing when the value
        is known to be of that kind, None when it is known not to be (the test has nothing
        to say), else the kind's test and "and"."""
        if self.known is None:
            return _KIND_TESTS[kind].format(x=self.name) + " and "
        return "" if self.known in _KIND_HOLDS[kind] else None


def compile_predicate(schema: Mapping[str, Any] | bool) -> Predicate:
    """Whether a value is valid under the draft 2020-12 ``schema``, as jsonschema answers;
    ``UnknownKeyword`` for a schema ``stdlib_validator`` does not read."""
    Validator(schema)  # refuses any keyword, or form of one, that is not read
    return _Writer(schema).predicate()


class _Writer:
    """The source of one schema's functions, and the values they refer to by name."""

    def __init__(self, root: Mapping[str, Any] | bool) -> None:
        self._root = root
        self._functions: list[str] = []
        self._names: dict[str, object] = {"_equal": _equal}
        self._refs: dict[str, str] = {}
        self._inlining: list[str] = []  # the references whose definition is being written
        self._variables = 0

    def predicate(self) -> Predicate:
        entry = self._function(self._root)
        namespace = dict(self._names)
        exec(compile("\n\n".join(self._functions), "<schema predicate>", "exec"), namespace)
        predicate: Predicate = namespace[entry]  # type: ignore[assignment]
        return predicate

    def _name(self, value: object) -> str:
        name = f"_k{len(self._names)}"
        self._names[name] = value
        return name

    def _function(self, schema: object) -> str:
        """A function of one value answering ``schema``; its name."""
        index = len(self._functions)
        self._functions.append("")  # its place, kept while its body nests functions
        body: list[str] = []
        self._block(schema, "x", 1, body)
        name = f"_f{index}"
        self._functions[index] = "\n".join([f"def {name}(x):", *body, "    return True"])
        return name

    def _referred(self, ref: str) -> str:
        """The function of the ``$defs`` entry ``ref`` names, written once (a schema may
        refer to itself)."""
        name = self._refs.get(ref)
        if name is None:
            name = self._refs[ref] = f"_f{len(self._functions)}"
            self._function(self._definition(ref))
        return name

    def _definition(self, ref: str) -> object:
        defs = self._root.get("$defs", {}) if isinstance(self._root, Mapping) else {}
        return defs[ref.removeprefix(_DEFS_PREFIX)]

    def _block(
        self, schema: object, x: str, depth: int, out: list[str], known: str | None = None
    ) -> None:
        """Statements that return False unless the value named ``x`` is valid under
        ``schema``, at indent ``depth``; ``known`` the one type the value is already known
        to have, so that no keyword tests it again and none that cannot apply is written."""
        pad = "    " * depth
        if schema is True:
            return
        if schema is False:
            out.append(f"{pad}return False")
            return
        assert isinstance(schema, Mapping)  # Validator saw to it
        types = schema.get("type")
        if types is not None and types != known:
            names = types if isinstance(types, list) else [types]
            tests = " or ".join(_TYPE_EXPRESSIONS[name].format(x=x) for name in names)
            out.append(f"{pad}if not ({tests}): return False")
        if isinstance(types, str):
            known = types
        for keyword, value in schema.items():
            self._keyword(keyword, value, schema, _Value(x, known), depth, out)

    def _keyword(
        self,
        keyword: str,
        value: Any,
        schema: Mapping[str, Any],
        x: _Value,
        depth: int,
        out: list[str],
    ) -> None:
        pad = "    " * depth
        if keyword == "enum":
            self._enum(value, x, pad, out)
        elif keyword == "const":
            # JSON equality with a string is Python's: nothing else equals one.
            test = f"{x} != {self._name(value)}" if isinstance(value, str) else None
            out.append(f"{pad}if {test or f'not _equal({x}, {self._name(value)})'}: return False")
        elif keyword in _BOUND_TESTS:
            if (guard := x.guard("number")) is not None:
                out.append(f"{pad}if {guard}{x} {_BOUND_TESTS[keyword]} {value!r}: return False")
        elif keyword in _LENGTH_TESTS:
            kind, operator = _LENGTH_TESTS[keyword]
            if (guard := x.guard(kind)) is not None:
                out.append(f"{pad}if {guard}len({x}) {operator} {value!r}: return False")
        elif keyword == "pattern":
            if (guard := x.guard("string")) is not None:
                search = self._name(compile_pattern(value))
                out.append(f"{pad}if {guard}{search}({x}) is None: return False")
        elif keyword == "required":
            if value and (guard := x.guard("object")) is not None:
                present = " and ".join(f"{name!r} in {x}" for name in value)
                out.append(f"{pad}if {guard}not ({present}): return False")
        elif keyword == "properties":
            self._properties(value, x, depth, out)
        elif keyword == "additionalProperties":
            self._additional(value, frozenset(schema.get("properties", {})), x, depth, out)
        elif keyword == "items":
            self._items(value, x, depth, out)
        elif keyword == "allOf":
            for each in value:
                self._block(each, x.name, depth, out, x.known)
        elif keyword == "anyOf":
            calls = " or ".join(f"{self._function(each)}({x})" for each in value)
            out.append(f"{pad}if not ({calls}): return False")
        elif keyword == "oneOf":
            calls = " + ".join(f"{self._function(each)}({x})" for each in value)
            out.append(f"{pad}if {calls} != 1: return False")
        elif keyword == "not":
            out.append(f"{pad}if {self._function(value)}({x}): return False")
        elif keyword == "if":
            then: list[str] = []
            otherwise: list[str] = []
            self._block(schema.get("then", True), x.name, depth + 1, then, x.known)
            self._block(schema.get("else", True), x.name, depth + 1, otherwise, x.known)
            if then or otherwise:
                out.append(f"{pad}if {self._function(value)}({x}):")
                out.extend(then or [f"{pad}    pass"])
                if otherwise:
                    out.append(f"{pad}else:")
                    out.extend(otherwise)
        elif keyword == "$ref":
            if value in self._inlining:  # a schema that refers to itself: a call
                out.append(f"{pad}if not {self._referred(value)}({x}): return False")
            else:
                self._inlining.append(value)
                self._block(self._definition(value), x.name, depth, out, x.known)
                self._inlining.pop()
        # Anything else is "type" (written first, above), an annotation, "$defs" (read
        # through "$ref"), or "then" and "else" (read with "if"): Validator refused every
        # other keyword.

    def _enum(self, enums: list[Any], x: _Value, pad: str, out: list[str]) -> None:
        if all(isinstance(each, str) for each in enums):
            # A string equals a string alone: a set of them answers at once.
            guard = x.guard("string")
            if guard is None:  # a value known to be no string equals none of them
                out.append(f"{pad}return False")
                return
            strings = self._name(frozenset(enums))
            out.append(f"{pad}if not ({guard}{x} in {strings}): return False")
        elif all(type(each) is int for each in enums):
            # A number equals a number alone (1 and 1.0 alike), never a bool; a tuple, since
            # the value may be unhashable.
            numbers = self._name(tuple(enums))
            out.append(f"{pad}if isinstance({x}, bool) or {x} not in {numbers}: return False")
        else:
            out.append(f"{pad}if not any(_equal(e, {x}) for e in {self._name(tuple(enums))}):")
            out.append(f"{pad}    return False")

    def _properties(
        self, properties: Mapping[str, Any], x: _Value, depth: int, out: list[str]
    ) -> None:
        guard = x.guard("object")
        if guard is None:
            return
        pad = "    " * depth
        members: list[str] = []
        for name, subschema in properties.items():
            member = self._variable()
            inner: list[str] = []
            self._block(subschema, member, depth + 2, inner)
            if inner:  # a subschema of annotations alone asks nothing
                members.append(f"{pad}    {member} = {x}.get({name!r}, _absent)")
                members.append(f"{pad}    if {member} is not _absent:")
                members.extend(inner)
        if members:
            self._names.setdefault("_absent", _ABSENT)
            out.append(f"{pad}if {guard}True:")
            out.extend(members)

    def _additional(
        self, extra: object, known: frozenset[str], x: _Value, depth: int, out: list[str]
    ) -> None:
        guard = x.guard("object")
        if extra is True or guard is None:
            return
        pad = "    " * depth
        names = self._name(known)
        if extra is False:
            out.append(f"{pad}if {guard}not {names}.issuperset({x}): return False")
            return
        key = self._variable()
        out.append(f"{pad}if {guard}True:")
        out.append(f"{pad}    for {key} in {x}:")
        out.append(
            f"{pad}        if {key} not in {names} and not {self._function(extra)}({x}[{key}]):"
        )
        out.append(f"{pad}            return False")

    def _items(self, items: object, x: _Value, depth: int, out: list[str]) -> None:
        guard = x.guard("array")
        item = self._variable()
        inner: list[str] = []
        self._block(items, item, depth + 2, inner)
        if inner and guard is not None:
            pad = "    " * depth
            out.append(f"{pad}if {guard}True:")
            out.append(f"{pad}    for {item} in {x}:")
            out.extend(inner)

    def _variable(self) -> str:
        self._variables += 1
        return f"x{self._variables}"


_ABSENT: Final = object()  # a member the value does not have
