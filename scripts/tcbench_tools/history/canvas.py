"""One small plot of the dashboard: a benchmark's median time over the runs of its GPU and mode.

What a plot shows is written once, in the page's legend (page.legend). Beyond it: "SYNTHETIC DATA"
across the plot when a run of it carries tcbench_synthetic, and change-point labels that never
overlap (up to three rows; a label that finds no room is left to the caption). The y range
leaves the outliers out (pure +-1 % noise fills a fifth of it, not all of it). Everything the
plots of a section share (frame, x axis, the environment lines) is drawn once and copied back for
each plot (Agg's restore_region).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tcbench_tools.history.detect import ChangePoint
from tcbench_tools.history.merge import BAND
from tcbench_tools.history.search import cleaned, noise
from tcbench_tools.history.series import RunInfo, Series

# Plot geometry in pixels: fixed, so that one image map fits every plot of a section.
WIDTH, HEIGHT, DPI = 390, 240, 100
AXES = (0.165, 0.12, 0.78, 0.85)  # left, bottom, width, height as fractions of the figure
FONT = 8.5  # points: 12 px at 100 dpi, readable at the displayed size
REGRESSION, IMPROVEMENT, MINOR, BAND_COLOR, NOISE_COLOR = (
    "#c62828", "#2e7d32", "#8a8a8a", "#9db8de", "#e3e3e3")
# One colour and marker per environment identity of a plot (the first is the usual one).
PART_STYLES = (("#1f4e8c", "o"), ("#b35806", "s"), ("#5e3c99", "^"), ("#1b7837", "D"),
               ("#666666", "v"))
MARKERS_UP_TO = 150  # runs per plot up to which each run is a dot
LANES = (0.95, 0.87, 0.79)  # axes heights of the change points' label rows
DATA_TOP = 0.74  # with labels, the data stay below this axes height
DECADE = 10.0  # a series whose largest value is this many times its smallest: log axis


@dataclass
class Part:
    """One identity's series of a plot, with its change points."""

    x: np.ndarray  # section positions of its runs
    series: Series
    points: list[ChangePoint]
    below: list[ChangePoint]


def areas(n: int) -> list[tuple[int, int, int, int]]:
    """Pixel rectangle (x0, y0, x1, y1; y down) over the axes of each of n runs' columns (the
    axes span x = -0.5 .. n - 0.5, so run i's column is [i - 0.5, i + 0.5])."""
    left, bottom, width, height = AXES
    x0 = left * WIDTH
    span = width * WIDTH / n
    top = round((1 - bottom - height) * HEIGHT)
    low = round((1 - bottom) * HEIGHT)
    return [(round(x0 + i * span), top, max(round(x0 + (i + 1) * span), round(x0 + i * span) + 1),
             low) for i in range(n)]


def time_unit(seconds: float) -> tuple[str, float]:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return unit, scale
    return "ns", 1e-9


