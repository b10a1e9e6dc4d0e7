"""The stuck search by its definition (docs/rules.md §5), for testing the fast one.

``stall.progress_witness`` answers whether a seat can still play with a search kept for
the seat (``stall.SEARCHES``), taken on only as far as a question needs, over cards as
integer indices. This module answers the same question from scratch, the way the rules
word it: the demon top and every card a full pass through the stock turns up, then the
seat's work-pile arrangements breadth first, at most ``STUCK_SEARCH_CAP`` of them. It is
the definition the fast path must agree with, witness text included, and
tests/test_engine_fast_paths.py holds them to it at every position of random playouts
and on arbitrary seats. Nothing in the package calls it: asking it after every record
would search every seat again each time.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterator

from racing_demon.game import stall
from racing_demon.game.cards import ACE, Card
from racing_demon.game.state import Pile, Seat, State, builds_down


def progress_witness_by_definition(state: State, seat: int) -> str | None:
    """How ``seat`` could still play, or ``None`` when the seat is stuck: what
    ``stall.progress_witness`` must answer."""
    own = state.seats[seat]
    rules = state.rules
    wanted = {(f.suit, f.rank + 1) for f in state.foundations if not f.complete}

    def to_centre(card: Card) -> bool:
        return card.rank == ACE or (card.suit, card.rank) in wanted

    movers = list(own.demon[-1:])
    movers += [
        card for card in cycle_tops_by_definition(own, rules.turn_count) if card not in movers
    ]
    for card in movers:
        if to_centre(card):
            return f"{card.face} can go to a foundation"
    searched = arrangements_by_definition(own.work, rules.slide_under)
    # The cap is the stall module's, read when asked (one number for both; tests lower it).
    for work in itertools.islice(searched, stall.STUCK_SEARCH_CAP):
        for pile in work:
            if pile and to_centre(pile[-1]):
                return f"{pile[-1].face} can reach a foundation from the work piles"
        for card in movers:
            for pile in work:
                if (
                    not pile
                    or builds_down(pile[-1], card)
                    or (rules.slide_under and builds_down(card, pile[0]))
                ):
                    return f"{card.face} can go to a work pile"
    return None


def cycle_tops_by_definition(seat: Seat, turn_count: int) -> list[Card]:
    """Every card that becomes the waste top during a full pass through the stock, found by
    making the pass: what ``stall.cycle_tops`` must answer."""
    order = seat.waste + tuple(reversed(seat.stock))
    size = len(order)
    position = len(seat.waste)
    seen: set[int] = set()
    tops: list[Card] = []
    while position not in seen:
        seen.add(position)
        if position:
            tops.append(order[position - 1])
        position = 0 if position == size else min(position + turn_count, size)
    return tops


def arrangements_by_definition(
    work: tuple[Pile, ...], slide_under: bool
) -> Iterator[tuple[Pile, ...]]:
    """The seat's own work piles, then every arrangement that rearranging reaches, breadth
    first, each once whatever the order of its piles: the order the stuck search examines."""
    yield work
    seen = {_key(work)}
    frontier = deque([work])
    while frontier:
        for nxt in _rearrangements(frontier.popleft(), slide_under):
            key = _key(nxt)
            if key not in seen:
                seen.add(key)
                yield nxt
                frontier.append(nxt)


def _key(piles: tuple[Pile, ...]) -> tuple[tuple[int, ...], ...]:
    return tuple(sorted(tuple(card.index for card in pile) for pile in piles))


def _rearrangements(piles: tuple[Pile, ...], slide_under: bool) -> Iterator[tuple[Pile, ...]]:
    """Pile by pile from w1: each tail, the whole pile first, onto every other pile it fits
    or into every empty one (never a whole pile into an empty one); then, with slide-under,
    the top card under every other pile it fits."""

    def put(items: tuple[Pile, ...], index: int, item: Pile) -> tuple[Pile, ...]:
        return (*items[:index], item, *items[index + 1 :])

    for i, pile in enumerate(piles):
        for start in range(len(pile)):
            tail = pile[start:]
            for j, other in enumerate(piles):
                if j == i or (not other and start == 0):
                    continue
                if not other or builds_down(other[-1], tail[0]):
                    yield put(put(piles, i, pile[:start]), j, other + tail)
        if slide_under and pile:
            for j, other in enumerate(piles):
                if j != i and other and builds_down(pile[-1], other[0]):
                    yield put(put(piles, i, pile[:-1]), j, (pile[-1], *other))
