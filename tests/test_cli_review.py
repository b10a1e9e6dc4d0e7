"""Defects found by reviewing issue 16's command line as new users would, each pinned by
the message and exit code a user sees."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from racing_demon.cli import main
from racing_demon.schema import schema_errors

from tampering import lines_of, write


def run(*args: str | Path, stdin: bytes | None = None) -> tuple[int, str, str]:
    """The command line in this process: exit code, standard output, standard error."""
    result = CliRunner().invoke(main, [str(arg) for arg in args], input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return write(tmp_path, lines_of("short"), "good.jsonl")


STDIN_TWICE = (
    "Error: standard input can give one thing only: --secret stdin reads it, so LOG - cannot"
)


@pytest.mark.parametrize(
    "args",
    [
        ("verify", "-", "--table-key", "PUB", "--secret", "stdin"),
        ("verify", "--secret", "stdin", "--table-key", "PUB", "-"),
        ("replay", "-", "--secret", "stdin"),
        ("replay", "--secret", "stdin", "-"),
    ],
)
def test_log_dash_and_secret_stdin_are_refused_before_the_log_is_read_as_a_secret(
    good: Path, pub: Path, args: tuple[str, ...]
) -> None:
    # The --secret callback used to run first and read the log's first line as the
    # secret: "standard input holds no secret: ... got 1368", not the documented refusal.
    args = tuple(str(pub) if arg == "PUB" else arg for arg in args)
    code, out, err = run(*args, stdin=good.read_bytes())
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == STDIN_TWICE


def test_deal_log_dash_reads_the_log_on_standard_input(good: Path) -> None:
    # It said "cannot read -: No such file or directory", where verify, replay and audit
    # read the log from standard input.
    from_file = run("deal", "--log", good, "--json")
    from_stdin = run("deal", "--log", "-", "--json", stdin=good.read_bytes())
    assert from_file[0] == 0 and from_stdin == from_file


@pytest.mark.parametrize(
    "args", [("--log", "-", "--secret", "stdin"), ("--secret", "stdin", "--log", "-")]
)
def test_deal_log_dash_and_secret_stdin_are_refused(good: Path, args: tuple[str, ...]) -> None:
    code, out, err = run("deal", *args, stdin=good.read_bytes())
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == STDIN_TWICE


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS refuses names that are not UTF-8")
def test_recover_json_spells_a_file_name_one_way(tmp_path: Path, pub: Path) -> None:
    # recover --json gave its "source" as the text shows it ('\\n' spelt out) and its
    # "verification.source" as verify --json does (a newline JSON escapes): one file, two
    # spellings in one document.
    data = write(tmp_path, lines_of("short"), "good.jsonl").read_bytes()
    log = Path(os.fsdecode(bytes(tmp_path) + b"/g\xff\nx.jsonl"))
    log.write_bytes(data[: len(data) - 10])  # a torn last line: recover has work to do
    code, out, _ = run("recover", log, "--table-key", pub, "--dry-run", "--json")
    document = json.loads(out)
    assert code == document["exit_code"] and schema_errors("recover-report", document) == []
    expected = f"{tmp_path}/g\\xff\nx.jsonl"
    assert document["source"] == expected
    assert document["verification"]["source"] == expected


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS refuses names that are not UTF-8")
def test_replay_of_a_missing_file_spells_its_name_as_every_message_does(tmp_path: Path) -> None:
    # click's exists=True said "File '.../g\ufffd.jsonl' does not exist.": the one
    # message that spelt a byte that is not UTF-8 other than \xff.
    log = Path(os.fsdecode(bytes(tmp_path) + b"/g\xff.jsonl"))
    code, out, err = run("replay", log)
    assert (code, out) == (2, "")
    assert err == f"cannot read {tmp_path}/g\\xff.jsonl: No such file or directory\n"


def test_deprecated_seed_check_blames_the_secret_when_the_secret_is_malformed() -> None:
    # The old form SECRET COMMITMENT said "Invalid value for 'COMMITMENT'" of a short
    # SECRET, its well-formed commitment beside it.
    code, out, err = run("seed", "check", "ab" * 31, "cd" * 32)
    assert (code, out) == (2, "")
    assert err.splitlines()[0].startswith("racing-demon: seed check SECRET COMMITMENT is ")
    assert err.splitlines()[-1] == (
        "Error: Invalid value for SECRET: expected 64 hex characters (0-9, a-f), got 62"
    )


def test_verify_refuses_json_with_report_to_standard_output(good: Path, pub: Path) -> None:
    # Both went to standard output: a JSON Lines report line, then the JSON document,
    # which no JSON reader takes as one document.
    code, out, err = run("verify", good, "--table-key", pub, "--report", "-", "--json")
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        "Error: --report - writes the report lines to standard output, where --json would "
        "print its document too: give --report FILE with --json"
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("a\\b", "key name 'a\\b' holds \\: separate folders with /"),
        (
            os.fsdecode(b"k\xff/"),
            "key name 'k\\xff/' ends with /: give a file name in that folder, such as k\\xff/table",
        ),
    ],
)
def test_keygen_quotes_a_refused_name_as_typed(
    tmp_path: Path, name: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # repr() doubled the backslash the user typed ('a\\\\b') and spelt a byte that is
    # not UTF-8 '\\udcff', where every other message spells it \\xff.
    monkeypatch.chdir(tmp_path)
    code, out, err = run("keygen", name)
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == f"Error: Invalid value for NAME: {message}"


def test_replay_refuses_a_secret_that_does_not_open_the_commitment(
    good: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It replayed to "record 1: PACK_MISMATCH: ... the pack is not the one the seed
    # deals", exit 1, where deal --log and verify name the commitment the secret misses.
    monkeypatch.setenv("WRONG_SECRET", "ab" * 32)
    committed = json.loads(good.read_bytes().splitlines()[0])["body"]["commitment"]
    code, out, err = run("replay", good, "--secret", "env:WRONG_SECRET")
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        f"Error: Invalid value for --secret: does not open the commitment of {good}'s "
        f"genesis ({committed})"
    )


def test_recover_refuses_standard_input_with_a_reason(good: Path) -> None:
    # "cannot recover: -: No such file or directory", where its siblings read - as
    # standard input.
    code, out, err = run("recover", "-", stdin=good.read_bytes())
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        "Error: Invalid value for LOG: recover repairs a file in place, and standard input "
        "is none: give the log's path (a file named - is ./-)"
    )
