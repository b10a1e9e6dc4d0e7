"""The organiser's commands: ``seed new -o``, ``tournament commit``, ``contribute``,
``plan`` and ``check``, and ``--secret SOURCE``; exit codes as racing_demon.outcomes, outputs as
racing_demon.files (never replaced without --force), JSON against its schema."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.cli import main
from racing_demon.game.deal import commitment
from racing_demon.log.keys import save_key_pair
from racing_demon.schema import schema_errors
from racing_demon.tournament.contribute import check_contribution
from racing_demon.tournament.plan import load_contribution, load_plan, load_terms

from conftest import invoke

SECRET = bytes(range(32))
NAME = "Club cup"


def run(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), input=input, env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET.hex() + "\n")
    return path


@pytest.fixture
def alice_key(tmp_path: Path) -> Path:
    save_key_pair(Ed25519PrivateKey.from_private_bytes(bytes(range(32))), tmp_path, "alice")
    return tmp_path / "alice.key"


SHAPE = ("--tables", "4", "--seats", "4", "--hands", "3")


def commit(tmp_path: Path, *shape: str, name: str = "terms.json") -> Path:
    """The terms of a Club cup (4 tables of 4 seats, 3 hands unless ``shape`` says
    otherwise), as the organiser publishes them before any contribution."""
    out = tmp_path / name
    secret = tmp_path / "commit-secret.txt"
    secret.write_text(SECRET.hex() + "\n")
    code, output = run(
        "tournament", "commit", "--secret", f"file:{secret}", "--name", NAME,
        *(shape or SHAPE), "-o", str(out), "--force",
    )  # fmt: skip
    assert code == 0, output
    return out


def contribute(tmp_path: Path, by: str, *extra: str, terms: Path | None = None) -> Path:
    out = tmp_path / f"{by}.json"
    code, output = run(
        "tournament", "contribute", str(terms or commit(tmp_path)), "--by", by, "-o", str(out),
        *extra,
    )  # fmt: skip
    assert code == 0, output
    return out


def make_plan_file(tmp_path: Path, secret_file: Path, *extra: str) -> tuple[int, str, Path]:
    contribution = tmp_path / "organiser.json"
    if not contribution.exists():
        contribute(tmp_path, "organiser")
    out = tmp_path / "plan.json"
    code, output = run(
        "tournament", "plan", "--secret", f"file:{secret_file}", "--name", NAME,
        "--tables", "4", "--seats", "4", "--hands", "3",
        "--contribution", str(contribution), "-o", str(out), *extra,
    )  # fmt: skip
    return code, output, out


# -- seed new -o ---------------------------------------------------------------------------


def test_seed_new_writes_the_secret_to_a_private_new_file(tmp_path: Path) -> None:
    path = tmp_path / "secret.txt"
    code, out = invoke("seed", "new", "-o", str(path))
    assert code == 0, out
    text = path.read_text()
    assert len(text) == 65 and text.endswith("\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert text.strip() not in out  # only the commitment is printed
    assert commitment(bytes.fromhex(text.strip())) in out


def test_seed_new_never_replaces_a_file(tmp_path: Path) -> None:
    """A secret replaced is a published commitment nobody can open any more."""
    path = tmp_path / "secret.txt"
    path.write_text("mine\n")
    code, out = invoke("seed", "new", "-o", str(path))
    assert code == 2 and "not replacing existing" in out and "--force" not in out
    assert path.read_text() == "mine\n"
    for args in (["-o", "-"], ["-o", str(tmp_path / "new.txt"), "--json"]):
        code, out = invoke("seed", "new", *args)
        assert code == 2, out
    assert not (tmp_path / "new.txt").exists()


# -- --secret SOURCE -----------------------------------------------------------------------


def test_the_secret_is_read_from_a_file_a_variable_or_standard_input(
    tmp_path: Path, secret_file: Path
) -> None:
    plan = make_plan_file(tmp_path, secret_file)[2]
    assert run("tournament", "check", str(plan), "--secret", f"file:{secret_file}")[0] == 0
    env = {"CUP_SECRET": SECRET.hex()}
    assert run("tournament", "check", str(plan), "--secret", "env:CUP_SECRET", env=env)[0] == 0
    line = SECRET.hex() + "\n"
    assert run("tournament", "check", str(plan), "--secret", "stdin", input=line)[0] == 0


def test_the_secret_itself_is_refused_and_never_echoed(tmp_path: Path, secret_file: Path) -> None:
    plan = make_plan_file(tmp_path, secret_file)[2]
    code, out = run("tournament", "check", str(plan), "--secret", SECRET.hex())
    assert code == 2
    assert "never the secret itself" in out and SECRET.hex() not in out


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("file:{tmp}/missing.txt", "cannot read"),
        ("file:{tmp}/plan.json", "holds no secret"),
        ("env:NO_SUCH_VARIABLE_HERE", "no variable NO_SUCH_VARIABLE_HERE"),
        ("file:", "never the secret itself"),
    ],
)
def test_an_unusable_secret_source_exits_2(
    tmp_path: Path, secret_file: Path, source: str, message: str
) -> None:
    plan = make_plan_file(tmp_path, secret_file)[2]
    code, out = run("tournament", "check", str(plan), "--secret", source.format(tmp=tmp_path))
    assert code == 2 and message in out, out


# -- contribute ----------------------------------------------------------------------------


def test_a_signed_contribution_file_answers_the_commitment(tmp_path: Path, alice_key: Path) -> None:
    path = contribute(tmp_path, "alice", "--key", str(alice_key))
    document = json.loads(path.read_text())
    assert schema_errors("tournament-contribution", document) == []
    terms = load_terms(tmp_path / "terms.json")
    contribution = load_contribution(path, terms)
    assert contribution.key is not None and len(contribution.entropy) == 64
    assert check_contribution(contribution, terms) is None
    again = contribute(tmp_path / "..", "alice", "--key", str(alice_key), "--force", terms=None)
    assert json.loads(again.read_text()) == document  # deterministic


def test_commit_writes_the_terms_every_contribution_signs(tmp_path: Path) -> None:
    """Issue 28, point 5: 'whatever the deal depends on is published with the commitment
    before contributions': the name, the shape, the rules every table plays and C."""
    terms = load_terms(commit(tmp_path))
    assert (terms.shape.name, terms.shape.tables, terms.shape.seats, terms.shape.hands) == (
        NAME,
        4,
        4,
        3,
    )
    assert terms.commitment == commitment(SECRET)
    assert (terms.rules.max_hands, terms.rules.target) == (3, None)  # a tournament's rules
    document = json.loads((tmp_path / "terms.json").read_text())
    assert schema_errors("tournament-commitment", document) == []
    code, out = run(
        "tournament", "commit", "--secret", f"file:{tmp_path / 'commit-secret.txt'}",
        "--name", NAME, "--tables", "2", "--seats", "5", "--hands", "1",
        "--rules", "peer2peer", "-o", str(tmp_path / "five.json"),
    )  # fmt: skip
    assert code == 2 and "BAD_RULES" in out and not (tmp_path / "five.json").exists()
    secret = tmp_path / "commit-secret.txt"
    code, out = run(
        "tournament", "commit", "--secret", f"file:{secret}", "--name", NAME, *SHAPE,
        "-o", str(secret), "--force",
    )  # fmt: skip
    assert code == 2 and "also an input" in out  # the secret is never replaced
    assert secret.read_text() == SECRET.hex() + "\n"


