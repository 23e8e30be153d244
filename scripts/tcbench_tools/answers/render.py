"""The answers as a console summary, Markdown, a self-contained HTML page and JSON.

The verdict table has one row per source (the host studies, then each GPU) and one column per
question, so it stays five columns wide whatever the number of GPUs. Every text that came from a
result file (GPU names, benchmark names) is escaped: a results file cannot write markup or
terminal control characters into what this prints."""

from __future__ import annotations

import html
import json
import math
import re

from tcbench_tools import mdtext
from tcbench_tools.answers.model import (
    BY_ID,
    CAVEAT,
    FAILS,
    HOLDS,
    HOST,
    NOT_MEASURED,
    QUESTIONS,
    Answer,
)

# The no-GPU half: each of its answers says what it rests on (Answer.basis): host studies (what
# the CPU computed), the GEMM time model, published measurements.
HOST_LABEL = "without a GPU"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
SYMBOL = {HOLDS: "holds", CAVEAT: "holds, with a caveat", FAILS: "does not hold here",
          NOT_MEASURED: "not measured"}


def clean(text: str) -> str:
    """Control characters shown as \\xNN, never passed through."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def source(a: Answer) -> str:
    if a.scope == HOST:
        return HOST_LABEL
    return clean(a.gpu) if a.gpu else "GPU"


def source_with_basis(a: Answer) -> str:
    """The source and, for the no-GPU half, what the answer rests on."""
    return f"{source(a)}, {clean(a.basis)}" if a.basis else source(a)


def _fmt(v: float) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
        return f"{v:.3g}"
    return f"{v:.4g}"


def sources(answers: list[Answer]) -> list[str]:
    out: list[str] = []
    for a in answers:
        if source(a) not in out:
            out.append(source(a))
    return out


def grid(answers: list[Answer]) -> tuple[list[str], list[list[str]]]:
    """(headers, rows): one row per source, one column per question."""
    headers = ["source", *(f"{q.id.upper()} {q.title}" for q in QUESTIONS)]
    rows = []
    for s in sources(answers):
        row = [s]
        for q in QUESTIONS:
            mine = [a for a in answers if a.id == q.id and source(a) == s]
            row.append(mine[0].verdict if mine else ("-" if s == HOST_LABEL else NOT_MEASURED))
        rows.append(row)
    return headers, rows


def console(answers: list[Answer]) -> str:
    """The five questions, one line per question and half."""
    lines = []
    for q in QUESTIONS:
        mine = [a for a in answers if a.id == q.id]
        lines.append(f"{q.id.upper()} {q.title}:")
        for a in mine:
            first = a.why or (a.caveats[0] if a.caveats and a.verdict in (CAVEAT, FAILS) else "")
            tail = f" ({clean(first)})" if first else ""
            lines.append(f"  {source_with_basis(a)}: {a.verdict}{tail}")
    return "\n".join(lines)


def markdown(answers: list[Answer]) -> str:
    """answers.md: the verdict table, then per question its claim and per source the verdict,
    evidence, caveats and rule. Every text escaped for Markdown (mdtext.py): GPU names, benchmark
    names and the messages in caveats come from result files."""
    headers, rows = grid(answers)
    out = ["# The five questions, answered", "",
           "Each claim as it is usually taught, what tcbench measured that tests it, and a verdict "
           "from a written rule (docs/concepts/answers.md): holds, holds with a caveat, does not "
           "hold here, or not measured.", "",
           "| " + " | ".join(mdtext.cell(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(mdtext.cell(clean(c)) for c in r) + " |" for r in rows]
    for q in QUESTIONS:
        out += ["", f"## {q.id.upper()}. {q.title}", "", f"**Claim.** {q.claim}", "",
                f"Sources and background: [{q.page}]({q.page}).", ""]
        for a in (a for a in answers if a.id == q.id):
            out += [f"### {mdtext.text(source_with_basis(a))}: {a.verdict}", ""]
            if a.why:
                out += [f"Not measured: {mdtext.text(clean(a.why), at_line_start=False)}.", ""]
            if a.evidence:
                out += ["| evidence | metric | value |", "|---|---|---:|"]
                out += [f"| {mdtext.code(clean(e.source), in_table=True)} | "
                        f"{mdtext.cell(clean(e.metric))} | {_fmt(e.value)} |" for e in a.evidence]
                out.append("")
            out += [f"- {mdtext.text(clean(c))}" for c in a.caveats]
            if a.caveats:
                out.append("")
            if a.rule:
                out += [f"Rule: {mdtext.text(clean(a.rule), at_line_start=False)}.", ""]
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


def page_html(answers: list[Answer]) -> str:
    parts = ["<!doctype html><html lang='en'><head><meta charset='utf-8'>",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             "<title>tcbench: the five questions</title><style>",
             "body{font-family:system-ui,sans-serif;max-width:70rem;margin:2rem auto;"
             "padding:0 1rem;"
             "line-height:1.45}table{border-collapse:collapse;margin:.5rem 0}"
             "th,td{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left;"
             "vertical-align:top}td.num{text-align:right;font-variant-numeric:tabular-nums}"
             ".scroll{overflow-x:auto;max-width:100%}code{font-size:.85em;word-break:break-all}",
             "</style></head><body><h1>The five questions, answered</h1>",
             "<p>Each claim as it is usually taught, what tcbench measured that tests it, and a "
             "verdict from a written rule (docs/concepts/answers.md).</p>",
             table_html(answers)]
    for q in QUESTIONS:
        parts.append(f"<h2>{q.id.upper()}. {html.escape(q.title)}</h2>"
                     f"<p><strong>Claim.</strong> {html.escape(q.claim)}</p>"
                     f"<p>Sources: {html.escape(q.page)}</p>")
        for a in (a for a in answers if a.id == q.id):
            colour = _COLOURS[a.verdict]
            parts.append(f"<h3>{html.escape(source_with_basis(a))}: <span style='color:{colour}'>"
                         f"{html.escape(a.verdict)}</span></h3>")
            if a.why:
                parts.append(f"<p>Not measured: {html.escape(clean(a.why))}.</p>")
            if a.evidence:
                rows = "".join(f"<tr><td><code>{html.escape(clean(e.source))}</code></td>"
                               f"<td>{html.escape(clean(e.metric))}</td>"
                               f"<td class='num'>{_fmt(e.value)}</td></tr>" for e in a.evidence)
                parts.append("<div class='scroll'><table><thead><tr><th>evidence</th><th>metric"
                             "</th><th>value</th></tr></thead><tbody>" + rows + "</tbody></table>"
                             "</div>")
            if a.caveats:
                parts.append("<ul>" + "".join(f"<li>{html.escape(clean(c))}</li>"
                                              for c in a.caveats) + "</ul>")
            if a.rule:
                parts.append(f"<p><em>Rule:</em> {html.escape(clean(a.rule))}.</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def as_json(answers: list[Answer]) -> str:
    def finite(x: float):
        return x if x is not None and math.isfinite(x) else None

    doc = {"questions": []}
    for a in answers:
        d = a.as_json()
        for e in d["evidence"]:
            e["value"] = finite(e["value"])
        d["claim"] = BY_ID[a.id].claim
        doc["questions"].append(d)
    return json.dumps(doc, indent=2) + "\n"
