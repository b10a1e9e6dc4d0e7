"""The contested plays of a verified log: every bounce that lost a race (docs/log-format.md
§10), a card that came too late for its foundation level (``FOUNDATION_TAKEN``) or a move
that came after another seat had ended the hand (``HAND_OVER``: a call, the move that
emptied a demon pile, a resignation), the record that won it, how far apart the two arrived,
and each seat's round trip as the log's ``lag`` records give it (format v3,
docs/log-format.md §6), rebuilt on the log's verification pass (``Races``, a watcher of
``replay.Following``).

The arrival gap is the table's word, as every ``t_ms`` is: the time between the winner's
record and the loser's on the table's clock. A seat's round trip at a contest is the
median of the last ``SAMPLES_WEIGHED`` samples logged for it before the losing record;
None when none was (a v1 or v2 log, a bot, a seat never measured). A contest was decided
by less than the round-trip spread when both are known and the gap is smaller than the
difference between them: the faster connection may have won it, not the faster player.
"""

from __future__ import annotations

import enum
import statistics
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from racing_demon.game.cards import Card
from racing_demon.game.flow import RecordKind, Submission
from racing_demon.game.moves import Move
from racing_demon.log.records import Lag, Record
from racing_demon.replay import Snapshot

SAMPLES_WEIGHED: Final = 8  # as many as the server's own median (serve.round_trips)


class Stake(enum.StrEnum):
    """What a race was for."""

    FOUNDATION = "foundation"  # a foundation level: the winner's card got there first
    HAND_END = "hand_end"  # the end of the hand: the winner called, went out or resigned first


@dataclass(frozen=True, slots=True, kw_only=True)
class Contest:
    """One race: who got there first, who lost, by how much. For a foundation level, the
    cards are the winner's card there and the loser's card that came too late; for the
    hand's end, both are None (the records say what the moves were)."""

    hand: int
    winner_seq: int
    winner_seat: int
    winner_card: Card | None
    loser_seq: int
    loser_seat: int
    loser_card: Card | None
    gap_ms: int  # the loser's record's t_ms minus the winner's
    winner_rtt_ms: int | None
    loser_rtt_ms: int | None

    @property
    def stake(self) -> Stake:
        return Stake.FOUNDATION if self.winner_card is not None else Stake.HAND_END

    @property
    def spread_ms(self) -> int | None:
        """The difference between the two seats' round trips, when both are known."""
        if self.winner_rtt_ms is None or self.loser_rtt_ms is None:
            return None
        return abs(self.winner_rtt_ms - self.loser_rtt_ms)

    @property
    def within_spread(self) -> bool:
        """Decided by less than the round-trip spread (the module's docs)."""
        spread = self.spread_ms
        return spread is not None and self.gap_ms < spread


@dataclass
class Races:
    """The contested plays of one log as its records come, each seen with the replay's
    snapshot after it (``replay.follow``): the audit's pass and the viewer's page alike."""

    contests: list[Contest] = field(default_factory=list)
    _placed_by: dict[int, tuple[int, int]] = field(default_factory=dict)  # seq: seat, t_ms
    _samples: dict[int, deque[int]] = field(default_factory=dict)  # seat: its last samples

    def see(self, record: Record, snapshot: Snapshot) -> None:
        """Take ``record`` into account, ``snapshot`` the table after it (a
        ``SnapshotWatcher`` of ``replay.Following``)."""
        if record.seq == 0:  # a second pass replays again from the genesis
            self.contests, self._placed_by, self._samples = [], {}, {}
        payload = record.payload
        if isinstance(payload, Lag):
            for seat, samples in enumerate(payload.rtt_ms):
                self._samples.setdefault(seat, deque(maxlen=SAMPLES_WEIGHED)).extend(samples)
        elif record.kind is RecordKind.HAND_START:
            self._placed_by = {}  # a race is won and lost within one hand
        if not isinstance(payload, Submission):
            return
        if payload.kind is not RecordKind.BOUNCE:
            self._placed_by[record.seq] = (payload.seat, record.t_ms)
            return
        lost_to = snapshot.lost_to
        if lost_to is None:
            return
        winner_seat, winner_t_ms = self._placed_by[lost_to.seq]
        # A card raced for a level; a move that came after the hand's end is only its record.
        loser_card = None if lost_to.card is None else Move.parse(payload.move).cards[0]
        self.contests.append(
            Contest(
                hand=payload.hand,
                winner_seq=lost_to.seq,
                winner_seat=winner_seat,
                winner_card=lost_to.card,
                loser_seq=record.seq,
                loser_seat=payload.seat,
                loser_card=loser_card,
                gap_ms=record.t_ms - winner_t_ms,
                winner_rtt_ms=self._round_trip(winner_seat),
                loser_rtt_ms=self._round_trip(payload.seat),
            )
        )

    def _round_trip(self, seat: int) -> int | None:
        samples = self._samples.get(seat)
        return None if not samples else round(statistics.median(samples))


def measured(contests: Sequence[Contest]) -> int:
    """How many of ``contests`` have both seats' round trips logged (a spread)."""
    return sum(contest.spread_ms is not None for contest in contests)


def within_spread(contests: Sequence[Contest]) -> int:
    """How many of ``contests`` were decided by less than their seats' round-trip spread."""
    return sum(contest.within_spread for contest in contests)


def contest_document(contest: Contest) -> dict[str, Any]:
    """A contest as ``audit --json`` and the viewer's data hold it."""
    return {
        "hand": contest.hand,
        "stake": contest.stake.value,
        "winner": {
            "seat": contest.winner_seat,
            "seq": contest.winner_seq,
            "card": _card(contest.winner_card),
            "rtt_ms": contest.winner_rtt_ms,
        },
        "loser": {
            "seat": contest.loser_seat,
            "seq": contest.loser_seq,
            "card": _card(contest.loser_card),
            "rtt_ms": contest.loser_rtt_ms,
        },
        "gap_ms": contest.gap_ms,
        "spread_ms": contest.spread_ms,
        "within_spread": contest.within_spread,
    }


def _card(card: Card | None) -> str | None:
    return None if card is None else str(card)
