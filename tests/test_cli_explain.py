"""Issue 16, point 9: explanations where a user needs them.

Every reason code has one sentence (``racing_demon.explanations``), printed by
``racing-demon explain``, listed by ``explain --help`` and docs/reason-codes.md; a bounce
that lost a race names the record that won it; a torn log's verdict points at ``recover``;
``replay`` of an unfinished log says it is unfinished; a claim about a seat or a hand the
log does not have says so.
"""

from __future__ import annotations

import enum
import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import racing_demon
from racing_demon.cli import main
from racing_demon.explanations import FAMILIES, close_codes, explain, explanations
from racing_demon.log.reader import ReadCode
from racing_demon.replay import find_secret

from conftest import invoke, load_script

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_games" / "valid"
TABLE_PUB = ROOT / "sample_games" / "table.pub"
RACE = SAMPLES / "nertz-3p-demon-empty-signed.jsonl"  # record 76 lost its race to 75
TWO_SEATS = SAMPLES / "table-2p-to-100.jsonl"  # 2 seats, 4 hands


def _code_enums() -> set[type[enum.StrEnum]]:
    """Every reason-code enum of the package: a StrEnum whose name ends in Code."""
    found: set[type[enum.StrEnum]] = set()
    for module in pkgutil.walk_packages(racing_demon.__path__, "racing_demon."):
        if module.name.startswith(("racing_demon.testing", "racing_demon.cli")) or (
            module.name == "racing_demon.__main__"
        ):
            continue  # test support (selenium), the commands and the entry point hold no codes
        for value in vars(importlib.import_module(module.name)).values():
            if (
                isinstance(value, type)
                and issubclass(value, enum.StrEnum)
                and value.__name__.endswith("Code")
            ):
                found.add(value)
    return found


def test_every_member_of_every_code_enum_has_one_sentence_and_no_entry_is_stale() -> None:
    assert {family.codes for family in FAMILIES} == _code_enums()
    # TableCode and FileCode: issue 29, items 23 and 13; ServeCode: issue 31 ("every error
    # with a code that `explain` knows"), and JournalCode, the server's durable point.
    assert len(FAMILIES) == 15
    for family in FAMILIES:
        assert set(family.sentences) == set(family.codes), family.codes.__name__
        assert all(type(code) is family.codes for code in family.sentences)
    assert len(explanations()) == sum(len(family.codes) for family in FAMILIES)


@pytest.mark.parametrize("entry", explanations(), ids=lambda entry: entry.code)
def test_each_explanation_is_one_sentence(entry: object) -> None:
    sentence = entry.sentence  # type: ignore[attr-defined]
    assert sentence[0].isupper() and sentence.endswith(".")
    assert "\n" not in sentence and "  " not in sentence
    assert not re.search(r"[.!?] ", sentence), sentence  # one sentence: no full stop inside


def test_explain_prints_the_code_its_family_and_where_it_is_specified() -> None:
    code, out = invoke("explain", "TORN_LINE")
    assert code == 0
    assert out == (
        "TORN_LINE: Reading a log or receipts file (verify steps 1, 2)\n"
        "  The last line has no terminating newline, as a crash in the middle of a\n"
        "  write leaves it; `racing-demon recover LOG` repairs such a file once no\n"
        "  table writes it.\n"
        "  See racing-demon docs log-format 1.\n"
    )
    assert invoke("explain", "torn_line") == (code, out)  # any case


def test_a_name_two_families_share_is_explained_for_each() -> None:
    code, out = invoke("explain", "FLOAT")
    assert code == 0
    assert out.splitlines()[0] == "FLOAT: Reading a log or receipts file (verify steps 1, 2)"
    assert "FLOAT: A value outside the data model (NOT_CANONICAL's rule)" in out.splitlines()
    assert [entry.family.codes.__name__ for entry in explain("float")] == [
        "ReadCode",
        "CanonicalCode",
    ]
    assert [entry.family.codes.__name__ for entry in explain("TIME_BACKWARDS")] == [
        "VerifyCode",
        "SubmissionCode",
    ]


def test_an_unknown_code_is_refused_with_the_nearest_codes() -> None:
    code, out = invoke("explain", "TORN_LIN")
    assert code == 2
    assert (
        "Error: Invalid value for CODE: unknown reason code 'TORN_LIN'; did you mean TORN_LINE?"
        in out
    )
    code, out = invoke("explain", "xyzzy")
    assert code == 2
    assert (
        "Error: Invalid value for CODE: unknown reason code 'xyzzy' "
        "(racing-demon explain lists every code)" in out
    )
    # The closest first; the server's SEAT_TAKEN (issue 31) is near too.
    assert close_codes("foundation_taken")[0] == "FOUNDATION_TAKEN"


