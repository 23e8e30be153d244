"""Reading the numbers a rule needs out of a result set: the benchmarks that ran of a query, the
noise of a comparison, the largest shape measured. Every rule goes through these and through
``ResultSet.find`` / ``ResultSet.get`` with names built by ``names.BenchName``, so they all treat a
missing, skipped or failed benchmark the same way (it is not evidence: ``Benchmark.center`` is
None for it) and none writes a benchmark name by hand."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tcbench_tools import names, schema
from tcbench_tools.results import Benchmark, ResultSet

# The smallest relative difference a comparison ever calls real: below it, timer resolution and
# clock wander decide (1 %).
NOISE_FLOOR = 0.01
HOST_KIND = "host-studies"  # the context of tcbench_studies' result files


def is_host(rs: ResultSet) -> bool:
    return rs.context.get(schema.KIND) == HOST_KIND


def ran(rs: ResultSet, topic: names.Match = None, variant: names.Match = None,
        precision: names.Match = None, **query) -> list[Benchmark]:
    """The benchmarks that ran (not skipped, not failed) and match the query (ResultSet.find),
    in name order: a rule that takes the first of them takes the same one whatever the file's
    order."""
    return sorted(rs.find(topic, variant, precision, ran=True, **query), key=lambda b: b.name)


def center_of(b: Benchmark | None, metric: str) -> float | None:
    """``Benchmark.center`` of a benchmark that may be absent (None then)."""
    return b.center(metric) if b is not None else None


def why_not(b: Benchmark | None) -> str | None:
    """The skip or failure sentence of a benchmark that did not run, or None."""
    if b is None or b.ok:
        return None
    return b.skip_reason if b.skipped else (b.error or "failed")


def noise(b: Benchmark) -> float:
    """The relative noise of one benchmark's time: the in-run p10-p90 spread (spread_pct), the
    repetitions' coefficient of variation times two (about a 95 % band), whichever is larger;
    never below NOISE_FLOOR."""
    out = NOISE_FLOOR
    spread = b.center(schema.SPREAD_PCT)
    if spread is not None:
        out = max(out, spread / 100.0)
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
