"""Report section of the loss_scaling topic (benchmarks/bench_loss_scaling.cu).

What the benchmark writes, and what this section reads:

* ``loss_scaling/landing_<source>/<fp16|bf16>/scale_log2:<k>``: where gradients (``source``:
  ``lognormal`` model or ``mlp`` backward pass) land after scaling by 2^k; counters
  ``underflow_pct``, ``subnormal_pct``, ``overflow_pct``. Drawn as % of gradients lost
  (underflow + overflow) against log2(scale), FP16 beside BF16, GradScaler's 2^16 marked. The
  counts are exact integer counts of fixed inputs, the same on every GPU, so one GPU's are drawn.
* ``loss_scaling/train_<mode>/<precision>/steps:<n>``: one training run per mode. Its loss curve
  travels as counters ``loss_at_00`` .. ``loss_at_<P-1>`` (P = ``curve_points``), point i at step
  round(i * (steps_run - 1) / (P - 1)), and ``scale_at_<i>`` likewise; numbers stay numbers in
  the JSON (and Google Benchmark's repetition aggregates still apply), which a label would not
  give. Besides: ``final_loss``, ``underflow_pct``, ``skipped_steps``, ``time_per_step_us``.
* ``loss_scaling/unscale/fp32/elements:<n>``: the fused check-and-unscale kernel; ``gbps``,
  ``pct_of_peak`` and ``unscale_pct_of_step`` (its time as % of one FP16 training step's GEMMs).
"""

from __future__ import annotations

import math
from pathlib import Path

from tcbench_tools import plot_style, plots
from tcbench_tools.names import prefix
from tcbench_tools.schema import (
    FINAL_LOSS,
    GBPS,
    LOSS_AT,
    OVERFLOW_PCT,
    PCT_OF_PEAK,
    SKIPPED_STEPS,
    STEPS_RUN,
    TIME_PER_STEP_US,
    UNDERFLOW_PCT,
    UNSCALE_PCT_OF_STEP,
    counter,
    loss_at,
    scale_at,
)
from tcbench_tools.sections._common import first_row, plt, save

TOPIC = "loss_scaling"
TITLE = "Loss scaling: where FP16 gradients land, training with and without scaling"

MODES = ["fp32", "fp16_noscale", "fp16_static", "fp16_dynamic", "bf16_noscale"]
GRADSCALER_DEFAULT_LOG2 = 16


def _ok(rs, variant_prefix: str):
    for bench in rs.find(TOPIC, prefix(variant_prefix), ran=True):
        yield bench, bench.parsed


def landing_points(rs) -> dict[tuple[str, str], list[tuple[int, float, float]]]:
    """{(source, precision): [(log2 scale, lost %, underflow %)]} from one result set."""
    out: dict[tuple[str, str], list[tuple[int, float, float]]] = {}
    for bench, p in _ok(rs, "landing_"):
        k = p.args.get("scale_log2")
        under, over = bench.center(UNDERFLOW_PCT), bench.center(OVERFLOW_PCT)
        if k is None or under is None or over is None:
            continue
        out.setdefault((p.variant[len("landing_"):], p.precision), []).append(
            (int(k), under + over, under))
    return {key: sorted(pts) for key, pts in out.items()}


def training_runs(rs) -> dict[str, dict]:
    """{mode: {"bench": Benchmark, "curve": [(step, loss)], "scale": [(step, scale)]}}."""
    runs = {}
    for bench, p in _ok(rs, "train_"):
        mode = p.variant[len("train_"):]
        points = sorted(int(key.rsplit("_", 1)[1]) for key in first_row(bench)
                        if (c := counter(key)) is not None and c.name == LOSS_AT)
        steps_run = bench.center(STEPS_RUN)
        count = len(points)
        curve, scale = [], []
        for i in points:
            step = 0 if count < 2 or not steps_run else round(i * (steps_run - 1) / (count - 1))
            loss = bench.center(loss_at(i))
            s = bench.center(scale_at(i))
            if loss is not None:
                curve.append((step, loss))
            if s is not None:
                scale.append((step, s))
        runs[mode] = {"bench": bench, "curve": curve, "scale": scale}
    return runs


