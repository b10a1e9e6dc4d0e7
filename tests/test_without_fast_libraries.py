"""The verifier judges moves and scores on the standard library alone (issue 34, point 1:
"The part of the verifier that judges moves and scores (the rules, the replay, the scores,
the final record) runs without `orjson`, `jsonschema`, `jsonschema-rs` or PyNaCl, falling
back to the standard library where the fast libraries are missing, with the same verdicts
(a differential test runs it in CPython with those libraries hidden)").

A child CPython process, with a meta-path finder installed before racing_demon is
imported that makes every library the browser page's Pyodide lacks unimportable, runs
``verify.in_page.judge`` over every sample and golden log, the reader's attacks, fuzzed
mutants, re-signed tamperings and random playouts; this process runs it with the
libraries present. The two must write the same text, and where the command's verdict is
not a failed signature equation (which ``judge`` leaves to the page's Web Crypto), the
report must be ``racing-demon verify --json``'s for the same file, member for member.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_hostile import ATTACKS

import racing_demon
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.log.signing import SignatureCode
from racing_demon.verify.in_page import judge

import tampering
from conftest import load_script

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_KEY = raw_public_bytes(load_public_key(ROOT / "sample_games" / "table.pub")).hex()
TAMPERING_KEY = tampering.TABLE_PUB.hex()

# What Pyodide from the npm registry has no build of (docs/architecture.md), and what
# jsonschema would need of compiled code.
HIDDEN = ("orjson", "jsonschema", "jsonschema_rs", "regress", "nacl", "cryptography", "rpds")

CHILD = """
import importlib.abc, json, sys

HIDDEN = set(sys.argv[2].split(","))

class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r} (hidden)", name=name)
        return None

sys.meta_path.insert(0, Hide())
from racing_demon.verify.in_page import judge

