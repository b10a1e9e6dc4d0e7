"""Every card move and every refusal code (docs/rules.md §3)."""

from __future__ import annotations

import pytest

from racing_demon.game.engine import ViolationCode, check_move, legal_moves
from racing_demon.game.moves import DEMON, NEW_FOUNDATION, Move, MoveKind
from racing_demon.game.state import Phase

from conftest import S, build, cards, play, refused

# -- the stock and the waste --------------------------------------------------


def test_turn_three_keeps_packet_order_third_card_on_top() -> None:
    state = build("table", S(stock="9D 8C 7H 6S 5D", rest="demon"), S())
    after = play(state, "0 turn 5D 6S 7H")
    seat = after.seats[0]
    assert seat.waste == cards("5D 6S 7H", 0)  # 7H, the third card turned, is on top
    assert seat.stock == cards("9D 8C", 0)


def test_last_packet_of_two_goes_over_as_it_stands() -> None:
    state = build("table", S(stock="8C 9D", waste="AS 2S 3S", rest="demon"), S())
    after = play(state, "0 turn 9D 8C")
    assert after.seats[0].waste == cards("AS 2S 3S 9D 8C", 0)
    assert after.seats[0].stock == ()


def test_turn_one_variant_turns_a_single_card() -> None:
    from racing_demon.profiles import builtin_document, rules_from_document

    document = builtin_document("table")
    document["stock"]["turn"] = 1
    state = build(rules_from_document(document), S(stock="9D 8C 7H", rest="demon"), S())
    assert refused(state, "0 turn 7H 8C 9D").code is ViolationCode.CARD_MISMATCH
    assert play(state, "0 turn 7H").seats[0].waste == cards("7H", 0)


def test_turn_names_the_wrong_cards() -> None:
    state = build("table", S(stock="9D 8C 7H", rest="demon"), S())
    violation = refused(state, "0 turn 9D 8C 7H")
    assert violation.code is ViolationCode.CARD_MISMATCH
    assert violation.expected == "7H 8C 9D"
    assert violation.found == "9D 8C 7H"


def test_turn_with_empty_stock() -> None:
    state = build("table", S(waste="4C", rest="demon"), S())
    assert refused(state, "0 turn 4C").code is ViolationCode.STOCK_EMPTY


def test_recycle_turns_the_waste_over_unshuffled() -> None:
    state = build("table", S(waste="2C 3C 4C 5C 6C", rest="demon"), S())
    after = play(state, "0 recycle")
    assert after.seats[0].waste == ()
    # The stock's top is the waste's bottom: the order comes round again unchanged.
    after = play(after, "0 turn 2C 3C 4C")
    assert after.seats[0].waste == cards("2C 3C 4C", 0)


def test_recycle_refused_while_the_stock_has_cards() -> None:
    # Never attach leftovers under a fresh packet: recycle only an empty stock.
    state = build("table", S(stock="9D", waste="2C 3C", rest="demon"), S())
    assert refused(state, "0 recycle").code is ViolationCode.STOCK_NOT_EMPTY


def test_recycle_with_nothing_to_recycle() -> None:
    state = build("table", S(rest="demon"), S())
    assert refused(state, "0 recycle").code is ViolationCode.WASTE_EMPTY


# -- foundations ----------------------------------------------------------------


@pytest.mark.parametrize("source", ["demon", "waste", "w1"])
def test_an_ace_from_any_available_place_starts_a_foundation(source: str) -> None:
    seat = {"demon": S(demon="AH"), "waste": S(waste="AH"), "w1": S(work=("AH", "", "", ""))}
    state = build("table", seat[source], S())
    after = play(state, f"0 {source}>f+ AH")
    assert len(after.foundations) == 1
    assert after.foundations[0].levels == (cards("AH", 0),)


def test_next_rank_of_the_same_suit_builds_on_any_players_foundation() -> None:
    state = build("table", S(demon="2H"), S(), foundations=["AH@1"])
    after = play(state, "0 demon>f1 2H")
    assert [str(c) for c in after.foundations[0].cards()] == ["AH@1", "2H@0"]


