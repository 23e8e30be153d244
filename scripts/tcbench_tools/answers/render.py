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

import json
import math
import os
import re
from pathlib import Path

from tcbench_tools import synthetic
from tcbench_tools.answers.model import (
    BY_ID,
    CAVEAT,
    CLASS,
    FAILS,
    HOST,
    HOST_LABEL,
    NOT_MEASURED,
    QUESTIONS,
    Answer,
    unit_of,
)
from tcbench_tools.doc import Cell, Code, Doc, Inline, Link, Strong

__all__ = ["HOST_LABEL", "as_json", "clean", "console", "document", "grid", "markdown",
           "page_html", "source"]

REPO = Path(__file__).resolve().parents[3]  # scripts/tcbench_tools/answers -> the checkout
ANSWERS_PAGE = "docs/concepts/answers.md"
GPU_CHECK_PAGE = "docs/gpu-check.md"
TITLE = "tcbench: the five questions"  # of answers.html
SYNTHETIC_TAG = "(synthetic data)"
INCOMPLETE = "INCOMPLETE"
NO_HOST_HALF = "GPU only"  # the host row of a question without a host half (Q3: a pipe counter)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


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


def _page(page: str, out_dir: Path | None) -> Inline:
    """A concept page as a link that works from ``out_dir``; as code when the page is not in
    this checkout or its path could not be a link."""
    target = page_target(page, out_dir)
    if target is None or re.search(r"[<>\x00-\x1f]", target):
        return Code(page)
    return Link(page, target)


def document(answers: list[Answer], out_dir: Path | None = None,
             closing: list[str] | None = None) -> Doc:
    """answers.md and answers.html as one document: the verdict table, then per question its
    claim and per source the verdict, evidence, caveats, notes and rule; ``closing``: lines said
    last (how to get the GPU half). Texts from result files (GPU and benchmark names, messages)
    are plain text in doc.py, escaped in both renderings. ``out_dir``: where it is written."""
    doc = Doc()
    doc.heading(1, "The five questions, answered")
    for text, ident in ((synthetic_banner(answers), "synthetic-banner"),
                        (incomplete_banner(answers), "incomplete-banner")):
        if text:
            doc.banner(text, ident)
    doc.para("Each claim as it is usually taught, what tcbench measured that tests it, and a "
             "verdict from a written rule (", _page(ANSWERS_PAGE, out_dir), "): holds, holds "
             "with a caveat, does not hold here, or not measured.")
    headers, rows = grid(answers)
    doc.table(headers, [[r[0], *(Cell(v, cls=CLASS.get(v, CLASS[NOT_MEASURED])) for v in r[1:])]
                        for r in rows], set(), cls="compact")
    for q in QUESTIONS:
        doc.heading(2, f"{q.id.upper()}. {q.title}")
        doc.para(Strong("Claim."), f" {q.claim}")
        doc.para("Sources and background: ", _page(q.page, out_dir), ".")
        for a in (a for a in answers if a.id == q.id):
            doc.heading(3, f"{source_with_basis(a)}: {a.verdict}")
            if a.why:
                doc.para(f"Not measured: {clean(a.why)}.")
            if a.evidence:
                doc.table(["evidence", "metric", "value", "unit"],
                          [[Cell(clean(e.source), code=True), clean(e.metric), _fmt(e.value),
                            unit_of(e)] for e in a.evidence], {2})
            for title, items in (("Caveats", a.caveats), ("Notes", a.notes)):
                if items:
                    doc.para(f"{title}:")
                    doc.bullets([clean(c) for c in items])
            if a.rule:
                doc.para(f"Rule: {clean(a.rule)}.")
    if closing:  # the tools' own lines (next_steps.py): commands, shown as they are typed
        doc.heading(2, "The GPU half")
        doc.para("How to measure it: ", _page(GPU_CHECK_PAGE, out_dir), ".")
        doc.pre(closing)
    return doc


def markdown(answers: list[Answer], out_dir: Path | None = None,
             closing: list[str] | None = None) -> str:
    """answers.md (``document``)."""
    return document(answers, out_dir, closing).markdown()


def page_html(answers: list[Answer], out_dir: Path | None = None,
              closing: list[str] | None = None) -> str:
    """answers.html (``document``)."""
    return document(answers, out_dir, closing).html(TITLE)


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
