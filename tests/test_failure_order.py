"""The verifier reports failures in the order docs/log-format.md section 7 documents.

Issue 13, point 10: an independent verifier written from the documentation alone must give
a log with several defects the same answer as ours. So each test here builds a small log
with two defects (sometimes three) and checks which one is reported; its docstring quotes
the sentence of docs/log-format.md it checks, word for word, and
``test_every_test_quotes_the_doc`` checks that the quotation is still there.

Two tests assert the step numbers themselves (canonical form 2, schema 3), which follow the
order the checks run in: ``test_new_numbering_canonical_form_is_step_2_and_schema_step_3``
and ``test_new_numbering_the_steps_table_is_the_step_enum``.
"""

from __future__ import annotations

import copy
import inspect
import io
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from racing_demon.game.flow import SUBMISSION_KINDS, FlowCode
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.reader import ReadCode
from racing_demon.log.records import line_bytes
from racing_demon.outcomes import exit_code_of
from racing_demon.profiles import builtin_digest
from racing_demon.verify import Report, Settings, Step, Verdict, VerifyCode, verify_stream

from tampering import (
    OTHER_KEY,
    PINNED,
    PLAYER_KEYS,
    SECRET,
    TABLE_PUB,
    Value,
    as_format,
    assert_fails,
    first,
    lines_of,
    retitled,
    seal,
    stream_of,
    values_of,
    verify_lines,
)

DOC = (Path(__file__).resolve().parents[1] / "docs" / "log-format.md").read_text("utf-8")
SECTION_7 = DOC[DOC.index("## 7. Verification") : DOC.index("### Verdicts and exit codes")]


def _normalised(text: str) -> str:
    return " ".join(text.replace("\u2013", "-").split())  # en dashes as hyphens


def _edited(line: bytes, **changes: object) -> bytes:
    """``line`` with its body changed and re-encoded, its signatures left as they were."""
    value = json.loads(line)
    value["body"].update(changes)
    return line_bytes(value["body"], value["sigs"])


def _unsigned(values: list[Value], index: int, **changes: object) -> list[bytes]:
    """The sealed log with record ``index`` changed afterwards: its table signature is bad."""
    lines = seal(values)
    lines[index] = _edited(lines[index], **changes)
    return lines


def _bytes(data: bytes, settings: Settings = PINNED) -> Report:
    return verify_stream(io.BytesIO(data), settings)


# -- (a) the canonical form before the schema -------------------------------------------


def _off_the_schema_and_not_canonical() -> tuple[list[bytes], list[bytes]]:
    values = values_of("short")
    values[2]["body"]["n"] = -1
    canonical = seal(values)
    spaced = list(canonical)
    spaced[2] = json.dumps(json.loads(spaced[2])).encode()  # ", " and ": " separators
    return canonical, spaced


def test_the_canonical_form_is_checked_before_the_schema(tmp_path: Path) -> None:
    """The doc: "The canonical form is checked before the schema: a line that is both not
    canonical and off the schema is `NOT_CANONICAL` (step 2)." """
    canonical, spaced = _off_the_schema_and_not_canonical()
    assert_fails(verify_lines(tmp_path, spaced), Step.CANONICAL, ReadCode.NOT_CANONICAL, 3)
    assert_fails(verify_lines(tmp_path, canonical), Step.SCHEMA, VerifyCode.SCHEMA, 3)


def test_new_numbering_canonical_form_is_step_2_and_schema_step_3(tmp_path: Path) -> None:
    """The doc: "Steps 1-5 are numbered in the order they run on each line."

    Needs the Step enum renumbered (CANONICAL = 2, SCHEMA = 3).
    """
    canonical, spaced = _off_the_schema_and_not_canonical()
    assert verify_lines(tmp_path, spaced).step == 2
    assert verify_lines(tmp_path, canonical).step == 3


def test_new_numbering_the_steps_table_is_the_step_enum() -> None:
    """The doc: "| 2. canonical form | section 3 (`NOT_CANONICAL`) |"

    Needs the Step enum renumbered (CANONICAL = 2, SCHEMA = 3).
    """
    rows = re.findall(r"^\| (\d+)\. ([^|]+?) \|", SECTION_7, re.MULTILINE)
    assert [(int(number), title) for number, title in rows] == [
        (step.value, step.title) for step in sorted(Step)
    ]


# -- (b) a duplicate key when its object closes -----------------------------------------


def _duplicate(line: bytes) -> bytes:
    return line.replace(b'"hand":1,', b'"hand":1,"hand":1,', 1)


