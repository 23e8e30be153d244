"""The report's first section: the verdicts on the five questions, one row per source (the host
studies, then each GPU under its report label) and one column per question, as a table and as a
coloured grid picture; then one line per answer that is not a plain "holds".

The host studies come from the inputs themselves (a studies.json given to the report) or, for a
run folder's results.json, from the studies.json that ``tcbench run`` wrote beside it."""

from __future__ import annotations

from pathlib import Path

from tcbench_tools import results
from tcbench_tools.answers import STUDIES_FILE, evidence, rules
from tcbench_tools.answers.model import CAVEAT, FAILS, HOLDS, NOT_MEASURED, QUESTIONS, Answer
from tcbench_tools.answers.render import HOST_LABEL, clean, source
from tcbench_tools.errors import InputError
from tcbench_tools.sections._common import plt, save

TITLE = "The five questions"
_FILL = {HOLDS: "#2da44e", CAVEAT: "#d4a72c", FAILS: "#cf222e", NOT_MEASURED: "#d0d7de"}
_SHORT = {HOLDS: "holds", CAVEAT: "caveat", FAILS: "does not hold", NOT_MEASURED: "not measured"}


def host_studies(sets: list[results.ResultSet]) -> results.ResultSet | None:
    """The host studies among the inputs, else the studies.json beside an input's file."""
    given = [rs for rs in sets if evidence.is_host(rs)]
    if given:
        return given[-1]
    for rs in sets:
        if not rs.path or not Path(rs.path).is_file():
            continue  # parsed in memory: there is no folder to look beside
        beside = Path(rs.path).parent / STUDIES_FILE
        if beside.is_file():
            try:
                found = results.load(beside)
            except InputError:
                continue  # a broken studies file beside a run: the host half is not measured
            if evidence.is_host(found):
                return found
    return None


def answers_for(sets: list[results.ResultSet], labels: list[str]) -> tuple[list[str],
                                                                           list[Answer]]:
    """(sources, answers): the host half once, then each GPU's under its report label."""
    host = host_studies(sets)
    out: list[Answer] = []
    sources = []
    if host is not None:
        sources.append(HOST_LABEL)
        for q in QUESTIONS:
            if q.id in rules.HOST_RULES:
                a = rules.HOST_RULES[q.id](host)
                a.label = HOST_LABEL
                out.append(a)
    for rs, label in zip(sets, labels):
        if evidence.is_host(rs):
            continue
        sources.append(label)
        for q in QUESTIONS:
            a = rules.GPU_RULES[q.id](rs)
            a.label = label
            out.append(a)
    return sources, out


def _source(a: Answer) -> str:
    """The report's row of an answer (the report marks synthetic inputs with its own banner)."""
    return source(a)


def _grid_png(sources: list[str], answers: list[Answer], out_dir: Path) -> Path:
    by = {(_source(a), a.id): a.verdict for a in answers}
    fig, ax = plt.subplots(figsize=(1.9 * len(QUESTIONS) + 2.4, 0.55 * len(sources) + 1.1))
    for r, s in enumerate(sources):
        for c, q in enumerate(QUESTIONS):
            v = by.get((s, q.id))
            fill = _FILL.get(v, "#ffffff")
            ax.add_patch(plt.Rectangle((c, r), 0.96, 0.9, color=fill))
            ax.text(c + 0.48, r + 0.45, _SHORT.get(v, "-"), ha="center", va="center",
                    fontsize=9, color="white" if v in (HOLDS, FAILS) else "black")
    ax.set_xlim(0, len(QUESTIONS))
    ax.set_ylim(len(sources), 0)
    ax.set_xticks([c + 0.48 for c in range(len(QUESTIONS))],
                  [f"{q.id.upper()}\n{q.title}" for q in QUESTIONS], fontsize=9)
    ax.xaxis.tick_top()
    ax.set_yticks([r + 0.45 for r in range(len(sources))], [clean(s)[:40] for s in sources],
                  fontsize=9)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    fig.tight_layout()
    return save(fig, out_dir / "answers_verdicts.png")


def render(doc, sets: list[results.ResultSet], labels: list[str], out_dir: Path) -> list[Path]:
    sources, answers = answers_for(sets, labels)
    doc.heading(2, TITLE)
    doc.prose("Each claim tcbench tests, with a verdict from a written rule over the measured "
             "numbers (docs/concepts/answers.md): holds, holds with a caveat, does not hold "
             "here, or not measured. `tcbench answers` prints the evidence of each.")
    if not sources:
        doc.para("No answers: the inputs hold neither GPU results nor host studies.")
        return []
    by = {(_source(a), a.id): a.verdict for a in answers}
    headers = ["source", *(f"{q.id.upper()} {q.title}" for q in QUESTIONS)]
    rows = [[clean(s), *(by.get((s, q.id), "-") for q in QUESTIONS)] for s in sources]
    doc.table(headers, rows, set())
    image = _grid_png(sources, answers, out_dir)
    doc.image(image, "verdicts on the five questions, per source", caption=False)
    # One line per caveat or failure; the "not measured" ones grouped by question and reason, so
    # twenty GPUs that all lack a binary make one line, not twenty.
    notes = [f"{a.id.upper()}, {clean(_source(a))}: {a.verdict}: {clean(a.caveats[0])}"
             for a in answers if a.verdict in (CAVEAT, FAILS) and a.caveats]
    missing: dict[tuple[str, str], list[str]] = {}
    for a in answers:
        if a.verdict == NOT_MEASURED:
            missing.setdefault((a.id, a.why), []).append(clean(_source(a)))
    notes += [f"{qid.upper()} not measured on {', '.join(where)}: {clean(why)}"
              for (qid, why), where in sorted(missing.items())]
    doc.bullets(notes)
    return [image]


__all__ = ["TITLE", "answers_for", "host_studies", "render"]
