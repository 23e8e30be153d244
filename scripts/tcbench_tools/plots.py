"""PNG plots for ``tcbench report`` (matplotlib, headless Agg backend)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib import ticker  # noqa: E402

_DPI = 110


def peak_vs_achieved(precisions: list[str], gpus: list[str],
                     peak: dict[tuple[str, str], float], achieved: dict[tuple[str, str], float],
                     path: Path) -> Path:
    """Grouped bars per precision: for each GPU a pale bar (peak) and a solid one (achieved)."""
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(precisions) * max(1, len(gpus)) / 1.5), 4.5))
    width = 0.8 / max(1, len(gpus))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for g, gpu in enumerate(gpus):
        xs = [i - 0.4 + width * (g + 0.5) for i in range(len(precisions))]
        color = colors[g % len(colors)]
        peaks = [peak.get((gpu, p), 0.0) for p in precisions]
        got = [achieved.get((gpu, p), 0.0) for p in precisions]
        ax.bar(xs, peaks, width * 0.9, color=color, alpha=0.25, edgecolor=color,
               label=f"{gpu} peak")
        ax.bar(xs, got, width * 0.9, color=color, label=f"{gpu} achieved")
    ax.set_xticks(range(len(precisions)))
    ax.set_xticklabels(precisions)
    ax.set_yscale("log")
    ax.set_ylabel("TFLOP/s (TOP/s for int8), log scale")
    ax.set_title("Peak vs best achieved, per precision")
    ax.legend(fontsize="small", ncol=max(1, len(gpus)))
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)
    return path


def sweep(title: str, axis: str, unit: str, lines: dict[str, list[tuple[float, float]]],
          path: Path) -> Path:
    """One line per GPU: throughput against the swept argument."""
    fig, ax = plt.subplots(figsize=(6.5, 4.0))
    xs_all = [x for pts in lines.values() for x, _ in pts]
    for gpu, pts in lines.items():
        pts = sorted(pts)
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=gpu)
    if xs_all and min(xs_all) > 0 and max(xs_all) / min(xs_all) >= 8:
        ax.set_xscale("log", base=2)
        # One tick per point reads well for a handful of sizes; a dense sweep (N = 1..160) gets
        # powers of two instead of an unreadable (and slow to lay out) row of labels.
        if len(set(xs_all)) <= 16:
            ax.set_xticks(sorted(set(xs_all)))
        else:
            ax.xaxis.set_major_locator(ticker.LogLocator(base=2))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_locator(ticker.NullLocator())
    elif all(float(x).is_integer() for x in xs_all):
        ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:.0f}"))
    ax.set_xlabel(axis)
    ax.set_ylabel(unit)
    ax.set_title(title, fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)
    return path
