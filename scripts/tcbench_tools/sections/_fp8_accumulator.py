"""The FP8 section's accumulator part (issue 46; docs/concepts/fp8-scaling.md, "The
accumulator"): the bits each GPU's FP8 paths kept, in one table, and the error as K grows with
and without promotion, in one plot (a panel per GPU). Every number is a measurement of the run
it comes from (bench_fp8's accum_bits_ and accum_error_ rows).

Rows it reads:

- ``fp8/accum_bits_<path>/<p>[/accum:fast|split]``: ``accumulator_bits``, ``accumulator_at_least``,
  ``accumulator_rounding``, ``accumulator_step``, ``promotion_interval``.
- ``fp8/accum_error_cublaslt/fp8/m:4096/n:4096/k:K/layout:tn/accum:fast|split`` and
  ``fp8/accum_error_<kernel>/fp8/m:1024/n:1024/k:K/layout:tn/promote:N``: ``rel_error`` (against
  FP64 of the same E4M3 values), ``rel_error_unquantized`` (against the FP32 originals).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tcbench_tools import plot_style, plots
from tcbench_tools.results import ResultSet
from tcbench_tools.schema import (
    ACCUMULATOR_AT_LEAST,
    ACCUMULATOR_BITS,
    ACCUMULATOR_ROUNDING,
    ACCUMULATOR_STEP,
    PROMOTION_INTERVAL,
    REL_ERROR,
    REL_ERROR_UNQUANTIZED,
)
from tcbench_tools.sections._common import plt, save

TOPIC = "fp8"
# The bit-detection paths, in table order: (variant, accum, column heading).
PATHS = (("accum_bits_cublaslt", "fast", "cuBLASLt fast"),
         ("accum_bits_cublaslt", "split", "cuBLASLt split"),
         ("accum_bits_mma_sync", None, "mma.sync FP8"),
         ("accum_bits_wgmma", None, "wgmma FP8"),
         ("accum_bits_tcgen05", None, "tcgen05 FP8"),
         ("accum_bits_mma_sync_f16", None, "FP16 control"),
         ("accum_bits_mma_sync_bf16", None, "BF16 control"))
KERNELS = ("mma_sync", "wgmma", "tcgen05")
ROUNDING = {0: "truncated", 1: "floored", 2: "nearest even"}
PROMOTE = 128  # DeepSeek-V3's N_C: the promoted curve the plot draws


def owns(bench) -> bool:
    """A row this section shows (the overview's sweeps leave it out: an own kernel's rate here
    is an instruction-level comparison, not a GEMM record)."""
    return bench.parsed.topic == TOPIC and bench.parsed.variant.startswith(("accum_bits_",
                                                                            "accum_error_"))


def has_rows(rs: ResultSet) -> bool:
    return any(owns(b) for b in rs.find(TOPIC))


def _cell(rs: ResultSet, variant: str, accum: str | None) -> str:
    rows = rs.find(TOPIC, variant, accum=accum)
    if not rows:
        return "-"
    b = rows[0]
    if b.skipped:
        return "skipped"
    if b.failed:
        return "refused"  # the estimator could not tell, or the model did not reproduce D
    bits = b.center(ACCUMULATOR_BITS)
    if bits is None:
        return "-"
    text = f"{'>= ' if (b.center(ACCUMULATOR_AT_LEAST) or 0) >= 1 else ''}{bits:g}"
    rounding = b.center(ACCUMULATOR_ROUNDING)
    if rounding is not None:
        text += f" {ROUNDING.get(int(rounding), '?')}"
    step, promotion = b.center(ACCUMULATOR_STEP), b.center(PROMOTION_INTERVAL)
    if step:
        text += f", {step:g}/step"
    if promotion:
        text += f", FP32 every {promotion:g}"
    return text


def bits_table(doc, sets: list[ResultSet], labels: list[str]) -> None:
    """One row per GPU, one column per path that any GPU has."""
    cols = [(v, a, h) for v, a, h in PATHS if any(rs.find(TOPIC, v, accum=a) for rs in sets)]
    rows = [[label] + [_cell(rs, v, a) for v, a, _ in cols]
            for rs, label in zip(sets, labels) if has_rows(rs)]
    if not cols or not rows:
        return
    doc.heading(3, "Accumulator bits per GPU (measured)")
    doc.para("Fraction bits the accumulator keeps under a step's largest addend, found by the bit "
             "detection (bench_fp8's accum_bits_ rows); how dropped bits go; products per "
             "step; promotion to FP32. FP32 keeps 23. Published: Ada and Hopper FP8 about 13, "
             "datacenter Blackwell about 25 (docs/concepts/fp8-scaling.md cites each).")
    doc.table(["GPU"] + [h for _, _, h in cols], rows, set())


def _curves(rs: ResultSet) -> dict[str, list[tuple[int, float]]]:
    """{series: [(K, rel_error)]} of one GPU, and the E4M3 rounding (split's
    rel_error_unquantized)."""
    out: dict[str, list[tuple[int, float]]] = {}

    def add(series: str, bench, metric: str) -> None:
        k, value = bench.parsed.numeric_args().get("k"), bench.center(metric)
        if k is not None and value is not None and value > 0:
            out.setdefault(series, []).append((int(k), value))

    for b in rs.find(TOPIC, "accum_error_cublaslt", ran=True):
        accum = b.parsed.args.get("accum")
        add(f"cuBLASLt {accum} accumulation", b, REL_ERROR)
        if accum == "split":
            add("E4M3 rounding (split vs FP32 originals)", b, REL_ERROR_UNQUANTIZED)
    for kernel in KERNELS:
        for b in rs.find(TOPIC, f"accum_error_{kernel}", ran=True, promote=(0, PROMOTE)):
            promote = int(b.parsed.numeric_args().get("promote", 0))
            add(f"{kernel} kernel, " + (f"promoted every {promote}" if promote else
                                        "no promotion"), b, REL_ERROR)
    return {s: sorted(pts) for s, pts in out.items()}


def error_plot(sets: list[ResultSet], labels: list[str], out_dir: Path) -> Path | None:
    """Error against FP64 as K grows, one panel per GPU, one line per accumulation."""
    panels = [(label, _curves(rs)) for rs, label in zip(sets, labels)]
    panels = [(label, c) for label, c in panels if c]
    if not panels:
        return None
    series = list(dict.fromkeys(s for _, c in panels for s in c))
    styles = {s: plot_style.series_style(i) for i, s in enumerate(series)}
    cols = plot_style.fit_columns(len(panels), 3.6, 2.6, most=3)
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.2 * rows), squeeze=False,
                             sharey=True)
    for ax, (label, curves) in zip(axes.flat, panels):
        for s, pts in curves.items():
            kw = styles[s].line_kwargs()
            if s.startswith("E4M3"):
                kw.update(color="black", linestyle=":", marker=None)
            ax.plot([k for k, _ in pts], [e for _, e in pts], label=s, **kw)
        plots.set_size_axis(ax, sorted({k for pts in curves.values() for k, _ in pts}), "K")
        ax.set_yscale("log")
        ax.set_title(textwrap.fill(label, 30), fontsize="small")
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    axes[0][0].set_ylabel("relative error vs FP64 (log scale)")
    handles = {}
    for ax in axes.flat[:len(panels)]:
        for h, name in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(name, h)
    plots.legend_outside(axes[0][-1] if len(panels) >= cols else axes[0][len(panels) - 1],
                         list(handles.values()))
    fig.suptitle("FP8 accumulation error as K grows (measured)", fontsize="medium")
    fig.tight_layout()
    return save(fig, out_dir / "section_fp8_accumulator_error.png")


def render(doc, sets: list[ResultSet], labels: list[str], out_dir: Path) -> list[Path]:
    """The accumulator part of the FP8 section: nothing when no run has its rows."""
    if not any(has_rows(rs) for rs in sets):
        return []
    bits_table(doc, sets, labels)
    plot = error_plot(sets, labels, out_dir)
    if plot is None:
        return []
    doc.para("The error against FP64 on the same E4M3 values as K grows: cuBLASLt with fast and "
             f"split accumulation, and tcbench's FP8 kernel without promotion and promoted to "
             f"FP32 every {PROMOTE} products (an instruction-level comparison, not a GEMM "
             "record). The dotted line is the E4M3 rounding itself: fast accumulation above it "
             "loses more than FP8 does (Q5's accumulator caveat).")
    doc.image(plot, "FP8 accumulation error against FP64 as K grows, a panel per GPU")
    return [plot]
