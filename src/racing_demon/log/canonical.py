"""Canonical JSON bytes: RFC 8785 (JCS) restricted to the log's integers-only data model.

The data model is ``None``, ``bool``, ``int`` with ``|n| <= MAX_SAFE_INTEGER``, ``str`` (no
surrogate code points), ``list`` and ``dict`` whose keys are ``str`` of printable ASCII
(0x20..0x7E), nested at most ``MAX_DEPTH`` containers deep. Floats are refused outright, so
JCS's number serialisation reduces to plain decimal integers, and ASCII keys make JCS's UTF-16
key order the same as code-point order.

Subclasses of ``str``, ``int``, ``list`` and ``dict`` (e.g. ``StrEnum`` members) are encoded
as their base value; ``tuple``, ``float`` and every other type are refused.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Sequence
from typing import Final

try:
    import orjson
except ImportError:  # no build of it here (Pyodide): canonical_bytes writes every value
    _ORJSON = False
else:
    _ORJSON = True

from racing_demon.errors import RacingDemonError

MAX_SAFE_INTEGER: Final = 2**53 - 1
MAX_DEPTH: Final = 32

# JCS section 3.2.2.2 defers to ECMAScript JSON.stringify: escape '"', '\\' and the C0 controls
# (short forms where they exist, else \u00xx in lowercase hex); everything else is raw UTF-8.
_ESCAPES: Final[dict[str, str]] = {chr(c): f"\\u{c:04x}" for c in range(0x20)} | {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_NEEDS_ESCAPE: Final = re.compile(r'[\x00-\x1f"\\]')
_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PREFIXES: Final[dict[str, str]] = {}
_MAX_PREFIXES: Final = 4096


class CanonicalCode(enum.StrEnum):
    """Why a value is outside the data model. The values are stable reason codes."""

    UNSUPPORTED_TYPE = "UNSUPPORTED_TYPE"
    FLOAT = "FLOAT"
    INT_RANGE = "INT_RANGE"
    LONE_SURROGATE = "LONE_SURROGATE"
    KEY_NOT_STR = "KEY_NOT_STR"
    KEY_NOT_PRINTABLE_ASCII = "KEY_NOT_PRINTABLE_ASCII"
    TOO_DEEP = "TOO_DEEP"


class CanonicalError(RacingDemonError, ValueError):
    """A value outside the data model, with where (``path``) and why (``code``, message)."""

    def __init__(self, code: CanonicalCode, path: str, message: str) -> None:
        super().__init__(f"{path}: {code}: {message}")
        self.code = code
        self.path = path
        self.message = message


class _Refusal(Exception):
    """Raised deep in the encoder; containers add their index or key while it unwinds, so the
    path costs nothing unless something is refused."""

    def __init__(self, code: CanonicalCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.segments: list[int | str] = []


def json_path(segments: Sequence[int | str]) -> str:
    """A JSONPath-like location such as ``$.moves[3].cards``, from outermost segment inward.

    Keys that are not identifiers are written as JSON strings in brackets (``$["a b"]``),
    ASCII-escaped so that a message naming any key is safe to print.
    """
    parts = ["$"]
    for segment in segments:
        if isinstance(segment, int):
            parts.append(f"[{segment}]")
        elif _IDENTIFIER.fullmatch(segment):
            parts.append(f".{segment}")
        else:
            parts.append(f"[{json.dumps(segment)}]")
    return "".join(parts)


def _escape(match: re.Match[str]) -> str:
    return _ESCAPES[match.group()]


def _encode_str(text: str) -> str:
    # Printable text has no C0 controls and no surrogates, so it only needs quotes around it;
    # the test is cheaper than a regex search.
    if text.isprintable() and '"' not in text and "\\" not in text:
        return '"' + text + '"'
    if _SURROGATE.search(text):
        raise _Refusal(CanonicalCode.LONE_SURROGATE, "string contains a surrogate code point")
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def _encode_int(number: int) -> str:
    if -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER:
        # int.__repr__ so that an IntEnum member is written as its number, not its name.
        return int.__repr__(number)
    raise _Refusal(CanonicalCode.INT_RANGE, f"integer beyond +/-(2**53 - 1): {number}")


def _member_prefix(key: object) -> str:
    """``"key":`` for a valid key, else the refusal."""
    if type(key) is str and (prefix := _PREFIXES.get(key)) is not None:
        return prefix
    if not isinstance(key, str):
        raise _Refusal(
            CanonicalCode.KEY_NOT_STR, f"object key must be str, got {type(key).__name__} {key!r}"
        )
    if not (key.isascii() and key.isprintable()):
        raise _Refusal(
            CanonicalCode.KEY_NOT_PRINTABLE_ASCII,
            f"object key must be printable ASCII, got {json.dumps(key)}",
        )
    prefix = _encode_str(key) + ":"
    # Records reuse a few dozen keys; the bound stops a log of distinct keys growing the cache.
    if type(key) is str and len(_PREFIXES) < _MAX_PREFIXES:
        _PREFIXES[key] = prefix
    return prefix


def _encode(value: object, depth_left: int) -> str:
    # Exact-type checks first: they are the common case and cheaper than isinstance, and bool
    # must be caught before int since it is a subclass of it.
    if type(value) is str:
        # The fast path of _encode_str, inlined since strings are most of a record.
        if value.isprintable() and '"' not in value and "\\" not in value:
            return '"' + value + '"'
        return _encode_str(value)
    if type(value) is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return repr(value)
        return _encode_int(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, dict):
        if depth_left == 0:
            raise _Refusal(CanonicalCode.TOO_DEEP, "")
        try:
            keys = sorted(value)
        except TypeError:
            # Keys of mixed types cannot be ordered; the loop below names the first non-str key.
            keys = list(value)
        members = []
        for key in keys:
            prefix = _member_prefix(key)
            try:
                members.append(prefix + _encode(value[key], depth_left - 1))
            except _Refusal as refusal:
                refusal.segments.append(key)
                raise
        return "{" + ",".join(members) + "}"
    if isinstance(value, list):
        if depth_left == 0:
            raise _Refusal(CanonicalCode.TOO_DEEP, "")
        elements = []
        for index, item in enumerate(value):
            try:
                elements.append(_encode(item, depth_left - 1))
            except _Refusal as refusal:
                refusal.segments.append(index)
                raise
        return "[" + ",".join(elements) + "]"
    if isinstance(value, str):
        return _encode_str(value)
    if isinstance(value, int):
        return _encode_int(value)
    if isinstance(value, float):
        raise _Refusal(CanonicalCode.FLOAT, f"floats are not allowed: {value!r}")
    raise _Refusal(CanonicalCode.UNSUPPORTED_TYPE, f"unsupported type {type(value).__name__}")


def canonical_bytes(value: object, *, max_depth: int = MAX_DEPTH) -> bytes:
    """The canonical (RFC 8785) UTF-8 bytes of ``value``, or CanonicalError naming the path.

    ``max_depth`` bounds container nesting (the top-level container is depth 1); it also turns
    a self-referencing value into a refusal instead of a RecursionError.
    """
    try:
        return _encode(value, max_depth).encode()
    except _Refusal as refusal:
        refusal.segments.reverse()
        message = refusal.message
        if refusal.code is CanonicalCode.TOO_DEEP:
            message = f"containers nested deeper than {max_depth}"
        raise CanonicalError(refusal.code, json_path(refusal.segments), message) from None


def canonical_bytes_of_read(value: object) -> bytes:
    """``canonical_bytes(value)`` for a value, or a part of one, read from a line the reader
    accepted as canonical: such a value is inside the data model, where orjson, keys sorted,
    writes the same bytes (the same escapes, raw UTF-8, decimal integers), at a fraction of
    the cost, and so does the standard library's C-accelerated json where orjson is missing
    (Pyodide). Anything else must go through ``canonical_bytes``.
    """
    if not _ORJSON:
        return _MODEL_ENCODER.encode(value).encode()
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


# JSON.stringify's escapes (those of _ESCAPES) and raw UTF-8 for everything else: the
# canonical bytes of any value of the data model.
_MODEL_ENCODER: Final = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False, check_circular=False
)
