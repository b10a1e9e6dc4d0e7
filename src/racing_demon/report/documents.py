"""The ``--json`` documents of ``replay``, ``rules``, ``keygen``, ``recover`` and
``seed check``. Each is described by
``schemas/<name>.schema.json`` and names itself ``racing-demon/<name>/v1``
(docs/command-line.md, "JSON output").

File names are spelt as in ``verify --json`` (``files.shown_name``), so a document is
valid UTF-8 whatever bytes a name holds; what a log says (a player's name, a move) is
kept as it is: JSON escapes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from racing_demon.files import LogFile, shown_name
from racing_demon.game.flow import RecordKind, Submission
from racing_demon.game.rules import Rules
from racing_demon.game.state import State
from racing_demon.log.reader import ReadError
from racing_demon.log.records import Record
from racing_demon.outcomes import exit_code_of
from racing_demon.profiles import builtin_named
from racing_demon.recover import Recovery
from racing_demon.replay import ReplayError
from racing_demon.report.text import top_first

REPLAY_FORMAT = "racing-demon/replay-report/v1"
RULES_FORMAT = "racing-demon/rules-report/v1"
KEYGEN_FORMAT = "racing-demon/keygen-report/v1"
RECOVER_FORMAT = "racing-demon/recover-report/v1"
SEED_CHECK_FORMAT = "racing-demon/seed-check/v1"


def replay_document(
    source: LogFile,
    state: State,
    names: Sequence[str],
    record: Record,
    following: Record | ReplayError | ReadError | None,
) -> dict[str, Any]:
    """``replay --json`` (schemas/replay-report.schema.json): what ``table_text`` and
    ``next_text`` show, as data. Piles are listed top first, as in ``deal --json``."""
    return {
        "format": REPLAY_FORMAT,
        "source": shown_name(source),
        "seq": record.seq,
        "t_ms": record.t_ms,
        "event": _event(record),
        "hand": state.hand,
        "phase": state.phase.value,
        "foundations": [
            {
                "suit": foundation.suit.letter,
                "rank": foundation.rank,
                # A tied level holds one card of each seat that tied.
                "top": [{"card": card.face, "seat": card.owner} for card in foundation.levels[-1]],
                "complete": foundation.complete,
            }
            for foundation in state.foundations
        ],
        "seats": [
            {
                "seat": number,
                "name": names[number],
                "demon": {
                    "top": seat.demon[-1].face if seat.demon else None,
                    "left": len(seat.demon),
                },
                "work": [top_first(pile) for pile in seat.work],
                "waste": {
                    "top": seat.waste[-1].face if seat.waste else None,
                    "count": len(seat.waste),
                },
                "stock": len(seat.stock),
            }
            for number, seat in enumerate(state.seats)
        ],
        "next": _next(record, following),
    }


def _event(record: Record) -> dict[str, Any]:
    payload = record.payload
    submission = payload if isinstance(payload, Submission) else None
    return {
        "kind": str(record.kind),
        "seat": None if submission is None else submission.seat,
        "move": None if submission is None else submission.move,
        "bounced": None if submission is None else submission.reason,
    }


def _next(record: Record, following: Record | ReplayError | ReadError | None) -> dict[str, Any]:
    """What follows the record shown: another record, the first one the replay refuses,
    or nothing: the match ended (the final record was shown), or the log is unfinished
    (a torn last line, which a crash leaves, says why)."""
    if following is None:
        status = "end" if record.kind is RecordKind.FINAL else "unfinished"
        return {"status": status, "seq": None, "event": None, "message": None}
    if isinstance(following, ReadError):
        return {"status": "unfinished", "seq": None, "event": None, "message": str(following)}
    if isinstance(following, ReplayError):
        return {"status": "refused", "seq": following.seq, "event": None, "message": str(following)}
    return {"status": "record", "seq": following.seq, "event": _event(following), "message": None}


def rules_document(profiles: Sequence[Rules]) -> dict[str, Any]:
    """``rules [PROFILE] --json`` (schemas/rules-report.schema.json): every built-in
    profile, or the one PROFILE names; one shape either way."""
    return {
        "format": RULES_FORMAT,
        "profiles": [
            {
                "name": rules.name,
                "title": rules.title,
                "source": rules.source,
                "min_players": rules.min_players,
                "max_players": rules.max_players,
                "sha256": rules.digest(),
                "built_in": builtin_named(rules) is not None,
                "document": rules.to_document(),
            }
            for rules in profiles
        ],
    }


def keygen_document(key_id: str, private: Path, public: Path, *, encrypted: bool) -> dict[str, Any]:
    """``keygen --json`` (schemas/keygen-report.schema.json)."""
    return {
        "format": KEYGEN_FORMAT,
        "key_id": key_id,
        "private": shown_name(private),
        "public": shown_name(public),
        "encrypted": encrypted,
    }


def recover_document(
    recovery: Recovery, verification: Mapping[str, Any], *, signatures_checked: bool
) -> dict[str, Any]:
    """``recover --json`` (schemas/recover-report.schema.json): what was done (or, with
    --dry-run, would be), and the verification of the complete records, as ``verify``
    reports one log."""
    return {
        "format": RECOVER_FORMAT,
        "source": shown_name(recovery.source),
        "action": recovery.action.value,
        "dry_run": recovery.dry_run,
        "torn_bytes": recovery.torn_bytes,
        "kept_bytes": recovery.kept_bytes,
        "signatures_checked": signatures_checked,
        "exit_code": exit_code_of(recovery),
        "verification": dict(verification),
    }


def seed_check_document(commitment_hex: str, *, opens: bool) -> dict[str, Any]:
    """``seed check --json`` (schemas/seed-check.schema.json). The secret is not echoed:
    it may still be private (checked before play)."""
    return {"format": SEED_CHECK_FORMAT, "commitment": commitment_hex, "opens": opens}
