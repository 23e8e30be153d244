"""Absent, failed and filtered evidence is never "does not hold here" (issue 33 §1): each rule on
result sets where a row failed, was skipped, was filtered out, or lacks a counter (the results of
another tcbench version), and the invariant every answer keeps (answers/model.py). Synthetic
result documents (answers_data.py), not measurements."""

from __future__ import annotations

import pytest

import answers_data as ad
from tcbench_tools import schema
from tcbench_tools.answers import CAVEAT, FAILS, HOLDS, NOT_MEASURED, answer_all, rules
from tcbench_tools.results import GBENCH_FIELDS, parse_doc

AMPERE = {"compute_capability": "8.0"}  # no Hopper sub-pipe caveat in Q3
ILLEGAL = "CUDA error: an illegal memory access was encountered (cudaErrorIllegalAddress)"


def host(rows):
    return parse_doc(ad.doc(ad.HOST_CONTEXT, rows))


def gpu(rows, **context):
    return parse_doc(ad.doc({**ad.GPU_CONTEXT, **context}, rows))


def keeps_the_invariant(a) -> None:
    """holds: no caveat; a caveat or a refutation: at least one; not measured: says why."""
    if a.verdict == HOLDS:
        assert a.caveats == [], (a.id, a.scope, a.caveats)
    elif a.verdict in (CAVEAT, FAILS):
        assert a.caveats, (a.id, a.scope, a.verdict)
    else:
        assert a.why, (a.id, a.scope)


# --- Q1 --------------------------------------------------------------------------------------

def test_q1_failed_int8_rows_are_not_measured_with_the_error():
    """Before: "does not hold here" with the error as its reason; a failure is not evidence."""
    rows = ad.failing(ad.int8_gpu(), "int8_gemm/cublaslt/int8/", f"failed: {ILLEGAL}")
    a = rules.q1_gpu(gpu(rows))
    assert a.verdict == NOT_MEASURED and "cudaErrorIllegalAddress" in a.why
    assert "no INT8 GEMM ran" in a.why
    skipped = rules.q1_gpu(gpu(ad.failing(ad.int8_gpu(), "int8_gemm/cublaslt/int8/",
                                          "skipped: cuBLASLt has no INT8 algorithm for this "
                                          "problem (CUBLAS_STATUS_NOT_SUPPORTED)")))
    assert skipped.verdict == NOT_MEASURED and "CUBLAS_STATUS_NOT_SUPPORTED" in skipped.why


def test_q1_slower_is_not_within_the_noise():
    """D4: x0.91 with 1 % noise is slower, not "within the noise (1.0%)"."""
    a = rules.q1_gpu(gpu(ad.int8_gpu(speedup=0.91, spread=1.0)))
    assert a.verdict == FAILS
    assert "within the noise" not in " ".join(a.caveats)
    assert "INT8 is x0.91 FP16" in a.caveats[0] and "slower than FP16" in a.caveats[0]
    tie = rules.q1_gpu(gpu(ad.int8_gpu(speedup=1.005, spread=1.0)))
    assert tie.verdict == FAILS and "within the noise of 1.0%" in tie.caveats[0]


def test_q1_names_the_shape_it_fell_back_to():
    """D4: with no square (a filtered run) the sentence names the GEMM it used."""
    rows = [ad.row("int8_gemm/cublaslt/int8/m:128/n:8192/k:128/layout:tn",
                   label="IMMA int8->int32", tops=100.0, speedup_vs_fp16=0.91, spread_pct=1.0)]
    a = rules.q1_gpu(gpu(rows))
    assert a.verdict == FAILS
    assert "m:128/n:8192/k:128" in a.caveats[0] and "no square ran" in a.caveats[0]
    held = rules.q1_gpu(gpu(ad.int8_gpu()))
    assert held.verdict == HOLDS and "on the largest square, m:8192/n:8192/k:8192" in held.notes[0]


def test_q1_an_unnamed_kernel_is_a_caveat_not_a_refutation():
    """A result without the kernel's label (another tcbench version) cannot show IMMA; faster
    than FP16 it is a caveat, not "cuBLASLt chose an unnamed kernel, not an IMMA one"."""
    a = rules.q1_gpu(gpu(ad.int8_gpu(label="")))
    assert a.verdict == CAVEAT and "IMMA use is not confirmed" in a.caveats[0]


