"""``tcbench compare`` of two host-study files (tcbench_studies' studies.json): the values, not the
time.

The host studies are deterministic computations (the INT8 MLP's accuracies, the five-mode
training losses, the GEMM time model's predictions, FP8 scaling under drift): the wall time
tcbench_studies records per row is how long a shared CPU took, which no answer reads, so gating on
it would call CPU load a regression (the review's D2: "54 REGRESSED" between two identical runs).
What can change is a value, when the code that computes it changed: every counter of every study
row is compared, and a value that moved by more than ``RELATIVE`` (or appeared, or went) is
listed. Exit 0 when every value is the same, 1 when any changed (the deterministic answers moved:
refresh the baseline when that was intended), 2 when a value is impossible (NaN, infinite, outside
its physical range). A host-study file against a GPU run compares
nothing and is refused in one sentence. Standard library only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from tcbench_tools import synthetic
from tcbench_tools.answers.evidence import is_host
from tcbench_tools.doc import Code, Doc, Strong
from tcbench_tools.errors import InputError
from tcbench_tools.printable import printable_lines
from tcbench_tools.results import ResultSet
from tcbench_tools.tables import fmt_num, text_table

# Two values are the same when they differ by at most this fraction of the larger (the studies
# are deterministic; a build with another compiler or libm may move the last digits, not more).
RELATIVE = 1e-6
# Rows of a study result that are not study values.
NOT_VALUES = {"time", "real_time", "cpu_time", "iterations"}


@dataclass
class Change:
    name: str
    counter: str  # "" when the whole row appeared or went
    base: float | None
    cand: float | None

    @property
    def what(self) -> str:
        if not self.counter:
            return "only in the candidate" if self.base is None else "only in the baseline"
        if self.base is None or self.cand is None:
            return "value appeared" if self.base is None else "value went"
        if self.base == 0:
            return "changed"
        return f"changed by {100.0 * (self.cand / self.base - 1.0):+.4g} %"


@dataclass
class StudyComparison:
    rows: int
    values: int
    changes: list[Change] = field(default_factory=list)
    synthetic: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 1 if self.changes else 0

    def summary(self) -> str:
        if not self.changes:
            return (f"tcbench compare: host studies: PASS: all {self.values} values of "
                    f"{self.rows} study results are the same (the studies' CPU time is not "
                    "compared: it measures the machine, not tcbench).")
        return (f"tcbench compare: host studies: CHANGED: {len(self.changes)} of {self.values} "
                f"values of {self.rows} study results differ by more than {RELATIVE:g} "
                "(relative); the deterministic answers moved: refresh the baseline if that was "
                "intended.")


def refuse_mixed(baseline: ResultSet, candidate: ResultSet) -> None:
    """One host-study file and one GPU run: nothing to compare."""
    if is_host(baseline) != is_host(candidate):
        host, gpu = (baseline, candidate) if is_host(baseline) else (candidate, baseline)
        raise InputError(f"{host.path} holds host studies (tcbench_studies, no GPU) and "
                         f"{gpu.path} a GPU run: they share no benchmark to compare; compare two "
                         "GPU runs, or two host-study files.")


def _values(rs: ResultSet) -> dict[str, dict[str, float]]:
    """name -> {counter: value} of every study row (the median of its repetitions). A value no
    computation gives (NaN, an infinity, a counter outside its physical range: results.py's
    Benchmark.impossible) is an input error, as INVALID INPUT is for a GPU run: dropped, it
    read as a value that went, and a file compared with itself passed on the values left."""
    out = {}
    for name, bench in rs.benchmarks.items():
        why = bench.impossible()
        if why is not None:
            raise InputError(f"{rs.path}: study result {name!r} holds a value no study computes "
                             f"({why}); fix or regenerate the file (tcbench_studies).")
        row = {}
        for counter in bench.counter_names():
            if counter in NOT_VALUES:
                continue
            value = bench.center(counter)
            if value is not None:
                row[counter] = value
        out[name] = row
    return out


def same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= RELATIVE * max(abs(a), abs(b))


def compare(baseline: ResultSet, candidate: ResultSet) -> StudyComparison:
    base, cand = _values(baseline), _values(candidate)
    out = StudyComparison(rows=len(set(base) | set(cand)),
                          values=sum(len(v) for v in base.values()))
    out.synthetic = [f"the {side} ({rs.path})" for side, rs in (("baseline", baseline),
                                                                 ("candidate", candidate))
                     if synthetic.is_synthetic(rs.context)]
    for name in list(base) + [n for n in cand if n not in base]:
        if name not in cand or name not in base:
            out.changes.append(Change(name, "", 1.0 if name in base else None,
                                      1.0 if name in cand else None))
            continue
        for counter in list(base[name]) + [c for c in cand[name] if c not in base[name]]:
            b, c = base[name].get(counter), cand[name].get(counter)
            if b is None or c is None or not same(b, c):
                out.changes.append(Change(name, counter, b, c))
    return out


def _table(comp: StudyComparison) -> tuple[list[str], list[list[str]]]:
    def num(x: float | None) -> str:
        return "-" if x is None else fmt_num(x)

    rows = [[c.name, c.counter or "-", num(c.base) if c.counter else "-",
             num(c.cand) if c.counter else "-", c.what] for c in comp.changes]
    return ["study result", "value", "baseline", "candidate", "change"], rows


def banner(comp: StudyComparison) -> str | None:
    if not comp.synthetic:
        return None
    return (f"{synthetic.MARK}: {' and '.join(comp.synthetic)} carr"
            f"{'y' if len(comp.synthetic) > 1 else 'ies'} the context key {synthetic.KEY}: test "
            "fixtures, not host studies tcbench computed.")


def render_text(comp: StudyComparison) -> str:
    out = [banner(comp)] if banner(comp) else []
    if comp.changes:
        headers, rows = _table(comp)
        out += [text_table(headers, rows, right={2, 3}), ""]
    out.append(comp.summary())
    return printable_lines("\n".join(out))


def render_markdown(comp: StudyComparison, baseline: str, candidate: str) -> str:
    doc = Doc()
    doc.heading(2, "tcbench compare (host studies)")
    doc.para("Baseline ", Code(baseline), ", candidate ", Code(candidate), ": the values of the "
             "host studies (deterministic; their CPU time is not compared).")
    if banner(comp):
        doc.banner(banner(comp))
    doc.para(Strong(comp.summary()))
    if comp.changes:
        headers, rows = _table(comp)
        doc.table(headers, rows, right={2, 3})
    return doc.markdown()
