"""Hostile logs (issue 5): each attack is refused with its own reason code, never a traceback.

Signatures moved between records of other kinds or other statements, members the format
does not know, a table key the pinned one is not, a sequence that runs backwards, a fork of
one game spliced into the other, a wrong ``--game-id``, and every attack on the reader's
bytes and limits, run through the whole verifier on a real log.

The logs are played by random players at a real ``Table``. Where an attack must get past
the chain, the log is re-chained and re-signed with the table's own key (``seal``), as a
dishonest table would (tests/tampering.py, shared with tests/test_verify.py).

Valid logs shaped to be slow (issue 12): many two-millisecond hands, long hands, many
stall shifts (tests/crafted.py, shared with bench/crafted_bench.py) verify, and the match's
work per hand is counted at two sizes: it must not grow with the number of hands.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import NamedTuple

import pytest

from racing_demon.audit import audit_hands
from racing_demon.game.deal import MatchSeed
from racing_demon.game.rules import MAX_HANDS
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import key_id, raw_public_bytes
from racing_demon.log.reader import Limits, ReadCode
from racing_demon.log.records import FORMAT_VERSION, chain_hash, line_bytes
from racing_demon.log.signing import sign
from racing_demon.schema import schema_errors
from racing_demon.testing.randomplay import play_match, word_chooser
from racing_demon.verify import Settings, Step, Verdict, VerifyCode, verify_log

import crafted
from conftest import Reads, invoke
from tampering import (
    OTHER_KEY,
    PLAYER_KEYS,
    SECRET,
    TABLE_KEY,
    TABLE_PUB,
    Value,
    assert_fails,
    first,
    lines_of,
    one_hand,
    seal,
    values_of,
    verify_lines,
    write,
)

# -- kind confusion: a genuine signature on the wrong record ------------------------------


def _hand_start_sig_on_a_stall(values: list[Value]) -> int:
    index = first(values, "stall")
    values[index]["sigs"]["table"] = values[first(values, "hand_start")]["sigs"]["table"]
    return index


def _move_sig_on_a_tie(values: list[Value]) -> int:
    index = first(values, "move")
    values[index]["body"]["kind"] = "tie"  # the same fields; only the kind differs
    return index


def _move_sig_on_a_bounce(values: list[Value]) -> int:
    index = first(values, "move")
    values[index]["body"].update(kind="bounce", reason="FOUNDATION_TAKEN")
    return index


def _signed_as_another_kind(values: list[Value]) -> int:
    # The table's key over the record's exact body bytes, but under the type of a tie.
    index = first(values, "move")
    body = values[index]["body"]
    values[index]["sigs"]["table"] = sign(TABLE_KEY, "tie", canonical_bytes(body), 2)
    return index


@pytest.mark.parametrize(
    ("name", "edit"),
    [
        ("blocked", _hand_start_sig_on_a_stall),
        ("short", _move_sig_on_a_tie),
        ("short", _move_sig_on_a_bounce),
        ("short", _signed_as_another_kind),
    ],
    ids=["hand_start-on-stall", "move-on-tie", "move-on-bounce", "signed-as-tie"],
)
def test_a_table_signature_on_a_record_of_another_kind(
    tmp_path: Path, name: str, edit: Callable[[list[Value]], int]
) -> None:
    # Not re-sealed, as by anyone without the table's key: the next line's prev breaks too,
    # but the edited line's own signature is checked first.
    values = values_of(name, keyed=True)
    index = edit(values)
    lines = lines_of(name, keyed=True)
    lines[index] = line_bytes(values[index]["body"], values[index]["sigs"])
    finding = assert_fails(
        verify_lines(tmp_path, lines), Step.SIGNATURES, VerifyCode.BAD_TABLE_SIGNATURE, index + 1
    )
    assert finding.rule == "BAD_SIGNATURE"


def test_a_genesis_cosignature_reused_as_a_move_signature(tmp_path: Path) -> None:
    values = values_of("short", keyed=True)
    index = first(values, "move")
    player = values[index]["body"]["player"]
    values[index]["sigs"]["player"] = values[0]["sigs"]["players"][player]
    finding = assert_fails(
        verify_lines(tmp_path, seal(values, index)),
        Step.SIGNATURES,
        VerifyCode.BAD_PLAYER_SIGNATURE,
        index + 1,
    )
    assert (finding.seat, finding.rule) == (player, "BAD_SIGNATURE")


def test_a_submission_signature_copied_to_another_move(tmp_path: Path) -> None:
    values = values_of("short", keyed=True)
    source = first(values, "move")
    player = values[source]["body"]["player"]
    target = first(values, "move", lambda body: body["player"] == player and body["n"] > 0)
    values[target]["sigs"]["player"] = values[source]["sigs"]["player"]
    finding = assert_fails(
        verify_lines(tmp_path, seal(values, target)),
        Step.SIGNATURES,
        VerifyCode.BAD_PLAYER_SIGNATURE,
        target + 1,
    )
    assert (finding.seat, finding.move) == (player, values[target]["body"]["move"])
    assert finding.rule == "BAD_SIGNATURE"


# -- unknown signers ----------------------------------------------------------------------


@pytest.mark.parametrize("keep_table", [False, True], ids=["instead-of-table", "beside-table"])
def test_a_signature_under_an_unknown_member(tmp_path: Path, keep_table: bool) -> None:
    # ``sigs`` has no key ids, only its three members: an unknown one is a schema error,
    # with or without the table's signature beside it.
    values = values_of("short")
    index = first(values, "move")
    sigs = values[index]["sigs"]
    values[index]["sigs"] = {"someone": sigs["table"], **(sigs if keep_table else {})}
    lines = lines_of("short")
    lines[index] = line_bytes(values[index]["body"], values[index]["sigs"])
    finding = assert_fails(verify_lines(tmp_path, lines), Step.SCHEMA, VerifyCode.SCHEMA, index + 1)
    assert finding.message.startswith("$.sigs: Additional properties are not allowed")
    assert "'someone' was unexpected" in finding.message


def test_a_log_consistently_signed_by_the_key_it_names_but_not_the_pinned_one(
    tmp_path: Path,
) -> None:
    other = raw_public_bytes(OTHER_KEY)
    values = values_of("short")
    values[0]["body"]["table_key"] = key_id(other)
    lines = seal(values, key=OTHER_KEY)
    finding = assert_fails(
        verify_lines(tmp_path, lines), Step.SIGNATURES, VerifyCode.WRONG_TABLE_KEY, 1
    )
    assert (finding.expected, finding.found) == (key_id(TABLE_PUB), key_id(other))
    # The log holds together: pinned to the key it names, it verifies.
    assert verify_lines(tmp_path, lines, Settings(table_key=other)).verdict is Verdict.VERIFIED


# -- the chain: seq running backwards -----------------------------------------------------


def test_seq_running_backwards_is_the_first_anomaly(tmp_path: Path) -> None:
    # From line 11 on, the table numbers records from 8 again, chaining and signing them
    # all properly and counting them so in the final record: only the seq is wrong.
    values = values_of("short")
    index = 10
    for value in values[index:]:
        value["body"]["seq"] -= 2
    values[-1]["body"]["records"] = values[-1]["body"]["seq"]
    lines = seal(values, index, keep_seq=True)
    finding = assert_fails(
        verify_lines(tmp_path, lines), Step.CHAIN, VerifyCode.SEQ_MISMATCH, index + 1
    )
    assert (finding.expected, finding.found, finding.seq) == ("10", "8", 8)
    assert json.loads(lines[index - 1])["body"]["seq"] == 9  # a decrease from the line before


# -- a fork of one game -------------------------------------------------------------------

FORK_GAME = "0123456789abcdef" * 2


@cache
def _fork(label: str) -> tuple[bytes, ...]:
    """One hand of one game (same id, secret, entropy, keys, players), played by ``label``."""
    with tempfile.TemporaryDirectory() as directory:
        log = Path(directory) / "game.jsonl"
        play_match(
            log,
            one_hand("peer2peer"),
            TABLE_KEY,
            SECRET,
            [bytes([seat]) * 16 for seat in range(2)],
            word_chooser(MatchSeed.from_plain(label)),
            player_keys=PLAYER_KEYS[:2],
            game_id=FORK_GAME,
        )
        return tuple(log.read_bytes().splitlines())


def test_a_record_spliced_from_a_fork_of_the_same_game(tmp_path: Path) -> None:
    """Two histories of one game, both signed by its table: a record of one in the other
    breaks the chain on the next line.

    Each fork verifies on its own, even with ``--game-id``: a table that signs two
    histories of one game can show either. That is a limit of the format (a signed chain
    proves what one log holds, not that the table signed no other); the verifier's
    answer is per log.
    """
    a, b = list(_fork("fork a")), list(_fork("fork b"))
    diverge = next(
        index for index, (ours, theirs) in enumerate(zip(a, b, strict=False)) if ours != theirs
    )
    assert diverge >= 2  # the genesis and the first hand_start are shared
    assert a[:diverge] == b[:diverge]

    spliced = [*a[:diverge], b[diverge], *a[diverge + 1 :]]
    finding = assert_fails(
        verify_lines(tmp_path, spliced), Step.CHAIN, VerifyCode.PREV_MISMATCH, diverge + 2
    )
    assert (finding.expected, finding.found) == (chain_hash(b[diverge]), chain_hash(a[diverge]))
    # Up to and including the spliced record, everything holds: it is genuine.
    cut = verify_lines(tmp_path, spliced[: diverge + 1])
    assert cut.verdict is Verdict.UNFINISHED and cut.finding is not None
    assert cut.finding.code is VerifyCode.UNFINISHED

    pinned_game = Settings(table_key=TABLE_PUB, game_id=FORK_GAME)
    for fork in (a, b):
        report = verify_lines(tmp_path, fork, pinned_game)
        assert (report.verdict, report.game, report.not_replayed) == (
            Verdict.VERIFIED,
            FORK_GAME,
            0,
        )


# -- --game-id on the command line --------------------------------------------------------


def test_the_game_id_option(tmp_path: Path, pub: Path) -> None:
    lines = lines_of("short")
    game = json.loads(lines[0])["body"]["game"]
    wrong = "0123456789abcdef" * 2
    assert wrong != game
    path = str(write(tmp_path, lines))
    code, out = invoke("verify", path, "--table-key", str(pub), "--game-id", wrong)
    assert code == 1, out
    assert out.startswith(f"DOES NOT VERIFY  {path}  (step 4, chain)")
    assert f"line 1 (seq 0): WRONG_GAME: this log is of another game; expected {wrong}" in out
    assert "Traceback" not in out

    code, out = invoke("verify", path, "--table-key", str(pub), "--game-id", game)
    assert code == 0 and out.startswith(f"VERIFIED  {path}"), out

    code, out = invoke("verify", path, "--table-key", str(pub), "--game-id", wrong, "--json")
    document = json.loads(out)
    assert code == document["exit_code"] == 1
    (report,) = document["reports"]
    assert (report["verdict"], report["step"]["number"]) == ("does_not_verify", 4)
    assert report["finding"]["code"] == "WRONG_GAME"
    assert (report["finding"]["expected"], report["finding"]["found"]) == (wrong, game)


# -- a hex field ending in a newline (issue 12, item 7) -----------------------------------


def _game_with_newline(values: list[Value]) -> tuple[int, str]:
    # In every record alike: a second spelling of the same game id, and a newline that
    # would split a text report naming it.
    for value in values:
        value["body"]["game"] += "\n"
    return 0, "$.body.game"


def _entropy_with_newline(values: list[Value]) -> tuple[int, str]:
    values[0]["body"]["entropy"][1] += "\n"
    return 0, "$.body.entropy[1]"


def _secret_with_newline(values: list[Value]) -> tuple[int, str]:
    # bytes.fromhex skips the newline: the same secret, so the commitment would still hold.
    values[-1]["body"]["secret"] += "\n"
    return len(values) - 1, "$.body.secret"


@pytest.mark.parametrize(
    "edit",
    [_game_with_newline, _entropy_with_newline, _secret_with_newline],
    ids=["game", "entropy", "secret"],
)
def test_a_hex_field_ending_in_a_newline_breaks_the_schema(
    tmp_path: Path, edit: Callable[[list[Value]], tuple[int, str]]
) -> None:
    # The schemas' "^...$" patterns mean ECMA-262's "$", the end of the string; Python's
    # re.search would also match it before a final newline, and the re-signed log verify.
    values = values_of("short")
    index, path = edit(values)
    lines = seal(values)
    finding = assert_fails(verify_lines(tmp_path, lines), Step.SCHEMA, VerifyCode.SCHEMA, index + 1)
    assert finding.message.startswith(f"{path}: "), finding.message
    assert "does not match" in finding.message
    # jsonschema alone, without jsonschema-rs, refuses the same record.
    errors = schema_errors("log-record", json.loads(lines[index]))
    assert [error.split(":")[0] for error in errors] == [path]


# -- the reader's attacks, end to end -----------------------------------------------------


def _in_string(bad: bytes) -> Callable[[bytes], bytes]:
    """Put ``bad`` at the start of the ``kind`` string (every line has one)."""

    def attack(line: bytes) -> bytes:
        assert line.count(b'"kind":"') == 1
        return line.replace(b'"kind":"', b'"kind":"' + bad, 1)

    return attack


def _as_version(number: bytes) -> Callable[[bytes], bytes]:
    """Write ``number`` where the integer ``v`` stands (every line has one)."""

    version = b'"v":%d' % FORMAT_VERSION

    def attack(line: bytes) -> bytes:
        assert line.count(version) == 1
        return line.replace(version, b'"v":' + number, 1)

    return attack


class Attack(NamedTuple):
    name: str
    edit: Callable[[bytes], bytes]
    code: ReadCode
    on_line_1: ReadCode | None = None  # where the first line differs


ATTACKS = [
    # Framing (docs/log-format.md §1).
    Attack("bom", lambda line: b"\xef\xbb\xbf" + line, ReadCode.BAD_JSON, ReadCode.BOM),
    Attack("crlf", lambda line: line + b"\r", ReadCode.CR),
    # JSON takes a CR between tokens for whitespace: only the framing refuses it.
    Attack("bare-cr", lambda line: line.replace(b'{"body":', b'{\r"body":', 1), ReadCode.CR),
    Attack("empty-line", lambda line: b"", ReadCode.EMPTY_LINE),
    Attack("whitespace-line", lambda line: b" \t ", ReadCode.EMPTY_LINE),
    # Encoding.
    Attack("overlong-utf8", _in_string(b"\xc0\xaf"), ReadCode.NOT_UTF8),
    Attack("encoded-surrogate", _in_string(b"\xed\xa0\x80"), ReadCode.NOT_UTF8),
    Attack("stray-ff", _in_string(b"\xff"), ReadCode.NOT_UTF8),
    Attack("nul", _in_string(b"\x00"), ReadCode.NUL),
    # Strict JSON (§2).
    Attack(
        "duplicate-key",
        lambda line: line.replace(b'{"body":{', b'{"body":{"v":1,', 1),
        ReadCode.DUPLICATE_KEY,
    ),
    Attack("nan", _as_version(b"NaN"), ReadCode.NAN_OR_INFINITY),
    Attack("infinity", _as_version(b"Infinity"), ReadCode.NAN_OR_INFINITY),
    Attack("float", _as_version(b"1.0"), ReadCode.FLOAT),
    Attack("negative-zero", _as_version(b"-0"), ReadCode.NEGATIVE_ZERO),
    Attack("two-to-the-53", _as_version(str(2**53).encode()), ReadCode.INT_RANGE),
    Attack("5000-digits", _as_version(b"9" * 5000), ReadCode.INT_RANGE),
    # 200,000 bytes: beyond the default line length before its depth is even looked at.
    Attack("100000-deep", _as_version(b"[" * 100_000 + b"]" * 100_000), ReadCode.LINE_TOO_LONG),
    Attack("trailing-garbage", lambda line: line + b" garbage", ReadCode.BAD_JSON),
    Attack("two-values", lambda line: line + line, ReadCode.BAD_JSON),
    Attack("top-level-array", lambda line: b"[" + line + b"]", ReadCode.NOT_OBJECT),
]

POSITIONS = pytest.mark.parametrize("index", [0, 1, -1], ids=["line-1", "line-2", "last-line"])


def _attacked(attack: Attack, index: int) -> tuple[list[bytes], int, ReadCode]:
    """The short log with one line attacked; that line's number; the code expected."""
    lines = lines_of("short")
    index %= len(lines)
    lines[index] = attack.edit(lines[index])
    code = attack.on_line_1 if index == 0 and attack.on_line_1 is not None else attack.code
    return lines, index + 1, code


