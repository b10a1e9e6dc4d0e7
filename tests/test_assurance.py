"""What a VERIFIED verdict proves, said in every report (text and JSON): an unkeyed game's
deal and moves rest on the table's word however well it verifies (issue 15's fourth
attack); a keyed v2 game proves its deal, its moves, its players' views and who accepted
the result; a v1 log says which v2 guarantees it lacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from racing_demon.batch import cache_key
from racing_demon.game.deal import MatchSeed
from racing_demon.game.duplicate import Shape
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.log.records import FORMAT_VERSION
from racing_demon.profiles import load_rules
from racing_demon.report.batch import cache_line
from racing_demon.report.verify import report_text
from racing_demon.report_document import report_document, report_from_document
from racing_demon.schema import schema_errors
from racing_demon.table import PlayerInfo, Table, player_signer
from racing_demon.testing.randomplay import play_on, word_chooser
from racing_demon.tournament.plan import Contribution, make_plan
from racing_demon.verify import Settings, Verdict, VerifyCode, verify_log
from racing_demon.verify.assurance import Guarantee, Requirement, assurance_of

from conftest import invoke
from tampering import (
    PINNED,
    PLAYER_KEYS,
    TABLE_KEY,
    TABLE_PUB,
    seal,
    values_of,
    verify_lines,
    write,
    write_public_key,
)

V1_LOG = Path(__file__).parent / "vectors" / "v1" / "table-3p-signed.jsonl"
SAMPLES = Path(__file__).parent.parent / "sample_games"
V1_KEY = SAMPLES / "table.pub"


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
        "one_history",
        "arrivals",
    }
    assert (document["keyed"], document["format_version"], document["accepted_by"]) == (
        False,
        FORMAT_VERSION,
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
    assert [guarantee for guarantee, _ in assurance.not_proved] == [
        Guarantee.ONE_HISTORY,
        Guarantee.ARRIVALS,
    ]
    assert f"format v{FORMAT_VERSION}, keyed" in report_text(report)
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
    assert "(--fast: the other records' table signatures not checked)" in text


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
    assert "proved: every submission is signed by the key the genesis lists for its seat" in text
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


# -- Issue 28, point 6: "Every report line claims only what the files prove. [...] Word each
# guarantee as exactly what it proves; for each, a test builds the counter-example and shows
# the line is not printed." Each test below builds a log that verifies while the stronger
# claim would be false or unproved, and checks that the report does not make it.


def _proved(report: object) -> list[str]:
    """The ``proved:`` lines of ``report``'s text."""
    text = report_text(report)  # type: ignore[arg-type]
    return [line.strip() for line in text.splitlines() if line.strip().startswith("proved: ")]


def test_fast_does_not_say_the_table_signed_every_record(tmp_path: Path) -> None:
    """table_signed: --fast checks the table's signatures on the genesis and the final
    record only. A record between them signed by another key still passes --fast (the chain
    binds it), so its report says what the chain proves, not that the table signed every
    body."""
    values = values_of("short", keyed=True)
    middle = len(values) // 2
    lines = seal(values, forged={middle}, player_keys=PLAYER_KEYS[:2])
    full = verify_lines(tmp_path, lines)
    assert full.finding is not None and full.finding.code is VerifyCode.BAD_TABLE_SIGNATURE
    report = verify_lines(tmp_path, lines, Settings(table_key=TABLE_PUB, fast=True))
    assert report.verdict is Verdict.VERIFIED
    assert not any(
        line.startswith("proved: the pinned table signed every record")
        or "signed the body of every record" in line
        for line in _proved(report)
    ), _proved(report)
    assert any("the chain binds every other record to them" in line for line in _proved(report))


