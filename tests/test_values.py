"""Cards, moves, profiles and positions: values and their text forms."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError, fields, replace
from pathlib import Path

import pytest

from racing_demon.game.cards import Card, Suit, canonical_pack
from racing_demon.game.engine import Violation, ViolationCode
from racing_demon.game.flow import Stall
from racing_demon.game.moves import Move, MoveKind, Place, Zone
from racing_demon.game.rules import Rules
from racing_demon.game.stall import check_stall
from racing_demon.game.state import State
from racing_demon.log.records import Record
from racing_demon.profiles import (
    BUILT_IN,
    ProfileError,
    builtin_document,
    load_rules,
    rules_from_document,
)

from conftest import S, build

ROOT = Path(__file__).resolve().parent.parent

# -- cards --------------------------------------------------------------------------


def test_a_pack_is_52_cards_aces_low_no_jokers() -> None:
    pack = canonical_pack(3)
    assert len(pack) == len(set(pack)) == 52
    assert {card.rank for card in pack} == set(range(1, 14))
    assert all(card.owner == 3 for card in pack)
    assert [card.face for card in pack[:3]] == ["AC", "2C", "3C"]
    assert pack[-1].face == "KS"
    assert [card.index for card in pack] == list(range(52))


@pytest.mark.parametrize("card", canonical_pack(0) + canonical_pack(11))
def test_card_text_round_trip(card: Card) -> None:
    assert Card.parse(str(card)) == card
    assert eval(repr(card)) == card


def test_card_faces_and_display() -> None:
    card = Card.parse("TH@2")
    assert (card.face, card.owner, card.display(), card.is_red) == ("TH", 2, "10♥", True)
    assert Card.parse("KS@0").display() == "K♠"
    assert [suit.symbol for suit in Suit] == ["♣", "♦", "♥", "♠"]


@pytest.mark.parametrize(
    "text", ["5H", "5H@", "5H@x", "1H@0", "5X@0", "10H@0", "5H@-1", "5h@0", "5H@01", "5H@٣"]
)
def test_bad_card_text_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        Card.parse(text)


# -- moves --------------------------------------------------------------------------

MOVES = [
    "0 turn 4C 9H KD",
    "3 turn 2S",
    "1 recycle",
    "0 demon>f+ AH",
    "1 waste>f3 5H",
    "0 w2>w4 9D 8S 7H",
    "2 demon>u1 8C",
    "0 w5>f12 QD",
    "0 call",
    "1 agree",
    "2 resign",
]


@pytest.mark.parametrize("text", MOVES)
def test_move_text_round_trip(text: str) -> None:
    move = Move.parse(text)
    assert str(move) == text
    assert Move.parse(str(move)) == move
    assert eval(repr(move)) == move


def test_move_fields() -> None:
    move = Move.parse("1 waste>f3 5H")
    assert move.kind is MoveKind.PLAY
    assert move.source == Place(Zone.WASTE)
    assert move.target == Place(Zone.FOUNDATION, 2)
    assert move.cards == (Card.parse("5H@1"),)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "0",
        "x turn",
        "01 recycle",
        "0  recycle",
        "0 recycle ",
        "0 jump",
        "0 turn",
        "0 recycle 5H",
        "0 demon>f+",
        "0 demon>w0 5H",
        "0 demon>w01 5H",
        "0 f1>w1 5H",
        "0 demon>demon 5H",
        "0 waste>stock 5H",
        "0 demon>w1 5H@1",
        "0 demon>w1 10H",
        "0 call 5H",
    ],
)
def test_bad_move_text_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        Move.parse(text)


def test_moves_sort_deterministically() -> None:
    moves = [Move.parse(text) for text in MOVES if text.startswith("0 ")]
    ordered = sorted(moves, key=Move.sort_key)
    assert [str(m) for m in ordered] == [
        "0 turn 4C 9H KD",
        "0 demon>f+ AH",
        "0 w2>w4 9D 8S 7H",
        "0 w5>f12 QD",
        "0 call",
    ]


# -- profiles -----------------------------------------------------------------------


@pytest.mark.parametrize("name", BUILT_IN)
def test_builtin_profiles_round_trip(name: str) -> None:
    rules = load_rules(name)
    assert rules.name == name
    assert Rules.from_document(rules.to_document()) == rules
    assert rules.to_document() == builtin_document(name)


def test_profiles_follow_their_seeds() -> None:
    table, peer, nertz = (load_rules(name) for name in ("table", "peer2peer", "nertz"))
    assert (table.tie_window_ms, table.stall_by_agreement, table.target) == (0, True, 100)
    assert (peer.slide_under, peer.max_hands, peer.no_centre_ms) == (True, 1, 180000)
    assert (peer.countdown_ms, peer.idle_abandon_ms, peer.call_grace_ms) == (3000, 300000, 0)
    assert (nertz.call_allowed, nertz.end_on_empty_demon, nertz.lead_tie) == (
        False,
        True,
        "play_on",
    )
    assert {r.points_per_demon_card for r in (table, peer, nertz)} == {-2}
    assert {(r.work_piles, r.turn_count) for r in (table, peer, nertz)} == {(4, 3)}


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("layout", "work_piles"), 6, "work_piles"),
        (("stock", "turn"), 2, "turn"),
        (("scoring", "per_demon_card"), 2, "per_demon_card"),
        (("players", "min"), 5, "min 5 is above max"),
        (("end", "on_empty_demon"), False, "on_empty_demon"),  # nertz has no call
        (("time", "countdown_ms"), 1.5, "countdown_ms"),
        (("match", "target"), None, "match"),  # neither a target nor a hand limit
    ],
)
def test_invalid_profiles_are_refused_with_reasons(
    path: tuple[str, str], value: object, message: str
) -> None:
    document = builtin_document("nertz")
    document[path[0]][path[1]] = value
    with pytest.raises(ProfileError, match=message):
        rules_from_document(document)


def test_a_target_no_score_can_reach_needs_a_hand_limit() -> None:
    """Issue 12: with no card scoring above zero only the cap on hands would end the match."""
    document = builtin_document("nertz")
    document["scoring"]["per_foundation_card"] = 0
    with pytest.raises(ProfileError, match=r"target 100 cannot be reached .* set max_hands"):
        rules_from_document(document)
    document["match"]["max_hands"] = 5
    assert rules_from_document(document).max_hands == 5


def test_unknown_profile_fields_are_refused() -> None:
    document = builtin_document("table")
    document["house_rule"] = True
    with pytest.raises(ProfileError, match="house_rule"):
        rules_from_document(document)


def test_load_profile_from_file(tmp_path: Path) -> None:
    document = builtin_document("table")
    document["name"] = "five-piles"
    document["layout"]["work_piles"] = 5
    path = tmp_path / "five.json"
    path.write_text(json.dumps(document))
    assert load_rules(str(path)).work_piles == 5
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(ProfileError, match="not JSON"):
        load_rules(str(tmp_path / "bad.json"))
    with pytest.raises(ProfileError, match="cannot read"):
        load_rules(str(tmp_path / "missing.json"))
    with pytest.raises(ProfileError, match="unknown profile"):
        load_rules("tabel")


def test_packaged_schemas_equal_the_top_level_copies() -> None:
    packaged = sorted((ROOT / "src/racing_demon/schemas").glob("*.json"))
    top_level = sorted((ROOT / "schemas").glob("*.json"))
    assert [p.name for p in packaged] == [p.name for p in top_level]
    for mine, theirs in zip(packaged, top_level, strict=True):
        assert mine.read_bytes() == theirs.read_bytes(), mine.name


# -- positions ------------------------------------------------------------------------


def test_deal_layout_follows_the_documented_order() -> None:
    rules = load_rules("table")
    packs = [canonical_pack(0), canonical_pack(1)]
    state = State.deal(rules, packs, hand=1, start_ms=0)
    seat = state.seats[0]
    assert len(seat.demon) == 13 and seat.demon[-1].face == "KC"  # p[12] is the face-up top
    assert [pile[0].face for pile in seat.work] == ["AD", "2D", "3D", "4D"]
    assert len(seat.stock) == 35 and seat.stock[-1].face == "5D"  # p[17] is turned first
    assert seat.waste == ()
    assert not state.problems()


def test_five_work_piles_leave_34_in_the_stock() -> None:
    document = builtin_document("table")
    document["layout"]["work_piles"] = 5
    state = State.deal(rules_from_document(document), [canonical_pack(0), canonical_pack(1)], 1, 0)
    assert [len(state.seats[0].work), len(state.seats[0].stock)] == [5, 34]


def test_deal_refuses_wrong_player_counts_and_foreign_packs() -> None:
    rules = load_rules("nertz")
    with pytest.raises(ValueError, match="2 to 4 players"):
        State.deal(rules, [canonical_pack(i) for i in range(5)], 1, 0)
    with pytest.raises(ValueError, match="another pack"):
        State.deal(rules, [canonical_pack(1), canonical_pack(1)], 1, 0)


def test_state_text_round_trip_and_digest() -> None:
    state = build(
        "table",
        S(demon="9C 3D", work=("KS QH", "", "9D 8C", "KH"), waste="7D"),
        S(demon="5S"),
        foundations=["AH@0 2H@1 3H@0,3H@1", "AS@1"],
        clock=1500,
        agreed=frozenset({1}),
    )
    text = state.to_text()
    assert text.startswith(
        f"state racing-demon/state/v1 profile=table rules={state.rules.digest()} "
    )
    assert text.splitlines()[1] == "foundation H 0 AH@0 2H@1 3H@0,3H@1"
    assert State.parse(text, state.rules) == state
    assert State.parse(text, state.rules).digest() == state.digest()
    other = build("table", S(demon="9C 3D"), S(demon="5S"))
    assert other.digest() != state.digest()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("profile=table", "profile=nertz", "profile"),
        ("rules=", "rules=0", "with rules"),
        ("racing-demon/state/v1", "racing-demon/state/v2", "starts with"),
        ("hand=1 ", "", "fields"),
        ("clock=0 ", "clock=0_0 ", "canonical form"),
        ("clock=0 ", "clock=00 ", "canonical form"),
        ("clock=0 ", "clock=-1 ", "canonical form"),
        ("AH@0", "AH@00", "bad card"),
        ("seat 1 ", "seat 2 ", "in order"),
        ("foundation H", "founding H", "unknown state line"),
    ],
)
def test_bad_state_text_is_refused(old: str, new: str, message: str) -> None:
    text = build("table", S(demon="9C"), S(demon="5S"), foundations=["AH@0"]).to_text()
    with pytest.raises(ValueError, match=message):
        State.parse(text.replace(old, new), load_rules("table"))


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ("foundation H 0 AH@0", "foundation H 0", "f1 is empty"),
        ("phase=playing", "phase=called", "grace None"),
        ("phase=playing", "phase=ended", "with end None"),
        ("end=-", "end=call", "phase playing with end call"),
        ("grace=-", "grace=100", "phase playing with grace 100"),
        ("agreed=-", "agreed=5", "name no seat"),
        ("landed=-", "landed=1", "land after a call only"),
    ],
)
def test_invariants_catch_inconsistent_positions(old: str, new: str, problem: str) -> None:
    state = build("table", S(demon="9C"), S(demon="5S"), foundations=["AH@0"])
    text = state.to_text()
    assert old in text
    problems = State.parse(text.replace(old, new), state.rules).problems()
    assert any(problem in found for found in problems), problems


def test_invariants_catch_lost_duplicated_and_misbuilt_cards() -> None:
    from dataclasses import replace

    state = build("table", S(demon="9C", work=("KS QH", "", "", "")), S())
    seat = state.seats[0]
    lost = replace(state, seats=(replace(seat, demon=()), state.seats[1]))
    assert "missing ['9C@0']" in lost.problems()[0]
    duplicated = replace(state, seats=(replace(seat, waste=seat.demon), state.seats[1]))
    assert "repeated ['9C@0']" in duplicated.problems()[0]
    misbuilt_work = (seat.work[0][::-1], *seat.work[1:])
    misbuilt = replace(state, seats=(replace(seat, work=misbuilt_work), state.seats[1]))
    assert misbuilt.problems() == ["seat 0 w1: KS@0 does not go on QH@0"]


def test_a_parsed_card_is_one_shared_object() -> None:
    """A replay parses every card its moves name; the hands a match keeps must not hold a
    fresh copy of each, or verifying memory grows with the log (bench/memory_bench.py)."""
    assert Card.from_face("5H", 1) is Card.from_face("5H", 1)
    assert Card.parse("5H@1") is Move.parse("1 waste>f3 5H").cards[0]
    assert Card.from_face("5H", 2) is not Card.from_face("5H", 1)


# -- values are immutable ---------------------------------------------------------------


def sample_values() -> list[object]:
    state = build("table", S(demon="KC", work=("5C 4H", "4D", "", "KD"), waste="2S"))
    violation = check_stall(state)
    assert violation is not None
    # State and Seat write their own __init__ (issue 33); a Record, built as often, does not.
    record = Record(game="ab" * 16, seq=7, t_ms=5, prev="c" * 64, payload=Stall(hand=1))
    return [state, *state.seats, *state.foundations, Move.parse("0 w1>w2 4H"), violation, record]


@pytest.mark.parametrize("value", sample_values(), ids=lambda value: type(value).__name__)
def test_values_are_immutable_and_rebuilt_equal(value: object) -> None:
    """Every field is set by the constructor, by name (and by position where a field may
    be given so), and none can be set afterwards."""
    cls = type(value)
    names = [field.name for field in fields(cls) if field.init]
    by_name = cls(**{name: getattr(value, name) for name in names})
    rebuilt = [by_name, replace(value)]
    if not any(field.kw_only for field in fields(cls)):
        rebuilt.append(cls(*(getattr(value, name) for name in names)))
    for other in rebuilt:
        assert other == value and hash(other) == hash(value) and repr(other) == repr(value)
        assert all(getattr(other, name) is getattr(value, name) for name in names)
    for name in names:
        with pytest.raises(FrozenInstanceError):
            setattr(value, name, None)


def test_moves_are_still_checked() -> None:
    with pytest.raises(ValueError, match="negative"):
        Move(-1, MoveKind.CALL)
    with pytest.raises(ValueError, match="own pack"):
        Move(0, MoveKind.TURN, cards=(Card.parse("5H@1"),))


def test_a_refusal_names_its_fields() -> None:
    """Issue 30, point 5: values built by position hide which of two adjacent fields is
    which; a ``Violation`` (code, message, seat, cards, piles, expected, found) is built
    by name only."""
    assert all(field.kw_only for field in fields(Violation))
    with pytest.raises(TypeError, match="positional"):
        Violation(ViolationCode.HAND_OVER, "the hand ended", 0)  # type: ignore[misc]
