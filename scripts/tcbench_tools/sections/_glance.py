"""The report's first screen: one row per source (the host studies, then each GPU) with its
verdict on each of the five questions and, for a GPU, one line of health (how many benchmarks
ran, were skipped or failed, linked to that GPU's entry under "Skipped and failed"); then the
notes behind the verdicts, grouped so that twelve GPUs with one caveat make one line, and the
"not measured" reasons collapsed. A report with no GPU says so in plain words and points to the
way to get GPU numbers (docs/gpu-check.md) instead of showing empty GPU tables.

The verdicts come from answers/section.py (``answers_for``, the rules of docs/concepts/
answers.md); this module only lays them out. A verdict's cell carries its reason as a tooltip.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcbench_tools import summary
from tcbench_tools.answers.model import (
    CAVEAT,
    CLASS,
    FAILS,
    HOST,
    NOT_MEASURED,
    QUESTIONS,
    SHORT,
    Answer,
)
from tcbench_tools.answers.render import HOST_LABEL, NO_HOST_HALF, clean
from tcbench_tools.doc import Cell
from tcbench_tools.results import ResultSet

TITLE = "At a glance"
GPU_CHECK_DOC = "docs/gpu-check.md"
MAX_VISIBLE_NOTES = 8  # more grouped notes than this are collapsed
SKIPPED_ANCHOR = "skipped"  # the skip reasons' table under "Skipped and failed"


def problems_anchor(index: int) -> str:
    """The HTML id of GPU ``index``'s entry under "Skipped and failed" (by position: two labels
    may differ only in characters an id drops)."""
    return f"problems-{index + 1:02d}"


@dataclass(frozen=True)
class Health:
    ran: int
    skipped: int
    failed: int
    invalid: int

    @property
    def text(self) -> str:
        parts = [f"{self.ran} ran", f"{self.skipped} skipped",
                 f"{self.failed} FAILED" if self.failed else "0 failed"]
        if self.invalid:
            parts.append(f"{self.invalid} invalid")
        return " · ".join(parts)


def health(rs: ResultSet) -> Health:
    """How many of the run's benchmarks ran, were skipped, failed, or held an impossible value
    (left out of every table: results.without_invalid)."""
    errors, skips = summary.problems(rs)
    invalid = len(summary.invalid(rs))
    skipped = sum(skips.values())
    ran = len(rs.benchmarks) - len(errors) - skipped - len(
        [n for n, b in rs.benchmarks.items() if b.impossible() is not None])
    return Health(ran, skipped, len(errors), invalid)


def _source(a: Answer) -> str:
    """The row an answer belongs to: the report label answers_for gave it. Not the GPU's name:
    a --label, or two runs of one GPU, make the two differ (every cell read "not measured")."""
    return a.label or (HOST_LABEL if a.scope == HOST else a.gpu or "GPU")


def _reason(a: Answer) -> str:
    if a.verdict == NOT_MEASURED:
        return clean(a.why) or "not measured"
    return clean(a.caveats[0]) if a.caveats else a.verdict


def _verdict_cell(a: Answer | None, host_row: bool) -> Cell:
    if a is None:
        if host_row:  # a question without a host half (Q3 reads a GPU pipe counter)
            return Cell(NO_HOST_HALF, title=f"{NO_HOST_HALF}: nothing the CPU computes answers it",
                        cls=CLASS[NOT_MEASURED])
        return Cell(SHORT[NOT_MEASURED], cls=CLASS[NOT_MEASURED])
    return Cell(SHORT.get(a.verdict, a.verdict), title=f"{a.verdict}: {_reason(a)}",
                cls=CLASS.get(a.verdict))


def render(doc, sets: list[ResultSet], labels: list[str], sources: list[str],
           answers: list[Answer], host: ResultSet | None) -> None:
    """The verdicts and health table (``sets``/``labels``: the GPUs only), then the notes."""
    doc.heading(2, TITLE)
    by = {(_source(a), a.id): a for a in answers}
    headers = ["source", *(f"{q.id.upper()} {q.title}" for q in QUESTIONS), "benchmarks"]
    rows = []
    index = {label: i for i, label in enumerate(labels)}
    for s in sources:
        host_row = s == HOST_LABEL
        row: list = [clean(s), *(_verdict_cell(by.get((s, q.id)), host_row) for q in QUESTIONS)]
        if host_row:
            row.append(f"host studies (CPU): {len(host.benchmarks)} results" if host else "-")
        else:
            i = index[s]
            h = health(sets[i])
            # Its failures when it has some, else the skip reasons (shared by the GPUs).
            target = (problems_anchor(i) if h.failed or h.invalid else
                      SKIPPED_ANCHOR if h.skipped else None)
            row.append(Cell(h.text, anchor=target,
                            title="see Skipped and failed" if target else None,
                            cls="v-fails" if h.failed or h.invalid else None))
        rows.append(row)
    doc.table(headers, rows, set(), cls="compact glance")
    if not sets:
        no_gpu(doc, host is not None)  # first, in place of what a GPU row would say
    doc.prose("Verdicts by the written rules of docs/concepts/answers.md (`tcbench answers` "
              "prints the evidence; a cell's tooltip gives its reason); benchmarks: how many "
              "ran, were skipped or failed on each GPU, linked to its entry under Skipped and "
              "failed." if sets else
              "Verdicts by the written rules of docs/concepts/answers.md (`tcbench answers` "
              "prints the evidence; a cell's tooltip gives its reason).")
    notes(doc, answers)


def no_gpu(doc, have_host: bool) -> None:
    """What a report without any GPU result says instead of empty GPU tables."""
    doc.prose("**No GPU ran**: the inputs hold no GPU result, so there is nothing to compare and "
              "no GPU half of any answer" + (
                  "; the row above is the host half, computed on the CPU (host studies) or "
                  "taken from the model and published measurements it names. "
                  if have_host else ". ") +
              "To get GPU numbers, run `scripts/gpu_check.sh` on a machine with a CUDA 13 GPU, "
              f"or a bundle of it on a borrowed one ({GPU_CHECK_DOC}: one command, the five "
              "answers first), or `scripts/tcbench run --quick` there; then give its "
              "results.json to `tcbench report`.")


def notes(doc, answers: list[Answer]) -> None:
    """The caveats and failures behind the verdicts, one line per question, verdict and reason
    (the GPUs that share it named together); the "not measured" reasons collapsed."""
    grouped: dict[tuple[str, str, str], list[str]] = {}
    missing: dict[tuple[str, str], list[str]] = {}
    for a in answers:
        if a.verdict in (CAVEAT, FAILS) and a.caveats:
            grouped.setdefault((a.id, a.verdict, clean(a.caveats[0])), []).append(
                clean(_source(a)))
        elif a.verdict == NOT_MEASURED:
            missing.setdefault((a.id, clean(a.why)), []).append(clean(_source(a)))
    lines = [f"{qid.upper()}, {', '.join(where)}: {verdict}: {why}"
             for (qid, verdict, why), where in sorted(grouped.items())]
    if lines and len(lines) <= MAX_VISIBLE_NOTES:
        doc.heading(3, "Why a caveat or a failure")
        doc.bullets(lines)
    elif lines:
        with doc.details("Why a caveat or a failure", level=3,
                         note=f"{len(lines)} notes") as inner:
            inner.bullets(lines)
    if missing:
        with doc.details("Why not measured", level=3,
                         note=f"{sum(len(w) for w in missing.values())} answers") as inner:
            inner.table(["question", "why", "where"],
                        [[qid.upper(), why, ", ".join(where)]
                         for (qid, why), where in sorted(missing.items())], set())
