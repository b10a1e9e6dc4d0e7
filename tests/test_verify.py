"""The verifier: honest logs verify; every kind of tampering is caught by its code.

Logs are played by random players at a real ``Table``. Tampered logs that must get past
the signatures are re-signed and re-chained with the table's own key (``seal``), as a
dishonest table would: the replay, not the signatures, has to catch them.
"""

from __future__ import annotations

import copy
import io
import json
import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from hypothesis import assume, given
from hypothesis import strategies as st

from racing_demon.cli import main
from racing_demon.game.flow import SUBMISSION_KINDS, FlowCode, RecordKind, Seen
from racing_demon.log.keys import key_id, raw_public_bytes
from racing_demon.log.reader import Limits, ReadCode
from racing_demon.log.signing import sign
from racing_demon.outcomes import exit_code_of
from racing_demon.report.text import RESET, Colour
from racing_demon.report.verify import finding_text, report_text, verification_document
from racing_demon.schema import schema_errors
from racing_demon.table import sign_submission
from racing_demon.verify import (
    Finding,
    Report,
    Settings,
    Step,
    Verdict,
    VerifyCode,
    verify_log,
    verify_stream,
)

from tampering import (
    LOGS,
    OTHER_KEY,
    PINNED,
    PLAYER_KEYS,
    SECRET,
    TABLE_KEY,
    TABLE_PUB,
    Value,
    assert_fails,
    first,
    lines_of,
    seal,
    stream_of,
    values_of,
    verify_lines,
    write,
)


def run(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


# -- honest logs ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "keyed"),
    [
        # long matches, so slow: sample_games/valid/ has logs of both that verify by default
        pytest.param("table", False, marks=pytest.mark.slow),
        pytest.param("nertz", False, marks=pytest.mark.slow),
        ("peer2peer", True),
        ("blocked", False),
    ],
)
def test_an_honest_log_of_each_profile_verifies(
    tmp_path: Path, pub: Path, name: str, keyed: bool
) -> None:
    lines = lines_of(name, keyed)
    code, out = run("verify", write(tmp_path, lines), "--table-key", pub)
    assert code == 0, out
    assert out.startswith("VERIFIED  ")
    report = verify_lines(tmp_path, lines)
    final = json.loads(lines[-1])["body"]
    assert report.verdict is Verdict.VERIFIED and report.finding is None
    assert (report.records, report.not_replayed) == (len(lines), 0)
    profile, _, variant = LOGS[name][0].partition("/")
    assert report.profile == (f"{profile}-custom" if variant else profile)
    assert report.hands == tuple(map(tuple, final["hands"]))
    assert (list(report.totals), list(report.winners)) == (final["totals"], final["winners"])


def test_a_bounce_with_the_engines_reason_verifies(tmp_path: Path) -> None:
    values = values_of("short")
    # peer2peer counts down 3 s before play: a submission at the hand's start is too early.
    bounce = copy.deepcopy(values[first(values, "move")])
    bounce["body"].update(kind="bounce", move="0 recycle", player=0, reason="TOO_EARLY")
    bounce["body"]["t_ms"] = values[1]["body"]["t_ms"]
    values.insert(2, bounce)
    values[-1]["body"]["records"] = len(values) - 1
    assert verify_lines(tmp_path, seal(values, 2, renumber=True)).verdict is Verdict.VERIFIED

    values[2]["body"]["reason"] = "WASTE_EMPTY"
    finding = assert_fails(
        verify_lines(tmp_path, seal(values, 2)), Step.REPLAY, FlowCode.BOUNCE_REASON_MISMATCH, 3
    )
    assert (finding.expected, finding.found) == ("TOO_EARLY", "WASTE_EMPTY")


# -- step 1-3: bytes ------------------------------------------------------------------


# genesis ... final (-2 is slow: like -1, it verifies nearly the whole log four times)
@pytest.mark.parametrize("index", [0, 1, 2, 3, 50, pytest.param(-2, marks=pytest.mark.slow), -1])
@pytest.mark.parametrize("where", [0.0, 0.1, 0.5, 0.9, 0.99, 1.0])  # 1.0: the newline
def test_one_byte_changed_anywhere_does_not_verify(index: int, where: float) -> None:
    lines = lines_of("short", keyed=True)
    data = stream_of(lines).getvalue()
    index %= len(lines)
    position = sum(len(line) + 1 for line in lines[:index]) + round(where * len(lines[index]))
    for byte in (data[position] ^ 0x01, data[position] ^ 0x80, ord("0"), ord("\n")):
        changed = bytearray(data)
        changed[position] = byte
        if changed == data:
            continue
        report = verify_stream(io.BytesIO(bytes(changed)), PINNED)
        assert report.verdict in (Verdict.DOES_NOT_VERIFY, Verdict.UNFINISHED), report
        assert exit_code_of(report) == 1
        assert report.step is not None and report.step <= Step.SIGNATURES


@given(st.binary(max_size=300))
def test_garbage_never_raises(data: bytes) -> None:
    report = verify_stream(io.BytesIO(data), PINNED)
    assert report.verdict in (Verdict.DOES_NOT_VERIFY, Verdict.UNFINISHED)
    assert exit_code_of(report) == 1


def test_a_non_canonical_line_is_refused(tmp_path: Path) -> None:
    lines = lines_of("short")
    lines[3] = json.dumps(json.loads(lines[3])).encode()  # ", " and ": " separators
    finding = assert_fails(verify_lines(tmp_path, lines), Step.CANONICAL, ReadCode.NOT_CANONICAL, 4)
    assert "canonical" in finding.message


