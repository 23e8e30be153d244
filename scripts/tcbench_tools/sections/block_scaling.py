"""Report section for bench_block_scaling: what each scaling granularity costs in speed and buys in
accuracy, per GPU (docs/concepts/fp8-scaling.md, "Block scaling").

Benchmark names it reads (``block_scaling/<variant>/<precision>/m:M/n:N/k:K/layout:tn``):

- ``block_scaling/gemm_<mode>/<precision>/...``: a cuBLASLt GEMM with scale mode <mode> (tensor,
  rowwise, 1x128, 128x128, mx, nvfp4): ``tflops``, ``pct_of_peak``, ``speedup_vs_bf16``,
  ``speedup_vs_fp8`` (per-tensor FP8, same problem), ``rel_error`` (vs the dequantized operands),
  ``rel_error_unquantized`` (vs the FP32 originals) and ``bytes_per_element``; a mode the GPU or
  cuBLASLt lacks is a skipped row with the reason.
- ``block_scaling/gemm/bf16/...``: the BF16 GEMM of the same problem.
- ``block_scaling/quantize_<granularity>/<precision>/m:M/k:K``: a quantize kernel making one
  operand's codes and scales (in cuBLASLt's layout): ``gbps``, ``pct_of_peak`` (of DRAM), and in
  the report its time as a share of the same granularity's GEMM at n = k = K.

The comparison (``render``), two plots: error vs the FP32 originals against bytes per element,
one point per granularity and GPU, the Pareto front (no other point both smaller and more
accurate) joined and ringed; and TFLOP/s per granularity per GPU at the largest measured size, a
panel per granularity, all on one axis. Per GPU (``render_gpu``): the granularities' table and
the quantize kernels' table. A result set whose context says ``tcbench_synthetic: true`` is
labelled as synthetic test data there.
"""

from __future__ import annotations

from pathlib import Path

from tcbench_tools import plot_style, plots, schema, synthetic
from tcbench_tools.doc import Strong
from tcbench_tools.names import prefix
from tcbench_tools.sections._common import plt, save

TOPIC = "block_scaling"
TITLE = "Block scaling: granularity vs speed, accuracy and bytes"

QUANTIZE = "quantize_"  # block_scaling/quantize_<granularity>/<precision>/m:M/k:K
MODES = schema.shipped().scale_modes  # the C++ scale-mode table, in its order
# How a scale mode reads after its precision (the report's words; the modes are the schema's).
WORDS = {"tensor": "per tensor", "rowwise": "row-wise", "128x128": "128x128 / 1x128"}


def format_label(mode: str, precision: str, words: bool = True) -> str:
    """What a GEMM's (or quantize kernel's) format is called: "FP8 per tensor", "MXFP6",
    "NVFP4", "BF16" (the unscaled baseline, mode "gemm"); ``words=False``: the mode as named."""
    p = precision.upper()
    if mode == "gemm":
        return p
    if mode == "mx":
        return "MX" + p
    if mode.endswith(precision):  # nvfp4: the mode names the format
        return mode.upper()
    return f"{p} {WORDS.get(mode, mode) if words else mode}"


def _rank(mode: str, precision: str) -> tuple[int, float]:
    """Scale modes in the table's order (the baseline last), wider elements first."""
    row = schema.shipped().precision(precision)
    return (MODES.index(mode) if mode in MODES else len(MODES), -(row.a_bits if row else 0))


# Every label the schema's modes and precisions can make, in the order the tables show them.
ORDER = {format_label(m, p): i for i, (m, p) in enumerate(sorted(
    ((m, p) for m in (*MODES, "gemm") for p in schema.PRECISIONS), key=lambda mp: _rank(*mp)))}


def _size(bench) -> int:
    args = bench.parsed.args
    try:
        return int(float(args.get("m", 0)) * float(args.get("n", 0)) * float(args.get("k", 0)))
    except ValueError:
        return 0


def _label(bench) -> str:
    p = bench.parsed
    mode = p.variant.removeprefix("gemm_") if p.variant != "gemm" else "gemm"
    return format_label(mode, p.precision)


def _rows(rs):
    """The GEMM rows (the quantize rows have their own table)."""
    return rs.find(TOPIC, lambda variant: not variant.startswith(QUANTIZE))


def _quantize_rows(rs):
    return rs.find(TOPIC, prefix(QUANTIZE))


