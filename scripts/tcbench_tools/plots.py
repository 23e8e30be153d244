"""The report's general PNG plots: the best results per precision across GPUs (bar panels), and
sweeps (headless backend: see sections/_common.py).

Each plot has a ``*_figure`` function that builds the figure (tests inspect it) and a function
that saves it. They are made to stay readable from 1 to 20 GPUs and more:

- every series of a plot has its own colour, marker and line style, a report's GPU the same in
  every plot (plot_style.py: any two of the first twenty colours are at least CIEDE2000 15
  apart), legends sit outside the data (right of the axes), and no figure is wider than the
  report's page (plot_style.PAGE_WIDTH_IN);
- bar charts are small multiples: one panel per precision, one horizontal bar per GPU (GPUs are
  rows, named on the axis), on a linear axis from 0, the peak drawn as an outline behind the bar;
  a missing result is no bar and no outline, only a grey "no data" (or why) inside the panel, so
  that it never reads as a 0; panels compared side by side share their axis (``shared``);
- a sweep over sizes that are powers of two (or span 8x or more) has a log2 axis (log10 for
  decimal sizes) with ticks at the measured sizes when they are few, and its label says "log2
  scale"; an integer axis gets integer ticks; throughput axes start at 0;
- a point measured over several repetitions carries its p10-p90 spread as an error bar (a band
  on lines with very many points); where every bar is smaller than its marker the figure's
  ``caption_note`` says so, with the largest spread, for the caption;
- where the GPUs' peaks are known, a second panel shows each GPU's sweep as % of its own peak,
  which is what makes generations comparable.

Axes use locators, never one tick per point: a sweep of 100 000 sizes still gets a dozen
readable ticks, and draws in seconds.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path

from matplotlib import ticker
from matplotlib.figure import Figure

from tcbench_tools import plot_style
from tcbench_tools.names import size_label
from tcbench_tools.plot_style import SeriesStyle
from tcbench_tools.sections._common import plt, save

# Very long labels (odd GPU names) may leave tight_layout nothing to do; the plot is still right.
warnings.filterwarnings("ignore", message="Tight layout not applied")

MAX_MARKED_POINTS = 64  # more points than this: a plain line (markers would merge into a smear)
MIN_PANEL_IN = 2.8  # a bar panel's least width: its value labels must fit beside the bars
PANEL_COLUMNS = 4  # bar panels per row
MAX_TICKS_AT_SIZES = 12  # up to this many distinct sizes: a tick at each


@dataclass(frozen=True)
class Point:
    """One point of a sweep: the swept value, the median and (when repetitions exist) the
    p10-p90 spread of the repetitions."""

    x: float
    y: float
    low: float | None = None
    high: float | None = None


def _points(raw: list) -> list[Point]:
    """Points from ``Point`` objects or plain ``(x, y)`` / ``(x, y, low, high)`` tuples."""
    out = [p if isinstance(p, Point) else Point(*p) for p in raw]
    return sorted(out, key=lambda p: p.x)


def value_label(x: float) -> str:
    """A value beside a bar: 3 significant digits, thousands written out (1,060 not 1.06e+03)."""
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def _power_of_two(x: float) -> bool:
    return x > 0 and math.log2(x).is_integer()


def _spread_out(sizes: list[float], log: bool, min_gap: float) -> list[float]:
    """The sizes that get a tick: the first, then each one at least ``min_gap`` of the axis span
    past the last ticked one (32 and 33 side by side would print over each other)."""
    pos = [math.log(x) if log else x for x in sizes]
    span = (pos[-1] - pos[0]) or 1.0
    kept, last = [], None
    for x, q in zip(sizes, pos):
        if last is None or (q - last) / span >= min_gap:
            kept.append(x)
            last = q
    return kept


def log_label(label: str, base: int | None = None) -> str:
    """An axis label that says its scale is logarithmic: "m=n=k (log2 scale)"."""
    return f"{label} (log{base or ''} scale)"


def set_size_axis(ax, xs: list[float], label: str | None = None) -> None:
    """The x axis of a sweep: log2 for powers of two or a span of 8x or more (log10 when the
    sizes are decimal, such as 1e7, 1e8, 1e9), ticks at the sizes when there are few, else a
    locator; integer ticks on a short linear integer axis (4095, 4096, 4097). ``label`` becomes
    the axis label, with "(log2 scale)" (or log10) when the axis is logarithmic."""
    distinct = sorted(set(xs))
    if label is not None:
        ax.set_xlabel(label)
    if not distinct:
        return
    positive = distinct[0] > 0
    wide = positive and distinct[-1] / distinct[0] >= 8
    if positive and (wide or (len(distinct) > 2 and all(map(_power_of_two, distinct)))):
        decimal = not all(map(_power_of_two, distinct)) and all(
            math.log10(x).is_integer() for x in distinct)
        base = 10 if decimal else 2
        ax.set_xscale("log", base=base)
        if label is not None:
            ax.set_xlabel(log_label(label, base))
        if len(distinct) <= MAX_TICKS_AT_SIZES:
            ax.xaxis.set_major_locator(ticker.FixedLocator(_spread_out(distinct, True, 0.06)))
        else:
            ax.xaxis.set_major_locator(ticker.LogLocator(base=base, numticks=12))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: size_label(x)))
        ax.xaxis.set_minor_locator(ticker.NullLocator())
        if len(distinct) > 6:
            for label in ax.get_xticklabels():
                label.set_rotation(30)
                label.set_horizontalalignment("right")
        return
    if all(float(x).is_integer() for x in distinct):
        if len(distinct) <= MAX_TICKS_AT_SIZES:
            ax.xaxis.set_major_locator(ticker.FixedLocator(_spread_out(distinct, False, 0.06)))
        else:
            ax.xaxis.set_major_locator(ticker.MaxNLocator(nbins=10, integer=True))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:.0f}"))


def legend_outside(ax, handles=None, title: str | None = None) -> None:
    """The legend right of the axes (two columns beyond 14 entries), never over the data."""
    if handles is None:
        handles, _ = ax.get_legend_handles_labels()
    if not handles:
        return
    ax.legend(handles=handles, fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0),
              borderaxespad=0.0, ncol=1 if len(handles) <= 14 else 2, title=title,
              title_fontsize="small", frameon=False)


# ---------------------------------------------------------------------------------------------
# Bar panels: one panel per precision (or metric), one bar per GPU


def bar_panels_figure(title: str, panels: list[str], gpus: list[str],
                      values: dict[tuple[str, str], float], xlabel: str,
                      reference: dict[tuple[str, str], float] | None = None,
                      reference_name: str = "peak", notes: dict[tuple[str, str], str] | None = None,
                      hatched: set[tuple[str, str]] | None = None, hatched_name: str = "",
                      styles: dict[str, SeriesStyle] | None = None,
                      missing: dict[tuple[str, str], str] | None = None,
                      log: bool = False, shared: bool = False) -> Figure:
    """Small multiples: a panel per entry of ``panels``, GPUs as rows (named on the left), a
    solid bar of ``values`` per GPU with its ``notes`` written beside it, ``reference`` (a peak)
    as a black outline behind it. A GPU without a value has neither bar nor outline, only a grey
    text inside the panel: its ``missing`` text ("not supported", "skipped") or "no data".
    ``shared``: every panel on the same axis (panels that are compared with each other)."""
    reference, notes, hatched = reference or {}, notes or {}, hatched or set()
    missing = missing or {}
    styles = styles or plot_style.styles_for(gpus)
    label_in = min(3.2, 0.075 * max((len(g) for g in gpus), default=8) + 0.3)
    cols = plot_style.fit_columns(max(1, len(panels)), MIN_PANEL_IN, label_in, PANEL_COLUMNS)
    rows = math.ceil(len(panels) / cols) if panels else 1
    panel_w = min(3.6, (plot_style.PAGE_WIDTH_IN - label_in) / cols)
    panel_h = 0.26 * max(1, len(gpus)) + 0.9
    fig, axes = plt.subplots(rows, cols, figsize=(label_in + panel_w * cols, panel_h * rows + 0.8),
                             squeeze=False, sharey=True)
    ys = list(range(len(gpus)))[::-1]  # first GPU on top

    def top_of(panel: str) -> float:
        return max([values.get((g, panel), 0.0) for g in gpus] +
                   [reference.get((g, panel), 0.0) for g in gpus if (g, panel) in values] + [0.0])

    overall = max([top_of(p) for p in panels] + [0.0])
    for index, panel in enumerate(panels):
        ax = axes[index // cols][index % cols]
        top = overall if shared else top_of(panel)
        for y, gpu in zip(ys, gpus):
            key = (gpu, panel)
            if key not in values:
                # No bar and no peak outline (an empty outline read as a result of 0).
                ax.text(0.03, y, missing.get(key, "no data"), va="center", ha="left",
                        transform=ax.get_yaxis_transform(), fontsize="x-small", style="italic",
                        color=plot_style.NO_DATA)
                continue
            if key in reference:
                ax.barh(y, reference[key], 0.78, facecolor="none", edgecolor=plot_style.REFERENCE,
                        linewidth=0.9, zorder=2)
            ax.barh(y, values[key], 0.62, color=styles[gpu].color, zorder=3,
                    edgecolor="black" if key in hatched else styles[gpu].color,
                    hatch="//" if key in hatched else None)
            if key in notes:
                ax.text(max(values[key], reference.get(key, 0.0)) + 0.01 * (top or 1), y,
                        notes[key], va="center", ha="left", fontsize="x-small", zorder=4)
        ax.set_title(panel, fontsize="medium")
        if log:
            ax.set_xscale("log")
        else:
            # Room for the notes beside the longest bar, however long they are.
            longest = max((len(notes[(g, panel)]) for g in gpus if (g, panel) in notes),
                          default=0)
            ax.set_xlim(0, (top or 1.0) * min(2.4, 1.2 + 0.035 * longest))
        ax.grid(axis="x", which="both", alpha=0.3)
        ax.tick_params(axis="x", labelsize="small")
        ax.set_xlabel(log_label(xlabel) if log else xlabel, fontsize="small")
    for index in range(len(panels), rows * cols):
        axes[index // cols][index % cols].set_visible(False)  # no empty panel
    for r in range(rows):
        axes[r][0].set_yticks(ys)
        axes[r][0].set_yticklabels(gpus, fontsize="small")
        axes[r][0].tick_params(axis="y", labelleft=True)
        axes[r][0].set_ylim(-0.6, len(gpus) - 0.4)
    keys = []  # what the outline and the hatching mean, in the title (no legend over the bars)
    if reference:
        keys.append(f"black outline: {reference_name}")
    if hatched:
        keys.append(f"hatched: {hatched_name}")
    if not shared and len(panels) > 1 and not log:
        keys.append("each panel has its own scale")
    fig.suptitle(title + (f"\n({'; '.join(keys)})" if keys else ""), fontsize="medium")
    fig.tight_layout()
    return fig


def peak_vs_achieved_figure(precisions: list[str], gpus: list[str],
                            peak: dict[tuple[str, str], float],
                            achieved: dict[tuple[str, str], float],
                            missing: dict[tuple[str, str], str] | None = None,
                            styles: dict[str, SeriesStyle] | None = None) -> Figure:
    """Per precision a panel; per GPU its best achieved throughput (solid) inside its peak
    (outline), with "value (% of peak)" beside the bar."""
    notes = {}
    for key, got in achieved.items():
        pk = peak.get(key)
        notes[key] = value_label(got) + (f" ({100 * got / pk:.0f}%)" if pk else "")
    return bar_panels_figure("Best achieved per precision and GPU, with its % of peak",
                             precisions, gpus, achieved,
                             "TFLOP/s (TOP/s for int8)", reference=peak, notes=notes,
                             styles=styles, missing=missing)


def peak_vs_achieved(precisions: list[str], gpus: list[str],
                     peak: dict[tuple[str, str], float], achieved: dict[tuple[str, str], float],
                     path: Path, missing: dict[tuple[str, str], str] | None = None,
                     styles: dict[str, SeriesStyle] | None = None) -> Path:
    return save(peak_vs_achieved_figure(precisions, gpus, peak, achieved, missing, styles), path)


# ---------------------------------------------------------------------------------------------
# Sweeps


MARKER_SIZE = 4.5  # points


def _draw_lines(ax, lines: dict[str, list[Point]], styles: dict[str, SeriesStyle],
                scale: dict[str, float] | None = None) -> None:
    for gpu, pts in lines.items():
        factor = (scale or {}).get(gpu, 1.0)
        style = styles[gpu]
        xs = [p.x for p in pts]
        ys = [p.y * factor for p in pts]
        ax.plot(xs, ys, label=gpu, lw=1.3, ms=MARKER_SIZE,
                **style.line_kwargs(len(pts), MAX_MARKED_POINTS))
        spread = [p for p in pts if p.low is not None and p.high is not None]
        if not spread:
            continue
        if len(pts) > MAX_MARKED_POINTS:
            ax.fill_between([p.x for p in spread], [p.low * factor for p in spread],
                            [p.high * factor for p in spread], color=style.color, alpha=0.2,
                            linewidth=0)
        else:
            ax.errorbar([p.x for p in spread], [p.y * factor for p in spread],
                        yerr=[[max(0.0, (p.y - p.low) * factor) for p in spread],
                              [max(0.0, (p.high - p.y) * factor) for p in spread]],
                        fmt="none", ecolor=style.color, elinewidth=1.0, capsize=2.5, zorder=3)


def hidden_spread_note(fig: Figure, ax, lines: dict[str, list[Point]]) -> str | None:
    """The caption's note when no error bar of ``ax`` is taller than its marker (after the
    figure's layout): "p10-p90 spread below X % of the median everywhere: the error bars are
    smaller than the markers"; None when some bar shows or no point has a spread."""
    spread = [p for pts in lines.values() if len(pts) <= MAX_MARKED_POINTS for p in pts
              if p.low is not None and p.high is not None and p.y > 0]
    if not spread:
        return None
    marker_px = MARKER_SIZE * fig.dpi / 72.0
    ax.get_xlim(), ax.get_ylim()  # resolve the autoscaled limits before reading the transform
    to_px = ax.transData
    for p in spread:
        (_, y0), (_, y1) = to_px.transform([(p.x, p.low), (p.x, p.high)])
        if abs(y1 - y0) > marker_px:
            return None
    worst = max(100.0 * (p.high - p.low) / p.y for p in spread)
    return (f"The p10-p90 spread of the repetitions is below {math.ceil(worst * 10) / 10:g} % of "
            "the median at every point: the error bars are smaller than the markers.")


