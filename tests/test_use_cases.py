"""The commands' use cases as library calls, without click (issue 30, point 2: "The command
line is thin; the use cases live in the library ... Each command module becomes options
plus one call ...; a game server can call every use case without click").

Each use case is called with its settings value and a reporter that keeps what it is
handed; the outcome is asserted on that data, and the text and JSON reporters chosen by
name print what the command prints."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from racing_demon.cli import main
from racing_demon.deal_run import DealRun, Dealt, run_deal
from racing_demon.files import InMemoryLog, Output
from racing_demon.game.deal import MatchSeed, check_reveal, commitment
from racing_demon.keys_run import (
    KeygenRun,
    KeyPair,
    SeedCheck,
    SeedRun,
    run_keygen,
    run_seed_check,
    run_seed_new,
)
from racing_demon.log.keys import key_id, load_public_key, raw_public_bytes
from racing_demon.log.records import Record
from racing_demon.outcomes import ExitCode
from racing_demon.recover import Action, Recovery
from racing_demon.recover_run import RecoverRun, run_recover
from racing_demon.replay import find_secret
from racing_demon.replay_run import Replayed, ReplayRun, run_replay
from racing_demon.report.deal import deal_reporter_named
from racing_demon.report.keys import seed_reporter_named
from racing_demon.report.recover import recover_reporter_named
from racing_demon.report.replay import replay_reporter_named
from racing_demon.report.view import view_reporter_named
from racing_demon.usage import UsageProblem
from racing_demon.verify import Settings, Verdict
from racing_demon.viewer.write import ViewRun, WrittenPage, write_view

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_games"
LOG = SAMPLES / "table-3p-signed.jsonl"
TABLE_PUB = SAMPLES / "table.pub"
TABLE_KEY = raw_public_bytes(load_public_key(TABLE_PUB))
SECRET = find_secret(LOG)
assert SECRET is not None


@dataclass
class Kept:
    """A reporter of every use case here: what it is handed, and its lines on standard
    error."""

    shows_genesis: bool = True
    whole_document: bool = False
    handed: list[object] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def genesis(self, record: Record) -> None:
        self.handed.append(record)

    def replayed(self, replayed: Replayed) -> None:
        self.handed.append(replayed)

    def dealt(self, dealt: Dealt) -> None:
        self.handed.append(dealt)

    def wrote(self, page: WrittenPage) -> None:
        self.handed.append(page)

    def recovered(self, recovery: Recovery, *, signatures_checked: bool) -> None:
        self.handed.append((recovery, signatures_checked))

    def generated(self, pair: KeyPair) -> None:
        self.handed.append(pair)

    def made(self, secret_hex: str, commitment_hex: str) -> None:
        self.handed.append((secret_hex, commitment_hex))

    def written(self, out: str, commitment_hex: str) -> None:
        self.handed.append((out, commitment_hex))

    def checked(self, commitment_hex: str, *, opens: bool) -> None:
        self.handed.append((commitment_hex, opens))

    def note(self, message: str) -> None:
        self.errors.append(message)

    def failed(self, message: str) -> None:
        self.errors.append(message)


class _Writer:
    """A use case's output without the command line's OutputWriter."""

    def __init__(self, output: Output) -> None:
        self._stream = output.open()

    def write(self, data: bytes) -> None:
        self._stream.write(data)


@contextmanager
def _open_output(output: Output, option: str) -> Iterator[_Writer]:
    yield _Writer(output)
    output.commit()


class _Printed:
    """An ``Echo`` that keeps what a reporter prints, as the command line's output."""

    def __init__(self) -> None:
        self.out = self.err = ""

    def __call__(self, text: str, to_stderr: bool) -> None:
        if to_stderr:
            self.err += text + "\n"
        else:
            self.out += text + "\n"


def _cli(*args: str) -> tuple[int, str, str]:
    """What the command prints, in colour as the reporters print it (``click.echo`` takes
    colour off a stream that is no terminal)."""
    result = CliRunner().invoke(main, [*args, "--color", "always"])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.stdout, result.stderr


