"""The README's promises stay true: its first section, its library examples (run as printed),
its completion lines, and what `print` shows of a value."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.cli import main
from racing_demon.game.cards import Card, Suit
from racing_demon.game.moves import Move
from racing_demon.game.state import Foundation, State
from racing_demon.log.keys import load_private_key, load_public_key, public_pem, raw_public_bytes
from racing_demon.profiles import load_rules
from racing_demon.schema import schema_errors
from racing_demon.table import PlayerInfo, Table, TableCode, TableError

from conftest import S, build, invoke

TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_first_section_holds_the_two_commands_and_the_server_line() -> None:
    """The first section's block holds exactly the two set-up commands (main job, tests);
    issue 31: "the README's first section keeps its two commands, and a third line shows
    how to start a server", which stands in the text after the block."""
    first_section = README.split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", first_section, flags=re.DOTALL)
    assert len(blocks) == 1
    commands = blocks[0].strip().splitlines()
    assert len(commands) == 2
    assert commands[0].startswith("pip install . && racing-demon ")
    assert commands[1] == "pip install -e '.[test]' && python -m pytest"
    after_block = first_section.split("```", 2)[2]
    assert "`pip install '.[serve]' && racing-demon serve`" in after_block


def _section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


LIBRARY = re.findall(r"```python\n(.*?)```", _section("Library in one screen"), flags=re.DOTALL)


def test_first_section_says_to_make_a_virtual_environment_before_the_two_commands() -> None:
    """Issue 16, point 13: the venv comes first, and the quick test run is named next to
    the full one."""
    first_section = README.split("\n## ", 1)[0]
    venv = first_section.index("python3 -m venv .venv && . .venv/bin/activate")
    assert venv < first_section.index("```sh")
    assert "make and activate a virtual environment\nfirst" in first_section
    after = first_section.split("```sh", 1)[1].split("```", 2)[1]
    assert "The second command is the quick test run" in after
    assert 'The full run is `python -m pytest -m ""`' in after


@pytest.mark.parametrize("number", range(len(LIBRARY)), ids=["engine", "table", "keys"])
def test_library_examples_run_as_printed_and_print_what_they_say(
    number: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each example of "Library in one screen", exactly as printed, in a new folder (the
    table's writes its log there); a line ``# ...`` at the start of a line is its output."""
    code = LIBRARY[number]
    expected = [line.removeprefix("# ") for line in code.splitlines() if line.startswith("# ")]
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue().splitlines() == expected


def test_the_server_loop_uses_a_table_and_writes_a_log_the_command_line_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 16, point 12: the second example is a server loop around ``Table``, with keys,
    a commitment, receipts handed back, the match's end and the file verified."""
    code = LIBRARY[1]
    for needed in (
        "Table.create(",
        "commitment(secret)",
        "table.submit(",
        ".receipt",
        "table.finished",
        "verify_log(",
    ):
        assert needed in code, needed
    monkeypatch.chdir(tmp_path)
    names: dict[str, object] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "README.md", "exec"), names)
    table_key = names["table_key"]
    assert isinstance(table_key, Ed25519PrivateKey)
    (tmp_path / "table.pub").write_bytes(public_pem(table_key))
    assert invoke("verify", "game.jsonl", "--table-key", "table.pub")[0] == 0
    # The last receipt handed back, the resignation's, is one the log's audit accepts.
    receipt = names["receipt"]
    assert isinstance(receipt, bytes)
    assert schema_errors("receipt", json.loads(receipt)) == []
    assert json.loads(receipt)["body"]["outcome"] == "resign"
    # Issue 29, item 21: the receipts the example keeps, every one, audit clean as kept.
    kept = [tmp_path / f"game.seat{seat}.receipts.jsonl" for seat in (0, 1)]
    assert kept[1].read_bytes().endswith(receipt + b"\n")
    assert [len(path.read_bytes().splitlines()) for path in kept] == [1, 3]
    receipts = [option for path in kept for option in ("--receipts", path.name)]
    code, out = invoke("audit", "game.jsonl", "--table-key", "table.pub", *receipts)
    assert code == 0, out
    assert (
        "receipts: 4 receipts from 2 files checked against 7 records (finished): all agree" in out
    )