cases = json.loads(open(sys.argv[1], encoding="utf-8").read())
reports = {
    path: judge(open(path, "rb").read(), table_key=key, rules=None, unsafe_unpinned=False,
                source=path)
    for path, key in cases.items()
}
loaded = sorted(name for name in sys.modules if name.partition(".")[0] in HIDDEN)
print(json.dumps({"reports": reports, "loaded": loaded}))
"""

Value = dict[str, Any]


def first(values: list[Value], kind: str) -> int:
    return next(index for index, value in enumerate(values) if value["body"]["kind"] == kind)


def _move_made_bounce(values: list[Value]) -> int:
    index = first(values, "move")
    values[index]["body"].update(kind="bounce", reason="CARD_MISMATCH")
    return index


def _bounce_made_move(values: list[Value]) -> int:
    index = first(values, "bounce")
    values[index]["body"]["kind"] = "move"
    del values[index]["body"]["reason"]
    return index


def _bounce_reason_changed(values: list[Value]) -> int:
    index = first(values, "bounce")
    values[index]["body"]["reason"] = "HAND_OVER"
    return index


def _move_changed(values: list[Value]) -> int:
    index = first(values, "move") + 3
    values[index]["body"]["move"] = values[index - 2]["body"]["move"]
    return index


def _score_changed(values: list[Value]) -> int:
    index = first(values, "hand_end")
    values[index]["body"]["scores"][0] += 10
    return index


def _total_changed(values: list[Value]) -> int:
    index = first(values, "final")
    values[index]["body"]["hands"][0][0] -= 1
    return index


# Re-signed by the table, so only the replay or the scores can catch them.
TAMPERINGS: dict[str, Callable[[list[Value]], int]] = {
    "move-made-bounce": _move_made_bounce,
    "bounce-made-move": _bounce_made_move,
    "bounce-reason-changed": _bounce_reason_changed,
    "move-changed": _move_changed,
    "score-changed": _score_changed,
    "total-changed": _total_changed,
}


def _with_player_signature(lines: list[bytes], signature: str) -> list[bytes]:
    """The first submission's player signature replaced, the table's left as it was."""
    values = [json.loads(line) for line in lines]
    index = first(values, "move")
    values[index]["sigs"]["player"] = signature
    return [*lines[:index], _line(values[index]), *lines[index + 1 :]]


def _line(value: Value) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode()


# The quick run's few: a valid game, the three disputes only the replay catches, and the
# hostile and tampered logs below; the slow run judges every sample and golden log too.
QUICK_SAMPLES = (
    "valid/table-4p-tie-signed.jsonl",
    "disputed/illegal-move-re-signed.jsonl",
    "disputed/legal-move-wrongly-bounced.jsonl",
    "disputed/inflated-score.jsonl",
    "disputed/reserved-rules-name.jsonl",
    "disputed/forged-move-signed-by-another-player.jsonl",
)


def made_cases(directory: Path, every_sample: bool) -> dict[str, str]:
    """The logs to judge, written under ``directory``, with their pinned key: path -> key."""
    if every_sample:
        samples = sorted((ROOT / "sample_games").rglob("*.jsonl"))
        samples += sorted((ROOT / "tests/golden/logs").glob("*"))
    else:
        samples = [ROOT / "sample_games" / name for name in QUICK_SAMPLES]
    cases = {str(path): SAMPLE_KEY for path in samples}

    def add(name: str, lines: list[bytes]) -> None:
        write(name, b"".join(line + b"\n" for line in lines), TAMPERING_KEY)

    def write(name: str, data: bytes, key: str) -> None:
        path = directory / f"{name}.jsonl"
        path.write_bytes(data)
        cases[str(path)] = key

    for name in tampering.LOGS if every_sample else ("short",):
        for keyed in (False, True):
            add(
                f"playout-{name}-{'keyed' if keyed else 'unkeyed'}", tampering.lines_of(name, keyed)
            )
    for attack in ATTACKS:
        for index in (0, 1, -1) if every_sample else (1,):
            lines = tampering.lines_of("short")
            lines[index] = attack.edit(lines[index])
            add(f"attack-{attack.name}-{index}", lines)
    for tampered, edit in TAMPERINGS.items():
        for name in ("table", "nertz") if every_sample else ("peer2peer",):
            values = tampering.values_of(name)
            add(f"resealed-{tampered}-{name}", tampering.seal(values, edit(values)))
    keyed = tampering.lines_of("short", keyed=True)
    add("player-signature-equation-fails", _with_player_signature(keyed, "ab" * 64))
    add("player-signature-s-too-large", _with_player_signature(keyed, "00" * 32 + "ff" * 32))
    add("player-signature-not-hex", _with_player_signature(keyed, "AB" * 64))
    fuzz = load_script("fuzz_logs")
    for path in sorted((ROOT / "sample_games" / "valid").glob("*-signed.jsonl")):
        data = path.read_bytes()
        mutations = fuzz.mutants(data, seed=34, count=12 if every_sample else 2)
        for number, mutation in enumerate(mutations):
            write(f"fuzzed-{path.stem}-{number}", mutation.apply(data), SAMPLE_KEY)
    return cases


@pytest.fixture(
    scope="module",
    params=[pytest.param(False, id="quick"), pytest.param(True, id="all", marks=pytest.mark.slow)],
)
def cases(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    every_sample: bool = request.param
    return made_cases(tmp_path_factory.mktemp("logs"), every_sample)


@pytest.fixture(scope="module")
def hidden_run(cases: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Value:
    listing = tmp_path_factory.mktemp("child") / "cases.json"
    listing.write_text(json.dumps(cases), encoding="utf-8")
    source = str(Path(racing_demon.__file__).resolve().parents[1])
    environment = {**os.environ, "PYTHONPATH": source}
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(listing), ",".join(HIDDEN)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
        check=True,
    )
    result: Value = json.loads(child.stdout)
    return result


def judged(path: str, key: str) -> str:
    data = Path(path).read_bytes()
    return judge(data, table_key=key, rules=None, unsafe_unpinned=False, source=path)


def test_the_child_ran_without_any_of_the_hidden_libraries(hidden_run: Value) -> None:
    assert hidden_run["loaded"] == []


def test_the_cases_cover_every_kind_of_log(cases: dict[str, str]) -> None:
    names = [Path(path).name for path in cases]
    for kind in ("playout-", "attack-", "resealed-", "fuzzed-", "player-signature-"):
        assert any(name.startswith(kind) for name in names), kind


def test_judge_writes_the_same_report_without_the_fast_libraries(
    cases: dict[str, str], hidden_run: Value
) -> None:
    reports = hidden_run["reports"]
    differing = [path for path, key in cases.items() if reports[path] != judged(path, key)]
    assert differing == []


def test_judge_writes_verify_json_s_report_where_no_equation_failed(
    cases: dict[str, str], hidden_run: Value
) -> None:
    """The command's report, member for member, plus ``equations``; where the command
    found a signature's equation false, ``judge`` cannot (the page checks those)."""
    command: dict[str, Value] = {}
    for key in sorted(set(cases.values())):
        paths = [path for path, its_key in cases.items() if its_key == key]
        pub = ROOT / "sample_games" / "table.pub"
        if key != SAMPLE_KEY:
            pub = tampering.write_public_key(Path(paths[0]).parent / "table.pub")
        verify = [sys.executable, "-m", "racing_demon", "verify", "--json", "--jobs", "1"]
        run = subprocess.run(
            [*verify, "--table-key", str(pub), *paths],
            capture_output=True,
            text=True,
            timeout=600,
        )
        command |= {report["source"]: report for report in json.loads(run.stdout)["reports"]}
    equations = 0
    for path in cases:
        expected = command[path]
        finding = expected["finding"]
        if finding is not None and finding["rule"] == SignatureCode.BAD_SIGNATURE:
            equations += 1
            continue
        report = json.loads(hidden_run["reports"][path])
        assert report.pop("equations") == "by_host"
        assert report == expected, path
    assert 0 < equations < len(cases) // 4
