"""Every command that reports something prints JSON with --json: one document, one shape
per command, naming its format, valid against its schema (issue 16, point 5)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from racing_demon.cli import main
from racing_demon.game.deal import commitment
from racing_demon.replay import find_secret
from racing_demon.schema import EcmaValidator, load_schema, schema_errors

ROOT = Path(__file__).resolve().parents[1]
GAMES = ROOT / "sample_games"
GAME = GAMES / "valid" / "peer2peer-3p-hold-off.jsonl"  # small: every case is quick
TABLE_PUB = GAMES / "table.pub"
DISPUTED = GAMES / "disputed"
DOCS = ROOT / "docs" / "command-line.md"

# The schema of every command's --json document: its format is racing-demon/<name>/v1.
SCHEMAS: dict[tuple[str, ...], str] = {
    ("audit",): "audit-report",
    ("deal",): "deal-report",
    ("keygen",): "keygen-report",
    ("recover",): "recover-report",
    ("replay",): "replay-report",
    ("rules",): "rules-report",
    ("seed", "check"): "seed-check",
    ("seed", "new"): "seed-report",
    ("simulate",): "simulation-report",
    ("tournament", "check"): "tournament-check",
    ("tournament", "plan"): "tournament-plan-report",
    ("tournament", "score"): "tournament-standings",
    ("tournament", "simulate"): "tournament-simulation-report",
    ("verify",): "verification-report",
}


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str

    @property
    def document(self) -> Any:
        return json.loads(self.stdout)


def run(*args: str | Path) -> Run:
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


def commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The path of every command under ``group``, subcommands included."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):  # the group loads its commands as they are named
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))
        else:
            yield (*path, name)


def command_at(path: tuple[str, ...]) -> click.Command:
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None
        command = found
    return command


def has_json(path: tuple[str, ...]) -> bool:
    return any("--json" in getattr(param, "opts", ()) for param in command_at(path).params)


@dataclass(frozen=True)
class Workspace:
    """Inputs the commands read: a table key pair, a dealer secret, a tournament plan of
    two tables and the logs its simulation wrote."""

    folder: Path
    table_key: Path
    table_pub: Path
    secret: Path
    plan: Path
    logs: Path

    @property
    def secret_hex(self) -> str:
        return self.secret.read_text().strip()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    folder = tmp_path_factory.mktemp("json")
    assert run("keygen", "table", "--dir", folder).code == 0
    secret = folder / "secret.txt"
    assert run("seed", "new", "-o", secret).code == 0
    terms, contribution = folder / "terms.json", folder / "org.json"
    committed = run(
        "tournament", "commit", "--secret", f"file:{secret}", "--name", "Cup", "--tables", "2",
        "--seats", "2", "--hands", "1", "-o", terms,
    )  # fmt: skip
    assert committed.code == 0, committed.stderr
    made = run("tournament", "contribute", terms, "--by", "org", "-o", contribution)
    assert made.code == 0, made.stderr
    plan = folder / "plan.json"
    planned = run(
        "tournament", "plan", "--secret", f"file:{secret}", "--name", "Cup", "--tables", "2",
        "--seats", "2", "--hands", "1", "--contribution", contribution, "-o", plan,
    )  # fmt: skip
    assert planned.code == 0, planned.stderr
    logs = folder / "logs"
    played = run(
        "tournament", "simulate", plan, "--secret", f"file:{secret}",
        "--signing-key", folder / "table.key", "--seed", "json", "--out", logs,
    )  # fmt: skip
    assert played.code == 0, played.stderr
    return Workspace(folder, folder / "table.key", folder / "table.pub", secret, plan, logs)


UNFINISHED = DISPUTED / "truncated.jsonl"  # a match whose log stops before its end


def torn_copy(folder: Path) -> Path:
    """An unfinished log with the first bytes of one more record after it: a torn line."""
    log = folder / "torn.jsonl"
    log.write_bytes(UNFINISHED.read_bytes() + b'{"body":{"game"')
    return log


def plan_arguments(ws: Workspace) -> tuple[str | Path, ...]:
    """``tournament plan``'s arguments but its outputs: the workspace's plan again."""
    shape = ["--name", "Cup", "--tables", "2", "--seats", "2", "--hands", "1"]
    return ("--secret", f"file:{ws.secret}", *shape, "--contribution", ws.folder / "org.json")


def tournament_arguments(ws: Workspace) -> tuple[str | Path, ...]:
    """``tournament simulate``'s arguments but its seed and output folder."""
    return (ws.plan, "--secret", f"file:{ws.secret}", "--signing-key", ws.table_key)