@POSITIONS
@pytest.mark.parametrize("attack", ATTACKS, ids=[attack.name for attack in ATTACKS])
def test_a_reader_attack_on_one_line(tmp_path: Path, attack: Attack, index: int) -> None:
    """Malformed bytes do not verify (exit 1), at step 1 with the reader's code and the
    line; ``unreadable`` (exit 2) is only for a file that cannot be opened or read."""
    lines, line, code = _attacked(attack, index)
    report = verify_lines(tmp_path, lines)
    finding = assert_fails(report, Step.FRAMING, code, line)
    assert finding.message
    assert report.not_replayed == report.records  # nothing replayed, however many counted
    if code is not ReadCode.LINE_TOO_LONG:
        assert report.records == len(lines)


@POSITIONS
def test_deep_nesting_is_refused_before_parsing(tmp_path: Path, index: int) -> None:
    # With lines long enough to hold it, the 100,000-deep value is refused by its depth.
    attack = next(attack for attack in ATTACKS if attack.name == "100000-deep")
    lines, line, _ = _attacked(attack, index)
    settings = Settings(table_key=TABLE_PUB, limits=Limits(max_line_bytes=1 << 20))
    finding = assert_fails(
        verify_lines(tmp_path, lines, settings), Step.FRAMING, ReadCode.TOO_DEEP, line
    )
    assert finding.message == "containers nested deeper than 32"


