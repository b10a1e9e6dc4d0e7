"""Batch verification: folders, parallel processes, the summary, the JSON Lines report,
and the same batch on a local Dask cluster.

The logs are one short honest game played at a real table and copies of it broken in
known ways, so every verdict and reason in a batch is known in advance.
"""

from __future__ import annotations

import json
import os
import pickle
import pty
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.batch import (
    ClusterError,
    Summary,
    collect_logs,
    verify_many,
    verify_on_dask,
)
from racing_demon.cli import main
from racing_demon.log.keys import public_pem, raw_public_bytes
from racing_demon.log.reader import Limits
from racing_demon.outcomes import exit_code_of
from racing_demon.profiles import builtin_document, rules_from_document
from racing_demon.report.verify import report_text
from racing_demon.schema import load_schema, schema_errors
from racing_demon.testing.randomplay import play_match
from racing_demon.verify import Settings, Verdict, verify_log

TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes([3]) * 32)
PINNED = Settings(table_key=raw_public_bytes(TABLE_KEY))

# name: (verdict, reason in the summary)
BROKEN = {
    "a-good.jsonl": (Verdict.VERIFIED, None),
    "b-resigned-line.jsonl": (Verdict.DOES_NOT_VERIFY, "BAD_TABLE_SIGNATURE"),
    "c-line-removed.jsonl": (Verdict.DOES_NOT_VERIFY, "SEQ_MISMATCH"),
    "d-no-final.jsonl": (Verdict.UNFINISHED, "UNFINISHED"),
    "e-torn.jsonl": (Verdict.UNFINISHED, "TORN_LINE"),
}


