"""``verify --require GUARANTEE``: an archive refuses a log that lacks a guarantee.

Issue 28, point 6: "`verify --require GUARANTEE` (repeatable, names from the report's
guarantees, e.g. keyed, v2-or-later, every seat accepted) refuses with exit 1 a log that
lacks one, so an archive can refuse a downgraded (re-expressed as unkeyed v1) log." Every
test goes through the command line, as an archive's script would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from racing_demon.cli import main
from racing_demon.log.records import FORMAT_VERSION
from racing_demon.schema import schema_errors
from racing_demon.testing.tamper import Downgrade, apply_edits
from racing_demon.verify.assurance import Requirement

from tampering import TABLE_KEY, seal, values_of, write, write_public_key

SAMPLES = Path(__file__).resolve().parents[1] / "sample_games"
TABLE_PUB = SAMPLES / "table.pub"
V1 = [SAMPLES / "v1" / "table-3p-signed.jsonl", *sorted((SAMPLES / "v1" / "valid").iterdir())]
V1_KEYED = [log for log in V1 if log.stem.endswith("-signed")][:2]
V2_KEYED = SAMPLES / "table-3p-signed.jsonl"  # format v3, every seat accepted
V2_UNKEYED = SAMPLES / "valid" / "table-2p-to-100.jsonl"


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str

    @property
    def document(self) -> Any:
        return json.loads(self.stdout)


def verify(*args: str | Path) -> Run:
    result = CliRunner().invoke(main, ["verify", *map(str, args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


def downgraded(tmp_path: Path) -> tuple[Path, Path]:
    """A keyed v2 game, and the same game as the table that signed it can re-express it:
    unkeyed, format v1, the players' signatures gone and the seats' entropy kept as plain
    bytes, so that it deals the same packs and verifies with the same scores. With the
    table's public key."""
    keyed = write(tmp_path, seal(values_of("short", keyed=True), keep_accepts=True), "v2.jsonl")
    weaker = tmp_path / "v1.jsonl"
    edits = (Downgrade({"kind": "genesis", "v": FORMAT_VERSION}),)  # the corpus's too
    weaker.write_bytes(apply_edits(keyed.read_bytes(), edits, table_key=TABLE_KEY))
    return keyed, weaker


def test_the_v1_corpus_lacks_deal_bound_and_the_v2_sample_has_it() -> None:
    """Every verified v1 sample is refused by `--require deal_bound` (exit 1, with the
    reason), and the keyed v2 sample passes it and every other requirement."""
    assert verify(*V1, "--table-key", TABLE_PUB, "--jobs", "1").code == 0
    run = verify(*V1, "--table-key", TABLE_PUB, "--require", "deal_bound", "--json", "--jobs", "1")
    assert run.code == 1
    for report in run.document["reports"]:
        assert report["verdict"] == "does_not_verify" and report["exit_code"] == 1, report
        assert report["finding"]["code"] == "REQUIREMENT_UNMET"
        why = "format v1: the entropy is not bound" if report["keyed"] else "the table wrote"
        assert report["finding"]["message"].startswith(f"--require deal_bound: {why}")
        assert report["assurance"] is not None  # every check held: what it proves is said
    assert run.document["summary"]["reasons"] == {"does_not_verify": {"REQUIREMENT_UNMET": len(V1)}}
    everything = [arg for name in Requirement for arg in ("--require", name)]
    run = verify(V2_KEYED, "--table-key", TABLE_PUB, *everything)
    assert run.code == 0 and run.stdout.startswith("VERIFIED"), run.stdout


def test_a_downgraded_log_verifies_but_an_archive_refuses_it(tmp_path: Path) -> None:
    """The table re-expresses a keyed v2 game as unkeyed v1: it verifies (the table's word
    is all an unkeyed v1 log needs), and `--require` refuses it, naming each requirement
    it lacks and why."""
    keyed, weaker = downgraded(tmp_path)
    key = write_public_key(tmp_path / "table.pub")
    assert verify(weaker, "--table-key", key).code == 0
    wanted = ("--require", "keyed", "--require", "v2-or-later", "--require", "deal_bound")
    assert verify(keyed, "--table-key", key, *wanted).code == 0
    run = verify(weaker, "--table-key", key, *wanted, "-v")
    assert run.code == 1
    assert run.stdout.startswith(f"DOES NOT VERIFY  {weaker}\n")
    for line in (
        "REQUIREMENT_UNMET: --require keyed: no seat lists a key: the table signs for every seat",
        "REQUIREMENT_UNMET: --require v2_or_later: format v1: ",
        "REQUIREMENT_UNMET: --require deal_bound: the table wrote every seat's entropy: the "
        "deal rests on its word",
        "step 10  final record             passed",
    ):
        assert line in run.stdout, run.stdout
    quiet = verify(weaker, "--table-key", key, *wanted)
    assert "REQUIREMENT_UNMET: --require keyed: " in quiet.stdout
    assert "(and 2 more)" in quiet.stdout


