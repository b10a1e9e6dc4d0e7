"""The dispute view of a verified log: who placed what, when, and what it scored.

For every hand and seat: the seat's cards in the centre (sorted by back, each with the
seq of the record that placed it), the demon cards left and their penalty, the hand
score recomputed beside the one the log claims, and the running total, rebuilt from the
records as the log's verification replays them (``Hands``). A claim file (a
player's assertions) is checked against it, naming the records that show each answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from racing_demon.files import LogFile
from racing_demon.game.cards import Card
from racing_demon.game.flow import HandEnd
from racing_demon.game.scoring import HandScore
from racing_demon.log.reader import DEFAULT_LIMITS, Limits
from racing_demon.log.records import Record
from racing_demon.replay import Following, Snapshot
from racing_demon.verify import Settings, verify_log

CLAIM_FIELDS = ("score", "placed", "demon_left", "total")


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatAudit:
    seat: int
    name: str
    placed: tuple[tuple[Card, int], ...]  # the seat's centre cards with the seq that placed each
    demon_left: tuple[Card, ...]
    placed_points: int
    demon_penalty: int
    score: int  # recomputed
    claimed_score: int | None  # as the log's hand_end record says; None if it names none
    total: int  # running total after this hand, recomputed


@dataclass(frozen=True, slots=True, kw_only=True)
class HandAudit:
    hand: int
    reason: str
    end_seq: int  # the hand_end record
    seats: tuple[SeatAudit, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimCheck:
    claim: Mapping[str, int]
    holds: bool
    expected: int  # what the log shows
    found: int  # what the claim says
    records: tuple[int, ...]  # the seqs that show the answer
    message: str


@dataclass
class Hands:
    """Every hand of a log as its verification's pass replays it (a ``SnapshotWatcher`` of
    ``replay.Following``): ``hands`` holds each hand the replay ended, with its per-card
    breakdown; whole when the log verified."""

    hands: list[HandAudit] = field(default_factory=list)

    def see(self, record: Record, snapshot: Snapshot) -> None:
        if record.seq == 0:  # a second pass replays again from the genesis
            self.hands = []
        end = record.payload
        if not isinstance(end, HandEnd):
            return
        scored, placed = snapshot.hands[-1]
        totals = [seat.total for seat in self.hands[-1].seats] if self.hands else []
        self.hands.append(audit_hand(scored, placed, end, record.seq, snapshot.names, totals))


def audit_hands(
    path: LogFile, secret: bytes, limits: Limits = DEFAULT_LIMITS
) -> tuple[HandAudit, ...]:
    """Every hand of the log at ``path``, dealt by the dealer ``secret``, with its per-card
    breakdown, as its verification (unpinned) replays it: up to the first record refused,
    if any, so whole for a log that verifies."""
    hands = Hands()
    verify_log(path, Settings(seed=secret, limits=limits), visitors=[Following((hands,))])
    return tuple(hands.hands)


def audit_hand(
    scored: HandScore,
    placed: Mapping[Card, int],
    end: HandEnd,
    end_seq: int,
    names: Sequence[str],
    totals: Sequence[int] = (),
) -> HandAudit:
    """One hand as ``score_hand`` recomputes it, beside the scores its hand_end record
    (``end_seq``) claims, after the running ``totals``. A card's record is the one that
    placed it. A hand_end the match flow refused may claim no score for a seat: its
    claimed score is None (the viewer audits the hand such a record closes)."""
    totals = [
        sum(pair) for pair in zip(totals or [0] * len(scored.seats), scored.scores, strict=True)
    ]
    seats = tuple(
        SeatAudit(
            seat=seat.seat,
            name=names[seat.seat],
            placed=tuple((card, placed.get(card, end_seq)) for card in seat.placed),
            demon_left=seat.demon_left,
            placed_points=seat.placed_points,
            demon_penalty=seat.demon_penalty,
            score=seat.score,
            claimed_score=end.scores[seat.seat] if seat.seat < len(end.scores) else None,
            total=totals[seat.seat],
        )
        for seat in scored.seats
    )
    # The recomputed hand and reason: a hand_end the flow accepted names the same ones.
    return HandAudit(hand=scored.hand, reason=scored.reason.value, end_seq=end_seq, seats=seats)


def check_claims(
    hands: Sequence[HandAudit], claims: Sequence[Mapping[str, int]], final_seq: int
) -> tuple[ClaimCheck, ...]:
    """Each claim checked; claims are validated by schemas/audit-claims.schema.json."""
    return tuple(_check(hands, claim, final_seq) for claim in claims)


def _check(hands: Sequence[HandAudit], claim: Mapping[str, int], final_seq: int) -> ClaimCheck:
    seat_number = claim["seat"]
    field = next(name for name in CLAIM_FIELDS if name in claim)
    found = claim[field]
    what = (
        f"seat {seat_number}'s total"
        if field == "total"
        else f"seat {seat_number}'s {field.replace('_', ' ')} in hand {claim['hand']}"
    )
    if not hands:
        return _cannot_hold(claim, f"{what} = {found}: the log has no hand that ended")
    seats = len(hands[0].seats)  # a verified log scores every seat in every hand
    if seat_number >= seats:
        return _cannot_hold(
            claim, f"{what} = {found}: there is no seat {seat_number} (the log has {_seats(seats)})"
        )
    if field == "total":
        expected = hands[-1].seats[seat_number].total
        records = (*(hand.end_seq for hand in hands), final_seq)
    else:
        hand = next((h for h in hands if h.hand == claim["hand"]), None)
        if hand is None:
            return _cannot_hold(
                claim,
                f"{what} = {found}: there is no hand {claim['hand']} "
                f"(the log has {_hands(len(hands))})",
            )
        seat = hand.seats[seat_number]
        placing = tuple(sorted({seq for _, seq in seat.placed}))
        expected, records = {
            "score": (seat.score, (*placing, hand.end_seq)),
            "placed": (len(seat.placed), placing),
            "demon_left": (len(seat.demon_left), (hand.end_seq,)),
        }[field]
    holds = expected == found
    verdict = "holds" if holds else f"is wrong: the log shows {expected}"
    return ClaimCheck(
        claim=claim,
        holds=holds,
        expected=expected,
        found=found,
        records=records,
        message=f"{what} = {found} {verdict}",
    )


def _seats(count: int) -> str:
    return _span("seat", 0, count - 1)


def _hands(count: int) -> str:
    return _span("hand", 1, count)


def _span(noun: str, first: int, last: int) -> str:
    if first == last:
        return f"{noun} {first} only"
    return f"{noun}s {first} {'and' if last == first + 1 else 'to'} {last}"


def _cannot_hold(claim: Mapping[str, int], message: str) -> ClaimCheck:
    """A claim about a seat or a hand the log does not have: no record shows an answer."""
    field = next(name for name in CLAIM_FIELDS if name in claim)
    return ClaimCheck(
        claim=claim, holds=False, expected=0, found=claim[field], records=(), message=message
    )
