"""Report section of the tensor-pipe topics (bench_tensor_util and bench_tensor_peak).

The concept: a high ``sm__pipe_tensor_cycles_active`` (``tensor_active_pct``) is what Nsight
Compute shows when Tensor Cores are heavily used, and it should move with the achieved share of
the peak (``pct_of_peak``). The scatter plots one against the other per GPU; points far above the
diagonal are a busy but stalled pipe, or a precision the pipe metric weighs differently (see
docs/concepts/tensor-util.md). The tensor_peak table gives the instructions' own ceiling, the
ladder (_ladder.py) the best of each instruction generation per precision (mma.sync, wgmma,
tcgen05.mma), and the summary line "cuBLASLt reached X% of what the instructions can do" reads
every cuBLASLt result against it.

The train_step rows (one whole training step per precision and width) get a stacked bar per GPU:
where the step's time goes (time_pct_<phase>, and the gaps between phases), and how much of the
step the tensor pipe is busy, stacked by phase (share x tensor_active_pct_<phase>: the stack is
step_tensor_mix_pct), beside the step's own CUPTI range (tensor_active_pct) and the GEMM phases'
ceiling (gemm_phases_ceiling_pct). A result file whose context says ``tcbench_synthetic: true``
is labelled as synthetic test data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tcbench_tools import plot_style, synthetic
from tcbench_tools.doc import Strong
from tcbench_tools.names import one_of, precision_order, prefix
from tcbench_tools.results import Benchmark, ResultSet
from tcbench_tools.schema import (
    CLOCK_MHZ_ATTRIBUTE,
    CLOCK_MHZ_MEASURED,
    GAPS,
    GBPS,
    GEMM_PHASES_CEILING_PCT,
    PCT_OF_CLOCK_MODEL,
    PCT_OF_DATASHEET,
    PCT_OF_MAX_CLOCK_MODEL,
    PCT_OF_PEAK,
    PROFILE_COUNTERS,
    STEP_PHASES,
    STEP_TENSOR_MIX_PCT,
    TENSOR_ACTIVE_PCT,
    TFLOPS,
    tensor_active_in,
    time_share,
)
from tcbench_tools.sections import _ladder
from tcbench_tools.sections._common import label as bench_label
from tcbench_tools.sections._common import plt, save, slug

TOPIC = "tensor_util"
TITLE = "Tensor pipe: utilization and the instructions' ceiling"
PEAK_TOPIC = "tensor_peak"
ALSO_TOPICS = (PEAK_TOPIC,)  # a run of bench_tensor_peak alone gets this section too

COUNTERS_SKIPPED = re.compile(r"counters skipped: (.*)$")
STEP_VARIANT = "train_step"
STEP_ORDER = ("fp16", "bf16", "tf32", "fp32")  # bench_tensor_util's order: tensor paths first
# The phases in colours of the report's colour-blind-safe palette (plot_style.py), far apart in
# lightness so that neighbouring stacks stay apart; the gaps grey.
PHASE_COLORS = {"forward": plot_style.PALETTE[0], "backward": plot_style.PALETTE[2],
                "unscale": plot_style.PALETTE[5], "optimizer": plot_style.PALETTE[6],
                GAPS: "lightgrey"}


@dataclass
class Point:
    name: str        # variant/precision (+ shape when not the common one)
    pct_of_peak: float
    tensor_active: float


def _shape(bench: Benchmark) -> str:
    """m x n x k of a GEMM, the element count of a memory-bound row, the width and tokens of a
    training step, else ""."""
    args = bench.parsed.args
    width = f"h{args['hidden']} t{args['tokens']}" if "hidden" in args and "tokens" in args else ""
    return ("x".join(args[k] for k in ("m", "n", "k") if k in args) or args.get("elements", "")
            or width)


def _short(bench: Benchmark) -> str:
    p, shape = bench.parsed, _shape(bench)
    return f"{p.variant}/{p.precision}" + (f" {shape}" if shape else "")


def _throughput(bench: Benchmark) -> tuple[str, float] | None:
    metric = bench.throughput_metric()
    if metric is None:
        return None
    got = bench.center(metric)
    return (metric, got) if got is not None else None


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def points(rs: ResultSet) -> list[Point]:
    """Benchmarks with both counters; the shape is named only where it is not the common one."""
    found = []
    for bench in rs.find(TOPIC, ran=True):
        if bench.throughput_metric() == GBPS:
            continue  # its pct_of_peak is of DRAM bandwidth, not of a compute peak
        pct, active = bench.center(PCT_OF_PEAK), bench.center(TENSOR_ACTIVE_PCT)
        if pct is not None and active is not None:
            found.append((bench, pct, active))
    # Training steps always name their width; the GEMMs' most common shape goes unnamed (ties
    # broken by the shape's text, so the labels do not depend on set order).
    shapes = [_shape(b) for b, _, _ in found if b.parsed.variant != STEP_VARIANT]
    common = max(sorted(set(shapes)), key=shapes.count) if shapes else ""
    return [Point(f"{b.parsed.variant}/{b.parsed.precision}" +
                  (f" {_shape(b)}" if _shape(b) != common or b.parsed.variant == STEP_VARIANT
                   else ""), pct, active)
            for b, pct, active in found]


def counters_skipped(rs: ResultSet) -> set[str]:
    """The reasons the benchmarks gave for not reading counters (from their labels)."""
    reasons = set()
    for bench in rs.find(one_of(TOPIC, PEAK_TOPIC), ran=True):
        match = COUNTERS_SKIPPED.search(bench_label(bench))
        if match:
            reasons.add(match.group(1).strip())
    return reasons


def instruction_ceiling(rs: ResultSet) -> dict[str, tuple[float, str]]:
    """Best tensor_peak throughput per precision, with the instruction that reached it."""
    best: dict[str, tuple[float, str]] = {}
    for bench in rs.find(PEAK_TOPIC, ran=True):
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
    for bench in rs.find(variant=prefix("cublaslt"), ran=True):
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
    others = [f"{p} {100 * lt / c:.0f}% (of {i})" for p, lt, c, i, _ in shares[1:]]
    return line + (f"; {', '.join(others)}." if others else ".")


def scatter(label: str, pts: list[Point], path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7.0, 5.2))
    ax.plot([0, 100], [0, 100], color="grey", linestyle="--", linewidth=1,
            label="pipe busy exactly as often as peak is reached")
    library = [p for p in pts if p.name.startswith("cublaslt")]
    steps = [p for p in pts if p.name.startswith(STEP_VARIANT)]
    own = [p for p in pts if p not in library and p not in steps]
    for group, style, name in ((library, plot_style.series_style(0), "cuBLASLt"),
                               (own, plot_style.series_style(6), "tcbench kernels"),
                               (steps, plot_style.series_style(3), "whole training steps")):
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
    ax.set_ylim(-8, 108)  # room for the label of a point at 0 inside the panel
    ax.set_xlabel("pct_of_peak: achieved TFLOP/s as % of the precision's dense peak")
    ax.set_ylabel("tensor_active_pct (sm__pipe_tensor_cycles_active, %)")
    ax.set_title(f"{label}: tensor-pipe activity vs share of peak", fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="x-small", loc="upper left")
    fig.tight_layout()
    return save(fig, path)


def is_synthetic(rs: ResultSet) -> bool:
    return synthetic.is_synthetic(rs.context)  # the one reading of the key (synthetic.py)


@dataclass
class StepRow:
    """One train_step row: the step's shares and tensor-pipe readings by phase."""
    name: str                    # "fp16 h4096 t4096"
    tflops: float | None
    tensor_active: float | None  # the step's own CUPTI range
    mix: float | None            # step_tensor_mix_pct
    ceiling: float | None        # gemm_phases_ceiling_pct
    time_pct: dict[str, float]   # by phase, and GAPS
    phase_pct: dict[str, float]  # tensor_active_pct_<phase>, where counters were read


