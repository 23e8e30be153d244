"""``history dashboard``: one static HTML page with a PNG plot per benchmark beside it.

Layout: a banner when runs carry tcbench_synthetic; the legend; the newest regressions first
(then improvements and smaller regressions, all at or above the reporting floor); then one
section per GPU model and mode (quick/full), one sub-section per topic, and in it a small plot
per benchmark (canvas.py). A benchmark whose runs had several environment identities is one
plot of several series (one per identity); the section lists where each new identity first
appeared. The x axis is the runs of that GPU and mode in time order, the same for every plot of
the section, so one HTML image map per section links each run's column in every plot to that
run's provenance (the table at the end).

Plots are drawn with matplotlib's Agg backend on one reused figure per section (at 2000
benchmarks a fresh figure per plot would cost more than the drawing), in one forked process per
core when there are many.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from tcbench_tools.doc import Doc
from tcbench_tools.errors import InputError
from tcbench_tools.history import forked, identity, page
from tcbench_tools.history.canvas import HEIGHT, WIDTH, Canvas, Part, areas
from tcbench_tools.history.detect import ChangePoint, Check
from tcbench_tools.history.series import History, RunInfo, Series
from tcbench_tools.names import parse

PLOT_WORKERS = 8  # at most this many processes draw the plots (one per core)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "x"


def environment_changes(runs: list[RunInfo]) -> list[tuple[int, str, str]]:
    """(position, tag, what changed) where an identity first appears among a section's runs
    after the first one; an identity seen before (a pool that alternates) is not a change."""
    seen: set = set()
    out = []
    previous = None
    for i, run in enumerate(runs):
        if run.identity not in seen and seen:
            what = identity.describe_change(previous, run.identity)
            out.append((i, f"E{len(out) + 1}", what))
        seen.add(run.identity)
        previous = run.identity
    return out


def _caption(s: Series, points: list[ChangePoint], below: list[ChangePoint],
             floor: float) -> str:
    tags = "".join(f" <span class='tag {c.direction}'>{c.change_pct:+.1f}% at "
                   f"{html.escape((c.run.git_sha or '?')[:7])}</span>" for c in points)
    if below:
        listed = ", ".join(f"{c.change_pct:+.1f}%" for c in below[:3])
        more = f" and {len(below) - 3} more" if len(below) > 3 else ""
        tags += (f" <span class='tag minor'>({listed}{more}: below the {floor:g}% "
                 "floor)</span>")
    return f"{page.name_html(s.benchmark)}{tags}"


def _section(g: int, gpu: str, quick: bool, runs: list[RunInfo], where: np.ndarray,
             members: list[Series], by_series: dict, below_by: dict, plot_ids: dict,
             folder: Path, floor: float, jobs: list) -> str:
    """The section's HTML; its plots are appended to ``jobs``. ``where`` maps a run's position
    in the history to its position in the section (the x of its column)."""
    changes = environment_changes(runs)
    map_name = f"runs-{g}"
    mode = "quick" if quick else "full"
    body = [f"<h2 id='gpu-{g}'>{html.escape(gpu)} &middot; {mode} runs <span class='summary'>"
            f"({len(runs)} runs, {len({s.benchmark for s in members})} benchmarks)</span></h2>"]
    if changes:
        items = "".join(f"<li><b>{tag}</b> from {runs[i].time:%Y-%m-%d %H:%M} (run "
                        f"<a href='#{page.run_anchor(runs[i])}'>{runs[i].run_id[:12]}</a>): "
                        f"{html.escape(what)}</li>" for i, tag, what in changes)
        body.append(f"<p class='summary'>The runner's environment changed; runs of each "
                    f"environment are separate series:</p><ul class='environments'>{items}</ul>")
    plots: dict[str, list[Series]] = defaultdict(list)
    for s in members:
        plots[s.benchmark].append(s)
    topics: dict[str, list[str]] = defaultdict(list)
    for name in plots:
        topics[parse(name).topic].append(name)
    for topic in sorted(topics):
        figures = []
        for name in sorted(topics[topic]):
            parts_of = plots[name]
            number = len(jobs)
            plot_id = f"plot-{number}"
            for s in parts_of:
                plot_ids[id(s)] = plot_id
            points = sorted((c for s in parts_of for c in by_series.get(id(s), [])),
                            key=lambda c: c.run.time)
            below = [c for s in parts_of for c in below_by.get(id(s), [])]
            file = f"{number:05d}.png"
            parts = [Part(where[s.runs].astype(float), s, by_series.get(id(s), []),
                          below_by.get(id(s), [])) for s in parts_of]
            fake = any(s.synthetic for s in parts_of)
            jobs.append((g, parts, fake, folder / file))
            figures.append(
                f"<figure id='{plot_id}'><img src='plots/{folder.name}/{file}' "
                f"usemap='#{map_name}' width='{WIDTH}' height='{HEIGHT}' "
                f"alt='{html.escape(name)}'><figcaption>"
                f"{_caption(parts_of[0], points, below, floor)}</figcaption></figure>")
        body.append(f"<h3>{html.escape(topic)}</h3><div class='grid'>{''.join(figures)}</div>")
    return "".join(body)


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
    below_by: dict[int, list[ChangePoint]] = defaultdict(list)
    for c in result.below_floor:
        below_by[id(c.series)].append(c)
    groups: dict[tuple[str, bool], list[Series]] = defaultdict(list)
    for s in history.series:
        groups[(s.gpu, s.quick)].append(s)
    plot_ids: dict[int, str] = {}
    sections, maps, jobs, canvases = [], [], [], []
    min_span = result.threshold
    for g, ((gpu, quick), members) in enumerate(sorted(groups.items())):
        positions = [i for i, r in enumerate(history.runs)
                     if r.gpu_name == gpu and r.quick == quick]
        runs = [history.runs[i] for i in positions]
        where = np.full(len(history.runs), -1, dtype=np.int64)
        where[positions] = np.arange(len(positions))
        links = "".join(
            f"<area shape='rect' coords='{x0},{y0},{x1},{y1}' href='#{page.run_anchor(r)}' "
            f"alt='run {r.run_id[:12]}' title='{r.time:%Y-%m-%d %H:%M} "
            f"{html.escape((r.git_sha or '-')[:12])}'>"
            for r, (x0, y0, x1, y1) in zip(runs, areas(len(runs))))
        maps.append(f"<map name='runs-{g}'>{links}</map>")
        folder = plots / f"{g:02d}-{_slug(gpu)}-{'quick' if quick else 'full'}"
        folder.mkdir(exist_ok=True)
        changes = [(i, tag) for i, tag, _ in environment_changes(runs)]
        canvases.append((runs, changes, min_span))
        sections.append(_section(g, gpu, quick, runs, where, members, by_series, below_by,
                                 plot_ids, folder, result.floor, jobs))
    _render(jobs, canvases)
    regressions = [c for c in result.change_points
                   if c.direction == "regression" and c.change_pct > result.threshold]
    listed = {id(c) for c in regressions}
    others = [c for c in result.change_points if id(c) not in listed]
    gating = sum(c.gates for c in regressions)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    doc = Doc()
    doc.heading(1, "tcbench performance history")
    banner = page.synthetic_banner(history.runs)
    if banner:
        doc.banner(banner)
    doc.para(f"{result.runs} runs, {result.series} series (benchmark \u00d7 GPU model \u00d7 "
             f"quick/full \u00d7 environment), {len(result.change_points)} change points of at "
             f"least {result.floor:g}%; generated {stamp}. Click a run's column in any plot for "
             "its provenance.")
    doc.raw_html(page.legend(result.threshold, result.floor, min_span))
    doc.heading(2, f"Regressions beyond {result.threshold:g}%, newest first",
                anchor="regressions")
    doc.para(f"{gating} new: they began within the newest {result.window} runs of their series "
             "and at least 3 runs are at the new level (history check fails on these).")
    doc.raw_html("<div id='regression-list'>"
                 f"{page.change_table(regressions, plot_ids, 'regression')}</div>")
    doc.heading(2, "Other change points (improvements, smaller regressions)",
                anchor="other-changes")
    doc.para(f"Changes smaller than the reporting floor of {result.floor:g}% are not listed "
             f"({len(result.below_floor)} of them; their plots draw them as grey dashed lines).")
    doc.raw_html(f"<div id='other-list'>{page.change_table(others, plot_ids, 'other')}</div>")
    doc.raw_html("".join(sections))
    doc.heading(2, "Runs and their provenance", anchor="runs")
    doc.raw_html(page.provenance(history.runs) + "".join(maps))
    index = out / "index.html"
    index.write_text(doc.html("tcbench history", page.CSS), encoding="utf-8")
    return index, len(jobs)


# The plots to draw, for the worker processes (inherited by fork, not pickled).
_JOBS: tuple[list, list] = ([], [])


def _render_chunk(bounds: tuple[int, int]) -> None:
    jobs, canvases = _JOBS
    made: dict[int, Canvas] = {}
    for g, parts, fake, path in jobs[bounds[0]:bounds[1]]:
        if g not in made:
            made[g] = Canvas(*canvases[g])
        made[g].draw(parts, fake, path)


def _render(jobs: list, canvases: list) -> None:
    """Draw every plot; on several cores, in that many forked processes (the plots are
    independent, and drawing them is most of the dashboard's time)."""
    global _JOBS
    import os

    workers = min(os.cpu_count() or 1, PLOT_WORKERS, len(jobs) // 100)
    _JOBS = (jobs, canvases)
    try:
        if workers <= 1 or not forked.can_fork():
            _render_chunk((0, len(jobs)))
        else:
            forked.map_chunks(_render_chunk, len(jobs), workers)
    finally:
        _JOBS = ([], [])