def run(*args: str | Path) -> tuple[int, str, str]:
    """The command line in this process: exit code, standard output, standard error."""
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A one-hand, two-seat peer2peer match: about 175 records."""
    document = builtin_document("peer2peer")
    document["match"]["max_hands"] = 1
    path = tmp_path_factory.mktemp("game") / "game.jsonl"
    play_match(
        path,
        rules_from_document(document),
        TABLE_KEY,
        bytes([9]) * 32,
        [bytes([seat]) * 16 for seat in range(2)],
        random.Random(1).choice,
    ).close()
    return path.read_bytes()


@pytest.fixture(scope="module")
def pub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("key") / "table.pub"
    path.write_bytes(public_pem(TABLE_KEY))
    return path


def broken_copies(folder: Path, game: bytes) -> list[Path]:
    """The honest game and a copy broken each way in BROKEN, written under ``folder``."""
    lines = game.splitlines(keepends=True)
    changed = lines[2].replace(b'"t_ms":', b'"t_ms":1', 1)  # no longer what the table signed
    assert changed != lines[2]
    contents = {
        "a-good.jsonl": game,
        "b-resigned-line.jsonl": b"".join([*lines[:2], changed, *lines[3:]]),
        "c-line-removed.jsonl": b"".join(lines[:4] + lines[5:]),
        "d-no-final.jsonl": b"".join(lines[:-1]),
        "e-torn.jsonl": b"".join(lines[:-1]) + lines[-1][:40],
    }
    paths = []
    for name, data in contents.items():
        path = folder / name
        path.write_bytes(data)
        paths.append(path)
    return paths


@pytest.fixture
def batch(tmp_path: Path, game: bytes) -> Path:
    """A folder of every BROKEN log, two of them a level down."""
    folder = tmp_path / "logs"
    (folder / "later").mkdir(parents=True)
    for path in broken_copies(folder, game):
        if path.name.startswith(("d-", "e-")):
            path.rename(folder / "later" / path.name)
    return folder


# -- which logs ---------------------------------------------------------------------------


def test_a_folder_stands_for_its_jsonl_files_recursively_in_sorted_order(tmp_path: Path) -> None:
    for name in ["b.jsonl", "a.jsonl", "notes.txt", "a.jsonl.bak", "z/y/deep.jsonl", "m/x.jsonl"]:
        (tmp_path / "tree" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tree" / name).write_text("")
    (tmp_path / "tree" / "folder.jsonl").mkdir()  # a folder, walked, not a log
    (tmp_path / "tree" / "folder.jsonl" / "in.jsonl").write_text("")
    (tmp_path / "tree" / "gone.jsonl").symlink_to(tmp_path / "nowhere")  # reported, not skipped
    (tmp_path / "tree" / "linked").symlink_to(tmp_path / "tree" / "m")  # not followed
    os.mkfifo(tmp_path / "tree" / "pipe.jsonl")  # opening it would wait for a writer
    (tmp_path / "empty").mkdir()
    tree = tmp_path / "tree"
    named = [tmp_path / "first.txt", tree, tmp_path / "empty", tmp_path / "missing.jsonl"]
    assert collect_logs(named) == [
        tmp_path / "first.txt",
        tree / "a.jsonl",
        tree / "b.jsonl",
        tree / "folder.jsonl" / "in.jsonl",
        tree / "gone.jsonl",
        tree / "m" / "x.jsonl",
        tree / "z" / "y" / "deep.jsonl",
        tmp_path / "empty",  # no log under it: kept, to be reported
        tmp_path / "missing.jsonl",
    ]


def test_a_folder_without_logs_is_unreadable(tmp_path: Path, pub: Path) -> None:
    code, out, _ = run("verify", tmp_path, "--table-key", pub)
    assert code == 2
    assert out == f"UNREADABLE  {tmp_path}\n  UNREADABLE: no logs found under {tmp_path}\n"


# -- a batch ------------------------------------------------------------------------------


def test_a_mixed_batch_gets_every_verdict_counted_with_its_reasons(
    batch: Path, tmp_path: Path, pub: Path
) -> None:
    missing = tmp_path / "missing.jsonl"
    code, out, err = run("verify", batch, missing, "--table-key", pub, "--jobs", "2")
    assert code == 1 and err == ""  # an unreadable file never masks a log that does not verify
    margin = [line for line in out.splitlines() if line and not line.startswith(" ")]
    assert margin == [
        f"VERIFIED  {batch}/a-good.jsonl",
        f"DOES NOT VERIFY  {batch}/b-resigned-line.jsonl  (step 5, signatures)",
        f"DOES NOT VERIFY  {batch}/c-line-removed.jsonl  (step 4, chain)",
        f"UNFINISHED  {batch}/later/d-no-final.jsonl  (step 4, chain)",
        f"UNFINISHED  {batch}/later/e-torn.jsonl  (step 1, framing and strict JSON)",
        f"UNREADABLE  {missing}",
    ]
    assert "\n  line 3 (seq 2), " in out  # a finding's line under its log
    summary = out.split("\n\n")[-1]
    assert summary.splitlines() == [
        "  verdict                      logs",
        "  verified                        1",
        "  does not verify                 2",
        "    BAD_TABLE_SIGNATURE           1",
        "    SEQ_MISMATCH                  1",
        "  unfinished                      2",
        "    TORN_LINE                     1",
        "    UNFINISHED                    1",
        "  unpinned                        0",
        "  unreadable                      1",
        "    No such file or directory     1",
        "  all                             6  exit 1",
    ]
    assert run("verify", batch, "--table-key", pub)[0] == 1
    assert run("verify", batch / "a-good.jsonl", batch / "a-good.jsonl", "--table-key", pub)[0] == 0


def test_the_summary_counts_reports(batch: Path) -> None:
    logs = collect_logs([batch])
    summary = Summary.of(verify_many(logs, PINNED, jobs=1))
    assert summary.total == len(BROKEN) and summary.exit_code == 1
    for verdict in Verdict:
        expected = [name for name, (want, _) in BROKEN.items() if want is verdict]
        assert summary.counts[verdict] == len(expected)
        reasons = Counter(BROKEN[name][1] for name in expected if BROKEN[name][1] is not None)
        assert dict(summary.reasons.get(verdict, {})) == reasons


def test_an_unpinned_batch_says_so_once_in_the_summary(batch: Path) -> None:
    code, out, _ = run("verify", batch / "a-good.jsonl", batch / "a-good.jsonl")
    assert code == 1
    assert out.count("UNPINNED: table signatures not checked  ") == 2
    assert out.count("no --table-key: nothing proves the table wrote this log") == 1
    assert ["unpinned", "2"] in [line.split() for line in out.splitlines()]


def test_the_report_file_has_one_schema_valid_line_per_log_in_input_order(
    batch: Path, tmp_path: Path, pub: Path
) -> None:
    report = tmp_path / "report.jsonl"
    named = [batch / "later", tmp_path / "missing.jsonl", batch]
    code, out, _ = run("verify", *named, "--table-key", pub, "--report", report, "--json")
    lines = report.read_text(encoding="utf-8").splitlines()
    documents = [json.loads(line) for line in lines]
    for document in documents:
        assert schema_errors("verification-report-line", document) == []
    assert [document["source"] for document in documents] == list(map(str, collect_logs(named)))
    assert documents == json.loads(out)["reports"]  # each line is one report of --json
    assert code == 1 and lines[1].startswith('{"source":')
    assert all(line.isascii() for line in lines)


def test_an_unwritable_report_file_exits_2_before_any_verification(
    batch: Path, tmp_path: Path, pub: Path
) -> None:
    code, out, err = run("verify", batch, "--table-key", pub, "--report", tmp_path / "no" / "r")
    assert code == 2 and out == "" and "--report" in err


def test_the_line_schema_shares_the_verification_reports_definitions() -> None:
    line, whole = load_schema("verification-report-line"), load_schema("verification-report")
    assert line["$defs"] == whole["$defs"]
    assert line["$ref"] == "#/$defs/report"


# -- parallel processes -------------------------------------------------------------------


@pytest.mark.slow
def test_one_job_and_two_give_the_same_reports_in_the_same_order(
    batch: Path, tmp_path: Path, pub: Path
) -> None:
    logs = collect_logs([batch, tmp_path / "missing.jsonl", batch]) * 3  # past the window
    alone = verify_many(logs, PINNED, jobs=1)
    paired = verify_many(logs, PINNED, jobs=2)
    assert paired == alone
    assert [report.source for report in alone] == list(map(str, logs))
    outputs = [
        run("verify", batch, "--table-key", pub, "--jobs", jobs, "--report", tmp_path / jobs)
        for jobs in ("1", "2")
    ]
    assert outputs[0] == outputs[1]
    assert (tmp_path / "1").read_bytes() == (tmp_path / "2").read_bytes()


def test_reports_cross_process_boundaries_unchanged(batch: Path) -> None:
    reports = verify_many(collect_logs([batch, batch / "missing"]), PINNED, jobs=1)
    assert {report.finding is None for report in reports} == {True, False}
    for report in reports:
        assert pickle.loads(pickle.dumps(report)) == report
    assert pickle.loads(pickle.dumps(PINNED)) == PINNED


@pytest.mark.parametrize("jobs", ["0", "-1", "two"])
def test_a_bad_job_count_exits_2(batch: Path, pub: Path, jobs: str) -> None:
    code, out, err = run("verify", batch, "--table-key", pub, "--jobs", jobs)
    assert code == 2 and "--jobs" in err and out == ""


def test_verify_many_refuses_no_jobs() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        verify_many([], PINNED, jobs=0)


def test_one_log_prints_its_whole_report_as_before(batch: Path, pub: Path) -> None:
    for name in BROKEN:
        path = batch / name if name[0] < "d" else batch / "later" / name
        code, out, err = run("verify", path, "--table-key", pub)
        report = verify_log(path, PINNED)
        shown = click.unstyle(report_text(report))  # colour is for a terminal only
        assert (code, out, err) == (exit_code_of(report), shown + "\n", "")


# -- the progress bar ---------------------------------------------------------------------


def test_no_progress_bar_unless_standard_error_is_a_terminal(batch: Path, pub: Path) -> None:
    code, out, err = run("verify", batch, "--table-key", pub, "--jobs", "1")
    assert (code, err) == (1, "")
    assert "verifying" not in out


def test_a_progress_bar_on_a_terminal(batch: Path, pub: Path) -> None:
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "racing_demon", "verify", batch, "--table-key", pub],
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=60,
            check=False,
        )
        os.close(follower)
        follower = -1
        shown = _read_all(leader)
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    assert done.returncode == 1
    assert "verifying" in shown and f"{len(BROKEN)}/{len(BROKEN)}" in shown
    assert b"verifying" not in done.stdout


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # Linux: EIO once the other end is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace")


# -- on a Dask cluster --------------------------------------------------------------------


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A local cluster of one worker process: tasks and reports really cross processes."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address


@pytest.mark.slow
def test_a_dask_cluster_verifies_as_this_machine_does(
    batch: Path, game: bytes, tmp_path: Path, pub: Path, scheduler: str
) -> None:
    logs = collect_logs([batch, tmp_path / "missing.jsonl", batch / "later"])
    on_dask = verify_on_dask(logs, PINNED, scheduler)
    assert on_dask == verify_many(logs, PINNED, jobs=1)
    # The honest log one byte over the limit: the client sends only max_file_bytes + 1
    # bytes of it, and the report is the one for the whole file.
    small = Settings(table_key=PINNED.table_key, limits=Limits(max_file_bytes=len(game) - 1))
    on_dask = verify_on_dask(logs, small, scheduler)
    assert on_dask == verify_many(logs, small, jobs=1)
    assert on_dask[0].finding is not None and on_dask[0].finding.code == "FILE_TOO_LARGE"
    here = run("verify", batch, "--table-key", pub, "--report", tmp_path / "here.jsonl")
    there = run(
        "verify",
        batch,
        "--table-key",
        pub,
        "--scheduler",
        scheduler,
        "--report",
        tmp_path / "there.jsonl",
    )
    assert here == there
    assert (tmp_path / "here.jsonl").read_bytes() == (tmp_path / "there.jsonl").read_bytes()


def test_a_worker_of_another_version_refuses(
    batch: Path, pub: Path, scheduler: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import racing_demon.batch.version

    monkeypatch.setattr(
        racing_demon.batch.version, "package_version", lambda: "0.0.0"
    )  # here, not there
    with pytest.raises(ClusterError, match="install the same version"):
        verify_on_dask([batch / "a-good.jsonl"], PINNED, scheduler)
    code, _, err = run("verify", batch, "--table-key", pub, "--scheduler", scheduler)
    assert code == 2 and "the client 0.0.0" in err


def test_scheduler_needs_the_dask_extra(
    batch: Path, pub: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    code, out, err = run("verify", batch, "--table-key", pub, "--scheduler", "tcp://h:8786")
    assert code == 2 and out == ""
    assert "pip install 'racing-demon[dask]'" in err


def test_scheduler_and_jobs_contradict(batch: Path, pub: Path) -> None:
    code, _, err = run("verify", batch, "--scheduler", "tcp://h:8786", "--jobs", "2")
    assert code == 2 and "--jobs" in err


def test_an_unknown_scheduler_address_exits_2(batch: Path, pub: Path) -> None:
    pytest.importorskip("distributed")
    code, _, err = run("verify", batch, "--table-key", pub, "--scheduler", "http://h:8786")
    assert code == 2 and "cannot reach the Dask scheduler at http://h:8786" in err
