"""Computer players: a strategy that says what to do, and a clock that says when.

The two are kept apart (docs/simulation.md). ``choose_move(state, seat, bot, choose)`` is a
pure function of the position the bot sees, its profile and a stream of choices: it returns
one legal move or ``None`` (nothing worth doing now). ``BotProfile.pause_ms`` says how long
the bot takes before it looks at the table again. Neither touches a table: the simulator
(``racing_demon.sim.simulate``) sends the moves through ``Table.submit`` like any client.

The strategy follows the peer2peer and Nertz rules' advice, in this order of preference:

1. call when the demon pile is empty, unless the bot holds off while it still gains
   (peer2peer rules: "knowing when to hold off is most of the skill");
2. grab foundation plays first (Nertz rules): from the demon, then the waste, then a work
   pile;
3. work hardest on the demon pile: its top onto (or under) a work pile, else into an empty
   one (Nertz rules: an empty work pile "is the best place to dump a nertz card");
4. make room for the demon top by rearranging the work piles, if one move does it;
5. the waste top onto a work pile;
6. move a work tail that uncovers a card the centre wants;
7. turn the stock (or turn the waste over) until a whole pass since the last play;
8. after a whole pass with nothing found: turn on if the stock still holds a card that
   would play; otherwise the bot is stuck, and it agrees to a stall shift where the
   profile has agreement, or waits for the table.

Step 8's test is the engine's stuck test (``_after_a_pass`` says why), so a bot that can
still play always gets there, and a table of these bots never shifts for ever.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from racing_demon.game.cards import ACE, Card
from racing_demon.game.deal import uniform_below
from racing_demon.game.engine import is_tie, legal_moves
from racing_demon.game.moves import Move, MoveKind, Zone
from racing_demon.game.stall import cycle_tops
from racing_demon.game.state import Phase, Pile, Seat, State, builds_down

HOLD_OFF_MARGIN: Final = 3
"""A bot that holds off calling does so only while every other seat still has more than this
many demon cards: the Nertz rules' "if a computer is down to two or three nertz cards ... the
round is about to end", and a call locks in their penalty before they can shed it."""

_CENTRE: Final = frozenset({Zone.FOUNDATION, Zone.NEW_FOUNDATION})
_WORK_TARGETS: Final = frozenset({Zone.WORK, Zone.UNDER})
_STOCK_KINDS: Final = frozenset({MoveKind.TURN, MoveKind.RECYCLE})


class Chooser(Protocol):
    """Picks one of several equally good moves (a seeded stream in a simulation)."""

    def __call__(self, options: Sequence[Move], /) -> Move: ...


def stream_chooser(words: Iterator[int]) -> Chooser:
    """Unbiased choices drawn from a stream of 32-bit words (``deal.uniform_below``)."""

    def choose(options: Sequence[Move], /) -> Move:
        return options[uniform_below(len(options), words)] if len(options) > 1 else options[0]

    return choose


@dataclass(frozen=True, slots=True, kw_only=True)
class BotProfile:
    """How fast a bot acts, and whether it holds off calling.

    After a card move, call or agreement the bot pauses ``play_ms`` on average before it
    looks again, after a stock turn or recycle ``turn_ms`` (Nertz rules: the hard bot turns
    its stock faster than it plays cards), and ``play_ms`` after finding nothing to do.
    Every pause is uniform within ``jitter_percent`` of its mean.
    """

    name: str
    play_ms: int
    turn_ms: int
    jitter_percent: int
    hold_off: bool

    def __post_init__(self) -> None:
        if not 0 <= self.jitter_percent < 100:
            raise ValueError(f"jitter of {self.jitter_percent}% is outside 0..99")
        if min(self.play_ms, self.turn_ms) < 1:
            raise ValueError("a bot's pauses are at least 1 ms")

    def mean_ms(self, move: Move | None) -> int:
        """The mean pause after deciding ``move`` (``None``: nothing to do)."""
        return self.turn_ms if move is not None and move.kind in _STOCK_KINDS else self.play_ms

    def pause_ms(self, move: Move | None, words: Iterator[int]) -> int:
        """The pause after deciding ``move``, drawn from ``words``."""
        mean = self.mean_ms(move)
        spread = mean * self.jitter_percent // 100
        return mean - spread + (uniform_below(2 * spread + 1, words) if spread else 0)


# Nertz rules: "On Easy they make a move about every two seconds, on Normal a little faster,
# and on Hard roughly every 0.7 seconds, turning their stock faster than they play cards."
EASY: Final = BotProfile(name="easy", play_ms=2000, turn_ms=2000, jitter_percent=25, hold_off=False)
NORMAL: Final = BotProfile(
    name="normal", play_ms=1500, turn_ms=1300, jitter_percent=25, hold_off=True
)
HARD: Final = BotProfile(name="hard", play_ms=850, turn_ms=550, jitter_percent=25, hold_off=True)
BOTS: Final = {bot.name: bot for bot in (EASY, NORMAL, HARD)}


def choose_move(state: State, seat: int, bot: BotProfile, choose: Chooser) -> Move | None:
    """The bot's next move in ``state``, or ``None`` when it has nothing worth doing.

    Only a hand in play is acted on: after a call no new move starts, and nothing is sent
    before the countdown ends. Equally good moves are picked with ``choose``.
    """
    if state.phase is not Phase.PLAYING or state.clock_ms < state.play_start_ms:
        return None
    moves = legal_moves(state, seat)
    view = _View(state, seat, moves)
    for step in (
        _call if not bot.hold_off else _call_unless_gaining,
        _to_centre,
        _demon_out,
        _room_for_demon,
        _waste_out,
        _uncover,
        _turn,
        _after_a_pass,
    ):
        options = step(view)
        if options:
            return choose(options)
    return None


