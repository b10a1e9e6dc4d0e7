"""Signature equations checked on a worker thread beside the replay change no report.

``Settings.overlap_signatures`` (the default) sends each equation that passed the strict
checks to a worker and settles them before any failure is reported; with it off, each is
checked where it stands, as the verifier's order (docs/log-format.md §7) says. A log with a
refused signature on one line and another failure later (or earlier) must get the very
same report either way, whatever the two failures are and wherever they fall.
"""

from __future__ import annotations

import io
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from racing_demon.log.reader import Line
from racing_demon.log.records import Record
from racing_demon.testing.tamper import reseal
from racing_demon.verify import Settings, Step, Verdict, VerifyCode, step03_schema, verify_stream
from racing_demon.verify.step05_signatures import _BURST, _IN_FLIGHT

from tampering import OTHER_KEY, PINNED, TABLE_KEY, lines_of, stream_of, values_of

KEYED = ("table", "nertz", "peer2peer")


def _broken_signature(line: bytes, which: str) -> bytes:
    """``line`` with one hex digit of its ``which`` signature changed: still well formed,
    so only the equation refuses it."""
    marker = b'"' + which.encode() + b'":"'
    start = line.rindex(marker) + len(marker)
    digit = line[start + 5 : start + 6]
    return line[: start + 5] + (b"1" if digit == b"0" else b"0") + line[start + 6 :]


def _reports(lines: list[bytes], data: bytes | None = None) -> tuple[object, object]:
    raw = data if data is not None else stream_of(lines).getvalue()
    overlapped = verify_stream(io.BytesIO(raw), PINNED, "game.jsonl")
    in_line = verify_stream(
        io.BytesIO(raw), replace(PINNED, overlap_signatures=False), "game.jsonl"
    )
    return overlapped, in_line


LATER = st.sampled_from(["none", "not-json", "torn", "bad-table-sig", "seq", "cut", "extra"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(KEYED),
    where=st.floats(0.0, 1.0),
    which=st.sampled_from(["table", "player"]),
    other=LATER,
    other_where=st.floats(0.0, 1.0),
)
def test_a_refused_signature_and_another_failure_report_the_same_either_way(
    name: str, where: float, which: str, other: str, other_where: float
) -> None:
    lines = lines_of(name, keyed=True)
    candidates = [i for i, line in enumerate(lines) if f'"{which}":"'.encode() in line]
    index = candidates[int(where * (len(candidates) - 1))]
    lines[index] = _broken_signature(lines[index], which)
    later = int(other_where * (len(lines) - 1))
    data = None
    if other == "not-json":
        lines[later] = b"{not json"
    elif other == "bad-table-sig":
        lines[later] = _broken_signature(lines[later], "table")
    elif other == "seq":
        lines[later] = lines[later].replace(b'"seq":', b'"seq":9', 1)
    elif other == "cut":
        lines = lines[: max(1, later)]
    elif other == "extra":
        lines.append(lines[-1])
    elif other == "torn":
        data = stream_of(lines[:later]).getvalue() + lines[later][:20]
    overlapped, in_line = _reports(lines, data)
    assert overlapped == in_line


@pytest.mark.parametrize("name", KEYED)
def test_every_signature_refused_in_turn_is_the_finding_either_way(name: str) -> None:
    lines = lines_of(name, keyed=True)
    for index in range(0, len(lines), max(1, len(lines) // 25)):
        tampered = list(lines)
        tampered[index] = _broken_signature(tampered[index], "table")
        overlapped, in_line = _reports(tampered)
        assert overlapped == in_line
        assert overlapped.verdict is Verdict.DOES_NOT_VERIFY  # type: ignore[attr-defined]
        assert overlapped.finding.line == index + 1  # type: ignore[attr-defined]


def test_a_refusal_in_a_burst_behind_others_is_found_before_a_later_failure() -> None:
    """A refused equation several bursts behind the line being read: the later line's
    failure, raised at once, still yields to it."""
    lines = lines_of("table", keyed=True)
    behind = _BURST * (_IN_FLIGHT - 1) // 2  # records, two signatures each
    assert len(lines) > behind + 10
    lines[5] = _broken_signature(lines[5], "player")
    lines[5 + behind] = b"{not json"
    overlapped, in_line = _reports(lines)
    assert overlapped == in_line
    finding = overlapped.finding  # type: ignore[attr-defined]
    assert (overlapped.step, finding.code, finding.line) == (  # type: ignore[attr-defined]
        Step.SIGNATURES,
        VerifyCode.BAD_PLAYER_SIGNATURE,
        6,
    )


@pytest.mark.parametrize("name", KEYED)
def test_an_untouched_log_verifies_the_same_either_way(name: str) -> None:
    overlapped, in_line = _reports(lines_of(name, keyed=True))
    assert overlapped == in_line
    assert overlapped.verdict is Verdict.VERIFIED  # type: ignore[attr-defined]


def test_overlap_is_the_default() -> None:
    assert Settings().overlap_signatures


def test_under_fast_a_refused_genesis_signature_stops_the_pass_near_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--fast`` checks only the genesis's and the final record's equations, so a burst
    would never fill: a refused genesis signature, on a log chained on from the forged
    genesis (no other table signature is checked), must stop the pass at its line, as with
    overlap off, not wait unseen while the pass reads and replays the whole log."""
    lines = reseal(
        values_of("table", keyed=True), 0, key=TABLE_KEY, forged={0}, forged_key=OTHER_KEY
    )
    checked: list[int] = []
    real = step03_schema.check_schema

    def counting(line: Line) -> Record:
        checked.append(line.number)
        return real(line)

    monkeypatch.setattr(step03_schema, "check_schema", counting)
    raw = stream_of(lines).getvalue()
    fast = replace(PINNED, fast=True)
    overlapped = verify_stream(io.BytesIO(raw), fast, "game.jsonl")
    finding = overlapped.finding
    assert finding is not None
    assert (overlapped.step, finding.code, finding.line) == (
        Step.SIGNATURES,
        VerifyCode.BAD_TABLE_SIGNATURE,
        1,
    )
    assert max(checked) == 1 < len(lines)
    checked.clear()
    assert overlapped == verify_stream(
        io.BytesIO(raw), replace(fast, overlap_signatures=False), "game.jsonl"
    )
    assert max(checked) == 1
