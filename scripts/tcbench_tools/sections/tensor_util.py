"""Report section of the tensor-pipe topics (bench_tensor_util and bench_tensor_peak).

The concept: a high ``sm__pipe_tensor_cycles_active`` (``tensor_active_pct``) is what Nsight
Compute shows when Tensor Cores are heavily used, and it should move with the achieved share of
the peak (``pct_of_peak``). The scatter plots one against the other per GPU; points far above the
diagonal are a busy but stalled pipe, or a precision the pipe metric weighs differently (see
docs/concepts/tensor-util.md). The tensor_peak table gives the instructions' own ceiling, and the
summary line "cuBLASLt reached X% of what the instructions can do" reads every cuBLASLt result
against it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tcbench_tools import plot_style
from tcbench_tools.names import precision_order
from tcbench_tools.results import Benchmark, ResultSet
from tcbench_tools.schema import (CLOCK_MHZ_ATTRIBUTE, CLOCK_MHZ_MEASURED, GBPS, PCT_OF_CLOCK_MODEL,
                                   PCT_OF_DATASHEET, PCT_OF_MAX_CLOCK_MODEL, PCT_OF_PEAK,
                                   PROFILE_COUNTERS, TENSOR_ACTIVE_PCT)
from tcbench_tools.sections._common import label as bench_label
from tcbench_tools.sections._common import plt, save, slug, value

TOPIC = "tensor_util"
TITLE = "Tensor-pipe utilization and the instructions' ceiling"
PEAK_TOPIC = "tensor_peak"

COUNTERS_SKIPPED = re.compile(r"counters skipped: (.*)$")


@dataclass
class Point:
    name: str        # variant/precision (+ shape when not the common one)
    pct_of_peak: float
    tensor_active: float


def _shape(bench: Benchmark) -> str:
    """m x n x k of a GEMM, the element count of a memory-bound row, else ""."""
    args = bench.parsed.args
    return "x".join(args[k] for k in ("m", "n", "k") if k in args) or args.get("elements", "")


def _short(bench: Benchmark) -> str:
    p, shape = bench.parsed, _shape(bench)
    return f"{p.variant}/{p.precision}" + (f" {shape}" if shape else "")


def _throughput(bench: Benchmark) -> tuple[str, float] | None:
    metric = bench.throughput_metric()
    if metric is None:
        return None
    got = value(bench, metric)
    return (metric, got) if got is not None else None


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def points(rs: ResultSet) -> list[Point]:
    """Benchmarks with both counters; the shape is named only where it is not the common one."""
    found = []
    for bench in rs.benchmarks.values():
        if bench.parsed.topic != TOPIC or not bench.ok:
            continue
        if bench.throughput_metric() == GBPS:
            continue  # its pct_of_peak is of DRAM bandwidth, not of a compute peak
        pct, active = value(bench, PCT_OF_PEAK), value(bench, TENSOR_ACTIVE_PCT)
        if pct is not None and active is not None:
            found.append((bench, pct, active))
    shapes = [_shape(b) for b, _, _ in found]
    common = max(set(shapes), key=shapes.count) if shapes else ""
    return [Point(f"{b.parsed.variant}/{b.parsed.precision}" +
                  (f" {_shape(b)}" if _shape(b) != common else ""), pct, active)
            for b, pct, active in found]


def counters_skipped(rs: ResultSet) -> set[str]:
    """The reasons the benchmarks gave for not reading counters (from their labels)."""
    reasons = set()
    for bench in rs.benchmarks.values():
        if bench.parsed.topic in (TOPIC, PEAK_TOPIC) and bench.ok:
            match = COUNTERS_SKIPPED.search(bench_label(bench))
            if match:
                reasons.add(match.group(1).strip())
    return reasons


def instruction_ceiling(rs: ResultSet) -> dict[str, tuple[float, str]]:
    """Best tensor_peak throughput per precision, with the instruction that reached it."""
    best: dict[str, tuple[float, str]] = {}
    for bench in rs.benchmarks.values():
        if bench.parsed.topic != PEAK_TOPIC or not bench.ok:
            continue
        got = _throughput(bench)
        if got is None:
            continue
        prec = bench.parsed.precision
        if prec not in best or got[1] > best[prec][0]:
            best[prec] = (got[1], bench.parsed.variant)
    return best


def cublaslt_share(rs: ResultSet) -> list[tuple[str, float, float, str, str]]:
    """Per precision: (precision, best cuBLASLt throughput in any topic, the instructions'
    ceiling, the instruction, the cuBLASLt benchmark), where both exist."""
    ceiling = instruction_ceiling(rs)
    best: dict[str, tuple[float, str]] = {}
    for bench in rs.benchmarks.values():
        if not bench.parsed.variant.startswith("cublaslt") or not bench.ok:
            continue
        got = _throughput(bench)
        prec = bench.parsed.precision
        if got is not None and prec in ceiling and (prec not in best or got[1] > best[prec][0]):
            best[prec] = (got[1], bench.name)
    return [(p, best[p][0], ceiling[p][0], ceiling[p][1], best[p][1])
            for p in sorted(best, key=precision_order)]


def summary_line(rs: ResultSet) -> str | None:
    """'cuBLASLt reached X% of what the instructions can do', for FP16 when measured (the
    headline precision), then every other precision."""
    shares = cublaslt_share(rs)
    if not shares:
        return None
    shares.sort(key=lambda s: (s[0] != "fp16", precision_order(s[0])))
    prec, lt, peak, instr, _ = shares[0]
    unit = "TOP/s" if prec == "int8" else "TFLOP/s"
    line = (f"cuBLASLt reached {100 * lt / peak:.0f}% of what the instructions can do "
            f"({prec}: {lt:.0f} of {peak:.0f} {unit}, {instr})")
    others = [f"{p} {100 * l / c:.0f}% (of {i})" for p, l, c, i, _ in shares[1:]]
    return line + (f"; {', '.join(others)}." if others else ".")


def scatter(label: str, pts: list[Point], path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7.0, 5.2))
    ax.plot([0, 100], [0, 100], color="grey", linestyle="--", linewidth=1,
            label="pipe busy exactly as often as peak is reached")
    library = [p for p in pts if p.name.startswith("cublaslt")]
    own = [p for p in pts if not p.name.startswith("cublaslt")]
    for group, style, name in ((library, plot_style.series_style(0), "cuBLASLt"),
                               (own, plot_style.series_style(6), "tcbench kernels")):
        if group:
            ax.scatter([p.pct_of_peak for p in group], [p.tensor_active for p in group],
                       color=style.color, marker=style.marker, zorder=3, label=name)
    # Labels in two columns (points right of 60% labelled to their left, the rest to their
    # right), pushed apart vertically and tied to their point by a thin line, so that the
    # cluster of library GEMMs near the diagonal stays readable.
    for right_side in (True, False):
        side = sorted((p for p in pts if (p.pct_of_peak > 60) == right_side),
                      key=lambda q: -q.tensor_active)
        last = float("inf")
        for p in side:
            y = min(p.tensor_active, last - 5.0)
            last = y
            x = p.pct_of_peak - 22 if right_side else p.pct_of_peak + 8
            ax.annotate(p.name, (p.pct_of_peak, p.tensor_active), xytext=(x, y),
                        textcoords="data", fontsize="x-small", va="center",
                        ha="right" if right_side else "left",
                        arrowprops={"arrowstyle": "-", "color": "grey", "lw": 0.5})
    ax.set_xlim(0, 105)
    ax.set_ylim(-3, 105)
    ax.set_xlabel("pct_of_peak: achieved TFLOP/s as % of the precision's dense peak")
    ax.set_ylabel("tensor_active_pct (sm__pipe_tensor_cycles_active, %)")
    ax.set_title(f"{label}: tensor-pipe activity vs share of peak", fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="x-small", loc="upper left")
    fig.tight_layout()
    return save(fig, path)


def render(doc, sets: list[ResultSet], labels: list[str], out_dir: Path) -> list[Path]:
    images = []
    doc.para("`tensor_active_pct` is `sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_"
             "active`, read in-process with CUPTI's range profiler around the GEMM after it was "
             "timed. Points near the diagonal: the tensor pipe is busy about as often as the "
             "GEMM reaches its peak. Far above it: the pipe is occupied but the work is not "
             "(stalls, or an instruction the metric weighs differently). See "
             "docs/concepts/tensor-util.md.")
    for rs, label in zip(sets, labels):
        benches = [b for b in rs.benchmarks.values() if b.parsed.topic == TOPIC]
        if not benches:
            continue
        doc.heading(3, label)
        for reason in sorted(counters_skipped(rs)):
            doc.para(f"Counters were not collected: {reason}. Throughput was still measured.")
        pts = points(rs)
        if pts:
            path = scatter(label, pts, out_dir / f"section_{TOPIC}_{slug(label)}.png")
            images.append(path)
            doc.image(path, f"{label}: tensor_active_pct vs pct_of_peak")
        present = [c for c in PROFILE_COUNTERS if any(b.has(c) for b in benches)]
        rows = []
        for b in sorted(benches, key=lambda b: b.name):
            if not b.ok:
                # Nothing measured: dashes in the number columns, the reason in its own column
                # (the error message sat in the throughput column before).
                rows.append([_short(b), "skipped" if b.skipped else "FAILED"] +
                            ["-"] * (1 + len(present)) + [b.error or "-"])
                continue
            got = _throughput(b)
            rows.append([_short(b), f"{got[1]:.1f} {got[0]}" if got else "-",
                         _fmt(value(b, PCT_OF_PEAK))] +
                        [_fmt(value(b, c)) for c in present] + [""])
        doc.table(["benchmark", "throughput", PCT_OF_PEAK, *present, "note"], rows,
                  set(range(1, 3 + len(present))))

        peak_rows = []
        for b in sorted((b for b in rs.benchmarks.values()
                         if b.parsed.topic == PEAK_TOPIC), key=lambda b: b.name):
            if not b.ok:
                continue
            got = _throughput(b)
            peak_rows.append([f"{b.parsed.variant}/{b.parsed.precision}",
                              f"{got[1]:.1f} {got[0]}" if got else "-",
                              _fmt(value(b, PCT_OF_CLOCK_MODEL)),
                              _fmt(value(b, PCT_OF_MAX_CLOCK_MODEL)),
                              _fmt(value(b, PCT_OF_DATASHEET)),
                              _fmt(value(b, CLOCK_MHZ_MEASURED), 0),
                              _fmt(value(b, CLOCK_MHZ_ATTRIBUTE), 0)])
        if peak_rows:
            doc.para("The instructions' ceiling (bench_tensor_peak): own kernels issuing only "
                     "tensor instructions, against SMs x clock x ops/clock at the clock measured "
                     "in-kernel, at the device's maximum clock, and against the datasheet.")
            doc.table(["instruction/precision", "throughput", "% of measured-clock model",
                       "% of max-clock model", "% of datasheet", "clock MHz (in-kernel)",
                       "clock MHz (attribute)"], peak_rows, {1, 2, 3, 4, 5, 6})
        line = summary_line(rs)
        if line:
            doc.para(f"**{line}**")
    return images
