"""tcbench run (runner.py) never hands compare a result that hides a failure: failed, killed,
empty or unrunnable binaries are named, stale files go, one run sees one GPU, --timeout stops a
hung binary and interrupts reach the build; rejected flags and bad devices are usage errors."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, fixture, load_doc, make_fake, script

INT8 = "int8_gemm/cublaslt/int8/m:4096/n:4096/k:4096/layout:tn"


def two_binaries(bins: Path, int8_mode: str = "ok") -> None:
    make_fake(bins, "bench_fp16_vs_fp32", topic="fp16_vs_fp32")
    make_fake(bins, "bench_int8_gemm", mode=int8_mode, topic="int8_gemm")


def test_a_binary_that_fails_a_benchmark_keeps_its_results_and_the_gate_fails(cli, tmp_path):
    bins = tmp_path / "bin"
    two_binaries(bins)
    assert cli("run", "--bin-dir", bins, "--out", tmp_path / "base")[0] == 0
    two_binaries(bins, int8_mode="verifyfail")
    code, stdout, err = cli("run", "--bin-dir", bins, "--out", tmp_path / "cand")
    assert code == 1
    assert "bench_int8_gemm: FAILED (exit 1: bench: 1 benchmark(s) failed; see the messages " \
           "above.); results kept" in stdout
    merged = json.loads((tmp_path / "cand" / "results.json").read_text())
    assert merged["context"]["tcbench_failed_binaries"] == "bench_int8_gemm:1"
    assert "tcbench_lost_binaries" not in merged["context"]
    assert any(r["name"].startswith(INT8) and r.get("error_occurred") for r in merged["benchmarks"])
    code, out, _ = cli("compare", tmp_path / "base", tmp_path / "cand")
    assert code == 1
    assert f"{INT8}: FAILED (candidate: verification failed: rel_error 0.5 > 0.01)" in out


def test_a_binary_that_leaves_no_results_fails_the_gate_even_when_missing_is_allowed(cli, tmp_path):
    bins = tmp_path / "bin"
    two_binaries(bins)
    assert cli("run", "--bin-dir", bins, "--out", tmp_path / "base")[0] == 0
    two_binaries(bins, int8_mode="crash")
    assert cli("run", "--bin-dir", bins, "--out", tmp_path / "cand")[0] == 1
    context = json.loads((tmp_path / "cand" / "results.json").read_text())["context"]
    assert context["tcbench_lost_binaries"] == "bench_int8_gemm"
    code, out, _ = cli("compare", tmp_path / "base", tmp_path / "cand", "--allow-missing")
    assert code == 1
    assert "binary bench_int8_gemm failed in the candidate run without usable results (exit 1)" \
        in out.strip().splitlines()[-1]
    assert f"{INT8}" in out and \
        "bench_int8_gemm wrote no usable results in the candidate run" in out


def test_a_rerun_into_the_same_folder_leaves_nothing_stale(cli, tmp_path):
    bins = tmp_path / "bin"
    two_binaries(bins)
    out = tmp_path / "out"
    assert cli("run", "--bin-dir", bins, "--out", out)[0] == 0
    shutil.copytree(out, tmp_path / "base")
    (out / "notes.txt").write_text("the user's own file")
    make_fake(bins, "bench_fp16_vs_fp32", mode="crash")
    make_fake(bins, "bench_int8_gemm", mode="crash")
    assert cli("run", "--bin-dir", bins, "--out", out)[0] == 1
    assert not (out / "results.json").exists()
    assert list(out.glob("bench_*.json")) == []
    assert (out / "notes.txt").is_file()  # not the run's: left alone
    assert "console output of" not in (out / "logs" / "bench_int8_gemm.stdout.log").read_text()
    code, _, err = cli("compare", tmp_path / "base", out)
    assert code == 2 and "no results.json and no *.json files" in err


def test_a_results_json_whose_files_changed_is_refused(cli, tmp_path):
    bins = tmp_path / "bin"
    two_binaries(bins)
    out = tmp_path / "out"
    assert cli("run", "--bin-dir", bins, "--out", out)[0] == 0
    baseline = tmp_path / "baseline"
    baseline.mkdir()
    shutil.copy(out / "results.json", baseline / "results.json")  # a stored baseline
    assert cli("compare", baseline, out)[0] == 0
    # The per-binary files went once results.json read back: their absence is no evidence.
    assert list(out.glob("bench_*.json*")) == []
    shutil.copytree(out, tmp_path / "copied")  # a copied run folder (new mtimes) stays valid
    assert cli("compare", baseline, tmp_path / "copied")[0] == 0
    # What a later, interrupted run leaves beside it: a file it merged, rewritten.
    doc = json.loads((out / "results.json").read_text())
    doc["benchmarks"] = [r for r in doc["benchmarks"] if r["name"].startswith("int8_gemm/")][:1]
    (out / "bench_int8_gemm.json").write_text(json.dumps(doc))
    code, _, err = cli("compare", baseline, out)
    assert code == 2
    assert "results.json is stale: bench_int8_gemm.json was rewritten after it was merged" in err


def test_a_binary_cut_short_keeps_its_finished_rows_marked(cli, tmp_path):
    """Before: a binary stopped at --timeout lost every row it had finished (run deleted its
    files; the GPU check kept them). Now every mode keeps them, marked cut short."""
    bins = tmp_path / "bin"
    make_fake(bins, "bench_fp16_vs_fp32", topic="fp16_vs_fp32")
    make_fake(bins, "bench_int8_gemm", mode="cut", topic="int8_gemm")
    out = tmp_path / "out"
    code, stdout, err = cli("run", "--bin-dir", bins, "--out", out, "--timeout", "2")
    assert code == 1, stdout + err
    assert "its finished rows are kept" in stdout
    doc = json.loads((out / "results.json").read_text())
    kept = [r["name"] for r in doc["benchmarks"] if r["tcbench_binary"] == "bench_int8_gemm"]
    assert len(kept) == 1
    context = doc["context"]
    assert context["tcbench_failed_binaries"] == "bench_int8_gemm:timeout"
    assert "tcbench_lost_binaries" not in context
    assert "bench_int8_gemm.json is not complete JSON; its 1 finished row(s) were read from " \
           "bench_int8_gemm.jsonl" in context["tcbench_cut_short"]
    assert list(out.glob("bench_*.json*")) == []  # each row once, in results.json
    from tcbench_tools.results import load

    rs = load(out)
    assert rs.partial == context["tcbench_cut_short"]
    assert "int8_gemm/a_case_it_never_reached" in rs.never_ran and kept[0] not in rs.never_ran
    assert set(rs.never_ran) == set(context["tcbench_never_ran"].split(","))
    code, cmp_out, _ = cli("compare", out, out)
    assert code == 1 and "the candidate was cut short" in cmp_out
    code, answers, _ = cli("answers", out, "--json")
    assert code == 0 and json.loads(answers)["incomplete"] is True


def test_a_binary_that_rejects_its_arguments_is_a_usage_error(cli, tmp_path):
    bins = tmp_path / "bin"
    make_fake(bins, "bench_a_first", mode="usage")
    make_fake(bins, "bench_b_second", topic="fp16_vs_fp32")
    code, _, err = cli("run", "--bin-dir", bins, "--out", tmp_path / "o", "--",
                       "--benchmark_bogus")
    assert code == 2
    assert err.strip() == ("tcbench: bench_a_first rejected its arguments (exit 2: ERROR: "
                           "unrecognized command-line flag: --benchmark_bogus); check the flags "
                           "after '--': nothing was measured.")
    assert not (bins / "bench_b_second.argv").exists()


@pytest.mark.parametrize("device,needle", [
    ("abc", "--device 'abc' is neither a GPU index (0, 1, ...) nor a UUID"),
    ("-1", "--device '-1' is neither a GPU index"),
    ("0,1", "--device '0,1' is neither a GPU index"),
    ("5", "--device 5: there is no such GPU (nvidia-smi lists 2, numbered 0 to 1)."),
    ("GPU-99999999-2222-3333-4444-555555555555", "nvidia-smi lists no GPU with that UUID"),
])
def test_device_is_validated(cli, tmp_path, fake_nvidia_smi, device, needle):
    bins = tmp_path / "bin"
    make_fake(bins, "bench_int8_gemm", topic="int8_gemm")
    code, _, err = cli("run", "--bin-dir", bins, "--out", tmp_path / "o", f"--device={device}")
    assert code == 2
    assert err.startswith("tcbench: ") and needle in err
    assert not (bins / "bench_int8_gemm.argv").exists()


def test_a_visible_device_by_index_or_uuid_runs(cli, tmp_path, fake_nvidia_smi):
    bins = tmp_path / "bin"
    make_fake(bins, "bench_int8_gemm", topic="int8_gemm")
    for device in ("1", fake_nvidia_smi):
        code, _, err = cli("run", "--bin-dir", bins, "--out", tmp_path / "o", "--device", device)
        assert code == 0, err
        assert json.loads((bins / "bench_int8_gemm.argv").read_text())["cuda"] == device


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose; /proc says so on Linux.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return True


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_is_forwarded_to_the_running_binary_and_what_finished_is_merged(tmp_path, sig,
                                                                                 code):
    bins = tmp_path / "bin"
    make_fake(bins, "bench_a_fast", topic="int8_gemm")
    make_fake(bins, "bench_b_slow", mode="sleep")
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(REPO / "scripts"))
    proc = subprocess.Popen([sys.executable, "-m", "tcbench_tools", "run", "--bin-dir", str(bins),
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    pid_file = bins / "bench_b_slow.pid"
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pid_file.exists(), "the slow binary never started"
    time.sleep(0.3)
    child = int(pid_file.read_text())
    proc.send_signal(sig)  # to tcbench alone, as CI cancellation or `timeout` does
    try:
        _, stderr = proc.communicate(timeout=60)
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)
    assert proc.returncode == code, stderr
    assert not _alive(child), "the benchmark binary was left running"
    name = signal.Signals(sig).name
    assert stderr.strip().splitlines()[-1] == (
        f"tcbench: interrupted by {name}; stopped bench_b_slow: stopped after 1 of 2 binaries; "
        f"partial results in {out / 'results.json'}, marked incomplete.")
    context = json.loads((out / "results.json").read_text())["context"]
    assert context["tcbench_incomplete"] == f"interrupted by {name} during bench_b_slow"
    assert context["tcbench_binaries"] == "bench_a_fast"
    # compare never takes the partial run for a pass.
    cmp = subprocess.run([sys.executable, "-m", "tcbench_tools", "compare", str(out), str(out)],
                         capture_output=True, text=True, env=env)
    assert cmp.returncode == 1
    assert f"the candidate run did not finish (interrupted by {name} during bench_b_slow)" \
        in cmp.stdout


def test_an_incomplete_baseline_is_warned_about(cli, tmp_path):
    bins = tmp_path / "bin"
    two_binaries(bins, int8_mode="crash")
    assert cli("run", "--bin-dir", bins, "--out", tmp_path / "base")[0] == 1
    code, _, err = cli("compare", tmp_path / "base", tmp_path / "base")
    assert "warning: the baseline run is incomplete (binaries without results: " \
           "bench_int8_gemm)" in err
    assert code == 1  # and the candidate (the same run) lost a binary: never a pass


def test_a_signal_while_a_binary_lists_its_benchmarks_stops_that_binary_too(cli, tmp_path):
    import threading

    bins = tmp_path / "bin"
    make_fake(bins, "bench_a_lists_slowly", mode="slowlist")
    make_fake(bins, "bench_b_never", topic="int8_gemm")
    pid_file = bins / "bench_a_lists_slowly.pid"

    def signal_when_listing():
        deadline = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGTERM)  # to this process, which runs tcbench in-process

    timer = threading.Thread(target=signal_when_listing)
    timer.start()
    code, _, err = cli("run", "--bin-dir", bins, "--out", tmp_path / "o")
    timer.join()
    child = int(pid_file.read_text())
    try:
        assert code == 143, err
        assert not _alive(child)
        assert err.strip() == ("tcbench: interrupted by SIGTERM; stopped bench_a_lists_slowly: "
                               "nothing was measured.")
        assert not (bins / "bench_b_never.argv").exists()
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)


FP16 = "fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096/layout:nn"


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


def test_a_device_index_in_other_digits_is_refused(cli, tmp_path):
    code, out, err = cli("run", "--no-build", "--bin-dir", tmp_path, "--device", "٣",
                         "--out", tmp_path / "o")
    assert code == 2 and "is neither a GPU index (0, 1, ...) nor a UUID" in err