def test_every_use_case_runs_with_click_unimportable(tmp_path: Path) -> None:
    """A game server calls every use case, and its reporters, with no click installed."""
    script = f"""
import sys
sys.modules["click"] = None  # any import of click now fails
from contextlib import contextmanager
from pathlib import Path
from racing_demon.audit_run import AuditRun, run_audit
from racing_demon.deal_run import DealRun, run_deal
from racing_demon.keys_run import KeygenRun, SeedCheck, SeedRun
from racing_demon.keys_run import run_keygen, run_seed_check, run_seed_new
from racing_demon.recover_run import RecoverRun, run_recover
from racing_demon.replay_run import ReplayRun, run_replay
from racing_demon.report.audit import audit_reporter_named
from racing_demon.report.deal import deal_reporter_named
from racing_demon.report.keys import keygen_reporter_named, seed_reporter_named
from racing_demon.report.recover import recover_reporter_named
from racing_demon.report.replay import replay_reporter_named
from racing_demon.report.view import view_reporter_named
from racing_demon.verify import Settings
from racing_demon.viewer.write import ViewRun, write_view
from racing_demon.files import InMemoryLog, Output

@contextmanager
def open_output(output, option):
    yield output.open()
    output.commit()

log, here = Path({str(LOG)!r}), Path({str(tmp_path)!r})
key = bytes.fromhex({TABLE_KEY.hex()!r})
codes = [
    run_replay(ReplayRun(log=log, at_seq=3), replay_reporter_named("json")),
    run_deal(DealRun(log=log, hand=2), deal_reporter_named("text")),
    write_view(
        ViewRun(log=log, settings=Settings(), output=Output(here / "page.html")),
        view_reporter_named("text"),
        open_output=open_output,
    ),
    run_recover(
        RecoverRun(log=log, settings=Settings(), dry_run=True), recover_reporter_named("text")
    ),
    run_audit(AuditRun(log=log, table_key=key), audit_reporter_named("json")),
    run_keygen(KeygenRun(name="table", directory=here), keygen_reporter_named("json")),
    run_seed_new(
        SeedRun(out=str(here / "secret.txt")), seed_reporter_named("text"), open_output=open_output
    ),
    run_seed_check(SeedCheck(commitment="0" * 64, secret=bytes(32)), seed_reporter_named("json")),
]
print("codes", [int(code) for code in codes])
assert "click" not in [name.split(".")[0] for name in sys.modules if sys.modules[name]]
"""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "codes [0, 0, 0, 0, 0, 0, 0, 1]"
    written = {path.name for path in tmp_path.iterdir()}
    assert written == {"page.html", "table.key", "table.pub", "secret.txt"}


# Each command's module, its reporters' module in report/, and its use case's calls.
COMMANDS = {
    "replay_cmd": ("replay", {"run_replay"}),
    "deal_cmd": ("deal", {"run_deal"}),
    "view_cmd": ("view", {"write_view"}),
    "recover_cmd": ("recover", {"run_recover"}),
    "audit_cmd": ("audit", {"run_audit"}),
    "keygen_cmd": ("keys", {"run_keygen"}),
    "seed_cmd": ("keys", {"run_seed_new", "run_seed_check"}),
}
# What a command module may import from the library besides its use case and reporters:
# the values its options are read into.
_OPTION_VALUES = {
    "racing_demon.files",
    "racing_demon.game.deal",
    "racing_demon.game.rules",
    "racing_demon.log.reader",
    "racing_demon.outcomes",
    "racing_demon.usage",
    "racing_demon.verify",
}
_USE_CASES = {
    "racing_demon.audit_run",
    "racing_demon.deal_run",
    "racing_demon.keys_run",
    "racing_demon.recover_run",
    "racing_demon.replay_run",
    "racing_demon.viewer.write",
}


