"""racing-demon replay: the table after any record, and whose move came next."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from racing_demon.cli import main
from racing_demon.game.flow import RecordKind, Submission
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.records import Record
from racing_demon.replay import ReplayError, find_secret, replay
from racing_demon.report.text import next_text, table_text

from conftest import invoke, log_bodies

GOLDEN = Path(__file__).resolve().parent / "golden" / "logs"
NERTZ = GOLDEN / "nertz-4p-signed.jsonl"
ROOT = Path(__file__).resolve().parents[1]


def test_replay_at_a_record_shows_every_seat_and_the_next_move() -> None:
    code, out = invoke("replay", str(NERTZ), "--at", "200")
    assert code == 0
    lines = out.splitlines()
    record = log_bodies(NERTZ)[200]
    following = log_bodies(NERTZ)[201]
    assert lines[0].startswith(f"after record 200 at {record['t_ms']} ms, hand 1 (playing)")
    assert str(record["move"]) in lines[0]
    assert [line.split(":")[0] for line in lines if line.startswith("seat ")] == [
        "seat 0 Ada",
        "seat 1 Bert",
        "seat 2 Cleo",
        "seat 3 Dev",
    ]
    assert lines[-1] == (
        f"next: record 201 ({following['kind']}, seat {following['player']} "
        f"{['Ada', 'Bert', 'Cleo', 'Dev'][following['player']]}): {following['move']}"  # type: ignore[index]
    )


def test_replay_shows_the_same_table_the_engine_reached() -> None:
    secret = find_secret(NERTZ)
    assert secret is not None
    for snapshot in replay(NERTZ, secret):
        if snapshot.seq == 300:
            state = snapshot.state
            break
    assert state is not None
    code, out = invoke("replay", str(NERTZ), "--at", "300")
    assert code == 0
    for number, seat in enumerate(state.seats):
        left = f"({len(seat.demon)} left)" if seat.demon else "empty"
        line = next(text for text in out.splitlines() if text.startswith(f"seat {number} "))
        assert left in line
        assert f"stock {len(seat.stock)}" in line
    assert out.count("\n  f") == len(state.foundations)


def test_replay_defaults_to_the_last_record() -> None:
    code, out = invoke("replay", str(NERTZ))
    assert code == 0
    last = len(log_bodies(NERTZ)) - 1
    assert out.startswith(f"after record {last} ")
    assert out.rstrip().endswith("next: nothing (the final record ends the match)")


def test_an_unfinished_log_needs_the_secret(tmp_path: Path) -> None:
    unfinished = tmp_path / "unfinished.jsonl"
    unfinished.write_bytes(b"".join(NERTZ.read_bytes().splitlines(keepends=True)[:150]))
    code, out = invoke("replay", str(unfinished))
    assert code == 2
    assert "--secret SOURCE" in out
    secret = find_secret(NERTZ)
    assert secret is not None
    result = CliRunner().invoke(
        main, ["replay", str(unfinished), "--secret", "env:SECRET"], env={"SECRET": secret.hex()}
    )
    code, out = result.exit_code, result.stdout
    assert code == 0
    assert out.startswith("after record 149 ")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        # Issue 29, item 7: "`--at` past the end names the last record".
        (["--at", "99999"], 2, "the log has no record 99999: its last is record 385"),
        (["--at", "0", "--json"], 2, "--at 0 shows the genesis as text"),
        (["--at", "-1"], 2, "--at"),
        (["--secret", "env:ZEROS"], 2, "--secret: does not open the commitment of "),
    ],
)
def test_replay_refusals(args: list[str], code: int, message: str) -> None:
    result = CliRunner().invoke(main, ["replay", str(NERTZ), *args], env={"ZEROS": "00" * 32})
    assert result.exit_code == code
    assert message in result.output
    assert "Traceback" not in result.output


def test_a_record_the_engine_cannot_apply_stops_the_replay(tmp_path: Path) -> None:
    lines = NERTZ.read_bytes().splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if b'"kind":"move"' in line and b"turn" in line)
    tampered = tmp_path / "tampered.jsonl"
    text = lines[index].decode()
    body = json.loads(text)["body"]
    lines[index] = text.replace(body["move"], body["move"].rsplit(" ", 1)[0] + " KS").encode()
    tampered.write_bytes(b"".join(lines))
    secret = find_secret(NERTZ)
    assert secret is not None
    with pytest.raises(ReplayError, match=f"record {index}: "):
        for _ in replay(tampered, secret):
            pass


def test_replay_help_and_missing_file() -> None:
    code, out = invoke("replay", "--help")
    assert code == 0 and "Examples:" in out
    code, out = invoke("replay", "no-such.jsonl")
    assert code == 2 and out == "cannot read no-such.jsonl: No such file or directory\n"


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{}\n",
        b'{"a":1}\n',
        b'{"body":"x","sigs":{}}\n',
        b'{"body":[],"sigs":{}}\n',
        b'{"body":{"kind":"final"},"sigs":{}}\n',
        b'{"body":{"kind":"final","secret":5,"seq":0},"sigs":{}}\n',
        b'{"body":{"kind":"genesis","seq":0},"sigs":{}}\n',
        b"\x80\x81\n",
        NERTZ.read_bytes()[:300],
    ],
)
def test_hostile_files_never_make_replay_crash(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(content)
    secret = ["--secret", "env:SECRET"]
    for extra in ([], secret, ["--at", "0", *secret]):
        result = CliRunner().invoke(main, ["replay", str(path), *extra], env={"SECRET": "11" * 32})
        assert result.exit_code in (1, 2), result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            result.exception
        )


def test_a_bounce_by_a_seat_the_table_lacks_stops_the_replay(tmp_path: Path) -> None:
    lines = NERTZ.read_bytes().splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if b'"kind":"move"' in line)
    value = json.loads(lines[index])
    value["body"].update(kind="bounce", player=7, reason="FOUNDATION_TAKEN")
    lines[index] = canonical_bytes(value) + b"\n"
    path = tmp_path / "badseat.jsonl"
    path.write_bytes(b"".join(lines))
    code, out = invoke("replay", str(path), "--at", str(index))
    assert code == 1
    assert f"record {index}: PLAYER_MISMATCH: " in out and "not the record's player's" in out


def test_names_from_the_log_cannot_drive_the_terminal(tmp_path: Path) -> None:
    lines = NERTZ.read_bytes().splitlines(keepends=True)
    genesis = json.loads(lines[0])
    genesis["body"]["players"][0]["name"] = "\x1b[2JAda\nseat 9 forged"
    lines[0] = canonical_bytes(genesis) + b"\n"
    path = tmp_path / "names.jsonl"
    path.write_bytes(b"".join(lines))
    code, out = invoke("replay", str(path), "--at", "10")
    assert code == 0
    assert "\x1b" not in out
    assert "seat 0 \\x1b[2JAda\\nseat 9 forged:" in out


def test_reasons_and_kinds_from_the_log_cannot_drive_the_terminal() -> None:
    # The schema now refuses such a reason or kind, so the reporter is tested directly: it
    # escapes every string a log supplies, whatever the schema lets through.
    secret = find_secret(NERTZ)
    assert secret is not None
    snapshot = next(s for s in replay(NERTZ, secret) if s.state is not None)
    assert snapshot.state is not None
    bounce = Submission(
        kind=RecordKind.BOUNCE, hand=1, seat=0, n=0, move="0 turn", reason="A_B\n\x1b[2Jseat 9"
    )
    record = Record(game="00" * 16, seq=3, t_ms=5, prev="00" * 32, payload=bounce)
    # The first line only: the cards under it are red by escape sequences of our own.
    first_line = table_text(snapshot.state, snapshot.names, record).splitlines()[0]
    assert first_line.endswith("0 turn (bounced: A_B\\n\\x1b[2Jseat 9)")
    forged = Submission(kind=RecordKind.MOVE, hand=1, seat=0, n=0, move="0 turn\nnext: x")
    assert next_text(
        Record(game="00" * 16, seq=4, t_ms=5, prev="00" * 32, payload=forged), ("Ada\x1b",), record
    ) == ("next: record 4 (move, seat 0 Ada\\x1b): 0 turn\\nnext: x")


def test_a_log_path_cannot_drive_the_terminal(tmp_path: Path) -> None:
    path = tmp_path / "bad\nname\x1b[2J.jsonl"
    path.write_bytes(b"not a log\n")
    code, out = invoke("replay", str(path))
    assert code == 1
    assert "\x1b" not in out
    assert f"cannot replay {tmp_path}/bad\\nname\\x1b[2J.jsonl: " in out


INFLATED = ROOT / "sample_games" / "disputed" / "inflated-score.jsonl"  # record 80 inflated


def test_replay_shows_the_table_just_before_a_refused_record_and_names_it() -> None:
    code, output = invoke("replay", str(INFLATED), "--at", "79")
    assert code == 0, output
    assert output.startswith("after record 79 ")
    assert output.rstrip().endswith(
        "next: record 80: SCORE_MISMATCH: hand 1 does not score as recorded (the replay stops here)"
    )


def test_replay_of_a_log_that_fails_shows_the_table_before_the_refused_record() -> None:
    """Issue 29, item 7: "replaying a log that fails at record N also shows the table at
    N-1, which is what a disputing player wants"."""
    code, output = invoke("replay", str(INFLATED))
    assert code == 1
    assert output.startswith("after record 79 ")
    assert output.rstrip().endswith(
        "next: record 80: SCORE_MISMATCH: hand 1 does not score as recorded (the replay stops here)"
    )


