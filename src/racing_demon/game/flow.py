"""The match flow: which record may follow which, and what each does to the match.

A log is the match told as events: a hand is dealt, a seat's submission is accepted or
bounced, the stall shifts, a hand ends, the match ends. The table, the verifier and replay
all go through this one module, so each rule of the flow is decided here only:

- ``MatchFlow.play(event, t_ms)`` judges an event against the match so far and returns the
  match after it, or raises ``FlowRefusal`` naming the rule it breaks (the verifier judges
  with it, replay and the table apply with it);
- ``MatchFlow.due()`` is the event the table must record next by itself (a stall shift, a
  hand's end, the next deal, the end of the match), or None while it waits for seats;
- ``MatchFlow.submit(...)`` is what the table makes of a seat's submission.

The events hold what the log holds, as text where the log has text (a move is parsed
here, so that a record whose move does not parse is refused in its place in the order).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple

from racing_demon.errors import RacingDemonError
from racing_demon.game.cards import Card
from racing_demon.game.deal import Dealer, pack_digest
from racing_demon.game.engine import (
    Violation,
    advance_clock,
    apply_move,
    check_move,
    is_tie,
    play_at,
)
from racing_demon.game.moves import Move, MoveKind
from racing_demon.game.rules import Rules
from racing_demon.game.scoring import Match, score_hand
from racing_demon.game.stall import (
    StallOutcome,
    apply_stall,
    check_stall,
    stall_is_due,
    stall_outcome,
)
from racing_demon.game.state import PLAYING, EndReason, Phase, State, next_deadline


class RecordKind(enum.StrEnum):
    """What a record tells; the log's ``kind`` field (docs/log-format.md §6)."""

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
    PAUSE = "pause"  # (v3) a note the flow never sees: the table was down, and resumed
    LAG = "lag"  # (v3) a note the flow never sees: the seats' round trips


