"""What `tournament score` says of what it was given (issue 29, item 12: "`tournament score
plan.json nodir` counts a missing folder as "1 log" and prints "a pack's top is 0";
`tournament score` has no `-q`, and with `--html FILE` does not say it wrote it")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from racing_demon.cli import main
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.report.tournament import standings_text
from racing_demon.tournament.plan import load_plan
from racing_demon.tournament.score import score_tournament

ROOT = Path(__file__).resolve().parents[1]
CUP = ROOT / "sample_games" / "tournament"
TABLE_PUB = ROOT / "sample_games" / "table.pub"


def score(*args: str | Path) -> Result:
    options = ["--table-key", str(TABLE_PUB), "--jobs", "1"]
    plan = str(CUP / "plan.json")
    result = CliRunner().invoke(main, ["tournament", "score", plan, *map(str, args), *options])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.mark.parametrize("made", ["missing", "empty folder"])
def test_logs_that_hold_no_log_are_refused_in_one_line(tmp_path: Path, made: str) -> None:
    logs = tmp_path / "nodir"
    if made == "empty folder":
        logs.mkdir()
        (logs / "notes.txt").write_text("not a log\n")
    result = score(logs)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and f"LOGS {logs}" in lines[0], result.stderr
    assert ("No such file" if made == "missing" else "no log (*.jsonl)") in lines[0]
    assert "1 log" not in result.output and "top is 0" not in result.output


def test_a_missing_log_beside_good_ones_is_refused_before_any_is_verified(tmp_path: Path) -> None:
    result = score(CUP / "table-1.jsonl", tmp_path / "table-2.jsonl")
    assert result.exit_code == 2 and result.stdout == ""
    assert f"LOGS {tmp_path / 'table-2.jsonl'}: cannot read it" in result.stderr


def test_quiet_prints_the_tournament_line_and_its_problems_only() -> None:
    result = score(CUP, "-q")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "tournament Sample cup · 4 tables of 4 seats · 3 hands · 4 of 4 scored from 4 logs"
    ]
    result = score(CUP / "table-1.jsonl", "--quiet")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].endswith("1 of 4 scored from 1 log")
    assert lines[1:] == [f"  table {t}: MISSING_TABLE: no log claims this table" for t in (2, 3, 4)]


def test_the_html_page_is_said_to_be_written_unless_quiet(tmp_path: Path) -> None:
    page = tmp_path / "standings.html"
    result = score(CUP, "--html", page)
    assert result.exit_code == 0, result.output
    size = page.stat().st_size
    assert result.stderr == f"wrote {page} ({size:,} bytes)\n"
    assert result.stdout.startswith("tournament Sample cup")
    quiet = score(CUP, "--html", page, "--force", "-q")
    assert quiet.exit_code == 0 and quiet.stderr == ""
    assert len(quiet.stdout.splitlines()) == 1


def test_no_pack_with_two_results_has_no_top_of_zero(tmp_path: Path) -> None:
    """One table scored: every pack holds one result, so nothing is compared; and a path
    that could not be read is a problem, not a log read."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(CUP / "table-1.jsonl", logs)
    plan = load_plan(CUP / "plan.json")
    key = raw_public_bytes(load_public_key(TABLE_PUB))
    standings = score_tournament(plan, [logs / "table-1.jsonl", tmp_path / "gone"], key, jobs=1)
    text = standings_text(standings)
    assert "scored from 1 log\n" in text
    assert "top is 0" not in text and "no pack has two results to compare" in text


def test_verbose_lists_every_packs_results_and_contradicts_quiet() -> None:
    result = score(CUP, "-v")
    assert result.exit_code == 0, result.output
    assert "packs (12)" in result.stdout
    assert "  pack 1 (hand 1): 4 results, top 6" in result.stdout
    result = score(CUP, "-v", "-q")
    assert result.exit_code == 2 and "contradicts" in result.output


def test_a_file_that_is_not_a_log_is_said_to_be_none(tmp_path: Path) -> None:
    """Issue 29, item 13 ("say it is not a log"), where `tournament score` meets one: a
    file of notes among the logs is "not a log", not a log that "does not verify"."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(CUP / "table-1.jsonl", logs)
    (logs / "notes.jsonl").write_bytes(b"my notes")
    result = score(logs)
    assert result.exit_code == 1
    assert f"NOT_VERIFIED: {logs / 'notes.jsonl'}: it is not a log: TORN_LINE: " in result.stdout
