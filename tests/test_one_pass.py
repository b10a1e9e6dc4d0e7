"""Issue 30, point 1: "A log is read once, by one reader, and every command visits that one
pass" -- "a visitor hook on the verifier's single pass: ... replay become[s a] visitor of the
one verified pass, and each command opens each log file once (a test counts the opens with
an audit hook, `sys.addaudithook`)"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from racing_demon.game.flow import MatchFlow
from racing_demon.log.reader import Line
from racing_demon.log.records import Record
from racing_demon.replay import find_secret, replay
from racing_demon.verify import Report, Settings, Verdict, verify_log
from racing_demon.viewer.model import verified_page_data

from conftest import invoke

ROOT = Path(__file__).resolve().parents[1]
NERTZ = ROOT / "tests" / "golden" / "logs" / "nertz-4p-signed.jsonl"

# Run in a child process: an audit hook cannot be removed, and would outlive this test.
_COUNT_OPENS = """
import os, sys
log, tally, *arguments = sys.argv[1:]
opens = 0

def hook(event, args):
    global opens
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        opens += os.path.realpath(os.fsdecode(args[0])) == log

sys.addaudithook(hook)
from racing_demon.cli import main

try:
    main.main(arguments, prog_name="racing-demon")
except SystemExit as leaving:
    with open(tally, "w") as file:
        file.write(f"{opens} {leaving.code}")
"""


def _opens(tmp_path: Path, *arguments: str) -> tuple[int, int]:
    """How many times the command opened NERTZ, and its exit code."""
    tally = tmp_path / "tally"
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *sys.path])}
    subprocess.run(
        [sys.executable, "-c", _COUNT_OPENS, os.path.realpath(NERTZ), str(tally), *arguments],
        check=True,
        capture_output=True,
        env=environment,
    )
    opens, code = tally.read_text().split()
    return int(opens), int(code)


@pytest.mark.parametrize(
    "arguments",
    [
        ("replay", str(NERTZ), "--at", "200"),
        ("replay", str(NERTZ)),
        ("replay", str(NERTZ), "--json", "--at", "12"),
        ("verify", str(NERTZ), "--unsafe-unpinned"),
        ("view", str(NERTZ), "--out", "{tmp}/page.html"),
    ],
)
def test_a_command_opens_its_log_once(tmp_path: Path, arguments: tuple[str, ...]) -> None:
    opens, code = _opens(tmp_path, *(part.format(tmp=tmp_path) for part in arguments))
    assert code == 0
    assert opens == 1


class _Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[int, int, MatchFlow]] = []
        self.reports: list[Report] = []

    def visit(self, line: Line, record: Record, flow: MatchFlow) -> None:
        self.seen.append((line.number, record.seq, flow))

    def end(self, report: Report) -> None:
        self.reports.append(report)


def test_a_visitor_sees_every_record_replayed_then_the_report() -> None:
    recorder = _Recorder()
    settings = Settings(unsafe_unpinned=True)
    report = verify_log(NERTZ, settings, visitors=[recorder])
    assert report.verdict is Verdict.UNPINNED
    assert report == verify_log(NERTZ, settings)  # visiting changes no verdict
    assert recorder.reports == [report]
    assert [(number, seq) for number, seq, _ in recorder.seen] == [
        (seq + 1, seq) for seq in range(report.records or 0)
    ]
    # The flow a visitor is handed is the table replay rebuilds after the same record.
    secret = find_secret(NERTZ)
    assert secret is not None
    for (_, _, flow), snapshot in zip(recorder.seen, replay(NERTZ, secret), strict=True):
        assert flow.state == snapshot.state


def test_a_visitor_sees_no_record_past_the_first_refused(tmp_path: Path) -> None:
    lines = NERTZ.read_bytes().splitlines(keepends=True)
    cut = tmp_path / "swapped.jsonl"
    cut.write_bytes(b"".join([*lines[:30], lines[31], lines[30], *lines[32:]]))
    recorder = _Recorder()
    report = verify_log(cut, Settings(unsafe_unpinned=True), visitors=[recorder])
    assert report.verdict is Verdict.DOES_NOT_VERIFY
    assert recorder.reports == [report]
    assert [seq for _, seq, _ in recorder.seen] == list(range(30))


def test_an_unreadable_log_still_ends_the_visit(tmp_path: Path) -> None:
    recorder = _Recorder()
    report = verify_log(tmp_path / "missing.jsonl", Settings(), visitors=[recorder])
    assert report.verdict is Verdict.UNREADABLE
    assert recorder.reports == [report] and recorder.seen == []


def _no_second_read(*_: object) -> None:
    raise AssertionError("the log was replayed outside verification's pass")


def test_replay_of_a_log_that_verifies_is_the_pass_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Point 1: "replay become[s a] visitor of the one verified pass"."""
    expected = invoke("replay", str(NERTZ), "--at", "200")
    monkeypatch.setattr("racing_demon.replay_run.replay", _no_second_read)
    monkeypatch.setattr("racing_demon.replay_run.genesis_and_secret", _no_second_read)
    assert invoke("replay", str(NERTZ), "--at", "200") == expected
    assert invoke("replay", str(NERTZ))[0] == 0


def test_view_of_a_log_that_verifies_is_told_on_the_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Point 1: "view ... become[s a] visitor of the one verified pass"."""
    settings = Settings(unsafe_unpinned=True)
    expected = verified_page_data(NERTZ, settings)
    monkeypatch.setattr("racing_demon.viewer.model.replay", _no_second_read)
    assert verified_page_data(NERTZ, settings) == expected
