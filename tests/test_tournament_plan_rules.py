"""A plan's rules as a second implementation and an organiser meet them: why
`tournament plan --rules nertz` writes `nertz-custom`, a plan under a reserved name, a
default written out (a log keeps its digest, a plan is refused), and the rules document
in the known-answer file (issue 29, item 14 and "Docs a second implementation needed")."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from racing_demon.cli import main
from racing_demon.game.duplicate import Shape
from racing_demon.profiles import builtin_digest, load_rules, rules_from_document
from racing_demon.tournament.plan import (
    Contribution,
    PlanCode,
    PlanError,
    make_plan,
    plan_from_document,
)
from racing_demon.verify import Verdict

from tampering import seal, values_of, verify_lines

SECRET = bytes(range(32))
KAT = Path(__file__).resolve().parent / "vectors" / "tournament-kat.json"


def cli(*args: str | Path) -> Result:
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def plan_with(tmp_path: Path, rules: str, hands: int) -> tuple[Result, dict[str, Any]]:
    """`tournament plan --rules RULES --hands HANDS`, and the plan it wrote."""
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET.hex() + "\n")
    terms = tmp_path / f"terms-{rules}-{hands}.json"
    committed = cli(
        "tournament", "commit", "--secret", f"file:{secret}", "--name", "Cup", "--tables", "2",
        "--seats", "3", "--hands", str(hands), "--rules", rules, "-o", terms,
    )  # fmt: skip
    assert committed.exit_code == 0, committed.output
    contribution = tmp_path / f"org-{rules}-{hands}.json"
    made = cli("tournament", "contribute", terms, "--by", "org", "-o", contribution)
    assert made.exit_code == 0, made.output
    out = tmp_path / f"plan-{rules}-{hands}.json"
    result = cli(
        "tournament", "plan", "--secret", f"file:{secret}", "--name", "Cup", "--tables", "2",
        "--seats", "3", "--hands", str(hands), "--rules", rules, "--contribution",
        contribution, "-o", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result, json.loads(out.read_text(encoding="utf-8"))


def test_plan_says_why_the_rules_it_writes_are_custom(tmp_path: Path) -> None:
    """Item 14: "`tournament plan --rules nertz` silently becomes `nertz-custom`. Say ...
    why the rules are custom (what differs from the built-in profile)"."""
    result, plan = plan_with(tmp_path, "nertz", 3)
    assert plan["rules"]["name"] == "nertz-custom"
    assert result.stderr.splitlines() == [
        "rules nertz-custom, not nertz: every table of a tournament plays exactly 3 hands "
        "(no target; a tie for the lead shares the win), so the rules differ from the "
        "built-in nertz:",
        "  match.target: null (nertz: 100)",
        "  match.max_hands: 3 (nertz: null)",
        '  match.lead_tie: "share" (nertz: "play_on")',
    ]
    assert "nertz-custom" not in result.stdout.replace("rules nertz-custom", "")