@pytest.mark.parametrize("module", sorted(COMMANDS))
def test_a_command_is_its_options_and_one_call(module: str) -> None:
    """Each command function calls its use case once, and the module imports nothing of
    the library but that, its reporters and the values its options are read into."""
    reports, use_case = COMMANDS[module]
    tree = ast.parse((ROOT / "src/racing_demon/cli" / f"{module}.py").read_text("utf-8"))
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("racing_demon.")
    }
    library = {name for name in imported if not name.startswith("racing_demon.cli.")}
    assert library - _OPTION_VALUES - _USE_CASES == {f"racing_demon.report.{reports}"}
    # The click commands: the module's decorated functions (seed's group runs nothing).
    commands = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.decorator_list and node.name != "seed"
    ]
    calls = [
        [
            call.func.id
            for call in ast.walk(command)
            if isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id in use_case
        ]
        for command in commands
    ]
    assert all(len(made) == 1 for made in calls)
    assert sorted(made[0] for made in calls) == sorted(use_case)


# -- replay ---------------------------------------------------------------------------


def test_replay_hands_the_table_after_the_record_asked_for() -> None:
    kept = Kept()
    assert run_replay(ReplayRun(log=LOG, at_seq=40), kept) is ExitCode.OK
    [replayed] = kept.handed
    assert isinstance(replayed, Replayed)
    assert replayed.record.seq == 40 and replayed.state is not None
    assert isinstance(replayed.following, Record) and replayed.following.seq == 41
    assert kept.errors == []


def test_replay_of_a_refused_log_shows_the_last_table_and_answers_no() -> None:
    kept = Kept()
    illegal = SAMPLES / "disputed" / "illegal-move-re-signed.jsonl"
    assert run_replay(ReplayRun(log=illegal), kept) is ExitCode.NO
    [replayed] = kept.handed
    assert isinstance(replayed, Replayed) and replayed.record.seq == 43
    assert str(replayed.following).startswith("record 44: ILLEGAL_MOVE: NOT_AN_ACE: ")


def test_replay_refuses_a_secret_that_opens_no_commitment() -> None:
    with pytest.raises(UsageProblem, match="does not open the commitment") as refused:
        run_replay(ReplayRun(log=LOG, secret=bytes(32)), Kept())
    assert refused.value.option == "--secret"


def test_replay_json_asks_for_a_table_not_the_genesis() -> None:
    with pytest.raises(UsageProblem, match="--at 0 --json") as refused:
        run_replay(ReplayRun(log=LOG, at_seq=0), Kept(shows_genesis=False))
    assert refused.value.option is None


def test_replay_of_a_missing_log_says_it_cannot_be_read(tmp_path: Path) -> None:
    kept = Kept()
    assert run_replay(ReplayRun(log=tmp_path / "none.jsonl"), kept) is ExitCode.UNUSABLE
    assert kept.handed == [] and kept.errors[0].startswith("cannot read ")


@pytest.mark.parametrize(("name", "options"), [("text", []), ("json", ["--json"])])
@pytest.mark.parametrize("at", ["0", "2", "120"])
def test_replay_reporters_print_what_the_command_prints(
    name: str, options: list[str], at: str
) -> None:
    printed = _Printed()
    try:
        code = run_replay(ReplayRun(log=LOG, at_seq=int(at)), replay_reporter_named(name, printed))
    except UsageProblem:
        assert (name, at) == ("json", "0")
        return
    assert (code, printed.out, printed.err) == _cli("replay", str(LOG), "--at", at, *options)


# -- deal -----------------------------------------------------------------------------


def test_deal_from_a_plain_seed_hands_the_packs_the_seed_derives() -> None:
    kept = Kept()
    assert run_deal(DealRun(seed="demo", players=3, hand=2), kept) is ExitCode.OK
    [dealt] = kept.handed
    assert isinstance(dealt, Dealt) and dealt.seed == "demo" and dealt.commitment is None
    seed = MatchSeed.from_plain("demo")
    assert dealt.packs == tuple(seed.pack(2, seat) for seat in range(3))
    assert dealt.state.hand == 2 and dealt.state.players == 3


def test_deal_from_a_log_names_its_commitment_never_the_secret() -> None:
    kept = Kept()
    assert run_deal(DealRun(log=LOG, hand=1), kept) is ExitCode.OK
    [dealt] = kept.handed
    assert isinstance(dealt, Dealt) and dealt.seed is None
    assert SECRET is not None and dealt.commitment == commitment(SECRET)
    assert SECRET.hex() not in repr(dealt)


