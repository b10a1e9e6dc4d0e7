"""Hand scores with a per-card breakdown, and the match that adds them up."""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

from racing_demon.game.cards import Card
from racing_demon.game.rules import MAX_HANDS, LeadTie, Rules
from racing_demon.game.state import EndReason, Phase, State


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


@dataclass(frozen=True, slots=True, eq=False)
class _History:
    """The hands recorded so far, newest first: a match and the one recorded from it share
    every cell but the newest, so recording a hand never copies the hands before it."""

    last: HandScore
    before: _History | None


@dataclass(frozen=True, slots=True)
class Match:
    """The hands scored so far, and what the profile's match rule makes of them.

    Recording a hand costs the same however many came before (issue 12): the totals are
    running sums and the history is shared, never copied. A match ends after
    ``MAX_HANDS`` hands whatever its profile, so a log cannot bring one that never ends.
    Build one with ``Match(rules, players)`` and grow it only with ``record``.
    """

    rules: Rules
    players: int
    played: int = 0  # how many hands have been recorded
    _sums: tuple[int, ...] = ()  # the totals, once a hand has been recorded
    _history: _History | None = field(default=None, compare=False, repr=False)

    def record(self, hand: HandScore) -> Match:
        if self.over:
            raise ValueError("the match is over")
        if len(hand.seats) != self.players:
            raise ValueError(f"a hand of {len(hand.seats)} seats in a match of {self.players}")
        if hand.hand != self.played + 1:
            raise ValueError(f"hand {hand.hand} recorded as hand {self.played + 1}")
        sums = tuple(map(operator.add, self.totals, hand.scores))
        return Match(self.rules, self.players, self.played + 1, sums, _History(hand, self._history))

    def __eq__(self, other: object) -> bool:
        # Equal when they recorded the same hands. The generated comparison leaves the
        # history out: comparing its cells would recurse once per hand.
        if not isinstance(other, Match):
            return NotImplemented
        return (self.rules, self.players, self.hands) == (other.rules, other.players, other.hands)

    @property
    def hands(self) -> tuple[HandScore, ...]:
        """Every hand, first to last: built on each call, for a caller that needs them all
        once (the final record, a summary); ``played`` counts them."""
        newest_first = []
        cell = self._history
        while cell is not None:
            newest_first.append(cell.last)
            cell = cell.before
        return tuple(reversed(newest_first))

    @property
    def last(self) -> HandScore | None:
        return None if self._history is None else self._history.last

    @property
    def totals(self) -> tuple[int, ...]:
        return self._sums or (0,) * self.players

    @property
    def abandoned(self) -> bool:
        """Abandoned for inactivity: the match ends with no result."""
        return self.last is not None and self.last.reason is EndReason.ABANDONED

    @property
    def resigned(self) -> int | None:
        last = self.last
        return last.ended_by if last and last.reason is EndReason.RESIGNED else None

    @property
    def over(self) -> bool:
        if not self.played:
            return False
        if self.abandoned or self.resigned is not None or self.played >= MAX_HANDS:
            return True  # the cap ends a tie for the lead too
        totals = self.totals
        reached = self.rules.target is not None and max(totals) >= self.rules.target
        exhausted = self.rules.max_hands is not None and self.played >= self.rules.max_hands
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
