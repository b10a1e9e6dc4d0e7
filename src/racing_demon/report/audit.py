"""The audit's reports: text and ``audit --json`` (schemas/audit-report.schema.json)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from racing_demon.audit import ClaimCheck, HandAudit
from racing_demon.report.text import printable


def audit_document(
    hands: Sequence[HandAudit], checks: Sequence[ClaimCheck], verification: Mapping[str, Any]
) -> dict[str, Any]:
    """``audit --json`` (schemas/audit-report.schema.json)."""
    return {
        "format": "racing-demon/audit-report/v1",
        "verification": dict(verification),
        "hands": [
            {
                "hand": hand.hand,
                "reason": hand.reason,
                "end_seq": hand.end_seq,
                "seats": [
                    {
                        "seat": seat.seat,
                        "name": seat.name,
                        "placed": [{"card": str(card), "seq": seq} for card, seq in seat.placed],
                        "demon_left": [str(card) for card in seat.demon_left],
                        "placed_points": seat.placed_points,
                        "demon_penalty": seat.demon_penalty,
                        "score": seat.score,
                        "claimed_score": seat.claimed_score,
                        "total": seat.total,
                    }
                    for seat in hand.seats
                ],
            }
            for hand in hands
        ],
        "claims": [
            {
                "claim": dict(check.claim),
                "holds": check.holds,
                "expected": check.expected,
                "found": check.found,
                "records": list(check.records),
                "message": check.message,
            }
            for check in checks
        ],
    }


def audit_text(hands: Sequence[HandAudit], checks: Sequence[ClaimCheck]) -> str:
    lines = []
    for hand in hands:
        lines.append(f"hand {hand.hand}: ended by {printable(hand.reason)} (record {hand.end_seq})")
        for seat in hand.seats:
            claimed = (
                ""
                if seat.claimed_score == seat.score
                else f" (the log claims {seat.claimed_score})"
            )
            lines.append(
                f"  seat {seat.seat} {printable(seat.name)}: "
                f"{len(seat.placed)} placed (+{seat.placed_points}), "
                f"{len(seat.demon_left)} demon left ({seat.demon_penalty}): "
                f"score {seat.score}{claimed}, total {seat.total}"
            )
            centre = " ".join(f"{card.display()}#{seq}" for card, seq in seat.placed) or "-"
            lines.append(f"    centre (card#record): {centre}")
            if seat.demon_left:
                lines.append(f"    demon left: {' '.join(c.display() for c in seat.demon_left)}")
    for check in checks:
        records = ", ".join(map(str, check.records)) or "-"
        lines.append(f"{'ok   ' if check.holds else 'WRONG'} {check.message} (records {records})")
    return "\n".join(lines)