@pytest.mark.slow  # a whole tournament table, played and verified
def test_a_tournament_table_does_not_say_its_seats_bound_the_deal(tmp_path: Path) -> None:
    """deal_bound: "A keyed tournament table's report says 'no one party could choose or
    predict the deal'; in a tournament the seats' entropy deals nothing, and the plan may
    hold only the organiser's own unsigned contribution. Say what the deal rests on (the
    plan, its contributions) instead." Here the plan's one contribution is the organiser's,
    unsigned: the organiser alone chose every pack, and the keyed table still verifies."""
    secret = bytes(range(40, 72))
    shape = Shape("Solo cup", tables=1, seats=2, hands=1)
    plan = make_plan(secret, shape, load_rules("peer2peer"), (Contribution("me", b"m" * 32),))
    keys = PLAYER_KEYS[:2]
    path = tmp_path / "table-1.jsonl"
    table = Table.create(
        path,
        plan.rules,
        [
            PlayerInfo(f"k{seat}", f"b{seat}", raw_public_bytes(key))
            for seat, key in enumerate(keys)
        ],
        TABLE_KEY,
        secret,
        None,
        player_signers=[player_signer(key) for key in keys],
        tournament=plan.tag(1),
    )
    play_on(table, word_chooser(MatchSeed.from_plain("solo")), player_keys=keys)
    table.reveal()
    report = verify_log(path, PINNED)
    assert (report.verdict, report.keyed, report.tournament_plan) == (
        Verdict.VERIFIED,
        True,
        plan.digest,
    )
    assert not any("could choose" in line or "entropy" in line for line in _proved(report))
    assurance = assurance_of(report)
    assert assurance is not None
    why = dict(assurance.not_proved)[Guarantee.DEAL_BOUND]
    assert f"the packs are those of plan {plan.digest} (named in the genesis)" in why
    assert "not the seats' entropy" in why
    assert "racing-demon tournament check PLAN" in why
    assert _document(report)["tournament_plan"] == plan.digest


