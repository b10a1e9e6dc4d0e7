"""Strict, streaming, bounded reading of a JSON Lines log.

The verifier reads files written by the parties it checks, so every byte is hostile until
proven otherwise: framing, encoding, size, nesting and numbers are all checked before or while
``json`` parses a line, and every refusal is a ReadError with a stable ReadCode and the 1-based
line number. Nothing else escapes, whatever the input.

Three layers, each usable alone:

1. ``iter_raw_lines`` frames the stream into ``\\n``-terminated lines (sizes, counts, framing);
2. ``parse_line`` turns one line into a JSON object (UTF-8, depth, syntax, numbers, keys);
3. ``read_canonical_line`` also requires the line to be exactly its canonical (RFC 8785) bytes;
4. ``record_line`` holds a line's value to the record schema and reads it into its typed
   values: the one place a line of a log becomes its number, bytes, record and signatures.

``read_lines`` chains the first three. A verifier that wants each line's record and nothing
else calls ``canonical_value`` and ``record_line`` on each framed line: one orjson parse
feeds the canonical check, the schema and the typed record, and no ``Line`` is made.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Any, BinaryIO, Final, NamedTuple

try:
    import orjson
except ImportError:  # no build of it here (Pyodide): the standard library's json reads plain lines
    _ORJSON = False
else:
    _ORJSON = True

from racing_demon.errors import RacingDemonError
from racing_demon.log.canonical import (
    MAX_DEPTH,
    MAX_SAFE_INTEGER,
    CanonicalError,
    canonical_bytes,
    json_path,
)
from racing_demon.log.records import Record, Signatures, parse_record, parse_signatures
from racing_demon.schema import record_errors
from racing_demon.wording import plural


@dataclass(frozen=True)
class Limits:
    """Bounds on what a reader accepts; each must be at least 1.

    Attributes:
        max_file_bytes: total bytes of the file, newlines included (default 64 MiB).
        max_line_bytes: bytes of one line, its ``\\n`` excluded (default 64 KiB). A longer line
            is refused after reading one byte more than this, never in full.
        max_records: number of lines (default 1,000,000).
        max_depth: nesting of arrays and objects, the top-level object being depth 1
            (default 32, the same as the canonical encoder's).
    """

    max_file_bytes: int = 64 * 1024 * 1024
    max_line_bytes: int = 64 * 1024
    max_records: int = 1_000_000
    max_depth: int = MAX_DEPTH

    def __post_init__(self) -> None:
        # A limit below 1 would not fail safe: readline(0) looks like the end of the file.
        for field in fields(self):
            if getattr(self, field.name) < 1:
                raise ValueError(f"Limits.{field.name} must be at least 1")

    def __reduce__(self) -> tuple[type[Limits], tuple[int, int, int, int]]:
        # Rebuilt through the constructor: pickle's default restore assigns field by field,
        # which the compiled build's frozen class refuses (verify --jobs sends the settings).
        return Limits, (self.max_file_bytes, self.max_line_bytes, self.max_records, self.max_depth)


DEFAULT_LIMITS: Final = Limits()


class ReadCode(enum.StrEnum):
    """Why a log cannot be read. The values are stable reason codes."""

    BOM = "BOM"
    CR = "CR"
    NUL = "NUL"
    NOT_UTF8 = "NOT_UTF8"
    EMPTY_LINE = "EMPTY_LINE"
    LINE_TOO_LONG = "LINE_TOO_LONG"
    FILE_TOO_LARGE = "FILE_TOO_LARGE"
    TOO_MANY_RECORDS = "TOO_MANY_RECORDS"
    TORN_LINE = "TORN_LINE"
    BAD_JSON = "BAD_JSON"
    DUPLICATE_KEY = "DUPLICATE_KEY"
    NAN_OR_INFINITY = "NAN_OR_INFINITY"
    FLOAT = "FLOAT"
    NEGATIVE_ZERO = "NEGATIVE_ZERO"
    INT_RANGE = "INT_RANGE"
    TOO_DEEP = "TOO_DEEP"
    NOT_OBJECT = "NOT_OBJECT"
    NOT_CANONICAL = "NOT_CANONICAL"


class ReadError(RacingDemonError):
    """A refused log: ``str()`` reads ``line 7: DUPLICATE_KEY: duplicate key "seq" in $.body``."""

    def __init__(self, code: ReadCode, line: int | None, message: str) -> None:
        super().__init__(code, line, message)
        self.code = code
        self.line = line
        self.message = message

    def __str__(self) -> str:
        where = "" if self.line is None else f"line {self.line}: "
        return f"{where}{self.code}: {self.message}"


@dataclass(frozen=True, slots=True)
class Line:
    """One accepted record: its 1-based line number, exact bytes (no ``\\n``) and value."""

    number: int
    raw: bytes
    value: dict[str, Any]


# (1) Framing.

_BOM: Final = b"\xef\xbb\xbf"


def iter_raw_lines(
    stream: BinaryIO, limits: Limits = DEFAULT_LIMITS
) -> Iterator[tuple[int, bytes]]:
    """Yield ``(number, raw)`` for each ``\\n``-terminated line of ``stream``, ``raw`` without
    its ``\\n``, holding at most one line (``max_line_bytes + 1`` bytes) in memory.

    A line is checked for, in this order: FILE_TOO_LARGE, TOO_MANY_RECORDS, LINE_TOO_LONG,
    BOM (line 1 only), CR (anywhere), TORN_LINE (no ``\\n`` at the end of the file: a crash
    mid-write), EMPTY_LINE (nothing but JSON whitespace). An empty stream yields nothing.
    """
    total = 0
    number = 0
    while chunk := stream.readline(limits.max_line_bytes + 1):
        number += 1
        total += len(chunk)
        if total > limits.max_file_bytes:
            raise ReadError(
                ReadCode.FILE_TOO_LARGE,
                number,
                f"file larger than {plural(limits.max_file_bytes, 'byte')}",
            )
        if number > limits.max_records:
            raise ReadError(
                ReadCode.TOO_MANY_RECORDS,
                number,
                f"more than {plural(limits.max_records, 'record')}",
            )
        terminated = chunk.endswith(b"\n")
        raw = chunk[:-1] if terminated else chunk
        # readline stops short of its size only at a newline or the end of the file.
        if len(raw) > limits.max_line_bytes:
            raise ReadError(
                ReadCode.LINE_TOO_LONG,
                number,
                f"line longer than {plural(limits.max_line_bytes, 'byte')}",
            )
        if number == 1 and raw.startswith(_BOM):
            raise ReadError(ReadCode.BOM, number, "file starts with a UTF-8 byte order mark")
        if (cr := raw.find(b"\r")) >= 0:
            raise ReadError(ReadCode.CR, number, f"carriage return at byte {cr}; lines end in LF")
        if not terminated:
            raise ReadError(ReadCode.TORN_LINE, number, "last line has no terminating newline")
        if not raw.strip(b" \t"):
            raise ReadError(ReadCode.EMPTY_LINE, number, "empty or whitespace-only line")
        yield number, raw


# (2) Parsing.


class _Invalid(Exception):
    """Raised by the json hooks; parse_line adds the line number."""

    def __init__(self, code: ReadCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# Checking the length first keeps int() away from huge digit strings: they cost nothing and
# never reach Python's int-string conversion limit.
_MAX_INT_CHARS: Final = len(str(-MAX_SAFE_INTEGER))


def _parse_int(text: str) -> int:
    if text == "-0":
        raise _Invalid(ReadCode.NEGATIVE_ZERO, "integer -0 (only 0 is allowed)")
    if len(text) > _MAX_INT_CHARS:
        raise _Invalid(
            ReadCode.INT_RANGE, f"integer of {len(text)} characters beyond +/-(2**53 - 1)"
        )
    number = int(text)
    if not -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER:
        raise _Invalid(ReadCode.INT_RANGE, f"integer beyond +/-(2**53 - 1): {text}")
    return number


def _parse_float(text: str) -> None:
    raise _Invalid(ReadCode.FLOAT, f"number with a fraction or exponent: {text}")


def _parse_constant(text: str) -> None:
    raise _Invalid(ReadCode.NAN_OR_INFINITY, f"{text} is not JSON")


def _repeated(pairs: list[tuple[str, Any]]) -> str | None:
    """The first key that occurs a second time in ``pairs``, if any."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return key
        seen.add(key)
    return None


def _strict_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        # parse_line looks for the path afterwards; without a path, this names the key.
        raise _Invalid(ReadCode.DUPLICATE_KEY, f"duplicate key {json.dumps(_repeated(pairs))}")
    return obj


def _strict_decoder(object_pairs_hook: Callable[[list[tuple[str, Any]]], Any]) -> json.JSONDecoder:
    """A decoder that refuses what strict JSON (docs/log-format.md §2) refuses: integers out
    of range and -0, fractions, NaN and Infinity, and whatever ``object_pairs_hook`` does."""
    return json.JSONDecoder(
        object_pairs_hook=object_pairs_hook,
        parse_float=_parse_float,
        parse_int=_parse_int,
        parse_constant=_parse_constant,
    )


_DECODER: Final = _strict_decoder(_strict_object)


class _Members:
    """An object's members in document order, duplicates kept, for locating a duplicate.

    It holds the list rather than being one: mypyc cannot compile a subclass of ``list``.
    """

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        self.pairs = pairs


def _ignore(text: str) -> None:
    """Numbers and constants do not matter when looking for a duplicate key."""


_LOCATOR: Final = json.JSONDecoder(
    object_pairs_hook=_Members, parse_float=_ignore, parse_int=_ignore, parse_constant=_ignore
)


def _find_duplicate(value: Any, segments: list[int | str]) -> str | None:
    """The message for the first object, in the order json closes them, with a duplicate key."""
    if isinstance(value, _Members):
        for key, member in value.pairs:
            if found := _find_duplicate(member, [*segments, key]):
                return found
        if (repeated := _repeated(value.pairs)) is not None:
            return f"duplicate key {json.dumps(repeated)} in {json_path(segments)}"
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if found := _find_duplicate(item, [*segments, index]):
                return found
    return None


def _describe_duplicate(text: str, fallback: str) -> str:
    try:
        # raw_decode ignores whatever follows the value, which the strict pass never reached.
        value, _ = _LOCATOR.raw_decode(text.lstrip(" \t\n\r"))
    except json.JSONDecodeError:
        # A syntax error after the duplicate's object leaves its ancestors unbuilt.
        return fallback
    return _find_duplicate(value, []) or fallback


_STRING_LITERAL: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKETS: Final = bytes(sorted(set(range(256)) - set(b"[]{}")))


def _check_depth(number: int, raw: bytes, max_depth: int) -> None:
    """Refuse nesting beyond ``max_depth`` before json's recursive parser sees it.

    Up to json's first syntax error the scan tokenises exactly as json does, and json recurses
    no further than that, so the scan's depth bounds json's. The regex cannot backtrack (its
    alternatives start with different bytes and an unterminated string runs to the end).
    """
    if raw.count(b"[") + raw.count(b"{") <= max_depth:
        return
    depth = 0
    for byte in _STRING_LITERAL.sub(b"", raw).translate(None, _NOT_BRACKETS):
        if byte in b"[{":
            depth += 1
            if depth > max_depth:
                raise ReadError(
                    ReadCode.TOO_DEEP, number, f"containers nested deeper than {max_depth}"
                )
        else:
            depth -= 1


_JSON_TYPE_NAMES: Final[dict[type, str]] = {
    list: "an array",
    str: "a string",
    int: "a number",
    bool: "a boolean",
    type(None): "null",
}


def parse_line(number: int, raw: bytes, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """The JSON object on line ``number``, or ReadError.

    Checked in this order: NUL, NOT_UTF8 (strict: no overlong forms, encoded surrogates or
    stray bytes), TOO_DEEP, then in json's parse order BAD_JSON, DUPLICATE_KEY (at any depth),
    NAN_OR_INFINITY, FLOAT (any fraction or exponent), NEGATIVE_ZERO, INT_RANGE; last
    NOT_OBJECT. JSON whitespace around the value is accepted here (it is not canonical).
    """
    if (nul := raw.find(b"\x00")) >= 0:
        raise ReadError(ReadCode.NUL, number, f"NUL byte at byte {nul}")
    try:
        text = raw.decode()
    except UnicodeDecodeError as error:
        raise ReadError(ReadCode.NOT_UTF8, number, f"invalid UTF-8 at byte {error.start}") from None
    _check_depth(number, raw, limits.max_depth)
    try:
        value = _DECODER.decode(text)
    except _Invalid as invalid:
        message = invalid.message
        if invalid.code is ReadCode.DUPLICATE_KEY:
            message = _describe_duplicate(text, message)
        raise ReadError(invalid.code, number, message) from None
    except json.JSONDecodeError as error:
        raise ReadError(
            ReadCode.BAD_JSON, number, f"{error.msg} at character {error.pos}"
        ) from None
    except (ValueError, RecursionError) as error:
        # Not expected once the depth scan has run; caught so that no input crashes a reader.
        raise ReadError(
            ReadCode.BAD_JSON, number, f"JSON parser failed: {type(error).__name__}"
        ) from None
    if not isinstance(value, dict):
        raise ReadError(
            ReadCode.NOT_OBJECT, number, f"top level is {_JSON_TYPE_NAMES[type(value)]}"
        )
    return value


# (3) Canonical form.


def _first_difference(raw: bytes, canonical: bytes) -> str:
    index = next(
        (
            i
            for i, (found, expected) in enumerate(zip(raw, canonical, strict=False))
            if found != expected
        ),
        min(len(raw), len(canonical)),
    )
    return (
        f"not in canonical form from byte {index}: "
        f"expected {canonical[index : index + 20]!r}, found {raw[index : index + 20]!r}"
    )


# A fast library alone proves a line canonical when the line is printable ASCII without a
# backslash (so it holds no escape and every string is written as itself), nests no deeper
# than the limit and has no number with a fraction or exponent (a parser reads floats such
# as 1.5 and writes them back as they were): then the line is canonical exactly when it
# parses, with every integer within +/-(2**53 - 1) and no NaN or Infinity, and re-encodes,
# keys sorted, to itself. A duplicate key fails that test (the parser keeps the last member
# only). orjson does it where it is installed; elsewhere (Pyodide) the standard library's
# C-accelerated json reads the line with hooks that check the same. Any other line takes
# the full path, which also says what is wrong.
_PLAIN_BYTES: Final = bytes(byte for byte in range(0x20, 0x7F) if byte != ord("\\"))
_NOT_PLAIN_BYTES: Final = bytes(sorted(set(range(256)) - set(_PLAIN_BYTES)))
# Every sign and digit deleted, "," and "[" written ":" and "e", "E" written ".", a number
# with a fraction or an exponent after ":", "," or "[" (as in any line without spaces) leaves
# ":."; a string that happens to look the same only sends its line to the full path.
_SHAPES: Final = bytes.maketrans(
    _NOT_PLAIN_BYTES + b",[eE", b"\\" * len(_NOT_PLAIN_BYTES) + b"::.."
)
_SIGN_AND_DIGITS: Final = b"-0123456789"
_CANONICAL_OPTIONS: Final = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER if _ORJSON else 0


def _orjson_plain_value(raw: bytes) -> object:
    """``raw``'s value if orjson reads it and writes it back as ``raw``, else None."""
    try:
        value = orjson.loads(raw)
        canonical = orjson.dumps(value, option=_CANONICAL_OPTIONS) == raw
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return None
    return value if canonical else None


def _sorted_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = _strict_object(pairs)
    if list(obj) != sorted(obj):
        raise _Invalid(ReadCode.NOT_CANONICAL, "keys out of order")
    return obj


# For a plain line, the strict reader's own hooks check all that makes it canonical but the
# order of keys (checked here too) and the spaces between tokens: every integer within the
# range and no -0, no fraction, no NaN or Infinity, every object's keys unique. Reading so
# costs about half of reading and writing the line back.
_PLAIN_DECODER: Final = _strict_decoder(_sorted_object)


def _stdlib_plain_value(raw: bytes) -> object:
    """``raw``'s value if the standard library's json reads it as canonical, else None."""
    if b" " in b"".join(raw.split(b'"')[::2]):  # a space outside strings (no escapes here)
        return None
    try:
        return _PLAIN_DECODER.decode(raw.decode("ascii"))  # a plain line is printable ASCII
    except (_Invalid, ValueError):  # json.JSONDecodeError is a ValueError
        return None


PlainReader = Callable[[bytes], object]
PLAIN_READERS: Final[dict[str, PlainReader]] = {"stdlib": _stdlib_plain_value}
if _ORJSON:
    PLAIN_READERS["orjson"] = _orjson_plain_value
_PLAIN_READER: Final = _orjson_plain_value if _ORJSON else _stdlib_plain_value


def _plain_canonical_value(
    raw: bytes, max_depth: int, read: PlainReader = _PLAIN_READER
) -> dict[str, Any] | None:
    """The value of a plain line that is canonical (``read`` being one of
    ``PLAIN_READERS``); None sends the line to the full path."""
    shapes = raw.translate(_SHAPES, _SIGN_AND_DIGITS)
    if b"\\" in shapes or b":." in shapes or raw.count(b"[") + raw.count(b"{") > max_depth:
        return None
    value = read(raw)
    return value if type(value) is dict else None


def read_canonical_line(number: int, raw: bytes, limits: Limits = DEFAULT_LIMITS) -> Line:
    """Line ``number`` parsed, provided ``raw`` is exactly the canonical bytes of its value.

    A value outside the data model (a non-ASCII key, a lone surrogate from a ``\\ud800``
    escape) is NOT_CANONICAL too, its message naming the path.
    """
    return Line(number, raw, canonical_value(number, raw, limits))


def canonical_value(number: int, raw: bytes, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """What ``read_canonical_line`` reads, its value alone, with the same refusals."""
    value = _plain_canonical_value(raw, limits.max_depth)
    if value is None:
        value = _strict_canonical_value(number, raw, limits)
    return value


def _strict_canonical_value(number: int, raw: bytes, limits: Limits) -> dict[str, Any]:
    """What ``read_canonical_line`` answers, for any line: the full path, with every refusal."""
    value = parse_line(number, raw, limits)
    try:
        canonical = canonical_bytes(value, max_depth=limits.max_depth)
    except CanonicalError as error:
        raise ReadError(
            ReadCode.NOT_CANONICAL,
            number,
            f"outside the data model at {error.path}: {error.code}: {error.message}",
        ) from None
    if canonical != raw:
        raise ReadError(ReadCode.NOT_CANONICAL, number, _first_difference(raw, canonical))
    return value


def parse_read_line(number: int, raw: bytes, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """What ``parse_line`` answers for line ``number``, cheaper for a line that is canonical.

    For reading again the lines that ``read_canonical_line`` accepted: a plain canonical line
    is parsed by orjson alone, any other goes through ``parse_line``.
    """
    value = _plain_canonical_value(raw, limits.max_depth)
    if value is None:
        return parse_line(number, raw, limits)
    return value


def read_lines(stream: BinaryIO, limits: Limits = DEFAULT_LIMITS) -> Iterator[Line]:
    """Every line of ``stream`` read by ``iter_raw_lines`` then ``read_canonical_line``."""
    for number, raw in iter_raw_lines(stream, limits):
        yield read_canonical_line(number, raw, limits)


# (4) Records.


class SchemaError(RacingDemonError, ValueError):
    """A line in canonical form that is not a record of its kind (schemas/log-record.schema.json).

    ``problems`` holds every way it breaks the schema, each with its JSON path, the first
    first (``racing_demon.schema.record_errors``)."""

    def __init__(self, line: int, problems: Sequence[str]) -> None:
        super().__init__(line, problems[0])
        self.line = line
        self.problems = tuple(problems)


class RecordLine(NamedTuple):
    """One line of a log read as a record: its 1-based number, exact bytes (no ``\\n``),
    typed record and typed signatures. Built by name, as ``Signatures`` is, and a named
    tuple for the same reason: one is made for every line."""

    number: int
    raw: bytes
    record: Record
    sigs: Signatures


def read_record(line: Line) -> RecordLine:
    """``line`` read as a record of its kind, or SchemaError naming every schema problem."""
    return record_line(line.number, line.raw, line.value)


def record_line(number: int, raw: bytes, value: dict[str, Any]) -> RecordLine:
    """Line ``number`` (bytes ``raw``, parsed as ``value``) read as a record of its kind, or
    SchemaError naming every schema problem."""
    problems = record_errors(value)
    if problems:
        raise SchemaError(number, problems)
    return RecordLine(
        number=number,
        raw=raw,
        record=parse_record(value["body"]),
        sigs=parse_signatures(value["sigs"]),
    )
