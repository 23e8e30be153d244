#!/usr/bin/env python3
"""Scale benchmark of ``tcbench history`` (not a test): RUNS runs x BENCHMARKS benchmarks.

    .venv/bin/python tests/perf/history_scale.py [--runs 1000] [--benchmarks 2000] [--db URL]
                                                 [--keep DIR] [--reuse]

Fills a history with RUNS - 1 synthetic nightly runs of one GPU (seeded; 2 % of the series
step by +-8 % somewhere, the others are 1-2 % noise), stored through ``ingest.add`` in batches,
then times the three commands as a user runs them, each a fresh ``scripts/tcbench`` process:

  add        one more run, a Google Benchmark JSON file of BENCHMARKS x 5 repetitions with
             their aggregates and 3 counters (what ``tcbench run --repetitions 5`` writes)
  check      change points in every series
  dashboard  the page and one PNG per series

The targets (issue 22, on the 2-core development machine): add < 2 s, check < 60 s,
dashboard < 120 s. docs/history.md quotes the figures this prints: wall-clock seconds, which
depend on what else the machine runs (the load average is printed), and CPU seconds, which
depend on it much less. Without --db it uses a temporary SQLite file; --db postgresql://...
measures PostgreSQL (an empty database); --reuse times the commands again on a database it
filled before (--keep DIR keeps DIR/history.sqlite).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
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


class Levels:
    """Each benchmark's median time on night k: a base level, 1-2 % night-to-night noise, and
    for 2 % of them a step of +-8 % from a night of their own on."""

    def __init__(self, count: int, runs: int, rng: np.random.Generator):
        self.rng = rng
        self.base = 1e-5 * np.exp(rng.uniform(0, 5, count))  # 10 us .. 1.5 ms
        self.noise = rng.uniform(0.01, 0.02, count)
        self.stepped = rng.random(count) < 0.02
        self.step_at = rng.integers(runs // 10, runs, count)
        self.step = np.where(rng.random(count) < 0.5, 1.08, 1 / 1.08)

    def night(self, k: int) -> np.ndarray:
        level = self.base * np.exp(self.rng.normal(0, self.noise))
        return np.where(self.stepped & (k >= self.step_at), level * self.step, level)


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


def timed(args: list[str], env: dict) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall-clock and CPU seconds (user + system, the process and its children) of a command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    begin = time.perf_counter()
    proc = subprocess.run([str(REPO / "scripts" / "tcbench"), *args], capture_output=True,
                          text=True, env=env)
    wall = time.perf_counter() - begin
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--benchmarks", type=int, default=2000)
    parser.add_argument("--db", help="database URL (default: a temporary SQLite file)")
    parser.add_argument("--keep", type=Path, help="keep the database and dashboard here")
    parser.add_argument("--reuse", action="store_true",
                        help="--db is a history this script filled before: time the commands "
                             "on it again (the run added is one more)")
    args = parser.parse_args()
    if args.reuse and not args.db:
        parser.error("--reuse needs --db")
    work = Path(tempfile.mkdtemp(prefix="tcbench-history-scale-"))
    try:
        db_url = args.db or str(work / "history.sqlite")
        rng = np.random.default_rng(2026)
        names = hd.names(args.benchmarks, TOPICS)
        levels = Levels(len(names), args.runs, rng)
        if not args.reuse:
            db = store.Store(db_url)
            begin = time.perf_counter()
            for batch in synthetic_runs(args.runs - 1, names, levels, rng, 50):
                ingest.add(db, batch)
            print(f"filled {args.runs - 1} runs x {args.benchmarks} benchmarks in "
                  f"{time.perf_counter() - begin:.0f} s")
        night = levels.night(args.runs - 1)
        last = hd.run_doc({n: hd.noisy(rng, t, 0.004, 5) for n, t in zip(names, night)}, gpu=GPU,
                          when=hd.START + timedelta(days=args.runs),
                          git_sha=f"{time.time_ns():016x}"[-12:], aggregates=True)
        run_file = work / "last" / "results.json"
        run_file.parent.mkdir()
        run_file.write_text(json.dumps(last, indent=2))
        size = run_file.stat().st_size / 2**20
        env = {**os.environ, "TCBENCH_HISTORY_DB": db_url}
        figures = {}
        for what, cmd in (("add", ["history", "add", str(run_file)]),
                          ("check", ["history", "check", "--json"]),
                          ("dashboard", ["history", "dashboard", "--out", str(work / "dash")])):
            seconds, cpu, proc = timed(cmd, env)
            figures[what] = seconds
            if proc.returncode not in (0, 1):
                print(f"{what} failed (exit {proc.returncode}): {proc.stderr.strip()}")
                return 1
            note = ""
            if what == "check":
                doc = json.loads(proc.stdout)
                note = (f" ({doc['runs']} runs, {doc['series']} series, "
                        f"{len(doc['change_points'])} change points, exit {proc.returncode})")
            elif what == "add":
                note = f" (a {size:.1f} MiB results.json)"
            print(f"{what}: {seconds:.2f} s wall, {cpu:.2f} s CPU{note}", flush=True)
        print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f} on "
              f"{os.cpu_count()} cores")
        if "://" not in db_url:
            print(f"SQLite file: {Path(db_url).stat().st_size / 2**20:.0f} MiB")
        pngs = sum(1 for _ in (work / "dash" / "plots").rglob("*.png"))
        print(f"dashboard: {pngs} PNGs, index.html "
              f"{(work / 'dash' / 'index.html').stat().st_size / 2**20:.1f} MiB")
        targets = {"add": 2, "check": 60, "dashboard": 120}
        over = [w for w, s in figures.items() if s > targets[w]]
        print("within the targets" if not over else f"over the target: {', '.join(over)}")
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            for item in work.iterdir():
                shutil.move(str(item), args.keep / item.name)
        return 0 if not over else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