@pytest.mark.parametrize(
    ("run", "option", "words"),
    [
        (DealRun(), None, "give one of --seed TEXT"),
        (DealRun(seed="x"), None, "Missing option '--players'"),
        (DealRun(log=LOG, players=3), None, "--log gives the rules"),
        (DealRun(log=LOG, hand=99), "--hand", "hand 99 was never played"),
        (DealRun(log=LOG, secret=bytes(32)), "--secret", "differs from the secret"),
    ],
)
def test_deal_refuses_what_cannot_be_dealt(run: DealRun, option: str | None, words: str) -> None:
    kept = Kept()
    with pytest.raises(UsageProblem, match=words) as refused:
        run_deal(run, kept)
    assert refused.value.option == option and kept.handed == []


def test_deal_reads_standard_input_only_once_the_settings_hold() -> None:
    """As before the move: a usage error comes before a terminal is read from."""

    def unread() -> InMemoryLog:
        raise AssertionError("standard input was read for a deal refused first")

    with pytest.raises(UsageProblem, match="--log gives the rules"):
        run_deal(DealRun(log="-", players=3, read_stdin=unread), Kept())
    kept = Kept()
    piped = DealRun(log="-", hand=2, read_stdin=lambda: InMemoryLog(LOG.read_bytes()))
    assert run_deal(piped, kept) is ExitCode.OK
    [from_stdin] = kept.handed
    assert run_deal(DealRun(log=LOG, hand=2), kept) is ExitCode.OK
    assert kept.handed[1] == from_stdin


def test_deal_past_the_end_of_a_log_warns_and_deals() -> None:
    kept = Kept()
    assert run_deal(DealRun(log=LOG, hand=99, past_end=True), kept) is ExitCode.OK
    assert len(kept.handed) == 1 and kept.errors[0].startswith("hand 99 is past the end of ")


@pytest.mark.parametrize(("name", "options"), [("text", []), ("json", ["--json"])])
def test_deal_reporters_print_what_the_command_prints(name: str, options: list[str]) -> None:
    printed = _Printed()
    code = run_deal(DealRun(log=LOG, hand=2), deal_reporter_named(name, printed))
    assert (code, printed.out, printed.err) == _cli(
        "deal", "--log", str(LOG), "--hand", "2", *options
    )


# -- view -----------------------------------------------------------------------------