def test_q1_without_its_counter_names_it():
    a = rules.q1_gpu(gpu(ad.without(ad.int8_gpu(), "speedup_vs_fp16")))
    assert a.verdict == NOT_MEASURED and "speedup_vs_fp16" in a.why
    acc = rules.q1_host(host(ad.without(ad.int8_study(), "top1_accuracy_pct")))
    assert acc.verdict == NOT_MEASURED and "top1_accuracy_pct" in acc.why


# --- Q2 --------------------------------------------------------------------------------------

def test_q2_bf16_is_optional_on_a_gpu_without_it():
    """A T4 or V100 has no BF16: before, Q2 was "not measured" although the FP16 modes decide."""
    rows = ad.failing(ad.loss_gpu(static=1.05), "loss_scaling/train_bf16",
                      "skipped: BF16 GEMMs need compute capability 8.0 or newer; this GPU is 7.5.")
    a = rules.q2_gpu(gpu(rows, compute_capability="7.5"))
    assert a.verdict == CAVEAT
    assert a.caveats[0].startswith("BF16 not measured: BF16 GEMMs need compute capability 8.0")
    gone = rules.q2_gpu(gpu(ad.only(ad.loss_gpu(static=1.05), "loss_scaling/train_fp")))
    assert gone.verdict == CAVEAT and gone.caveats[0].startswith("BF16 not measured: no ")
    refuted = rules.q2_gpu(gpu(ad.only(ad.loss_gpu(noscale=1.5), "loss_scaling/train_fp")))
    assert refuted.verdict == FAILS and any(n.startswith("BF16 not measured") for n in
                                            refuted.notes)


def test_q2_a_failed_mode_or_an_absent_counter_is_named():
    rows = ad.failing(ad.loss_gpu(), "loss_scaling/train_fp16_dynamic", f"failed: {ILLEGAL}")
    a = rules.q2_gpu(gpu(rows))
    assert a.verdict == NOT_MEASURED and "train_fp16_dynamic" in a.why and "Illegal" in a.why
    lost = rules.q2_gpu(gpu(ad.without(ad.loss_gpu(), "final_loss",
                                       "loss_scaling/train_fp16_dynamic")))
    assert lost.verdict == NOT_MEASURED and schema.FINAL_LOSS in lost.why
    host_lost = rules.q2_host(host(ad.without(ad.loss_host(), "final_loss_vs_fp32")))
    assert host_lost.verdict == NOT_MEASURED and "final_loss_vs_fp32" in host_lost.why


# --- Q3 --------------------------------------------------------------------------------------

def test_q3_a_strong_ffma_kernel_is_separation_evidence_not_a_tracking_point():
    """The SIMT row's % of peak is against the FP32 pipe: at 88 % it drove rho to 0.14 and the
    verdict to "does not hold here"; it is evidence that the metric separates the paths."""
    rows = ad.tensor_util()
    for r in rows:
        if r["name"].startswith("tensor_util/simt/"):
            r["pct_of_peak"] = 88.0
    a = rules.q3_gpu(gpu(rows, **AMPERE))
    assert a.verdict == HOLDS, a.caveats
    rho = next(e for e in a.evidence if e.metric.startswith("spearman"))
    assert rho.value == pytest.approx(1.0) and "Tensor Core" in rho.source


def test_q3_without_a_simt_row_separation_is_untested_not_refuted():
    rows = [r for r in ad.tensor_util() if not r["name"].startswith("tensor_util/simt/")]
    a = rules.q3_gpu(gpu(rows, **AMPERE))
    assert a.verdict == CAVEAT
    assert any("no SIMT row" in c and "not tested" in c for c in a.caveats)


def test_q3_without_a_tensor_core_row_with_counters_is_not_measured():
    rows = ad.without(ad.tensor_util(), "tensor_active_pct", "tensor_util/cublaslt")
    rows = ad.without(rows, "tensor_active_pct", "tensor_util/wmma")
    a = rules.q3_gpu(gpu(rows, **AMPERE))
    assert a.verdict == NOT_MEASURED and "tensor_active_pct" in a.why