Case = tuple[tuple[str | Path, ...], int]  # the arguments after the command, the exit code


def cases(ws: Workspace, tmp: Path) -> dict[tuple[str, ...], list[Case]]:
    """For every command with --json, invocations that give each kind of answer it has."""
    copy = tmp / "copy.jsonl"
    shutil.copy(GAME, copy)
    claim = tmp / "claim.json"
    claim.write_text(json.dumps({"claims": [{"seat": 0, "total": 1000}]}))
    receipts = GAME.with_name(f"{GAME.stem}.seat0.receipts.jsonl")
    secret = ws.secret_hex
    committed = commitment(bytes.fromhex(secret))
    simulated = ["--players", "2", "--hands", "1", "--seed", "json"]
    return {
        ("audit",): [
            ((GAME, "--table-key", TABLE_PUB), 0),
            ((GAME, "--table-key", TABLE_PUB, "--claim", claim), 1),
            ((GAME, "--table-key", TABLE_PUB, "--receipts", receipts, "--against", copy), 0),
            ((DISPUTED / "changed-byte.jsonl", "--table-key", TABLE_PUB), 1),
            ((UNFINISHED, "--table-key", TABLE_PUB), 1),
            ((tmp / "missing.jsonl", "--table-key", TABLE_PUB), 2),
        ],
        ("deal",): [(("--seed", "demo", "--players", "2"), 0)],
        ("keygen",): [
            (("alice", "--dir", tmp), 0),
            (("bob", "--dir", tmp, "--passphrase-file", ws.secret), 0),
        ],
        ("recover",): [
            ((copy,), 0),
            ((torn_copy(tmp), "--table-key", TABLE_PUB, "--dry-run"), 0),
            ((DISPUTED / "changed-byte.jsonl", "--table-key", TABLE_PUB, "--dry-run"), 1),
        ],
        ("replay",): [
            ((GAME,), 0),
            ((GAME, "--at", "40"), 0),
            ((GAMES / "valid" / "table-4p-tie-signed.jsonl", "--at", "5"), 0),
        ],
        ("rules",): [((), 0), (("nertz",), 0)],
        ("seed", "check"): [
            ((committed, "--secret", f"file:{ws.secret}"), 0),
            (("0" * 64, "--secret", f"file:{ws.secret}"), 1),
        ],
        ("seed", "new"): [((), 0)],
        ("simulate",): [
            ((*simulated, "--signing-key", ws.table_key, "--out", tmp / "sim.jsonl"), 0),
        ],
        ("tournament", "check"): [
            ((ws.plan,), 0),
            ((ws.plan, "--secret", f"file:{ws.secret}"), 0),
            ((GAMES / "tournament" / "plan.json", "--secret", f"file:{ws.secret}"), 1),
        ],
        ("tournament", "plan"): [
            ((*plan_arguments(ws), "-o", tmp / "plan.json", "--sheets", tmp / "sheets.html"), 0),
        ],
        ("tournament", "score"): [
            ((ws.plan, ws.logs, "--table-key", ws.table_pub, "--jobs", "1"), 0)
        ],
        ("tournament", "simulate"): [
            ((*tournament_arguments(ws), "--seed", "again", "--out", tmp / "logs"), 0),
        ],
        ("verify",): [
            ((GAME, "--table-key", TABLE_PUB), 0),
            ((DISPUTED / "changed-byte.jsonl", "--table-key", TABLE_PUB), 1),
        ],
    }


def test_every_command_with_json_has_a_schema_and_cases(
    workspace: Workspace, tmp_path: Path
) -> None:
    """The command tree is the list: a command that gains --json must be named here."""
    with_json = {path for path in commands(main) if has_json(path)}
    assert with_json == set(SCHEMAS)
    assert set(cases(workspace, tmp_path)) == with_json


