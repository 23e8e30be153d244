"""The check's plan (tcbench_tools.gpu_check.plan, cost.py) without a GPU: that tier 1 is enough for
every GPU verdict, the targets the cost model holds the real quick suite to on an H200, Google
Benchmark's sizing as the model counts it, and what learning from a step changes.

The quick lists are the real binaries' (data/gpu_check/quick_lists.json; checked against a
build's binaries when there is one). Synthetic rows, not measurements.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import answers_data as data
from conftest import built_bin_dir
from gpu_check_standins import (
    add_bench,
    make_bundle,
    quick_lists,
    verdict_rows,
    write_exec,
)
from tcbench_tools.answers import NOT_MEASURED, rules
from tcbench_tools.gpu_check import cost, plan
from tcbench_tools.results import parse_doc

# The device tests the bundle holds and their GoogleTest counts (the review's 13 binaries, 116
# tests, then issue 37's Blackwell rows: device_test_tensor_peak's 41 instructions x 3 suites and
# its host tests, and device_test_tensor_peak_blackwell; test_gpu_check_bundle's plan test checks
# the real ones).
DEVICE_TESTS = {"device_test_tensor_peak": 129, "device_test_tensor_peak_blackwell": 10,
                "device_profiling_test_range_profiler": 4,
                "device_test_block_quant": 6, "device_test_fp8_kernels": 9,
                "device_test_gemm_cublas": 11, "device_test_gemm_paths": 13,
                "device_test_gemm_simt": 16, "device_test_gpu_training": 8,
                "device_test_int8_kernels": 5, "device_test_loss_scaling_kernels": 3,
                "device_test_numerics_device": 1, "device_test_pad_copy": 2,
                "device_test_stream_triad": 2}


def tier1_rows() -> dict[str, list[str]]:
    lists = quick_lists()
    return {b: [n for n in lists[b] if plan.matches(p, n)] for b, (p, _) in plan.TIER1.items()}


def test_the_quick_lists_fixture_is_what_the_binaries_list():
    try:
        bin_dir = built_bin_dir()
    except pytest.skip.Exception:
        pytest.skip("no build with the benchmark binaries")
    for binary, names in quick_lists().items():
        got = plan.list_benchmarks(bin_dir / binary)
        assert got.problem is None, (binary, got.detail)
        assert got.names == names, (f"{binary}: regenerate the fixture: python3 "
                                    f"tests/scripts/gpu_check_standins.py {bin_dir}")


def test_tier_1_is_small_and_every_tier_1_filter_matches_rows():
    rows = tier1_rows()
    for binary, names in rows.items():
        assert names, f"{binary}'s tier-1 filter matches none of its quick rows"
    assert sum(len(v) for v in rows.values()) <= 25
    # Each tier-3 filter is the negation: together they are the whole quick list, once.
    for binary, names in quick_lists().items():
        if binary in plan.TIER1:
            rest = [n for n in names if plan.matches("-" + plan.TIER1[binary][0], n)]
            assert sorted(rest + rows[binary]) == sorted(names), binary


def test_tier_1_rows_alone_give_every_gpu_half_a_verdict():
    """The rows tier 1 runs, with synthetic values (answers_data), are all each GPU rule needs:
    no half says "not measured"."""
    wanted = {n for names in tier1_rows().values() for n in names}
    rows = [data.row(name, **extra) for name, extra in verdict_rows(wanted).items()]
    got = {r["name"] for r in rows}
    # The rules' evidence is a subset of tier 1; every rule then decides.
    rs = parse_doc(data.doc(data.GPU_CONTEXT, rows))
    for qid, rule in rules.GPU_RULES.items():
        answer = rule(rs)
        assert answer.verdict != NOT_MEASURED, (qid, answer.why, sorted(got))


def model_totals(model: cost.Model | None = None) -> dict[str, float]:
    model = model or cost.Model()
    lists, t1 = quick_lists(), tier1_rows()
    tier1 = sum(cost.step_seconds(model, rows) for rows in t1.values())
    rest = sum(cost.step_seconds(model, [n for n in names if n not in t1.get(b, [])])
               for b, names in lists.items())
    devices = sum(model.process_start + plan.DEVICE_TEST_SECONDS * n
                  for n in DEVICE_TESTS.values())
    closing = plan.STATE_SECONDS * 2 + plan.ANSWERS_SECONDS * 2
    torch = cost.step_seconds(model, ["fp16_vs_fp32/cublaslt/bf16/m:8192/n:8192/k:8192/layout:nn",
                                      "fp16_vs_fp32/cublaslt/fp16/m:8192/n:8192/k:8192/layout:nn"])
    return {"tier1": tier1, "quick": tier1 + rest,
            "whole": tier1 + rest + devices + closing + torch + plan.TORCH_SECONDS}


def test_the_model_keeps_an_h200_check_inside_its_targets():
    """Issue 30: tier 1 <= 120 s, the quick suite <= 300 s, the whole check <= 420 s, with the
    assumed per-sample overhead; and still within the budget (450 s) if that overhead is twice
    what the model assumes."""
    t = model_totals()
    assert t["tier1"] <= 120 and t["quick"] <= 300 and t["whole"] <= 420, t
    slow = cost.Model(overhead_flush=100e-6, overhead_plain=25e-6)
    assert model_totals(slow)["whole"] <= 450, model_totals(slow)


def test_body_calls_are_google_benchmarks_sizing():
    # The counts tests/bench/test_measure_windows.cpp checks against libbenchmark 1.7.1.
    assert [cost.Model.body_calls(m) for m in (10e-6, 0.9e-3, 6e-3)] == [5, 3, 2]
    assert cost.Model.body_calls(1.0) == 1


def test_a_window_is_at_least_ten_samples_and_at_most_ten_thousand():
    m = cost.Model()
    assert m.samples(1.0) == 10 and m.samples(1e-9) == 10_000
    assert m.samples(1e-4) == 500  # 0.05 s / 100 us
    # 10 us with the flush: 5000 samples x 60 us, plus the warm-up.
    assert m.window(10e-6) == pytest.approx(0.05 + 5000 * 60e-6)


def test_learning_from_a_step_moves_the_overhead_toward_what_it_measured():
    m = cost.Model()
    rows = [{"name": f"x/cublaslt/fp16/m:4096/n:{n}/k:4096/layout:nn", "samples": 5000,
             "time_median_us": 10.0} for n in (32, 64)]
    predicted = cost.step_seconds(m, [r["name"] for r in rows])
    # The step took 0.5 s more than the model: 10,000 samples, 50 us more each.
    m.learn(rows, predicted + 0.5, predicted)
    assert 50e-6 < m.overhead_flush < 100e-6
    assert m.learned_from == 2
    before = m.overhead_flush
    m.learn(rows, 0.0, predicted)  # a step that took no time at all moves it down, bounded
    assert cost.OVERHEAD_RANGE[0] <= m.overhead_flush < before


def test_plan_lists_each_binary_once_and_names_one_that_hangs(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    add_bench(bundle, "bench_int8_gemm", quick_lists()["bench_int8_gemm"])
    write_exec(bundle / "bin" / "bench_hangs", "#!/bin/sh\nsleep 100\n")
    plan.LIST_TIMEOUT, saved = 2.0, plan.LIST_TIMEOUT
    try:
        p = plan.make_plan(bundle / "bin", cost.Model(), device_tests=True, out=tmp_path)
    finally:
        plan.LIST_TIMEOUT = saved
    by = {s.name: s for s in p.steps}
    assert by["bench_hangs"].status == "TIMEOUT" and "still listing" in by["bench_hangs"].note
    assert len(by["bench_int8_gemm [t1]"].rows) == 2 and len(by["bench_int8_gemm [t3]"].rows) == 37
    assert (tmp_path / "plan" / "bench_int8_gemm.txt").read_text().count("\n") == 39


def test_gpu_check_plan_prints_the_tiers_without_a_gpu(tmp_path: Path):
    bundle = make_bundle(tmp_path / "with space")
    for binary, names in quick_lists().items():
        add_bench(bundle, binary, names)
    proc = subprocess.run([str(bundle / "scripts" / "gpu_check.sh"), "--plan"],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={"PATH": "/usr/bin:/bin", "TCBENCH_PYTHON": sys.executable})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for needle in ("tier 1: the five answers first: 7 steps, 24 benchmarks",
                   "tier 3: the rest of the quick suite, most valuable first",
                   "bench_fp8 [t1]", "answers (tier 1)", "torch.matmul 8192^3",
                   "the quick suite (tiers 1 and 3's benchmarks):"):
        assert needle in out, out
    assert out.index("answers (tier 1)") < out.index("bench_tensor_util [t3]")


def test_each_gpu_refuses_the_peaks_it_lacks_at_once():
    """Issue 37: the model costs a tensor_peak row as a skip where the kernel does not exist
    (kernels/tensor_peak_table.cu's rule): wgmma off 9.0, tcgen05 off 10.0/10.3 (.kind::i8 off
    10.0), mma.sync's FP8/FP6/FP4 kinds off 12.x; everything else is measured."""
    from dataclasses import replace

    from tcbench_tools.names import parse

    def skipped(cc: tuple[int, int]) -> set[str]:
        gpu = replace(cost.H200, cc=cc)
        return {n.removeprefix("tensor_peak/") for n in quick_lists()["bench_tensor_peak"]
                if cost.skipped_on(gpu, parse(n))}

    hopper, b200, b300, rtx = skipped((9, 0)), skipped((10, 0)), skipped((10, 3)), skipped((12, 0))
    tcgen05 = {n for n in quick_lists()["bench_tensor_peak"] if "/tcgen05_" in n}
    assert len(tcgen05) == 24
    assert {f"tensor_peak/{n}" for n in hopper} >= tcgen05
    assert not any(n.startswith("wgmma_") for n in hopper)
    assert not any(n.startswith("tcgen05_") for n in b200)
    assert {n for n in b300 if n.startswith("tcgen05_")} == {"tcgen05_i8_m128n256k32/int8",
                                                            "tcgen05_2cta_i8_m256n256k32/int8"}
    assert "wgmma_m64n256k16/fp16" in b200 and "mma_m16n8k32/fp8" in b200
    assert not any(n.startswith(("mma_f8f6f4_", "mma_mx")) for n in rtx)
    assert "mma_f8f6f4_e2m1_m16n8k32/fp4" in b200 and "mma_m16n8k16/fp16" not in b200
