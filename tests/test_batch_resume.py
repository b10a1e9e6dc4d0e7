"""Workers that read the logs themselves (fsspec), the verdict cache and ``verify --resume``.

The logs are test_batch's: one short honest game and copies of it broken in known ways.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_batch import PINNED, broken_copies, game, pub, run, scheduler

import racing_demon.batch.cache
import racing_demon.batch.fetch
import racing_demon.batch.version
from racing_demon.batch import (
    cache_key,
    collect_logs,
    collect_names,
    iter_resumed,
    reusable,
    verify_fetched,
    verify_many,
    verify_on_dask,
)
from racing_demon.log.reader import Limits
from racing_demon.report.batch import cache_line
from racing_demon.report_document import report_from_document
from racing_demon.schema import schema_errors
from racing_demon.verify import Report, Settings, Verdict, verify_log
from racing_demon.verify.assurance import Requirement
from racing_demon.verify.settings import Equations, FailedEquation

__all__ = ["game", "pub", "scheduler"]  # fixtures, shared with test_batch


@pytest.fixture
def batch(tmp_path: Path, game: bytes) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    broken_copies(folder, game)
    return folder


def resume(*args: str | Path) -> tuple[int, str, str]:
    return run("verify", *args, "--jobs", "1", "--resume")


def renamed(report: Report, source: str) -> Report:
    """``report`` of the same log named ``source``: an unreadable one's words name it."""
    finding = report.finding
    if report.verdict is Verdict.UNREADABLE and finding is not None:
        message = finding.message.replace(report.source, source, 1)
        finding = dataclasses.replace(finding, message=message)
    return dataclasses.replace(report, source=source, finding=finding)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# -- the cache key ------------------------------------------------------------------------