def _limits(lines: list[bytes]) -> list[tuple[str, Limits, ReadCode, int]]:
    """Limits one step below what the log needs: the limit, its code, the line refused."""
    size = sum(len(line) + 1 for line in lines)
    return [
        ("file", Limits(max_file_bytes=size - 1), ReadCode.FILE_TOO_LARGE, len(lines)),
        ("file-genesis", Limits(max_file_bytes=len(lines[0])), ReadCode.FILE_TOO_LARGE, 1),
        ("line", Limits(max_line_bytes=len(lines[0]) - 1), ReadCode.LINE_TOO_LONG, 1),
        ("records", Limits(max_records=len(lines) - 1), ReadCode.TOO_MANY_RECORDS, len(lines)),
        ("depth", Limits(max_depth=3), ReadCode.TOO_DEEP, 1),
    ]


def test_reader_limits_exceeded(tmp_path: Path) -> None:
    lines = lines_of("short")
    longest = len(lines[0])
    assert max(map(len, lines)) == longest  # the genesis is the longest line
    for name, limits, code, line in _limits(lines):
        report = verify_lines(tmp_path, lines, Settings(table_key=TABLE_PUB, limits=limits))
        assert_fails(report, Step.FRAMING, code, line)
        if code is not ReadCode.TOO_DEEP:  # beyond a size limit, the rest is not even counted
            assert (report.records, report.not_replayed) == (None, None), name
    # Exactly at every limit, the log verifies...
    exact = Limits(
        max_file_bytes=sum(len(line) + 1 for line in lines),
        max_line_bytes=longest,
        max_records=len(lines),
    )
    report = verify_lines(tmp_path, lines, Settings(table_key=TABLE_PUB, limits=exact))
    assert report.verdict is Verdict.VERIFIED
    # ... and a line one byte longer than the longest is refused where it stands.
    lines[5] = b"x" * (longest + 1)
    report = verify_lines(tmp_path, lines, Settings(table_key=TABLE_PUB, limits=exact))
    assert_fails(report, Step.FRAMING, ReadCode.LINE_TOO_LONG, 6)


