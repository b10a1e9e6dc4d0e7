"""Issue 16 point 6 and its "Done when": colour on a terminal and plain text when piped
(``--color``, ``NO_COLOR``), ``-q`` and ``-v``, and every help read on 80 columns."""

from __future__ import annotations

import itertools
import json
import os
import pty
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from racing_demon.cli import main

from tampering import seal, values_of, write, write_public_key

ROOT = Path(__file__).resolve().parents[1]
GOOD = "sample_games/table-3p-signed.jsonl"
ILLEGAL = "sample_games/disputed/illegal-move-re-signed.jsonl"
PUB = "sample_games/table.pub"
BOLD_GREEN, BOLD_RED, BOLD_YELLOW, BOLD, RED, RESET = (
    "\x1b[1;32m",
    "\x1b[1;31m",
    "\x1b[1;33m",
    "\x1b[1m",
    "\x1b[31m",
    "\x1b[0m",
)
ILLEGAL_PLACE = "line 45 (seq 44), seat 2, move '2 waste>f+ 3S'"
ILLEGAL_REST = (
    ": ILLEGAL_MOVE: NOT_AN_ACE: only an ace starts a new foundation; expected an ace, found 3S"
)


@pytest.fixture(autouse=True)
def _in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sample logs named as a user in the project names them, as the output shows."""
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("NO_COLOR", raising=False)


def run(*args: str, terminal: bool = False, env: dict[str, str] | None = None) -> tuple[int, str]:
    """The command line in-process; ``terminal``: as if standard output were a terminal."""
    result = CliRunner().invoke(main, list(args), color=terminal, env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


# -- colour ---------------------------------------------------------------------------


def test_a_verdict_is_green_on_a_terminal() -> None:
    code, out = run("verify", GOOD, "--table-key", PUB, terminal=True)
    assert code == 0
    assert out.splitlines()[0] == f"{BOLD_GREEN}VERIFIED{RESET}  {GOOD}"


def test_piped_output_is_plain_text() -> None:
    code, out = run("verify", GOOD, "--table-key", PUB)
    assert code == 0
    assert out.splitlines()[0] == f"VERIFIED  {GOOD}"
    assert "\x1b" not in out


def test_a_failure_is_red_and_its_record_highlighted() -> None:
    code, out = run("verify", ILLEGAL, "--table-key", PUB, terminal=True)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"{BOLD_RED}DOES NOT VERIFY{RESET}  {ILLEGAL}  (step 8, replay)"
    assert lines[1] == f"  {BOLD}{ILLEGAL_PLACE}{RESET}{ILLEGAL_REST}"


def test_an_unfinished_log_is_yellow() -> None:
    log = "sample_games/disputed/truncated.jsonl"
    code, out = run("verify", log, "--table-key", PUB, "--color", "always")
    assert code == 1
    assert out.splitlines()[0] == f"{BOLD_YELLOW}UNFINISHED{RESET}  {log}  (step 4, chain)"


def test_no_color_set_turns_colour_off_on_a_terminal() -> None:
    code, out = run("verify", GOOD, "--table-key", PUB, terminal=True, env={"NO_COLOR": "1"})
    assert (code, out.splitlines()[0]) == (0, f"VERIFIED  {GOOD}")
    assert "\x1b" not in out


def test_an_empty_no_color_is_unset() -> None:
    """no-color.org: only a NO_COLOR that is present and not empty turns colour off."""
    code, out = run("verify", GOOD, "--table-key", PUB, terminal=True, env={"NO_COLOR": ""})
    assert code == 0
    assert out.splitlines()[0] == f"{BOLD_GREEN}VERIFIED{RESET}  {GOOD}"


def test_color_always_beats_no_color_and_a_pipe() -> None:
    code, out = run("verify", GOOD, "--table-key", PUB, "--color", "always", env={"NO_COLOR": "1"})
    assert code == 0
    assert out.splitlines()[0] == f"{BOLD_GREEN}VERIFIED{RESET}  {GOOD}"


def test_color_never_is_plain_on_a_terminal() -> None:
    code, out = run("verify", ILLEGAL, "--table-key", PUB, "--color", "never", terminal=True)
    assert code == 1
    assert out.splitlines()[1] == f"  {ILLEGAL_PLACE}{ILLEGAL_REST}"
    assert "\x1b" not in out


def test_an_unknown_color_mode_is_refused() -> None:
    code, out = run("verify", GOOD, "--color", "sometimes")
    assert code == 2
    assert out.endswith(
        "Error: Invalid value for '--color': 'sometimes' is not one of 'auto', 'always', 'never'.\n"
    )


def test_red_suits_are_red_and_black_suits_plain() -> None:
    code, out = run("deal", "--seed", "demo", "--players", "2", "--color", "always")
    assert code == 0
    cards = re.findall(r"(\x1b\[31m)?( ?[0-9AJQK]{1,2}[♠♥♦♣])(\x1b\[0m)?", out)
    assert cards
    for start, card, end in cards:
        red = card[-1] in "♥♦"
        assert (start, end) == ((RED, RESET) if red else ("", "")), card
    code, plain = run("deal", "--seed", "demo", "--players", "2")
    assert plain == out.replace(RED, "").replace(RESET, "")


def test_a_wrong_claim_is_red_and_one_that_holds_green(tmp_path: Path) -> None:
    claims = tmp_path / "claims.json"
    claims.write_text(
        json.dumps({"claims": [{"seat": 0, "total": 45}, {"seat": 1, "total": 99}]}),
        encoding="utf-8",
    )
    code, out = run(
        "audit", GOOD, "--table-key", PUB, "--claim", str(claims), "-q", "--color", "always"
    )
    assert code == 1
    assert out.splitlines() == [
        f"{BOLD_GREEN}VERIFIED{RESET}  {GOOD}",
        f"{BOLD_GREEN}ok   {RESET} seat 0's total = 45 holds (records 248, 1295, 1296)",
        f"{BOLD_RED}WRONG{RESET} seat 1's total = 99 is wrong: the log shows 2 "
        "(records 248, 1295, 1296)",
    ]


@pytest.mark.slow
@pytest.mark.parametrize("terminal", [True, False])
def test_a_real_terminal_gets_colour_and_a_real_pipe_none(terminal: bool) -> None:
    """Not the test runner's imitation: a pseudo-terminal, and a pipe."""
    command = [sys.executable, "-m", "racing_demon", "verify", GOOD, "--table-key", PUB]
    env = {key: value for key, value in os.environ.items() if key != "NO_COLOR"}
    env["PYTHONPATH"] = str(ROOT / "src")
    if not terminal:
        out = subprocess.run(command, env=env, capture_output=True, check=True).stdout
    else:
        leader, follower = pty.openpty()
        with subprocess.Popen(command, env=env, stdout=follower) as process:
            os.close(follower)
            out = _read_all(leader)
            assert process.wait() == 0
        os.close(leader)
    first = out.decode("utf-8").splitlines()[0]
    assert first == (f"{BOLD_GREEN}VERIFIED{RESET}  {GOOD}" if terminal else f"VERIFIED  {GOOD}")


