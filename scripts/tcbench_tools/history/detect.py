"""``history check``: change points in each series, and the gate on the newest runs.

Per series (one benchmark, one GPU model, one mode, one environment identity: series.py), on
y = log(median time) per run: the search proposes boundaries (search.py: the series' own noise,
one-off outliers set aside, binary segmentation with a penalty from that noise), and the merge
pass keeps those that hold against the whole segments beside them (merge.py). A kept boundary
is then moved to the first run nearer the new level than the old (a 3-run minimum segment can
pull it one run early), and nothing is reported until MIN_SIZE runs are at the new level.

A change point is reported with the first run of the new level, the medians of the runs before
and after it (in their segments), the change in percent, the p-value and the runs at the new
level: every run since the change that lies outside the old level's noise toward the new one
(merge.band), through any later boundary. Time is lower-better: a longer time is a regression.

The reporting floor (``floor``, percent; by default half the gate's threshold, ``--min-magnitude``
as Apache Otava's ``--magnitude``): a change smaller than it is neither listed nor gated
(``Check.below_floor`` keeps them for the dashboard). The gate (exit 1) fails when a regression
beyond ``threshold`` percent begins within the newest ``window`` runs of its series and at least
CONFIRM runs are at its new level, and the series' environment identity is among the newest
``window`` runs of its GPU model and mode (a runner that was updated or left the pool leaves a
series whose last runs are not new).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tcbench_tools.history import forked, identity
from tcbench_tools.history.merge import Edge, band, merge, test
from tcbench_tools.history.search import MIN_SIZE, candidates, cleaned, noise, sums_of
from tcbench_tools.history.series import History, RunInfo, Series

CONFIRM = 3  # runs that must show a regression before the gate fails
DEFAULT_WINDOW = 5
DEFAULT_THRESHOLD = 5.0
FLOOR_SHARE = 0.5  # the default reporting floor, as a share of the gate's threshold


def default_floor(threshold: float) -> float:
    """Half the gate's threshold: a change half the size of one that fails is worth listing; a
    sub-percent wiggle of a quiet benchmark, however significant, is not."""
    return threshold * FLOOR_SHARE


@dataclass(eq=False)
class ChangePoint:
    series: Series
    index: int  # position in the series of the first run of the new level
    run: RunInfo
    before: float  # median time of the runs before it (its segment), seconds
    after: float  # median time of the new level, seconds
    change_pct: float
    p_value: float
    confirming: int  # runs since the change outside the old level's noise, toward the new one
    recent: bool  # it begins within the newest `window` runs of its series
    gates: bool  # a regression beyond the threshold, recent and confirmed: exit 1
    listed: bool = True  # False: below the reporting floor (drawn, not listed or gated)

    @property
    def direction(self) -> str:
        return "regression" if self.after > self.before else "improvement"


@dataclass
class Check:
    runs: int
    series: int
    change_points: list[ChangePoint]  # at or above the floor, newest first
    window: int
    threshold: float
    floor: float = 0.0
    below_floor: list[ChangePoint] = field(default_factory=list)
    incomplete: int = 0  # runs left out of every series: incomplete, no evidence of a change

    @property
    def failing(self) -> list[ChangePoint]:
        return [c for c in self.change_points if c.gates]


def _point(s: Series, runs: list[RunInfo], y: np.ndarray, e: Edge, sigma: float, window: int,
           threshold: float, listed: bool, current: bool) -> ChangePoint:
    b = float(np.median(s.median[e.lo:e.at]))
    a = float(np.median(s.median[e.at:e.hi]))
    change = (a / b - 1.0) * 100.0
    limit = band(e.shift, sigma)
    confirming = int(np.sum(np.sign(e.shift) * (y[e.at:] - e.old) > limit))
    recent = current and e.at >= len(y) - window
    gates = listed and a > b and change > threshold and recent and confirming >= CONFIRM
    return ChangePoint(s, e.at, runs[int(s.runs[e.at])], b, a, change, e.p, confirming, recent,
                       bool(gates), listed)


def _refined(y: np.ndarray, e: Edge, sigma: float) -> Edge | None:
    """The boundary moved to the first run nearer the new level than the old; None while fewer
    than MIN_SIZE runs are at the new level, or when it no longer holds."""
    mid = (e.old + e.new) / 2
    up = e.new > e.old
    at = e.at
    while at < e.hi and ((y[at] <= mid) if up else (y[at] >= mid)):
        at += 1
    if e.hi - at < MIN_SIZE:
        return None
    if at == e.at:
        return e
    moved = test(y, e.lo, at, e.hi, sigma)
    return moved if moved.holds else None


def series_points(s: Series, runs: list[RunInfo], window: int, threshold: float,
                  floor: float | None = None, current: bool = True,
                  ) -> tuple[list[ChangePoint], list[ChangePoint]]:
    """(listed, below the floor) change points of one series, in time order. ``current``: the
    series' environment still runs (see ``check``); only then can a change be recent."""
    floor = default_floor(threshold) if floor is None else floor
    if len(s.median) < 2 * MIN_SIZE:
        return [], []  # no level of MIN_SIZE runs after another one yet
    y = np.log(s.median)
    sigma = noise(y)
    clean = cleaned(y, sigma)
    kept, small = merge(y, sigma, candidates(clean, sigma), floor, sums_of(clean), clean != y)
    listed, below = [], []
    for e in kept:
        moved = _refined(y, e, sigma)
        if moved is None:
            continue
        keep = abs(moved.change_pct) >= floor
        (listed if keep else below).append(
            _point(s, runs, y, moved, sigma, window, threshold, keep, current))
    below += [_point(s, runs, y, e, sigma, window, threshold, False, current) for e in small
              if e.hi - e.at >= MIN_SIZE]
    below.sort(key=lambda c: c.index)
    return listed, below


