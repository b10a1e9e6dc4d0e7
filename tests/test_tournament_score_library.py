"""Tournament scoring as a library a program calls without click (issue 30, point 2: "Move
the use cases down: ... tournament scoring as a function; text and JSON reporters chosen by
name (as check-jsonschema does) ... a game server can call every use case without click";
point 3: "`tournament/score.py`: matchpoints in their own module, printers into
`report/`"; point 4: "put the tournament printers in `report/`")."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from racing_demon.batch import collect_logs
from racing_demon.cli import main
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.report.text import Verbosity
from racing_demon.report.tournament import REPORTERS, report_standings
from racing_demon.tournament import matchpoints
from racing_demon.tournament.plan import load_plan
from racing_demon.tournament.score import NoLogToScore, logs_to_score, score_tournament

ROOT = Path(__file__).resolve().parents[1]
CUP = ROOT / "sample_games" / "tournament"
TABLE_PUB = ROOT / "sample_games" / "table.pub"
PACKAGE = ROOT / "src" / "racing_demon"


@pytest.mark.slow  # scores the sample tournament four times over
def test_a_program_prints_what_the_command_prints() -> None:
    """The command is options plus the library's calls: a program that scores the sample
    cup and picks a reporter by name gets the command's standard output, byte for byte."""
    plan = load_plan(CUP / "plan.json")
    key = raw_public_bytes(load_public_key(TABLE_PUB))
    standings = score_tournament(plan, logs_to_score([CUP]), key, jobs=1)
    assert set(REPORTERS) == {"text", "json"}
    cases = [
        ("text", Verbosity.NORMAL, []),
        ("text", Verbosity.QUIET, ["-q"]),
        ("text", Verbosity.VERBOSE, ["-v"]),
        ("json", Verbosity.NORMAL, ["--json"]),
    ]
    for name, verbosity, flags in cases:
        args = ["tournament", "score", str(CUP / "plan.json"), str(CUP), *flags]
        result = CliRunner().invoke(main, [*args, "--table-key", str(TABLE_PUB), "--jobs", "1"])
        assert result.exit_code == standings.exit_code == 0, result.output
        assert result.stdout == report_standings(standings, name, verbosity) + "\n", name


@pytest.mark.parametrize("made", ["missing", "empty folder"])
def test_logs_that_yield_no_log_are_refused_by_the_library(tmp_path: Path, made: str) -> None:
    """The command's one-line refusal of a LOGS with nothing to score (issue 29, item 12)
    comes from the library, naming the LOGS and why."""
    named = tmp_path / "nodir"
    if made == "empty folder":
        named.mkdir()
        (named / "notes.txt").write_text("not a log\n")
    with pytest.raises(NoLogToScore) as refused:
        logs_to_score([CUP / "table-1.jsonl", named])
    assert refused.value.named == named
    reason = {
        "missing": "cannot read it: No such file or directory",
        "empty folder": "no log (*.jsonl) under this folder",
    }[made]
    assert refused.value.reason == reason
    assert isinstance(refused.value, ValueError)


def test_logs_to_score_are_the_logs_a_folder_stands_for() -> None:
    assert logs_to_score([CUP]) == collect_logs([CUP])
    assert len(logs_to_score([CUP])) == 4


def test_the_documented_names_stay_importable_from_tournament_score() -> None:
    """docs/tournament-scoring.md documented ``score``, ``Scores`` and ``TableResult`` as
    ``racing_demon.tournament.score``'s before the matchpoints had their own module."""
    module = importlib.import_module("racing_demon.tournament.score")
    for name in ("score", "Scores", "TableResult"):
        assert getattr(module, name) is getattr(matchpoints, name)
        assert name in module.__all__


@pytest.mark.parametrize(
    "module",
    [
        "tournament/matchpoints.py",
        "tournament/score.py",
        "report/tournament.py",
        "report/standings_html.py",
        "cli/tournament_score_cmd.py",
    ],
)
def test_each_scoring_module_has_one_job_and_stays_small(module: str) -> None:
    """Issue 30, point 3: "Split along the seams ... (and any other module over about 600
    lines)"; score.py held 862 lines before the split."""
    assert len((PACKAGE / module).read_text(encoding="utf-8").splitlines()) <= 600