def test_an_unsigned_contribution_is_random(tmp_path: Path) -> None:
    first = json.loads(contribute(tmp_path, "org").read_text())
    second = json.loads(contribute(tmp_path, "org2").read_text())
    assert first["key"] is None and len(bytes.fromhex(first["entropy"])) == 32
    assert first["entropy"] != second["entropy"]


def test_contribute_to_standard_output_and_its_refusals(tmp_path: Path, alice_key: Path) -> None:
    terms = str(commit(tmp_path))
    base = ["tournament", "contribute", terms, "--by", "alice"]
    code, out = run(*base)
    assert code == 0 and '"format": "racing-demon/tournament-contribution/v2"' in out
    code, out = run("tournament", "contribute", str(alice_key), "--by", "alice")
    assert code == 2 and "COMMITMENT" in out  # not a commitment file
    assert run(*base, "--ask-passphrase")[0] == 2
    code, out = run(*base, "--key", str(tmp_path / "no.key"))
    assert code == 2 and "--key" in out
    existing = tmp_path / "taken.json"
    existing.write_text("{}")
    code, out = run(*base, "-o", str(existing))
    assert code == 2 and existing.read_text() == "{}"
    code, out = run(*base, "-o", str(alice_key), "--key", str(alice_key), "--force")
    assert code == 2 and "also an input" in out
    code, out = run(*base, "-o", terms, "--force")
    assert code == 2 and "also an input" in out