@pytest.mark.parametrize("path", sorted(SCHEMAS), ids=" ".join)
def test_every_json_document_validates_against_its_schema(
    path: tuple[str, ...], workspace: Workspace, tmp_path: Path
) -> None:
    name = SCHEMAS[path]
    for arguments, code in cases(workspace, tmp_path)[path]:
        result = run(*path, *arguments, "--json")
        assert result.code == code, (arguments, result.stderr)
        document = result.document  # standard output is the document and nothing else
        assert document["format"] == f"racing-demon/{name}/v1"
        assert schema_errors(name, document) == [], arguments


def test_the_schemas_of_the_json_documents_ship_in_both_copies() -> None:
    for name in SCHEMAS.values():
        top = ROOT / "schemas" / f"{name}.schema.json"
        assert top.read_bytes() == (ROOT / "src/racing_demon/schemas" / top.name).read_bytes()


def test_the_docs_table_lists_every_command_with_json_its_format_and_schema() -> None:
    section = DOCS.read_text().split("## JSON output", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `racing-demon ([a-z ]+)` \| `([^`]+)` \| `([^`]+)` \|", section, re.M)
    listed = {tuple(command.split()): (format_, schema) for command, format_, schema in rows}
    assert listed == {
        path: (f"racing-demon/{name}/v1", f"schemas/{name}.schema.json")
        for path, name in SCHEMAS.items()
    }


# -- what each new document says ----------------------------------------------------------


def report_errors(document: object) -> list[str]:
    """Errors of ``document`` as one report of ``verify --json`` (its ``$defs/report``)."""
    schema = load_schema("verification-report")
    validator = EcmaValidator({"$defs": schema["$defs"], "$ref": "#/$defs/report"})
    return [error.message for error in validator.iter_errors(document)]


def test_audit_json_keeps_its_shape_when_the_log_fails(tmp_path: Path) -> None:
    """'audit --json must keep its schema's shape when the log fails': the verification
    inside, no hands and no claims, for a log that does not verify, one that is unfinished
    and one that cannot be read."""
    claim = tmp_path / "claim.json"
    claim.write_text(json.dumps({"claims": [{"seat": 0, "total": 1000}]}))
    for log, verdict, code in [
        (DISPUTED / "changed-byte.jsonl", "does_not_verify", 1),
        (UNFINISHED, "unfinished", 1),
        (tmp_path / "missing.jsonl", "unreadable", 2),
    ]:
        result = run("audit", log, "--table-key", TABLE_PUB, "--claim", claim, "--json")
        assert result.code == code
        document = result.document
        assert schema_errors("audit-report", document) == []
        assert document["verification"]["verdict"] == verdict
        assert report_errors(document["verification"]) == []
        assert (document["hands"], document["claims"]) == ([], [])


def test_replay_json_shows_the_table_and_what_came_next() -> None:
    last = run("replay", GAME, "--json").document
    names = json.loads(GAME.read_bytes().splitlines()[0])["body"]["players"]
    assert [seat["name"] for seat in last["seats"]] == [entry["name"] for entry in names]
    assert last["event"]["kind"] == "final"
    assert last["next"] == {"status": "end", "seq": None, "event": None, "message": None}
    at = run("replay", GAME, "--at", "40", "--json").document
    assert at["seq"] == 40 and at["next"]["status"] == "record" and at["next"]["seq"] == 41
    text = run("replay", GAME, "--at", "40").stdout
    assert text.startswith(f"after record 40 at {at['t_ms']} ms, hand {at['hand']}")


def test_replay_json_says_when_the_log_stops_before_its_final_record(tmp_path: Path) -> None:
    unfinished = tmp_path / "unfinished.jsonl"
    unfinished.write_bytes(b"".join(GAME.read_bytes().splitlines(keepends=True)[:50]))
    secret = find_secret(GAME)
    assert secret is not None
    document = run("replay", unfinished, "--seed", secret.hex(), "--json").document
    assert (document["seq"], document["next"]["status"]) == (49, "unfinished")


def test_replay_json_names_the_first_refused_record_next(tmp_path: Path) -> None:
    log = DISPUTED / "illegal-move-re-signed.jsonl"
    refused = run("verify", log, "--table-key", TABLE_PUB, "--json").document["reports"][0]
    seq = refused["finding"]["seq"]
    document = run("replay", log, "--at", str(seq - 1), "--json").document
    assert document["next"]["status"] == "refused" and document["next"]["seq"] == seq
    assert document["next"]["message"].startswith(f"record {seq}: ")
    # Past the refused record there is nothing to show: no document, the reason on stderr.
    beyond = run("replay", log, "--at", str(seq + 1), "--json")
    assert (beyond.code, beyond.stdout) == (1, "")
    assert beyond.stderr.startswith(f"cannot replay {log}: record {seq}: ")


def test_rules_json_is_one_shape_for_the_listing_and_for_one_profile(tmp_path: Path) -> None:
    listing = run("rules", "--json").document
    assert [entry["name"] for entry in listing["profiles"]] == ["table", "peer2peer", "nertz"]
    for entry in listing["profiles"]:
        assert entry["built_in"]
        assert schema_errors("rules-profile", entry["document"]) == []
        assert entry["document"] == json.loads(run("rules", entry["name"]).stdout)
    variant = listing["profiles"][0]["document"] | {"name": "five-piles"}
    variant["layout"] = variant["layout"] | {"work_piles": 5}
    path = tmp_path / "five.json"
    path.write_text(json.dumps(variant))
    one = run("rules", path, "--json").document
    assert schema_errors("rules-report", one) == []
    [entry] = one["profiles"]
    assert (entry["name"], entry["built_in"], entry["document"]) == ("five-piles", False, variant)
    # The digest is what --rules SHA256 pins: a log of these rules is pinned by it.
    peer2peer = GAMES / "valid" / "peer2peer-2p-abandoned.jsonl"
    digest = listing["profiles"][1]["sha256"]
    assert run("verify", peer2peer, "--table-key", TABLE_PUB, "--rules", digest).code == 0


def test_rules_json_refuses_an_unknown_profile_as_the_text_does() -> None:
    result = run("rules", "tabel", "--json")
    assert (result.code, result.stdout) == (2, "")
    assert "unknown profile 'tabel'" in result.stderr


def test_keygen_json_names_the_key_and_its_files(tmp_path: Path) -> None:
    document = run("keygen", "alice", "--dir", tmp_path, "--json").document
    assert document["private"] == str(tmp_path / "alice.key")
    assert document["public"] == str(tmp_path / "alice.pub")
    assert document["encrypted"] is False
    text = run("keygen", "bob", "--dir", tmp_path).stdout
    assert re.fullmatch(r"key id   [0-9a-f]{64}\nprivate  .*\npublic   .*\n", text)


def test_keygen_asks_for_the_passphrase_on_stderr_so_json_stays_whole(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["keygen", "carol", "--dir", str(tmp_path), "--ask-passphrase", "--json"],
        input="pass\npass\n",
    )  # fmt: skip
    assert result.exit_code == 0
    assert json.loads(result.stdout)["encrypted"] is True
    assert "Passphrase" in result.stderr


def test_recover_json_says_what_was_done_and_how_the_records_verify(tmp_path: Path) -> None:
    torn = torn_copy(tmp_path)
    size = torn.stat().st_size
    dry = run("recover", torn, "--table-key", TABLE_PUB, "--dry-run", "--json").document
    assert (dry["action"], dry["dry_run"], dry["signatures_checked"]) == (
        "REMOVED_TORN_LINE", True, True,
    )  # fmt: skip
    assert dry["torn_bytes"] + dry["kept_bytes"] == size == torn.stat().st_size
    assert dry["verification"]["verdict"] == "unfinished"
    assert report_errors(dry["verification"]) == []
    done = run("recover", torn, "--json").document
    assert (done["action"], done["dry_run"], done["signatures_checked"]) == (
        "REMOVED_TORN_LINE", False, False,
    )  # fmt: skip
    assert torn.read_bytes() == UNFINISHED.read_bytes()
    again = run("recover", torn, "--json").document
    assert (again["action"], again["exit_code"]) == ("NOTHING_TO_DO", 0)
    damaged = tmp_path / "changed-byte.jsonl"
    shutil.copy(DISPUTED / damaged.name, damaged)
    refused = run("recover", damaged, "--table-key", TABLE_PUB, "--json")
    assert refused.code == 1 and refused.document["action"] == "REFUSED"
    assert refused.document["verification"]["finding"]["code"] == "BAD_TABLE_SIGNATURE"


def test_recover_json_prints_no_document_for_a_file_it_cannot_read(tmp_path: Path) -> None:
    result = run("recover", tmp_path / "missing.jsonl", "--json")
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.startswith("cannot recover: ")


def test_seed_check_json_says_whether_the_secret_opens_the_commitment(
    workspace: Workspace,
) -> None:
    secret = workspace.secret_hex
    committed = commitment(bytes.fromhex(secret))
    source = f"file:{workspace.secret}"
    opens = run("seed", "check", committed, "--secret", source, "--json")
    assert (opens.code, opens.document["opens"], opens.stderr) == (0, True, "")
    assert opens.document["commitment"] == committed
    assert secret not in opens.stdout  # the secret may still be private
    wrong = run("seed", "check", "0" * 64, "--secret", source, "--json")
    assert (wrong.code, wrong.document["opens"], wrong.stderr) == (1, False, "")


def test_simulate_json_reports_the_match_it_wrote(workspace: Workspace, tmp_path: Path) -> None:
    out = tmp_path / "sim.jsonl"
    document = run(
        "simulate", "--players", "2", "--bots", "easy,hard", "--hands", "2", "--seed", "json",
        "--signing-key", workspace.table_key, "--out", out, "--json",
    ).document  # fmt: skip
    assert (document["log"], document["played"], len(document["hands"])) == (str(out), 2, 2)
    assert [seat["bot"] for seat in document["seats"]] == ["easy", "hard"]
    scores = [hand["scores"] for hand in document["hands"]]
    assert document["totals"] == [sum(column) for column in zip(*scores, strict=True)]
    assert document["table_key"] == str(workspace.table_pub)
    assert document["records"] == len(out.read_bytes().splitlines())
    receipts = [str(tmp_path / f"sim.seat{seat}.receipts.jsonl") for seat in (0, 1)]
    assert document["receipts"] == receipts
    verified = run("verify", out, "--table-key", workspace.table_pub, "--json").document
    assert verified["reports"][0]["totals"] == document["totals"]


def test_simulate_json_refuses_a_log_on_standard_output(workspace: Workspace) -> None:
    result = run(
        "simulate", "--players", "2", "--seed", "json", "--signing-key", workspace.table_key,
        "--out", "-", "--json",
    )  # fmt: skip
    assert (result.code, result.stdout) == (2, "")
    assert "--out - writes the log to standard output" in result.stderr
    assert "give --out FILE with --json" in result.stderr


def test_tournament_plan_json_gives_the_figures_check_gives(
    workspace: Workspace, tmp_path: Path
) -> None:
    plan = tmp_path / "plan.json"
    written = run("tournament", "plan", *plan_arguments(workspace), "-o", plan, "--json")
    assert written.code == 0
    # The one note on standard error: why the table rules became table-custom.
    assert written.stderr.startswith("rules table-custom, not table: every table of a")
    assert (written.document["plan_file"], written.document["sheets"]) == (str(plan), None)
    checked = run("tournament", "check", plan, "--json").document
    assert written.document["tournament"] == checked["tournament"]
    assert written.document["tournament"]["plan"] == json.loads(plan.read_text())["plan"]


def test_tournament_plan_json_describes_the_figures_as_check_does() -> None:
    figures = load_schema("tournament-plan-report")["properties"]["tournament"]
    checked = load_schema("tournament-check")["properties"]["tournament"]["oneOf"][1]
    assert {key: value for key, value in figures.items() if key != "description"} == checked


def test_tournament_plan_json_refuses_a_plan_on_standard_output(workspace: Workspace) -> None:
    result = run("tournament", "plan", *plan_arguments(workspace), "-o", "-", "--json")
    assert (result.code, result.stdout) == (2, "")
    assert "Invalid value for --out: --json already goes to standard output" in result.stderr


def test_tournament_simulate_json_lists_every_table_and_shows_progress_on_stderr(
    workspace: Workspace, tmp_path: Path
) -> None:
    out = tmp_path / "logs"
    result = run(
        "tournament", "simulate", *tournament_arguments(workspace), "--seed", "json",
        "--out", out, "--json",
    )  # fmt: skip
    names = ["table-1.jsonl", "table-2.jsonl"]
    assert [table["log"] for table in result.document["tables"]] == [str(out / n) for n in names]
    assert [line.split()[0] for line in result.stderr.splitlines()] == names
    plan = json.loads(workspace.plan.read_text())["plan"]
    assert result.document["plan"] == plan
