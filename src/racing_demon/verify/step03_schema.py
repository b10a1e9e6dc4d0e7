"""Step 3, schema: every line is a record of its kind (schemas/log-record.schema.json),
which the record reader then reads once into its typed record and signatures
(``racing_demon.log.reader.record_line``), from the value the canonical check parsed."""

from __future__ import annotations

from typing import Any

from racing_demon.log.reader import Line, RecordLine, SchemaError, record_line
from racing_demon.verify.report import Step, VerifyCode, failure


def check_schema(line: Line) -> RecordLine:
    """``line`` read as a typed record, or the failure that names its first schema error
    and carries them all."""
    return check_value(line.number, line.raw, line.value)


def check_value(number: int, raw: bytes, value: dict[str, Any]) -> RecordLine:
    """Line ``number`` (bytes ``raw``, parsed as ``value``) read as a typed record, or the
    failure that names its first schema error and carries them all."""
    try:
        return record_line(number, raw, value)
    except SchemaError as error:
        problems = error.problems
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise failure(
            Step.SCHEMA,
            VerifyCode.SCHEMA,
            problems[0] + more,
            line=number,
            record=None,
            problems=problems if more else (),
        ) from None
