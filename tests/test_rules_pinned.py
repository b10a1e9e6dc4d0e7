"""Pinned rules (issue 15, section 1): the built-in profiles' names are reserved, ``--rules``
pins the rules a log must have, and every report shows the rules (docs/log-format.md §7,
"The rules: reserved names, `--rules`, and what reports show").

The attack the issue found: a genesis whose rules are named ``table``, at the built-in's
version, but score ten points a card, no demon penalty and a target of 1, verified as
``VERIFIED … profile table``. Now its report says the rules are custom and gives their
digest; ``--rules table`` refuses it (``WRONG_RULES``); and in a format-2 log the name alone
refuses it (``RESERVED_RULES_NAME``).
"""

from __future__ import annotations

import functools
import json
import random
import tempfile
from pathlib import Path

import pytest

from racing_demon.game.rules import Rules
from racing_demon.profiles import (
    BUILT_IN,
    ProfileError,
    builtin_digest,
    builtin_document,
    builtin_named,
    custom_variant,
    load_rules,
    pinned_digest,
    rules_from_document,
)
from racing_demon.report.verify import report_text, rules_text
from racing_demon.report_document import report_document
from racing_demon.schema import load_schema, schema_errors
from racing_demon.table import TableError
from racing_demon.testing.randomplay import play_match
from racing_demon.verify import (
    RulesFacts,
    Settings,
    SettingsError,
    Step,
    Verdict,
    VerifyCode,
    verify_stream,
)

from conftest import invoke
from tampering import (
    PINNED,
    SECRET,
    TABLE_KEY,
    TABLE_PUB,
    Value,
    as_format,
    assert_fails,
    lines_of,
    retitled,
    seal,
    stream_of,
    values_of,
    verify_lines,
    write,
    write_public_key,
)

NOTE = "named like the built-in profile table, but not it"


def _pinned(rules: str) -> Settings:
    return Settings(table_key=TABLE_PUB, rules=rules)


def _rules_of(values: list[Value]) -> Rules:
    return rules_from_document(values[0]["body"]["rules"])


# -- the attack ---------------------------------------------------------------------------


def tenfold_document() -> dict[str, object]:
    """The table profile under its own name and version, but ten points a card, no demon
    penalty and a match to 1."""
    document = builtin_document("table")
    document["scoring"] = {"per_foundation_card": 10, "per_demon_card": 0}
    document["match"]["target"] = 1
    return document


@functools.cache
@functools.cache
def _tenfold_lines(version: int = 1) -> tuple[bytes, ...]:
    """A log of format ``version`` of the tenfold rules under the name ``table`` (format 1
    as an older table wrote it): today's table refuses to write such a genesis (see
    below), so the match is played under another name and its genesis renamed and
    re-sealed."""
    document = tenfold_document()
    with tempfile.TemporaryDirectory() as directory:
        log = Path(directory) / "tenfold.jsonl"
        play_match(
            log,
            rules_from_document({**document, "name": "tenfold"}),
            TABLE_KEY,
            SECRET,
            [bytes([seat]) * 16 for seat in range(2)],
            random.Random(3).choice,
        )
        values = [json.loads(line) for line in log.read_bytes().splitlines()]
    values[0]["body"].update(rules=document, rules_sha256=rules_from_document(document).digest())
    return tuple(seal(as_format(values, version)))


