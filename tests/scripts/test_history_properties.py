"""Properties of history check's detection on any series (Hypothesis, properties.py's profiles).

Whatever the times (flat, stepped, random walks, ties, outliers, a few runs or hundreds), the
detection ends without an error and what it reports is coherent: change points inside the series
with at least MIN_SIZE runs at the new level, in time order, at least MIN_SIZE apart, with finite
positive medians, a p-value in [0, 1], a change at or above the floor, runs at the new level that
exist; and nothing gates that is not a recent regression beyond the threshold. (A merge pass that
re-tested a neighbour against a stale span once left an empty segment: a ZeroDivisionError on a
random walk.)
"""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from properties import examples
from tcbench_tools.history import detect
from tcbench_tools.history.search import MIN_SIZE
from tcbench_tools.history.series import RunInfo, Series

RUNS = [RunInfo(i, f"{i:064x}", datetime(2026, 1, 1) + timedelta(days=i), None, "G", False, {})
        for i in range(400)]


@st.composite
def series(draw) -> np.ndarray:
    n = draw(st.integers(0, 300))
    kind = draw(st.sampled_from(["noise", "walk", "steps", "ties", "spikes"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([0.0, 1e-4, 0.003, 0.02, 0.3]))
    if kind == "noise":
        y = rng.normal(0, scale, n)
    elif kind == "walk":
        y = np.cumsum(rng.normal(0, scale, n))
    elif kind == "steps":
        y = np.repeat(rng.normal(0, 0.1, n // 3 + 1), 3)[:n] + rng.normal(0, scale, n)
    elif kind == "ties":
        y = rng.integers(0, 3, n) * 0.05
    else:
        y = rng.standard_t(1, n) * max(scale, 1e-3)
    return 1e-4 * np.exp(np.clip(y, -20, 20))


@settings(max_examples=examples(150))
@given(times=series(), floor=st.sampled_from([0.0, 0.5, 2.5, 10.0]))
def test_any_series_gives_coherent_change_points(times, floor):
    s = Series("t/v/fp16/m:1", "G", False, np.arange(len(times)), times, None, None)
    listed, below = detect.series_points(s, RUNS, 5, 5.0, floor)
    n = len(times)
    at = [c.index for c in listed]
    assert at == sorted(at) and all(b - a >= MIN_SIZE for a, b in zip(at, at[1:]))
    for c in listed + below:
        assert 0 < c.index <= n - MIN_SIZE
        assert c.before > 0 and c.after > 0 and np.isfinite(c.change_pct)
        assert 0.0 <= c.p_value <= 1.0
        assert 0 <= c.confirming <= n - c.index
    for c in listed:
        assert abs(c.change_pct) >= floor and c.listed
        if c.gates:
            assert c.direction == "regression" and c.change_pct > 5.0 and c.recent
            assert c.confirming >= detect.CONFIRM and c.index >= n - 5
    assert not any(c.gates or c.listed for c in below)
