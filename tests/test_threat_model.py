"""docs/threat-model.md stays true: every test it names exists, every code it names is one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from racing_demon.evidence import EvidenceCode
from racing_demon.game.flow import FlowCode
from racing_demon.log.reader import ReadCode
from racing_demon.log.receipts import ReceiptCode, SubmissionCode
from racing_demon.log.signing import SignatureCode
from racing_demon.serve.journal import JournalCode
from racing_demon.serve.protocol import ServeCode
from racing_demon.verify import VerifyCode

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "threat-model.md").read_text(encoding="utf-8")
ATTACKS = DOC[DOC.index("## 5.") : DOC.index("## 6.")]
TESTS = "\n".join(
    path.read_text(encoding="utf-8")
    for folder in ("tests", "tests/serve", "tests/browser")
    for path in (ROOT / folder).glob("*.py")
)
CODES = {
    code.value
    for enum in (
        VerifyCode,
        FlowCode,
        ReadCode,
        SignatureCode,
        ReceiptCode,
        EvidenceCode,
        SubmissionCode,
        ServeCode,
        JournalCode,
    )
    for code in enum
}


@pytest.mark.parametrize("name", sorted(set(re.findall(r"`(test_\w+)", ATTACKS))))
def test_every_named_test_exists(name: str) -> None:
    assert re.search(rf"^def {name}\(", TESTS, re.MULTILINE), name


@pytest.mark.parametrize("case", sorted(set(re.findall(r"`(?:test_\w+)?\[([^\]]+)\]`", ATTACKS))))
def test_every_named_case_exists(case: str) -> None:
    assert re.search(rf"""["']{re.escape(case)}["']""", TESTS), case


@pytest.mark.parametrize("code", sorted(set(re.findall(r"`([A-Z][A-Z0-9_]+)`", ATTACKS))))
def test_every_named_code_is_a_code(code: str) -> None:
    assert code in CODES


def test_every_verifier_code_is_in_the_attack_tables() -> None:
    """A code the verifier can give but the threat model never names is an attack untold."""
    named = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", ATTACKS))
    untold = (
        {code.value for code in (*VerifyCode, *FlowCode)} - named - {"UNREADABLE"}
    )  # a missing file is no attack
    assert not untold


def test_every_evidence_code_is_in_the_attack_tables() -> None:
    named = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", ATTACKS))
    assert {code.value for code in (*EvidenceCode, *ReceiptCode)} <= named