def test_a_line_that_cannot_be_read_stops_the_replay_after_the_table_before_it(
    tmp_path: Path,
) -> None:
    """Issue 29, item 7, for a line that is not even a record: the final record past it
    still reveals the secret that deals the table up to it."""
    lines = NERTZ.read_bytes().splitlines(keepends=True)
    lines[120] = lines[120].replace(b'"kind":"', b'"kind": "', 1)
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(b"".join(lines))
    code, output = invoke("replay", str(path))
    assert code == 1
    assert output.startswith("after record 119 ")
    assert output.rstrip().endswith("(the replay stops here)")
    assert "next: record 120: NOT_CANONICAL: " in output


def test_replay_of_an_empty_file_says_it_is_empty(tmp_path: Path) -> None:
    """Issue 29, item 7: "`replay` of an empty file must not ask for the dealer secret"."""
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    result = CliRunner().invoke(main, ["replay", str(path)])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == f"cannot replay {path}: the file is empty: it holds no record\n"


def test_replay_at_0_shows_the_genesis_without_a_secret(tmp_path: Path) -> None:
    """Issue 29, item 7: "`replay --at 0` is refused (show the genesis: the seats, their
    keys, the rules)"; an unfinished log needs no secret for it."""
    unfinished = tmp_path / "unfinished.jsonl"
    unfinished.write_bytes(b"".join(NERTZ.read_bytes().splitlines(keepends=True)[:20]))
    genesis = log_bodies(NERTZ)[0]
    for path in (NERTZ, unfinished):
        code, output = invoke("replay", str(path), "--at", "0")
        assert code == 0, output
        lines = output.splitlines()
        assert lines[0] == f"record 0, the genesis, at 0 ms: game {genesis['game']}"
        assert lines[1].startswith(f"rules {genesis['rules']['name']} version ")
        for seat in genesis["players"]:
            assert f"seat {seat['seat']} {seat['name']}: key {seat['key']}" in lines
        assert f"commitment {genesis['commitment']}" in lines


