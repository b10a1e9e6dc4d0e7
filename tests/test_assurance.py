"""What a VERIFIED verdict proves, said in every report (text and JSON): an unkeyed game's
deal and moves rest on the table's word however well it verifies (issue 15's fourth
attack); a keyed v2 game proves its deal, its moves, its players' views and who accepted
the result; a v1 log says which v2 guarantees it lacks."""

from __future__ import annotations

import json
from pathlib import Path

from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.report.verify import report_document, report_text
from racing_demon.schema import schema_errors
from racing_demon.verify import Settings, Verdict, verify_log
from racing_demon.verify.assurance import Guarantee, assurance_of

from tampering import PINNED, TABLE_PUB, seal, values_of, verify_lines

V1_LOG = Path(__file__).parent / "vectors" / "v1" / "table-3p-signed.jsonl"
V1_KEY = Path(__file__).parent.parent / "sample_games" / "table.pub"


def _document(report: object) -> dict[str, object]:
    document = report_document(report)  # type: ignore[arg-type]
    full = {"format": "racing-demon/verification-report/v1", "exit_code": 0}
    full |= {"interrupted": False, "reports": [document]}
    assert schema_errors("verification-report", full) == []
    return document


def test_an_unkeyed_game_says_its_deal_and_moves_rest_on_the_tables_word(tmp_path: Path) -> None:
    report = verify_lines(tmp_path, seal(values_of("short")))
    assert report.verdict is Verdict.VERIFIED
    text = report_text(report)
    assert "not proved: the table wrote every seat's entropy: the deal rests on its word" in text
    assert "not proved: no player signs: who moved rests on the table's word" in text
    assert "proved: every seat's entropy" not in text
    document = _document(report)
    assurance = document["assurance"]
    assert isinstance(assurance, dict)
    assert assurance["proved"] == ["table_signed"]
    assert {item["guarantee"] for item in assurance["not_proved"]} == {
        "deal_bound",
        "moves_signed",
        "views_bound",
        "result_accepted",
        "arrivals",
    }
    assert (document["keyed"], document["format_version"], document["accepted_by"]) == (
        False,
        2,
        None,
    )


def test_a_keyed_v2_game_says_what_it_proved(tmp_path: Path) -> None:
    report = verify_lines(tmp_path, seal(values_of("short", keyed=True), keep_accepts=True))
    assurance = assurance_of(report)
    assert assurance is not None
    assert [guarantee for guarantee, _ in assurance.proved] == [
        Guarantee.TABLE_SIGNED,
        Guarantee.DEAL_BOUND,
        Guarantee.MOVES_SIGNED,
        Guarantee.VIEWS_BOUND,
        Guarantee.RESULT_ACCEPTED,
    ]
    assert [guarantee for guarantee, _ in assurance.not_proved] == [Guarantee.ARRIVALS]
    assert "format v2, keyed" in report_text(report)
    assert _document(report)["accepted_by"] == [0, 1]


def test_a_seat_that_did_not_accept_is_named(tmp_path: Path) -> None:
    values = values_of("short", keyed=True)
    values[-1]["sigs"]["accepts"][0] = None
    report = verify_lines(tmp_path, seal(values, len(values), keep_accepts=True))
    assert report.verdict is Verdict.VERIFIED
    assert "not proved: seat 0 did not accept the result" in report_text(report)
    assert _document(report)["accepted_by"] == [1]


def test_fast_says_the_players_signatures_were_not_checked(tmp_path: Path) -> None:
    lines = seal(values_of("short", keyed=True), keep_accepts=True)
    report = verify_lines(tmp_path, lines, Settings(table_key=TABLE_PUB, fast=True))
    text = report_text(report)
    assert "not proved: --fast: players' signatures on moves not checked" in text
    assert "--fast: the table's signatures checked on the genesis and the final record" in text


def test_a_v1_log_says_which_v2_guarantees_it_lacks() -> None:
    key = raw_public_bytes(load_public_key(V1_KEY))
    report = verify_log(V1_LOG, Settings(table_key=key))
    assert report.verdict is Verdict.VERIFIED
    text = report_text(report)
    for lack in (
        "format v1: the entropy is not bound to the commitment",
        "format v1: submissions do not name the history their players saw",
        "format v1: players cannot accept the result",
    ):
        assert f"not proved: {lack}" in text
    assert "proved: every submission is signed by its seat's key" in text
    assert json.dumps(_document(report)["assurance"])


def test_a_log_that_does_not_verify_claims_nothing(tmp_path: Path) -> None:
    lines = seal(values_of("short"))
    report = verify_lines(tmp_path, [*lines[:-1], b"{"], PINNED)
    assert assurance_of(report) is None
    assert "proved:" not in report_text(report)
    assert _document(report)["assurance"] is None


def test_without_the_table_key_the_players_keys_prove_nothing(tmp_path: Path) -> None:
    """A forger that writes a whole keyed log with keys of its own (and its own "table")
    gets UNPINNED, and no player-side guarantee: the keys are the file's own claim."""
    lines = seal(values_of("short", keyed=True), keep_accepts=True)
    report = verify_lines(tmp_path, lines, Settings(unsafe_unpinned=True))
    assert report.verdict is Verdict.UNPINNED
    assurance = assurance_of(report)
    assert assurance is not None and assurance.proved == ()
    reasons = dict(assurance.not_proved)
    for guarantee in (Guarantee.DEAL_BOUND, Guarantee.MOVES_SIGNED, Guarantee.RESULT_ACCEPTED):
        assert "the players' keys are the file's own claim" in reasons[guarantee]
