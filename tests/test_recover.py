"""After a crash: `recover` removes only a torn last line, and a table resumes the match."""

from __future__ import annotations

import functools
import json
import random
import tempfile
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.engine import legal_moves
from racing_demon.game.flow import RecordKind
from racing_demon.game.rules import Rules
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.log.reader import Limits
from racing_demon.outcomes import exit_code_of
from racing_demon.profiles import builtin_document, custom_variant, rules_from_document
from racing_demon.recover import Action, RecoveryError, recover_log
from racing_demon.schema import schema_errors
from racing_demon.table import ResumeError, SubmissionError, Table, sign_submission
from racing_demon.testing.randomplay import play_match, play_on
from racing_demon.verify import Settings, Verdict, VerifyCode, verify_log

from conftest import invoke, load_script, log_bodies
from tampering import write_public_key

ROOT = Path(__file__).resolve().parents[1]
SECRET = bytes(range(100, 132))
TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes([7]) * 32)
OTHER_KEY = Ed25519PrivateKey.from_private_bytes(bytes([8]) * 32)
PLAYER_KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([0x60 + seat]) * 32) for seat in range(3)]
PINNED = Settings(table_key=raw_public_bytes(TABLE_KEY.public_key()), seed=SECRET)


def short_rules(profile: str) -> Rules:
    document = builtin_document(profile)
    document["match"]["target"] = 40
    return custom_variant(rules_from_document(document))


@functools.cache
def finished_lines(profile: str, seats: int = 3) -> tuple[bytes, ...]:
    """The lines (with newlines) of a whole keyed match, played once per profile."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "game.jsonl"
        play_match(
            path,
            short_rules(profile),
            TABLE_KEY,
            SECRET,
            [bytes([seat]) * 16 for seat in range(seats)],
            # Chosen so that the table match has stall shifts and a bounce to cut at.
            random.Random(f"{profile} {seats} g").choice,
            player_keys=PLAYER_KEYS[:seats],
        )
        return tuple(path.read_bytes().splitlines(keepends=True))


def write(tmp_path: Path, lines: tuple[bytes, ...] | list[bytes], tail: bytes = b"") -> Path:
    path = tmp_path / "game.jsonl"
    path.write_bytes(b"".join(lines) + tail)
    return path


# -- recover ------------------------------------------------------------------------


@pytest.mark.parametrize("cut", [1, 17, -5])
def test_a_torn_last_line_is_removed_and_the_rest_is_an_unfinished_log(
    tmp_path: Path, cut: int
) -> None:
    lines = finished_lines("table")[:40]
    torn = finished_lines("table")[40][:cut]
    path = write(tmp_path, lines, torn)
    assert verify_log(path, PINNED).finding.code == "TORN_LINE"  # type: ignore[union-attr]

    recovery = recover_log(path, PINNED)

    assert recovery.action is Action.REMOVED_TORN_LINE
    assert recovery.torn_bytes == len(torn)
    assert exit_code_of(recovery) == 0
    assert path.read_bytes() == b"".join(lines)
    report = verify_log(path, PINNED)
    assert report.verdict is Verdict.UNFINISHED
    assert report.finding is not None and report.finding.code is VerifyCode.UNFINISHED


def test_a_dry_run_changes_nothing(tmp_path: Path) -> None:
    data = b"".join(finished_lines("table")[:10]) + b'{"body":{"game'
    path = write(tmp_path, [data])
    recovery = recover_log(path, PINNED, dry_run=True)
    assert recovery.action is Action.REMOVED_TORN_LINE and recovery.dry_run
    assert path.read_bytes() == data


@pytest.mark.parametrize("count", [1, 25, pytest.param(None, marks=pytest.mark.slow)])
def test_a_log_that_ends_with_a_complete_record_is_left_alone(
    tmp_path: Path, count: int | None
) -> None:
    lines = finished_lines("nertz")[:count]
    path = write(tmp_path, lines)
    recovery = recover_log(path, PINNED)
    assert recovery.action is Action.NOTHING_TO_DO
    assert exit_code_of(recovery) == 0
    assert path.read_bytes() == b"".join(lines)


def test_a_torn_genesis_is_cut_only_when_asked(tmp_path: Path) -> None:
    """Issue 29, item 1: "Cutting away the only line of a file — even a torn genesis — is
    refused unless asked for explicitly"."""
    torn = finished_lines("table")[0][:-30]
    path = write(tmp_path, [], torn)
    recovery = recover_log(path, PINNED)
    assert recovery.action is Action.REFUSED_ONLY_LINE and exit_code_of(recovery) == 1
    assert path.read_bytes() == torn
    recovery = recover_log(path, PINNED, allow_empty=True)
    assert recovery.action is Action.REMOVED_TORN_LINE
    assert path.read_bytes() == b""


