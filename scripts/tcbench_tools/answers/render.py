"""The answers as a console summary, Markdown, a self-contained HTML page and JSON.

The verdict table has one row per source (the answers without a GPU, then each GPU run under its
label: two runs of one GPU model are two rows, labelled as the report labels them) and one column
per question, so it stays five columns wide whatever the number of GPUs. An answer from a file
that carries ``tcbench_synthetic`` is marked in every output (a banner first, "(synthetic data)"
beside its source, ``synthetic`` in the JSON), as the report marks it; one that rests on a run
that stopped early says so the same way (``tcbench_incomplete``). The concept pages are
links that work from the folder the file is written to. Every text that came from a result file
(GPU names, benchmark names) is escaped: a results file cannot write markup or terminal control
characters into what this prints."""

from __future__ import annotations

import html
import json
import math
import os
import re
from pathlib import Path

from tcbench_tools import mdtext, synthetic
from tcbench_tools.answers.model import (
    BY_ID,
    CAVEAT,
    FAILS,
    HOLDS,
    HOST,
    HOST_LABEL,
    NOT_MEASURED,
    QUESTIONS,
    Answer,
    unit_of,
)

__all__ = ["HOST_LABEL", "as_json", "clean", "console", "grid", "markdown", "page_html",
           "source", "table_html"]

REPO = Path(__file__).resolve().parents[3]  # scripts/tcbench_tools/answers -> the checkout
ANSWERS_PAGE = "docs/concepts/answers.md"
GPU_CHECK_PAGE = "docs/gpu-check.md"
SYNTHETIC_TAG = "(synthetic data)"
INCOMPLETE = "INCOMPLETE"
NO_HOST_HALF = "GPU only"  # the host row of a question without a host half (Q3: a pipe counter)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
SYMBOL = {HOLDS: "holds", CAVEAT: "holds, with a caveat", FAILS: "does not hold here",
          NOT_MEASURED: "not measured"}