@pytest.mark.parametrize(
    ("second", "code"),
    [
        (lambda line: re.sub(rb'("t_ms":\d+)', rb"\1.0", line), ReadCode.FLOAT),
        (lambda line: re.sub(rb'("t_ms":\d+,)', rb"\1,", line), ReadCode.BAD_JSON),
        (lambda line: line.replace(b'"sigs":{', b'"sigs":{"x":1.5,'), ReadCode.DUPLICATE_KEY),
    ],
    ids=["a-float-later-in-its-object", "a-syntax-error-later-in-its-object", "a-float-after-it"],
)
def test_a_duplicate_key_is_found_when_its_object_closes(
    tmp_path: Path, second: Callable[[bytes], bytes], code: ReadCode
) -> None:
    """The doc: "A duplicate key is found only when its object closes, so a float or a
    syntax error later in the same object is reported first" """
    lines = lines_of("short")
    duplicated = _duplicate(lines[2])
    assert_fails(
        verify_lines(tmp_path, [*lines[:2], duplicated, *lines[3:]]),
        Step.FRAMING,
        ReadCode.DUPLICATE_KEY,
        3,
    )
    both = second(duplicated)
    assert both != duplicated
    assert_fails(verify_lines(tmp_path, [*lines[:2], both, *lines[3:]]), Step.FRAMING, code, 3)


# -- (c) player keys: mixed, weak, duplicate --------------------------------------------


def _keys(*keys: tuple[int, bytes | None]) -> list[bytes]:
    values = values_of("peer2peer", keyed=True)  # three seats
    for seat, key in keys:
        values[0]["body"]["players"][seat]["key"] = None if key is None else key.hex()
    return seal(values)


WEAK = bytes(32)  # a small-order point
SEAT_1 = raw_public_bytes(PLAYER_KEYS[1])


@pytest.mark.parametrize(
    ("reported", "hidden"),
    [
        ((0, None, VerifyCode.MIXED_PLAYER_KEYS), (1, WEAK, VerifyCode.WEAK_PLAYER_KEY)),
        ((0, None, VerifyCode.MIXED_PLAYER_KEYS), (2, SEAT_1, VerifyCode.DUPLICATE_PLAYER_KEY)),
        ((2, WEAK, VerifyCode.WEAK_PLAYER_KEY), (0, TABLE_PUB, VerifyCode.DUPLICATE_PLAYER_KEY)),
    ],
    ids=["mixed-before-weak", "mixed-before-duplicate", "weak-on-seat-2-before-duplicate-on-0"],
)
def test_player_keys_are_mixed_then_weak_then_duplicate(
    tmp_path: Path,
    reported: tuple[int, bytes | None, VerifyCode],
    hidden: tuple[int, bytes | None, VerifyCode],
) -> None:
    """The doc: "then the player keys, `MIXED_PLAYER_KEYS`, then `WEAK_PLAYER_KEY`, then
    `DUPLICATE_PLAYER_KEY`, each over every seat in seat order before the next (a weak key
    on seat 2 is reported rather than a duplicate key on seat 0)" """
    both = _keys((reported[0], reported[1]), (hidden[0], hidden[1]))
    assert_fails(verify_lines(tmp_path, both), Step.SIGNATURES, reported[2], 1)
    # Alone, the hidden defect is found.
    alone = _keys((hidden[0], hidden[1]))
    assert_fails(verify_lines(tmp_path, alone), Step.SIGNATURES, hidden[2], 1)


# -- (d) a record after the final record ------------------------------------------------


@pytest.mark.parametrize(
    ("after", "step", "code"),
    [
        (lambda lines: lines[0], Step.CHAIN, VerifyCode.AFTER_FINAL),  # genesis repeated, seq, prev
        (lambda lines: lines[-1], Step.CHAIN, VerifyCode.AFTER_FINAL),  # seq, prev, count
        (lambda lines: b"{}", Step.SCHEMA, VerifyCode.SCHEMA),
        (lambda lines: b"{", Step.FRAMING, ReadCode.BAD_JSON),
    ],
    ids=["a-second-genesis", "the-final-again", "off-the-schema", "not-json"],
)
def test_a_record_after_the_final_is_after_final_first(
    tmp_path: Path, after: Callable[[list[bytes]], bytes], step: Step, code: VerifyCode | ReadCode
) -> None:
    """The doc: "On every line after the first, `AFTER_FINAL` comes first: a record after
    the final record is `AFTER_FINAL`, whatever else is wrong with its chain (a repeated
    genesis, its `seq`, `prev`, game id, version or time), once steps 1-3 have held for it (so a
    torn line after the final record is `TORN_LINE`, a line off the schema `SCHEMA`)." """
    lines = lines_of("short")
    assert_fails(verify_lines(tmp_path, [*lines, after(lines)]), step, code, len(lines) + 1)


