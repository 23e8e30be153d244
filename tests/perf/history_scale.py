#!/usr/bin/env python3
"""Scale benchmark of ``tcbench history`` (not a test): RUNS runs x BENCHMARKS benchmarks.

    .venv/bin/python tests/perf/history_scale.py [--runs 10000] [--benchmarks 2000]
        [--db URL | --postgres] [--keep DIR] [--reuse]

Fills a history with RUNS - 1 synthetic nightly runs of one GPU (seeded; realistic noise: see
``Levels``), stored through ``ingest.add`` in batches, then times the three commands as a user
runs them, each a fresh ``scripts/tcbench`` process:

  add        one more run, a Google Benchmark JSON file of BENCHMARKS x 5 repetitions with
             their aggregates and 3 counters (what ``tcbench run --repetitions 5`` writes)
  check      change points in every series
  dashboard  the page and one PNG per benchmark

It prints wall-clock seconds (which depend on what else the machine runs: the load average is
printed), CPU seconds (user + system of the command and its children, which depend on it much
less) and the peak resident memory of the largest process of the command. The targets (issue
35, on the 2-core development machine): add <= 1 s, check <= 60 s and <= 2 GB, dashboard
<= 60 s. docs/dev/history-scale.md logs the figures; docs/history.md §7 sums them up.

Without --db it uses a temporary SQLite file; --db postgresql://... measures an empty
PostgreSQL database; --postgres starts a throwaway PostgreSQL server for the run
(tests/scripts/postgres_server.py: fsync off, as a test server); --reuse times the commands
again on a database it filled before (--keep DIR keeps DIR/history.sqlite).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "tests" / "scripts"), str(REPO / "scripts")]

import history_data as hd  # noqa: E402
from tcbench_tools.history import ingest, store  # noqa: E402

TOPICS = ("fp16_vs_fp32", "int8_gemm", "fp8", "alignment", "tensor_util", "loss_scaling",
          "tensor_peak")
GPU = "Synthetic GPU"  # no figure here is a GPU's: the data are generated
TARGETS = {"add": 1.0, "check": 60.0, "dashboard": 60.0}
MEMORY_TARGET_MB = 2048  # check
# Runs the peak memory of a command: its own and its children's largest resident set (Linux
# reports ru_maxrss in KiB).
_MEASURE = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
            "sys.exit(code)")


class Levels:
    """Each benchmark's median time on night k, as real nightly histories look: a base level;
    night-to-night noise between 0.1 % and 3 % (log-uniform: most benchmarks are quiet); one
    slow night in 200 per benchmark (10-30 % slower); 2 % of the benchmarks step by +-8 % and
    1 % by +-1.5 % from a night of their own on."""

    def __init__(self, count: int, runs: int, rng: np.random.Generator):
        self.rng = rng
        self.base = 1e-5 * np.exp(rng.uniform(0, 5, count))  # 10 us .. 1.5 ms
        self.noise = np.exp(rng.uniform(np.log(0.001), np.log(0.03), count))
        kind = rng.random(count)
        self.step = np.where(kind < 0.02, 1.08, np.where(kind < 0.03, 1.015, 1.0))
        self.step = np.where(rng.random(count) < 0.5, self.step, 1 / self.step)
        self.step_at = rng.integers(runs // 10, runs, count)

    def night(self, k: int) -> np.ndarray:
        level = self.base * np.exp(self.rng.normal(0, self.noise))
        slow = self.rng.random(len(level)) < 0.005
        level = np.where(slow, level * self.rng.uniform(1.1, 1.3, len(level)), level)
        return np.where(k >= self.step_at, level * self.step, level)


def synthetic_runs(count: int, names: list[str], levels: Levels, rng: np.random.Generator,
                   batch: int):
    """Run records built directly (no JSON round trip), ``batch`` at a time."""
    template = hd.run_doc({names[0]: [1e-4]}, gpu=GPU)["context"]
    out = []
    for k in range(count):
        level = levels.night(k)
        reps = level[:, None] * np.exp(rng.normal(0, 0.004, (len(names), 5)))
        med = np.median(reps, axis=1)
        p10, p90 = np.percentile(reps, 10, axis=1), np.percentile(reps, 90, axis=1)
        when = hd.START + timedelta(days=k)
        context = {**template, "date": when.isoformat(), "git_sha": f"{k:08x}abcd"}
        results = [ingest.Result(n, "ok", float(m), float(a), float(b), 5, 0.004,
                                 counters={"tflops": 1e-3 / float(m), "pct_of_peak": 50.0,
                                           "rel_error": 1e-6})
                   for n, m, a, b in zip(names, med, p10, p90)]
        out.append(ingest.Run(hashlib.sha256(f"scale-{k}".encode()).hexdigest(), "synthetic",
                              when.replace(tzinfo=None), GPU, False,
                              {"git_sha": context["git_sha"], "repetitions": 5},
                              store.numeric_values(context), context, results))
        if len(out) == batch:
            yield out
            out = []
    if out:
        yield out


def _copy_text(value) -> str:
    """One field of COPY's text format: \\N for NULL, repr for floats (exact), escaped text."""
    if value is None:
        return "\\N"
    if isinstance(value, float):
        return repr(value)
    return (str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
            .replace("\r", "\\r"))