def test_several_foundations_of_one_suit() -> None:
    state = build("table", S(demon="AH"), S(), foundations=["AH@1"])
    after = play(state, "0 demon>f+ AH")
    assert [f.suit for f in after.foundations] == [after.foundations[0].suit] * 2


@pytest.mark.parametrize(
    ("move", "code"),
    [
        ("0 demon>f+ 2H", ViolationCode.NOT_AN_ACE),
        ("0 waste>f1 3S", ViolationCode.WRONG_SUIT),
        ("0 w1>f1 4H", ViolationCode.NOT_NEXT_RANK),
        ("0 w2>f1 AH", ViolationCode.ACE_STARTS_NEW),
        ("0 demon>f2 2H", ViolationCode.NO_SUCH_PILE),
        ("0 w1>f1 9C 4H", ViolationCode.CARD_MISMATCH),
    ],
)
def test_foundation_refusals(move: str, code: ViolationCode) -> None:
    state = build(
        "table",
        S(demon="2H", waste="3S", work=("4H", "AH", "", "")),
        S(),
        foundations=["AH@1 2H@1"],
    )
    violation = refused(state, move)
    assert violation.code is code
    assert violation.seat == 0


def test_foundation_refusal_names_expected_and_found() -> None:
    state = build("table", S(work=("4H", "", "", "")), S(), foundations=["AH@1 2H@1"])
    violation = refused(state, "0 w1>f1 4H")
    assert (violation.expected, violation.found) == ("3H", "4H")
    assert violation.piles == ("w1", "f1")
    assert [str(card) for card in violation.cards] == ["4H@0"]


def test_a_work_tail_never_goes_to_a_foundation_in_one_move() -> None:
    state = build("table", S(work=("4C 3H", "", "", "")), S(), foundations=["AH@1 2H@1"])
    assert refused(state, "0 w1>f1 4C 3H").code is ViolationCode.ONE_CARD_ONLY
    assert play(state, "0 w1>f1 3H").seats[0].work[0] == cards("4C", 0)


def test_lost_race_is_foundation_taken_and_the_card_stays() -> None:
    state = build("peer2peer", S(demon="3H"), S(waste="3H"), foundations=["AH@0 2H@1"])
    state = play(state, "1 waste>f1 3H")  # seat 1 wins the race
    violation = refused(state, "0 demon>f1 3H")
    assert violation.code is ViolationCode.FOUNDATION_TAKEN
    assert violation.lost_race
    assert state.seats[0].demon[-1] == cards("3H", 0)[0]  # nothing moved


def test_complete_king_pile_is_set_aside_and_takes_nothing() -> None:
    hearts = " ".join(f"{r}H@1" for r in "A23456789TJQK")
    state = build("table", S(demon="KH"), S(), foundations=[hearts], clock=10)
    assert state.foundations[0].complete
    assert refused(state, "0 demon>f1 KH").code is ViolationCode.FOUNDATION_TAKEN
    assert all(m.target is None or str(m.target) != "f1" for m in legal_moves(state, 0))


# -- the table tie rule ---------------------------------------------------------------


def test_table_tie_same_millisecond_both_stay_as_one_level() -> None:
    state = build("table", S(demon="3H"), S(waste="3H"), foundations=["AH@0 2H@1"], clock=500)
    state = play(state, "1 waste>f1 3H", "0 demon>f1 3H")  # both at 500 ms
    foundation = state.foundations[0]
    assert foundation.rank == 3
    assert [str(c) for c in foundation.levels[-1]] == ["3H@1", "3H@0"]


def test_after_a_tie_the_next_card_builds_on_the_shared_rank() -> None:
    state = build("table", S(demon="3H"), S(waste="4H 3H"), foundations=["AH@0 2H@1"], clock=7)
    state = play(state, "1 waste>f1 3H", "0 demon>f1 3H", "1 waste>f1 4H")
    assert state.foundations[0].rank == 4


def test_table_no_tie_one_millisecond_later() -> None:
    from racing_demon.game.engine import advance_clock

    state = build("table", S(demon="3H"), S(waste="3H"), foundations=["AH@0 2H@1"], clock=7)
    state = advance_clock(play(state, "1 waste>f1 3H"), 8)
    assert refused(state, "0 demon>f1 3H").code is ViolationCode.FOUNDATION_TAKEN


