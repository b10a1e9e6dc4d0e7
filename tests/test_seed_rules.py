"""The rules engine against the four rule sets it implements, and docs/rules.md.

Every test quotes the sentences it checks, naming the rule set they come from:

* Table rules: a house-rules sheet for Racing Demon played with real cards round a table,
  the ``table`` profile.
* Table rules (French): the French text of the same sheet, quoted where its wording helps.
* peer2peer rules: the Racing Demon rules page of the peer2peergames site, the
  ``peer2peer`` profile.
* Nertz rules: the rules page of "Nertz Card Game Online", where one plays against up to
  three computer players, the ``nertz`` profile.

Each test builds a small position in the state text of docs/rules.md §10 and asserts what
the engine does: the move is accepted and the piles end up as the rule says, or it is
refused with the exact reason code.

Positions are written as foundation and seat lines; ``position`` adds the header and puts
every card of a pack that the lines do not mention at the *bottom* of that seat's demon
pile (``rest="demon"``, the default: only the demon top is ever reachable, so those cards
cannot play) or at the bottom of its stock (``rest="stock"``, for tests that need an empty
or short demon pile). Every position is checked with ``State.problems()``.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import replace
from pathlib import Path

import pytest

from racing_demon.game import engine, stall
from racing_demon.game.cards import Card, canonical_pack
from racing_demon.game.engine import (
    ViolationCode,
    advance_clock,
    apply_move,
    check_move,
    legal_moves,
)
from racing_demon.game.moves import DEMON, NEW_FOUNDATION, WASTE, Move, MoveKind, Place, Zone
from racing_demon.game.rules import Blocked, Resignation, Rules
from racing_demon.game.scoring import HandScore, Match, SeatScore, score_hand
from racing_demon.game.stall import StallOutcome, apply_stall, check_stall, stall_outcome
from racing_demon.game.state import EndReason, Phase, State, next_deadline
from racing_demon.profiles import ProfileError, builtin_document, load_rules

PROFILES = ("table", "peer2peer", "nertz")

# A seat that can play nothing: kings take only queens, nothing is wanted by an empty
# centre, and its stock and waste are empty (the rest of its pack is under the demon top).
NEUTRAL_1 = "seat 1 demon=7C work=KS|KH|KD|KC stock=- waste=-"

_FACE = re.compile(r"(?<![\w@])([A2-9TJQK][CDHS])(?![\w@])")


# -- helpers -------------------------------------------------------------------


def position(profile: str | Rules, body: str, *, rest: str = "demon", **header: object) -> State:
    """A state from foundation and seat lines; see the module docstring for ``rest``."""
    rules = load_rules(profile) if isinstance(profile, str) else profile
    lines = [line.strip() for line in body.strip().splitlines() if line.strip()]
    in_centre = {
        card for line in lines if line.startswith("foundation ") for card in _centre_cards(line)
    }
    seat_lines = [line for line in lines if line.startswith("seat ")]
    out = [line for line in lines if line.startswith("foundation ")]
    for line in seat_lines:
        owner = int(line.split(" ")[1])
        named = set(_FACE.findall(line))
        missing = [
            card.face
            for card in canonical_pack(owner)
            if card.face not in named and str(card) not in in_centre
        ]
        out.append(_put_under(line, rest, missing) if missing else line)
    text = _header(rules, len(seat_lines), header) + "\n" + "\n".join(out) + "\n"
    state = State.parse(text, rules)
    assert state.problems() == [], f"{state.problems()}\n{text}"
    assert state.to_text() == text
    return state


HEADER = {"clock": 5000, "centre": 5000, "action": 5000}  # past peer2peer's countdown


def _header(rules: Rules, players: int, overrides: dict[str, object]) -> str:
    """The header line of a freshly dealt hand, with some ``key=value`` fields changed."""
    dealt = State.deal(rules, [canonical_pack(seat) for seat in range(players)], 1, 0)
    values = {**HEADER, **overrides}
    words = []
    for word in dealt.to_text().splitlines()[0].split(" "):
        key, eq, _ = word.partition("=")
        words.append(f"{key}={values.pop(key)}" if eq and key in values else word)
    assert not values, f"no such header fields: {values}"
    return " ".join(words)


def _centre_cards(line: str) -> list[str]:
    return [card for level in line.split(" ")[3:] for card in level.split(",")]


def _put_under(line: str, pile: str, faces: list[str]) -> str:
    def under(match: re.Match[str]) -> str:
        old = match.group(1)
        return f"{pile}=" + ",".join(faces + ([] if old == "-" else [old]))

    return re.sub(rf"\b{pile}=(\S+)", under, line, count=1)


def faces(pile: tuple[Card, ...]) -> str:
    return ",".join(card.face for card in pile) or "-"


def work(state: State, seat: int) -> str:
    return "|".join(faces(pile) for pile in state.seats[seat].work)


def foundation_line(state: State, index: int) -> str:
    return state.to_text().splitlines()[1 + index]


def resigned(state: State, player: int) -> State:
    """The hand ended by ``player``'s resignation, under the same rules with resignation
    allowed: for tests about what an ended hand scores, not about how it ended."""
    allowing = replace(state, rules=replace(state.rules, resignation=Resignation.ENDS_MATCH))
    return play(allowing, f"{player} resign")


def play(state: State, *moves: str) -> State:
    """Check and apply moves that must be legal; the invariants must hold after each."""
    for text in moves:
        move = Move.parse(text)
        violation = check_move(state, move)
        assert violation is None, f"{text}: {violation}"
        assert move in legal_moves(state, move.seat), f"{text} not in legal_moves"
        state = apply_move(state, move)
        assert state.problems() == []
    return state


def refused(state: State, text: str, code: ViolationCode) -> engine.Violation:
    """``text`` is refused with ``code``, is not listed as legal, and changes nothing."""
    before = state.to_text()
    move = Move.parse(text)
    violation = check_move(state, move)
    assert violation is not None, f"{text} was accepted"
    assert violation.code is code, f"{text}: {violation}"
    assert move not in legal_moves(state, move.seat)
    assert state.to_text() == before
    return violation


def turn_move(state: State, seat: int) -> Move:
    (move,) = [m for m in legal_moves(state, seat) if m.kind is MoveKind.TURN]
    return move


def hand(
    number: int,
    scores: tuple[int, ...],
    reason: EndReason = EndReason.CALL,
    by: int | None = 0,
) -> HandScore:
    seats = tuple(SeatScore(seat, (), (), score, 0) for seat, score in enumerate(scores))
    return HandScore(number, reason, by, seats)


def match_of(profile: str | Rules, *scores: tuple[int, ...], players: int = 2) -> Match:
    rules = load_rules(profile) if isinstance(profile, str) else profile
    match = Match(rules, players)
    for number, hand_scores in enumerate(scores, start=1):
        match = match.record(hand(number, hand_scores))
    return match


# -- 01 layout -------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_deal_lays_out_demon_work_and_stock(profile: str) -> None:
    """Table rules: "Deal a demon pile of 13, twelve down and top up; beside it start four
    work columns with one face-up card each. The remaining 35 form your face-down stock;
    your waste starts empty." (The peer2peer and Nertz rules deal the same.)"""
    rules = load_rules(profile)
    state = State.deal(rules, [canonical_pack(0), canonical_pack(1)], hand=1, start_ms=0)
    assert state.problems() == []
    for seat in state.seats:
        assert len(seat.demon) == 13
        assert [len(pile) for pile in seat.work] == [1, 1, 1, 1]
        assert len(seat.stock) == 35
        assert seat.waste == ()
    assert State.parse(state.to_text(), rules) == state


def test_five_work_pile_variant_leaves_34_in_stock() -> None:
    """Nertz rules: "Common variations: five work piles instead of four" (docs §2: 34 in
    stock)."""
    rules = replace(load_rules("nertz"), work_piles=5)
    state = State.deal(rules, [canonical_pack(0), canonical_pack(1)], hand=1, start_ms=0)
    assert state.problems() == []
    assert [len(pile) for pile in state.seats[0].work] == [1] * 5
    assert len(state.seats[0].stock) == 34


@pytest.mark.parametrize(
    ("profile", "players", "ok"),
    [
        ("peer2peer", 4, True),
        ("peer2peer", 5, False),
        ("nertz", 5, False),
        ("table", 8, True),
        ("table", 1, False),
    ],
)
def test_number_of_players(profile: str, players: int, ok: bool) -> None:
    """peer2peer rules: "Two to four players"; Nertz rules: "you and up to three computer
    players"; table: the docs' decision of 2 to 8."""
    rules = load_rules(profile)
    packs = [canonical_pack(seat) for seat in range(players)]
    if ok:
        assert State.deal(rules, packs, hand=1, start_ms=0).players == players
    else:
        with pytest.raises(ValueError, match="players"):
            State.deal(rules, packs, hand=1, start_ms=0)


