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


def rows(rs: ResultSet, query: names.Query) -> list[Benchmark]:
    """The benchmarks that ran and match a declared query (a rule's ``Q<n>_EVIDENCE``), in name
    order."""
    return sorted((b for b in rs.benchmarks.values() if b.ok and query.matches(b.parsed)),
                  key=lambda b: b.name)


def center_of(b: Benchmark | None, metric: str) -> float | None:
    """``Benchmark.center`` of a benchmark that may be absent (None then)."""
    return b.center(metric) if b is not None else None


def why_not(b: Benchmark | None) -> str | None:
    """The skip or failure sentence of a benchmark that did not run, or None."""
    if b is None or b.ok:
        return None
    return b.skip_reason if b.skipped else (b.error or "failed")


def none_ran(what: str, tried: list[Benchmark]) -> str:
    """Why nothing of ``what`` is evidence: the benchmarks of the query that did not run (failed
    or skipped: neither is a measurement), or that there are none."""
    if not tried:
        return f"no {what} in these results"
    failed = sum(b.failed for b in tried)
    counts = ", ".join(x for x in (f"{failed} failed" if failed else "",
                                   f"{len(tried) - failed} skipped" if len(tried) > failed
                                   else "") if x)
    first = min(tried, key=lambda b: b.name)
    return f"no {what} ran: {counts}, first {first.name}: {why_not(first)}"


def lacks(b: Benchmark, *counters: str) -> str:
    """The sentence for a benchmark that ran without a counter a rule needs: the results of a
    tcbench version that did not write it, or a measurement that could not take it."""
    missing = [c for c in counters if b.center(c) is None]
    return (f"{b.name} has no {' or '.join(missing or counters)}: not measured, or written by a "
            "tcbench without that counter")


def shape(b: Benchmark) -> str:
    """The ``key:value`` part of a benchmark's name (``m:8192/n:8192/k:8192/layout:tn``)."""
    return "/".join(f"{k}:{v}" for k, v in b.parsed.args.items())


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
