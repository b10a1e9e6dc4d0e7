"""The stuck search and the table-wide stall: who can still play, and when a stall is due.

* ``progress_witness(state, seat)`` says how a seat could still play, or ``None`` when it
  is stuck (docs/rules.md, "Stuck"), searching at most ``STUCK_SEARCH_CAP`` arrangements
  of its work piles;
* ``check_stall(state)`` returns ``None`` when a stall shift (or, after a full cycle, the
  blocked end) is due now, else the ``Violation`` that says why not (``stall_is_due``
  answers the same without it);
* ``stall_outcome`` and ``apply_stall`` say what a due stall does and do it.

A replay asks after every record whether a stall is due, and a record changes one seat
and perhaps the centre, so each seat's search and last answer are kept in this module's
cache (``SEARCHES``), by the seat's identity, and the search is taken on only as far as a
question needs. An entry lives exactly as long as its seat. A kept answer holds while the
seat does not move and the centre takes or refuses each card the answer read as before,
so after a record mostly the seat that moved is searched, and only if no seat before it
can play.
``racing_demon.game.stuck`` writes the search's definition out plainly, from scratch; the
tests hold this one to it. Like the engine, this module is pure apart from that cache.
"""

from __future__ import annotations

import enum
import threading
import weakref
from collections import deque
from collections.abc import Iterator, Sequence, Set
from dataclasses import replace
from typing import Final, NamedTuple

from racing_demon.game.cards import ACE, KING, Card, canonical_pack
from racing_demon.game.engine import Violation, ViolationCode, replaced_at, why_closed
from racing_demon.game.rules import FULL_PASS, Blocked, Rules, StallTrigger
from racing_demon.game.state import EndReason, Foundation, Phase, Seat, State


class StallOutcome(enum.StrEnum):
    SHIFT = "shift"
    BLOCKED = "blocked"


# -- stuck -----------------------------------------------------------------------------


def progress_witness(state: State, seat: int) -> str | None:
    """How ``seat`` could still play, or ``None`` when the seat is stuck.

    A seat is stuck when no sequence of its own non-scoring moves (turning and
    recycling the stock, rearranging work piles) reaches a position where it
    could make a play: send a card to a foundation, or move its demon top or a
    waste card onto, into or under a work pile (docs/rules.md, "Stuck"). Of the
    work-pile arrangements, breadth first, the search examines the first
    ``STUCK_SEARCH_CAP`` only: beyond them a seat is stuck by definition.
    ``racing_demon.game.stuck`` writes that definition out plainly, from scratch; this
    search, kept in ``SEARCHES``, must give its answers (the tests compare the two).
    """
    return _witness(state.seats[seat], state.rules, SEARCHES.centre_keys(state.foundations))


def is_stuck(state: State, seat: int) -> bool:
    return progress_witness(state, seat) is None


def table_is_stuck(state: State) -> bool:
    rules, keys = state.rules, SEARCHES.centre_keys(state.foundations)
    return all(_witness(seat, rules, keys) is None for seat in state.seats)


def cycle_tops(seat: Seat, turn_count: int) -> list[Card]:
    """Every card that becomes the waste top during a full pass through the stock.

    A pass turns from the current position by ``turn_count`` to the end, recycles, and
    turns from the start until it meets a position it has been at: the one it began at
    if that is a multiple of ``turn_count``, else the end.
    """
    order = seat.waste + tuple(reversed(seat.stock))  # the order cards are turned
    if not order:
        return []
    step, position = turn_count, len(seat.waste)
    if not position:
        return [*order[step - 1 : -1 : step], order[-1]]
    again = order[step - 1 : position - 1 if position % step == 0 else -1 : step]
    return [*order[position - 1 : -1 : step], order[-1], *again]


# The witness of a seat is worked out in two parts. What its own moves bring within reach
# depends on the seat and two rules only, so it is kept for the seat (SEARCHES), and a
# seat that did not move is not searched again (the arrangements of its work piles depend
# on the piles and slide-under only, and are shared with any seat that holds the same);
# what the centre takes is asked afresh when it takes or refuses a card the last answer
# read otherwise. Cards there are named by Card.index, which fixes the rank, colour and
# face, all that the search asks and the witness names.

_Indexed = tuple[tuple[int, ...], ...]  # work piles, each card as its index

