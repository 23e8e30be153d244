"""Synthetic run histories for the history tests and the scale benchmark (seeded).

A run document is factory.py's: its rows are copies of rows the C++ wrote (factory.document),
with the wanted per-repetition real times (seconds, written in microseconds) and a tflops
counter; its context is the generated gpu_a.json's, with the GPU, date, git sha and mode of the
run. So what the tests store is what a tcbench binary writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import factory
import numpy as np

from conftest import load_doc

_CONTEXT = load_doc("gpu_a.json")["context"]
START = datetime(2026, 3, 1, 2, 0, tzinfo=timezone.utc)


def run_doc(times: dict[str, list[float]], *, gpu: str = "Fixture GPU A", when: datetime = START,
            git_sha: str = "0123456789ab", quick: bool = False,
            context: dict | None = None, counters: bool = True,
            aggregates: bool = False, synthetic: bool = True) -> dict:
    """One run: for each benchmark name, its repetitions' real times in seconds (and, with
    ``aggregates``, the mean/median/stddev/cv rows Google Benchmark adds after them). The
    template's context carries tcbench_synthetic; ``synthetic=False`` leaves it out (a run that
    passes for a measurement, for the tests of what marks synthetic data)."""
    ctx = dict(_CONTEXT)
    ctx.update({"gpu_name": gpu, "date": when.isoformat(), "git_sha": git_sha,
                "tcbench_quick": "true" if quick else "false",
                "gpu_uuid": f"GPU-{zlib.crc32(gpu.encode()):08x}-0000-0000-0000-000000000000"})
    ctx.update(context or {})
    if not synthetic:
        ctx.pop("tcbench_synthetic", None)
    rows = [factory.Row(name, reps, {"tflops": [1.0e-3 / s for s in reps], "pct_of_peak": 50.0}
                        if counters else {}) for name, reps in times.items()]
    return factory.document(rows, ctx, with_aggregates=aggregates, seconds_unit="us")


def names(count: int, topics: tuple[str, ...] = ("fp16_vs_fp32", "int8_gemm")) -> list[str]:
    """Benchmark names in tcbench's grammar, spread over topics."""
    out = []
    for i in range(count):
        topic = topics[i % len(topics)]
        m = 256 * (1 + i // len(topics))
        out.append(f"{topic}/cublaslt/fp16/m:{m}/n:{m}/k:{m}/layout:nn")
    return out


def noisy(rng: np.random.Generator, level: float, cv: float, reps: int) -> list[float]:
    """``reps`` log-normal repetitions around ``level`` with relative spread ``cv``."""
    return list(level * np.exp(rng.normal(0.0, cv, reps)))


def write_runs(folder: Path, docs: list[dict]) -> list[Path]:
    """Each document as folder/run-NNN.json."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, doc in enumerate(docs):
        path = folder / f"run-{i:04d}.json"
        path.write_text(json.dumps(doc))
        paths.append(path)
    return paths


def step_history(n_runs: int, bench_names: list[str], rng: np.random.Generator, *,
                 steps: dict[str, tuple[int, float]] | None = None, gpu: str = "Fixture GPU A",
                 cv: tuple[float, float] = (0.01, 0.02), reps: int = 5, rep_cv: float = 0.004,
                 start: datetime = START, quick: bool = False,
                 synthetic: bool = True) -> list[dict]:
    """``n_runs`` nightly runs; ``steps[name] = (run index, factor)`` multiplies that benchmark's
    time from that run on. Each benchmark has its own noise, drawn from ``cv``; the run-level
    noise is that drawn from ``cv``; the repetitions of one run spread by ``rep_cv`` around it."""
    steps = steps or {}
    base = {n: 1e-4 * (1 + i % 7) for i, n in enumerate(bench_names)}
    spread = {n: rng.uniform(*cv) for n in bench_names}
    docs = []
    for k in range(n_runs):
        times = {}
        for n in bench_names:
            level = base[n]
            at, factor = steps.get(n, (n_runs + 1, 1.0))
            if k >= at:
                level *= factor
            # Night-to-night noise of the level, then the repetitions' spread around it.
            night = level * float(np.exp(rng.normal(0.0, spread[n])))
            times[n] = noisy(rng, night, rep_cv, reps)
        sha = f"{k:04x}{zlib.crc32(gpu.encode()) & 0xffff:04x}cafe"
        docs.append(run_doc(times, gpu=gpu, when=start + timedelta(days=k), git_sha=sha,
                            quick=quick, synthetic=synthetic))
    return docs


_ADDER = r"""
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from tcbench_tools.cli import main
ready, go, db, files = Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4], sys.argv[5:]
import tcbench_tools.history.ingest, tcbench_tools.history.store  # imports before the start line
ready.touch()
while not go.exists():
    time.sleep(0.005)