def step_rows(rs: ResultSet) -> list[StepRow]:
    """The train_step rows that have their time shares, narrow width first, then by precision."""
    rows = []
    for bench in rs.find(TOPIC, STEP_VARIANT, ran=True):
        p = bench.parsed
        times = {ph: bench.center(time_share(ph)) for ph in (*STEP_PHASES, GAPS)}
        if any(v is None for v in times.values()):
            continue
        phases = {ph: bench.center(tensor_active_in(ph)) for ph in STEP_PHASES}
        order = STEP_ORDER.index(p.precision) if p.precision in STEP_ORDER else len(STEP_ORDER)
        rows.append((int(p.args.get("hidden", "0") or 0), (order, precision_order(p.precision)),
                     StepRow(f"{p.precision} {_shape(bench)}", bench.center(TFLOPS),
                             bench.center(TENSOR_ACTIVE_PCT), bench.center(STEP_TENSOR_MIX_PCT),
                             bench.center(GEMM_PHASES_CEILING_PCT), times,
                             {ph: v for ph, v in phases.items() if v is not None})))
    return [r for _, _, r in sorted(rows, key=lambda r: (r[0], r[1]))]


def contributions(row: StepRow) -> dict[str, float]:
    """Each phase's part of the step's time-weighted tensor-pipe share: time_pct x its
    tensor_active_pct / 100 (0 where its counters were not read). They sum to
    step_tensor_mix_pct, as the benchmark computes it."""
    return {ph: row.time_pct[ph] * row.phase_pct.get(ph, 0.0) / 100.0 for ph in STEP_PHASES}


