"""The history search (scripts/tcbench_tools/history/search.py) against a reference nobody here
wrote: ruptures' binary segmentation (``ruptures.Binseg``, least-squares cost "l2"), which finds
the same boundaries when given the same penalty and minimum segment length.

tcbench computes each split's gain from cumulative sums (a few vector operations per split, so
that 2000 series of 10,000 runs take seconds); ruptures recomputes each segment's cost from its
values. Binary segmentation splits every segment whose best split lowers the cost by more than
the penalty, whichever order the splits are taken in (ruptures takes the largest gain first,
tcbench a stack), so the two must agree boundary for boundary on any series."""

from __future__ import annotations

import numpy as np
import pytest
import ruptures

from tcbench_tools.history import search


def _tcbench(y: np.ndarray, penalty: float) -> list[int]:
    found: dict[int, float] = {}
    search._segment(search.sums_of(y), 0, len(y), penalty, found)
    return sorted(found)


def _ruptures(y: np.ndarray, penalty: float) -> list[int]:
    algo = ruptures.Binseg(model="l2", min_size=search.MIN_SIZE, jump=1).fit(y)
    return algo.predict(pen=penalty)[:-1]  # ruptures ends the list with len(y)


def _series(rng: np.random.Generator) -> np.ndarray:
    """Log times of a benchmark: 1-4 levels of random length, 0.2-3 % noise, now and then a
    one-off slow night (which binary segmentation may or may not cut around: both must agree)."""
    n = int(rng.integers(6, 160))
    levels = int(rng.integers(1, 5))
    cuts = np.sort(rng.choice(np.arange(1, n), size=min(levels - 1, n - 1), replace=False))
    y = np.zeros(n)
    for c in cuts:
        y[c:] += rng.normal(0, 0.05)
    y += rng.normal(0, rng.uniform(0.002, 0.03), n)
    if rng.random() < 0.3:
        y[rng.integers(0, n)] += 0.2
    return y


@pytest.mark.parametrize("seed", range(4))
def test_the_search_finds_the_boundaries_ruptures_binseg_finds(seed):
    rng = np.random.default_rng(1000 + seed)
    compared = split = 0
    for _ in range(60):
        y = _series(rng)
        sigma = search.noise(y)
        penalty = search.BETA * sigma ** 2 * np.log(len(y))
        ours = _tcbench(y, penalty)
        assert ours == _ruptures(y, penalty), (len(y), penalty)
        compared += 1
        split += bool(ours)
    assert compared == 60 and 10 <= split < 60  # both kinds of series were compared


def test_a_clear_step_is_one_boundary_in_both():
    y = np.concatenate([np.zeros(40), np.full(30, np.log(1.1))])
    y += np.random.default_rng(7).normal(0, 0.005, len(y))
    penalty = search.BETA * search.noise(y) ** 2 * np.log(len(y))
    assert _tcbench(y, penalty) == _ruptures(y, penalty) == [40]
