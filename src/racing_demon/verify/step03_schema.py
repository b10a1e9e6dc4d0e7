"""Step 3, schema: every line is a record of its kind (schemas/log-record.schema.json),
which is then read once into its typed value (``racing_demon.log.records``)."""

from __future__ import annotations

from racing_demon.log.reader import Line
from racing_demon.log.records import Record, parse_record
from racing_demon.schema import record_errors
from racing_demon.verify.report import Step, VerifyCode, failure


def check_schema(line: Line) -> Record:
    """The typed record of ``line``, or the failure that names its first schema error and
    carries them all."""
    problems = record_errors(line.value)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise failure(
            Step.SCHEMA,
            VerifyCode.SCHEMA,
            problems[0] + more,
            line=line.number,
            record=None,
            problems=tuple(problems) if more else (),
        )
    return parse_record(line.value["body"])
