"""The check's step machinery (tcbench_tools.gpu_check) on a stand-in GPU box: no build, no GPU.

Each test gives the check binaries that misbehave the way a first GPU run can (hang, die by
SIGSEGV, list garbage, the whole check killed from outside) and asserts the summary.txt it must
leave: what ran, what timed out or crashed, what was never started and why, and that no process
of a step outlives it. The stand-ins are gpu_check_standins.py's.
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

from gpu_check_standins import (
    DEVICE_FAILS,
    DEVICE_HANGS,
    DEVICE_OK,
    DEVICE_SEGFAULTS,
    REPO,
    add_bench,
    add_studies,
    environment,
    make_bundle,
    torch_python,
    write_exec,
)


def start_check(bundle: Path, out: Path, env: dict, *args: str) -> subprocess.Popen:
    return subprocess.Popen([str(bundle / "scripts" / "gpu_check.sh"), *args, str(out)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_check(bundle: Path, out: Path, env: dict, *args: str,
              timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(bundle / "scripts" / "gpu_check.sh"), *args, str(out)], env=env,
                          capture_output=True, text=True, check=False, timeout=timeout)


def step_line(summary: str, step: str) -> str:
    """The step's line in the summary's steps section."""
    steps = summary.split("-- steps", 1)[-1]
    match = re.search(rf"^   {re.escape(step)}\s+(\S+)\s+(.*)$", steps, re.MULTILINE)
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
    add_bench(bundle, "bench_alpha", rows={"alpha/cublaslt/tf32/m:256/n:256/k:256/layout:nn": {
        "error_occurred": True, "error_message": "7 of 65536 elements outside the tolerance"}},
        exit=1)
    out = tmp_path / "check"
    begin = time.monotonic()
    proc = run_check(bundle, out, environment(tmp_path, TCBENCH_STEP_TIMEOUT_S="3"))
    took = time.monotonic() - begin
    summary = (out / "summary.txt").read_text()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    hang = step_line(summary, "device_test_b_hangs")
    assert "TIMEOUT" in hang and "stopped with its process group at its 3 s limit" in hang
    assert "Wgmma.FirstLaunch" in hang  # what it printed last
    crash = step_line(summary, "device_test_c_segfaults")
    assert "CRASHED (SIGSEGV)" in crash and "Cupti.Replay" in crash
    # The check went on after both: the next test and the benchmark ran.
    assert "3 passed, 0 failed, 0 skipped" in step_line(summary, "device_test_d_ok")
    assert "FAILED (exit 1)" in step_line(summary, "bench_alpha [t3]")  # one failed benchmark
    assert "FAILED alpha/cublaslt/tf32/m:256/n:256/k:256/layout:nn: 7 of 65536" in summary
    assert re.search(r"-- FAILED: a benchmark binary failed; 1 step\(s\) timed out; 1 step\(s\) "
                     r"crashed \(exit 1\)$|-- FAILED: tests failed; a benchmark binary failed; 1 "
                     r"step\(s\) timed out; 1 step\(s\) crashed \(exit 1\)$", summary,
                     re.MULTILINE), summary
    # The hung test and its child were killed with the group, not left holding the GPU.
    parent, child = (int(x) for x in pids.read_text().split())
    assert wait_until(lambda: not alive(parent) and not alive(child), 10)
    assert took < 60, f"the check took {took:.0f} s"


def test_binaries_that_cannot_be_listed_are_named_outcomes_and_the_check_goes_on(tmp_path: Path):
    """A crash, garbage or nothing at start (the bash check's planning aborted on these)."""
    bundle = make_bundle(tmp_path / "a path with spaces")
    add_bench(bundle, "bench_crashes", crash_list=True)
    add_bench(bundle, "bench_garbage", garbage_list=True)
    add_bench(bundle, "bench_silent", empty_list=True)
    add_bench(bundle, "bench_works")
    out = tmp_path / "check out"
    proc = run_check(bundle, out, environment(tmp_path))
    summary = (out / "summary.txt").read_text()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "CRASHED (SIGSEGV)" in step_line(summary, "bench_crashes")
    assert "GARBAGE OUTPUT" in step_line(summary, "bench_garbage")
    assert "NO OUTPUT" in step_line(summary, "bench_silent")
    assert " ok " in step_line(summary, "bench_works [t3]")
    assert "gave no usable output" in summary.splitlines()[-1]
    assert "Traceback" not in proc.stdout + proc.stderr


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
            r"device_test_b_hangs\s+2\s+\d+\s+-\s+RUNNING", summary_file.read_text()), 60)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, stdout + stderr
    summary = (out / "summary.txt").read_text()
    assert " ok " in step_line(summary, "device_test_a_ok")
    hang = step_line(summary, "device_test_b_hangs")
    assert "INTERRUPTED" in hang and "SIGTERM" in hang and "Wgmma.FirstLaunch" in hang
    never = step_line(summary, "bench_alpha [t3]")
    assert "NOT STARTED" in never and "interrupted by SIGTERM" in never
    assert summary.rstrip().endswith("-- INTERRUPTED by SIGTERM (exit 143): the steps above are "
                                     "what ran")
    parent, child = (int(x) for x in pids.read_text().split())
    assert wait_until(lambda: not alive(parent) and not alive(child), 15)


