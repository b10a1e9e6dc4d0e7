"""Contested plays (issue 35, point 6): "After a game, `audit` ... list the contested
plays: winner, loser, the arrival gap and the seats' round trips, and how many were decided
by less than the round-trip spread" (``racing_demon.races``, docs/log-format.md §10)."""

from __future__ import annotations

import json
from pathlib import Path

from racing_demon.audit_run import AuditRun, audit_log
from racing_demon.game.moves import Move
from racing_demon.races import Contest, Stake
from racing_demon.report.audit import JsonAuditReporter, TextAuditReporter
from racing_demon.schema import schema_errors

from tampering import TABLE_PUB, Value, seal, values_of, write


def _lost_race(body: Value) -> bool:
    return body.get("reason") == "FOUNDATION_TAKEN"


def _with_round_trips(values: list[Value], samples: list[list[int]], at: int = 1) -> list[Value]:
    """``values`` with a lag record of ``samples`` as record ``at`` (sealed later): at the
    time of the record before it, the final record counting it."""
    body = values[at - 1]["body"]
    lag = {"v": body["v"], "game": body["game"], "seq": at, "t_ms": body["t_ms"]}
    values.insert(at, {"body": {**lag, "prev": "", "kind": "lag", "rtt_ms": samples}, "sigs": {}})
    values[-1]["body"]["records"] += 1
    return values


def _contests(tmp_path: Path, values: list[Value]) -> tuple[Contest, ...]:
    audit = audit_log(AuditRun(log=write(tmp_path, seal(values)), table_key=TABLE_PUB))
    assert audit.hands, audit.report.finding  # the log verified
    return audit.contests


def test_every_lost_race_is_listed_with_its_winner_and_the_arrival_gap(tmp_path: Path) -> None:
    values = values_of("nertz")
    lost = [index for index, value in enumerate(values) if _lost_race(value["body"])]
    assert lost
    contests = [c for c in _contests(tmp_path, values) if c.stake is Stake.FOUNDATION]
    assert [contest.loser_seq for contest in contests] == lost
    for contest in contests:
        assert contest.winner_card is not None and contest.loser_card is not None
        loser, winner = values[contest.loser_seq]["body"], values[contest.winner_seq]["body"]
        assert contest.winner_seq < contest.loser_seq
        assert (contest.loser_seat, contest.winner_seat) == (loser["player"], winner["player"])
        assert contest.gap_ms == loser["t_ms"] - winner["t_ms"] >= 0
        assert Move.parse(loser["move"]).cards[0] == contest.loser_card
        assert Move.parse(winner["move"]).cards[0] == contest.winner_card
        assert contest.winner_card.rank == contest.loser_card.rank  # one foundation level
        assert contest.hand == loser["hand"] == winner["hand"]
        # A log without lag records: the round trips are not known, so no spread either.
        assert (contest.winner_rtt_ms, contest.loser_rtt_ms, contest.spread_ms) == (None,) * 3
        assert not contest.within_spread