def test_commit_says_why_the_rules_it_publishes_are_custom(tmp_path: Path) -> None:
    """Item 14, for the terms published before the plan: `tournament commit --rules nertz`
    wrote `nertz-custom` silently; it says why, as the plan does."""
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET.hex() + "\n")
    terms = tmp_path / "cup.json"
    result = cli(
        "tournament", "commit", "--secret", f"file:{secret}", "--name", "Cup", "--tables", "2",
        "--seats", "3", "--hands", "3", "--rules", "nertz", "-o", terms,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(terms.read_text(encoding="utf-8"))["rules"]["name"] == "nertz-custom"
    assert (
        "rules nertz-custom, not nertz: every table of a tournament plays exactly 3 hands "
        "(no target; a tie for the lead shares the win), so the rules differ from the "
        "built-in nertz:\n"
        "  match.target: null (nertz: 100)\n"
    ) in result.stderr


def test_rules_that_a_tournament_does_not_change_stay_built_in_and_silent(
    tmp_path: Path,
) -> None:
    # peer2peer is one hand, no target, a shared lead: a one-hand tournament plays it as is.
    result, plan = plan_with(tmp_path, "peer2peer", 1)
    assert plan["rules"]["name"] == "peer2peer"
    assert plan["rules_sha256"] == builtin_digest("peer2peer")
    assert result.stderr == ""


def a_plan_document() -> dict[str, Any]:
    plan = make_plan(
        SECRET, Shape("Cup", 2, 3, 2), load_rules("nertz"), (Contribution("org", b"o" * 32),)
    )
    return plan.to_document()


def test_a_plan_under_a_reserved_name_is_told_one_consistent_thing(tmp_path: Path) -> None:
    """ "A plan whose rules carry a reserved name gets a message that contradicts itself":
    it asked for no target, max_hands 2 and lead_tie share, and found exactly that."""
    document = a_plan_document()
    document["rules"]["name"] = "nertz"  # the tournament's rules under the built-in name
    document["rules_sha256"] = rules_from_document(document["rules"]).digest()
    with pytest.raises(PlanError) as refused:
        plan_from_document(document)
    assert (refused.value.code, refused.value.member) == (PlanCode.BAD_RULES, "$.rules.name")
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(document))
    result = cli("tournament", "check", path)
    assert result.exit_code == 1
    assert result.stderr == (
        f"{path}: BAD_RULES: $.rules.name: the rules are named like the built-in profile "
        "'nertz' but are not it (match.target: null (nertz: 100); match.max_hands: 2 "
        '(nertz: null); match.lead_tie: "share" (nertz: "play_on")): a built-in name is '
        "reserved for that very profile; name them 'nertz-custom'\n"
    )
    assert "must have no target" not in result.stderr


def test_a_default_written_out_keeps_a_logs_digest_and_is_refused_in_a_plan(
    tmp_path: Path,
) -> None:
    """ "A log's rules may write a default out and keep their digest while a plan with the
    same rules is refused — say which holds where" (docs/log-format.md §7, docs/
    tournament.md "Checking a plan")."""
    values = values_of("table")
    genesis = values[0]["body"]
    digest = genesis["rules_sha256"]
    assert "blocked_after" not in genesis["rules"]["stall"]
    genesis["rules"]["stall"]["blocked_after"] = "full_cycle"  # the default, written out
    report = verify_lines(tmp_path, seal(values))
    assert report.verdict is Verdict.VERIFIED, report.finding
    assert report.rules is not None and report.rules.sha256 == digest
    assert report.rules.builtin

    document = a_plan_document()
    assert "blocked_after" not in document["rules"]["stall"]
    document["rules"]["stall"]["blocked_after"] = "full_cycle"
    assert rules_from_document(document["rules"]).digest() == document["rules_sha256"]
    with pytest.raises(PlanError) as refused:
        plan_from_document(document)
    assert (refused.value.code, refused.value.member) == (PlanCode.BAD_RULES, "$.rules")
    assert "a default written out" in refused.value.message


def test_the_known_answer_file_holds_each_plans_rules_document() -> None:
    """ "The tournament known-answer file lacks each plan's rules document": with it, the
    rules digest (and so the plan body P hashes) follows from the file alone."""
    for vector in json.loads(KAT.read_text(encoding="utf-8"))["tournaments"]:
        rules = vector["rules"]
        canonical = json.dumps(rules, sort_keys=True, separators=(",", ":")).encode()
        assert hashlib.sha256(canonical).hexdigest() == vector["rules_sha256"]
        built = make_plan(
            SECRET,
            Shape(vector["name"], vector["tables"], vector["seats"], vector["hands"]),
            load_rules(vector["profile"]),
            (Contribution("any", b"a" * 32),),
        )
        assert built.to_document()["rules"] == rules
        assert rules["match"] == {"target": None, "max_hands": vector["hands"], "lead_tie": "share"}
