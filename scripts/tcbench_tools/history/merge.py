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
    nothing in the context tells apart, switches between two levels without any change;
  - the runs after it are not a bimodal pool (``turned_bimodal``): RECURRING of them still at
    the old level and RECURRING far beyond it is a runner pool that turned bimodal, not a new
    level (its median moves as the share of the other runner's runs does).

And beside its neighbours (``_in_context``), for the two false alarms issue 44 found on real
histories:
  - a small boundary beside one at least LARGE times its size (a drift just before a very
    large step) holds only when the level between the two held RECURRING_RUNS runs or more, or
    went the other way, and when it moves the level by more than LEVEL_BAND times the noise of
    the whole level it splits (``level_noise``: a level's own run-to-run noise and its slow
    wander, which the series' noise, set by a quieter level, can hide);
  - a new level of fewer than RECURRING_RUNS runs that single outliers beside it (runs the
    search set aside, within 2 x RECURRING_RUNS runs of it) visit VISITS times or more is the
    other mode of a bimodal pool, drawn a few times in a row.

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


def turned_bimodal(after: np.ndarray, old: float, shift: float, sigma: float) -> bool:
    """Whether the runs after a boundary are a bimodal pool, not a new level: at least RECURRING
    of them (of at least RECURRING_RUNS) still at the old level (within its noise band), and
    at least RECURRING far beyond it in the direction of the change (more than twice the band:
    a second mode). A single shifted level never fills both: for any shift, at most 7 % of its
    runs (normal noise) lie in one and as many in the other."""
    if shift == 0 or len(after) < RECURRING_RUNS:
        return False
    at_old = np.abs(after - old) <= BAND * sigma
    far = np.sign(shift) * (after - old) > 2 * BAND * sigma
    return bool(np.mean(at_old) >= RECURRING and np.mean(far) >= RECURRING)


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
    holds = (p < ALPHA and abs(shift) >= MIN_SHIFT * sigma and not recurring
             and not turned_bimodal(after, old, shift, sigma))
    return Edge(lo, at, hi, old, new, p, z, bool(holds))


LARGE = 5.0  # a boundary beside one this many times its shift is judged in that context
LEVEL_BAND = 3.0  # ... and must move the level by more than this many times the level's noise
VISITS = 2  # single outliers at a short new level beside it: the other mode of a bimodal pool


def level_noise(y: np.ndarray, lo: int, at: int, hi: int, sigma: float) -> float:
    """The noise of the whole level [lo, hi) that a boundary at ``at`` splits: the larger of the
    series' run-to-run noise, the level's own (search.noise on its runs: one level of a series
    can be far noisier than another, which the series' estimate, dominated by the quieter one,
    hides), and the spread of its runs around their segments' medians (1.4826 times the median
    absolute deviation: the level's slow wander, which run-to-run differences do not see)."""
    from tcbench_tools.history.search import noise

    span = y[lo:hi]
    resid = np.concatenate([y[lo:at] - np.median(y[lo:at]), y[at:hi] - np.median(y[at:hi])])
    return max(sigma, noise(span), 1.4826 * float(np.median(np.abs(resid))))


def _in_context(y: np.ndarray, sigma: float, edges: list[Edge], j: int,
                outliers: np.ndarray | None) -> bool:
    """Whether edge j still holds beside its neighbours (the module docstring says when):
    ``outliers`` are the runs the search set aside as one-off outliers."""
    e = edges[j]
    for k in (j - 1, j + 1):
        if not 0 <= k < len(edges) or abs(edges[k].shift) < LARGE * abs(e.shift):
            continue
        # The level between the two: it led into the large change, or followed out of it.
        between = (e.hi - e.at) if k > j else (e.at - e.lo)
        if between < RECURRING_RUNS and np.sign(edges[k].shift) == np.sign(e.shift):
            return False
        if abs(e.shift) <= LEVEL_BAND * level_noise(y, e.lo, e.at, e.hi, sigma):
            return False
    if outliers is not None and e.hi - e.at < RECURRING_RUNS:
        # The runs beside it, at most 2 x RECURRING_RUNS on each side: a pool that is bimodal
        # now, not two slow nights in a thousand that happened to land at its level.
        after = edges[j + 1].hi if j + 1 < len(edges) else e.hi
        reach = 2 * RECURRING_RUNS
        near = np.r_[max(e.lo, e.at - reach):e.at, e.hi:min(after, e.hi + reach)]
        # Runs at the new level: nearer it than the old one, and outside the old one's noise.
        visits = ((np.abs(y[near] - e.new) < abs(e.shift) / 2)
                  & (np.sign(e.shift) * (y[near] - e.old) > BAND * sigma))
        if np.count_nonzero(visits & outliers[near]) >= VISITS:
            return False
    return True


def merge(y: np.ndarray, sigma: float, boundaries: list[int], floor: float,
          sums: np.ndarray | None = None,
          outliers: np.ndarray | None = None) -> tuple[list[Edge], list[Edge]]:
    """(kept, below the floor): every kept boundary holds against the whole segments beside it
    and in its context (``_in_context``: ``outliers``, the runs the search set aside), and
    changes the level by at least ``floor`` percent. ``sums`` (search.sums_of the series the
    search ran on): when a boundary's neighbours merge, it moves to the best split of its new
    span before it is tested again, and the boundary beyond it is tested again too."""
    n = len(y)
    cuts = [0, *boundaries, n]
    edges = [test(y, cuts[i - 1], cuts[i], cuts[i + 1], sigma) for i in range(1, len(cuts) - 1)]
    below: list[Edge] = []
    while edges:
        weak = [i for i, e in enumerate(edges)
                if not e.holds or not _in_context(y, sigma, edges, i, outliers)]
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
