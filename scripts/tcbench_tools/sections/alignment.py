"""Report section for bench_alignment: does 33 lose to 32, and does the model explain why?

Plots, per GPU:
- per precision, throughput against N (M = K = 4096, N up to 256) for each series (cuBLASLt in
  the precision's layout, cuBLASLt with ``layout:nt``: B stored N-contiguous, our WMMA kernel),
  the model's prediction (the ``model_tflops`` counter: roofline plus tile and wave quantization
  with the tile cuBLASLt chose) overlaid as a dashed line, and the multiples of 8 and 16 marked;
- the headline pairs (32/33, 64/65, 128/129, 8192/8193) as bars per precision;
- M and K swept around 4096, relative to 4096, with the model's relative prediction;
- the GEMM time model's prediction against the measurement (``predicted_tflops``; its median
  ``model_ratio`` for aligned and misaligned shapes in a table), so a GPU run scores the model.
Tables: the pairs with ``slowdown_vs_aligned``, the padding strategies (33 run as 40 or 48,
pad copy included) with the verdict, and the cuBLAS rows (the pairs, and the attention-shaped
strided batches) beside their cuBLASLt twins with ``vs_cublaslt`` and the model (sections/
_api_pairs.py).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from matplotlib import ticker
from matplotlib.patches import Patch

from tcbench_tools import plot_style, plots
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
    fig, axes = plt.subplots(1, len(PAIRS), figsize=(3.4 * len(PAIRS), 4.2))
    colors = [plot_style.PALETTE[0], plot_style.PALETTE[6]]  # aligned, odd
    for ax, (even, odd) in zip(axes, PAIRS):
        for i, prec in enumerate(precisions):
            pts = pairs[prec]
            for j, n in enumerate((even, odd)):
                x = i + (j - 0.5) * 0.38
                if n in pts:
                    ax.bar(x, pts[n].value, 0.36, color=colors[j])
                else:
                    ax.text(x, 0, "skipped", rotation=90, ha="center", va="bottom",
                            fontsize="x-small")
            if even in pts and odd in pts and pts[even].value > 0:
                top = max(pts[even].value, pts[odd].value)
                ax.text(i, top * 1.02, f"{pts[odd].value / pts[even].value:.2f}", ha="center",
                        va="bottom", fontsize="x-small")
        ax.set_xticks(range(len(precisions)))
        ax.set_xticklabels(precisions, fontsize="small")
        ax.set_title(f"N = {even} vs {odd}", fontsize="medium")
        ax.margins(y=0.12)
        ax.grid(axis="y", alpha=0.3)
        ax.legend([Patch(color=colors[0]), Patch(color=colors[1])], [f"N = {even}", f"N = {odd}"],
                  fontsize="x-small", loc="upper left")
    axes[0].set_ylabel("TFLOP/s (TOP/s for int8)")
    fig.suptitle(f"{gpu}: the headline pairs (M = K = 4096); label = odd / aligned throughput")
    fig.tight_layout()
    return save(fig, path)


def plot_mk(gpu: str, sweeps: dict[tuple[str, str], dict[int, Point]], path: Path) -> Path:
    """M and K around 4096: throughput relative to the 4096 point, measured and (dashed) the
    model. A panel per swept dimension that has data: no empty panel."""
    present = [a for a in ("m", "k") if any(axis == a and BASE in pts
                                            for (axis, _), pts in sweeps.items())]
    fig, axes = plt.subplots(1, len(present), figsize=(5.0 * len(present) + 1.6, 4.2),
                             sharey=True, squeeze=False)
    notes = set()
    for ax, axis in zip(axes[0], present):
        precs = sorted({p for (a, p) in sweeps if a == axis}, key=precision_order)
        xs_all = [x for (a, _), pts in sweeps.items() if a == axis for x in pts]
        drawn = _mark_multiples(ax, min(xs_all), max(xs_all))
        notes |= drawn
        modelled = False
        for i, prec in enumerate(precs):
            pts = sweeps[(axis, prec)]
            if BASE not in pts:
                continue
            ref, style = pts[BASE], plot_style.series_style(i)
            xs = sorted(pts)
            ax.plot(xs, [pts[x].value / ref.value for x in xs], "-", marker=style.marker,
                    ms=3.5, color=style.color, label=prec, alpha=0.9)
            if ref.model:
                model = [(x, pts[x].model / ref.model) for x in xs if pts[x].model]
                if model:
                    modelled = True
                    ax.plot([x for x, _ in model], [m for _, m in model], "--",
                            color=style.color, lw=1)
        _integer_ticks(ax, xs_all)
        ax.axhline(1.0, color="0.4", lw=0.8)
        ax.set_xlabel(f"{axis.upper()} (the other two = 4096)")
        ax.set_title(f"{axis.upper()} swept" + ("; dashed: model" if modelled else ""),
                     fontsize="medium")
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("throughput relative to 4096")
    plots.legend_outside(axes[0][-1], handles=axes[0][0].get_legend_handles_labels()[0],
                         title="precision")
    fig.suptitle(f"{gpu}: {' and '.join(a.upper() for a in present)} around 4096"
                 + _multiples_note(notes))
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


def plot_predicted_vs_measured(gpu: str, points: list[tuple[float, float, bool]],
                               path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    lo = min(min(m, p) for m, p, _ in points) / 1.5
    hi = max(max(m, p) for m, p, _ in points) * 1.5
    ax.plot([lo, hi], [lo, hi], "-", color="black", lw=1, label="predicted = measured")
    for f, style in ((0.85, (0, (4, 3))), (1.15, (0, (4, 3)))):
        ax.plot([lo, hi], [lo * f, hi * f], color="0.5", lw=0.8, ls=style)
    for i, (aligned, name) in enumerate(((True, "16-byte aligned"), (False, "misaligned"))):
        pts = [(m, p) for m, p, a in points if a == aligned]
        if pts:
            st = plot_style.series_style(i)
            ax.scatter([m for m, _ in pts], [p for _, p in pts], s=14, marker=st.marker,
                       color=st.color, label=f"{name} ({len(pts)})", zorder=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured here (TFLOP/s or TOP/s)")
    ax.set_ylabel("model: GEMM time model (no measurement)")
    ax.set_title(f"{gpu}: the model's prediction vs the measurement\n(grey: ±15 %)")
    ax.legend(loc="upper left", fontsize=8)
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


def render(doc, sets: list[ResultSet], labels: list[str], out_dir: Path) -> list[Path]:
    images: list[Path] = []
    doc.para("A batch (N) of 33 against 32, and M, N, K around multiples of 8 and 16. The dashed "
             "line is a bound, not a prediction: tcbench's roofline with tile and wave "
             "quantization for the tile cuBLASLt chose, which does not know the unaligned-kernel "
             "penalty, so the gap between a measured point and it at a non-multiple of 8 is that "
             "penalty. The GEMM time model's prediction (model, fitted on published "
             "measurements) is scored against every measured row below. See "
             "docs/concepts/alignment.md for which dimension's alignment matters in which layout.")
    pair_rows, pad_rows, api_rows, score_rows = [], [], [], []
    model = (("bound", lambda twin, _: fmt_num(twin.center(MODEL_TFLOPS) if twin else None)),)
    for rs, label in zip(sets, labels):
        points = _points(rs)
        tag = slug(label)
        by_prec: dict[str, dict[str, dict[int, Point]]] = defaultdict(dict)
        for (variant, prec, axis), pts in points.items():
            small = {n: p for n, p in pts.items() if n <= N_PLOT_MAX}
            if axis == "n" and len(small) >= MIN_SWEEP_POINTS:
                by_prec[prec][variant] = small
        for prec in sorted(by_prec, key=precision_order):
            lines = dict(sorted(by_prec[prec].items(),
                                key=lambda kv: list(VARIANT_STYLE).index(kv[0])
                                if kv[0] in VARIANT_STYLE else 99))
            path = out_dir / f"section_{TOPIC}_{tag}_n_sweep_{prec}.png"
            images.append(plot_n_sweep(label, prec, lines, path))
            doc.heading(3, f"{label}: {prec}, throughput vs N")
            doc.image(path, f"{label} {prec} throughput vs N")

        pairs = {prec: pts for (variant, prec, axis), pts in points.items()
                 if variant == MAIN and axis == "n"
                 and any(a in pts or b in pts for a, b in PAIRS)}
        if pairs:
            path = out_dir / f"section_{TOPIC}_{tag}_pairs.png"
            images.append(plot_pairs(label, pairs, path))
            doc.heading(3, f"{label}: the headline pairs")
            doc.image(path, f"{label} headline pairs")
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
            path = out_dir / f"section_{TOPIC}_{tag}_m_k.png"
            images.append(plot_mk(label, mk, path))
            swept = " and ".join(a.upper() for a in ("m", "k") if any(x == a for x, _ in mk))
            doc.heading(3, f"{label}: {swept} around 4096")
            doc.image(path, f"{label} {swept} around 4096")
        scored = _scored(rs)
        if scored:
            path = out_dir / f"section_{TOPIC}_{tag}_model.png"
            images.append(plot_predicted_vs_measured(label, scored, path))
            doc.heading(3, f"{label}: the model's prediction vs the measurement")
            doc.image(path, f"{label} predicted vs measured")
            score_rows.append(_score_row(label, scored))
        pad_rows += _padding_rows(rs, label)
        api_rows += _api_pairs.rows(rs, label, TOPIC, extra=model)

    if pair_rows:
        doc.heading(3, "Pairs")
        doc.prose("Throughput of the aligned and the odd size (cuBLASLt, M = K = 4096); "
                 "`slowdown` is the odd size's time per unit of N over that of the next multiple "
                 "of 16 bytes of N (1.00 = no loss); `bound` is the quantization bound's "
                 "odd/aligned ratio (a bound, not a prediction).")
        doc.table(["GPU", "precision", "N", "aligned", "odd", "odd/aligned", "slowdown",
                   "bound", "odd size ran as"], pair_rows, right={3, 4, 5, 6, 7})
    if score_rows:
        doc.heading(3, "How the model did on this GPU")
        doc.para(f"Median of `{MODEL_RATIO}`: the GEMM time model's prediction (model, no "
                 "measurement) over the rate measured here (1.00 = exact; > 1: the model is "
                 "optimistic), for the rows whose leading dimensions are 16-byte aligned and for "
                 "the others. `scripts/tcbench model check` has its accuracy on published "
                 "measurements.")
        doc.table(["GPU", "rows", "aligned", "misaligned"], score_rows, right={1, 2, 3})
    if pad_rows:
        doc.heading(3, "Padding N = 33")
        doc.para("33 run as 40 (a multiple of 8) and 48 (of 16), the pad copy of B included in "
                 "the time; times in microseconds. Padding wins when GEMM + copy is faster than "
                 "the unpadded GEMM.")
        doc.table(["GPU", "precision", "as", "N = 33 (us)", "padded GEMM (us)", "copy (us)",
                   "padded total (us)", "verdict"], pad_rows, right={3, 4, 5, 6})
    if api_rows:
        doc.heading(3, "cuBLAS beside cuBLASLt")
        doc.prose("The headline pairs (M = K = 4096) and the strided batches (heads of 128 x 128 x "
                 "head dimension and 128 x head dimension x 128) through cuBLAS "
                 "(`cublasGemmEx`, `cublasGemmStridedBatchedEx`) and cuBLASLt, in TFLOP/s (TOP/s "
                 "for int8); `vs_cublaslt` is cuBLASLt's time over cuBLAS's on that problem (> 1: "
                 "cuBLAS faster); `bound` is the quantization bound's rate with the tile cuBLASLt "
                 "chose (a bound; cuBLAS does not report its kernel).")
        doc.table(_api_pairs.headers(model), api_rows, _api_pairs.RIGHT | {6})
    return images