def test_a_torn_line_after_the_final_record_is_torn(tmp_path: Path) -> None:
    """The doc: "A torn last line (§1) is `TORN_LINE`, step 1: verdict `unfinished` when
    no final record comes before it (a file of nothing but one torn line included),
    `does_not_verify` after a final record." """
    lines = lines_of("short")
    data = stream_of(lines).getvalue() + lines[-1]  # the final record again, without its \n
    assert_fails(_bytes(data), Step.FRAMING, ReadCode.TORN_LINE, len(lines) + 1)


# -- (e) the genesis time ---------------------------------------------------------------


def test_the_genesis_time_is_not_checked(tmp_path: Path) -> None:
    """The doc: "The genesis `t_ms` is not checked: a table writes 0, but any value is
    accepted and only bounds line 2's `t_ms` from below, so a genesis `t_ms` above line
    2's fails at line 2, as `TIME_BACKWARDS`." """
    values = values_of("short")
    assert values[0]["body"]["t_ms"] == values[1]["body"]["t_ms"] == 0
    values[0]["body"]["t_ms"] = 1_000_000
    # Line 2 also carries a bad table signature: the chain comes first.
    lines = seal(values, forged=frozenset({1}))
    assert_fails(verify_lines(tmp_path, lines), Step.CHAIN, VerifyCode.TIME_BACKWARDS, 2)
    # Not undercut, a genesis time other than 0 is accepted.
    values = values_of("short")
    values[0]["body"]["t_ms"] = values[1]["body"]["t_ms"] = 1
    assert verify_lines(tmp_path, seal(values)).verdict is Verdict.VERIFIED


# -- (f) the ends of the file -----------------------------------------------------------


def test_an_empty_file_is_unfinished() -> None:
    """The doc: "An empty file is unfinished: verdict `unfinished`, code `UNFINISHED`, step
    4, no line. It has no genesis, so neither `--secret` nor `--game-id` is checked against
    anything." """
    for settings in (PINNED, Settings(table_key=TABLE_PUB, seed=bytes(32), game_id="0" * 32)):
        report = _bytes(b"", settings)
        assert (report.verdict, report.step, report.records) == (Verdict.UNFINISHED, Step.CHAIN, 0)
        assert report.finding is not None
        assert (report.finding.code, report.finding.line) == (VerifyCode.UNFINISHED, None)
        assert exit_code_of(report) == 1


@pytest.mark.parametrize(
    ("prefix", "torn", "verdict", "code"),
    [
        (40, b'\x00\xff{"body"', Verdict.UNFINISHED, ReadCode.TORN_LINE),  # a NUL, not UTF-8
        (0, b'{"body":{"comm', Verdict.UNFINISHED, ReadCode.TORN_LINE),
        # Issue 29, item 13: a first line that is no record's start is not a log.
        (0, b"not a log", Verdict.DOES_NOT_VERIFY, ReadCode.TORN_LINE),
        (40, b'{"body"\r', Verdict.DOES_NOT_VERIFY, ReadCode.CR),
    ],
    ids=["torn-and-not-json", "one-torn-line", "one-torn-line-not-a-log", "torn-and-a-cr"],
)
def test_a_torn_last_line_is_not_parsed(
    prefix: int, torn: bytes, verdict: Verdict, code: ReadCode
) -> None:
    """The doc: "Its bytes are never parsed (§1): only `FILE_TOO_LARGE`,
    `TOO_MANY_RECORDS`, `LINE_TOO_LONG`, `BOM` and `CR` are checked before it." """
    report = _bytes(stream_of(lines_of("short")[:prefix]).getvalue() + torn)
    assert (report.verdict, report.step) == (verdict, Step.FRAMING)
    assert report.finding is not None
    assert (report.finding.code, report.finding.line) == (code, prefix + 1)


def _cut_with_a_bad_move() -> list[bytes]:
    values = values_of("short")
    values[first(values, "move")]["body"]["move"] = "0 dance"
    return seal(values)[:40]


@pytest.mark.parametrize("torn", [b"", b'{"body"'], ids=["cut-at-a-line", "torn"])
def test_an_unfinished_log_with_the_seed_is_replayed_first(torn: bytes) -> None:
    """The doc: "With `--secret`, the secret must open the genesis commitment (`SEED_MISMATCH`,
    step 6) and the complete records are replayed, and either failure is the answer
    (verdict `does_not_verify`) rather than `UNFINISHED` or `TORN_LINE`" """
    data = stream_of(_cut_with_a_bad_move()).getvalue() + torn
    unfinished = _bytes(data)
    assert (unfinished.verdict, unfinished.step) == (
        Verdict.UNFINISHED,
        Step.FRAMING if torn else Step.CHAIN,
    )
    seeded = Settings(table_key=TABLE_PUB, seed=SECRET)
    assert_fails(_bytes(data, seeded), Step.REPLAY, FlowCode.BAD_MOVE_TEXT, 3)
    wrong_seed = Settings(table_key=TABLE_PUB, seed=bytes(32))
    assert_fails(_bytes(data, wrong_seed), Step.SECRET, VerifyCode.SEED_MISMATCH, 1)