@pytest.mark.parametrize(
    "content",
    [b"my notes", b"\x8f\x00\xd3 random \xff bytes", b"[1, 2", b'{"sigs":{', b'{"bodx'],
    ids=["notes", "random", "json", "other-record", "typo"],
)
@pytest.mark.parametrize("key", [False, True], ids=["no-key", "key"])
def test_recover_never_changes_a_file_that_is_not_a_log(
    tmp_path: Path, content: bytes, key: bool
) -> None:
    """Issue 29, item 1: "`printf 'my notes' > notes.txt; racing-demon recover notes.txt`
    leaves 0 bytes (also with `--table-key`, and for random bytes). A file whose only line
    is not the start of a record of a log (not even a prefix of `{"body":{`) is refused
    (exit 2, the file unchanged)." Nor is a file of several lines changed."""
    for data in (content, b"line one\n" + content):
        path = tmp_path / "notes.txt"
        path.write_bytes(data)
        keys = ["--table-key", str(write_public_key(tmp_path / "t.pub", TABLE_KEY))] if key else []
        code, output = invoke("recover", str(path), *keys)
        assert code == 2 and "not a log" in output and "nothing changed" in output
        assert path.read_bytes() == data
        with pytest.raises(RecoveryError, match="not a log"):
            recover_log(path, PINNED, allow_empty=True)
        assert path.read_bytes() == data


def test_recover_command_cuts_an_only_line_with_allow_empty(tmp_path: Path) -> None:
    """Issue 29, item 1: "... unless asked for explicitly, and the message says what would
    be lost"."""
    path = write(tmp_path, [], b'{"body":{')
    code, output = invoke("recover", str(path))
    assert code == 1 and "refused, nothing changed" in output
    assert "leave the file empty" in output and "9 bytes" in output
    assert "--allow-empty" in output
    assert path.read_bytes() == b'{"body":{'
    code, output = invoke("recover", str(path), "--json")
    document = json.loads(output)
    assert schema_errors("recover-report", document) == []
    assert (code, document["action"], document["exit_code"]) == (1, "REFUSED_ONLY_LINE", 1)
    code, output = invoke("recover", str(path), "--allow-empty", "--dry-run")
    assert code == 0 and "would cut its only line, 9 bytes" in output
    assert path.read_bytes() == b'{"body":{'
    code, output = invoke("recover", str(path), "--allow-empty")
    assert code == 0 and "the file is empty" in output
    assert path.read_bytes() == b""


def test_recover_command_counts_a_one_byte_only_line_in_the_singular(tmp_path: Path) -> None:
    """Issue 29, item 10: "Plurals: ... One helper, used everywhere." A torn genesis of one
    byte is "1 byte", never "1 bytes"."""
    path = write(tmp_path, [], b"{")
    code, output = invoke("recover", str(path))
    assert code == 1 and "its only line is torn, 1 byte of a first record" in output
    assert "cutting it would leave the file empty" in output and "1 bytes" not in output
    code, output = invoke("recover", str(path), "--allow-empty", "--dry-run")
    assert (code, output) == (
        0,
        f"{path}: would cut its only line, 1 byte of a torn genesis (--allow-empty): "
        "the file would be empty\n",
    )
    assert path.read_bytes() == b"{"


def test_recover_command_on_an_empty_file(tmp_path: Path) -> None:
    """Issue 29, item 5: 'say "the file is empty: nothing to recover"'."""
    path = write(tmp_path, [])
    code, output = invoke("recover", str(path))
    assert (code, output) == (0, f"{path}: the file is empty: nothing to recover\n")


