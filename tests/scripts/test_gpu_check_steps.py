"""scripts/gpu_check.sh's step machinery on a stand-in GPU box: no build, no GPU.

A bundle is faked in a temporary folder (MANIFEST.txt, bin/ with stand-in binaries, scripts/ from
this checkout) and its gpu_check.sh runs with a stand-in nvidia-smi. Each test gives the check a
binary that misbehaves the way a first GPU run can (hangs, dies by SIGSEGV, or the whole check
is killed from outside) and asserts the summary.txt it must leave: what ran, what timed out or
crashed, what was never started and why, and that no process of a step outlives it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

FAKE_NVIDIA_SMI = """#!/bin/sh
# Stands in for nvidia-smi: the sampler's query gets numbers, the state queries a CSV.
case "$*" in
  *--help-query-gpu*) echo '"clocks_event_reasons.active"' ;;
  *clocks.sm,power.draw,power.limit*) echo '1755, 612.50, 700.00, 61, 100' ;;
  *--query-gpu=*) echo 'index, name, pci.bus_id, uuid, clocks.current.sm [MHz]'
                  echo '0, NVIDIA H100 80GB HBM3, 00000000:19:00.0, GPU-1234, 1980 MHz' ;;
  *) echo 'Fake NVIDIA-SMI 580.00' ;;
esac
"""

DEVICE_OK = """#!/bin/sh
for a in "$@"; do
  case $a in --gtest_output=xml:*) echo '<testsuites/>' > "${a#--gtest_output=xml:}" ;; esac
done
echo '[==========] 3 tests ran.'
echo '[  PASSED  ] 3 tests.'
"""

# A device test that hangs, with a child of its own: both must be gone after its step.
DEVICE_HANGS = """#!/bin/sh
echo '[ RUN      ] Wgmma.FirstLaunch'
sleep 1000 &
echo "$$ $!" > "{pids}"
wait
"""

DEVICE_SEGFAULTS = """#!/bin/sh
echo '[ RUN      ] Cupti.Replay'
kill -SEGV $$
"""

# A benchmark binary: --plan and --benchmark_list_tests answer like the harness; a run writes
# Google Benchmark JSON with 2 verified, 1 skipped and 1 failed benchmark.
BENCH = '''#!{python}
import json, sys, time
topic = {topic!r}
names = [f"{{topic}}/cublaslt/{{p}}/m:256/n:256/k:256/layout:nn"
         for p in ("fp16", "bf16", "fp8", "tf32")]
args = sys.argv[1:]
if "--plan" in args:
    print(f"plan: {{len(names)}} benchmarks; the harness spends at least {least_each:.2f} s "
          f"on each "
          f"(0.05 s warm-up + 0.05 s of samples): at least {{len(names) * {least_each}:.1f}} s")
    sys.exit(0)
if any(a.startswith("--benchmark_list_tests") for a in args):
    print("\\n".join(n + "/manual_time" for n in names))
    sys.exit(0)
out = next(a.split("=", 1)[1] for a in args if a.startswith("--benchmark_out="))
def row(name, **extra):
    return dict({{"name": name + "/manual_time", "run_name": name + "/manual_time",
                 "run_type": "iteration", "repetitions": 1, "iterations": 1, "real_time": 1.0,
                 "cpu_time": 1.0, "time_unit": "ms"}}, **extra)
if any(a.startswith("--benchmark_filter=") and "8192" in a for a in args):  # the torch rows
    rows = [row(f"{{topic}}/cublaslt/{{p}}/m:8192/n:8192/k:8192/layout:nn", tflops=t)
            for p, t in (("bf16", 600.0), ("fp16", 500.0))]
    json.dump({{"context": {{}}, "benchmarks": rows}}, open(out, "w"))
    sys.exit(0)
rows = [row(names[0], tflops=500.0), row(names[1], tflops=480.0),
        row(names[2], error_occurred=True,
            error_message="skipped: FP8 needs compute capability 8.9"),
        row(names[3], error_occurred=True,
            error_message="7 of 65536 elements outside the tolerance")]
for r in rows:
    print(r["name"], "1.0 ms")
time.sleep({seconds})
json.dump({{"context": {{"gpu_name": "Fake GPU", "compute_capability": "9.0"}},
           "benchmarks": rows}}, open(out, "w"))
sys.exit(1)  # one benchmark failed verification, as the harness exits then
'''


# Just enough of torch for gpu_check_torch.py's `time`: every matmul "takes" 2 ms.
FAKE_TORCH = """
import types
__version__ = "0.0-stand-in"
version = types.SimpleNamespace(cuda="13.0")
bfloat16, float16 = "bf16", "fp16"
class _T:
    def __mul__(self, o): return self
    def __sub__(self, o): return self
    def all(self): return True