# -- 02 simultaneous work: one card at a time, work columns -------------------------------


@pytest.mark.parametrize(
    ("profile", "body", "move"),
    [
        ("table", "seat 0 demon=5C,4D work=KS|KH|KD|KC stock=- waste=-", "0 demon>w1 5C 4D"),
        ("nertz", "seat 0 demon=7D work=KS|KH|KD|KC stock=- waste=5C,4D", "0 waste>w1 5C 4D"),
        (
            "table",
            "foundation D 1000 AD@1 2D@1 3D@1\nseat 0 demon=7D work=5S,4D|KH|KD|KC stock=- waste=-",
            "0 w1>f1 5S 4D",
        ),
        ("peer2peer", "seat 0 demon=7D work=9D,8S|7H|KD|KC stock=- waste=-", "0 w1>u2 9D 8S"),
    ],
    ids=["demon", "waste", "tail-to-foundation", "tail-slid-under"],
)
def test_one_card_at_a_time(profile: str, body: str, move: str) -> None:
    """Table rules: "Move one card at a time, except a legal column sequence." """
    state = position(profile, f"{body}\n{NEUTRAL_1}")
    refused(state, move, ViolationCode.ONE_CARD_ONLY)


def test_a_column_sequence_moves_together() -> None:
    """Table rules: "A correctly ordered tail may move together onto another column." (docs
    §3's own example, ``0 w2>w4 9D 8S 7H``)"""
    state = position(
        "table", f"seat 0 demon=7D work=KS|9D,8S,7H|9C|TC stock=- waste=-\n{NEUTRAL_1}"
    )
    after = play(state, "0 w2>w4 9D 8S 7H")
    assert work(after, 0) == "KS|-|9C|TC,9D,8S,7H"
    state = position(
        "table", f"seat 0 demon=7D work=KS|9D,8S,7H|9H|TC stock=- waste=-\n{NEUTRAL_1}"
    )
    part = play(state, "0 w2>w3 8S 7H")  # Nertz rules: "the bottom part of a run"
    assert work(part, 0) == "KS|9D|9H,8S,7H|TC"
    refused(state, "0 w2>w4 8S 7H", ViolationCode.NOT_ONE_LOWER)


def test_only_exposed_column_ends_are_available_singly() -> None:
    """Table rules: "Only exposed column ends are available singly." """
    state = position(
        "table",
        f"foundation D 1000 AD@1 2D@1 3D@1 4D@1 5D@1 6D@1 7D@1 8D@1\n"
        f"seat 0 demon=7C work=9D,8S|TC|KD|KH stock=- waste=-\n{NEUTRAL_1}",
    )
    refused(state, "0 w1>f1 9D", ViolationCode.CARD_MISMATCH)
    refused(state, "0 w1>w2 9D", ViolationCode.CARD_MISMATCH)
    after = play(state, "0 w1>w2 9D 8S")  # with what covers it, 9D may go
    assert work(after, 0) == "-|TC,9D,8S|KD|KH"
    after = play(after, "0 w2>w1 8S")
    assert foundation_line(play(after, "0 w2>f1 9D"), 0).endswith(" 8D@1 9D@0")


@pytest.mark.parametrize(
    ("profile", "card", "code"),
    [
        ("table", "6H", None),
        ("nertz", "6D", None),
        ("table", "9C", ViolationCode.NOT_ONE_LOWER),  # docs: a black 9 on a black 7
        ("table", "6S", ViolationCode.SAME_COLOUR),  # docs: a black 6 on a black 7
        ("peer2peer", "5H", ViolationCode.NOT_ONE_LOWER),
        ("nertz", "8H", ViolationCode.NOT_ONE_LOWER),
    ],
)
def test_work_columns_build_down_in_alternating_colours(
    profile: str, card: str, code: ViolationCode | None
) -> None:
    """Table rules: "Build work columns downward in alternating colours." peer2peer rules:
    "a red six goes on a black seven". Rank is checked before colour (docs §3)."""
    state = position(profile, f"seat 0 demon={card} work=7C|KH|KD|KS stock=- waste=-\n{NEUTRAL_1}")
    move = f"0 demon>w1 {card}"
    if code is None:
        assert work(play(state, move), 0) == f"7C,{card}|KH|KD|KS"
    else:
        refused(state, move, code)


@pytest.mark.parametrize(
    ("profile", "move", "filled", "left"),
    [
        ("table", "0 demon>w1 5C", "5C", "9D,8S"),
        ("nertz", "0 waste>w1 QD", "QD", "9D,8S"),
        ("peer2peer", "0 w2>w1 9D 8S", "9D,8S", "-"),
        ("nertz", "0 w2>w1 8S", "8S", "9D"),
    ],
)
def test_any_available_card_or_sequence_fills_an_empty_column(
    profile: str, move: str, filled: str, left: str
) -> None:
    """Table rules: "Any available demon top, waste top or work sequence may fill an empty
    column." Nertz rules: "An empty work pile can be filled with any card"."""
    state = position(profile, f"seat 0 demon=5C work=-|9D,8S|KS|KH stock=- waste=QD\n{NEUTRAL_1}")
    after = play(state, move)
    assert work(after, 0) == f"{filled}|{left}|KS|KH"


def test_the_next_demon_card_becomes_available() -> None:
    """Table rules: "After moving demon top, turn its next card up." """
    state = position("table", f"seat 0 demon=9C,AH work=TD|KH|KD|KS stock=- waste=-\n{NEUTRAL_1}")
    refused(state, "0 demon>w1 9C", ViolationCode.CARD_MISMATCH)
    after = play(state, "0 demon>f+ AH")
    assert after.seats[0].demon[-1] == Card.parse("9C@0")
    assert len(after.seats[0].demon) == len(state.seats[0].demon) - 1
    assert work(play(after, "0 demon>w1 9C"), 0) == "TD,9C|KH|KD|KS"


def test_touch_only_your_own_layout() -> None:
    """Table rules: "Touch only your own layout or shared foundations." A move names its
    seat and that seat's cards; there is no seat 2 at a two-seat table."""
    state = position("table", f"seat 0 demon=AH work=KS|KH|KD|KC stock=- waste=-\n{NEUTRAL_1}")
    with pytest.raises(ValueError, match="own pack"):
        Move(0, MoveKind.PLAY, DEMON, NEW_FOUNDATION, (Card.parse("AH@1"),))
    refused(state, "2 resign", ViolationCode.NOT_A_SEAT)
    assert legal_moves(state, 2) == []


# -- 03 shared foundations -------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "body", "move"),
    [
        ("table", "seat 0 demon=AH work=KS|KH|KD|KC stock=- waste=-", "0 demon>f+ AH"),
        ("peer2peer", "seat 0 demon=7D work=KS|KH|KD|KC stock=- waste=AH", "0 waste>f+ AH"),
        ("nertz", "seat 0 demon=7D work=KS|KH|2C,AH|KC stock=- waste=-", "0 w3>f+ AH"),
    ],
)
def test_any_available_ace_starts_a_new_foundation(profile: str, body: str, move: str) -> None:
    """Table rules: "Any available ace starts a new shared foundation." peer2peer rules: "A
    pile in the centre is begun only with an ace"."""
    state = position(profile, f"foundation H 1000 AH@1\n{body}\n{NEUTRAL_1}")
    after = play(state, move)
    assert len(after.foundations) == 2
    assert foundation_line(after, 1) == "foundation H 5000 AH@0"


@pytest.mark.parametrize(
    ("card", "move", "code"),
    [
        ("2C", "0 demon>f+ 2C", ViolationCode.NOT_AN_ACE),
        ("AH", "0 demon>f1 AH", ViolationCode.ACE_STARTS_NEW),
        ("3S", "0 demon>f1 3S", ViolationCode.WRONG_SUIT),
        ("4H", "0 demon>f1 4H", ViolationCode.NOT_NEXT_RANK),
        ("3H", "0 demon>f3 3H", ViolationCode.NO_SUCH_PILE),
        ("2H", "0 demon>f1 2H", ViolationCode.FOUNDATION_TAKEN),
        ("3H", "0 demon>f1 3H", None),
        ("2S", "0 demon>f2 2S", None),
    ],
)
def test_foundations_build_up_in_suit(card: str, move: str, code: ViolationCode | None) -> None:
    """Table rules: "Build upward in the same suit to king"; peer2peer rules: "A pile
    builds up in its own suit, ace to king." Reason codes from docs §3."""
    state = position(
        "table",
        f"foundation H 1000 AH@1 2H@1\nfoundation S 1000 AS@1\n"
        f"seat 0 demon={card} work=KC|KD|KS|QC stock=- waste=-\n{NEUTRAL_1}",
    )
    if code is None:
        after = play(state, move)
        target = int(move.split(">f")[1].split(" ")[0]) - 1
        assert after.foundations[target].levels[-1] == (Card.parse(f"{card}@0"),)
        assert after.foundations[target].top_ms == 5000
    else:
        refused(state, move, code)