# -- across lines -----------------------------------------------------------------------


def _a_later_bad_signature(values: list[Value]) -> list[bytes]:
    return seal(values, forged=frozenset({len(values) - 2}))


def _a_later_line_not_json(values: list[Value]) -> list[bytes]:
    lines = seal(values)
    lines[-2] = b"{"
    return lines


def _a_bad_secret(values: list[Value]) -> list[bytes]:
    values[-1]["body"]["secret"] = "ab" * 32
    return seal(values)


@pytest.mark.parametrize(
    ("later", "step", "code", "line"),
    [
        (_a_later_bad_signature, Step.SIGNATURES, VerifyCode.BAD_TABLE_SIGNATURE, -1),
        (_a_later_line_not_json, Step.FRAMING, ReadCode.BAD_JSON, -1),
        (_a_bad_secret, Step.SECRET, VerifyCode.SECRET_MISMATCH, 0),
        (seal, Step.REPLAY, FlowCode.BAD_MOVE_TEXT, 3),
    ],
    ids=["a-later-bad-signature", "a-later-line-not-json", "a-bad-secret", "nothing-later"],
)
def test_a_replay_failure_waits_for_the_whole_file(
    tmp_path: Path,
    later: Callable[[list[Value]], list[bytes]],
    step: Step,
    code: VerifyCode | ReadCode,
    line: int,
) -> None:
    """The doc: "A replay failure on an earlier line waits for the whole file: pass one
    holds back the replay failure until steps 1-6 have held for the whole file, so a
    signature failure on a later line (or any other failure of steps 1-5 there, or a
    step-6 failure) is the answer instead, and the report counts no record as replayed." """
    values = values_of("short")
    values[first(values, "move")]["body"]["move"] = "0 dance"  # line 3, BAD_MOVE_TEXT
    lines = later(values)
    report = verify_lines(tmp_path, lines)
    assert_fails(report, step, code, line if line > 0 else len(lines) + line)
    if step <= Step.SECRET:
        assert report.not_replayed == report.records == len(lines)


@pytest.mark.parametrize("swapped", [False, True], ids=["signature-first", "not-json-first"])
def test_steps_1_to_5_the_first_failing_line_wins(tmp_path: Path, swapped: bool) -> None:
    """The doc: "A failure on one line hides every failure on the lines after it, whatever
    their steps: a bad signature on line 6 is reported rather than a line 8 that is not
    JSON, and a line 6 that is not JSON rather than a bad signature on line 8." """
    signed, broken = (7, 5) if swapped else (5, 7)
    lines = seal(values_of("short"), forged=frozenset({signed}))
    lines[broken] = b"{"
    if swapped:
        assert_fails(verify_lines(tmp_path, lines), Step.FRAMING, ReadCode.BAD_JSON, 6)
    else:
        assert_fails(
            verify_lines(tmp_path, lines), Step.SIGNATURES, VerifyCode.BAD_TABLE_SIGNATURE, 6
        )


@pytest.mark.parametrize(
    ("changes", "step", "code"),
    [
        ({"t_ms": 0}, Step.CHAIN, VerifyCode.TIME_BACKWARDS),  # and a bad table signature
        ({"n": -1, "seq": 99}, Step.SCHEMA, VerifyCode.SCHEMA),  # off the schema, a wrong seq
    ],
    ids=["chain-before-signature", "schema-before-chain"],
)
def test_one_line_goes_through_steps_1_to_5_in_order(
    tmp_path: Path, changes: Value, step: Step, code: VerifyCode
) -> None:
    """The doc: "a line goes through steps 1, 2, 3, 4 and 5, in that order, before the next
    line is read" """
    values = values_of("short")
    index = 5
    assert values[index - 1]["body"]["t_ms"] > 0
    assert_fails(verify_lines(tmp_path, _unsigned(values, index, **changes)), step, code, index + 1)


# -- within step 4 ----------------------------------------------------------------------


def _repeated_genesis(values: list[Value]) -> tuple[list[bytes], Settings]:
    # As the table writes it (seq 0, no prev): also a wrong seq and no prev on line 2.
    values.insert(1, copy.deepcopy(values[0]))
    return seal(values, 2), PINNED


def _missing_genesis(values: list[Value]) -> tuple[list[bytes], Settings]:
    return seal(values[1:]), Settings(table_key=TABLE_PUB, game_id="0" * 32)