@pytest.mark.parametrize("profile", ["peer2peer", "nertz"])
def test_other_profiles_have_no_tie_rule(profile: str) -> None:
    state = build(profile, S(demon="3H"), S(waste="3H"), foundations=["AH@0 2H@1"])
    state = play(state, "1 waste>f1 3H")
    assert refused(state, "0 demon>f1 3H").code is ViolationCode.FOUNDATION_TAKEN


# -- work piles ---------------------------------------------------------------------


@pytest.mark.parametrize("source", ["demon", "waste"])
def test_top_card_onto_work_pile_one_lower_opposite_colour(source: str) -> None:
    work = ("7S", "", "", "")
    seat = S(demon="6H", work=work) if source == "demon" else S(waste="6H", work=work)
    after = play(build("table", seat, S()), f"0 {source}>w1 6H")
    assert after.seats[0].work[0] == cards("7S 6H", 0)


@pytest.mark.parametrize(
    ("card", "code"),
    [
        ("8H", ViolationCode.NOT_ONE_LOWER),  # right colour, wrong rank
        ("5S", ViolationCode.NOT_ONE_LOWER),  # wrong rank and wrong colour: rank is checked first
        ("6C", ViolationCode.SAME_COLOUR),  # right rank, wrong colour
    ],
)
def test_work_pile_refusals(card: str, code: ViolationCode) -> None:
    state = build("table", S(demon=card, work=("7S", "", "", "")), S())
    violation = refused(state, f"0 demon>w1 {card}")
    assert violation.code is code
    assert violation.found == card


def test_any_available_card_fills_an_empty_work_pile() -> None:
    state = build("table", S(demon="9C", waste="KD", work=("7S", "", "", "")), S())
    after = play(state, "0 demon>w2 9C", "0 waste>w3 KD", "0 w1>w4 7S")
    assert after.seats[0].work == ((), cards("9C", 0), cards("KD", 0), cards("7S", 0))


def test_a_correctly_ordered_tail_moves_together() -> None:
    state = build("table", S(work=("KS QH JC TD", "QD", "", "")), S())
    after = play(state, "0 w1>w2 JC TD")
    assert after.seats[0].work[:2] == (cards("KS QH", 0), cards("QD JC TD", 0))
    after = play(after, "0 w2>w3 QD JC TD")
    assert after.seats[0].work[1:3] == ((), cards("QD JC TD", 0))


def test_tail_must_be_the_real_tail() -> None:
    state = build("table", S(work=("KS QH JC TD", "QD", "", "")), S())
    assert refused(state, "0 w1>w2 JC").code is ViolationCode.CARD_MISMATCH
    assert refused(state, "0 w1>w2 QH JC TD").code is ViolationCode.NOT_ONE_LOWER


@pytest.mark.parametrize(
    ("move", "code"),
    [
        ("0 demon>w1 6H 5C", ViolationCode.ONE_CARD_ONLY),
        ("0 w1>w1 7S", ViolationCode.SAME_PILE),
        ("0 demon>w5 6H", ViolationCode.NO_SUCH_PILE),
        ("0 w3>w1 6H", ViolationCode.EMPTY_PILE),
        ("0 waste>w1 6H", ViolationCode.EMPTY_PILE),
        ("0 demon>w1 5D", ViolationCode.CARD_MISMATCH),
    ],
)
def test_source_refusals(move: str, code: ViolationCode) -> None:
    state = build("table", S(demon="5C 6H", work=("7S", "", "", "")), S())
    assert refused(state, move).code is code


def test_a_player_touches_only_their_own_layout() -> None:
    # Moves name the moving seat's cards only: another pack's card cannot be named.
    with pytest.raises(ValueError, match="own pack"):
        Move(0, MoveKind.PLAY, DEMON, NEW_FOUNDATION, cards("AH", 1))
    state = build("table", S(demon="5C"), S(demon="AH"))
    assert refused(state, "0 demon>f+ AH").code is ViolationCode.CARD_MISMATCH