@pytest.mark.parametrize(
    ("body", "move"),
    [
        ("seat 0 demon=3H work=KC|KD|KS|QC stock=- waste=-", "0 demon>f1 3H"),
        ("seat 0 demon=7D work=KC|KD|KS|QC stock=- waste=3H", "0 waste>f1 3H"),
        ("seat 0 demon=7D work=KC|KD|KS|4C,3H stock=- waste=-", "0 w4>f1 3H"),
    ],
    ids=["demon", "waste", "work"],
)
def test_foundations_take_demon_waste_or_exposed_work_card(body: str, move: str) -> None:
    """Table rules: "using demon top, waste top or exposed work-column card."
    peer2peer rules: "Any of those may go to the centre if a pile there wants it." """
    state = position("nertz", f"foundation H 1000 AH@1 2H@1\n{body}\n{NEUTRAL_1}")
    after = play(state, move)
    assert foundation_line(after, 0) == "foundation H 5000 AH@1 2H@1 3H@0"
    assert Card.parse("3H@0") not in set(after.seats[0].cards())


def test_never_remove_a_card_from_a_foundation() -> None:
    """Table rules: "Anyone may use any foundation, but never remove a card from it." A
    move cannot even name a foundation as its source, and no legal move takes one."""
    with pytest.raises(ValueError):
        Move.parse("0 f1>w1 2H")
    state = position(
        "table",
        f"foundation H 5000 AH@1 2H@1\nseat 0 demon=3S work=KC|KD|-|QC stock=- waste=-\n"
        f"{NEUTRAL_1}",
    )
    for seat in (0, 1):
        for move in legal_moves(state, seat):
            assert move.source is None or move.source.zone is not Zone.FOUNDATION


def test_completed_king_pile_is_set_aside_but_scores() -> None:
    """Table rules: "turn completed king piles aside without losing them for scoring."
    peer2peer rules: "When the king goes on, that pile is finished and set aside." """
    kings = " ".join(f"{rank}H@1" for rank in "A23456789TJQK")
    state = position(
        "table",
        f"foundation H 1000 {kings}\nseat 0 demon=KH work=KC|KD|KS|QC stock=- waste=QH\n"
        "seat 1 demon=7C work=KS|KD|KC|QS stock=- waste=-",
    )
    assert state.foundations[0].complete
    refused(state, "0 demon>f1 KH", ViolationCode.FOUNDATION_TAKEN)
    refused(state, "0 waste>f1 QH", ViolationCode.FOUNDATION_TAKEN)
    ended = resigned(state, 0)
    assert len(score_hand(ended).seats[1].placed) == 13


def test_multiple_foundations_of_the_same_suit() -> None:
    """Table rules: "Multiple foundations of the same suit are allowed"; an ace never
    races: it always starts its own pile, even at the same instant (docs §3)."""
    state = position(
        "table",
        "seat 0 demon=AH work=KS|KH|KD|KC stock=- waste=-\n"
        "seat 1 demon=AH work=KS|KH|KD|KC stock=- waste=-",
    )
    state = play(state, "0 demon>f+ AH")
    refused(state, "1 demon>f1 AH", ViolationCode.ACE_STARTS_NEW)
    state = play(state, "1 demon>f+ AH")
    assert [foundation_line(state, i) for i in (0, 1)] == [
        "foundation H 5000 AH@0",
        "foundation H 5000 AH@1",
    ]


RACE = (
    "foundation H 1000 AH@0 2H@1 3H@0 4H@1\n"
    "seat 0 demon=6H work=KS|KH|KD|KC stock=- waste=5H\n"
    "seat 1 demon=6H work=KS|KH|KD|KC stock=- waste=5H"
)


@pytest.mark.parametrize(
    ("profile", "delay"), [("table", 1), ("table", 250), ("peer2peer", 0), ("nertz", 0)]
)
def test_a_lost_race_leaves_the_card_where_it_was(profile: str, delay: int) -> None:
    """Table rules: "If two compete for the same position, the first card placed stays; the
    other returns to its exact old place." peer2peer rules: "The first card played stays,
    and the other comes straight back to where it was." Nertz rules: "the card that lands
    first counts"."""
    state = play(position(profile, RACE), "0 waste>f1 5H")
    state = advance_clock(state, state.clock_ms + delay)
    violation = refused(state, "1 waste>f1 5H", ViolationCode.FOUNDATION_TAKEN)
    assert violation.lost_race
    assert state.seats[1].waste[-1] == Card.parse("5H@1")
    assert foundation_line(state, 0) == "foundation H 5000 AH@0 2H@1 3H@0 4H@1 5H@0"


def test_table_tie_at_the_same_millisecond_shares_the_level() -> None:
    """Table rules: "If order truly cannot be resolved, both stay as one foundation level.
    A following card advances from that shared rank normally." Table rules (French): "Ordre
    indécidable: les deux restent au même niveau. La suivante avance depuis ce rang
    commun." (0 ms window)"""
    state = play(position("table", RACE), "0 waste>f1 5H")
    assert Move.parse("1 waste>f1 5H") in legal_moves(state, 1)
    state = play(state, "1 waste>f1 5H")
    assert foundation_line(state, 0) == "foundation H 5000 AH@0 2H@1 3H@0 4H@1 5H@0,5H@1"
    state = play(advance_clock(state, 5400), "1 demon>f1 6H")
    assert foundation_line(state, 0) == "foundation H 5400 AH@0 2H@1 3H@0 4H@1 5H@0,5H@1 6H@1"
    refused(advance_clock(state, 5401), "0 demon>f1 6H", ViolationCode.FOUNDATION_TAKEN)
    scores = score_hand(resigned(state, 0))
    assert [len(seat.placed) for seat in scores.seats] == [3, 4]  # both fives score


def test_only_the_top_level_can_be_tied() -> None:
    """docs §3: "Only the top level can be tied": once the next card is on, a card of the
    shared rank lost its race even in the same millisecond."""
    state = play(position("table", RACE), "0 waste>f1 5H", "0 demon>f1 6H")
    refused(state, "1 waste>f1 5H", ViolationCode.FOUNDATION_TAKEN)
    assert Move.parse("1 demon>f1 6H") in legal_moves(state, 1)  # 6H may still tie


# -- 04 stock and waste ----------------------------------------------------------------


TURN = f"seat 0 demon=7C work=KS|KH|KD|KC stock=9C,8D,7S,6H,5C waste=-\n{NEUTRAL_1}"


@pytest.mark.parametrize("profile", PROFILES)
def test_turning_three_keeps_packet_order(profile: str) -> None:
    """Table rules: "Turn stock cards three at a time onto waste, keeping their packet
    order". peer2peer rules: "keeping them in the same order, so the third one ends up on
    top." """
    state = position(profile, TURN)
    refused(state, "0 turn 7S 6H 5C", ViolationCode.CARD_MISMATCH)
    refused(state, "0 turn 5C", ViolationCode.CARD_MISMATCH)
    after = play(state, "0 turn 5C 6H 7S")
    assert (faces(after.seats[0].stock), faces(after.seats[0].waste)) == ("9C,8D", "5C,6H,7S")
    assert after.seats[0].waste[-1].face == "7S"  # the third card from the stock top


@pytest.mark.parametrize(
    ("stock", "move", "wrong"),
    [("6H,5C", "0 turn 5C 6H", "0 turn 5C"), ("5C", "0 turn 5C", "0 turn 5C 6H")],
)
def test_last_packet_of_one_or_two_goes_as_it_stands(stock: str, move: str, wrong: str) -> None:
    """Table rules: "Finish a last packet of one or two as it stands." peer2peer rules: "If
    only one or two are left, those go over and that is that." """
    state = position(
        "table", f"seat 0 demon=7C work=KS|KH|KD|KC stock={stock} waste=2D,3D\n{NEUTRAL_1}"
    )
    refused(state, wrong, ViolationCode.CARD_MISMATCH)
    after = play(state, move)
    assert after.seats[0].stock == ()
    assert faces(after.seats[0].waste) == "2D,3D," + ",".join(move.split(" ")[2:])


def test_turn_one_variant() -> None:
    """Nertz rules: "Common variations: ... turning the stock one card at a time"."""
    state = position(replace(load_rules("nertz"), turn_count=1), TURN)
    refused(state, "0 turn 5C 6H 7S", ViolationCode.CARD_MISMATCH)
    assert faces(play(state, "0 turn 5C").seats[0].waste) == "5C"