def test_an_unknown_code_is_echoed_bounded_and_escaped() -> None:
    code, out = invoke("explain", "\x1b[2J" + "Z" * 100_000)
    assert code == 2
    assert "\x1b" not in out
    assert f"unknown reason code '\\x1b[2J{'Z' * 36}...'" in out


def _words(text: str) -> str:
    return " ".join(text.split())


def test_explain_alone_lists_every_code_with_its_sentence_within_80_columns() -> None:
    code, out = invoke("explain")
    assert code == 0
    assert max(len(line) for line in out.splitlines()) <= 80
    listed = _words(out)
    for entry in explanations():
        assert _words(f"{entry.code} {entry.sentence}") in listed, entry.code
    for family in FAMILIES:
        assert f"{family.title}\n(see {family.command}):\n" in out


def test_explain_help_ends_with_every_code_and_its_sentence_within_80_columns() -> None:
    code, out = invoke("explain", "--help")
    assert code == 0
    assert max(len(line) for line in out.splitlines()) <= 80
    listed = _words(out)
    for entry in explanations():
        assert _words(f"{entry.code} {entry.sentence}") in listed, entry.code


def test_every_explain_answer_fits_80_columns() -> None:
    for name in {entry.code for entry in explanations()}:
        code, out = invoke("explain", name)
        assert code == 0
        assert max(len(line) for line in out.splitlines()) <= 80, name


def test_docs_reason_codes_is_generated_from_the_catalogue() -> None:
    regen = load_script("regen_reason_codes")
    page = (ROOT / "docs" / "reason-codes.md").read_text(encoding="utf-8")
    assert page == regen.render()
    for entry in explanations():
        assert f"| `{entry.code}` | {entry.sentence} |" in page
    assert regen.main(["--check"]) == 0


def test_the_regen_check_fails_on_a_stale_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    regen = load_script("regen_reason_codes")
    stale = tmp_path / "reason-codes.md"
    stale.write_text("# Reason codes\n", encoding="utf-8")
    monkeypatch.setattr(regen, "PAGE", stale)
    assert regen.main(["--check"]) == 1
    assert capsys.readouterr().err == ("stale reason-codes.md: run scripts/regen_reason_codes.py\n")
    assert regen.main([]) == 0
    assert regen.main(["--check"]) == 0


def test_the_readme_and_the_command_line_page_link_the_reason_codes() -> None:
    assert "`docs/reason-codes.md`" in (ROOT / "README.md").read_text(encoding="utf-8")
    page = (ROOT / "docs" / "command-line.md").read_text(encoding="utf-8")
    assert "[docs/reason-codes.md](reason-codes.md)" in page


# -- a bounce names the record that won the race ------------------------------------


def test_a_bounce_that_lost_a_race_names_the_record_that_won_it() -> None:
    code, out = invoke("replay", str(RACE), "--at", "76")
    assert code == 0, out
    assert out.splitlines()[0] == (
        "after record 76 at 28000 ms, hand 1 (playing): 2 demon>f3 3D "
        "(bounced: FOUNDATION_TAKEN, lost the race to record 75, seat 1's 3♦)"
    )
    code, out = invoke("replay", str(RACE), "--at", "75")
    assert code == 0, out
    assert out.splitlines()[-1] == (
        "next: record 76 (bounce, seat 2 Cleo (hard)): 2 demon>f3 3D "
        "(bounced: FOUNDATION_TAKEN, lost the race to record 75, seat 1's 3♦)"
    )


def test_a_move_after_the_hand_ended_names_the_record_that_ended_it() -> None:
    late = ROOT / "sample_games" / "disputed" / "wrong-claim.jsonl"  # 165 calls, 166 is late
    code, out = invoke("replay", str(late), "--at", "166")
    assert code == 0, out
    assert out.splitlines()[0] == (
        "after record 166 at 73150 ms, hand 1 (called): 1 turn 2H 8H 7S "
        "(bounced: HAND_OVER, lost the race to record 165: seat 0 ended the hand)"
    )


# -- an unfinished log, a torn log ----------------------------------------------------


def _secret(log: Path) -> str:
    secret = find_secret(log)
    assert secret is not None
    return secret.hex()