def test_a_sigkilled_check_leaves_its_last_summary_and_its_step_still_ends(tmp_path: Path):
    """SIGKILL cannot be trapped: the summary written when the step started says it was running,
    and the step, in its own process group under coreutils timeout, still ends past its limit."""
    bundle = make_bundle(tmp_path)
    pids = tmp_path / "hang.pids"
    write_exec(bundle / "bin" / "device_test_a_ok", DEVICE_OK)
    write_exec(bundle / "bin" / "device_test_b_hangs", DEVICE_HANGS.replace("{pids}", str(pids)))
    out = tmp_path / "check"
    proc = start_check(bundle, out, environment(tmp_path, TCBENCH_STEP_TIMEOUT_S="1"))
    try:
        assert wait_until(lambda: pids.is_file(), 60)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    summary = (out / "summary.txt").read_text()
    assert " ok " in step_line(summary, "device_test_a_ok")
    assert re.search(r"device_test_b_hangs\s+2\s+\d+\s+-\s+RUNNING\s+started \S+, limit 1 s",
                     summary), summary
    assert "pending" in step_line(summary, "GPU state after")
    assert summary.rstrip().endswith("(check in progress: this summary is rewritten after every "
                                     "step)")
    # The watchdog: 1 s + process.WATCHDOG_MARGIN (15 s) + its 5 s kill-after at most.
    parent, child = (int(x) for x in pids.read_text().split())
    assert wait_until(lambda: not alive(parent) and not alive(child), 30)