# -- plan ----------------------------------------------------------------------------------


def test_plan_writes_a_plan_that_checks_and_its_sheets(tmp_path: Path, secret_file: Path) -> None:
    sheets = tmp_path / "sheets.html"
    code, out, path = make_plan_file(tmp_path, secret_file, "--sheets", str(sheets))
    assert code == 0, out
    document = json.loads(path.read_text(encoding="utf-8"))
    assert schema_errors("tournament-plan", document) == []
    plan = load_plan(path)
    assert (plan.shape.tables, plan.shape.seats, plan.shape.hands) == (4, 4, 3)
    assert plan.commitment == commitment(SECRET)
    for figure in (plan.commitment, plan.deal_set, plan.digest):
        assert figure in out
    assert sheets.read_text(encoding="utf-8").count('<section class="sheet"') == 4


def test_plan_never_replaces_a_file_without_force(tmp_path: Path, secret_file: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text("old")
    code, out, _ = make_plan_file(tmp_path, secret_file)
    assert code == 2 and "not replacing existing" in out and path.read_text() == "old"
    code, out, _ = make_plan_file(tmp_path, secret_file, "--force")
    assert code == 0 and load_plan(path).shape.name == NAME
    code, out, _ = make_plan_file(tmp_path, secret_file, "--sheets", str(secret_file), "--force")
    assert code == 2 and "also an input" in out and secret_file.read_text().startswith(SECRET.hex())


def test_plan_refuses_a_contribution_to_another_commitment(tmp_path: Path, alice_key: Path) -> None:
    """Step 2: a contribution made for another commitment does not answer this one."""
    contribution = contribute(tmp_path, "alice", "--key", str(alice_key))
    other = tmp_path / "other.txt"
    other.write_text(bytes(32).hex() + "\n")
    code, out = run(
        "tournament", "plan", "--secret", f"file:{other}", "--name", NAME, *SHAPE,
        "--contribution", str(contribution), "-o", str(tmp_path / "plan.json"),
    )  # fmt: skip
    assert code == 2 and "BAD_CONTRIBUTION" in out and "$.commitment" in out
    assert not (tmp_path / "plan.json").exists()


@pytest.mark.parametrize(
    ("option", "value", "member"),
    [
        ("--tables", "5", "$.tables"),
        ("--seats", "3", "$.seats"),
        ("--hands", "2", "$.hands"),
        ("--rules", "nertz", "$.rules_sha256"),
        ("--name", "Other cup", "$.tournament"),
    ],
)
def test_plan_refuses_terms_other_than_the_contributions_signed(
    tmp_path: Path, secret_file: Path, alice_key: Path, option: str, value: str, member: str
) -> None:
    """Issue 28, point 5: 'the shape (tables, seats, hands) and the rules also feed the
    deal': a plan whose shape or rules differ from the published terms that a contribution
    answers is refused, naming the member."""
    contribution = contribute(tmp_path, "alice", "--key", str(alice_key))
    options = {"--name": NAME, "--tables": "4", "--seats": "4", "--hands": "3", "--rules": "table"}
    options[option] = value
    code, out = run(
        "tournament", "plan", "--secret", f"file:{secret_file}",
        *(item for pair in options.items() for item in pair),
        "--contribution", str(contribution), "-o", str(tmp_path / "plan.json"),
    )  # fmt: skip
    assert code == 2 and f"BAD_CONTRIBUTION: {member}" in out, out
    assert not (tmp_path / "plan.json").exists()


def test_plan_refuses_a_contribution_of_the_older_format(tmp_path: Path, secret_file: Path) -> None:
    """A v1 contribution signed only the name and C: it cannot stand in a plan that binds
    the shape and the rules, and the refusal says what to do."""
    old = tmp_path / "old.json"
    old.write_text(
        json.dumps(
            {
                "format": "racing-demon/tournament-contribution/v1",
                "tournament": NAME,
                "commitment": commitment(SECRET),
                "by": "old",
                "entropy": "ab" * 16,
                "key": None,
            }
        )
    )
    code, out = run(
        "tournament", "plan", "--secret", f"file:{secret_file}", "--name", NAME, *SHAPE,
        "--contribution", str(old), "-o", str(tmp_path / "plan.json"),
    )  # fmt: skip
    assert code == 2 and "BAD_CONTRIBUTION: $.format" in out and "contribute again" in out


def test_plan_refuses_more_seats_than_the_rules_seat(tmp_path: Path, secret_file: Path) -> None:
    contribution = contribute(tmp_path, "org")  # for 4 seats of the table rules
    code, out = run(
        "tournament", "plan", "--secret", f"file:{secret_file}", "--name", NAME,
        "--tables", "2", "--seats", "5", "--hands", "1", "--rules", "peer2peer",
        "--contribution", str(contribution), "-o", str(tmp_path / "plan.json"),
    )  # fmt: skip
    assert code == 2 and "BAD_RULES" in out and "--seats" in out


def test_plan_to_standard_output_sends_the_summary_to_standard_error(
    tmp_path: Path, secret_file: Path
) -> None:
    contribution = contribute(
        tmp_path, "org", terms=commit(tmp_path, "--tables", "2", "--seats", "2", "--hands", "1")
    )
    result = CliRunner().invoke(
        main,
        ["tournament", "plan", "--secret", f"file:{secret_file}", "--name", NAME,
         "--tables", "2", "--seats", "2", "--hands", "1",
         "--contribution", str(contribution), "-o", "-"],
    )  # fmt: skip
    assert result.exit_code == 0
    assert json.loads(result.stdout)["format"] == "racing-demon/tournament-plan/v2"
    assert "plan       P" in result.stderr


# -- check ---------------------------------------------------------------------------------


def test_check_reports_a_tampered_plan_with_its_code(tmp_path: Path, secret_file: Path) -> None:
    path = make_plan_file(tmp_path, secret_file)[2]
    document = json.loads(path.read_text())
    document["schedule"][1]["hands"][0]["packs"].reverse()
    path.write_text(json.dumps(document))
    code, out = run("tournament", "check", str(path))
    assert code == 1 and "SCHEDULE_MISMATCH: $.schedule[1].hands[0].packs" in out
    code, out = run("tournament", "check", str(path), "--json")
    report = json.loads(out)
    assert code == 1 and schema_errors("tournament-check", report) == []
    assert (report["ok"], report["code"], report["tournament"]) == (
        False,
        "SCHEDULE_MISMATCH",
        None,
    )


def test_check_json_with_the_secret(tmp_path: Path, secret_file: Path) -> None:
    path = make_plan_file(tmp_path, secret_file)[2]
    code, out = run("tournament", "check", str(path), "--json", "--secret", f"file:{secret_file}")
    report = json.loads(out)
    assert code == 0 and schema_errors("tournament-check", report) == []
    assert report["ok"] and report["secret_checked"]
    assert report["tournament"]["plan"] == load_plan(path).digest
    code, out = run("tournament", "check", str(path))
    assert code == 0 and "not checked: the deal set D" in out


def test_check_with_the_wrong_secret_is_no(tmp_path: Path, secret_file: Path) -> None:
    path = make_plan_file(tmp_path, secret_file)[2]
    env = {"WRONG": bytes(32).hex()}
    code, out = run("tournament", "check", str(path), "--secret", "env:WRONG", env=env)
    assert code == 1 and "SECRET_MISMATCH" in out


def test_check_of_an_unreadable_plan_exits_2(tmp_path: Path) -> None:
    code, out = run("tournament", "check", str(tmp_path / "missing.json"))
    assert code == 2 and "UNREADABLE" in out
    code, out = run("tournament", "check", str(tmp_path / "missing.json"), "--json")
    assert code == 2 and json.loads(out)["code"] == "UNREADABLE"


def test_check_writes_the_sheets_of_a_plan_that_checks(tmp_path: Path, secret_file: Path) -> None:
    path = make_plan_file(tmp_path, secret_file)[2]
    sheets = tmp_path / "again.html"
    assert run("tournament", "check", str(path), "--sheets", str(sheets))[0] == 0
    assert sheets.read_text(encoding="utf-8").count('<section class="sheet"') == 4
    assert run("tournament", "check", str(path), "--sheets", str(path), "--force")[0] == 2


# -- help ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["tournament"],
        ["tournament", "plan"],
        ["tournament", "check"],
        ["tournament", "contribute"],
        ["tournament", "commit"],
        ["tournament", "score"],
        ["tournament", "simulate"],
        ["seed", "new"],
        ["seed"],
    ],
)
def test_help_has_examples_within_80_columns(command: list[str]) -> None:
    code, out = invoke(*command, "--help")
    assert code == 0
    assert [line for line in out.splitlines() if len(line) > 80] == []
    if command != ["seed", "new"]:
        assert "Examples:" in out


