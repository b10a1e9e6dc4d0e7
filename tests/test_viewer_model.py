"""The viewer's page and the data it embeds (issue 17): the table after every record is the
one ``racing_demon.replay`` rebuilds, every record is told in words, the audit is the
scoring module's, the verdict is ``verify --json``'s, and the page is one file that loads
nothing from anywhere and is the same byte for byte for the same log.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import random
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from racing_demon import viewer
from racing_demon.audit import audit_hand
from racing_demon.game.cards import Card
from racing_demon.game.flow import HandEnd, RecordKind
from racing_demon.game.moves import Move, MoveKind, Zone
from racing_demon.game.scoring import score_hand
from racing_demon.game.state import State
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.log.records import Record
from racing_demon.replay import ReplayError, find_secret, replay
from racing_demon.schema import schema_errors
from racing_demon.verify import Settings
from racing_demon.viewer import build_page, render_page, viewer_data
from racing_demon.viewer.model import SEAT_COLOURS, seat_colours
from racing_demon.viewer.page import PACKED_FIELDS, TemplateError, asset, data_json, unpacked

from conftest import invoke

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_games"
TABLE_PUB = SAMPLES / "table.pub"
TABLE_KEY = raw_public_bytes(load_public_key(TABLE_PUB))
MANIFEST: dict[str, Any] = json.loads((SAMPLES / "manifest.json").read_text(encoding="utf-8"))
GAMES: list[dict[str, Any]] = MANIFEST["games"]
BIG = SAMPLES / "table-3p-signed.jsonl"
SMALL = SAMPLES / "valid/peer2peer-3p-hold-off.jsonl"  # 82 records: for the command's tests
RECORD_SCHEMA_KINDS = {kind.value for kind in RecordKind}


@cache
def data_of(file: str, seed: bytes | None = None) -> dict[str, Any]:
    return viewer_data(SAMPLES / file, Settings(table_key=TABLE_KEY, seed=seed))


# The games every run covers; the rest of the corpus runs with -m slow (.ci/run runs it).
EVERY_RUN = {
    BIG.name,
    "valid/nertz-2p-stall-shifts.jsonl",
    "valid/peer2peer-3p-resigned-signed.jsonl",
    "valid/table-4p-tie-signed.jsonl",
    "v1/valid/peer2peer-2p-abandoned.jsonl",
    "disputed/changed-byte.jsonl",
    "disputed/illegal-move-re-signed.jsonl",
    "disputed/inflated-score.jsonl",
    "disputed/removed-record.jsonl",
    "v1/disputed/legal-move-wrongly-bounced.jsonl",
}


def games(*categories: str, verified: bool | None = None) -> list[Any]:
    return [
        pytest.param(
            game,
            id=game["file"],
            marks=() if game["file"] in EVERY_RUN else pytest.mark.slow,
        )
        for game in GAMES
        if game["category"] in categories
        and (verified is None or (game["expected"]["verdict"] == "verified") == verified)
    ]


Replayed = tuple[int, State | None, Record, dict[Card, int]]


def snapshots(path: Path, secret: bytes | None = None) -> list[Replayed]:
    """(seq, state, record, placed cards) after every record replay reaches. The replay
    updates one snapshot in place; its states are immutable, so keeping them keeps the
    table as it stood."""
    secret = secret or find_secret(path)
    assert secret is not None
    found: list[Replayed] = []
    try:
        for snapshot in replay(path, secret):
            assert snapshot.record is not None
            found.append((snapshot.seq, snapshot.state, snapshot.record, dict(snapshot.placed)))
    except ReplayError:
        pass
    return found


def expected_piles(state: State) -> dict[str, Any]:
    """The piles as docs/viewer.md names them, read off the engine's state here, apart from
    the model's own code."""
    piles: dict[str, Any] = {}
    for number, seat in enumerate(state.seats):
        piles[f"s{number}.demon"] = {"cards": [card.face for card in seat.demon]}
        piles[f"s{number}.waste"] = {"cards": [card.face for card in seat.waste]}
        piles[f"s{number}.stock"] = {"n": len(seat.stock)}
        for index, pile in enumerate(seat.work, start=1):
            piles[f"s{number}.w{index}"] = {"cards": [card.face for card in pile]}
    for index, foundation in enumerate(state.foundations, start=1):
        piles[f"f{index}"] = {
            "suit": foundation.suit.letter,
            "levels": [
                [f"{card.face}@{card.owner}" for card in level] for level in foundation.levels
            ],
            "complete": len(foundation.levels) == 13,
        }
    return piles


