"""One error model: what the package refuses derives from RacingDemonError (errors.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.errors import RacingDemonError
from racing_demon.profiles import load_rules
from racing_demon.table import PlayerInfo, Table
from racing_demon.verify import Settings

KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
PLAYERS = [PlayerInfo("A", "red"), PlayerInfo("B", "blue")]


def test_table_create_refuses_a_bad_match_with_the_package_error(tmp_path: Path) -> None:
    with pytest.raises(RacingDemonError):
        Table.create(
            tmp_path / "game.jsonl", load_rules("table"), PLAYERS, KEY, bytes(32), [b"a" * 16]
        )


def test_table_create_refuses_a_genesis_its_verifier_refuses_with_the_package_error(
    tmp_path: Path,
) -> None:
    long_name = [PlayerInfo("A" * 65, "red"), PlayerInfo("B", "blue")]
    with pytest.raises(RacingDemonError):
        Table.create(
            tmp_path / "game.jsonl",
            load_rules("table"),
            long_name,
            KEY,
            bytes(32),
            [b"a" * 16, b"b" * 16],
        )


def test_settings_refuse_a_weak_table_key_with_the_package_error() -> None:
    with pytest.raises(RacingDemonError):
        Settings(table_key=bytes(32))