def fill_by_copy(db: store.Store, batches) -> None:
    """PostgreSQL: the filled runs written with COPY, a transaction and one COPY per table per
    batch, because ingest.add's multi-row INSERTs took about 3 s a run on this loaded machine
    (8 hours for 10,000). The rows are the ones ingest.add writes (its tables, its values,
    run_arrays packed by arrays.pack); only the fill goes this way, the measured add is a real
    history add."""
    from datetime import datetime, timezone

    from tcbench_tools.history import arrays

    runs_t = store.table("runs")
    for batch in batches:
        with db.writing() as conn:
            ids = ingest._benchmark_ids(conn, {r.name for run in batch for r in run.results})
            cursor = conn.connection.dbapi_connection.cursor()
            now = datetime.now(timezone.utc).replace(tzinfo=None)
            tables: dict[str, list[str]] = {"results": [], "counters": [], "run_values": []}
            for run in batch:
                key = conn.execute(runs_t.insert().values(
                    run_id=run.run_id, time=run.time, added=now, gpu_name=run.gpu_name,
                    quick=run.quick, source=run.source,
                    context=json.dumps(run.context, sort_keys=True, default=str),
                    **run.columns)).inserted_primary_key[0]
                for r in run.results:
                    bench = ids[r.name]
                    tables["results"].append("\t".join(map(_copy_text, (
                        key, bench, r.status, r.median, r.p10, r.p90, r.repetitions, r.cv,
                        r.message))))
                    tables["counters"] += [f"{key}\t{bench}\t{_copy_text(n)}\t{v!r}"
                                           for n, v in r.counters.items()]
                tables["run_values"] += [f"{key}\t{_copy_text(k)}\t{v!r}"
                                         for k, v in run.values.items()]
                conn.execute(store.table("run_arrays").insert().values(run=key, **arrays.pack(
                    [(ids[r.name], r.median, r.p10, r.p90) for r in run.results
                     if r.status == "ok"])))
            columns = {"results": "run, benchmark, status, median, p10, p90, repetitions, cv, "
                                  "message",
                       "counters": "run, benchmark, name, value", "run_values": "run, key, value"}
            for name, lines in tables.items():
                if lines:
                    with cursor.copy(f"COPY {name} ({columns[name]}) FROM STDIN") as copy:
                        copy.write("\n".join(lines) + "\n")