def test_only_the_waste_top_is_available() -> None:
    """Table rules: "only waste top is available." peer2peer rules: "the waste ... only its
    top card is available"."""
    state = position(
        "table", f"seat 0 demon=7C work=8S|KH|KD|KC stock=- waste=5C,6H,7D\n{NEUTRAL_1}"
    )
    refused(state, "0 waste>w1 6H", ViolationCode.CARD_MISMATCH)
    refused(state, "0 waste>w1 6H 7D", ViolationCode.ONE_CARD_ONLY)
    assert work(play(state, "0 waste>w1 7D"), 0) == "8S,7D|KH|KD|KC"


@pytest.mark.parametrize("profile", PROFILES)
def test_recycling_keeps_the_order_and_the_packets(profile: str) -> None:
    """Table rules: "When stock empties, turn the entire waste over without shuffling and
    cycle again; do not attach leftovers under a fresh packet." Table rules (French):
    "n'intercalez pas restes sous nouveau paquet." peer2peer rules: "the order comes round
    again unchanged." Nertz rules: "turn the waste over and go through it again, as often
    as you like." Seven cards turn as 3 + 3 + 1 on every pass."""
    state = position(
        profile,
        f"seat 0 demon=7C work=KS|KH|KD|KC stock=2C,3D,4S,5D,6S,8D,9S waste=-\n{NEUTRAL_1}",
    )
    stock = state.seats[0].stock
    passes = []
    for _ in range(3):
        packets = []
        while state.seats[0].stock:
            move = turn_move(state, 0)
            packets.append(" ".join(card.face for card in move.cards))
            state = play(state, str(move))
        passes.append(packets)
        refused(state, "0 turn 9S", ViolationCode.STOCK_EMPTY)
        assert Move.parse("0 recycle") in legal_moves(state, 0)
        state = play(state, "0 recycle")
        assert state.seats[0].stock == stock
        assert state.seats[0].waste == ()
    assert passes == [["9S 8D 6S", "5D 4S 3D", "2C"]] * 3


def test_recycle_refusals() -> None:
    """Table rules: "When stock empties, turn the entire waste over": not before (the
    leftovers would go under a fresh packet), and not with nothing to turn over."""
    state = position("table", f"seat 0 demon=7C work=KS|KH|KD|KC stock=5C waste=2D,3D\n{NEUTRAL_1}")
    refused(state, "0 recycle", ViolationCode.STOCK_NOT_EMPTY)
    empty = position("table", f"seat 0 demon=7C work=KS|KH|KD|KC stock=- waste=-\n{NEUTRAL_1}")
    refused(empty, "0 recycle", ViolationCode.WASTE_EMPTY)
    refused(empty, "0 turn 5C", ViolationCode.STOCK_EMPTY)
    assert [m.kind for m in legal_moves(empty, 0)] == [MoveKind.AGREE]  # and no resignation


# -- 04 stuck, stall shift, blocked ------------------------------------------------------


STUCK = (
    "seat 0 demon=7C work=KS|KH|KD|KC stock=5D waste=2C,3D,4S\n"
    "seat 1 demon=7C work=KS|KH|KD|KC stock=- waste=-"
)
# nertz's shift is due after a full pass: seat 0 holds 4 cards in stock and waste.
PASSED = {"table": "0,0", "peer2peer": "0,0", "nertz": "4,0"}


@pytest.mark.parametrize("profile", PROFILES)
def test_stall_shift_reforms_the_stock_and_moves_its_top_to_the_bottom(profile: str) -> None:
    """Table rules: "If everyone is stuck or agrees to stop moving, reform each stock from
    its waste and move its top card to the bottom." Top to bottom, stock [s1] and waste
    [w1, w2, w3] become [w2, w3, s1, w1] (docs §5)."""
    state = position(profile, STUCK, turned=PASSED[profile])
    assert stall.table_is_stuck(state)
    assert check_stall(state) is None
    assert stall_outcome(state) is StallOutcome.SHIFT
    after = apply_stall(state)
    assert (faces(after.seats[0].stock), faces(after.seats[0].waste)) == ("2C,5D,4S,3D", "-")
    assert after.shifts_since_play == 1
    assert after.turned_since_play == (0, 0)
    assert str(turn_move(after, 0)) == "0 turn 3D 4S 5D"  # w2 comes up first
    assert after.problems() == []


@pytest.mark.parametrize("profile", PROFILES)
def test_no_shift_while_another_seat_can_play(profile: str) -> None:
    """Table rules: "You may not do this alone while others can play." peer2peer rules: "If
    nobody at the table can move at all". Nertz rules: "once every player has had a full
    pass with no play"."""
    state = position(profile, STUCK.replace("waste=-", "waste=AS"), turned=PASSED[profile])
    assert stall.is_stuck(state, 0)
    assert stall.progress_witness(state, 1) is not None
    violation = check_stall(state)
    assert violation is not None
    assert violation.code is ViolationCode.STALL_NOT_DUE
    assert "1" in violation.message


def test_table_shift_by_agreement() -> None:
    """Table rules: "If everyone is stuck or agrees to stop moving ... You may not do this
    alone". docs §5: an agreement is void after the next play by anyone, and after each
    shift."""
    state = position("table", STUCK.replace("waste=-", "waste=AS"))
    state = play(state, "0 agree")
    refused(state, "0 agree", ViolationCode.ALREADY_AGREED)
    assert check_stall(state) is not None  # seat 1 has not agreed, and can play
    agreed = play(state, "1 agree")
    assert check_stall(agreed) is None
    turned = play(agreed, "0 turn 5D")  # turning is not a play
    assert turned.agreed == frozenset({0, 1})
    assert check_stall(turned) is None
    assert apply_stall(agreed).agreed == frozenset()
    after_play = play(
        position("table", STUCK.replace("waste=-", "waste=2S,AS"), agreed="0,1"), "1 waste>f+ AS"
    )
    assert after_play.agreed == frozenset()
    assert check_stall(after_play) is not None


def test_a_table_where_every_seat_is_stuck_or_has_agreed_shifts() -> None:
    """Table rules: "If everyone is stuck or agrees to stop moving, reform each stock from its
    waste and move its top card to the bottom. You may not do this alone while others can
    play." docs §5 Decision: each seat is stuck or has agreed; a seat that agreed is not
    asked whether it could play, and the refusal names a seat that has not agreed."""
    playable = STUCK.replace("waste=2C,3D,4S", "waste=2C,3D,AS")  # seat 0 can play its ace
    state = position("table", playable)
    violation = check_stall(state)
    assert violation is not None and violation.code is ViolationCode.STALL_NOT_DUE
    assert violation.message.startswith("seat 0 can still play")
    agreed = play(state, "0 agree")  # seat 0 could play, and agrees; seat 1 is stuck
    assert check_stall(agreed) is None
    assert stall_outcome(agreed) is StallOutcome.SHIFT
    # The stuck seat agreeing is not enough while the other can play and has not agreed.
    other = play(state, "1 agree")
    violation = check_stall(other)
    assert violation is not None and violation.message.startswith("seat 0 can still play")


@pytest.mark.parametrize("profile", ["peer2peer", "nertz"])
def test_no_agreed_shift_outside_table(profile: str) -> None:
    """The peer2peer and Nertz rules shift only when nobody can play / after a full pass;
    there is no agreement (docs §5)."""
    state = position(profile, STUCK.replace("waste=-", "waste=AS"))
    refused(state, "0 agree", ViolationCode.AGREEMENT_NOT_ALLOWED)


@pytest.mark.parametrize("profile", PROFILES)
def test_a_shift_gives_a_new_grouping_of_three(profile: str) -> None:
    """peer2peer rules: "everybody turns one card from the top of their stock to the
    bottom, which breaks the cycle and the play goes on." Nertz rules: "play continues with
    a new grouping of three." The ace is the first card turned and always lies under its
    packet."""
    body = (
        "seat 0 demon=7C work=KS|KH|KD|KC stock=2C,3D,4S,5D,6S,AH waste=-\n"
        "seat 1 demon=7C work=KS|KH|KD|KC stock=- waste=-"
    )
    state = position(profile, body, turned="6,0" if profile == "nertz" else "0,0")
    assert stall.progress_witness(state, 0) is None
    state = apply_stall(state)
    assert stall.progress_witness(state, 0) == "AH can go to a foundation"
    state = play(state, "0 turn 6S 5D 4S", "0 turn 3D 2C AH", "0 waste>f+ AH")
    assert state.shifts_since_play == 0


BLOCKING = (
    "seat 0 demon=7C work=KS|KH|KD|KC stock=2C,3D,4S,5D waste=-\n"
    "seat 1 demon=7C work=KS|KH|KD|KC stock=6D,8C waste=-"
)