def test_steps_that_do_not_fit_the_budget_are_not_started_and_named(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    write_exec(bundle / "bin" / "device_test_a_ok", DEVICE_OK)
    add_bench(bundle, "bench_alpha")
    # 900 rows the cost model prices at about 0.3 s each: cannot fit in what is left of 40 s.
    add_bench(bundle, "bench_beta", [f"beta/cublaslt/fp16/m:4096/n:{n}/k:4096/layout:nn"
                                     for n in range(32, 932)])
    out = tmp_path / "check"
    proc = run_check(bundle, out, environment(tmp_path, TCBENCH_CHECK_BUDGET_S="40"))
    summary = (out / "summary.txt").read_text()
    assert proc.returncode == 3, proc.stdout + proc.stderr  # INCOMPLETE: never 0, never 1
    beta = step_line(summary, "bench_beta [t3]")
    assert "NOT STARTED" in beta and re.search(r"budget: needs about \d+ s, \d+ s of the 40 s "
                                               r"budget left", beta), beta
    assert "tier 3: INCOMPLETE: left out bench_beta [t3]" in summary
    assert not (out / "logs" / "bench_beta.t3.log").exists()
    assert " ok " in step_line(summary, "bench_alpha [t3]")
    # The last nvidia-smi record runs whatever the budget says; the verdict is INCOMPLETE, not
    # FAILED (a budget cut is not a defect).
    assert " ok " in step_line(summary, "GPU state after")
    assert re.search(r"^-- INCOMPLETE: 1 step\(s\) of the tiers asked for did not run, they did "
                     r"not fit the 40 s budget: bench_beta \[t3\] \(exit 3\)$", summary,
                     re.MULTILINE), summary


def test_summary_plans_the_tiers_and_ends_with_the_tables(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    write_exec(bundle / "bin" / "device_test_a_ok", DEVICE_OK)
    peak = {"tflops": 700.0, "pct_of_clock_model": 95.0, "pct_of_datasheet": 104.0,
            "clock_mhz_measured": 1980.0}
    add_bench(bundle, "bench_tensor_peak", ["tensor_peak/wgmma_m64n256k16/fp16",
                                            "tensor_peak/mma_m16n8k16/fp16"],
              rows={"tensor_peak/wgmma_m64n256k16/fp16": peak}, seconds=1.2)
    # The stand-in lists its quick names; the torch rows are not quick ones: list them too.
    spec_names = ["fp16_vs_fp32/cublaslt/fp16/m:256/n:256/k:256/layout:nn",
                  "fp16_vs_fp32/cublaslt/bf16/m:8192/n:8192/k:8192/layout:nn",
                  "fp16_vs_fp32/cublaslt/fp16/m:8192/n:8192/k:8192/layout:nn"]
    add_bench(bundle, "bench_fp16_vs_fp32", spec_names,
              rows={f"fp16_vs_fp32/cublaslt/{p}/m:8192/n:8192/k:8192/layout:nn": {"tflops": t}
                    for p, t in (("bf16", 600.0), ("fp16", 500.0))})
    add_studies(bundle)
    out = tmp_path / "check"
    proc = run_check(bundle, out, environment(tmp_path,
                                              TCBENCH_TORCH_PYTHON=str(torch_python(tmp_path))))
    summary = (out / "summary.txt").read_text()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The plan, per tier, before the steps.
    assert summary.index("-- plan (") < summary.index("-- steps")
    assert re.search(r"tier 1: the five answers first: 2 steps, 1 benchmarks, \d+ s", summary)
    steps = summary.split("-- steps", 1)[1]
    # Tier 1 (the wgmma peak) and its answers before the device tests, tier 3 after.
    assert steps.index("bench_tensor_peak [t1]") < steps.index("answers (tier 1)") < \
        steps.index("device_test_a_ok") < steps.index("bench_tensor_peak [t3]")
    # 2 ms for 2 * 8192^3 FLOP is 549.8 TFLOP/s: bf16 600 -> 1.091x, fp16 500 -> 0.909x; both
    # cuBLAS versions named (the stand-in torch has no cuBLAS wheel).
    assert " ok " in step_line(summary, "cuBLASLt 8192^3 (for torch)")
    assert " ok " in step_line(summary, "torch.matmul 8192^3")
    assert re.search(r"^   bf16\s+549\.8\s+600\.0\s+1\.091x\s+ok$", summary, re.MULTILINE), summary
    assert re.search(r"^   fp16\s+549\.8\s+500\.0\s+0\.909x\s+BELOW TARGET", summary,
                     re.MULTILINE), summary
    assert "cuBLAS: torch unknown; tcbench cuBLASLt 130000 (not known to be the same" in summary
    # The peak at the measured clock first, then the datasheet and the clock it implies.
    assert re.search(r"tensor_peak/wgmma_m64n256k16/fp16\s+700\.0 tflops,  95\.0 % at 1980 MHz, "
                     r"104\.0 % of the datasheet \(which implies 1809 MHz\)", summary), summary
    # Clock and power of the heaviest step, from the background samples.
    assert re.search(r"SM clock median 1755 MHz \(min 1755, max 1755\), power median 612 W "
                     r"\(max 612 W, limit 700 W\), \d+ samples", summary), summary
    assert summary.rstrip().splitlines()[-1] == "-- PASSED (exit 0)"
    # The answers after tier 1 and at the end, from these results and the host studies.
    assert " ok " in step_line(summary, "answers (tier 1)")
    answers = json.loads((out / "answers.json").read_text())["questions"]
    q1_host = next(a for a in answers if a["id"] == "q1" and a["scope"] == "host")
    assert q1_host["verdict"] != "not measured", q1_host


def test_a_source_tree_builds_and_tests_first_then_plans_what_it_built(tmp_path: Path):
    tree = tmp_path / "tree"
    shutil.copytree(REPO / "scripts", tree / "scripts",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (tree / "CMakeLists.txt").write_text("# stand-in source tree\n")
    built = add_bench(make_bundle(tmp_path / "staging"), "bench_alpha")
    # Stands in for `tcbench test --preset release`: "builds" bench_alpha, one ctest failure.
    write_exec(tree / "scripts" / "tcbench", f"""#!/bin/sh
mkdir -p "{tree}/build/release/bin"
cp "{built}" "{tree}/build/release/bin/bench_alpha"
echo '  7/9 Test  #7: device_test_x.Fake.Fails ....***Failed  (Failed)'
echo 'tcbench test (release): 8 of 9 ctest tests passed'
exit 1
""")
    out = tmp_path / "check"
    proc = subprocess.run([str(tree / "scripts" / "gpu_check.sh"), str(out)],
                          env=environment(tmp_path), capture_output=True, text=True,
                          check=False, timeout=120)
    summary = (out / "summary.txt").read_text()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAILED" in step_line(summary, "tests (tcbench test --preset release)")
    assert "8 of 9 ctest tests passed" in summary
    assert "device_test_x.Fake.Fails" in summary
    assert " ok " in step_line(summary, "bench_alpha [t3]")  # planned after the build, and ran
    assert " ok " in step_line(summary, "GPU state after")


def test_a_failed_device_test_fails_the_check(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    write_exec(bundle / "bin" / "device_test_always_fails", DEVICE_FAILS)
    add_bench(bundle, "bench_alpha")
    out = tmp_path / "check"
    proc = run_check(bundle, out, environment(tmp_path))
    summary = (out / "summary.txt").read_text()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAILED: tests failed" in summary and "Fake.Fails" in summary


def test_no_gpu_is_exit_77_and_names_what_was_not_started(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    write_exec(bundle / "bin" / "device_test_a_ok", DEVICE_OK)
    add_bench(bundle, "bench_fp8", ["fp8/block/selected/hidden:4096/tokens:4096/layout:tn"],
              exit=77)
    add_bench(bundle, "bench_loss_scaling", ["loss_scaling/train_fp32/fp32/steps:100"])
    out = tmp_path / "check"
    proc = run_check(bundle, out, environment(tmp_path))
    summary = (out / "summary.txt").read_text()
    assert proc.returncode == 77, proc.stdout + proc.stderr
    assert "skipped" in step_line(summary, "bench_fp8 [t1]")
    assert re.search(r"bench_loss_scaling \[t1\].*NOT STARTED\s+no GPU visible \(see bench_fp8 "
                     r"\[t1\]\)", summary), summary
    assert "NOT STARTED" in step_line(summary, "device_test_a_ok")
    assert summary.rstrip().splitlines()[-1].startswith("-- SKIPPED: no GPU visible")


def test_tier_1_only_stops_after_its_answers(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    write_exec(bundle / "bin" / "device_test_a_ok", DEVICE_OK)
    add_bench(bundle, "bench_alignment", ["alignment/cublaslt/fp16/m:4096/n:32/k:4096/layout:nn",
                                          "alignment/cublaslt/fp16/m:4096/n:33/k:4096/layout:nn",
                                          "alignment/cublas/fp16/m:4096/n:32/k:4096/layout:nn"])
    out = tmp_path / "check"
    proc = run_check(bundle, out, environment(tmp_path, TCBENCH_CHECK_TIER="1"))
    summary = (out / "summary.txt").read_text()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " ok " in step_line(summary, "bench_alignment [t1]")
    assert "NOT STARTED  --tier 1" in step_line(summary, "device_test_a_ok")
    assert "NOT STARTED  --tier 1" in step_line(summary, "bench_alignment [t3]")
    assert " ok " in step_line(summary, "GPU state after")
    assert "tier 3: not run (--tier 1)" in summary
    assert summary.rstrip().splitlines()[-1] == "-- PASSED (tiers 1-1) (exit 0)"


def test_limits_and_options_are_checked_in_one_sentence(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    for env, args, words in (({"TCBENCH_STEP_TIMEOUT_S": "2m"}, [],
                              "TCBENCH_STEP_TIMEOUT_S must be a whole number of seconds"),
                             ({}, ["--tier", "4"], "--tier must be 1, 2 or 3, got '4'"),
                             ({}, ["--frobnicate"], "unrecognized arguments: --frobnicate")):
        proc = run_check(bundle, tmp_path / "check", environment(tmp_path, **env), *args)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], proc.stderr


def test_the_tools_run_with_the_boxs_bare_python(tmp_path: Path):
    """The check imports nothing but the standard library (the box may have no pip)."""
    code = ("import sys\n"
            "import tcbench_tools.gpu_check.cli, tcbench_tools.gpu_check.run\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numpy', 'scipy', 'matplotlib', 'sqlalchemy', 'psycopg'))\n"
            "assert not bad, bad\n")
    proc = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                          check=False, env=dict(os.environ, PYTHONPATH=str(REPO / "scripts")))
    assert proc.returncode == 0, proc.stderr


def test_a_gpu_gone_mid_check_is_incomplete_never_a_pass(tmp_path: Path):
    """The GPU vanished after tier 1 had measured: every later step was NOT STARTED, every tier
    INCOMPLETE, and the check said PASSED (exit 0). Now INCOMPLETE, exit 3, naming the step."""
    bundle = make_bundle(tmp_path)
    write_exec(bundle / "bin" / "device_test_a_ok", DEVICE_OK)
    add_bench(bundle, "bench_alignment", ["alignment/cublaslt/fp16/m:4096/n:32/k:4096/layout:nn"])
    add_bench(bundle, "bench_beta", exit=77)  # tier 3: the GPU is gone
    add_bench(bundle, "bench_gamma")
    add_studies(bundle)
    out = tmp_path / "check"
    proc = run_check(bundle, out, environment(tmp_path))
    summary = (out / "summary.txt").read_text()
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert " ok " in step_line(summary, "bench_alignment [t1]")
    assert "NOT STARTED" in step_line(summary, "bench_gamma [t3]")
    assert "tier 3: INCOMPLETE: left out bench_gamma [t3]" in summary
    last = summary.rstrip().splitlines()[-1]
    assert last.startswith("-- INCOMPLETE: 2 step(s) of the tiers asked for did not run, the GPU "
                           "was gone from bench_beta [t3] on") and last.endswith("(exit 3)"), last


def test_sigterm_while_a_binary_hangs_in_its_listing_stops_the_check_within_a_second(
        tmp_path: Path):
    """A listing waited out its 30 s limit before the check saw a SIGTERM."""
    bundle = make_bundle(tmp_path)
    hang = bundle / "bin" / "bench_hangs"
    write_exec(hang, f"#!/bin/sh\necho started > '{tmp_path / 'listing'}'\nexec sleep 1000\n")
    out = tmp_path / "check"
    proc = start_check(bundle, out, environment(tmp_path))
    try:
        assert wait_until(lambda: (tmp_path / "listing").is_file(), 60)
        begin = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=30)
        took = time.monotonic() - begin
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, stdout + stderr
    assert took < 1.5, f"{took:.1f} s"
    assert "INTERRUPTED by SIGTERM" in (out / "summary.txt").read_text()


def test_answers_md_escapes_the_names_of_rows_that_never_ran(tmp_path: Path):
    """A binary's row file names its planned rows: a hostile name is text in answers.md, never a
    code span it breaks out of, a link or a tag."""
    bundle = make_bundle(tmp_path)
    hostile = "alpha/x`y`[click](javascript:alert(1))<b>*em*/fp16"
    add_bench(bundle, "bench_alpha", ["alpha/cublaslt/fp16/m:64/n:64/k:64/layout:nn",
                                      "alpha/cublaslt/bf16/m:64/n:64/k:64/layout:nn", hostile],
              kill_after=1)
    add_studies(bundle)
    out = tmp_path / "check"
    run_check(bundle, out, environment(tmp_path))
    md = (out / "answers.md").read_text()
    assert "## Rows that never ran" in md
    never = md.split("## Rows that never ran", 1)[1]
    assert "- `alpha/cublaslt/bf16/m:64/n:64/k:64/layout:nn`" in never
    assert "](javascript" not in never and "<b>" not in never and "`y`" not in never
    assert "alpha/x&#96;y&#96;&#91;click&#93;(javascript:alert(1))&lt;b>\\*em\\*/fp16" in never


def test_tier_1_rows_carry_the_clock_and_power_of_their_own_window(tmp_path: Path):
    """A burst and a power-capped steady state read differently: each tier-1 row with its own
    window shows NVML's SM clock and power against the maximum and the limit."""
    bundle = make_bundle(tmp_path)
    context_rows = {
        "int8_gemm/cublaslt/int8/m:4096/n:4096/k:4096/layout:tn": {
            "tops": 1200.0, "sm_clock_mhz": 1410.0, "power_w": 699.0, "throttle": 4},
        "int8_gemm/cublaslt/fp16/m:4096/n:4096/k:4096/layout:tn": {
            "tflops": 700.0, "sm_clock_mhz": 1980.0, "power_w": 520.0, "throttle": 0}}
    add_bench(bundle, "bench_int8_gemm", list(context_rows), rows=context_rows)
    add_bench(bundle, "bench_loss_scaling", ["loss_scaling/train_fp32/fp32/steps:100"])
    add_studies(bundle)
    out = tmp_path / "check"
    run_check(bundle, out, environment(tmp_path))
    summary = (out / "summary.txt").read_text()
    table = summary.split("-- tier 1's rows:", 1)[1].split("\n--", 1)[0]
    assert re.search(r"int8_gemm/cublaslt/int8/\S+\s+1200\.0 tops, 1410 MHz of 1980, 699 W of "
                     r"700: power-capped \(sw_power_cap\)", table), table
    assert re.search(r"int8_gemm/cublaslt/fp16/\S+\s+700\.0 tflops, 1980 MHz of 1980, 520 W of "
                     r"700: at boost", table), table
    assert "1 row(s) report a time made of other windows" in table  # the training run


def test_torch_runs_with_the_boxs_environment_and_names_its_cublas(tmp_path: Path):
    """LD_LIBRARY_PATH wins over the torch wheels' RUNPATH: with the toolkit's lib64 first, torch
    may load another libnvJitLink (undefined symbol) or another cuBLAS. The benchmark binaries get
    the CUDA folders the check adds; torch gets the box's own environment."""
    cuda = tmp_path / "cuda"
    (cuda / "lib64").mkdir(parents=True)
    bundle = make_bundle(tmp_path)
    add_bench(bundle, "bench_fp16_vs_fp32", ["fp16_vs_fp32/cublaslt/fp16/m:64/n:64/k:64/layout:nn"],
              full_only=[f"fp16_vs_fp32/cublaslt/{p}/m:8192/n:8192/k:8192/layout:nn"
                         for p in ("bf16", "fp16")], default={"tflops": 600.0})
    add_studies(bundle)
    env_log = tmp_path / "env.log"
    env = environment(tmp_path, CUDA_HOME=str(cuda), LD_LIBRARY_PATH="/box/own/lib",
                      TCBENCH_TORCH_PYTHON=str(torch_python(tmp_path)),
                      TCBENCH_TEST_ENV_LOG=str(env_log))
    out = tmp_path / "check"
    proc = run_check(bundle, out, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = [line.split(" ", 1) for line in env_log.read_text().splitlines()]
    torch = {path for who, path in seen if who == "torch"}
    binaries = {path for who, path in seen if who == "bench_fp16_vs_fp32"}
    assert torch == {"/box/own/lib"}, seen  # the probe, box.txt's and the step's: as the box set it
    assert binaries == {f"/box/own/lib:{cuda / 'lib64'}"}, seen
    summary = (out / "summary.txt").read_text()
    assert "torch 0.0-stand-in (CUDA 13.0) ran cuBLAS unknown" in step_line(summary,
                                                                          "torch.matmul 8192^3")


def test_an_archive_that_cannot_be_rewritten_mid_check_fails_it_and_leaves_no_temporary(
        tmp_path: Path):
    """Found writable at the start, the archive's path became a folder half-way: the check said
    PASSED. A rewrite that fails is an error in the verdict, and its temporary file is removed."""
    bundle = make_bundle(tmp_path)
    archive = tmp_path / "copy-back" / "gpu-check.tgz"
    write_exec(bundle / "bin" / "device_test_a_blocks",
               DEVICE_OK.replace("echo '[==========] 3 tests ran.'",
                                 f"rm -f '{archive}'; mkdir '{archive}'\n"
                                 "echo '[==========] 3 tests ran.'"))
    add_bench(bundle, "bench_alpha")
    add_studies(bundle)
    out = tmp_path / "check"
    proc = run_check(bundle, out, environment(tmp_path), "--archive", str(archive))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    last = (out / "summary.txt").read_text().rstrip().splitlines()[-1]
    assert last == f"-- FAILED: the archive {archive} could not be written (exit 1)", last
    assert sorted(p.name for p in archive.parent.iterdir()) == ["box.txt", "gpu-check.tgz",
                                                                "summary.txt"]


def test_the_burst_and_sustained_pair_runs_without_quick_or_is_not_started_in_one_sentence(
        tmp_path: Path):
    """Tier 3 runs the cuBLASLt BF16 burst and sustained rows without --quick, its sustained
    search limited; where the budget left cannot hold the step's 30 s, it is not started."""
    pair = [f"sustained/cublaslt/bf16/m:8192/n:8192/k:8192/layout:nn/regime:{r}"
            for r in ("burst", "sustained")]
    names = pair + [n.replace("/bf16/", "/fp16/") for n in pair]
    bundle = make_bundle(tmp_path)
    add_bench(bundle, "bench_sustained", names,
              echo_env=["TCBENCH_SUSTAINED_LIMIT_S", "TCBENCH_IDLE_LIMIT_S"])
    out = tmp_path / "check"
    proc = run_check(bundle, out, environment(tmp_path))
    summary = (out / "summary.txt").read_text()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r" ok .*2 of 2 benchmarks", step_line(summary, "bench_sustained [t3]"))
    [argv] = [json.loads(line) for line in (tmp_path / "argv.log").read_text().splitlines()
              if "--benchmark_list_tests" not in line]
    assert "--quick" not in argv and not any(a.startswith("--benchmark_min_time") for a in argv)
    log = (out / "logs" / "bench_sustained.t3.log").read_text()
    assert "TCBENCH_SUSTAINED_LIMIT_S=13\nTCBENCH_IDLE_LIMIT_S=4\n" in log, log
    merged = json.loads((out / "results" / "results.json").read_text())
    assert sorted(b["run_name"] for b in merged["benchmarks"]) == [n + "/manual_time"
                                                                   for n in pair]
    # 40 s of budget leaves 40 - 9.5 (the closing) - 5 s: the 30 s step does not start.
    out = tmp_path / "check-short"
    proc = run_check(bundle, out, environment(tmp_path, TCBENCH_CHECK_BUDGET_S="40"))
    line = step_line((out / "summary.txt").read_text(), "bench_sustained [t3]")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert re.search(r"NOT STARTED\s+budget: needs about 35 s, 2\d s of the 40 s budget left$",
                     line), line