def test_a_schema_violation_names_its_path(tmp_path: Path) -> None:
    values = values_of("short")
    values[2]["body"]["n"] = -1
    finding = assert_fails(
        verify_lines(tmp_path, seal(values, 2)), Step.SCHEMA, VerifyCode.SCHEMA, 3
    )
    assert "$.body" in finding.message


# -- step 4: the chain ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "line"),
    [
        (lambda lines: lines.pop(5), 6),  # removed
        (lambda lines: lines.insert(5, lines[5]), 7),  # duplicated
        (lambda lines: lines.insert(5, lines.pop(6)), 6),  # swapped
    ],
    ids=["removed", "duplicated", "swapped"],
)
def test_a_record_removed_duplicated_or_swapped(
    tmp_path: Path, edit: Callable[[list[bytes]], object], line: int
) -> None:
    lines = lines_of("short")
    edit(lines)
    finding = assert_fails(verify_lines(tmp_path, lines), Step.CHAIN, VerifyCode.SEQ_MISMATCH, line)
    assert finding.expected == str(line - 1)


def test_a_line_changed_and_re_signed_breaks_the_next_prev(tmp_path: Path) -> None:
    values = values_of("short")
    values[4]["body"]["t_ms"] += 1
    lines = seal(values, 4)[:5] + lines_of("short")[5:]
    assert_fails(verify_lines(tmp_path, lines), Step.CHAIN, VerifyCode.PREV_MISMATCH, 6)


def test_a_record_spliced_from_another_game(tmp_path: Path) -> None:
    ours, theirs = lines_of("short"), lines_of("peer2peer")
    spliced = [*ours[:5], theirs[5], *ours[6:]]
    assert_fails(verify_lines(tmp_path, spliced), Step.CHAIN, VerifyCode.PREV_MISMATCH, 6)
    values = [json.loads(line) for line in spliced]
    assert_fails(
        verify_lines(tmp_path, seal(values, 5)), Step.CHAIN, VerifyCode.GAME_ID_MISMATCH, 6
    )


def test_truncated_logs_are_unfinished(tmp_path: Path, pub: Path) -> None:
    lines = lines_of("short")
    report = verify_lines(tmp_path, lines[:40])
    assert (report.verdict, exit_code_of(report), report.not_replayed) == (
        Verdict.UNFINISHED,
        1,
        40,
    )
    assert report.finding == Finding(VerifyCode.UNFINISHED, "no final record after line 40")

    torn = write(tmp_path, lines[:40])
    torn.write_bytes(torn.read_bytes() + lines[40][:25])
    report = verify_log(torn, PINNED)
    assert report.verdict is Verdict.UNFINISHED and report.step is Step.FRAMING
    assert report.finding is not None and report.finding.code is ReadCode.TORN_LINE

    # With the secret, the prefix replays: all but the torn line.
    seeded = verify_log(torn, Settings(table_key=TABLE_PUB, seed=SECRET))
    assert (seeded.verdict, seeded.records, seeded.not_replayed) == (Verdict.UNFINISHED, 41, 1)
    code, out = run("verify", torn, "--table-key", pub)
    assert code == 1 and out.startswith("UNFINISHED  ")

    empty = verify_stream(io.BytesIO(b""), PINNED)
    assert (empty.verdict, empty.records) == (Verdict.UNFINISHED, 0)


def test_a_torn_line_after_the_final_record_does_not_verify(tmp_path: Path) -> None:
    path = write(tmp_path, lines_of("short"))
    path.write_bytes(path.read_bytes() + b'{"body"')
    assert_fails(verify_log(path, PINNED), Step.FRAMING, ReadCode.TORN_LINE, 154)


def _earlier(values: list[Value]) -> int:
    values[100]["body"]["t_ms"] = values[99]["body"]["t_ms"] - 1
    return 100


def _after_final(values: list[Value]) -> int:
    values.append(copy.deepcopy(values[-1]))
    return len(values) - 1


def _miscounted(values: list[Value]) -> int:
    values[-1]["body"]["records"] -= 1
    return len(values) - 1


@pytest.mark.parametrize(
    ("edit", "code"),
    [
        (lambda values: values.pop(0) and 0, VerifyCode.GENESIS_MISSING),
        # As written by a table (seq 0, no prev), which sealing would change.
        (
            lambda values: values.insert(1, copy.deepcopy(values[0])) or 1,
            VerifyCode.GENESIS_REPEATED,
        ),
        (_earlier, VerifyCode.TIME_BACKWARDS),
        (_after_final, VerifyCode.AFTER_FINAL),
        (_miscounted, VerifyCode.RECORD_COUNT),
    ],
    ids=["genesis-missing", "genesis-repeated", "time-backwards", "after-final", "record-count"],
)
def test_chain_codes_survive_re_signing(
    tmp_path: Path, edit: Callable[[list[Value]], int], code: VerifyCode
) -> None:
    values = values_of("short")
    index = edit(values)
    lines = seal(values, index + 1 if code is VerifyCode.GENESIS_REPEATED else 0)
    assert_fails(verify_lines(tmp_path, lines), Step.CHAIN, code, index + 1)


def test_game_id(tmp_path: Path) -> None:
    lines = lines_of("short")
    game = json.loads(lines[0])["body"]["game"]
    assert (
        exit_code_of(verify_lines(tmp_path, lines, Settings(table_key=TABLE_PUB, game_id=game)))
        == 0
    )
    other = Settings(table_key=TABLE_PUB, game_id="0" * 32)
    finding = assert_fails(
        verify_lines(tmp_path, lines, other), Step.CHAIN, VerifyCode.WRONG_GAME, 1
    )
    assert (finding.expected, finding.found) == ("0" * 32, game)


