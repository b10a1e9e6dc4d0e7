"""Regenerate the deal known-answer vectors, tests/vectors/deal-kat.json.

Usage: ``python scripts/regen_deal_vectors.py [--check]``. With ``--check`` nothing is
written and the exit status is 1 if the file on disk differs from what would be generated.
The format is described in docs/deal-spec.md; the file is never edited by hand.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from racing_demon.game.cards import PACK_SIZE
from racing_demon.game.deal import (
    DEAL_ALGORITHM,
    U32_LIMIT,
    MatchSeed,
    commitment,
    derive_pack,
    pack_digest,
    shuffle_indices,
    uniform_below,
    word_stream,
)

VECTORS_PATH = Path(__file__).resolve().parents[1] / "tests" / "vectors" / "deal-kat.json"

MAX_HAND_SEAT = U32_LIMIT - 1
FIRST_WORDS = 8

# The last seed string is non-ASCII to pin down UTF-8 encoding without normalisation.
PLAIN_SEEDS = ("demo", "tournament 2024 / round 3 / table 7", "café ♠ 5H@1")
WORD_CASES = ((1, 0), (1, 1), (2, 0), (MAX_HAND_SEAT, MAX_HAND_SEAT))
PACK_CASES = ((1, 0), (1, 1), (1, 3), (7, 2), (MAX_HAND_SEAT, MAX_HAND_SEAT))

# Found by searching hands of seat 0: hand 171358's first block contains the bytes FF FF FF
# (the Python fast path falls back) but nothing is rejected; in hand 2335279 the draw for
# n = 49 really rejects a word.
REJECTION_SEED = "kat: rejection"
REJECTION_PACK_CASES = ((1, 0), (171358, 0), (2335279, 0))

MATCH_SECRET = bytes(range(32))
# Shortest, longest and an in-between contribution length.
MATCH_CONTRIBUTIONS = (
    bytes.fromhex("a0" * 16),
    bytes(range(64)),
    b"seat two: 24 bytes here",
)


def _limit(n: int) -> int:
    return U32_LIMIT - U32_LIMIT % n


def _crafted_shuffles() -> list[dict[str, Any]]:
    """Word streams chosen to hit rejection, its boundary and its absence."""
    max_word = U32_LIMIT - 1
    cases: list[tuple[str, int, list[int]]] = [
        ("one item draws no word", 1, []),
        ("n = 2 divides 2^32, so the largest word is accepted", 2, [max_word]),
        ("n = 3 rejects only the largest word", 3, [max_word, 1, max_word]),
        (
            "n = 7: words at and above the limit are rejected, limit - 1 is accepted; "
            "n = 6 and n = 5 the same; the trailing word is not consumed",
            7,
            [
                *(_limit(7), _limit(7) + 1, _limit(7) + 2, max_word, _limit(7) - 1),
                *(_limit(6), _limit(6) - 1),
                *(max_word, max_word - 1),
                max_word,
                0,
                0,
                12345,
            ],
        ),
        (
            "n = 52: the word at the limit is rejected and limit - 1 gives j = 51",
            52,
            [_limit(52), _limit(52) - 1, *[0] * 50],
        ),
        ("j = i at every step leaves the canonical order", 52, list(range(51, 0, -1))),
        ("j = 0 at every step", 52, [0] * 51),
    ]
    vectors = []
    for description, n, words in cases:
        stream = iter(words)
        expected = shuffle_indices(n, stream)
        vectors.append(
            {
                "description": description,
                "n": n,
                "words": words,
                "expected": expected,
                "words_consumed": len(words) - sum(1 for _ in stream),
            }
        )
    return vectors


def _recorded(words: Iterator[int], log: list[int]) -> Iterator[int]:
    for word in words:
        log.append(word)
        yield word


def _pack_trace(seed: MatchSeed, hand: int, seat: int) -> dict[str, Any]:
    """The pack, its digest and the words its 52-card shuffle consumed and rejected."""
    log: list[int] = []
    words = _recorded(word_stream(seed, hand, seat), log)
    rejected: list[dict[str, int]] = []
    for n in range(PACK_SIZE, 1, -1):
        start = len(log)
        uniform_below(n, words)
        # Every word of this draw but the last was rejected.
        rejected.extend(
            {"n": n, "word": word, "position": start + offset}
            for offset, word in enumerate(log[start:-1])
        )
    pack = derive_pack(seed, hand, seat)
    return {
        "hand": hand,
        "seat": seat,
        "faces": [card.face for card in pack],
        "digest": pack_digest(hand, seat, pack),
        "words_consumed": len(log),
        "rejected_words": rejected,
    }


def _seed_vectors(seed: MatchSeed, pack_cases: tuple[tuple[int, int], ...]) -> dict[str, Any]:
    return {
        "prk": seed.prk.hex(),
        "words": [
            {
                "hand": hand,
                "seat": seat,
                "first_words": list(itertools.islice(word_stream(seed, hand, seat), FIRST_WORDS)),
            }
            for hand, seat in WORD_CASES
        ],
        "packs": [_pack_trace(seed, hand, seat) for hand, seat in pack_cases],
    }


def build_vectors() -> dict[str, Any]:
    """Every known-answer vector, as the JSON-ready structure written to VECTORS_PATH."""
    plain = [
        {"seed": text, **_seed_vectors(MatchSeed.from_plain(text), PACK_CASES)}
        for text in PLAIN_SEEDS
    ]
    plain.append(
        {
            "seed": REJECTION_SEED,
            **_seed_vectors(MatchSeed.from_plain(REJECTION_SEED), REJECTION_PACK_CASES),
        }
    )
    match_seed = MatchSeed.from_secret(MATCH_SECRET, MATCH_CONTRIBUTIONS)
    return {
        "algorithm": DEAL_ALGORITHM,
        "description": (
            "Known-answer vectors for docs/deal-spec.md. Words are unsigned 32-bit integers; "
            "faces list the pack p[0..51]; byte strings are lowercase hex. Generated by "
            "scripts/regen_deal_vectors.py: do not edit."
        ),
        "plain_seeds": plain,
        "match_seeds": [
            {
                "secret": MATCH_SECRET.hex(),
                "commitment": commitment(MATCH_SECRET),
                "contributions": [contribution.hex() for contribution in MATCH_CONTRIBUTIONS],
                **_seed_vectors(match_seed, PACK_CASES),
            }
        ],
        "shuffles": _crafted_shuffles(),
    }


def render(vectors: dict[str, Any]) -> str:
    return json.dumps(vectors, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the deal known-answer vectors.")
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
