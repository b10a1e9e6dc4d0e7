"""The viewer's builder and command on hostile inputs (no browser).

docs/threat-model.md: a log's bytes, and the name it is stored under, are hostile. The
design of issue 17's page: `racing-demon view` writes a page "for valid and for failing
logs alike"; the data's JSON is escaped "so that it can never close the script element".
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from racing_demon.files import shown_name
from racing_demon.viewer.page import data_json, packed, unpacked

from conftest import invoke

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "sample_games" / "valid" / "peer2peer-3p-hold-off.jsonl"
# A file name that is not UTF-8: Python reads it with surrogate escapes (PEP 383).
NOT_UTF8_NAME = "game-\udcff\udcfe.jsonl"


def test_a_log_whose_file_name_is_not_utf8_still_gives_a_page(tmp_path: Path) -> None:
    """A page is written for any readable log: a file name of bytes that are not UTF-8
    (legal on Linux) is no reason to stop with a traceback."""
    log = tmp_path / NOT_UTF8_NAME
    shutil.copyfile(SMALL, log)
    out = tmp_path / "game.html"
    code, output = invoke("view", str(log), "-o", str(out))
    assert code == 0, output
    page = out.read_text(encoding="utf-8")  # the page is valid UTF-8
    data = re.search(r'<script type="application/json" id="rd-data">(.*?)</script>', page)
    assert data is not None
    parsed = unpacked(json.loads(data[1]))
    assert parsed["verdict"]["source"] == shown_name(log)  # verify --json's, valid UTF-8


def test_the_data_json_escapes_lone_surrogates_and_reads_back_the_same() -> None:
    """The page's JSON is UTF-8 text: a code point UTF-8 cannot hold (a lone surrogate) is
    written as its JSON escape, and every value reads back as it was."""
    value = {"text": "a\udcffb\ud800 </script> \u2028", "list": ["\udfff"]}
    text = data_json(value)
    text.encode("utf-8")
    assert json.loads(text) == value
    inner = {"records": [{"text": "\udcff"}], "other": 1}
    assert unpacked(json.loads(data_json(packed(inner)))) == inner
