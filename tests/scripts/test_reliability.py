"""Issue 24: impossible values, one GPU per run, nothing skipped in silence, trusted paths, bounded
inputs, output that cannot lie, messages that say the truth; and issue 18's time limit for
``tcbench run`` (--timeout) and its interrupt reaching the build.

Each test below failed on the tools before its fix (checked by running this file against a
checkout of main before the fix: the run, fleet, compare and report cases failed with the
symptom the issue describes; the /dev/zero and FIFO cases ran under the memory limit and
time limit these tests impose, and hit them).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, fixture, load_doc, make_fake, tcbench, with_times, write
from tcbench_tools.fleet.state import PartitionJob, write_manifest

FP16 = "fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096/layout:nn"
INT8 = "int8_gemm/cublaslt/int8/m:4096/n:4096/k:4096/layout:tn"


def summary(out: str) -> str:
    return out.strip().splitlines()[-1]


def row_line(out: str, name: str) -> str:
    return next(ln for ln in out.splitlines() if ln.startswith(name))


def edited(doc: dict, name: str, repetition: int | None = None, **fields) -> dict:
    """``doc`` with ``fields`` set on the rows of benchmark ``name`` (one repetition, or all)."""
    for row in doc["benchmarks"]:
        if row["run_name"].removesuffix("/manual_time") == name and (
                repetition is None or row.get("repetition_index") == repetition):
            row.update(fields)
    return doc


# ---------------------------------------------------------------------------------------------
# 1. Impossible numbers are input errors


def test_a_zero_or_negative_baseline_repetition_no_longer_hides_a_regression(cli, tmp_path):
    """Before: the one bad repetition inflated the noise band to 173 % (357 % for a negative
    time), so a +52 % candidate passed as noise, on every later run of that baseline."""
    template = load_doc("gpu_a.json")
    cand = write(tmp_path, "c.json", with_times(template, {FP16: [1.52e-3] * 5}))
    for bad, shown in ((0.0, "0 ms"), (-1.0e-3, "-1 ms")):  # the fixture is in ms
        base = write(tmp_path, "b.json",
                     with_times(template, {FP16: [1e-3, 1e-3, bad, 1e-3, 1e-3]}))
        code, out, err = cli("compare", base, cand)
        assert code == 2, out
        assert (f"INVALID INPUT (baseline: real_time of repetition 2 is {shown}, outside its "
                "physical range (> 0))") in row_line(out, FP16)
        assert summary(out).startswith("tcbench compare: INPUT ERROR: 1 INVALID INPUT")
        assert "no measurement gives" in err and FP16 in err
    # The candidate side too.
    base = write(tmp_path, "b.json", with_times(template, {FP16: [1e-3] * 5}))
    cand = write(tmp_path, "c.json", with_times(template, {FP16: [1e-3, -2e-3, 1e-3, 1e-3, 1e-3]}))
    code, out, _ = cli("compare", base, cand)
    assert code == 2 and "candidate: real_time of repetition 1 is -2 ms" in row_line(out, FP16)


@pytest.mark.parametrize("field,value,why", [
    ("pct_of_peak", 500.0, "pct_of_peak of repetition 3 is 500, outside its physical range "
                           "(> 0 and <= 200)"),
    ("rel_error", -0.25, "rel_error of repetition 3 is -0.25, outside its physical range (>= 0)"),
    ("tflops", -159.8, "tflops of repetition 3 is -159.8, outside its physical range (> 0)"),
    ("tflops", 0.0, "tflops of repetition 3 is 0, outside its physical range (> 0)"),
    ("temp_c_max", 400.0, "temp_c_max of repetition 3 is 400"),
])
def test_any_counter_outside_its_range_is_invalid_input_when_time_is_compared(cli, tmp_path,
                                                                              field, value,
                                                                              why):
    """Before: only the compared metric (time) was checked; the impossible counter passed."""
    bad = write(tmp_path, "bad.json", edited(load_doc("gpu_a.json"), FP16, 3, **{field: value}))
    code, out, _ = cli("compare", fixture("gpu_a.json"), bad)
    assert code == 2, out
    assert f"INVALID INPUT (candidate: {why}" in row_line(out, FP16)


def test_the_report_leaves_out_and_lists_a_benchmark_with_an_impossible_value(cli, tmp_path):
    """Before: a benchmark whose rel_error was negative stayed in every table (and a negative
    tflops in the aggregates of a file without repetitions became a card's best)."""
    doc = edited(load_doc("gpu_a.json"), FP16, 1, rel_error=-0.5)
    code, _, err = cli("report", write(tmp_path, "bad.json", doc), "--out", tmp_path / "rep")
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    assert (f"| Fixture GPU A | INVALID | {FP16} | rel_error of repetition 1 is -0.5, outside "
            "its physical range (>= 0) (left out) |") in md
    body = md.split("## Skipped and failed")[0]
    assert FP16 not in body  # in no table, no plot, no best-of
    # An aggregates-only file: the median row is checked like a repetition.
    agg = load_doc("gpu_a_aggregates.json")
    for row in agg["benchmarks"]:
        if row["run_name"].startswith("fp16_vs_fp32/cublaslt/fp16/") and row.get(
                "aggregate_name") in ("median", "mean"):
            row["tflops"] = -159.8
    code, _, err = cli("report", write(tmp_path, "agg.json", agg), "--out", tmp_path / "rep2")
    assert code == 0, err
    md = (tmp_path / "rep2" / "report.md").read_text()
    assert "-159.8" not in md.split("## Skipped and failed")[0]
    assert "tflops of the median aggregate is -159.8" in md


@pytest.mark.parametrize("field,value,words", [
    ("error_occurred", "false", 'has error_occurred "false", which must be true or false'),
    ("error_occurred", 0, "has error_occurred 0, which must be true or false"),
    ("skipped", "yes", 'has skipped "yes", which must be true or false'),
    ("repetition_index", "2", 'has repetition_index "2", which must be a whole number'),
    ("run_type", "iter", 'has run_type "iter", which must be "iteration" or "aggregate"'),
    ("error_message", 5, "has error_message 5, which must be a string"),
])
def test_a_field_of_the_wrong_json_type_is_an_input_error(tmp_path, field, value, words):
    """Before: "error_occurred": "false" read as a failure (exit 1), 0 as a success."""
    doc = load_doc("gpu_a.json")
    doc["benchmarks"][0][field] = value
    proc = tcbench("compare", str(fixture("gpu_a.json")), str(write(tmp_path, "t.json", doc)))
    assert proc.returncode == 2, proc.stdout
    line = proc.stderr.strip()
    assert line.startswith("tcbench: ") and words in line and "entry 0 of 'benchmarks'" in line


def test_a_context_key_of_tcbench_with_the_wrong_type_is_an_input_error(tmp_path):
    """A tcbench_lost_binaries that is not a string read as "no binary lost"."""
    doc = load_doc("gpu_a.json")
    doc["context"]["tcbench_lost_binaries"] = ["bench_int8_gemm"]
    proc = tcbench("compare", str(fixture("gpu_a.json")), str(write(tmp_path, "t.json", doc)))
    assert proc.returncode == 2
    assert "the context's tcbench_lost_binaries is [\"bench_int8_gemm\"], which must be a string" \
        in proc.stderr


def host_studies_file(tmp_path: Path) -> Path:
    """A result file of tcbench_studies (the host studies: context tcbench_kind host-studies,
    real_time = the study's wall time per row), from the build when there is one."""
    build = os.environ.get("TCBENCH_BUILD_DIR")
    tools = [Path(build) / "bin" / "tcbench_studies"] if build else \
        sorted(REPO.glob("build/*/bin/tcbench_studies"), key=lambda p: p.stat().st_mtime)[-1:]
    if not tools or not tools[0].is_file():
        pytest.skip("no build with tcbench_studies (scripts/tcbench test builds one)")
    out = tmp_path / "studies.json"
    subprocess.run([str(tools[0]), "--study", "alignment", "--study", "fp8", "--out", str(out)],
                   check=True, capture_output=True, timeout=300)
    assert json.loads(out.read_text())["context"]["tcbench_kind"] == "host-studies"
    return out


def test_the_host_studies_load_compare_and_report_without_a_single_invalid_row(cli, tmp_path):
    studies = host_studies_file(tmp_path)
    code, out, err = cli("compare", studies, studies)
    assert code == 0, out + err
    assert "INVALID" not in out
    code, _, err = cli("report", studies, "--out", tmp_path / "rep")
    assert code == 0, err
    assert "INVALID" not in (tmp_path / "rep" / "report.md").read_text()


# ---------------------------------------------------------------------------------------------
# 2. One run, one GPU


def test_a_run_whose_binaries_saw_different_gpus_is_refused_naming_both(cli, tmp_path):
    """Before: merged under the first binary's gpu_name, exit 0, and compare passed."""
    bins = tmp_path / "bin"
    make_fake(bins, "bench_fp16_vs_fp32", topic="fp16_vs_fp32", source="gpu_a.json")
    make_fake(bins, "bench_int8_gemm", topic="int8_gemm", source="gpu_b.json")
    a, b = (load_doc(f)["context"]["gpu_name"] for f in ("gpu_a.json", "gpu_b.json"))
    out = tmp_path / "out"
    code, stdout, err = cli("run", "--bin-dir", bins, "--out", out)
    assert code == 1, stdout + err
    line = err.strip().splitlines()[-1]
    assert line.startswith("tcbench: the binaries of this run saw different GPUs (gpu_name")
    assert f"bench_fp16_vs_fp32 ran on {a!r}" in line and f"bench_int8_gemm on {b!r}" in line
    assert "no results.json was written" in line
    assert not (out / "results.json").exists()


# ---------------------------------------------------------------------------------------------
# 3. Nothing is skipped in silence; 0 means "ran"


def test_a_binary_that_is_not_executable_or_a_dangling_link_is_named_and_fails_the_run(cli,
                                                                                      tmp_path):
    """Before: both were left out without a word and the run exited 0."""
    bins = tmp_path / "bin"
    make_fake(bins, "bench_fp16_vs_fp32", topic="fp16_vs_fp32")
    make_fake(bins, "bench_int8_gemm", topic="int8_gemm").chmod(0o644)  # an artifact download
    (bins / "bench_loss_scaling").symlink_to(bins / "gone" / "bench_loss_scaling")
    out = tmp_path / "out"
    code, stdout, err = cli("run", "--bin-dir", bins, "--out", out)
    assert code == 1, stdout + err
    assert "bench_int8_gemm: FAILED (exit 126: it is not executable (mode 644" in stdout
    assert "bench_loss_scaling: FAILED (exit 127: it is a dangling symbolic link (to " in stdout
    assert "tcbench run: failed: 2 of 3 binaries" in err
    context = json.loads((out / "results.json").read_text())["context"]
    assert context["tcbench_lost_binaries"] == "bench_int8_gemm,bench_loss_scaling"
    code, cmp_out, _ = cli("compare", fixture("gpu_a.json"), out)
    assert code == 1
    assert "binary bench_int8_gemm failed in the candidate run without usable results (exit 126)" \
        in cmp_out


FAKE_EMPTY = '''#!{python}
import json, sys
if "--benchmark_list_tests=true" in sys.argv:
    sys.exit(1)
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--benchmark_out="))
doc = json.load(open({source!r}))
doc["benchmarks"] = {rows}
json.dump(doc, open(out, "w"))
'''


def script(bins: Path, name: str, text: str) -> Path:
    bins.mkdir(parents=True, exist_ok=True)
    path = bins / name
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_a_binary_whose_json_has_no_usable_rows_is_lost(cli, tmp_path):
    """Before: exit 0 (an empty benchmarks list merged as nothing, said nowhere)."""
    bins = tmp_path / "bin"
    make_fake(bins, "bench_fp16_vs_fp32", topic="fp16_vs_fp32")
    script(bins, "bench_int8_gemm", FAKE_EMPTY.format(python=sys.executable, rows="[]",
                                                      source=str(fixture("gpu_a.json"))))
    out = tmp_path / "out"
    code, stdout, err = cli("run", "--bin-dir", bins, "--out", out)
    assert code == 1, stdout + err
    assert ("binary bench_int8_gemm FAILED (exit 0): its JSON output is unusable" in stdout
            and "holds no benchmarks" in stdout)
    context = json.loads((out / "results.json").read_text())["context"]
    assert context["tcbench_lost_binaries"] == "bench_int8_gemm"


def test_a_merged_file_that_cannot_be_read_back_fails_the_run(cli, tmp_path):
    """Two binaries writing the same benchmark: each file is fine, the merge holds it twice.
    Before: "(no summary: ...)" and exit 0."""
    bins = tmp_path / "bin"
    make_fake(bins, "bench_a", topic="int8_gemm")
    make_fake(bins, "bench_b", topic="int8_gemm")
    code, stdout, err = cli("run", "--bin-dir", bins, "--out", tmp_path / "out")
    assert code == 1, stdout + err
    assert "the merged file cannot be read back" in stdout
    assert "cannot be read back" in err and "compare would lose every binary's results" in err


FAKE_KILLED = '''#!{python}
import json, os, signal, sys
if "--benchmark_list_tests=true" in sys.argv:
    print("int8_gemm/cublaslt/int8/m:4096/n:4096/k:4096/layout:tn/manual_time")
    print("int8_gemm/cublaslt/int8/m:8192/n:8192/k:8192/layout:tn/manual_time")
    sys.exit(0)
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--benchmark_out="))
doc = json.load(open({source!r}))
doc["benchmarks"] = [b for b in doc["benchmarks"] if b["name"].startswith("int8_gemm/")]
json.dump(doc, open(out, "w"))
print("int8_gemm/cublaslt/int8/m:4096/n:4096/k:4096/layout:tn/manual_time  1.2 ms  1.2 ms  5",
      flush=True)
os.kill(os.getpid(), signal.SIGKILL)
'''


def test_a_sigkilled_binary_is_said_to_be_killed_and_its_rows_are_kept_marked(cli, tmp_path):
    """Before: its last stdout line (a result row) was the reason, and its complete JSON was
    merged as if it had finished. Then its rows were dropped. Now they are kept, marked cut
    short (one policy for every mode), and the run still fails."""
    bins = tmp_path / "bin"
    make_fake(bins, "bench_fp16_vs_fp32", topic="fp16_vs_fp32")
    script(bins, "bench_int8_gemm", FAKE_KILLED.format(python=sys.executable,
                                                       source=str(fixture("gpu_a.json"))))
    out = tmp_path / "out"
    code, stdout, err = cli("run", "--bin-dir", bins, "--out", out)
    assert code == 1
    assert "bench_int8_gemm: FAILED (killed by signal 9 (SIGKILL); last output: int8_gemm/" \
        in stdout
    assert "binary bench_int8_gemm FAILED: killed by signal 9 (SIGKILL)" in stdout
    assert "its finished rows are kept, marked cut short" in stdout
    assert "tcbench run: failed: 1 of 2 binaries, 0 benchmarks." in err.strip().splitlines()
    merged = json.loads((out / "results.json").read_text())
    assert any(r["name"].startswith("int8_gemm/") for r in merged["benchmarks"])
    assert "tcbench_lost_binaries" not in merged["context"]
    assert merged["context"]["tcbench_failed_binaries"] == "bench_int8_gemm:-9"
    assert merged["context"]["tcbench_cut_short"].startswith(
        "bench_int8_gemm.json was written by a binary then killed by signal 9 (SIGKILL)")
    code, cmp_out, _ = cli("compare", fixture("gpu_a.json"), out)
    assert code == 1 and "the candidate was cut short (bench_int8_gemm.json was written by a " \
        "binary then killed by signal 9 (SIGKILL)" in cmp_out


FAKE_HANGS = '''#!{python}
import os, subprocess, sys, time
if "--benchmark_list_tests=true" in sys.argv:
    sys.exit(1)
here = os.path.dirname(os.path.abspath(__file__))
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
open(os.path.join(here, "hang.pids"), "w").write(f"{{os.getpid()}} {{child.pid}}")
print("fp8/cublaslt/fp8/m:4096/n:4096/k:4096/layout:tn  still warming up", flush=True)
time.sleep(300)
'''


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return True


def test_a_binary_past_its_time_limit_is_stopped_with_its_group_and_the_run_goes_on(cli,
                                                                                  tmp_path):
    """Before: no --timeout (exit 2, unknown option), and nothing bounded a hanging binary."""
    bins = tmp_path / "bin"
    script(bins, "bench_a_hangs", FAKE_HANGS.format(python=sys.executable))
    make_fake(bins, "bench_b_int8_gemm", topic="int8_gemm")
    out = tmp_path / "out"
    begin = time.monotonic()
    code, stdout, err = cli("run", "--bin-dir", bins, "--out", out, "--timeout", "2")
    assert time.monotonic() - begin < 60
    pids = [int(p) for p in (bins / "hang.pids").read_text().split()]
    try:
        assert code == 1, stdout + err
        assert ("bench_a_hangs: FAILED (TIMEOUT: still running after 2 s (--timeout), stopped "
                "with its process group; last output: fp8/cublaslt/fp8/m:4096/n:4096/k:4096/"
                "layout:tn  still warming up)") in stdout
        assert "[2/2] bench_b_int8_gemm: done" in stdout
        assert not any(_alive(p) for p in pids), "the binary or its child was left running"
        context = json.loads((out / "results.json").read_text())["context"]
        assert context["tcbench_failed_binaries"] == "bench_a_hangs:timeout"
        assert context["tcbench_lost_binaries"] == "bench_a_hangs"
        code, cmp_out, _ = cli("compare", fixture("gpu_a.json"), out)
        assert code == 1 and "(stopped at its time limit (--timeout))" in cmp_out
    finally:
        for p in pids:
            if _alive(p):
                os.kill(p, signal.SIGKILL)


def test_the_default_time_limit_follows_quick_and_repetitions():
    from tcbench_tools import runner

    assert runner.default_timeout(True, None) == 900
    assert runner.default_timeout(False, None) == 7200
    assert runner.default_timeout(True, 5) == 4500
    opts = runner.RunOptions(out_dir=Path("."), quick=True, timeout=30.0)
    assert opts.time_limit() == 30.0


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_during_the_build_stops_the_build_and_what_it_started(tmp_path, fake_cmake,
                                                                           sig, code):
    """Before: ninja (here the stand-in cmake's child) kept compiling after run exited."""
    shutil.copy(REPO / "CMakePresets.json", tmp_path / "CMakePresets.json")
    pid_file = tmp_path / "compiler.pid"
    env = dict(os.environ, PYTHONPATH=str(REPO / "scripts"), TCBENCH_REPO=str(tmp_path),
               FAKE_CMAKE_SLEEP_BUILD=str(pid_file))
    proc = subprocess.Popen([sys.executable, "-m", "tcbench_tools", "run", "--out",
                             str(tmp_path / "o")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pid_file.exists(), "the build never started its compiler"
    time.sleep(0.3)
    compiler = int(pid_file.read_text())
    proc.send_signal(sig)  # to tcbench alone, as CI cancellation does
    try:
        _, stderr = proc.communicate(timeout=60)
        time.sleep(0.2)
        assert proc.returncode == code, stderr
        assert not _alive(compiler), "the build's compiler was left running"
        assert stderr.strip().splitlines()[-1] == (
            f"tcbench: interrupted by {signal.Signals(sig).name} during the build step: "
            "nothing was run.")
    finally:
        if _alive(compiler):
            os.kill(compiler, signal.SIGKILL)


# ---------------------------------------------------------------------------------------------
# 4. Paths and manifests are not trusted


@pytest.fixture
def empty_queue(tmp_path, monkeypatch):
    """An squeue on PATH that lists no task (every task of the tests recorded its exit)."""
    tools = tmp_path / "slurm_bin"
    tools.mkdir()
    (tools / "squeue").write_text("#!/bin/sh\nexit 0\n")
    (tools / "squeue").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")


def fleet_with_task(root: Path, folder: str) -> None:
    (root / "_fleet" / "tasks").mkdir(parents=True)
    (root / "_fleet" / "logs").mkdir()
    write_manifest(root, [PartitionJob("a100", "41", 1)], {"submitted": "2026-01-01"})
    (root / "_fleet" / "tasks" / "41_0").write_text(
        f"partition=a100\nnode=gpu-a-01\ngpu=0\ngpu_name=\nfolder={folder}\nexit=0\n")


@pytest.mark.parametrize("folder", ["../outside", "/ABS", "a100/link-out", ""])
def test_collect_reads_no_task_folder_outside_the_fleet_folder(cli, tmp_path, empty_queue,
                                                              folder):
    """Before: folder=../outside (or an absolute path) was followed, and any results.json on the
    machine was reported under that task's GPU."""
    outside = tmp_path / "outside"
    outside.mkdir()
    doc = load_doc("gpu_b.json")
    write(outside, "results.json", doc)
    root = tmp_path / "fleet"
    if folder == "/ABS":
        folder = str(outside)
    if folder == "a100/link-out":
        (root / "a100").mkdir(parents=True)
        (root / "a100" / "link-out").symlink_to(outside)
    fleet_with_task(root, folder)
    code, out, err = cli("fleet", "collect", root)
    assert code == 1, out + err
    assert "task 41_0 (partition a100, node gpu-a-01) failed: its record names the results " \
           f"folder {folder!r}" in err
    assert "no file outside it is read" in err
    assert not (root / "report" / "report.md").exists() or \
        doc["context"]["gpu_name"] not in (root / "report" / "report.md").read_text()


def test_collect_refuses_a_results_file_that_links_out_of_the_fleet_folder(cli, tmp_path,
                                                                           empty_queue):
    secret = tmp_path / "elsewhere.json"
    write(tmp_path, "elsewhere.json", load_doc("gpu_b.json"))
    root = tmp_path / "fleet"
    (root / "a100" / "gpu-a-01-0").mkdir(parents=True)
    (root / "a100" / "gpu-a-01-0" / "results.json").symlink_to(secret)
    fleet_with_task(root, "a100/gpu-a-01-0")
    code, _, err = cli("fleet", "collect", root)
    assert code == 1 and "leads outside the fleet folder" in err


@pytest.mark.parametrize("edit,words", [
    (lambda d: d.update(settings=["quick"]), 'settings is ["quick"], not an object'),
    (lambda d: d["jobs"][0].update(tasks=-3), "tasks -3 must be a whole number from 1 to 1000"),
    (lambda d: d["jobs"][0].update(tasks=10 ** 12), "tasks 1000000000000 must be a whole number"),
    (lambda d: d["jobs"][0].update(tasks=True), "tasks true must be a whole number"),
    (lambda d: d["jobs"][0].update(job_id="../41"), 'job_id "../41" is not a Slurm job id'),
    (lambda d: d["jobs"][0].update(partition="a b"), 'partition "a b" is not a Slurm partition'),
    (lambda d: d.update(jobs={"a": 1}), "jobs must be a list of 1 to 100 partition jobs"),
    (lambda d: d["settings"].update(quick="yes"), 'settings.quick is "yes", which must be bool'),
    (lambda d: d.update(version="1"), 'version "1"; this tcbench reads version 1'),
])
def test_every_manifest_field_is_checked_in_one_sentence(tmp_path, edit, words):
    """Before: a list of settings ended in an internal error (exit 70), tasks: -3 read as 0
    tasks and tasks: 10^12 stalled status."""
    root = tmp_path / "fleet"
    (root / "_fleet").mkdir(parents=True)
    write_manifest(root, [PartitionJob("a100", "41", 2)], {"quick": True})
    path = root / "_fleet" / "manifest.json"
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    for action in ("status", "collect"):
        proc = tcbench("fleet", action, str(root))
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and words in proc.stderr, proc.stderr


# ---------------------------------------------------------------------------------------------
# 5. Bounded inputs


def bounded(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """The tools as a process that may use at most 2 GiB and ``timeout`` seconds (the unbounded
    reads this guards against grew 2.6 GB in 5 s, or blocked for ever)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    env = dict(os.environ, PYTHONPATH=str(REPO / "scripts"))
    return subprocess.run([sys.executable, "-m", "tcbench_tools", *args], capture_output=True,
                          text=True, env=env, timeout=timeout, preexec_fn=limit)


def test_a_device_a_fifo_or_a_huge_file_is_refused_at_once(tmp_path):
    good = str(fixture("gpu_a.json"))
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as fh:
        fh.truncate(300 << 20)  # sparse: no disk used
    for bad, words in (("/dev/zero", "/dev/zero is a character device, not a regular result "
                                     "file"),
                       (str(fifo), "is a FIFO (named pipe), not a regular result file"),
                       (str(huge), "is 300.0 MiB, more than the 256 MiB a result file may be")):
        for args in (("compare", good, bad), ("report", bad, "--out", str(tmp_path / "r"))):
            begin = time.monotonic()
            proc = bounded(*args)
            assert time.monotonic() - begin < 30
            assert proc.returncode == 2, (args, proc.stderr)
            assert words in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


def test_a_config_that_is_not_a_regular_file_or_too_big_is_refused(tmp_path):
    good = str(fixture("gpu_a.json"))
    fifo = tmp_path / "gate.toml"
    os.mkfifo(fifo)
    proc = bounded("compare", good, good, "--config", str(fifo))
    assert proc.returncode == 2 and \
        "is a FIFO (named pipe), not a regular config file" in proc.stderr
    proc = bounded("compare", good, good, "--config", "/dev/zero")
    assert proc.returncode == 2 and "character device" in proc.stderr


@pytest.mark.parametrize("regex,words", [
    ("(a+)+$", "applies a quantifier to a group that holds a quantifier or an alternation"),
    ("(.|x)*z", "applies a quantifier to a group"),
    (".*.*.*x", "holds 3 unbounded quantifiers"),
    ("(a)\\1", "backreference"),
])
def test_a_threshold_regex_that_could_backtrack_for_ever_is_refused(tmp_path, regex, words):
    """A neighbour of the --benchmark_filter class: compare searches every benchmark name with
    each threshold pattern (Python's re backtracks too: ".*.*.*.*x" took 93 s over 2000 names)."""
    config = write(tmp_path, "gate.json", {"thresholds": {regex: 5}})
    proc = bounded("compare", str(fixture("gpu_a.json")), str(fixture("gpu_a.json")), "--config",
                   str(config))
    assert proc.returncode == 2 and words in proc.stderr and "is refused" in proc.stderr
    ok = write(tmp_path, "ok.json", {"thresholds": {"^alignment/.*k:4095": 5,
                                                   "cublaslt/(fp16|bf16)/m:4096": 8}})
    assert bounded("compare", str(fixture("gpu_a.json")), str(fixture("gpu_a.json")),
                   "--config", str(ok)).returncode == 0


# ---------------------------------------------------------------------------------------------
# 6. Output that cannot lie


FAKE_PASS = "\x1b[2K\r\x1b[32mtcbench compare: PASS: 18 unchanged.\x1b[0m"


def test_no_control_character_of_a_results_file_reaches_a_terminal_or_markdown(cli, tmp_path):
    """Before: the escape sequences were printed raw, erasing the line and painting a PASS."""
    doc = load_doc("gpu_a.json")
    evil = f"{FP16}{FAKE_PASS}\n## PASS"
    for row in doc["benchmarks"]:
        if row["run_name"].startswith(FP16):
            row["run_name"] = row["run_name"].replace(FP16, evil)
            row["name"] = row["name"].replace(FP16, evil)
            row.pop("tcbench_args", None)  # a name BenchName cannot build: an older file's row
    doc["context"]["gpu_name"] = "GPU\x1b]0;owned\x07\u202eA"
    doc["benchmarks"][-1].update(error_occurred=True, error_message="verification failed\r"
                                                                    "\x1b[32mPASS")
    bad = write(tmp_path, "evil.json", doc)
    md = tmp_path / "summary.md"
    code, out, err = cli("compare", fixture("gpu_a.json"), bad, "--markdown", md)
    assert code == 1
    for text in (out, err, md.read_text()):
        assert "\x1b" not in text and "\r" not in text and "\u202e" not in text
        assert not any(line.startswith(("tcbench compare: PASS", "## PASS"))
                       for line in text.splitlines())
    assert "\\x1b[2K\\r\\x1b[32mtcbench compare: PASS" in out  # visible, escaped
    code, _, err = cli("report", bad, "--out", tmp_path / "rep")
    assert code == 0, err
    for name in ("report.md", "report.html"):
        text = (tmp_path / "rep" / name).read_text()
        assert "\x1b" not in text and "\r" not in text and "\u202e" not in text
        assert "\n## PASS" not in text


def test_an_error_message_naming_a_hostile_name_is_escaped(tmp_path):
    doc = load_doc("gpu_a.json")
    doc["benchmarks"][1]["name"] = "x\x1b[2K\rtcbench compare: PASS"
    doc["benchmarks"][1]["repetition_index"] = "1"
    proc = tcbench("compare", str(fixture("gpu_a.json")), str(write(tmp_path, "e.json", doc)))
    assert proc.returncode == 2
    assert "\x1b" not in proc.stderr and "\r" not in proc.stderr and "\\x1b[2K" in proc.stderr


def test_a_binary_message_and_a_fleet_record_are_printed_escaped(cli, tmp_path, empty_queue):
    bins = tmp_path / "bin"
    script(bins, "bench_int8_gemm", f"#!{sys.executable}\nimport sys\n"
           "print('tcbench: failed\\x1b[2K\\rPASS', file=sys.stderr)\nsys.exit(1)\n")
    code, out, err = cli("run", "--bin-dir", bins, "--out", tmp_path / "o")
    assert code == 1 and "\x1b" not in out + err and "failed\\x1b[2K\\rPASS" in out
    root = tmp_path / "fleet"
    fleet_with_task(root, "a100/gpu-a-01-0")
    marker = root / "_fleet" / "tasks" / "41_0"
    marker.write_text(marker.read_text().replace("node=gpu-a-01", "node=gpu\x1b[31m-a-01"))
    code, out, err = cli("fleet", "status", root)
    assert "\x1b" not in out + err and "gpu\\x1b[31m-a-01" in out


# ---------------------------------------------------------------------------------------------
# 7. Messages that say the truth


def test_a_symbolic_link_loop_is_called_one(tmp_path):
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    proc = tcbench("compare", str(fixture("gpu_a.json")), str(loop))
    assert proc.returncode == 2
    assert "is a symbolic link loop" in proc.stderr and "no such file" not in proc.stderr
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "gone.json")
    proc = tcbench("compare", str(fixture("gpu_a.json")), str(dangling))
    assert proc.returncode == 2 and "is a dangling symbolic link" in proc.stderr


def test_a_config_named_toml_in_capitals_is_read_as_toml(tmp_path):
    config = tmp_path / "THRESHOLDS.TOML"
    config.write_text("default = 7\n")
    proc = tcbench("compare", str(fixture("gpu_a.json")), str(fixture("gpu_a.json")), "--config",
                   str(config))
    assert proc.returncode == 0, proc.stderr
    assert "7.0%" in proc.stdout


def test_a_regression_stays_exit_1_when_the_markdown_cannot_be_written(cli, tmp_path):
    template = load_doc("gpu_a.json")
    base = write(tmp_path, "b.json", with_times(template, {FP16: [1.0e-3] * 5}))
    slow = write(tmp_path, "c.json", with_times(template, {FP16: [1.5e-3] * 5}))
    unwritable = tmp_path / "no-such-folder" / "summary.md"
    code, out, err = cli("compare", base, slow, "--markdown", unwritable)
    assert code == 1, err  # before: 2, the regression hidden behind the write failure
    assert "REGRESSED" in out
    assert f"cannot write the Markdown summary {unwritable}: No such file or directory; the " \
           "verdict stands: FAIL (exit 1)." in err
    code, _, err = cli("compare", base, base, "--markdown", unwritable)
    assert code == 2 and "the comparison passed, but its summary is lost" in err


def test_the_wrapper_names_an_interpreter_this_user_cannot_execute(tmp_path):
    """Before: "is the checkout read-only?" when the venv's python was not executable."""
    import hashlib

    repo = tmp_path / "checkout"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "tcbench", repo / "scripts" / "tcbench")
    shutil.copy(REPO / "scripts" / "requirements.txt", repo / "scripts" / "requirements.txt")
    venv_bin = repo / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text("#!/bin/sh\nexit 0\n")
    (venv_bin / "python").chmod(0o644)  # what another user's umask or a copy leaves
    digest = hashlib.sha256((repo / "scripts" / "requirements.txt").read_bytes()).hexdigest()
    (repo / ".venv" / ".tcbench-requirements.sha256").write_text(digest + "\n")
    proc = subprocess.run([str(repo / "scripts" / "tcbench"), "--version"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    assert "read-only" not in proc.stderr
    assert f"{venv_bin / 'python'} is not executable by" in proc.stderr


def test_the_wrapper_refuses_an_unknown_python_env_mode():
    proc = subprocess.run([str(REPO / "scripts" / "tcbench"), "--version"], capture_output=True,
                          text=True, timeout=60, env=dict(os.environ, TCBENCH_PYTHON_ENV="sytem"))
    assert proc.returncode == 2
    assert "TCBENCH_PYTHON_ENV='sytem' is neither venv nor system" in proc.stderr


def test_a_hung_host_studies_tool_is_stopped_at_its_limit_not_waited_for(tmp_path, monkeypatch):
    """Before: tcbench_studies ran under subprocess.call without a limit, so a hung study hung
    `tcbench run` after all its measurements (and on a machine without a GPU, for ever)."""
    from tcbench_tools import studies
    from tcbench_tools.errors import InputError

    pid_file = tmp_path / "studies.pid"
    tool = tmp_path / "tcbench_studies"
    tool.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 300\n")
    tool.chmod(0o755)
    monkeypatch.setattr(studies, "STUDIES_TIMEOUT", 1.0)
    monkeypatch.setattr("tcbench_tools.process.TIMEOUT_GRACE", 1.0)
    begin = time.monotonic()
    with pytest.raises(InputError, match="still running after 1 s and was stopped with its "
                                         "process group: no host studies"):
        studies.run_studies(tool, tmp_path / "out")
    assert time.monotonic() - begin < 30
    assert not _alive(int(pid_file.read_text()))
    assert not (tmp_path / "out" / "studies.json").exists()


def test_a_host_studies_tool_killed_by_a_signal_says_so(tmp_path):
    from tcbench_tools import studies
    from tcbench_tools.errors import InputError

    tool = tmp_path / "tcbench_studies"
    tool.write_text("#!/bin/sh\nkill -KILL $$\n")
    tool.chmod(0o755)
    with pytest.raises(InputError, match=r"tcbench_studies failed \(killed by signal 9 "
                                         r"\(SIGKILL\)\)"):
        studies.run_studies(tool, tmp_path / "out")


def test_a_gpu_probe_setting_that_is_neither_on_nor_off_is_a_usage_error(cli, tmp_path,
                                                                         monkeypatch):
    """Before: TCBENCH_GPU_PROBE=skpi (any value but skip, off, 0) silently probed."""
    from tcbench_tools import gpu_probe

    monkeypatch.setenv("TCBENCH_GPU_PROBE", "skpi")
    code, out, err = cli("run", "--no-build", "--bin-dir", tmp_path, "--out", tmp_path / "o")
    assert code == 2 and out == ""
    assert err.strip() == ("tcbench: TCBENCH_GPU_PROBE='skpi' is neither on nor off (it takes "
                           "skip, off, 0, no to skip the probe, or on, 1, yes or nothing to "
                           "probe).")
    assert gpu_probe.main() == 2
    for value in ("skip", "OFF", "no"):
        monkeypatch.setenv("TCBENCH_GPU_PROBE", value)
        assert gpu_probe.probe().state == gpu_probe.SKIPPED


def test_the_progress_count_reads_a_bounded_part_of_a_flooding_binarys_log(tmp_path,
                                                                          monkeypatch):
    """Before: every 0.5 s tick read the whole stdout log, so a binary that floods its stdout
    made tcbench read gigabytes per tick."""
    from tcbench_tools import runner

    monkeypatch.setattr(runner, "PROGRESS_LOG_LIMIT", 4096)
    log = tmp_path / "bench_x.stdout.log"
    log.write_text(f"{FP16}/manual_time 1.0 ms\n" + "x" * 8192 + f"\n{INT8}/manual_time 1.0 ms\n")
    assert runner.finished_benchmarks(log, {FP16, INT8}) == 1
