"""The history as series: one benchmark on one GPU model in one mode (quick or full).

Runs of different GPU models, or quick and full runs, are never one series: their times are not
comparable. Within a series the runs are in time order (the run's own date; ties by run id).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np

from tcbench_tools.history import store


@dataclass
class RunInfo:
    key: int  # runs.id
    run_id: str
    time: datetime
    git_sha: str | None
    gpu_name: str
    quick: bool
    provenance: dict  # every column of runs, for the dashboard's provenance table

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
    p10: np.ndarray  # seconds; NaN where unknown
    p90: np.ndarray

    @property
    def mode(self) -> str:
        return "quick" if self.quick else "full"


@dataclass
class History:
    runs: list[RunInfo]  # in time order
    series: list[Series]


_PROVENANCE = ("run_id", "time", "git_sha", "tcbench_version", "gpu_name", "gpu_uuid",
               "compute_capability", "driver_version", "cuda_runtime", "cublaslt_version",
               "quick", "repetitions", "sm_clock_mhz", "mem_clock_mhz", "power_draw_w",
               "power_limit_w", "host", "source")


def load(conn) -> History:
    sa = store._sa()
    runs_t, bench_t, res_t = (store.table(n) for n in ("runs", "benchmarks", "results"))
    cols = [runs_t.c.id] + [runs_t.c[n] for n in _PROVENANCE]
    rows = conn.execute(sa.select(*cols).order_by(runs_t.c.time, runs_t.c.run_id)).all()
    runs = [RunInfo(r[0], r.run_id, r.time, r.git_sha, r.gpu_name, bool(r.quick),
                    {n: getattr(r, n) for n in _PROVENANCE}) for r in rows]
    if not runs:
        return History([], [])
    order = {run.key: i for i, run in enumerate(runs)}
    names = dict(conn.execute(sa.select(bench_t.c.id, bench_t.c.name)).all())
    # Millions of rows: the Core query runs on the driver's cursor, which hands back plain
    # tuples (SQLAlchemy's Row objects would double the time); -1 stands for an unknown band.
    query = sa.select(res_t.c.run, res_t.c.benchmark, res_t.c.median,
                      sa.func.coalesce(res_t.c.p10, -1.0), sa.func.coalesce(res_t.c.p90, -1.0)
                      ).where(res_t.c.status == "ok")
    sql = str(query.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        cursor.execute(sql)
        data = np.array(cursor.fetchall(), dtype=np.float64).reshape(-1, 5)
    finally:
        cursor.close()
    if not len(data):
        return History(runs, [])
    run_key, bench = data[:, 0].astype(np.int64), data[:, 1].astype(np.int64)
    value = data[:, 2:]
    value[value < 0] = np.nan
    del data
    # Position of each row's run in time order, and its group (GPU model, mode).
    lut = np.full(max(order) + 1, -1, dtype=np.int64)
    lut[list(order)] = list(order.values())
    position = lut[run_key]
    groups = {}
    group_of_run = np.array([groups.setdefault((r.gpu_name, r.quick), len(groups)) for r in runs])
    group = group_of_run[position]
    key = bench * len(groups) + group
    idx = np.lexsort((position, key))
    key, position, value, bench, group = key[idx], position[idx], value[idx], bench[idx], group[idx]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    ends = np.r_[starts[1:], len(key)]
    group_name = {v: k for k, v in groups.items()}
    series = []
    for a, b in zip(starts, ends):
        gpu, quick = group_name[int(group[a])]
        series.append(Series(names[int(bench[a])], gpu, quick, position[a:b], value[a:b, 0],
                             value[a:b, 1], value[a:b, 2]))
    series.sort(key=lambda s: (s.gpu, s.quick, s.benchmark))
    return History(runs, series)