def test_fast_does_not_say_every_move_is_its_players(tmp_path: Path) -> None:
    """moves_signed (and views_bound, which rests on the same signatures): --fast checks no
    player's signature on a move, so a move whose signature is another record's passes it;
    its report does not say that every submission is signed by its seat's key."""
    values = values_of("short", keyed=True)
    moves = [index for index, value in enumerate(values) if "player" in value["sigs"]]
    forged, other = moves[len(moves) // 2], moves[0]
    values[forged]["sigs"]["player"] = values[other]["sigs"]["player"]
    lines = seal(values, forged)
    full = verify_lines(tmp_path, lines)
    assert full.finding is not None and full.finding.code is VerifyCode.BAD_PLAYER_SIGNATURE
    report = verify_lines(tmp_path, lines, Settings(table_key=TABLE_PUB, fast=True))
    assert report.verdict is Verdict.VERIFIED
    proved = _proved(report)
    assert not any("every submission" in line for line in proved), proved
    text = report_text(report)
    assert "not proved: --fast: players' signatures on moves not checked" in text
    assert "not proved: --fast: the records players named as seen are under signatures" in text


def test_a_fork_is_not_denied_by_the_log_that_hides_it(tmp_path: Path) -> None:
    """views_bound: "'No player was shown another history' overstates `seen`: it proves
    that every record a player named is this log's, not that no second version exists (a
    copy can prove a fork that this report did not see)." The table writes two histories of
    one keyed game, the players signing on from what each was shown: both verify, each
    proves views_bound, and only the copy, through the audit, shows the fork."""
    copy = seal(values_of("short", keyed=True), keep_accepts=True)
    values = values_of("short", keyed=True)
    moved = next(
        index
        for index in range(len(values) - 2, 0, -1)
        if "player" in values[index]["sigs"]
        and values[index + 1]["body"]["t_ms"] > values[index]["body"]["t_ms"] + 1
    )
    values[moved]["body"]["t_ms"] += 1  # the same move, logged 1 ms later in this history
    published = seal(values, moved, player_keys=PLAYER_KEYS[:2])
    log, other = write(tmp_path, published), write(tmp_path, copy, "copy.jsonl")
    for path in (log, other):
        assert verify_log(path, PINNED).verdict is Verdict.VERIFIED
    report = verify_log(log, PINNED)
    assurance = assurance_of(report)
    assert assurance is not None
    assert Guarantee.VIEWS_BOUND in dict(assurance.proved)
    text = report_text(report)
    assert "no player was shown another history" not in text.replace(
        "not proved: that no player was shown another history", ""
    )
    assert (
        "not proved: that no player was shown another history: one log cannot show it; a "
        "copy of another that the table signed proves a fork (audit --against)" in text
    )
    key = write_public_key(tmp_path / "table.pub")
    code, output = invoke("audit", str(log), "--table-key", str(key), "--against", str(other))
    assert code == 1 and "FORK" in output, output


def test_an_unaccepted_result_is_not_said_accepted(tmp_path: Path) -> None:
    """result_accepted: a seat's acceptance set to null (anyone may drop one: the table's
    signature does not cover `sigs`) still verifies; the report names the seat and does not
    say every seat accepted."""
    values = values_of("short", keyed=True)
    values[-1]["sigs"]["accepts"][1] = None
    report = verify_lines(tmp_path, seal(values, len(values), keep_accepts=True))
    assert report.verdict is Verdict.VERIFIED
    assert not any("acceptance" in line for line in _proved(report))
    assert "not proved: seat 1 did not accept the result" in report_text(report)


def test_no_log_says_when_its_moves_arrived() -> None:
    """arrivals: the sample log whose table held seat 0's ace back verifies; only the seat's
    receipts show the delay, so no report line claims anything of arrivals."""
    log = SAMPLES / "disputed" / "delayed-submission.jsonl"
    receipts = SAMPLES / "disputed" / "delayed-submission.seat0.receipts.jsonl"
    report = verify_log(log, Settings(table_key=raw_public_bytes(load_public_key(V1_KEY))))
    assert report.verdict is Verdict.VERIFIED
    assert not any("arrived" in line for line in _proved(report))
    assert "not proved: when each move arrived" in report_text(report)
    code, output = invoke(
        "audit", str(log), "--table-key", str(V1_KEY), "--receipts", str(receipts)
    )
    assert code == 1 and "DELAYED" in output, output


def test_a_resumed_report_says_what_the_first_run_said() -> None:
    """A --report line gives back its report, what the assurance rests on included: a
    tournament table's plan, and a refusal for a missing requirement (issue 28, point 6:
    "Also in --json output and batch mode consistently")."""
    log = SAMPLES / "tournament" / "table-1.jsonl"
    key = raw_public_bytes(load_public_key(V1_KEY))
    for settings in (
        Settings(table_key=key),
        Settings(table_key=key, required=(Requirement.DEAL_BOUND, Requirement.KEYED)),
    ):
        report = verify_log(log, settings)
        document = json.loads(cache_line(report, "ab" * 32, cache_key(settings)))
        assert schema_errors("verification-report-line", document) == []
        again = report_from_document(document)
        assert again == report
        assert report_text(again) == report_text(report)
    assert report.finding is not None and report.finding.code is VerifyCode.REQUIREMENT_UNMET
    assert report.finding.message.startswith("--require deal_bound: a tournament table: ")


def test_a_dealer_holding_a_listed_key_is_not_said_unable_to_steer(tmp_path: Path) -> None:
    """deal_bound, issue 28 point 6: "Word each guarantee as exactly what it proves". The
    log proves that the listed keys signed the commitment, not whose keys they are. A table
    that lists a key of its own for a seat (a house bot, a key it registered for a player)
    can try keys after committing and keep the one whose entropy deals what it likes: two
    games of one secret, one game id and one seat key apart, deal other packs, and each
    verifies with deal_bound proved. So the report may not say the dealer could not steer
    the deal without saying that this holds only for a dealer that holds no listed key."""
    rules = load_rules("peer2peer")
    packs = []
    for attempt in range(2):
        keys = [PLAYER_KEYS[0], PLAYER_KEYS[2 + attempt]]  # seat 1's key: the table's choice
        path = tmp_path / f"attempt{attempt}.jsonl"
        table = Table.create(
            path,
            rules,
            [PlayerInfo(f"k{seat}", "b", raw_public_bytes(key)) for seat, key in enumerate(keys)],
            TABLE_KEY,
            bytes(range(32)),
            None,
            player_signers=[player_signer(key) for key in keys],
            game_id="ef" * 16,
        )
        play_on(table, word_chooser(MatchSeed.from_plain("steer")), player_keys=keys)
        report = verify_log(path, PINNED)
        assert report.verdict is Verdict.VERIFIED
        assurance = assurance_of(report)
        assert assurance is not None
        assert Guarantee.DEAL_BOUND in dict(assurance.proved)
        (said,) = [line for line in _proved(report) if "entropy" in line]
        assert "dealer could not steer it" not in said
        assert "holds none of the listed keys" in said
        first_hand = json.loads(path.read_bytes().splitlines()[1])["body"]
        packs.append(first_hand["packs"])
    assert packs[0] != packs[1]  # the dealer chose between two deals
