"""Standard input and output, many logs, and file names (issue 16, points 5, 7, 8, 11):
``-`` reads one log from standard input in verify, replay and audit; ``--out -`` writes
simulate's log to standard output; a batch sorts naturally, never lets an unreadable file
mask a log that does not verify, says "no logs found" of an empty folder, reports an
unreachable scheduler within --scheduler-timeout, and carries its summary in --json; a
file name that is not UTF-8 is shown one way in text and JSON, always valid UTF-8."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from racing_demon.batch import collect_logs, natural_key
from racing_demon.cli import main
from racing_demon.cli.options import secret_option
from racing_demon.cli.output import named_log
from racing_demon.files import read_standard_input
from racing_demon.log.reader import DEFAULT_LIMITS
from racing_demon.outcomes import ExitCode, batch_exit_code
from racing_demon.schema import schema_errors

from tampering import lines_of, seal, values_of, write


def run(*args: str | Path, stdin: bytes | None = None) -> tuple[int, bytes, str]:
    """The command line in this process: exit code, standard output's bytes, standard error."""
    result = CliRunner().invoke(main, [str(arg) for arg in args], input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout_bytes, result.stderr


def text(*args: str | Path, stdin: bytes | None = None) -> tuple[int, str, str]:
    code, out, err = run(*args, stdin=stdin)
    return code, out.decode("utf-8"), err


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return write(tmp_path, lines_of("short"), "good.jsonl")


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    values = values_of("short")
    values[5]["body"]["move"] = "0 dance"
    return write(tmp_path, seal(values), "bad.jsonl")


# -- point 7: - reads one log from standard input ----------------------------------------


def test_verify_reads_one_log_from_standard_input(good: Path, pub: Path) -> None:
    code, out, err = text("verify", "-", "--table-key", pub, stdin=good.read_bytes())
    by_name = text("verify", good, "--table-key", pub)[1]
    assert code == 0 and err == ""
    assert out.splitlines()[0] == "VERIFIED  <stdin>"
    assert out == by_name.replace(str(good), "<stdin>")  # the very report of the file


def test_verify_json_of_standard_input_names_it_stdin(bad: Path, pub: Path) -> None:
    code, out, _ = text("verify", "-", "--table-key", pub, "--json", stdin=bad.read_bytes())
    document = json.loads(out)
    assert code == 1 and schema_errors("verification-report", document) == []
    assert [report["source"] for report in document["reports"]] == ["<stdin>"]


def test_standard_input_is_bounded_by_max_file_bytes(good: Path, pub: Path) -> None:
    args = ("verify", "-", "--table-key", pub, "--max-file-bytes", "1K")
    code, out, _ = text(*args, stdin=good.read_bytes())
    assert code == 1
    assert out.splitlines()[:2] == [
        "DOES NOT VERIFY  <stdin>  (step 1, framing and strict JSON)",
        "  line 1: FILE_TOO_LARGE: file larger than 1,024 bytes",
    ]
    held = read_standard_input(io.BytesIO(b"x" * 100), 10)
    assert len(held.data) == 11  # never more in memory than the limit and one byte


def test_dash_is_given_alone(good: Path, pub: Path) -> None:
    code, out, err = text("verify", "-", good, "--table-key", pub, stdin=b"")
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == (
        "Error: LOG - reads one log from standard input: give no other LOG"
    )


def test_a_file_named_dash_is_read_as_dot_slash_dash(
    good: Path, pub: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(good.parent)
    Path("-").write_bytes(good.read_bytes())
    code, out, _ = text("verify", "./-", "--table-key", pub, stdin=b"not a log")
    assert code == 0 and out.splitlines()[0] == "VERIFIED  -"


def test_replay_reads_the_log_from_standard_input(good: Path) -> None:
    code, out, err = text("replay", "-", "--at", "30", stdin=good.read_bytes())
    assert (code, out, err) == text("replay", good, "--at", "30")
    assert code == 0 and out.startswith("after record 30 ")


def test_replay_of_unreadable_standard_input_names_it(tmp_path: Path) -> None:
    code, out, err = text("replay", "-", stdin=b"{not json\n")
    assert code == 1 and out == ""
    assert err.startswith("cannot replay <stdin>: ")


def test_audit_reads_the_log_from_standard_input(good: Path, pub: Path) -> None:
    code, out, err = text("audit", "-", "--table-key", pub, stdin=good.read_bytes())
    assert code == 0 and err == ""
    assert out == text("audit", good, "--table-key", pub)[1].replace(str(good), "<stdin>")
    code, out, _ = text("audit", "-", "--table-key", pub, "--json", stdin=good.read_bytes())
    document = json.loads(out)
    assert code == 0 and schema_errors("audit-report", document) == []
    assert document["verification"]["source"] == "<stdin>"


def test_audit_compares_standard_input_with_a_copy(good: Path, pub: Path) -> None:
    code, out, _ = text(
        "audit", "-", "--table-key", pub, "--against", good, stdin=good.read_bytes()
    )
    assert code == 0 and out.startswith("VERIFIED  <stdin>\n")


def test_standard_input_gives_one_thing_only() -> None:
    @click.command()
    @secret_option("A secret.")
    @click.argument("log")
    def both(secret: bytes | None, log: str) -> None:
        named_log(log, DEFAULT_LIMITS)

    result = CliRunner().invoke(both, ["-", "--secret", "stdin"], input="a" * 64 + "\n")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: standard input can give one thing only: --secret stdin reads it, so LOG - cannot"
    )


# -- point 7: --out - writes to standard output ------------------------------------------


@pytest.fixture
def table_key(tmp_path: Path) -> Path:
    code, _, _ = run("keygen", "table", "--dir", tmp_path)
    assert code == 0
    return tmp_path / "table.key"


def test_simulate_out_dash_writes_the_log_to_standard_output(
    tmp_path: Path, table_key: Path
) -> None:
    common = ("simulate", "--players", "2", "--seed", "io", "--hands", "1", "--signing-key")
    code, log, err = run(*common, table_key, "--out", "-")
    assert code == 0
    file = tmp_path / "file.jsonl"
    assert run(*common, table_key, "--out", file, "--no-receipts")[0] == 0
    assert log == file.read_bytes()  # byte for byte the log --out FILE writes
    records = len(log.splitlines())
    assert err.endswith(
        f"wrote - ({records} records); check it with:\n"
        f"  racing-demon verify - --table-key {tmp_path / 'table.pub'}\n"
    )
    code, out, _ = text("verify", "-", "--table-key", tmp_path / "table.pub", stdin=log)
    assert code == 0 and out.startswith("VERIFIED  <stdin>\n")


def test_simulate_out_dash_refuses_receipts_it_cannot_keep(table_key: Path) -> None:
    common = ("simulate", "--players", "2", "--seed", "io", "--hands", "1", "--signing-key")
    code, out, err = run(*common, table_key, "--out", "-", "--receipts")
    assert code == 2 and out == b""
    assert err.splitlines()[-1] == (
        "Error: Invalid value for --out: --receipts keeps files beside LOG, and --out - has "
        "none: give --out FILE, or --no-receipts"
    )


def test_simulate_out_dash_reports_a_temporary_folder_it_cannot_write(
    table_key: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "gone"))
    common = ("simulate", "--players", "2", "--seed", "io", "--hands", "1", "--signing-key")
    code, out, err = run(*common, table_key, "--out", "-")
    assert (code, out) == (2, b"")
    assert err == "cannot write the temporary log of --out -: No such file or directory\n"


