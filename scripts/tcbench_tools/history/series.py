"""The history as series: one benchmark on one GPU model in one mode (quick or full) and one
environment identity (identity.py: SM count, power limit, clock policy, driver, CUDA libraries,
host class).

Runs of different GPU models, quick and full runs, or runs of one model whose recorded hardware
or software differs, are never one series: their times are not comparable, and a difference
between them is the environment's, not the code's. Within a series the runs are in time order
(the run's own date; ties by run id). An incomplete run (cut short, stopped early: ingest.py)
is in no series: what it lacks, or measured while it was being stopped, is no evidence of a
change, so check never finds or confirms a change with it.

The values come from ``run_arrays`` (arrays.py): one row per run, not one per result, so that a
history of 10,000 runs of 2000 benchmarks loads in seconds and within a few hundred megabytes.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from tcbench_tools import synthetic
from tcbench_tools.history import arrays, identity, store


@dataclass
class RunInfo:
    key: int  # runs.id
    run_id: str
    time: datetime
    git_sha: str | None
    gpu_name: str
    quick: bool
    provenance: dict  # every column of runs, for the dashboard's provenance table
    identity: identity.Identity = ()
    synthetic: bool = False  # its context carries tcbench_synthetic (synthetic.py)
    incomplete: str | None = None  # why it is incomplete; such a run is in no series

    @property
    def mode(self) -> str:
        return "quick" if self.quick else "full"


@dataclass(eq=False)
class Series:
    benchmark: str
    gpu: str
    quick: bool
    runs: np.ndarray  # indices into History.runs, in time order
    median: np.ndarray  # seconds
    p10: np.ndarray | None  # seconds; NaN where unknown; None when not loaded (check)
    p90: np.ndarray | None
    identity: identity.Identity = ()
    synthetic: bool = False  # one of its runs is synthetic

    @property
    def mode(self) -> str:
        return "quick" if self.quick else "full"


@dataclass
class History:
    runs: list[RunInfo]  # in time order
    series: list[Series]

    @property
    def incomplete_runs(self) -> list[RunInfo]:
        return [r for r in self.runs if r.incomplete]


_PROVENANCE = ("run_id", "time", "git_sha", "tcbench_version", "gpu_name", "gpu_uuid",
               "compute_capability", "driver_version", "cuda_runtime", "cublaslt_version",
               "quick", "repetitions", "sm_clock_mhz", "mem_clock_mhz", "power_draw_w",
               "power_limit_w", "host", "source", "incomplete")


def _context(text: str) -> dict:
    try:
        doc = json.loads(text)
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _runs(conn) -> list[RunInfo]:
    sa = store._sa()
    runs_t = store.table("runs")
    cols = [runs_t.c.id, runs_t.c.context] + [runs_t.c[n] for n in _PROVENANCE]
    out = []
    for r in conn.execute(sa.select(*cols).order_by(runs_t.c.time, runs_t.c.run_id)):
        context = _context(r.context)
        out.append(RunInfo(r.id, r.run_id, r.time, r.git_sha, r.gpu_name, bool(r.quick),
                           {n: getattr(r, n) for n in _PROVENANCE}, identity.of(context),
                           synthetic.is_synthetic(context), r.incomplete))
    return out


def load(conn, bands: bool = True) -> History:
    """Every series of the database; ``bands=False`` leaves out the p10-p90 bands (check does
    not need them)."""
    sa = store._sa()
    runs = _runs(conn)
    if not runs:
        return History([], [])
    position = {run.key: i for i, run in enumerate(runs)}
    names = dict(conn.execute(sa.select(store.table("benchmarks").c.id,
                                        store.table("benchmarks").c.name)).all())
    t = store.table("run_arrays")
    columns = [t.c.run, t.c.benchmarks, t.c.median] + ([t.c.p10, t.c.p90] if bands else [])
    # One row per run: (benchmark ids, values) as numpy arrays, by the run's position.
    data: dict[int, tuple] = {}
    for row in conn.execution_options(yield_per=500).execute(sa.select(*columns)):
        data[position[row[0]]] = (arrays.unpack(row[1], arrays.IDS),
                                  *(arrays.unpack(v, arrays.VALUES) for v in row[2:]))
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, run in enumerate(runs):
        if i in data and not run.incomplete:  # an incomplete run is no evidence of a change
            groups[(run.gpu_name, run.quick, run.identity)].append(i)
    series = []
    for (gpu, quick, ident), members in groups.items():
        series += _group_series(runs, data, gpu, quick, ident, members, names, bands)
    data.clear()
    series.sort(key=lambda s: (s.gpu, s.quick, s.benchmark, int(s.runs[0])))
    return History(runs, series)


def _group_series(runs, data, gpu, quick, ident, members, names, bands) -> list[Series]:
    """The series of one group (GPU model, mode, identity): a benchmark x run matrix per value,
    filled run by run; each benchmark's row, without the runs it lacks, is its series."""
    bench = np.unique(np.concatenate([data[i][0] for i in members]))
    layers = 3 if bands else 1
    matrix = np.full((layers, len(bench), len(members)), np.nan)
    for col, i in enumerate(members):
        ids, *values = data[i]
        rows = np.searchsorted(bench, ids)
        for layer in range(layers):
            matrix[layer, rows, col] = values[layer]
        data[i] = None  # the run's arrays are in the matrix now
    positions = np.asarray(members)
    flags = np.array([runs[i].synthetic for i in members])
    out = []
    for row, bench_id in enumerate(bench):
        med = matrix[0, row]
        present = ~np.isnan(med)
        every = bool(present.all())
        pick = (lambda a: a) if every else (lambda a: a[present])  # noqa: E731
        out.append(Series(names[int(bench_id)], gpu, quick, pick(positions), pick(med),
                          pick(matrix[1, row]) if bands else None,
                          pick(matrix[2, row]) if bands else None, ident,
                          bool(pick(flags).any())))
    return out
