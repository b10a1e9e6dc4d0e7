"""Chi-square tests of deal uniformity on fixed inputs: deterministic, so never flaky.

Each test runs the real shuffle and a deliberately naive one (swap every position with a
uniformly chosen one, a classic biased shuffle) on the same word streams, and asserts that
the test accepts the first and rejects the second: that shows the sample is big enough to
catch a biased shuffle, not just that the real one passes.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from itertools import permutations

import pytest

from racing_demon.game.deal import (
    MatchSeed,
    derive_pack,
    shuffle_indices,
    uniform_below,
    word_stream,
)

SEED = MatchSeed.from_plain("racing-demon statistics")
# Significance level: the real shuffle must not be rejected at 0.1%, in either tail (a fit
# that is too good would be as suspicious as a bad one), and the naive one must be rejected
# far beyond it.
ALPHA = 1e-3
NAIVE_P_MAX = 1e-12

Shuffle = Callable[[int, Iterator[int]], list[int]]


def chi2_sf(statistic: float, dof: int) -> float:
    """P(X >= statistic) for X chi-square with ``dof`` degrees of freedom.

    Wilson-Hilferty approximation: (X / dof) ** (1/3) is close to normal with mean
    1 - 2 / (9 dof) and variance 2 / (9 dof), so the tail is 0.5 * erfc(z / sqrt(2)) for the
    standardised z. In the upper tail this is within about 10% of the exact value at
    5 degrees of freedom and within 4% from 23 on (see test_chi2_sf_matches_tables).
    """
    variance = 2 / (9 * dof)
    z = ((statistic / dof) ** (1 / 3) - (1 - variance)) / math.sqrt(variance)
    return 0.5 * math.erfc(z / math.sqrt(2))


def naive_shuffle(n: int, words: Iterator[int]) -> list[int]:
    """For each i, swap a[i] with a[uniform below n]: n^n equally likely paths onto n!
    permutations, which cannot be uniform for n > 2."""
    order = list(range(n))
    for i in range(n):
        j = uniform_below(n, words)
        order[i], order[j] = order[j], order[i]
    return order


@pytest.mark.parametrize(
    ("statistic", "dof", "tail"),
    [
        # Critical values from standard chi-square tables.
        (11.0705, 5, 0.05),
        (20.5150, 5, 0.001),
        (49.7282, 23, 0.001),
        (135.807, 100, 0.01),
        (67.5048, 100, 0.995),
    ],
)
def test_chi2_sf_matches_tables(statistic: float, dof: int, tail: float) -> None:
    assert chi2_sf(statistic, dof) == pytest.approx(tail, rel=0.15)


def permutation_p_value(shuffle: Shuffle, n: int, samples: int) -> float:
    """Chi-square over the n! orderings of n items, one shuffle per hand of seat 0."""
    counts = Counter(
        tuple(shuffle(n, word_stream(SEED, hand, 0))) for hand in range(1, samples + 1)
    )
    expected = samples / math.factorial(n)
    statistic = sum((counts[order] - expected) ** 2 / expected for order in permutations(range(n)))
    return chi2_sf(statistic, math.factorial(n) - 1)


# The naive shuffle's bias per sample is sum((p - 1/n!)^2 * n!) = 0.0123 for n = 3 and
# 0.0298 for n = 4, so with 24,000 samples its statistic lands about 80 to 100 standard
# deviations above the mean (p below 1e-40).
@pytest.mark.slow
@pytest.mark.parametrize("n", [3, 4])
def test_small_n_permutations_are_uniform(n: int) -> None:
    samples = 24_000
    assert ALPHA < permutation_p_value(shuffle_indices, n, samples) < 1 - ALPHA
    assert permutation_p_value(naive_shuffle, n, samples) < NAIVE_P_MAX


def position_p_value(packs: Iterator[list[int]], count: int) -> float:
    """Chi-square over the 52 x 52 table of (card, position) counts of ``count`` packs.

    Each pack is a permutation matrix, so a cell's count is Binomial(count, 1/52) but cells
    are correlated: one pack's covariance is (P kron P) / 51 with P = I - J/52, a projection
    of rank 51 * 51. The usual statistic sum((O - E)^2 / E) is therefore 52/51 times a
    chi-square with 51^2 degrees of freedom, and is scaled back before the lookup.
    """
    table = [[0] * 52 for _ in range(52)]
    for pack in packs:
        for position, card in enumerate(pack):
            table[card][position] += 1
    expected = count / 52
    statistic = sum((cell - expected) ** 2 / expected for row in table for cell in row)
    return chi2_sf(statistic * 51 / 52, 51 * 51)


PACK_HANDS = range(1, 5_001)
PACK_SEATS = range(4)


def real_packs() -> Iterator[list[int]]:
    for hand in PACK_HANDS:
        for seat in PACK_SEATS:
            yield [card.index for card in derive_pack(SEED, hand, seat)]


def naive_packs() -> Iterator[list[int]]:
    for hand in PACK_HANDS:
        for seat in PACK_SEATS:
            yield naive_shuffle(52, word_stream(SEED, hand, seat))


# The naive 52-card shuffle puts some cards at some positions up to 35% more often than
# 1/52 (per-sample bias 0.67, computed exactly), which 20,000 packs turn into a statistic
# about 180 standard deviations above the mean. The whole test takes about a second.
@pytest.mark.slow
def test_card_positions_are_uniform() -> None:
    count = len(PACK_HANDS) * len(PACK_SEATS)
    assert ALPHA < position_p_value(real_packs(), count) < 1 - ALPHA
    assert position_p_value(naive_packs(), count) < NAIVE_P_MAX
