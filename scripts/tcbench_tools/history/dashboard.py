"""``history dashboard``: one static HTML page with a PNG plot per series beside it.

Layout: the newest regressions first (then improvements), then one section per GPU model and
mode (quick/full), one sub-section per topic, and in it a small plot per benchmark: its median
time over the runs with the p10-p90 band of its repetitions, the median of each level as a
dashed line, and each change point as a vertical line labelled with the git sha of the first run
of the new level (red: regression, green: improvement). The x axis is the runs of that GPU and
mode in time order, the same for every plot of the section, so one HTML image map per section
links each run's column in every plot to that run's provenance (the table at the end).

Plots are drawn with matplotlib's Agg backend on one reused figure per section (at 2000
benchmarks a fresh figure per plot would cost more than the drawing), in one forked process per
core when there are many.
"""

from __future__ import annotations

import html
import math
import re
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from tcbench_tools.errors import InputError
from tcbench_tools.history.detect import ChangePoint, Check
from tcbench_tools.history.series import History, RunInfo, Series
from tcbench_tools.names import parse
from tcbench_tools.tables import fmt_time

# Plot geometry in pixels: fixed, so that one image map fits every plot of a section.
WIDTH, HEIGHT, DPI = 300, 180, 100
AXES = (0.16, 0.15, 0.77, 0.78)  # left, bottom, width, height as fractions of the figure
REGRESSION, IMPROVEMENT, LINE, BAND = "#c62828", "#2e7d32", "#1f4e8c", "#9db8de"
MAX_LISTED = 100  # change points per list at the top (the rest are counted)
PLOT_WORKERS = 8  # at most this many processes draw the plots (one per core)
MARKERS_UP_TO = 150  # runs per plot up to which each run is a dot


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "x"


def run_anchor(run: RunInfo) -> str:
    return f"run-{run.run_id[:16]}"


def _time_unit(seconds: float) -> tuple[str, float]:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return unit, scale
    return "ns", 1e-9


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


class _Canvas:
    """One figure reused for every plot of a section (same x axis): the axes, ticks and lines
    are made once and only their data change. What every plot of the section shares (the frame,
    the x axis and its labels, the vertical grid) is drawn once and copied back for each plot
    (Agg's restore_region); only the y axis and the data are drawn per plot."""

    def __init__(self, runs: list[RunInfo]):
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.collections import LineCollection
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator

        self.fig = Figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI)
        self.canvas = FigureCanvasAgg(self.fig)
        self.ax = ax = self.fig.add_axes(AXES)
        self.runs = runs
        self.n = n = len(runs)
        ax.set_xlim(-0.5, n - 0.5)
        ticks = sorted(set(np.linspace(0, n - 1, min(n, 4)).round().astype(int)))
        ax.set_xticks(ticks)
        # Month and day; year and month when the runs span more than ~ten months.
        span = (runs[-1].time - runs[0].time).days if n > 1 else 0
        form = "%Y-%m" if span > 300 else "%m-%d"
        ax.set_xticklabels([runs[t].time.strftime(form) for t in ticks], fontsize=7)
        ax.yaxis.set_major_locator(MaxNLocator(nbins=4))
        ax.tick_params(axis="y", labelsize=7, pad=1)
        ax.tick_params(axis="x", pad=1)
        ax.grid(True, color="#e4e4e4", linewidth=0.6)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        # Markers only while they are more than a pixel apart.
        (self.line,) = ax.plot([], [], color=LINE, linewidth=1.0 if n <= 300 else 0.6,
                               marker="o" if n <= MARKERS_UP_TO else "", markersize=2.0)
        self.levels = LineCollection([], colors="#555555", linewidths=0.8, linestyles="--")
        self.marks = LineCollection([], linewidths=1.2)
        ax.add_collection(self.levels)
        ax.add_collection(self.marks)
        self.band = None
        self.labels: list = []
        self.ylabel = ax.set_ylabel("", fontsize=7, labelpad=2)
        per_plot = (self.line, self.levels, self.marks, ax.yaxis)
        for artist in per_plot:
            artist.set_visible(False)
        self.canvas.draw()
        self.background = self.canvas.copy_from_bbox(self.fig.bbox)
        for artist in per_plot:
            artist.set_visible(True)

    def draw(self, x: np.ndarray, s: Series, points: list[ChangePoint], path: Path) -> None:
        ax = self.ax
        unit, scale = _time_unit(float(np.nanmedian(s.median)))
        med, p10, p90 = s.median / scale, s.p10 / scale, s.p90 / scale
        if self.band is not None:
            self.band.remove()
            self.band = None
        if np.isfinite(p10).any():
            self.band = ax.fill_between(x, p10, p90, color=BAND, alpha=0.55, linewidth=0)
        self.line.set_data(x, med)
        edges = [0] + [c.index for c in points] + [len(x)]
        segs = []
        for lo, hi in zip(edges[:-1], edges[1:]):
            level = float(np.median(med[lo:hi]))
            segs.append([(x[lo] - 0.5, level), (x[hi - 1] + 0.5, level)])
        self.levels.set_segments(segs)
        values = np.concatenate([med, p10[np.isfinite(p10)], p90[np.isfinite(p90)]])
        lo_v, hi_v = float(values.min()), float(values.max())
        pad = (hi_v - lo_v) * 0.06 or abs(hi_v) * 0.02 or 1.0
        # Room above the data for the change points' labels, when there are any.
        ax.set_ylim(lo_v - pad, hi_v + pad * (3.5 if points else 1.0))
        for label in self.labels:
            label.remove()
        self.labels = []
        marks, colours = [], []
        for c in points:
            colour = REGRESSION if c.direction == "regression" else IMPROVEMENT
            at = x[c.index] - 0.5
            marks.append([(at, lo_v - pad), (at, hi_v + pad * 3.5)])
            colours.append(colour)
            text = f"{(c.run.git_sha or '?')[:7]} {c.change_pct:+.1f}%"
            right = at < (self.n - 1) * 0.6
            self.labels.append(ax.text(at + (0.01 if right else -0.01) * self.n,
                                       hi_v + pad * 2.4, text, color=colour, fontsize=6.5,
                                       ha="left" if right else "right", va="center"))
        self.marks.set_segments(marks)
        self.marks.set_colors(colours or ["none"])
        self.ylabel.set_text(f"time ({unit})")
        self.canvas.restore_region(self.background)
        for artist in (ax.yaxis, self.band, self.levels, self.line, self.marks, *self.labels):
            if artist is not None:
                ax.draw_artist(artist)
        from PIL import Image

        width, height = self.canvas.get_width_height()
        image = Image.frombuffer("RGBA", (width, height), self.canvas.buffer_rgba(), "raw",
                                 "RGBA", 0, 1)
        image.save(path, format="PNG", compress_level=1)


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}" if math.isfinite(value) else "-"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, bool):
        return "quick" if value else "full"
    return str(value)