def timed(args: list[str], env: dict) -> tuple[float, float, float, subprocess.CompletedProcess]:
    """Wall-clock and CPU seconds (user + system, the command and its children) and peak
    resident MiB (its largest process) of a command."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    begin = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _MEASURE, str(REPO / "scripts" / "tcbench"),
                           *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env)
    wall = time.perf_counter() - begin
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = proc.stderr.strip().splitlines()
    peak = int(lines[-1]) / 1024 if lines and lines[-1].isdigit() else float("nan")
    proc.stderr = "\n".join(lines[:-1])
    return wall, cpu, peak, proc


def _last_run(names: list[str], levels: Levels, runs: int, rng, work: Path) -> Path:
    night = levels.night(runs - 1)
    last = hd.run_doc({n: hd.noisy(rng, t, 0.004, 5) for n, t in zip(names, night)}, gpu=GPU,
                      when=hd.START + timedelta(days=runs),
                      git_sha=f"{time.time_ns():016x}"[-12:], aggregates=True)
    path = work / "last" / "results.json"
    path.parent.mkdir()
    path.write_text(json.dumps(last, indent=2))
    return path


def measure(db_url: str, run_file: Path, work: Path) -> list[str]:
    """Time the three commands; the names of those over their targets."""
    env = {**os.environ, "TCBENCH_HISTORY_DB": db_url}
    over = []
    for what, cmd in (("add", ["history", "add", str(run_file)]),
                      ("check", ["history", "check"]),
                      ("dashboard", ["history", "dashboard", "--out", str(work / "dash")])):
        seconds, cpu, peak, proc = timed(cmd, env)
        if proc.returncode not in (0, 1):
            print(f"{what} failed (exit {proc.returncode}): {proc.stderr.strip()}")
            return [what]
        note = f" (a {run_file.stat().st_size / 2**20:.1f} MiB results.json)" if what == "add" \
            else ""
        print(f"{what}: {seconds:.2f} s wall, {cpu:.2f} s CPU, peak {peak:.0f} MiB, exit "
              f"{proc.returncode}{note}", flush=True)
        if what == "check":  # its first line: runs, series, change points
            print("  " + proc.stdout.splitlines()[0] if proc.stdout else "  (no output)")
        if seconds > TARGETS[what] or (what == "check" and peak > MEMORY_TARGET_MB):
            over.append(what)
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return over


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10000)
    parser.add_argument("--benchmarks", type=int, default=2000)
    parser.add_argument("--db", help="database URL (default: a temporary SQLite file)")
    parser.add_argument("--postgres", action="store_true",
                        help="start a throwaway PostgreSQL server and measure on it")
    parser.add_argument("--keep", type=Path, help="keep the database and dashboard here")
    parser.add_argument("--reuse", action="store_true",
                        help="--db is a history this script filled before: time the commands "
                             "on it again (the run added is one more)")
    args = parser.parse_args()
    if args.reuse and not args.db:
        parser.error("--reuse needs --db")
    work = Path(tempfile.mkdtemp(prefix="tcbench-history-scale-"))
    server = None
    try:
        if args.postgres:
            from postgres_server import PostgresServer

            server = PostgresServer()
            server.start()
            db_url = server.create_database("scale")
        else:
            db_url = args.db or str(work / "history.sqlite")
        rng = np.random.default_rng(2026)
        names = hd.names(args.benchmarks, TOPICS)
        levels = Levels(len(names), args.runs, rng)
        if not args.reuse:
            db = store.Store(db_url)
            begin = time.perf_counter()
            batches = synthetic_runs(args.runs - 1, names, levels, rng, 50)
            if db.sqlite:
                for batch in batches:
                    ingest.add(db, batch)
            else:
                fill_by_copy(db, batches)
            print(f"filled {args.runs - 1} runs x {args.benchmarks} benchmarks in "
                  f"{time.perf_counter() - begin:.0f} s", flush=True)
        run_file = _last_run(names, levels, args.runs, rng, work)
        over = measure(db_url, run_file, work)
        if "://" not in db_url:
            print(f"SQLite file: {Path(db_url).stat().st_size / 2**20:.0f} MiB")
        else:
            import psycopg

            with psycopg.connect(db_url.replace("postgresql+psycopg", "postgresql")) as conn:
                size = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
            print(f"PostgreSQL database: {size / 2**20:.0f} MiB")
        pngs = sum(1 for _ in (work / "dash" / "plots").rglob("*.png"))
        print(f"dashboard: {pngs} PNGs, index.html "
              f"{(work / 'dash' / 'index.html').stat().st_size / 2**20:.1f} MiB")
        print("within the targets" if not over else f"over the target: {', '.join(over)}")
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            for item in work.iterdir():
                shutil.move(str(item), args.keep / item.name)
        return 0 if not over else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if server is not None:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