def test_view_writes_the_page_and_hands_what_it_wrote(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    run = ViewRun(log=LOG, settings=Settings(table_key=TABLE_KEY), output=Output(page))
    kept = Kept()
    assert write_view(run, kept, open_output=_open_output) is ExitCode.OK
    [written] = kept.handed
    assert isinstance(written, WrittenPage)
    assert written.report.verdict is Verdict.VERIFIED and not written.secret_missing
    assert written.written == page.stat().st_size and written.records == written.replayed
    assert page.read_bytes().startswith(b"<!DOCTYPE html>")


def test_view_reporter_prints_what_the_command_prints(tmp_path: Path) -> None:
    page, cli_page = tmp_path / "page.html", tmp_path / "cli.html"
    printed = _Printed()
    run = ViewRun(log=LOG, settings=Settings(), output=Output(page))
    code = write_view(run, view_reporter_named("text", printed), open_output=_open_output)
    expected = _cli("view", str(LOG), "-o", str(cli_page))
    assert (code, printed.out, printed.err.replace(str(page), str(cli_page))) == expected
    assert page.read_bytes() == cli_page.read_bytes()


# -- recover --------------------------------------------------------------------------


def test_recover_cuts_a_torn_line_and_hands_the_recovery(tmp_path: Path) -> None:
    lines = LOG.read_bytes().splitlines(keepends=True)
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(b"".join(lines[:30]) + lines[30][:25])
    kept = Kept()
    run = RecoverRun(log=torn, settings=Settings(table_key=TABLE_KEY, seed=SECRET))
    assert run_recover(run, kept) is ExitCode.OK
    [(recovery, checked)] = kept.handed
    assert isinstance(recovery, Recovery) and checked
    assert recovery.action is Action.REMOVED_TORN_LINE and recovery.torn_bytes == 25
    assert torn.read_bytes() == b"".join(lines[:30])


def test_recover_of_a_file_that_is_no_log_fails_and_changes_nothing(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"shopping list\n")
    kept = Kept()
    assert run_recover(RecoverRun(log=notes, settings=Settings()), kept) is ExitCode.UNUSABLE
    assert kept.handed == [] and "not a log" in kept.errors[0]
    assert notes.read_bytes() == b"shopping list\n"


@pytest.mark.parametrize(("name", "options"), [("text", []), ("json", ["--json"])])
def test_recover_reporters_print_what_the_command_prints(
    tmp_path: Path, name: str, options: list[str]
) -> None:
    damaged = tmp_path / "changed-byte.jsonl"
    shutil.copyfile(SAMPLES / "disputed" / "changed-byte.jsonl", damaged)
    printed = _Printed()
    run = RecoverRun(log=damaged, settings=Settings(table_key=TABLE_KEY), dry_run=True)
    code = run_recover(run, recover_reporter_named(name, printed))
    expected = _cli("recover", str(damaged), "--table-key", str(TABLE_PUB), "--dry-run", *options)
    assert code is ExitCode.NO
    assert (code, printed.out, printed.err) == expected


# -- keygen and seed ------------------------------------------------------------------


def test_keygen_writes_a_pair_and_hands_its_key_id(tmp_path: Path) -> None:
    kept = Kept()
    assert run_keygen(KeygenRun(name="table", directory=tmp_path), kept) is ExitCode.OK
    [pair] = kept.handed
    assert isinstance(pair, KeyPair) and not pair.encrypted
    assert pair.private == tmp_path / "table.key" and pair.public == tmp_path / "table.pub"
    assert pair.key_id == key_id(raw_public_bytes(load_public_key(pair.public)))
    assert stat.S_IMODE(pair.private.stat().st_mode) == 0o600


def test_keygen_refuses_an_existing_pair_before_asking_a_passphrase(tmp_path: Path) -> None:
    (tmp_path / "table.pub").write_bytes(b"kept")

    def passphrase() -> bytes:
        raise AssertionError("no passphrase is asked for a pair that is refused")

    run = KeygenRun(name="table", directory=tmp_path, passphrase=passphrase)
    with pytest.raises(UsageProblem, match="not replacing existing"):
        run_keygen(run, Kept())
    assert (tmp_path / "table.pub").read_bytes() == b"kept"
    assert not (tmp_path / "table.key").exists()


def test_seed_new_writes_the_secret_and_hands_only_the_commitment(tmp_path: Path) -> None:
    out = tmp_path / "secret.txt"
    kept = Kept()
    assert run_seed_new(SeedRun(out=str(out)), kept, open_output=_open_output) is ExitCode.OK
    [(named, commitment_hex)] = kept.handed
    secret = bytes.fromhex(out.read_text().removesuffix("\n"))
    assert named == str(out) and check_reveal(secret, commitment_hex)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_seed_new_json_has_no_document_for_a_secret_written_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "secret.txt"
    with pytest.raises(UsageProblem, match="--json prints the secret"):
        run_seed_new(SeedRun(out=str(out)), Kept(whole_document=True), open_output=_open_output)
    assert not out.exists()


@pytest.mark.parametrize("opens", [True, False])
def test_seed_check_answers_whether_the_secret_opens_the_commitment(opens: bool) -> None:
    secret = hashlib.sha256(b"a dealer secret").digest()
    commitment_hex = commitment(secret if opens else bytes(32))
    printed = _Printed()
    check = SeedCheck(commitment=commitment_hex, secret=secret)
    code = run_seed_check(check, seed_reporter_named("json", printed))
    assert code is (ExitCode.OK if opens else ExitCode.NO)
    assert json.loads(printed.out)["opens"] is opens
    assert secret.hex() not in printed.out  # the secret may still be private