class _Rewritten(io.BytesIO):
    """A file rewritten in place whenever a reader goes back to its start after reading.

    The verifier reads ahead at the last line, then streams the file once; only when the
    final record it meets is not the one it read ahead does it go back for a second pass.
    """

    def __init__(self, *versions: bytes) -> None:
        super().__init__(versions[0])
        self.versions = list(versions[1:])
        self.has_read = False

    def read(self, size: int | None = -1, /) -> bytes:
        self.has_read = True
        return super().read(size)

    def readline(self, size: int | None = -1, /) -> bytes:
        self.has_read = True
        return super().readline(size)

    def seek(self, offset: int, whence: int = 0, /) -> int:
        if (offset, whence) == (0, io.SEEK_SET) and self.has_read and self.versions:
            super().seek(0)
            self.truncate()
            self.write(self.versions.pop(0))
            self.has_read = False
        return super().seek(offset, whence)


def _being_written(lines: list[bytes]) -> bytes:
    """The log as a table that has not yet written its final record leaves it."""
    return stream_of(lines[:-1]).getvalue()


@pytest.mark.parametrize(
    ("key", "value"),
    # what pass one would have refused; what replays; what the replay refuses
    [("t_ms", "late"), ("n", 1000), ("move", "0 dance")],
    ids=["breaks-the-replay", "replays", "fails-the-replay"],
)
def test_a_file_changed_between_the_passes(key: str, value: object) -> None:
    # Still being written when read ahead, so pass one cannot replay and a second pass must.
    lines = lines_of("short")
    values = values_of("short")
    values[first(values, "move")]["body"][key] = value
    changed = _Rewritten(
        _being_written(lines), stream_of(lines).getvalue(), stream_of(seal(values)).getvalue()
    )
    assert_fails(verify_stream(changed, PINNED), Step.CHAIN, VerifyCode.FILE_CHANGED, None)


def test_a_line_made_non_canonical_between_the_passes() -> None:
    """Pass two does not re-encode lines: the digest of the bytes catches the change."""
    lines = lines_of("short")
    index = first(values_of("short"), "move")
    after = list(lines)
    after[index] = after[index].replace(b'"kind":"move"', b'"kind": "move"')
    changed = _Rewritten(
        _being_written(lines), stream_of(lines).getvalue(), stream_of(after).getvalue()
    )
    assert_fails(verify_stream(changed, PINNED), Step.CHAIN, VerifyCode.FILE_CHANGED, None)


def test_a_log_finished_while_read_ahead_verifies_in_a_second_pass() -> None:
    lines = lines_of("short")
    finished = _Rewritten(_being_written(lines), stream_of(lines).getvalue())
    report = verify_stream(finished, PINNED)
    assert report.verdict is Verdict.VERIFIED
    assert report.not_replayed == 0


def test_a_verdict_is_on_the_bytes_of_its_one_pass() -> None:
    # Changed after the read-ahead: the final record is the same, so one pass decides, and
    # what it decides is about the bytes it read and checked.
    values = values_of("short")
    index = first(values, "move")
    values[index]["body"]["n"] = 1000
    changed = _Rewritten(
        stream_of(lines_of("short")).getvalue(), stream_of(seal(values)).getvalue()
    )
    assert_fails(
        verify_stream(changed, PINNED), Step.SIGNATURES, VerifyCode.SUBMISSION_GAP, index + 1
    )


def _flip_table_signature(line: bytes) -> bytes:
    at = line.index(b'"table":"') + len(b'"table":"')
    flipped = b"1" if line[at : at + 1] == b"0" else b"0"
    return line[:at] + flipped + line[at + 1 :]


def test_a_replay_failure_waits_for_the_earlier_steps(tmp_path: Path) -> None:
    # One pass replays as it goes, but a later line's signature failure (step 5) comes first,
    # and nothing counts as replayed.
    values = values_of("short")
    illegal = first(values, "move")
    values[illegal]["body"]["move"] = f"{values[illegal]['body']['player']} demon>f+ KS"
    lines = seal(values)
    last = len(lines) - 2
    lines[last] = _flip_table_signature(lines[last])
    report = verify_lines(tmp_path, lines)
    assert_fails(report, Step.SIGNATURES, VerifyCode.BAD_TABLE_SIGNATURE, last + 1)
    assert report.not_replayed == report.records
    # Without it, the illegal move is the answer.
    assert_fails(
        verify_lines(tmp_path, seal(values)), Step.REPLAY, FlowCode.ILLEGAL_MOVE, illegal + 1
    )


# -- step 5: signatures ---------------------------------------------------------------


def test_the_wrong_table_key_pinned(tmp_path: Path) -> None:
    report = verify_lines(
        tmp_path, lines_of("short"), Settings(table_key=raw_public_bytes(OTHER_KEY))
    )
    finding = assert_fails(report, Step.SIGNATURES, VerifyCode.WRONG_TABLE_KEY, 1)
    assert finding.found == key_id(TABLE_PUB)
    assert report.not_replayed == report.records == len(lines_of("short"))


@pytest.mark.parametrize(
    ("tail", "more"), [(b"", 0), (b"x\n", 1), (b"x\n\ny", 3), (b"z" * 70_000, 1)]
)
def test_every_line_is_counted_after_the_first_failure(tail: bytes, more: int) -> None:
    lines = lines_of("short")
    data = stream_of(lines).getvalue() + tail
    report = verify_stream(io.BytesIO(data), Settings(table_key=raw_public_bytes(OTHER_KEY)))
    assert report.records == len(lines) + more
    assert verify_stream(io.BytesIO(b"\xff\n" + data), PINNED).records == len(lines) + more + 1
    # Beyond a limit the rest is not even counted.
    small = Settings(table_key=TABLE_PUB, limits=Limits(max_file_bytes=len(data) - 1))
    report = verify_stream(io.BytesIO(data), small)
    assert (report.records, report.not_replayed) == (None, None)
    assert "no record replayed" in report_text(report)