def sweep_figure(title: str, axis: str, unit: str, lines: dict[str, list],
                 styles: dict[str, SeriesStyle] | None = None,
                 peaks: dict[str, float] | None = None, titled: bool = True) -> Figure:
    """One line per GPU: throughput against the swept argument, with the repetitions' p10-p90
    spread; beside it the same lines as % of each GPU's peak when ``peaks`` has one for at least
    one GPU. The figure's ``caption_note`` says when the error bars hide behind the markers.
    ``titled=False``: no title over the figure (a heading right above it says it)."""
    pts = {gpu: _points(p) for gpu, p in lines.items()}
    styles = styles or plot_style.styles_for(list(pts))
    relative = {g: 100.0 / peaks[g] for g in pts if peaks and peaks.get(g)}
    panels = 2 if relative else 1
    fig, axes = plt.subplots(1, panels, figsize=(min(5.4 * panels + 0.6, plot_style.PAGE_WIDTH_IN),
                                                 3.2), squeeze=False)
    xs_all = [p.x for line in pts.values() for p in line]
    _draw_lines(axes[0][0], pts, styles)
    axes[0][0].set_ylabel(unit)
    if relative:
        _draw_lines(axes[0][1], {g: line for g, line in pts.items() if g in relative}, styles,
                    relative)
        axes[0][1].set_ylabel("% of the GPU's own peak")
        axes[0][1].set_title("as % of each GPU's peak", fontsize="small")
        axes[0][0].set_title("absolute", fontsize="small")
    for ax in axes[0]:
        set_size_axis(ax, xs_all, axis)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    if titled:
        fig.suptitle(title, fontsize="medium")
    legend_outside(axes[0][-1], handles=[h for h in axes[0][0].get_legend_handles_labels()[0]])
    fig.tight_layout()
    fig.caption_note = hidden_spread_note(fig, axes[0][0], pts)
    return fig


def sweep(title: str, axis: str, unit: str, lines: dict[str, list], path: Path,
          styles: dict[str, SeriesStyle] | None = None,
          peaks: dict[str, float] | None = None) -> Path:
    return save(sweep_figure(title, axis, unit, lines, styles, peaks), path)
