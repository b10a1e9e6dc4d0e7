"""Step 3, schema: every line is a record of its kind (schemas/log-record.schema.json),
which the record reader then reads once into its typed record and signatures
(``racing_demon.log.reader.read_record``)."""

from __future__ import annotations

from racing_demon.log.reader import Line, RecordLine, SchemaError, read_record
from racing_demon.verify.report import Step, VerifyCode, failure


def check_schema(line: Line) -> RecordLine:
    """``line`` read as a typed record, or the failure that names its first schema error
    and carries them all."""
    try:
        return read_record(line)
    except SchemaError as error:
        problems = error.problems
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise failure(
            Step.SCHEMA,
            VerifyCode.SCHEMA,
            problems[0] + more,
            line=line.number,
            record=None,
            problems=problems if more else (),
        ) from None
