"""Report section of bench_int8_gemm: how much faster INT8 is, and at what accuracy cost.

Reads the names and counters bench_int8_gemm writes:

Every GEMM is TN (``layout:tn``: D[out, tokens] = W[out, in] X[tokens, in]^T), in every
precision, so the speed-ups compare one layout.

- ``int8_gemm/mlp/<precision>/tokens:N/layout:tn``: the trained MLP's three layer GEMMs at a
  deployment batch, with ``speedup_vs_fp32`` / ``speedup_vs_fp16``; the int8 row also carries the
  host evaluation of each INT8 variant as ``accuracy_<variant>`` and ``agreement_<variant>``
  (percent), the fp32 row ``accuracy_fp32``.
- ``int8_gemm/<variant>/<precision>/m:M/n:N/k:K/layout:tn``: the single GEMMs (cuBLASLt, our IMMA
  kernel, the requantizing int8-out variant) with ``tops``/``tflops``, ``pct_of_peak`` and
  speed-ups.
- ``int8_gemm/<kernel>/int8/elements:N`` with ``gbps``: the quantization kernels.

The plot puts one bar per deployment variant (FP32, TF32, FP16, BF16, then each INT8 calibrator
and QAT): its speed-up over FP32 at the largest batch, with the accuracy written beside it.
Every INT8 variant runs the same GEMMs, so their bars have the same length; only the accuracy
differs: that is the point the section makes.
"""

from __future__ import annotations

from pathlib import Path

from tcbench_tools import plot_style, plots
from tcbench_tools.names import ANY, precision_order
from tcbench_tools.schema import (
    ACCURACY_STEM,
    GBPS,
    PCT_OF_PEAK,
    accuracy,
    agreement,
    speedup_vs,
)
from tcbench_tools.sections._common import first_row, microseconds, plt, save
from tcbench_tools.tables import fmt_num

TOPIC = "int8_gemm"
TITLE = "INT8 inference: speed-up and accuracy per calibrator"

_FLOAT_PATHS = ("fp32", "tf32", "fp16", "bf16")
_QUANT_KERNELS = ("quantize_per_tensor", "quantize_per_channel", "abs_histogram", "amax",
                  "dequantize", "dequantize_accumulators")


def _mlp_rows(rs) -> dict[tuple[str, int], object]:
    """(precision, tokens) -> benchmark, for the ok ``int8_gemm/mlp/...`` benchmarks."""
    out = {}
    for bench in rs.find(TOPIC, "mlp", ran=True, where=lambda p: "tokens" in p.numeric_args()):
        p = bench.parsed
        out[(p.precision, int(p.numeric_args()["tokens"]))] = bench
    return out


def _variants(int8_bench) -> list[str]:
    """INT8 variant names: the PTQ calibrators by name, then QAT (Google Benchmark writes a row's
    counters sorted by name, so the file keeps no other order)."""
    prefix = ACCURACY_STEM
    found = [key.removeprefix(prefix) for key in first_row(int8_bench) if key.startswith(prefix)]
    return sorted(found, key=lambda v: (not v.startswith("ptq_"), v))


def deployment_bars(rs) -> tuple[int, list[tuple[str, float, float | None, float | None]]] | None:
    """At the largest batch with an int8 row: (tokens, [(label, speed-up vs FP32, accuracy %,
    agreement %)]) for the float paths and every INT8 variant; None without mlp results."""
    mlp = _mlp_rows(rs)
    batches = sorted({t for (prec, t) in mlp if prec == "int8"})
    if not batches:
        return None
    tokens = batches[-1]
    bars = []
    for prec in _FLOAT_PATHS:
        bench = mlp.get((prec, tokens))
        if bench is not None and bench.center(speedup_vs("fp32")) is not None:
            # fp32/fp16/bf16 rows carry their own host accuracy; tf32 has none (not evaluated).
            bars.append((prec.upper(), bench.center(speedup_vs("fp32")),
                         bench.center(accuracy(prec)), bench.center(agreement(prec))))
    int8 = mlp[("int8", tokens)]
    speedup = int8.center(speedup_vs("fp32"))
    for v in _variants(int8) if speedup is not None else []:
        bars.append((f"INT8 {v}", speedup, int8.center(accuracy(v)),
                     int8.center(agreement(v))))
    return tokens, bars


