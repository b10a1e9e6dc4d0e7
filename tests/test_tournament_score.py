"""Scoring a duplicate tournament (docs/tournament-scoring.md): the pure core on hand-made
results, the text, JSON and HTML it is written as, and the collecting layer on real logs."""

from __future__ import annotations

import dataclasses
import html
import re
from fractions import Fraction
from pathlib import Path

import pytest

from racing_demon.game.deal import derive_pack
from racing_demon.game.duplicate import Shape
from racing_demon.game.flow import FlowCode
from racing_demon.profiles import load_rules
from racing_demon.schema import schema_errors
from racing_demon.tournament.plan import Contribution, make_plan
from racing_demon.tournament.score import (
    Entry,
    Problem,
    Scores,
    Standings,
    TableResult,
    TournamentCode,
    score,
    score_tournament,
    seat_of,
    standings_document,
    standings_text,
)
from racing_demon.tournament.standings_html import standings_page, viewer_links
from racing_demon.verify import Finding

from tampering import TABLE_PUB, lines_of, write

SHAPE = Shape("club night", tables=3, seats=2, hands=1)


def result(table: int, *hands: tuple[int, ...]) -> TableResult:
    return TableResult(table, (f"t{table}s0", f"t{table}s1"), hands, f"logs/t{table}.jsonl")


def line(entry: Entry) -> tuple[str, int, bool, Fraction | None, int]:
    return (entry.player, entry.rank, entry.shared, entry.percentage, entry.raw_total)


def pack_results(scores: Scores, number: int) -> list[tuple[str, int, int, Fraction]]:
    [pack] = [pack for pack in scores.packs if pack.number == number]
    return [(r.player, r.score, r.matchpoints, r.factored) for r in pack.results]


def test_seat_of_reads_the_rotation_backwards() -> None:
    # "at table t, seat s plays pack k = (s + t - 1) mod S of each hand"
    shape = Shape("x", tables=4, seats=4, hands=1)
    for table in range(1, 5):
        for seat in range(4):
            assert seat_of(shape, table, shape.pack_index(table, seat)) == seat
    assert seat_of(shape, 2, 0) == 3


def test_every_result_on_a_pack_is_compared_with_every_other() -> None:
    # "On a pack with n results each result earns 2 matchpoints for every result it beats
    # and 1 for every tie: the top is 2(n - 1)."
    scores = score(SHAPE, [result(1, (10, 5)), result(2, (8, 12)), result(3, (10, -3))])
    assert scores.field == 3
    assert [pack.top for pack in scores.packs] == [4, 4]
    assert pack_results(scores, 1) == [
        ("t2s1", 12, 4, 4),
        ("t1s0", 10, 1, 1),
        ("t3s0", 10, 1, 1),
    ]
    assert pack_results(scores, 2) == [("t2s0", 8, 4, 4), ("t1s1", 5, 2, 2), ("t3s1", -3, 0, 0)]


def test_ranks_are_shared_on_equal_percentage_and_raw_total() -> None:
    # "Players are ranked by percentage, then by raw total, both higher first; players
    # equal on both share a rank."
    scores = score(SHAPE, [result(1, (10, 5)), result(2, (8, 12)), result(3, (10, -3))])
    assert [line(entry) for entry in scores.entries] == [
        ("t2s1", 1, False, 100, 12),
        ("t2s0", 2, False, 100, 8),  # the raw total breaks the tie on percentage
        ("t1s1", 3, False, 50, 5),
        ("t1s0", 4, True, 25, 10),  # equal on both: a shared rank, then table order
        ("t3s0", 4, True, 25, 10),
        ("t3s1", 6, False, 0, -3),  # the next rank counts the players above
    ]


def test_a_missing_table_leaves_a_smaller_field() -> None:
    # Table 2 is missing: every pack has two results, so each is won, tied or lost.
    scores = score(SHAPE, [result(1, (10, 5)), result(3, (10, -3))])
    assert scores.field == 2
    assert pack_results(scores, 1) == [("t1s0", 10, 1, 1), ("t3s0", 10, 1, 1)]
    assert [line(entry) for entry in scores.entries] == [
        ("t1s1", 1, False, 100, 5),
        ("t1s0", 2, True, 50, 10),
        ("t3s0", 2, True, 50, 10),
        ("t3s1", 4, False, 0, -3),
    ]
    assert {entry.top for entry in scores.entries} == {2}