def test_a_record_signed_by_another_key(tmp_path: Path) -> None:
    values = values_of("short")
    lines = seal(values, forged=frozenset({10}))
    finding = assert_fails(
        verify_lines(tmp_path, lines), Step.SIGNATURES, VerifyCode.BAD_TABLE_SIGNATURE, 11
    )
    assert finding.rule == "BAD_SIGNATURE"
    # --fast checks the table's signature on the genesis and the final record only.
    fast = verify_lines(tmp_path, lines, Settings(table_key=TABLE_PUB, fast=True))
    assert fast.verdict is Verdict.VERIFIED and fast.fast
    assert "(--fast: the other records' table signatures not checked)" in report_text(fast)
    for forged in (0, len(values) - 1):  # but these two it checks
        lines = seal(values, forged=frozenset({forged}))
        assert_fails(
            verify_lines(tmp_path, lines, Settings(table_key=TABLE_PUB, fast=True)),
            Step.SIGNATURES,
            VerifyCode.BAD_TABLE_SIGNATURE,
            forged + 1,
        )


def _with_wrong_player_signature(values: list[Value], index: int) -> None:
    body = values[index]["body"]
    other = PLAYER_KEYS[1 - body["player"]]
    seen = Seen(seq=body["seen"]["seq"], hash=body["seen"]["hash"])
    values[index]["sigs"]["player"] = sign_submission(
        other, body["game"], body["hand"], body["player"], body["n"], body["move"], seen
    )


def _flip_next_table_signature(lines: list[bytes], at: int) -> None:
    lines[at + 1] = _flip_table_signature(lines[at + 1])


# What follows a bad signature, further on in the log, must not hide it: the report names
# the first failing record.
_LATER_FAILURES: dict[str, Callable[[list[bytes], int], None]] = {
    "nothing": lambda lines, at: None,
    "a later bad table signature": _flip_next_table_signature,
    "a later seq mismatch": lambda lines, at: lines.__delitem__(at + 2),
    "a later line that is not JSON": lambda lines, at: lines.__setitem__(at + 3, b"{"),
    "a later torn end": lambda lines, at: lines.__setitem__(slice(at + 3, None), [b'{"body"']),
}


@pytest.mark.parametrize("later", list(_LATER_FAILURES))
@pytest.mark.parametrize(
    "at",  # the genesis, early, mid-log, late: the genesis by default, the others with -m slow
    [0, *(pytest.param(at, marks=pytest.mark.slow) for at in (5, 300, -4))],
)
def test_a_signature_failure_is_found_in_its_place(tmp_path: Path, later: str, at: int) -> None:
    values = values_of("table", keyed=True)
    at %= len(values)
    lines = seal(values, forged=frozenset({at}))
    _LATER_FAILURES[later](lines, at)
    report = verify_lines(tmp_path, lines)
    finding = assert_fails(report, Step.SIGNATURES, VerifyCode.BAD_TABLE_SIGNATURE, at + 1)
    assert finding.seq == at and report.not_replayed == report.records


def test_the_first_of_two_bad_signatures(tmp_path: Path) -> None:
    values = values_of("table", keyed=True)
    moves = [index for index, value in enumerate(values) if value["body"]["kind"] == "move"]
    early, late = moves[150], moves[160]
    _with_wrong_player_signature(values, early)
    _with_wrong_player_signature(values, late)
    finding = assert_fails(
        verify_lines(tmp_path, seal(values)),
        Step.SIGNATURES,
        VerifyCode.BAD_PLAYER_SIGNATURE,
        early + 1,
    )
    assert finding.seat == values[early]["body"]["player"]
    # In one record, the table's signature is checked before the player's.
    assert_fails(
        verify_lines(tmp_path, seal(values, forged=frozenset({early}))),
        Step.SIGNATURES,
        VerifyCode.BAD_TABLE_SIGNATURE,
        early + 1,
    )
    # A gap in the submissions between the two comes after the first.
    del values[moves[155]]
    assert_fails(
        verify_lines(tmp_path, seal(values)),
        Step.SIGNATURES,
        VerifyCode.BAD_PLAYER_SIGNATURE,
        early + 1,
    )


def _move_line(values: list[Value]) -> int:
    return first(values, "move", lambda body: body["n"] > 0)


def test_a_move_signed_by_the_wrong_player(tmp_path: Path) -> None:
    values = values_of("short", keyed=True)
    index = _move_line(values)
    body = values[index]["body"]
    _with_wrong_player_signature(values, index)
    lines = seal(values, index)
    finding = assert_fails(
        verify_lines(tmp_path, lines), Step.SIGNATURES, VerifyCode.BAD_PLAYER_SIGNATURE, index + 1
    )
    assert (finding.seat, finding.move, finding.rule) == (
        body["player"],
        body["move"],
        "BAD_SIGNATURE",
    )
    # --fast skips players' signatures on moves, and says so.
    fast = verify_lines(tmp_path, lines, Settings(table_key=TABLE_PUB, fast=True))
    assert fast.verdict is Verdict.VERIFIED


def test_a_move_invented_by_the_table_in_a_keyed_game(tmp_path: Path) -> None:
    values = values_of("short", keyed=True)
    index = _move_line(values)
    del values[index]["sigs"]["player"]
    assert_fails(
        verify_lines(tmp_path, seal(values, index)),
        Step.SIGNATURES,
        VerifyCode.MISSING_PLAYER_SIGNATURE,
        index + 1,
    )