@dataclass(frozen=True, slots=True)
class _View:
    state: State
    seat: int
    moves: list[Move]

    @property
    def me(self) -> Seat:
        return self.state.seats[self.seat]

    def kind(self, kind: MoveKind) -> list[Move]:
        return [move for move in self.moves if move.kind is kind]

    def plays(self, source: Zone, targets: frozenset[Zone]) -> list[Move]:
        """Card moves from ``source`` to one of ``targets``; a tie is never aimed at (the
        bot's card would land after the instant the tie rule allows)."""
        return [
            move
            for move in self.moves
            if move.source is not None
            and move.target is not None
            and move.source.zone is source
            and move.target.zone in targets
            and not (move.target.zone is Zone.FOUNDATION and is_tie(self.state, move))
        ]

    def wanted(self) -> set[tuple[int, int]]:
        """(suit, rank) of every card some foundation takes next."""
        return {(f.suit, f.rank + 1) for f in self.state.foundations if not f.complete}


def _call(view: _View) -> list[Move]:
    return view.kind(MoveKind.CALL)


def _call_unless_gaining(view: _View) -> list[Move]:
    """Hold off while a card can still go to the centre and nobody is about to go out."""
    others = (seat for number, seat in enumerate(view.state.seats) if number != view.seat)
    gaining = bool(_to_centre(view)) and all(len(seat.demon) > HOLD_OFF_MARGIN for seat in others)
    return [] if gaining else _call(view)


def _to_centre(view: _View) -> list[Move]:
    """Foundation plays, the demon's first (worth 3), then the waste's, then the work piles'."""
    for source in (Zone.DEMON, Zone.WASTE, Zone.WORK):
        options = view.plays(source, _CENTRE)
        if options:
            return options
    return []


def _onto_then_into(options: list[Move], seat: Seat) -> list[Move]:
    """Onto or under a built pile first: an empty pile is kept while another place will do."""
    built = [m for m in options if m.target is not None and seat.work[m.target.index]]
    return built or options


def _demon_out(view: _View) -> list[Move]:
    return _onto_then_into(view.plays(Zone.DEMON, _WORK_TARGETS), view.me)


def _room_for_demon(view: _View) -> list[Move]:
    """One rearrangement after which the demon top has a place (an emptied pile, or a card
    it builds on uncovered)."""
    me = view.me
    if not me.demon:
        return []
    slide = view.state.rules.slide_under
    return [
        move
        for move in view.plays(Zone.WORK, _WORK_TARGETS)
        if _fits(me.demon[-1], _rearranged(me.work, move), slide)
    ]


def _waste_out(view: _View) -> list[Move]:
    return _onto_then_into(view.plays(Zone.WASTE, _WORK_TARGETS), view.me)


def _uncover(view: _View) -> list[Move]:
    """A work tail moved so that the card under it can go to the centre next."""
    wanted = view.wanted()
    options = []
    for move in view.plays(Zone.WORK, _WORK_TARGETS):
        assert move.source is not None
        pile = view.me.work[move.source.index]
        if len(pile) > len(move.cards) and _to_centre_card(pile[-len(move.cards) - 1], wanted):
            options.append(move)
    return options


def _turn(view: _View) -> list[Move]:
    """Turn the stock until a whole pass has gone by since the last play (by anyone)."""
    if view.state.turned_since_play[view.seat] >= view.me.cycle_size:
        return []
    return [move for move in view.moves if move.kind in _STOCK_KINDS]


def _after_a_pass(view: _View) -> list[Move]:
    """After a whole pass: turn on if a card of the stock cycle would play now, else the bot
    is stuck: it agrees to a stall shift where the profile has agreement, or waits.

    No rearrangement of the work piles can help by now. A move of a whole pile (or a slide,
    whose reverse is one) would empty a pile for the demon card, which step 4 does first;
    every other work move puts a tail on the twin (same rank and colour) of the card it
    uncovers, so the exposed ranks and colours stay the same and only step 6's one-move
    uncovering can change what plays. So this is the engine's stuck test
    (``stall.progress_witness``), the tests check that it is, and a table of these bots
    never shifts for ever.
    """
    state, me = view.state, view.me
    wanted = view.wanted()
    slide = state.rules.slide_under
    for card in cycle_tops(me, state.rules.turn_count):
        if _to_centre_card(card, wanted) or _fits(card, me.work, slide):
            return [move for move in view.moves if move.kind in _STOCK_KINDS]
    return view.kind(MoveKind.AGREE)


def _rearranged(work: tuple[Pile, ...], move: Move) -> tuple[Pile, ...]:
    """The work piles after a legal work-to-work (or under) move."""
    source, target = move.source, move.target
    assert source is not None and target is not None
    piles = list(work)
    piles[source.index] = piles[source.index][: -len(move.cards)]
    if target.zone is Zone.UNDER:
        piles[target.index] = move.cards + piles[target.index]
    else:
        piles[target.index] = piles[target.index] + move.cards
    return tuple(piles)


def _fits(card: Card, work: tuple[Pile, ...], slide: bool) -> bool:
    """Whether ``card`` can go into an empty pile, onto one, or (``slide``) under one."""
    return any(
        not pile or builds_down(pile[-1], card) or (slide and builds_down(card, pile[0]))
        for pile in work
    )


def _to_centre_card(card: Card, wanted: set[tuple[int, int]]) -> bool:
    return card.rank == ACE or (card.suit, card.rank) in wanted
