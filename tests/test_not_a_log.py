"""Issue 29, item 13: "`verify` of random bytes says '22 of 22 records not replayed': say it
is not a log (keep the reason code)." A file whose first line does not begin as a record
(docs/log-format.md §7, "The ends of the file")."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from racing_demon.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _random_bytes() -> bytes:
    noise = random.Random(29).randbytes(3000)
    return noise.replace(b"\n", b"") + b"\n" + noise[:500].replace(b"\n", b"\n\n")


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (_random_bytes(), None),  # whichever reader code its bytes meet first
        (b"my notes", "TORN_LINE"),
        (b'{"a":1}\n{"b":2}\n', "SCHEMA"),
        (b'{ "body": {} }\n', "NOT_CANONICAL"),
    ],
    ids=["random", "notes", "other-json", "pretty"],
)
def test_verify_says_a_file_is_not_a_log(tmp_path: Path, content: bytes, code: str | None) -> None:
    path = tmp_path / "file.bin"
    path.write_bytes(content)
    lines = content.count(b"\n") + (not content.endswith(b"\n"))
    result = CliRunner().invoke(main, ["verify", str(path)])
    assert result.exit_code == 1
    text = result.stdout
    assert text.startswith(f"DOES NOT VERIFY  {path}  (step ")
    found = re.search(r"line 1: ([A-Z_0-9]+): NOT_A_LOG: ", text)
    assert found is not None and found[1] == (code or found[1])
    assert "not a log: its first line is not a record" in text
    assert "not replayed" not in text and "no --table-key" not in text
    # Issue 29, item 10: a count of one reads as one ("its only line", not "none of its 1 line").
    counted = "its only line was not read" if lines == 1 else f"none of its {lines} lines was read"
    assert counted in text

    document = json.loads(CliRunner().invoke(main, ["verify", str(path), "--json"]).stdout)
    finding = document["reports"][0]["finding"]
    assert (finding["code"], finding["rule"], finding["line"]) == (found[1], "NOT_A_LOG", 1)


def test_a_log_that_fails_on_its_first_line_is_still_a_log(tmp_path: Path) -> None:
    """A damaged genesis is evidence about a log, not a file of another kind."""
    lines = (ROOT / "sample_games" / "table-3p-signed.jsonl").read_bytes().splitlines(True)
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(lines[0].replace(b'"commitment":"', b'"commitment":"x', 1) + lines[1])
    result = CliRunner().invoke(main, ["verify", str(path), "--json"])
    finding = json.loads(result.stdout)["reports"][0]["finding"]
    assert finding["line"] == 1 and finding["rule"] != "NOT_A_LOG"


def test_a_torn_genesis_is_unfinished_and_its_repair_empties_the_file(tmp_path: Path) -> None:
    path = tmp_path / "torn.jsonl"
    path.write_bytes(b'{"body":{"comm')
    result = CliRunner().invoke(main, ["verify", str(path)])
    assert result.stdout.startswith("UNFINISHED")
    assert f"racing-demon recover --allow-empty {path} empties the file" in result.stdout


def test_a_log_an_editor_saved_with_a_bom_is_a_log_with_a_bom(tmp_path: Path) -> None:
    log = (ROOT / "sample_games" / "table-3p-signed.jsonl").read_bytes()
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + log)
    result = CliRunner().invoke(main, ["verify", str(path), "--json"])
    finding = json.loads(result.stdout)["reports"][0]["finding"]
    assert (finding["code"], finding["rule"]) == ("BOM", None)


@pytest.mark.parametrize("command", [["replay"], ["deal", "--log"]], ids=["replay", "deal"])
@pytest.mark.parametrize(
    ("content", "says"),
    [
        (
            b"my notes",
            'not a log: its first bytes are not a record\'s (every record starts {"body":{)',
        ),
        (_random_bytes(), "not a log: its first bytes are not a record's"),
        (b'{"body":{"comm', "its only line, 14 bytes, is a genesis a crash cut short"),
        (b"{", "its only line, 1 byte, is a genesis a crash cut short"),
        (b"", "the file is empty: it holds no record"),
    ],
    ids=["notes", "random", "torn-genesis", "one-byte", "empty"],
)
def test_replay_and_deal_say_what_a_file_without_a_record_is(
    tmp_path: Path, command: list[str], content: bytes, says: str
) -> None:
    """Issue 29, items 7 and 13: `replay` of notes, random bytes or a torn genesis said "the
    file is empty", of random bytes a reader code: like `verify`, say it is not a log (or a
    genesis a crash cut short), one line on standard error."""
    path = tmp_path / "file.jsonl"
    path.write_bytes(content)
    result = CliRunner().invoke(main, [*command, str(path)])
    assert result.exit_code == (1 if command == ["replay"] else 2)
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and says in result.stderr, result.stderr


def test_a_torn_genesis_on_standard_input_names_no_repair_of_a_file(tmp_path: Path) -> None:
    """`recover` repairs files, never standard input: `replay -` does not suggest it."""
    result = CliRunner().invoke(main, ["replay", "-"], input=b'{"body":{"comm')
    assert result.exit_code == 1
    assert result.stderr == (
        "cannot replay <stdin>: it holds no complete record: its only line, 14 bytes, is a "
        "genesis a crash cut short\n"
    )
