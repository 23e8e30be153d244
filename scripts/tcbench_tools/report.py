"""``tcbench report FILE...``: one result file per GPU -> a generation comparison.

Writes ``<out>/report.md`` with PNG plots beside it and a self-contained ``<out>/report.html``
(the same content, plots embedded as base64 data URIs). The content is made of sections
(``tcbench_tools.sections``): first the verdicts on the five questions when the answers package
is there (issue 19), then the general ones of ``sections/overview.py`` (GPUs and their runs, peak
vs achieved, the best result per topic and precision with its % of peak, speed-up over FP32 and
the benchmark that achieved it, every sweep, what was skipped or failed) around one section per
topic. Tables have one row per GPU (or per GPU and precision), so that 20 GPUs make a longer
table, not a wider one. A report that reads a synthetic input (synthetic.py) says so in a banner
and on every plot. They write into the document model of doc.py; this module holds the GPU
labels, the order of the parts and the writing.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

from tcbench_tools import power_report, sections, summary, synthetic
from tcbench_tools.answers import evidence as answers_evidence
from tcbench_tools.answers import section as answers_section
from tcbench_tools.doc import Cell, Doc  # noqa: F401 - Cell: what callers import with Doc
from tcbench_tools.errors import InputError
from tcbench_tools.results import ResultSet, without_invalid
from tcbench_tools.sections import overview
from tcbench_tools.sections._common import synthetic_marks

# ---------------------------------------------------------------------------------------------
# Labels: one per result set


def _run_name(rs: ResultSet) -> str:
    """The folder of a run's results.json, else the file (or folder) name."""
    path = Path(rs.path)
    return path.parent.name if path.name == "results.json" and path.parent.name else path.name


def unique_labels(sets: list[ResultSet], given: list[str] | None = None) -> list[str]:
    """One distinct label per result set: ``given`` (``--label``), else the GPU name (the file
    name without one); a name that repeats gets the first qualifier that tells its runs apart:
    the run's folder or file name, its last two path components, its full path, its date, or
    finally its position. Tables and plots key on labels, so two runs must never share one."""
    if given is not None:
        repeated = sorted({label for label in given if given.count(label) > 1})
        if repeated:
            raise InputError(f"--label {repeated[0]!r} is given twice: labels must be unique.")
        return list(given)
    labels = [rs.label for rs in sets]
    qualifiers = [_run_name, lambda rs: "/".join(Path(rs.path).parts[-2:]),
                  lambda rs: rs.path, lambda rs: str(rs.context.get("date", ""))]
    groups: dict[str, list[int]] = defaultdict(list)
    for i, label in enumerate(labels):
        groups[label].append(i)
    out = list(labels)
    for label, members in groups.items():
        if len(members) == 1:
            continue
        for qualify in qualifiers:
            tags = [qualify(sets[i]) for i in members]
            if all(tags) and len(set(tags)) == len(tags):
                for i, tag in zip(members, tags):
                    out[i] = f"{label} ({tag})"
                break
        else:
            for k, i in enumerate(members, start=1):
                out[i] = f"{label} #{k}"
    return out


# ---------------------------------------------------------------------------------------------
# The report


def answers_first(doc: Doc, sets: list[ResultSet], labels: list[str], out_dir: Path) -> list[Path]:
    """The report's first section: the verdicts on the five questions (answers/section.py)."""
    return list(answers_section.render(doc, sets, labels, out_dir) or [])


def build(sets: list[ResultSet], out_dir: Path,
          labels: list[str] | None = None) -> tuple[Doc, list[Path]]:
    """The whole report: the verdicts first, the general parts around one section per topic
    present. Plots drawn from a synthetic input carry the mark."""
    labels = unique_labels(sets, labels)
    doc = Doc()
    images: list[Path] = []
    fake = [rs.path for rs in sets if synthetic.is_synthetic(rs.context)]
    # The host studies (tcbench_studies' studies.json) feed the verdicts only: they are not a GPU.
    gpu = [i for i, rs in enumerate(sets) if not answers_evidence.is_host(rs)]
    with synthetic_marks(bool(fake)):
        overview.render_title(doc, fake)  # the title, then the banner when an input is synthetic
        images += answers_first(doc, sets, labels, out_dir)  # the verdicts come first
        sets, labels = [sets[i] for i in gpu], [labels[i] for i in gpu]
        best = [summary.best_results(rs) for rs in sets]
        sweeps = overview.SweepIndex(sets, labels)
        overview.render_intro(doc, sets)
        overview.render_gpus(doc, sets, labels)
        images += overview.render_peak_vs_achieved(doc, sets, labels, best, out_dir, sweeps)
        overview.render_topic_tables(doc, sets, labels, best, sweeps)
        images += power_report.render(doc, sets, labels, out_dir)
        images += overview.render_sweeps(doc, sets, labels, out_dir, sweeps)
        # Topic sections (sections/<topic>.py): the plots and tables each concept needs.
        present = {bench.parsed.topic for rs in sets for bench in rs.benchmarks.values()}
        for mod in sections.modules():
            if mod.TOPIC in present:
                doc.heading(2, mod.TITLE)
                images += mod.render(doc, sets, labels, out_dir)
        overview.render_problems(doc, sets, labels)
        render_cut_short(doc, sets, labels)
    return doc, images


def render_cut_short(doc: Doc, sets: list[ResultSet], labels: list[str]) -> None:
    """Runs read from files a binary left cut short (results.load_file): what was kept and the
    planned benchmarks that never ran, so a missing row never reads as an absent topic."""
    cut = [(rs, label) for rs, label in zip(sets, labels) if rs.partial]
    if not cut:
        return
    doc.heading(2, "Cut short")
    for rs, label in cut:
        names = rs.never_ran
        listed = ", ".join(f"`{n}`" for n in names[:12]) + (" ..." if len(names) > 12 else "")
        doc.para(f"{label}: {rs.partial}." + (f" {len(names)} planned benchmark(s) never ran: "
                                                f"{listed}." if names else ""))


def write(sets: list[ResultSet], out_dir: Path, labels: list[str] | None = None,
          appendix: Doc | None = None) -> tuple[Path, Path, list[Path]]:
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
        doc, images = build(sets, out_dir, labels)
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
