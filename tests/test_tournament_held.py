"""A tournament table that has played its last hand and holds its final record refuses a
submission with its own reason, FINAL_HELD, naming its last ``hand_end``; MATCH_OVER only
once the final record is written (issue 28, point 3: "Give that state its own reason
(played out, final held) that the audit judges founded exactly when the named record is
the last `hand_end` and the next is the final")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from racing_demon.cli import main
from racing_demon.game.deal import MatchSeed
from racing_demon.game.duplicate import Shape
from racing_demon.log.keys import public_pem
from racing_demon.log.reader import read_lines
from racing_demon.log.receipts import record_reference
from racing_demon.profiles import load_rules
from racing_demon.table import PlayerInfo, SubmissionCode, SubmissionError, Table
from racing_demon.testing.randomplay import play_on, word_chooser
from racing_demon.tournament.plan import Contribution, make_plan

from tampering import TABLE_KEY

SECRET = bytes(range(60, 92))  # the organiser's
SHAPE = Shape("Held cup", tables=2, seats=2, hands=1)


def last_line(path: Path) -> tuple[dict[str, object], bytes]:
    with path.open("rb") as stream:
        lines = list(read_lines(stream))
    return lines[-1].value["body"], lines[-1].raw  # type: ignore[return-value]


def refusal(table: Table, t_ms: int) -> dict[str, object]:
    """Seat 0's next submission at ``t_ms``: refused, its receipt's body."""
    with pytest.raises(SubmissionError) as refused:
        table.submit(0, "0 call", t_ms, table.next_n(0))
    receipt = refused.value.receipt
    assert receipt is not None
    body: dict[str, object] = json.loads(receipt)["body"]
    body["code"] = refused.value.code
    body["line"] = receipt
    return body


def test_a_held_table_refuses_with_final_held_then_match_over(tmp_path: Path) -> None:
    plan = make_plan(SECRET, SHAPE, load_rules("nertz"), (Contribution("club", b"c" * 32),))
    log = tmp_path / "table-1.jsonl"
    table = Table.create(
        log,
        plan.rules,
        [PlayerInfo("a", "red"), PlayerInfo("b", "blue")],
        TABLE_KEY,
        SECRET,
        [b"a" * 16, b"b" * 16],
        tournament=plan.tag(1),
    )
    play_on(table, word_chooser(MatchSeed.from_plain("held cup table 1")))
    assert table.played_out and not table.finished

    held = refusal(table, table.t_ms + 60_000)  # past any tick play_on advanced to
    hand_end, hand_end_line = last_line(log)
    assert held["code"] is SubmissionCode.FINAL_HELD
    assert (held["outcome"], held["reason"]) == ("refused", "FINAL_HELD")
    assert hand_end["kind"] == "hand_end"
    assert (held["seq"], held["record"]) == (hand_end["seq"], record_reference(hand_end_line))

    table.reveal(table.t_ms + 61_000)
    over = refusal(table, table.t_ms + 10)
    final, final_line = last_line(log)
    assert over["code"] is SubmissionCode.MATCH_OVER
    assert final["kind"] == "final" and final["seq"] == hand_end["seq"] + 1  # type: ignore[operator]
    assert (over["seq"], over["record"]) == (final["seq"], record_reference(final_line))

    # Both refusals were founded: the audit with the seat's receipts finds nothing.
    receipts = tmp_path / "table-1.seat0.receipts.jsonl"
    receipts.write_bytes(held["line"] + b"\n" + over["line"] + b"\n")  # type: ignore[operator]
    pub = tmp_path / "table.pub"
    pub.write_bytes(public_pem(TABLE_KEY))
    args = ["audit", str(log), "--table-key", str(pub), "--receipts", str(receipts), "--json"]
    audited = CliRunner().invoke(main, args)
    assert audited.exit_code == 0, audited.output
    report = json.loads(audited.output)
    assert report["receipts"]["read"] == 2
    assert report["evidence"] == [], report["evidence"]
