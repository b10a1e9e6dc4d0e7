"""The log's table-signed chain (docs/log-format.md §10): its longest prefix that the pinned
table key provably signed as one history, which is what the audit's evidence is made of.

Every line that verification's steps 1-5 accept is in it (those steps check all of this
and more), so the driver (``racing_demon.verify.driver``) asks this module only about the
lines from the first one verification refuses: past a player's bad signature, a time that
runs backwards or a replay failure, the table still signed what follows. A line extends
the chain when it is framed and canonical (the reader, steps 1-2), a record (step 3), not
after the final record, signed by the pinned key (the check of step 5), and linked as
step 4 links it: the genesis first naming the pinned key, then no genesis, ``seq`` its
index, ``prev`` the previous line's hash, the genesis's game. The checks run in that
order, the final record's first, and a refusal's words are the audit's own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from racing_demon.errors import RacingDemonError
from racing_demon.log.reader import Limits, Line, ReadCode, ReadError, read_canonical_line
from racing_demon.log.records import Genesis, Record, body_bytes
from racing_demon.log.signing import key_id, verify
from racing_demon.verify import step03_schema, step04_chain
from racing_demon.verify.report import StepFailed, VerifyCode


class ChainBroken(RacingDemonError):
    """Line ``line`` does not extend the table-signed chain: ``code`` and ``message`` say
    why, and ``str()`` reads ``line 7: SEQ_MISMATCH: seq 8 on line 7``."""

    def __init__(self, line: int | None, code: VerifyCode | ReadCode, message: str) -> None:
        super().__init__(f"line {line}: {code}: {message}")
        self.line = line
        self.code = code
        self.message = message


def after_final(number: int) -> ChainBroken:
    """Line ``number`` follows the final record: checked before the line is parsed."""
    return ChainBroken(number, VerifyCode.AFTER_FINAL, "a record after the final record")


# Step 4's checks that bind a line into one history; the rest of step 4 (version, time,
# ``seen``, the final record's count) the log's verification reports.
_LINKS: Final[Mapping[str, Callable[[int, Record], str]]] = {
    VerifyCode.GENESIS_MISSING: lambda _, record: "the first line is not a genesis",
    VerifyCode.GENESIS_REPEATED: lambda _, record: "a genesis after the first line",
    VerifyCode.SEQ_MISMATCH: lambda number, record: f"seq {record.seq} on line {number}",
    VerifyCode.PREV_MISMATCH: lambda _, record: "prev is not the previous line's hash",
    VerifyCode.GAME_ID_MISMATCH: lambda _, record: f"a record of game {record.game}",
}


def table_signed(
    number: int,
    raw: bytes,
    *,
    table_key: bytes,
    limits: Limits,
    genesis: Record | None,
    previous_hash: str,
) -> tuple[Line, Record]:
    """Line ``number`` (``raw``, framed), read, as a record of the table-signed chain whose
    genesis is ``genesis`` (None on line 1) and whose last line hashes to
    ``previous_hash``. Raises ``ReadError`` (steps 1-2) or ``ChainBroken``."""
    line = read_canonical_line(number, raw, limits)
    try:
        read = step03_schema.check_schema(line)
    except StepFailed as failed:
        finding = failed.finding
        first = finding.problems[0] if finding.problems else finding.message
        raise ChainBroken(number, VerifyCode.SCHEMA, first) from None
    record = read.record
    problem = verify(table_key, record.kind, body_bytes(raw), read.sigs.table, record.v)
    if problem is not None:
        raise ChainBroken(
            number, VerifyCode.BAD_TABLE_SIGNATURE, f"the table's signature: {problem.message}"
        )
    try:
        step04_chain.check_chain(
            number,
            record,
            genesis=genesis,
            final_line=None,
            recent_hashes=(previous_hash,),
            last_t_ms=0,
            wanted_game=None,
        )
    except StepFailed as failed:
        words = _LINKS.get(failed.finding.code)
        if words is not None:
            raise ChainBroken(
                number, VerifyCode(failed.finding.code), words(number, record)
            ) from None
    payload = record.payload
    if isinstance(payload, Genesis) and payload.table_key != key_id(table_key):
        raise ChainBroken(
            number,
            VerifyCode.WRONG_TABLE_KEY,
            "the log names another table key than the pinned one",
        )
    return line, record


def read_error(error: ReadError) -> ChainBroken:
    """Steps 1-2 refused the line: it ends the chain with the reader's code and words."""
    return ChainBroken(error.line, error.code, error.message)
