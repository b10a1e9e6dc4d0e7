"""Issue 30, point 1: "A log is read once, by one reader, and every command visits that one
pass" -- "a visitor hook on the verifier's single pass: ... replay become[s a] visitor of the
one verified pass, and each command opens each log file once (a test counts the opens with
an audit hook, `sys.addaudithook`)"."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.flow import MatchFlow, RecordKind
from racing_demon.log.reader import Line
from racing_demon.log.records import Record
from racing_demon.profiles import builtin_document, custom_variant, rules_from_document
from racing_demon.replay import find_secret, replay
from racing_demon.testing.randomplay import play_match
from racing_demon.verify import Report, Settings, Verdict, verify_log
from racing_demon.viewer.model import verified_page_data

from conftest import invoke
from opens import count_opens, opens_of

ROOT = Path(__file__).resolve().parents[1]
NERTZ = ROOT / "tests" / "golden" / "logs" / "nertz-4p-signed.jsonl"

_COMMANDS = [
    ("replay", str(NERTZ), "--at", "200"),
    ("replay", str(NERTZ)),
    ("replay", str(NERTZ), "--json", "--at", "12"),
    ("verify", str(NERTZ), "--unsafe-unpinned"),
    ("view", str(NERTZ), "--out", "{tmp}/page.html"),
]


def test_a_command_opens_its_log_once(tmp_path: Path) -> None:
    runs = [[part.format(tmp=tmp_path) for part in arguments] for arguments in _COMMANDS]
    for arguments, opened in zip(_COMMANDS, count_opens(tmp_path, runs), strict=True):
        assert opened.status == 0, arguments
        assert (opened.reads(NERTZ), opened.writes(NERTZ)) == (1, 0), arguments


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


def _no_second_read(*_: object, **__: object) -> None:
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


# -- every reader of a log rides the one pass (issue 30, point 1) ----------------------

SAMPLES = ROOT / "sample_games"
TOURNAMENT = SAMPLES / "tournament"
ILLEGAL_MOVE = SAMPLES / "disputed" / "illegal-move-re-signed.jsonl"
SWAPPED = SAMPLES / "disputed" / "swapped-records.jsonl"
TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes([7]) * 32)
SECRET = bytes(range(100, 132))

_RESUME = """
from pathlib import Path
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from racing_demon.table import Table
path, key, secret = arguments
key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(key))
Table.resume(Path(path), key, bytes.fromhex(secret)).close()
"""


def _whole_and_cut(tmp_path: Path) -> tuple[list[bytes], Path]:
    """A whole match played at a table, and a copy cut as a crash leaves it: just before
    the table wrote the final record, which is due at once."""
    document = builtin_document("table")
    document["match"]["target"] = 40
    whole = tmp_path / "whole.jsonl"
    seats = [bytes([seat]) * 16 for seat in range(3)]
    rules = custom_variant(rules_from_document(document))
    play_match(whole, rules, TABLE_KEY, SECRET, seats, random.Random(3).choice)
    lines = whole.read_bytes().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[: _first(lines, RecordKind.FINAL)]))
    return lines, cut


def _first(lines: list[bytes], kind: RecordKind) -> int:
    return next(n for n, line in enumerate(lines) if json.loads(line)["body"]["kind"] == kind)


def test_a_table_resumes_from_one_read_of_its_log(tmp_path: Path) -> None:
    """Point 1: "... resume ... become[s a] visitor of the one verified pass, and each
    command opens each log file once". The table then opens the log again, to append: that
    is writing, not reading, and counted apart."""
    lines, path = _whole_and_cut(tmp_path)
    key = TABLE_KEY.private_bytes_raw().hex()
    opened = opens_of(tmp_path, str(path), key, SECRET.hex(), code=_RESUME)
    assert opened.status == 0
    assert (opened.reads(path), opened.writes(path)) == (1, 1)
    # It wrote the final record the crash cut short, as the table had.
    assert path.read_bytes() == b"".join(lines)


def test_tournament_score_reads_each_table_log_once(tmp_path: Path) -> None:
    """Point 1: "each command opens each log file once": the scores, the genesis and the
    organiser's secret come from each log's verifying pass."""
    arguments = ("tournament", "score", "plan.json", ".", "--table-key", "../table.pub")
    # One process: the workers of a pool would open the logs where no hook counts.
    opened = opens_of(tmp_path, *arguments, "--jobs", "1", cwd=TOURNAMENT)
    assert opened.status == 0
    logs = sorted(TOURNAMENT.glob("table-?.jsonl"))
    assert len(logs) == 4
    assert [opened.reads(log) for log in logs] == [1, 1, 1, 1]


def test_tournament_score_reads_a_log_it_cannot_score_once(tmp_path: Path) -> None:
    """A log that does not verify, or is unfinished, is named with the hand it stopped
    in: that is read from the file the verifier opened, not from a second opening."""
    logs = tmp_path / "logs"
    logs.mkdir()
    lines = (TOURNAMENT / "table-1.jsonl").read_bytes().splitlines(keepends=True)
    (logs / "table-1.jsonl").write_bytes(b"".join(lines[: len(lines) // 2]))
    lines = (TOURNAMENT / "table-2.jsonl").read_bytes().splitlines(keepends=True)
    (logs / "table-2.jsonl").write_bytes(b"".join([*lines[:40], lines[41], lines[40], *lines[42:]]))
    arguments = ("tournament", "score", str(TOURNAMENT / "plan.json"), str(logs))
    key = ("--table-key", str(SAMPLES / "table.pub"), "--jobs", "1", "--json")
    opened = opens_of(tmp_path, *arguments, *key)
    assert opened.status == 1
    assert [opened.reads(logs / name) for name in ("table-1.jsonl", "table-2.jsonl")] == [1, 1]


@pytest.mark.parametrize("log", [ILLEGAL_MOVE, SWAPPED], ids=lambda log: log.stem)
def test_replay_of_a_log_that_does_not_verify_opens_it_once(tmp_path: Path, log: Path) -> None:
    """Point 1: "each command opens each log file once", a log that does not verify too."""
    opened = opens_of(tmp_path, "replay", str(log))
    assert opened.status == 1  # the replay stops at the first record it refuses
    assert (opened.reads(log), opened.writes(log)) == (1, 0)


def test_replay_to_a_refused_record_is_the_pass_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """Point 1: "replay become[s a] visitor of the one verified pass": where the match flow
    refuses a record (steps 1-6 held), the pass stopped at the same record for the same
    reason, and nothing is read again."""
    expected = [invoke("replay", str(ILLEGAL_MOVE), *more) for more in ((), ("--json",))]
    assert expected[0][0] == 1 and "NOT_AN_ACE" in expected[0][1]
    monkeypatch.setattr("racing_demon.replay_run.replay", _no_second_read)
    monkeypatch.setattr("racing_demon.replay_run.genesis_and_secret", _no_second_read)
    assert [invoke("replay", str(ILLEGAL_MOVE), *more) for more in ((), ("--json",))] == expected


def test_recover_opens_its_log_once(tmp_path: Path) -> None:
    """Point 1: "each command opens each log file once": recover reads, verifies and cuts
    through one opening (to read and write)."""
    lines = NERTZ.read_bytes().splitlines(keepends=True)
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(b"".join(lines[:40]) + lines[40][:25])
    opened = opens_of(tmp_path, "recover", str(torn))
    assert opened.status == 0
    assert torn.read_bytes() == b"".join(lines[:40])
    assert opened.reads(torn) + opened.writes(torn) == 1