@pytest.mark.parametrize("where", ["hand_start", "move", "genesis"])
def test_unexpected_signatures(tmp_path: Path, where: str) -> None:
    values = values_of("short")
    index = first(values, where)
    signature = sign(OTHER_KEY, "submission", b"x")
    if where == "genesis":
        values[0]["sigs"]["players"] = [signature, signature]
    else:
        values[index]["sigs"]["player"] = signature
    assert_fails(
        verify_lines(tmp_path, seal(values, index)),
        Step.SIGNATURES,
        VerifyCode.UNEXPECTED_SIGNATURE,
        index + 1,
    )


def test_a_dropped_submission_leaves_a_gap(tmp_path: Path) -> None:
    values = values_of("short")
    index = _move_line(values)
    player, n = values[index]["body"]["player"], values[index]["body"]["n"]
    del values[index]
    later = first(values, SUBMISSION_KINDS, lambda body: body["player"] == player and body["n"] > n)
    finding = assert_fails(
        verify_lines(tmp_path, seal(values, index)),
        Step.SIGNATURES,
        VerifyCode.SUBMISSION_GAP,
        later + 1,
    )
    assert (finding.expected, finding.found) == (str(n), str(n + 1))


def _genesis_edit(tmp_path: Path, edit: Callable[[Value], object]) -> Report:
    values = values_of("short", keyed=True)
    edit(values[0])
    return verify_lines(tmp_path, seal(values))


def _set_key(seat: int, key: bytes | None) -> Callable[[Value], None]:
    def edit(genesis: Value) -> None:
        genesis["body"]["players"][seat]["key"] = None if key is None else key.hex()

    return edit


@pytest.mark.parametrize(
    ("edit", "code"),
    [
        (_set_key(1, None), VerifyCode.MIXED_PLAYER_KEYS),
        (_set_key(1, bytes(32)), VerifyCode.WEAK_PLAYER_KEY),
        (_set_key(1, raw_public_bytes(PLAYER_KEYS[0])), VerifyCode.DUPLICATE_PLAYER_KEY),
        (_set_key(0, TABLE_PUB), VerifyCode.DUPLICATE_PLAYER_KEY),
        (
            lambda genesis: genesis["sigs"]["players"].append(genesis["sigs"]["players"][0]),
            VerifyCode.BAD_GENESIS_COSIGNATURE,
        ),
        (lambda genesis: genesis["sigs"].pop("players"), VerifyCode.BAD_GENESIS_COSIGNATURE),
        (
            lambda genesis: genesis["body"]["players"][0].update(name="Eve"),
            VerifyCode.BAD_GENESIS_COSIGNATURE,
        ),
    ],
    ids=["mixed", "weak", "duplicate", "table-key", "one-too-many", "none", "changed-after"],
)
def test_player_keys_and_genesis_cosignatures(
    tmp_path: Path, edit: Callable[[Value], object], code: VerifyCode
) -> None:
    assert_fails(_genesis_edit(tmp_path, edit), Step.SIGNATURES, code, 1)


# -- steps 6 and 7: secret, rules, packs ------------------------------------------------


def test_a_wrong_secret_revealed(tmp_path: Path) -> None:
    values = values_of("short")
    values[-1]["body"]["secret"] = "ab" * 32
    assert_fails(
        verify_lines(tmp_path, seal(values)), Step.SECRET, VerifyCode.SECRET_MISMATCH, len(values)
    )


def test_seed_option(tmp_path: Path, pub: Path) -> None:
    path = write(tmp_path, lines_of("short"))
    (tmp_path / "secret.txt").write_text(SECRET.hex() + "\n")
    (tmp_path / "other.txt").write_text("ab" * 32 + "\n")
    secret, other = (f"file:{tmp_path / name}" for name in ("secret.txt", "other.txt"))
    assert run("verify", path, "--table-key", pub, "--secret", secret)[0] == 0
    code, out = run("verify", path, "--table-key", pub, "--secret", other)
    assert code == 1
    assert "SEED_MISMATCH" in out and "(step 6, secret)" in out
    unfinished = write(tmp_path, lines_of("short")[:30], "cut.jsonl")
    report = verify_log(unfinished, Settings(table_key=TABLE_PUB, seed=bytes(32)))
    assert_fails(report, Step.SECRET, VerifyCode.SEED_MISMATCH, 1)


def _rules_edit(genesis: Value) -> None:
    genesis["body"]["rules"]["players"]["max"] = "eight"


@pytest.mark.parametrize(
    ("edit", "code", "line"),
    [
        (lambda v: _rules_edit(v[0]), VerifyCode.BAD_RULES, 1),
        (lambda v: v[0]["body"].update(rules_sha256="0" * 64), VerifyCode.RULES_MISMATCH, 1),
        (lambda v: v[0]["body"]["players"][0].update(seat=1), VerifyCode.BAD_SEATS, 1),
        (lambda v: v[1]["body"]["packs"].reverse(), FlowCode.PACK_MISMATCH, 2),
        (lambda v: v[1]["body"]["packs"].append("0" * 64), FlowCode.PACK_MISMATCH, 2),
    ],
    ids=["bad-rules", "rules-digest", "seats", "packs-swapped", "pack-too-many"],
)
def test_rules_and_packs(
    tmp_path: Path, edit: Callable[[list[Value]], object], code: VerifyCode, line: int
) -> None:
    values = values_of("short")
    edit(values)
    finding = assert_fails(verify_lines(tmp_path, seal(values)), Step.PACKS, code, line)
    if code is FlowCode.PACK_MISMATCH and finding.seat is not None:
        assert finding.message.startswith("hand 1, seat 0:")


def test_a_profile_whose_target_no_score_can_reach_is_bad_rules(tmp_path: Path) -> None:
    values = values_of("short")
    rules = values[0]["body"]["rules"]
    rules["scoring"]["per_foundation_card"] = 0
    rules["match"].update(target=100, max_hands=None)
    finding = assert_fails(
        verify_lines(tmp_path, seal(values)), Step.PACKS, VerifyCode.BAD_RULES, 1
    )
    assert "cannot be reached" in finding.message