MAX_SIDE_BY_SIDE = 2  # GPUs drawn in full, side by side; more get the compact figure


def _plot_many(bars_by_gpu: dict[str, tuple[int, list]], path: Path, labels: list[str]) -> Path:
    """Many GPUs: a panel per path (TF32, FP16, BF16 and INT8, whose variants share one speed),
    a bar per GPU with its speed-up over FP32; the accuracies are the table's (the host's
    evaluation, the same for every GPU)."""
    panels: list[str] = []
    values, notes = {}, {}
    for gpu, (tokens, bars) in bars_by_gpu.items():
        for name, speed, _, _ in bars:
            panel = "INT8 (every variant)" if name.startswith("INT8") else name
            if panel == "FP32":
                continue
            if panel not in panels:
                panels.append(panel)
            values[(gpu, panel)] = speed
            notes[(gpu, panel)] = f"{speed:.2f}x at {tokens} tokens"
    gpus = [g for g in labels if g in bars_by_gpu]
    fig = plots.bar_panels_figure(
        "Speed-up over FP32 of the MLP's three layer GEMMs, per path and GPU (accuracy: the "
        "deployment table)", panels, gpus, values, "x FP32", notes=notes, shared=True)
    return save(fig, path)


def _plot(bars_by_gpu: dict[str, tuple[int, list]], path: Path) -> Path:
    """Per GPU two panels sharing the rows: speed-up bars, and accuracy points beside them."""
    n = len(bars_by_gpu)
    height = max(len(b) for _, b in bars_by_gpu.values())
    fig, axes = plt.subplots(n, 2, figsize=(plot_style.PAGE_WIDTH_IN, (0.42 * height + 1.8) * n),
                             squeeze=False, gridspec_kw={"width_ratios": [3, 2]})
    for g, (gpu, (tokens, bars)) in enumerate(bars_by_gpu.items()):
        ax, ax_acc = axes[g][0], axes[g][1]  # a row per GPU: the page's width, not n of them
        rows = bars[::-1]  # first variant on top
        ys = range(len(rows))
        colors = [plot_style.PALETTE[6] if r[0].startswith("INT8") else plot_style.PALETTE[0]
                  for r in rows]
        ax.barh(ys, [r[1] for r in rows], color=colors, alpha=0.85)
        ax.set_yticks(list(ys))
        ax.set_yticklabels([r[0] for r in rows], fontsize="small")
        top = max(r[1] for r in rows)
        for y, r in zip(ys, rows):
            ax.text(r[1] + top * 0.01, y, f"{r[1]:.2f}x", va="center", fontsize="x-small")
        ax.set_xlim(0, top * 1.15)
        ax.axvline(1.0, color="grey", lw=0.8, ls="--")
        ax.set_xlabel("speed-up over FP32 (the MLP's three layer GEMMs)")
        ax.set_title(f"{gpu}: speed-up at {tokens} tokens", fontsize="medium")
        ax.grid(axis="x", alpha=0.3)

        scored = [(y, r) for y, r in zip(ys, rows) if r[2] is not None]
        ax_acc.set_ylim(ax.get_ylim())
        ax_acc.set_yticks(list(ys))
        ax_acc.set_yticklabels([])
        if scored:
            ax_acc.scatter([r[2] for _, r in scored], [y for y, _ in scored],
                           color=plot_style.PALETTE[3],
                           zorder=3, label="accuracy")
            agree = [(y, r) for y, r in scored if r[3] is not None and r[0] != "FP32"]
            ax_acc.scatter([r[3] for _, r in agree], [y for y, _ in agree], marker="x",
                           color=plot_style.PALETTE[8], zorder=3, label="top-1 agreement with FP32")
            fp32 = next((r[2] for _, r in scored if r[0] == "FP32"), None)
            if fp32 is not None:
                ax_acc.axvline(fp32, color=plot_style.PALETTE[3], lw=0.8, ls="--")
            for y, r in scored:
                ax_acc.text(r[2], y + 0.25, f"{r[2]:.1f}", fontsize="x-small", ha="center")
            values = [r[2] for _, r in scored] + [r[3] for _, r in agree]
            lo, hi = min(values), max(values)
            pad = max(0.5, 0.1 * (hi - lo))
            ax_acc.set_xlim(lo - pad, hi + pad)
            ax_acc.legend(fontsize="x-small", loc="lower left")
        ax_acc.set_xlabel("% on the held-out split (host evaluation)")
        ax_acc.set_title("accuracy beside", fontsize="medium")
        ax_acc.grid(alpha=0.3)
    fig.tight_layout()
    return save(fig, path)