def test_a_damaged_middle_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    lines = list(finished_lines("table")[:30])
    lines[12] = lines[12].replace(b'"t_ms":', b'"t_ms":1', 1)  # a record changed in place
    data = b"".join(lines) + b'{"bo'
    path = write(tmp_path, [data])

    recovery = recover_log(path, PINNED)

    assert recovery.action is Action.REFUSED
    assert exit_code_of(recovery) == 1
    assert recovery.report.finding is not None
    assert recovery.report.finding.line == 13
    assert path.read_bytes() == data


def test_a_damaged_log_without_a_torn_line_is_refused(tmp_path: Path) -> None:
    lines = list(finished_lines("table")[:30])
    del lines[7]
    path = write(tmp_path, lines)
    recovery = recover_log(path, PINNED)
    assert recovery.action is Action.REFUSED
    assert recovery.report.finding is not None
    assert recovery.report.finding.code is VerifyCode.SEQ_MISMATCH


def test_bytes_after_the_final_record_are_not_a_torn_line(tmp_path: Path) -> None:
    data = b"".join(finished_lines("table")) + b'{"body":'
    path = write(tmp_path, [data])
    recovery = recover_log(path, PINNED)
    assert recovery.action is Action.REFUSED
    assert recovery.report.verdict is Verdict.VERIFIED  # the records before it: a whole game
    assert path.read_bytes() == data


def test_records_signed_by_another_table_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, finished_lines("table")[:9], b'{"bo')
    other = Settings(table_key=raw_public_bytes(OTHER_KEY.public_key()))
    recovery = recover_log(path, other)
    assert recovery.action is Action.REFUSED
    assert recovery.report.finding is not None
    assert recovery.report.finding.code is VerifyCode.WRONG_TABLE_KEY


# docs/log-format.md §8: "A last line that parses, is canonical, chains to the record
# before it and (with a key) carries a good table signature is never cut."


@pytest.mark.parametrize(
    "settings",
    [PINNED, pytest.param(Settings(unsafe_unpinned=True), marks=pytest.mark.slow)],
    ids=["key", "no"],
)
def test_a_final_record_that_lost_only_its_newline_gets_it_back(
    tmp_path: Path, settings: Settings
) -> None:
    whole = b"".join(finished_lines("table"))
    path = write(tmp_path, [whole[:-1]])  # as an editor or $(cat ...) leaves it

    assert recover_log(path, settings, dry_run=True).action is Action.RESTORED_NEWLINE
    assert path.read_bytes() == whole[:-1]
    recovery = recover_log(path, settings)

    assert recovery.action is Action.RESTORED_NEWLINE and exit_code_of(recovery) == 0
    assert path.read_bytes() == whole
    assert verify_log(path, PINNED).verdict is Verdict.VERIFIED


def test_a_middle_record_that_lost_only_its_newline_is_kept(tmp_path: Path) -> None:
    lines = finished_lines("peer2peer")[:12]
    path = write(tmp_path, [b"".join(lines)[:-1]])
    recovery = recover_log(path, PINNED)
    assert recovery.action is Action.RESTORED_NEWLINE
    assert path.read_bytes() == b"".join(lines)
    assert recovery.report.finding is not None
    assert recovery.report.finding.code is VerifyCode.UNFINISHED


@pytest.mark.parametrize(
    "cut", [pytest.param(2, marks=pytest.mark.slow), 40, pytest.param(200, marks=pytest.mark.slow)]
)
def test_a_torn_final_record_is_never_cut(tmp_path: Path, cut: int) -> None:
    lines = finished_lines("table")
    data = b"".join(lines)[:-cut]
    path = write(tmp_path, [data])
    recovery = recover_log(path, PINNED)
    assert recovery.action is Action.REFUSED_FINAL and exit_code_of(recovery) == 1
    assert path.read_bytes() == data