def test_q3_filtered_to_simt_and_wmma_decides_nothing_it_did_not_test():
    """simt at 0.2 % and one WMMA GEMM at 30 % (25 % of peak): no cuBLASLt GEMM to read near
    peak, one Tensor Core row (no rank correlation): untested parts are caveats."""
    a = rules.q3_gpu(gpu(ad.tensor_util()[:2], **AMPERE))
    assert a.verdict == CAVEAT
    assert any("no cuBLASLt GEMM" in c for c in a.caveats)
    assert any("tracks throughput is not tested" in c for c in a.caveats)
    # What the rows do test still decides: a busy SIMT kernel refutes separation.
    assert rules.q3_gpu(gpu(ad.tensor_util(simt=20.0)[:2], **AMPERE)).verdict == FAILS
    # A cuBLASLt GEMM that reads idle pipes refutes it too.
    assert rules.q3_gpu(gpu(ad.tensor_util(tensor=(30.0, 35.0, 40.0, 45.0)),
                            **AMPERE)).verdict == FAILS


def test_q3_whole_steps_with_odd_names_or_absent_counters_do_not_crash_or_invent_zeros():
    """Before: a hidden:<word> name raised ValueError (exit 70), and absent time_pct_* counters
    read as 0 % of the step."""
    odd = ad.train_steps()
    odd[1]["name"] = odd[1]["run_name"] = "tensor_util/train_step/fp16/hidden:wide/tokens:4096"
    del odd[1]["tcbench_args"]  # a name BenchName no longer builds: an older file's row
    a = rules.q3_gpu(gpu(ad.tensor_util() + odd, **AMPERE))
    assert a.verdict in (HOLDS, CAVEAT)
    bare = ad.train_steps()
    for counter in ("time_pct_unscale", "time_pct_optimizer", "time_pct_gaps"):
        bare = ad.without(bare, counter)
    b = rules.q3_gpu(gpu(ad.tensor_util() + bare, **AMPERE))
    assert not any("0 % of its time" in c for c in b.caveats)
    assert any("time_pct_unscale" in n for n in b.notes + b.caveats)


# --- Q4 --------------------------------------------------------------------------------------

def cublas_only(t32: float, t33: float) -> list[dict]:
    p = "alignment/cublas/fp16/m:4096/n:{}/k:4096/layout:nn"
    return [ad.row(p.format(n), tflops=t, spread_pct=1.0) for n, t in ((32, t32), (33, t33))]


def test_q4_falls_back_to_the_cublas_pair_and_names_it():
    """A run with only cuBLAS pairs (33 at 0.60x of 32): before, "not measured"."""
    a = rules.q4_gpu(gpu(cublas_only(100.0, 60.0)))
    assert a.verdict == HOLDS
    assert "cuBLAS (cublasGemmEx)" in a.notes[0] and "x0.60" in a.notes[0]
    assert "cuBLAS (cublasGemmEx) FP16" in a.rule
    failed = rules.q4_gpu(gpu(ad.failing(ad.alignment_gpu(fp8_skip=False),
                                         "alignment/cublaslt/fp16/", f"failed: {ILLEGAL}")
                              + cublas_only(100.0, 99.5)))
    assert failed.verdict == FAILS and "cuBLAS (cublasGemmEx)" in failed.caveats[0]
    nothing = rules.q4_gpu(gpu(ad.failing(ad.alignment_gpu(), "alignment/cublaslt/fp16/",
                                          f"failed: {ILLEGAL}")))
    assert nothing.verdict == NOT_MEASURED and "cudaErrorIllegalAddress" in nothing.why


def test_q4_the_headline_gives_the_evidence_for_the_verdict():
    """D5: "holds with a caveat" because other pairs lose; the first caveat says so, the
    headline pair within the noise comes after."""
    a = rules.q4_gpu(gpu(ad.alignment_gpu()))
    assert a.verdict == CAVEAT
    assert a.caveats[0].startswith("33 does lose with B N-contiguous (layout:nt): x0.67")
    assert any("within the noise" in c and "x1.03" in c for c in a.caveats[1:])


# --- Q5 --------------------------------------------------------------------------------------

def test_q5_host_without_its_counters_is_not_measured_not_a_crash():
    """Before: max() of an empty list (exit 70)."""
    a = rules.q5_host(host(ad.without(ad.fp8_study(), "current_error_mean")))
    assert a.verdict == NOT_MEASURED and "current_error_mean" in a.why


def test_q5_host_without_the_saturation_share_still_decides():
    """Before: a TypeError formatting None (exit 70)."""
    a = rules.q5_host(host(ad.without(ad.fp8_study(), "worst_saturated_pct")))
    assert a.verdict == CAVEAT
    assert any("worst_saturated_pct" in c for c in a.caveats)


