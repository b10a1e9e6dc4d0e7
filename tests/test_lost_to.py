"""Log format v4: a bounce names the race it lost (docs/log-format.md §6, "lost_to"), the
table writes it, and step 8 checks it (LOST_TO_MISMATCH, §7). Issue 35, point 4: "every
bounce names the record that took the spot (seq and hash) ... for every bounce reason that
has a winner"."""

from __future__ import annotations

import io
from typing import Any

import pytest

from racing_demon.game.race import Race
from racing_demon.log.records import chain_hash
from racing_demon.replay import replay
from racing_demon.verify import Step, Verdict, VerifyCode

from tampering import (
    SECRET,
    Value,
    as_format,
    assert_fails,
    first,
    lines_of,
    seal,
    values_of,
    verify_lines,
)

# nertz: FOUNDATION_TAKEN bounces and CARD_MISMATCH ones; table: a HAND_OVER bounce.
LOGS = ("nertz", "table", "peer2peer", "blocked")


def _races(lines: list[bytes]) -> dict[int, Race | None]:
    """Each bounce's race as the replay finds it, by the bounce's seq."""
    log = io.BytesIO(b"".join(line + b"\n" for line in lines))
    return {
        snapshot.seq: snapshot.lost_to
        for snapshot in replay(log, SECRET)
        if snapshot.record is not None and snapshot.record.kind == "bounce"
    }


def _named(lines: list[bytes], seq: int) -> dict[str, Any]:
    return {"hash": chain_hash(lines[seq]), "seq": seq}


def test_every_bounce_that_lost_a_race_names_the_record_that_won_it() -> None:
    """The doc: "A `bounce` that lost a race carries `"lost_to": {"hash": H, "seq": k}`: the
    record that won it" and "A bounce that lost no race has no `lost_to`" """
    stakes: set[str] = set()
    for name in LOGS:
        lines = lines_of(name)
        races = _races(lines)
        assert races, name
        for seq, race in races.items():
            body = values_of(name)[seq]["body"]
            if race is None:
                assert "lost_to" not in body, (name, seq)
                continue
            assert body["lost_to"] == _named(lines, race.seq), (name, seq)
            stakes.add(body["reason"])
            assert race.seq < seq and race.seat != body["player"]
            assert race.seq == _winner_by_hand(values_of(name), seq), (name, seq)
    assert stakes == {"FOUNDATION_TAKEN", "HAND_OVER"}  # both rules met a race


def _winner_by_hand(values: list[Value], seq: int) -> int:
    """The record bounce ``seq`` lost to, found from the records alone (docs/log-format.md
    §6): for a card too late, the first card of its rank placed on its foundation in the
    hand; for a hand over, the first call or resignation of another seat in the hand (the
    logs here end no hand by a demon emptied)."""
    bounce = values[seq]["body"]
    hand = [value["body"] for value in values[:seq] if value["body"].get("hand") == bounce["hand"]]
    if bounce["reason"] == "FOUNDATION_TAKEN":
        target, card = bounce["move"].split(">")[1].split(" ")
        return next(
            body["seq"]
            for body in hand
            if body["kind"] in ("move", "tie")
            and ">" in body["move"]
            and body["move"].split(">")[1].split(" ")[0] == target
            and body["move"].split(" ")[-1][:-1] == card[:-1]
        )
    return next(
        body["seq"]
        for body in hand
        if body["kind"] in ("call", "resign") and body["player"] != bounce["player"]
    )


def _bounce(values: list[Value], lost: bool) -> int:
    return first(values, "bounce", lambda body: ("lost_to" in body) == lost)


@pytest.mark.parametrize("name", ["nertz", "table"])
def test_a_bounce_naming_another_record_is_refused(name: str, tmp_path: Any) -> None:
    """The doc: "refuses a `lost_to` that is not that record, with that line's hash" """
    values = values_of(name)
    at = _bounce(values, lost=True)
    won = values[at]["body"]["lost_to"]
    lines = lines_of(name)
    values[at]["body"]["lost_to"] = _named(lines, won["seq"] - 1)  # a real line, its hash
    finding = assert_fails(
        verify_lines(tmp_path, seal(values)), Step.REPLAY, VerifyCode.LOST_TO_MISMATCH, at + 1
    )
    assert finding.seat == values[at]["body"]["player"]
    assert finding.expected == f"record {won['seq']}, line hash {won['hash']}"
    assert (
        finding.found == f"record {won['seq'] - 1}, line hash {chain_hash(lines[won['seq'] - 1])}"
    )


def test_a_bounce_naming_the_right_record_by_another_hash_is_refused(tmp_path: Any) -> None:
    """The doc: "refuses a `lost_to` that is not that record, with that line's hash" """
    values = values_of("nertz")
    at = _bounce(values, lost=True)
    values[at]["body"]["lost_to"]["hash"] = "0" * 64
    lines = seal(values, repoint_lost_to=False)  # the hash as written, not the line's
    assert_fails(verify_lines(tmp_path, lines), Step.REPLAY, VerifyCode.LOST_TO_MISMATCH, at + 1)


def test_a_bounce_that_lost_a_race_and_names_none_is_refused(tmp_path: Any) -> None:
    """The doc: "as well as a missing or an unwanted one (`LOST_TO_MISMATCH`)" """
    values = values_of("table")
    at = _bounce(values, lost=True)
    del values[at]["body"]["lost_to"]
    finding = assert_fails(
        verify_lines(tmp_path, seal(values)), Step.REPLAY, VerifyCode.LOST_TO_MISMATCH, at + 1
    )
    assert finding.found == "none"


def test_a_bounce_that_lost_no_race_and_names_one_is_refused(tmp_path: Any) -> None:
    """The doc: "as well as a missing or an unwanted one (`LOST_TO_MISMATCH`)" """
    values = values_of("blocked")
    at = _bounce(values, lost=False)
    assert values[at]["body"]["reason"] == "CARD_MISMATCH"
    values[at]["body"]["lost_to"] = _named(lines_of("blocked"), at - 1)
    finding = assert_fails(
        verify_lines(tmp_path, seal(values)), Step.REPLAY, VerifyCode.LOST_TO_MISMATCH, at + 1
    )
    assert finding.expected == "none"


def test_an_older_bounce_has_no_lost_to_and_its_log_still_verifies(tmp_path: Any) -> None:
    """The doc: "An older log has no `lost_to` (`SCHEMA`); the race is still found from the
    log alone" """
    values = as_format(values_of("nertz"), 3)
    report = verify_lines(tmp_path, seal(values))
    assert report.verdict is Verdict.VERIFIED, report.finding
    values = values_of("nertz")
    at = _bounce(values, lost=True)
    for value in values:
        value["body"]["v"] = 3
    assert_fails(verify_lines(tmp_path, seal(values)), Step.SCHEMA, VerifyCode.SCHEMA, at + 1)
