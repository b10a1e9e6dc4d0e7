"""Regenerate the duplicate-tournament known-answer vectors, tests/vectors/tournament-kat.json.

Usage: ``python scripts/regen_tournament_vectors.py [--check]``. With ``--check`` nothing
is written and the exit status is 1 if the file on disk differs from what would be
generated. The format is described in docs/tournament.md ("Known-answer vectors"); the
file is never edited by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.deal import derive_pack, pack_digest
from racing_demon.game.duplicate import TOURNAMENT_ALGORITHM, DuplicateDeal, Shape
from racing_demon.profiles import load_rules
from racing_demon.tournament.contribute import Contribution, sign_contribution
from racing_demon.tournament.plan import make_plan, make_terms

VECTORS_PATH = Path(__file__).resolve().parents[1] / "tests" / "vectors" / "tournament-kat.json"

# Public test fixtures, never for a real tournament: the secret is the bytes 0 to 31 (as in
# docs/deal-spec.md's examples) and the signing key's private bytes are 0 to 31 too.
SECRET = bytes(range(32))
SIGNING_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))


def _cases() -> list[dict[str, Any]]:
    """The tournaments: the worked example of docs/tournament.md (one signed and one
    unsigned contribution), and a larger one with a non-ASCII name, more tables than
    seats (seat positions repeat) and contributions of the shortest and longest lengths,
    listed out of the canonical order that the plan puts them in."""
    worked_terms = make_terms(SECRET, Shape("KAT cup", 3, 2, 2), load_rules("table"))
    worked = {
        "name": worked_terms.shape.name,
        "tables": 3,
        "seats": 2,
        "hands": 2,
        "rules": "table",
        "contributions": [
            Contribution("organiser", bytes.fromhex("a0" * 16)),
            sign_contribution(SIGNING_KEY, worked_terms, "alice"),
        ],
    }
    larger = {
        "name": "Duplicate cup ♠ round 2",
        "tables": 5,
        "seats": 4,
        "hands": 3,
        "rules": "peer2peer",
        "contributions": [
            Contribution("dice", b"4 6 1 1 3 5 2 6 6 4 1 2 3 5 5 6"),
            Contribution("coin", bytes(range(64))),
            Contribution("clock", bytes.fromhex("ff" * 24)),
        ],
    }
    return [worked, larger]


def _vector(case: dict[str, Any]) -> dict[str, Any]:
    shape = Shape(case["name"], case["tables"], case["seats"], case["hands"])
    plan = make_plan(SECRET, shape, load_rules(case["rules"]), tuple(case["contributions"]))
    seed = shape.seed(SECRET, plan.entropy)
    document = plan.to_document()
    return {
        "name": shape.name,
        "tables": shape.tables,
        "seats": shape.seats,
        "hands": shape.hands,
        "profile": case["rules"],
        "rules": document["rules"],  # what the plan's P and every genesis hold
        "rules_sha256": plan.rules.digest(),
        "secret": SECRET.hex(),
        "commitment": plan.commitment,
        "contributions": [
            {
                "by": contribution.by,
                "entropy": contribution.entropy.hex(),
                "key": None if contribution.key is None else contribution.key.hex(),
                "statement": None
                if contribution.key is None
                else plan.terms.statement_bytes(contribution.by).decode(),
            }
            for contribution in plan.contributions
        ],
        "entropy": plan.entropy.hex(),
        "prk": seed.prk.hex(),
        "deal_set": plan.deal_set,
        "plan": plan.digest,
        "schedule": document["schedule"],
        "packs": [
            {
                "hand": hand,
                "index": index,
                "number": shape.pack_number(hand, index),
                "faces": [card.face for card in derive_pack(seed, hand, index)],
            }
            for hand in range(1, shape.hands + 1)
            for index in range(shape.seats)
        ],
        "hand_start": [
            {
                "table": table,
                "hand": hand,
                "digests": [
                    pack_digest(hand, seat, DuplicateDeal(shape, seed, table).pack(hand, seat))
                    for seat in range(shape.seats)
                ],
            }
            for table in range(1, shape.tables + 1)
            for hand in range(1, shape.hands + 1)
        ],
    }


def build_vectors() -> dict[str, Any]:
    """Every known-answer vector, as the JSON-ready structure written to VECTORS_PATH."""
    return {
        "algorithm": TOURNAMENT_ALGORITHM,
        "description": (
            "Known-answer vectors for docs/tournament.md. Byte strings are lowercase hex; "
            "faces list a pack p[0..51] as its owner's seat would hold it; hand_start lists "
            "the pack digest (docs/deal-spec.md step 8) each seat of each table logs. "
            "Generated by scripts/regen_tournament_vectors.py: do not edit."
        ),
        "signing_key": {
            "private": bytes(range(32)).hex(),
            "public": SIGNING_KEY.public_key().public_bytes_raw().hex(),
        },
        "tournaments": [_vector(case) for case in _cases()],
    }


def render(vectors: dict[str, Any]) -> str:
    return json.dumps(vectors, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the tournament known-answer vectors.")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if the file on disk is out of date"
    )
    args = parser.parse_args(argv)
    text = render(build_vectors())
    if args.check:
        current = VECTORS_PATH.read_text(encoding="utf-8") if VECTORS_PATH.exists() else None
        if current != text:
            print(f"{VECTORS_PATH} is out of date: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    VECTORS_PATH.parent.mkdir(parents=True, exist_ok=True)
    VECTORS_PATH.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
