"""Reading the numbers a rule needs out of a result set: one benchmark's median, the noise of a
comparison, the largest shape measured. Every rule goes through these, so they all treat a missing,
skipped or failed benchmark the same way (it is not evidence)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable

from tcbench_tools import schema
from tcbench_tools.results import Benchmark, ResultSet

# The smallest relative difference a comparison ever calls real: below it, timer resolution and
# clock wander decide (1 %).
NOISE_FLOOR = 0.01
HOST_KIND = "host-studies"  # the context of tcbench_studies' result files


def is_host(rs: ResultSet) -> bool:
    return rs.context.get("tcbench_kind") == HOST_KIND


def ok(rs: ResultSet, name: str) -> Benchmark | None:
    """The benchmark if it ran (not skipped, not failed); else None."""
    b = rs.benchmarks.get(name)
    return b if b is not None and b.ok else None


def value(rs: ResultSet, name: str, metric: str) -> float | None:
    b = ok(rs, name)
    if b is None:
        return None
    s = b.sample(metric)
    if s is None or s.center is None or not math.isfinite(s.center):
        return None
    return s.center


def matching(rs: ResultSet, pattern: str) -> list[Benchmark]:
    """Benchmarks that ran whose name fully matches ``pattern``, in name order."""
    rx = re.compile(pattern)
    return [b for name, b in sorted(rs.benchmarks.items()) if rx.fullmatch(name) and b.ok]


def skipped(rs: ResultSet, name: str) -> str | None:
    """The skip or failure sentence of a benchmark that did not run, or None."""
    b = rs.benchmarks.get(name)
    if b is None or b.ok:
        return None
    return b.skip_reason if b.skipped else (b.error or "failed")


def noise(b: Benchmark) -> float:
    """The relative noise of one benchmark's time: the in-run p10-p90 spread (spread_pct), the
    repetitions' coefficient of variation times two (about a 95 % band), whichever is larger;
    never below NOISE_FLOOR."""
    out = NOISE_FLOOR
    s = b.sample(schema.SPREAD_PCT)
    if s is not None and s.center is not None and math.isfinite(s.center):
        out = max(out, s.center / 100.0)
    t = b.sample("time")
    if t is not None and t.cv is not None and t.count >= 2:
        out = max(out, 2.0 * t.cv)
    return out


def largest(benches: Iterable[Benchmark], key: Callable[[Benchmark], float]) -> Benchmark | None:
    items = list(benches)
    return max(items, key=key) if items else None


def volume(b: Benchmark) -> float:
    a = b.parsed.numeric_args()
    return a.get("m", 0.0) * a.get("n", 0.0) * a.get("k", 0.0)


def label(b: Benchmark) -> str:
    rows = b.iterations or list(b.aggregates.values())
    return str(rows[0].get("label", "")) if rows else ""
