"""``tcbench report FILE...``: one result file per GPU -> a generation comparison.

Writes ``<out>/report.md`` with PNG plots beside it and a self-contained ``<out>/report.html``
(the same content, plots embedded as base64 data URIs). The content is made of sections
(``tcbench_tools.sections``): first the verdicts on the five questions when the answers package
is there (issue 19), then the general ones of ``sections/overview.py`` (GPUs and their runs, peak
vs achieved, the best result per topic and precision with its % of peak, speed-up over FP32 and
the benchmark that achieved it, every sweep, what was skipped or failed) around one section per
topic. Tables have one row per GPU (or per GPU and precision), so that 20 GPUs make a longer
table, not a wider one. A report that reads a synthetic input (synthetic.py) says so in a banner
and on every plot. This module holds the document model they write into, the GPU labels, and
the writing.
"""

from __future__ import annotations

import base64
import html
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tcbench_tools import power_report, synthetic
from tcbench_tools.errors import InputError
from tcbench_tools.printable import printable
from tcbench_tools.results import ResultSet, without_invalid
from tcbench_tools.tables import markdown_table

# ---------------------------------------------------------------------------------------------
# A tiny document model, rendered to Markdown and to HTML


# Characters after which a browser may break a line inside a word ("fixture-host", "2026-01-01",
# "a/b"): a table cell keeps such a word whole (the browser test checks it).
_BREAKS_INSIDE = re.compile(r"[-/\u2010-\u2014]")


def _cell_text(text: str) -> str:
    """HTML for a cell's text: escaped, each word that a browser could break inside kept whole
    (a nowrap span); the spaces between words stay where lines may wrap."""
    return " ".join(f'<span class="w">{html.escape(word)}</span>' if _BREAKS_INSIDE.search(word)
                    else html.escape(word) for word in printable(text).split(" "))


def _inline_code(text: str) -> str:
    """The two bits of Markdown the report's own text uses: `code` and **bold** (``text`` is
    HTML-escaped already)."""
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    anchor: str | None = None  # the HTML id a link elsewhere in the report points to

    def markdown(self) -> str:
        return "#" * self.level + " " + printable(self.text)

    def html(self) -> str:
        ident = f' id="{html.escape(self.anchor)}"' if self.anchor else ""
        return f"<h{self.level}{ident}>{html.escape(printable(self.text))}</h{self.level}>"


@dataclass(frozen=True)
class Cell:
    """A table cell with more than text: ``title`` (the full benchmark name behind an
    abbreviation: a tooltip in HTML, a link title in Markdown), a link to another part of the
    report (``anchor`` in HTML, ``file``, the plot beside report.md, in Markdown)."""

    text: str
    title: str | None = None
    anchor: str | None = None
    file: str | None = None

    def markdown(self) -> str:
        if self.file:
            title = f' "{self.title}"' if self.title else ""
            return f"[{printable(self.text)}]({self.file}{title})"
        return printable(self.text)

    def html(self) -> str:
        esc = html.escape
        title = f' title="{esc(self.title)}"' if self.title else ""
        if self.anchor:
            return f'<a href="#{esc(self.anchor)}"{title}>{_cell_text(self.text)}</a>'
        return f"<span{title}>{_cell_text(self.text)}</span>" if title else _cell_text(self.text)


CellValue = str | Cell


def _cell_markdown(cell: CellValue) -> str:
    return cell.markdown() if isinstance(cell, Cell) else cell


def _cell_html(cell: CellValue) -> str:
    return cell.html() if isinstance(cell, Cell) else _cell_text(cell)


@dataclass(frozen=True)
class Banner:
    """A warning across the top of the report (the synthetic-data banner)."""

    text: str

    def markdown(self) -> str:
        return f"> **{printable(self.text)}**"

    def html(self) -> str:
        return (f'<div class="banner" id="synthetic-banner" role="alert">'
                f"{html.escape(printable(self.text))}</div>")


@dataclass(frozen=True)
class Paragraph:
    text: str

    def markdown(self) -> str:
        return printable(self.text)

    def html(self) -> str:
        return f"<p>{_inline_code(html.escape(printable(self.text)))}</p>"


