"""The audit as a library call: ``run_audit`` without click (issue 30, point 2: "Move the
use cases down: ... `run_audit(...)` ...; text and JSON reporters chosen by name ... a
game server can call every use case without click")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from racing_demon.audit_run import (
    AuditRun,
    AuditUnreadable,
    ClaimsError,
    audit_log,
    read_claims,
    run_audit,
)
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.outcomes import ExitCode
from racing_demon.report.audit import AUDIT_REPORTERS, audit_reporter_named
from racing_demon.report.text import Verbosity

from conftest import invoke

SAMPLES = Path(__file__).resolve().parents[1] / "sample_games"
DISPUTED = SAMPLES / "disputed"
TABLE_PUB = SAMPLES / "table.pub"
TABLE_KEY = raw_public_bytes(load_public_key(TABLE_PUB))


def _printed(run: AuditRun, name: str, verbosity: Verbosity = Verbosity.NORMAL) -> tuple[int, str]:
    """What ``run_audit`` prints through the reporter ``name``, as the command line's
    output (a line per ``echo``), with its exit code."""
    out: list[str] = []

    def echo(text: str, to_stderr: bool) -> None:
        assert not to_stderr
        out.append(text + "\n")

    code = run_audit(run, audit_reporter_named(name, verbosity, echo))
    return code, "".join(out)


@pytest.mark.parametrize(
    ("name", "options"),
    [("text", ["--color", "always"]), ("json", ["--json"]), ("text", ["-q", "--color", "always"])],
)
@pytest.mark.parametrize(
    "stem", ["forked-history", "refused-behind-an-old-head", "delayed-submission"]
)
def test_run_audit_prints_what_the_command_prints(stem: str, name: str, options: list[str]) -> None:
    """A sample with receipts (and a copy of the log), audited by a library call, prints
    exactly what ``racing-demon audit`` prints, colour included, with its exit code."""
    log = DISPUTED / f"{stem}.jsonl"
    receipts = sorted(DISPUTED.glob(f"{stem}.seat*.receipts.jsonl"))
    assert receipts
    against = SAMPLES / "table-3p-signed.jsonl"
    verbosity = Verbosity.QUIET if "-q" in options else Verbosity.NORMAL
    run = AuditRun(log=log, table_key=TABLE_KEY, receipts=receipts, against=[against])
    code, printed = _printed(run, name, verbosity)
    cli_args = [str(log), "--table-key", str(TABLE_PUB), "--against", str(against)]
    for path in receipts:
        cli_args += ["--receipts", str(path)]
    assert (code, printed) == invoke("audit", *cli_args, *options)
    assert code == ExitCode.NO  # each sample holds evidence against the table
    assert ("\x1b[" in printed) is (name == "text")  # the colour is compared too


def test_run_audit_checks_claims_as_the_command_does() -> None:
    log, claim = DISPUTED / "wrong-claim.jsonl", DISPUTED / "wrong-claim.claim.json"
    run = AuditRun(log=log, table_key=TABLE_KEY, claims=read_claims(claim))
    audit = audit_log(run)
    assert audit.hands and audit.checks and not all(check.holds for check in audit.checks)
    for name, options in (("text", ["--color", "always"]), ("json", ["--json"])):
        expected = invoke(
            "audit", str(log), "--table-key", str(TABLE_PUB), "--claim", str(claim), *options
        )
        assert _printed(run, name) == expected


def test_the_reporters_are_chosen_by_name() -> None:
    assert sorted(AUDIT_REPORTERS) == ["json", "text"]
    with pytest.raises(KeyError):
        audit_reporter_named("xml")


def test_an_unreadable_receipts_file_is_an_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "gone\x1b[2J.receipts.jsonl"
    run = AuditRun(log=SAMPLES / "table-3p-signed.jsonl", table_key=TABLE_KEY, receipts=[missing])
    with pytest.raises(AuditUnreadable, match=r"cannot read .*gone\\x1b\[2J\.receipts\.jsonl"):
        run_audit(run, audit_reporter_named("text"))


def test_a_claim_file_that_is_not_one_is_a_claims_error(tmp_path: Path) -> None:
    claim = tmp_path / "claim.json"
    claim.write_text('{"claims": [{"seat": 0}]}')
    with pytest.raises(ClaimsError, match=r"\$\.claims\[0\]"):
        read_claims(claim)


def test_the_use_case_needs_no_click() -> None:
    """A game server imports the use case and its reporters without the command line."""
    import subprocess

    code = (
        "import sys, racing_demon.audit_run, racing_demon.report.audit; "
        "sys.exit('click' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
