"""Log records: the bodies the table writes and the verifier reads (docs/log-format.md §6).

A line is the canonical JSON of ``{"body": {...}, "sigs": {...}}``. The table signs
``pae(kind, canonical(body))`` for every record; a player with a key signs the submission
``{game, hand, move, n, player}`` before the table orders it, because a player cannot
know the record's place in the chain (seq, prev) or whether its move will land.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping
from typing import Any

from racing_demon.game.moves import Kind as MoveKind
from racing_demon.game.moves import Move
from racing_demon.log.canonical import canonical_bytes

FORMAT_VERSION = 1
SUBMISSION = "submission"  # the signature kind of a player's own statement of a move


class RecordKind(enum.StrEnum):
    GENESIS = "genesis"
    HAND_START = "hand_start"
    MOVE = "move"  # an accepted turn, recycle or card move
    TIE = "tie"  # an accepted card that tied a foundation level (the table's tie rule)
    CALL = "call"
    AGREE = "agree"
    RESIGN = "resign"
    BOUNCE = "bounce"  # a refused submission, with the engine's reason code
    STALL = "stall"
    HAND_END = "hand_end"
    FINAL = "final"


PLAYER_KINDS = frozenset(
    {
        RecordKind.MOVE,
        RecordKind.TIE,
        RecordKind.CALL,
        RecordKind.AGREE,
        RecordKind.RESIGN,
        RecordKind.BOUNCE,
    }
)
_ACCEPTED_KIND = {
    MoveKind.TURN: RecordKind.MOVE,
    MoveKind.RECYCLE: RecordKind.MOVE,
    MoveKind.PLAY: RecordKind.MOVE,
    MoveKind.CALL: RecordKind.CALL,
    MoveKind.AGREE: RecordKind.AGREE,
    MoveKind.RESIGN: RecordKind.RESIGN,
}


def accepted_kind(move: Move, tie: bool) -> RecordKind:
    """The record kind of an accepted move."""
    return RecordKind.TIE if tie else _ACCEPTED_KIND[move.kind]


def submission(game: str, hand: int, player: int, n: int, move: str) -> dict[str, Any]:
    """What a player signs: its n-th submission of this game, before the table orders it."""
    return {"game": game, "hand": hand, "move": move, "n": n, "player": player}


def submission_of(body: Mapping[str, Any]) -> dict[str, Any]:
    """The submission a player-kind record carries."""
    return submission(body["game"], body["hand"], body["player"], body["n"], body["move"])


def line_bytes(body: Mapping[str, Any], sigs: Mapping[str, Any]) -> bytes:
    """One log line, without its newline."""
    return canonical_bytes({"body": body, "sigs": sigs})


_BODY_START = b'{"body":'
_SIGS_START = b',"sigs":'


def body_bytes(line: bytes) -> bytes:
    """The canonical bytes of a canonical line's body, cut from the line, not re-encoded.

    A canonical record is ``{"body":BODY,"sigs":SIGS}`` (keys sorted) and SIGS holds only
    hex strings, so the last ``,"sigs":`` is the one that ends BODY, whatever BODY holds.
    """
    return line[len(_BODY_START) : line.rindex(_SIGS_START)]


def chain_hash(line: bytes) -> str:
    """What the next record's ``prev`` holds: SHA-256 of the line's bytes, without the newline."""
    return hashlib.sha256(line).hexdigest()
