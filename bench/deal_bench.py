"""Micro-benchmark: one derive_pack against one random.shuffle of 52 items, in the same run;
and HKDF-Expand of one 224-byte block three ways: the game's own (hashlib, what
derive_pack runs), cryptography's HKDFExpand (what it ran before issue 34) and a plain loop
over hmac.digest.

Run ``python bench/deal_bench.py``. Rounds are paired, as in the verification bench: each
round times ``number`` calls of each back to back, in an order that rotates from round to
round, and a ratio is the **median of the rounds' own ratios**. A machine whose speed
drifts within seconds (other processes, frequency changes) then moves both sides of a
ratio alike; the minimum over separate repeats that this bench used before compared each
side at its own luckiest moment, and the same code measured 0.72 in one run and 1.31 in
the next. The per-call figures beside the ratios are medians over the rounds. ``random``
is imported here only as the yardstick; the deal code never uses it.

The game imports only the standard library (issue 34, point 1: the rules core runs in the
browser page's Pyodide, which has no cryptography), so its HKDF-Expand is written over
hashlib: HMAC's inner and outer SHA-256 states are started once per key and copied for
each of a block's seven HMACs, where hmac.digest sets the key up afresh each time. The
cost per hand it adds is the expand figures' difference times the seats (a pack takes one
block but for about one pack in 80,000): printed for a hand of four seats.
"""

from __future__ import annotations

import hmac
import itertools
import operator
import random
import statistics
import timeit
from collections.abc import Callable

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

from racing_demon.game import deal
from racing_demon.game.deal import MatchSeed, derive_pack

_BLOCK_BYTES = 224
# The info of B(0) for hand 1, seat 0 (docs/deal-spec.md, step 4).
_INFO = bytes.fromhex("00000014726163696e672d64656d6f6e2f6465616c2f7631000000010000000000000000")


def stdlib_expand(prk: bytes, info: bytes, length: int) -> bytes:
    """RFC 5869 section 2.3 over hmac.digest: T(i) = HMAC(PRK, T(i-1) || info || i)."""
    okm, block = b"", b""
    for counter in range(1, -(-length // 32) + 1):
        block = hmac.digest(prk, block + info + bytes([counter]), "sha256")
        okm += block
    return okm[:length]


def cryptography_expand(prk: bytes, info: bytes, length: int) -> bytes:
    """What game/deal.py called before issue 34."""
    return HKDFExpand(hashes.SHA256(), length, info).derive(prk)


def _paired_rounds(
    funcs: dict[str, Callable[[], object]], number: int, rounds: int
) -> dict[str, list[float]]:
    """Microseconds per call of each, one figure a round, the order rotating each round."""
    timers = {name: timeit.Timer(func) for name, func in funcs.items()}
    order = list(timers)
    us: dict[str, list[float]] = {name: [] for name in order}
    for round_ in range(rounds):
        turn = round_ % len(order)
        for name in order[turn:] + order[:turn]:
            us[name].append(timers[name].timeit(number) / number * 1e6)
    return us


def measure(rounds: int = 41, number: int = 2_000) -> dict[str, float]:
    """Microseconds per call of each, and derive_pack's cost as a multiple of shuffle's."""
    seed = MatchSeed.from_plain("bench")
    # A fresh (hand, seat) on every call, as in a real match: nothing can be cached. Drawing
    # it costs about 0.1 us, charged to derive_pack, so the comparison errs against the deal.
    deals = ((hand, seat) for hand in itertools.count(1) for seat in range(4))
    items = list(range(52))

    def one_deal() -> None:
        hand, seat = next(deals)
        derive_pack(seed, hand, seat)

    def one_shuffle() -> None:
        random.shuffle(items)

    prk = seed.prk
    expected = cryptography_expand(prk, _INFO, _BLOCK_BYTES)
    if {stdlib_expand(prk, _INFO, _BLOCK_BYTES), deal._hkdf_expand(prk, _INFO, _BLOCK_BYTES)} != {
        expected
    }:
        raise AssertionError("the HKDF-Expands disagree")

    us = _paired_rounds(
        {
            "deal": one_deal,
            "shuffle": one_shuffle,
            "game": lambda: deal._hkdf_expand(prk, _INFO, _BLOCK_BYTES),
            "cryptography": lambda: cryptography_expand(prk, _INFO, _BLOCK_BYTES),
            "stdlib": lambda: stdlib_expand(prk, _INFO, _BLOCK_BYTES),
        },
        number,
        rounds,
    )
    median = statistics.median

    def ratio(numerator: str, denominator: str) -> float:
        return median(map(operator.truediv, us[numerator], us[denominator]))

    return {
        "rounds": float(rounds),
        "derive_pack_us": median(us["deal"]),
        "random_shuffle_us": median(us["shuffle"]),
        "ratio": ratio("deal", "shuffle"),
        "expand_game_us": median(us["game"]),
        "expand_cryptography_us": median(us["cryptography"]),
        "expand_stdlib_us": median(us["stdlib"]),
        "expand_game_vs_cryptography": ratio("game", "cryptography"),
        "expand_stdlib_vs_cryptography": ratio("stdlib", "cryptography"),
    }


if __name__ == "__main__":
    result = measure()
    print(f"derive_pack:    {result['derive_pack_us']:6.2f} us per pack (median of rounds)")
    print(f"random.shuffle: {result['random_shuffle_us']:6.2f} us per 52-item shuffle")
    print(f"ratio:          {result['ratio']:6.3f} (derive_pack / shuffle, paired rounds)")
    game, before = result["expand_game_us"], result["expand_cryptography_us"]
    print(
        f"HKDF-Expand of a 224-byte block: the game's (hashlib) {game:.2f} us, "
        f"cryptography {before:.2f} us, hmac.digest loop {result['expand_stdlib_us']:.2f} us; "
        f"ratios {result['expand_game_vs_cryptography']:.2f} and "
        f"{result['expand_stdlib_vs_cryptography']:.2f} (to cryptography)"
    )
    per_hand = 4 * result["derive_pack_us"]
    print(
        f"a hand of 4 seats: {per_hand:.1f} us of deal, {4 * (game - before):+.1f} us against "
        "cryptography's expand"
    )