def test_the_table_refuses_to_write_a_v2_log_that_abuses_a_built_in_name(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tenfold.jsonl"
    with pytest.raises(TableError, match="RESERVED_RULES_NAME"):
        play_match(
            path,
            rules_from_document(tenfold_document()),
            TABLE_KEY,
            SECRET,
            [bytes([seat]) * 16 for seat in range(2)],
            random.Random(3).choice,
        )
    assert not path.exists()


def tenfold_values() -> list[Value]:
    return [json.loads(line) for line in _tenfold_lines()]


def test_rules_named_table_that_score_ten_a_card(tmp_path: Path, pub: Path) -> None:
    values = tenfold_values()
    genesis = values[0]["body"]
    assert (genesis["v"], genesis["rules"]["name"]) == (1, "table")
    assert genesis["rules"]["version"] == builtin_document("table")["version"]
    digest = genesis["rules_sha256"]
    assert digest != builtin_digest("table")

    # Format 1, nothing pinned: it verifies, as before, but the report tells.
    report = verify_lines(tmp_path, list(_tenfold_lines()))
    assert report.verdict is Verdict.VERIFIED
    changed = (
        "scoring.per_foundation_card: 10 (table: 1)",
        "scoring.per_demon_card: 0 (table: -2)",
        "match.target: 1 (table: 100)",
    )
    assert report.rules == RulesFacts("table", 2, digest, False, False, "table", changed)
    text = report_text(report)
    assert f"rules table version 2 · custom ({NOTE}) · sha256 {digest} · not pinned" in text
    # Issue 29, item 14: say why the rules are custom, what differs from the built-in.
    for line in changed:
        assert f"\n    differs from the built-in profile: {line}\n" in text

    # Pinned to the built-in profile: refused, and the report still shows what it holds.
    log = write(tmp_path, list(_tenfold_lines()), "tenfold.jsonl")
    code, out = invoke("verify", str(log), "--table-key", str(pub), "--rules", "table")
    assert code == 1
    assert "DOES NOT VERIFY" in out and "(step 7, rules and packs)" in out
    assert "WRONG_RULES: the rules ('table' version 2) are not the pinned ones; " in out
    assert f"expected {builtin_digest('table')}, found {digest}" in out
    assert f"custom ({NOTE}) · sha256 {digest} · pinned (--rules)" in out
    code, out = invoke("verify", str(log), "--table-key", str(pub), "--rules", "table", "--json")
    [document] = json.loads(out)["reports"]
    assert document["finding"]["code"] == "WRONG_RULES"
    assert document["rules"] == {
        "name": "table",
        "version": 2,
        "sha256": digest,
        "builtin": False,
        "pinned": True,
        "note": NOTE,
        "differences": [
            "scoring.per_foundation_card: 10 (table: 1)",
            "scoring.per_demon_card: 0 (table: -2)",
            "match.target: 1 (table: 100)",
        ],
    }

    # Format 2: the name alone refuses it, pinned or not.
    v2 = list(_tenfold_lines(2))
    for settings in (PINNED, _pinned(builtin_digest("table"))):
        finding = assert_fails(
            verify_lines(tmp_path, v2, settings), Step.PACKS, VerifyCode.RESERVED_RULES_NAME, 1
        )
        assert (finding.expected, finding.found) == (builtin_digest("table"), digest)


# -- reserved names -----------------------------------------------------------------------


RETITLED = ('title: "House rules" (peer2peer: "Racing Demon, peer2peergames site rules")',)


def test_a_format_1_log_may_name_other_rules_like_a_built_in_profile(tmp_path: Path) -> None:
    values = as_format(retitled(values_of("short")), 1)  # peer2peer with another title
    rules = _rules_of(values)
    assert rules.name == "peer2peer" and builtin_named(rules) is None
    report = verify_lines(tmp_path, seal(values))
    assert report.verdict is Verdict.VERIFIED
    assert report.rules == RulesFacts(
        "peer2peer", 2, rules.digest(), False, False, "peer2peer", RETITLED
    )
    assert report.rules.note == "named like the built-in profile peer2peer, but not it"


def test_a_format_2_log_may_not(tmp_path: Path) -> None:
    values = as_format(retitled(values_of("short")), 2)
    report = verify_lines(tmp_path, seal(values))
    finding = assert_fails(report, Step.PACKS, VerifyCode.RESERVED_RULES_NAME, 1)
    assert "named like the built-in profile 'peer2peer' but are not it" in finding.message
    assert (finding.expected, finding.found) == (
        builtin_digest("peer2peer"),
        _rules_of(values).digest(),
    )
    assert report.rules is not None and report.rules.named_like == "peer2peer"
    assert report.not_replayed == report.records


def test_a_format_2_log_of_a_built_in_profile_or_a_renamed_variant_verifies(
    tmp_path: Path,
) -> None:
    short = as_format(values_of("short"), 2)  # the peer2peer profile as it is
    report = verify_lines(tmp_path, seal(short))
    assert report.verdict is Verdict.VERIFIED
    assert report.rules == RulesFacts("peer2peer", 2, builtin_digest("peer2peer"), True, False)

    values = as_format(retitled(values_of("short")), 2)
    renamed = custom_variant(_rules_of(values))
    assert renamed.name == "peer2peer-custom"
    values[0]["body"].update(rules=renamed.to_document(), rules_sha256=renamed.digest())
    report = verify_lines(tmp_path, seal(values))
    assert report.verdict is Verdict.VERIFIED
    assert report.rules == RulesFacts(
        "peer2peer-custom",
        2,
        renamed.digest(),
        False,
        False,
        differences=(
            'title: "House rules" (peer2peer: "Racing Demon, peer2peergames site rules")',
        ),
    )


@pytest.mark.parametrize("name", BUILT_IN)
def test_custom_variant_renames_an_altered_built_in_profile_only(name: str) -> None:
    rules = load_rules(name)
    assert custom_variant(rules) is rules  # the built-in profile itself
    document = builtin_document(name)
    document["match"]["max_hands"] = 7
    altered = rules_from_document(document)
    assert custom_variant(altered).name == f"{name}-custom"
    assert custom_variant(altered).to_document() == {**document, "name": f"{name}-custom"}
    document["name"] = "house"
    house = rules_from_document(document)
    assert custom_variant(house) is house  # not under a reserved name


# -- pinned rules -------------------------------------------------------------------------


def test_a_log_of_other_rules_than_the_pinned_ones_is_wrong_rules(tmp_path: Path) -> None:
    lines = lines_of("short")  # the peer2peer profile
    report = verify_lines(tmp_path, lines, _pinned(builtin_digest("peer2peer")))
    assert report.verdict is Verdict.VERIFIED
    assert report.rules is not None and (report.rules.builtin, report.rules.pinned) == (True, True)
    for other in ("table", "nertz"):
        finding = assert_fails(
            verify_lines(tmp_path, lines, _pinned(builtin_digest(other))),
            Step.PACKS,
            VerifyCode.WRONG_RULES,
            1,
        )
        assert (finding.expected, finding.found) == (
            builtin_digest(other),
            builtin_digest("peer2peer"),
        )


def test_pinned_rules_are_a_digest() -> None:
    for value in ("table", "AB" * 32, "ab" * 31):
        with pytest.raises(SettingsError, match="not a digest"):
            Settings(rules=value)


def test_a_pin_is_a_name_a_profile_file_or_a_digest(tmp_path: Path) -> None:
    assert pinned_digest("nertz") == builtin_digest("nertz")
    path = tmp_path / "tenfold.json"
    path.write_text(json.dumps(tenfold_document()))
    assert pinned_digest(str(path)) == rules_from_document(tenfold_document()).digest()
    assert pinned_digest("0f" * 32) == pinned_digest("0F" * 32) == "0f" * 32
    for value in ("house", "0G" * 32, "table.yaml", str(tmp_path / "missing.json")):
        with pytest.raises(ProfileError):
            pinned_digest(value)


# -- the command line ---------------------------------------------------------------------


@pytest.fixture
def tenfold(tmp_path: Path) -> Path:
    return write(tmp_path, list(_tenfold_lines()), "tenfold.jsonl")


@pytest.fixture
def tenfold_profile(tmp_path: Path) -> Path:
    path = tmp_path / "tenfold.json"
    path.write_text(json.dumps(tenfold_document()))
    return path


@pytest.mark.parametrize("command", ["verify", "audit"])
def test_rules_pinned_on_the_command_line(
    command: str, tenfold: Path, tenfold_profile: Path, pub: Path
) -> None:
    digest = rules_from_document(tenfold_document()).digest()
    base = [command, str(tenfold), "--table-key", str(pub)]
    for pin in (str(tenfold_profile), digest):
        code, out = invoke(*base, "--rules", pin)
        assert code == 0, out
        assert f"sha256 {digest} · pinned (--rules)" in out
    for pin in ("table", "nertz", builtin_digest("peer2peer")):
        code, out = invoke(*base, "--rules", pin)
        assert code == 1 and ": WRONG_RULES: " in out, out
    code, out = invoke(*base, "--json")
    assert code == 0
    document = json.loads(out)
    report = document["reports"][0] if command == "verify" else document["verification"]
    assert report["rules"]["pinned"] is False and report["rules"]["sha256"] == digest
    schema = "audit-report" if command == "audit" else "verification-report"
    assert schema_errors(schema, document) == []


def test_a_batch_pins_the_rules_of_every_log(tmp_path: Path, tenfold: Path, pub: Path) -> None:
    folder = tmp_path / "archive"
    folder.mkdir()
    write(folder, lines_of("short"), "a-peer2peer.jsonl")
    write(folder, list(_tenfold_lines()), "b-tenfold.jsonl")
    report = tmp_path / "results.jsonl"
    args = ["verify", str(folder), "--table-key", str(pub), "--jobs", "1", "--report", str(report)]
    code, out = invoke(*args, "--rules", "peer2peer")
    assert code == 1
    assert [line for line in out.splitlines() if line and not line.startswith(" ")] == [
        f"VERIFIED  {folder}/a-peer2peer.jsonl",
        f"DOES NOT VERIFY  {folder}/b-tenfold.jsonl  (step 7, rules and packs)",
    ]
    peer2peer = builtin_digest("peer2peer")
    assert f"  rules peer2peer version 2 · built-in · sha256 {peer2peer} · pinned (--rules)" in out
    assert f"  rules table version 2 · custom ({NOTE}) · sha256 " in out
    assert "\n    WRONG_RULES " in out  # the summary's reason
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert [line["rules"]["builtin"] for line in lines] == [True, False]
    assert all(schema_errors("verification-report-line", line) == [] for line in lines)
    assert invoke(*args, "--force")[0] == 0  # unpinned, both verify


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("house", "'house' is neither a built-in profile (table, peer2peer, nertz), nor a .json"),
        ("AB" * 31, "nor a rules digest (64 hex)"),
        ("missing.json", "cannot read profile missing.json"),
        ("odd.json", "invalid rules profile: $.stock.turn"),
    ],
    ids=["unknown-name", "short-digest", "missing-file", "invalid-profile"],
)
@pytest.mark.parametrize("command", ["verify", "audit"])
def test_a_bad_rules_value_exits_2_with_one_line(
    command: str, value: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    document = builtin_document("table")
    document["stock"]["turn"] = 2
    document["work"]["slide_under"] = "no"
    Path("odd.json").write_text(json.dumps(document))
    write(tmp_path, lines_of("short"), "game.jsonl")
    write_public_key(tmp_path / "table.pub")
    code, out = invoke(command, "game.jsonl", "--table-key", "table.pub", "--rules", value)
    assert code == 2
    assert message in out and "Traceback" not in out
    [error] = [line for line in out.splitlines() if line.startswith("Error:")]
    assert "--rules" in error and message in error


# -- what reports show --------------------------------------------------------------------


def test_a_report_without_a_genesis_shows_no_rules() -> None:
    report = verify_stream(stream_of([]), PINNED)
    assert report.rules is None and report_document(report)["rules"] is None
    assert "rules " not in report_text(report)


def test_rules_that_are_no_profile_have_no_digest(tmp_path: Path) -> None:
    values = values_of("short")
    values[0]["body"]["rules"]["players"]["max"] = "eight"
    report = verify_lines(tmp_path, seal(values), _pinned(builtin_digest("peer2peer")))
    assert_fails(report, Step.PACKS, VerifyCode.BAD_RULES, 1)
    assert report.rules == RulesFacts("peer2peer", 2, None, False, True, "peer2peer")
    assert (
        "rules peer2peer version 2 · custom (named like the built-in profile peer2peer, but not"
        " it) · sha256 -, not a valid profile · pinned (--rules)"
    ) in report_text(report)
    values[0]["body"]["rules"].update(name=["table"], version="2")
    report = verify_lines(tmp_path, seal(values))
    assert report.rules == RulesFacts(None, None, None, False, False)
    assert rules_text(report.rules).startswith("rules ? · custom · ")


def test_an_unfinished_log_shows_its_rules(tmp_path: Path) -> None:
    lines = seal(retitled(values_of("short")))[:10]
    report = verify_lines(tmp_path, lines, _pinned(builtin_digest("nertz")))
    assert report.verdict is Verdict.UNFINISHED  # step 7 waits for the secret
    assert report.rules is not None and report.rules.named_like == "peer2peer"
    assert report.rules.pinned


def test_the_audit_schema_shares_the_rules_definition() -> None:
    audit, verification = load_schema("audit-report"), load_schema("verification-report")
    assert audit["$defs"]["rules"] == verification["$defs"]["rules"]
    assert audit["$defs"]["text"] == verification["$defs"]["text"]