def _read_all(descriptor: int) -> bytes:
    chunks = []
    while True:
        try:
            chunk = os.read(descriptor, 65536)
        except OSError:  # EIO: the writer closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


# -- quiet and verbose ------------------------------------------------------------------


def test_quiet_prints_the_verdict_line_only() -> None:
    assert run("verify", ILLEGAL, "--table-key", PUB, "-q") == (
        1,
        f"DOES NOT VERIFY  {ILLEGAL}  (step 8, replay)\n",
    )
    assert run("verify", GOOD, "--table-key", PUB, "--quiet") == (0, f"VERIFIED  {GOOD}\n")


def test_quiet_batch_prints_one_verdict_line_a_log() -> None:
    code, out = run(
        "verify", GOOD, ILLEGAL, "sample_games/disputed/truncated.jsonl", "-q", "--table-key", PUB
    )
    assert code == 1
    assert out == (
        f"VERIFIED  {GOOD}\n"
        f"DOES NOT VERIFY  {ILLEGAL}  (step 8, replay)\n"
        "UNFINISHED  sample_games/disputed/truncated.jsonl  (step 4, chain)\n"
    )


def test_verbose_lists_every_step() -> None:
    code, out = run("verify", ILLEGAL, "--table-key", PUB, "-v")
    assert code == 1
    assert out.splitlines()[-10:] == [
        "  step  1  framing and strict JSON  passed",
        "  step  2  canonical form           passed",
        "  step  3  schema                   passed",
        "  step  4  chain                    passed",
        "  step  5  signatures               passed",
        "  step  6  secret                   passed",
        "  step  7  rules and packs          held to line 44",
        "  step  8  replay                   FAILED at line 45",
        "  step  9  scores                   held to line 44",
        "  step 10  final record             held to line 44",
    ]
    code, out = run("verify", GOOD, "--table-key", PUB, "--verbose")
    assert code == 0
    assert out.splitlines()[-10:] == [
        f"  step {number:>2}  {title:<23}  passed"
        for number, title in enumerate(
            [
                "framing and strict JSON",
                "canonical form",
                "schema",
                "chain",
                "signatures",
                "secret",
                "rules and packs",
                "replay",
                "scores",
                "final record",
            ],
            start=1,
        )
    ]


def test_verbose_on_an_unpinned_log_says_which_signatures_were_not_checked() -> None:
    code, out = run("verify", GOOD, "--unsafe-unpinned", "-v")
    assert code == 0
    assert (
        "  step  5  signatures               passed, without the table's signatures "
        "(no --table-key)"
    ) in out.splitlines()


