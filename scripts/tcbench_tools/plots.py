"""The report's general PNG plots: peak vs achieved, and sweeps (headless backend: see
sections/_common.py).

Each plot has a ``*_figure`` function that builds the figure (tests inspect it) and a function
that saves it. Axes use locators, never one tick per point: a sweep of 100 000 sizes still gets
a dozen readable ticks, and draws in seconds.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from matplotlib import ticker
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from tcbench_tools.sections._common import plt, save

# Very long labels (odd GPU names) may leave tight_layout nothing to do; the plot is still right.
warnings.filterwarnings("ignore", message="Tight layout not applied")

MAX_MARKED_POINTS = 64  # more points than this: a plain line (markers would merge into a smear)
MAX_WIDTH_IN = 16.0
LEGEND_COLUMNS = 4


def peak_vs_achieved_figure(precisions: list[str], gpus: list[str],
                            peak: dict[tuple[str, str], float],
                            achieved: dict[tuple[str, str], float]) -> Figure:
    """Grouped bars per precision: for each GPU a pale bar (peak) and a solid one (achieved).
    The legend names each GPU once and the pale/solid convention once, below the axes."""
    width_in = min(MAX_WIDTH_IN, max(6.0, 0.5 * len(precisions) * max(1, len(gpus)) + 2.0))
    fig, ax = plt.subplots(figsize=(width_in, 4.5))
    width = 0.8 / max(1, len(gpus))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    handles = []
    for g, gpu in enumerate(gpus):
        xs = [i - 0.4 + width * (g + 0.5) for i in range(len(precisions))]
        color = colors[g % len(colors)]
        peaks = [peak.get((gpu, p), 0.0) for p in precisions]
        got = [achieved.get((gpu, p), 0.0) for p in precisions]
        ax.bar(xs, peaks, width * 0.9, color=color, alpha=0.25, edgecolor=color)
        ax.bar(xs, got, width * 0.9, color=color)
        handles.append(Patch(color=color, label=gpu))
    handles += [Patch(facecolor="grey", alpha=0.25, edgecolor="grey", label="peak (pale)"),
                Patch(color="grey", label="best achieved (solid)")]
    ax.set_xticks(range(len(precisions)))
    ax.set_xticklabels(precisions)
    ax.set_yscale("log")
    ax.set_ylabel("TFLOP/s (TOP/s for int8), log scale")
    ax.set_title("Peak vs best achieved, per precision")
    ax.legend(handles=handles, fontsize="small", loc="upper center",
              bbox_to_anchor=(0.5, -0.12), ncol=min(LEGEND_COLUMNS, len(handles)))
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    return fig


def peak_vs_achieved(precisions: list[str], gpus: list[str],
                     peak: dict[tuple[str, str], float], achieved: dict[tuple[str, str], float],
                     path: Path) -> Path:
    return save(peak_vs_achieved_figure(precisions, gpus, peak, achieved), path)


def sweep_figure(title: str, axis: str, unit: str,
                 lines: dict[str, list[tuple[float, float]]]) -> Figure:
    """One line per GPU: throughput against the swept argument."""
    fig, ax = plt.subplots(figsize=(6.5, 4.0))
    xs_all = [x for pts in lines.values() for x, _ in pts]
    for gpu, pts in lines.items():
        pts = sorted(pts)
        ax.plot([x for x, _ in pts], [y for _, y in pts], label=gpu,
                marker="o" if len(pts) <= MAX_MARKED_POINTS else None)
    if xs_all and min(xs_all) > 0 and max(xs_all) / min(xs_all) >= 8:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(ticker.LogLocator(base=2, numticks=12))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_locator(ticker.NullLocator())
    elif all(float(x).is_integer() for x in xs_all):
        ax.xaxis.set_major_locator(ticker.MaxNLocator(nbins=10, integer=True))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:.0f}"))
    ax.set_xlabel(axis)
    ax.set_ylabel(unit)
    ax.set_title(title, fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


def sweep(title: str, axis: str, unit: str, lines: dict[str, list[tuple[float, float]]],
          path: Path) -> Path:
    return save(sweep_figure(title, axis, unit, lines), path)
