"""The HTML pieces of the dashboard that doc.Doc's blocks do not cover: its style (after doc.py's),
the legend with its colour swatches, the change tables and the provenance table (rows with ids,
names that break only after a '/', a second line in small type). Every text from the database is
escaped here; the page itself, its headings, banner and paragraphs are doc.Doc's."""

from __future__ import annotations

import html
import math
from datetime import datetime

from tcbench_tools import synthetic
from tcbench_tools.history.detect import ChangePoint
from tcbench_tools.history.series import RunInfo
from tcbench_tools.history.text import p_text
from tcbench_tools.names import short_path
from tcbench_tools.tables import fmt_time

MAX_LISTED = 100  # change points per list at the top (the rest are counted)

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 16px 20px;
       max-width: none; padding: 0; color: #1d1d1d; font-size: 14px; }
p { margin: 0 0 12px; color: #444; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 6px;
  border-bottom: 1px solid #ccc; padding-bottom: 3px; } h3 { font-size: 15px; margin: 16px 0 6px; }
.summary { color: #444; margin: 0 0 12px; }
.legend-head { margin: 8px 0 2px; font-weight: 600; font-size: 13px; }
.legend { color: #333; font-size: 13px; margin: 4px 0 10px; padding-left: 20px; max-width: 1180px; }
.legend li { margin: 1px 0; }
.legend span.swatch { display: inline-block; width: 18px; height: 10px; margin: 0 3px 0 0;
                      vertical-align: middle; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 12.5px; margin: 0; }
th, td { padding: 3px 7px; border: 0; border-bottom: 1px solid #e2e2e2; text-align: left;
         white-space: nowrap; }
td.name { white-space: normal; overflow-wrap: break-word; min-width: 16em; }
td.wrap { white-space: normal; overflow-wrap: break-word; min-width: 12em; }
table.runs { font-size: 12px; } table.runs th { white-space: normal; vertical-align: bottom; }
table.runs td, table.runs th { padding: 3px 5px; }
td small { color: #555; font-size: 11px; }
tr:target { background: #fff3c4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.regression td:first-child { color: #c62828; font-weight: 600; }
tr.improvement td:first-child { color: #2e7d32; font-weight: 600; }
.synthetic { color: #cc3311; font-weight: 600; }
ul.environments { margin: 4px 0 8px; padding-left: 20px; font-size: 13px; color: #333; }
.grid { display: flex; flex-wrap: wrap; gap: 12px 14px; }
figure { margin: 0; width: 390px; }
figure img { display: block; width: 390px; height: 240px; outline: 1px solid #e6e6e6; }
figcaption { font-size: 12.5px; color: #1d1d1d; overflow-wrap: break-word; line-height: 1.3;
             margin-top: 3px; }
figcaption .tag { font-weight: 600; white-space: nowrap; }
figcaption .tag.minor { white-space: normal; }
figcaption .regression { color: #c62828; } figcaption .improvement { color: #2e7d32; }
figcaption .minor { color: #777; font-weight: normal; }
.none, .more { color: #666; }
code { font-size: 12px; background: none; padding: 0; }
"""


def name_html(name: str) -> str:
    """A benchmark name that a line may break after each '/' and nowhere else."""
    return "/<wbr>".join(html.escape(part) for part in name.split("/"))


def run_anchor(run: RunInfo) -> str:
    return f"run-{run.run_id[:16]}"


def synthetic_banner(runs: list[RunInfo]) -> str | None:
    """The banner's sentence when runs carry tcbench_synthetic; None when none does."""
    fake = [r for r in runs if r.synthetic]
    if not fake:
        return None
    every = "All" if len(fake) == len(runs) else f"{len(fake)} of the"
    return (f"{synthetic.MARK}: {every} {len(runs)} runs of this history carry the context key "
            f"{synthetic.KEY}. They are test fixtures, not measurements: no plot or change "
            f"point that comes from them describes a real GPU (such plots say {synthetic.MARK} "
            "across them, and their runs are marked in the provenance table).")


def legend(threshold: float, floor: float, min_span: float) -> str:
    def swatch(colour: str, alpha: float = 1.0) -> str:
        return f"<span class='swatch' style='background:{colour};opacity:{alpha}'></span>"

    items = (
        "the median time of each run (a line; one colour and marker per environment when a "
        f"benchmark's runs had several), and {swatch('#9db8de', 0.7)}the p10-p90 spread of its "
        "repetitions; a one-off outlier (a run beyond 4 sigma of its neighbours, which the "
        "search sets aside) is an open circle off the line, a triangle on the axis' edge when "
        "it lies beyond the range;",
        f"the median of each level (dashed) and {swatch('#e3e3e3')}its noise band, &plusmn;3 "
        "sigma of the series' own run-to-run noise: a run outside it counts as at a new level;",
        "a change point: a vertical line labelled with the git sha of the first run of the new "
        "level and the change (<span style='color:#c62828'>red</span>: slower, "
        "<span style='color:#2e7d32'>green</span>: faster); a grey dashed line: a change below "
        f"the reporting floor of {floor:g}% (not listed, never gates);",
        "a grey dotted line E1, E2, ...: the runner's environment changed (the section lists "
        "what; runs of different environments are separate series);",
        f"the y axis spans at least &plusmn;{min_span:g}% of the benchmark's median (the gate's "
        "threshold), so that a percent of noise stays small; an axis whose values span more "
        "than a decade is logarithmic, and its label says so.")
    return ("<p class='legend-head'>How to read a plot:</p><ul class='legend' id='legend'>"
            + "".join(f"<li>{item}</li>" for item in items) + "</ul>")


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


def change_table(points: list[ChangePoint], plot_ids: dict[int, str], css: str) -> str:
    if not points:
        return "<p class='none'>None.</p>"
    rows = []
    for c in points[:MAX_LISTED]:
        if css == "regression":
            state = "new" if c.gates else ""
        else:
            state = "faster" if c.direction == "improvement" else "slower"
        fake = (f" <span class='synthetic'>({synthetic.MARK.lower()})</span>"
                if c.series.synthetic else "")
        rows.append(
            f"<tr class='{'improvement' if c.direction == 'improvement' else 'regression'}'>"
            f"<td>{state}</td>"
            f"<td class='name'><a href='#{plot_ids[id(c.series)]}'>"
            f"{name_html(c.series.benchmark)}</a>{fake}</td>"
            f"<td>{html.escape(c.series.gpu)}</td><td>{c.series.mode}</td>"
            f"<td><a href='#{run_anchor(c.run)}'>{c.run.run_id[:12]}</a></td>"
            f"<td>{c.run.time.strftime('%Y-%m-%d %H:%M')}</td>"
            f"<td><code>{html.escape((c.run.git_sha or '-')[:12])}</code></td>"
            f"<td class='num'>{fmt_time(c.before)}</td><td class='num'>{fmt_time(c.after)}</td>"
            f"<td class='num'>{c.change_pct:+.1f}%</td><td class='num'>{p_text(c.p_value)}</td>"
            f"<td class='num'>{c.confirming}</td></tr>")
    more = (f"<p class='more'>... and {len(points) - MAX_LISTED} more.</p>"
            if len(points) > MAX_LISTED else "")
    return ("<div class='scroll'><table class='changes'><thead><tr><th></th><th>benchmark</th>"
            "<th>GPU</th><th>mode</th><th>first run</th><th>time (UTC)</th><th>git sha</th>"
            "<th>before</th><th>after</th><th>change</th><th>p</th>"
            "<th title='runs since the change outside the old level&#39;s noise'>runs at the "
            f"new level</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>{more}")


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


def provenance(runs: list[RunInfo]) -> str:
    """Every run, newest first. The source is the path the run was added from, shown relative
    to its run folder (``run_0105/results.json``, as the report names inputs): the absolute
    path on the machine that added it says nothing to a reader elsewhere."""
    head = "".join(f"<th>{title}</th>" for title, _, _ in _PROVENANCE_COLUMNS)
    rows = []
    for r in reversed(runs):
        cells = []
        for _, keys, small in _PROVENANCE_COLUMNS:
            text = r.run_id[:12] if keys == ("run_id",) else _joined(r, *keys)
            extra = ""
            if small == ("source",):
                source = r.provenance.get("source")
                extra = f"<br><small>{html.escape(short_path(source) if source else '-')}</small>"
            elif small:
                extra = f"<br><small>{html.escape(_joined(r, *small))}</small>"
            css = " class='wrap'" if small == ("source",) else ""
            cell = html.escape(text)
            if keys == ("run_id",) and r.synthetic:
                cell += "<br><small class='synthetic'>synthetic</small>"
            if keys == ("run_id",) and r.incomplete:
                cell += (f"<br><small class='synthetic' title='{html.escape(r.incomplete)}'>"
                         "incomplete: in no series</small>")
            cells.append(f"<td{css}>{cell}{extra}</td>")
        rows.append(f"<tr id='{run_anchor(r)}'>{''.join(cells)}</tr>")
    return (f"<div class='scroll'><table class='runs'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")