def test_replay_of_an_unfinished_log_says_it_is_unfinished(tmp_path: Path) -> None:
    unfinished = tmp_path / "unfinished.jsonl"
    unfinished.write_bytes(b"".join(TWO_SEATS.read_bytes().splitlines(keepends=True)[:40]))
    secret = tmp_path / "secret.txt"
    secret.write_text(_secret(TWO_SEATS) + "\n")
    code, out = invoke("replay", str(unfinished), "--secret", f"file:{secret}")
    assert code == 0, out
    assert out.splitlines()[-1] == (
        "next: nothing yet: the log is unfinished (no final record after record 39)"
    )
    assert "the log ends here" not in out
    code, out = invoke("replay", str(TWO_SEATS))
    assert code == 0, out
    assert out.splitlines()[-1] == "next: nothing (the final record ends the match)"


def _torn(tmp_path: Path) -> Path:
    lines = TWO_SEATS.read_bytes().splitlines(keepends=True)
    torn = tmp_path / "torn game.jsonl"
    torn.write_bytes(b"".join(lines[:40]) + lines[40][:30])  # a write cut short
    return torn


def test_replay_of_a_torn_log_shows_the_last_complete_record_and_says_why(
    tmp_path: Path,
) -> None:
    torn = _torn(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text(_secret(TWO_SEATS) + "\n")
    code, out = invoke("replay", str(torn), "--secret", f"file:{secret}")
    assert code == 0, out
    assert out.splitlines()[0].startswith("after record 39 ")
    assert out.splitlines()[-1] == (
        "next: nothing yet: the log is unfinished (line 41 is torn, as a crash mid-write "
        "leaves it; racing-demon recover repairs the file)"
    )
    code, out = invoke("replay", str(torn))  # no final record: the secret is needed
    assert code == 2
    assert "Error: the log has no final record: give the dealer secret, --secret SOURCE" in out


def test_a_torn_logs_verdict_points_at_recover(tmp_path: Path) -> None:
    torn = _torn(tmp_path)
    code, out = invoke("verify", str(torn), "--table-key", str(TABLE_PUB))
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("UNFINISHED  ")
    assert lines[1] == "  line 41: TORN_LINE: last line has no terminating newline"
    assert lines[2] == (
        f"  a write was cut short: racing-demon recover '{torn}' repairs the file once no "
        "table writes it"
    )
    assert ReadCode.TORN_LINE in {entry.code for entry in explain("TORN_LINE")}


def test_a_torn_log_on_standard_input_is_sent_to_recover_with_its_file(tmp_path: Path) -> None:
    torn = _torn(tmp_path).read_bytes()
    result = CliRunner().invoke(main, ["verify", "-", "--table-key", str(TABLE_PUB)], input=torn)
    assert result.exit_code == 1
    assert result.output.splitlines()[2] == (
        "  a write was cut short: racing-demon recover FILE repairs the file it came from"
    )


def test_an_unfinished_log_without_a_torn_line_is_not_sent_to_recover(tmp_path: Path) -> None:
    unfinished = tmp_path / "unfinished.jsonl"
    unfinished.write_bytes(b"".join(TWO_SEATS.read_bytes().splitlines(keepends=True)[:40]))
    code, out = invoke("verify", str(unfinished), "--table-key", str(TABLE_PUB))
    assert code == 1
    assert "UNFINISHED: no final record after line 40" in out
    assert "recover" not in out


# -- a claim about a seat or a hand the log does not have -----------------------------


def test_a_claim_about_a_seat_or_hand_that_does_not_exist_says_so(tmp_path: Path) -> None:
    claims = tmp_path / "claims.json"
    claims.write_text(
        json.dumps(
            {
                "claims": [
                    {"seat": 7, "hand": 1, "score": 3},
                    {"seat": 5, "total": 3},
                    {"seat": 1, "hand": 99, "placed": 3},
                ]
            }
        ),
        encoding="utf-8",
    )
    code, out = invoke(
        "audit", str(TWO_SEATS), "--table-key", str(TABLE_PUB), "--claim", str(claims)
    )
    assert code == 1
    lines = out.splitlines()
    assert lines[-3:] == [
        "WRONG seat 7's score in hand 1 = 3: there is no seat 7 (the log has seats 0 and 1) "
        "(records -)",
        "WRONG seat 5's total = 3: there is no seat 5 (the log has seats 0 and 1) (records -)",
        "WRONG seat 1's placed in hand 99 = 3: there is no hand 99 (the log has hands 1 to 4) "
        "(records -)",
    ]
    code, out = invoke(
        "audit", str(TWO_SEATS), "--table-key", str(TABLE_PUB), "--claim", str(claims), "--json"
    )
    assert code == 1
    document = json.loads(out)
    assert [check["holds"] for check in document["claims"]] == [False, False, False]
    assert document["claims"][0]["message"] == (
        "seat 7's score in hand 1 = 3: there is no seat 7 (the log has seats 0 and 1)"
    )
    assert document["claims"][0]["records"] == []
