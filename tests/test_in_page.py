"""The browser page's entry, ``verify.in_page.judge`` (issue 34; design: "returning the JSON
text of the one-log report exactly as `verify --json` prints it for that log (same member
names and values), plus the equations member. Pure: no file, no network, no clock").

Its reports over many logs, with and without the fast libraries, are compared with
``verify --json``'s in tests/test_without_fast_libraries.py; here, what leaving the
equations to the host means, and what it never means.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest

from racing_demon.cli import main
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.log.reader import Limits
from racing_demon.log.records import body_bytes
from racing_demon.log.signing import pae, verify_raw
from racing_demon.report_document import report_document
from racing_demon.verify import Settings, SettingsError, verify_log
from racing_demon.verify.in_page import judge
from racing_demon.verify.settings import Equations, FailedEquation
from tests.tampering import EQUATION_FIRST

SAMPLES = Path(__file__).resolve().parent.parent / "sample_games"
KEY = raw_public_bytes(load_public_key(SAMPLES / "table.pub"))


def judged(name: str) -> dict[str, object]:
    path = SAMPLES / name
    text = judge(
        path.read_bytes(), table_key=KEY.hex(), rules=None, unsafe_unpinned=False, source=str(path)
    )
    report: dict[str, object] = json.loads(text)
    return report


def test_the_report_is_verify_json_s_document_and_says_the_host_checks_the_equations() -> None:
    name = "disputed/illegal-move-re-signed.jsonl"
    path = SAMPLES / name
    expected = report_document(verify_log(path, Settings(table_key=KEY)))
    text = judge(
        path.read_bytes(), table_key=KEY.hex(), rules=None, unsafe_unpinned=False, source=str(path)
    )
    assert text == json.dumps({**expected, "equations": "by_host"}, indent=2)


def test_a_signature_whose_equation_fails_is_left_to_the_host() -> None:
    """Design A: "the group equation itself, which it takes as holding"; the report says so,
    and the page's own check of the equation gives the verdict."""
    name = "disputed/forged-move-signed-by-another-player.jsonl"
    by_command = verify_log(SAMPLES / name, Settings(table_key=KEY))
    assert by_command.finding is not None and by_command.finding.rule == "BAD_SIGNATURE"
    report = judged(name)
    assert (report["verdict"], report["equations"]) == ("verified", "by_host")


def test_every_other_check_of_a_signature_still_runs() -> None:
    """Design B: "step 5 does every check it does today ... except the group equation"."""
    lines = (SAMPLES / "valid/table-4p-tie-signed.jsonl").read_bytes().splitlines()
    index = next(i for i, line in enumerate(lines) if b'"player":"' in line)
    value = json.loads(lines[index])
    value["sigs"]["player"] = value["sigs"]["player"][:64] + "ff" * 32  # S beyond the order
    lines[index] = json.dumps(value, separators=(",", ":"), sort_keys=True).encode()
    data = b"".join(line + b"\n" for line in lines)
    report = json.loads(judge(data, table_key=KEY.hex(), rules=None, unsafe_unpinned=False))
    finding = report["finding"]
    assert (finding["code"], finding["rule"], finding["line"]) == (
        "BAD_PLAYER_SIGNATURE",
        "NON_CANONICAL_S",
        index + 1,
    )


def without_its_final(name: str) -> tuple[bytes, str]:
    """The log ``name`` as the play page holds it when it judges (every record before the
    final one), and the dealer secret the final record's body reveals."""
    lines = (SAMPLES / name).read_bytes().splitlines(keepends=True)
    secret: str = json.loads(lines[-1])["body"]["secret"]
    return b"".join(lines[:-1]), secret


@pytest.mark.parametrize(
    ("name", "verdict"),
    [
        ("valid/table-4p-tie-signed.jsonl", ("unfinished", "UNFINISHED", 0)),
        ("disputed/legal-move-wrongly-bounced.jsonl", ("does_not_verify", "WRONGLY_BOUNCED", 42)),
    ],
)
def test_with_the_secret_an_unfinished_log_is_judged_as_verify_secret_judges_it(
    tmp_path: Path, name: str, verdict: tuple[str, str, int]
) -> None:
    """The play page's question (docs/playing.md): with the secret the final body reveals,
    is every record before the final one right? ``judge(..., secret=)`` answers as
    ``verify --secret`` does, replaying the unfinished log to its end."""
    data, secret = without_its_final(name)
    path = tmp_path / "copy.jsonl"
    path.write_bytes(data)
    settings = Settings(table_key=KEY, seed=bytes.fromhex(secret))
    expected = report_document(verify_log(path, settings))
    text = judge(
        data,
        table_key=KEY.hex(),
        rules=None,
        unsafe_unpinned=False,
        source=str(path),
        secret=secret,
    )
    assert text == json.dumps({**expected, "equations": "by_host"}, indent=2)
    report = json.loads(text)
    assert (report["verdict"], report["finding"]["code"], report["not_replayed"]) == verdict


def test_without_the_secret_an_unfinished_log_is_not_replayed() -> None:
    data, _ = without_its_final("disputed/legal-move-wrongly-bounced.jsonl")
    report = json.loads(judge(data, table_key=KEY.hex(), rules=None, unsafe_unpinned=False))
    assert report["verdict"] == "unfinished"
    assert report["not_replayed"] > 0


