"""What a verified log proves, and what still rests on the table's word.

A VERIFIED verdict means every check held, but what the checks can prove depends on the
log: its format version, whether its players sign, how it was verified (docs/threat-model.md
§1). Every report says both, in these terms, so that nobody reads more into a verdict than
the log holds: an unkeyed game's deal is the table's word however well it verifies.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from racing_demon.verify.report import Report, Verdict


class Guarantee(enum.StrEnum):
    """The guarantees a log can give beyond legal moves and right scores, which every
    verified log proves."""

    TABLE_SIGNED = "table_signed"  # the pinned table wrote every record
    DEAL_BOUND = "deal_bound"  # every seat's entropy answers the commitment (v2, keyed)
    MOVES_SIGNED = "moves_signed"  # every submission is its player's (keyed)
    VIEWS_BOUND = "views_bound"  # every submission names the record its player saw (v2, keyed)
    RESULT_ACCEPTED = "result_accepted"  # every seat signed the final record (v2, keyed)
    ARRIVALS = "arrivals"  # when each move arrived: never by the log alone


_PROVED = {
    Guarantee.TABLE_SIGNED: "the pinned table signed every record",
    Guarantee.DEAL_BOUND: "every seat's entropy is its signature, under the key the genesis "
    "lists for it, over the dealer's commitment: no one party could choose or predict the "
    "deal",
    Guarantee.MOVES_SIGNED: "every submission is signed by its seat's key",
    Guarantee.VIEWS_BOUND: "every submission names, signed, the record its player had "
    "seen, and it is this log's: no player was shown another history",
    Guarantee.RESULT_ACCEPTED: "every seat's key accepted the result",
}

_ARRIVALS = (
    "when each move arrived, and whether one was dropped or refused without cause, rests on "
    "the table's clock: players' receipts show it (audit --receipts)"
)
_UNPINNED = (
    "no --table-key: the players' keys are the file's own claim, so their signatures prove "
    "nothing about who played"
)


class Assurance(NamedTuple):
    """What one log's verification proved, and each guarantee it did not, with why."""

    proved: tuple[tuple[Guarantee, str], ...]
    not_proved: tuple[tuple[Guarantee, str], ...]


_FAST = "--fast: players' signatures on moves not checked"
_FAST_TABLE_SIGNED = (
    "the pinned table signed every record (--fast: the table's signatures checked on the "
    "genesis and the final record only; the chain binds the rest to them)"
)


def assurance_of(report: Report) -> Assurance | None:
    """What ``report``'s log proves; None unless every check held (VERIFIED or UNPINNED)."""
    if report.verdict not in (Verdict.VERIFIED, Verdict.UNPINNED):
        return None
    version, keyed = report.format_version, report.keyed
    holds: dict[Guarantee, str | None] = {}  # None: proved; else why not
    if report.pinned:
        holds[Guarantee.TABLE_SIGNED] = None
    else:
        holds[Guarantee.TABLE_SIGNED] = (
            "no --table-key: nothing proves the table wrote this log"
            + ("" if report.unsafe_unpinned else " (--unsafe-unpinned accepts that)")
        )
    if not keyed:
        holds[Guarantee.DEAL_BOUND] = (
            "the table wrote every seat's entropy: the deal rests on its word"
        )
        holds[Guarantee.MOVES_SIGNED] = "no player signs: who moved rests on the table's word"
    else:
        holds[Guarantee.DEAL_BOUND] = (
            None
            if version != 1
            else "format v1: the entropy is not bound to the commitment, so nothing shows "
            "that the commitment came first"
        )
        holds[Guarantee.MOVES_SIGNED] = _FAST if report.fast else None
    if version == 1:
        holds[Guarantee.VIEWS_BOUND] = (
            "format v1: submissions do not name the history their players saw"
        )
        holds[Guarantee.RESULT_ACCEPTED] = "format v1: players cannot accept the result"
    elif not keyed:
        holds[Guarantee.VIEWS_BOUND] = "the records players saw rest on the table's word"
        holds[Guarantee.RESULT_ACCEPTED] = "no player signs: nobody accepted the result"
    else:
        holds[Guarantee.VIEWS_BOUND] = holds[Guarantee.MOVES_SIGNED]
        declined = [seat for seat in range(report.seats) if seat not in report.accepted_by]
        holds[Guarantee.RESULT_ACCEPTED] = (
            None
            if not declined
            else f"seat{'s' if len(declined) > 1 else ''} "
            f"{', '.join(map(str, declined))} did not accept the result"
        )
    if not report.pinned:
        # Without the table's key the file may be anybody's, the players' keys with it.
        for guarantee in (
            Guarantee.DEAL_BOUND,
            Guarantee.MOVES_SIGNED,
            Guarantee.VIEWS_BOUND,
            Guarantee.RESULT_ACCEPTED,
        ):
            if holds[guarantee] is None:
                holds[guarantee] = _UNPINNED
    holds[Guarantee.ARRIVALS] = _ARRIVALS
    proved = dict(_PROVED)
    if report.fast:
        proved[Guarantee.TABLE_SIGNED] = _FAST_TABLE_SIGNED
    return Assurance(
        tuple((guarantee, proved[guarantee]) for guarantee, why in holds.items() if why is None),
        tuple((guarantee, why) for guarantee, why in holds.items() if why is not None),
    )
