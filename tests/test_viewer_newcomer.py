"""The viewer as a newcomer met it (issue 29, "The viewer page", items 16, 18, 19 and 20):
custom rules named as custom, what was and was not replayed, `view -`, and the builder's
memory. The page's side of these is in tests/browser/test_viewer_ui.py.
"""

from __future__ import annotations

import re
import tracemalloc
from pathlib import Path

from click.testing import CliRunner

from racing_demon.cli import main
from racing_demon.files import InMemoryLog
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.verify import Settings
from racing_demon.viewer import page_data, viewer_data

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_games"
TABLE_PUB = SAMPLES / "table.pub"
PINNED = Settings(table_key=raw_public_bytes(load_public_key(TABLE_PUB)))
BIG = SAMPLES / "table-3p-signed.jsonl"
SMALL = SAMPLES / "valid" / "peer2peer-3p-hold-off.jsonl"
TRUNCATED = SAMPLES / "disputed" / "truncated.jsonl"
ILLEGAL = SAMPLES / "disputed" / "illegal-move-re-signed.jsonl"


def _view(*args: str, stdin: bytes | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["view", *args], input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_custom_rules_say_what_they_change_in_their_profile() -> None:
    """Item 16: "The subtitle says 'table rules' for custom rules: say custom and what
    differs." The README's game plays table-custom, whose title is the table profile's."""
    rules = viewer_data(BIG, PINNED)["game"]["rules"]
    assert rules["title"] == "Racing Demon, table rules"
    assert (rules["name"], rules["builtin"]) == ("table-custom", False)
    assert rules["changes"] == ["match.target: 20 (table: 100)"]
    assert viewer_data(SMALL, PINNED)["game"]["rules"]["changes"] == []  # built in


def test_an_unfinished_log_without_the_secret_says_the_secret_is_missing(tmp_path: Path) -> None:
    """Item 18: "An unfinished log without `--secret` shows an empty table with no hint:
    say that the dealer secret (`view --secret`) is what is missing." """
    data = viewer_data(TRUNCATED, PINNED)
    assert data["replay"]["secret"] == "missing"
    assert data["replay"]["replayed"] == 0 and data["replay"]["records"] == 41
    code, output = _view(str(TRUNCATED), "-o", str(tmp_path / "page.html"))
    assert code == 0, output
    assert "dealer secret" in output and "--secret" in output
    secret = tmp_path / "secret.txt"
    secret.write_text(bytes(32).hex())  # a wrong secret: the replay is tried, and refused
    code, output = _view(
        str(TRUNCATED), "--secret", f"file:{secret}", "-o", str(tmp_path / "with.html")
    )
    assert code == 0 and "--secret SOURCE" not in output
    assert viewer_data(TRUNCATED, Settings(seed=bytes(32)))["replay"]["secret"] == "given"


def test_a_log_failing_before_its_hand_end_names_the_hand_end_not_replayed() -> None:
    """Item 18: a log that fails before its first hand_end said "No hand ended in this
    log", though the hand did end after the failure: the data says which hand_end records
    the replay did not reach."""
    data = viewer_data(ILLEGAL, PINNED)
    assert data["audit"]["hands"] == []
    assert data["replay"]["replayed"] == 44  # the failing record is 44
    ends = [record["seq"] for record in data["records"] if record["kind"] == "hand_end"]
    assert ends == [80]
    assert data["replay"]["hand_ends_not_replayed"] == 1
    assert data["replay"]["first_hand_end_not_replayed"] == 80
    whole = viewer_data(BIG, PINNED)["replay"]
    assert (whole["hand_ends_not_replayed"], whole["first_hand_end_not_replayed"]) == (0, None)


def test_view_reads_a_log_from_standard_input(tmp_path: Path) -> None:
    """Item 19: "`view -` reads a log from standard input like the other readers." The
    page is the file's page but for the name it gives the log."""
    out = tmp_path / "piped.html"
    code, output = _view(
        "-", "--table-key", str(TABLE_PUB), "-o", str(out), stdin=SMALL.read_bytes()
    )
    assert code == 0, output
    assert "verdict verified" in output and "82 records, 82 replayed" in output
    from_file = tmp_path / "file.html"
    assert _view(str(SMALL), "--table-key", str(TABLE_PUB), "-o", str(from_file))[0] == 0
    piped = out.read_text(encoding="utf-8")
    assert '"source":"\\u003cstdin\\u003e"' in piped
    renamed = from_file.read_text(encoding="utf-8").replace(
        f'"source":"{SMALL.name}"', '"source":"\\u003cstdin\\u003e"'
    )
    assert re.sub(r'"source":"[^"]*"', "", piped) == re.sub(r'"source":"[^"]*"', "", renamed)
    code, output = _view("-", "--secret", "stdin", "-o", str(tmp_path / "x.html"), stdin=b"")
    assert code == 2 and "standard input can give one thing only" in output


def test_view_of_standard_input_is_the_library_page_of_its_bytes() -> None:
    """Item 19, in the library: a log given as bytes (``InMemoryLog``) gives the data its
    file gives."""
    piped = viewer_data(InMemoryLog(SMALL.read_bytes()), PINNED)
    from_file = viewer_data(SMALL, PINNED)
    assert piped["source"] == "<stdin>"
    assert {**piped, "source": None, "verdict": None} == {
        **from_file,
        "source": None,
        "verdict": None,
    }


def _peak_bytes(log: Path) -> int:
    tracemalloc.start()
    try:
        page_data(log, PINNED)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_builder_holds_about_a_kilobyte_a_record() -> None:
    """Item 20: "`view` holds about 6.6 KB per record ... make it linear with a small
    constant." The words and frames are packed as they are made, so the builder's peak
    grows by little more than the log's own bytes (600 a record here) and its copy for
    the page: under 2,000 bytes a record, where holding every record and frame as Python
    objects took about 5,000; and it never sets aside the file-size limit (64 MiB) to read
    a log of 0.8 MB (bench/viewer_bench.py measures the whole command)."""
    _peak_bytes(SMALL)  # the first build loads the schemas and the profiles
    small, big = _peak_bytes(SMALL), _peak_bytes(BIG)
    per_record = (big - small) / (1297 - 82)
    assert per_record < 2000, per_record
    assert big < 4 * BIG.stat().st_size, big