def _fmt(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


# Lost (solid, round markers) and underflow only (dashed, hollow triangles, drawn on top): four
# palette colours, a darker and a lighter one per precision, so that where the two lines of one
# precision coincide (nothing overflows) the dashed one still shows.
LANDING_STYLE = {("fp16", "lost"): plot_style.PALETTE[6], ("fp16", "under"): plot_style.PALETTE[7],
                 ("bf16", "lost"): plot_style.PALETTE[0], ("bf16", "under"): plot_style.PALETTE[1]}


def plot_landing(points, label: str, path: Path) -> Path:
    sources = sorted({s for s, _ in points})
    fig, axes = plt.subplots(1, len(sources), figsize=(min(5.0 * len(sources) + 2.6,
                                                           plot_style.PAGE_WIDTH_IN), 3.4),
                             squeeze=False, sharey=True)
    for ax, source in zip(axes[0], sources):
        for prec, name in (("fp16", "FP16"), ("bf16", "BF16")):
            pts = points.get((source, prec))
            if not pts:
                continue
            xs = [k for k, _, _ in pts]
            ax.plot(xs, [lost for _, lost, _ in pts], marker="o", ms=5, lw=1.6, zorder=2,
                    color=LANDING_STYLE[(prec, "lost")],
                    label=f"{name}: lost (underflow + overflow)")
            ax.plot(xs, [u for _, _, u in pts], linestyle=(0, (4, 2)), marker="v", ms=6,
                    markerfacecolor="white", lw=1.3, zorder=3,
                    color=LANDING_STYLE[(prec, "under")], label=f"{name}: underflow only")
        ax.set_xticks(sorted({k for prec in ("fp16", "bf16")
                              for k, _, _ in points.get((source, prec), [])}))
        ax.axvline(GRADSCALER_DEFAULT_LOG2, color="gray", linestyle=":")
        ax.annotate("GradScaler default 2^16", (GRADSCALER_DEFAULT_LOG2, 0.95),
                    xycoords=("data", "axes fraction"), ha="right", fontsize="small",
                    color="gray", xytext=(-3, 0), textcoords="offset points")
        ax.set_xlabel("log2(loss scale)")
        ax.set_ylabel("% of gradient elements lost")
        ax.set_title("log-normal model" if source == "lognormal"
                     else source.upper() + " backward pass")
        ax.grid(alpha=0.3)
    plots.legend_outside(axes[0][-1], handles=axes[0][0].get_legend_handles_labels()[0])
    fig.suptitle(f"Where scaled gradients land ({label}); where a dashed line lies on its solid "
                 "one, nothing overflows", fontsize="medium")
    fig.tight_layout()
    return save(fig, path)


def plot_curves(runs_by_gpu: dict[str, dict[str, dict]], path: Path) -> Path:
    """Every GPU's training runs: a panel per mode (all on the same axes, log loss), a line per
    GPU, so that the modes compare across panels and the GPUs within one."""
    modes = [m for m in MODES if any(m in r for r in runs_by_gpu.values())]
    modes += sorted({m for r in runs_by_gpu.values() for m in r} - set(MODES))
    styles = plot_style.styles_for(list(runs_by_gpu))
    cols = plot_style.fit_columns(len(modes), 3.4, 2.4, 3)
    rows = math.ceil(len(modes) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols + 2.4, 2.2 * rows + 0.7),
                             squeeze=False, sharex=True, sharey=True)
    for index, mode in enumerate(modes):
        ax = axes[index // cols][index % cols]
        for gpu, runs in runs_by_gpu.items():
            curve = runs.get(mode, {}).get("curve")
            if curve:
                ax.plot([s for s, _ in curve], [v for _, v in curve], label=gpu, lw=1.2, ms=3,
                        **styles[gpu].line_kwargs(len(curve)))
        ax.set_yscale("log")
        ax.set_title(mode, fontsize="medium")
        ax.set_xlabel("training step", fontsize="small")
        ax.grid(which="both", alpha=0.3)
    for index in range(len(modes), rows * cols):
        axes[index // cols][index % cols].set_visible(False)
    for r in range(rows):
        axes[r][0].set_ylabel("loss (MSE), log scale")
    handles = {h.get_label(): h for ax in axes.flat for h in ax.get_legend_handles_labels()[0]}
    plots.legend_outside(axes[0][min(cols, len(modes)) - 1], handles=list(handles.values()))
    fig.suptitle("Training loss per mode, a line per GPU (FP32 is the reference the others "
                 "should track)", fontsize="medium")
    fig.tight_layout()
    return save(fig, path)


def render(doc, sets, labels, out_dir: Path) -> list[Path]:
    images: list[Path] = []
    doc.para("FP16's smallest subnormal is 2^-24: smaller gradients become 0 unless the loss is "
             "multiplied by a scale before the backward pass. See docs/concepts/loss-scaling.md.")

    # 1. Where gradients land: identical counts on every GPU, drawn once.
    for rs, label in zip(sets, labels):
        points = landing_points(rs)
        if points:
            path = plot_landing(points, label, out_dir / "section_loss_scaling_landing.png")
            images.append(path)
            doc.heading(3, "% of gradients lost vs loss scale")
            doc.image(path, "% of gradients lost (underflow + overflow) vs log2(scale), FP16 vs "
                            "BF16, GradScaler's 2^16 marked")
            break

    # 2. Training runs, per GPU.
    per_gpu = [training_runs(rs) for rs in sets]
    if any(per_gpu):
        rows = []
        modes = [m for m in MODES if any(m in r for r in per_gpu)]
        for mode in modes:
            for runs, label in zip(per_gpu, labels):
                run = runs.get(mode)
                if run is None:
                    if runs:
                        rows.append([mode, label] + ["-"] * 5)
                    continue
                bench = run["bench"]
                final = bench.center(FINAL_LOSS)
                fp32 = runs["fp32"]["bench"].center(FINAL_LOSS) if "fp32" in runs else None
                step_us = bench.center(TIME_PER_STEP_US)
                rows.append([mode, label, _fmt(final, ".3g"),
                             _fmt(final / fp32 if final is not None and fp32 else None, ".2f"),
                             _fmt(bench.center(UNDERFLOW_PCT), ".1f"),
                             _fmt(bench.center(SKIPPED_STEPS), ".0f"),
                             _fmt(step_us / 1e3 if step_us is not None else None, ".3f")])
        with_curves = {label: runs for runs, label in zip(per_gpu, labels)
                       if any(r["curve"] for r in runs.values())}
        if with_curves:
            path = plot_curves(with_curves, out_dir / "section_loss_scaling_curves.png")
            images.append(path)
            doc.heading(3, "Loss curves per mode")
            doc.image(path, "Loss curves of the five modes, a panel per mode, a line per GPU",
                      caption=False)
        doc.collapsed_table("Training with and without loss scaling",
                            ["mode", "GPU", "final loss", "x FP32", "lost %", "skipped",
                             "ms/step"], rows, {2, 3, 4, 5, 6})

    # 3. The cost of scaling.
    unscale = [{int(p.numeric_args()["elements"]): b for b, p in _ok(rs, "unscale")
                if "elements" in p.numeric_args()} for rs in sets]
    sizes = sorted({n for u in unscale for n in u})
    if sizes:
        rows = []
        for n in sizes:
            for u, label in zip(unscale, labels):
                b = u.get(n)
                if not u:
                    continue
                rows.append([f"{n:,}", label, _fmt(b.center(GBPS) if b else None, ".0f"),
                             _fmt(b.center(PCT_OF_PEAK) if b else None, ".1f"),
                             _fmt(b.center(UNSCALE_PCT_OF_STEP) if b else None, ".2f")])
        doc.collapsed_table("Cost of the fused check-and-unscale",
                            ["elements", "GPU", "GB/s", "% of DRAM peak", "% of a step's GEMMs"],
                            rows, {0, 2, 3, 4})
    return images