def test_q5_gpu_names_the_counter_it_lacks():
    a = rules.q5_gpu(gpu(ad.without(ad.fp8_gpu(), "rel_error_unquantized")))
    assert a.verdict == NOT_MEASURED and "rel_error_unquantized" in a.why
    assert "speedup_vs_bf16" not in a.why


# --- every counter, every row: absent evidence never refutes ----------------------------------

def every_row() -> tuple[list[dict], list[dict]]:
    host_rows = ad.int8_study() + ad.loss_host() + ad.alignment_model(nt=(65.6, 49.4)) \
        + ad.fp8_study()
    gpu_rows = (ad.int8_gpu() + ad.loss_gpu() + ad.tensor_util(small=(30.0, 5.0))
                + ad.train_steps() + ad.alignment_gpu(cublas=(100.0, 90.0), heads=(50.0, 40.0))
                + ad.fp8_gpu())
    return host_rows, gpu_rows


def answers_of(host_rows, gpu_rows):
    out = answer_all([host(host_rows), gpu(gpu_rows, **AMPERE)])
    for a in out:
        keeps_the_invariant(a)
    return {(a.id, a.scope): a for a in out}


def removals():
    """(side, row index, counter) for every counter of every row."""
    host_rows, gpu_rows = every_row()
    fixed = GBENCH_FIELDS  # Google Benchmark's own fields and tcbench's row keys
    for side, rows in (("host", host_rows), ("gpu", gpu_rows)):
        for i, r in enumerate(rows):
            for counter in sorted(set(r) - fixed):
                yield side, i, counter


def test_absent_counters_never_refute_and_not_measured_names_the_counter():
    host_rows, gpu_rows = every_row()
    full = answers_of(host_rows, gpu_rows)
    for side, i, counter in removals():
        h, g = [dict(r) for r in host_rows], [dict(r) for r in gpu_rows]
        row = (h if side == "host" else g)[i]
        del row[counter]
        got = answers_of(h, g)
        for key, a in got.items():
            before = full[key].verdict
            assert a.verdict == before or a.verdict != FAILS, (row["name"], counter, key)
            if a.verdict == NOT_MEASURED and before != NOT_MEASURED:
                assert counter in a.why, (row["name"], counter, key, a.why)


def test_a_failed_or_skipped_row_never_refutes():
    host_rows, gpu_rows = every_row()
    full = answers_of(host_rows, gpu_rows)
    for side, rows in (("host", host_rows), ("gpu", gpu_rows)):
        for i, r in enumerate(rows):
            for error in (f"failed: {ILLEGAL}", "skipped: not on this GPU"):
                changed = [dict(x) for x in rows]
                changed[i:i + 1] = ad.failing([r], r["name"], error)
                got = (answers_of(changed, gpu_rows) if side == "host"
                       else answers_of(host_rows, changed))
                for key, a in got.items():
                    assert a.verdict == full[key].verdict or a.verdict != FAILS, (r["name"], key)


def test_every_verdict_of_every_rule_keeps_the_invariant():
    """holds has no caveat (notes carry the rest), a caveat or refutation has one."""
    cases = [rules.q1_host(host(ad.int8_study(worst=93.8))), rules.q1_host(host(ad.int8_study())),
             rules.q1_gpu(gpu(ad.int8_gpu())), rules.q1_gpu(gpu(ad.int8_gpu(mlp_speedup=0.7))),
             rules.q2_host(host(ad.loss_host(static=1.05))), rules.q2_host(host(ad.loss_host())),
             rules.q2_gpu(gpu(ad.loss_gpu())),
             rules.q3_gpu(gpu(ad.tensor_util(), **AMPERE)), rules.q3_gpu(gpu(ad.tensor_util())),
             rules.q4_gpu(gpu(ad.alignment_gpu(t33=80.0))), rules.q4_gpu(gpu(ad.alignment_gpu())),
             rules.q5_host(host(ad.fp8_study(saturated_steps=0))),
             rules.q5_host(host(ad.fp8_study())), rules.q5_gpu(gpu(ad.fp8_gpu())),
             rules.q5_gpu(gpu(ad.fp8_gpu(fp8_layers=3)))]
    assert {a.verdict for a in cases} == {HOLDS, CAVEAT}
    assert sum(a.verdict == HOLDS for a in cases) >= 7
    for a in cases:
        keeps_the_invariant(a)