@pytest.mark.parametrize("last", [-1, 30], ids=["final", "middle"])
def test_a_complete_last_record_with_a_bad_signature_is_not_cut(tmp_path: Path, last: int) -> None:
    """A whole JSON record is no debris of a crash: a forged or damaged one is evidence."""
    lines = list(finished_lines("table"))[: None if last == -1 else last + 1]
    record = json.loads(lines[-1])
    record["sigs"]["table"] = "00" * 64
    data = b"".join(lines[:-1]) + json.dumps(record, separators=(",", ":")).encode()
    path = write(tmp_path, [data])
    recovery = recover_log(path, PINNED)
    assert recovery.action is Action.REFUSED and exit_code_of(recovery) == 1
    assert recovery.report.finding is not None
    assert recovery.report.finding.code is VerifyCode.BAD_TABLE_SIGNATURE
    assert recovery.report.finding.line == len(lines)
    assert path.read_bytes() == data


def test_a_record_that_lost_its_newline_is_not_cut_past_a_limit(tmp_path: Path) -> None:
    lines = finished_lines("table")[:100]
    data = b"".join(lines)[:-1]
    path = write(tmp_path, [data])
    tight = Settings(table_key=PINNED.table_key, limits=Limits(max_records=99))
    recovery = recover_log(path, tight)
    assert recovery.action is Action.REFUSED
    assert recovery.report.finding is not None
    assert recovery.report.finding.code == "TOO_MANY_RECORDS"
    assert path.read_bytes() == data


def test_a_complete_last_record_that_does_not_replay_is_refused_whole(tmp_path: Path) -> None:
    lines = list(finished_lines("table"))
    data = b"".join(lines)[:-1]
    # Verifying with another secret: the final record reveals one that does not open it.
    wrong = Settings(table_key=PINNED.table_key, seed=bytes(32))
    path = write(tmp_path, [data])
    recovery = recover_log(path, wrong)
    assert recovery.action is Action.REFUSED and exit_code_of(recovery) == 1
    assert recovery.report.step is not None and recovery.report.step > 5
    assert path.read_bytes() == data


@pytest.mark.slow
def test_recover_command_says_it_restored_the_newline(tmp_path: Path) -> None:
    whole = b"".join(finished_lines("table"))
    path = write(tmp_path, [whole[:-1]])
    key = str(write_public_key(tmp_path / "table.pub", TABLE_KEY))
    code, output = invoke("recover", str(path), "--table-key", key, "--dry-run")
    assert code == 0 and "would restore the newline after the last record" in output
    code, output = invoke("recover", str(path), "--table-key", key)
    assert code == 0 and "restored the newline after the last record" in output
    assert path.read_bytes() == whole
    torn = write(tmp_path, [whole[:-30]])
    code, output = invoke("recover", str(torn), "--table-key", key)
    assert code == 1 and "damaged final record" in output
    assert torn.read_bytes() == whole[:-30]


def test_a_tail_longer_than_any_line_is_not_a_torn_record(tmp_path: Path) -> None:
    path = write(tmp_path, finished_lines("table")[:3], b"x" * 200)
    limits = Limits(max_line_bytes=100)
    with pytest.raises(RecoveryError, match="no newline"):
        recover_log(path, Settings(limits=limits))


def test_recover_command(tmp_path: Path) -> None:
    path = write(tmp_path, finished_lines("table")[:20], b'{"body":{')
    key = str(write_public_key(tmp_path / "table.pub", TABLE_KEY))

    code, output = invoke("recover", str(path), "--table-key", key, "--dry-run")
    assert code == 0 and "would remove a torn last line of 9 bytes" in output
    (tmp_path / "secret.txt").write_text(SECRET.hex())
    secret = f"file:{tmp_path / 'secret.txt'}"
    code, output = invoke("recover", str(path), "--table-key", key, "--secret", secret)
    assert code == 0 and "removed a torn last line of 9 bytes; kept 20 complete records" in output
    code, output = invoke("recover", str(path), "--table-key", key)
    assert code == 0 and "nothing to recover" in output
    code, output = invoke("recover", str(path))
    assert code == 0 and "signatures not checked" in output