def test_a_single_result_on_a_pack_is_compared_with_nothing() -> None:
    # "None when no pack had two results, so nothing could be compared": ranked by the
    # raw total alone.
    scores = score(SHAPE, [result(2, (8, 12))])
    assert scores.field == 1
    assert [pack.top for pack in scores.packs] == [0, 0]
    assert [line(entry) for entry in scores.entries] == [
        ("t2s1", 1, False, None, 12),
        ("t2s0", 2, False, None, 8),
    ]


def test_no_result_at_all_scores_nobody() -> None:
    scores = score(SHAPE, [])
    assert scores.field == 0 and scores.entries == ()
    assert [(pack.number, pack.results) for pack in scores.packs] == [(1, ()), (2, ())]


def test_a_pack_played_fewer_times_is_factored_by_neuberg() -> None:
    # "A pack with fewer results than the most played pack is factored up to the field's
    # top by Neuberg's formula, (MP + 1) * field / n - 1 ... a lone result gets an average."
    shape = Shape("two hands", tables=3, seats=2, hands=2)
    short = TableResult(3, ("c0", "c1"), ((4, 2),), "t3.jsonl")  # stopped after hand 1
    scores = score(
        shape,
        [
            TableResult(1, ("a0", "a1"), ((1, 2), (6, 0)), "t1.jsonl"),
            TableResult(2, ("b0", "b1"), ((3, 3), (7, 7)), "t2.jsonl"),
            short,
        ],
    )
    assert scores.field == 3
    # Hand 2, pack 0 (number 3): a0 played 6, b1 played 7; two results, field 3.
    assert pack_results(scores, 3) == [
        ("b1", 7, 2, Fraction(7, 2)),  # (2 + 1) * 3/2 - 1: short of the full top 4
        ("a0", 6, 0, Fraction(1, 2)),  # (0 + 1) * 3/2 - 1: above the bottom 0
    ]
    [c0] = [entry for entry in scores.entries if entry.player == "c0"]
    assert (c0.packs, c0.top, c0.raw_total) == (1, 4, 4)  # one pack played, out of one top


def test_neuberg_keeps_an_average_an_average() -> None:
    shape = Shape("two hands", tables=3, seats=2, hands=2)
    scores = score(
        shape,
        [
            TableResult(1, ("a0", "a1"), ((1, 2), (5, 0)), "t1.jsonl"),
            TableResult(2, ("b0", "b1"), ((3, 3), (7, 5)), "t2.jsonl"),
            TableResult(3, ("c0", "c1"), ((4, 2),), "t3.jsonl"),
        ],
    )
    # a0 and b1 tie on pack 3 (5 each): 1 matchpoint of a top of 2, factored to 2 of 4.
    assert [factored for *_, factored in pack_results(scores, 3)] == [2, 2]