@pytest.mark.parametrize("profile", ["table", "nertz"])
def test_blocked_after_a_complete_cycle_of_shifts(profile: str) -> None:
    """Table rules: "If a complete cycle of these agreed shifts offers no playable card, end the
    hand as blocked: all remaining demon penalties apply." Nertz rules: "If that keeps failing and
    nobody can go out, the round ends and is scored as it stands." The cycle is the
    largest stock + waste at the table: here 4."""
    state = position(profile, BLOCKING)
    start = state.seats
    for shift in range(4):
        if profile == "nertz":  # the shift comes after every seat had a full pass
            assert check_stall(state) is not None
            while state.turned_since_play[0] < 4:
                state = play(state, str(turn_move(state, 0)))
            state = play(state, str(turn_move(state, 1)))
        assert check_stall(state) is None
        assert stall_outcome(state) is StallOutcome.SHIFT
        state = apply_stall(state)
        assert state.shifts_since_play == shift + 1
    assert state.seats == start  # every grouping has come round
    if profile == "nertz":
        state = play(state, "0 turn 5D 4S 3D", "0 turn 2C", "1 turn 8C 6D")
    assert check_stall(state) is None
    assert stall_outcome(state) is StallOutcome.BLOCKED
    ended = apply_stall(state)
    assert (ended.phase, ended.end_reason) == (Phase.ENDED, EndReason.BLOCKED)
    assert legal_moves(ended, 0) == legal_moves(ended, 1) == []
    scores = score_hand(ended)
    assert scores.scores == (-2 * len(ended.seats[0].demon), -2 * len(ended.seats[1].demon))


def test_peer2peer_is_blocked_when_one_shift_brings_no_play() -> None:
    """peer2peer rules: "when nobody can move, everybody turns a card from the top of their stock to
    the bottom, and if the whole cycle comes round again with no card played in between,
    the deal is over and scores as it stands." docs §5 Decision: one shift, then one whole
    pass through every stock (which the stuck test sees at once) with no card played."""
    state = position("peer2peer", BLOCKING)
    assert state.rules.blocked_after is Blocked.ONE_SHIFT
    assert check_stall(state) is None and stall_outcome(state) is StallOutcome.SHIFT
    shifted = apply_stall(state)
    assert shifted.shifts_since_play == 1
    assert check_stall(shifted) is None  # still nobody can move: the cycle came round
    assert stall_outcome(shifted) is StallOutcome.BLOCKED
    ended = apply_stall(shifted)
    assert (ended.phase, ended.end_reason) == (Phase.ENDED, EndReason.BLOCKED)
    # A shift that lets somebody play is no failure: the next stall starts afresh.
    body = BLOCKING.replace("stock=6D,8C", "stock=6D,AS")
    moved = apply_stall(position("peer2peer", body))
    assert check_stall(moved) is not None  # seat 1 turns the ace up now


def test_nertz_shift_is_due_after_every_seat_had_a_full_pass() -> None:
    """Nertz rules: "In this game that happens automatically once every player has had a
    full pass with no play." docs §5: a seat with no stock and no waste has had its pass
    once it is stuck; the counters restart at every play by anyone."""
    body = (
        "seat 0 demon=7C work=KS|KH|KD|KC stock=2C,3D,4S,5D waste=-\n"
        "seat 1 demon={top} work=KS|KH|KD|KC stock=- waste=-"
    )
    state = play(position("nertz", body.format(top="7S")), "0 turn 5D 4S 3D")
    violation = check_stall(state)
    assert violation is not None
    assert violation.code is ViolationCode.STALL_NOT_DUE
    state = play(state, "0 turn 2C")
    assert state.turned_since_play == (4, 0)
    assert check_stall(state) is None  # seat 1 has nothing to turn and cannot play
    playable = play(position("nertz", body.format(top="AS")), "0 turn 5D 4S 3D", "0 turn 2C")
    assert check_stall(playable) is not None  # seat 1 has nothing to turn but can play
    after = play(playable, "1 demon>f+ AS")
    assert after.turned_since_play == (0, 0)
    assert check_stall(after) is not None


def test_slide_under_is_a_way_out_of_a_stall_in_peer2peer_only() -> None:
    """peer2peer rules: "A card one rank higher and the opposite colour may be slid
    underneath a work pile instead". The table and Nertz rules have no slide-under (docs
    §3)."""
    body = f"seat 0 demon=8C work=KS|KH|KD|7H stock=- waste=-\n{NEUTRAL_1}"
    for profile in ("table", "nertz"):
        state = position(profile, body)
        assert stall.is_stuck(state, 0)
        refused(state, "0 demon>u4 8C", ViolationCode.UNDER_NOT_ALLOWED)
    state = position("peer2peer", body)
    assert stall.progress_witness(state, 0) == "8C can go to a work pile"
    assert not stall.table_is_stuck(state)
    assert work(play(state, "0 demon>u4 8C"), 0) == "KS|KH|KD|8C,7H"


@pytest.mark.parametrize(
    ("card", "code"),
    [
        ("8S", ViolationCode.SAME_COLOUR),
        ("9D", ViolationCode.NOT_ONE_HIGHER),
        ("6H", ViolationCode.NOT_ONE_HIGHER),
    ],
)
def test_slide_under_wants_one_higher_opposite_colour(card: str, code: ViolationCode) -> None:
    """peer2peer rules: "A card one rank higher and the opposite colour may be slid
    underneath"."""
    state = position(
        "peer2peer", f"seat 0 demon={card} work=7C|KH|-|7D stock=- waste=-\n{NEUTRAL_1}"
    )
    refused(state, f"0 demon>u1 {card}", code)


def test_slide_under_sources_and_empty_piles() -> None:
    """docs §3 Decision: the demon top, the waste top or the exposed card of another work
    pile slides under a non-empty pile, one card only."""
    state = position(
        "peer2peer", f"seat 0 demon=8D work=7C|KH|-|9C,8H stock=- waste=8S\n{NEUTRAL_1}"
    )
    refused(state, "0 demon>u3 8D", ViolationCode.UNDER_EMPTY_PILE)
    refused(state, "0 w1>u1 7C", ViolationCode.SAME_PILE)
    refused(state, "0 waste>u1 8S", ViolationCode.SAME_COLOUR)
    assert work(play(state, "0 w4>u1 8H"), 0) == "8H,7C|KH|-|9C"
    assert work(play(state, "0 demon>u1 8D"), 0) == "8D,7C|KH|-|9C,8H"


def test_rearranging_work_piles_is_not_a_play() -> None:
    """docs §5: "A play is a card move to the centre, or out of the demon pile or the
    waste." A work-to-work move keeps the stall counters and the agreement."""
    body = f"seat 0 demon=8C work=KS|9D|TC|KD stock=5S,4H waste=-\n{NEUTRAL_1}"
    state = position("table", body, shifts=2, agreed="0")
    moved = play(state, "0 w2>w3 9D")
    assert (moved.shifts_since_play, moved.agreed) == (2, frozenset({0}))
    played = play(moved, "0 demon>w3 8C")
    assert (played.shifts_since_play, played.agreed) == (0, frozenset())
    nertz = play(position("nertz", body, turned="2,0"), "0 w2>w3 9D")
    assert nertz.turned_since_play == (2, 0)
    assert play(nertz, "0 demon>w3 8C").turned_since_play == (0, 0)


# -- 05 calling and the end of a hand ------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "code"),
    [
        ("table", ViolationCode.DEMON_NOT_EMPTY),
        ("peer2peer", ViolationCode.DEMON_NOT_EMPTY),
        ("nertz", ViolationCode.CALL_NOT_ALLOWED),
    ],
)
def test_only_an_empty_demon_pile_may_call(profile: str, code: ViolationCode) -> None:
    """Table rules: "Only someone with an empty demon pile may call “Demon!”".
    peer2peer rules: "The moment your demon pile is empty you may call". The Nertz rules
    have no call: the round ends by itself."""
    state = position(profile, f"seat 0 demon=AH work=KS|KH|KD|KC stock=- waste=-\n{NEUTRAL_1}")
    refused(state, "0 call", code)


EMPTY_DEMON = (
    "seat 0 demon=- work=KS|KH|KD|KC stock=- waste=AH\n"
    "seat 1 demon=7C work=KS|KH|KD|KC stock=- waste=AS"
)


@pytest.mark.parametrize("profile", ["table", "peer2peer"])
def test_calling_is_optional(profile: str) -> None:
    """Table rules: "calling is optional." peer2peer rules: "You do not have to call
    straight away. ... you can keep sending cards to the centre"."""
    state = position(profile, EMPTY_DEMON, rest="stock")
    assert {"0 call", "0 waste>f+ AH"} <= {str(m) for m in legal_moves(state, 0)}
    state = play(state, "0 waste>f+ AH")
    assert state.phase is Phase.PLAYING
    assert Move.parse("0 call") in legal_moves(state, 0)