def _quantize_table(doc, rs, label):
    """What making the scales costs: each quantize kernel's GB/s, and its time beside the GEMM
    of the same granularity whose N x K operand it makes (the GEMM's n = k = the operand's
    m = k)."""
    rows = _quantize_rows(rs)
    if not rows:
        return
    gemms = {(b.parsed.variant.removeprefix("gemm_"), b.parsed.args.get("k")): b
             for b in _rows(rs) if b.ok}
    out, skipped = [], []
    def order(b):
        mode = b.parsed.variant.removeprefix(QUANTIZE)
        return (float(b.parsed.args.get("m", 0)), MODES.index(mode) if mode in MODES else 99)

    for b in sorted(rows, key=order):
        mode = b.parsed.variant.removeprefix(QUANTIZE)
        name = format_label(mode, b.parsed.precision, words=False)
        a = b.parsed.args
        if not b.ok:
            skipped.append(f"{name} {a.get('m')}x{a.get('k')}: "
                           f"{b.skip_reason or b.error or 'no result'}")
            continue
        t, gemm = b.center("time"), gemms.get((mode, a.get("k")))
        g = gemm.center("time") if gemm is not None and a.get("m") == a.get("k") else None
        out.append([name, f"{a.get('m')}x{a.get('k')}", _f(t * 1e6 if t else None, ".1f"),
                    _f(b.center(schema.GBPS), ".0f"), _f(b.center(schema.PCT_OF_PEAK), ".1f"),
                    _f(100.0 * t / g if t and g else None, ".1f")])
    doc.heading(3, f"{label}: making the scales (quantize kernels)")
    doc.table(["format", "operand m x k", "time (us)", "GB/s", "% of DRAM peak",
               "% of its GEMM's time"], out, {2, 3, 4, 5})
    if skipped:
        doc.para("Skipped here: " + "; ".join(skipped))


def _is_synthetic(rs) -> bool:
    return synthetic.is_synthetic(rs.context)


def _largest(rows):
    """The benchmarks of the largest measured problem, one per granularity."""
    ok = [b for b in rows if b.ok]
    if not ok:
        return []
    top = max(_size(b) for b in ok)
    return [b for b in rows if _size(b) == top]


def _f(x, spec):
    return "-" if x is None else format(x, spec)


def _table(doc, rows, label):
    doc.heading(3, f"{label}: granularities at the largest measured size")
    out, skipped = [], []
    for b in sorted(_largest(rows), key=lambda b: ORDER.get(_label(b), len(ORDER))):
        if not b.ok:
            skipped.append(f"{_label(b)}: {b.skip_reason or b.error or 'no result'}")
            continue
        a = b.parsed.args
        out.append([_label(b), f"{a.get('m')}x{a.get('n')}x{a.get('k')}",
                    _f(b.center(schema.TFLOPS), ".0f"), _f(b.center(schema.PCT_OF_PEAK), ".1f"),
                    _f(b.center(schema.speedup_vs("bf16")), ".2f"),
                    _f(b.center(schema.speedup_vs("fp8")), ".2f"),
                    _f(b.center(schema.BYTES_PER_ELEMENT), ".4f"),
                    _f(b.center(schema.REL_ERROR), ".2e"),
                    _f(b.center(schema.REL_ERROR_UNQUANTIZED), ".2e")])
    doc.table(["format", "m x n x k", "TFLOP/s", "% of its peak", "x BF16", "x FP8 per tensor",
               "bytes / element", "error (dequantized)", "error vs FP32"], out,
              {2, 3, 4, 5, 6, 7, 8})
    if skipped:
        doc.para("Skipped here: " + "; ".join(skipped))


