"""``history check``: change points in each series, and the gate on the newest runs.

Per series (one benchmark, one GPU model, one mode), on y = log(median time) per run:

1. Noise: sigma = the root mean square of the run-to-run differences over sqrt(2), leaving out
   differences beyond 4x their median absolute size (one-off outliers and the steps themselves).
   It is the series' own run-to-run noise; a floor of 0.01 % keeps a perfectly flat series from
   making every wiggle a change.
2. One-off outliers (beyond 4 sigma from a 5-run running median) are replaced by that median for
   the search only: a single slow night is not a new level.
3. Search: ruptures' KernelCPD with the linear kernel (the least-squares cost of a piecewise-
   constant mean, solved by PELT in ruptures' C code), penalty ``BETA * sigma^2 * ln(n)`` (the
   BIC form, scaled by the series' own noise), segments of at least 3 runs.
4. Test: each change point is kept when the two segments beside it differ by a two-sided
   Mann-Whitney U test (scipy) with p < ``ALPHA``, and their medians differ by at least 1.5
   sigma: a level shift smaller than the run-to-run noise is not reported.

A change point is reported with the first run of the new level, the medians of the runs before
and after it (in their segments), the change in percent and the p-value. Time is lower-better:
a longer time is a regression. The gate (exit 1) fails when a regression beyond ``threshold``
percent begins within the newest ``window`` runs of its series and at least ``CONFIRM`` runs
show it (runs of the new segment nearer the new level than the old one).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcbench_tools.history.series import History, RunInfo, Series

BETA = 6.0  # penalty multiplier (docs/history.md shows the false-alarm rate and power it gives)
MIN_SIZE = 3  # runs per segment: a new level needs three runs before it is reported
CONFIRM = 3  # runs that must show a regression before the gate fails
ALPHA = 0.01  # Mann-Whitney U significance between the two segments
MIN_SHIFT = 1.5  # the two segments' medians must differ by this many sigma
OUTLIER = 4.0  # sigma from the running median beyond which a run is an outlier for the search
SIGMA_FLOOR = 1e-4  # 0.01 % in log time
DEFAULT_WINDOW = 5
DEFAULT_THRESHOLD = 5.0


@dataclass(eq=False)
class ChangePoint:
    series: Series
    index: int  # position in the series of the first run of the new level
    run: RunInfo
    before: float  # median time of the runs before it (its segment), seconds
    after: float  # median time of the new level, seconds
    change_pct: float
    p_value: float
    confirming: int  # runs of the new level's segment nearer the new level than the old
    recent: bool  # it begins within the newest `window` runs of its series
    gates: bool  # a regression beyond the threshold, recent and confirmed: exit 1

    @property
    def direction(self) -> str:
        return "regression" if self.after > self.before else "improvement"


@dataclass
class Check:
    runs: int
    series: int
    change_points: list[ChangePoint]
    window: int
    threshold: float

    @property
    def failing(self) -> list[ChangePoint]:
        return [c for c in self.change_points if c.gates]


def noise(y: np.ndarray) -> float:
    """Run-to-run noise (standard deviation of y) from the first differences, see above."""
    d = np.diff(y)
    if len(d) == 0:
        return SIGMA_FLOOR
    scale = np.median(np.abs(d)) / 0.6745  # MAD of the differences as a standard deviation
    kept = d[np.abs(d) <= OUTLIER * scale] if scale > 0 else d
    sigma = float(np.sqrt(np.mean(kept ** 2) / 2)) if len(kept) else 0.0
    return max(sigma, SIGMA_FLOOR)


def _cleaned(y: np.ndarray, sigma: float) -> np.ndarray:
    from scipy.ndimage import median_filter

    smooth = median_filter(y, size=5, mode="mirror")
    return np.where(np.abs(y - smooth) > OUTLIER * sigma, smooth, y)


def segments(y: np.ndarray) -> tuple[list[int], float]:
    """Segment boundaries [0, b1, ..., n] that the search finds, and the noise it used."""
    import ruptures

    n = len(y)
    sigma = noise(y)
    if n < 2 * MIN_SIZE:
        return [0, n], sigma
    algo = ruptures.KernelCPD(kernel="linear", min_size=MIN_SIZE, jump=1)
    ends = algo.fit(_cleaned(y, sigma).reshape(-1, 1)).predict(pen=BETA * sigma ** 2 * np.log(n))
    return [0] + [int(e) for e in ends], sigma


def series_change_points(s: Series, runs: list[RunInfo], window: int,
                         threshold: float) -> list[ChangePoint]:
    from scipy.stats import mannwhitneyu

    y = np.log(s.median)
    edges, sigma = segments(y)
    n = len(y)
    found = []
    for i in range(1, len(edges) - 1):
        lo, at, hi = edges[i - 1], edges[i], edges[i + 1]
        mid = (float(np.median(y[lo:at])) + float(np.median(y[at:hi]))) / 2
        up = np.median(y[at:hi]) > mid
        # The search's segments are at least MIN_SIZE long, which can pull a boundary before
        # the first run of the new level (two slow runs at the end make a 3-run segment with
        # one ordinary run): move it to the first run nearer the new level than the old one,
        # and report nothing until MIN_SIZE runs are at the new level.
        while at < hi and ((y[at] <= mid) if up else (y[at] >= mid)):
            at += 1
        if hi - at < MIN_SIZE:
            continue
        before, after = y[lo:at], y[at:hi]
        shift = float(np.median(after) - np.median(before))
        if abs(shift) < MIN_SHIFT * sigma:
            continue
        p = float(mannwhitneyu(before, after, alternative="two-sided").pvalue)
        if not p < ALPHA:
            continue
        b, a = float(np.median(s.median[lo:at])), float(np.median(s.median[at:hi]))
        change = (a / b - 1.0) * 100.0
        recent = at >= n - window
        confirming = int(np.sum(after > mid) if up else np.sum(after < mid))
        gates = a > b and change > threshold and recent and confirming >= CONFIRM
        found.append(ChangePoint(s, at, runs[int(s.runs[at])], b, a, change, p, confirming,
                                 recent, gates))
    return found


def check(history: History, window: int = DEFAULT_WINDOW,
          threshold: float = DEFAULT_THRESHOLD) -> Check:
    points = []
    for s in history.series:
        points += series_change_points(s, history.runs, window, threshold)
    points.sort(key=lambda c: (c.run.time, c.series.gpu, c.series.benchmark), reverse=True)
    return Check(len(history.runs), len(history.series), points, window, threshold)


def as_json(result: Check) -> dict:
    """The --json document: {"runs", "series", "change_points": [...]} (docs/history.md)."""
    return {"runs": result.runs, "series": result.series,
            "change_points": [{"benchmark": c.series.benchmark, "gpu": c.series.gpu,
                               "run_id": c.run.run_id, "git_sha": c.run.git_sha,
                               "time": c.run.time.isoformat() + "Z", "before": c.before,
                               "after": c.after, "change_pct": c.change_pct,
                               "p_value": c.p_value, "direction": c.direction}
                              for c in result.change_points]}