def _line_6(**changes: object) -> Callable[[list[Value]], tuple[list[bytes], Settings]]:
    return lambda values: (_unsigned(values, 5, **changes), PINNED)


def _final(**changes: object) -> Callable[[list[Value]], tuple[list[bytes], Settings]]:
    return lambda values: (_unsigned(values, len(values) - 1, **changes), PINNED)


OTHER_GAME = "0" * 32
ELSEWHERE = {"hash": "0" * 64, "seq": 1}  # line 2's seq with another history's hash
NOT_SEEN = {"hash": "0" * 64, "seq": 10**6}  # no record before this one, and a wrong hash


def _last_submission(**changes: object) -> Callable[[list[Value]], tuple[list[bytes], Settings]]:
    def edit(values: list[Value]) -> tuple[list[bytes], Settings]:
        index = max(i for i, v in enumerate(values) if v["body"]["kind"] in SUBMISSION_KINDS)
        return _unsigned(values, index, **changes), PINNED

    return edit


@pytest.mark.parametrize(
    ("edit", "code", "line"),
    [
        (_missing_genesis, VerifyCode.GENESIS_MISSING, 1),  # and another game than --game-id
        (_repeated_genesis, VerifyCode.GENESIS_REPEATED, 2),
        (_line_6(seq=99, prev="0" * 64, game=OTHER_GAME, t_ms=0), VerifyCode.SEQ_MISMATCH, 6),
        (_line_6(prev="0" * 64, game=OTHER_GAME, t_ms=0), VerifyCode.PREV_MISMATCH, 6),
        (_line_6(game=OTHER_GAME, t_ms=0), VerifyCode.GAME_ID_MISMATCH, 6),
        (_final(v=1, t_ms=0, records=0), VerifyCode.VERSION_MISMATCH, -1),
        (_final(t_ms=0, records=0), VerifyCode.TIME_BACKWARDS, -1),
        (_last_submission(t_ms=0, seen=NOT_SEEN), VerifyCode.TIME_BACKWARDS, 0),
        (_last_submission(seen=NOT_SEEN), VerifyCode.SEEN_OUT_OF_RANGE, 0),
        (_last_submission(seen=ELSEWHERE), VerifyCode.SEEN_MISMATCH, 0),
    ],
    ids=[
        "genesis-missing",
        "genesis-repeated",
        "seq",
        "prev",
        "game-id",
        "version",
        "time",
        "time-before-seen",
        "seen-out-of-range",
        "seen-mismatch",
    ],
)
def test_the_chain_checks_run_in_their_order(
    tmp_path: Path,
    edit: Callable[[list[Value]], tuple[list[bytes], Settings]],
    code: VerifyCode,
    line: int,
) -> None:
    """The doc: "On line 1: `GENESIS_MISSING`, then `WRONG_GAME` (with `--game-id`)" and
    "On each later line: `GENESIS_REPEATED`, `SEQ_MISMATCH`, `PREV_MISMATCH`,
    `GAME_ID_MISMATCH`, `VERSION_MISMATCH`, `TIME_BACKWARDS`, then on a v2 submission
    `SEEN_OUT_OF_RANGE` and `SEEN_MISMATCH` (section 6), then on the final record
    `RECORD_COUNT`." """
    lines, settings = edit(values_of("short"))
    report = verify_lines(tmp_path, lines, settings)
    if line == 0:  # the last submission
        kinds = [json.loads(raw)["body"]["kind"] for raw in lines]
        line = max(i for i, kind in enumerate(kinds) if kind in SUBMISSION_KINDS) + 1
    assert_fails(report, Step.CHAIN, code, line if line > 0 else len(lines) + 1 + line)


# -- within step 5 ----------------------------------------------------------------------


def _genesis_with_a_player_signature_and_a_bad_cosignature(values: list[Value]) -> int:
    sigs = values[0]["sigs"]
    sigs["player"], sigs["players"][0] = sigs["players"][0], sigs["players"][1]
    return 0


def _cosigned_move_without_its_signature(values: list[Value]) -> int:
    index = first(values, "move")
    values[index]["sigs"]["players"] = values[0]["sigs"]["players"]
    del values[index]["sigs"]["player"]
    return index


def _renumbered_move(values: list[Value]) -> int:
    index = first(values, "move", lambda body: body["n"] > 0)
    values[index]["body"]["n"] += 5  # the player signed the old number: a gap, a bad signature
    return index


def _forged_move_without_its_signature(values: list[Value]) -> int:
    index = first(values, "move")
    del values[index]["sigs"]["player"]
    return index


