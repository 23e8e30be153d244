"""tcbench run never hands compare a result that hides a failure: failed binaries keep their
JSON, stale files go, interrupts are forwarded, rejected flags and bad devices are usage errors
(issue 13)."""

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

from conftest import REPO, make_fake

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
