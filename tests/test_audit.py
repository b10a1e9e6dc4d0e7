"""racing-demon audit: per-card breakdown of a verified log, and claims checked against it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from racing_demon.audit import HandAudit, audit_hands, check_claims
from racing_demon.replay import find_secret
from racing_demon.report.audit import audit_text
from racing_demon.schema import schema_errors

from conftest import invoke, log_bodies

GOLDEN = Path(__file__).resolve().parent / "golden" / "logs"
TABLE_LOG = GOLDEN / "table-3p-signed.jsonl"
# The golden logs' table key, shipped beside the sample game (scripts/regen_golden_logs.py).
TABLE_PUB = Path(__file__).resolve().parents[1] / "sample_games" / "table.pub"


def test_every_centre_card_names_the_record_that_placed_it() -> None:
    secret = find_secret(TABLE_LOG)
    assert secret is not None
    hands = audit_hands(TABLE_LOG, secret)
    records = log_bodies(TABLE_LOG)
    final = records[-1]
    assert [seat.total for seat in hands[-1].seats] == final["totals"]
    for hand in hands:
        assert records[hand.end_seq]["kind"] == "hand_end"
        assert [seat.claimed_score for seat in hand.seats] == records[hand.end_seq]["scores"]
        for seat in hand.seats:
            assert seat.score == seat.placed_points + seat.demon_penalty == seat.claimed_score
            for card, seq in seat.placed:
                assert card.owner == seat.seat
                placing = records[seq]
                assert placing["player"] == seat.seat
                text = str(placing["move"])
                assert ">f" in text and text.endswith(card.face)


def test_claims_hold_or_are_shown_wrong_with_their_records() -> None:
    secret = find_secret(TABLE_LOG)
    assert secret is not None
    hands = audit_hands(TABLE_LOG, secret)
    seat = hands[0].seats[1]
    claims = [
        {"seat": 1, "hand": 1, "score": seat.score},
        {"seat": 1, "hand": 1, "placed": len(seat.placed) + 2},
        {"seat": 1, "hand": 1, "demon_left": len(seat.demon_left)},
        {"seat": 1, "total": seat.total + 10},
        {"seat": 1, "hand": 9, "score": 0},
    ]
    final_seq = log_bodies(TABLE_LOG)[-1]["seq"]
    checks = check_claims(hands, claims, final_seq=final_seq)
    assert [check.holds for check in checks] == [True, False, True, False, False]
    assert checks[1].expected == len(seat.placed)
    assert checks[1].records == tuple(sorted({seq for _, seq in seat.placed}))
    assert checks[3].records == (*(hand.end_seq for hand in hands), final_seq)
    assert "no hand 9" in checks[4].message


def test_audit_command_text_and_exit_codes(tmp_path: Path) -> None:
    code, out = invoke("audit", str(TABLE_LOG), "--table-key", str(TABLE_PUB))
    assert code == 0
    assert out.startswith("VERIFIED")
    assert "hand 1: ended by" in out and "centre (card#record):" in out
    claim = tmp_path / "claim.json"
    claim.write_text(json.dumps({"claims": [{"seat": 0, "total": 1000}]}))
    code, out = invoke(
        "audit", str(TABLE_LOG), "--table-key", str(TABLE_PUB), "--claim", str(claim)
    )
    assert code == 1
    assert "WRONG seat 0's total = 1000 is wrong" in out


def test_audit_json_validates(tmp_path: Path) -> None:
    claim = tmp_path / "claim.json"
    claim.write_text(json.dumps({"claims": [{"seat": 2, "hand": 1, "demon_left": 3}]}))
    code, out = invoke(
        "audit", str(TABLE_LOG), "--table-key", str(TABLE_PUB), "--claim", str(claim), "--json"
    )
    document = json.loads(out)
    assert schema_errors("audit-report", document) == []
    assert code == (0 if document["claims"][0]["holds"] else 1)


def test_a_log_that_does_not_verify_is_not_audited(tmp_path: Path) -> None:
    lines = TABLE_LOG.read_bytes().splitlines(keepends=True)
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_bytes(b"".join(lines[:-1]))  # no final record
    code, out = invoke("audit", str(tampered), "--table-key", str(TABLE_PUB))
    assert code == 1
    assert "hand 1" not in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{nope", "not JSON"),
        ('{"claims": [{"seat": 0}]}', "$.claims[0]"),
        ('{"claims": [{"seat": 0, "hand": 1, "score": 1, "total": 2}]}', "$.claims[0]"),
    ],
)
def test_bad_claim_files_exit_2(tmp_path: Path, content: str, message: str) -> None:
    claim = tmp_path / "claim.json"
    claim.write_text(content)
    code, out = invoke(
        "audit", str(TABLE_LOG), "--table-key", str(TABLE_PUB), "--claim", str(claim)
    )
    assert code == 2
    assert message in out


def test_audit_needs_a_pinned_key() -> None:
    code, out = invoke("audit", str(TABLE_LOG))
    assert code == 2
    assert "--table-key" in out


def test_what_the_log_and_the_claim_file_supply_cannot_drive_the_terminal(
    tmp_path: Path,
) -> None:
    # A hand_end reason is an enum in the schema, so the reporter is tested directly.
    text = audit_text([HandAudit(hand=1, reason="call\n\x1b[2Jhand 2", end_seq=7, seats=())], [])
    assert text.splitlines()[0] == "hand 1: ended by call\\n\\x1b[2Jhand 2 (record 7)"
    claim = tmp_path / "claim\n\x1b[2J.json"
    claim.write_text("{nope")
    code, out = invoke(
        "audit", str(TABLE_LOG), "--table-key", str(TABLE_PUB), "--claim", str(claim)
    )
    assert code == 2
    assert "\x1b" not in out
    assert "claim\\n\\x1b[2J.json is not JSON" in out