# -- step 8: the replay -----------------------------------------------------------------


def _single_card_play(body: Value) -> bool:
    words = body["move"].split(" ")
    return ">w" in words[1] and len(words) == 3 and not words[2].startswith("A")


def test_an_illegal_move_re_signed_by_the_table(tmp_path: Path) -> None:
    values = values_of("short")
    index = first(values, "move", _single_card_play)
    player, action, card = values[index]["body"]["move"].split(" ")
    values[index]["body"]["move"] = f"{player} {action.split('>')[0]}>f+ {card}"
    report = verify_lines(tmp_path, seal(values, index))
    finding = assert_fails(report, Step.REPLAY, FlowCode.ILLEGAL_MOVE, index + 1)
    assert (finding.rule, finding.expected, finding.found) == ("NOT_AN_ACE", "an ace", card)
    assert report.not_replayed == len(values) - index
    assert _uncoloured(finding_text(finding)) == (
        f"line {index + 1} (seq {index}), seat {player}, "
        f"move '{values[index]['body']['move']}': ILLEGAL_MOVE: NOT_AN_ACE: "
        f"only an ace starts a new foundation; expected an ace, found {card}"
    )
    text = _uncoloured(report_text(report))
    assert text.splitlines()[0].startswith("DOES NOT VERIFY  ")
    assert f"{len(values) - index} of {len(values)} records not replayed" in text


def _uncoloured(text: str) -> str:
    """``text`` without the reporter's own colours: any escape left came from the log."""
    for sequence in (*Colour, RESET):
        text = text.replace(sequence, "")
    return text


def test_the_text_report_escapes_what_the_log_supplies() -> None:
    # The schema now refuses a game id or a final reason like these (tests/test_hostile.py),
    # so the reporter is tested directly: no string from a log may split its lines.
    report = Report(
        "game.jsonl",
        Verdict.VERIFIED,
        records=3,
        not_replayed=0,
        game="0" * 32 + "\nVERIFIED  forged.jsonl",
        profile="table",
        hands=((1, 0),),
        totals=(1, 0),
        winners=(0,),
        final_reason="complete\x1b[2J",
    )
    text = _uncoloured(report_text(report))
    assert "\x1b" not in text
    assert [line for line in text.splitlines() if not line.startswith("  ")] == [
        "VERIFIED  game.jsonl"
    ]
    assert f"game {'0' * 32}\\nVERIFIED  forged.jsonl · profile table" in text
    assert "1 hand · complete\\x1b[2J" in text


def test_a_legal_move_wrongly_bounced(tmp_path: Path) -> None:
    values = values_of("short", keyed=True)  # a bounce keeps the player's signature valid
    # The last submission: a record that a later submission's player saw cannot be
    # re-signed without breaking that player's signature (tests/test_format_v2.py).
    index = max(i for i, value in enumerate(values) if value["body"]["kind"] in SUBMISSION_KINDS)
    assert values[index]["body"]["kind"] != "bounce"
    values[index]["body"].update(kind="bounce", reason="FOUNDATION_TAKEN")
    assert_fails(
        verify_lines(tmp_path, seal(values, index)),
        Step.REPLAY,
        FlowCode.WRONGLY_BOUNCED,
        index + 1,
    )


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"move": "0 dance"}, FlowCode.BAD_MOVE_TEXT),
        ({"hand": 2}, FlowCode.HAND_OUT_OF_ORDER),
        ({"kind": "tie"}, FlowCode.KIND_MISMATCH),
    ],
)
def test_replay_codes(tmp_path: Path, change: Value, code: VerifyCode) -> None:
    values = values_of("short")
    index = _move_line(values)
    values[index]["body"].update(change)
    assert_fails(verify_lines(tmp_path, seal(values, index)), Step.REPLAY, code, index + 1)


def test_a_move_of_another_seat(tmp_path: Path) -> None:
    values = values_of("short")
    index = first(values, "move", lambda body: body["move"].startswith("0 turn"))
    values[index]["body"]["move"] = "1" + values[index]["body"]["move"][1:]
    finding = assert_fails(
        verify_lines(tmp_path, seal(values, index)),
        Step.REPLAY,
        FlowCode.PLAYER_MISMATCH,
        index + 1,
    )
    assert (finding.expected, finding.found) == ("0", "1")


def test_a_tie_recorded_as_a_plain_move(tmp_path: Path) -> None:
    values = values_of("table")
    index = first(values, "tie")
    values[index]["body"]["kind"] = "move"
    finding = assert_fails(
        verify_lines(tmp_path, seal(values, index)),
        Step.REPLAY,
        FlowCode.KIND_MISMATCH,
        index + 1,
    )
    assert (finding.expected, finding.found) == ("tie", "move")


def test_an_unjustified_stall(tmp_path: Path) -> None:
    values = values_of("short")
    stall = {"body": {**values[1]["body"], "kind": "stall"}, "sigs": {}}
    del stall["body"]["packs"]
    values.insert(2, stall)
    values[-1]["body"]["records"] += 1
    finding = assert_fails(
        verify_lines(tmp_path, seal(values, 2)), Step.REPLAY, FlowCode.UNJUSTIFIED_STALL, 3
    )
    assert finding.rule in ("STALL_NOT_DUE", "TOO_EARLY")