SUBMISSION_KINDS = frozenset(
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


class FinalReason(enum.StrEnum):
    COMPLETE = "complete"
    RESIGNED = "resigned"
    ABANDONED = "abandoned"


# -- events --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class HandStart:
    hand: int
    packs: tuple[str, ...]  # each seat's pack digest, in seat order

    @property
    def kind(self) -> RecordKind:
        return RecordKind.HAND_START


class Seen(NamedTuple):
    """The last record a player's client had seen when it submitted: its seq and the
    hash of its line (log format v2). A pair a client may send as one: built by keyword."""

    seq: int
    hash: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Submission:
    """A seat's move as the table ordered it: accepted (its kind says how) or bounced."""

    kind: RecordKind  # one of SUBMISSION_KINDS
    hand: int
    seat: int
    n: int  # the seat's submission number, from 0, without gaps
    move: str
    reason: str | None = None  # the engine's refusal code, for a bounce only
    seen: Seen | None = None  # what its player had seen (format v2); the flow ignores it
    lost_to: Seen | None = None  # a bounce's: the record it lost its race to (format v4)


@dataclass(frozen=True, slots=True, kw_only=True)
class Stall:
    hand: int

    @property
    def kind(self) -> RecordKind:
        return RecordKind.STALL


@dataclass(frozen=True, slots=True, kw_only=True)
class HandEnd:
    hand: int
    reason: EndReason
    scores: tuple[int, ...]

    @property
    def kind(self) -> RecordKind:
        return RecordKind.HAND_END


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchEnd:
    reason: FinalReason
    hands: tuple[tuple[int, ...], ...]
    totals: tuple[int, ...]
    winners: tuple[int, ...]

    @property
    def kind(self) -> RecordKind:
        return RecordKind.FINAL


Event = HandStart | Submission | Stall | HandEnd | MatchEnd


# -- refusals ------------------------------------------------------------------------


class FlowCode(enum.StrEnum):
    """Why the flow refuses an event; the verifier reports these under its own steps."""

    HAND_OUT_OF_ORDER = "HAND_OUT_OF_ORDER"
    PACK_MISMATCH = "PACK_MISMATCH"
    BAD_MOVE_TEXT = "BAD_MOVE_TEXT"
    PLAYER_MISMATCH = "PLAYER_MISMATCH"
    ILLEGAL_MOVE = "ILLEGAL_MOVE"
    KIND_MISMATCH = "KIND_MISMATCH"
    WRONGLY_BOUNCED = "WRONGLY_BOUNCED"
    BOUNCE_REASON_MISMATCH = "BOUNCE_REASON_MISMATCH"
    UNJUSTIFIED_STALL = "UNJUSTIFIED_STALL"
    MISSING_STALL = "MISSING_STALL"
    UNJUSTIFIED_HAND_END = "UNJUSTIFIED_HAND_END"
    SCORE_MISMATCH = "SCORE_MISMATCH"
    WINNERS_MISMATCH = "WINNERS_MISMATCH"
    HAND_NOT_ENDED = "HAND_NOT_ENDED"
    MATCH_NOT_OVER = "MATCH_NOT_OVER"
    FINAL_MISMATCH = "FINAL_MISMATCH"


class FlowRefusal(RacingDemonError):
    """An event the match flow does not allow here, and why."""

    def __init__(
        self,
        code: FlowCode,
        message: str,
        *,
        seat: int | None = None,
        rule: str | None = None,
        expected: object = None,
        found: object = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.seat = seat
        self.rule = rule
        self.expected = None if expected is None else str(expected)
        self.found = None if found is None else str(found)


# -- the flow ------------------------------------------------------------------------


class MatchFlow(NamedTuple):
    """The match after some events: its hands so far and the hand in play. Start one with
    ``MatchFlow.begin``; every event gives a new one (``play``)."""

    rules: Rules
    dealer: Dealer  # deals every hand: a match's seed, or a tournament table's plan
    match: Match
    state: State | None = None  # the current or last hand; None before the first deal
    hand_open: bool = False  # between a hand_start and its hand_end
    stall_due: StallOutcome | None = None  # a table records a due stall at once
    finished: bool = False  # the match's end has been recorded

    @classmethod
    def begin(cls, rules: Rules, dealer: Dealer, seats: int) -> MatchFlow:
        return cls(rules=rules, dealer=dealer, match=Match(rules, seats))

    @property
    def seats(self) -> int:
        return self.match.players

    # -- judging and applying an event ------------------------------------------------

    def play(
        self, event: Event, t_ms: int, parse_move: Callable[[str], Move] = Move.parse
    ) -> MatchFlow:
        """The match after ``event`` at ``t_ms``; FlowRefusal if the flow does not allow it.
        ``parse_move`` reads a submission's move text (a verification's ``MoveTexts``)."""
        if self.stall_due is not None:
            self._check_nothing_skipped(event)
        if isinstance(event, Submission):  # most records: tested first
            return self._after(self._submission(self._hand_in_play(event), event, t_ms, parse_move))
        if isinstance(event, HandStart):
            return self._start_hand(event, t_ms)
        if isinstance(event, MatchEnd):
            self._check_match_end(event)
            return MatchFlow(
                rules=self.rules,
                dealer=self.dealer,
                match=self.match,
                state=self.state,
                finished=True,
            )
        state = advance_clock(self._hand_in_play(event), t_ms)
        if isinstance(event, Stall):
            return self._after(self._stall(state))
        return self._end_hand(state, event)

    def _check_nothing_skipped(self, event: Event) -> None:
        """A stall is due: the record must be that stall or the blocked end."""
        # A stall or a blocked end is judged on its own (UNJUSTIFIED_STALL or
        # UNJUSTIFIED_HAND_END when it is not the one due); anything else skipped it.
        blocked_end = isinstance(event, HandEnd) and event.reason is EndReason.BLOCKED
        if not isinstance(event, Stall) and not blocked_end:
            expected = "stall" if self.stall_due is StallOutcome.SHIFT else "hand_end (blocked)"
            raise FlowRefusal(
                FlowCode.MISSING_STALL,
                "a stall was due after the previous record, but the log goes on with a "
                f"{event.kind}",
                expected=expected,
                found=str(event.kind),
            )

    def _hand_in_play(self, event: Submission | Stall | HandEnd) -> State:
        state = self.state
        if state is None or not self.hand_open:
            raise FlowRefusal(FlowCode.HAND_OUT_OF_ORDER, f"a {event.kind} record outside a hand")
        if event.hand != state.hand:
            raise FlowRefusal(
                FlowCode.HAND_OUT_OF_ORDER,
                f"a {event.kind} record of another hand",
                expected=state.hand,
                found=event.hand,
            )
        return state

    def _after(self, state: State) -> MatchFlow:
        """The match with ``state`` as the hand in play, and the stall it makes due."""
        due = None
        if state.phase is PLAYING and stall_is_due(state):
            due = stall_outcome(state)
        return MatchFlow(
            rules=self.rules,
            dealer=self.dealer,
            match=self.match,
            state=state,
            hand_open=True,
            stall_due=due,
        )

    def _start_hand(self, event: HandStart, t_ms: int) -> MatchFlow:
        hand, match = event.hand, self.match
        if self.hand_open or match.over or hand != match.played + 1:
            why = (
                f"hand {match.played} has not ended"
                if self.hand_open
                else f"the match was over after hand {match.played}"
                if match.over
                else "hands are numbered 1, 2, ..."
            )
            raise FlowRefusal(
                FlowCode.HAND_OUT_OF_ORDER,
                f"hand {hand} cannot start: {why}",
                expected=None if match.over or self.hand_open else match.played + 1,
                found=hand,
            )
        if len(event.packs) != match.players:
            raise FlowRefusal(
                FlowCode.PACK_MISMATCH,
                f"hand {hand}: one pack digest per seat",
                expected=match.players,
                found=len(event.packs),
            )
        packs: list[tuple[Card, ...]] = []
        for seat, recorded in enumerate(event.packs):
            pack = self.dealer.pack(hand, seat)
            derived = pack_digest(hand, seat, pack)
            if derived != recorded:
                raise FlowRefusal(
                    FlowCode.PACK_MISMATCH,
                    f"hand {hand}, seat {seat}: the pack is not the one the seed deals",
                    seat=seat,
                    expected=derived,
                    found=recorded,
                )
            packs.append(pack)
        flow = MatchFlow(
            rules=self.rules,
            dealer=self.dealer,
            match=match,
            state=State.deal(self.rules, packs, hand, t_ms),
        )
        return flow._after(flow.state)  # type: ignore[arg-type]  # just dealt

    def _submission(
        self, hand: State, event: Submission, t_ms: int, parse_move: Callable[[str], Move]
    ) -> State:
        """The hand after ``event``, whose move the clock moves to ``t_ms`` with (play_at)."""
        try:
            move = parse_move(event.move)
        except ValueError as error:
            raise FlowRefusal(FlowCode.BAD_MOVE_TEXT, str(error)) from None
        if move.seat != event.seat:
            raise FlowRefusal(
                FlowCode.PLAYER_MISMATCH,
                "the move is not the record's player's",
                expected=event.seat,
                found=move.seat,
            )
        if move.seat >= hand.players:
            raise FlowRefusal(
                FlowCode.PLAYER_MISMATCH,
                f"there is no seat {move.seat}: the table submits only its seats' moves",
                expected=f"a seat below {hand.players}",
                found=move.seat,
            )
        state, violation = play_at(hand, move, t_ms)
        if event.kind is RecordKind.BOUNCE:
            if violation is None:
                raise FlowRefusal(FlowCode.WRONGLY_BOUNCED, "the table refused a legal move")
            if violation.code != event.reason:
                raise FlowRefusal(
                    FlowCode.BOUNCE_REASON_MISMATCH,
                    "the move was refused for another reason: "
                    + violation.message.removeprefix(f"{move}: "),
                    rule=violation.code,
                    expected=violation.code,
                    found=event.reason,
                )
            return state
        if violation is not None:
            raise FlowRefusal(
                FlowCode.ILLEGAL_MOVE,
                violation.message.removeprefix(f"{move}: "),  # the finding names the move
                rule=violation.code,
                expected=violation.expected,
                found=violation.found,
            )
        wanted = accepted_kind(hand, move)
        if event.kind is not wanted:
            raise FlowRefusal(
                FlowCode.KIND_MISMATCH,
                "an accepted move recorded as another kind",
                expected=wanted,
                found=event.kind,
            )
        return state

    def _stall(self, state: State) -> State:
        violation = check_stall(state)
        if violation is not None:
            raise FlowRefusal(FlowCode.UNJUSTIFIED_STALL, violation.message, rule=violation.code)
        if stall_outcome(state) is StallOutcome.BLOCKED:
            raise FlowRefusal(
                FlowCode.UNJUSTIFIED_STALL,
                "the stall cycle is complete: the hand is blocked, which a hand_end records",
                expected=RecordKind.HAND_END,
                found=RecordKind.STALL,
            )
        return apply_stall(state)

    def _end_hand(self, state: State, event: HandEnd) -> MatchFlow:
        reason = event.reason
        if reason is EndReason.BLOCKED and state.phase is not Phase.ENDED:
            # A blocked end replaces the stall that found the cycle complete.
            violation = check_stall(state)
            if violation is not None:
                raise FlowRefusal(
                    FlowCode.UNJUSTIFIED_HAND_END,
                    violation.message,
                    rule=violation.code,
                    expected="no stall due",
                    found=reason,
                )
            if stall_outcome(state) is not StallOutcome.BLOCKED:
                raise FlowRefusal(
                    FlowCode.UNJUSTIFIED_HAND_END,
                    "a stall shift was due, not the blocked end: the cycle is not complete",
                    expected=RecordKind.STALL,
                    found=reason,
                )
            state = apply_stall(state)
        if state.phase is not Phase.ENDED or state.end_reason != reason:
            raise FlowRefusal(
                FlowCode.UNJUSTIFIED_HAND_END,
                "the hand did not end, or not for that reason",
                expected=state.end_reason or f"the hand still {state.phase}",
                found=reason,
            )
        scored = score_hand(state)
        if scored.scores != event.scores:
            raise FlowRefusal(
                FlowCode.SCORE_MISMATCH,
                f"hand {state.hand} does not score as recorded",
                expected=listed(scored.scores),
                found=listed(event.scores),
            )
        # The cards behind each hand's score would make memory grow with the match.
        match = self.match.record(scored.without_cards())
        return MatchFlow(rules=self.rules, dealer=self.dealer, match=match, state=state)

    def _check_match_end(self, event: MatchEnd) -> None:
        match = self.match
        if self.hand_open:
            raise FlowRefusal(
                FlowCode.HAND_NOT_ENDED,
                f"hand {match.played + 1} has no hand_end before the final record",
            )
        if not match.over:
            raise FlowRefusal(
                FlowCode.MATCH_NOT_OVER,
                "the profile's match rule does not end the match here",
                expected="another hand",
                found=RecordKind.FINAL,
            )
        end = self._match_end()
        if event.hands != end.hands:
            raise FlowRefusal(
                FlowCode.SCORE_MISMATCH,
                "the final record's hand scores are not the hands'",
                expected=" / ".join(map(listed, end.hands)),
                found=" / ".join(map(listed, event.hands)),
            )
        if event.totals != end.totals:
            raise FlowRefusal(
                FlowCode.SCORE_MISMATCH,
                "the final record's totals are not the sums of the hands",
                expected=listed(end.totals),
                found=listed(event.totals),
            )
        if event.winners != end.winners:
            raise FlowRefusal(
                FlowCode.WINNERS_MISMATCH,
                "the final record names other winners than the match rule",
                expected=listed(end.winners) or "none",
                found=listed(event.winners) or "none",
            )
        if event.reason != end.reason:
            raise FlowRefusal(
                FlowCode.FINAL_MISMATCH,
                "the final record gives another reason than the last hand's end",
                expected=end.reason,
                found=event.reason,
            )

    # -- what the table does -------------------------------------------------------------

    def due(self) -> HandStart | Stall | HandEnd | MatchEnd | None:
        """The event the table must record next by itself, or None while it waits for seats."""
        if self.finished:
            return None
        if not self.hand_open:
            if self.match.over:
                return self._match_end()
            hand = self.match.played + 1
            packs = tuple(
                pack_digest(hand, seat, self.dealer.pack(hand, seat)) for seat in range(self.seats)
            )
            return HandStart(hand=hand, packs=packs)
        state = self.state
        assert state is not None  # a hand is open
        if self.stall_due is StallOutcome.SHIFT:
            return Stall(hand=state.hand)
        if self.stall_due is StallOutcome.BLOCKED:
            state = apply_stall(state)
        if state.phase is Phase.ENDED:
            scored = score_hand(state)
            return HandEnd(hand=state.hand, reason=scored.reason, scores=scored.scores)
        return None

    def deadline(self) -> int | None:
        """When the hand in play ends by itself if nothing happens first (its time rules)."""
        if not self.hand_open or self.state is None:
            return None
        deadline = next_deadline(self.state)
        return None if deadline is None else deadline[0]

    def at(self, t_ms: int) -> MatchFlow:
        """The match with the hand in play's clock at ``t_ms`` (a passed deadline ends it)."""
        if not self.hand_open or self.state is None:
            return self
        state = advance_clock(self.state, t_ms)
        return MatchFlow(
            rules=self.rules,
            dealer=self.dealer,
            match=self.match,
            state=state,
            hand_open=True,
            stall_due=self.stall_due,
        )

    def submit(
        self, seat: int, n: int, move: Move, text: str, seen: Seen | None = None
    ) -> tuple[Submission, MatchFlow]:
        """What the table makes of a seat's submission ``text`` (parsed as ``move``, made
        having seen ``seen``) now: the event it records, accepted or bounced, and the match
        after it."""
        state = self.state
        assert state is not None and self.hand_open  # the table takes submissions in a hand
        kind, violation = judge_move(state, move)
        reason = None if violation is None else violation.code
        event = Submission(
            kind=kind, hand=state.hand, seat=seat, n=n, move=text, reason=reason, seen=seen
        )
        # A bounce changes nothing, but is judged as play() judges it: a stall may be due.
        return event, self._after(state if violation is not None else apply_move(state, move))

    def _match_end(self) -> MatchEnd:
        match = self.match
        return MatchEnd(
            reason=final_reason(match),
            hands=tuple(hand.scores for hand in match.hands),
            totals=match.totals,
            winners=match.winners,
        )


def judge_move(state: State, move: Move) -> tuple[RecordKind, Violation | None]:
    """How a table records ``move`` now: bounced with the engine's refusal, or accepted as
    its kind (a card that ties a foundation level is a tie)."""
    violation = check_move(state, move)
    if violation is not None:
        return RecordKind.BOUNCE, violation
    return accepted_kind(state, move), None


def accepted_kind(state: State, move: Move) -> RecordKind:
    """The kind of record a legal ``move`` makes: a card that ties a foundation level is a
    tie. Only the foundations decide it, and the clock never changes them."""
    return RecordKind.TIE if is_tie(state, move) else _ACCEPTED_KIND[move.kind]


def final_reason(match: Match) -> FinalReason:
    """Why a match that is over ended: its last hand resigned or abandoned, else complete."""
    if match.abandoned:
        return FinalReason.ABANDONED
    if match.resigned is not None:
        return FinalReason.RESIGNED
    return FinalReason.COMPLETE


def listed(values: Iterable[object]) -> str:
    """``1, 2, 3``: how refusals name seats and scores."""
    return ", ".join(map(str, values))