@pytest.mark.parametrize(
    ("name", "index"),
    [
        ("bom", 0),
        ("crlf", 1),
        ("overlong-utf8", -1),
        ("nul", 1),
        ("duplicate-key", 0),
        ("nan", -1),
        ("100000-deep", 1),
        ("5000-digits", 0),
        ("top-level-array", 1),
        ("empty-line", -1),
    ],
)
def test_reader_attacks_through_the_command_line(
    tmp_path: Path, pub: Path, name: str, index: int
) -> None:
    attack = next(attack for attack in ATTACKS if attack.name == name)
    lines, line, code = _attacked(attack, index)
    path = str(write(tmp_path, lines))
    exit_code, out = invoke("verify", path, "--table-key", str(pub))
    assert exit_code == 1, out  # does not verify; 2 is for a file that cannot be read
    first_line, finding = out.splitlines()[:2]
    assert first_line == f"DOES NOT VERIFY  {path}  (step 1, framing and strict JSON)"
    assert finding.startswith(f"  line {line}: {code}: ")
    assert "Traceback" not in out


# -- logs crafted to be slow (issue 12, items 8 and 10) ---------------------------------


def _crafted_settings(fast: bool = False) -> Settings:
    return Settings(table_key=raw_public_bytes(crafted.TABLE_KEY.public_key()), fast=fast)


