"""The stuck search is bounded (docs/rules.md §5, "The stuck search and its bound").

"The search examines at most 256 arrangements (``STUCK_SEARCH_CAP`` in ``stall.py``),
the seat's own included: a seat with no play among them is stuck, even if a play lies
further." These tests count arrangements; none of them times anything.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import replace
from pathlib import Path

import pytest
from test_engine_fast_paths import reference_witness

from racing_demon.game import stall
from racing_demon.game.cards import ACE, Card
from racing_demon.game.engine import ViolationCode
from racing_demon.game.rules import Rules
from racing_demon.game.stall import (
    STUCK_SEARCH_CAP,
    StallOutcome,
    check_stall,
    is_stuck,
    progress_witness,
    stall_outcome,
    table_is_stuck,
)
from racing_demon.game.state import Foundation, Seat, State
from racing_demon.profiles import builtin_document, rules_from_document

import crafted
from conftest import S, build, cards


def five_piles(profile: str = "table") -> Rules:
    document = builtin_document(profile)
    document["layout"]["work_piles"] = 5
    return rules_from_document(document)


def explosive_position(profile: str = "table") -> State:
    """A sound seat whose arrangements explode: four runs from king to six and an empty
    pile, nothing in the demon, stock or waste, and no card the centre wants.

    Any tail can go into the empty pile and back onto its twin's run, so the breadth-first
    search meets 475,136 arrangements (over ten seconds without the cap) and none shows a
    play. Each suit has two foundations: seat 0's ace to four, which wants a five, and seat
    1's ace to four, seat 0's five and seat 1's six to king. Seat 1 keeps its fives in its
    stock, so it can play and the stall is not due.
    """
    foundations = []
    for suit in "SHDC":
        foundations.append(" ".join(f"{rank}{suit}@0" for rank in "A234"))
        low, high = "A234", "6789TJQK"
        foundations.append(
            " ".join(
                [f"{r}{suit}@1" for r in low] + [f"5{suit}@0"] + [f"{r}{suit}@1" for r in high]
            )
        )
    return build(
        five_piles(profile),
        S(work=crafted.EXPLOSIVE_WORK),
        S(work=("",) * 5),
        foundations=foundations,
    )


def indexed(seat: Seat) -> stall._Indexed:
    return tuple(tuple(card.index for card in pile) for pile in seat.work)


def uncapped(seat: Seat, slide_under: bool) -> itertools.chain[stall._Indexed]:
    """Every arrangement the rules' order reaches, the seat's own first, with no cap."""
    first = indexed(seat)
    rest = stall._arrangements(deque([first]), {tuple(sorted(first))}, slide_under)
    return itertools.chain([first], rest)


def memo(seat: Seat) -> stall._Reach:
    reach = stall.SEARCHES.get(seat)
    assert reach is not None
    return reach


def test_the_explosive_seat_is_answered_within_the_cap() -> None:
    state = explosive_position()
    seat = state.seats[0]
    beyond = itertools.islice(uncapped(seat, False), STUCK_SEARCH_CAP + 1)
    assert sum(1 for _ in beyond) == STUCK_SEARCH_CAP + 1  # more arrangements than the cap
    assert progress_witness(state, 0) is None
    assert memo(seat).examined == STUCK_SEARCH_CAP
    assert memo(seat).over  # no later question searches on
    assert progress_witness(replace(state, foundations=()), 0) is None
    assert memo(seat).examined == STUCK_SEARCH_CAP


def test_the_table_and_the_verifier_meet_the_same_cap_through_check_stall() -> None:
    for profile in ("table", "peer2peer"):  # without and with slide-under
        state = explosive_position(profile)
        violation = check_stall(state)
        assert violation is not None and violation.code is ViolationCode.STALL_NOT_DUE
        assert violation.message.startswith("seat 1 can still play: 5")
        assert memo(state.seats[0]).examined == STUCK_SEARCH_CAP


# A seat that no game reaches (its piles are not runs), which is what lets its first play
# lie deep in the search: one move of a tail exposes any card of a sound seat that has an
# empty pile. The engine's definition covers any position, so it answers this one too.
DEEP_WORK = (
    "KC 8C JS 2H TS",
    "KD 3D 9C 7C 2C QH 7H",
    "KH 6D 5S JC 3S TD 3C 9D",
    "KS 4D 8D TH 7S JD",
    "3H 2S 8H 4S TC 9H 5D 5C 6C",
)
DEEP_DEMON = "JH"  # no black queen in the piles: it fits only into an emptied one


def deep_seat() -> Seat:
    return Seat(cards(DEEP_DEMON, 0), tuple(cards(pile, 0) for pile in DEEP_WORK), (), ())


def deep_position(*wanted: Card) -> State:
    """Two deep seats; the foundations want exactly ``wanted`` (besides aces)."""
    foundations = tuple(
        Foundation(card.suit, tuple((Card(rank, card.suit, 1),) for rank in range(1, card.rank)), 0)
        for card in wanted
    )
    seats = (deep_seat(), deep_seat())
    return State(five_piles(), 1, seats, foundations, turned_since_play=(0, 0))


def _fits(mover: tuple[int, ...], work: tuple[tuple[int, ...], ...]) -> str | None:
    """The engine's answer to whether ``mover`` has a place on the piles ``work``."""
    return stall._place(mover, [pile[-1] for pile in work if pile], len(work), [])


