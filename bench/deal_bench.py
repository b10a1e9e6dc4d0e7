"""Micro-benchmark: one derive_pack against one random.shuffle of 52 items, in the same run;
and HKDF-Expand of one 224-byte block by cryptography against a loop over hmac.digest.

Run ``python bench/deal_bench.py``. Each is timed with timeit over ``number`` calls per
repeat, the four taking their repeats in turn, and the **minimum** over repeats is reported:
noise (other processes, frequency changes) only ever adds time, so the minimum is the most
reproducible estimate of the cost. ``random`` is imported here only as the yardstick; the
deal code never uses it.

The expand figures are why game/deal.py still imports cryptography, which the game should
not (STYLE.md): over the standard library, a block is seven ``hmac.digest`` calls, each
setting its key up afresh, where cryptography's HKDFExpand is one call. ``stdlib_expand``
is the candidate that would replace it, checked here to give the same bytes; it should
once its figure is no higher than cryptography's.
"""

from __future__ import annotations

import hmac
import itertools
import random
import timeit
from collections.abc import Callable

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

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
    """What game/deal.py calls."""
    return HKDFExpand(hashes.SHA256(), length, info).derive(prk)


def _per_call_us(
    funcs: dict[str, Callable[[], object]], number: int, repeats: int
) -> dict[str, float]:
    """The minimum per call of each, their repeats taken in turn so that a burst of load
    elsewhere falls on all of them alike."""
    timers = {name: timeit.Timer(func) for name, func in funcs.items()}
    best = dict.fromkeys(funcs, float("inf"))
    for _ in range(repeats):
        for name, timer in timers.items():
            best[name] = min(best[name], timer.timeit(number) / number * 1e6)
    return best


def measure(repeats: int = 15, number: int = 10_000) -> dict[str, float]:
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
    if stdlib_expand(prk, _INFO, _BLOCK_BYTES) != cryptography_expand(prk, _INFO, _BLOCK_BYTES):
        raise AssertionError("the two HKDF-Expands disagree")

    us = _per_call_us(
        {
            "deal": one_deal,
            "shuffle": one_shuffle,
            "cryptography": lambda: cryptography_expand(prk, _INFO, _BLOCK_BYTES),
            "stdlib": lambda: stdlib_expand(prk, _INFO, _BLOCK_BYTES),
        },
        number,
        repeats,
    )
    return {
        "derive_pack_us": us["deal"],
        "random_shuffle_us": us["shuffle"],
        "ratio": us["deal"] / us["shuffle"],
        "expand_cryptography_us": us["cryptography"],
        "expand_stdlib_us": us["stdlib"],
        "expand_stdlib_vs_cryptography": us["stdlib"] / us["cryptography"],
    }


if __name__ == "__main__":
    result = measure()
    print(f"derive_pack:    {result['derive_pack_us']:6.2f} us per pack (min of repeats)")
    print(f"random.shuffle: {result['random_shuffle_us']:6.2f} us per 52-item shuffle")
    print(f"ratio:          {result['ratio']:6.3f} (derive_pack / random.shuffle)")
    print(
        f"HKDF-Expand of a 224-byte block: cryptography {result['expand_cryptography_us']:.2f} us, "
        f"hmac.digest loop {result['expand_stdlib_us']:.2f} us: "
        f"ratio {result['expand_stdlib_vs_cryptography']:.2f} (stdlib / cryptography)"
    )