def test_recover_command_refusals(tmp_path: Path) -> None:
    lines = list(finished_lines("table")[:20])
    lines[3] = lines[3].replace(b'"kind":"', b'"kind": "', 1)
    path = write(tmp_path, lines, b"{")
    code, output = invoke(
        "recover",
        str(path),
        "--table-key",
        str(write_public_key(tmp_path / "table.pub", TABLE_KEY)),
    )
    assert code == 1
    assert "refused, nothing changed" in output and "NOT_CANONICAL" in output
    assert "Traceback" not in output

    assert invoke("recover", str(tmp_path / "missing.jsonl"))[0] == 2
    assert invoke("recover", str(tmp_path))[0] == 2
    code, output = invoke("recover", str(path), "--max-line-bytes", "0")
    assert code == 2 and "positive number" in output


# -- resume -------------------------------------------------------------------------


def cut_after(lines: tuple[bytes, ...], kind: str, before: bool = False) -> int:
    """How many lines to keep: through the first record of ``kind``, or up to it."""
    kinds = [body["kind"] for body in map(_body, lines)]
    index = kinds.index(kind)
    return index if before else index + 1


def _body(line: bytes) -> dict[str, object]:
    body = json.loads(line)["body"]
    assert isinstance(body, dict)
    return body


@pytest.mark.slow
@pytest.mark.parametrize(
    ("profile", "kind", "before"),
    [
        ("table", RecordKind.GENESIS, False),  # before the first deal
        ("table", RecordKind.HAND_START, False),
        ("table", RecordKind.MOVE, False),
        ("table", RecordKind.BOUNCE, False),
        ("table", RecordKind.HAND_END, True),  # the record that ended the hand, not its end
        ("table", RecordKind.HAND_END, False),  # the next hand not dealt yet
        ("table", RecordKind.FINAL, True),  # the final record not written yet
        ("table", RecordKind.STALL, True),  # a stall shift due, not written
        ("table", RecordKind.STALL, False),
        ("table", RecordKind.TIE, False),
        ("peer2peer", RecordKind.CALL, False),  # the hand's end due, not written
        ("nertz", RecordKind.BOUNCE, False),
    ],
)
def test_a_table_resumes_a_cut_log_and_the_whole_match_verifies(
    tmp_path: Path, profile: str, kind: RecordKind, before: bool
) -> None:
    lines = finished_lines(profile)
    keep = cut_after(lines, kind, before)
    path = write(tmp_path, lines[:keep])

    table = Table.resume(path, TABLE_KEY, SECRET)

    written = log_bodies(path)
    assert written[keep - 1]["seq"] == keep - 1  # nothing before the cut was rewritten
    play_on(table, random.Random(keep).choice, player_keys=PLAYER_KEYS[:3])
    assert table.finished
    report = verify_log(path, PINNED)
    assert report.verdict is Verdict.VERIFIED, report.finding


def test_a_resumed_table_writes_what_the_crash_cut_short(tmp_path: Path) -> None:
    lines = finished_lines("table")
    keep = cut_after(lines, RecordKind.STALL, before=True)
    path = write(tmp_path, lines[:keep])
    Table.resume(path, TABLE_KEY, SECRET).close()
    assert path.read_bytes().splitlines(keepends=True)[keep] == lines[keep]  # the same stall


def test_a_resumed_table_continues_each_seats_numbering(tmp_path: Path) -> None:
    lines = finished_lines("table")
    keep = cut_after(lines, RecordKind.BOUNCE)
    path = write(tmp_path, lines[:keep])
    bodies = log_bodies(path)
    table = Table.resume(path, TABLE_KEY, SECRET)
    for seat in range(3):
        sent = [body["n"] for body in bodies if body.get("player") == seat and "n" in body]
        assert table.next_n(seat) == (max(sent) + 1 if sent else 0)
    seat = 0
    n = table.next_n(seat)
    seen = table.head
    signature = sign_submission(
        PLAYER_KEYS[seat], table.game, table.state.hand, seat, n - 1, "0 turn", seen
    )
    with pytest.raises(SubmissionError, match="next submission"):
        table.submit(seat, "0 turn", table.t_ms, n - 1, signature, seen)
    table.close()