def test_the_tournament_group_is_registered() -> None:
    code, out = invoke("--help")
    assert code == 0 and "tournament" in out
    assert os.environ.get("CUP_SECRET") is None  # no test leaks its variable


def test_plan_never_replaces_the_profile_it_read(tmp_path: Path, secret_file: Path) -> None:
    profile = tmp_path / "house.json"
    code, out = run("rules", "table")
    profile.write_text(out)
    code, out, _ = make_plan_file(tmp_path, secret_file)
    contribution = tmp_path / "organiser.json"
    code, out = run(
        "tournament", "plan", "--secret", f"file:{secret_file}", "--name", NAME,
        *SHAPE, "--rules", str(profile),
        "--contribution", str(contribution), "-o", str(profile), "--force",
    )  # fmt: skip
    assert code == 2 and "also an input" in out
    assert json.loads(profile.read_text())["name"] == "table"


def test_the_commands_reproduce_the_known_answers(tmp_path: Path, alice_key: Path) -> None:
    """From the command line, the first KAT tournament: alice's contribution (the fixture
    key signs deterministically) and the plan's E, D and P."""
    vector = json.loads(
        (Path(__file__).parent / "vectors" / "tournament-kat.json").read_text(encoding="utf-8")
    )["tournaments"][0]
    organiser, alice = vector["contributions"]
    secret = tmp_path / "kat-secret.txt"
    secret.write_text(vector["secret"] + "\n")
    terms = tmp_path / "kat-terms.json"
    code, out = run(
        "tournament", "commit", "--secret", f"file:{secret}", "--name", vector["name"],
        "--tables", str(vector["tables"]), "--seats", str(vector["seats"]),
        "--hands", str(vector["hands"]), "--rules", vector["profile"], "-o", str(terms),
    )  # fmt: skip
    assert code == 0, out
    unsigned = tmp_path / "organiser.json"
    unsigned.write_text(
        json.dumps(
            {
                "format": "racing-demon/tournament-contribution/v2",
                "tournament": vector["name"],
                "tables": vector["tables"],
                "seats": vector["seats"],
                "hands": vector["hands"],
                "rules_sha256": vector["rules_sha256"],
                "commitment": vector["commitment"],
                "by": "organiser",
                "entropy": organiser["entropy"],
                "key": None,
            }
        )
    )
    signed = tmp_path / "alice.json"
    code, out = run(
        "tournament", "contribute", str(terms), "--by", "alice", "--key", str(alice_key),
        "-o", str(signed),
    )  # fmt: skip
    assert code == 0 and json.loads(signed.read_text())["entropy"] == alice["entropy"]
    plan = tmp_path / "kat-plan.json"
    code, out = run(
        "tournament", "plan", "--secret", f"file:{secret}", "--name", vector["name"],
        "--tables", str(vector["tables"]), "--seats", str(vector["seats"]),
        "--hands", str(vector["hands"]), "--rules", vector["profile"],
        "--contribution", str(unsigned), "--contribution", str(signed), "-o", str(plan),
    )  # fmt: skip
    assert code == 0, out
    document = json.loads(plan.read_text(encoding="utf-8"))
    assert [c["by"] for c in document["contributions"]] == [
        c["by"] for c in vector["contributions"]
    ]
    assert (document["entropy"], document["deal_set"], document["plan"]) == (
        vector["entropy"],
        vector["deal_set"],
        vector["plan"],
    )


