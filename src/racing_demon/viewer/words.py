"""Every record of a log in words, as a viewer page lists it (docs/viewer.md): a sentence
for each record, the records it refers to, and the piles a move names.

A record replayed is told with the table before and after it, so its sentence can name what
it did to the table; a record past where replay stops is told from its own body.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from racing_demon.game.cards import KING, Card
from racing_demon.game.engine import ViolationCode
from racing_demon.game.flow import FinalReason, HandEnd, HandStart, RecordKind, Stall, Submission
from racing_demon.game.moves import Move, MoveKind, Place, Zone
from racing_demon.game.state import EndReason, Foundation, State
from racing_demon.log.records import Final, Genesis, Lag, Pause, PauseCause, Record
from racing_demon.printing import printable

_ENDED_BY_A_SEAT = frozenset({EndReason.CALL, EndReason.RESIGNED, EndReason.DEMON_EMPTY})
_COUNT_WORDS = ("no", "one", "two", "three", "four", "five", "six")


@dataclass(frozen=True, slots=True)
class Words:
    text: str
    links: tuple[int, ...] = ()
    piles: tuple[str, ...] = ()  # the pile ids a move names: its source, then its target


def move_piles(move: Move, after: State | None) -> tuple[str, ...]:
    """The piles ``move`` names, as frame pile ids: where its cards leave, then where they
    go (a new foundation once it exists, in ``after``); a turn or a recycle names the stock
    and the waste."""
    seat = f"s{move.seat}"
    if move.kind is MoveKind.TURN:
        return (f"{seat}.stock", f"{seat}.waste")
    if move.kind is MoveKind.RECYCLE:
        return (f"{seat}.waste", f"{seat}.stock")
    piles = []
    for place in (move.source, move.target):
        if place is None:
            continue
        if place.zone in (Zone.WORK, Zone.UNDER):
            piles.append(f"{seat}.w{place.index + 1}")
        elif place.zone is Zone.FOUNDATION:
            piles.append(f"f{place.index + 1}")
        elif place.zone is Zone.NEW_FOUNDATION:
            if after is not None and after.foundations:
                piles.append(f"f{len(after.foundations)}")
        else:
            piles.append(f"{seat}.{place.zone.name.lower()}")
    return tuple(piles)


@dataclass
class Teller:
    """Tells records in words. With the table before and after a record (a replayed one)
    it also names what the record did to it: the foundation's first record, the record a
    bounced card lost its race to, the card a tie joined."""

    names: tuple[str, ...] = ()
    # By hand, the record and seat of the call, resignation or emptied demon that ends it,
    # for its hand_end to name: records are told in the log's order.
    enders: dict[int, tuple[int, int]] = field(default_factory=dict)

    def name(self, seat: int) -> str:
        if 0 <= seat < len(self.names):
            return printable(self.names[seat])
        return f"seat {seat}"

    def tell(
        self,
        record: Record,
        before: State | None = None,
        after: State | None = None,
        placed: Mapping[Card, int] | None = None,
    ) -> Words:
        payload = record.payload
        if isinstance(payload, Genesis):
            seats = ", ".join(
                f"{printable(entry.name)} ({printable(entry.back)} back)"
                for entry in payload.players
            )
            rules = payload.rules.get("name")
            under = f" under the rules {printable(rules)}" if isinstance(rules, str) else ""
            tag = payload.tournament
            at = (
                ""
                if tag is None
                else f" at table {tag.table} of {tag.tables} of the tournament "
                f"{printable(tag.name)} (every hand deals the plan's packs)"
            )
            return Words(f"Game {record.game} opens{at}{under}, with {seats}.")
        if isinstance(payload, HandStart):
            return Words(f"Hand {payload.hand} is dealt: every seat gets its shuffled pack.")
        if isinstance(payload, Submission):
            if payload.kind in (RecordKind.CALL, RecordKind.RESIGN):
                self.enders[payload.hand] = (record.seq, payload.seat)
            return self._submission(record.seq, payload, before, after, placed or {})
        if isinstance(payload, Stall):
            return Words(
                "Stall shift: every seat turns its waste over onto its stock and moves the "
                "top card to the bottom."
            )
        if isinstance(payload, HandEnd):
            return self._hand_end(payload)
        if isinstance(payload, Pause):
            why = "a planned stop" if payload.cause is PauseCause.PLANNED else "a crash"
            return Words(
                f"The table resumes after {why}, down {payload.down_ms / 1000:.1f} s by the "
                "server's word; its clock did not run meanwhile."
            )
        if isinstance(payload, Lag):
            return Words(f"Round trips the server measured: {self._round_trips(payload)}.")
        return Words(self._final(payload))

    def _round_trips(self, lag: Lag) -> str:
        parts = []
        for seat, samples in enumerate(lag.rtt_ms):
            if samples:
                middle = round(statistics.median(samples))
                many = f"median of {len(samples)}" if len(samples) > 1 else "one sample"
                parts.append(f"{self.name(seat)} {middle} ms ({many})")
            else:
                parts.append(f"{self.name(seat)} none")
        return ", ".join(parts)

    def _submission(
        self,
        seq: int,
        submission: Submission,
        before: State | None,
        after: State | None,
        placed: Mapping[Card, int],
    ) -> Words:
        who = self.name(submission.seat)
        try:
            move = Move.parse(submission.move)
        except ValueError:
            return Words(f"{who} sends a move that cannot be read: “{printable(submission.move)}”.")
        words = self._move_words(seq, who, submission, move, before, after, placed)
        bounced = submission.kind is RecordKind.BOUNCE
        return replace(words, piles=move_piles(move, None if bounced else after))

    def _move_words(
        self,
        seq: int,
        who: str,
        submission: Submission,
        move: Move,
        before: State | None,
        after: State | None,
        placed: Mapping[Card, int],
    ) -> Words:
        kind = submission.kind
        if kind is RecordKind.BOUNCE:
            return self._bounce(who, submission, move, before, placed)
        if move.kind is MoveKind.TURN:
            cards = " ".join(card.display() for card in move.cards)
            return Words(
                f"{who} turns {_count(len(move.cards), 'card')} from the stock onto the waste: "
                f"{cards} ({move.cards[-1].display()} on top)."
            )
        if move.kind is MoveKind.RECYCLE:
            return Words(f"{who} turns the waste over as a new stock.")
        if move.kind is MoveKind.CALL:
            return Words(f"{who} calls, with an empty demon: the hand is ending.")
        if move.kind is MoveKind.AGREE:
            return Words(f"{who} agrees to a stall shift.")
        if move.kind is MoveKind.RESIGN:
            return Words(f"{who} resigns: the match ends against {who}.")
        return self._play(seq, who, move, kind is RecordKind.TIE, before, after, placed)

    def _play(
        self,
        seq: int,
        who: str,
        move: Move,
        tie: bool,
        before: State | None,
        after: State | None,
        placed: Mapping[Card, int],
    ) -> Words:
        assert move.source is not None and move.target is not None  # a card move
        cards = " ".join(card.display() for card in move.cards)
        source = _source_words(move.source)
        target = move.target
        card = move.cards[0]
        if target.zone is Zone.WORK:
            return Words(f"{who} moves {cards} {source} onto work pile {target.index + 1}.")
        if target.zone is Zone.UNDER:
            return Words(f"{who} slides {cards} {source} under work pile {target.index + 1}.")
        links: list[int] = []
        if target.zone is Zone.NEW_FOUNDATION:
            named = "" if after is None else f" (f{_foundation_of(after, card) + 1})"
            suit = card.suit.symbol
            text = f"{who} plays {cards} {source} to start a new {suit} foundation{named}"
        else:
            number = target.index + 1
            foundation = _foundation_at(before, target.index)
            started = None if foundation is None else placed.get(foundation.levels[0][0])
            text = f"{who} plays {cards} {source} onto the {card.suit.symbol} foundation f{number}"
            if started is not None:
                text += f" started at record {started}"
                links.append(started)
            if tie and foundation is not None:
                tied = foundation.levels[-1]
                others = " and ".join(
                    f"{self.name(other.owner)}'s {other.display()}" for other in tied
                )
                text += f": it ties {others}"
                won = placed.get(tied[0])
                if won is not None:
                    text += f" (record {won})"
                    links.append(won)
        if after is not None:
            landed = after.foundations[_foundation_of(after, card)]
            if landed.rank == KING and card.rank == KING:
                text += f"; the {card.suit.symbol} foundation is complete and set aside"
            seat = after.seats[move.seat]
            if move.source.zone is Zone.DEMON and not seat.demon:
                text += f"; {who}'s demon is empty"
                if after.end_reason is EndReason.DEMON_EMPTY:
                    text += ": the hand ends"
                    self.enders[after.hand] = (seq, move.seat)
        return Words(text + ".", tuple(links))

    def _bounce(
        self,
        who: str,
        submission: Submission,
        move: Move,
        before: State | None,
        placed: Mapping[Card, int],
    ) -> Words:
        reason = printable(submission.reason or "?")
        if move.kind is not MoveKind.PLAY:
            what = {
                MoveKind.TURN: "turn of the stock",
                MoveKind.RECYCLE: "recycling of the waste",
                MoveKind.CALL: "call",
                MoveKind.AGREE: "agreement to a stall shift",
                MoveKind.RESIGN: "resignation",
            }[move.kind]
            return Words(f"{who}'s {what} bounced ({reason}).")
        assert move.source is not None and move.target is not None  # a card move
        cards = " ".join(card.display() for card in move.cards)
        target = move.target
        where = {
            Zone.WORK: f"onto work pile {target.index + 1}",
            Zone.UNDER: f"under work pile {target.index + 1}",
            Zone.FOUNDATION: f"to foundation f{target.index + 1}",
            Zone.NEW_FOUNDATION: "to a new foundation",
        }[target.zone]
        text = f"{who}'s {cards} {_source_words(move.source)} {where} bounced ({reason})"
        winner = None
        # FOUNDATION_TAKEN is the only code for a lost race (docs/rules.md): the winner is
        # the record that placed the card now at the bounced card's level.
        if submission.reason == ViolationCode.FOUNDATION_TAKEN and target.zone is Zone.FOUNDATION:
            foundation = _foundation_at(before, target.index)
            rank = move.cards[0].rank
            if foundation is not None and rank <= foundation.rank:
                winner = placed.get(foundation.levels[rank - 1][0])
        if winner is None:
            return Words(text + ".")
        return Words(f"{text}: record {winner} got there first.", (winner,))

    def _hand_end(self, end: HandEnd) -> Words:
        ender = self.enders.get(end.hand)
        by = "" if ender is None else f"{self.name(ender[1])} "
        at = "" if ender is None else f" at record {ender[0]}"
        why = {
            EndReason.CALL: f"{by or 'a seat '}called{at}",
            EndReason.DEMON_EMPTY: f"{by or 'a seat '}emptied the demon{at}",
            EndReason.BLOCKED: "it is blocked: the stall cycle came round with no play",
            EndReason.NO_CENTRE: "no card went to the centre for too long",
            EndReason.ABANDONED: "the table was silent for too long: the match is abandoned",
            EndReason.RESIGNED: f"{by or 'a seat '}resigned{at}",
        }[end.reason]
        links = (ender[0],) if ender is not None and end.reason in _ENDED_BY_A_SEAT else ()
        scores = self._by_seat(end.scores)
        return Words(f"Hand {end.hand} ends because {why}. Scores: {scores}.", links)

    def _final(self, final: Final) -> str:
        end = final.end
        winners = [self.name(seat) for seat in end.winners]
        if not winners:
            result = "no winner"
        elif len(winners) == 1:
            result = f"{winners[0]} wins"
        else:
            result = f"{' and '.join(winners)} share the victory"
        how = {
            FinalReason.COMPLETE: "is over",
            FinalReason.RESIGNED: "ends by resignation",
            FinalReason.ABANDONED: "is abandoned",
        }[end.reason]
        return (
            f"The match {how} after {_count(len(end.hands), 'hand')}: totals "
            f"{self._by_seat(end.totals)}; {result}. The dealer's secret is revealed."
        )

    def _by_seat(self, values: Sequence[int]) -> str:
        return ", ".join(f"{self.name(seat)} {value}" for seat, value in enumerate(values))


def _source_words(source: Place) -> str:
    if source.zone is Zone.DEMON:
        return "from the demon"
    if source.zone is Zone.WASTE:
        return "from the waste"
    return f"from work pile {source.index + 1}"


def _count(number: int, noun: str) -> str:
    word = _COUNT_WORDS[number] if number < len(_COUNT_WORDS) else str(number)
    return f"{word} {noun}" if number == 1 else f"{word} {noun}s"


def _foundation_at(state: State | None, index: int) -> Foundation | None:
    if state is None or not 0 <= index < len(state.foundations):
        return None
    return state.foundations[index]


def _foundation_of(state: State, card: Card) -> int:
    return next(
        index
        for index, foundation in enumerate(state.foundations)
        if any(card in level for level in foundation.levels)
    )