def test_table_call_lets_cards_in_motion_land_for_one_second() -> None:
    """Table rules: "The call ends play immediately; cards already in motion may complete
    their move, but no new move starts." Table rules (French): "cartes en mouvement peuvent
    arriver, sans nouveaux gestes." docs §4: card moves at most call + 1000 ms land."""
    state = play(position("table", EMPTY_DEMON, rest="stock"), "0 call")
    assert (state.phase, state.ended_by, state.grace_until_ms) == (Phase.CALLED, 0, 6000)
    refused(state, "1 agree", ViolationCode.HAND_OVER)
    refused(state, "1 resign", ViolationCode.HAND_OVER)
    refused(state, "0 call", ViolationCode.HAND_OVER)
    turn = turn_move(position("table", EMPTY_DEMON, rest="stock"), 1)
    assert check_move(state, turn).code is ViolationCode.HAND_OVER  # type: ignore[union-attr]
    assert all(move.kind is MoveKind.PLAY for move in legal_moves(state, 1))
    state = advance_clock(state, 6000)
    landed = play(state, "1 waste>f+ AS")
    assert landed.phase is Phase.CALLED
    over = advance_clock(state, 6001)
    assert (over.phase, over.end_reason, over.ended_ms) == (Phase.ENDED, EndReason.CALL, 6001)
    refused(over, "1 waste>f+ AS", ViolationCode.HAND_OVER)
    assert legal_moves(over, 0) == legal_moves(over, 1) == []


def test_after_a_table_call_no_new_move_starts() -> None:
    """Table rules: "cards already in motion may complete their move, but no new move
    starts." One hand moves cards (Table rules: "Use one hand to move cards"), so each seat
    has at most one card in motion: once it landed, the seat's next card is a new move."""
    body = EMPTY_DEMON.replace("waste=AS", "waste=2S,AS")
    state = play(position("table", body, rest="stock"), "0 call")
    landed = play(advance_clock(state, 5500), "1 waste>f+ AS")
    refused(landed, "1 waste>f1 2S", ViolationCode.HAND_OVER)
    assert legal_moves(landed, 1) == []


def test_peer2peer_no_play_at_all_after_a_call() -> None:
    """peer2peer rules: "Once somebody has called, no further play is allowed at all, by
    anybody, including the caller." """
    state = play(position("peer2peer", EMPTY_DEMON, rest="stock"), "0 call")
    assert (state.phase, state.end_reason, state.ended_ms) == (Phase.ENDED, EndReason.CALL, 5000)
    refused(state, "1 waste>f+ AS", ViolationCode.HAND_OVER)
    refused(state, "0 waste>f+ AH", ViolationCode.HAND_OVER)
    assert legal_moves(state, 0) == legal_moves(state, 1) == []


@pytest.mark.parametrize(
    ("profile", "body", "move", "ends"),
    [
        ("nertz", "seat 0 demon=AH work=KS|KH|KD|KC stock=- waste=-", "0 demon>f+ AH", True),
        ("nertz", "seat 0 demon=6H work=7C|KH|KD|KS stock=- waste=-", "0 demon>w1 6H", True),
        ("nertz", "seat 0 demon=5C,AH work=KS|KH|KD|KC stock=- waste=-", "0 demon>f+ AH", False),
        ("table", "seat 0 demon=AH work=KS|KH|KD|KC stock=- waste=-", "0 demon>f+ AH", False),
        ("peer2peer", "seat 0 demon=AH work=KS|KH|KD|KC stock=- waste=-", "0 demon>f+ AH", False),
    ],
)
def test_nertz_round_ends_when_the_last_demon_card_leaves(
    profile: str, body: str, move: str, ends: bool
) -> None:
    """Nertz rules: "The round ends the moment a player plays the last card from their
    nertz pile." Table and peer2peer wait for a call."""
    state = position(
        profile, f"{body}\nseat 1 demon=7C work=KS|KH|KD|KC stock=- waste=AS", rest="stock"
    )
    after = play(state, move)
    if ends:
        assert (after.phase, after.end_reason, after.ended_by) == (
            Phase.ENDED,
            EndReason.DEMON_EMPTY,
            0,
        )
        refused(after, "1 waste>f+ AS", ViolationCode.HAND_OVER)
        assert score_hand(after).seats[0].demon_penalty == 0
    else:
        assert after.phase is Phase.PLAYING
        assert Move.parse("1 waste>f+ AS") in legal_moves(after, 1)


def test_peer2peer_three_second_countdown() -> None:
    """peer2peer rules: "After the readies are in there is a three second countdown, and
    then everybody starts at once." """
    rules = load_rules("peer2peer")
    state = State.deal(rules, [canonical_pack(0), canonical_pack(1)], hand=1, start_ms=10000)
    turn = Move.parse("0 turn 5D 6D 7D")
    assert check_move(state, turn).code is ViolationCode.TOO_EARLY  # type: ignore[union-attr]
    assert legal_moves(state, 0) == []
    early = advance_clock(state, 12999)
    assert check_move(early, turn).code is ViolationCode.TOO_EARLY  # type: ignore[union-attr]
    assert check_stall(early).code is ViolationCode.TOO_EARLY  # type: ignore[union-attr]
    started = advance_clock(state, 13000)
    assert check_move(started, turn) is None
    for name in ("table", "nertz"):
        dealt = State.deal(load_rules(name), [canonical_pack(0), canonical_pack(1)], 1, 10000)
        assert check_move(dealt, turn) is None


def test_peer2peer_ends_after_three_minutes_with_nothing_to_the_centre() -> None:
    """peer2peer rules: "What does end it is three minutes in which nobody at all has sent a card to
    the centre, which means the table is only shuffling". docs §4 Decision: the three
    minutes run once the table acts; a card onto a work pile does not count as one to the
    centre; a card to the centre restarts them; a move at the deadline itself is too late."""
    body = f"seat 0 demon=6H work=7C|KH|KD|KS stock=- waste=AH\n{NEUTRAL_1}"
    state = position("peer2peer", body, clock=10000, centre=10000, action=10000)
    state = play(advance_clock(state, 100000), "0 demon>w1 6H")
    assert next_deadline(state) == (190000, EndReason.NO_CENTRE)
    state = play(advance_clock(state, 150000), "0 waste>f+ AH")
    assert next_deadline(state) == (450000, EndReason.ABANDONED)  # silent since: idle
    state = play(advance_clock(state, 150001), "0 demon>w2 QS")
    assert next_deadline(state) == (330000, EndReason.NO_CENTRE)
    assert advance_clock(state, 329999).phase is Phase.PLAYING
    over = advance_clock(state, 330000)
    assert (over.phase, over.end_reason, over.ended_ms) == (
        Phase.ENDED,
        EndReason.NO_CENTRE,
        330000,
    )
    refused(over, "0 resign", ViolationCode.HAND_OVER)
    late = advance_clock(state, 900000)
    assert (late.end_reason, late.ended_ms, late.clock_ms) == (EndReason.NO_CENTRE, 330000, 900000)


def test_a_silent_peer2peer_table_is_abandoned_after_five_minutes() -> None:
    """peer2peer rules: "the site's move deadline of five minutes is only a dead man's switch: if
    nothing at all happens for that long the match is abandoned and nobody is rated."
    docs §4 Decision: a table where nothing happens is not "only shuffling", so the
    three-minute rule leaves it to this one, and both rules can end a deal."""
    body = f"seat 0 demon=6H work=7C|KH|KD|KS stock=- waste=AH\n{NEUTRAL_1}"
    state = position("peer2peer", body, clock=10000, centre=10000, action=10000)
    assert next_deadline(state) == (310000, EndReason.ABANDONED)
    assert advance_clock(state, 309999).phase is Phase.PLAYING
    over = advance_clock(state, 310000)
    assert (over.phase, over.end_reason, over.ended_ms) == (
        Phase.ENDED,
        EndReason.ABANDONED,
        310000,
    )
    match = Match(state.rules, 2).record(score_hand(over))
    assert match.over and match.abandoned
    assert match.winners == ()


def test_a_first_action_after_three_silent_minutes_ends_the_deal_as_it_lands() -> None:
    """peer2peer rules: "three minutes in which nobody at all has sent a card to the centre" - once
    somebody acts after such a silence, the table is only shuffling and three minutes have
    passed: docs §4 Decision: the action lands and the deal ends one millisecond later,
    never earlier (no move already accepted is undone)."""
    body = f"seat 0 demon=6H work=7C|KH|KD|KS stock=- waste=AH\n{NEUTRAL_1}"
    state = position("peer2peer", body, clock=10000, centre=10000, action=10000)
    state = play(advance_clock(state, 250000), "0 demon>w1 6H")
    assert next_deadline(state) == (250001, EndReason.NO_CENTRE)
    assert advance_clock(state, 250000).phase is Phase.PLAYING  # a move at once still lands
    over = advance_clock(state, 250001)
    assert (over.phase, over.end_reason, over.ended_ms) == (
        Phase.ENDED,
        EndReason.NO_CENTRE,
        250001,
    )


