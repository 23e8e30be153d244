"""``tcbench answers``: the five claims tcbench exists to test, each with what was measured, a
verdict from a written rule, and the caveats (docs/concepts/answers.md).

Every question has a host half (the studies tcbench_studies runs on the CPU: INT8 PTQ/QAT
accuracy, FP16/BF16 training with and without loss scaling, the alignment model, FP8 scaling under
drift) and a GPU half (the benchmarks' measurements, one answer per GPU); Q3 is GPU-only. A half
without evidence is "not measured", saying what was missing. Standard library only: ``tcbench
run`` prints the verdicts after a run, on a machine whose Python has nothing else.
"""

from __future__ import annotations

from tcbench_tools import labels, results, schema, synthetic
from tcbench_tools.answers import evidence, rules
from tcbench_tools.answers.model import (
    CAVEAT,
    FAILS,
    GPU,
    HOLDS,
    HOST,
    HOST_LABEL,
    NOT_MEASURED,
    QUESTIONS,
    VERDICTS,
    Answer,
    Evidence,
    Question,
)

__all__ = ["Answer", "CAVEAT", "Evidence", "FAILS", "HOLDS", "NOT_MEASURED", "Question",
           "QUESTIONS", "VERDICTS", "answer_all"]


def _incomplete(rs: results.ResultSet) -> str:
    """Why the run stopped early (``tcbench run`` after Ctrl-C, a lost binary) or which binaries
    were cut short (their finished rows kept, marked), else ""."""
    why = rs.context.get(schema.RUN_INCOMPLETE)
    parts = [why.strip() if isinstance(why, str) else "", rs.partial or ""]
    return "; ".join(p for p in parts if p)


def answer_all(sets: list[results.ResultSet]) -> list[Answer]:
    """One host answer per question that has a host half, and one GPU answer per GPU run (or one
    "not measured" when no GPU run was given), in question order. Each GPU run is a row of its
    own under the label the report gives it (labels.py: two runs of one GPU model are told apart
    by their folder), and every answer says whether its file is synthetic test data."""
    host = [rs for rs in sets if evidence.is_host(rs)]
    gpus = [rs for rs in sets if not evidence.is_host(rs)]
    names = labels.unique_labels(gpus)
    out: list[Answer] = []
    for q in QUESTIONS:
        if q.id in rules.HOST_RULES:
            if host:
                a = rules.HOST_RULES[q.id](host[-1])
                a.synthetic = synthetic.is_synthetic(host[-1].context)
                a.incomplete = _incomplete(host[-1])
            else:
                a = Answer(q.id, q.claim, NOT_MEASURED, HOST, None)
                a.why = ("no host studies given; tcbench_studies writes them to "
                         "results/<run>/studies.json")
            a.label = HOST_LABEL
            out.append(a)
        for rs, name in zip(gpus, names):
            a = rules.GPU_RULES[q.id](rs)
            a.label, a.synthetic = name, synthetic.is_synthetic(rs.context)
            a.incomplete = _incomplete(rs)
            out.append(a)
        if not gpus:
            a = Answer(q.id, q.claim, NOT_MEASURED, GPU, None)
            a.why = "nothing ran on a GPU"
            a.label = "GPU"
            out.append(a)
    return out