def test_resume_refuses_a_finished_torn_or_foreign_log(tmp_path: Path) -> None:
    lines = finished_lines("table")
    path = write(tmp_path, lines)
    with pytest.raises(ResumeError, match="the match is over"):
        Table.resume(path, TABLE_KEY, SECRET)
    path = write(tmp_path, lines[:30], b'{"bo')
    with pytest.raises(ResumeError, match="TORN_LINE"):
        Table.resume(path, TABLE_KEY, SECRET)
    path = write(tmp_path, lines[:30])
    with pytest.raises(ResumeError, match="WRONG_TABLE_KEY"):
        Table.resume(path, OTHER_KEY, SECRET)
    with pytest.raises(ResumeError, match=r"SECRET_MISMATCH|SEED_MISMATCH"):
        Table.resume(path, TABLE_KEY, bytes(32))
    assert path.read_bytes() == b"".join(lines[:30])  # refusing writes nothing


def test_a_writer_that_failed_refuses_to_write_again(tmp_path: Path) -> None:
    path = write(tmp_path, finished_lines("table")[:5])
    table = Table.resume(path, TABLE_KEY, SECRET)
    failing = _FailingFile(table)
    try:
        for attempt, problem in enumerate(("No space", "failed earlier")):
            n, seen = table.next_n(0), table.head
            move = str(legal_moves(table.state, 0)[0])
            signature = sign_submission(
                PLAYER_KEYS[0], table.game, table.state.hand, 0, n, move, seen
            )
            with pytest.raises(OSError, match=problem):
                table.submit(0, move, table.t_ms + attempt, n, signature, seen)
    finally:
        table.close()
    assert failing.writes == 1


class _FailingFile:
    """Replaces a table's file by one whose disk is full after a partial write."""

    def __init__(self, table: Table) -> None:
        self.writes = 0
        writer = table._writer  # the file under the table
        self._file = writer._file
        writer._file = self  # type: ignore[assignment]

    def write(self, data: bytes) -> int:
        self.writes += 1
        self._file.write(data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    def flush(self) -> None:
        self._file.flush()

    def fileno(self) -> int:
        return self._file.fileno()

    def close(self) -> None:
        self._file.close()


# -- SIGKILL trials -----------------------------------------------------------------


@pytest.mark.slow
def test_sigkill_trials_lose_no_acknowledged_record(tmp_path: Path) -> None:
    """A CI-sized sample of scripts/crash_trials.py (run it for 100 trials or more)."""
    trials = load_script("crash_trials")
    results = [trials.run_trial(tmp_path, trials.Game(n, "ci")) for n in range(3)]
    for result in results:
        assert result.failures == ()
        assert result.on_disk >= result.acknowledged > 0
    assert any(result.outcome == "killed" for result in results)


# docs/log-format.md §8: "A torn line after a final record ... is refused and the file is
# left untouched (exit 1)", even though the records before the debris verify.
ABANDONED = (
    Path(__file__).resolve().parents[1] / "sample_games" / "valid" / "peer2peer-2p-abandoned.jsonl"
)
SAMPLE_PUB = Path(__file__).resolve().parents[1] / "sample_games" / "table.pub"


def torn_after_final(tmp_path: Path) -> Path:
    path = tmp_path / "game.jsonl"
    path.write_bytes(ABANDONED.read_bytes() + b'{"body":{"v":1,"ga')  # debris after the final
    return path


def test_a_torn_line_after_the_final_record_is_refused_with_exit_1(tmp_path: Path) -> None:
    path = torn_after_final(tmp_path)
    settings = Settings(table_key=raw_public_bytes(load_public_key(SAMPLE_PUB)))

    recovery = recover_log(path, settings, dry_run=True)

    assert recovery.action is Action.REFUSED
    assert recovery.report.verdict is Verdict.VERIFIED  # the prefix before the debris
    assert exit_code_of(recovery) == 1


def test_recover_command_exits_1_on_a_torn_line_after_the_final_record(tmp_path: Path) -> None:
    path = torn_after_final(tmp_path)
    before = path.read_bytes()

    code, output = invoke("recover", str(path), "--table-key", str(SAMPLE_PUB))

    assert "refused, nothing changed" in output
    # The records before the debris verify: the refusal must not say they do not.
    assert "the log ends with its final record (line " in output
    assert "is no torn record" in output and "does not verify" not in output
    assert path.read_bytes() == before
    assert code == 1, output