# -- issue 28, point 5: what the reports say of the contributions -----------------------------

OLD_PLAN = Path(__file__).parent / "vectors" / "tournament-v1" / "plan.json"


def test_check_says_how_many_contributions_are_unsigned(
    tmp_path: Path, secret_file: Path, alice_key: Path
) -> None:
    """Issue 28, point 5: '`tournament score` and `tournament check` say how many
    contributions were unsigned.'"""
    signed = contribute(tmp_path, "alice", "--key", str(alice_key))
    out_path = tmp_path / "plan.json"
    code, out = run(
        "tournament", "plan", "--secret", f"file:{secret_file}", "--name", NAME, *SHAPE,
        "--contribution", str(contribute(tmp_path, "org")), "--contribution", str(signed),
        "--contribution", str(contribute(tmp_path, "bob")), "-o", str(out_path),
    )  # fmt: skip
    assert code == 0, out
    code, out = run("tournament", "check", str(out_path))
    assert code == 0 and "3 contributions: 1 signed, 2 unsigned (the organiser's word)" in out
    assert "format v1" not in out
    code, out = run("tournament", "check", str(out_path), "--json")
    figures = json.loads(out)["tournament"]
    assert (figures["contributions"], figures["signed"], figures["unsigned"]) == (3, 1, 2)
    assert figures["unbound"] == []


