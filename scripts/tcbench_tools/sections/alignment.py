"""Report section for bench_alignment: does 33 lose to 32, and does the model explain why?

The comparison (``render``), one plot each with a line or a colour per GPU:
- the headline pairs (32/33, 64/65, 128/129, 8192/8193): the odd size's throughput over the
  aligned one's, a panel per precision sharing the y axis;
- M and K swept around 4096, relative to 4096, with the quantization bound's relative value
  (``model_tflops``: roofline plus tile and wave quantization with the tile cuBLASLt chose), a
  panel per swept dimension and precision sharing the y axis;
- the GEMM time model's prediction against the measurement (``predicted_tflops``; its median
  ``model_ratio`` for aligned and misaligned shapes in a table), so a GPU run scores the model.
Tables (collapsed): the pairs with ``slowdown_vs_aligned``, the padding strategies (33 run as 40
or 48, pad copy included) with the verdict, and the cuBLAS rows (the pairs, and the
attention-shaped strided batches) beside their cuBLASLt twins with ``vs_cublaslt`` and the bound
(sections/_api_pairs.py).

Per GPU (``render_gpu``): per precision, throughput against N (M = K = 4096, N up to 256) for
each series (cuBLASLt in the precision's layout, cuBLASLt with ``layout:nt``: B stored
N-contiguous, our WMMA kernel) with the bound dashed and the multiples of 8 and 16 marked, and the
headline pairs' throughputs as bars.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from matplotlib import ticker
from matplotlib.patches import Patch

from tcbench_tools import plot_style, plots
from tcbench_tools.doc import prose
from tcbench_tools.names import ParsedName, precision_order, prefix
from tcbench_tools.results import THROUGHPUT_UNITS, Benchmark, ResultSet
from tcbench_tools.schema import (
    ALIGN_K_BYTES,
    ALIGN_M_BYTES,
    ALIGN_N_BYTES,
    COPY_US,
    GEMM_US,
    MODEL_RATIO,
    MODEL_TFLOPS,
    PADDING_WINS,
    PREDICTED_TFLOPS,
    SLOWDOWN_VS_ALIGNED,
    UNPADDED_US,
    rate_counter,
)
from tcbench_tools.sections import _api_pairs
from tcbench_tools.sections._common import label as bench_label
from tcbench_tools.sections._common import microseconds, plt, save, slug
from tcbench_tools.tables import fmt_num

TOPIC = "alignment"
TITLE = "Alignment: 32 vs 33 and every dimension around it"

BASE = 4096  # the fixed dimensions of every sweep
N_PLOT_MAX = 256  # N sweep plots stop here; the 8192 pair is in the pair plot
MIN_SWEEP_POINTS = 10  # fewer (quick mode: the pairs only) make no sweep plot
PAIRS = ((32, 33), (64, 65), (128, 129), (8192, 8193))
MAIN = "cublaslt"  # cuBLASLt in the precision's own layout (nn; tn for int8 and fp8)
B_N_CONTIGUOUS = "cublaslt layout:nt"  # the same GEMM with B stored N-contiguous
VARIANT_STYLE = {  # series: label, line style, marker
    MAIN: ("cuBLASLt", "-", "o"),
    B_N_CONTIGUOUS: ("cuBLASLt, layout NT (B N-contiguous)", "-", "s"),
    "wmma": ("our WMMA kernel", "-", "^"),
}


@dataclass
class Point:
    value: float  # throughput (TFLOP/s or TOP/s)
    model: float | None  # model_tflops
    slowdown: float | None  # slowdown_vs_aligned
    label: str


def _series(parsed: ParsedName) -> str:
    nt = (parsed.variant, parsed.layout) == ("cublaslt", "nt")
    return B_N_CONTIGUOUS if nt else parsed.variant


def _points(rs: ResultSet) -> dict[tuple[str, str, str], dict[int, Point]]:
    """(series, precision, axis) -> {swept value: point}, axis in n/m/k: the other two are 4096.
    The series is the variant, told apart by layout where one variant runs two (cuBLASLt NN or
    TN, and NT)."""
    out: dict[tuple[str, str, str], dict[int, Point]] = defaultdict(dict)
    for bench in rs.find(TOPIC, ran=True):
        parsed = bench.parsed
        metric = bench.throughput_metric()
        throughput = bench.center(metric) if metric else None
        args = parsed.numeric_args()
        if throughput is None or not {"m", "n", "k"} <= args.keys():
            continue  # no usable throughput (summary lists invalid values) or not a GEMM
        point = Point(throughput, bench.center(MODEL_TFLOPS), bench.center(SLOWDOWN_VS_ALIGNED),
                      bench_label(bench))
        for axis, others in (("n", "mk"), ("m", "nk"), ("k", "mn")):
            if all(args[o] == BASE for o in others):
                out[(_series(parsed), parsed.precision, axis)][int(args[axis])] = point
    return out


def _unit(precision: str) -> str:
    return THROUGHPUT_UNITS[rate_counter(precision)]


def _mark_multiples(ax, lo: float, hi: float) -> set[int]:
    """Thin lines at multiples of 8, darker at multiples of 16 (the FP16 and INT8 rules);
    returns which of {8, 16} were drawn, so that a title promises only what is there."""
    drawn = set()
    for x in range(8 * math.ceil(lo / 8), int(hi) + 1, 8):
        strong = x % 16 == 0
        drawn.add(16 if strong else 8)
        ax.axvline(x, color="0.5" if strong else "0.65", lw=0.9 if strong else 0.8,
                   ls="-" if strong else (0, (2, 2)), zorder=0)
    return drawn


def _multiples_note(drawn: set[int]) -> str:
    parts = (["grey: multiples of 16"] if 16 in drawn else []) + \
            (["dotted: of 8"] if 8 in drawn else [])
    return f" ({', '.join(parts)})" if parts else ""


def _integer_ticks(ax, xs: list[int]) -> None:
    """Ticks at whole sizes only (a sweep of 4095..4097 read 4095.25, 4095.50 ... before)."""
    ax.xaxis.set_major_locator(ticker.MaxNLocator(nbins=9, integer=True, min_n_ticks=2))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:.0f}"))
    if len(set(xs)) <= 9:
        ax.xaxis.set_major_locator(ticker.FixedLocator(sorted(set(xs))))


def plot_n_sweep(gpu: str, precision: str, lines: dict[str, dict[int, Point]], path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(9.0, 4.6))
    xs_all = [n for pts in lines.values() for n in pts]
    drawn = _mark_multiples(ax, min(xs_all), max(xs_all))
    for i, (variant, pts) in enumerate(lines.items()):
        name, style, marker = VARIANT_STYLE.get(variant, (variant, "-", "."))
        color = plot_style.series_style(i).color
        ns = sorted(pts)
        ax.plot(ns, [pts[n].value for n in ns], style, marker=marker, ms=2.5, lw=1.1,
                color=color, label=f"{name} (measured)")
        model = [(n, pts[n].model) for n in ns if pts[n].model is not None]
        if model and variant == MAIN:
            ax.plot([n for n, _ in model], [m for _, m in model], "--", lw=1.4, color="black",
                    label="bound (roofline x tile x wave, cuBLASLt's tile)")
    ax.set_xlim(0, max(xs_all) + 2)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("N (M = K = 4096)" + _multiples_note(drawn))
    ax.set_ylabel(_unit(precision))
    ax.set_title(f"{gpu}: {precision} throughput vs N")
    plots.legend_outside(ax)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return save(fig, path)


def plot_pairs(gpu: str, pairs: dict[str, dict[int, Point]], path: Path) -> Path:
    """One panel per pair; per precision an aligned bar and an odd bar, the ratio above it."""
    precisions = sorted(pairs, key=precision_order)
    cols = plot_style.fit_columns(len(PAIRS), 3.4)
    rows = math.ceil(len(PAIRS) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 3.4 * rows + 0.6), squeeze=False)
    axes = [ax for row in axes for ax in row]
    for ax in axes[len(PAIRS):]:
        ax.set_visible(False)
    colors = [plot_style.PALETTE[0], plot_style.PALETTE[6]]  # aligned, odd
    for ax, (even, odd) in zip(axes, PAIRS):
        for i, prec in enumerate(precisions):
            pts = pairs[prec]
            for j, n in enumerate((even, odd)):
                x = i + (j - 0.5) * 0.38
                if n in pts:
                    ax.bar(x, pts[n].value, 0.36, color=colors[j])
                else:  # no bar: a grey label standing on the axis, inside the panel
                    ax.text(x, 0.02, "skipped", rotation=90, ha="center", va="bottom",
                            transform=ax.get_xaxis_transform(), fontsize="x-small",
                            color=plot_style.NO_DATA)
            if even in pts and odd in pts and pts[even].value > 0:
                top = max(pts[even].value, pts[odd].value)
                ax.text(i, top * 1.02, f"{pts[odd].value / pts[even].value:.2f}", ha="center",
                        va="bottom", fontsize="x-small")
        ax.set_xticks(range(len(precisions)))
        ax.set_xticklabels(precisions, fontsize="small")
        ax.set_xlim(-0.6, len(precisions) - 0.4)  # the last odd bar's place stays inside
        ax.set_title(f"N = {even} vs {odd}", fontsize="medium")
        ax.margins(y=0.12)
        ax.grid(axis="y", alpha=0.3)
        ax.legend([Patch(color=colors[0]), Patch(color=colors[1])], [f"N = {even}", f"N = {odd}"],
                  fontsize="x-small", loc="upper left")
    for ax in axes[::cols]:
        ax.set_ylabel("TFLOP/s (TOP/s for int8)")
    fig.suptitle(f"{gpu}: the headline pairs (M = K = 4096); label = odd / aligned throughput")
    fig.tight_layout()
    return save(fig, path)


def plot_pair_ratios(pairs_by_gpu: dict[str, dict[str, dict[int, Point]]], path: Path) -> Path:
    """Every GPU's headline pairs in one figure: a panel per precision (sharing the y axis), the
    aligned N on a log2 axis, the odd size's throughput over the aligned one's, a line per GPU.
    A precision whose odd sizes never ran (FP8 refuses N = 33) says so inside its panel."""
    precisions = sorted({p for pairs in pairs_by_gpu.values() for p in pairs}, key=precision_order)
    styles = plot_style.styles_for(list(pairs_by_gpu))
    cols = plot_style.fit_columns(len(precisions), 3.3, 2.2, 3)
    rows = math.ceil(len(precisions) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols + 2.2, 2.3 * rows + 0.6),
                             squeeze=False, sharey=True)
    evens = [even for even, _ in PAIRS]
    for index, prec in enumerate(precisions):
        ax = axes[index // cols][index % cols]
        drawn = False
        for gpu, pairs in pairs_by_gpu.items():
            pts = pairs.get(prec, {})
            xy = [(even, pts[odd].value / pts[even].value) for even, odd in PAIRS
                  if even in pts and odd in pts and pts[even].value > 0]
            if xy:
                drawn = True
                ax.plot([x for x, _ in xy], [y for _, y in xy], label=gpu, ms=4.5, lw=1.2,
                        **styles[gpu].line_kwargs())
        if not drawn:
            ax.text(0.5, 0.5, "no data:\nthe odd sizes were skipped", ha="center", va="center",
                    transform=ax.transAxes, fontsize="small", style="italic",
                    color=plot_style.NO_DATA)
        ax.axhline(1.0, color=plot_style.REFERENCE, lw=0.8)
        plots.set_size_axis(ax, evens, "aligned N")
        ax.set_title(prec, fontsize="medium")
        ax.grid(alpha=0.3)
    for index in range(len(precisions), rows * cols):
        axes[index // cols][index % cols].set_visible(False)
    for r in range(rows):
        axes[r][0].set_ylabel("odd / aligned throughput")
    handles = [h for ax in axes.flat for h in ax.get_legend_handles_labels()[0]]
    labels = list(dict.fromkeys(h.get_label() for h in handles))
    plots.legend_outside(axes[0][-1] if len(precisions) >= cols else axes[0][len(precisions) - 1],
                         handles=[next(h for h in handles if h.get_label() == lb)
                                  for lb in labels])
    fig.suptitle("The headline pairs, M = K = 4096: N + 1 over N (1.00 = no loss; "
                 "below 1: the odd size is slower)", fontsize="medium")
    fig.tight_layout()
    return save(fig, path)


def plot_mk(sweeps_by_gpu: dict[str, dict[tuple[str, str], dict[int, Point]]],
            path: Path) -> Path:
    """M and K around 4096 on every GPU: a panel per swept dimension and precision (sharing the
    y axis), throughput relative to the 4096 point, a line per GPU; dashed, in the GPU's colour,
    the quantization bound's relative value where the results carry it."""
    panels = sorted({key for sw in sweeps_by_gpu.values() for key in sw},
                    key=lambda ap: (ap[0], precision_order(ap[1])))
    styles = plot_style.styles_for(list(sweeps_by_gpu))
    cols = plot_style.fit_columns(len(panels), 3.6, 2.2)
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols + 2.2, 2.5 * rows + 0.6),
                             squeeze=False, sharey=True)
    bounded = False
    for index, (axis, prec) in enumerate(panels):
        ax = axes[index // cols][index % cols]
        xs_all = [x for sw in sweeps_by_gpu.values() for x in sw.get((axis, prec), {})]
        drawn = _mark_multiples(ax, min(xs_all), max(xs_all))
        for gpu, sw in sweeps_by_gpu.items():
            pts = sw.get((axis, prec))
            if not pts or BASE not in pts:
                continue
            ref, style = pts[BASE], styles[gpu]
            xs = sorted(pts)
            ax.plot(xs, [pts[x].value / ref.value for x in xs], ms=3.5, lw=1.2, label=gpu,
                    alpha=0.9, **style.line_kwargs())
            model = [(x, pts[x].model / ref.model) for x in xs if pts[x].model and ref.model]
            if model:
                bounded = True
                ax.plot([x for x, _ in model], [m for _, m in model], color=style.color,
                        ls=(0, (2, 2)), lw=0.9, alpha=0.8, zorder=2.5, label=f"_{gpu} bound")
        _integer_ticks(ax, xs_all)
        ax.axhline(1.0, color="0.4", lw=0.8)
        ax.set_xlabel(f"{axis.upper()} (the other two = 4096)" + _multiples_note(drawn),
                      fontsize="small")
        ax.set_title(f"{prec}, {axis.upper()} swept", fontsize="medium")
        ax.grid(axis="y", alpha=0.3)
    for index in range(len(panels), rows * cols):
        axes[index // cols][index % cols].set_visible(False)
    for r in range(rows):
        axes[r][0].set_ylabel("throughput relative to 4096")
    handles = {h.get_label(): h for ax in axes.flat for h in ax.get_legend_handles_labels()[0]}
    plots.legend_outside(axes[0][min(cols, len(panels)) - 1], handles=list(handles.values()))
    fig.suptitle("M and K around 4096, relative to 4096" +
                 ("; dashed: the quantization bound (not a prediction)" if bounded else ""),
                 fontsize="medium")
    fig.tight_layout()
    return save(fig, path)


def _scored(rs: ResultSet) -> list[tuple[float, float, bool]]:
    """(measured, predicted, aligned) of every row with the time model's prediction; aligned:
    no swept dimension off the 16-byte grid (the layout:nt rows' N leads B too)."""
    out = []
    for bench in rs.benchmarks.values():
        if bench.parsed.topic != TOPIC or not bench.ok:
            continue
        metric = bench.throughput_metric()
        measured = bench.center(metric) if metric else None
        predicted = bench.center(PREDICTED_TFLOPS)
        if measured is None or predicted is None or measured <= 0:
            continue
        leads = [ALIGN_M_BYTES, ALIGN_K_BYTES] + ([ALIGN_N_BYTES] if bench.parsed.layout == "nt"
                                                  else [])
        aligned = all((bench.center(c) or 16) >= 16 for c in leads)
        out.append((measured, predicted, aligned))
    return out


def plot_predicted_vs_measured(points_by_gpu: dict[str, list[tuple[float, float, bool]]],
                               path: Path) -> Path:
    """Every GPU's rows in one log-log scatter: a colour and marker per GPU, filled for rows
    whose leading dimensions are 16-byte aligned, hollow for the others; the diagonal and
    +/-15 %."""
    fig, ax = plt.subplots(figsize=(7.4, 4.4))
    every = [pt for pts in points_by_gpu.values() for pt in pts]
    lo = min(min(m, p) for m, p, _ in every) / 1.5
    hi = max(max(m, p) for m, p, _ in every) * 1.5
    ax.plot([lo, hi], [lo, hi], "-", color="black", lw=1, label="predicted = measured")
    for f in (0.85, 1.15):
        ax.plot([lo, hi], [lo * f, hi * f], color="0.5", lw=0.8, ls=(0, (4, 3)),
                label="_band")
    styles = plot_style.styles_for(list(points_by_gpu))
    for gpu, pts in points_by_gpu.items():
        st = styles[gpu]
        aligned = [(m, p) for m, p, a in pts if a]
        odd = [(m, p) for m, p, a in pts if not a]
        ax.scatter([m for m, _ in aligned], [p for _, p in aligned], s=16, marker=st.marker,
                   color=st.color, label=gpu, zorder=3)
        ax.scatter([m for m, _ in odd], [p for _, p in odd], s=16, marker=st.marker,
                   facecolors="none", edgecolors=st.color, linewidths=0.9, zorder=3,
                   label=f"_{gpu} misaligned")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel(plots.log_label("measured here (TFLOP/s or TOP/s)"))
    ax.set_ylabel(plots.log_label("model: GEMM time model (no measurement)"))
    ax.set_title("The GEMM time model's prediction vs the measurement\n(filled: 16-byte aligned, "
                 "hollow: misaligned; grey: ±15 %)", fontsize="medium")
    plots.legend_outside(ax)
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return save(fig, path)


def _score_row(label: str, points: list[tuple[float, float, bool]]) -> list[str]:
    def median_ratio(aligned: bool) -> str:
        rs = sorted(p / m for m, p, a in points if a == aligned)
        return fmt_num(rs[len(rs) // 2] if len(rs) % 2 else
                       (rs[len(rs) // 2 - 1] + rs[len(rs) // 2]) / 2, 3) if rs else "-"
    return [label, str(len(points)), median_ratio(True), median_ratio(False)]


def _padding_rows(rs: ResultSet, label: str) -> list[list[str]]:
    rows = []
    by_prec: dict[str, dict[str, Benchmark]] = defaultdict(dict)
    for bench in rs.find(TOPIC, prefix("pad_to_")):
        by_prec[bench.parsed.precision][bench.parsed.variant] = bench
    for prec in sorted(by_prec, key=precision_order):
        for variant, bench in sorted(by_prec[prec].items()):
            if not bench.ok:
                reason = bench.skip_reason or (bench.error or "")
                rows.append([label, prec, variant.removeprefix("pad_to_"), "-", "-", "-", "-",
                             f"skipped: {reason}" if bench.skipped else f"FAILED: {reason}"])
                continue
            unpadded = bench.center(UNPADDED_US)
            wins = bench.center(PADDING_WINS)
            verdict = ("padding wins" if wins else "unaligned wins") if wins is not None else "-"
            if unpadded is None and wins:
                verdict = "padding wins (N = 33 cannot run)"
            rows.append([label, prec, variant.removeprefix("pad_to_"), fmt_num(unpadded),
                         fmt_num(bench.center(GEMM_US)), fmt_num(bench.center(COPY_US)),
                         fmt_num(microseconds(bench.center("time"))), verdict])
    return rows


def _n_sweeps(points) -> dict[str, dict[str, dict[int, Point]]]:
    """precision -> series -> the N sweep up to N_PLOT_MAX (full mode: enough points)."""
    by_prec: dict[str, dict[str, dict[int, Point]]] = defaultdict(dict)
    for (variant, prec, axis), pts in points.items():
        small = {n: p for n, p in pts.items() if n <= N_PLOT_MAX}
        if axis == "n" and len(small) >= MIN_SWEEP_POINTS:
            by_prec[prec][variant] = small
    return by_prec


def _pairs(points) -> dict[str, dict[int, Point]]:
    return {prec: pts for (variant, prec, axis), pts in points.items()
            if variant == MAIN and axis == "n" and any(a in pts or b in pts for a, b in PAIRS)}


def render(doc, sets: list[ResultSet], labels: list[str], out_dir: Path) -> list[Path]:
    images: list[Path] = []
    doc.para("A batch (N) of 33 against 32, and M, N, K around multiples of 8 and 16. The dashed "
             "lines are a bound, not a prediction: tcbench's roofline with tile and wave "
             "quantization for the tile cuBLASLt chose, which does not know the unaligned-kernel "
             "penalty, so the gap between a measured point and it at a non-multiple of 8 is that "
             "penalty. The GEMM time model's prediction (model, fitted on published "
             "measurements) is scored against every measured row below. Each GPU's throughput "
             "against N is in its part of Per-GPU detail. See docs/concepts/alignment.md for "
             "which dimension's alignment matters in which layout.")
    pair_rows, pad_rows, api_rows, score_rows = [], [], [], []
    pairs_by_gpu, mk_by_gpu, scored_by_gpu = {}, {}, {}
    model = (("bound", lambda twin, _: fmt_num(twin.center(MODEL_TFLOPS) if twin else None)),)
    for rs, label in zip(sets, labels):
        points = _points(rs)
        pairs = _pairs(points)
        if pairs:
            pairs_by_gpu[label] = pairs
            for prec in sorted(pairs, key=precision_order):
                for even, odd in PAIRS:
                    a, b = pairs[prec].get(even), pairs[prec].get(odd)
                    if a is None and b is None:
                        continue
                    pair_rows.append([
                        label, prec, f"{even} / {odd}", fmt_num(a.value if a else None),
                        fmt_num(b.value if b else None),
                        fmt_num(b.value / a.value if a and b and a.value else None, 3),
                        fmt_num(b.slowdown if b else None, 3),
                        fmt_num(b.model / a.model if a and b and a.model and b.model else None, 3),
                        b.label if b else "skipped"])
        mk = {(axis, prec): pts for (variant, prec, axis), pts in points.items()
              if variant == MAIN and axis in ("m", "k") and len(pts) >= 3 and BASE in pts}
        if mk:
            mk_by_gpu[label] = mk
        scored = _scored(rs)
        if scored:
            scored_by_gpu[label] = scored
            score_rows.append(_score_row(label, scored))
        pad_rows += _padding_rows(rs, label)
        api_rows += _api_pairs.rows(rs, label, TOPIC, extra=model)

    if pairs_by_gpu:
        path = out_dir / f"section_{TOPIC}_pairs.png"
        images.append(plot_pair_ratios(pairs_by_gpu, path))
        doc.heading(3, "The headline pairs")
        doc.image(path, "odd / aligned throughput of the headline pairs, a line per GPU, a panel "
                        "per precision")
    if mk_by_gpu:
        path = out_dir / f"section_{TOPIC}_m_k.png"
        images.append(plot_mk(mk_by_gpu, path))
        doc.heading(3, "M and K around 4096")
        doc.image(path, "throughput relative to 4096 as M or K moves around it, a line per GPU")
    if scored_by_gpu:
        path = out_dir / f"section_{TOPIC}_model.png"
        images.append(plot_predicted_vs_measured(scored_by_gpu, path))
        doc.heading(3, "The model's prediction vs the measurement")
        doc.image(path, "predicted vs measured, every GPU")
    if score_rows:
        doc.heading(3, "How the model did on this GPU")
        doc.para(f"Median of `{MODEL_RATIO}`: the GEMM time model's prediction (model, no "
                 "measurement) over the rate measured here (1.00 = exact; > 1: the model is "
                 "optimistic), for the rows whose leading dimensions are 16-byte aligned and for "
                 "the others. `scripts/tcbench model check` has its accuracy on published "
                 "measurements.")
        doc.table(["GPU", "rows", "aligned", "misaligned"], score_rows, right={1, 2, 3})
    doc.collapsed_table(
        "Pairs", ["GPU", "precision", "N", "aligned", "odd", "odd/aligned", "slowdown", "bound",
                  "odd size ran as"], pair_rows, {3, 4, 5, 6, 7},
        intro=prose("Throughput of the aligned and the odd size (cuBLASLt, M = K = 4096); "
                    "`slowdown` is the odd size's time per unit of N over that of the next "
                    "multiple of 16 bytes of N (1.00 = no loss); `bound` is the quantization "
                    "bound's odd/aligned ratio (a bound, not a prediction)."))
    doc.collapsed_table(
        "Padding N = 33", ["GPU", "precision", "as", "N = 33 (us)", "padded GEMM (us)",
                           "copy (us)", "padded total (us)", "verdict"], pad_rows, {3, 4, 5, 6},
        intro=("33 run as 40 (a multiple of 8) and 48 (of 16), the pad copy of B included in the "
               "time; times in microseconds. Padding wins when GEMM + copy is faster than the "
               "unpadded GEMM."))
    doc.collapsed_table(
        "cuBLAS beside cuBLASLt", _api_pairs.headers(model), api_rows, _api_pairs.RIGHT | {6},
        intro=prose("The headline pairs (M = K = 4096) and the strided batches (heads of 128 x "
                    "128 x head dimension and 128 x head dimension x 128) through cuBLAS "
                    "(`cublasGemmEx`, `cublasGemmStridedBatchedEx`) and cuBLASLt, in TFLOP/s "
                    "(TOP/s for int8); `vs_cublaslt` is cuBLASLt's time over cuBLAS's on that "
                    "problem (> 1: cuBLAS faster); `bound` is the quantization bound's rate with "
                    "the tile cuBLASLt chose (a bound; cuBLAS does not report its kernel)."))
    return images


def render_gpu(doc, rs: ResultSet, label: str, out_dir: Path) -> list[Path]:
    """One GPU's throughput against N per precision (full runs), and its pairs as bars."""
    images: list[Path] = []
    points = _points(rs)
    tag = slug(label)
    by_prec = _n_sweeps(points)
    for prec in sorted(by_prec, key=precision_order):
        lines = dict(sorted(by_prec[prec].items(),
                            key=lambda kv: list(VARIANT_STYLE).index(kv[0])
                            if kv[0] in VARIANT_STYLE else 99))
        path = out_dir / f"section_{TOPIC}_{tag}_n_sweep_{prec}.png"
        images.append(plot_n_sweep(label, prec, lines, path))
        doc.heading(3, f"{label}: {prec}, throughput vs N")
        doc.image(path, f"{label} {prec} throughput vs N")
    pairs = _pairs(points)
    if pairs:
        path = out_dir / f"section_{TOPIC}_{tag}_pairs.png"
        images.append(plot_pairs(label, pairs, path))
        doc.heading(3, f"{label}: the headline pairs")
        doc.image(path, f"{label} headline pairs")
    return images