@pytest.mark.parametrize(
    ("edit", "code", "forged"),
    [
        (
            lambda values: values[0]["body"]["players"][0].update(key=None) or 0,
            VerifyCode.BAD_TABLE_SIGNATURE,
            True,
        ),
        (
            _genesis_with_a_player_signature_and_a_bad_cosignature,
            VerifyCode.BAD_GENESIS_COSIGNATURE,
            False,
        ),
        (_cosigned_move_without_its_signature, VerifyCode.UNEXPECTED_SIGNATURE, False),
        (_forged_move_without_its_signature, VerifyCode.BAD_TABLE_SIGNATURE, True),
        (_renumbered_move, VerifyCode.BAD_PLAYER_SIGNATURE, False),
    ],
    ids=[
        "table-signature-before-player-keys",
        "co-signatures-before-a-player-signature-on-the-genesis",
        "co-signatures-off-the-genesis-before-the-players-signature",
        "the-tables-signature-before-the-players",
        "the-players-signature-before-the-number",
    ],
)
def test_the_signature_checks_run_in_their_order(
    tmp_path: Path, edit: Callable[[list[Value]], int], code: VerifyCode, forged: bool
) -> None:
    """The doc: "On every other record: `BAD_TABLE_SIGNATURE` (with a pinned key; with
    `--fast` on the final record only), then `UNEXPECTED_SIGNATURE` for a `sigs.players`;
    then on a `move`, `tie`, `call`, `agree`, `resign` or `bounce`, the seat's signature" """
    values = values_of("short", keyed=True)
    index = edit(values)
    lines = seal(values, forged=frozenset({index}) if forged else frozenset())
    assert_fails(verify_lines(tmp_path, lines), Step.SIGNATURES, code, index + 1)


def test_the_table_key_before_the_table_signature(tmp_path: Path) -> None:
    """The doc: "On the genesis: `WRONG_TABLE_KEY`, `BAD_TABLE_SIGNATURE` (both only with a
    pinned key)" """
    # Pinned to another key, the genesis names the wrong key and its signature fails.
    other = Settings(table_key=raw_public_bytes(OTHER_KEY))
    assert_fails(
        verify_lines(tmp_path, lines_of("short"), other),
        Step.SIGNATURES,
        VerifyCode.WRONG_TABLE_KEY,
        1,
    )


# -- within step 7 ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad_rules", "version", "bad_digest", "pinned", "code"),
    [
        (True, 2, True, True, VerifyCode.BAD_RULES),
        (False, 2, True, True, VerifyCode.RULES_MISMATCH),
        (False, 2, False, True, VerifyCode.RESERVED_RULES_NAME),
        (False, 1, False, True, VerifyCode.WRONG_RULES),
        (False, 1, False, False, VerifyCode.BAD_SEATS),
    ],
    ids=[
        "document-first",
        "digest-before-reserved-name",
        "reserved-name-before-pinned-rules",
        "pinned-rules-before-seats",
        "seats",
    ],
)
def test_the_rules_checks_run_in_their_order(
    tmp_path: Path, bad_rules: bool, version: int, bad_digest: bool, pinned: bool, code: VerifyCode
) -> None:
    """The doc: "`BAD_RULES`, `RULES_MISMATCH`, then `RESERVED_RULES_NAME` (only in a log
    whose genesis has `"v": 2`), then `WRONG_RULES` (only with `--rules`), then `BAD_SEATS`"
    and "So a document that is both under a reserved name and not the pinned rules is
    `RESERVED_RULES_NAME`, and one whose digest is wrong is `RULES_MISMATCH` whatever its
    name." """
    values = as_format(retitled(values_of("short")), version)  # under a reserved name
    genesis = values[0]["body"]
    genesis["players"][0]["seat"] = 1  # BAD_SEATS
    if bad_rules:
        genesis["rules"]["stock"]["turn"] = 2
    if bad_digest:
        genesis["rules_sha256"] = "0" * 64
    settings = Settings(table_key=TABLE_PUB, rules=builtin_digest("nertz") if pinned else None)
    assert_fails(verify_lines(tmp_path, seal(values), settings), Step.PACKS, code, 1)


# -- steps 7 to 10 ----------------------------------------------------------------------


def _hand_2_start(values: list[Value]) -> int:
    return first(values, "hand_start", lambda body: body["hand"] == 2)


def test_steps_7_to_10_go_record_by_record(tmp_path: Path) -> None:
    """The doc: "the first record that fails any of them is the answer, whatever its step,
    so a bad move text in hand 1 (step 8) is reported rather than a wrong pack digest in
    hand 2 (step 7)." """
    values = values_of("table")
    values[_hand_2_start(values)]["body"]["packs"].reverse()
    assert_fails(
        verify_lines(tmp_path, seal(values)),
        Step.PACKS,
        FlowCode.PACK_MISMATCH,
        _hand_2_start(values) + 1,
    )
    index = first(values, "move", lambda body: body["n"] > 0)
    values[index]["body"]["move"] = "0 dance"
    assert_fails(
        verify_lines(tmp_path, seal(values)), Step.REPLAY, FlowCode.BAD_MOVE_TEXT, index + 1
    )