def test_check_of_an_older_plan_says_what_it_does_not_bind() -> None:
    """Issue 28, point 5: 'Old plans still check, and their report says what they do not
    bind.' The sample cup's plan as format v1 wrote it."""
    code, out = run("tournament", "check", str(OLD_PLAN))
    assert code == 0, out
    assert (
        "4 contributions: 4 signed, 0 unsigned; an older plan (format v1): no contribution "
        "binds the order of the contributions, the shape (tables, seats, hands) or the rules, "
        "which the organiser could have chosen after seeing them"
    ) in out
    code, out = run("tournament", "check", str(OLD_PLAN), "--json")
    report = json.loads(out)
    assert code == 0 and schema_errors("tournament-check", report) == []
    assert report["tournament"]["unbound"] == ["order", "shape", "rules"]


@pytest.mark.parametrize("version", [2, 1])
def test_score_says_how_many_contributions_are_unsigned(
    tmp_path: Path, secret_file: Path, version: int
) -> None:
    """Issue 28, point 5: `tournament score` counts the unsigned contributions too, and of
    an older plan (format v1, its document written as that format wrote it) says what no
    contribution binds."""
    terms = commit(tmp_path, "--tables", "1", "--seats", "2", "--hands", "1")
    contribution = contribute(tmp_path, "org", terms=terms)
    plan = tmp_path / "plan.json"
    code, out = run(
        "tournament", "plan", "--secret", f"file:{secret_file}", "--name", NAME,
        "--tables", "1", "--seats", "2", "--hands", "1",
        "--contribution", str(contribution), "-o", str(plan),
    )  # fmt: skip
    assert code == 0, out
    older = dataclasses.replace(load_plan(plan), version=version)
    plan.write_text(json.dumps(older.to_document(), indent=2))
    save_key_pair(Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33))), tmp_path, "table")
    code, out = run(
        "tournament", "simulate", str(plan), "--secret", f"file:{secret_file}",
        "--signing-key", str(tmp_path / "table.key"), "--seed", "unsigned",
        "--out", str(tmp_path / "logs"),
    )  # fmt: skip
    assert code == 0, out
    code, out = run(
        "tournament", "score", str(plan), str(tmp_path / "logs"),
        "--table-key", str(tmp_path / "table.pub"), "--jobs", "1",
    )  # fmt: skip
    assert code == 0, out
    assert "1 contribution: 0 signed, 1 unsigned (the organiser's word)" in out
    assert ("an older plan (format v1): no contribution binds" in out) == (version == 1)
    code, out = run(
        "tournament", "score", str(plan), str(tmp_path / "logs"),
        "--table-key", str(tmp_path / "table.pub"), "--jobs", "1", "--json",
    )  # fmt: skip
    standings = json.loads(out)
    assert schema_errors("tournament-standings", standings) == []
    tournament = standings["tournament"]
    unbound = ["order", "shape", "rules"] if version == 1 else []
    assert (tournament["contributions"], tournament["unsigned"], tournament["unbound"]) == (
        1,
        1,
        unbound,
    )