def test_every_seat_accepted_is_result_accepted(tmp_path: Path) -> None:
    """A keyed v2 log where a seat did not accept the result is refused by
    `--require result_accepted`, which names the seat."""
    values = values_of("short", keyed=True)
    values[-1]["sigs"]["accepts"][0] = None
    log = write(tmp_path, seal(values, len(values), keep_accepts=True))
    key = write_public_key(tmp_path / "table.pub")
    assert verify(log, "--table-key", key, "--require", "deal_bound").code == 0
    run = verify(log, "--table-key", key, "--require", "result_accepted")
    assert run.code == 1
    assert "REQUIREMENT_UNMET: --require result_accepted: seat 0 did not accept" in run.stdout


def test_a_tournament_table_lacks_deal_bound() -> None:
    """A tournament table's deal is the plan's: `--require deal_bound` refuses it and says
    what the deal rests on."""
    log = SAMPLES / "tournament" / "table-1.jsonl"
    run = verify(log, "--table-key", TABLE_PUB, "--require", "deal_bound")
    assert run.code == 1
    assert "--require deal_bound: a tournament table: the packs are those of plan " in run.stdout
    assert verify(log, "--table-key", TABLE_PUB, "--require", "views_bound").code == 0


def test_json_and_the_report_file_agree_in_a_batch(tmp_path: Path) -> None:
    """Batch mode: `--json` and every `--report` line carry the same refusal, and both
    validate against their schemas."""
    report = tmp_path / "results.jsonl"
    logs = (V2_KEYED, V1[0], V2_UNKEYED)
    run = verify(
        *logs, "--table-key", TABLE_PUB, "--require", "moves_signed", "--json", "--report", report
    )
    assert run.code == 1
    document = run.document
    assert schema_errors("verification-report", document) == []
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert lines == document["reports"]
    for line in lines:
        assert schema_errors("verification-report-line", line) == []
    assert [line["verdict"] for line in lines] == ["verified", "verified", "does_not_verify"]
    assert lines[2]["finding"]["message"] == (
        "--require moves_signed: no player signs: who moved rests on the table's word"
    )
    text = verify(*logs, "--table-key", TABLE_PUB, "--require", "moves_signed", "--jobs", "1")
    assert text.code == 1
    assert (
        f"DOES NOT VERIFY  {V2_UNKEYED}\n  REQUIREMENT_UNMET: --require moves_signed" in text.stdout
    )
    assert "\n    REQUIREMENT_UNMET " in text.stdout  # the summary's reason


def test_a_resumed_batch_does_not_reuse_verdicts_given_other_requirements(
    tmp_path: Path,
) -> None:
    """The requirements are settings of the verdict: a report file written without them is
    no cache for a run with them."""
    report = tmp_path / "results.jsonl"
    one = ("--jobs", "1")
    assert (
        verify(*V1_KEYED, "--table-key", TABLE_PUB, "--report", report, "--resume", *one).code == 0
    )
    run = verify(
        *V1_KEYED,
        "--table-key",
        TABLE_PUB,
        "--report",
        report,
        "--resume",
        "--require",
        "keyed",
        *one,
    )
    assert run.code == 0  # the v1 samples are keyed
    run = verify(
        *V1_KEYED,
        "--table-key",
        TABLE_PUB,
        "--report",
        report,
        "--resume",
        "--require",
        "views_bound",
        *one,
    )
    assert run.code == 1
    assert "resumed: 0 of 2 verdicts reused" in run.stderr


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("nope", "'nope' is no requirement"),
        ("arrivals", "no log proves arrivals: when each move arrived"),
        ("one_history", "no log proves one_history: that no player was shown another"),
    ],
)
def test_an_unknown_requirement_is_a_usage_error(name: str, words: str) -> None:
    """An unknown name exits 2 and lists the names there are; one of the guarantees that
    no log proves says why instead of refusing every log."""
    run = verify(V2_KEYED, "--table-key", TABLE_PUB, "--require", name)
    assert run.code == 2
    assert words in run.stderr
    assert "give one of " + ", ".join(Requirement) in run.stderr


def test_the_help_shows_an_example() -> None:
    run = verify("--help")
    assert run.code == 0
    assert "--require deal_bound --require result_accepted" in run.stdout
    assert "--require GUARANTEE" in run.stdout
    words = " ".join(run.stdout.split())  # as wrapped
    assert all(name in words for name in Requirement)
