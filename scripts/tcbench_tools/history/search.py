"""Where a series may change level: its own noise, one-off outliers set aside, and the candidate
boundaries that the merge pass (merge.py) then keeps or drops.

On y = log(median time) per run, in time order:

1. Noise: sigma = the root mean square of the run-to-run differences over sqrt(2), leaving out
   differences beyond 4x their median absolute size (one-off outliers and the steps themselves):
   the series' own run-to-run noise, with a floor of 0.01 % so that a perfectly flat series
   does not make every wiggle a change.
2. Outliers: a run beyond 4 sigma from the 5-run running median is replaced by that median for
   the search only: one slow night is not a new level.
3. Candidates: binary segmentation on the least-squares cost of a piecewise-constant mean (the
   cost PELT minimises), with the penalty ``BETA * sigma^2 * ln(n)`` per boundary and segments of
   at least MIN_SIZE runs, run in overlapping windows of WINDOW runs (each change lies well
   inside one of them) and once over the whole series (long, slow shifts). Each split costs a few
   vector operations on cumulative sums, so a series of 10,000 runs takes about a millisecond;
   PELT's exact search (ruptures' C code) took 0.4 s per such series, 800 s for 2000 of them.
   Boundaries closer than MIN_SIZE keep the strongest; then each moves to the best split
   between its neighbours (a boundary found in one window can sit a run or two off). The
   search may propose more boundaries than are real: the merge pass tests each one against its
   neighbours and merges the weakest away.
"""

from __future__ import annotations

import numpy as np

BETA = 6.0  # penalty multiplier (docs/history.md shows the false-alarm rate and power it gives)
MIN_SIZE = 3  # runs per segment: a new level needs three runs before it is reported
OUTLIER = 4.0  # sigma from the running median beyond which a run is an outlier for the search
SIGMA_FLOOR = 1e-4  # 0.01 % in log time
WINDOW = 120  # runs per search window (a series this short is searched whole)
STEP = WINDOW // 2  # windows overlap by half: a change is at least STEP / 2 runs inside one


def noise(y: np.ndarray) -> float:
    """Run-to-run noise (standard deviation of y) from the first differences, see above."""
    d = np.diff(y)
    if len(d) == 0:
        return SIGMA_FLOOR
    scale = np.median(np.abs(d)) / 0.6745  # MAD of the differences as a standard deviation
    kept = d[np.abs(d) <= OUTLIER * scale] if scale > 0 else d
    sigma = float(np.sqrt(np.mean(kept ** 2) / 2)) if len(kept) else 0.0
    return max(sigma, SIGMA_FLOOR)


def cleaned(y: np.ndarray, sigma: float) -> np.ndarray:
    """y with one-off outliers replaced by the 5-run running median (for the search only)."""
    if len(y) < 5:
        return y.copy()
    from numpy.lib.stride_tricks import sliding_window_view

    padded = np.concatenate([y[2:0:-1], y, y[-2:-4:-1]])  # mirrored ends, as the filter's
    smooth = np.median(sliding_window_view(padded, 5), axis=1)
    return np.where(np.abs(y - smooth) > OUTLIER * sigma, smooth, y)


def best_split(sums: np.ndarray, a: int, b: int) -> tuple[int, float]:
    """The split a < t < b (segments of at least MIN_SIZE) that most lowers the squared error
    of [a, b), and by how much; sums are the cumulative sums with a leading 0."""
    t = np.arange(a + MIN_SIZE, b - MIN_SIZE + 1)
    total = sums[b] - sums[a]
    left = sums[t] - sums[a]
    gain = left ** 2 / (t - a) + (total - left) ** 2 / (b - t) - total ** 2 / (b - a)
    i = int(np.argmax(gain))
    return int(t[i]), float(gain[i])


def _segment(sums: np.ndarray, a: int, b: int, penalty: float, out: dict[int, float]) -> None:
    """Binary segmentation of [a, b): split while a split lowers the cost by more than the
    penalty (an explicit stack: no recursion limit on a long series)."""
    stack = [(a, b)]
    while stack:
        a, b = stack.pop()
        if b - a < 2 * MIN_SIZE:
            continue
        t, gain = best_split(sums, a, b)
        if gain <= penalty:
            continue
        out[t] = max(out.get(t, 0.0), gain)
        stack += [(a, t), (t, b)]


def sums_of(y: np.ndarray) -> np.ndarray:
    """Cumulative sums with a leading 0, of y centred (the sums stay small, the gains exact)."""
    return np.concatenate([[0.0], np.cumsum(y - np.median(y))])


def placed(sums: np.ndarray, cuts: list[int], passes: int = 3) -> list[int]:
    """Each boundary moved to the best split between its neighbours, a few times over: a
    boundary found in one window, or before its neighbours were, can sit a run or two off."""
    cuts = list(cuts)
    n = len(sums) - 1
    for _ in range(passes):
        moved = False
        for i, t in enumerate(cuts):
            a = cuts[i - 1] if i else 0
            b = cuts[i + 1] if i + 1 < len(cuts) else n
            best, _ = best_split(sums, a, b)
            if best != t:
                cuts[i], moved = best, True
        if not moved:
            break
    return cuts


def candidates(y: np.ndarray, sigma: float) -> list[int]:
    """Candidate boundaries (the first run of each proposed new level), ascending, at least
    MIN_SIZE apart and from either end."""
    n = len(y)
    if n < 2 * MIN_SIZE:
        return []
    sums = sums_of(y)
    found: dict[int, float] = {}
    _segment(sums, 0, n, BETA * sigma ** 2 * np.log(n), found)
    if n > WINDOW:
        starts = list(range(0, n - WINDOW + 1, STEP))
        if starts[-1] != n - WINDOW:
            starts.append(n - WINDOW)  # the newest runs always end a window
        penalty = BETA * sigma ** 2 * np.log(WINDOW)
        # The first split of every window at once (one matrix), then the few that split go on.
        rows = np.asarray(starts)[:, None] + np.arange(WINDOW + 1)[None, :]
        window_sums = sums[rows] - sums[rows[:, :1]]
        t = np.arange(MIN_SIZE, WINDOW - MIN_SIZE + 1)
        total = window_sums[:, -1:]
        left = window_sums[:, t]
        gain = left ** 2 / t + (total - left) ** 2 / (WINDOW - t) - total ** 2 / WINDOW
        for row in np.flatnonzero(gain.max(axis=1) > penalty):
            _segment(sums, starts[row], starts[row] + WINDOW, penalty, found)
    # Overlapping windows find one change at neighbouring runs: keep the strongest of each group
    # closer than MIN_SIZE, so that every segment keeps at least MIN_SIZE runs.
    kept: list[int] = []
    for t in sorted(found, key=lambda k: -found[k]):
        if MIN_SIZE <= t <= n - MIN_SIZE and all(abs(t - k) >= MIN_SIZE for k in kept):
            kept.append(t)
    return placed(sums, sorted(kept))