def test_the_cache_key_changes_with_every_setting_and_the_verifier(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    changed = {
        "table_key": Settings(),
        "fast": dataclasses.replace(PINNED, fast=True),
        "seed": dataclasses.replace(PINNED, seed=bytes(32)),
        "game_id": dataclasses.replace(PINNED, game_id="0" * 32),
        "unsafe_unpinned": Settings(unsafe_unpinned=True),
        "limits": dataclasses.replace(PINNED, limits=Limits(max_records=10)),
        "rules": dataclasses.replace(PINNED, rules="0" * 64),
        "required": dataclasses.replace(PINNED, required=(Requirement.KEYED,)),
        "equations": dataclasses.replace(PINNED, equations=Equations.BY_HOST),
        "failed_equations": dataclasses.replace(
            PINNED,
            equations=Equations.BY_HOST,
            failed_equations=frozenset({FailedEquation(bytes(32), bytes(64), bytes(32))}),
        ),
    }
    # A field added to Settings must be added here, and so proved to change the key.
    assert set(changed) == {field.name for field in dataclasses.fields(Settings)}
    keys = {cache_key(settings) for settings in changed.values()}
    assert len(keys) == len(changed) and cache_key(PINNED) not in keys
    assert cache_key(PINNED) == cache_key(Settings(table_key=PINNED.table_key))
    secret = bytes(range(32))
    assert secret.hex() not in cache_key(dataclasses.replace(PINNED, seed=secret))
    before = cache_key(PINNED)
    monkeypatch.setattr(racing_demon.batch.cache, "VERIFIER_FORMAT", 2)
    assert cache_key(PINNED) != before
    monkeypatch.setattr(racing_demon.batch.version, "package_version", lambda: "0.0.1")
    assert cache_key(PINNED) != before


def test_only_verdicts_of_the_bytes_and_settings_alone_are_reusable(
    batch: Path, tmp_path: Path
) -> None:
    reports = verify_many(collect_logs([batch, tmp_path / "missing.jsonl"]), PINNED, jobs=1)
    assert [reusable(report) for report in reports] == [True] * 5 + [False]
    changed = dataclasses.replace(
        reports[1],
        finding=dataclasses.replace(reports[1].finding, code="FILE_CHANGED"),  # type: ignore[arg-type]
    )
    assert not reusable(changed)


# -- a report line is its report ----------------------------------------------------------


def test_a_cache_line_gives_back_its_report_exactly(batch: Path, tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_bytes(b'{"v":1}\n')  # a schema finding with problems
    named = [batch, tmp_path / "missing.jsonl", batch, tmp_path / "bad.jsonl"]
    settings = [
        PINNED,
        Settings(),
        Settings(unsafe_unpinned=True),
        dataclasses.replace(PINNED, fast=True),
    ]
    reports = [report for s in settings for report in verify_many(collect_logs(named), s, jobs=1)]
    assert any(report.finding is not None and report.finding.problems for report in reports)
    assert {report.verdict for report in reports} == set(Verdict)
    for report in reports:
        document = json.loads(cache_line(report, "ab" * 32, cache_key(PINNED)))
        assert schema_errors("verification-report-line", document) == []
        assert report_from_document(document) == report


# -- workers that read the logs -----------------------------------------------------------


def test_a_log_read_where_it_is_verified_gets_verify_logs_report(
    batch: Path, tmp_path: Path
) -> None:
    fsspec = pytest.importorskip("fsspec")
    os.mkfifo(tmp_path / "pipe.jsonl")  # never opened for reading: it would block
    (tmp_path / "empty").mkdir()
    memory = fsspec.filesystem("memory")
    good = batch / "a-good.jsonl"
    memory.pipe("/archive/a-good.jsonl", good.read_bytes())
    for path in [*collect_logs([batch]), tmp_path / "missing.jsonl", tmp_path / "pipe.jsonl"]:
        expected = verify_log(path, PINNED)
        for name in (path, path.as_uri()):
            report, sha256 = verify_fetched(name, PINNED)
            assert report == renamed(expected, str(name))
            readable = expected.verdict is not Verdict.UNREADABLE
            assert sha256 == (hashlib.sha256(path.read_bytes()).hexdigest() if readable else None)
    assert (
        verify_fetched(tmp_path / "empty", PINNED)[0]
        == verify_many([tmp_path / "empty"], PINNED)[0]
    )
    report, sha256 = verify_fetched("memory://archive/a-good.jsonl", PINNED)
    assert report is not None and report.verdict is Verdict.VERIFIED
    assert sha256 == hashlib.sha256(good.read_bytes()).hexdigest()
    assert verify_fetched("memory://archive/a-good.jsonl", PINNED, known=sha256) == (None, sha256)
    for url, why in [
        ("memory://archive/gone.jsonl", "cannot read memory://archive/gone.jsonl: "),
        ("nosuch://h/a.jsonl", "cannot read nosuch://h/a.jsonl: Protocol not known: nosuch"),
    ]:
        report, sha256 = verify_fetched(url, PINNED)
        assert report is not None and report.verdict is Verdict.UNREADABLE and sha256 is None
        assert report.finding is not None and report.finding.message.startswith(why)
    assert verify_fetched("memory://archive", PINNED)[0].finding.message == (  # type: ignore[union-attr]
        "no logs found under memory://archive"
    )


def test_a_worker_reads_no_more_than_the_limit(batch: Path, game: bytes) -> None:
    fsspec = pytest.importorskip("fsspec")
    memory = fsspec.filesystem("memory")
    memory.pipe("/big/huge.jsonl", game * 50)
    read: list[int] = []
    opened = memory.open

    def counting(path: str, mode: str = "rb", **kwargs: Any) -> Any:
        stream = opened(path, mode, **kwargs)
        original = stream.read

        def reading(size: int = -1) -> bytes:
            assert size >= 0, "a read without a bound"
            data: bytes = original(size)
            read.append(len(data))
            return data

        stream.read = reading
        return stream

    small = dataclasses.replace(PINNED, limits=Limits(max_file_bytes=len(game)))
    memory.open = counting  # type: ignore[method-assign]
    try:
        report, _ = verify_fetched("memory://big/huge.jsonl", small)
    finally:
        del memory.open
    assert report is not None and report.finding is not None
    assert report.finding.code == "FILE_TOO_LARGE"
    assert sum(read) == len(game) + 1


def test_a_url_folder_stands_for_its_logs(batch: Path, tmp_path: Path) -> None:
    fsspec = pytest.importorskip("fsspec")
    memory = fsspec.filesystem("memory")
    for name in ["g10.jsonl", "g2.jsonl", "g2.receipts.jsonl", "notes.txt", "sub/g1.jsonl"]:
        memory.pipe(f"/tree/{name}", b"")
    assert collect_names(["memory://tree", str(batch / "a-good.jsonl"), "memory://none"]) == [
        "memory:///tree/g2.jsonl",
        "memory:///tree/g10.jsonl",
        "memory:///tree/sub/g1.jsonl",
        batch / "a-good.jsonl",
        "memory://none",  # kept, to be reported
    ]
    local = collect_names([batch.as_uri()])
    assert local == [path.as_uri() for path in collect_logs([batch])]


def test_a_url_needs_the_cluster(batch: Path, pub: Path) -> None:
    code, out, err = run("verify", batch.as_uri(), "--table-key", pub)
    assert code == 2 and out == ""
    assert f"LOG {batch.as_uri()} is a URL: Dask workers read URLs (give --scheduler)" in err


def test_a_url_the_client_cannot_list_exits_2_before_the_cluster(pub: Path) -> None:
    pytest.importorskip("fsspec")
    pytest.importorskip("distributed")
    args = ["--table-key", pub, "--scheduler", "tcp://127.0.0.1:1", "--scheduler-timeout", "1"]
    code, out, err = run("verify", "nosuch://host/archive/", *args)
    assert code == 2 and out == ""
    assert "cannot list nosuch://host/archive/: Protocol not known: nosuch" in err


@pytest.mark.slow
def test_dask_workers_read_the_logs_and_the_client_sends_names(
    batch: Path, tmp_path: Path, pub: Path, scheduler: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = [*collect_logs([batch]), tmp_path / "missing.jsonl"]
    expected = verify_many(logs, PINNED, jobs=1)

    def never(*_: object) -> None:
        raise AssertionError("the client read a log")

    # Here only: the workers are processes of their own.
    monkeypatch.setattr(racing_demon.batch.fetch, "open_regular", never)
    assert verify_on_dask(logs, PINNED, scheduler) == expected
    urls = [log.as_uri() for log in logs]
    on_dask = verify_on_dask(urls, PINNED, scheduler)
    assert on_dask == [renamed(report, url) for report, url in zip(expected, urls, strict=True)]
    monkeypatch.undo()
    report = tmp_path / "r.jsonl"
    code, out, err = run(
        "verify", batch.as_uri(), "--table-key", pub, "--scheduler", scheduler,
        "--report", report, "--resume",
    )  # fmt: skip
    assert code == 1 and f"VERIFIED  {(batch / 'a-good.jsonl').as_uri()}\n" in out
    code, out, err = run(
        "verify", batch.as_uri(), "--table-key", pub, "--scheduler", scheduler,
        "--report", report, "--resume",
    )  # fmt: skip
    assert code == 1 and err == f"resumed: 5 of 5 verdicts reused from {report}\n"
    assert len(lines(report)) == 5


# -- --resume -----------------------------------------------------------------------------


def test_an_interrupted_batch_resumes_where_it_stopped(
    batch: Path, tmp_path: Path, pub: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole, part = tmp_path / "whole.jsonl", tmp_path / "part.jsonl"
    full = resume(batch, "--table-key", pub, "--report", whole)
    assert full[0] == 1 and full[2] == ""
    assert all(schema_errors("verification-report-line", line) == [] for line in lines(whole))
    # What an interrupted run leaves: the first lines, the last one torn mid-write.
    kept = whole.read_bytes().splitlines(keepends=True)
    part.write_bytes(b"".join(kept[:2]) + kept[2][:30])
    verified: list[str] = []
    verify_stream = racing_demon.batch.fetch.verify_stream

    def counted(stream: Any, settings: Settings, source: str) -> Any:
        verified.append(source)
        return verify_stream(stream, settings, source)

    monkeypatch.setattr(racing_demon.batch.fetch, "verify_stream", counted)
    code, out, err = resume(batch, "--table-key", pub, "--report", part)
    assert (code, out) == full[:2]  # the same verdicts, lines and summary
    assert err == f"resumed: 2 of 5 verdicts reused from {part}\n"
    assert verified == [str(path) for path in collect_logs([batch])[2:]]
    assert part.read_bytes() == whole.read_bytes()
    verified.clear()
    code, out, err = resume(batch, "--table-key", pub, "--report", part, "-v")
    assert code == 1 and verified == []
    assert out == run("verify", batch, "--table-key", pub, "-v")[1]


def test_a_changed_log_or_other_settings_verify_again(
    batch: Path, tmp_path: Path, pub: Path, game: bytes
) -> None:
    report = tmp_path / "r.jsonl"
    missing = tmp_path / "missing.jsonl"
    assert resume(batch, missing, "--table-key", pub, "--report", report)[0] == 1
    good = batch / "a-good.jsonl"
    good.write_bytes(game[:-1])  # torn now: unfinished
    code, out, err = resume(batch, missing, "--table-key", pub, "--report", report)
    assert code == 1 and out.startswith(f"UNFINISHED  {good}  (step 1")
    assert err == f"resumed: 4 of 6 verdicts reused from {report}\n"  # not the unreadable
    added = lines(report)[6:]
    assert [line["source"] for line in added] == [str(good), str(missing)]
    good.write_bytes(game)
    code, out, err = resume(batch, missing, "--table-key", pub, "--report", report)
    assert out.startswith(f"VERIFIED  {good}\n") and err.startswith("resumed: 4 of 6 ")
    assert lines(report)[-2]["verdict"] == "verified"
    # Another setting is another key: nothing is reused, every log gets a new line.
    code, out, err = resume(batch, missing, "--table-key", pub, "--report", report, "--fast")
    assert code == 1 and err == f"resumed: 0 of 6 verdicts reused from {report}\n"
    assert len(lines(report)) == 6 + 2 + 2 + 6


def test_iter_resumed_reuses_only_the_bytes_it_knows(batch: Path) -> None:
    logs = collect_logs([batch])
    first = list(iter_resumed(logs, PINNED, {}, jobs=1))
    assert [done.report for done in first] == verify_many(logs, PINNED, jobs=1)
    known = {done.source: done.sha256 for done in first if done.sha256 is not None}
    known[str(logs[0])] = "0" * 64
    again = list(iter_resumed(logs, PINNED, known, jobs=2))
    assert again[0] == first[0]
    assert all(done.report is None for done in again[1:])
    assert [done.sha256 for done in again] == [done.sha256 for done in first]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "--resume keeps its cache in the --report FILE: give --report FILE (not -)"),
        (["--report", "-"], "give --report FILE (not -)"),
        (["--report", "r.jsonl", "--force"], "--resume adds to the --report FILE and --force"),
    ],
)
def test_resume_needs_a_report_file(batch: Path, pub: Path, extra: list[str], message: str) -> None:
    code, out, err = run("verify", batch, "--table-key", pub, "--resume", *extra)
    assert code == 2 and out == "" and message in err


def test_resume_refuses_standard_input(tmp_path: Path, pub: Path) -> None:
    code, _, err = run("verify", "-", "--table-key", pub, "--resume", "--report", tmp_path / "r")
    assert code == 2 and "LOG - cannot be resumed" in err


def test_resume_refuses_a_file_that_is_no_report(batch: Path, tmp_path: Path, pub: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"source": "x"}\n')
    code, out, err = resume(batch, "--table-key", pub, "--report", notes)
    assert code == 2 and out == ""
    assert f"{notes} line 1 is not a verify --report line" in err
    assert notes.read_text() == '{"source": "x"}\n'  # untouched
    code, _, err = resume(batch, "--table-key", pub, "--report", batch / "a-good.jsonl")
    assert code == 2 and "is also an input" in err


def test_help_shows_resume_with_an_example() -> None:
    code, out, _ = run("verify", "--help")
    assert code == 0 and "--report results.jsonl --resume" in out and "--resume  " in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_fsspec_is_imported_only_to_read_a_url(batch: Path, pub: Path) -> None:
    script = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from racing_demon.cli import main\n"
        f"result = CliRunner().invoke(main, ['verify', {str(batch)!r}, '--table-key', "
        f"{str(pub)!r}, '--jobs', '1', '--resume', '--report', {str(batch / 'r')!r}])\n"
        "assert result.exit_code == 1, result.output\n"
        "assert 'fsspec' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