def render(doc, sets, labels, out_dir: Path) -> list[Path]:
    images: list[Path] = []
    doc.para("Speed from the GPU run; accuracy (on the held-out split) and top-1 agreement with "
             "FP32 from the host's integer-exact INT8 evaluation of the same trained MLP "
             "(docs/concepts/int8-calibration.md). Every INT8 variant runs the same IMMA GEMMs, so "
             "they share one speed-up; calibration decides only the accuracy. The bars count "
             "the GEMMs "
             "only; the quantization-kernel table gives what unfused quantize/dequantize passes "
             "add.")

    bars_by_gpu = {}
    for rs, label in zip(sets, labels):
        found = deployment_bars(rs)
        if found and found[1]:  # an MLP row without its speed-ups draws no bars
            bars_by_gpu[label] = found
    if bars_by_gpu:
        rows = []
        for gpu, (tokens, bars) in bars_by_gpu.items():
            for name, speed, acc, agree in bars:
                rows.append([gpu, str(tokens), name, f"{speed:.2f}",
                             f"{acc:.2f}" if acc is not None else "-",
                             f"{agree:.2f}" if agree is not None else "-"])
        path = out_dir / f"section_{TOPIC}_speedup_accuracy.png"
        path = (_plot(bars_by_gpu, path) if len(bars_by_gpu) <= MAX_SIDE_BY_SIDE
                else _plot_many(bars_by_gpu, path, labels))
        images.append(path)
        doc.image(path, "Speed-up over FP32 per deployment variant, with accuracy beside each bar")
        doc.collapsed_table("Deployment: speed-up vs FP32 and accuracy",
                            ["GPU", "tokens", "variant", "x FP32", "accuracy %", "agreement %"],
                            rows, {1, 3, 4, 5})

    # Every batch size: MLP speed-ups of INT8 over FP32 and FP16.
    rows = []
    for rs, label in zip(sets, labels):
        for (prec, tokens), bench in sorted(_mlp_rows(rs).items(),
                                            key=lambda kv: (kv[0][1], precision_order(kv[0][0]))):
            rows.append([label, str(tokens), prec,
                         fmt_num(microseconds(bench.center("time"))),
                         fmt_num(bench.center(speedup_vs("fp32"))),
                         fmt_num(bench.center(speedup_vs("fp16")))])
    doc.collapsed_table("MLP layers per batch size",
                        ["GPU", "tokens", "precision", "time (us)", "x FP32", "x FP16"], rows,
                        {1, 3, 4, 5})

    # Single GEMMs: IMMA through cuBLASLt and our kernel.
    rows = []
    for rs, label in zip(sets, labels):
        for bench in sorted(rs.find(TOPIC, precision="int8", ran=True, k=ANY),
                            key=lambda b: b.name):
            p = bench.parsed
            metric = bench.throughput_metric()
            rows.append([label, p.variant, f"{p.args['m']}x{p.args['n']}x{p.args['k']}",
                         fmt_num(bench.center(metric)) if metric else "-",
                         fmt_num(bench.center(PCT_OF_PEAK)),
                         fmt_num(bench.center(speedup_vs("fp16"))),
                         fmt_num(bench.center(speedup_vs("fp32")))])
    doc.collapsed_table("INT8 GEMMs",
                        ["GPU", "variant", "m x n x k", "TOP/s", "% peak", "x FP16", "x FP32"],
                        rows, {3, 4, 5, 6})

    # The cost of getting into INT8: the quantization kernels.
    rows = []
    for rs, label in zip(sets, labels):
        for bench in sorted(rs.find(TOPIC, frozenset(_QUANT_KERNELS), ran=True),
                            key=lambda b: b.name):
            rows.append([label, bench.parsed.variant, bench.parsed.args.get("elements", "-"),
                         fmt_num(bench.center(GBPS)), fmt_num(bench.center(PCT_OF_PEAK))])
    doc.collapsed_table("Quantization kernels (DRAM bandwidth)",
                        ["GPU", "kernel", "elements", "GB/s", "% peak"], rows, {2, 3, 4})
    return images
