"""Step 4, chain: the genesis first, then every record numbered by its line, hashed to the
line before it, of the same game, in time order, and nothing after the final record.

In format v2 every submission also names the last record its player had seen, which must
be an earlier line of this log, at most ``SEEN_WINDOW`` lines back, with that line's hash:
a table that showed one player another history is caught by the log alone.

The checks of one record run in this order: a record after the final one; on line 1, the
genesis and the game pinned; then a second genesis, ``seq``, ``prev``, the game id, the
format version, time, on a v2 submission the record its player had seen (in range, then
its hash), and on the final record its count of the records before it. The genesis's own
``t_ms`` is not checked here: the first record to go back in time fails as TIME_BACKWARDS.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from racing_demon.game.flow import RecordKind, Submission
from racing_demon.log.records import SEEN_WINDOW, Final, Record
from racing_demon.verify.report import Step, VerifyCode, failure


def check_chain(
    number: int,
    record: Record,
    *,
    genesis: Record | None,
    final_line: int | None,
    recent_hashes: Sequence[str],
    last_t_ms: int,
    wanted_game: str | None,
) -> None:
    """Check line ``number``'s ``record`` against the lines before it, of which
    ``recent_hashes`` holds the hashes of the last (up to ``SEEN_WINDOW``), oldest first."""

    def fail(
        code: VerifyCode, message: str, expected: object = None, found: object = None
    ) -> NoReturn:
        raise failure(
            Step.CHAIN, code, message, line=number, record=record, expected=expected, found=found
        )

    if final_line is not None:
        fail(VerifyCode.AFTER_FINAL, f"a record after the final record on line {final_line}")
    kind = record.kind
    if number == 1:
        if kind is not RecordKind.GENESIS:
            fail(
                VerifyCode.GENESIS_MISSING,
                "the first record is not the genesis",
                RecordKind.GENESIS,
                kind,
            )
        if wanted_game is not None and record.game != wanted_game:
            fail(VerifyCode.WRONG_GAME, "this log is of another game", wanted_game, record.game)
        return
    assert genesis is not None  # else line 1 failed
    index = number - 1
    if kind is RecordKind.GENESIS:
        fail(VerifyCode.GENESIS_REPEATED, "a second genesis record")
    if record.seq != index:
        fail(
            VerifyCode.SEQ_MISMATCH,
            "seq is not the line's index: a record removed, repeated or moved",
            index,
            record.seq,
        )
    previous_hash = recent_hashes[-1]
    if record.prev != previous_hash:
        fail(
            VerifyCode.PREV_MISMATCH,
            "prev is not the hash of the previous line",
            previous_hash,
            record.prev,
        )
    if record.game != genesis.game:
        fail(VerifyCode.GAME_ID_MISMATCH, "a record of another game", genesis.game, record.game)
    if record.v != genesis.v:
        fail(
            VerifyCode.VERSION_MISMATCH,
            "a record of another format version than the genesis",
            genesis.v,
            record.v,
        )
    if record.t_ms < last_t_ms:
        fail(
            VerifyCode.TIME_BACKWARDS,
            "time runs backwards",
            f">= {last_t_ms} ms",
            f"{record.t_ms} ms",
        )
    payload = record.payload
    if isinstance(payload, Submission) and payload.seen is not None:
        seen = payload.seen
        oldest = index - len(recent_hashes)  # the seq of recent_hashes[0]
        if not oldest <= seen.seq < index:
            fail(
                VerifyCode.SEEN_OUT_OF_RANGE,
                "a submission names a record it had seen that is not one of the "
                f"{SEEN_WINDOW} records before it",
                f"{max(0, index - SEEN_WINDOW)} to {index - 1}",
                seen.seq,
            )
        if recent_hashes[seen.seq - oldest] != seen.hash:
            fail(
                VerifyCode.SEEN_MISMATCH,
                f"the record its player had seen is not line {seen.seq + 1} of this log: "
                "the table showed this player another history",
                recent_hashes[seen.seq - oldest],
                seen.hash,
            )
    if isinstance(record.payload, Final) and record.payload.records != record.seq:
        fail(
            VerifyCode.RECORD_COUNT,
            "the final record miscounts the records before it",
            record.seq,
            record.payload.records,
        )