def test_replay_of_a_refused_record_says_why_and_fails() -> None:
    code, output = invoke("replay", str(INFLATED), "--at", "80")
    assert code == 1
    assert "record 80: SCORE_MISMATCH" in output


def test_a_replay_error_names_the_code_the_engine_rule_and_the_move() -> None:
    path = ROOT / "sample_games" / "disputed" / "changed-byte.jsonl"
    secret = find_secret(path)
    assert secret is not None
    with pytest.raises(ReplayError) as caught:
        for _ in replay(path, secret):
            pass
    assert str(caught.value).startswith("record 41: ILLEGAL_MOVE: CARD_MISMATCH: 0 turn 2D KS JD: ")
    assert caught.value.record is not None and caught.value.record.seq == 41


def test_a_replay_error_names_its_record_once(tmp_path: Path) -> None:
    lines = (ROOT / "sample_games" / "valid" / "peer2peer-2p-abandoned.jsonl").read_bytes()
    path = tmp_path / "no-genesis.jsonl"
    path.write_bytes(lines.split(b"\n", 1)[1])
    with pytest.raises(ReplayError) as caught:
        for _ in replay(path, bytes(32)):
            pass
    assert str(caught.value).count("record 1:") == 1, str(caught.value)


def test_a_log_refused_at_its_first_hand_shows_the_genesis_before_it() -> None:
    """Issue 29, item 7: the table at N-1 of a log refused at record 1 is the genesis; the
    JSON, which describes a dealt table, gives the refusal alone."""
    path = ROOT / "sample_games" / "disputed" / "wrong-secret.jsonl"
    code, output = invoke("replay", str(path))
    assert code == 1
    assert output.startswith("record 0, the genesis, at 0 ms: game ")
    assert output.rstrip().endswith("(the replay stops here)")
    assert "next: record 1: PACK_MISMATCH: " in output
    result = CliRunner().invoke(main, ["replay", str(path), "--json"])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith(f"cannot replay {path}: record 1: PACK_MISMATCH: ")