codes = [main(["history", "add", f, "--db", db]) for f in files]  # one transaction each
sys.exit(max(codes))
"""


def concurrent_adds(db: str, batches: list[list[Path]], work: Path, repo: Path,
                    timeout: float = 120) -> list[subprocess.CompletedProcess]:
    """One process per batch, each running ``history add FILE --db DB`` for its files in turn
    (a transaction per file); all start at the same moment (they wait for a start file)."""
    go = work / "go"
    procs, readies = [], []
    for i, files in enumerate(batches):
        ready = work / f"ready-{i}"
        readies.append(ready)
        procs.append(subprocess.Popen(
            [sys.executable, "-c", _ADDER, str(repo / "scripts"), str(ready), str(go), db,
             *map(str, files)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + timeout
    while not all(r.exists() for r in readies) and time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break
        time.sleep(0.01)
    go.touch()
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=timeout)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


def free_port() -> int:
    """A localhost TCP port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- real public histories (fixtures/history_real/, README.md there names each source) ----------

REAL = Path(__file__).resolve().parent / "fixtures" / "history_real"


@dataclass
class RealSeries:
    """One series of a public project's test data, with what its source documents: the first
    run of each new level (and how many runs off it may be found), the index ranges [from, to)
    where the source documents no change, and the false changes tcbench is known to report."""

    name: str
    source: str  # repository@commit:path
    values: list[float]
    changes: list[tuple[int, int]]  # (index, tolerance)
    quiet: list[tuple[int, int]]
    known_extra: list[int]


def real_histories() -> list[RealSeries]:
    out = []
    for path in sorted(REAL.glob("*.json")):
        doc = json.loads(path.read_text())
        source = f"{doc['repository']}@{doc['commit'][:12]}:{doc['path']}"
        for metric, part in (doc.get("metrics") or {"": doc}).items():
            out.append(RealSeries(
                path.stem + (f"/{metric}" if metric else ""), source, part["values"],
                [(c["index"], c.get("tolerance", 1)) for c in part["changes"]],
                [(q["from"], q["to"]) for q in part["quiet"]],
                [c["index"] for c in part.get("known_extra", [])]))
    return out


def feature_history(rng: np.random.Generator, synthetic: bool = False) -> tuple[list[dict], list]:
    """40 nightly runs of 6 benchmarks that show each thing the dashboard draws: names[0] a
    +12 % step at run 14; names[1] 15 times slower from run 20 (a log axis); names[2] +9 % at 18
    and +8 % more at 23 (labels side by side); names[3] -10 % at 12; names[4] +2 % at 16 (below
    the floor); names[5] pure noise of +-1 %. The driver is updated from run 32 on."""
    bench = names(6, ("fp16_vs_fp32", "int8_gemm", "alignment"))
    docs = step_history(40, bench, rng, cv=(0.004, 0.01), rep_cv=0.006, synthetic=synthetic,
                        steps={bench[0]: (14, 1.12), bench[3]: (12, 0.9)})
    for k, doc in enumerate(docs):
        for row in doc["benchmarks"]:
            name = row["run_name"].removesuffix("/manual_time")
            factor = {bench[1]: 15.0 if k >= 20 else 1.0,
                      bench[2]: 1.09 * 1.08 if k >= 23 else 1.09 if k >= 18 else 1.0,
                      bench[4]: 1.02 if k >= 16 else 1.0}.get(name, 1.0)
            row["real_time"] *= factor
        if k >= 32:
            doc["context"]["driver_version"] = "14.1"
    return docs, bench


# -- the two classes of false alarm issue 44 names (generated, seeded) ---------------------------

def drift_before_step(rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """A small drift just before a very large step: (median times in seconds, the step's run).
    A level of 20-80 runs; then 3-8 runs that drift by 2-4 % (a step or a ramp), in the
    direction of the large step; then that step, -60 to -90 % (or as large upward: x2.5-x10),
    held 10-60 runs. Noise: 0.1-1 % run to run, or the level before the step 1-2 % and the one
    after 0.1-0.3 % (a 5x faster code path need not be as noisy as the old one). Only the large
    step is a documented change."""
    n0, d, n1 = int(rng.integers(20, 81)), int(rng.integers(3, 9)), int(rng.integers(10, 61))
    down = bool(rng.random() < 0.5)
    step = np.log1p(-rng.uniform(0.6, 0.9)) * (1 if down else -1)
    drift = np.log1p(rng.uniform(0.02, 0.04)) * np.sign(step)
    if rng.random() < 0.3:
        y = np.concatenate([rng.normal(0, rng.uniform(0.01, 0.02), n0 + d),
                            rng.normal(0, rng.uniform(0.001, 0.003), n1)])
    else:
        y = rng.normal(0, rng.uniform(0.001, 0.01), n0 + d + n1)
    ramp = drift * (np.arange(1, d + 1) / d if rng.random() < 0.5 else np.ones(d))
    y[n0:n0 + d] += ramp
    y[n0 + d:] += drift + step
    return 1e-4 * np.exp(y), n0 + d


def turned_bimodal(rng: np.random.Generator) -> np.ndarray:
    """A runner pool that turns bimodal, with no level change: median times in seconds. 20-60
    runs of one level, then 20-80 runs where each run is, with a probability of 10-35 %, a
    single point 40 % low (or 40 % high: the other runner of the pool). Noise 0.3-2 %. No
    documented change."""
    n0, n1 = int(rng.integers(20, 61)), int(rng.integers(20, 81))
    y = rng.normal(0, rng.uniform(0.003, 0.02), n0 + n1)
    other = rng.random(n1) < rng.uniform(0.1, 0.35)
    y[n0:][other] += np.log(0.6 if rng.random() < 0.5 else 1.4)
    return 1e-4 * np.exp(y)
