"""``tcbench answers``: the five claims tcbench exists to test, each with what was measured, a
verdict from a written rule, and the caveats (docs/concepts/answers.md).

Every question has a host half (the studies tcbench_studies runs on the CPU: INT8 PTQ/QAT
accuracy, FP16/BF16 training with and without loss scaling, the alignment model, FP8 scaling under
drift) and a GPU half (the benchmarks' measurements, one answer per GPU); Q3 is GPU-only. A half
without evidence is "not measured", saying what was missing. Standard library only: ``tcbench
run`` prints the verdicts after a run, on a machine whose Python has nothing else.
"""

from __future__ import annotations

from pathlib import Path

from tcbench_tools import labels, results, synthetic
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
from tcbench_tools.errors import InputError

__all__ = ["Answer", "CAVEAT", "Evidence", "FAILS", "HOLDS", "NOT_MEASURED", "Question",
           "QUESTIONS",
           "VERDICTS", "answer_all", "load_inputs"]

STUDIES_FILE = "studies.json"


def load_inputs(paths: list[Path]) -> list[results.ResultSet]:
    """Result files or run folders (a run folder holds results.json and/or studies.json, the host
    studies, read as two sets)."""
    sets = []
    for path in paths:
        path = Path(path)
        if path.is_dir():
            parts = [p for p in (path / "results.json", path / STUDIES_FILE) if p.is_file()]
            if parts:
                sets += [results.load(p) for p in parts]
                continue
        sets.append(results.load(path))
    return sets


def latest_run(root: Path) -> Path:
    """The newest run folder under results/ (tcbench run's default output)."""
    runs = sorted((p for p in (root / "results").glob("*") if p.is_dir()
                   and any((p / f).is_file() for f in ("results.json", STUDIES_FILE))),
                  key=lambda p: p.name)
    if not runs:
        raise InputError(f"no run folder in {root / 'results'}: give result files, or run "
                         "`scripts/tcbench run` first.")
    return runs[-1]


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
            else:
                a = Answer(q.id, q.claim, NOT_MEASURED, HOST, None)
                a.why = "no host studies given (tcbench_studies writes results/<run>/studies.json)"
            a.label = HOST_LABEL
            out.append(a)
        for rs, name in zip(gpus, names):
            a = rules.GPU_RULES[q.id](rs)
            a.label, a.synthetic = name, synthetic.is_synthetic(rs.context)
            out.append(a)
        if not gpus:
            a = Answer(q.id, q.claim, NOT_MEASURED, GPU, None)
            a.why = "nothing ran on a GPU"
            a.label = "GPU"
            out.append(a)
    return out
