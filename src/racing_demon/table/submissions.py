"""What the table makes of a submission, and the checks on what a client sends with it
that the table makes itself: the record it names as seen, the player's signature."""

from __future__ import annotations

import re
from dataclasses import dataclass

from racing_demon.game.flow import RecordKind
from racing_demon.log.receipts import SubmissionCode
from racing_demon.log.records import SUBMISSION
from racing_demon.log.signing import verify


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the table made of a submission: the record it wrote, and the receipt that the
    player's client keeps (docs/log-format.md §9)."""

    kind: RecordKind
    reason: str | None  # the engine's refusal code for a bounce
    seq: int
    record: str  # the record's chain hash
    receipt: bytes  # the table-signed receipt line, without its newline


_HASH_HEX = re.compile(r"[0-9a-f]{64}")


def well_formed(seen: object) -> bool:
    """A ``Seen`` the log can hold: a seq (an int, not a bool) and a SHA-256 in hex."""
    return (
        isinstance(seen, tuple)
        and len(seen) == 2
        and type(seen[0]) is int
        and isinstance(seen[1], str)
        and _HASH_HEX.fullmatch(seen[1]) is not None
    )


def signature_problem(
    key: bytes | None, seat: int, statement: bytes, signature: str | None, version: int
) -> tuple[str, SubmissionCode] | None:
    """Why seat ``seat``'s signature over its ``statement`` is refused, if it is, at a table
    writing format ``version``: ``key`` is the seat's, or None for a seat whose moves are
    not signed."""
    if key is None:
        if signature is None:
            return None
        return (
            f"seat {seat} has no key: its moves are not signed",
            SubmissionCode.UNEXPECTED_SIGNATURE,
        )
    if signature is None:
        return (
            f"seat {seat} signs its moves: the signature is missing",
            SubmissionCode.MISSING_SIGNATURE,
        )
    problem = verify(key, SUBMISSION, statement, signature, version)
    if problem is None:
        return None
    return f"seat {seat}'s signature does not verify: {problem}", SubmissionCode.BAD_SIGNATURE