# -- point 8: many logs ------------------------------------------------------------------


def test_a_folder_is_listed_in_natural_order(tmp_path: Path) -> None:
    names = ["g10.jsonl", "g2.jsonl", "g1.jsonl", "g02.jsonl", "round-10/a.jsonl",
             "round-9/b.jsonl", "G3.jsonl"]  # fmt: skip
    for name in names:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("")
    assert [path.relative_to(tmp_path).as_posix() for path in collect_logs([tmp_path])] == [
        "G3.jsonl",  # capitals sort first, as in ls -v
        "g1.jsonl",
        "g02.jsonl",  # equal numbers: their text decides, so the order is total
        "g2.jsonl",
        "g10.jsonl",
        "round-9/b.jsonl",
        "round-10/a.jsonl",
    ]
    assert natural_key(Path("a/g2")) < natural_key(Path("a/g10")) < natural_key(Path("a0/g1"))


def test_a_batch_prints_its_logs_in_natural_order(good: Path, pub: Path) -> None:
    folder = good.parent / "games"
    folder.mkdir()
    for number in (10, 2, 1):
        (folder / f"g{number}.jsonl").write_bytes(good.read_bytes())
    code, out, _ = text("verify", folder, "--table-key", pub, "--jobs", "1")
    margin = [line for line in out.splitlines() if line and not line.startswith(" ")]
    assert code == 0
    assert margin == [f"VERIFIED  {folder}/g{number}.jsonl" for number in (1, 2, 10)]