@pytest.mark.parametrize("secret", ["", "AB" * 32, "ab" * 31, "ab" * 32 + "\n"])
def test_a_secret_that_is_no_64_hex_is_refused(secret: str) -> None:
    with pytest.raises(SettingsError, match="dealer secret"):
        judge(b"", table_key=None, rules=None, unsafe_unpinned=True, secret=secret)


def test_the_limits_are_verify_s_limits() -> None:
    """``view --engine --max-records 10``: the engine judges under the limits the page's
    embedded verdict was reached under, so the two agree (TOO_MANY_RECORDS, step 1)."""
    path = SAMPLES / "valid/table-4p-tie-signed.jsonl"
    limits = Limits(max_records=10)
    expected = report_document(verify_log(path, Settings(table_key=KEY, limits=limits)))
    text = judge(
        path.read_bytes(),
        table_key=KEY.hex(),
        rules=None,
        unsafe_unpinned=False,
        source=str(path),
        limits={"max_records": 10},
    )
    assert text == json.dumps({**expected, "equations": "by_host"}, indent=2)
    assert json.loads(text)["finding"]["code"] == "TOO_MANY_RECORDS"


@pytest.mark.parametrize(
    ("limits", "why"),
    [({"max_rows": 10}, "no limit is named max_rows"), ({"max_records": 0}, "at least 1")],
)
def test_limits_that_cannot_be_used_are_refused(limits: dict[str, int], why: str) -> None:
    with pytest.raises(SettingsError, match=why):
        judge(b"", table_key=None, rules=None, unsafe_unpinned=True, limits=limits)


def table_equations_that_fail(data: bytes) -> list[dict[str, str]]:
    """What a host that checks the table's signatures itself names: each table signature
    whose group equation does not hold, as ``judge`` takes it."""
    failed = []
    for raw in data.splitlines():
        value = json.loads(raw)
        message = pae(value["body"]["kind"], body_bytes(raw), value["body"]["v"])
        signature = bytes.fromhex(value["sigs"]["table"])
        if verify_raw(KEY, message, signature) is not None:
            failed.append(
                {
                    "key": KEY.hex(),
                    "signature": signature.hex(),
                    "message_sha256": hashlib.sha256(message).hexdigest(),
                }
            )
    return failed


@pytest.mark.parametrize("change", EQUATION_FIRST)
def test_with_the_host_s_failed_equations_the_report_is_verify_s(
    tmp_path: Path, change: Callable[[list[bytes]], int]
) -> None:
    """An equation that fails comes first where ``verify`` checks it first: given the
    equations the host found failing, ``judge`` finds the first failure in the very order
    of ``verify`` (the table's signature before a submission's number on one line, every
    line's signatures before the end of the file)."""
    lines = (SAMPLES / "valid/table-4p-tie-signed.jsonl").read_bytes().splitlines()
    index = change(lines)
    data = b"".join(line + b"\n" for line in lines)
    path = tmp_path / "changed.jsonl"
    path.write_bytes(data)
    expected = report_document(verify_log(path, Settings(table_key=KEY)))
    assert expected["finding"]["code"] == "BAD_TABLE_SIGNATURE"
    assert expected["finding"]["line"] == index + 1
    failed = table_equations_that_fail(data)
    assert len(failed) == 1
    arguments: dict[str, Any] = {
        "table_key": KEY.hex(),
        "rules": None,
        "unsafe_unpinned": False,
        "source": str(path),
    }
    text = judge(data, failed_equations=failed, **arguments)
    assert text == json.dumps({**expected, "equations": "by_host"}, indent=2)
    # Without them it finds a later failure: the host alone could not order the two.
    assert json.loads(judge(data, **arguments))["finding"]["code"] != "BAD_TABLE_SIGNATURE"


@pytest.mark.parametrize(
    ("failed", "why"),
    [
        ({"key": "ab" * 32, "signature": "ab" * 64}, "the members key, signature, message_sha256"),
        ({"key": "ab" * 32, "signature": "ab" * 63, "message_sha256": "ab" * 32}, "signature"),
        ({"key": "AB" * 32, "signature": "ab" * 64, "message_sha256": "ab" * 32}, "key"),
    ],
)
def test_a_failed_equation_that_is_not_one_is_refused(failed: dict[str, str], why: str) -> None:
    with pytest.raises(SettingsError, match=why):
        judge(b"", table_key=None, rules=None, unsafe_unpinned=True, failed_equations=[failed])


def test_only_a_host_names_failed_equations() -> None:
    failed = frozenset({FailedEquation(bytes(32), bytes(64), bytes(32))})
    with pytest.raises(SettingsError, match="BY_HOST"):
        Settings(failed_equations=failed)


@pytest.mark.parametrize("table_key", ["", "AB" * 32, "ab" * 31, " " + "ab" * 32, "00" * 32])
def test_a_table_key_that_is_no_raw_key_is_refused(table_key: str) -> None:
    with pytest.raises(SettingsError, match="table key"):
        judge(b"", table_key=table_key, rules=None, unsafe_unpinned=False)


def test_the_command_has_no_way_to_leave_the_equations_to_anyone() -> None:
    """Design B: "The host-equations setting is NOT a CLI option (a verifier that skips
    signatures must not be one flag away)"."""
    assert isinstance(main, click.Group)
    command = main.get_command(click.Context(main), "verify")
    assert command is not None
    words = {name for param in command.params for name in [*param.opts, param.name or ""]}
    assert not any("equation" in word or "host" in word for word in words)
    assert Settings().equations is Equations.CHECKED
