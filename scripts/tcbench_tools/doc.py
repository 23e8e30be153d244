"""The report's document model: blocks (headings, paragraphs, tables, images, lists, a banner)
that render to Markdown and to one self-contained HTML page.

A report is built by appending blocks to a ``Doc`` (``doc.heading(2, "GPUs")``,
``doc.table(headers, rows, right)``, ...), then written with ``doc.markdown()`` and
``doc.html(title)``. ``doc.contents()`` places a table of contents of the document's level-2
headings (each gets an id); ``with doc.details(summary) as inner:`` collects blocks that the
HTML page shows collapsed (``<details>``), opened by a click or by following a link into them,
and Markdown shows in full under the summary in bold.

Text is plain text wherever it goes: a ``str`` is shown as itself in both renderings (escaped
by mdtext.py for Markdown, by ``html.escape`` for HTML), whatever it holds, so a name, label or
message from a result file can never become markup. The report's own markup is
explicit: ``Code`` and ``Strong`` parts of a paragraph or list item, ``Cell`` for a table cell
with a tooltip or a link, and ``prose()``, which reads the `code` and **bold** of a sentence the
tools wrote themselves (never a text from a file).

Ground floor: this module imports nothing of the report (sections, overview, power_report and
report import it), and no plotting library.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tcbench_tools import mdtext
from tcbench_tools.printable import printable

# ---------------------------------------------------------------------------------------------
# Inline text: plain text, code and bold


@dataclass(frozen=True)
class Code:
    """Inline code: a benchmark name, a counter, a command."""

    text: str


@dataclass(frozen=True)
class Strong:
    """Bold text (a GPU's label heading its paragraph)."""

    text: str


@dataclass(frozen=True)
class Link:
    """A link to a page the tools chose (a concept page, as a path relative to the written
    file); ``target`` is never a text from a file. In Markdown, a target with spaces goes in
    angle brackets."""

    text: str
    target: str

    def __post_init__(self) -> None:
        if re.search(r"[<>\x00-\x1f]", self.target):
            raise ValueError(f"link target {self.target!r} is not a path the tools made")


Inline = str | Code | Strong | Link
Rich = Inline | tuple[Inline, ...]  # a paragraph's or a list item's content

_MARKUP = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*")


def prose(markup: str) -> tuple[Inline, ...]:
    """A sentence the tools wrote, with its `code` and **bold** as parts. Only for literal text
    of the tools: a text from a file goes in as a plain ``str`` part, which is never read as
    markup."""
    parts: list[Inline] = []
    at = 0
    for m in _MARKUP.finditer(markup):
        if m.start() > at:
            parts.append(markup[at:m.start()])
        parts.append(Code(m.group(1)) if m.group(1) is not None else Strong(m.group(2)))
        at = m.end()
    if at < len(markup):
        parts.append(markup[at:])
    return tuple(parts)


def _parts(content: Rich) -> tuple[Inline, ...]:
    return content if isinstance(content, tuple) else (content,)


def _inline_markdown(content: Rich) -> str:
    out = []
    for i, part in enumerate(_parts(content)):
        if isinstance(part, Code):
            out.append(mdtext.code(part.text))
        elif isinstance(part, Strong):
            out.append(f"**{mdtext.text(part.text, at_line_start=False)}**")
        elif isinstance(part, Link):
            target = (part.target if re.fullmatch(r"[\w./#-]+", part.target)
                      else f"<{part.target}>")
            out.append(f"[{mdtext.text(part.text, at_line_start=False)}]({target})")
        else:
            out.append(mdtext.text(part, at_line_start=i == 0))
    return "".join(out)


def _inline_html(content: Rich) -> str:
    out = []
    for part in _parts(content):
        if isinstance(part, Code):
            out.append(f"<code>{html.escape(printable(part.text))}</code>")
        elif isinstance(part, Strong):
            out.append(f"<strong>{html.escape(printable(part.text))}</strong>")
        elif isinstance(part, Link):
            out.append(f'<a href="{html.escape(part.target)}">'
                       f"{html.escape(printable(part.text))}</a>")
        else:
            out.append(html.escape(printable(part)))
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Table cells

# Characters after which a browser may break a line inside a word ("fixture-host", "2026-01-01",
# "a/b"): a table cell keeps such a word whole (the browser test checks it).
_BREAKS_INSIDE = re.compile(r"[-/\u2010-\u2014]")


def _cell_text(text: str) -> str:
    """HTML for a cell's text: escaped, each word that a browser could break inside kept whole
    (a nowrap span); the spaces between words stay where lines may wrap."""
    return " ".join(f'<span class="w">{html.escape(word)}</span>' if _BREAKS_INSIDE.search(word)
                    else html.escape(word) for word in printable(text).split(" "))


@dataclass(frozen=True)
class Cell:
    """A table cell with more than text: ``title`` (the full benchmark name behind an
    abbreviation: a tooltip in HTML, a link title in Markdown), a link to another part of the
    report (``anchor`` in HTML, ``file``, the plot beside report.md, in Markdown)."""

    text: str
    title: str | None = None
    anchor: str | None = None
    file: str | None = None
    cls: str | None = None  # the HTML class of its table cell (a verdict's colour)
    ident: str | None = None  # an HTML id in the cell, for links from elsewhere in the page
    code: bool = False  # shown as code (a benchmark name as evidence)

    def markdown(self) -> str:
        if self.file:
            return mdtext.link(self.text, self.file, self.title, in_table=True)
        return mdtext.code(self.text, in_table=True) if self.code else mdtext.cell(self.text)

    def html(self) -> str:
        esc = html.escape
        if self.code:
            return f"<code>{esc(printable(self.text))}</code>"
        title = f' title="{esc(printable(self.title))}"' if self.title else ""
        ident = f' id="{esc(self.ident)}"' if self.ident else ""
        if self.anchor:
            return f'<a href="#{esc(self.anchor)}"{title}{ident}>{_cell_text(self.text)}</a>'
        if title or ident:
            return f"<span{title}{ident}>{_cell_text(self.text)}</span>"
        return _cell_text(self.text)


CellValue = str | Cell


def _cell_markdown(cell: CellValue) -> str:
    return cell.markdown() if isinstance(cell, Cell) else mdtext.cell(cell)


def _cell_html(cell: CellValue) -> str:
    return cell.html() if isinstance(cell, Cell) else _cell_text(cell)


def _cell_class(cell: CellValue) -> list[str]:
    return [cell.cls] if isinstance(cell, Cell) and cell.cls else []


# ---------------------------------------------------------------------------------------------
# Blocks


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    anchor: str | None = None  # the HTML id a link elsewhere in the report points to
    toc: str | None = None  # its shorter name in the contents

    def markdown(self) -> str:
        return "#" * self.level + " " + mdtext.text(self.text)

    def html(self) -> str:
        ident = f' id="{html.escape(self.anchor)}"' if self.anchor else ""
        return f"<h{self.level}{ident}>{html.escape(printable(self.text))}</h{self.level}>"


@dataclass(frozen=True)
class Banner:
    """A warning across the top of the report (the synthetic-data banner)."""

    text: str
    ident: str = "synthetic-banner"

    def markdown(self) -> str:
        return f"> **{mdtext.text(self.text, at_line_start=False)}**"

    def html(self) -> str:
        return (f'<div class="banner" id="{html.escape(self.ident)}" role="alert">'
                f"{html.escape(printable(self.text))}</div>")


@dataclass(frozen=True)
class Paragraph:
    content: tuple[Inline, ...]

    def markdown(self) -> str:
        return _inline_markdown(self.content)

    def html(self) -> str:
        return f"<p>{_inline_html(self.content)}</p>"


@dataclass(frozen=True)
class Table:
    headers: list[str]
    rows: list[list[CellValue]]
    right: set[int]  # right-aligned (numeric) columns
    cls: str | None = None  # the HTML class of the table ("compact")

    def markdown(self) -> str:
        return mdtext.table([mdtext.cell(h) for h in self.headers],
                            [[_cell_markdown(c) for c in r] for r in self.rows], self.right)

    def html(self) -> str:
        def cls(i: int, cell: CellValue = "") -> str:
            names = (["num"] if i in self.right else []) + _cell_class(cell)
            return f' class="{" ".join(names)}"' if names else ""

        head = "".join(f"<th{cls(i)}>{_cell_text(h)}</th>" for i, h in enumerate(self.headers))
        body = "".join("<tr>" + "".join(f"<td{cls(i, c)}>{_cell_html(c)}</td>"
                                        for i, c in enumerate(r))
                       + "</tr>" for r in self.rows)
        table = f'<table class="{self.cls}">' if self.cls else "<table>"
        # Wide tables (many GPUs, long paths) scroll inside their own box (style below).
        return (f'<div class="wide">{table}<thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table></div>")


@dataclass(frozen=True)
class Image:
    path: Path  # a PNG beside report.md; embedded in the HTML
    alt: str
    caption: bool  # False when a heading right above already says what the image shows

    def markdown(self) -> str:
        return f"![{mdtext.text(self.alt, at_line_start=False)}]({self.path.name})"

    def html(self) -> str:
        data = base64.b64encode(self.path.read_bytes()).decode("ascii")
        alt = html.escape(printable(self.alt))
        caption = f"<figcaption>{alt}</figcaption>" if self.caption else ""
        return (f'<figure><img alt="{alt}" src="data:image/png;base64,{data}">'
                f"{caption}</figure>")


@dataclass(frozen=True)
class Bullets:
    items: list[Rich]

    def markdown(self) -> str:
        return "\n".join(f"- {_inline_markdown(item)}" for item in self.items)

    def html(self) -> str:
        return "<ul>" + "".join(f"<li>{_inline_html(i)}</li>" for i in self.items) + "</ul>"


@dataclass(frozen=True)
class Pre:
    """Lines shown as typed (commands): a fenced block in Markdown, ``<pre>`` in HTML."""

    lines: list[str]

    def markdown(self) -> str:
        # No backtick, so no line can close the fence early.
        return "\n".join(["```text", *(printable(line).replace("`", "'")
                                       for line in self.lines), "```"])

    def html(self) -> str:
        return "<pre>" + "\n".join(html.escape(printable(line)) for line in self.lines) + "</pre>"


@dataclass(frozen=True)
class Html:
    """A piece of HTML that a writer built and escaped itself (the history dashboard's plot
    grid, image maps and linked tables); nothing in Markdown."""

    text: str

    def markdown(self) -> str:
        return ""

    def html(self) -> str:
        return self.text


_NOT_IN_ANCHOR = re.compile(r"[^a-z0-9 _-]")


def github_anchor(text: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces to
    hyphens (the report's own headings never repeat, so no "-1" suffix is needed)."""
    return _NOT_IN_ANCHOR.sub("", text.lower()).replace(" ", "-")


@dataclass(frozen=True)
class Contents:
    """The table of contents: a link to each level-2 heading of the document (filled when the
    document is written, so it lists every part that was added after it)."""

    def markdown(self, entries: list[Heading]) -> str:
        links = [f"[{mdtext.text(h.toc or h.text, at_line_start=False)}]"
                 f"(#{github_anchor(h.text)})" for h in entries]
        return "**Contents:** " + " · ".join(links) if links else ""

    def html(self, entries: list[Heading]) -> str:
        links = "".join(f'<li><a href="#{html.escape(h.anchor or "")}">'
                        f"{html.escape(printable(h.toc or h.text))}</a></li>" for h in entries)
        return f'<nav class="toc" id="contents"><strong>Contents</strong><ul>{links}</ul></nav>'


@dataclass
class Details:
    """Blocks shown collapsed in HTML under a one-line summary; in full in Markdown. With a
    ``level`` the summary is a heading of that level (in both renderings); ``note`` follows it
    in the HTML summary only ("160 rows")."""

    summary: str
    blocks: list = field(default_factory=list)
    anchor: str | None = None
    level: int | None = None
    note: str = ""

    def markdown(self) -> str:
        inner = "\n\n".join(b.markdown() for b in self.blocks)
        head = (Heading(self.level, self.summary).markdown() if self.level else
                f"**{mdtext.text(self.summary, at_line_start=False)}**")
        return head + (f"\n\n{inner}" if inner else "")

    def html(self) -> str:
        ident = f' id="{html.escape(self.anchor)}"' if self.anchor else ""
        text = html.escape(printable(self.summary))
        if self.level:
            text = f"<h{self.level}>{text}</h{self.level}>"
        note = f' <span class="note">{html.escape(self.note)}</span>' if self.note else ""
        inner = "\n".join(b.html() for b in self.blocks)
        return f"<details{ident}><summary>{text}{note}</summary>\n{inner}\n</details>"


Block = Heading | Paragraph | Table | Image | Bullets | Banner | Contents | Details | Pre | Html

# Cells wrap between words, never inside one (a number or a name stays whole); a table wider
# than the page scrolls inside its own box rather than widening the page.
_STYLE = ("body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}"
          "div.wide{max-width:100%;overflow-x:auto}"
          "table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;"
          "padding:.25em .6em;overflow-wrap:normal;word-break:normal;vertical-align:top}"
          "td.num,th.num{text-align:right;white-space:nowrap}"
          "span.w{white-space:nowrap}td a{color:#1a4f8b}img{max-width:100%}"
          "code{background:#f4f4f4;padding:0 .2em}"
          "div.banner{background:#fde8e4;border:2px solid #cc3311;color:#7a1c0a;"
          "font-weight:bold;padding:.4em 1em;margin:.6em 0}"
          "h1{margin:.2em 0 .3em}"
          "nav.toc{font-size:.92em;margin:.5em 0}nav.toc ul{display:inline;padding:0;margin:0}"
          "nav.toc li{display:inline}nav.toc li:before{content:' \\00b7 ';color:#888}"
          "nav.toc li:first-child:before{content:': '}"
          "table.compact{margin:.4em 0}table.compact th,table.compact td{padding:.12em .45em}"
          "table.compact td{white-space:nowrap}table.glance th{font-size:.92em}"
          "td.v-holds{background:#dafbe1}td.v-caveat{background:#fff1c2}"
          "td.v-fails{background:#ffd8d3}td.v-none{color:#6e7781}"
          "details{border:1px solid #d0d7de;border-radius:4px;margin:.5em 0;padding:.3em .7em}"
          "details>summary{cursor:pointer;font-weight:bold}"
          "details>summary>h2,details>summary>h3,details>summary>h4{display:inline;margin:0}"
          "summary span.note{font-weight:normal;color:#57606a;font-size:.9em}"
          "figcaption{font-size:.9em;color:#444}")
# Following a link into a collapsed part opens it (a table's benchmark links to its sweep, a GPU's
# health line to its failures).
_SCRIPT = ("function tcbOpen(id){const e=document.getElementById(id);if(!e)return;"
           "for(let p=e;p;p=p.parentElement)if(p.tagName==='DETAILS')p.open=true;"
           "e.scrollIntoView();}"
           "document.addEventListener('click',ev=>{const a=ev.target.closest('a[href^=\"#\"]');"
           "if(a){tcbOpen(a.getAttribute('href').slice(1));}});"
           "if(location.hash)tcbOpen(location.hash.slice(1));")


@dataclass
class Doc:
    """The blocks of one document, in order."""

    blocks: list[Block] = field(default_factory=list)

    def heading(self, level: int, text: str, anchor: str | None = None,
                toc: str | None = None) -> None:
        """A heading; a level-2 one gets an id (its GitHub anchor) and a place in the contents,
        under ``toc`` when given (a shorter name)."""
        if anchor is None and level == 2:
            anchor = github_anchor(text)
        self.blocks.append(Heading(level, text, anchor, toc))

    def contents(self) -> None:
        """The table of contents here: every level-2 heading of the document, when written."""
        self.blocks.append(Contents())

    @contextmanager
    def details(self, summary: str, anchor: str | None = None, level: int | None = None,
                note: str = "") -> Iterator[Doc]:
        """``with doc.details("Pairs", level=3, note="160 rows") as inner: inner.table(...)``:
        the blocks added to ``inner`` go into one collapsed part under the summary (a heading of
        ``level`` when given); nothing is added when ``inner`` stays empty."""
        inner = Doc()
        yield inner
        if inner.blocks:
            self.blocks.append(Details(summary, inner.blocks, anchor, level, note))

    def collapsed_table(self, heading: str, headers: list[str], rows: list[list[CellValue]],
                        right: set[int], level: int = 3, intro: Rich | None = None) -> None:
        """A table under its heading, collapsed in HTML with its row count beside the heading
        (a long table of every GPU's rows belongs to the numbers behind a plot, not to the
        page a reader scans)."""
        if not rows:
            return
        with self.details(heading, level=level,
                          note=f"{len(rows)} row{'s' if len(rows) != 1 else ''}") as inner:
            if intro is not None:
                inner.blocks.append(Paragraph(_parts(intro)))
            inner.table(headers, rows, right)

    def banner(self, text: str, ident: str = "synthetic-banner") -> None:
        self.blocks.append(Banner(text, ident))

    def para(self, *parts: Inline) -> None:
        """A paragraph of plain text (``str``), ``Code`` and ``Strong`` parts."""
        self.blocks.append(Paragraph(tuple(parts)))

    def prose(self, markup: str) -> None:
        """A paragraph the tools wrote, with `code` and **bold** (``prose()``)."""
        self.blocks.append(Paragraph(prose(markup)))

    def table(self, headers: list[str], rows: list[list[CellValue]], right: set[int],
              cls: str | None = None) -> None:
        self.blocks.append(Table(headers, rows, right, cls))

    def image(self, path: Path, alt: str, caption: bool = True) -> None:
        """``caption=False`` when a heading right above already says what the image shows."""
        self.blocks.append(Image(path, alt, caption))

    def bullets(self, items: list[Rich]) -> None:
        """A list; each item plain text or a tuple of parts (``prose()`` for the tools' own)."""
        if items:
            self.blocks.append(Bullets(items))

    def pre(self, lines: list[str]) -> None:
        self.blocks.append(Pre(lines))

    def raw_html(self, text: str) -> None:
        """HTML the caller built and escaped (Html); nothing in Markdown."""
        self.blocks.append(Html(text))

    def extend(self, other: Doc) -> None:
        self.blocks.extend(other.blocks)

    def _entries(self) -> list[Heading]:
        return [b for b in self.blocks if isinstance(b, Heading) and b.level == 2]

    def markdown(self) -> str:
        entries = self._entries()
        parts = [b.markdown(entries) if isinstance(b, Contents) else b.markdown()
                 for b in self.blocks]
        return "\n\n".join(p for p in parts if p) + "\n" if self.blocks else ""

    def html(self, title: str, style: str = "") -> str:
        """The page; ``style``: the writer's own CSS after the common one (the dashboard's)."""
        entries = self._entries()
        body = "\n".join(b.html(entries) if isinstance(b, Contents) else b.html()
                         for b in self.blocks)
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                f"<title>{html.escape(title)}</title><style>{_STYLE}{style}</style></head><body>\n"
                + body + f"\n<script>{_SCRIPT}</script>\n</body></html>\n")