@pytest.mark.parametrize(
    ("codes", "combined"),
    [
        ((), 0),
        ((0, 0), 0),
        ((0, 2), 2),
        ((2, 1), 1),  # an unreadable file never masks a log that does not verify
        ((1, 2, 0), 1),
        ((1, 1), 1),
    ],
)
def test_the_batch_exit_code_never_masks_a_no(codes: tuple[int, ...], combined: int) -> None:
    assert batch_exit_code(ExitCode(code) for code in codes) == combined


def test_verify_help_states_how_the_exit_code_combines() -> None:
    code, out, _ = text("verify", "--help")
    assert code == 0
    assert (
        "Exit 0 when every log verifies; 1 when any log does not, is unfinished, or is "
        "unpinned without --unsafe-unpinned, even if another could not be read; else 2 when "
        "a log cannot be read;"
    ) in " ".join(out.split())


def test_an_unreadable_file_does_not_mask_a_log_that_does_not_verify(
    good: Path, bad: Path, tmp_path: Path, pub: Path
) -> None:
    missing = tmp_path / "missing.jsonl"
    code, out, _ = text("verify", missing, bad, "--table-key", pub, "--jobs", "1")
    assert code == 1 and out.splitlines()[-1] == "  all                             2  exit 1"
    code, out, _ = text("verify", good, missing, "--table-key", pub, "--jobs", "1")
    assert code == 2 and out.splitlines()[-1] == "  all                             2  exit 2"
    code, out, _ = text("verify", good, missing, bad, "--table-key", pub, "--json")
    assert code == json.loads(out)["exit_code"] == 1


def test_a_folder_stands_for_its_logs_not_the_receipts_beside_them(good: Path, pub: Path) -> None:
    """A folder of simulated games holds each log's receipts files beside it
    (`LOG-STEM.seatN.receipts.jsonl`): they are JSON Lines, but no log."""
    folder = good.parent / "archive"
    folder.mkdir()
    (folder / "g1.jsonl").write_bytes(good.read_bytes())
    receipts = folder / "g1.seat0.receipts.jsonl"
    receipts.write_text('{"not": "a log"}\n')
    assert collect_logs([folder]) == [folder / "g1.jsonl"]
    code, out, _ = text("verify", folder, "--table-key", pub)
    assert (code, out.splitlines()[0]) == (0, f"VERIFIED  {folder}/g1.jsonl")
    code, out, _ = text("verify", receipts, "--table-key", pub)  # named: verified as a log
    assert code == 1 and out.startswith(f"DOES NOT VERIFY  {receipts}")