@pytest.mark.parametrize(
    ("results", "message"),
    [
        ([result(1, (1, 2)), result(1, (3, 4))], "two results for table 1"),
        ([result(4, (1, 2))], "table 4 is outside 1..3"),
        ([TableResult(1, ("a",), ((1,),), "x")], "table 1 lists 1 players, not 2"),
        ([result(1, (1, 2), (3, 4))], "table 1 has 2 hands, not at most 1"),
        ([result(1, (1, 2, 3))], "table 1, hand 1: 3 scores, not 2"),
    ],
)
def test_results_that_do_not_fit_the_tournament_are_refused(
    results: list[TableResult], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        score(SHAPE, results)


# -- text, JSON and HTML ------------------------------------------------------------------

SECRET = bytes(range(32))
HOSTILE = '<script>alert("x")</script>\x1b[2J'


def hand_made_standings(secret: bytes | None = SECRET) -> Standings:
    plan = make_plan(SECRET, SHAPE, load_rules("table"), (Contribution("org", b"e" * 16),))
    results = [
        TableResult(1, (HOSTILE, "t1s1"), ((10, 5),), "logs/t1.jsonl"),
        result(3, (10, -3)),
    ]
    problems = (
        Problem(TournamentCode.MISSING_TABLE, "no log claims this table", table=2),
        Problem(
            TournamentCode.PACK_OUT_OF_PLAN,
            "it does not verify: PACK_MISMATCH: hand 1, seat 1: the pack is not the one",
            table=2,
            hand=1,
            seat=1,
            log="logs/\x1bt2.jsonl",
            finding=Finding(FlowCode.PACK_MISMATCH, "hand 1, seat 1: ...", line=2, seq=1),
        ),
    )
    return Standings(plan, score(SHAPE, results), problems, secret, 3)


def test_the_text_names_every_problem_then_ranks_the_players() -> None:
    text = standings_text(hand_made_standings())
    assert "\x1b" not in text  # a name from a log cannot drive the terminal
    lines = text.splitlines()
    assert lines[0] == (
        "tournament club night · 3 tables of 2 seats · 1 hand · 2 of 3 scored from 3 logs"
    )
    assert "  table 2: MISSING_TABLE: no log claims this table" in lines
    assert any(
        entry.startswith("  table 2, hand 1, seat 1: PACK_OUT_OF_PLAN: logs/\\x1bt2.jsonl: ")
        for entry in lines
    )
    standings = lines[
        lines.index("standings: 2 matchpoints per result beaten, 1 per tie; a pack's top is 2")
        + 2 :
    ]
    assert [row.split()[0] for row in standings] == ["1", "=2", "=2", "4"]
    assert standings[0].split()[1:] == ["t1s1", "1", "1", "5", "2.00", "2", "100.00%"]


def test_the_json_document_follows_its_schema() -> None:
    document = standings_document(hand_made_standings())
    assert schema_errors("tournament-standings", document) == []
    assert document["exit_code"] == 1
    assert [entry["percentage"] for entry in document["standings"]] == [100.0, 50.0, 50.0, 0.0]
    assert document["problems"][1]["finding"] == {
        "code": "PACK_MISMATCH",
        "message": "hand 1, seat 1: ...",
        "line": 2,
        "seq": 1,
    }
    [first, second] = document["packs"]
    assert (first["number"], first["top"], len(first["results"])) == (1, 2, 2)
    assert second["results"][0] == {
        "table": 1,
        "seat": 1,
        "player": "t1s1",
        "score": 5,
        "matchpoints": 2,
        "factored": 2.0,
        "log": "logs/t1.jsonl",
    }


def test_the_page_escapes_what_a_log_brings_and_loads_nothing() -> None:
    page = standings_page(hand_made_standings(), {"logs/t1.jsonl": "t1%20x.html"})
    assert "<script" not in page and "\x1b" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;\\x1b[2J" in page
    assert "default-src 'none'" in page
    assert page.count('<a href="t1%20x.html">') == 4  # two players, each in standings and pack
    assert '<section class="pack" id="pack-2">' in page


def test_the_hand_record_shows_the_layout_once_the_secret_is_out() -> None:
    standings = hand_made_standings()
    cards = derive_pack(SHAPE.seed(SECRET, standings.plan.entropy), 1, 0)
    page = standings_page(standings)
    # "p[0..12] is the demon with p[12] on top, then one card per work pile"
    assert f"demon (top first): {cards[12].display()} " in html.unescape(
        re.sub("<[^>]+>", "", page)
    )
    assert "w1 " in page
    hidden = standings_page(hand_made_standings(secret=None))
    assert "demon (top first)" not in hidden
    assert "The layout is shown once a scored log reveals the secret." in hidden


def test_viewer_links_point_at_the_page_beside_each_log(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "t 1.html").write_text("page")
    standings = hand_made_standings()
    entries = tuple(
        dataclasses.replace(entry, log=str(logs / f"t {entry.table}.jsonl"))
        for entry in standings.scores.entries
    )
    standings = dataclasses.replace(
        standings, scores=dataclasses.replace(standings.scores, entries=entries)
    )
    out = tmp_path / "site" / "standings.html"
    out.parent.mkdir()
    assert viewer_links(standings, out) == {str(logs / "t 1.jsonl"): "../logs/t%201.html"}


# -- the collecting layer -----------------------------------------------------------------


def test_a_log_of_a_match_of_its_own_is_not_a_tournament_log(tmp_path: Path) -> None:
    log = write(tmp_path, lines_of("table"), "single.jsonl")
    standings = score_tournament(hand_made_standings().plan, [log], TABLE_PUB, jobs=1)
    assert [(p.code, p.table, p.log) for p in standings.problems] == [
        (TournamentCode.MISSING_TABLE, 1, None),
        (TournamentCode.MISSING_TABLE, 2, None),
        (TournamentCode.MISSING_TABLE, 3, None),
        (TournamentCode.NOT_A_TOURNAMENT_LOG, None, str(log)),
    ]
    assert standings.scores.entries == () and standings.secret is None
    assert standings.exit_code == 1


def test_a_log_that_cannot_be_read_is_exit_2(tmp_path: Path) -> None:
    missing = tmp_path / "gone.jsonl"
    standings = score_tournament(hand_made_standings().plan, [missing], TABLE_PUB, jobs=1)
    [*_, problem] = standings.problems
    assert (problem.code, problem.log) == (TournamentCode.UNREADABLE, str(missing))
    assert "No such file or directory" in problem.message
    assert standings.exit_code == 2