def test_a_stall_where_the_hand_was_blocked(tmp_path: Path) -> None:
    values = values_of("blocked")
    index = first(values, "hand_end")
    assert values[index]["body"]["reason"] == "blocked"
    for field in ("reason", "scores"):
        del values[index]["body"][field]
    values[index]["body"]["kind"] = "stall"
    finding = assert_fails(
        verify_lines(tmp_path, seal(values, index)),
        Step.REPLAY,
        FlowCode.UNJUSTIFIED_STALL,
        index + 1,
    )
    assert (finding.expected, finding.found) == ("hand_end", "stall")


def test_a_blocked_end_where_a_shift_was_due(tmp_path: Path) -> None:
    values = values_of("blocked")
    index = first(values, "stall")
    values[index]["body"].update(kind="hand_end", reason="blocked", scores=[0, 0])
    finding = assert_fails(
        verify_lines(tmp_path, seal(values, index)),
        Step.REPLAY,
        FlowCode.UNJUSTIFIED_HAND_END,
        index + 1,
    )
    assert (finding.expected, finding.found) == ("stall", "blocked")


def test_an_unjustified_hand_end(tmp_path: Path) -> None:
    values = values_of("short")
    index = first(values, "hand_end")
    values[index]["body"]["reason"] = "blocked"
    assert_fails(
        verify_lines(tmp_path, seal(values, index)),
        Step.REPLAY,
        FlowCode.UNJUSTIFIED_HAND_END,
        index + 1,
    )


# -- steps 9 and 10: scores and the final record ----------------------------------------


def test_an_inflated_score(tmp_path: Path) -> None:
    values = values_of("short")
    index = first(values, "hand_end")
    scores = values[index]["body"]["scores"]
    recorded = ", ".join(map(str, scores))
    scores[0] += 10
    finding = assert_fails(
        verify_lines(tmp_path, seal(values, index)),
        Step.SCORES,
        FlowCode.SCORE_MISMATCH,
        index + 1,
    )
    assert (finding.expected, finding.found) == (recorded, ", ".join(map(str, scores)))


@pytest.mark.parametrize(
    ("change", "step", "code"),
    [
        (lambda body: body["totals"].__setitem__(0, 99), Step.SCORES, FlowCode.SCORE_MISMATCH),
        (lambda body: body["hands"][0].__setitem__(1, 99), Step.SCORES, FlowCode.SCORE_MISMATCH),
        (lambda body: body.update(winners=[0, 1]), Step.SCORES, FlowCode.WINNERS_MISMATCH),
        (lambda body: body.update(reason="resigned"), Step.FINAL, FlowCode.FINAL_MISMATCH),
    ],
    ids=["totals", "hands", "winners", "reason"],
)
def test_the_final_record_is_recomputed(
    tmp_path: Path, change: Callable[[Value], object], step: Step, code: VerifyCode
) -> None:
    values = values_of("short")
    change(values[-1]["body"])
    assert_fails(verify_lines(tmp_path, seal(values)), step, code, len(values))


def test_a_final_record_too_early(tmp_path: Path) -> None:
    values = values_of("table")
    final = values[-1]
    first_end = first(values, "hand_end")
    mid_hand = [*values[: first_end - 5], copy.deepcopy(final)]
    mid_hand[-1]["body"]["records"] = first_end - 5
    assert_fails(
        verify_lines(tmp_path, seal(mid_hand)), Step.FINAL, FlowCode.HAND_NOT_ENDED, first_end - 4
    )
    after_one = [*values[: first_end + 1], copy.deepcopy(final)]
    after_one[-1]["body"]["records"] = first_end + 1
    assert_fails(
        verify_lines(tmp_path, seal(after_one)),
        Step.FINAL,
        FlowCode.MATCH_NOT_OVER,
        first_end + 2,
    )


@pytest.mark.slow
@given(
    st.integers(min_value=1),
    st.sampled_from(["hand", "player", "n", "move", "t_ms", "scores", "packs", "kind", "reason"]),
    st.one_of(
        st.integers(min_value=-3, max_value=20),
        st.text(max_size=8),
        st.lists(st.integers(min_value=-3, max_value=3), max_size=4),
        st.sampled_from(list(RecordKind)),
    ),
)
def test_re_signed_nonsense_never_raises(index: int, key: str, value: object) -> None:
    assume(key != "kind" or value in list(RecordKind))  # the table signs only its kinds
    values = values_of("short")
    values[index % (len(values) - 1) + 1]["body"][key] = value
    report = verify_stream(stream_of(seal(values)), PINNED)
    assert exit_code_of(report) in (0, 1)


# -- the command line -----------------------------------------------------------------


def test_unpinned(tmp_path: Path, pub: Path) -> None:
    path = write(tmp_path, lines_of("short"))
    code, out = run("verify", path)
    assert code == 1 and out.startswith("UNPINNED: table signatures not checked  ")
    code, out = run("verify", path, "--unsafe-unpinned")
    assert code == 0 and out.startswith("UNPINNED: table signatures not checked  ")
    # Unpinned, the table's signatures are not checked at all, so a forged one passes...
    values = values_of("short")
    forged = seal(values, key=OTHER_KEY)
    report = verify_lines(tmp_path, forged, Settings(unsafe_unpinned=True))
    assert (report.verdict, exit_code_of(report), report.pinned) == (Verdict.UNPINNED, 0, False)
    # ... but everything else is.
    values[-1]["body"]["totals"][0] += 1
    assert exit_code_of(verify_lines(tmp_path, seal(values), Settings(unsafe_unpinned=True))) == 1
    code, out = run("verify", path, "--unsafe-unpinned", "--table-key", pub)
    assert code == 2 and "contradicts" in out