@pytest.mark.slow
@pytest.mark.parametrize("shape", sorted(crafted.SHAPES))
def test_a_log_crafted_to_be_slow_is_a_valid_match(tmp_path: Path, shape: str) -> None:
    write, size, _ = crafted.SHAPES[shape]
    path = write(tmp_path / f"{shape}.jsonl", size)
    for fast in (False, True):
        assert verify_log(path, _crafted_settings(fast)).verdict is Verdict.VERIFIED


@pytest.mark.slow
def test_a_match_that_nothing_but_the_cap_ends_verifies_as_complete(tmp_path: Path) -> None:
    report = verify_log(crafted.write_capped(tmp_path / "capped.jsonl"), _crafted_settings())
    assert report.verdict is Verdict.VERIFIED
    assert (len(report.hands), report.final_reason) == (MAX_HANDS, "complete")
    assert report.winners == (0, 1)  # nobody placed a card: equal totals share


@pytest.mark.pure_python  # counts HandScore.scores, a native attribute when compiled
@pytest.mark.slow
def test_the_match_work_per_hand_does_not_grow_with_the_hands(
    tmp_path: Path, hand_score_reads: Reads
) -> None:
    """Issue 12: the table, the verifier and the audit each re-added every hand so far at
    every hand, so a log of many short hands cost the square of its length.
    Counted, not timed: how often a hand's scores are read, per hand, at n and 4n hands."""
    per_hand = {}
    for hands in (100, 400):
        hand_score_reads.count = 0
        path = crafted.write_hands(tmp_path / f"hands-{hands}.jsonl", hands)
        assert verify_log(path, _crafted_settings()).verdict is Verdict.VERIFIED
        assert len(audit_hands(path, crafted.SECRET)) == hands
        per_hand[hands] = hand_score_reads.count / hands
    assert per_hand[400] <= per_hand[100]
