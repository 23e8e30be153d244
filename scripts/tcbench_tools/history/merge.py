"""The merge pass: which candidate boundaries are real level changes.

Each boundary is tested against the whole segments on its two sides. A boundary that fails is
merged away (its two segments become one) and its neighbours are tested again against the
merged segments, weakest first, until every kept boundary holds (the merge step of Apache
Otava's E-divisive, Fleming et al., ICPE 2023). Testing only against the search's own segments
loses a large step next to a short one: with 3 runs on one side, no rank test can reach p < 0.01
(its smallest p is 0.1 for 3 + 3 runs, 0.024 for 3 + 6).

A boundary holds when
  - the medians of its two segments differ by at least MIN_SHIFT sigma (the series' run-to-run
    noise, search.noise): a shift smaller than the noise is not reported;
  - they differ significantly (p < ALPHA): by a two-sided Mann-Whitney U test (ranks.py,
    scipy's computation) when the two segments hold enough runs for that test to reach ALPHA at
    all; else (both short: 3 + 3 to 3 + 8, 4 + 4, 4 + 5 runs) by a z test of the two medians
    against the series' own noise, which is estimated from every run of the series (the wider
    context), with the variance of a median (pi/2 sigma^2 / n);
  - the new level is not one the series already visited in RECURRING of the runs before it
    (runs beyond the old level's noise toward the new level, and past half-way; judged on at
    least RECURRING_RUNS runs): a bimodal series, such as a pool of two kinds of runner that
    nothing in the context tells apart, switches between two levels without any change.

The weakest failing boundary goes first (the smallest shift in units of its standard error);
its neighbours move to the best split of their new spans (least squares, as the search) and are
tested again. When every boundary holds, the smallest one below the reporting floor (``floor``
percent, the minimum magnitude) is merged away, and the pass goes on; those are returned apart,
for the dashboard to draw as below the floor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tcbench_tools.history.ranks import mann_whitney_p, normal_sf

ALPHA = 0.01  # significance of a level change
MIN_SHIFT = 1.5  # the two segments' medians must differ by this many sigma
RECURRING = 0.2  # share of the runs before a boundary already at its new level: a bimodal series
RECURRING_RUNS = 10  # ... among at least this many (in fewer, a misplaced boundary looks alike)
MEDIAN_VAR = math.pi / 2  # variance of a sample median over that of a mean (normal noise)
BAND = 3.0  # sigma: a run further than this from a level lies outside that level's noise


@dataclass
class Edge:
    """One boundary: the first run of the new level, between segments [lo, at) and [at, hi)."""

    lo: int
    at: int
    hi: int
    old: float  # median of y over [lo, at)
    new: float  # median of y over [at, hi)
    p: float
    z: float  # the shift in units of its standard error
    holds: bool

    @property
    def shift(self) -> float:
        return self.new - self.old

    @property
    def change_pct(self) -> float:
        return math.expm1(self.shift) * 100.0


def band(shift: float, sigma: float) -> float:
    """How far from the old level a run must lie, toward the new one, to count as at the new
    level: outside the old level's noise (BAND sigma), or past half-way for a small change."""
    return min(abs(shift) / 2, BAND * sigma)


def _min_rank_p(n1: int, n2: int) -> float:
    """The smallest two-sided p the exact Mann-Whitney U test can give for these sizes."""
    if min(n1, n2) >= 8:
        return 0.0
    return 2.0 / math.comb(n1 + n2, n1)


def test(y: np.ndarray, lo: int, at: int, hi: int, sigma: float) -> Edge:
    before, after = y[lo:at], y[at:hi]
    old, new = float(np.median(before)), float(np.median(after))
    shift = new - old
    z = abs(shift) / (sigma * math.sqrt(MEDIAN_VAR * (1 / len(before) + 1 / len(after))))
    if abs(shift) < MIN_SHIFT * sigma:
        return Edge(lo, at, hi, old, new, 1.0, z, False)  # smaller than the noise: no test
    if _min_rank_p(len(before), len(after)) < ALPHA:
        p = mann_whitney_p(before, after)
    else:
        p = 2 * normal_sf(z)
    # Runs before the boundary already past the new level's side of the old level's noise.
    beyond = np.sign(shift) * (before - old) > max(abs(shift) / 2, BAND * sigma)
    recurring = shift != 0 and len(before) >= RECURRING_RUNS and np.mean(beyond) >= RECURRING
    holds = p < ALPHA and abs(shift) >= MIN_SHIFT * sigma and not recurring
    return Edge(lo, at, hi, old, new, p, z, bool(holds))


def merge(y: np.ndarray, sigma: float, boundaries: list[int], floor: float,
          sums: np.ndarray | None = None) -> tuple[list[Edge], list[Edge]]:
    """(kept, below the floor): every kept boundary holds against the whole segments beside it
    and changes the level by at least ``floor`` percent. ``sums`` (search.sums_of the series
    the search ran on): when a boundary's neighbours merge, it moves to the best split of its
    new span before it is tested again, and the boundary beyond it is tested again too."""
    n = len(y)
    cuts = [0, *boundaries, n]
    edges = [test(y, cuts[i - 1], cuts[i], cuts[i + 1], sigma) for i in range(1, len(cuts) - 1)]
    below: list[Edge] = []
    while edges:
        weak = [i for i, e in enumerate(edges) if not e.holds]
        if weak:
            i = min(weak, key=lambda k: edges[k].z)
        else:
            small = [i for i, e in enumerate(edges) if abs(e.change_pct) < floor]
            if not small:
                break
            i = min(small, key=lambda k: abs(edges[k].shift))
            below.append(edges[i])
        edges.pop(i)
        # The neighbours now reach across the merged segment.
        if i > 0:
            _retest(y, sigma, edges, i - 1, sums)
        if i < len(edges):
            _retest(y, sigma, edges, i, sums)
    return edges, below


def _span(edges: list[Edge], j: int, n: int) -> tuple[int, int]:
    """Where edge j's two segments begin and end: at its neighbours (or the series' ends)."""
    return (edges[j - 1].at if j > 0 else 0), (edges[j + 1].at if j + 1 < len(edges) else n)


def _retest(y: np.ndarray, sigma: float, edges: list[Edge], j: int,
            sums: np.ndarray | None) -> None:
    """Edge j, between its neighbours: placed at the best split there (when ``sums``), tested;
    a move changes a segment of each neighbour, which are tested again too."""
    from tcbench_tools.history.search import MIN_SIZE, best_split

    n = len(y)
    lo, hi = _span(edges, j, n)
    at = edges[j].at
    if sums is not None and hi - lo >= 2 * MIN_SIZE:
        at = best_split(sums, lo, hi)[0]
    moved = at != edges[j].at
    edges[j] = test(y, lo, at, hi, sigma)
    for k in (j - 1, j + 1) if moved else ():
        if 0 <= k < len(edges):
            a, b = _span(edges, k, n)
            edges[k] = test(y, a, edges[k].at, b, sigma)