@pytest.mark.parametrize("profile", ["table", "nertz"])
def test_a_silent_table_or_nertz_hand_never_ends_by_time(profile: str) -> None:
    """Table rules: "Play fresh shuffled hands until someone reaches at least 100 after
    scoring." Nertz rules: "the game ends when someone reaches the target (100 points, or
    50 for a short game)". Neither sets a clock, a time limit or an abandonment: docs §11,
    issue 29 item 24: a server cannot end such a match before its target by time, and
    ``Table.abandon`` is refused there (tests/test_table_server.py)."""
    body = f"seat 0 demon=6H work=7C|KH|KD|KS stock=- waste=AH\n{NEUTRAL_1}"
    state = position(profile, body, clock=10000, centre=10000, action=10000)
    assert state.rules.idle_abandon_ms is None and state.rules.no_centre_ms is None
    assert next_deadline(state) is None
    assert advance_clock(state, 10 * 3_600_000).phase is Phase.PLAYING  # ten silent hours


RESIGNATION = (
    f"foundation H 1000 {' '.join(f'{rank}H@1' for rank in 'A23456789TJQK')}\n"
    "seat 0 demon=7D work=KS|KC|KD|QC stock=- waste=-\n"
    "seat 1 demon=- work=KS|KC|KD|QS stock=- waste=-"
)


def test_resignation_ends_the_hand_against_that_player() -> None:
    """peer2peer rules: "A resignation or a missed deadline ends the game against that player." docs
    §6 Decision: the peer2peer profile's resignation ends the hand and the match."""
    state = play(position("peer2peer", RESIGNATION, rest="stock"), "1 resign")
    assert (state.phase, state.end_reason, state.ended_by) == (Phase.ENDED, EndReason.RESIGNED, 1)
    assert legal_moves(state, 0) == legal_moves(state, 1) == []
    scored = score_hand(state)
    assert scored.scores == (-2, 13)
    match = Match(state.rules, 2).record(scored)
    assert match.over
    assert match.winners == (0,)


@pytest.mark.parametrize("profile", ["table", "nertz"])
def test_rules_that_say_nothing_of_resigning_have_no_resignation(profile: str) -> None:
    """The table rules and the Nertz rules say nothing about resigning, and at a table of
    up to eight, one player's resignation ending everybody's match would be an invention.
    docs §6 Decision: those profiles have none (``end.resign`` ``refused``): a player who
    leaves stops moving, and the stuck and stall rules carry on without them."""
    state = position(profile, RESIGNATION, rest="stock")
    assert state.rules.resignation is Resignation.REFUSED
    refused(state, "1 resign", ViolationCode.RESIGN_NOT_ALLOWED)
    assert MoveKind.RESIGN not in {move.kind for move in legal_moves(state, 1)}


# -- 05/06 scoring -------------------------------------------------------------------


def _run(suit: str, owners: str, top: int = 1000) -> str:
    cards = " ".join(
        f"{rank}{suit}@{owner}" for rank, owner in zip("A23456789TJQK", owners, strict=False)
    )
    return f"foundation {suit} {top} {cards}"


def test_worked_score_of_the_table_rules() -> None:
    """Table rules: "You placed 24 cards on common foundations and still have three demon
    cards:24-2x3=18. Another player calls after placing 20 with no demon cards:20-0=20."
    "Sort all shared foundation cards by back design." "Stock, waste and work columns score
    nothing." """
    centre = "\n".join(
        [
            _run("C", "0000000000000"),  # 13 for seat 0, a set-aside king pile
            _run("D", "0101010101010"),  # 7 for seat 0, 6 for seat 1
            _run("H", "0000"),  # 4 for seat 0: 24 in all
            _run("S", "1111111111111"),  # 13 for seat 1
            _run("H", "1"),  # 1 for seat 1: 20 in all
        ]
    )
    body = (
        f"{centre}\nseat 0 demon=5H,6H,7H work=KH|QS|-|- stock=- waste=-\n"
        "seat 1 demon=- work=-|-|-|- stock=- waste=-"
    )
    state = position("table", body, rest="stock", phase="ended", end="call", by=1, ended=5000)
    scored = score_hand(state)
    assert scored.scores == (18, 20)
    assert [len(seat.placed) for seat in scored.seats] == [24, 20]
    assert [seat.demon_penalty for seat in scored.seats] == [-6, 0]
    assert faces(scored.seats[0].demon_left) == "5H,6H,7H"
    assert list(scored.seats[1].placed) == sorted(scored.seats[1].placed, key=lambda c: c.index)
    match = Match(state.rules, 2).record(scored)
    assert not match.over  # "the call alone is not a guaranteed match victory"


def test_worked_score_of_nertz() -> None:
    """Nertz rules: "A player who goes out with 20 cards on the foundations scores 20; a
    player with 5 cards up and 6 left in the nertz pile scores 5 - 12 = -7." """
    centre = "\n".join([_run("C", "00000"), _run("S", "1111111111111"), _run("H", "1111111")])
    body = f"{centre}\nseat 0 demon=2H,3H,4H,5H,6H,7H work=-|-|-|- stock=- waste=-\n"
    body += "seat 1 demon=- work=-|-|-|- stock=- waste=-"
    header = {"phase": "ended", "end": "demon_empty", "by": 1, "ended": 5000}
    state = position("nertz", body, rest="stock", **header)
    assert score_hand(state).scores == (-7, 20)
    variant = replace(load_rules("nertz"), points_per_demon_card=-1)  # the Nertz "-1" variation
    assert score_hand(position(variant, body, rest="stock", **header)).scores == (-1, 20)


def test_score_needs_an_ended_hand() -> None:
    """Table rules: "Sort all shared foundation cards by back design" happens once play
    ended."""
    with pytest.raises(ValueError, match="not ended"):
        score_hand(
            position("table", f"seat 0 demon=AH work=KS|KH|KD|KC stock=- waste=-\n{NEUTRAL_1}")
        )


# -- 05 the match ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scores", "over", "winners"),
    [
        ([(60, 40), (39, 50)], False, ()),
        ([(60, 40), (40, 50)], True, (0,)),
        ([(60, 40), (45, 65)], True, (0, 1)),
        ([(90, 10), (18, 20)], True, (0,)),
        ([(60, 40), (-5, 70)], True, (1,)),
    ],
    ids=["99-not-yet", "100-ends", "shared-victory", "call-not-a-victory", "overtaken"],
)
def test_table_match_to_100(
    scores: list[tuple[int, int]], over: bool, winners: tuple[int, ...]
) -> None:
    """Table rules: "Play fresh shuffled hands until someone reaches at least 100 after
    scoring. Highest cumulative total wins. Our tie agreement shares the victory if highest
    totals are equal." """
    match = match_of("table", *scores)
    assert (match.over, match.winners) == (over, winners)


def test_table_blocked_hand_may_end_the_match() -> None:
    """Table rules: "A blocked hand scores normally and may end the match." """
    match = Match(load_rules("table"), 2).record(hand(1, (70, 20)))
    match = match.record(hand(2, (31, -8), EndReason.BLOCKED, by=None))
    assert (match.totals, match.over, match.winners) == ((101, 12), True, (0,))


@pytest.mark.parametrize(
    ("scores", "winners"), [((18, 20), (1,)), ((5, 5), (0, 1)), ((-7, -7), (0, 1))]
)
def test_peer2peer_one_deal_decides(scores: tuple[int, int], winners: tuple[int, ...]) -> None:
    """peer2peer rules: "ONE DEAL DECIDES THE MATCH. The highest score takes it". The text
    does not say what equal highest scores do. docs §8 Decision: they share it
    (``lead_tie`` ``share``), as the table rules' "tie agreement shares the victory if
    highest totals are equal"; no second deal is played, since one deal decides."""
    match = match_of("peer2peer", scores)
    assert (match.over, match.winners) == (True, winners)
    with pytest.raises(ValueError, match="over"):
        match.record(hand(2, (1, 1)))


def test_nertz_tie_for_the_lead_plays_another_round() -> None:
    """Nertz rules: "the game ends when someone reaches the target (100 points, or 50 for a
    short game). If two players tie for the lead, another round is played." """
    tied = match_of("nertz", (60, 40), (45, 65))
    assert tied.totals == (105, 105)
    assert not tied.over
    assert tied.winners == ()
    decided = tied.record(hand(3, (-2, 3)))
    assert (decided.over, decided.winners) == (True, (1,))
    assert match_of("nertz", (60, 40), (40, 10)).winners == (0,)
    short = replace(load_rules("nertz"), target=50)
    assert match_of(short, (30, 20), (20, 10)).winners == (0,)
    assert not match_of(short, (30, 20), (20, 30)).over


def test_nertz_set_number_of_rounds_variant() -> None:
    """Nertz rules: "playing a set number of rounds instead of to a target"
    (``max_hands``); a tied lead still plays on."""
    rounds = replace(load_rules("nertz"), max_hands=2)
    assert match_of(rounds, (10, 5), (3, 4)).winners == (0,)
    assert not match_of(rounds, (10, 5), (3, 8)).over