def _change_table(points: list[ChangePoint], plot_ids: dict[int, str], css: str) -> str:
    if not points:
        return "<p class='none'>None.</p>"
    rows = []
    for c in points[:MAX_LISTED]:
        if css == "regression":
            state = "new" if c.gates else ""
        else:
            state = "faster" if c.direction == "improvement" else "slower"
        rows.append(
            f"<tr class='{'improvement' if c.direction == 'improvement' else 'regression'}'>"
            f"<td>{state}</td>"
            f"<td class='name'><a href='#{plot_ids[id(c.series)]}'>"
            f"{html.escape(c.series.benchmark)}</a></td>"
            f"<td>{html.escape(c.series.gpu)}</td><td>{c.series.mode}</td>"
            f"<td><a href='#{run_anchor(c.run)}'>{c.run.run_id[:12]}</a></td>"
            f"<td>{c.run.time.strftime('%Y-%m-%d %H:%M')}</td>"
            f"<td><code>{html.escape((c.run.git_sha or '-')[:12])}</code></td>"
            f"<td class='num'>{fmt_time(c.before)}</td><td class='num'>{fmt_time(c.after)}</td>"
            f"<td class='num'>{c.change_pct:+.1f}%</td><td class='num'>{c.p_value:.1e}</td>"
            f"<td class='num'>{c.confirming}</td></tr>")
    more = (f"<p class='more'>... and {len(points) - MAX_LISTED} more.</p>"
            if len(points) > MAX_LISTED else "")
    return ("<div class='scroll'><table class='changes'><thead><tr><th></th><th>benchmark</th>"
            "<th>GPU</th><th>mode</th><th>first run</th><th>time (UTC)</th><th>git sha</th>"
            "<th>before</th><th>after</th><th>change</th><th>p</th><th>runs</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>{more}")


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 16px 20px;
       color: #1d1d1d; font-size: 14px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 6px;
  border-bottom: 1px solid #ccc; padding-bottom: 3px; } h3 { font-size: 15px; margin: 16px 0 6px; }
