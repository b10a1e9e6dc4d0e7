"""Every line of a log as the page lists it, whatever the line holds: read by the verifier's
own reader (strict JSON, then ``log.reader.read_record``), so that the page and the verifier
judge a line alike; a line that is no record comes with the words that say why."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from racing_demon.log.reader import (
    Limits,
    Line,
    ReadCode,
    ReadError,
    SchemaError,
    parse_read_line,
    read_record,
)
from racing_demon.log.records import Final, Genesis, Record


@dataclass(frozen=True, slots=True, kw_only=True)
class LogLine:
    """One line of the log: its record when it reads as one, else why it does not."""

    index: int
    record: Record | None
    problem: str | None


def raw_lines(data: bytes) -> Iterator[bytes]:
    """Every line of ``data``, one at a time (a last line with no newline too)."""
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        if end < 0:
            end = len(data)
        yield data[start:end]
        start = end + 1


# How a line the reader refuses is told; any other refusal is "not JSON" with its code.
_UNREADABLE = {
    ReadCode.NOT_UTF8: "not UTF-8",
    ReadCode.TOO_DEEP: "nested too deeply",
    ReadCode.NOT_OBJECT: "not a log record",
}


def _parsed(index: int, raw: bytes, limits: Limits) -> dict[str, Any] | str:
    """Line ``index``'s JSON as the verifier's reader parses it (strictly: what it refuses,
    the page does not tell as a record), or the words that say why it is none. Canonical
    form is not asked: a line in another form is still told, as a badly signed one is."""
    try:
        return parse_read_line(index + 1, raw, limits)
    except ReadError as error:
        words = _UNREADABLE.get(error.code, "not JSON")
        return f"{words} ({error.code}: {error.message})"


def _kind(value: dict[str, Any] | str) -> object:
    """The ``body.kind`` a parsed line names, if any; None otherwise."""
    body = value.get("body") if isinstance(value, dict) else None
    return body.get("kind") if isinstance(body, dict) else None


def read_line(
    index: int, raw: bytes, limits: Limits, value: dict[str, Any] | str | None = None
) -> LogLine:
    """Line ``index`` (from 0) read by the verifier's record reader; ``value`` is what
    ``_parsed`` already made of it, if anything."""
    if value is None:
        value = _parsed(index, raw, limits)
    if isinstance(value, str):
        return LogLine(index=index, record=None, problem=value)
    try:
        read = read_record(Line(number=index + 1, raw=raw, value=value))
    except SchemaError as error:
        return LogLine(index=index, record=None, problem=f"not a log record ({error.problems[0]})")
    except (KeyError, TypeError, ValueError) as error:
        return LogLine(index=index, record=None, problem=f"not a log record ({error})")
    return LogLine(index=index, record=read.record, problem=None)


def genesis_and_final(data: bytes, limits: Limits) -> tuple[Record | None, Final | None]:
    """The first line that reads as a genesis, and the payload of the first that reads as
    a final record (its secret and the totals it claims). Only the lines whose body names
    one of these kinds are read as records."""
    genesis: Record | None = None
    final: Final | None = None
    for index, raw in enumerate(raw_lines(data)):
        value = _parsed(index, raw, limits)
        kind = _kind(value)
        wanted = (kind == "genesis" and genesis is None) or (kind == "final" and final is None)
        record = read_line(index, raw, limits, value).record if wanted else None
        if record is not None and isinstance(record.payload, Genesis):
            genesis = record
        elif record is not None and isinstance(record.payload, Final):
            final = record.payload
        if genesis is not None and final is not None:
            break
    return genesis, final
