"""Every tournament use case called as a program calls it, without click (issue 30, point 2:
"The command line is thin; the use cases live in the library ... tournament scoring as a
function; text and JSON reporters chosen by name (as check-jsonschema does). Each command
module becomes options plus one call ...; a game server can call every use case without
click")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.duplicate import Shape
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.outcomes import ExitCode
from racing_demon.profiles import builtin_document, rules_from_document
from racing_demon.report.text import Verbosity
from racing_demon.report.tournament import (
    REPORTERS,
    TournamentReporter,
    standings_document,
    tournament_reporter_named,
)
from racing_demon.sim.bots import BOTS
from racing_demon.tournament.organise import (
    CheckRun,
    CommitRun,
    ContributeRun,
    PlanRun,
    run_check,
    run_commit,
    run_contribute,
    run_plan,
)
from racing_demon.tournament.outputs import TournamentUsageError
from racing_demon.tournament.plan import PlanCode, load_plan, load_terms
from racing_demon.tournament.score_run import CannotScore, ScoreRun, run_score
from racing_demon.tournament.simulate import SimulateRun, run_simulate

ROOT = Path(__file__).resolve().parents[1]
CUP = ROOT / "sample_games" / "tournament"
TABLE_PUB = ROOT / "sample_games" / "table.pub"
SECRET = bytes(range(32))
RULES = rules_from_document(builtin_document("table"))
SMALL = Shape("Club cup", tables=2, seats=2, hands=1)


class Printed:
    """An ``Echo`` that keeps what a reporter prints: (text, to standard error)."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, bool]] = []

    def __call__(self, text: str, to_stderr: bool) -> None:
        self.lines.append((text, to_stderr))

    def out(self) -> list[str]:
        return [text for text, to_stderr in self.lines if not to_stderr]


def reporter(
    name: str, printed: Printed, verbosity: Verbosity = Verbosity.NORMAL
) -> TournamentReporter:
    return tournament_reporter_named(name, verbosity, printed)


def organise(tmp_path: Path, shape: Shape = SMALL) -> tuple[Path, Ed25519PrivateKey]:
    """Commit, contribute (signed) and plan through the use cases: the plan file, and the
    contributor's key."""
    terms = tmp_path / "terms.json"
    printed = Printed()
    committed = run_commit(
        CommitRun(secret=SECRET, shape=shape, rules=RULES, out=str(terms)),
        reporter("text", printed),
    )
    assert load_terms(terms) == committed
    assert printed.lines[0] == (f"wrote {terms}", True)
    key = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
    alice = tmp_path / "alice.json"
    contribution = run_contribute(
        ContributeRun(terms_file=terms, by="alice", signing_key=lambda: key, out=str(alice)),
        reporter("text", printed),
    )
    assert contribution.key == raw_public_bytes(key.public_key())
    plan = tmp_path / "plan.json"
    printed = Printed()
    made = run_plan(
        PlanRun(
            secret=SECRET,
            shape=shape,
            rules=RULES,
            contributions=[alice],
            out=str(plan),
            sheets=str(tmp_path / "sheets.html"),
        ),
        reporter("json", printed),
    )
    document = json.loads(printed.out()[0])
    assert document["tournament"]["plan"] == made.digest == load_plan(plan).digest
    assert document["sheets"] == str(tmp_path / "sheets.html")
    return plan, key


def test_a_plan_is_made_and_checked(tmp_path: Path) -> None:
    plan, _ = organise(tmp_path)
    printed = Printed()
    check = run_check(CheckRun(plan_file=plan, secret=SECRET), reporter("text", printed))
    assert check.exit_code is ExitCode.OK and check.plan is not None
    assert printed.out()[-1].startswith("the secret opens C and deals D")
    printed = Printed()
    wrong = run_check(CheckRun(plan_file=plan, secret=bytes(32)), reporter("json", printed))
    assert wrong.exit_code is ExitCode.NO
    assert wrong.error is not None and wrong.error.code is PlanCode.SECRET_MISMATCH
    assert json.loads(printed.out()[0])["code"] == "SECRET_MISMATCH"


