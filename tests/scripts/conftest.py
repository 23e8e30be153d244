"""Shared helpers for the tests of scripts/tcbench_tools (pytest.ini puts scripts/ on the path).

The result fixtures are made, not stored: tcbench's own C++ writes them from the recipes of
fixtures/gen/ (recipes.py, factory.py) when the session starts, once per version of the
generator and of the built binaries, into the build folder (``<build>/test-fixtures/<hash>/``,
made under a lock, so pytest-xdist's workers share one copy). ``FIXTURES`` is that folder; the
files nobody here made (fixtures/history_real, fixtures/v1: outputs of an older tcbench, kept as
they were written) and the malformed inputs (fixtures/bad) appear in it as links to the checked-in
folders. Tests that need many variations start from a fixture, or build small documents with
factory.document. Test modules import helpers from here only, never from one another.
"""

from __future__ import annotations

import copy
import fcntl
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from tcbench_tools.cli import main
from tcbench_tools.results import TIME_SCALE

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
STORED = HERE / "fixtures"  # checked in: bad/, history_real/, history_schemas/, v1/, ncu/, gen/
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
GENERATOR = STORED / "gen"
sys.path.insert(0, str(GENERATOR))

import factory  # noqa: E402  (fixtures/gen, put on the path above)


def _fixture_bin_dir() -> Path:
    """The bin/ folder whose tcbench_row_probe and tcbench_context write the fixtures:
    $TCBENCH_BUILD_DIR's (CI), else the most recently built build/*/."""
    need = ("tcbench_row_probe", "tcbench_context")
    build = os.environ.get("TCBENCH_BUILD_DIR")
    if build:
        found = [Path(build) / "bin"]
    else:
        found = sorted((p.parent for p in REPO.glob("build/*/bin/tcbench_row_probe")),
                       key=lambda p: p.stat().st_mtime, reverse=True)
    for bin_dir in found:
        if all((bin_dir / tool).is_file() for tool in need):
            return bin_dir
    raise pytest.UsageError(
        "the result fixtures are written by the built tcbench_row_probe and tcbench_context, and "
        + (f"TCBENCH_BUILD_DIR={build} has no bin/{need[0]}" if build else "no build/*/ has them")
        + ": build first (scripts/tcbench test builds and then runs pytest).")


def _generated_fixtures() -> Path:
    """The fixtures of this generator and these binaries, made once (see the docstring)."""
    bin_dir = _fixture_bin_dir()
    digest = hashlib.sha256()
    for path in sorted(GENERATOR.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(GENERATOR).as_posix().encode() + path.read_bytes())
    for tool in ("tcbench_row_probe", "tcbench_context"):
        digest.update((bin_dir / tool).read_bytes())
    root = bin_dir.parent / "test-fixtures"
    out = root / digest.hexdigest()[:16]
    if (out / ".complete").exists():
        return out
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be making them: wait for it
        if not (out / ".complete").exists():
            from recipes import make_all

            tmp = Path(tempfile.mkdtemp(dir=root))
            make_all(bin_dir, tmp)
            for name in ("bad", "history_real", "ncu", "v1", "gen"):
                (tmp / name).symlink_to(STORED / name)
            (tmp / ".complete").write_text("")
            shutil.rmtree(out, ignore_errors=True)
            tmp.rename(out)
    return out


FIXTURES = _generated_fixtures()
factory.use_template(json.loads((FIXTURES / "template.json").read_text()))


def fixture(name: str) -> Path:
    return FIXTURES / name


def load_doc(name: str) -> dict:
    return json.loads(fixture(name).read_text())


def renamed(row: dict, name: str) -> dict:
    """A copy of a result row under another benchmark name (without Google Benchmark's suffixes,
    which the row keeps), with the tcbench_args of that name (none when BenchName cannot build
    it: a hostile or foreign name, as an older file's row)."""
    old = row["run_name"].removesuffix("/manual_time")
    out = {**row, "name": row["name"].replace(old, name, 1),
           "run_name": row["run_name"].replace(old, name, 1)}
    return factory._with_args(out, name)


