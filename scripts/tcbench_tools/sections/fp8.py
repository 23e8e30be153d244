"""Report section for bench_fp8: FP8 vs BF16 speed-up per shape, the cost of scaling, and the
per-layer precision selection of a transformer block (docs/concepts/fp8-scaling.md).

Benchmark names it reads (``fp8/<variant>/<precision>/<args>``):

Every GEMM is TN (``layout:tn``), the FP8 GEMMs and the 16-bit ones they are compared with.

- ``fp8/gemm_<a>x<b>_<d>/fp8/m:M/n:N/k:K/layout:tn/accum:fast|split[/layer:L]``: FP8 cuBLASLt
  GEMMs with ``tflops``, ``pct_of_peak``, ``speedup_vs_bf16``, ``rel_error`` (vs the quantized
  inputs) and ``rel_error_unquantized`` (vs FP32 of the original inputs);
  ``fp8/gemm/bf16|fp16/...`` beside.
- ``fp8/recipe_<kernel>/fp8/elements:N/in:bf16|fp32``: scaling kernels with ``gbps`` and
  ``pct_of_peak``.
- ``fp8/overhead_<recipe>/fp8/m:M/n:N/k:K/layout:tn``: ``overhead_pct`` of quantizing A and B vs
  the GEMM.
- ``fp8/layer_<layer>/<precision>/hidden:H/tokens:T/layout:tn[/recipe:R]``: one layer of the
  block in one precision: ``time_us``, ``rel_error_unquantized``, ``selected`` (1 if the selector
  chose it).
- ``fp8/block/bf16|fp8|selected/hidden:H/tokens:T/layout:tn``: ``block_time_us``,
  ``speedup_vs_bf16``, ``block_rel_error``; the selected row's label names each layer's choice.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from tcbench_tools import plot_style, plots
from tcbench_tools.doc import Strong
from tcbench_tools.schema import (
    BLOCK_REL_ERROR,
    BLOCK_TIME_US,
    GBPS,
    OVERHEAD_PCT,
    PCT_OF_PEAK,
    REL_ERROR,
    REL_ERROR_UNQUANTIZED,
    SELECTED,
    TFLOPS,
    TIME_US,
    speedup_vs,
)
from tcbench_tools.sections import _fp8_accumulator
from tcbench_tools.sections._common import label as bench_label
from tcbench_tools.sections._common import plt, save
from tcbench_tools.tables import fmt_num

TOPIC = "fp8"
TITLE = "FP8: speed, accuracy cost, scaling overhead, precision per layer"

HEADLINE = ("gemm_e4m3xe4m3_bf16", "fast")  # Transformer Engine's forward GEMM: fast accumulation
LAYERS = ("qkv", "attn_out", "mlp_up", "mlp_down")


def _fp8_rows(rs):
    return rs.find(TOPIC)


def _fmt_err(x):
    return "-" if x is None else f"{x:.2e}"


def _fmt_x(x):
    return "-" if x is None else f"{x:.2f}"


def _shape_key(args):
    return tuple(int(float(args[k])) for k in ("m", "n", "k")) + (args.get("layer", ""),)


def _gemm_table(doc, rs, label):
    """FP8 (headline variant) beside BF16 per shape; returns {(m,n,k,layer): speed-up}."""
    bf16, fp16, fp8 = {}, {}, {}
    for b in _fp8_rows(rs):
        p = b.parsed
        if not b.ok or not {"m", "n", "k"} <= p.args.keys():
            continue
        key = _shape_key(p.args)
        if p.variant == "gemm" and p.precision == "bf16":
            bf16[key] = b
        elif p.variant == "gemm" and p.precision == "fp16":
            fp16[key] = b
        elif (p.variant, p.args.get("accum")) == HEADLINE:
            fp8[key] = b
    if not fp8:
        return {}
    doc.heading(3, f"{label}: FP8 (E4M3 x E4M3 -> BF16, fast accumulation) vs BF16")
    rows, speedups = [], {}
    for key in sorted(fp8, key=lambda k: (k[3] != "", k[3], k[:3])):
        f = fp8[key]
        bt = bf16[key].center(TFLOPS) if key in bf16 else None
        ht = fp16[key].center(TFLOPS) if key in fp16 else None
        ft = f.center(TFLOPS)
        speedup = f.center(speedup_vs("bf16"))
        if speedup is None and bt and ft:
            speedup = ft / bt
        speedups[key] = speedup
        pct = f.center(PCT_OF_PEAK)
        rows.append([f"{key[0]}x{key[1]}x{key[2]}", key[3] or "square", fmt_num(bt), fmt_num(ht),
                     fmt_num(ft), "-" if pct is None else f"{pct:.1f}", _fmt_x(speedup),
                     _fmt_err(f.center(REL_ERROR)), _fmt_err(f.center(REL_ERROR_UNQUANTIZED))])
    doc.table(["m x n x k", "layer", "BF16 TFLOP/s", "FP16 TFLOP/s", "FP8 TFLOP/s",
               "% FP8 peak", "x BF16", "error (quantized inputs)", "error (FP32 inputs)"],
              rows, set(range(2, 9)))
    return speedups


def _variant_table(doc, rs, label):
    """Every FP8 variant at the largest square that has them."""
    by_shape = defaultdict(list)
    for b in _fp8_rows(rs):
        p = b.parsed
        if b.ok and p.variant.startswith("gemm_") and {"m", "n", "k"} <= p.args.keys() \
                and "layer" not in p.args:
            by_shape[_shape_key(p.args)].append(b)
    if not by_shape:
        return
    key = max(by_shape, key=lambda k: (len(by_shape[k]), k[0] * k[1] * k[2]))
    rows = []
    for b in sorted(by_shape[key],
                    key=lambda b: (b.parsed.variant, b.parsed.args.get("accum", ""))):
        p = b.parsed
        a_b_d = p.variant.removeprefix("gemm_")
        rows.append([a_b_d, p.args.get("accum", "-"), fmt_num(b.center(TFLOPS)),
                     _fmt_x(b.center(speedup_vs("bf16"))), _fmt_err(b.center(REL_ERROR)),
                     _fmt_err(b.center(REL_ERROR_UNQUANTIZED))])
    doc.heading(3, f"{label}: FP8 variants at {key[0]}x{key[1]}x{key[2]}")
    doc.table(["A x B -> D", "accumulation", "TFLOP/s", "x BF16", "error (quantized inputs)",
               "error (FP32 inputs)"], rows, {2, 3, 4, 5})


def _recipe_tables(doc, rs, label):
    kernels = []
    overhead = []
    for b in _fp8_rows(rs):
        p = b.parsed
        if not b.ok:
            continue
        if p.variant.startswith("recipe_") and "elements" in p.numeric_args():
            kernels.append([p.variant.removeprefix("recipe_"), p.args.get("in", "-"),
                            int(p.numeric_args()["elements"]), b.center(GBPS),
                            b.center(PCT_OF_PEAK)])
        elif p.variant.startswith("overhead_") and {"m", "n", "k"} <= p.args.keys():
            overhead.append([p.variant.removeprefix("overhead_"), _shape_key(p.args)[:3],
                             b.center(OVERHEAD_PCT)])
    if kernels:
        doc.heading(3, f"{label}: scaling kernels (memory-bound)")
        doc.table(["kernel", "input", "elements", "GB/s", "% DRAM peak"],
                  [[k, i, f"{n:,}", fmt_num(g), "-" if p is None else f"{p:.1f}"]
                   for k, i, n, g, p in sorted(kernels, key=lambda r: (r[0], r[1], r[2]))],
                  {2, 3, 4})
    if overhead:
        doc.heading(3, f"{label}: cost of quantizing A and B, as % of the FP8 GEMM")
        doc.table(["recipe", "m x n x k", "overhead %"],
                  [[r, "x".join(map(str, s)), "-" if o is None else f"{o:.1f}"]
                   for r, s, o in sorted(overhead, key=lambda r: (r[0], r[1]))], {2})


def _option_order(option: str) -> tuple[int, str]:
    """16-bit options first (bf16, fp16), then FP8 by recipe name."""
    precision = option.split("/", 1)[0]
    return ({"bf16": 0, "fp16": 1}.get(precision, 2), option)


def _selection_tables(doc, rs, label):
    layers = defaultdict(dict)  # (h, t) -> {(layer, option label): bench}
    blocks = defaultdict(dict)  # (h, t) -> {mix: bench}
    for b in _fp8_rows(rs):
        p = b.parsed
        sizes = p.numeric_args()
        if not b.ok or not {"hidden", "tokens"} <= sizes.keys():
            continue
        ht = (int(sizes["hidden"]), int(sizes["tokens"]))
        if p.variant.startswith("layer_"):
            option = p.precision + (f"/{p.args['recipe']}" if "recipe" in p.args else "")
            layers[ht][(p.variant.removeprefix("layer_"), option)] = b
        elif p.variant == "block":
            blocks[ht][p.precision] = b
    for ht in sorted(set(layers) | set(blocks)):
        doc.heading(3, f"{label}: precision per layer, hidden {ht[0]}, {ht[1]} tokens")
        cells = layers[ht]
        options = sorted({opt for _, opt in cells}, key=_option_order)
        rows = []
        for layer in LAYERS:
            if not any(lay == layer for lay, _ in cells):
                continue
            row, chosen = [layer], "-"
            for o in options:
                b = cells.get((layer, o))
                if b is None:
                    row.append("-")
                    continue
                t, e = b.center(TIME_US), b.center(REL_ERROR_UNQUANTIZED)
                row.append(f"{fmt_num(t)} us, {_fmt_err(e)}")
                if (b.center(SELECTED) or 0) >= 1:
                    chosen = o
            rows.append(row + [chosen])
        if rows:
            doc.table(["layer"] + [f"{o}: time, error" for o in options] + ["chosen"], rows, set())
        mixes = blocks[ht]
        if mixes:
            doc.heading(3, f"{label}: block of these layers, hidden {ht[0]}, {ht[1]} tokens")
            brows = []
            for mix, name in (("bf16", "all BF16"), ("fp8", "all FP8"), ("selected", "selected")):
                b = mixes.get(mix)
                if b is None:
                    continue
                brows.append([name, fmt_num(b.center(BLOCK_TIME_US)),
                              _fmt_x(b.center(speedup_vs("bf16"))),
                              _fmt_err(b.center(BLOCK_REL_ERROR)),
                              bench_label(b)])
            doc.table(["block", "time (us)", "x all-BF16", "end-to-end error", "layers"],
                      brows, {1, 2, 3})


def _speedup_plot(series, out_dir: Path, labels: list[str]) -> Path | None:
    """x BF16 of the headline FP8 GEMM over square sizes, one line per GPU (each GPU's report
    style), the datasheet's 2x marked."""
    lines = {gpu: sorted((k[0], s) for k, s in sp.items()
                         if not k[3] and s and k[0] == k[1] == k[2])
             for gpu, sp in series.items()}
    lines = {g: pts for g, pts in lines.items() if pts}
    if not lines:
        return None
    styles = plot_style.styles_for([g for g in labels if g in lines])
    fig, ax = plt.subplots(figsize=(6.5, 4.0))
    for gpu, pts in lines.items():
        ax.plot([x for x, _ in pts], [y for _, y in pts], label=gpu, **styles[gpu].line_kwargs())
    plots.set_size_axis(ax, sorted({x for pts in lines.values() for x, _ in pts}), "m = n = k")
    ax.axhline(2.0, color="grey", linestyle="--", linewidth=1, label="datasheet ratio (2x)")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("FP8 / BF16 throughput")
    ax.set_title("FP8 (E4M3, fast accumulation) speed-up over BF16, square GEMMs",
                 fontsize="medium")
    ax.grid(alpha=0.3)
    plots.legend_outside(ax)
    fig.tight_layout()
    return save(fig, out_dir / "section_fp8_speedup.png")