@dataclass(frozen=True)
class Table:
    headers: list[str]
    rows: list[list[CellValue]]
    right: set[int]  # right-aligned (numeric) columns

    def markdown(self) -> str:
        return markdown_table(self.headers, [[_cell_markdown(c) for c in r] for r in self.rows],
                              self.right)

    def html(self) -> str:
        def cls(i: int) -> str:
            return ' class="num"' if i in self.right else ""

        head = "".join(f"<th{cls(i)}>{_cell_text(h)}</th>" for i, h in enumerate(self.headers))
        body = "".join("<tr>" + "".join(f"<td{cls(i)}>{_cell_html(c)}</td>"
                                        for i, c in enumerate(r))
                       + "</tr>" for r in self.rows)
        # Wide tables (many GPUs, long paths) scroll inside their own box (style below).
        return (f'<div class="wide"><table><thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table></div>")


@dataclass(frozen=True)
class Image:
    path: Path  # a PNG beside report.md; embedded in the HTML
    alt: str
    caption: bool  # False when a heading right above already says what the image shows

    def markdown(self) -> str:
        alt = printable(self.alt).replace("[", "\\[").replace("]", "\\]")
        return f"![{alt}]({self.path.name})"

    def html(self) -> str:
        data = base64.b64encode(self.path.read_bytes()).decode("ascii")
        alt = html.escape(printable(self.alt))
        caption = f"<figcaption>{alt}</figcaption>" if self.caption else ""
        return (f'<figure><img alt="{alt}" src="data:image/png;base64,{data}">'
                f"{caption}</figure>")


@dataclass(frozen=True)
class Bullets:
    items: list[str]

    def markdown(self) -> str:
        return "\n".join(f"- {printable(item)}" for item in self.items)

    def html(self) -> str:
        return ("<ul>" + "".join(f"<li>{_inline_code(html.escape(printable(i)))}</li>"
                                 for i in self.items) + "</ul>")


Block = Heading | Paragraph | Table | Image | Bullets | Banner

# Cells wrap between words, never inside one (a number or a name stays whole); a table wider
# than the page scrolls inside its own box rather than widening the page.
_STYLE = ("body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}"
          "div.wide{max-width:100%;overflow-x:auto}"
          "table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;"
          "padding:.25em .6em;overflow-wrap:normal;word-break:normal;vertical-align:top}"
          "td.num,th.num{text-align:right;white-space:nowrap}"
          "span.w{white-space:nowrap}td a{color:#1a4f8b}img{max-width:100%}code{background:#f4f4f4;padding:0 .2em}"
          "div.banner{background:#fde8e4;border:2px solid #cc3311;color:#7a1c0a;"
          "font-weight:bold;padding:.6em 1em;margin:1em 0}")


@dataclass
class Doc:
    blocks: list[Block] = field(default_factory=list)

    def heading(self, level: int, text: str, anchor: str | None = None) -> None:
        self.blocks.append(Heading(level, text, anchor))

    def banner(self, text: str) -> None:
        self.blocks.append(Banner(text))

    def para(self, text: str) -> None:
        self.blocks.append(Paragraph(text))

    def table(self, headers: list[str], rows: list[list[CellValue]], right: set[int]) -> None:
        self.blocks.append(Table(headers, rows, right))

    def image(self, path: Path, alt: str, caption: bool = True) -> None:
        """``caption=False`` when a heading right above already says what the image shows."""
        self.blocks.append(Image(path, alt, caption))

    def bullets(self, items: list[str]) -> None:
        if items:
            self.blocks.append(Bullets(items))

    def extend(self, other: Doc) -> None:
        self.blocks.extend(other.blocks)

    def markdown(self) -> str:
        return "\n\n".join(block.markdown() for block in self.blocks) + "\n" if self.blocks else ""

    def html(self, title: str) -> str:
        body = "\n".join(block.html() for block in self.blocks)
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>\n"
                + body + "\n</body></html>\n")


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
    from tcbench_tools.answers import section

    return list(section.render(doc, sets, labels, out_dir) or [])


def build(sets: list[ResultSet], out_dir: Path,
          labels: list[str] | None = None) -> tuple[Doc, list[Path]]:
    """The whole report: the verdicts first, the general parts around one section per topic
    present. Plots drawn from a synthetic input carry the mark."""
    from tcbench_tools import sections, summary  # matplotlib only when a report is made
    from tcbench_tools.sections import overview
    from tcbench_tools.answers import evidence as answers_evidence
    from tcbench_tools.sections._common import synthetic_marks

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
        raise InputError(f"cannot write the report into {out_dir}: {exc.strerror or exc}.") from None
    return md, page, images