def test_resignation_ends_the_match_against_the_resigner() -> None:
    """peer2peer rules: "A resignation ... ends the game against that player." docs §8: the
    others share the victory by the usual rule."""
    resigned = hand(1, (50, 50, 60), EndReason.RESIGNED, by=2)
    match = Match(load_rules("peer2peer"), 3).record(resigned)
    assert (match.over, match.winners) == (True, (0, 1))


# -- profiles ------------------------------------------------------------------------

DOCUMENTED = {  # docs/rules.md §9, column by column
    "table": (2, 8, 4, 3, False, 0, True, 1000, False, "refused", "table_stuck", True,
              "full_cycle", 0, None, None, 1, -2, 100, None, "share"),
    "peer2peer": (2, 4, 4, 3, True, None, True, 0, False, "ends_match", "table_stuck", False,
                  "one_shift", 3000, 180000, 300000, 1, -2, None, 1, "share"),
    "nertz": (2, 4, 4, 3, False, None, False, 0, True, "refused", "full_pass", False,
              "full_cycle", 0, None, None, 1, -2, 100, None, "play_on"),
}  # fmt: skip


@pytest.mark.parametrize("profile", PROFILES)
def test_profiles_are_the_documented_ones(profile: str) -> None:
    """docs §9: where the rule sets disagree, each profile follows its own - the table of
    fields. peer2peer rules: "Two to four players" ... "three second countdown" ... "three
    minutes"; Nertz rules: "target (100 points ...)"; Table rules: "until someone reaches
    at least 100"."""
    r = load_rules(profile)
    actual = (
        r.min_players, r.max_players, r.work_piles, r.turn_count, r.slide_under,
        r.tie_window_ms, r.call_allowed, r.call_grace_ms, r.end_on_empty_demon,
        r.resignation.value, r.stall_trigger.value, r.stall_by_agreement,
        r.blocked_after.value, r.countdown_ms, r.no_centre_ms,
        r.idle_abandon_ms, r.points_per_foundation_card, r.points_per_demon_card, r.target,
        r.max_hands, r.lead_tie.value,
    )  # fmt: skip
    assert actual == DOCUMENTED[profile]
    assert r.to_document()["layout"]["demon_cards"] == 13
    assert Rules.from_document(r.to_document()) == r


def test_seed_003_variants_load_from_a_profile_document(tmp_path: Path) -> None:
    """Nertz rules: "Common variations: five work piles instead of four, turning the stock
    one card at a time, scoring -1 instead of -2 per card left, and playing a set number of
    rounds instead of to a target." (docs §9: a variant is another document)"""
    document = builtin_document("nertz")
    document.update(name="nertz-variant", layout={"demon_cards": 13, "work_piles": 5})
    document.update(stock={"turn": 1}, scoring={"per_foundation_card": 1, "per_demon_card": -1})
    document["match"] = {"target": None, "max_hands": 5, "lead_tie": "play_on"}
    path = tmp_path / "variant.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    rules = load_rules(str(path))
    assert (rules.work_piles, rules.turn_count, rules.points_per_demon_card) == (5, 1, -1)
    assert (rules.target, rules.max_hands) == (None, 5)
    document["stock"] = {"turn": 2}
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ProfileError, match="turn"):
        load_rules(str(path))


def test_a_move_breaking_two_rules_always_gets_the_same_code() -> None:
    """docs §3: "Checks run in a fixed order ... seat; phase; clock; source pile exists and
    is not empty; only one card from the demon or the waste; the named cards are the ones
    there; then the target." (Table rules: "Move one card at a time")"""
    body = f"seat 0 demon=5C,4D work=7C|KH|KD|KS stock=- waste=-\n{NEUTRAL_1}"
    state = position("table", body)
    refused(state, "0 waste>w9 5C 4D", ViolationCode.EMPTY_PILE)
    refused(state, "0 w9>w1 5C", ViolationCode.NO_SUCH_PILE)
    refused(state, "0 demon>f9 9S 8D", ViolationCode.ONE_CARD_ONLY)
    refused(state, "0 demon>f9 9S", ViolationCode.CARD_MISMATCH)
    refused(state, "0 demon>f9 4D", ViolationCode.NO_SUCH_PILE)
    refused(state, "0 demon>w9 4D", ViolationCode.NO_SUCH_PILE)
    refused(state, "0 w1>w1 7C", ViolationCode.SAME_PILE)
    refused(state, "0 demon>f1 4D", ViolationCode.NO_SUCH_PILE)
    ended = resigned(state, 1)
    refused(ended, "0 waste>w9 5C 4D", ViolationCode.HAND_OVER)
    refused(ended, "3 waste>w9 5C 4D", ViolationCode.NOT_A_SEAT)
    early = position("peer2peer", body, clock=2999)
    refused(early, "0 waste>w9 5C 4D", ViolationCode.TOO_EARLY)


# -- the engine agrees with itself -------------------------------------------------------


def _candidates(state: State, player: int) -> list[Move]:
    """Every move text worth trying: each suffix of each source onto each target."""
    seat = state.seats[player]
    piles = state.rules.work_piles + 1
    sources = [(DEMON, seat.demon), (WASTE, seat.waste)]
    sources += [(Place(Zone.WORK, i), pile) for i, pile in enumerate(seat.work)]
    targets = [NEW_FOUNDATION]
    targets += [Place(Zone.FOUNDATION, i) for i in range(len(state.foundations) + 1)]
    targets += [Place(zone, i) for zone in (Zone.WORK, Zone.UNDER) for i in range(piles)]
    moves = [
        Move(player, MoveKind.PLAY, source, target, pile[-length:])
        for source, pile in sources
        for length in range(1, min(len(pile), 14) + 1)
        for target in targets
    ]
    for length in range(1, 4):
        if len(seat.stock) >= length:
            moves.append(Move(player, MoveKind.TURN, cards=tuple(reversed(seat.stock[-length:]))))
            moves.append(Move(player, MoveKind.TURN, cards=seat.stock[-length:]))
    moves += [
        Move(player, kind)
        for kind in (MoveKind.RECYCLE, MoveKind.CALL, MoveKind.AGREE, MoveKind.RESIGN)
    ]
    return list(dict.fromkeys(moves))


def _shuffled(profile: str, seed: int, steps: int) -> State:
    """A dealt hand after some random legal moves, for the consistency test."""
    rng = random.Random(seed)
    packs = []
    for seat in range(2):
        pack = list(canonical_pack(seat))
        rng.shuffle(pack)
        packs.append(pack)
    rules = load_rules(profile)
    state = advance_clock(State.deal(rules, packs, hand=1, start_ms=0), rules.countdown_ms)
    for step in range(steps):
        moves = [
            m
            for m in legal_moves(state, step % 2)
            if m.kind in (MoveKind.PLAY, MoveKind.TURN, MoveKind.RECYCLE)
        ]
        plays = [m for m in moves if m.kind is MoveKind.PLAY]
        state = apply_move(state, rng.choice(plays or moves))
    return state


CONSISTENCY = {
    "table-tie": ("table", RACE, {}),
    "table-called": ("table", EMPTY_DEMON, {"phase": "called", "by": 0, "grace": 6000}),
    "peer2peer-under": (
        "peer2peer",
        "foundation D 5000 AD@1 2D@1\nseat 0 demon=8D work=7C|KH|-|9C,8H stock=4S,3D waste=8S\n"
        + NEUTRAL_1,
        {},
    ),
    "nertz-tails": (
        "nertz",
        "seat 0 demon=AS work=KS,QH,JC|QD|-|TD,9C,8H stock=5C,6C waste=2S\n" + NEUTRAL_1,
        {},
    ),
}


@pytest.mark.parametrize("name", [*CONSISTENCY, "table-dealt", "peer2peer-dealt", "nertz-dealt"])
def test_legal_moves_is_exactly_what_check_move_accepts(name: str) -> None:
    """docs §3: ``legal_moves`` lists every legal move, ``check_move`` explains refusals:
    the two agree, and checking never changes the position."""
    if name in CONSISTENCY:
        profile, body, header = CONSISTENCY[name]
        state = position(profile, body, rest="stock", **header)
        if name == "table-tie":
            state = play(state, "0 waste>f1 5H")
    else:
        state = _shuffled(name.removesuffix("-dealt"), seed=len(name), steps=40)
    before = state.to_text()
    for player in range(state.players):
        listed = legal_moves(state, player)
        assert len(set(listed)) == len(listed)
        accepted = [m for m in _candidates(state, player) if check_move(state, m) is None]
        assert set(accepted) == set(listed)
        for move in listed:
            assert Move.parse(str(move)) == move
            assert apply_move(state, move).problems() == []
    assert state.to_text() == before
