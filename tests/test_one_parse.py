"""Issue 33, point 2: "Reading a line costs one parse: Framing, canonical check, schema, typed
record, chain: one orjson parse feeds the canonical check, the schema check and the typed
record; no line is re-encoded where its bytes can be compared; the chain hash and the file
digest computed once per line."

Each test counts what verification does to the lines of a log that verifies, by wrapping
the library calls it makes; the verdict is checked too, so a count is of a whole pass."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import orjson
import pytest

import racing_demon.log.reader
import racing_demon.verify.driver
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.log.reader import Line
from racing_demon.verify import Settings, Verdict, verify_log

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "logs" / "nertz-4p-signed.jsonl"
TABLE_KEY = raw_public_bytes(load_public_key(ROOT / "sample_games" / "table.pub"))
LINES = GOLDEN.read_bytes().splitlines()
MODES = pytest.mark.parametrize("fast", [True, False], ids=["fast", "full"])


def _verified(fast: bool) -> None:
    report = verify_log(GOLDEN, Settings(table_key=TABLE_KEY, fast=fast))
    assert report.verdict is Verdict.VERIFIED


def _counting(calls: Counter[bytes], function: Any) -> Any:
    def counted(data: Any, *args: Any, **kwargs: Any) -> Any:
        calls[bytes(data) if isinstance(data, bytes) else b""] += 1
        return function(data, *args, **kwargs)

    return counted


@MODES
def test_each_line_is_parsed_once_and_encoded_once(
    monkeypatch: pytest.MonkeyPatch, fast: bool
) -> None:
    """One orjson parse per line feeds the canonical check, the schema and the typed record;
    the canonical check encodes the value once (keys sorted, compared with the line's
    bytes), since canonical form cannot be told from the bytes alone. The last line is
    also read ahead, for the secret it reveals, before the pass: that one parse more is
    the file's, not a line's."""
    parsed: Counter[bytes] = Counter()
    encoded: Counter[bytes] = Counter()
    monkeypatch.setattr(orjson, "loads", _counting(parsed, orjson.loads))
    dumps = orjson.dumps

    def counted_dumps(value: Any, *args: Any, **kwargs: Any) -> bytes:
        out = dumps(value, *args, **kwargs)
        encoded[out] += 1
        return out

    monkeypatch.setattr(orjson, "dumps", counted_dumps)
    _verified(fast)
    assert Counter({line: parsed[line] for line in LINES}) == Counter(
        {line: 1 for line in LINES}
    ) + Counter({LINES[-1]: 1})
    assert Counter({line: encoded[line] for line in LINES}) == Counter(
        {line: 1 for line in LINES}
    ) + Counter({LINES[-1]: 1})


class _CountingSha256:
    """hashlib.sha256 that notes every piece of data it is given."""

    fed: ClassVar[list[bytes]] = []

    def __init__(self, data: bytes = b"", **kwargs: Any) -> None:
        self._hash = _SHA256(data, **kwargs)
        if data:
            self.fed.append(bytes(data))

    def update(self, data: bytes) -> None:
        self.fed.append(bytes(data))
        self._hash.update(data)

    def digest(self) -> bytes:
        return self._hash.digest()

    def hexdigest(self) -> str:
        return self._hash.hexdigest()

    def copy(self) -> Any:
        return self._hash.copy()


_SHA256 = hashlib.sha256


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    _CountingSha256.fed = []
    monkeypatch.setattr(hashlib, "sha256", _CountingSha256)
    yield _CountingSha256.fed


@MODES
def test_each_line_is_hashed_once(hashed: list[bytes], fast: bool) -> None:
    """The chain hash (what the next ``prev`` holds) is the one SHA-256 over a line's bytes;
    the file digest that pass two compares is taken over those hashes, not over the bytes
    again (before, every line went through SHA-256 twice)."""
    _verified(fast)
    assert [sum(line in data for data in hashed) for line in LINES] == [1] * len(LINES)


@MODES
def test_no_line_object_when_nobody_reads_one(monkeypatch: pytest.MonkeyPatch, fast: bool) -> None:
    """Pass one reads each line straight into its record (``RecordLine``): the ``Line``
    visitors read is made only for them."""
    made: list[int] = []

    def counted_line(number: int, raw: bytes, value: dict[str, Any]) -> Line:
        made.append(number)
        return Line(number, raw, value)

    monkeypatch.setattr(racing_demon.log.reader, "Line", counted_line)
    monkeypatch.setattr(racing_demon.verify.driver, "Line", counted_line)
    _verified(fast)
    assert made == []
