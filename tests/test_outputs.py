"""Nothing the tool does destroys a user's file, and it ends as the tools people know end.

Issue "Nothing the tool does loses a user's data": a report, like every file the tool
writes, never replaces an existing file without --force and never names one of the
inputs; `-` is standard output; a write error is one line and exit 2; a closed pipe ends
quietly; Ctrl-C exits 130 with everything verified so far printed and in the report; a
named pipe is refused before anything blocks on it (docs/threat-model.md §3).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from racing_demon.batch import BatchRun, iter_verified, run_batch
from racing_demon.cli import main
from racing_demon.files import (
    NotRegularFileError,
    Output,
    OutputError,
    OutputWriter,
    WriteFailed,
    open_regular,
)
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.report.batch import reporter_named
from racing_demon.schema import schema_errors
from racing_demon.verify import Settings, Verdict

ROOT = Path(__file__).resolve().parents[1]
GAME = ROOT / "sample_games" / "table-3p-signed.jsonl"
KEY = ROOT / "sample_games" / "table.pub"
COMMAND = [sys.executable, "-m", "racing_demon"]


def process(*args: str | Path, stdin: int | None = None) -> subprocess.CompletedProcess[str]:
    """The command line in a process of its own, its output captured."""
    return subprocess.run(
        [*COMMAND, *map(str, args)],
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=60,  # a command that blocks (on a pipe, say) fails here instead of hanging
        check=False,
    )


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    """A folder of copies of the bundled game: every one verifies."""
    folder = tmp_path / "archive"
    folder.mkdir()
    for number in range(3):
        shutil.copy(GAME, folder / f"g{number}.jsonl")
    return folder


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)
    yield path


# -- outputs never destroy a file -----------------------------------------------------------


def test_a_report_that_names_the_log_being_verified_is_refused_before_reading(
    tmp_path: Path,
) -> None:
    log = tmp_path / "game.jsonl"
    shutil.copy(GAME, log)
    for force in ([], ["--force"]):
        code, out, err = run("verify", log, "--table-key", KEY, "--report", log, *force)
        assert code == 2 and out == "" and "also an input" in err
        assert log.read_bytes() == GAME.read_bytes()


def test_a_report_that_names_the_pinned_key_is_refused(tmp_path: Path) -> None:
    key = tmp_path / "table.pub"
    shutil.copy(KEY, key)
    code, _, err = run("verify", GAME, "--table-key", key, "--report", key, "--force")
    assert code == 2 and "also an input" in err
    assert key.read_bytes() == KEY.read_bytes()


def test_an_existing_report_is_kept_unless_force(tmp_path: Path) -> None:
    report = tmp_path / "results.jsonl"
    report.write_text("keep me\n")
    code, out, err = run("verify", GAME, "--table-key", KEY, "--report", report)
    assert code == 2 and out == "" and "not replacing existing" in err and "--force" in err
    assert report.read_text() == "keep me\n"
    code, _, _ = run("verify", GAME, "--table-key", KEY, "--report", report, "--force")
    assert code == 0
    [line] = report.read_text().splitlines()
    assert json.loads(line)["verdict"] == "verified"


def test_a_dangling_link_is_not_written_through(tmp_path: Path) -> None:
    link = tmp_path / "results.jsonl"
    link.symlink_to(tmp_path / "elsewhere.jsonl")
    code, _, err = run("verify", GAME, "--table-key", KEY, "--report", link)
    assert code == 2 and "a link to nothing" in err
    assert not (tmp_path / "elsewhere.jsonl").exists()


@pytest.mark.slow
def test_a_link_to_a_terminal_or_pipe_is_written_through() -> None:
    # /dev/stdout is a link to whatever standard output is: here a pipe, which holds no file.
    done = process("verify", GAME, "--table-key", KEY, "--report", "/dev/stdout")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["verdict"] == "verified"


def test_a_private_key_is_never_written_into_a_pipe(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "table.key")
    code, _, err = run("keygen", "table", "--dir", tmp_path)
    assert code == 2 and "not replacing existing" in err, err
    code, _, err = run("keygen", "table", "--dir", tmp_path, "--force")
    assert code == 2 and "not a regular file" in err, err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["table.key"]


def test_a_report_inside_the_folder_being_verified_is_not_read_as_a_log(archive: Path) -> None:
    report = archive / "results.jsonl"
    code, out, _ = run("verify", archive, "--table-key", KEY, "--report", report)
    assert code == 0, out
    assert len(report.read_text().splitlines()) == 3
    # Once there, it is one of the folder's logs: replacing it would destroy an input.
    code, _, err = run("verify", archive, "--table-key", KEY, "--report", report, "--force")
    assert code == 2 and "also an input" in err
    assert len(report.read_text().splitlines()) == 3


def test_a_report_on_standard_output_sends_the_text_to_standard_error(archive: Path) -> None:
    code, out, err = run("verify", archive, "--table-key", KEY, "--report", "-")
    assert code == 0
    documents = [json.loads(line) for line in out.splitlines()]
    assert [document["verdict"] for document in documents] == ["verified"] * 3
    for document in documents:
        assert schema_errors("verification-report-line", document) == []
    assert err.count("VERIFIED  ") == 3 and "all" in err


def test_a_replaced_output_keeps_the_old_file_until_the_new_one_is_complete(
    tmp_path: Path,
) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(b"old\n")
    output = Output(path, replace=True)
    output.open().write(b"half of the new")
    assert path.read_bytes() == b"old\n"
    output.discard()  # the write failed
    assert path.read_bytes() == b"old\n"
    assert sorted(tmp_path.iterdir()) == [path]  # nothing staged is left behind
    output = Output(path, replace=True)
    output.open().write(b"new\n")
    output.commit()
    assert path.read_bytes() == b"new\n"


def test_a_replaced_output_keeps_the_permissions_of_the_file_it_replaces(
    tmp_path: Path,
) -> None:
    report = tmp_path / "results.jsonl"
    report.write_text("old\n")
    report.chmod(0o600)  # a private report stays private when a run replaces it
    code, _, _ = run("verify", GAME, "--table-key", KEY, "--report", report, "--force")
    assert code == 0
    assert stat.S_IMODE(report.stat().st_mode) == 0o600
    assert json.loads(report.read_text())["verdict"] == "verified"


def test_a_new_output_is_created_exclusively(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    output = Output(path)
    output.check_free()
    path.write_bytes(b"written by somebody else meanwhile\n")
    with pytest.raises(OutputError, match="not replacing existing"):
        output.open()
    assert path.read_bytes() == b"written by somebody else meanwhile\n"


def test_keygen_never_replaces_the_passphrase_file_it_reads(tmp_path: Path) -> None:
    secret = tmp_path / "table.key"
    secret.write_text("correct horse battery staple\n")
    code, _, err = run("keygen", "table", "--dir", tmp_path, "--passphrase-file", secret, "--force")
    assert code == 2 and "also an input" in err
    assert secret.read_text() == "correct horse battery staple\n"


def test_simulate_never_writes_over_its_key(tmp_path: Path) -> None:
    assert run("keygen", "table", "--dir", tmp_path)[0] == 0
    key = tmp_path / "table.key"
    before = key.read_bytes()
    code, _, err = run("simulate", "--signing-key", key, "--seed", "s", "--out", key)
    assert code == 2 and key.read_bytes() == before, err


# -- write errors and closed pipes ----------------------------------------------------------


@pytest.mark.slow
def test_a_report_on_a_full_device_is_one_line_and_exit_2() -> None:
    done = process("verify", GAME, "--table-key", KEY, "--report", "/dev/full")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "Error: cannot write --report /dev/full: No space left on device"
    )
    assert "Traceback" not in done.stderr


def test_the_library_writer_fails_in_the_words_the_command_prints() -> None:
    """Issue 30, point 2: "a game server can call every use case without click": the
    report file's writer is the library's (``files.OutputWriter``), and a write that
    fails is a ``WriteFailed`` in the one line the command prints after "Error: "."""
    run = BatchRun(
        logs=[str(GAME)],
        settings=Settings(table_key=raw_public_bytes(load_public_key(KEY))),
        report="/dev/full",
    )
    with pytest.raises(WriteFailed) as failed:
        run_batch(run, reporter_named("text", echo=lambda text, to_stderr: None))
    assert str(failed.value) == "cannot write --report /dev/full: No space left on device"
    writer = OutputWriter(Output.named("/dev/full", replace=True), "-o")
    with pytest.raises(WriteFailed, match=r"^cannot write -o /dev/full: No space left"), writer:
        writer.write(b"x" * 10)


@pytest.mark.slow
def test_a_full_standard_output_is_one_line_and_exit_2() -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [*COMMAND, "audit", str(GAME), "--table-key", str(KEY)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2
    assert done.stderr == "racing-demon: cannot write standard output: No space left on device\n"


# Issue 29, item 3: "`racing-demon --help >/dev/full`, `--version >/dev/full`, `docs
# log-format >/dev/full` print a traceback and exit 1; every other command prints one line
# and exits 2. Handle the group's eager options and the pager path the same way."
@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [["--help"], ["--version"], ["docs", "log-format"], ["docs"], ["verify", "--help"]],
    ids=" ".join,
)
def test_help_version_and_the_pager_on_a_full_device_are_one_line_and_exit_2(
    args: list[str],
) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [*COMMAND, *args], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60
        )
    assert (done.returncode, done.stderr) == (
        2,
        "racing-demon: cannot write standard output: No space left on device\n",
    )


# Issue 29, item 4: "`view ... -o - | head -c 100` and `simulate ... --out - | head -c 100`
# exit 0 and say 'wrote standard output (566871 bytes)' when 65,536 were written: a short
# write is not checked. A short or failed write to a pipe exits 141, as the README
# promises, and never claims more bytes than were written." An unbuffered standard output
# (PYTHONUNBUFFERED, python -u) is where the pipe's short write went unseen.
@pytest.mark.slow
@pytest.mark.parametrize("unbuffered", [True, False], ids=["unbuffered", "buffered"])
@pytest.mark.parametrize("command", ["view", "simulate"])
def test_a_file_on_standard_output_cut_short_by_its_reader_exits_141_claiming_nothing(
    tmp_path: Path, command: str, unbuffered: bool
) -> None:
    assert run("keygen", "table", "--dir", tmp_path)[0] == 0
    args = {
        "view": ["view", str(GAME), "--table-key", str(KEY), "-o", "-"],
        "simulate": [
            *("simulate", "--players", "2", "--seed", "demo"),
            *("--signing-key", str(tmp_path / "table.key"), "--out", "-"),
        ],
    }[command]
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    with subprocess.Popen(
        [*COMMAND, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    ) as reader:
        assert reader.stdout is not None and reader.stderr is not None
        head = reader.stdout.read(100)  # as `head -c 100` does, then it goes away
        reader.stdout.close()
        errors = reader.stderr.read()
        code = reader.wait(timeout=120)
    assert head.startswith(b"<!DOCTYPE html>" if command == "view" else b'{"body":')
    assert (code, errors) == (141, b"")  # no "wrote standard output (N bytes)"


def _with_a_closed_reader(*args: str) -> tuple[int, bytes]:
    """Run the command with its standard output a pipe whose reader is already gone: its
    exit code and standard error."""
    read, write = os.pipe()
    os.close(read)
    with subprocess.Popen([*COMMAND, *args], stdout=write, stderr=subprocess.PIPE) as command:
        os.close(write)
        assert command.stderr is not None
        errors = command.stderr.read()
        return command.wait(timeout=60), errors


@pytest.mark.slow
def test_a_report_on_a_closed_pipe_ends_quietly(archive: Path) -> None:
    code, errors = _with_a_closed_reader(
        "verify", str(archive), "--table-key", str(KEY), "--report", "-"
    )
    assert (code, errors) == (141, b"")


@pytest.mark.slow
def test_a_closed_standard_output_keeps_the_report_written_so_far(
    archive: Path, tmp_path: Path
) -> None:
    report = tmp_path / "results.jsonl"
    code, errors = _with_a_closed_reader(
        "verify", str(archive), "--table-key", str(KEY), "--jobs", "1", "--report", str(report)
    )
    assert (code, errors) == (141, b"")
    lines = report.read_text().splitlines()
    assert lines and all(json.loads(line)["verdict"] == "verified" for line in lines)


@pytest.mark.slow
def test_a_closed_pipe_ends_quietly() -> None:
    # The reader is gone before the command writes (as `head -1` is once it has its line),
    # so no output fits in the pipe ahead of it.
    code, errors = _with_a_closed_reader("audit", str(GAME), "--table-key", str(KEY))
    assert (code, errors) == (141, b"")  # as a shell reports a command SIGPIPE ended


# -- Ctrl-C ---------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_exits_130_with_what_was_verified_printed_and_in_the_report(
    tmp_path: Path, jobs: str
) -> None:
    folder = _big_archive(tmp_path)
    report = tmp_path / "results.jsonl"
    with _batch(folder, "--jobs", jobs, "--report", report) as verify:
        assert verify.stdout is not None
        first = verify.stdout.readline()  # streamed: the first log's line comes at once
        assert first.startswith("VERIFIED  ") and first.rstrip().endswith("g000.jsonl")
        verify.send_signal(signal.SIGINT)
        assert verify.wait(timeout=60) == 130
        # Not communicate(): it would miss what readline has buffered already.
        out, err = verify.stdout.read(), verify.stderr.read()  # type: ignore[union-attr]
    entries = [first, *(line for line in out.splitlines() if line.startswith("VERIFIED"))]
    lines = report.read_text().splitlines()
    assert 1 <= len(lines) == len(entries) < 200, (out, err)
    assert [json.loads(line)["source"] for line in lines] == [
        str(folder / f"g{number:03}.jsonl") for number in range(len(lines))
    ]
    assert f"interrupted: {len(lines)} of 200 logs verified" in out
    assert "Traceback" not in err and "Aborted" not in err


def _pool_workers(pid: int) -> list[int]:
    """The pool workers of command ``pid`` (Linux /proc): the children of its fork server,
    which is the command's child that runs multiprocessing's forkserver."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    servers = [
        child
        for child in children.get(pid, [])
        if b"forkserver" in Path(f"/proc/{child}/cmdline").read_bytes()
    ]
    return [worker for server in servers for worker in children.get(server, [])]