def pareto(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats on both bytes and error (ties kept)."""
    front = []
    for i, (bi, ei) in enumerate(points):
        if not any((bj <= bi and ej <= ei) and (bj < bi or ej < ei)
                   for j, (bj, ej) in enumerate(points) if j != i):
            front.append(i)
    return sorted(front, key=lambda i: points[i][0])


def _accuracy_plot(series, out_dir: Path):
    points = [(gpu, name, bpe, err) for gpu, rows in series.items() for name, bpe, err, _ in rows
              if bpe is not None and err is not None and err > 0]
    if not points:
        return None
    styles = plot_style.styles_for(list(series))
    fig, ax = plt.subplots(figsize=(7.5, 4.0))
    for gpu in series:
        mine = [(b, e, n) for g, n, b, e in points if g == gpu]
        ax.scatter([b for b, _, _ in mine], [e for _, e, _ in mine], marker=styles[gpu].marker,
                   color=styles[gpu].color, label=gpu, zorder=3)
        for b, e, n in mine:
            ax.annotate(n, (b, e), textcoords="offset points", xytext=(5, 4), fontsize=8)
    xy = [(b, e) for _, _, b, e in points]
    front = pareto(xy)
    ax.plot([xy[i][0] for i in front], [xy[i][1] for i in front], "k--", lw=1,
            label="Pareto front", zorder=2)
    ax.scatter([xy[i][0] for i in front], [xy[i][1] for i in front], s=160, facecolors="none",
               edgecolors="k", zorder=4)
    ax.margins(x=0.25, y=0.12)  # the granularities' names stay inside the panel
    ax.set_xlabel("bytes per element (A and B, scales included)")
    errors = [e for _, _, _, e in points]
    if max(errors) >= 10 * min(errors):  # a log axis only where the errors span a decade
        ax.set_ylabel(plots.log_label("relative error vs FP32 originals"))
        ax.set_yscale("log")
    else:
        ax.set_ylabel("relative error vs FP32 originals")
    ax.grid(True, which="both", alpha=0.3)
    plots.legend_outside(ax)
    ax.set_title("Accuracy vs storage per granularity")
    return save(fig, out_dir / f"section_{TOPIC}_accuracy_vs_bytes.png")


def _speed_plot(series, out_dir: Path, labels: list[str]):
    """A panel per granularity, a bar per GPU (GPUs as rows), TFLOP/s at the largest size, every
    panel on the same axis (the granularities are compared with each other)."""
    names = sorted({r[0] for rows in series.values() for r in rows},
                   key=lambda n: ORDER.get(n, len(ORDER)))
    if not names:
        return None
    values, missing = {}, {}
    for gpu, rows in series.items():
        speed = {n: t for n, _, _, t in rows}
        for n in names:
            if speed.get(n):
                values[(gpu, n)] = speed[n]
            else:
                missing[(gpu, n)] = "skipped"
    notes = {k: plots.value_label(v) for k, v in values.items()}
    fig = plots.bar_panels_figure("Speed per granularity (largest measured size)", names,
                                  [g for g in labels if g in series], values, "TFLOP/s",
                                  notes=notes, missing=missing, shared=True)
    return save(fig, out_dir / f"section_{TOPIC}_speed.png")


def _series(rows) -> list:
    return [(_label(b), b.center(schema.BYTES_PER_ELEMENT), b.center(schema.REL_ERROR_UNQUANTIZED),
             b.center(schema.TFLOPS)) for b in _largest(rows) if b.ok]


def render(doc, sets, labels, out_dir: Path) -> list[Path]:
    doc.para("cuBLASLt GEMMs of one TN problem at every scaling granularity the GPU and cuBLASLt "
             "accept: per tensor, per row, 1x128 tiles, 128x128 blocks (Hopper), MXFP8 and NVFP4 "
             "(Blackwell), beside BF16. Errors are measured before timing against the dequantized "
             "operands (the GEMM's own) and against the FP32 originals (what a user gets); each "
             "GPU's tables are in its part of Per-GPU detail. See docs/concepts/fp8-scaling.md "
             "for the host study to compare with.")
    series, without = {}, {}
    for rs, label in zip(sets, labels):
        rows = _rows(rs)
        if not rows:
            continue
        if not any(b.ok for b in rows):
            reasons = "; ".join(sorted({b.skip_reason or (b.error or "") for b in rows}))
            without.setdefault(reasons, []).append(label)
            continue
        series[label] = _series(rows)
    for reasons, where in without.items():
        doc.para(f"No block-scaling result on {', '.join(where)}: {reasons}")
    images = []
    for plot, alt in ((_accuracy_plot(series, out_dir),
                       "error vs bytes per element, Pareto front"),
                      (_speed_plot(series, out_dir, labels), "TFLOP/s per granularity per GPU")):
        if plot is not None:
            doc.image(plot, alt)
            images.append(plot)
    return images


def render_gpu(doc, rs, label, out_dir: Path) -> list[Path]:
    rows = _rows(rs)
    if not rows or not any(b.ok for b in rows):
        return []
    if _is_synthetic(rs):
        doc.para(Strong(label), " is synthetic test data (context tcbench_synthetic), not a "
                 "measurement.")
    _table(doc, rows, label)
    _quantize_table(doc, rs, label)
    return []
