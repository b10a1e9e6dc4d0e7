"""Regenerate the golden signed logs, tests/golden/logs/<name>.jsonl.

Usage: ``python scripts/regen_golden_logs.py [--check]``. With ``--check`` nothing is
written and the exit status is 1 if any log on disk differs from what would be generated.

Each log is a whole match played by random players (racing_demon.testing.randomplay) through the
real table, with fixed keys, dealer secret, entropy and game id, and with every choice
drawn from the deal word stream. Ed25519 signatures are deterministic, so the bytes are
too: a diff means the log format, the table or the engine changed. Never edit by hand.
The keys below are test fixtures, published here on purpose: never use them for real.
The README's main command verifies one of these games (``SAMPLE``), which
scripts/regen_sample_games.py, the owner of sample_games/, copies there byte for byte
with the table's public key.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.deal import MatchSeed
from racing_demon.game.rules import Rules
from racing_demon.log.keys import public_pem
from racing_demon.profiles import builtin_document, custom_variant, rules_from_document
from racing_demon.testing.randomplay import play_match, word_chooser

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_DIR = ROOT / "tests" / "golden" / "logs"
SAMPLE_DIR = ROOT / "sample_games"  # written by scripts/regen_sample_games.py, not here
SAMPLE = "table-3p-signed"  # the README's game, copied to SAMPLE_DIR
TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))  # test fixture only
PLAYER_KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([0x50 + seat]) * 32) for seat in range(4)]
SECRET = bytes.fromhex("5ec2e7" * 10 + "0000")


def _rules(profile: str, target: int | None) -> Rules:
    document = builtin_document(profile)
    if target is not None:  # a short match keeps the file small
        document["match"]["target"] = target
    return custom_variant(rules_from_document(document))


# name: (profile, short-match target or None, seats, players sign, the choice stream's
# label: chosen so that table-3p-signed has ties, stall shifts, a bounce and a call, and
# nertz-4p-signed a card that lost its race)
GAMES = {
    "table-3p-signed": ("table", 20, 3, True, "golden log table-3p-signed #28"),
    "peer2peer-2p": ("peer2peer", None, 2, False, "golden log peer2peer-2p"),
    "nertz-4p-signed": ("nertz", 20, 4, True, "golden log nertz-4p-signed #1"),
}


def render(name: str) -> bytes:
    profile, target, seats, signed, label = GAMES[name]
    entropy = [bytes([0xE0 + seat]) * 16 for seat in range(seats)]  # unkeyed seats only
    choose = word_chooser(MatchSeed.from_plain(label))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.jsonl"
        table = play_match(
            path,
            _rules(profile, target),
            TABLE_KEY,
            SECRET,
            entropy,
            choose,
            player_keys=PLAYER_KEYS[:seats] if signed else None,
            game_id=f"{sum(map(ord, name)):032x}",
        )
        table.close()
        return path.read_bytes()


def path_for(name: str) -> Path:
    return GOLDEN_DIR / f"{name}.jsonl"


def table_public_pem() -> bytes:
    return public_pem(TABLE_KEY)


def outputs() -> list[tuple[Path, bytes]]:
    return [(path_for(name), render(name)) for name in GAMES]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on a diff")
    args = parser.parse_args(argv)
    stale = []
    for path, data in outputs():
        if args.check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(path.name)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    if stale:
        print(f"stale golden logs: {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
