"""docs/architecture.md stays true (issue 30, point 6: "`docs/architecture.md`: the README's
architecture section moves there, with one picture of the layers and two walks in words").

The picture names every package and top-level module of ``racing_demon`` and nothing that
is not there; its rows agree with what tests/test_layers.py lets each part import; every
file and every dotted name the walks give can still be found.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from test_layers import MAY_IMPORT, ONLY_IMPORTED_BY

from racing_demon.game.engine import legal_moves
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.profiles import load_rules
from racing_demon.table import PlayerInfo, Table
from racing_demon.verify import Report, Settings, Verdict, verify_log

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "racing_demon"
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
SAMPLES = ROOT / "sample_games"


def picture_rows(doc: str) -> list[list[str]]:
    """The names in each row of the layers' picture, its top row first; a row runs from
    one rule (``├…┤``) to the next, over as many lines as it needs."""
    section = doc.split("\n## 1. ", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 1, "one picture of the layers"
    rows: list[list[str]] = [[]]
    for line in blocks[0].splitlines():
        if line.startswith("├"):
            rows.append([])
        elif line.startswith("│"):
            rows[-1] += line.split("│")[1].split()
    return rows


def layers(rows: list[list[str]]) -> dict[str, int]:
    """Each name's row, counted from the bottom row's 0."""
    return {
        name.rstrip("/"): len(rows) - 1 - row for row, names in enumerate(rows) for name in names
    }


def upward(layer: dict[str, int]) -> list[str]:
    """What tests/test_layers.py lets a part import from a row above its own."""
    return [
        f"{part} may import {allowed}, whose row is above {top_level(part)}'s"
        for part, allowed_set in MAY_IMPORT.items()
        for allowed in sorted(allowed_set)
        if allowed.startswith("racing_demon.")
        and layer[top_level(allowed)] > layer[top_level(part)]
    ]


def top_level(dotted: str) -> str:
    """The package or top-level module of ``racing_demon`` that ``dotted`` lies in."""
    return dotted.split(".")[1]


ROWS = picture_rows(DOC)
LAYER = layers(ROWS)


def test_the_picture_names_every_package_and_module_and_only_those() -> None:
    packages = {path.parent.name + "/" for path in PACKAGE.glob("*/__init__.py")}
    modules = {path.stem for path in PACKAGE.glob("*.py")} - {"__init__"}
    named = [name for row in ROWS for name in row]
    assert len(named) == len(set(named)), "a name in two rows"
    assert set(named) == packages | modules


def test_the_rows_agree_with_what_the_layers_test_lets_each_part_import() -> None:
    """A part may import only from its own row of the picture or a row below."""
    assert upward(LAYER) == []


def test_a_row_out_of_order_is_caught() -> None:
    rows = [
        [("game/" if name == "log/" else "log/" if name == "game/" else name) for name in row]
        for row in ROWS
    ]
    assert any(
        line.startswith("racing_demon.log may import racing_demon.game")
        for line in upward(layers(rows))
    )


def test_the_command_line_is_the_top_row() -> None:
    # click and the cli package are the command line's alone.
    assert ONLY_IMPORTED_BY["click"] == {"racing_demon.cli"}
    assert ONLY_IMPORTED_BY["racing_demon.cli"] == {"racing_demon.cli", "racing_demon.__main__"}
    assert ROWS[0] == ["cli/", "__main__"]


def test_every_file_the_doc_names_exists() -> None:
    named = set(re.findall(r"`([\w/*.-]+\.(?:py|json|md))`", DOC))
    assert "verify/driver.py" in named and "log/writer.py" in named  # the two walks'
    # "stepNN_*.py" stands for the numbered steps' modules.
    patterns = sorted(name.replace("NN", "[0-9][0-9]") for name in named)
    missing = [
        name for name in patterns if not any(list(base.glob(name)) for base in (PACKAGE, ROOT))
    ]
    assert missing == []


def test_every_dotted_name_the_doc_gives_is_found_where_it_says() -> None:
    tops = set(LAYER)
    names = {
        text.split("(", 1)[0].removeprefix("racing_demon.")
        for text in re.findall(r"`([a-z_]+(?:\.\w+)+)(?:\(.*?\))?`", DOC)
    }
    files = (".py", ".json", ".md")
    names = {n for n in names if n.split(".")[0] in tops and not n.endswith(files)}
    assert {"game.flow.MatchFlow", "log.records.record_body", "verify.verify_log"} <= names
    lost = [name for name in sorted(names) if not _resolves(name)]
    assert lost == []


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module("racing_demon." + ".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def _section(number: int) -> str:
    return DOC.split(f"\n## {number}. ", 1)[1].split("\n## ", 1)[0]


def _first_calls(run: Callable[[], object], name_of: Callable[[FrameType], str]) -> list[str]:
    """What ``name_of`` calls each Python function that ``run`` calls, in the order of
    their first calls; ``os.fsync`` (a C function) by that name."""
    seen: dict[str, None] = {}

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            seen.setdefault(name_of(frame))
        elif event == "c_call" and arg is os.fsync:
            seen.setdefault("os.fsync")

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return list(seen)


def _module(frame: FrameType) -> str:
    return str(frame.f_globals.get("__name__"))


def _function(frame: FrameType) -> str:
    return f"{_module(frame)}.{frame.f_code.co_qualname}"


def test_the_verification_walk_names_the_steps_in_the_order_the_driver_runs_them() -> None:
    """Section 2, "which modules, in which order": tracing the verifier on a sample game
    finds the numbered steps' modules first called in the order the walk names them."""
    walk = _section(2)
    steps = sorted(set(re.findall(r"`(step\d\d_\w+)`", walk)), key=walk.index)
    assert len(steps) == 8  # steps 1-8; 9 and 10 are the match flow's codes
    settings = Settings(table_key=raw_public_bytes(load_public_key(SAMPLES / "table.pub")))
    reports: list[Report] = []
    called = _first_calls(
        lambda: reports.append(verify_log(SAMPLES / "table-3p-signed.jsonl", settings)), _module
    )
    assert reports[0].verdict is Verdict.VERIFIED
    modules = [f"racing_demon.verify.{step}" for step in steps]
    # Steps 1 and 2 are the reader's on a valid log: their modules name what it refuses.
    assert [module for module in called if module in modules] == modules[2:]


