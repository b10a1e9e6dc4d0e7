"""The command line loads a command when it runs it: issue 29, item 26.

"Every command pays 0.4 s of CPU before any work (`--help` 0.85 s wall): the CLI imports
every command, the engine, the simulator, tournaments and jsonschema eagerly. Load
commands lazily; `racing-demon --help` and `--version` cost at most 1.5x of `python -c
"import click"` in CPU, measured in a bench; `verify` of a valid log imports no
jsonschema." The cost is bench/cli_startup_bench.py's; here, what is loaded.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

import racing_demon
from racing_demon.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]
GAME = ROOT / "sample_games" / "table-3p-signed.jsonl"
KEY = ROOT / "sample_games" / "table.pub"

# Runs the command line as the installed script does, then prints on standard error the
# modules it loaded, whatever the exit.
_LOADED = """\
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))
from racing_demon.cli import main
main(sys.argv[1:], prog_name="racing-demon")
"""


def loaded_by(*args: str | Path) -> tuple[int, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, set(json.loads(done.stderr.splitlines()[-1]))


def test_the_listing_is_what_each_command_says_of_itself() -> None:
    """The table the group lists its commands from (without loading them) says what each
    command's own short help says: `racing-demon --help` reads as if every command had
    been loaded for it."""
    ctx = click.Context(main, info_name="racing-demon")
    loaded = {name: main.get_command(ctx, name) for name in main.list_commands(ctx)}
    assert all(command is not None and not command.hidden for command in loaded.values())
    eager, lazy = click.HelpFormatter(), click.HelpFormatter()
    click.Group.format_commands(main, ctx, eager)  # asks every loaded command
    main.format_commands(ctx, lazy)  # reads the table
    assert lazy.getvalue() == eager.getvalue()
    assert sorted(loaded) == sorted(COMMANDS)


def test_every_command_module_is_in_the_table() -> None:
    """A command added to cli/ and left out of the table would never be listed or run."""
    modules = {path.stem for path in (ROOT / "src/racing_demon/cli").glob("*_cmd.py")}
    # `tournament`'s own subcommands, a module each (issue 30, point 2).
    group = importlib.import_module("racing_demon.cli.tournament_cmd").tournament
    subcommands = {command.callback.__module__ for command in group.commands.values()}
    tournament = {module.rpartition(".")[2] for module in subcommands}
    assert len(tournament) == len(group.commands) == 6
    assert modules - tournament == {module for module, _, _ in COMMANDS.values()}


@pytest.mark.parametrize("option", ["--help", "--version"])
def test_help_and_version_load_no_command(option: str) -> None:
    code, modules = loaded_by(option)
    assert code == 0
    ours = {name for name in modules if name.startswith("racing_demon")}
    assert ours == {
        "racing_demon",
        "racing_demon.cli",
        "racing_demon.cli.style",
        "racing_demon.outcomes",
    }
    assert "jsonschema" not in modules and "jsonschema_rs" not in modules


@pytest.mark.slow
def test_verifying_a_valid_log_loads_no_jsonschema_and_no_other_command() -> None:
    """jsonschema-rs passes every valid record; jsonschema explains a refusal only."""
    code, modules = loaded_by("verify", GAME, "--table-key", KEY)
    assert code == 0
    assert "jsonschema" not in modules
    commands = {name for name in modules if name.startswith("racing_demon.cli.")}
    assert commands <= {
        "racing_demon.cli.style",
        "racing_demon.cli.verify_cmd",
        "racing_demon.cli.options",
        "racing_demon.cli.output",
        "racing_demon.cli.progress",
        "racing_demon.cli.use_cases",  # the echo and usage refusal every command shares
    }


@pytest.mark.slow
def test_a_refused_record_is_still_explained_by_jsonschema(tmp_path: Path) -> None:
    log = tmp_path / "game.jsonl"
    lines = GAME.read_bytes().splitlines(keepends=True)
    log.write_bytes(lines[0] + lines[1].replace(b'"kind":"hand_start"', b'"kind":"hand_begin"'))
    code, modules = loaded_by("verify", log, "--table-key", KEY)
    assert code == 1 and "jsonschema" in modules


def test_the_version_is_the_installed_packages() -> None:
    from importlib.metadata import version

    assert racing_demon.__version__ == version("racing-demon")
