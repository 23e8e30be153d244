"""The two-sided Mann-Whitney U test, as ``scipy.stats.mannwhitneyu(x, y)`` computes it with its
defaults, without its per-call overhead.

The merge pass tests a boundary every time a neighbour merges: hundreds of tests on a long,
restless series, thousands across a history. scipy's function spends about a millisecond per
call on checking and broadcasting its inputs, more than the test itself; this module computes
the same p-value (tests/scripts/test_history_detect.py compares the two) in tens of
microseconds:

  - U = max(U1, U2), U1 from the average ranks of the pooled sample;
  - exact (the null distribution of U, without tie correction) when at least one sample holds
    8 values or fewer and there are no ties; the distribution's counts are the coefficients of
    the Gaussian binomial coefficient [n1 + n2 choose n1] in q, built by multiplying and
    dividing by (1 - q^k);
  - else the normal approximation with the tie correction and the continuity correction.
p = 2 * P(U' >= U), at most 1.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np


@lru_cache(maxsize=256)
def _tail(n1: int, n2: int) -> np.ndarray:
    """P(U' >= u) for u = 0 .. n1 * n2 under the null hypothesis (no ties)."""
    small = min(n1, n2)
    other = n1 + n2 - small
    size = small * other + 1
    counts = np.zeros(size)
    counts[0] = 1.0
    # prod_{i=1..small} (1 - q^(other + i)) / (1 - q^i): the number of arrangements per U.
    for i in range(1, small + 1):
        k = other + i
        if k < size:
            counts[k:] -= counts[:size - k].copy()  # times (1 - q^k)
        for r in range(i):  # divided by (1 - q^i): c[j] += c[j - i], a running sum per residue
            counts[r::i] = np.cumsum(counts[r::i])
    counts = np.maximum(counts, 0.0)
    tail = np.cumsum(counts[::-1])[::-1]
    return tail / tail[0]


def _average_ranks(pooled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks (1-based) of the pooled values, and the size of each group of ties."""
    order = np.argsort(pooled, kind="mergesort")
    ordered = pooled[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sizes = np.diff(np.r_[starts, len(ordered)])
    average = starts + (sizes + 1) / 2.0  # mean of ranks starts+1 .. starts+sizes
    ranks = np.empty(len(pooled))
    ranks[order] = np.repeat(average, sizes)
    return ranks, sizes


def normal_sf(z: float) -> float:
    """P(Z > z) for a standard normal Z (scipy.special.ndtr(-z); no scipy import needed)."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def mann_whitney_p(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided p-value of the Mann-Whitney U test of x against y (scipy's defaults)."""
    n1, n2 = len(x), len(y)
    ranks, ties = _average_ranks(np.concatenate([x, y]))
    u1 = float(ranks[:n1].sum()) - n1 * (n1 + 1) / 2
    u = max(u1, n1 * n2 - u1)
    tied = bool((ties > 1).any())
    if (n1 <= 8 or n2 <= 8) and not tied:
        p = 2.0 * float(_tail(n1, n2)[int(round(u))])
    else:
        n = n1 + n2
        spread = math.sqrt(n1 * n2 / 12 * ((n + 1) - float((ties ** 3 - ties).sum()) /
                                           (n * (n - 1))))
        p = 2.0 * normal_sf((u - n1 * n2 / 2 - 0.5) / spread) if spread > 0 else 2.0
    return min(max(p, 0.0), 1.0)