_PACK = canonical_pack(0)
_FACE = tuple(card.face for card in _PACK)
_ACES = frozenset(card.index for card in _PACK if card.rank == ACE)
# ``c`` goes onto ``t`` when _FIT[c] == _ONTO[t], and under ``h`` when _FIT[c] == _UNDER[h]:
# builds_down's one rank lower and opposite colour, as one integer.
_FIT = tuple(2 * card.rank + card.is_red for card in _PACK)
_ONTO = tuple(2 * (card.rank - 1) + (not card.is_red) for card in _PACK)
_UNDER = tuple(2 * (card.rank + 1) + (not card.is_red) for card in _PACK)


# The most arrangements of a seat's work piles the stuck search examines (docs/rules.md,
# "Stuck"): a seat whose first STUCK_SEARCH_CAP arrangements, breadth first, show no play is
# stuck. Games find their play by the 10th and never meet more than 64; a crafted seat has
# 475,136, over ten seconds of search, and 256 cost a few milliseconds (bench/stuck_bench.py).
STUCK_SEARCH_CAP: Final = 256


# The most work-pile searches kept for seats to share: a seat's piles come back when it
# turns its stock or plays from its waste, a few records later at most.
SHARED_PILES: Final = 64


class _Piles:
    """The arrangements of one set of work piles, breadth first from the piles in the
    order a seat holds them, as far as any seat has needed them: each one's tops and,
    with slide-under, its bottom cards. A seat that turned its stock or played from its
    waste holds the piles it held before, so its new search starts where the last one
    stopped (``SeatSearches.piles``). Arrangements are only added, one at a time under a
    lock, so the first ``n`` are the same for every seat that reads them."""

    __slots__ = ("_lock", "_more", "_slide_under", "exposed", "heads")

    def __init__(self, first: _Indexed, slide_under: bool) -> None:
        self.exposed: list[tuple[int, ...]] = []
        self.heads: list[tuple[int, ...]] = []
        self._slide_under = slide_under
        self._more: Iterator[_Indexed] | None = _arrangements(
            deque([first]), {tuple(sorted(first))}, slide_under
        )
        self._lock = threading.Lock()
        self._add(first)

    def _add(self, work: _Indexed) -> None:
        # The heads first: an arrangement is there for readers once its tops are.
        self.heads.append(tuple([pile[0] for pile in work if pile]) if self._slide_under else ())
        self.exposed.append(tuple([pile[-1] for pile in work if pile]))

    def meet(self, index: int) -> bool:
        """Whether arrangement ``index`` (0: the piles as held) exists, met now if not yet."""
        if index < len(self.exposed):
            return True
        with self._lock:
            while index >= len(self.exposed):
                work = None if self._more is None else next(self._more, None)
                if work is None:
                    self._more = None  # the search is over: what it held can go
                    return False
                self._add(work)
        return True


class _Reach(NamedTuple):
    """What a seat's own non-scoring moves bring within reach, with the breadth-first
    search of its work-pile arrangements taken as far as a question has needed it, and
    the last question's answer. (A named tuple: one is built for most questions a replay
    asks, and a frozen dataclass costs several times as much to build.)"""

    turn_count: int
    slide_under: bool
    movers: tuple[int, ...]  # the demon top, then every waste top of a pass
    # Every work-pile top of the arrangements met so far, first met first: a top met again
    # adds nothing, since the first sight of it already answers.
    tops: tuple[int, ...]
    fits: str | None  # the first mover onto a work pile: the search ends there
    # The arrangements of the seat's work piles, shared with every seat that holds the same
    # piles (SeatSearches.piles); None: the seat's own arrangement is not expanded yet (and
    # examined says whether it was examined).
    piles: _Piles | None
    over: bool  # no arrangement left to examine, or the cap or a place for a mover met
    # Arrangements examined so far: a resumed search stops at the cap where a search run
    # in one go would, so no answer depends on the order the questions came in.
    examined: int
    # Every card whose place in the centre's keys an answer reads: the movers and the tops.
    cards: frozenset[int]
    # The centre's keys of the last question (_centre_keys) and its answer: a seat that did
    # not move is asked again after every record, mostly of the same centre.
    asked: frozenset[int] | None
    answer: str | None


def _centre_keys(foundations: tuple[Foundation, ...]) -> frozenset[int]:
    """The index of every card the centre takes now: an ace, or the next card of a
    foundation not yet complete."""
    keys = set(_ACES)
    for foundation in foundations:
        rank = len(foundation.levels)
        if rank < KING:
            keys.add(foundation.suit * KING + rank)  # the index of rank + 1 of its suit
    return frozenset(keys)