def test_the_next_demon_card_comes_up() -> None:
    state = build("table", S(demon="9C 2H AH"), S())
    after = play(state, "0 demon>f+ AH", "0 demon>f1 2H")
    assert after.seats[0].demon[-1] == cards("9C", 0)[0]


# -- slide under (peer2peer) -----------------------------------------------------------


def test_slide_under_puts_a_card_one_higher_opposite_colour_under_the_head() -> None:
    state = build("peer2peer", S(demon="8H", work=("7S 6D", "", "", "")), S(), clock=3000)
    after = play(state, "0 demon>u1 8H")
    assert after.seats[0].work[0] == cards("8H 7S 6D", 0)


@pytest.mark.parametrize(
    ("profile", "demon", "work", "code"),
    [
        ("table", "8H", "7S", ViolationCode.UNDER_NOT_ALLOWED),
        ("nertz", "8H", "7S", ViolationCode.UNDER_NOT_ALLOWED),
        ("peer2peer", "9H", "7S", ViolationCode.NOT_ONE_HIGHER),
        ("peer2peer", "8S", "7C", ViolationCode.SAME_COLOUR),
        ("peer2peer", "8H", "", ViolationCode.UNDER_EMPTY_PILE),
    ],
)
def test_slide_under_refusals(profile: str, demon: str, work: str, code: ViolationCode) -> None:
    state = build(profile, S(demon=demon, work=(work, "", "", "")), S(), clock=3000)
    assert refused(state, f"0 demon>u1 {demon}").code is code


def test_slide_under_takes_one_card() -> None:
    state = build("peer2peer", S(work=("7S", "9C 8H", "", "")), S(), clock=3000)
    assert refused(state, "0 w2>u1 9C 8H").code is ViolationCode.ONE_CARD_ONLY
    assert play(state, "0 w2>u1 8H").seats[0].work[0] == cards("8H 7S", 0)


# -- seats, call, agree ----------------------------------------------------------------


def test_unknown_seat() -> None:
    state = build("table", S(), S())
    assert refused(state, "2 recycle").code is ViolationCode.NOT_A_SEAT
    assert legal_moves(state, 2) == []
    assert legal_moves(state, -1) == []


def test_call_needs_an_empty_demon_pile() -> None:
    state = build("table", S(demon="5C"), S())
    violation = refused(state, "0 call")
    assert violation.code is ViolationCode.DEMON_NOT_EMPTY
    assert (violation.expected, violation.found) == ("0 cards", "1 card")
    empty = build("table", S(rest="stock"), S())
    assert check_move(empty, Move.parse("0 call")) is None


def test_nertz_has_no_call() -> None:
    state = build("nertz", S(), S())
    assert refused(state, "0 call").code is ViolationCode.CALL_NOT_ALLOWED


def test_agreement_only_where_the_profile_has_it() -> None:
    assert refused(build("peer2peer", S(), S(), clock=3000), "0 agree").code is (
        ViolationCode.AGREEMENT_NOT_ALLOWED
    )
    state = play(build("table", S(), S()), "0 agree")
    assert refused(state, "0 agree").code is ViolationCode.ALREADY_AGREED


def test_resign_ends_the_hand() -> None:
    state = play(build("peer2peer", S(demon="5C"), S(), clock=5000), "1 resign")
    assert state.phase is Phase.ENDED
    assert state.ended_by == 1
    assert refused(state, "0 turn 4C 3C 2C").code is ViolationCode.HAND_OVER
    assert legal_moves(state, 0) == []


def test_is_tie_tells_a_tied_card_from_a_normal_one() -> None:
    from racing_demon.game.engine import is_tie

    state = build("table", S(demon="3H"), S(waste="4H 3H"), foundations=["AH@0 2H@1"], clock=9)
    first = Move.parse("1 waste>f1 3H")
    assert not is_tie(state, first)
    state = play(state, str(first))
    assert is_tie(state, Move.parse("0 demon>f1 3H"))
    assert not is_tie(state, Move.parse("1 waste>f1 4H"))
    assert not is_tie(state, Move.parse("0 demon>f+ 3H"))