def tables(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every frame applied in order: the whole table after each replayed record."""
    shown: dict[str, Any] = {}
    result = []
    for frame in data["frames"]["list"]:
        shown = dict(frame["set"]) if frame["full"] else {**shown, **frame["set"]}
        result.append(shown)
    return result


# -- frames ------------------------------------------------------------------------------


@pytest.mark.parametrize("game", games("valid", "v1", verified=True))
def test_every_frame_is_the_table_replay_shows_at_that_record(game: dict[str, Any]) -> None:
    """Issue 17: "For a sample of records in several games, the DOM's table equals
    `replay --at SEQ`": the data the DOM is drawn from holds the replay's table at every
    record of every valid game."""
    path = SAMPLES / game["file"]
    data = data_of(game["file"])
    shown = tables(data)
    replayed = snapshots(path)
    assert len(shown) == len(replayed) == len(data["records"])
    for index, ((seq, state, _, _), table) in enumerate(zip(replayed, shown, strict=True)):
        frame = data["frames"]["list"][index]
        assert data["records"][index]["seq"] == seq
        assert data["records"][index]["frame"] == index
        if state is None:
            assert table == {} and frame["hand"] is None  # before the first deal: no piles
            continue
        assert table == expected_piles(state), f"{game['file']} record {seq}"
        assert (frame["hand"], frame["phase"], frame["clock_ms"]) == (
            state.hand,
            str(state.phase),
            state.clock_ms,
        )


def test_the_frames_show_what_the_replay_command_prints() -> None:
    """`racing-demon replay --at SEQ` prints each seat's demon top and count, waste top and
    count, stock count and work piles, and each foundation's top level."""
    shown = tables(data_of(BIG.name))
    for seq in (2, 100, 248, 613, 1296):
        code, out = invoke("replay", str(BIG), "--at", str(seq))
        assert code == 0
        # Without the colour, and with the cards unpadded (replay pads them to 3 columns).
        text = re.sub(r" +", " ", re.sub(r"\x1b\[[0-9;]*m", "", out))
        table = shown[seq]
        seats = sorted({pile.split(".")[0] for pile in table if pile.startswith("s")})
        for seat in seats:
            number = seat[1:]
            line = next(row for row in text.splitlines() if row.startswith(f"seat {number} "))
            demon = table[f"{seat}.demon"]["cards"]
            waste = table[f"{seat}.waste"]["cards"]
            if demon:
                assert f"demon {card_words(demon[-1])} ({len(demon)} left)" in line
            else:
                assert "demon empty" in line
            top = card_words(waste[-1]) if waste else "-"
            assert f"waste {top} ({len(waste)}), stock {table[f'{seat}.stock']['n']}" in line
        foundations = [pile for pile in table if pile.startswith("f")]
        centre = [row.split()[0] for row in text.splitlines() if re.match(r" f[0-9]+ ", row)]
        assert centre == foundations
        for pile in foundations:
            row = next(r for r in text.splitlines() if r.startswith(f" {pile} "))
            top = table[pile]["levels"][-1]
            assert " ".join(card_words(card.split("@")[0]) for card in top) in row


def test_frames_are_deltas_with_a_full_frame_every_64_and_at_each_deal() -> None:
    """docs/viewer.md: "every 64th frame (and the first of each hand) is full: all piles"; a
    delta frame sets only the piles that changed."""
    data = data_of(BIG.name)
    frames = data["frames"]["list"]
    assert data["frames"]["keyframe_every"] == 64
    shown = tables(data)
    for index, frame in enumerate(frames):
        kind = data["records"][index]["kind"]
        assert frame["full"] == (index % 64 == 0 or kind == "hand_start" or index == 0)
        if frame["full"] or index == 0:
            continue
        changed = {
            pile for pile, value in shown[index].items() if shown[index - 1].get(pile) != value
        }
        assert set(frame["set"]) == changed
    deltas = [frame for frame in frames if not frame["full"]]
    assert len(deltas) > 1000 and max(len(frame["set"]) for frame in deltas) < 12


# -- words -------------------------------------------------------------------------------


def records_of(file: str, kind: str) -> list[dict[str, Any]]:
    return [record for record in data_of(file)["records"] if record["kind"] == kind]


def card_words(face: str) -> str:
    """How the words and `replay` show a face: the engine's display form (``10♥``)."""
    return Card.from_face(face, 0).display()


def bodies(file: str) -> list[dict[str, Any]]:
    lines = (SAMPLES / file).read_bytes().splitlines()
    return [json.loads(line)["body"] for line in lines]


def test_cards_are_told_with_suit_symbols_and_10_for_ten() -> None:
    assert [card_words(face) for face in ("TH", "AS", "KC", "7D", "2H")] == [
        "10♥",
        "A♠",
        "K♣",
        "7♦",
        "2♥",
    ]


def test_every_record_kind_is_told_in_words() -> None:
    told: dict[str, str] = {}
    for game in GAMES:
        if game["file"] in EVERY_RUN | {"valid/table-2p-to-100.jsonl"}:  # agreements are there
            for record in data_of(game["file"])["records"]:
                told.setdefault(record["kind"], record["text"])
    assert set(told) == RECORD_SCHEMA_KINDS
    assert all(text.endswith(".") and "None" not in text for text in told.values())


def test_a_card_to_a_foundation_names_the_record_that_started_it() -> None:
    """Issue 17: "Cleo plays 7♥ from her waste onto the ♥ foundation started at record
    412"; the viewer says "from the waste" (no pronoun guessing, docs/viewer.md)."""
    lines = bodies(BIG.name)
    starts = {}  # foundation number -> the record that played its ace to f+
    seen = 0
    for record in data_of(BIG.name)["records"]:
        body = lines[record["seq"]]
        if body["kind"] == "hand_start":
            starts = {}
        if body["kind"] not in ("move", "tie") or ">f" not in body["move"]:
            continue
        move = Move.parse(body["move"])
        assert move.target is not None and move.source is not None
        name = ["Ada", "Bert", "Cleo"][move.seat]
        source = {Zone.DEMON: "the demon", Zone.WASTE: "the waste"}.get(
            move.source.zone, f"work pile {move.source.index + 1}"
        )
        card = move.cards[0]
        if move.target.zone is Zone.NEW_FOUNDATION:
            starts[len(starts) + 1] = record["seq"]
            assert record["text"].startswith(
                f"{name} plays {card.display()} from {source} to start a new "
                f"{card.suit.symbol} foundation (f{len(starts)})"
            )
            continue
        number = move.target.index + 1
        assert record["text"].startswith(
            f"{name} plays {card.display()} from {source} onto the {card.suit.symbol} "
            f"foundation f{number} started at record {starts[number]}"
        )
        assert record["links"][0] == starts[number]
        seen += 1
    assert seen > 100


def test_a_bounced_card_names_the_record_that_won_the_race() -> None:
    """docs/rules.md: "`FOUNDATION_TAKEN` is the only code for a move that lost a race to
    another card: the foundation already holds that rank, because another card got there
    first." The winner is the record that placed the card at that rank."""
    checked = 0
    for game in GAMES:
        if "bounced_race" not in game["covers"]:
            continue
        lines = bodies(game["file"])
        for record in records_of(game["file"], "bounce"):
            body = lines[record["seq"]]
            if body["reason"] != "FOUNDATION_TAKEN":
                continue
            bounced = Move.parse(body["move"]).cards[0]
            (winner,) = record["links"]
            assert record["text"].endswith(f": record {winner} got there first.")
            assert "(FOUNDATION_TAKEN)" in record["text"]
            won = lines[winner]
            assert won["kind"] in ("move", "tie") and won["hand"] == body["hand"]
            card = Move.parse(won["move"]).cards[0]
            assert (card.rank, card.suit) == (bounced.rank, bounced.suit)
            assert winner < record["seq"]
            checked += 1
    assert checked >= 4


def test_a_tie_names_the_card_it_ties_and_its_record() -> None:
    """docs/rules.md, the tie rule: "the second card is accepted: it joins the top level,
    both score"."""
    ties = records_of(BIG.name, "tie")
    assert ties
    lines = bodies(BIG.name)
    for record in ties:
        card = Move.parse(lines[record["seq"]]["move"]).cards[0]
        match = re.search(r": it ties (\w+)'s (\S+) \(record (\d+)\)\.$", record["text"])
        assert match is not None, record["text"]
        assert match[2] == card.display()
        first = int(match[3])
        assert first in record["links"] and first < record["seq"]
        other = Move.parse(lines[first]["move"])
        assert other.cards[0].face == card.face and other.seat != card.owner
        assert match[1] == ["Ada", "Bert", "Cleo"][other.seat]


def test_turns_recycles_stalls_calls_and_hand_ends_in_words() -> None:
    lines = bodies(BIG.name)
    records = data_of(BIG.name)["records"]
    names = ["Ada", "Bert", "Cleo"]
    for record in records:
        body = lines[record["seq"]]
        move = body.get("move", "")
        if body["kind"] == "move" and " turn " in move:
            faces = move.split()[2:]
            shown = " ".join(card_words(face) for face in faces)
            assert record["text"].startswith(f"{names[body['player']]} turns ")
            assert (
                f"from the stock onto the waste: {shown} ({card_words(faces[-1])} on top)."
                in (record["text"])
            )
        elif body["kind"] == "move" and move.endswith(" recycle"):
            assert record["text"] == f"{names[body['player']]} turns the waste over as a new stock."
    stall = records_of(BIG.name, "stall")[0]
    # docs/rules.md: "Every seat turns its waste over onto its stock and moves the top card
    # to the bottom."
    assert "every seat turns its waste over onto its stock and moves the top card" in stall["text"]
    (call,) = records_of(BIG.name, "call")
    assert call["text"].startswith(f"{names[call['seat']]} calls")
    first, second = records_of(BIG.name, "hand_end")
    scores = lines[first["seq"]]["scores"]
    assert first["links"] == [call["seq"]]
    assert first["text"] == (
        f"Hand 1 ends because {names[call['seat']]} called at record {call['seq']}. Scores: "
        + ", ".join(f"{name} {score}" for name, score in zip(names, scores, strict=True))
        + "."
    )
    assert "blocked" in second["text"]
    (final,) = records_of(BIG.name, "final")
    winners = [names[seat] for seat in lines[final["seq"]]["winners"]]
    assert (" and ".join(winners) + (" wins" if len(winners) == 1 else " share")) in final["text"]


def test_resignations_agreements_and_shared_victories_in_words() -> None:
    resigned = "valid/peer2peer-3p-resigned-signed.jsonl"
    (resign,) = records_of(resigned, "resign")
    name = data_of(resigned)["game"]["seats"][resign["seat"]]["name"]
    assert resign["text"] == f"{name} resigns: the match ends against {name}."
    (end,) = records_of(resigned, "hand_end")
    assert end["text"].startswith(f"Hand 1 ends because {name} resigned at record {resign['seq']}.")
    assert end["links"] == [resign["seq"]]
    # docs/rules.md, demon_empty: "the moment the last demon card leaves (the seat "goes
    # out")".
    nertz = "valid/nertz-2p-stall-shifts.jsonl"
    (end,) = records_of(nertz, "hand_end")
    (emptied,) = end["links"]
    last = data_of(nertz)["records"][emptied]
    assert last["text"].endswith("'s demon is empty: the hand ends.")
    who = data_of(nertz)["game"]["seats"][last["seat"]]["name"]
    assert end["text"].startswith(
        f"Hand 1 ends because {who} emptied the demon at record {emptied}."
    )
    agrees = records_of("valid/table-2p-to-100.jsonl", "agree")
    assert agrees and all(record["text"].endswith("agrees to a stall shift.") for record in agrees)
    (final,) = records_of("valid/peer2peer-2p-blocked-shared-victory.jsonl", "final")
    assert "share the victory" in final["text"]
    (abandoned,) = records_of("valid/peer2peer-2p-abandoned.jsonl", "final")
    assert "no winner" in abandoned["text"]


# -- the audit ---------------------------------------------------------------------------


@pytest.mark.parametrize("game", games("valid"))
def test_the_audit_is_the_scoring_of_every_hand(game: dict[str, Any]) -> None:
    """Issue 17: "per hand and seat, the cards placed with links to their records, demon
    cards left, the penalty, recomputed beside claimed"."""
    path = SAMPLES / game["file"]
    audit = data_of(game["file"])["audit"]
    hands = []
    for seq, state, record, placed in snapshots(path):
        if isinstance(record.payload, HandEnd):
            assert state is not None
            hands.append((seq, score_hand(state), record.payload.scores, placed))
    assert [hand["hand"] for hand in audit["hands"]] == list(range(1, len(hands) + 1))
    totals = [0] * len(hands[0][1].seats)
    assert audit["totals"][0] == totals
    for shown, (seq, scored, claimed, placed) in zip(audit["hands"], hands, strict=True):
        assert (shown["end_seq"], shown["reason"], shown["ended_by"]) == (
            seq,
            str(scored.reason),
            scored.ended_by,
        )
        for seat, expected in zip(shown["seats"], scored.seats, strict=True):
            assert [card["card"] for card in seat["placed"]] == [c.face for c in expected.placed]
            assert [card["seq"] for card in seat["placed"]] == [placed[c] for c in expected.placed]
            assert seat["demon_left"] == len(expected.demon_left)
            assert seat["penalty"] == expected.demon_penalty
            assert seat["score"] == expected.score == claimed[seat["seat"]] == seat["claimed"]
        totals = [a + b for a, b in zip(totals, scored.scores, strict=True)]
        assert audit["totals"][shown["hand"]] == totals
    assert audit["claimed_totals"] == totals


def test_the_audit_places_each_card_by_the_record_that_played_it() -> None:
    lines = bodies(BIG.name)
    for hand in data_of(BIG.name)["audit"]["hands"]:
        for seat in hand["seats"]:
            for placed in seat["placed"]:
                body = lines[placed["seq"]]
                move = Move.parse(body["move"])
                assert body["kind"] in ("move", "tie") and move.seat == seat["seat"]
                assert move.cards[0] == Card.from_face(placed["card"], seat["seat"])


def test_an_inflated_score_shows_the_recomputed_score_beside_the_claimed() -> None:
    """The hand_end that claims a wrong score is refused by the replay, yet the audit shows
    the hand, marked not replayed, with both scores."""
    data = data_of("disputed/inflated-score.jsonl")
    (hand,) = data["audit"]["hands"]
    assert hand["replayed"] is False
    differing = [seat for seat in hand["seats"] if seat["score"] != seat["claimed"]]
    assert [(seat["score"], seat["claimed"]) for seat in differing] == [(-16, -6)]
    assert data["audit"]["claimed_totals"] != data["audit"]["totals"][-1]


def test_the_audit_of_a_refused_hand_end_that_claims_no_score_for_a_seat(tmp_path: Path) -> None:
    """Issue 30, point 3: the viewer's "second audit gives way to the one audit (make the
    claimed score optional where a hand's end was refused)". A hand_end that claims two
    scores for three seats is refused, yet the page audits the hand it closes, with no
    claim for the third seat, as ``audit.audit_hand`` audits it."""
    lines = SMALL.read_text(encoding="utf-8").splitlines()
    end_line = next(i for i, line in enumerate(lines) if '"kind":"hand_end"' in line)
    value = json.loads(lines[end_line])
    value["body"]["scores"] = value["body"]["scores"][:2]
    lines[end_line] = json.dumps(value, separators=(",", ":"))
    crafted = tmp_path / "short-claim.jsonl"
    crafted.write_text("\n".join(lines) + "\n", encoding="utf-8")

    (hand,) = viewer_data(crafted, Settings())["audit"]["hands"]
    assert hand["replayed"] is False
    assert [seat["claimed"] for seat in hand["seats"]] == [*value["body"]["scores"], None]

    secret = find_secret(SMALL)
    assert secret is not None
    snapshot = next(
        snapshot
        for snapshot in replay(SMALL, secret)
        if snapshot.record is not None and isinstance(snapshot.record.payload, HandEnd)
    )
    assert snapshot.record is not None and isinstance(snapshot.record.payload, HandEnd)
    whole = snapshot.record.payload
    short = HandEnd(hand=whole.hand, reason=whole.reason, scores=whole.scores[:2])
    scored, placed = snapshot.hands[-1]
    audited = audit_hand(scored, placed, short, snapshot.seq, snapshot.names)
    assert [seat.claimed_score for seat in audited.seats] == [*whole.scores[:2], None]
    assert (hand["hand"], hand["end_seq"], hand["reason"]) == (
        audited.hand,
        audited.end_seq,
        audited.reason,
    )
    assert hand["seats"] == [
        {
            "seat": seat.seat,
            "placed": [{"card": card.face, "seq": seq} for card, seq in seat.placed],
            "demon_left": len(seat.demon_left),
            "placed_points": seat.placed_points,
            "penalty": seat.demon_penalty,
            "score": seat.score,
            "claimed": seat.claimed_score,
        }
        for seat in audited.seats
    ]


# -- failing logs ------------------------------------------------------------------------


@pytest.mark.parametrize("game", games("tampered", "v1", verified=False))
def test_a_failing_log_gives_a_page_with_its_failure_where_the_manifest_says(
    game: dict[str, Any],
) -> None:
    expected = game["expected"]
    data = data_of(game["file"])
    assert data["verdict"]["verdict"] == expected["verdict"]
    failure = data["failure"]
    assert (failure["code"], failure["step"], failure["line"]) == (
        expected["code"],
        expected["step"],
        expected["line"],
    )
    records = data["records"]
    assert len(records) == len((SAMPLES / game["file"]).read_bytes().splitlines())
    frames = len(data["frames"]["list"])
    assert all(record["frame"] is None for record in records[frames:])
    assert all(record["frame"] == index for index, record in enumerate(records[:frames]))
    assert all(record["text"] for record in records)
    assert schema_errors("viewer-data", data) == []
    assert "rd-data" in render_page(data)


def test_a_failing_log_is_framed_up_to_the_record_replay_refuses() -> None:
    data = data_of("disputed/illegal-move-re-signed.jsonl")
    assert len(data["frames"]["list"]) == 44 == data["failure"]["seq"]
    refused = data["records"][44]
    assert refused["frame"] is None
    assert refused["text"] == "Cleo (hard) plays 3♠ from the waste to start a new ♠ foundation."


def test_an_unfinished_log_replays_with_the_dealer_secret() -> None:
    """`--seed SECRET`: the secret for a log with no final record yet."""
    game = next(g for g in GAMES if g["file"] == "disputed/truncated.jsonl")
    secret = find_secret(SAMPLES / game["derived_from"][0])
    assert secret is not None
    without = data_of(game["file"])
    with_seed = data_of(game["file"], secret)
    assert without["verdict"]["verdict"] == with_seed["verdict"]["verdict"] == "unfinished"
    assert without["frames"]["list"] == []
    assert len(with_seed["frames"]["list"]) == len(with_seed["records"]) == 41
    assert with_seed["audit"]["claimed_totals"] is None


def test_a_line_that_is_no_record_is_told_as_unreadable(tmp_path: Path) -> None:
    lines = (SAMPLES / "valid/peer2peer-3p-hold-off.jsonl").read_bytes().splitlines()
    lines[20] = b'{"body": "not a record"'
    lines[30] = b"\xff\xfe"
    log = tmp_path / "damaged.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    data = viewer_data(log, Settings(table_key=TABLE_KEY))
    assert data["verdict"]["verdict"] == "does_not_verify"
    assert len(data["frames"]["list"]) == 20
    assert data["records"][20]["text"].startswith("record 20 could not be read: not JSON")
    assert data["records"][30]["text"] == (
        "record 30 could not be read: not UTF-8 (NOT_UTF8: invalid UTF-8 at byte 0)"
    )
    assert data["records"][20]["kind"] is None and data["records"][20]["frame"] is None
    assert data["records"][25]["kind"] is not None  # the lines between still told
    assert schema_errors("viewer-data", data) == []


def test_a_file_with_no_record_still_gives_a_page_with_its_verdict(tmp_path: Path) -> None:
    log = tmp_path / "notes.txt"
    log.write_bytes(b"\xef\xbb\xbfnothing here\r\n")
    data = viewer_data(log, Settings(table_key=TABLE_KEY))
    assert (data["records"], data["game"], data["frames"]["list"]) == ([], None, [])
    assert data["verdict"]["verdict"] == "does_not_verify"
    assert data["failure"]["code"] == "BOM"
    assert schema_errors("viewer-data", data) == []
    too_large = viewer_data(BIG, Settings(table_key=TABLE_KEY, limits=_limits(1000)))
    assert too_large["log"] is None and too_large["records"] == []
    assert too_large["failure"]["code"] == "FILE_TOO_LARGE"


def _limits(max_file_bytes: int) -> Any:
    from racing_demon.log.reader import Limits

    return Limits(max_file_bytes=max_file_bytes)


# -- the data ----------------------------------------------------------------------------


@pytest.mark.parametrize("game", games("valid", "tampered", "claim", "receipts", "unaccepted"))
def test_the_data_follows_its_schema(game: dict[str, Any]) -> None:
    assert schema_errors("viewer-data", data_of(game["file"])) == []


def test_the_verdict_is_what_verify_json_prints() -> None:
    for file in (BIG.name, "disputed/changed-byte.jsonl", "disputed/inflated-score.jsonl"):
        code, out = invoke("verify", str(SAMPLES / file), "--table-key", str(TABLE_PUB), "--json")
        (report,) = json.loads(out)["reports"]
        assert data_of(file)["verdict"] == report
        assert (
            schema_errors(
                "verification-report",
                {
                    "format": json.loads(out)["format"],
                    "exit_code": code,
                    "interrupted": False,
                    "reports": [data_of(file)["verdict"]],
                },
            )
            == []
        )


def test_the_log_is_embedded_byte_for_byte() -> None:
    """docs/viewer.md: "the log's exact bytes, for check.js", gzip with mtime 0."""
    log = data_of(BIG.name)["log"]
    packed = base64.b64decode(log["data"])
    assert packed[4:8] == b"\0\0\0\0"  # gzip's MTIME field: no time in the page
    raw = BIG.read_bytes()
    assert gzip.decompress(packed) == raw
    assert (log["sha256"], log["bytes"]) == (hashlib.sha256(raw).hexdigest(), len(raw))
    assert data_of(BIG.name)["table_key"] == TABLE_KEY.hex()


def test_a_back_that_names_a_colour_gets_it_once_and_other_seats_the_free_colours() -> None:
    assert seat_colours(["Light Blue", "red", "tartan", "red"]) == [
        "#0072B2",
        "#D55E00",
        "#E69F00",
        "#009E73",
    ]
    nine = seat_colours([f"pattern {n}" for n in range(9)])
    assert nine[:8] == list(SEAT_COLOURS) and nine[8] == SEAT_COLOURS[0]


def test_seats_have_their_names_and_okabe_ito_colours() -> None:
    """docs/viewer.md: seat colours from the Okabe-Ito palette (colour-blind safe)."""
    assert SEAT_COLOURS == (
        "#0072B2",
        "#E69F00",
        "#009E73",
        "#CC79A7",
        "#56B4E9",
        "#D55E00",
        "#F0E442",
        "#000000",
    )
    seats = data_of("valid/table-4p-tie-signed.jsonl")["game"]["seats"]
    # red, blue, green and black backs, in the palette's vermillion, blue, green and black
    assert [seat["colour"] for seat in seats] == ["#D55E00", "#0072B2", "#009E73", "#000000"]
    genesis = bodies("valid/table-4p-tie-signed.jsonl")[0]
    assert [p["back"] for p in genesis["players"]] == ["red", "blue", "green", "black"]
    assert [seat["name"] for seat in seats] == [p["name"] for p in genesis["players"]]
    assert [seat["back"] for seat in seats] == [p["back"] for p in genesis["players"]]


# -- the page ----------------------------------------------------------------------------


def test_the_page_loads_nothing_from_anywhere() -> None:
    """Issue 17: "one HTML file with everything inline (no network access, no CDN, opens
    from file://, works offline)"."""
    page = build_page(BIG, Settings(table_key=TABLE_KEY))
    assert not re.search(r"""\b(src|href|action|srcset)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert not re.search(r"\b(fetch|XMLHttpRequest|WebSocket|EventSource|importScripts)\b", page)
    assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", page, re.I)
    assert not re.search(r"<(link|iframe|img|object|embed)\b", page, re.I)
    assert "default-src 'none'" in page
    assert page.count("<script") == 2  # the data, and the one module script
    for placeholder in ("/*RD:CSS*/", "/*RD:JS*/", "<!--RD:DATA-->"):
        assert placeholder not in page


# Slow (issue 29, item 27: the quick run stays under 3 CPU-minutes):
# the page of a 1,297-record match, built and its data computed again.
@pytest.mark.slow
def test_the_page_holds_the_data_with_its_words_frames_and_audit_gzipped() -> None:
    """docs/viewer.md: the records, frames and audit travel gzipped under `packed`; the
    rest is plain JSON, and unpacking gives the data back exactly."""
    settings = Settings(table_key=TABLE_KEY)
    page = build_page(BIG, settings)
    embedded = page.split('<script type="application/json" id="rd-data">', 1)[1]
    held = json.loads(embedded.partition("</script>")[0])
    assert not PACKED_FIELDS & held.keys()
    assert held["packed"]["encoding"] == "gzip+base64"
    assert held["verdict"]["verdict"] == "verified"
    assert unpacked(held) == viewer_data(BIG, settings)
    packed_bytes = len(held["packed"]["data"])
    plain_bytes = len(data_json({name: unpacked(held)[name] for name in PACKED_FIELDS}))
    assert packed_bytes * 4 < plain_bytes


# Slow (issue 29, item 27: the quick run stays under 3 CPU-minutes):
# the page of a 1,297-record match built twice.
@pytest.mark.slow
def test_the_same_log_gives_the_same_page_byte_for_byte() -> None:
    settings = Settings(table_key=TABLE_KEY)
    first = build_page(BIG, settings)
    assert build_page(BIG, settings) == first
    small = build_page(SMALL, Settings())
    assert build_page(SMALL, Settings()) == small
    assert build_page(SMALL, settings) != small  # the key is part of the page


def test_the_data_cannot_end_its_script_element(tmp_path: Path) -> None:
    """docs/viewer.md: "<, >, &, U+2028 and U+2029 appear as \\u003c etc. (it can then never
    close the script element)"."""
    lines = BIG.read_bytes().splitlines()
    genesis = json.loads(lines[0])
    genesis["body"]["players"][0]["name"] = "</script><!-- & \u2028\u2029 <script>"
    lines[0] = json.dumps(genesis, separators=(",", ":"), ensure_ascii=False).encode()
    log = tmp_path / "hostile.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    page = build_page(log, Settings(table_key=TABLE_KEY))
    embedded = page.split('<script type="application/json" id="rd-data">', 1)[1]
    text, _, _ = embedded.partition("</script>")
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    data = json.loads(text)
    # Names are shown printable: the line separators as escapes, the rest as they are.
    assert data["game"]["seats"][0]["name"] == "</script><!-- & \\u2028\\u2029 <script>"
    assert data["verdict"]["verdict"] == "does_not_verify"


def test_the_module_script_holds_the_checks_the_renderer_and_the_page_in_order() -> None:
    """Issue 32, "One renderer: the table is drawn by the same code that draws the view
    page"; the design: "viewer/page.py inlines check.js, table.js, view.js in that order into
    its one module script" (the view page stays one self-contained file)."""
    assets = {
        "viewer.html": "<style>/*RD:CSS*/</style><!--RD:DATA--><script>/*RD:JS*/</script>",
        "check.js": "const RDCheck = 1;",
        "table.js": "const RDTable = 2;",
        "view.js": "new RDTable.TableView();",
    }
    page = render_page({}, assets)
    assert (
        "<script>const RDCheck = 1;\nconst RDTable = 2;\nnew RDTable.TableView();</script>" in page
    )
    packaged = render_page({})
    script = packaged.split('<script type="module">', 1)[1]
    names = ("const RDCheck = ", "const RDTable = ", "new RDTable.TableView(")
    assert [script.count(name) for name in names] == [1, 1, 1]
    assert script.index(names[0]) < script.index(names[1]) < script.index(names[2])
    # No second copy of the drawing: view.js asks table.js for the table and its cards.
    view_js = asset("view.js")
    for drawing in ("drawSeatPile", "drawFoundation", "cardElement", "function seatInitials"):
        assert drawing not in view_js and drawing in asset("table.js"), drawing


def test_each_placeholder_must_be_in_the_template_once() -> None:
    assets = {
        "viewer.html": "<style>/*RD:CSS*/</style><!--RD:DATA-->",
        "view.js": "",
        "check.js": "",
        "table.js": "",
    }
    with pytest.raises(TemplateError, match=re.escape("/*RD:JS*/ 0 times")):
        render_page({}, assets)
    assets["viewer.html"] += "<script>/*RD:JS*/ /*RD:JS*/</script>"
    with pytest.raises(TemplateError, match="2 times"):
        render_page({}, assets)
    assets["viewer.html"] = "<style>/*RD:CSS*/</style><!--RD:DATA--><script>/*RD:JS*/</script>"
    assets["view.js"] = "const a = '</script>';"
    with pytest.raises(TemplateError, match="end their <script> element"):
        render_page({}, assets)
    assets["view.js"] = "const a = '/*RD:CSS*/';"  # inlined text is never read as a placeholder
    page = render_page({"x": 1}, {**assets, "viewer.css": "b{}"})
    assert page == (
        '<style>b{}</style><script type="application/json" id="rd-data">{"x":1}</script>'
        "<script>\n\nconst a = '/*RD:CSS*/';</script>"
    )
    assert data_json({"a": "<&>\u2028\u2029"}) == '{"a":"\\u003c\\u0026\\u003e\\u2028\\u2029"}'


# -- the command -------------------------------------------------------------------------


def test_view_writes_the_page_and_says_which_verdict_it_embeds(tmp_path: Path) -> None:
    out = tmp_path / "game.html"
    code, output = invoke("view", str(BIG), "--table-key", str(TABLE_PUB), "-o", str(out))
    assert code == 0, output
    assert "verdict verified" in output and "1,297 records" in output
    assert out.read_text(encoding="utf-8") == build_page(BIG, Settings(table_key=TABLE_KEY))
    failing = tmp_path / "changed.html"
    code, output = invoke(
        "view",
        str(SAMPLES / "disputed/changed-byte.jsonl"),
        "--table-key",
        str(TABLE_PUB),
        "--out",
        str(failing),
    )
    assert code == 0 and "does_not_verify" in output and "BAD_TABLE_SIGNATURE" in output
    assert failing.stat().st_size > 0


def test_view_never_replaces_a_file_without_force(tmp_path: Path) -> None:
    """Issue "Nothing the tool does loses a user's data": an output never replaces an
    existing file without --force and never names one of the inputs."""
    out = tmp_path / "game.html"
    out.write_text("mine")
    code, output = invoke("view", str(SMALL), "-o", str(out))
    assert code == 2 and "not replacing existing" in output
    assert out.read_text() == "mine"
    code, _ = invoke("view", str(SMALL), "-o", str(out), "--force")
    assert code == 0 and out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    log = tmp_path / "game.jsonl"
    log.write_bytes(SMALL.read_bytes())
    key = tmp_path / "table.pub"
    key.write_bytes(TABLE_PUB.read_bytes())
    for named in (log, key):
        code, output = invoke(
            "view", str(log), "--table-key", str(key), "-o", str(named), "--force"
        )
        assert code == 2, output
    assert log.read_bytes() == SMALL.read_bytes() and key.read_bytes() == TABLE_PUB.read_bytes()


def test_view_refuses_what_the_other_commands_refuse(tmp_path: Path) -> None:
    out = tmp_path / "game.html"
    code, output = invoke("view", str(tmp_path / "missing.jsonl"), "-o", str(out))
    assert code == 2 and "cannot read" in output and not out.exists()
    code, output = invoke("view", str(tmp_path), "-o", str(out))
    assert code == 2 and not out.exists()
    code, _ = invoke("view", str(SMALL), "--secret", "abc", "-o", str(out))
    assert code == 2 and not out.exists()
    code, _ = invoke("view", str(SMALL), "--table-key", str(tmp_path / "none.pub"), "-o", str(out))
    assert code == 2 and not out.exists()
    code, _ = invoke("view", str(SMALL), "--rules", "no-such-profile", "-o", str(out))
    assert code == 2 and not out.exists()
    code, _ = invoke("view", str(SMALL))
    assert code == 2  # -o is required


def test_view_pins_rules_and_says_when_the_page_is_unpinned(tmp_path: Path) -> None:
    out = tmp_path / "game.html"
    code, output = invoke("view", str(SMALL), "--rules", "table", "-o", str(out))
    assert code == 0 and "WRONG_RULES" in output  # the game plays peer2peer
    out.unlink()
    code, output = invoke("view", str(SMALL), "-o", str(out))
    assert code == 0 and "unpinned" in output and "drops the table's public key" in output


def test_view_help_has_examples() -> None:
    code, output = invoke("view", "--help")
    assert code == 0
    assert "Examples:" in output and "racing-demon view game.jsonl" in output
    for option in ("--table-key", "--rules", "--secret", "--max-file-bytes", "--out", "--force"):
        assert option in output


def test_view_help_fits_80_columns() -> None:
    """The help is read in a terminal of 80 columns: no line of it, examples included,
    runs past the edge."""
    code, output = invoke("view", "--help")
    assert code == 0
    assert [line for line in output.splitlines() if len(line) > 80] == []


# Slow (issue 29, item 27: the quick run stays under 3 CPU-minutes):
# 40 random damages, each a page.
@pytest.mark.slow
def test_any_damage_to_a_log_still_gives_data_that_follows_the_schema(tmp_path: Path) -> None:
    """A log's bytes are hostile (docs/threat-model.md): whatever a line holds, the page is
    made, with every line told and the verdict saying what is wrong."""
    original = SMALL.read_bytes()
    generator = random.Random(17)
    log = tmp_path / "damaged.jsonl"
    for trial in range(40):
        data = bytearray(original)
        for _ in range(1 + trial % 4):
            at = generator.randrange(len(data))
            if trial % 3 == 0:
                del data[at : at + generator.randrange(1, 200)]
            else:
                data[at] = generator.randrange(256)
        log.write_bytes(bytes(data))
        built = viewer_data(log, Settings(table_key=TABLE_KEY))
        assert schema_errors("viewer-data", built) == [], trial
        assert built["verdict"]["verdict"] != "verified" or bytes(data) == original
        assert "rd-data" in render_page(built)


def test_a_move_names_its_piles_source_first_as_the_frames_name_them() -> None:
    """docs/viewer.md: each record's `piles` are the piles its move names, source then
    target, as frame pile ids (a turn: the stock, then the waste); an accepted move's
    piles are the ones its frame changed, and a bounce's exist on the table it lost on."""
    data = data_of(BIG.name)
    shown = tables(data)
    lines = bodies(BIG.name)
    kinds = set()
    for index, entry in enumerate(data["records"]):
        if entry["kind"] not in ("move", "tie", "bounce"):
            assert entry["piles"] == []
            continue
        move = Move.parse(lines[index]["move"])
        kinds.add((entry["kind"], move.kind))
        if move.kind is MoveKind.TURN:
            assert entry["piles"] == [f"s{move.seat}.stock", f"s{move.seat}.waste"]
        elif move.kind is MoveKind.RECYCLE:
            assert entry["piles"] == [f"s{move.seat}.waste", f"s{move.seat}.stock"]
        elif (
            entry["kind"] == "bounce"
            and move.target is not None
            and (move.target.zone is Zone.NEW_FOUNDATION)
        ):
            assert len(entry["piles"]) == 1  # the foundation it meant to start never was
        else:
            assert len(entry["piles"]) == 2
        table = shown[index - 1] if entry["kind"] == "bounce" else shown[index]
        assert set(entry["piles"]) <= table.keys()
        if entry["kind"] != "bounce":
            assert set(entry["piles"]) <= set(data["frames"]["list"][index]["set"])
    assert {"move", "bounce"} <= {kind for kind, _ in kinds}


def test_the_viewer_keeps_its_words_and_frames_in_their_own_modules() -> None:
    """Issue 30, point 3: "the viewer's words and frames in their own modules", and no
    module "over about 600 lines"."""
    package = Path(viewer.__file__).parent
    sizes = {
        path.name: len(path.read_text(encoding="utf-8").splitlines())
        for path in package.glob("*.py")
    }
    assert {"words.py", "frames.py"} <= sizes.keys()
    assert max(sizes.values()) <= 600, sizes
