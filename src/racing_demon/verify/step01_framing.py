"""Step 1, framing and strict JSON: every line is one ``\\n``-terminated strict JSON object
within the reading limits.

The reader (``racing_demon.log.reader``) checks this, and step 2's canonical form, as it
reads each line; this step names what it refuses. A torn last line with no final record
before it is what a crash leaves: the log is then unfinished, not refused.
"""

from __future__ import annotations

from racing_demon.log.reader import ReadCode, ReadError
from racing_demon.verify.report import Finding, Step, StepFailed

# A file beyond these limits is never read further, not even to count its lines.
LIMIT_CODES = frozenset(
    {ReadCode.FILE_TOO_LARGE, ReadCode.TOO_MANY_RECORDS, ReadCode.LINE_TOO_LONG}
)


def is_torn_tail(error: ReadError, final_seen: bool) -> bool:
    """Whether ``error`` is the torn last line a crash mid-write leaves behind."""
    return error.code is ReadCode.TORN_LINE and not final_seen


def framing_failure(error: ReadError) -> StepFailed:
    return StepFailed(Step.FRAMING, Finding(error.code, error.message, line=error.line))
