"""The instruction ladder of one GPU, from bench_tensor_peak: per precision, the best result of
each tensor-instruction generation (mma.sync, wgmma, tcgen05.mma) and how much of the SMs x
measured clock x ops/clock model it reached, so that generations compare instruction by
instruction (docs/concepts/tensor-util.md, "The instruction ladder").

A generation is a benchmark variant's prefix: ``mma_`` (mma.sync, including GeForce Blackwell's
FP8/FP6/FP4 kinds), ``wgmma_`` (Hopper), ``tcgen05_`` (datacenter Blackwell; ``tcgen05_2cta_`` is
the pair form of the same instruction, compared in the same column). A cell says the best
throughput, its share of the model and the variant that reached it; "skipped" when every row of
that generation and precision was skipped on this GPU (the benchmark's sentence says why), "-"
when the run has none.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcbench_tools.names import precision_order
from tcbench_tools.results import ResultSet
from tcbench_tools.schema import PCT_OF_CLOCK_MODEL

PEAK_TOPIC = "tensor_peak"
# (variant prefix, column title), oldest generation first.
GENERATIONS = (("mma", "mma.sync"), ("wgmma", "wgmma"), ("tcgen05", "tcgen05.mma"))


def generation(variant: str) -> str | None:
    """The generation of a tensor_peak variant ("tcgen05_2cta_f16_m256n256k16" -> "tcgen05")."""
    head = variant.split("_", 1)[0]
    return head if head in dict(GENERATIONS) else None


@dataclass
class Step:
    """The best row of one generation and precision."""
    value: float         # tflops or tops
    metric: str          # "tflops" | "tops"
    pct_model: float | None
    variant: str


def ladder(rs: ResultSet) -> list[tuple[str, dict[str, Step | str]]]:
    """Per precision (precision-table order): {generation: its best Step, or "skipped"}."""
    best: dict[str, dict[str, Step | str]] = {}
    for bench in rs.find(PEAK_TOPIC):
        gen = generation(bench.parsed.variant)
        if gen is None:
            continue
        row = best.setdefault(bench.parsed.precision, {})
        metric = bench.throughput_metric()
        got = bench.center(metric) if bench.ok and metric else None
        if got is None:
            if bench.skipped and gen not in row:
                row[gen] = "skipped"
            continue
        old = row.get(gen)
        if not isinstance(old, Step) or got > old.value:
            row[gen] = Step(got, metric, bench.center(PCT_OF_CLOCK_MODEL), bench.parsed.variant)
    return [(p, best[p]) for p in sorted(best, key=precision_order)]


def step_up(rs: ResultSet, precision: str = "fp16") -> tuple[str, str, float] | None:
    """(newest, oldest, ratio): how many times the newest generation measured for `precision`
    beats the oldest, where at least two ran."""
    rows = dict(ladder(rs)).get(precision, {})
    ran = [g for g, _ in GENERATIONS if isinstance(rows.get(g), Step)]
    if len(ran) < 2:
        return None
    new, old = rows[ran[-1]], rows[ran[0]]
    return ran[-1], ran[0], new.value / old.value


def _cell(step: Step | str | None) -> str:
    if step is None:
        return "-"
    if isinstance(step, str):
        return step
    pct = "" if step.pct_model is None else f", {step.pct_model:.0f}% of model"
    return f"{step.value:.0f} {step.metric}{pct} ({step.variant})"


def render(doc, rs: ResultSet, label: str) -> None:
    """The ladder table of one GPU and the step from the oldest generation to the newest."""
    rows = ladder(rs)
    if not rows:
        return
    doc.para(f"{label}: the instruction ladder. Per precision, the best bench_tensor_peak row of "
             "each tensor-instruction generation, with its share of SMs x measured clock x the "
             "instruction's own ops/clock (pct_of_clock_model).")
    doc.table(["precision", *(title for _, title in GENERATIONS)],
              [[p, *(_cell(gens.get(g)) for g, _ in GENERATIONS)] for p, gens in rows], set(),
              cls="compact")
    up = step_up(rs)
    if up is not None:
        titles = dict(GENERATIONS)
        doc.para(f"fp16: {titles[up[0]]} reached x{up[2]:.2f} the throughput of {titles[up[1]]} "
                 "on this GPU.")