def current_identities(history: History, window: int) -> dict[tuple, set]:
    """(GPU model, quick) -> the identities of its newest ``window`` runs. A series whose
    identity is not among them no longer runs (its runner was updated or left the pool): the
    last runs of such a series are not new, and never fail the gate."""
    newest: dict[tuple, list] = {}
    for run in reversed(history.runs):
        seen = newest.setdefault((run.gpu_name, run.quick), [])
        if len(seen) < window:
            seen.append(run.identity)
    return {key: set(ids) for key, ids in newest.items()}


# From this many runs over all series (2000 series of 500 runs) on, the series are checked in
# one forked process per core: the search and the merge pass are independent per series.
PARALLEL_FROM = 1_000_000
WORKERS = 8


def check(history: History, window: int = DEFAULT_WINDOW,
          threshold: float = DEFAULT_THRESHOLD, floor: float | None = None) -> Check:
    floor = default_floor(threshold) if floor is None else floor
    running = current_identities(history, window)
    jobs = [(s, s.identity in running.get((s.gpu, s.quick), set())) for s in history.series]
    points, below = [], []
    for listed, small in _all_points(jobs, history.runs, window, threshold, floor):
        points += listed
        below += small
    points.sort(key=lambda c: (c.run.time, c.series.gpu, c.series.benchmark), reverse=True)
    return Check(len(history.runs), len(history.series), points, window, threshold, floor, below,
                 len(history.incomplete_runs))


_WORK: tuple = ()  # (jobs, runs, window, threshold, floor), for the forked workers


def _chunk(bounds: tuple[int, int]) -> list[tuple[int, list[tuple], list[tuple]]]:
    """A worker's share: per series, its change points as plain tuples (pickled back)."""
    jobs, runs, window, threshold, floor = _WORK
    out = []
    for k in range(*bounds):
        s, current = jobs[k]
        listed, small = series_points(s, runs, window, threshold, floor, current)
        if listed or small:
            out.append((k, [_plain(c) for c in listed], [_plain(c) for c in small]))
    return out


def _plain(c: ChangePoint) -> tuple:
    return (c.index, c.before, c.after, c.change_pct, c.p_value, c.confirming, c.recent,
            c.gates, c.listed)


def _all_points(jobs: list, runs: list[RunInfo], window: int, threshold: float,
                floor: float) -> list[tuple[list[ChangePoint], list[ChangePoint]]]:
    """series_points of every job: in this process, or for a large history in one forked
    process per core (the change points come back as tuples and are rebuilt here)."""
    global _WORK
    import os

    workers = min(os.cpu_count() or 1, WORKERS)
    size = sum(len(s.median) for s, _ in jobs)
    if workers <= 1 or size < PARALLEL_FROM or not forked.can_fork():
        return [series_points(s, runs, window, threshold, floor, current)
                for s, current in jobs]
    _WORK = (jobs, runs, window, threshold, floor)
    try:
        parts = forked.map_chunks(_chunk, len(jobs), workers)
    finally:
        _WORK = ()

    def rebuilt(s: Series, item: tuple) -> ChangePoint:
        index, *rest = item
        return ChangePoint(s, index, runs[int(s.runs[index])], *rest)

    return [([rebuilt(jobs[k][0], c) for c in listed], [rebuilt(jobs[k][0], c) for c in small])
            for part in parts for k, listed, small in part]


def as_json(result: Check) -> dict:
    """The --json document (docs/history.md)."""
    return {"runs": result.runs, "series": result.series, "threshold": result.threshold,
            "min_magnitude": result.floor, "window": result.window,
            "incomplete_runs": result.incomplete,
            "change_points": [{"benchmark": c.series.benchmark, "gpu": c.series.gpu,
                               "mode": c.series.mode,
                               "environment": identity.describe(c.series.identity),
                               "run_id": c.run.run_id, "git_sha": c.run.git_sha,
                               "time": c.run.time.isoformat() + "Z", "before": c.before,
                               "after": c.after, "change_pct": c.change_pct,
                               "p_value": c.p_value, "direction": c.direction,
                               "runs_at_new_level": c.confirming, "gates": c.gates,
                               "synthetic": c.series.synthetic}
                              for c in result.change_points]}
