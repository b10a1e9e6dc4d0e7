"""Why the table refuses a call: its errors and their codes (docs/rules.md §11). A refusal
writes nothing to the log."""

from __future__ import annotations

import enum
from pathlib import Path

from racing_demon.errors import RacingDemonError
from racing_demon.log.receipts import SubmissionCode


class TableCode(enum.StrEnum):
    """Why the table refused a call as a whole, writing nothing: a ``TableError``'s code
    (docs/rules.md §11)."""

    LOG_EXISTS = "LOG_EXISTS"
    MIXED_KEYS = "MIXED_KEYS"
    SIGNER_COUNT = "SIGNER_COUNT"
    ENTROPY_GIVEN = "ENTROPY_GIVEN"
    ENTROPY_COUNT = "ENTROPY_COUNT"
    NOT_SIGNED = "NOT_SIGNED"
    WOULD_NOT_VERIFY = "WOULD_NOT_VERIFY"
    CLOCK_BACKWARDS = "CLOCK_BACKWARDS"
    PLAYED_OUT = "PLAYED_OUT"
    NO_IDLE_RULE = "NO_IDLE_RULE"
    NOT_IDLE = "NOT_IDLE"


class TableError(RacingDemonError, ValueError):
    """A call the table refuses as a whole (a match it cannot start, a clock moved back, an
    abandonment the rules do not allow): nothing is written. ``code`` says which."""

    def __init__(self, message: str, code: TableCode):
        super().__init__(message)
        self.code = code


class SubmissionError(RacingDemonError, ValueError):
    """A submission the table cannot log at all (nothing is written), with its code and,
    for a seat at the table, the receipt that says so (outcome ``refused``)."""

    def __init__(self, message: str, code: SubmissionCode, receipt: bytes | None = None):
        super().__init__(message)
        self.code = code
        self.receipt = receipt


class ResumeError(RacingDemonError, ValueError):
    """A log that a table cannot continue."""


class RevealError(RacingDemonError, ValueError):
    """A reveal the table cannot make: nothing is written."""


def log_exists(path: Path) -> TableError:
    return TableError(
        f"{path} exists: a log is never overwritten; name a new file for a new match, "
        "or continue this one with Table.resume",
        TableCode.LOG_EXISTS,
    )