def clean(text: str) -> str:
    """Control characters shown as \\xNN, never passed through."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def source(a: Answer) -> str:
    """The row an answer belongs to: its label (answer_all, the report's section), else the GPU's
    name."""
    if a.label:
        return clean(a.label)
    if a.scope == HOST:
        return HOST_LABEL
    return clean(a.gpu) if a.gpu else "GPU"


def shown(a: Answer) -> str:
    """The source as a reader sees it: with the synthetic mark where its file carries one."""
    return f"{source(a)} {SYNTHETIC_TAG}" if a.synthetic else source(a)


def source_with_basis(a: Answer) -> str:
    """The source and, for the no-GPU half, what the answer rests on."""
    return f"{shown(a)}, {clean(a.basis)}" if a.basis else shown(a)


def synthetic_banner(answers: list[Answer]) -> str | None:
    """The sentence that opens every output when an answer rests on a synthetic file."""
    fake: list[str] = []
    for a in answers:
        what = ("the answers without a GPU" if a.scope == HOST
                else f"the answers of {source(a)}")
        if a.synthetic and what not in fake:
            fake.append(what)
    if not fake:
        return None
    listed = fake[0] if len(fake) == 1 else ", ".join(fake[:-1]) + " and " + fake[-1]
    return (f"{synthetic.MARK}: {listed} come from files that carry the context key "
            f"{synthetic.KEY}. They are test fixtures, not measurements: no verdict marked "
            f"{SYNTHETIC_TAG} describes a real GPU or a real host study.")


def incomplete_banner(answers: list[Answer]) -> str | None:
    """The sentence that says which answers rest on a run that stopped early, and why."""
    cut: dict[str, str] = {}
    for a in answers:
        if a.incomplete:
            what = ("the answers without a GPU" if a.scope == HOST
                    else f"the answers of {source(a)}")
            cut.setdefault(what, clean(a.incomplete))
    if not cut:
        return None
    return (f"{INCOMPLETE}: " + "; ".join(f"{what} rest on a run that stopped early ({why})"
                                          for what, why in cut.items())
            + ". A \"not measured\" there may mean only that its part never ran.")


def banners(answers: list[Answer]) -> list[str]:
    """What every output says first: synthetic data, then a run that stopped early."""
    return [b for b in (synthetic_banner(answers), incomplete_banner(answers)) if b]


def _fmt(v: float) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
        return f"{v:.3g}"
    return f"{v:.4g}"


def sources(answers: list[Answer]) -> list[str]:
    out: list[str] = []
    for a in answers:
        if shown(a) not in out:
            out.append(shown(a))
    return out


def grid(answers: list[Answer]) -> tuple[list[str], list[list[str]]]:
    """(headers, rows): one row per source, one column per question."""
    headers = ["source", *(f"{q.id.upper()} {q.title}" for q in QUESTIONS)]
    rows = []
    for s in sources(answers):
        row = [s]
        host = any(a.scope == HOST for a in answers if shown(a) == s)
        for q in QUESTIONS:
            mine = [a for a in answers if a.id == q.id and shown(a) == s]
            row.append(mine[0].verdict if mine else (NO_HOST_HALF if host else NOT_MEASURED))
        rows.append(row)
    return headers, rows


def console(answers: list[Answer]) -> str:
    """The five questions, one line per question and half (the banners first): the verdict, then
    after a dash its reason (in parentheses, the reason's own would nest)."""
    lines = banners(answers)
    for q in QUESTIONS:
        mine = [a for a in answers if a.id == q.id]
        lines.append(f"{q.id.upper()} {q.title}:")
        for a in mine:
            first = a.why or (a.caveats[0] if a.caveats and a.verdict in (CAVEAT, FAILS) else "")
            tail = f" — {clean(first)}" if first else ""
            lines.append(f"  {source_with_basis(a)}: {a.verdict}{tail}")
    return "\n".join(lines)


def page_target(page: str, out_dir: Path | None) -> str | None:
    """A repository page (``docs/concepts/x.md``) as a link target from ``out_dir``, where the
    file that links it is written; None when the page is not in this checkout (a bundle). Without
    ``out_dir`` (printed, not written), the path from the repository's root."""
    path = REPO / page
    if not path.is_file():
        return None
    if out_dir is None:
        return page
    return Path(os.path.relpath(path, Path(out_dir).resolve())).as_posix()


def _md_page(page: str, out_dir: Path | None) -> str:
    """A concept page as a Markdown link (the target is a path this module made, never a file's
    text: mdtext.link takes file names only); in angle brackets when the path has spaces."""
    target = page_target(page, out_dir)
    if target is None or re.search(r"[<>\n]", target):
        return mdtext.code(page)
    if not re.fullmatch(r"[\w./-]+", target):
        target = f"<{target}>"
    return f"[{mdtext.text(page, at_line_start=False)}]({target})"


def _html_page(page: str, out_dir: Path | None) -> str:
    target = page_target(page, out_dir)
    if target is None:
        return f"<code>{html.escape(page)}</code>"
    return f"<a href='{html.escape(target, quote=True)}'>{html.escape(page)}</a>"


def markdown(answers: list[Answer], out_dir: Path | None = None,
             closing: list[str] | None = None) -> str:
    """answers.md: the verdict table, then per question its claim and per source the verdict,
    evidence, caveats, notes and rule; ``closing``: lines said last (how to get the GPU half).
    Every text escaped for Markdown (mdtext.py): GPU names, benchmark names and the messages in
    caveats come from result files. ``out_dir``: the folder the file is written to (links)."""
    headers, rows = grid(answers)
    out = ["# The five questions, answered", ""]
    for banner in banners(answers):
        out += [f"> **{mdtext.text(banner, at_line_start=False)}**", ""]
    out += ["Each claim as it is usually taught, what tcbench measured that tests it, and a "
            f"verdict from a written rule ({_md_page(ANSWERS_PAGE, out_dir)}): holds, holds with "
            "a caveat, does not hold here, or not measured.", "",
            "| " + " | ".join(mdtext.cell(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(mdtext.cell(clean(c)) for c in r) + " |" for r in rows]
    for q in QUESTIONS:
        out += ["", f"## {q.id.upper()}. {q.title}", "", f"**Claim.** {q.claim}", "",
                f"Sources and background: {_md_page(q.page, out_dir)}.", ""]
        for a in (a for a in answers if a.id == q.id):
            out += [f"### {mdtext.text(source_with_basis(a))}: {a.verdict}", ""]
            if a.why:
                out += [f"Not measured: {mdtext.text(clean(a.why), at_line_start=False)}.", ""]
            if a.evidence:
                out += ["| evidence | metric | value | unit |", "|---|---|---:|---|"]
                out += [f"| {mdtext.code(clean(e.source), in_table=True)} | "
                        f"{mdtext.cell(clean(e.metric))} | {_fmt(e.value)} | "
                        f"{mdtext.cell(unit_of(e))} |" for e in a.evidence]
                out.append("")
            for title, items in (("Caveats", a.caveats), ("Notes", a.notes)):
                if items:
                    out += [f"{title}:", ""] + [f"- {mdtext.text(clean(c))}" for c in items] + [""]
            if a.rule:
                out += [f"Rule: {mdtext.text(clean(a.rule), at_line_start=False)}.", ""]
    if closing:  # the tools' own lines (next_steps.py): commands, shown as they are typed
        out += ["## The GPU half", "", f"How to measure it: {_md_page(GPU_CHECK_PAGE, out_dir)}.",
                "", "```text", *(line.replace("`", "'") for line in closing), "```", ""]
    return "\n".join(out).rstrip() + "\n"


_COLOURS = {HOLDS: "#1a7f37", CAVEAT: "#9a6700", FAILS: "#cf222e", NOT_MEASURED: "#6e7781"}


def table_html(answers: list[Answer]) -> str:
    """The verdict table alone (the report's first section uses it)."""
    headers, rows = grid(answers)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for r in rows:
        cells = [f"<th scope='row'>{html.escape(r[0])}</th>"]
        for v in r[1:]:
            colour = _COLOURS.get(v, "#6e7781")
            cells.append(f"<td style='color:{colour};font-weight:600'>{html.escape(v)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return ("<div class='scroll'><table class='verdicts'><thead><tr>" + head
            + "</tr></thead><tbody>"
            + "".join(body) + "</tbody></table></div>")


def page_html(answers: list[Answer], out_dir: Path | None = None,
              closing: list[str] | None = None) -> str:
    parts = ["<!doctype html><html lang='en'><head><meta charset='utf-8'>",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             "<title>tcbench: the five questions</title><style>",
             "body{font-family:system-ui,sans-serif;max-width:70rem;margin:2rem auto;"
             "padding:0 1rem;"
             "line-height:1.45}table{border-collapse:collapse;margin:.5rem 0}"
             "th,td{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left;"
             "vertical-align:top}td.num{text-align:right;font-variant-numeric:tabular-nums}"
             ".scroll{overflow-x:auto;max-width:100%}code{font-size:.85em;word-break:break-all}"
             ".banner{border:3px solid #CC3311;color:#CC3311;padding:.6rem 1rem;"
             "font-weight:700}",
             "</style></head><body><h1>The five questions, answered</h1>"]
    for banner, name in ((synthetic_banner(answers), "synthetic"),
                         (incomplete_banner(answers), "incomplete")):
        if banner:
            parts.append(f"<div class='banner' id='{name}-banner' role='alert'>"
                         f"{html.escape(banner)}</div>")
    parts += ["<p>Each claim as it is usually taught, what tcbench measured that tests it, and a "
              f"verdict from a written rule ({_html_page(ANSWERS_PAGE, out_dir)}).</p>",
              table_html(answers)]
    for q in QUESTIONS:
        parts.append(f"<h2>{q.id.upper()}. {html.escape(q.title)}</h2>"
                     f"<p><strong>Claim.</strong> {html.escape(q.claim)}</p>"
                     f"<p>Sources and background: {_html_page(q.page, out_dir)}</p>")
        for a in (a for a in answers if a.id == q.id):
            colour = _COLOURS[a.verdict]
            parts.append(f"<h3>{html.escape(source_with_basis(a))}: <span style='color:{colour}'>"
                         f"{html.escape(a.verdict)}</span></h3>")
            if a.why:
                parts.append(f"<p>Not measured: {html.escape(clean(a.why))}.</p>")
            if a.evidence:
                rows = "".join(f"<tr><td><code>{html.escape(clean(e.source))}</code></td>"
                               f"<td>{html.escape(clean(e.metric))}</td>"
                               f"<td class='num'>{_fmt(e.value)}</td>"
                               f"<td>{html.escape(unit_of(e))}</td></tr>" for e in a.evidence)
                parts.append("<div class='scroll'><table><thead><tr><th>evidence</th><th>metric"
                             "</th><th>value</th><th>unit</th></tr></thead><tbody>" + rows
                             + "</tbody></table>"
                             "</div>")
            for title, items in (("Caveats", a.caveats), ("Notes", a.notes)):
                if items:
                    parts.append(f"<p>{title}:</p><ul>"
                                 + "".join(f"<li>{html.escape(clean(c))}</li>" for c in items)
                                 + "</ul>")
            if a.rule:
                parts.append(f"<p><em>Rule:</em> {html.escape(clean(a.rule))}.</p>")
    if closing:
        parts.append("<h2 id='gpu-half'>The GPU half</h2><p>How to measure it: "
                     f"{_html_page(GPU_CHECK_PAGE, out_dir)}.</p><pre>"
                     + "\n".join(html.escape(line) for line in closing) + "</pre>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def as_json(answers: list[Answer]) -> str:
    """``{"synthetic": bool, "incomplete": bool, "questions": [...]}``; each answer's fields are
    Answer.as_json's."""
    def finite(x: float):
        return x if x is not None and math.isfinite(x) else None

    doc = {"synthetic": any(a.synthetic for a in answers),
           "incomplete": any(a.incomplete for a in answers), "questions": []}
    for a in answers:
        d = a.as_json()
        d["label"] = source(a)
        for e in d["evidence"]:
            e["value"] = finite(e["value"])
        d["claim"] = BY_ID[a.id].claim
        doc["questions"].append(d)
    return json.dumps(doc, indent=2) + "\n"