def step_bars(label: str, rows: list[StepRow], path: Path, synthetic: bool) -> Path:
    """Two stacked bars per training step: its time by phase, and its tensor-busy share by
    phase with the measured step and the GEMM phases' ceiling beside it."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(plot_style.PAGE_WIDTH_IN, 4.8), sharex=True)
    x = list(range(len(rows)))
    names = [r.name.replace(" ", "\n") for r in rows]
    bottom = [0.0] * len(rows)
    for ph in (*STEP_PHASES, GAPS):
        heights = [r.time_pct[ph] for r in rows]
        left.bar(x, heights, bottom=bottom, color=PHASE_COLORS[ph], label=ph)
        bottom = [b + h for b, h in zip(bottom, heights)]
    left.set_ylim(0, 100)
    left.set_ylabel("% of the step's time")
    left.set_title("where the step's time goes", fontsize="medium")
    bottom = [0.0] * len(rows)
    parts = [contributions(r) for r in rows]
    for ph in STEP_PHASES:
        heights = [c[ph] for c in parts]
        right.bar(x, heights, bottom=bottom, color=PHASE_COLORS[ph], label=f"{ph} (share x its %)")
        bottom = [b + h for b, h in zip(bottom, heights)]
    measured = [(i, r.tensor_active) for i, r in enumerate(rows) if r.tensor_active is not None]
    if measured:
        right.scatter([i for i, _ in measured], [v for _, v in measured], color="black",
                      marker="o", zorder=3, label="tensor_active_pct of the step's own range")
    ceilings = [(i, r.ceiling) for i, r in enumerate(rows) if r.ceiling is not None]
    if ceilings:
        right.scatter([i for i, _ in ceilings], [v for _, v in ceilings], color="black",
                      marker="_", s=300, zorder=3, label="ceiling: GEMM phases only")
    right.set_ylim(0, 100)
    right.set_ylabel("tensor pipe busy, % (time-weighted)")
    right.set_title("tensor-pipe utilization of the step, by phase", fontsize="medium")
    for ax in (left, right):
        ax.set_xticks(x, names, fontsize="x-small")
        ax.grid(axis="y", alpha=0.3)
    left.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=5)
    right.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    fig.suptitle(f"{label}: one training step by phase" +
                 (" (synthetic test data)" if synthetic else ""), fontsize="medium")
    fig.tight_layout()
    return save(fig, path)


def _step_section(doc, rs: ResultSet, label: str, out_dir: Path) -> list[Path]:
    rows = step_rows(rs)
    if not rows:
        return []
    doc.para("One whole training step (train_step rows): forward, backward, unscale and the "
             "optimizer, each in its own CUPTI range nested in the step's. Left: the time each "
             "phase takes. Right: the share of the step the tensor pipe is busy, stacked by phase "
             "(time_pct x tensor_active_pct of the phase / 100: the stack is "
             "step_tensor_mix_pct); the dot is the step's own range, which CUPTI weighs by active "
             "SM cycles, so the time the SMs wait between phases does not lower it; the bar is "
             "the ceiling if unscale, the optimizer and the gaps took no time.")
    path = step_bars(label, rows, out_dir / f"section_{TOPIC}_steps_{slug(label)}.png",
                     is_synthetic(rs))
    doc.image(path, f"{label}: time and tensor-pipe utilization of one training step by phase")
    table = []
    for r in rows:
        table.append([r.name, _fmt(r.tflops, 2), _fmt(r.tensor_active), _fmt(r.mix),
                      _fmt(r.ceiling),
                      *(_fmt(r.phase_pct.get(ph)) for ph in STEP_PHASES),
                      *(_fmt(r.time_pct[ph]) for ph in (*STEP_PHASES, GAPS))])
    doc.table(["step", "TFLOP/s", "tensor % (step range)", "time-weighted mix", "ceiling",
               *(f"{ph} tensor %" for ph in STEP_PHASES), *(f"{ph} time %" for ph in STEP_PHASES),
               "gaps time %"], table, set(range(1, 5 + 2 * len(STEP_PHASES) + 1)))
    return [path]


def render(doc, sets: list[ResultSet], labels: list[str], out_dir: Path) -> list[Path]:
    """The comparison: a row per GPU with what cuBLASLt reached of the instructions' ceiling and
    whether the tensor-pipe counters were read; each GPU's scatter, tables and training steps are
    in its part of Per-GPU detail (``render_gpu``)."""
    doc.prose("`tensor_active_pct` is `sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_"
              "active`, read in-process with CUPTI's range profiler around the GEMM after it was "
              "timed. Points near the diagonal: the tensor pipe is busy about as often as the "
              "GEMM reaches its peak. Far above it: the pipe is occupied but the work is not "
              "(stalls, or an instruction the metric weighs differently). Each GPU's scatter and "
              "tables are in its part of Per-GPU detail. See docs/concepts/tensor-util.md.")
    rows, refused = [], {}
    for rs, label in zip(sets, labels):
        if not rs.find(TOPIC) and not rs.find(PEAK_TOPIC):
            continue
        skipped = "; ".join(sorted(counters_skipped(rs)))
        if skipped:
            refused.setdefault(skipped, []).append(label)
        shares = sorted(cublaslt_share(rs), key=lambda s: (s[0] != "fp16", precision_order(s[0])))
        best = ([f"{100 * lt / peak:.0f}% ({prec}: {lt:.0f} of {peak:.0f}, {instr})"
                 for prec, lt, peak, instr, _ in shares[:1]] or ["-"])[0]
        rows.append([label, best, "not collected" if skipped else
                     f"read ({len(points(rs))} rows)" if points(rs) else "-"])
    if rows:
        doc.table(["GPU", "cuBLASLt of the instructions' ceiling", "tensor-pipe counters"],
                  rows, set(), cls="compact")
    for reason, where in refused.items():
        doc.para(f"Counters not collected on {', '.join(where)}: {reason}. Throughput was still "
                 "measured.")
    return []


def render_gpu(doc, rs: ResultSet, label: str, out_dir: Path) -> list[Path]:
    images: list[Path] = []
    benches = rs.find(TOPIC)
    if not benches and not rs.find(PEAK_TOPIC):
        return images
    doc.heading(3, f"{label}: tensor-pipe utilization")
    if is_synthetic(rs):
        doc.para(Strong(label), " is synthetic test data (context tcbench_synthetic), not a "
                 "measurement.")
    for reason in sorted(counters_skipped(rs)):
        doc.para(f"Counters were not collected: {reason}. Throughput was still measured.")
    pts = points(rs)
    if pts:
        path = scatter(label, pts, out_dir / f"section_{TOPIC}_{slug(label)}.png")
        images.append(path)
        doc.image(path, f"{label}: tensor_active_pct vs pct_of_peak")
    present = [c for c in PROFILE_COUNTERS if any(b.has(c) for b in benches)]
    rows: list[list] = []
    for b in sorted(benches, key=lambda b: b.name):
        if not b.ok:
            # Nothing measured: dashes in the number columns, the reason in its own column
            # (the error message sat in the throughput column before).
            rows.append([_short(b), "skipped" if b.skipped else "FAILED"] +
                        ["-"] * (1 + len(present)) + [b.error or "-"])
            continue
        got = _throughput(b)
        rows.append([_short(b), f"{got[1]:.1f} {got[0]}" if got else "-",
                     _fmt(b.center(PCT_OF_PEAK))] +
                    [_fmt(b.center(c)) for c in present] + [""])
    if rows:
        doc.table(["benchmark", "throughput", PCT_OF_PEAK, *present, "note"], rows,
                  set(range(1, 3 + len(present))))

    peak_rows = []
    for b in sorted(rs.find(PEAK_TOPIC, ran=True), key=lambda b: b.name):
        got = _throughput(b)
        peak_rows.append([f"{b.parsed.variant}/{b.parsed.precision}",
                          f"{got[1]:.1f} {got[0]}" if got else "-",
                          _fmt(b.center(PCT_OF_CLOCK_MODEL)),
                          _fmt(b.center(PCT_OF_MAX_CLOCK_MODEL)),
                          _fmt(b.center(PCT_OF_DATASHEET)),
                          _fmt(b.center(CLOCK_MHZ_MEASURED), 0),
                          _fmt(b.center(CLOCK_MHZ_ATTRIBUTE), 0)])
    if peak_rows:
        doc.para("The instructions' ceiling (bench_tensor_peak): own kernels issuing only "
                 "tensor instructions, against SMs x clock x ops/clock at the clock measured "
                 "in-kernel, at the device's maximum clock, and against the datasheet.")
        doc.table(["instruction/precision", "throughput", "% of measured-clock model",
                   "% of max-clock model", "% of datasheet", "clock MHz (in-kernel)",
                   "clock MHz (attribute)"], peak_rows, {1, 2, 3, 4, 5, 6})
    _ladder.render(doc, rs, label)
    line = summary_line(rs)
    if line:
        doc.para(Strong(line))
    images += _step_section(doc, rs, label, out_dir)
    return images
