"""A ``Report``'s JSON document is written and read back in one place
(``racing_demon.report_document``; issue 30, point 4: "give `Report` one place that writes
and reads its document")."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from racing_demon.batch import cache_entry, cache_key
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.report.verify import verification_document
from racing_demon.report_document import report_document, report_from_document
from racing_demon.schema import schema_errors
from racing_demon.verify import Report, Settings, verify_log

SAMPLES = Path(__file__).resolve().parents[1] / "sample_games"
TABLE_KEY = raw_public_bytes(load_public_key(SAMPLES / "table.pub"))
# Every sample game, and every receipts file beside one (no log: a report of "not a log").
SAMPLE_FILES = sorted(SAMPLES.rglob("*.jsonl"))
SETTINGS = (Settings(table_key=TABLE_KEY), Settings(unsafe_unpinned=True, fast=True))


def _written_and_read(report: Report, with_cache: bool) -> Report:
    document = report_document(report)
    if with_cache:  # a --resume line: the seats and problems ride in its cache entry
        document["cache"] = cache_entry(report, None, cache_key(Settings()))
    return report_from_document(json.loads(json.dumps(document)))


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda path: str(path.relative_to(SAMPLES)))
def test_every_sample_games_report_reads_back_as_written(path: Path) -> None:
    for settings in SETTINGS:
        report = verify_log(path, settings)
        assert schema_errors("verification-report", verification_document([report])) == []
        assert _written_and_read(report, with_cache=True) == report
        finding = report.finding
        without = dataclasses.replace(
            report,
            seats=0,
            finding=None if finding is None else dataclasses.replace(finding, problems=()),
        )
        assert _written_and_read(report, with_cache=False) == without


@pytest.mark.slow  # verifies every sample file again, under two settings
def test_the_samples_cover_every_verdict() -> None:
    verdicts = {verify_log(path, SETTINGS[0]).verdict for path in SAMPLE_FILES}
    verdicts.add(verify_log(SAMPLE_FILES[0], SETTINGS[1]).verdict)
    verdicts.add(verify_log(SAMPLES / "no such log.jsonl", SETTINGS[0]).verdict)
    assert {verdict.value for verdict in verdicts} == {
        "verified",
        "does_not_verify",
        "unfinished",
        "unreadable",
        "unpinned",
    }