class SeatSearches:
    """Each live seat's stuck search, by the seat's identity: a seat's cards never change,
    and a seat that did not move is the same object in the next state. An entry goes with
    its seat (a weak reference's callback), so the cache keeps no seat alive and no answer
    outlives the seat it answers; equal seats built apart are searched apart. Beside them,
    the arrangements of the last ``SHARED_PILES`` sets of work piles searched, by the
    piles' cards and the slide-under rule, which is all they depend on (two replays in
    one process may share them); and the centre's keys of the last foundations asked
    about, held by the foundations' identity: a replay asks of the same foundations
    until a card reaches the centre."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref[Seat], _Reach]] = {}
        self._centre: tuple[tuple[Foundation, ...], frozenset[int]] = ((), _centre_keys(()))
        self._piles: dict[tuple[_Indexed, bool], _Piles] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, seat: Seat) -> _Reach | None:
        entry = self._entries.get(id(seat))
        if entry is None or entry[0]() is not seat:
            return None
        return entry[1]

    def put(self, seat: Seat, reach: _Reach) -> None:
        key = id(seat)
        entries = self._entries
        entry = entries.get(key)
        if entry is not None and entry[0]() is seat:
            entries[key] = (entry[0], reach)
            return

        def forget(gone: weakref.ref[Seat]) -> None:
            kept = entries.get(key)
            if kept is not None and kept[0] is gone:  # not a later seat at the same address
                del entries[key]

        entries[key] = (weakref.ref(seat, forget), reach)

    def piles(self, first: _Indexed, slide_under: bool) -> _Piles:
        """The search of the work piles ``first``, shared by every seat that holds them:
        the last ``SHARED_PILES`` are kept, the oldest dropped first."""
        key = (first, slide_under)
        shared = self._piles.get(key)
        if shared is None:
            shared = self._piles[key] = _Piles(first, slide_under)
            if len(self._piles) > SHARED_PILES:
                self._piles.pop(next(iter(self._piles)), None)
        return shared

    def centre_keys(self, foundations: tuple[Foundation, ...]) -> frozenset[int]:
        """``_centre_keys(foundations)``, worked out once for the foundations in play."""
        centre = self._centre
        if centre[0] is foundations:
            return centre[1]
        keys = _centre_keys(foundations)
        self._centre = (foundations, keys)
        return keys


SEARCHES: Final = SeatSearches()


def _witness(seat: Seat, rules: Rules, keys: frozenset[int]) -> str | None:
    """``progress_witness`` when the centre takes ``keys``: a mover to the centre, else
    the first arrangement with a top for the centre or a place for a mover (the top
    first), else ``None``.

    The seat's last answer is given again if the centre takes or refuses each card it
    read as it did then: an answer reads, for each of the seat's movers and then each top
    met, whether the centre takes it (docs/rules.md, "Stuck"), and the search it took on
    stopped at the first the centre took. A card played to the centre changes two keys or
    so, and most seats' answers read neither.
    """
    reach = SEARCHES.get(seat)
    if not (
        reach is not None
        and reach.turn_count == rules.turn_count
        and reach.slide_under == rules.slide_under
    ):
        reach = _reach(seat, rules)
    else:
        asked = reach.asked
        if asked is keys:
            return reach.answer
        if asked is not None and (asked == keys or (asked ^ keys).isdisjoint(reach.cards)):
            SEARCHES.put(seat, reach._replace(asked=keys))
            return reach.answer
    # Plain loops: a generator costs more than the few cards each one looks at.
    for card in reach.movers:
        if card in keys:
            answer: str | None = f"{_FACE[card]} can go to a foundation"
            break
    else:
        for card in reach.tops:
            if card in keys:
                answer = f"{_FACE[card]} can reach a foundation from the work piles"
                break
        else:
            if reach.over:
                answer = reach.fits
            else:
                reach, answer = _search(seat, reach, keys)
    SEARCHES.put(seat, reach._replace(asked=keys, answer=answer))
    return answer


def _reach(seat: Seat, rules: Rules) -> _Reach:
    # The demon top, then the cycle tops. A card named twice (as only an unsound seat can
    # hold) answers at its first place, so a repeat needs no weeding out.
    movers = tuple([card.index for card in (*seat.demon[-1:], *cycle_tops(seat, rules.turn_count))])
    return _Reach(
        turn_count=rules.turn_count,
        slide_under=rules.slide_under,
        movers=movers,
        tops=(),
        fits=None,
        piles=None,
        over=False,
        examined=0,
        cards=frozenset(movers),
        asked=None,
        answer=None,
    )


def _search(seat: Seat, reach: _Reach, to_centre: Set[int]) -> tuple[_Reach, str | None]:
    """Take the search on to the next arrangement with a top for the centre or a place
    for a mover (the caller found no top met before for it): how far it went, and the
    answer."""
    movers, slide_under = reach.movers, reach.slide_under
    tops = dict.fromkeys(reach.tops)
    centre = fits = None
    examined = reach.examined
    piles = reach.piles
    left = True
    if not examined:
        # The seat's own arrangement, read off its cards: most searches end there, and the
        # rest is set up only if they do not.
        own = seat.work
        exposed = [pile[-1].index for pile in own if pile]
        examined = 1
        tops.update(dict.fromkeys(exposed))
        heads = [pile[0].index for pile in own if pile] if slide_under else []
        fits = _place(movers, exposed, len(own), heads)
        centre = _first_in(exposed, to_centre)
    if centre is None and fits is None and examined < STUCK_SEARCH_CAP:
        if piles is None:
            first = tuple(tuple(card.index for card in pile) for pile in seat.work)
            piles = SEARCHES.piles(first, slide_under)
        count = len(seat.work)
        while examined < STUCK_SEARCH_CAP:
            left = piles.meet(examined)
            if not left:
                break
            # Both parts of every arrangement met are kept, whatever this question needs.
            shown = piles.exposed[examined]
            examined += 1
            tops.update(dict.fromkeys(shown))
            fits = _place(movers, shown, count, piles.heads[examined - 1])
            centre = _first_in(shown, to_centre)
            if centre is not None or fits is not None:
                break
    reach = _Reach(
        turn_count=reach.turn_count,
        slide_under=slide_under,
        movers=movers,
        tops=tuple(tops),
        fits=fits,
        piles=piles,
        over=fits is not None or examined >= STUCK_SEARCH_CAP or not left,
        examined=examined,
        cards=reach.cards.union(tops),
        asked=None,
        answer=None,
    )
    if centre is not None:
        return reach, f"{_FACE[centre]} can reach a foundation from the work piles"
    return reach, fits


def _first_in(cards: Sequence[int], to_centre: Set[int]) -> int | None:
    """The first of ``cards`` the centre takes (a loop: cheaper than next() of a generator)."""
    for card in cards:
        if card in to_centre:
            return card
    return None


def _place(
    movers: tuple[int, ...], exposed: Sequence[int], piles: int, heads: Sequence[int]
) -> str | None:
    """The first mover that goes onto, into or under one of ``piles`` work piles, whose
    non-empty ones show ``exposed`` on top and have ``heads`` (given with slide-under only)."""
    if not movers:
        return None
    if len(exposed) < piles:  # anything goes into an empty pile
        return f"{_FACE[movers[0]]} can go to a work pile"
    places = {_ONTO[card] for card in exposed}
    places.update(_UNDER[card] for card in heads)
    for card in movers:
        if _FIT[card] in places:
            return f"{_FACE[card]} can go to a work pile"
    return None


def _arrangements(
    frontier: deque[_Indexed], seen: set[_Indexed], slide_under: bool
) -> Iterator[_Indexed]:
    """Arrangements not yet seen that rearranging reaches, breadth first, from ``frontier``.

    A node leaves the frontier only once expanded, so a search stopped after any yield
    resumes from the same ``frontier`` and ``seen``. Pile order does not matter for what
    a seat can play, so an arrangement is seen as its sorted piles.
    """
    while frontier:
        for nxt in _rearrangements(frontier[0], slide_under):
            key = tuple(sorted(nxt))
            if key not in seen:
                seen.add(key)
                frontier.append(nxt)
                yield nxt
        frontier.popleft()


def _rearrangements(piles: _Indexed, slide_under: bool) -> Iterator[_Indexed]:
    """Every single move of a tail onto or into a pile, or of a top under one."""
    targets: dict[int, list[int]] = {}  # by the _FIT a card needs: the piles it goes onto
    empty = []
    for j, other in enumerate(piles):
        if other:
            targets.setdefault(_ONTO[other[-1]], []).append(j)
        else:
            empty.append(j)
    for i, pile in enumerate(piles):
        for start, card in enumerate(pile):
            onto = targets.get(_FIT[card], [])
            if start and empty:  # a whole pile into an empty one changes nothing
                onto = sorted([*onto, *empty])
            for j in onto:
                if j != i:
                    yield replaced_at(
                        replaced_at(piles, i, pile[:start]), j, piles[j] + pile[start:]
                    )
        if slide_under and pile:
            fit = _FIT[pile[-1]]
            for j, other in enumerate(piles):
                if j != i and other and _UNDER[other[0]] == fit:
                    yield replaced_at(replaced_at(piles, i, pile[:-1]), j, (pile[-1], *other))


def check_stall(state: State) -> Violation | None:
    """``None`` if a stall shift (or, after a full cycle, the blocked end) is due now."""
    closed = why_closed(state, None, None)
    if closed is not None:
        return closed
    not_due = _why_not_due(state)
    if not_due is None:
        return None
    return Violation(code=ViolationCode.STALL_NOT_DUE, message=not_due, seat=None)


def stall_is_due(state: State) -> bool:
    """``check_stall(state) is None``, without the refusal: the match flow asks this after
    every record, and almost always the answer is no.

    A record changes one seat and perhaps the centre: every other seat gives its kept
    answer again, and a seat that can still play ends the question (``_witness``), so
    this is mostly one look, and nothing is worded.
    """
    return why_closed(state, None, None) is None and not _someone_plays_on(state)


def _someone_plays_on(state: State) -> bool:
    """``_why_not_due(state) is not None``."""
    rules = state.rules
    agreed = state.agreed if rules.stall_by_agreement else frozenset()
    if rules.stall_trigger is FULL_PASS:
        return any(
            player not in agreed and _short_of_a_pass(state, player, seat)
            for player, seat in enumerate(state.seats)
        )
    keys = SEARCHES.centre_keys(state.foundations)
    for player, seat in enumerate(state.seats):
        if player not in agreed and _witness(seat, rules, keys) is not None:
            return True
    return False


def _short_of_a_pass(state: State, player: int, seat: Seat) -> bool:
    """Under ``StallTrigger.FULL_PASS``: the seat has not had its pass since the last play.
    A seat with nothing to turn has had it only once it cannot play: else a table of empty
    stocks would owe a shift after every shift."""
    cycle = seat.cycle_size
    return state.turned_since_play[player] < cycle or (cycle == 0 and not is_stuck(state, player))


def _why_not_due(state: State) -> str | None:
    """Why a table in play owes no stall now, in words; ``None`` when one is due."""
    rules = state.rules
    # "If everyone is stuck or agrees to stop moving": a seat that agreed waits for the
    # shift whether or not it could still play, so only the others are asked.
    agreed = state.agreed if rules.stall_by_agreement else frozenset()
    if rules.stall_trigger is StallTrigger.FULL_PASS:
        short = [
            str(player)
            for player, seat in enumerate(state.seats)
            if player not in agreed and _short_of_a_pass(state, player, seat)
        ]
        if short:
            return (
                f"seats {', '.join(short)} have not turned through their whole stock since "
                "the last play"
            )
        return None
    keys = SEARCHES.centre_keys(state.foundations)
    for player, seat in enumerate(state.seats):
        if player in agreed:
            continue
        witness = _witness(seat, rules, keys)
        if witness is not None:
            return f"seat {player} can still play: {witness}"
    return None


def stall_outcome(state: State) -> StallOutcome:
    """What a due stall does: shift, or end the hand once the shifts failed.

    Each shift rotates every seat's stock cycle by one card, so after as many
    shifts as the longest cycle, with no play in between, every grouping has come
    round. If the table is stuck then too, the cycle offered no playable card and
    the hand is blocked (docs/rules.md, "Stall and blocked"). A profile may block
    after one failed shift instead (``Blocked.ONE_SHIFT``).
    """
    if state.rules.blocked_after is Blocked.ONE_SHIFT:
        failed = state.shifts_since_play >= 1
    else:
        failed = state.shifts_since_play >= max(seat.cycle_size for seat in state.seats)
    if failed and table_is_stuck(state):
        return StallOutcome.BLOCKED
    return StallOutcome.SHIFT


def apply_stall(state: State) -> State:
    """Apply a due stall (check it first): every seat shifts, or the hand is blocked."""
    now = state.clock_ms
    if stall_outcome(state) is StallOutcome.BLOCKED:
        return replace(
            state, phase=Phase.ENDED, end_reason=EndReason.BLOCKED, ended_ms=now, agreed=frozenset()
        )
    return replace(
        state,
        seats=tuple(_shift(seat) for seat in state.seats),
        shifts_since_play=state.shifts_since_play + 1,
        agreed=frozenset(),
        turned_since_play=(0,) * len(state.seats),
        last_action_ms=now,
    )


def _shift(seat: Seat) -> Seat:
    """Waste over onto the stock, then the top card to the bottom.

    Top to bottom, stock [s1] and waste (bottom to top) [w1, w2, w3] become
    [w2, w3, s1, w1].
    """
    top_down = seat.waste + tuple(reversed(seat.stock))
    if top_down:
        top_down = top_down[1:] + top_down[:1]
    return Seat(demon=seat.demon, work=seat.work, stock=tuple(reversed(top_down)), waste=())