def test_a_use_case_refuses_an_output_before_any_work(tmp_path: Path) -> None:
    """The refusal names the option at fault, for the command line to say it as click's."""
    plan, _ = organise(tmp_path)
    before = plan.read_bytes()
    run = PlanRun(
        secret=SECRET,
        shape=SMALL,
        rules=RULES,
        contributions=[tmp_path / "alice.json"],
        out=str(plan),
    )
    with pytest.raises(TournamentUsageError) as refused:
        run_plan(run, reporter("text", Printed()))
    assert refused.value.option == "--out" and "not replacing" in str(refused.value)
    assert plan.read_bytes() == before


def test_the_sample_cup_is_scored_as_published(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scored from inside its folder, as scripts/regen_sample_games.py scores it, the
    sample cup gives the published standings.json, and its page is written."""
    monkeypatch.chdir(CUP)
    key = raw_public_bytes(load_public_key(TABLE_PUB))
    printed = Printed()
    page = tmp_path / "standings.html"
    run = ScoreRun(
        plan_file=Path("plan.json"), logs=[Path(".")], table_key=key, html=str(page), jobs=1
    )
    standings = run_score(run, reporter("json", printed))
    assert standings.exit_code is ExitCode.OK and standings.logs == 4
    published = (CUP / "standings.json").read_text(encoding="utf-8")
    assert (
        json.dumps(standings_document(standings), indent=2, ensure_ascii=False) + "\n" == published
    )
    assert json.loads(printed.out()[0]) == json.loads(published)
    assert printed.lines[0] == (f"wrote {page} ({page.stat().st_size:,} bytes)", True)
    with pytest.raises(CannotScore, match="LOGS nowhere: cannot read it"):
        run_score(
            ScoreRun(plan_file=Path("plan.json"), logs=[Path("nowhere")], table_key=key),
            reporter("text", Printed()),
        )


def test_a_small_tournament_is_simulated_then_scored(tmp_path: Path) -> None:
    plan, _ = organise(tmp_path)
    table_key = Ed25519PrivateKey.from_private_bytes(bytes(range(3, 35)))
    printed = Printed()
    run = SimulateRun(
        plan_file=plan,
        secret=SECRET,
        signing_key=lambda: table_key,
        table_pub="table.pub",
        bots=[BOTS["easy"]],
        seed="small cup",
        out=tmp_path / "logs",
    )
    played = run_simulate(run, reporter("text", printed))
    assert [table.path.name for table in played.tables] == ["table-1.jsonl", "table-2.jsonl"]
    assert [line.split()[0] for line in printed.out()[:2]] == ["table-1.jsonl", "table-2.jsonl"]
    with pytest.raises(TournamentUsageError) as refused:
        run_simulate(run, reporter("text", Printed()))
    assert refused.value.option == "--out"
    scored = run_score(
        ScoreRun(
            plan_file=plan,
            logs=[tmp_path / "logs"],
            table_key=raw_public_bytes(table_key.public_key()),
            jobs=1,
        ),
        reporter("text", Printed()),
    )
    assert scored.exit_code is ExitCode.OK and not scored.problems
    assert len(scored.scores.entries) == SMALL.tables * SMALL.seats


def test_the_reporters_are_chosen_by_name() -> None:
    assert sorted(REPORTERS) == ["json", "text"]
    assert tournament_reporter_named("json").whole_document
    assert not tournament_reporter_named("text").whole_document
    with pytest.raises(KeyError):
        tournament_reporter_named("html")


def test_a_program_checks_a_plan_without_loading_click() -> None:
    """A server's process: the use case and its reporter import no click."""
    program = (
        "import sys\n"
        "from pathlib import Path\n"
        "from racing_demon.report.tournament import tournament_reporter_named\n"
        "from racing_demon.tournament.organise import CheckRun, run_check\n"
        "from racing_demon.tournament.score_run import run_score\n"
        "from racing_demon.tournament.simulate import run_simulate\n"
        f"check = run_check(CheckRun(plan_file=Path({str(CUP / 'plan.json')!r})),\n"
        "    tournament_reporter_named('json', echo=lambda text, err: None))\n"
        "assert check.exit_code == 0, check.error\n"
        "assert 'click' not in sys.modules, 'click loaded'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
