"""The report's clocks, power and energy: TFLOP/s per watt per GPU and precision (a table and a
plot across the GPUs), the SM clock and power during each topic, and every result that ran
throttled (tcbench_tools/power.py reads the counters). ``report.build`` calls ``render`` after
the topic tables, and ``mark`` flags a throttled best result in them.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

from tcbench_tools import plots, power, schema
from tcbench_tools.doc import Cell, Code, Strong
from tcbench_tools.names import precision_order, short
from tcbench_tools.results import ResultSet
from tcbench_tools.sections._common import save

_GEMM_RATES = (schema.TFLOPS, schema.TOPS)
MAX_LISTED = 25  # throttled results listed per GPU before "and N more"
# The run context's power and clock settings (power_context.cpp), one row each.
SETTINGS = {"power_limit_w": "power limit (W)", "power_limit_default_w": "default limit (W)",
            "max_sm_clock_mhz": "max SM clock (MHz)", "app_sm_clock_mhz": "application clock (MHz)",
            "clock_policy": "clock policy", "locked_sm_clock_mhz": "locked SM clock (MHz)",
            "persistence_mode": "persistence", "ecc_mode": "ECC", "nvml": "NVML"}


def mark(rs: ResultSet, benchmark: str) -> str:
    """`` (throttled: sw_power_cap)`` for a benchmark that ran with a limiting reason, else ""."""
    bench = rs.benchmarks.get(benchmark)
    return "" if bench is None else mark_of(power.of(bench, rs.context))


def mark_of(p: power.Power) -> str:
    return f" (throttled: {','.join(p.limiting)})" if p.limiting else ""


def best_efficiency(rs: ResultSet) -> dict[str, tuple[str, power.Power]]:
    """precision -> (benchmark, its power) with the highest TFLOP/s per W (TOP/s per W) among
    the GEMM-rate benchmarks; tensor_peak measures the instructions' ceiling, not a GEMM."""
    best: dict[str, tuple[str, power.Power]] = {}
    for name, bench in rs.benchmarks.items():
        if not bench.ok or bench.throughput_metric() not in _GEMM_RATES:
            continue
        p = bench.parsed
        if p.topic == "tensor_peak":
            continue
        pw = power.of(bench, rs.context)
        if pw.efficiency is None:
            continue
        if p.precision not in best or pw.efficiency[1] > best[p.precision][1].efficiency[1]:
            best[p.precision] = (name, pw)
    return best


def efficiency_figure(precisions: list[str], gpus: list[str],
                      values: dict[tuple[str, str], float],
                      throttled: set[tuple[str, str]] | None = None):
    """Small multiples: per precision a panel, per GPU a bar of TFLOP/s per W (linear from 0,
    the value beside it); a hatched bar ran throttled."""
    notes = {key: plots.value_label(v) for key, v in values.items()}
    return plots.bar_panels_figure(
        "Energy efficiency: best GEMM throughput per watt, per precision", precisions, gpus,
        values, "TFLOP/s per W (TOP/s per W for int8)", notes=notes, hatched=throttled or set(),
        hatched_name="ran throttled")


def _bench_cell(name: str) -> Cell:
    return Cell(short(name), title=name)


def render(doc, sets: list[ResultSet], labels: list[str], out_dir: Path) -> list[Path]:
    if not any(power.of(b, rs.context).known for rs in sets for b in rs.benchmarks.values()
               if b.ok):
        doc.heading(2, "Clocks, power and energy")
        reasons = [f"{label}: NVML {rs.context.get('nvml', 'not recorded (older tcbench?)')}"
                   for rs, label in zip(sets, labels)]
        doc.para("No result holds clock or power counters (the harness reads them through NVML "
                 "while timing).")
        doc.bullets(reasons)
        return []
    images: list[Path] = []
    doc.heading(2, "Clocks, power and energy")
    doc.prose("Read through NVML every 10 ms while each benchmark's samples ran: the median SM "
             "clock, the board power (energy counter delta / time), and the clock-event reasons. "
             "TFLOP/s per W is the best GEMM of each precision per GPU (equal to TFLOP per "
             "joule); `pct_of_peak_at_clock` divides by SMs x the measured clock x ops/clock, so "
             "GPUs compare by silicon, not by the clock their power limit allowed. Results that "
             "ran with a limiting reason are marked (throttled: ...).")

    doc.table(["GPU", *(SETTINGS[key] for key in SETTINGS)],
              [[label, *(str(rs.context.get(key, "-")) for key in SETTINGS)]
               for rs, label in zip(sets, labels)], set())

    best = [best_efficiency(rs) for rs in sets]
    shown = sorted({p for b in best for p in b}, key=precision_order)
    if shown:
        doc.heading(3, "TFLOP/s per W, per GPU and precision")
        rows, values, hot = [], {}, set()
        for prec in shown:
            for label, b in zip(labels, best):
                item = b.get(prec)
                if item is None:
                    rows.append([prec, label, "-", "-", "-"])
                    continue
                name, p = item
                values[(label, prec)] = p.efficiency[1]
                if p.limiting:
                    hot.add((label, prec))
                unit = power.EFFICIENCY_UNITS[p.efficiency[0]]
                rows.append([prec, label, f"{p.efficiency[1]:.3g} {unit}", p.describe(),
                             _bench_cell(name)])
        doc.table(["precision", "GPU", "per W", "at", "benchmark"], rows, {2})
        path = save(efficiency_figure(shown, labels, values, hot),
                     out_dir / "section_power_efficiency.png")
        images.append(path)
        doc.image(path, "Best GEMM TFLOP/s per W, one panel per precision, a bar per GPU "
                        "(hatched: ran throttled)")

    doc.heading(3, "SM clock and power per topic")
    topics = sorted({b.parsed.topic for rs in sets for b in rs.benchmarks.values() if b.ok})
    rows = []
    for rs, label in zip(sets, labels):
        for topic in topics:
            powers = [power.of(b, rs.context) for b in rs.benchmarks.values()
                      if b.ok and b.parsed.topic == topic]
            if not powers:
                continue
            clocks = [p.clock_mhz for p in powers if p.clock_mhz is not None]
            watts = [p.power_w for p in powers if p.power_w is not None]
            hot = [p for p in powers if p.limiting]
            rows.append([
                label, topic,
                f"{statistics.median(clocks):.0f} MHz ({min(clocks):.0f}-{max(clocks):.0f})"
                if clocks else "-",
                f"{statistics.median(watts):.0f} W (max {max(watts):.0f})" if watts else "-",
                f"{len(hot)} of {len(powers)}" if any(p.known for p in powers) else "-"])
    doc.table(["GPU", "topic", "SM clock", "power", "throttled"], rows, set())

    doc.heading(3, "Results that ran throttled")
    any_throttled = False
    for rs, label in zip(sets, labels):
        hot = power.throttled(rs)
        if not hot:
            continue
        any_throttled = True
        by_reason: dict[str, int] = defaultdict(int)
        for _, p in hot:
            for r in p.limiting:
                by_reason[r] += 1
        doc.para(Strong(label), f": {len(hot)} benchmark(s) (" +
                 ", ".join(f"{r}: {n}" for r, n in sorted(by_reason.items())) + ")")
        items = [(Code(name), f": {p.describe()}") for name, p in hot[:MAX_LISTED]]
        if len(hot) > MAX_LISTED:
            items.append(f"and {len(hot) - MAX_LISTED} more")
        doc.bullets(items)
    if not any_throttled:
        doc.para("No result ran with a limiting clock-event reason.")
    return images