def with_times(doc: dict, times: dict[str, list[float]]) -> dict:
    """A copy of ``doc`` whose benchmarks named in ``times`` (key without /manual_time) have
    exactly these per-repetition real times (seconds); their aggregate rows are dropped."""
    out = copy.deepcopy(doc)
    rows = []
    done = set()
    for row in out["benchmarks"]:
        key = row["run_name"].removesuffix("/manual_time")
        if key not in times:
            rows.append(row)
            continue
        if row["run_type"] == "aggregate" or key in done:
            continue
        done.add(key)
        for i, seconds in enumerate(times[key]):
            new = dict(row)
            new["repetition_index"] = i
            new["repetitions"] = len(times[key])
            new["real_time"] = seconds / TIME_SCALE[row["time_unit"]]
            rows.append(new)
    missing = set(times) - done
    assert not missing, f"not in the template: {missing}"
    out["benchmarks"] = rows
    return out


def scaled(doc: dict, factor_by_name: dict[str, float]) -> dict:
    """A copy of ``doc`` with the real_time of every row of the named benchmarks multiplied
    (aggregates too, except cv which is scale-free)."""
    out = copy.deepcopy(doc)
    for row in out["benchmarks"]:
        key = row["run_name"].removesuffix("/manual_time")
        if key in factor_by_name and row.get("aggregate_name") != "cv":
            row["real_time"] *= factor_by_name[key]
    return out


def write(tmp_path: Path, name: str, doc: dict) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def noisy(rng: np.random.Generator, center: float, cv: float, n: int) -> list[float]:
    """n log-normal samples with median ``center`` and roughly the given relative spread."""
    return list(center * np.exp(rng.normal(0.0, cv, n)))


@pytest.fixture(autouse=True)
def _gpu_probe_off(monkeypatch):
    """tcbench run asks the driver for a GPU before it builds or runs anything (gpu_probe.py);
    this machine has none, so every test of run with stand-in binaries would take the no-GPU
    path. The tests of that path and of the probe turn it back on (monkeypatch.delenv)."""
    monkeypatch.setenv("TCBENCH_GPU_PROBE", "skip")


@pytest.fixture
def cli(capsys):
    """Run the CLI in-process: returns (exit code, stdout, stderr)."""

    def run(*argv: str) -> tuple[int, str, str]:
        code = main([str(a) for a in argv])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def table_rows(markdown: str, heading: str) -> list[list[str]]:
    """The body rows of the tables under ``heading`` (e.g. ``## Topic: fp8``), up to the next
    heading of the same or a higher level."""
    def level(line: str) -> int:
        return len(line) - len(line.lstrip("#"))

    rows = []
    for line in markdown.split(heading + "\n", 1)[1].splitlines():
        if line.startswith("#") and level(line) <= level(heading):
            break
        if line.startswith("| "):
            rows.append(line)
    return [[c.strip() for c in r.strip("|").split("|")] for r in rows[2:]]  # skip header+rule


# ---------------------------------------------------------------------------------------------
# The built binaries (found like test_schema finds tcbench_context)

def topics() -> list[str]:
    """Every topic: benchmarks/bench_<topic>.cpp is one binary, bench_<topic>."""
    return sorted(p.stem.removeprefix("bench_") for p in (REPO / "benchmarks").glob("bench_*.cpp"))


def built_bin_dir() -> Path:
    """The bin/ folder of $TCBENCH_BUILD_DIR (CI: it must hold every topic binary), else of the
    most recently built build/*/ with tcbench_context; skips when there is none."""
    build = os.environ.get("TCBENCH_BUILD_DIR")
    if build:
        bin_dir = Path(build) / "bin"
        missing = [t for t in topics() if not (bin_dir / f"bench_{t}").is_file()]
        if missing:
            pytest.fail(f"TCBENCH_BUILD_DIR={build} lacks bin/bench_{missing[0]}: the benchmark "
                        "binaries were not built")
        return bin_dir
    found = sorted(REPO.glob("build/*/bin/tcbench_context"), key=lambda p: p.stat().st_mtime,
                   reverse=True)
    for tool in found:
        if all((tool.parent / f"bench_{t}").is_file() for t in topics()):
            return tool.parent
    pytest.skip("no build with every bench_<topic> binary (scripts/tcbench test builds them)")


# ---------------------------------------------------------------------------------------------
# The tools as a separate process

