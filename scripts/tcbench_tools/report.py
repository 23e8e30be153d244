"""``tcbench report FILE...``: one result file per GPU -> a generation comparison.

Writes ``<out>/report.md`` with PNG plots beside it and a self-contained ``<out>/report.html``
(the same content, plots embedded as base64 data URIs). The content is made of sections
(``tcbench_tools.sections``): first one screen to scan (sections/_glance.py: the verdicts on
the five questions and a line of health per GPU, under a table of contents), then the
comparison across GPUs (sections/overview.py's GPUs and runs, peak vs achieved, best results,
sweeps and problems around one section per topic, each drawing one plot with a line or bar per
GPU), then each GPU's own tables and plots, collapsed (each topic's ``render_gpu``). Tables have
one row per GPU (or per GPU and precision), so that 20 GPUs make a longer table, not a wider
one; a long one is collapsed under its heading. A report that reads a synthetic input
(synthetic.py) says so in a banner and on every plot. They write into the document model of
doc.py; this module holds the order of the parts and the writing (the GPU labels are
labels.py's, which the answers share).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from tcbench_tools import plot_style, power_report, sections, summary, synthetic
from tcbench_tools.answers import evidence as answers_evidence
from tcbench_tools.answers import section as answers_section
from tcbench_tools.doc import Cell, Code, Doc  # noqa: F401 - Cell: what callers import with Doc
from tcbench_tools.errors import InputError
from tcbench_tools.labels import unique_labels  # one label per run (answers use it too)
from tcbench_tools.results import ResultSet, without_invalid
from tcbench_tools.sections import _glance as glance
from tcbench_tools.sections import overview
from tcbench_tools.sections._common import synthetic_marks

# ---------------------------------------------------------------------------------------------
# The report


def render_per_gpu(doc: Doc, sets: list[ResultSet], labels: list[str], out_dir: Path,
                   mods: list) -> list[Path]:
    """The last part: one collapsed part per GPU with the tables and plots of that GPU alone,
    from each topic section's ``render_gpu`` (the comparison above holds every GPU's line)."""
    detailed = [m for m in mods if hasattr(m, "render_gpu")]
    if not detailed:
        return []
    images: list[Path] = []
    doc.heading(2, "Per-GPU detail")
    doc.para("One part per GPU, collapsed (click to open): the tables and plots of that GPU "
             "alone, topic by topic.")
    for i, (rs, label) in enumerate(zip(sets, labels)):
        inner = Doc()
        for mod in detailed:
            images += mod.render_gpu(inner, rs, label, out_dir)
        if inner.blocks:
            with doc.details(label, anchor=f"gpu-{i + 1:02d}", level=3,
                             note=f"{len(inner.blocks)} parts") as part:
                part.extend(inner)
    return images


def build(sets: list[ResultSet], out_dir: Path, labels: list[str] | None = None,
          progress: Callable[[int, int, str], None] | None = None) -> tuple[Doc, list[Path]]:
    """The whole report: the first screen (title, banner, contents, the verdicts and each GPU's
    health), then the comparison across GPUs (GPUs and runs, peak vs achieved, the best results
    per topic, each topic section's plots and tables with a line, bar or row per GPU, the sweeps,
    clocks and power, what was skipped or failed), then each GPU's own detail, collapsed. A
    report without any GPU result stops after the first part, saying so. Plots drawn from a
    synthetic input carry the mark. ``progress(done, parts, name)`` is called before each part
    that draws (a report of nine GPUs takes 10-15 s)."""
    labels = unique_labels(sets, labels)
    doc = Doc()
    images: list[Path] = []
    fake = [rs.path for rs in sets if synthetic.is_synthetic(rs.context)]
    with synthetic_marks(bool(fake)):
        sets, labels = first_screen(doc, sets, labels)
        if not sets:
            return doc, images
        return _comparison(doc, sets, labels, out_dir, progress)


def _comparison(doc: Doc, sets: list[ResultSet], labels: list[str], out_dir: Path,
                progress: Callable[[int, int, str], None] | None) -> tuple[Doc, list[Path]]:
    """Everything after the first screen; each GPU keeps one colour in every plot."""
    images: list[Path] = []
    with plot_style.report_gpus(labels):
        # Topic sections (sections/<topic>.py): the plots and tables each concept needs.
        present = {bench.parsed.topic for rs in sets for bench in rs.benchmarks.values()}
        # A section may also explain other topics (tensor_util: tensor_peak's ladder).
        mods = [mod for mod in sections.modules()
                if mod.TOPIC in present or present & set(getattr(mod, "ALSO_TOPICS", ()))]
        parts = ["peak vs achieved", *(m.TITLE.split(":")[0] for m in mods), "sweeps",
                 "clocks and power", "per-GPU detail"]
        step = iter(range(len(parts)))

        def next_part() -> None:
            done = next(step)
            if progress is not None:
                progress(done, len(parts), parts[done])

        next_part()
        best = [summary.best_results(rs) for rs in sets]
        sweeps = overview.SweepIndex(sets, labels)
        overview.render_gpus(doc, sets, labels)
        images += overview.render_peak_vs_achieved(doc, sets, labels, best, out_dir, sweeps)
        overview.render_topic_tables(doc, sets, labels, best, sweeps)
        for mod in mods:
            next_part()
            doc.heading(2, mod.TITLE, toc=mod.TITLE.split(":")[0])
            images += mod.render(doc, sets, labels, out_dir)
        next_part()
        images += overview.render_sweeps(doc, sets, labels, out_dir, sweeps)
        next_part()
        images += power_report.render(doc, sets, labels, out_dir)
        overview.render_problems(doc, sets, labels)
        render_cut_short(doc, sets, labels)
        next_part()
        images += render_per_gpu(doc, sets, labels, out_dir, mods)
    return doc, images


def first_screen(doc: Doc, sets: list[ResultSet],
                 labels: list[str]) -> tuple[list[ResultSet], list[str]]:
    """The title (and the synthetic banner), the contents and the verdicts with each GPU's
    health; returns the GPU runs and their labels (the host studies feed the verdicts only)."""
    overview.render_title(doc, [rs.path for rs in sets if synthetic.is_synthetic(rs.context)])
    doc.contents()
    sources, answers = answers_section.answers_for(sets, labels)
    host = answers_section.host_studies(sets)
    gpu = [i for i, rs in enumerate(sets) if not answers_evidence.is_host(rs)]
    sets, labels = [sets[i] for i in gpu], [labels[i] for i in gpu]
    glance.render(doc, sets, labels, sources, answers, host)
    return sets, labels


def render_cut_short(doc: Doc, sets: list[ResultSet], labels: list[str]) -> None:
    """Runs read from files a binary left cut short (results.load_file): what was kept and the
    planned benchmarks that never ran, so a missing row never reads as an absent topic."""
    cut = [(rs, label) for rs, label in zip(sets, labels) if rs.partial]
    if not cut:
        return
    doc.heading(2, "Cut short")
    for rs, label in cut:
        parts: list = [f"{label}: {rs.partial}."]
        names = rs.never_ran
        if names:
            parts.append(f" {len(names)} planned benchmark(s) never ran: ")
            for i, name in enumerate(names[:12]):
                parts += [", "] if i else []
                parts.append(Code(name))
            parts.append(" ..." if len(names) > 12 else ".")
        doc.para(*parts)


def write(sets: list[ResultSet], out_dir: Path, labels: list[str] | None = None,
          appendix: Doc | None = None,
          progress: Callable[[int, int, str], None] | None = None) -> tuple[Path, Path,
                                                                           list[Path]]:
    """Write report.md, its PNGs and report.html into ``out_dir``; ``appendix`` (e.g. fleet's
    task list) goes at the end. Benchmarks holding a value no measurement gives are left out of
    every table and plot and listed under "Skipped and failed" (results.without_invalid)."""
    sets = [without_invalid(rs) for rs in sets]
    for rs in sets:
        if not rs.has_tcbench_context:
            print(f"tcbench report: warning: {rs.path} has no tcbench context: labelled "
                  f"{rs.label!r}, and % of peak is only shown where the benchmarks report it.",
                  file=sys.stderr)
    labels = unique_labels(sets, labels)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for stale in [*out_dir.glob("sweep_*.png"), *out_dir.glob("section_*.png"),
                      out_dir / "peak_vs_achieved.png"]:
            stale.unlink(missing_ok=True)  # plots of an earlier report in the same folder
        doc, images = build(sets, out_dir, labels, progress)
        if appendix is not None:
            doc.extend(appendix)
        md = out_dir / "report.md"
        md.write_text(doc.markdown())
        page = out_dir / "report.html"
        page.write_text(doc.html("tcbench report"))
    except OSError as exc:
        raise InputError(f"cannot write the report into {out_dir}: "
                         f"{exc.strerror or exc}.") from None
    return md, page, images