def test_the_table_example_run_again_is_refused_by_name_not_with_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29, item 25: "Re-running the README's Table example gives a bare
    FileExistsError: a TableError naming the path ('a log is never overwritten')", as the
    README says it does."""
    monkeypatch.chdir(tmp_path)
    code = compile(LIBRARY[1], "README.md", "exec")
    with contextlib.redirect_stdout(io.StringIO()):
        exec(code, {})
    before = (tmp_path / "game.jsonl").read_bytes()
    with pytest.raises(TableError) as again, contextlib.redirect_stdout(io.StringIO()):
        exec(code, {})
    assert again.value.code is TableCode.LOG_EXISTS
    message = str(again.value)
    assert message.startswith("game.jsonl exists: a log is never overwritten; ")
    assert "`game.jsonl exists: a log is never overwritten; …` (`LOG_EXISTS`)" in " ".join(
        _section("Library in one screen").split()
    )
    assert (tmp_path / "game.jsonl").read_bytes() == before


def test_the_key_example_names_public_pem_and_writes_the_files_a_server_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29, item 22: "Writing the table's .pub from a generated key needs
    log.keys.public_pem, which no doc names: document key handling for a server in the
    README's library section" (generating the key, NAME.pub, file modes); the snippet runs
    with a umask that would loosen the modes, and the key it writes verifies a log."""
    keys = LIBRARY[2]
    section = _section("Library in one screen")
    for needed in ("generate_private_key()", "public_pem(", "save_key_pair(", "load_private_key("):
        assert needed in keys, needed
    assert "`log.keys.public_pem(key)` to `NAME.pub`" in " ".join(section.split())
    monkeypatch.chdir(tmp_path)
    old = os.umask(0)
    try:
        with contextlib.redirect_stdout(io.StringIO()) as out:
            exec(compile(keys, "README.md", "exec"), {})
    finally:
        os.umask(old)
    assert out.getvalue().splitlines() == ["keys/table.key 0o600", "keys/table.pub 0o644"]
    pub = tmp_path / "keys" / "table.pub"
    key = tmp_path / "keys" / "table.key"
    assert invoke("keygen", "keys/table")[0] == 2  # the pair exists: never replaced
    assert key.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")  # PKCS#8 PEM
    private = load_private_key(key)
    assert raw_public_bytes(load_public_key(pub)) == raw_public_bytes(private)