def test_a_move_after_another_seat_ended_the_hand_lost_the_race_to_the_end(
    tmp_path: Path,
) -> None:
    """Issue 35, point 4: "every bounce names the record that took the spot ... for every
    bounce reason that has a winner": a move refused HAND_OVER because another seat had
    called (or gone out, or resigned) lost the race to that record."""
    values = values_of("table")
    late = [i for i, v in enumerate(values) if v["body"].get("reason") == "HAND_OVER"]
    assert late
    contests = [c for c in _contests(tmp_path, values) if c.stake is Stake.HAND_END]
    assert [contest.loser_seq for contest in contests] == late
    for contest in contests:
        loser, winner = values[contest.loser_seq]["body"], values[contest.winner_seq]["body"]
        # The last record before the bounce by which a seat ended the hand: here a call.
        calls = [
            i
            for i, v in enumerate(values[: contest.loser_seq])
            if v["body"]["kind"] == "call" and v["body"]["hand"] == loser["hand"]
        ]
        assert calls and contest.winner_seq == calls[0]
        assert (contest.loser_seat, contest.winner_seat) == (loser["player"], winner["player"])
        assert contest.loser_seat != contest.winner_seat
        assert contest.gap_ms == loser["t_ms"] - winner["t_ms"] >= 0
        assert (contest.winner_card, contest.loser_card) == (None, None)
    audit = audit_log(AuditRun(log=write(tmp_path, seal(values)), table_key=TABLE_PUB))
    printed: list[str] = []
    JsonAuditReporter(echo=lambda text, _: printed.append(text)).audited(audit)
    document = json.loads(printed[0])
    assert schema_errors("audit-report", document) == []
    ended = [play for play in document["contests"]["plays"] if play["stake"] == "hand_end"]
    assert [play["loser"]["seq"] for play in ended] == late
    assert all(play["winner"]["card"] is None is play["loser"]["card"] for play in ended)
    printed.clear()
    TextAuditReporter(echo=lambda text, _: printed.append(text)).audited(audit)
    first = contests[0]
    assert (
        f"the end of the hand (seat {first.winner_seat}, record {first.winner_seq}, round trip"
        " not logged) came before the move (seat"
    ) in "\n".join(printed)


def test_the_round_trips_are_the_medians_the_lag_records_give(tmp_path: Path) -> None:
    values = _with_round_trips(values_of("nertz"), [[20, 400, 21], [150, 160]])
    contests = _contests(tmp_path, values)
    assert contests
    rtt = {0: 21, 1: 155}  # the medians of seat 0's three samples and seat 1's two
    for contest in contests:
        assert contest.winner_rtt_ms == rtt[contest.winner_seat]
        assert contest.loser_rtt_ms == rtt[contest.loser_seat]
        assert contest.spread_ms == (0 if contest.winner_seat == contest.loser_seat else 134)
        assert contest.within_spread is (contest.gap_ms < contest.spread_ms)


def test_a_round_trip_weighs_only_the_samples_logged_before_the_lost_race(
    tmp_path: Path,
) -> None:
    values = values_of("nertz")
    after_every_race = len(values) - 1  # just before the final record
    contests = _contests(tmp_path, _with_round_trips(values, [[30], [90]], after_every_race))
    assert contests and all(contest.loser_rtt_ms is None for contest in contests)


def test_audit_prints_and_writes_the_contested_plays(tmp_path: Path) -> None:
    values = _with_round_trips(values_of("nertz"), [[20], [150]])
    audit = audit_log(AuditRun(log=write(tmp_path, seal(values)), table_key=TABLE_PUB))
    printed: list[str] = []
    JsonAuditReporter(echo=lambda text, _: printed.append(text)).audited(audit)
    document = json.loads(printed[0])
    assert schema_errors("audit-report", document) == []
    contests = document["contests"]
    assert len(contests["plays"]) == len(audit.contests)
    assert contests["measured"] == len(audit.contests)
    assert contests["within_spread"] == sum(c.within_spread for c in audit.contests)
    play, contest = contests["plays"][0], audit.contests[0]
    assert play["winner"] == {
        "seat": contest.winner_seat,
        "seq": contest.winner_seq,
        "card": str(contest.winner_card),
        "rtt_ms": contest.winner_rtt_ms,
    }
    assert (play["gap_ms"], play["spread_ms"]) == (contest.gap_ms, contest.spread_ms)
    printed.clear()
    TextAuditReporter(echo=lambda text, _: printed.append(text)).audited(audit)
    text = "\n".join(printed)
    assert f"{len(audit.contests)} contested play" in text
    assert f"of the {len(audit.contests)} whose seats' round trips are both logged" in text
    assert f"record {contest.loser_seq}, round trip {contest.loser_rtt_ms} ms)" in text


def test_a_log_that_does_not_verify_lists_no_contest(tmp_path: Path) -> None:
    values = values_of("nertz")
    values[-1]["body"]["totals"][0] += 1  # an inflated total
    audit = audit_log(AuditRun(log=write(tmp_path, seal(values)), table_key=TABLE_PUB))
    assert audit.hands == () and audit.contests == ()
