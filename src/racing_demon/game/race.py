"""Which record a bounced move lost its race to: the one place of that rule.

A ``FOUNDATION_TAKEN`` bounce came too late for a foundation level: it lost to the record
that had placed the first card on that level (on a level tied under the table's tie rule,
the earlier of the two). A ``HAND_OVER`` bounce came after a seat had ended the hand: it
lost to the first record after which the hand had such a seat (a ``call``, the move that
emptied a demon pile under ``demon_empty``, a ``resign``); the seat's own end, and a hand
ended by no seat (blocked, no centre, abandoned), is no race lost. Any other bounce lost no
race. The table names the winner in a bounce of log format v4 (``lost_to``), the verifier
checks it, and the replay, the audit and the viewer show it (docs/log-format.md §6, §10).

``Races`` follows one hand's records: which record placed each centre card, and which one
ended the hand. It knows records by their position (``seq``) and the hash of their line,
both given by its caller: the rules core itself knows no log.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from racing_demon.game.cards import Card
from racing_demon.game.engine import ViolationCode
from racing_demon.game.flow import HandStart, RecordKind, Seen, Submission
from racing_demon.game.moves import FOUNDATION_ZONE, NEW_FOUNDATION_ZONE, Move
from racing_demon.game.state import State


class Race(NamedTuple):
    """What a bounced submission lost its race to: the record that won it (its ``seq`` and
    line ``hash``), by which seat, and the card it had placed first on that foundation
    level (``FOUNDATION_TAKEN``), or None when it had ended the hand first (``HAND_OVER``)."""

    seq: int
    hash: str
    seat: int
    card: Card | None

    @property
    def record(self) -> Seen:
        """The winning record, as a bounce of format v4 names it (``lost_to``)."""
        return Seen(seq=self.seq, hash=self.hash)


class Races:
    """One hand's races so far (mutable: updated record by record, in the log's order)."""

    def __init__(self) -> None:
        self.placed: dict[Card, int] = {}  # centre card -> the seq of the record that placed it
        self.ended_at: int | None = None  # the first record after which a seat ended the hand
        self._hashes: dict[int, str] = {}  # those records' line hashes

    def deal(self) -> None:
        """A new hand: no card placed, nobody ended it."""
        self.placed, self.ended_at, self._hashes = {}, None, {}

    def follow(
        self,
        seq: int,
        line_hash: str,
        event: object,
        after: State | None,
        parse: Callable[[str], Move] = Move.parse,
    ) -> Race | None:
        """Follow record ``seq`` (its line hashing to ``line_hash``), whose match event
        ``event`` the flow took, leaving the hand at ``after``: a hand's start begins new
        races, an accepted submission joins them. A bounce's answer is the race it lost;
        every other record's, and a bounce that lost none, None. ``parse`` reads a move's
        text (a caller with a cache of parsed moves passes its own)."""
        if isinstance(event, HandStart):
            self.deal()
            return None
        if not isinstance(event, Submission):
            return None
        assert after is not None  # the flow judged the submission in the hand in play
        move = parse(event.move)
        if event.kind is RecordKind.BOUNCE:
            return self.lost_to(after, event.seat, event.reason, move)
        self.logged(seq, line_hash, move, after)
        return None

    def logged(self, seq: int, line_hash: str, move: Move, after: State) -> None:
        """Record ``seq`` (its line hashing to ``line_hash``) logged ``move``, accepted,
        leaving the hand at ``after``."""
        target = move.target
        if target is not None and target.zone in (FOUNDATION_ZONE, NEW_FOUNDATION_ZONE):
            self.placed[move.cards[0]] = seq
            self._hashes[seq] = line_hash
        if self.ended_at is None and after.ended_by is not None:
            self.ended_at = seq
            self._hashes[seq] = line_hash

    def lost_to(self, state: State, seat: int, reason: str | None, move: Move) -> Race | None:
        """The race that seat ``seat``'s ``move``, bounced for ``reason`` in the hand at
        ``state``, lost; None if it lost none."""
        if reason == ViolationCode.HAND_OVER:
            at = self.ended_at
            if at is None or state.ended_by in (None, seat):
                return None
            assert state.ended_by is not None
            return Race(at, self._hashes[at], state.ended_by, None)
        target = move.target
        if reason != ViolationCode.FOUNDATION_TAKEN or target is None:
            return None
        if target.zone is not FOUNDATION_ZONE or not move.cards:
            return None
        card = move.cards[0]
        level = state.foundations[target.index].levels[card.rank - 1]
        placed = [c for c in level if c in self.placed]
        if not placed:
            return None
        first = min(placed, key=self.placed.__getitem__)
        seq = self.placed[first]
        return Race(seq, self._hashes[seq], first.owner, first)
