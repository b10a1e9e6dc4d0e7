"""Hand scores with a per-card breakdown, and the match that adds them up."""

from __future__ import annotations

from dataclasses import dataclass

from racing_demon.cards import Card
from racing_demon.rules import LeadTie, Rules
from racing_demon.state import EndReason, Phase, State


@dataclass(frozen=True, slots=True)
class SeatScore:
    seat: int
    placed: tuple[Card, ...]  # the seat's own cards in the centre, in canonical order
    demon_left: tuple[Card, ...]  # bottom first
    placed_points: int
    demon_penalty: int  # zero or negative

    @property
    def score(self) -> int:
        return self.placed_points + self.demon_penalty


@dataclass(frozen=True, slots=True)
class HandScore:
    hand: int
    reason: EndReason
    ended_by: int | None
    seats: tuple[SeatScore, ...]

    @property
    def scores(self) -> tuple[int, ...]:
        return tuple(seat.score for seat in self.seats)

    def without_cards(self) -> HandScore:
        """The same scores without the cards behind them: what a long match needs to keep."""
        return HandScore(
            self.hand,
            self.reason,
            self.ended_by,
            tuple(
                SeatScore(seat.seat, (), (), seat.placed_points, seat.demon_penalty)
                for seat in self.seats
            ),
        )


def score_hand(state: State) -> HandScore:
    """Score an ended hand: the centre is sorted by back, each card scores for its owner.

    Stock, waste and work piles score nothing, and the caller gets no bonus: the
    caller's demon pile is empty, so it simply pays no penalty.
    """
    if state.phase is not Phase.ENDED or state.end_reason is None:
        raise ValueError(f"hand {state.hand} has not ended")
    rules = state.rules
    by_back: list[list[Card]] = [[] for _ in state.seats]
    for card in state.foundation_cards():
        by_back[card.owner].append(card)
    seats = tuple(
        SeatScore(
            seat=number,
            placed=tuple(sorted(by_back[number], key=lambda card: card.index)),
            demon_left=seat.demon,
            placed_points=rules.points_per_foundation_card * len(by_back[number]),
            demon_penalty=rules.points_per_demon_card * len(seat.demon),
        )
        for number, seat in enumerate(state.seats)
    )
    return HandScore(state.hand, state.end_reason, state.ended_by, seats)


@dataclass(frozen=True, slots=True)
class Match:
    """The hands scored so far, and what the profile's match rule makes of them."""

    rules: Rules
    players: int
    hands: tuple[HandScore, ...] = ()

    def record(self, hand: HandScore) -> Match:
        if self.over:
            raise ValueError("the match is over")
        if len(hand.seats) != self.players:
            raise ValueError(f"a hand of {len(hand.seats)} seats in a match of {self.players}")
        if hand.hand != len(self.hands) + 1:
            raise ValueError(f"hand {hand.hand} recorded as hand {len(self.hands) + 1}")
        return Match(self.rules, self.players, (*self.hands, hand))

    @property
    def totals(self) -> tuple[int, ...]:
        return tuple(sum(hand.scores[seat] for hand in self.hands) for seat in range(self.players))

    @property
    def abandoned(self) -> bool:
        """Abandoned for inactivity: the match ends with no result."""
        return bool(self.hands) and self.hands[-1].reason is EndReason.ABANDONED

    @property
    def resigned(self) -> int | None:
        last = self.hands[-1] if self.hands else None
        return last.ended_by if last and last.reason is EndReason.RESIGNED else None

    @property
    def over(self) -> bool:
        if not self.hands:
            return False
        if self.abandoned or self.resigned is not None:
            return True
        totals = self.totals
        reached = self.rules.target is not None and max(totals) >= self.rules.target
        exhausted = self.rules.max_hands is not None and len(self.hands) >= self.rules.max_hands
        lead_tied = totals.count(max(totals)) > 1
        return (reached or exhausted) and not (lead_tied and self.rules.lead_tie is LeadTie.PLAY_ON)

    @property
    def winners(self) -> tuple[int, ...]:
        """The seats sharing the highest total once the match is over; none if abandoned.

        A seat that resigned cannot win: the match ends against it.
        """
        if not self.over or self.abandoned:
            return ()
        contenders = [seat for seat in range(self.players) if seat != self.resigned]
        totals = self.totals
        best = max(totals[seat] for seat in contenders)
        return tuple(seat for seat in contenders if totals[seat] == best)