# What section 3 calls each function the table's walk goes through.
TABLE_WALK = {
    "`MatchFlow.submit`": "racing_demon.game.flow.MatchFlow.submit",
    "`LogWriter.append`": "racing_demon.log.writer.LogWriter.append",
    "`log.records.record_body`": "racing_demon.log.records.record_body",
    "fsyncs": "os.fsync",
    "`log.receipts.logged_receipt`": "racing_demon.log.receipts.logged_receipt",
    "`MatchFlow.due`": "racing_demon.game.flow.MatchFlow.due",
    "`seal_receipt`": "racing_demon.log.receipts.seal_receipt",
}


def test_the_table_walk_follows_a_submission_in_the_order_the_table_runs(tmp_path: Path) -> None:
    """Section 3, "a table writing one record": one accepted move, traced, goes through
    the flow, the writer, the body, the fsync and the receipt in the walk's order."""
    walk = _section(3)
    told = [TABLE_WALK[words] for words in sorted(TABLE_WALK, key=walk.index)]
    key = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
    players = [PlayerInfo("ann", "red"), PlayerInfo("bob", "blue")]
    entropy = [bytes([1]) * 16, bytes([2]) * 16]
    path = tmp_path / "game.jsonl"
    with Table.create(path, load_rules("peer2peer"), players, key, bytes(32), entropy) as table:
        table.advance(3000)
        move = str(legal_moves(table.state, 0)[0])
        called = _first_calls(lambda: table.submit(0, move, 3000, 0), _function)
    assert [name for name in called if name in told] == told
