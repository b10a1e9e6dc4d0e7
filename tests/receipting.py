"""Receipts for the golden logs, made as the table makes them, for the receipt and evidence
tests: every submission of a log gets ``logged_receipt`` + ``seal_receipt`` under the
golden logs' table key (scripts/regen_golden_logs.py, a published test fixture).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.flow import Submission
from racing_demon.log.keys import public_pem, raw_public_bytes
from racing_demon.log.receipts import Receipt, logged_receipt, seal_receipt, statement_bytes_of
from racing_demon.log.records import parse_record

from conftest import load_script

GOLDEN = Path(__file__).resolve().parent / "golden" / "logs"
GOLDEN_LOGS = ("table-3p-signed", "peer2peer-2p", "nertz-4p-signed")
_FIXTURES = load_script("regen_golden_logs")
TABLE_KEY: Ed25519PrivateKey = _FIXTURES.TABLE_KEY
PLAYER_KEYS: list[Ed25519PrivateKey] = _FIXTURES.PLAYER_KEYS  # seat s's, for a live rewrite
TABLE_PUB = raw_public_bytes(TABLE_KEY)
OTHER_KEY = Ed25519PrivateKey.from_private_bytes(bytes([2]) * 32)


@cache
def golden(name: str) -> bytes:
    return (GOLDEN / f"{name}.jsonl").read_bytes()


def receipts_of(data: bytes) -> list[Receipt]:
    """The receipt of every submission of the log ``data``, in log order."""
    receipts = []
    for line in data.splitlines():
        record = parse_record(json.loads(line)["body"])
        if isinstance(record.payload, Submission):
            receipts.append(logged_receipt(record, line, statement_bytes_of(record)))
    return receipts


def lines_of(receipts: list[Receipt], key: Ed25519PrivateKey = TABLE_KEY) -> bytes:
    return b"".join(seal_receipt(receipt, key) + b"\n" for receipt in receipts)


@cache
def _receipt_files(data: bytes) -> tuple[tuple[int, bytes], ...]:
    by_seat: dict[int, list[Receipt]] = {}
    for receipt in receipts_of(data):
        by_seat.setdefault(receipt.seat, []).append(receipt)
    return tuple((seat, lines_of(receipts)) for seat, receipts in sorted(by_seat.items()))


def write_receipts(directory: Path, data: bytes, prefix: str = "seat") -> list[Path]:
    """One receipts file per seat, ``<prefix><seat>.jsonl``, with every receipt of the
    log ``data``."""
    paths = []
    for seat, lines in _receipt_files(data):
        path = directory / f"{prefix}{seat}.jsonl"
        path.write_bytes(lines)
        paths.append(path)
    return paths


def write_log(directory: Path, data: bytes, name: str = "game.jsonl") -> Path:
    path = directory / name
    path.write_bytes(data)
    return path


def write_table_pub(directory: Path) -> Path:
    path = directory / "table.pub"
    path.write_bytes(public_pem(TABLE_KEY))
    return path


def submission_lines(data: bytes) -> list[int]:
    """The 1-based line numbers of the log's submissions."""
    return [
        number
        for number, line in enumerate(data.splitlines(), 1)
        if "n" in json.loads(line)["body"]
    ]


def body_at(data: bytes, line: int) -> dict[str, object]:
    body: dict[str, object] = json.loads(data.splitlines()[line - 1])["body"]
    return body