def _speedups(rs) -> dict:
    """{(m, n, k, layer): FP8 x BF16} of the headline FP8 GEMM, without writing a table."""
    from tcbench_tools.doc import Doc

    return _gemm_table(Doc(), rs, "")


def render(doc, sets, labels, out_dir: Path) -> list[Path]:
    doc.para("FP8 GEMMs (cuBLASLt, per-tensor scales) beside BF16 and FP16 on the same shapes, "
             "the cost of computing the scales (delayed: one pass; current: two), and the "
             "precision a selector picks per transformer layer within an error budget; each "
             "GPU's tables are in its part of Per-GPU detail. See docs/concepts/fp8-scaling.md "
             "for the predictions to compare with.")
    images, series, without = [], {}, {}
    for rs, label in zip(sets, labels):
        rows = _fp8_rows(rs)
        if rows and not any(b.ok for b in rows):
            reasons = "; ".join(sorted({b.skip_reason or (b.error or "") for b in rows}))
            without.setdefault(reasons, []).append(label)
            continue
        series[label] = _speedups(rs)
    for reasons, where in without.items():
        doc.para(*[part for i, g in enumerate(where) for part in ((", " if i else ""), Strong(g))
                   if part], f": no FP8 result: {reasons}")
    plot = _speedup_plot(series, out_dir, labels)
    if plot is not None:
        doc.image(plot, "FP8 speed-up over BF16 per square size")
        images.append(plot)
    images += _fp8_accumulator.render(doc, sets, labels, out_dir)
    return images


def render_gpu(doc, rs, label, out_dir: Path) -> list[Path]:
    rows = _fp8_rows(rs)
    if not rows or not any(b.ok for b in rows):
        return []
    _gemm_table(doc, rs, label)
    _variant_table(doc, rs, label)
    _recipe_tables(doc, rs, label)
    _selection_tables(doc, rs, label)
    return []
