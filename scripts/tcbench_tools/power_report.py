"""The report's clocks, power and energy: TFLOP/s per watt per GPU and precision (a table and a
plot across the GPUs), the SM clock and power during each topic, and every result that ran
throttled (tcbench_tools/power.py reads the counters). ``report.build`` calls ``render`` after
the topic tables, and ``mark`` flags a throttled best result in them.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

from tcbench_tools import power, schema
from tcbench_tools.names import precision_order
from tcbench_tools.results import ResultSet

_GEMM_RATES = (schema.TFLOPS, schema.TOPS)
MAX_LISTED = 25  # throttled results listed per GPU before "and N more"
# The run context's power and clock settings (power_context.cpp), one row each.
SETTINGS = ("power_limit_w", "power_limit_default_w", "max_sm_clock_mhz", "app_sm_clock_mhz",
            "clock_policy", "locked_sm_clock_mhz", "persistence_mode", "ecc_mode", "nvml")


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
    """Grouped bars: per precision, one bar per GPU, TFLOP/s per W on a log axis; a hatched bar
    ran throttled."""
    from matplotlib.patches import Patch

    from tcbench_tools import plots  # noqa: F401  (selects the headless Agg backend)
    import matplotlib.pyplot as plt

    width_in = min(16.0, max(6.0, 0.5 * len(precisions) * max(1, len(gpus)) + 2.0))
    fig, ax = plt.subplots(figsize=(width_in, 4.5))
    width = 0.8 / max(1, len(gpus))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for g, gpu in enumerate(gpus):
        xs = [i - 0.4 + width * (g + 0.5) for i in range(len(precisions))]
        ys = [values.get((gpu, p), 0.0) for p in precisions]
        bars = ax.bar(xs, ys, width * 0.9, color=colors[g % len(colors)], label=gpu)
        for bar, prec, y in zip(bars, precisions, ys):
            if (gpu, prec) in (throttled or set()):
                bar.set_hatch("//")
                bar.set_edgecolor("black")
            if y > 0:
                ax.annotate(f"{y:.3g}", (bar.get_x() + bar.get_width() / 2, y),
                            ha="center", va="bottom", fontsize="x-small")
    ax.set_xticks(range(len(precisions)))
    ax.set_xticklabels(precisions)
    if any(v > 0 for v in values.values()):
        ax.set_yscale("log")
    ax.set_ylabel("TFLOP/s per W (TOP/s per W for int8), log")
    ax.set_title("Energy efficiency: best GEMM throughput per watt, per precision")
    handles, _ = ax.get_legend_handles_labels()
    if throttled:
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="//",
                             label="hatched: ran throttled"))
    ax.legend(handles=handles, fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.1),
              ncol=min(4, len(handles)))
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    return fig


def _save(fig, path: Path) -> Path:
    import matplotlib.pyplot as plt

    try:
        fig.savefig(path, dpi=110, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path


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
    doc.para("Read through NVML every 10 ms while each benchmark's samples ran: the median SM "
             "clock, the board power (energy counter delta / time), and the clock-event reasons. "
             "TFLOP/s per W is the best GEMM of each precision per GPU (equal to TFLOP per "
             "joule); `pct_of_peak_at_clock` divides by SMs x the measured clock x ops/clock, so "
             "GPUs compare by silicon, not by the clock their power limit allowed. Results that "
             "ran with a limiting reason are marked (throttled: ...).")

    doc.table(["setting", *labels],
              [[key, *(str(rs.context.get(key, "-")) for rs in sets)] for key in SETTINGS], set())

    best = [best_efficiency(rs) for rs in sets]
    shown = sorted({p for b in best for p in b}, key=precision_order)
    if shown:
        doc.heading(3, "TFLOP/s per W, per GPU and precision")
        headers = ["precision"]
        for label in labels:
            headers += [f"{label} per W", f"{label} at"]
        rows, values, hot = [], {}, set()
        for prec in shown:
            row = [prec]
            for label, b in zip(labels, best):
                item = b.get(prec)
                if item is None:
                    row += ["-", "-"]
                    continue
                name, p = item
                values[(label, prec)] = p.efficiency[1]
                if p.limiting:
                    hot.add((label, prec))
                unit = power.EFFICIENCY_UNITS[p.efficiency[0]]
                row += [f"{p.efficiency[1]:.3g} {unit}", p.describe()]
            rows.append(row)
        doc.table(headers, rows, set(range(1, len(headers), 2)))
        path = _save(efficiency_figure(shown, labels, values, hot),
                     out_dir / "section_power_efficiency.png")
        images.append(path)
        doc.image(path, "Best GEMM TFLOP/s per W per precision and GPU (log scale; hatched: ran "
                        "throttled)")

    doc.heading(3, "SM clock and power per topic")
    topics = sorted({b.parsed.topic for rs in sets for b in rs.benchmarks.values() if b.ok})
    headers = ["topic"]
    for label in labels:
        headers += [f"{label} SM clock", f"{label} power", f"{label} throttled"]
    rows = []
    for topic in topics:
        row = [topic]
        for rs in sets:
            powers = [power.of(b, rs.context) for b in rs.benchmarks.values()
                      if b.ok and b.parsed.topic == topic]
            clocks = [p.clock_mhz for p in powers if p.clock_mhz is not None]
            watts = [p.power_w for p in powers if p.power_w is not None]
            hot = [p for p in powers if p.limiting]
            row += [f"{statistics.median(clocks):.0f} MHz ({min(clocks):.0f}-{max(clocks):.0f})"
                    if clocks else "-",
                    f"{statistics.median(watts):.0f} W (max {max(watts):.0f})" if watts else "-",
                    f"{len(hot)} of {len(powers)}" if powers and any(p.known for p in powers)
                    else "-"]
        rows.append(row)
    doc.table(headers, rows, set(range(1, len(headers))))

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
        doc.para(f"**{label}**: {len(hot)} benchmark(s) (" +
                 ", ".join(f"{r}: {n}" for r, n in sorted(by_reason.items())) + ")")
        items = [f"`{name}`: {p.describe()}" for name, p in hot[:MAX_LISTED]]
        if len(hot) > MAX_LISTED:
            items.append(f"and {len(hot) - MAX_LISTED} more")
        doc.bullets(items)
    if not any_throttled:
        doc.para("No result ran with a limiting clock-event reason.")
    return images


