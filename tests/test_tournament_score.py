"""Scoring a duplicate tournament (docs/tournament-scoring.md): the pure core on hand-made
results, the text, JSON and HTML it is written as, and the collecting layer on real logs."""

from __future__ import annotations

import dataclasses
import functools
import html
import json
import re
import tempfile
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from racing_demon.batch import collect_logs
from racing_demon.game.deal import MatchSeed, derive_pack
from racing_demon.game.duplicate import Shape
from racing_demon.game.flow import FlowCode
from racing_demon.game.rules import Resignation, Rules
from racing_demon.log.records import TournamentTag
from racing_demon.profiles import load_rules
from racing_demon.report.standings_html import standings_page, viewer_links
from racing_demon.report.tournament import standings_document, standings_text
from racing_demon.schema import schema_errors
from racing_demon.table import PlayerInfo, Table
from racing_demon.testing.randomplay import play_on, word_chooser
from racing_demon.tournament.matchpoints import Entry, Scores, TableResult, score, seat_of
from racing_demon.tournament.plan import Contribution, Plan, make_plan, tournament_rules
from racing_demon.tournament.score import Problem, Standings, TournamentCode, score_tournament
from racing_demon.verify import Finding, Verdict, VerifyCode, verify_log

from conftest import invoke
from tampering import (
    PINNED,
    TABLE_KEY,
    TABLE_PUB,
    first,
    lines_of,
    seal,
    write,
    write_public_key,
)

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
        ([TableResult(1, ("a",), ((1,),), "x")], "table 1 lists 1 player, not 2"),
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
    # The verifier's finding, whole, as verify --json writes it.
    assert document["problems"][1]["finding"] == {
        "code": "PACK_MISMATCH",
        "message": "hand 1, seat 1: ...",
        "line": 2,
        "seq": 1,
        "player": None,
        "move": None,
        "rule": None,
        "expected": None,
        "found": None,
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


# -- a whole tournament, played at real tables --------------------------------------------

ORGANISER = bytes(range(100, 132))
CUP = Shape("Autumn cup", tables=3, seats=2, hands=2)
CUP_CONTRIBUTIONS = (Contribution("club", b"club draw \x02" * 2),)


# The table rules, with a resignation that ends the match (for a short match).
CUP_RULES = dataclasses.replace(load_rules("table"), resignation=Resignation.ENDS_MATCH)


@functools.cache
def cup() -> Plan:
    return make_plan(ORGANISER, CUP, CUP_RULES, CUP_CONTRIBUTIONS)


def _played(
    tag: TournamentTag,
    secret: bytes = ORGANISER,
    *,
    rules: Rules | None = None,
    seats: int = 2,
    resign: bool = False,
    reveal: bool = True,
) -> bytes:
    """The log of one table of a tournament, played by random players from its first
    record to the end (or resigned by seat 0 at once), and revealed unless not."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "table.jsonl"
        names = [f"{tag.name} t{tag.table} seat {seat}" for seat in range(seats)]
        table = Table.create(
            path,
            cup().rules if rules is None else rules,
            [PlayerInfo(name, f"b{seat}") for seat, name in enumerate(names)],
            TABLE_KEY,
            secret,
            [bytes([tag.table, seat + 1]) * 8 for seat in range(seats)],
            tournament=tag,
            durable=False,
        )
        if resign:
            t_ms = table.t_ms + 60_000
            table.advance(t_ms)
            table.submit(0, "0 resign", t_ms, table.next_n(0), None, table.head)
        else:
            play_on(table, word_chooser(MatchSeed.from_plain(f"{tag.name} {tag.table}")))
        assert table.played_out and not table.finished
        if reveal:
            table.reveal()
        table.close()
        return path.read_bytes()


@functools.cache
def played(table: int, variant: str = "") -> bytes:
    """Table ``table`` of the cup as played, or a variant of it (below)."""
    tag = cup().tag(table)
    variants: dict[str, Callable[[], bytes]] = {
        "": lambda: _played(tag),
        "held": lambda: _played(tag, reveal=False),  # played out, not revealed
        "resigned": lambda: _played(tag, resign=True),  # after one hand
        "other": lambda: _played(winter_cup().tag(table)),  # another tournament's
        "entropy": lambda: _played(tag._replace(entropy="ab" * 32)),
        "secret": lambda: _played(tag, bytes(32)),  # dealt from another secret
        "outside": lambda: _played(tag._replace(table=4, tables=4)),
        "shape": lambda: _played(tag._replace(tables=4)),
        "seats": lambda: _played(tag, seats=3),
        "rules": lambda: _played(tag, rules=tournament_rules(load_rules("table"), CUP.hands)),
    }
    return variants[variant]()


@functools.cache
def winter_cup() -> Plan:
    return make_plan(
        ORGANISER, dataclasses.replace(CUP, name="Winter cup"), CUP_RULES, CUP_CONTRIBUTIONS
    )


def write_lines(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def folder(tmp_path: Path, **logs: bytes) -> list[Path]:
    """The logs ``logs`` names, written into ``tmp_path / "logs"``, as collect_logs lists them."""
    into = tmp_path / "logs"
    into.mkdir()
    for name, data in logs.items():
        (into / f"{name}.jsonl").write_bytes(data)
    return collect_logs([into])


def scored(tmp_path: Path, **logs: bytes) -> Standings:
    return score_tournament(cup(), folder(tmp_path, **logs), TABLE_PUB, jobs=1)


def codes(
    standings: Standings,
) -> list[tuple[TournamentCode, int | None, int | None, int | None, str | None]]:
    return [
        (p.code, p.table, p.hand, p.seat, None if p.log is None else Path(p.log).stem)
        for p in standings.problems
    ]


def test_every_table_scores_when_every_log_is_as_planned(tmp_path: Path) -> None:
    # "Every valid table plays every pack of every hand it played": three results a pack.
    standings = scored(tmp_path, t1=played(1), t2=played(2), t3=played(3))
    assert standings.problems == () and standings.exit_code == 0
    assert standings.secret == ORGANISER
    scores = standings.scores
    assert scores.field == 3 and len(scores.entries) == 6
    assert [len(pack.results) for pack in scores.packs] == [3, 3, 3, 3]
    reports = {t: verify_log(tmp_path / "logs" / f"t{t}.jsonl", PINNED) for t in (1, 2, 3)}
    for pack in scores.packs:
        # Every comparison hands out 2 matchpoints: n(n - 1) on a pack.
        assert sum(result.matchpoints for result in pack.results) == 6
        for on_pack in pack.results:
            # The result is the hand score of the seat that played the pack at that table.
            assert on_pack.seat == seat_of(CUP, on_pack.table, pack.index)
            assert on_pack.score == reports[on_pack.table].hands[pack.hand - 1][on_pack.seat]
    for entry in scores.entries:
        assert entry.raw_total == reports[entry.table].totals[entry.seat]
        assert entry.player == f"Autumn cup t{entry.table} seat {entry.seat}"


def test_a_missing_table_is_named_and_the_others_score(tmp_path: Path) -> None:
    standings = scored(tmp_path, t1=played(1), t3=played(3))
    assert codes(standings) == [(TournamentCode.MISSING_TABLE, 2, None, None, None)]
    assert standings.exit_code == 1
    assert standings.scores.field == 2
    assert {entry.table for entry in standings.scores.entries} == {1, 3}


def test_an_unfinished_log_is_named_with_the_hand_it_stopped_in(tmp_path: Path) -> None:
    # A tournament table holds its final record until the organiser reveals it.
    standings = scored(tmp_path, t1=played(1), t2=played(2, "held"), t3=played(3))
    assert codes(standings) == [(TournamentCode.UNFINISHED, 2, 2, None, "t2")]
    [problem] = standings.problems
    assert problem.finding is not None and problem.finding.code is VerifyCode.UNFINISHED
    assert {entry.table for entry in standings.scores.entries} == {1, 3}


def test_a_failing_log_is_named_with_its_finding_hand_and_seat(tmp_path: Path) -> None:
    values = [json.loads(line) for line in played(2).splitlines()]
    index = first(values, "hand_start", lambda body: body["hand"] == 2) + 1
    assert values[index]["body"]["kind"] == "move"
    values[index]["sigs"]["table"] = values[index - 1]["sigs"]["table"]  # not its signature
    broken = b"".join(json.dumps(v, separators=(",", ":")).encode() + b"\n" for v in values)
    standings = scored(tmp_path, t1=played(1), t2=broken, t3=played(3))
    seat = values[index]["body"]["player"]
    assert codes(standings) == [(TournamentCode.NOT_VERIFIED, 2, 2, seat, "t2")]
    [problem] = standings.problems
    assert problem.finding is not None
    assert problem.finding.code is VerifyCode.BAD_TABLE_SIGNATURE
    assert problem.finding.line == index + 1


def test_a_pack_out_of_plan_is_named_with_its_hand_and_seat(tmp_path: Path) -> None:
    values = [json.loads(line) for line in played(3).splitlines()]
    index = first(values, "hand_start", lambda body: body["hand"] == 2)
    packs = values[index]["body"]["packs"]
    packs[1] = packs[0]  # seat 1 dealt another pack than the plan's
    standings = scored(tmp_path, t1=played(1), t2=played(2), t3=write_lines(seal(values, index)))
    assert codes(standings) == [(TournamentCode.PACK_OUT_OF_PLAN, 3, 2, 1, "t3")]
    [problem] = standings.problems
    assert problem.finding is not None and problem.finding.code is FlowCode.PACK_MISMATCH


def test_a_log_of_another_tournament_is_not_this_ones(tmp_path: Path) -> None:
    standings = scored(tmp_path, t1=played(1), t2=played(2), t3=played(3), x=played(1, "other"))
    assert codes(standings) == [(TournamentCode.OTHER_TOURNAMENT, None, None, None, "x")]
    assert "'Winter cup'" in standings.problems[0].message
    assert len(standings.scores.entries) == 6  # it takes table 1 from nobody


def test_two_logs_claiming_one_table_score_neither(tmp_path: Path) -> None:
    standings = scored(tmp_path, t1=played(1), copy=played(1), t2=played(2), t3=played(3))
    assert codes(standings) == [
        (TournamentCode.DUPLICATE_TABLE, 1, None, None, "copy"),
        (TournamentCode.DUPLICATE_TABLE, 1, None, None, "t1"),
    ]
    assert {entry.table for entry in standings.scores.entries} == {2, 3}


def test_a_copy_that_does_not_verify_knocks_out_no_verified_log(tmp_path: Path) -> None:
    """docs/tournament-scoring.md: `DUPLICATE_TABLE` is "two logs or more that verify";
    a damaged or cut copy of a table's log is named, and the table still scores from the
    log its table signed whole."""
    genuine = played(1)
    lines = genuine.splitlines(keepends=True)
    cut = b"".join(lines[: len(lines) // 2])
    values = [json.loads(line) for line in lines]
    values[5]["sigs"]["table"] = values[4]["sigs"]["table"]  # a damaged copy
    damaged = b"".join(json.dumps(v, separators=(",", ":")).encode() + b"\n" for v in values)
    standings = scored(
        tmp_path, t1=genuine, t1cut=cut, t1damaged=damaged, t2=played(2), t3=played(3)
    )
    assert [
        (p.code, p.table, p.log is not None and Path(p.log).stem) for p in standings.problems
    ] == [
        (TournamentCode.UNFINISHED, 1, "t1cut"),
        (TournamentCode.NOT_VERIFIED, 1, "t1damaged"),
    ]
    assert {entry.table for entry in standings.scores.entries} == {1, 2, 3}
    assert standings.exit_code == 1  # the copies are named: the organiser removes them


@pytest.mark.parametrize(
    ("variant", "code"),
    [
        ("entropy", TournamentCode.WRONG_ENTROPY),
        ("secret", TournamentCode.WRONG_COMMITMENT),
        ("shape", TournamentCode.WRONG_SHAPE),
        ("seats", TournamentCode.WRONG_SEATS),
    ],
)
def test_a_log_that_verifies_alone_but_deals_other_packs_is_excluded(
    tmp_path: Path, variant: str, code: TournamentCode
) -> None:
    # Its genesis names the plan, and its packs follow its own genesis, not the plan.
    alone = tmp_path / "alone.jsonl"
    alone.write_bytes(played(2, variant))
    assert verify_log(alone, PINNED).verdict is Verdict.VERIFIED
    standings = scored(tmp_path, t1=played(1), t2=played(2, variant), t3=played(3))
    assert codes(standings) == [(code, 2, None, None, "t2")]
    assert {entry.table for entry in standings.scores.entries} == {1, 3}


def test_a_log_of_other_rules_does_not_verify_with_the_plans_pinned(tmp_path: Path) -> None:
    standings = scored(tmp_path, t1=played(1), t2=played(2, "rules"), t3=played(3))
    assert codes(standings) == [(TournamentCode.WRONG_RULES, 2, None, None, "t2")]
    [problem] = standings.problems
    assert problem.finding is not None and problem.finding.code is VerifyCode.WRONG_RULES


def test_a_table_outside_the_plan_claims_nothing(tmp_path: Path) -> None:
    standings = scored(tmp_path, t1=played(1), t2=played(2), t3=played(3), t4=played(1, "outside"))
    assert codes(standings) == [(TournamentCode.TABLE_NOT_IN_PLAN, 4, None, None, "t4")]
    assert len(standings.scores.entries) == 6


def test_a_false_deal_set_checksum_is_the_organisers_problem(tmp_path: Path) -> None:
    # "the published deal-set checksum is the one the secret deals"
    liar = dataclasses.replace(
        make_plan(ORGANISER, Shape("Liar cup", 1, 2, 1), CUP_RULES, CUP_CONTRIBUTIONS),
        deal_set="00" * 32,
    )
    rules = liar.rules
    log = _played(liar.tag(1), rules=rules)
    standings = score_tournament(liar, folder(tmp_path, t1=log), TABLE_PUB, jobs=1)
    assert codes(standings) == [(TournamentCode.DEAL_SET_MISMATCH, None, None, None, None)]
    assert not standings.problems[0].excluded and len(standings.scores.entries) == 2
    assert standings.exit_code == 1


def test_a_short_match_scores_the_hands_it_played(tmp_path: Path) -> None:
    standings = scored(tmp_path, t1=played(1), t2=played(2), t3=played(3, "resigned"))
    assert codes(standings) == [(TournamentCode.SHORT_MATCH, 3, 2, None, "t3")]
    assert not standings.problems[0].excluded
    scores = standings.scores
    assert [len(pack.results) for pack in scores.packs] == [3, 3, 2, 2]
    t3 = [entry for entry in scores.entries if entry.table == 3]
    assert {(entry.packs, entry.top) for entry in t3} == {(1, 4)}


# -- the command --------------------------------------------------------------------------


def run(*args: str | Path) -> tuple[int, str]:
    """``racing-demon tournament score ARGS``, in this process."""
    return invoke("tournament", "score", *map(str, args))


@pytest.fixture
def plan_file(tmp_path: Path) -> Path:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(cup().to_document(), indent=2))
    return path


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    return write_public_key(tmp_path / "table.pub")


def test_the_command_prints_the_standings(tmp_path: Path, plan_file: Path, key_file: Path) -> None:
    folder(tmp_path, t1=played(1), t2=played(2), t3=played(3))
    code, output = run(plan_file, tmp_path / "logs", "--table-key", key_file, "--jobs", "1")
    assert code == 0, output
    lines = output.splitlines()
    assert lines[0] == (
        "tournament Autumn cup · 3 tables of 2 seats · 2 hands · 3 of 3 scored from 3 logs"
    )
    assert lines[2].endswith("· checked against the revealed secret")
    assert lines[3].startswith("1 contribution: 0 signed, 1 unsigned")  # issue 28, point 5
    assert "problems" not in output
    assert len(lines) == 4 + 3 + 6


def test_the_command_writes_json_and_the_page(
    tmp_path: Path, plan_file: Path, key_file: Path
) -> None:
    [t1, *_] = folder(tmp_path, t1=played(1), t3=played(3))
    t1.with_suffix(".html").write_text("a viewer page")
    page = tmp_path / "standings.html"
    arguments = [plan_file, tmp_path / "logs", "--table-key", key_file, "--jobs", "1"]
    code, output = run(*arguments, "--json", "--html", page)
    assert code == 1
    # The note goes to standard error (here mixed in first), out of the JSON's way.
    wrote, standings = output.split("\n", 1)
    assert wrote == f"wrote {page} ({page.stat().st_size:,} bytes)"
    document = json.loads(standings)
    assert schema_errors("tournament-standings", document) == []
    assert document["exit_code"] == 1
    assert [p["code"] for p in document["problems"]] == ["MISSING_TABLE"]
    text = page.read_text()
    assert text.count('<a href="logs/t1.html">') == 2 * 1 + 2 * 2  # standings + 2 packs each
    assert "demon (top first)" in text
    # An existing page is kept unless --force.
    code, output = run(*arguments, "--html", page)
    assert code == 2 and "not replacing existing" in output
    assert run(*arguments, "--html", page, "--force")[0] == 1


def test_a_plan_that_does_not_hold_is_exit_2(tmp_path: Path, key_file: Path) -> None:
    document = cup().to_document()
    document["deal_set"] = "00" * 32  # the plan's digest no longer recomputes
    bad = tmp_path / "plan.json"
    bad.write_text(json.dumps(document))
    code, output = run(bad, tmp_path, "--table-key", key_file)
    assert code == 2
    assert "PLAN_MISMATCH" in output


def test_jobs_and_a_scheduler_exclude_each_other(plan_file: Path, key_file: Path) -> None:
    code, output = run(
        plan_file, ".", "--table-key", key_file, "--jobs", "2", "--scheduler", "tcp://x:1"
    )
    assert code == 2 and "--jobs counts processes on this machine" in output


@pytest.mark.slow
def test_processes_and_a_dask_cluster_score_as_one_process_does(tmp_path: Path) -> None:
    # "verifies every log (the batch verifier, all cores or a cluster)"
    logs = folder(tmp_path, t1=played(1), t2=played(2, "held"), t3=played(3), x=played(1))
    alone = score_tournament(cup(), logs, TABLE_PUB, jobs=1)
    assert score_tournament(cup(), logs, TABLE_PUB, jobs=2) == alone
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None
    ) as cluster:
        on_dask = score_tournament(cup(), logs, TABLE_PUB, scheduler=cluster.scheduler_address)
    assert on_dask == alone
    assert [p.code for p in alone.problems] == [
        TournamentCode.DUPLICATE_TABLE,
        TournamentCode.DUPLICATE_TABLE,
        TournamentCode.UNFINISHED,
    ]