class _Event:
    def __init__(self, enable_timing=False): pass
    def record(self): pass
    def synchronize(self): pass
    def elapsed_time(self, other): return 2.0
class Generator:
    def __init__(self, device=None): pass
    def manual_seed(self, s): return self
cuda = types.SimpleNamespace(is_available=lambda: True, get_device_name=lambda d: "Stand-in",
                             synchronize=lambda: None, Event=_Event, empty_cache=lambda: None)
backends = types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(
    allow_fp16_reduced_precision_reduction=True, allow_bf16_reduced_precision_reduction=True)))
device = lambda name: name
rand = empty = lambda *a, **k: _T()
matmul = lambda a, b, out=None: out
isfinite = lambda t: t
"""


# The bundle's tcbench_studies: a host-studies file with the INT8 study's rows (Q1's host half).
FAKE_STUDIES = """#!{python}
import json, sys
out = sys.argv[sys.argv.index("--out") + 1]
rows = [dict(name=n, run_name=n, run_type="iteration", repetitions=1, iterations=1,
             real_time=1.0, cpu_time=1.0, time_unit="s", top1_accuracy_pct=a)
        for n, a in (("int8_study/fp32/fp32", 94.3), ("int8_study/ptq_max/int8", 93.1),
                     ("int8_study/ptq_p99.99/int8", 95.2), ("int8_study/qat/int8", 95.1))]