.summary { color: #444; margin: 0 0 12px; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 12.5px; }
th, td { padding: 3px 7px; border-bottom: 1px solid #e2e2e2; text-align: left;
         white-space: nowrap; }
td.name { white-space: normal; overflow-wrap: anywhere; min-width: 16em; }
td.wrap { white-space: normal; overflow-wrap: anywhere; min-width: 14em; }
table.runs { font-size: 12px; } table.runs th { white-space: normal; vertical-align: bottom; }
table.runs td, table.runs th { padding: 3px 5px; }
td small { color: #555; font-size: 11px; }
tr:target { background: #fff3c4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.regression td:first-child { color: #c62828; font-weight: 600; }
tr.improvement td:first-child { color: #2e7d32; font-weight: 600; }
.grid { display: flex; flex-wrap: wrap; gap: 10px 12px; }
figure { margin: 0; width: 300px; }
figure img { display: block; width: 300px; height: 180px; outline: 1px solid #e6e6e6; }
figcaption { font-size: 11.5px; overflow-wrap: anywhere; line-height: 1.25; margin-top: 2px; }
figcaption .tag { font-weight: 600; }
figcaption .regression { color: #c62828; } figcaption .improvement { color: #2e7d32; }
.none, .more { color: #666; }
code { font-size: 12px; }
"""


def write(history: History, result: Check, out: Path) -> tuple[Path, int]:
    try:
        plots = out / "plots"
        plots.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot write the dashboard to {out}: {exc.strerror or exc}.") from None
    by_series: dict[int, list[ChangePoint]] = defaultdict(list)
    for c in result.change_points:
        by_series[id(c.series)].append(c)
    for points in by_series.values():
        points.sort(key=lambda c: c.index)
    groups: dict[tuple[str, bool], list[Series]] = defaultdict(list)
    for s in history.series:
        groups[(s.gpu, s.quick)].append(s)

    plot_ids: dict[int, str] = {}
    sections, maps, jobs, group_runs = [], [], [], []
    for g, ((gpu, quick), members) in enumerate(sorted(groups.items())):
        positions = [i for i, r in enumerate(history.runs)
                     if r.gpu_name == gpu and r.quick == quick]
        runs = [history.runs[i] for i in positions]
        where = np.full(len(history.runs), -1, dtype=np.int64)
        where[positions] = np.arange(len(positions))
        group_runs.append(runs)
        map_name = f"runs-{g}"
        links = "".join(
            f"<area shape='rect' coords='{x0},{y0},{x1},{y1}' href='#{run_anchor(r)}' "
            f"alt='run {r.run_id[:12]}' title='{r.time:%Y-%m-%d %H:%M} "
            f"{html.escape((r.git_sha or '-')[:12])}'>"
            for r, (x0, y0, x1, y1) in zip(runs, areas(len(runs))))
        maps.append(f"<map name='{map_name}'>{links}</map>")
        folder = plots / f"{g:02d}-{_slug(gpu)}-{'quick' if quick else 'full'}"
        folder.mkdir(exist_ok=True)
        topics: dict[str, list[Series]] = defaultdict(list)
        for s in members:
            topics[parse(s.benchmark).topic].append(s)
        body = [f"<h2 id='gpu-{g}'>{html.escape(gpu)} &middot; {'quick' if quick else 'full'} "
                f"runs <span class='summary'>({len(runs)} runs, {len(members)} "
                "benchmarks)</span></h2>"]
        for topic in sorted(topics):
            figures = []
            for s in topics[topic]:
                number = len(plot_ids)
                plot_id = f"plot-{number}"
                plot_ids[id(s)] = plot_id
                points = by_series.get(id(s), [])
                name = f"{number:05d}.png"
                jobs.append((g, where[s.runs].astype(float), s, points, folder / name))
                tags = "".join(
                    f" <span class='tag {c.direction}'>{c.change_pct:+.1f}% at "
                    f"{html.escape((c.run.git_sha or '?')[:7])}</span>" for c in points)
                figures.append(
                    f"<figure id='{plot_id}'><img src='plots/{folder.name}/{name}' "
                    f"usemap='#{map_name}' width='{WIDTH}' height='{HEIGHT}' "
                    f"alt='{html.escape(s.benchmark)}'><figcaption>"
                    f"{html.escape(s.benchmark)}{tags}</figcaption></figure>")
            body.append(f"<h3>{html.escape(topic)}</h3><div class='grid'>{''.join(figures)}</div>")
        sections.append("".join(body))

    _render(jobs, group_runs)
    threshold = result.threshold
    regressions = [c for c in result.change_points
                   if c.direction == "regression" and c.change_pct > threshold]
    listed = {id(c) for c in regressions}
    others = [c for c in result.change_points if id(c) not in listed]
    gating = sum(c.gates for c in regressions)
    provenance = _provenance(history.runs)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    page = out / "index.html"
    page.write_text(f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tcbench history</title><style>{_CSS}</style></head><body>
<h1>tcbench performance history</h1>
<p class="summary">{result.runs} runs, {result.series} series (benchmark &times; GPU model &times;
quick/full), {len(result.change_points)} change points; generated {stamp}. Click a run's column in
any plot for its provenance.</p>
<h2 id="regressions">Regressions beyond {threshold:g}%, newest first</h2>
<p class="summary">{gating} new: they began within the newest {result.window} runs of their series
and at least 3 runs show them (history check fails on these).</p>
<div id="regression-list">{_change_table(regressions, plot_ids, "regression")}</div>
<h2 id="other-changes">Other change points (improvements, smaller regressions)</h2>
<div id="other-list">{_change_table(others, plot_ids, "other")}</div>
{''.join(sections)}
<h2 id="runs">Runs and their provenance</h2>
{provenance}
{''.join(maps)}
</body></html>
""", encoding="utf-8")
    return page, len(jobs)


# The plots to draw, for the worker processes (inherited by fork, not pickled).
_JOBS: tuple[list, list] = ([], [])


def _render_chunk(bounds: tuple[int, int]) -> None:
    jobs, group_runs = _JOBS
    canvases: dict[int, _Canvas] = {}
    for g, x, s, points, path in jobs[bounds[0]:bounds[1]]:
        if g not in canvases:
            canvases[g] = _Canvas(group_runs[g])
        canvases[g].draw(x, s, points, path)


def _render(jobs: list, group_runs: list) -> None:
    """Draw every plot; on several cores, in that many forked processes (the plots are
    independent, and drawing them is most of the dashboard's time)."""
    global _JOBS
    import multiprocessing
    import os

    workers = min(os.cpu_count() or 1, PLOT_WORKERS, len(jobs) // 100)
    _JOBS = (jobs, group_runs)
    try:
        if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
            _render_chunk((0, len(jobs)))
            return
        step = -(-len(jobs) // (workers * 4))
        chunks = [(i, min(i + step, len(jobs))) for i in range(0, len(jobs), step)]
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            pool.map(_render_chunk, chunks)
    finally:
        _JOBS = ([], [])


def _joined(r: RunInfo, *keys: str) -> str:
    values = [r.provenance.get(k) for k in keys]
    return "-" if all(v is None for v in values) else " / ".join(_cell(v) for v in values)


# Each column: its heading, and the provenance keys shown in it (a second line in small type).
_PROVENANCE_COLUMNS = (("run id", ("run_id",), ()), ("time (UTC)", ("time",), ()),
                       ("git sha", ("git_sha",), ()), ("tcbench", ("tcbench_version",), ()),
                       ("GPU / UUID", ("gpu_name",), ("gpu_uuid",)),
                       ("driver / CUDA / cuBLASLt",
                        ("driver_version", "cuda_runtime", "cublaslt_version"), ()),
                       ("mode", ("quick",), ()), ("reps", ("repetitions",), ()),
                       ("clocks SM / mem (MHz)", ("sm_clock_mhz", "mem_clock_mhz"), ()),
                       ("power / limit (W)", ("power_draw_w", "power_limit_w"), ()),
                       ("host / source", ("host",), ("source",)))


def _provenance(runs: list[RunInfo]) -> str:
    head = "".join(f"<th>{title}</th>" for title, _, _ in _PROVENANCE_COLUMNS)
    rows = []
    for r in reversed(runs):  # newest first
        cells = []
        for _, keys, small in _PROVENANCE_COLUMNS:
            text = r.run_id[:12] if keys == ("run_id",) else _joined(r, *keys)
            extra = f"<br><small>{html.escape(_joined(r, *small))}</small>" if small else ""
            css = " class='wrap'" if small == ("source",) else ""
            cells.append(f"<td{css}>{html.escape(text)}{extra}</td>")
        rows.append(f"<tr id='{run_anchor(r)}'>{''.join(cells)}</tr>")
    return (f"<div class='scroll'><table class='runs'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")