def _final_too_early(values: list[Value], before: int) -> list[Value]:
    final = copy.deepcopy(values[-1])
    final["body"]["records"] = before
    return [*values[:before], final]


def test_within_one_record_a_later_step_can_come_first(tmp_path: Path) -> None:
    """The doc: "So within one record a step-8 check can come before a step-7 one (a
    `hand_start`'s number before its packs), and step-10 checks before step-9 ones (the
    final record's `HAND_NOT_ENDED` and `MATCH_NOT_OVER` before its scores)" """
    values = values_of("table")
    start = _hand_2_start(values)
    values[start]["body"]["hand"] = 3
    values[start]["body"]["packs"].reverse()
    assert_fails(
        verify_lines(tmp_path, seal(values)), Step.REPLAY, FlowCode.HAND_OUT_OF_ORDER, start + 1
    )

    values = values_of("table")
    end = first(values, "hand_end")
    for before, code in (
        (end - 5, FlowCode.HAND_NOT_ENDED),
        (end + 1, FlowCode.MATCH_NOT_OVER),
    ):
        early = _final_too_early(values, before)
        early[-1]["body"]["totals"][0] += 1
        assert_fails(verify_lines(tmp_path, seal(early)), Step.FINAL, code, before + 1)

    values = values_of("short")
    values[-1]["body"]["totals"][0] += 1
    values[-1]["body"]["reason"] = "resigned"  # FINAL_MISMATCH (step 10), checked last
    assert_fails(
        verify_lines(tmp_path, seal(values)), Step.SCORES, FlowCode.SCORE_MISMATCH, len(values)
    )


def _single_card_play(body: Value) -> bool:
    words = body["move"].split(" ")
    return ">w" in words[1] and len(words) == 3 and not words[2].startswith("A")


def _missing_stall_and_bad_text(values: list[Value]) -> int:
    index = first(values, "stall")
    while values[index + 1]["body"]["kind"] == "stall":
        index = first(values[index + 2 :], "stall") + index + 2
    del values[index]
    values[-1]["body"]["records"] = len(values) - 1
    values[index]["body"]["move"] = "0 dance"
    return index


def _out_of_hand_and_bad_text(values: list[Value]) -> int:
    index = first(values, "move", lambda body: body["n"] > 0)
    values[index]["body"].update(hand=2, move="0 dance")
    return index


def _bad_text_and_wrong_kind(values: list[Value]) -> int:
    index = first(values, "move", lambda body: body["n"] > 0)
    values[index]["body"].update(kind="tie", move="0 dance")
    return index


def _other_seat_and_illegal(values: list[Value]) -> int:
    index = first(values, "move", lambda body: body["player"] == 0 and body["n"] > 0)
    values[index]["body"]["move"] = "1 demon>f+ KS"
    return index


def _illegal_and_wrong_kind(values: list[Value]) -> int:
    index = first(values, "move", _single_card_play)
    player, action, card = values[index]["body"]["move"].split(" ")
    values[index]["body"].update(kind="tie", move=f"{player} {action.split('>')[0]}>f+ {card}")
    return index


@pytest.mark.parametrize(
    ("name", "edit", "code"),
    [
        ("blocked", _missing_stall_and_bad_text, FlowCode.MISSING_STALL),
        ("short", _out_of_hand_and_bad_text, FlowCode.HAND_OUT_OF_ORDER),
        ("short", _bad_text_and_wrong_kind, FlowCode.BAD_MOVE_TEXT),
        ("short", _other_seat_and_illegal, FlowCode.PLAYER_MISMATCH),
        ("short", _illegal_and_wrong_kind, FlowCode.ILLEGAL_MOVE),
    ],
    ids=[
        "due-stall-before-move-text",
        "hand-before-move-text",
        "move-text-before-kind",
        "player-before-legality",
        "legality-before-kind",
    ],
)
def test_a_move_is_checked_stall_hand_text_player_legality_kind(
    tmp_path: Path, name: str, edit: Callable[[list[Value]], int], code: VerifyCode
) -> None:
    """The doc: "Every record after the genesis but a note *(v3: `pause`, `lag`)* is checked
    first for `MISSING_STALL`" and
    "`HAND_OUT_OF_ORDER` (no hand open, or another hand's number); the clock advanced to
    `t_ms`; `BAD_MOVE_TEXT`; `PLAYER_MISMATCH` (the move's seat is not `player`, then no
    such seat); `ILLEGAL_MOVE`; `KIND_MISMATCH`" """
    values = values_of(name)
    index = edit(values)
    assert_fails(verify_lines(tmp_path, seal(values, index)), Step.REPLAY, code, index + 1)