def test_json_reports_follow_their_schema(tmp_path: Path, pub: Path) -> None:
    good = write(tmp_path, lines_of("short"), "good.jsonl")
    cut = write(tmp_path, lines_of("short")[:20], "cut.jsonl")
    values = values_of("short")
    values[5]["body"]["move"] = "0 dance"
    bad = write(tmp_path, seal(values), "bad.jsonl")
    code, out = run("verify", good, cut, bad, tmp_path / "missing", "--table-key", pub, "--json")
    document = json.loads(out)
    assert schema_errors("verification-report", document) == []
    assert code == document["exit_code"] == 1  # bad.jsonl does not verify: never masked
    verdicts = [report["verdict"] for report in document["reports"]]
    assert verdicts == ["verified", "unfinished", "does_not_verify", "unreadable"]
    assert document["reports"][2]["finding"]["code"] == "BAD_MOVE_TEXT"
    assert document["reports"][0]["totals"] == json.loads(lines_of("short")[-1])["body"]["totals"]
    assert verification_document([verify_lines(tmp_path, lines_of("short"))])["exit_code"] == 0


def test_the_worst_exit_code_wins(tmp_path: Path, pub: Path) -> None:
    good = write(tmp_path, lines_of("short"), "good.jsonl")
    cut = write(tmp_path, lines_of("short")[:20], "cut.jsonl")
    code, out = run("verify", good, cut, "--table-key", pub)
    assert code == 1
    assert [line for line in out.splitlines() if line and not line.startswith(" ")] == [
        f"VERIFIED  {good}",
        f"UNFINISHED  {cut}  (step 4, chain)",
    ]


@pytest.mark.parametrize(
    "garbage",
    [
        b"",
        b"\x00\xff" * 50,
        random.Random(0).randbytes(2000),
        b"{}\n",
        b'{"body":{},"sigs":{}}\n',
        b"\n\n",
    ],
    ids=["empty", "binary", "random", "empty-object", "empty-record", "blank-lines"],
)
def test_no_traceback_on_garbage(tmp_path: Path, pub: Path, garbage: bytes) -> None:
    path = tmp_path / "garbage.jsonl"
    path.write_bytes(garbage)
    code, out = run("verify", path, "--table-key", pub)
    assert code == 1
    assert out.startswith(("DOES NOT VERIFY", "UNFINISHED"))
    assert "Traceback" not in out


def test_text_escapes_what_a_log_quotes(tmp_path: Path) -> None:
    values = values_of("short")
    index = _move_line(values)
    values[index]["body"]["move"] = "0 \x1b[2J\nVERIFIED"
    text = _uncoloured(report_text(verify_lines(tmp_path, seal(values, index))))
    assert "\x1b" not in text
    assert all(line.startswith(("DOES NOT VERIFY  ", "  ")) for line in text.splitlines())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--table-key", "missing.pub"], "no key file"),
        (["--table-key", "."], "cannot read"),
        (["--table-key", "garbage.pub"], "not a PEM public key"),
        (["--table-key", "weak.pub"], "WEAK_KEY"),
        # Issue 29, item 8: "say it is a private key and to give `NAME.pub`".
        (["--table-key", "private.key"], "private.key is a private key: give the public key, priv"),
        (["--secret", "abc"], "--secret"),
        (["--game-id", "G" * 32], "--game-id"),
    ],
)
def test_bad_options_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "garbage.pub").write_text("hello")
    weak = "MCowBQYDK2VwAyEAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="  # the identity point
    (tmp_path / "weak.pub").write_text(
        f"-----BEGIN PUBLIC KEY-----\n{weak}\n-----END PUBLIC KEY-----\n"
    )
    (tmp_path / "private.key").write_bytes(
        TABLE_KEY.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    log = write(tmp_path, lines_of("short"))
    code, out = run("verify", log, *args)
    assert code == 2
    assert message in out


def test_unreadable_files_exit_2(tmp_path: Path, pub: Path) -> None:
    code, out = run("verify", tmp_path / "missing.jsonl", "--table-key", pub)
    assert code == 2 and out.startswith("UNREADABLE  ")
    code, out = run("verify", tmp_path, "--table-key", pub)
    assert code == 2 and f"UNREADABLE: no logs found under {tmp_path}" in out
    device = verify_log(Path(os.devnull), PINNED)
    assert device.verdict is Verdict.UNREADABLE and exit_code_of(device) == 2
    assert device.finding is not None and "not a regular file" in device.finding.message
    read, write_end = os.pipe()
    os.close(write_end)
    with os.fdopen(read, "rb") as pipe:
        assert verify_stream(pipe, PINNED).verdict is Verdict.UNREADABLE


def test_settings_refuse_what_cannot_be_meant() -> None:
    with pytest.raises(ValueError, match="contradict"):
        Settings(table_key=TABLE_PUB, unsafe_unpinned=True)
    with pytest.raises(ValueError, match="WEAK_KEY"):
        Settings(table_key=bytes(32))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_a_file_without_permission_exits_2(tmp_path: Path, pub: Path) -> None:
    path = write(tmp_path, lines_of("short"))
    path.chmod(0)
    code, out = run("verify", path, "--table-key", pub)
    assert code == 2 and "Permission denied" in out


@pytest.mark.parametrize("name", ["blocked", "table"])
def test_a_stall_the_table_owed_but_left_out(tmp_path: Path, name: str) -> None:
    # A table must record a due shift at once; skipping it changes every later turn.
    values = values_of(name)
    index = first(values, "stall")
    while values[index + 1]["body"]["kind"] == "stall":  # drop one whose successor is not a stall
        index = first(values[index + 2 :], "stall") + index + 2
    del values[index]
    values[-1]["body"]["records"] = len(values) - 1  # a dishonest table fixes the count too
    finding = assert_fails(
        verify_lines(tmp_path, seal(values, index)),
        Step.REPLAY,
        FlowCode.MISSING_STALL,
        index + 1,
    )
    assert finding.expected == "stall"
