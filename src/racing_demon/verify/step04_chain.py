"""Step 4, chain: the genesis first, then every record numbered by its line, hashed to the
line before it, of the same game, in time order, and nothing after the final record.

The checks of one record run in this order: a record after the final one; on line 1, the
genesis and the game pinned; then a second genesis, ``seq``, ``prev``, the game id, time,
and on the final record its count of the records before it. The genesis's own ``t_ms`` is
not checked here: the first record to go back in time fails as TIME_BACKWARDS.
"""

from __future__ import annotations

from typing import NoReturn

from racing_demon.game.flow import RecordKind
from racing_demon.log.records import Final, Record
from racing_demon.verify.report import Step, VerifyCode, failure


def check_chain(
    number: int,
    record: Record,
    *,
    genesis: Record | None,
    final_line: int | None,
    previous_hash: str,
    last_t_ms: int,
    wanted_game: str | None,
) -> None:
    """Check line ``number``'s ``record`` against the lines before it."""

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
    if record.prev != previous_hash:
        fail(
            VerifyCode.PREV_MISMATCH,
            "prev is not the hash of the previous line",
            previous_hash,
            record.prev,
        )
    if record.game != genesis.game:
        fail(VerifyCode.GAME_ID_MISMATCH, "a record of another game", genesis.game, record.game)
    if record.t_ms < last_t_ms:
        fail(
            VerifyCode.TIME_BACKWARDS,
            "time runs backwards",
            f">= {last_t_ms} ms",
            f"{record.t_ms} ms",
        )
    if isinstance(record.payload, Final) and record.payload.records != record.seq:
        fail(
            VerifyCode.RECORD_COUNT,
            "the final record miscounts the records before it",
            record.seq,
            record.payload.records,
        )