def test_the_readme_rules_example_is_true_on_the_readme_sample(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 29, item 14: "The README's --rules table example on the README's own sample
    game prints DOES NOT VERIFY, because that sample's rules are table-custom ... Say why the
    rules are custom (what differs from the built-in profile), and make the README's example
    true on its sample": the README's command pins the sample's own rules and verifies, and
    what it says of --rules table and of the difference is what verify prints."""
    commands = _section("Commands")
    block = re.search(r"Pin its own rules.*?```sh\n(.*?)```", commands, flags=re.DOTALL)
    assert block is not None
    words = shlex.split(block.group(1).replace("\\\n", " "))
    assert words[:2] == ["racing-demon", "verify"] and "--rules" in words
    monkeypatch.chdir(ROOT)
    code, out = invoke(*words[1:])
    assert code == 0 and out.startswith("VERIFIED  sample_games/table-3p-signed.jsonl"), out
    assert "pinned (--rules)" in out
    difference = "differs from the built-in profile: match.target: 20 (table: 100)"
    assert f"\n    {difference}\n" in out
    prose = " ".join(commands.split())
    assert f"(`{difference}`)" in prose
    code, out = invoke(*words[1:-1], "table")
    assert (
        code == 1 and "WRONG_RULES" in out and "`--rules table` refuses it (`WRONG_RULES`)" in prose
    )


def test_the_completion_lines_produce_each_shells_script() -> None:
    """Issue 16, point 10: the README's completion lines, for each shell the variable's value
    names, make click print that shell's script for ``racing-demon``."""
    block = re.search(r"Shell completion.*?```sh\n(.*?)```", README, flags=re.DOTALL)
    assert block is not None
    values = re.findall(r"_RACING_DEMON_COMPLETE=(\w+) racing-demon", block.group(1))
    assert values == ["bash_source", "zsh_source", "fish_source"]
    marks = {
        "bash_source": "complete -o nosort -F _racing_demon_completion racing-demon",
        "zsh_source": "#compdef racing-demon",
        "fish_source": "complete --no-files --command racing-demon",
    }
    for value in values:
        result = CliRunner().invoke(
            main, [], prog_name="racing-demon", env={"_RACING_DEMON_COMPLETE": value}
        )
        assert result.exit_code == 0, result.output
        assert marks[value] in result.output


def test_print_of_a_state_shows_its_text_form(tmp_path: Path) -> None:
    """Issue 16, point 12: ``print(table.state)`` prints the position's text form, not the
    dataclass repr of the rules and every card; its seats and foundations print as their
    lines of it, and a suit as its letter."""
    rules = load_rules("peer2peer")
    players = [PlayerInfo("ann", "red"), PlayerInfo("bob", "blue")]
    path = tmp_path / "game.jsonl"
    entropy = [bytes([1]) * 16, bytes([2]) * 16]
    with Table.create(path, rules, players, TABLE_KEY, bytes(range(32)), entropy) as table:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            print(table.state)
        state = table.state
    assert out.getvalue() == state.to_text() + "\n"
    assert State.parse(str(state), rules) == state
    assert len(str(state)) < len(repr(state)) / 4
    lines = str(state).splitlines()
    assert lines[0].startswith("state racing-demon/state/v1 profile=peer2peer ")
    assert lines[1:] == [f"seat {number} {seat}" for number, seat in enumerate(state.seats)]
    assert str(state.seats[0]).startswith("demon=")
    foundation = Foundation(Suit.HEARTS, ((Card.parse("AH@1"),), (Card.parse("2H@0"),)), 1500)
    assert str(foundation) == "H 1500 AH@1 2H@0"
    assert [str(suit) for suit in Suit] == ["C", "D", "H", "S"]
    assert f"{Suit.SPADES}" == "S"
    assert str(Card.parse("TS@2")) == "TS@2" and str(Move.parse("0 w2>w4 9D 8S")) == "0 w2>w4 9D 8S"


def test_a_state_with_foundations_prints_them_as_it_parses_them() -> None:
    state = build("table", S(demon="AH 2H"), S(), foundations=["AS@1 2S@1,2S@0"])
    text = str(state)
    assert "\nfoundation S " in text and text.count("\nfoundation ") == 1
    assert f"foundation {state.foundations[0]}" in text.splitlines()
    assert State.parse(text, state.rules) == state
    # a broken invariant names the suit by its letter, as the text does
    broken = replace(state, foundations=(replace(state.foundations[0], suit=Suit.HEARTS),))
    assert any("is not 1 of H" in problem for problem in broken.problems())


@pytest.mark.slow
def test_the_tournament_walkthrough_runs_as_printed(tmp_path: Path) -> None:
    """Issue 19: "an organiser can plan, run, verify and score a tournament from the
    README's instructions alone": the section's commands, run as printed in a new folder."""
    section = README.split("\n## A duplicate tournament", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, flags=re.DOTALL)
    assert block is not None
    python = shlex.quote(sys.executable)
    script = f'set -euo pipefail\nracing-demon() {{ {python} -m racing_demon "$@"; }}\n'
    done = subprocess.run(
        ["bash", "-c", script + block.group(1)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 of 4 scored from 4 logs" in done.stdout
    assert (tmp_path / "standings.html").is_file() and (tmp_path / "sheets.html").is_file()
    # Each table's log, and the receipts each seat's client kept beside it (issue 28,
    # point 3: "`tournament simulate` keeps receipts like `simulate` does").
    assert sorted(path.name for path in (tmp_path / "logs").iterdir()) == sorted(
        name
        for table in range(1, 5)
        for name in (
            f"table-{table}.jsonl",
            *(f"table-{table}.seat{seat}.receipts.jsonl" for seat in range(4)),
        )
    )