json.dump({{"context": {{"tcbench_kind": "host-studies"}}, "benchmarks": rows}}, open(out, "w"))
"""


def torch_python(tmp_path: Path) -> Path:
    site = tmp_path / "fake-torch"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(FAKE_TORCH)
    wrapper = tmp_path / "torch-python"
    write_exec(wrapper, f"#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} \"$@\"\n")
    return wrapper


def write_exec(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


def make_bundle(tmp_path: Path, needs_glibc: str = "2.17") -> Path:
    bundle = tmp_path / "bundle"
    (bundle / "bin").mkdir(parents=True)
    shutil.copytree(REPO / "scripts", bundle / "scripts",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (bundle / "MANIFEST.txt").write_text(
        "# stand-in bundle\ngit_sha: 0123456789ab\ncuda_architectures: 90-real\n"
        f"glibc: 2.36 (the build machine's)\nneeds_glibc: {needs_glibc} (stand-in)\n"
        "files: sha256 bytes path\n")
    return bundle


def add_bench(bundle: Path, name: str, seconds: float = 0.0, least_each: float = 0.1) -> None:
    write_exec(bundle / "bin" / name, BENCH.format(python=sys.executable, topic=name[6:],
                                                   seconds=seconds, least_each=least_each))


def environment(tmp_path: Path, **extra: str) -> dict:
    fake_bin = tmp_path / "fake-bin"
    fake_bin.mkdir(exist_ok=True)
    write_exec(fake_bin / "nvidia-smi", FAKE_NVIDIA_SMI)
    env = dict(os.environ, PATH=f"{fake_bin}{os.pathsep}{os.environ['PATH']}",
               TCBENCH_PYTHON=sys.executable,
               TCBENCH_TORCH_PYTHON=str(tmp_path / "no-torch-python"))
    env.pop("TCBENCH_PYTHON_ENV", None)
    env.update(extra)
    return env


def start_check(bundle: Path, out: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen([str(bundle / "scripts" / "gpu_check.sh"), str(out)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_check(bundle: Path, out: Path, env: dict,
              timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(bundle / "scripts" / "gpu_check.sh"), str(out)], env=env,
                          capture_output=True, text=True, timeout=timeout)


def step_line(summary: str, step: str) -> str:
    """The step's line in the summary's steps section (the plan lists binaries too)."""
    steps = summary.split("-- steps", 1)[-1]
    match = re.search(rf"^   {re.escape(step)}\s+(\S+)\s+(.*)$", steps, re.M)
    assert match, f"no step line for {step!r} in:\n{summary}"
    return match.group(0)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purpose (nothing reaps it when its parent was killed).
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(predicate, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


def test_a_hang_and_a_crash_each_cost_one_step_and_the_check_goes_on(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    pids = tmp_path / "hang.pids"
    write_exec(bundle / "bin" / "device_test_a_ok", DEVICE_OK)
    write_exec(bundle / "bin" / "device_test_b_hangs", DEVICE_HANGS.replace("{pids}", str(pids)))
    write_exec(bundle / "bin" / "device_test_c_segfaults", DEVICE_SEGFAULTS)
    write_exec(bundle / "bin" / "device_test_d_ok", DEVICE_OK)
    add_bench(bundle, "bench_alpha")
    out = tmp_path / "check"
    begin = time.monotonic()
    proc = run_check(bundle, out, environment(tmp_path, TCBENCH_STEP_TIMEOUT_S="3"))
    took = time.monotonic() - begin
    summary = (out / "summary.txt").read_text()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    hang = step_line(summary, "device_test_b_hangs")
    assert "TIMEOUT" in hang and "killed with its process group at its 3 s limit" in hang
    assert "Wgmma.FirstLaunch" in hang  # what it printed last
    crash = step_line(summary, "device_test_c_segfaults")
    assert "CRASHED" in crash and "SIGSEGV" in crash and "Cupti.Replay" in crash
    # The check went on after both: the next test and the benchmark ran.
    assert " ok " in step_line(summary, "device_test_d_ok")
    assert "3 passed, 0 failed, 0 skipped" in step_line(summary, "device_test_d_ok")
    assert "FAILED" in step_line(summary, "bench_alpha")  # it exits 1: one failed benchmark
    assert re.search(r"-- FAILED: tests failed; a benchmark binary failed; 1 step\(s\) timed out; "
                     r"1 step\(s\) crashed \(exit 1\)$", summary, re.M), summary
    # The hung test and its child were killed with the group, not left holding the GPU.
    parent, child = (int(x) for x in pids.read_text().split())
    assert not alive(parent) and not alive(child)
    assert took < 60, f"the check took {took:.0f} s"


def test_an_outside_sigterm_stops_the_running_step_and_leaves_a_true_summary(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    pids = tmp_path / "hang.pids"
    write_exec(bundle / "bin" / "device_test_a_ok", DEVICE_OK)
    write_exec(bundle / "bin" / "device_test_b_hangs", DEVICE_HANGS.replace("{pids}", str(pids)))
    add_bench(bundle, "bench_alpha")
    out = tmp_path / "check"
    proc = start_check(bundle, out, environment(tmp_path, TCBENCH_STEP_TIMEOUT_S="100"))
    try:
        summary_file = out / "summary.txt"
        assert wait_until(lambda: pids.is_file() and summary_file.is_file() and re.search(
            r"device_test_b_hangs\s+-\s+RUNNING", summary_file.read_text()), 60)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, stdout + stderr
    summary = (out / "summary.txt").read_text()
    assert " ok " in step_line(summary, "device_test_a_ok")
    hang = step_line(summary, "device_test_b_hangs")
    assert "INTERRUPTED" in hang and "SIGTERM" in hang and "Wgmma.FirstLaunch" in hang
    never = step_line(summary, "bench_alpha")
    assert "NOT STARTED" in never and "interrupted by SIGTERM" in never
    assert summary.rstrip().endswith("-- INTERRUPTED by SIGTERM (exit 143): the steps above are "
                                     "what ran")
    parent, child = (int(x) for x in pids.read_text().split())
    assert wait_until(lambda: not alive(parent) and not alive(child), 15)


def test_a_sigkilled_check_leaves_its_last_summary_and_its_step_still_ends(tmp_path: Path):
    """SIGKILL cannot be trapped: the summary written when the step started says it was running,
    and the step, in its own process group under its own limit, still ends at its limit."""
    bundle = make_bundle(tmp_path)
    pids = tmp_path / "hang.pids"
    write_exec(bundle / "bin" / "device_test_a_ok", DEVICE_OK)
    write_exec(bundle / "bin" / "device_test_b_hangs", DEVICE_HANGS.replace("{pids}", str(pids)))
    out = tmp_path / "check"
    proc = start_check(bundle, out, environment(tmp_path, TCBENCH_STEP_TIMEOUT_S="5"))
    try:
        assert wait_until(lambda: pids.is_file(), 60)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    summary = (out / "summary.txt").read_text()
    assert " ok " in step_line(summary, "device_test_a_ok")
    assert re.search(r"device_test_b_hangs\s+-\s+RUNNING\s+started \S+, limit 5 s", summary)
    assert "pending" in step_line(summary, "GPU state after")
    assert summary.rstrip().endswith("(check in progress: this summary is rewritten after every "
                                     "step)")
    parent, child = (int(x) for x in pids.read_text().split())
    assert wait_until(lambda: not alive(parent) and not alive(child), 30)


def test_steps_that_do_not_fit_the_budget_are_not_started_and_named(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    write_exec(bundle / "bin" / "device_test_a_ok", DEVICE_OK)
    add_bench(bundle, "bench_alpha")                     # at least 0.4 s: fits
    add_bench(bundle, "bench_beta", least_each=50.0)     # at least 200 s: cannot fit in 30 s
    out = tmp_path / "check"
    proc = run_check(bundle, out, environment(tmp_path, TCBENCH_CHECK_BUDGET_S="30"))
    summary = (out / "summary.txt").read_text()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    beta = step_line(summary, "bench_beta")
    assert "NOT STARTED" in beta and "would not fit: needs at least 200 s" in beta
    assert "not started (budget): bench_beta" in summary
    assert not (out / "logs" / "bench_beta.log").exists()
    assert "FAILED" in step_line(summary, "bench_alpha")  # it ran (and has a failed benchmark)
    # The last nvidia-smi record runs whatever the budget says.
    assert " ok " in step_line(summary, "GPU state after")


def test_summary_plans_the_quick_suite_and_ends_with_the_tables(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    write_exec(bundle / "bin" / "device_test_a_ok", DEVICE_OK)
    add_bench(bundle, "bench_alpha", seconds=3.0)  # long enough for the sampler to see it
    add_bench(bundle, "bench_fp16_vs_fp32")
    add_bench(bundle, "bench_tensor_peak")
    write_exec(bundle / "bin" / "tcbench_studies", FAKE_STUDIES.format(python=sys.executable))
    out = tmp_path / "check"
    proc = run_check(bundle, out, environment(
        tmp_path, TCBENCH_TORCH_PYTHON=str(torch_python(tmp_path))))
    summary = (out / "summary.txt").read_text()
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the stand-ins' failed benchmarks
    # The plan, from each binary's --plan: counts and least times, before the steps.
    assert re.search(r"-- quick suite plan: 12 benchmarks, 3 binaries; the harness spends at "
                     r"least 1\.2 s on them", summary), summary
    assert summary.index("quick suite plan") < summary.index("-- steps")
    # Risky last: bench_tensor_peak after bench_alpha and the torch steps.
    steps = summary.split("-- steps", 1)[1]
    assert steps.index("   bench_alpha ") < steps.index("   torch.matmul") < \
        steps.index("   bench_tensor_peak ")
    # Per topic: run / verified / skipped / failed, and the reasons.
    assert re.search(r"^   alpha\s+4\s+2\s+1\s+1$", summary, re.M), summary
    assert "skipped (1): alpha: FP8 needs compute capability 8.9" in summary
    assert "FAILED alpha/cublaslt/tf32/m:256/n:256/k:256/layout:nn: 7 of 65536 elements" in summary
    # 2 ms for 2 * 8192^3 FLOP is 549.8 TFLOP/s: bf16 600 -> 1.091x, fp16 500 -> 0.909x.
    assert " ok " in step_line(summary, "cuBLASLt 8192^3 (for torch)")
    assert " ok " in step_line(summary, "torch.matmul 8192^3")
    assert re.search(r"^   bf16\s+549\.8\s+600\.0\s+1\.091x\s+ok$", summary, re.M), summary
    assert re.search(r"^   fp16\s+549\.8\s+500\.0\s+0\.909x\s+BELOW TARGET", summary, re.M), summary
    # Clock and power of the heaviest step, from the background samples.
    assert re.search(r"SM clock median 1755 MHz \(min 1755, max 1755\), power median 612 W "
                     r"\(max 612 W, limit 700 W\), \d+ samples", summary), summary
    assert summary.rstrip().splitlines()[-1].startswith("-- FAILED")
    # The five answers last, from these results and the bundle's host studies: the INT8 study's
    # host half answers Q1; the stand-ins measured none of the GPU halves.
    answers_line = step_line(summary, "the five questions (tcbench answers)")
    assert " ok " in answers_line and "GPU verdicts: Q1 not measured" in answers_line
    assert steps.index("   GPU state after") < steps.index("   the five questions")
    answers = json.loads((out / "answers.json").read_text())["questions"]
    q1_host = next(a for a in answers if a["id"] == "q1" and a["scope"] == "host")
    assert q1_host["verdict"] != "not measured", q1_host
    assert all(a["verdict"] == "not measured" for a in answers if a["scope"] == "gpu")
    assert (out / "answers.md").read_text().startswith("# The five questions, answered")


def test_a_box_with_an_older_glibc_is_refused_in_one_sentence(tmp_path: Path):
    bundle = make_bundle(tmp_path, needs_glibc="99.0")
    write_exec(bundle / "bin" / "device_test_a_ok", DEVICE_OK)
    out = tmp_path / "check"
    proc = run_check(bundle, out, environment(tmp_path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    sentence = re.search(r"gpu_check: (this box's glibc [0-9.]+ is older than the 99\.0 the "
                         r"bundle's binaries need \(built on glibc 2\.36\).*)$", proc.stderr, re.M)
    assert sentence, proc.stderr
    summary = (out / "summary.txt").read_text()
    assert summary.rstrip().endswith("-- REFUSED (exit 2): " + sentence.group(1))
    assert not (out / "logs" / "device_test_a_ok.log").exists()


def test_limits_must_be_whole_seconds(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    proc = run_check(bundle, tmp_path / "check", environment(tmp_path, TCBENCH_STEP_TIMEOUT_S="2m"))
    assert proc.returncode == 2
    assert "must be whole numbers of seconds, got '2m'" in proc.stderr


def test_summary_tables_without_any_result_say_so(tmp_path: Path):
    out = tmp_path / "empty"
    (out / "plan").mkdir(parents=True)
    (out / "plan" / "bench_alpha.txt").write_text("alpha/x/fp16/manual_time\n")
    (out / "logs").mkdir()
    (out / "logs" / "bench_alpha.log").write_text("alpha/x/fp16/manual_time 1 ms\n")
    (out / "results").mkdir()
    (out / "results" / "bench_alpha.json").write_text('{"context": {}, "benchm')  # cut short
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "gpu_check_summary.py"),
                           str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"alpha\s+-\s+-\s+-\s+-\s+its JSON is unusable .*; 1 of 1 benchmarks had "
                     r"finished \(its log\)", proc.stdout), proc.stdout
    assert "tensor peaks" in proc.stdout and "not measured" in proc.stdout
    assert "no samples" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_in_a_source_tree_the_suite_is_planned_after_the_build(tmp_path: Path):
    """From a source tree the first step builds and tests (scripts/tcbench test): the benchmark
    binaries it builds are planned after it, and the budget counts from there."""
    tree = tmp_path / "tree"
    shutil.copytree(REPO / "scripts", tree / "scripts",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (tree / "CMakeLists.txt").write_text("# stand-in source tree\n")
    bench = BENCH.format(python=sys.executable, topic="alpha", seconds=0, least_each=0.1)
    # Stands in for `tcbench test --preset release`: "builds" bench_alpha, one ctest failure.
    write_exec(tree / "scripts" / "tcbench", f"""#!/bin/sh
mkdir -p "{tree}/build/release/bin"
cat > "{tree}/build/release/bin/bench_alpha" <<'BENCH'
{bench}
BENCH
chmod +x "{tree}/build/release/bin/bench_alpha"
echo '  7/9 Test  #7: device_test_x.Fake.Fails ....***Failed  (Failed)'
echo 'tcbench test (release): 8 of 9 ctest tests passed'
exit 1
""")
    out = tmp_path / "check"
    proc = subprocess.run([str(tree / "scripts" / "gpu_check.sh"), str(out)],
                          env=environment(tmp_path), capture_output=True, text=True, timeout=120)
    summary = (out / "summary.txt").read_text()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAILED" in step_line(summary, "tests (tcbench test --preset release)")
    assert "8 of 9 ctest tests passed" in summary
    assert "device_test_x.Fake.Fails" in summary
    assert "FAILED" in step_line(summary, "bench_alpha")  # planned after the build, and ran
    assert "quick suite plan: 4 benchmarks, 1 binaries" in summary
    assert " ok " in step_line(summary, "GPU state after")
