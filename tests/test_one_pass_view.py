"""Issue 30, point 1, for ``view``: "the viewer parses with plain `json`" -- "One record
reader ... each command opens each log file once (a test counts the opens with an audit
hook, `sys.addaudithook`)". A page of a log that does not verify opens it once too, and
the page reads every line through the verifier's reader, so that the two judge a line
alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.verify import Settings, Verdict, verify_log
from racing_demon.viewer import viewer_data

from opens import count_opens, opens_of

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_games"
TABLE_PUB = SAMPLES / "table.pub"
DISPUTED = sorted(
    path for path in (SAMPLES / "disputed").glob("*.jsonl") if ".receipts" not in path.name
)


def test_the_disputed_samples_are_there() -> None:
    assert len(DISPUTED) > 20


def test_view_of_a_log_that_does_not_verify_opens_it_once(tmp_path: Path) -> None:
    """The page needs the log's bytes: they are read once, and verified and replayed from
    there, whatever the verdict."""
    pages = [tmp_path / f"{log.stem}.html" for log in DISPUTED]
    runs = [
        ["view", str(log), "--table-key", str(TABLE_PUB), "--out", str(page)]
        for log, page in zip(DISPUTED, pages, strict=True)
    ]
    for log, page, opened in zip(DISPUTED, pages, count_opens(tmp_path, runs), strict=True):
        assert opened.status == 0 and page.stat().st_size > 0, log.name
        assert opened.reads(log) == 1, log.name


def test_view_of_a_log_past_the_file_size_limit_opens_it_once(tmp_path: Path) -> None:
    """The page holds none of such a log; the verifier reads the same open file to say
    why (it opened the log a second time before)."""
    log, page = DISPUTED[0], tmp_path / "page.html"
    opened = opens_of(tmp_path, "view", str(log), "--max-file-bytes", "1000", "--out", str(page))
    assert opened.status == 0 and "FILE_TOO_LARGE" in page.read_text(encoding="utf-8")
    assert (opened.reads(log), opened.writes(log)) == (1, 0)


def test_the_disputed_samples_do_not_all_verify() -> None:
    """The cases above are logs the verifier refuses (the page's second path), not only
    ones it passes."""
    settings = Settings(table_key=raw_public_bytes(load_public_key(TABLE_PUB)))
    verdicts = {verify_log(log, settings).verdict for log in DISPUTED}
    assert Verdict.DOES_NOT_VERIFY in verdicts and Verdict.UNFINISHED in verdicts


# -- one reader ----------------------------------------------------------------------------

HOLD_OFF = SAMPLES / "valid" / "peer2peer-3p-hold-off.jsonl"


def _damaged(tmp_path: Path, line: int, raw: bytes) -> Path:
    lines = HOLD_OFF.read_bytes().splitlines()
    lines[line] = raw
    log = tmp_path / "damaged.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    return log


def test_a_line_the_verifiers_reader_refuses_is_not_told_as_a_record(tmp_path: Path) -> None:
    """A line with a key twice is JSON to plain ``json`` (which keeps the last), and was
    told as the record that one made of it; the verifier refuses it as DUPLICATE_KEY, and
    now the page does too, with the reader's code and words."""
    lines = HOLD_OFF.read_bytes().splitlines()
    value = json.loads(lines[25])
    body = json.dumps(value["body"], separators=(",", ":"), sort_keys=True)
    twice = (
        b'{"body":'
        + body.encode()
        + b',"sigs":{},"sigs":'
        + json.dumps(value["sigs"], separators=(",", ":")).encode()
        + b"}"
    )
    assert json.loads(twice) == value  # plain json reads it as the record it was
    data = viewer_data(_damaged(tmp_path, 25, twice), Settings(unsafe_unpinned=True))
    assert data["failure"]["code"] == "DUPLICATE_KEY" and data["failure"]["line"] == 26
    entry = data["records"][25]
    assert entry["kind"] is None and entry["frame"] is None
    assert entry["text"] == (
        'record 25 could not be read: not JSON (DUPLICATE_KEY: duplicate key "sigs" in $)'
    )
    assert data["records"][26]["kind"] is not None  # the lines after it are still told


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b'{"body": "not a record"', "not JSON (BAD_JSON: "),
        (b"\xff\xfe", "not UTF-8 (NOT_UTF8: invalid UTF-8 at byte 0)"),
        (b"[1, 2]", "not a log record (NOT_OBJECT: top level is an array)"),
        (b'{"body": {"seq": 1.5}}', "not JSON (FLOAT: number with a fraction or exponent: 1.5)"),
        (b"[" * 40 + b"]" * 40, "nested too deeply (TOO_DEEP: containers nested deeper than 32)"),
        (b'{"body": {"kind": "stall"}, "sigs": {}}', "not a log record ($.body: "),
    ],
    ids=["bad-json", "not-utf8", "not-object", "float", "too-deep", "off-schema"],
)
def test_an_unreadable_line_is_told_in_the_readers_words(
    tmp_path: Path, raw: bytes, words: str
) -> None:
    data = viewer_data(_damaged(tmp_path, 20, raw), Settings(unsafe_unpinned=True))
    assert data["records"][20]["text"].startswith(f"record 20 could not be read: {words}")
    assert data["records"][20]["kind"] is None