def envelope(x: np.ndarray, low: np.ndarray, high: np.ndarray, columns: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pixel column of the axes, the lowest and highest value of the runs in it, at the
    column's mean x: what a line or band through all the runs draws at that width, with a
    handful of points per column instead of dozens (10,000 runs on 320 columns)."""
    span = max(float(x[-1] - x[0]), 1.0)
    column = np.minimum(((x - x[0]) / span * columns).astype(np.int64), columns - 1)
    starts = np.flatnonzero(np.r_[True, column[1:] != column[:-1]])
    centre = np.add.reduceat(x, starts) / np.diff(np.r_[starts, len(x)])
    return (centre, np.fmin.reduceat(low, starts), np.fmax.reduceat(high, starts))


def _levels(part: Part, scale: float) -> list[tuple[int, int, float]]:
    """(first, last + 1, median) of each level of a part, in its own indices."""
    edges = [0] + [c.index for c in part.points] + [len(part.x)]
    med = part.series.median / scale
    return [(lo, hi, float(np.median(med[lo:hi]))) for lo, hi in zip(edges[:-1], edges[1:])]


class Canvas:
    """One figure reused for every plot of a section (same x axis)."""

    def __init__(self, runs: list[RunInfo], changes: list[tuple[int, str]], min_span: float):
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        from tcbench_tools.sections._common import mark_synthetic

        self.fig = Figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI)
        self.canvas = FigureCanvasAgg(self.fig)
        self.ax = ax = self.fig.add_axes(AXES)
        self.n = n = len(runs)
        self.min_span = min_span / 100.0
        ax.set_xlim(-0.5, n - 0.5)
        ticks = sorted(set(np.linspace(0, n - 1, min(n, 4)).round().astype(int)))
        ax.set_xticks(ticks)
        # Month and day; year and month when the runs span more than ~ten months.
        span = (runs[-1].time - runs[0].time).days if n > 1 else 0
        form = "%Y-%m" if span > 300 else "%m-%d"
        labels = ax.set_xticklabels([runs[t].time.strftime(form) for t in ticks], fontsize=FONT)
        if len(labels) > 1:
            labels[-1].set_horizontalalignment("right")  # the newest run's date ends at the edge
        ax.tick_params(axis="both", labelsize=FONT, pad=1.5)
        ax.grid(True, color="#e4e4e4", linewidth=0.6)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        for at, tag in changes:  # a new environment identity: shared by every plot
            ax.axvline(at - 0.5, color=MINOR, linewidth=0.9, linestyle=":", zorder=1)
            ax.text(at - 0.5 + 0.006 * n, 0.02, tag, transform=ax.get_xaxis_transform(),
                    fontsize=FONT - 1, color="#555555", ha="left", va="bottom")
        self.ylabel = ax.set_ylabel("", fontsize=FONT)
        # A fixed place for the y label: matplotlib would otherwise measure every tick label of
        # every plot to place it (a fifth of the time a plot takes).
        ax.yaxis.set_label_coords(-0.14, 0.5)
        self.log = False
        self.drawn: dict = {}  # what the last plot drew (the tests read it)
        self._linear()
        # The SYNTHETIC DATA mark, drawn once on a transparent figure of the same size and laid
        # over each plot of synthetic runs as pixels (its large glyphs cost more than a plot).
        overlay = Figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI)
        overlay.patch.set_alpha(0.0)
        mark_synthetic(overlay)
        drawn = FigureCanvasAgg(overlay)
        drawn.draw()
        mark = np.asarray(drawn.buffer_rgba()).astype(np.uint16)
        self.mark_at = np.nonzero(mark[..., 3])  # the pixels the mark covers (a sixth or so)
        alpha = mark[..., 3][self.mark_at][:, None]
        self.mark_keep = 255 - alpha  # per covered pixel: how much of the plot stays
        self.mark_add = mark[..., :3][self.mark_at] * alpha + 127  # and the mark's part
        ax.yaxis.set_visible(False)
        self.canvas.draw()
        self.background = self.canvas.copy_from_bbox(self.fig.bbox)
        ax.yaxis.set_visible(True)

    def _linear(self) -> None:
        from matplotlib.ticker import MaxNLocator

        self.ax.set_yscale("linear")
        self.ax.yaxis.set_major_locator(MaxNLocator(nbins=4))
        self.log = False

    def _logarithmic(self) -> None:
        from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

        self.ax.set_yscale("log")
        self.ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        self.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        self.ax.yaxis.set_minor_locator(NullLocator())
        self.log = True

    def _limits(self, values: np.ndarray, center: float, labelled: bool) -> tuple[float, float]:
        """The y range: the data, at least +-min_span around the center on a linear axis, and
        room above for the labels' rows."""
        lo, hi = float(values.min()), float(values.max())
        if self.log:
            lo, hi = np.log10(lo), np.log10(hi)
        else:
            lo, hi = min(lo, center * (1 - self.min_span)), max(hi, center * (1 + self.min_span))
        pad = (hi - lo) * 0.05 or abs(hi) * 0.02 or 1.0
        lo, hi = lo - pad, hi + pad
        if labelled:
            hi = lo + (hi - lo) / DATA_TOP
        return (10 ** lo, 10 ** hi) if self.log else (lo, hi)

    def draw(self, parts: list[Part], synthetic: bool, path: Path) -> None:
        from matplotlib.collections import LineCollection, PolyCollection

        ax = self.ax
        every = np.concatenate([p.series.median for p in parts])
        unit, scale = time_unit(float(np.median(every)))
        # The line follows each series as the search sees it (one-off outliers replaced by the
        # running median: search.cleaned); the outliers are open circles, so that a slow night
        # neither sets the y range nor draws a spike across the plot.
        shown = []
        for p in parts:
            y = np.log(p.series.median)
            sigma = noise(y)
            clean = cleaned(y, sigma)
            odd = clean != y  # exactly the runs cleaned replaced
            med = p.series.median / scale
            shown.append((p, sigma, np.where(odd, np.exp(clean) / scale, med), med, odd))
        values = [line for _, _, line, _, _ in shown]
        for p, _, line, med, odd in shown:
            for band in (p.series.p10, p.series.p90):
                if band is not None:
                    b = band[~odd] / scale
                    values.append(b[np.isfinite(b)])
        values = np.concatenate(values)
        log = values.max() > DECADE * values.min()
        if log != self.log:
            self._logarithmic() if log else self._linear()
        points = [c for p in parts for c in p.points]
        low_edge, high_edge = self._limits(values, float(np.median(every)) / scale,
                                           bool(points))
        ax.set_ylim(low_edge, high_edge)
        self.ylabel.set_text(f"time ({unit}{', log scale' if log else ''})")
        artists = []
        noise_boxes, level_lines = [], []
        columns = int(AXES[2] * WIDTH)
        for k, (p, sigma, line_values, med, odd) in enumerate(shown):
            colour, marker = PART_STYLES[min(k, len(PART_STYLES) - 1)]
            for lo, hi, level in _levels(p, scale):
                x0, x1 = p.x[lo] - 0.5, p.x[hi - 1] + 0.5
                down, up = level * np.exp(-BAND * sigma), level * np.exp(BAND * sigma)
                noise_boxes.append([(x0, down), (x1, down), (x1, up), (x0, up)])
                level_lines.append([(x0, level), (x1, level)])
            x, line_y = p.x, line_values
            if len(p.x) > 3 * columns:  # more runs than pixels: each column's range
                x, low, high = envelope(p.x, line_values, line_values, columns)
                x, line_y = np.repeat(x, 2), np.column_stack([low, high]).ravel()
            if p.series.p10 is not None and np.isfinite(p.series.p10).any():
                # An outlier's own spread is left out with it (the band follows the line).
                bx = p.x
                b10 = np.where(odd, line_values, p.series.p10 / scale)
                b90 = np.where(odd, line_values, p.series.p90 / scale)
                if len(p.x) > 3 * columns:
                    bx, b10, b90 = envelope(p.x, b10, b90, columns)
                artists.append(ax.fill_between(bx, b10, b90, color=BAND_COLOR, alpha=0.55,
                                               linewidth=0))
            (line,) = ax.plot(x, line_y, color=colour, linewidth=0.6 if self.n > 300 else 1.0,
                              marker=marker if len(p.x) <= MARKERS_UP_TO else "",
                              markersize=2.2)
            artists.append(line)
            if odd.any():  # outliers: inside the range as open circles, beyond it on its edge
                ox, oy = p.x[odd], med[odd]
                for where, shape, at in ((oy > high_edge, "^", high_edge),
                                         (oy < low_edge, "v", low_edge),
                                         ((oy >= low_edge) & (oy <= high_edge), "o", None)):
                    if where.any():
                        (dots,) = ax.plot(ox[where], oy[where] if at is None else
                                          np.full(where.sum(), at), linestyle="", marker=shape,
                                          markersize=3.2, markerfacecolor="white",
                                          markeredgecolor=colour, markeredgewidth=0.8,
                                          clip_on=False)
                        artists.append(dots)
        artists.insert(0, ax.add_collection(PolyCollection(noise_boxes, facecolors=NOISE_COLOR,
                                                           edgecolors="none")))
        artists.append(ax.add_collection(LineCollection(level_lines, colors="#555555",
                                                        linewidths=0.8, linestyles="--")))
        marks = self._marks(parts)
        if marks is not None:
            artists.append(marks)
        artists += self._labels(parts)
        self.canvas.restore_region(self.background)
        ax.draw_artist(ax.yaxis)
        for artist in artists:
            ax.draw_artist(artist)
        renderer = self.canvas.get_renderer()
        self.drawn = {"ylim": ax.get_ylim(), "log": log, "ylabel": self.ylabel.get_text(),
                      "noise_bands": len(noise_boxes), "synthetic": synthetic,
                      "labels": [t.get_window_extent(renderer) for t in artists
                                 if t in ax.texts]}
        self._save(path, synthetic)
        for artist in artists:
            artist.remove()

    def _marks(self, parts: list[Part]):
        from matplotlib.collections import LineCollection

        lines, colours, styles, widths = [], [], [], []
        for p in parts:
            for c, minor in [(c, False) for c in p.points] + [(c, True) for c in p.below]:
                at = p.x[c.index] - 0.5
                lines.append([(at, 0.0), (at, 1.0)])
                colours.append(MINOR if minor else
                               REGRESSION if c.direction == "regression" else IMPROVEMENT)
                styles.append((0, (3, 2)) if minor else "solid")
                widths.append(0.8 if minor else 1.3)
        if not lines:
            return None
        return self.ax.add_collection(LineCollection(
            lines, colors=colours, linestyles=styles, linewidths=widths,
            transform=self.ax.get_xaxis_transform()))

    def _labels(self, parts: list[Part]) -> list:
        """The listed change points' labels, each in the first row where it overlaps no other
        (widths measured by the renderer); one that fits no row is not drawn."""
        renderer = self.canvas.get_renderer()
        placed: list[list[tuple[float, float]]] = [[] for _ in LANES]
        out = []
        points = sorted(((p.x[c.index] - 0.5, c) for p in parts for c in p.points),
                        key=lambda item: item[0])
        for at, c in points:
            colour = REGRESSION if c.direction == "regression" else IMPROVEMENT
            right = at < (self.n - 1) * 0.6
            text = self.ax.text(at + (0.012 if right else -0.012) * self.n, LANES[0],
                                f"{(c.run.git_sha or '?')[:7]} {c.change_pct:+.1f}%",
                                color=colour, fontsize=FONT - 1, ha="left" if right else "right",
                                va="center", transform=self.ax.get_xaxis_transform())
            for lane, y in enumerate(LANES):
                text.set_y(y)
                box = text.get_window_extent(renderer)
                span = (box.x0 - 2, box.x1 + 2)
                if all(span[1] < a or span[0] > b for a, b in placed[lane]):
                    placed[lane].append(span)
                    out.append(text)
                    break
            else:
                text.remove()
        return out

    def _save(self, path: Path, synthetic: bool) -> None:
        """The plot as a PNG of 128 colours (a plot has a few dozen and their anti-aliased
        edges; a third of the bytes of an RGB PNG, and faster to write), with the synthetic
        mark laid over it when asked."""
        from PIL import Image

        rgb = np.array(np.asarray(self.canvas.buffer_rgba())[..., :3])
        if synthetic:
            under = rgb[self.mark_at].astype(np.uint16)
            rgb[self.mark_at] = (under * self.mark_keep + self.mark_add) // 255
        image = Image.fromarray(rgb, "RGB")
        image.quantize(colors=128, method=Image.Quantize.FASTOCTREE).save(
            path, format="PNG", compress_level=1)
