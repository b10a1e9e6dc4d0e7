"""Step 1, framing and strict JSON: every line is one ``\\n``-terminated strict JSON object
within the reading limits.

The reader (``racing_demon.log.reader``) checks this, and step 2's canonical form, as it
reads each line; this step names what it refuses. A torn last line with no final record
before it is what a crash leaves: the log is then unfinished, not refused.

A file whose first line does not begin as a record does (``{"body":{``, or for a torn
first line a prefix of it) is not a log at all: notes, random bytes, another document.
Its failure keeps the reader's code, and its rule is ``NOT_A_LOG``, so that a report says
so rather than counting its lines as records not replayed; a torn first line of that kind
is no crash's leftover, and fails rather than leaving the log unfinished.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import BinaryIO

from racing_demon.log.reader import ReadCode, ReadError
from racing_demon.log.records import RECORD_START, could_start_record
from racing_demon.verify.report import Finding, Step, StepFailed


class FileCode(enum.StrEnum):
    """The rule of a failure on line 1 of a file that is not a log (the code stays the
    reader's or the schema's)."""

    NOT_A_LOG = "NOT_A_LOG"


NOT_A_LOG = FileCode.NOT_A_LOG

# A file beyond these limits is never read further, not even to count its lines.
LIMIT_CODES = frozenset(
    {ReadCode.FILE_TOO_LARGE, ReadCode.TOO_MANY_RECORDS, ReadCode.LINE_TOO_LONG}
)


def is_torn_tail(error: ReadError, final_seen: bool) -> bool:
    """Whether ``error`` is the torn last line a crash mid-write leaves behind."""
    return error.code is ReadCode.TORN_LINE and not final_seen


def framing_failure(error: ReadError) -> StepFailed:
    return StepFailed(Step.FRAMING, Finding(error.code, error.message, line=error.line))


def starts_as_log(stream: BinaryIO) -> bool:
    """Whether the file's first bytes are a record's (or, in a shorter file, a prefix of
    one). Leaves the stream where it was."""
    position = stream.tell()
    stream.seek(0)
    head = stream.read(len(RECORD_START))
    stream.seek(position)
    return could_start_record(head)


def not_a_log(failed: StepFailed) -> StepFailed:
    """``failed``, a failure of steps 1-3 on line 1 of a file that is not a log, with the
    rule that says so."""
    return StepFailed(failed.step, dataclasses.replace(failed.finding, rule=NOT_A_LOG))