def tcbench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The tools as a separate process (the same interpreter scripts/tcbench execs)."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "scripts"))
    return subprocess.run([sys.executable, "-m", "tcbench_tools", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=120)


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("tcbench: ") and lines[0].endswith(".")
    for needle in needles:
        assert needle in lines[0]


# ---------------------------------------------------------------------------------------------
# Fake benchmark binaries and nvidia-smi (tcbench run without a GPU)

# A fake benchmark binary: records its argv and CUDA_VISIBLE_DEVICES, then writes the benchmarks
# of a fixture whose topic matches its name into --benchmark_out (Google Benchmark's behaviour),
# or behaves as told by MODE.
FAKE = '''#!{python}
import json, os, sys
MODE, TOPIC, SOURCE = {mode!r}, {topic!r}, {source!r}
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, os.path.basename(__file__) + ".argv"), "w") as fh:
    json.dump({{"argv": sys.argv[1:], "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"),
               "order": os.environ.get("CUDA_DEVICE_ORDER")}}, fh)
if MODE == "nogpu":
    print("tcbench: no CUDA device (cudaErrorNoDevice: no CUDA-capable device is detected)",
          file=sys.stderr)
    sys.exit(77)
if MODE == "crash":
    print("starting", flush=True)
    print("tcbench: cublasLtMatmul failed: CUBLAS_STATUS_EXECUTION_FAILED", file=sys.stderr)
    sys.exit(1)
if MODE == "usage":
    print("ERROR: unrecognized command-line flag: --benchmark_bogus", file=sys.stderr)
    sys.exit(2)
if MODE == "slowlist" and "--benchmark_list_tests=true" in sys.argv:
    with open(os.path.join(here, os.path.basename(__file__) + ".pid"), "w") as fh:
        fh.write(str(os.getpid()))
    import time
    time.sleep(120)
if MODE == "sleep" and "--benchmark_list_tests=true" not in sys.argv:
    with open(os.path.join(here, os.path.basename(__file__) + ".pid"), "w") as fh:
        fh.write(str(os.getpid()))
    import time
    time.sleep(120)
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--benchmark_out="))
if MODE == "nomatch":
    open(out, "w").close()
    print("Failed to match any benchmarks against regex: x", file=sys.stderr)
    sys.exit(0)
doc = json.load(open(SOURCE))
doc["benchmarks"] = [b for b in doc["benchmarks"] if b["name"].startswith(TOPIC + "/")]
if MODE == "cut":  # one row finished (its row file says so), then it hangs until stopped
    rows = doc["benchmarks"]
    planned = sorted({{r.get("run_name", r["name"]).removesuffix("/manual_time") for r in rows}})
    planned.append(TOPIC + "/a_case_it_never_reached")
    with open(out + "l", "w") as fh:
        fh.write(json.dumps({{"context": doc["context"], "tcbench_planned": planned}}) + "\\n")
        fh.write(json.dumps(rows[0]) + "\\n")
    open(out, "w").write(json.dumps(doc)[:300])
    import time
    time.sleep(120)
if MODE == "verifyfail":  # every benchmark of the topic fails its check: error rows, exit 1
    for b in doc["benchmarks"]:
        b.update(error_occurred=True, error_message="verification failed: rel_error 0.5 > 0.01")
json.dump(doc, open(out, "w"))
print("console output of", TOPIC)
if MODE == "verifyfail":
    print("bench: 1 benchmark(s) failed; see the messages above.", file=sys.stderr)
    sys.exit(1)
'''


def make_fake(bin_dir: Path, name: str, mode: str = "ok", topic: str = "",
              source: str = "gpu_a.json") -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text(FAKE.format(python=sys.executable, mode=mode, topic=topic,
                                source=str(fixture(source))))
    path.chmod(0o755)
    return path


@pytest.fixture
def fake_nvidia_smi(tmp_path, monkeypatch) -> str:
    """An nvidia-smi on PATH that lists two GPUs (``--device`` is checked against it)."""
    tools = tmp_path / "tools"
    tools.mkdir()
    uuid = "GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"
    smi = tools / "nvidia-smi"
    smi.write_text("#!/bin/sh\n"
                   "echo 'GPU 0: NVIDIA H100 80GB HBM3 "
                   "(UUID: GPU-11111111-2222-3333-4444-555555555555)'\n"
                   f"echo 'GPU 1: NVIDIA H100 80GB HBM3 (UUID: {uuid})'\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    return uuid


# A stand-in cmake on PATH: records each call's argv (one JSON line per call) in CMAKE_CALLS and
# exits with the code FAKE_CMAKE_<STEP> gives (configure: --preset, build: --build), 0 otherwise.
# With FAKE_CMAKE_SLEEP_BUILD set, the build step starts a grandchild (as ninja starts
# compilers) that writes its pid to that file and sleeps.
FAKE_CMAKE = '''#!{python}
import json, os, subprocess, sys, time
with open(os.environ["CMAKE_CALLS"], "a") as fh:
    fh.write(json.dumps(sys.argv[1:]) + "\\n")
step = "BUILD" if "--build" in sys.argv else "CONFIGURE"
pid_file = os.environ.get("FAKE_CMAKE_SLEEP_BUILD")
if step == "BUILD" and pid_file:
    child = subprocess.Popen([sys.executable, "-c",
                              "import os, sys, time; "
                              "open(sys.argv[1], 'w').write(str(os.getpid())); "
                              "time.sleep(120)", pid_file])
    child.wait()
sys.exit(int(os.environ.get("FAKE_CMAKE_" + step, "0")))
'''


@pytest.fixture
def fake_cmake(tmp_path, monkeypatch) -> Path:
    """A cmake on PATH (FAKE_CMAKE above); returns the file its calls are recorded in."""
    tools = tmp_path / "cmake_bin"
    tools.mkdir()
    script = tools / "cmake"
    script.write_text(FAKE_CMAKE.format(python=sys.executable))
    script.chmod(0o755)
    calls = tmp_path / "cmake_calls.jsonl"
    monkeypatch.setenv("CMAKE_CALLS", str(calls))
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    return calls


def cmake_calls(path: Path) -> list[list[str]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# ---------------------------------------------------------------------------------------------
# The GEMM time model's host tool (tcbench_model, built with every preset)

def model_tool() -> Path:
    """tcbench_model of $TCBENCH_BUILD_DIR (CI: it must be there), else of the most recently built
    build/*/bin; skips when there is none."""
    build = os.environ.get("TCBENCH_BUILD_DIR")
    if build:
        tool = Path(build) / "bin" / "tcbench_model"
        if not tool.is_file():
            pytest.fail(f"TCBENCH_BUILD_DIR={build} lacks bin/tcbench_model")
        return tool
    found = sorted(REPO.glob("build/*/bin/tcbench_model"), key=lambda p: p.stat().st_mtime,
                   reverse=True)
    if not found:
        pytest.skip("no build with tcbench_model (scripts/tcbench test builds it)")
    return found[0]


# ---------------------------------------------------------------------------------------------
# A real PostgreSQL server (postgres_server.py), one per test session, for the tests that store
# the same runs in both databases; TCBENCH_REQUIRE_POSTGRES=1 (CI) makes a missing one a failure.

@pytest.fixture(scope="session")
def postgres():
    from postgres_server import PostgresServer, PostgresUnavailable

    try:
        pg = PostgresServer()
        pg.start()
    except PostgresUnavailable as exc:
        if os.environ.get("TCBENCH_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL could not start and TCBENCH_REQUIRE_POSTGRES=1: {exc}")
        pytest.skip(f"no PostgreSQL server: {exc}")
    try:
        yield pg
    finally:
        pg.stop()


@pytest.fixture
def pg_url(postgres) -> str:
    """A fresh, empty database on the session's server."""
    import uuid

    return postgres.create_database(f"t_{uuid.uuid4().hex[:12]}")


def with_fields(doc: dict, name: str, repetition: int | None = None, **fields) -> dict:
    """``doc`` with ``fields`` set on the rows of benchmark ``name`` (one repetition, or all)."""
    for row in doc["benchmarks"]:
        if row["run_name"].removesuffix("/manual_time") == name and (
                repetition is None or row.get("repetition_index") == repetition):
            row.update(fields)
    return doc


def script(bins: Path, name: str, text: str) -> Path:
    bins.mkdir(parents=True, exist_ok=True)
    path = bins / name
    path.write_text(text)
    path.chmod(0o755)
    return path


def bounded(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """The tools as a process that may use at most 2 GiB and ``timeout`` seconds (the unbounded
    reads this guards against grew 2.6 GB in 5 s, or blocked for ever)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    env = dict(os.environ, PYTHONPATH=str(REPO / "scripts"))
    return subprocess.run([sys.executable, "-m", "tcbench_tools", *args], capture_output=True,
                          text=True, env=env, timeout=timeout, preexec_fn=limit)
