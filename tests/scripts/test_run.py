"""tcbench run: orchestration against fake benchmark binaries (small Python scripts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO, make_fake


def recorded(bin_dir: Path, name: str) -> dict:
    return json.loads((bin_dir / f"{name}.argv").read_text())


def test_runs_every_binary_merges_and_summarizes(cli, tmp_path, fake_nvidia_smi):
    bins = tmp_path / "bin"
    make_fake(bins, "bench_fp16_vs_fp32", topic="fp16_vs_fp32")
    make_fake(bins, "bench_int8_gemm", topic="int8_gemm")
    (bins / "bench_notes.txt").write_text("not executable: ignored")
    out = tmp_path / "out"
    code, stdout, err = cli("run", "--bin-dir", bins, "--out", out, "--quick",
                            "--filter", "cublaslt", "--repetitions", "5", "--device", "1",
                            "--", "--benchmark_enable_random_interleaving=true")
    assert code == 0, err
    # Progress: which binary, how many left.
    assert "[1/2] bench_fp16_vs_fp32: done in 0:0" in stdout
    assert "(1 left)" in stdout and "[2/2] bench_int8_gemm: done" in stdout and "(0 left)" in stdout
    # Flags passed to each binary.
    rec = recorded(bins, "bench_int8_gemm")
    assert rec["cuda"] == "1"
    assert rec["order"] == "PCI_BUS_ID"  # so "1" is nvidia-smi's GPU 1
    argv = rec["argv"]
    assert f"--benchmark_out={out / 'bench_int8_gemm.json'}" in argv
    for flag in ("--benchmark_out_format=json", "--benchmark_filter=cublaslt",
                 "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=false",
                 "--quick", "--benchmark_min_time=0.05",
                 "--benchmark_enable_random_interleaving=true"):
        assert flag in argv
    # Files: each row once, in results.json; the per-binary files and row files are gone.
    assert (out / "results.json").is_file()
    assert list(out.glob("bench_*.json*")) == []
    merged = json.loads((out / "results.json").read_text())
    names = {b["name"] for b in merged["benchmarks"]}
    assert any(n.startswith("fp16_vs_fp32/") for n in names)
    assert any(n.startswith("int8_gemm/") for n in names)
    assert merged["context"]["gpu_name"] == "Fixture GPU A"
    assert merged["context"]["tcbench_binaries"] == "bench_fp16_vs_fp32,bench_int8_gemm"
    # Summary: best per topic and precision, with % of peak; where the files are.
    line = next(ln for ln in stdout.splitlines() if ln.startswith("int8_gemm"))
    assert line.split()[:6] == ["int8_gemm", "int8", "448", "TOP/s", "70.0",
                                "int8_gemm/cublaslt/int8/m:4096/n:4096/k:4096/layout:tn"]
    assert f"Results: {out / 'results.json'}" in stdout
    assert (out / "logs" / "bench_int8_gemm.stdout.log").read_text() == \
        "console output of int8_gemm\n"


def test_skips_and_benchmark_errors_are_reported(cli, tmp_path):
    bins = tmp_path / "bin"
    make_fake(bins, "bench_fp8", topic="fp8")
    make_fake(bins, "bench_tensor_util", topic="tensor_util")
    code, stdout, err = cli("run", "--bin-dir", bins, "--out", tmp_path / "out")
    assert code == 1  # the tensor_util cuBLASLt benchmark failed for real
    assert "skipped (1): FP8 needs compute capability 8.9 or newer (this GPU is 8.0)" in stdout
    assert ("FAILED tensor_util/cublaslt/fp16/m:8192/n:8192/k:8192/layout:nn: "
            "error: cublasLtMatmul failed") in stdout
    assert "failed: 0 of 2 binaries, 1 benchmarks." in err


def test_no_gpu_stops_with_one_sentence_and_77(cli, tmp_path):
    bins = tmp_path / "bin"
    make_fake(bins, "bench_a_first", mode="nogpu")
    make_fake(bins, "bench_b_second", topic="fp16_vs_fp32")
    out = tmp_path / "out"
    code, stdout, err = cli("run", "--bin-dir", bins, "--out", out)
    assert code == 77
    assert err.strip() == ("tcbench: no CUDA GPU is visible (tcbench: no CUDA device "
                           "(cudaErrorNoDevice: no CUDA-capable device is detected)): "
                           "nothing was measured.")
    assert not (bins / "bench_b_second.argv").exists()  # stopped: the others would say the same
    assert not (out / "results.json").exists()


def test_failing_binary_is_reported_and_the_others_still_run(cli, tmp_path):
    bins = tmp_path / "bin"
    make_fake(bins, "bench_alignment", mode="crash")
    make_fake(bins, "bench_int8_gemm", topic="int8_gemm")
    out = tmp_path / "out"
    code, stdout, err = cli("run", "--bin-dir", bins, "--out", out)
    assert code == 1
    assert "[1/2] bench_alignment: FAILED (exit 1: tcbench: cublasLtMatmul failed: " \
           "CUBLAS_STATUS_EXECUTION_FAILED)" in stdout
    assert "[2/2] bench_int8_gemm: done" in stdout
    assert "binary bench_alignment FAILED (exit 1)" in stdout
    merged = json.loads((out / "results.json").read_text())
    assert {b["tcbench_binary"] for b in merged["benchmarks"]} == {"bench_int8_gemm"}


def test_filter_matching_nothing(cli, tmp_path):
    bins = tmp_path / "bin"
    make_fake(bins, "bench_x", mode="nomatch")
    code, stdout, err = cli("run", "--bin-dir", bins, "--out", tmp_path / "o", "--filter", "zzz")
    assert code == 2
    assert "matched no benchmark" in err
    assert "no benchmark matched the filter" in stdout


def test_bench_selects_binaries(cli, tmp_path):
    bins = tmp_path / "bin"
    make_fake(bins, "bench_fp16_vs_fp32", topic="fp16_vs_fp32")
    make_fake(bins, "bench_int8_gemm", topic="int8_gemm")
    code, stdout, _ = cli("run", "--bin-dir", bins, "--out", tmp_path / "o", "--bench", "int8_gemm")
    assert code == 0
    assert "[1/1] bench_int8_gemm" in stdout
    assert not (bins / "bench_fp16_vs_fp32.argv").exists()
    code, _, err = cli("run", "--bin-dir", bins, "--out", tmp_path / "o", "--bench", "nope")
    assert code == 2 and "no binary named bench_nope" in err


def test_missing_or_empty_bin_dir_is_a_usage_error(cli, tmp_path):
    code, _, err = cli("run", "--bin-dir", tmp_path / "absent", "--out", tmp_path / "o")
    assert code == 2 and "does not exist" in err
    (tmp_path / "empty").mkdir()
    code, _, err = cli("run", "--bin-dir", tmp_path / "empty", "--out", tmp_path / "o")
    assert code == 2 and "holds no benchmark binaries" in err


def test_entry_point_runs_through_the_shell_script(tmp_path):
    """scripts/tcbench itself: the venv exists (pytest runs in it), so this only re-execs."""
    bins = tmp_path / "bin"
    make_fake(bins, "bench_int8_gemm", topic="int8_gemm")
    env = dict(os.environ)
    proc = subprocess.run([str(REPO / "scripts" / "tcbench"), "run", "--bin-dir", str(bins),
                           "--out", str(tmp_path / "o")], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "int8_gemm" in proc.stdout
    for sub in ("run", "compare", "report", "test"):
        help_text = subprocess.run([str(REPO / "scripts" / "tcbench"), sub, "--help"],
                                   capture_output=True, text=True, timeout=120)
        assert help_text.returncode == 0 and "usage: tcbench " + sub in help_text.stdout


def test_default_out_dir_is_timestamped_under_results(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("TCBENCH_REPO", str(tmp_path))
    bins = tmp_path / "bin"
    make_fake(bins, "bench_int8_gemm", topic="int8_gemm")
    code, stdout, _ = cli("run", "--bin-dir", bins)
    assert code == 0
    dirs = list((tmp_path / "results").iterdir())
    assert len(dirs) == 1 and len(dirs[0].name) == len("20260101-000000")
    assert (dirs[0] / "results.json").is_file()


def test_an_installed_bundle_runs_its_own_binaries_without_building(cli, tmp_path, monkeypatch):
    # cmake --install lays out bin/ and scripts/ with no sources: run must not try to configure.
    bundle = tmp_path / "bundle"
    make_fake(bundle / "bin", "bench_fp16_vs_fp32", topic="fp16_vs_fp32")
    monkeypatch.setenv("TCBENCH_REPO", str(bundle))
    code, out, err = cli("run", "--out", tmp_path / "out")
    assert code == 0, err
    assert "configure" not in out + err
    assert (tmp_path / "out" / "results.json").is_file()


def test_progress_counts_finished_benchmarks_from_the_console_output(tmp_path):
    from tcbench_tools import runner

    log = tmp_path / "out.log"
    log.write_text(
        "Run on (2 X 3000 MHz CPU s)\n"
        "-----------------------------------------------------------\n"
        "fp16_vs_fp32/cublaslt/fp16/m:256/n:256/k:256/layout:nn/manual_time"
        "   0.010 ms  tflops=3.3\n"
        "fp16_vs_fp32/cublaslt/fp16/m:256/n:256/k:256/layout:nn/manual_time"
        "   0.011 ms  tflops=3.1\n"
        "fp16_vs_fp32/cublaslt/fp16/m:256/n:256/k:256/layout:nn/manual_time_median 0.010 ms\n"
        "fp16_vs_fp32/wmma/bf16/m:256/n:256/k:256/layout:nn/manual_time"
        " ERROR OCCURRED: 'skipped: x'\n")
    names = {"fp16_vs_fp32/cublaslt/fp16/m:256/n:256/k:256/layout:nn",
             "fp16_vs_fp32/wmma/bf16/m:256/n:256/k:256/layout:nn",
             "fp16_vs_fp32/simt/fp32/m:256/n:256/k:256/layout:nn"}
    assert runner.finished_benchmarks(log, names) == 2
    assert runner.finished_benchmarks(tmp_path / "missing.log", names) == 0


def test_listing_uses_the_binary_and_survives_one_that_cannot_list(tmp_path):
    from tcbench_tools import runner

    lister = tmp_path / "bench_list"
    lister.write_text(f"#!{sys.executable}\nimport sys\n"
                      "assert '--benchmark_list_tests=true' in sys.argv and '--quick' in sys.argv\n"
                      "print('a/b/fp16/m:1/manual_time')\nprint('a/b/fp32/m:1/manual_time')\n")
    lister.chmod(0o755)
    opts = runner.RunOptions(out_dir=tmp_path, quick=True)
    assert runner.list_benchmarks(lister, opts, dict(os.environ)) == {"a/b/fp16/m:1",
                                                                        "a/b/fp32/m:1"}
    broken = make_fake(tmp_path / "bin", "bench_crash", mode="crash")
    assert runner.list_benchmarks(broken, opts, dict(os.environ)) is None