def _two_schema_errors(tmp_path: Path) -> tuple[Path, Path]:
    values = values_of("short")
    values[2]["body"]["n"] = -1
    values[2]["body"]["t_ms"] = -5
    log = write(tmp_path, seal(values, 2))
    return log, write_public_key(tmp_path / "table.pub")


def test_verbose_prints_every_schema_error(tmp_path: Path) -> None:
    log, pub = _two_schema_errors(tmp_path)
    code, out = run("verify", str(log), "--table-key", str(pub))
    assert code == 1
    first = "  line 3: SCHEMA: $.body.n: -1 is less than the minimum of 0"
    assert out.splitlines()[1] == f"{first} (and 1 more)"
    code, out = run("verify", str(log), "--table-key", str(pub), "-v")
    assert code == 1
    assert out.splitlines()[1:3] == [
        first,
        "  line 3: SCHEMA: $.body.t_ms: -5 is less than the minimum of 0",
    ]
    assert out.splitlines()[-10:-7] == [
        "  step  1  framing and strict JSON  held to line 3",
        "  step  2  canonical form           held to line 3",
        "  step  3  schema                   FAILED at line 3",
    ]
    assert out.splitlines()[-7:-5] == [
        "  step  4  chain                    held to line 2",
        "  step  5  signatures               held to line 2",
    ]


def test_json_says_the_same_whatever_quiet_or_verbose(tmp_path: Path) -> None:
    """The JSON report's shape and members do not depend on -q or -v."""
    log, pub = _two_schema_errors(tmp_path)
    plain = run("verify", str(log), "--table-key", str(pub), "--json")
    assert run("verify", str(log), "--table-key", str(pub), "--json", "-v") == plain
    assert run("verify", str(log), "--table-key", str(pub), "--json", "-q") == plain
    finding = json.loads(plain[1])["reports"][0]["finding"]
    assert finding["message"] == "$.body.n: -1 is less than the minimum of 0 (and 1 more)"


def test_quiet_and_verbose_contradict() -> None:
    code, out = run("verify", GOOD, "--table-key", PUB, "-q", "-v")
    assert code == 2
    assert out.endswith("Error: -v/--verbose contradicts -q/--quiet: give one or the other\n")
    code, out = run("audit", GOOD, "--table-key", PUB, "--verbose", "--quiet")
    assert code == 2
    assert out.endswith("Error: -q/--quiet contradicts -v/--verbose: give one or the other\n")


def test_quiet_audit_leaves_out_the_hands() -> None:
    assert run("audit", GOOD, "--table-key", PUB, "-q") == (0, f"VERIFIED  {GOOD}\n")
    code, out = run("audit", GOOD, "--table-key", PUB)
    assert (code, out.count("    centre (card#record): ")) == (0, 6)  # 2 hands of 3 seats


# -- which command has which option ------------------------------------------------------


def _commands(command: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):  # the group loads its commands as named
            sub = command.get_command(ctx, name)
            assert sub is not None
            yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(main))


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None
        command = found
    return command


@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: " ".join(path) or "racing-demon")
def test_every_command_has_color_and_the_verdict_commands_quiet_and_verbose(
    path: tuple[str, ...],
) -> None:
    command = _command(path)
    options = {option for param in command.params for option in param.opts}
    if isinstance(command, click.Group):
        assert "--color" not in options  # each command takes it, after its name
        return
    assert "--color" in options
    verdicts = path in (("verify",), ("audit",), ("tournament", "score"))
    assert ({"-q", "--quiet", "-v", "--verbose"} <= options) is verdicts
    assert bool({"-q", "-v"} & options) is verdicts


# -- help on 80 columns ---------------------------------------------------------------


@pytest.mark.parametrize("forced", [True, False], ids=["terminal_width=80", "COLUMNS=80"])
@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: " ".join(path) or "racing-demon")
def test_help_reads_on_80_columns(path: tuple[str, ...], forced: bool) -> None:
    """At a width of 80 forced, and as click measures a terminal of 80 columns (78)."""
    result = CliRunner().invoke(
        main,
        [*path, "--help"],
        terminal_width=80 if forced else None,
        env=None if forced else {"COLUMNS": "80"},
        prog_name="racing-demon",
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    too_long = [line for line in lines if len(line) > 80]
    assert not too_long
    # A word cut at its hyphen ("docs/deal-" then "spec.md") cannot be copied whole.
    cut = [
        (line, after)
        for line, after in itertools.pairwise(lines)
        if re.search(r"[\w/]-$", line) and re.match(r"\s*\w", after)
    ]
    assert not cut
    # A command list shows each command's summary whole, never cut off with "...".
    assert not [line for line in lines if line.endswith("...") and not line.startswith("Usage")]