def first_exposed() -> dict[Card, int]:
    """For every card of the deep seat, the arrangement (counted from 1) that first has it
    on top, before the demon top finds a place."""
    seat = deep_seat()
    mover = (seat.demon[-1].index,)
    exposed: dict[int, int] = {}
    for number, work in enumerate(uncapped(seat, False), start=1):
        if _fits(mover, work) is not None:
            break
        for pile in work:
            if pile:
                exposed.setdefault(pile[-1], number)
    return {Card.from_face(stall._FACE[index], 0): number for index, number in exposed.items()}


def straddling_cards() -> tuple[Card, Card]:
    """The card first exposed last within the cap, and the first exposed beyond it."""
    exposed = first_exposed()
    within = max((card for card in exposed if exposed[card] <= STUCK_SEARCH_CAP), key=exposed.get)
    beyond = min((card for card in exposed if exposed[card] > STUCK_SEARCH_CAP), key=exposed.get)
    assert within.rank > ACE and beyond.rank > ACE
    return within, beyond


def test_a_play_beyond_the_cap_leaves_the_seat_stuck_by_definition() -> None:
    """The rule: "a seat with no play among them is stuck, even if a play lies further"."""
    seat = deep_seat()
    mover = (seat.demon[-1].index,)
    place = next(
        number
        for number, work in enumerate(uncapped(seat, False), start=1)
        if _fits(mover, work) is not None
    )
    assert place > STUCK_SEARCH_CAP  # the demon top has a place, but only that far in
    state = deep_position()
    assert progress_witness(state, 0) is None
    assert is_stuck(state, 1)
    assert memo(state.seats[0]).examined == STUCK_SEARCH_CAP
    assert reference_witness(state, 0) is None


def test_a_card_for_the_centre_beyond_the_cap_is_no_play() -> None:
    within, beyond = straddling_cards()
    assert progress_witness(deep_position(beyond), 0) is None
    found = progress_witness(deep_position(within), 0)
    assert found == f"{within.face} can reach a foundation from the work piles"
    for question in (deep_position(within), deep_position(beyond)):
        assert progress_witness(question, 0) == reference_witness(question, 0)


@pytest.mark.pure_python  # sets stall.STUCK_SEARCH_CAP, a constant inlined when compiled
@pytest.mark.parametrize("which", ["the second", "the last within the cap"])
def test_the_arrangement_at_the_cap_is_examined_and_the_next_is_not(
    which: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rule: "at most 256 arrangements ..., the seat's own included". A play in the cap's
    own arrangement counts, one in the arrangement after it does not (engine and reference).
    With a cap of 1, only the seat's own arrangement is examined."""
    exposed = first_exposed()
    if which == "the second":
        card = min((card for card in exposed if exposed[card] == 2), key=lambda c: c.index)
    else:
        card = straddling_cards()[0]
    place = exposed[card]
    for cap, plays in ((place, True), (place - 1, False)):
        monkeypatch.setattr(stall, "STUCK_SEARCH_CAP", cap)
        state = deep_position(card)
        witness = progress_witness(state, 0)
        assert (witness is not None) is plays
        assert witness == reference_witness(state, 0)
        assert memo(state.seats[0]).examined == cap


def test_the_stall_is_due_and_the_hand_blocked_when_every_play_lies_beyond_the_cap() -> None:
    _, beyond = straddling_cards()
    state = deep_position(beyond)
    assert check_stall(state) is None
    assert table_is_stuck(state)
    # No seat has a stock to cycle, so the cycle is complete at once.
    assert stall_outcome(state) is StallOutcome.BLOCKED


def test_a_resumed_search_stops_at_the_cap_where_an_unresumed_one_does() -> None:
    """The rule: "The count of arrangements examined is kept with a paused search, so an answer
    never depends on which questions came before it." """
    within, beyond = straddling_cards()
    exposed = first_exposed()
    early = min(exposed, key=lambda card: (exposed[card], card.index))
    orders = [
        (early, within, beyond, None),
        (beyond, within, None, early),
        (None, beyond, early, within),
    ]
    answers = []
    for order in orders:
        seat = deep_seat()  # one seat, asked every question in turn
        asked: dict[Card | None, str | None] = {}
        for wanted in order:
            state = deep_position(*([] if wanted is None else [wanted]))
            state = replace(state, seats=(seat, state.seats[1]))
            asked[wanted] = progress_witness(state, 0)
            fresh = deep_position(*([] if wanted is None else [wanted]))
            assert asked[wanted] == progress_witness(fresh, 0) == reference_witness(fresh, 0)
        answers.append(asked)
        in_one_go = deep_position()
        assert progress_witness(in_one_go, 0) is None
        assert memo(seat).examined == memo(in_one_go.seats[0]).examined == STUCK_SEARCH_CAP
        assert memo(seat).tops == memo(in_one_go.seats[0]).tops  # the same arrangements met
        assert memo(seat).over
    assert answers[0] == answers[1] == answers[2]
    assert answers[0][beyond] is None and answers[0][None] is None
    assert answers[0][within] is not None and answers[0][early] is not None


def test_the_cap_is_one_number_the_docs_state() -> None:
    rules_doc = (Path(__file__).resolve().parents[1] / "docs" / "rules.md").read_text()
    assert f"at most {STUCK_SEARCH_CAP} arrangements" in rules_doc


def test_the_explosive_seat_is_a_position_of_play_and_the_deep_one_is_not() -> None:
    assert not explosive_position().problems()
    assert deep_position().problems()
