"""Step 2, canonical form: every line is exactly the RFC 8785 canonical bytes of its value
(``racing_demon.log.canonical``), so that what is hashed and signed has one spelling.

The reader proves it for each line as it reads it, right after the line's JSON parses
(step 1) and before its schema is checked (step 3). A duplicate key is found as its object
closes, so an earlier error inside that object (a float, a syntax error) is reported first.
"""

from __future__ import annotations

from racing_demon.log.reader import ReadCode, ReadError
from racing_demon.verify.report import Finding, Step, StepFailed


def is_canonical_failure(error: ReadError) -> bool:
    return error.code is ReadCode.NOT_CANONICAL


def canonical_failure(error: ReadError) -> StepFailed:
    return StepFailed(Step.CANONICAL, Finding(error.code, error.message, line=error.line))