def _big_archive(tmp_path: Path, logs: int = 200) -> Path:
    folder = tmp_path / "big"
    folder.mkdir()
    for number in range(logs):
        shutil.copy(GAME, folder / f"g{number:03}.jsonl")
    return folder


def _default_sigint() -> None:
    # A test runner started in the background inherits SIGINT ignored; the command must not.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def _batch(folder: Path, *options: str | Path) -> Iterator[subprocess.Popen[str]]:
    """``verify FOLDER`` in a process of its own, its output piped, Ctrl-C as on a terminal.
    A command still running when the test ends is killed: a hang fails the test, never
    the whole run (Popen's own exit would wait for it without end)."""
    with subprocess.Popen(
        [*COMMAND, "verify", str(folder), "--table-key", str(KEY), *map(str, options)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    ) as verify:
        try:
            yield verify
        finally:
            if verify.poll() is None:
                verify.kill()


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_worker_killed_from_outside_is_one_line_exit_2_and_keeps_the_report(
    tmp_path: Path,
) -> None:
    folder = _big_archive(tmp_path)
    report = tmp_path / "results.jsonl"
    with _batch(folder, "--jobs", "2", "--report", report) as verify:
        assert verify.stdout is not None and verify.stderr is not None
        assert verify.stdout.readline().startswith("VERIFIED  ")
        workers = _pool_workers(verify.pid)
        assert workers
        for pid in workers:  # as the out-of-memory killer would
            os.kill(pid, signal.SIGKILL)
        out, err = verify.stdout.read(), verify.stderr.read()
        assert verify.wait(timeout=60) == 2
    assert "a verification worker died" in err and "Traceback" not in err, err
    lines = report.read_text().splitlines()
    assert 1 <= len(lines) < 200
    assert [json.loads(line)["source"] for line in lines] == [
        str(folder / f"g{number:03}.jsonl") for number in range(len(lines))
    ]
    assert out.count("VERIFIED  ") + 1 == len(lines)


@pytest.mark.slow
def test_an_interrupted_batch_never_replaces_a_report(tmp_path: Path) -> None:
    folder = _big_archive(tmp_path)
    report = tmp_path / "results.jsonl"
    report.write_text("the last complete run\n")
    with _batch(folder, "--jobs", "1", "--report", report, "--force") as verify:
        assert verify.stdout is not None and verify.stderr is not None
        assert verify.stdout.readline().startswith("VERIFIED  ")
        verify.send_signal(signal.SIGINT)
        assert verify.wait(timeout=60) == 130
        err = verify.stderr.read()
    assert f"{report} was not replaced: only a whole batch replaces it" in err
    assert report.read_text() == "the last complete run\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["big", "results.jsonl"]


@pytest.mark.slow
def test_a_prompt_that_meets_the_end_of_input_exits_2(tmp_path: Path) -> None:
    done = process(
        "keygen", "table", "--dir", tmp_path, "--ask-passphrase", stdin=subprocess.DEVNULL
    )
    assert done.returncode == 2
    assert "standard input ended before the prompt was answered" in done.stderr
    assert not any(tmp_path.iterdir())


def test_batch_reports_stream_in_order(archive: Path) -> None:
    logs = sorted(archive.iterdir())
    reports = iter_verified(logs, Settings(unsafe_unpinned=True), jobs=1)
    first = next(reports)
    assert first.source == str(logs[0]) and first.verdict is Verdict.UNPINNED
    reports.close()


# -- inputs that are not files --------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["verify", "{fifo}", "--table-key", str(KEY)],
        *[  # the same refusal by every other command: a process each, so slow
            pytest.param(command, marks=pytest.mark.slow)
            for command in [
                ["replay", "{fifo}"],
                ["audit", "{fifo}", "--table-key", str(KEY)],
                ["recover", "{fifo}", "--dry-run"],
                ["verify", str(GAME), "--table-key", "{fifo}"],
                ["rules", "{fifo}.json"],
            ]
        ],
    ],
    ids=["verify", "replay", "audit", "recover", "key", "profile"],
)
def test_a_named_pipe_is_refused_without_waiting_for_a_writer(
    tmp_path: Path, command: list[str]
) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    os.mkfifo(f"{fifo}.json")
    done = process(*(part.format(fifo=fifo) for part in command))
    assert done.returncode == 2
    assert "not a regular file (a named pipe)" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_open_regular_names_what_it_refuses(fifo: Path, tmp_path: Path) -> None:
    with pytest.raises(NotRegularFileError, match="a named pipe"):
        open_regular(fifo)
    with pytest.raises(NotRegularFileError, match="a folder"):
        open_regular(tmp_path)
    with pytest.raises(NotRegularFileError, match="a character device"):
        open_regular(Path("/dev/null"))
