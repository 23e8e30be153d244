"""Best result per topic and precision, and the list of skips and errors, for one run."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from tcbench_tools import power, results
from tcbench_tools.names import precision_order
from tcbench_tools.printable import printable_lines
from tcbench_tools.results import THROUGHPUT_UNITS, ResultSet
from tcbench_tools.schema import GBPS, PCT_OF_PEAK
from tcbench_tools.tables import fmt_num, text_table


@dataclass
class Best:
    topic: str
    precision: str
    metric: str  # tflops, tops or gbps
    value: float  # median over repetitions of the best benchmark
    pct_of_peak: float | None
    benchmark: str
    regime: str = ""  # burst or sustained (bench_sustained's rows), else ""

    @property
    def unit(self) -> str:
        return THROUGHPUT_UNITS[self.metric]

    @property
    def where(self) -> str:
        """The topic, with the regime when there is one: "sustained (burst)"."""
        return f"{self.topic} ({self.regime})" if self.regime else self.topic


def pct_of_peak(rs: ResultSet, bench, metric: str, value: float) -> float | None:
    """The benchmark's own pct_of_peak counter, else value / the context's peak."""
    own = bench.sample(PCT_OF_PEAK)
    if own is not None:
        return own.center
    return results.pct_of_peak(value, rs.peak(GBPS if metric == GBPS else bench.parsed.precision))


def best_results(rs: ResultSet) -> dict[tuple[str, str, str, str], Best]:
    """(topic, precision, metric, regime) -> the benchmark with the highest median throughput;
    regime is "" except for bench_sustained's burst and sustained rows, which never mix (a
    burst is no sustained figure)."""
    best: dict[tuple[str, str, str, str], Best] = {}
    for name, bench in rs.benchmarks.items():
        metric = bench.throughput_metric()
        if metric is None or not bench.ok or bench.impossible() is not None:
            continue  # an impossible value anywhere: listed by invalid(), never a card's best
        sample = bench.sample(metric)
        if sample is None:
            continue
        p = bench.parsed
        regime = p.args.get("regime", "")
        key = (p.topic, p.precision, metric, regime)
        if key not in best or sample.center > best[key].value:
            best[key] = Best(p.topic, p.precision, metric, sample.center,
                             pct_of_peak(rs, bench, metric, sample.center), name, regime)
    return dict(sorted(best.items(),
                       key=lambda kv: (kv[0][0], precision_order(kv[0][1]), kv[0][2],
                                       kv[0][3])))


def problems(rs: ResultSet) -> tuple[list[tuple[str, str]], Counter]:
    """([(benchmark, error)], Counter(skip reason -> how many benchmarks))."""
    errors = [(n, b.error) for n, b in rs.benchmarks.items() if b.failed]
    skips = Counter(b.skip_reason for b in rs.benchmarks.values() if b.skipped)
    return errors, skips


def invalid(rs: ResultSet) -> list[tuple[str, str]]:
    """[(benchmark, why)] for benchmarks that hold a value no measurement gives (a time or rate of
    zero or less, a counter outside its physical range, not a finite number), naming the field and
    the repetition: those the report already left out (results.without_invalid), then any still in
    the set, which every best-of and plot skips rather than show them."""
    out = list(rs.invalid.items())
    for name, bench in rs.benchmarks.items():
        why = bench.impossible()
        if why is not None:
            out.append((name, why))
    return out


def render(rs: ResultSet) -> str:
    """The best results as a table, then the counts and one line per skip reason, failure and
    impossible value, as plain text for a terminal or a log (control characters escaped)."""
    best = best_results(rs)
    headers = ["topic", "precision", "best", "unit", "% of peak", "benchmark"]
    rows = [[b.where, b.precision, fmt_num(b.value), b.unit,
             "-" if b.pct_of_peak is None else f"{b.pct_of_peak:.1f}", b.benchmark]
            for b in best.values()]
    total = len(rs.benchmarks)
    errors, skips = problems(rs)
    ran = total - len(errors) - sum(skips.values())
    out = []
    if rows:
        out.append(text_table(headers, rows, right={2, 4}))
    else:
        out.append("(no benchmark reported a throughput counter: tflops, tops or gbps)")
    out.append("")
    out.append(f"{total} benchmarks: {ran} ran, {sum(skips.values())} skipped, "
               f"{len(errors)} failed.")
    if (line := power.run_line(rs)) is not None:
        out.append(line)
    items = [f"skipped ({count}): {reason}" for reason, count in skips.most_common()]
    items += [f"FAILED {name}: {message}" for name, message in errors]
    items += [f"INVALID {name}: {why} (left out of the table)" for name, why in invalid(rs)]
    out += [f"  {item}" for item in items]
    return printable_lines("\n".join(out))