def test_an_empty_folder_is_no_logs_found(good: Path, tmp_path: Path, pub: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, _ = text("verify", empty, "--table-key", pub)
    assert code == 2
    assert out == f"UNREADABLE  {empty}\n  UNREADABLE: no logs found under {empty}\n"
    code, out, _ = text("verify", good, empty, "--table-key", pub, "--jobs", "1")
    assert code == 2
    assert f"UNREADABLE  {empty}\n  UNREADABLE: no logs found under {empty}\n" in out
    assert "    no logs found     1" in out.splitlines()  # the summary's reason, without the name


def test_batch_json_carries_the_summary(good: Path, bad: Path, tmp_path: Path, pub: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    code, out, _ = text("verify", good, bad, missing, good, "--table-key", pub, "--json")
    document = json.loads(out)
    assert code == 1 and schema_errors("verification-report", document) == []
    assert document["summary"] == {
        "total": 4,
        "counts": {
            "verified": 2,
            "does_not_verify": 1,
            "unfinished": 0,
            "unreadable": 1,
            "unpinned": 0,
        },
        "reasons": {
            "does_not_verify": {"BAD_MOVE_TEXT": 1},
            "unreadable": {"No such file or directory": 1},
        },
    }


def test_scheduler_timeout_must_be_positive(good: Path, pub: Path) -> None:
    code, _, err = text("verify", good, "--table-key", pub, "--scheduler-timeout", "0")
    assert code == 2
    assert err.splitlines()[-1] == (
        "Error: Invalid value for '--scheduler-timeout': 0.0 is not in the range x>0."
    )


def test_scheduler_timeout_without_a_scheduler_is_refused(good: Path, pub: Path) -> None:
    code, _, err = text("verify", good, "--table-key", pub, "--scheduler-timeout", "5")
    assert code == 2
    assert err.splitlines()[-1] == (
        "Error: --scheduler-timeout is how long to wait for --scheduler: give both, or neither"
    )


@pytest.mark.slow
def test_an_unreachable_scheduler_is_reported_within_the_timeout(good: Path, pub: Path) -> None:
    pytest.importorskip("distributed")
    address = "tcp://127.0.0.1:9"  # the discard port: nothing listens there
    args = ("verify", good, good, "--table-key", pub, "--scheduler", address)
    code, out, err = text(*args, "--scheduler-timeout", "1")
    assert code == 2 and out == ""
    assert err == (
        f"Error: cannot reach the Dask scheduler at {address} within 1 s (--scheduler-timeout)\n"
    )


# -- point 11: file names that are not UTF-8 ---------------------------------------------

# A real file name on disk that is not UTF-8: byte 0xff, and a newline to escape.
RAW_NAME = b"g\xff\n.jsonl"
SHOWN = "g\\xff\\n.jsonl"  # how text shows it
IN_JSON = "g\\xff\n.jsonl"  # the JSON source: the byte escaped, the newline as itself


@pytest.fixture
def odd(good: Path) -> Path:
    folder = good.parent / "odd"
    folder.mkdir()
    path = Path(os.fsdecode(bytes(folder) + b"/" + RAW_NAME))
    try:
        path.write_bytes(good.read_bytes())
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system refuses names that are not UTF-8")
    return folder


def test_a_name_that_is_not_utf8_is_shown_one_way_in_text(odd: Path, pub: Path) -> None:
    code, out, _ = run("verify", odd, "--table-key", pub)
    assert code == 0
    assert out.decode("utf-8").splitlines()[0] == f"VERIFIED  {odd}/{SHOWN}"


def test_json_sources_are_valid_utf8_never_lone_surrogates(
    odd: Path, tmp_path: Path, pub: Path
) -> None:
    report = tmp_path / "report.jsonl"
    code, out, _ = run("verify", odd, "--table-key", pub, "--json", "--report", report)
    assert code == 0
    document = json.loads(out.decode("utf-8"))  # strict: no lone surrogate decodes
    [source] = [entry["source"] for entry in document["reports"]]
    assert source == f"{odd}/{IN_JSON}" and source.encode("utf-8")
    assert json.loads(report.read_bytes().decode("utf-8"))["source"] == source
    log = Path(os.fsdecode(bytes(odd) + b"/" + RAW_NAME))
    code, out, _ = run("audit", log, "--table-key", pub, "--json")
    assert code == 0
    assert json.loads(out.decode("utf-8"))["verification"]["source"] == source


def test_a_real_process_given_a_name_that_is_not_utf8(odd: Path, pub: Path) -> None:
    """The name as bytes in argv, as a shell passes it, and the output as bytes."""
    log = bytes(odd) + b"/" + RAW_NAME
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    for args, expected in [
        ([log], f"VERIFIED  {odd}/{SHOWN}\n".encode()),
        ([log + b".missing"], f"UNREADABLE  {odd}/{SHOWN}.missing\n".encode()),
    ]:
        done = subprocess.run(
            [sys.executable, "-m", "racing_demon", "verify", *args, b"--table-key", bytes(pub)],
            capture_output=True,
            env=env,
            check=False,
        )
        assert done.stdout.startswith(expected), done.stderr
        done.stdout.decode("utf-8")  # all of it valid UTF-8