# -- the table of codes -----------------------------------------------------------------

# The order in which racing_demon.verify checks, step by step (docs/log-format.md section 7,
# "Order of the checks"); the reader's codes (steps 1 and 2) are §1's and §2's.
CHECK_ORDER = [
    (3, "SCHEMA"),
    *(
        (4, code)
        for code in (
            "AFTER_FINAL",
            "GENESIS_MISSING",
            "WRONG_GAME",
            "GENESIS_REPEATED",
            "SEQ_MISMATCH",
            "PREV_MISMATCH",
            "GAME_ID_MISMATCH",
            "VERSION_MISMATCH",
            "TIME_BACKWARDS",
            "SEEN_OUT_OF_RANGE",
            "SEEN_MISMATCH",
            "RECORD_COUNT",
            "UNFINISHED",
            "FILE_CHANGED",
        )
    ),
    *(
        (5, code)
        for code in (
            "WRONG_TABLE_KEY",
            "BAD_TABLE_SIGNATURE",
            "MIXED_PLAYER_KEYS",
            "WEAK_PLAYER_KEY",
            "DUPLICATE_PLAYER_KEY",
            "BAD_GENESIS_COSIGNATURE",
            "ENTROPY_NOT_BOUND",
            "UNEXPECTED_SIGNATURE",
            "MISSING_PLAYER_SIGNATURE",
            "BAD_PLAYER_SIGNATURE",
            "SUBMISSION_GAP",
            "BAD_ACCEPTANCE",
        )
    ),
    (6, "SECRET_MISMATCH"),
    (6, "SEED_MISMATCH"),
    *(
        (7, code)
        for code in (
            "BAD_RULES",
            "RULES_MISMATCH",
            "RESERVED_RULES_NAME",
            "WRONG_RULES",
            "BAD_SEATS",
            "BAD_TOURNAMENT",
            "PACK_MISMATCH",
        )
    ),
    *(
        (8, code)
        for code in (
            "MISSING_STALL",
            "HAND_OUT_OF_ORDER",
            "BAD_MOVE_TEXT",
            "PLAYER_MISMATCH",
            "ILLEGAL_MOVE",
            "KIND_MISMATCH",
            "WRONGLY_BOUNCED",
            "BOUNCE_REASON_MISMATCH",
            "LOST_TO_MISMATCH",
            "UNJUSTIFIED_STALL",
            "UNJUSTIFIED_HAND_END",
            "LAG_SEATS",
        )
    ),
    (9, "SCORE_MISMATCH"),
    (9, "WINNERS_MISMATCH"),
    *((10, code) for code in ("HAND_NOT_ENDED", "MATCH_NOT_OVER", "FINAL_MISMATCH")),
]


def test_the_codes_table_lists_the_codes_in_the_order_they_are_checked() -> None:
    """The doc: "Within each step the codes are listed in the order they are checked" """
    codes = SECTION_7[SECTION_7.index("### Codes") :]
    rows = re.findall(r"^\| (\d+) \| `([A-Z_]+)` \|", codes, re.MULTILINE)
    assert [(int(step), code) for step, code in rows] == CHECK_ORDER
    verifier_codes = {code.value for code in (*VerifyCode, *FlowCode)}
    # REQUIREMENT_UNMET (--require) judges a log whose every step held: it follows them.
    assert re.search(r"^\| after 10 \| `REQUIREMENT_UNMET` \|", codes, re.MULTILINE)
    assert {code for _, code in CHECK_ORDER} == verifier_codes - {
        "UNREADABLE",
        "REQUIREMENT_UNMET",
    }


def test_every_test_quotes_the_doc() -> None:
    """Each test's docstring quotes docs/log-format.md word for word."""
    doc = _normalised(DOC.replace("§", "section "))
    module = sys.modules[__name__]
    tests = [
        function
        for name, function in inspect.getmembers(module, inspect.isfunction)
        if name.startswith("test_") and function is not test_every_test_quotes_the_doc
    ]
    assert len(tests) >= 7
    for function in tests:
        docstring = inspect.getdoc(function) or ""
        quotes = re.findall(r'"(.+?)"(?=\s+and\s|\s*$)', docstring.split("\n\n")[0], re.DOTALL)
        assert docstring.startswith("The doc: ") and quotes, function.__name__
        for quote in quotes:
            assert _normalised(quote.replace("§", "section ")) in doc, (function.__name__, quote)
