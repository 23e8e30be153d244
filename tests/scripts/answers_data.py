"""Result documents built for the verdict rules of tcbench answers: the smallest result files
that give each rule each verdict it can reach. Synthetic test data, not measurements. The rows
are factory.py's (copies of rows the C++ wrote, with these counters); their names are built as
the C++ builds them (names.BenchName) from the parts the rules read (answers/rules.py), never
written by hand (test_gpu_check_plan checks the binaries list every GPU one)."""

from __future__ import annotations

import copy

import factory

from tcbench_tools.answers import evidence
from tcbench_tools.answers import rules as r
from tcbench_tools.names import BenchName as N

HOST_CONTEXT = {"tcbench_kind": evidence.HOST_KIND, "tcbench_note": "no GPU: host studies only",
                "tcbench_synthetic": "true", "tcbench_version": "0.2.0"}
GPU_CONTEXT = {"gpu_name": "Answers GPU", "compute_capability": "9.0", "tcbench_version": "0.2.0",
               "tcbench_synthetic": "true"}


def row(name: str, seconds: float = 1e-3, label: str = "", error: str | None = None,
        **counters: float) -> dict:
    """One repetition's row, as factory.py makes it (its time in seconds); `name` a string or a
    BenchName."""
    return factory.rows_of(factory.row(str(name), seconds, label, error, **counters),
                           seconds_unit="s")[0]


def doc(context: dict, rows: list[dict]) -> dict:
    """A result document (factory.document's context: the schema when it is tcbench's); with no
    rows it holds one unrelated row (an empty benchmarks list is not Google Benchmark output),
    so a rule sees a run that lacks its evidence."""
    out = factory.document([], context)
    out["benchmarks"] = copy.deepcopy(rows or [row(N("unrelated", "bench", "fp32").arg("n", 1))])
    return out


# --- Q1 --------------------------------------------------------------------------------------

def int8_study(fp32=94.3, best=95.2, worst=93.1, qat=95.1, bad=80.0) -> list[dict]:
    acc = "top1_accuracy_pct"
    return [row(N(r.INT8_STUDY, "fp32", "fp32"), **{acc: fp32}),
            *(row(N(r.INT8_STUDY, v, "int8"), **{acc: x}) for v, x in
              (("ptq_max", worst), ("ptq_p99.99", best), ("ptq_bad_clip", bad), ("qat", qat)))]


def int8_gpu(speedup=1.8, label="IMMA int8->int32", mlp_speedup=1.2, spread=2.0) -> list[dict]:
    def sq(p: str) -> N:
        return N(r.INT8_GEMM, r.CUBLASLT, p).gemm(8192, 8192, 8192, "tn")

    def mlp(tokens: int) -> N:
        return N(r.INT8_GEMM, "mlp", "int8").arg("tokens", tokens).arg("layout", "tn")

    return [row(sq("int8"), label=label, tops=1000.0, speedup_vs_fp16=speedup, spread_pct=spread),
            row(sq("fp16"), label="HMMA fp16->fp32", tflops=600.0, spread_pct=spread),
            row(mlp(32), speedup_vs_fp16=mlp_speedup), row(mlp(8192), speedup_vs_fp16=1.5)]


# --- Q2 --------------------------------------------------------------------------------------

def loss_host(noscale=438.0, static=2.6, dynamic=1.004, bf16=1.03) -> list[dict]:
    v = "final_loss_vs_fp32"

    def t(mode: str, p: str) -> N:
        return train(r.LOSS_STUDY, mode, p, 400)

    return [row(t("fp32", "fp32"), **{v: 1.0, "final_loss": 1e-9, "underflow_pct": 0.0}),
            row(t("fp16_noscale", "fp16"), **{v: noscale, "underflow_pct": 45.4}),
            row(t("fp16_static", "fp16"), **{v: static, "underflow_pct": 31.1}),
            row(t("fp16_dynamic", "fp16"), **{v: dynamic, "underflow_pct": 1.46}),
            row(t("bf16_noscale", "bf16"), **{v: bf16, "underflow_pct": 0.0}),
            row(N(r.LOSS_STUDY, "landing_mlp", "fp16").arg("scale_log2", 0), underflow_pct=60.0)]


def train(topic: str, mode: str, precision: str, steps: int) -> N:
    """A five-mode training row (train_<mode>, r.TRAIN_MODES)."""
    return N(topic, f"train_{mode}", precision).arg("steps", steps)


def loss_gpu(fp32=1.0, noscale=400.0, static=1.05, dynamic=1.02, bf16=1.04) -> list[dict]:
    def t(mode: str, p: str) -> N:
        return train(r.LOSS_SCALING, mode, p, 400)

    return [row(t("fp32", "fp32"), final_loss=fp32),
            row(t("fp16_noscale", "fp16"), final_loss=noscale * fp32, underflow_pct=40.0),
            row(t("fp16_static", "fp16"), final_loss=static * fp32),
            row(t("fp16_dynamic", "fp16"), final_loss=dynamic * fp32, underflow_pct=1.0),
            row(t("bf16_noscale", "bf16"), final_loss=bf16 * fp32, underflow_pct=0.0),
            row(N(r.LOSS_SCALING, "unscale", "fp32").arg("elements", 10000000),
                unscale_pct_of_step=2.5)]


# --- Q3 --------------------------------------------------------------------------------------

def tensor_util(simt=0.2, tensor=(30.0, 60.0, 85.0, 90.0), peaks=(25.0, 55.0, 80.0, 88.0),
                counters=True, small: tuple[float, float] | None = None) -> list[dict]:
    """``small``: (tensor_active_pct, pct_of_peak) of a 256^3 GEMM row, or none."""
    def sq(v: str, p: str, size: int = 8192) -> N:
        return N(r.TENSOR_UTIL, v, p).gemm(size, size, size, "nn")

    names = [sq(r.WMMA, "fp16"), sq(r.CUBLASLT, "tf32"), sq(r.CUBLASLT, "bf16"),
             sq(r.CUBLASLT, "fp16")]
    if not counters:
        note = "SIMT FFMA; counters skipped: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"
        return [row(sq(r.SIMT, "fp32"), label=note, pct_of_peak=40.0)]
    rows = [row(sq(r.SIMT, "fp32"), tensor_active_pct=simt, pct_of_peak=40.0)]
    rows += [row(n, tensor_active_pct=t, pct_of_peak=p) for n, t, p in zip(names, tensor, peaks)]
    if small is not None:
        rows.append(row(sq("cublaslt_small", "fp16", 256), tensor_active_pct=small[0],
                        pct_of_peak=small[1]))
    rows.append(row(N(r.TENSOR_UTIL, "memory", "fp32").arg("elements", 134217728),
                    tensor_active_pct=0.0, gbps=3000.0))
    return rows


def train_steps(ffma=0.0, wide_fp16=(58.0, 480.0)) -> list[dict]:
    """bench_tensor_util's whole-step rows: FP16 and FP32 at two widths. ``wide_fp16`` is the
    wide FP16 step's (tensor_active_pct, tflops); the small one reads 12 % at 0.05 TFLOP/s."""
    def t(p: str, hidden: int, tokens: int) -> N:
        return N(r.TENSOR_UTIL, "train_step", p).arg("hidden", hidden).arg("tokens", tokens)

    phases = dict(time_pct_forward=31.0, time_pct_backward=42.0, time_pct_unscale=6.0,
                  time_pct_optimizer=20.0, time_pct_gaps=1.0)
    return [row(t("fp16", 64, 256), tensor_active_pct=12.0, tflops=0.05, **phases),
            row(t("fp16", 4096, 4096), tensor_active_pct=wide_fp16[0],
                tflops=wide_fp16[1], gemm_phases_ceiling_pct=74.6, **phases),
            row(t("fp32", 64, 256), tensor_active_pct=ffma, tflops=0.04, **phases),
            row(t("fp32", 4096, 4096), tensor_active_pct=ffma, tflops=55.0, **phases)]


# --- Q4 --------------------------------------------------------------------------------------

def alignment_model(t32=65.6, t33=67.7, nt: tuple[float, float] | None = None) -> list[dict]:
    """tcbench_studies' GEMM time model rows (predicted_tflops), NN; ``nt``: also layout:nt."""
    def p(n: int, layout: str) -> N:
        return N(r.ALIGNMENT_MODEL, "h100_sxm", "fp16").gemm(r.HEADLINE_MK, n, r.HEADLINE_MK,
                                                            layout)

    rows = [row(p(r.ALIGNED_N, "nn"), predicted_tflops=t32),
            row(p(r.ODD_N, "nn"), predicted_tflops=t33)]
    if nt is not None:
        rows += [row(p(n, "nt"), predicted_tflops=t) for n, t in zip((r.ALIGNED_N, r.ODD_N), nt)]
    return rows


def alignment_gpu(t32=100.0, t33=103.0, nt32=90.0, nt33=60.0, spread=2.0, fp8_skip=True,
                  cublas: tuple[float, float] | None = None,
                  heads: tuple[float, float] | None = None):
    """``cublas``: cublasGemmEx's FP16 NN TFLOP/s at (N = 32, N = 33), or no cuBLAS rows;
    ``heads``: cuBLASLt's strided batch of (32, 33) heads of 128 x 128 x 64, or none."""
    a, b = r.ALIGNED_N, r.ODD_N

    def p(api: str, prec: str, n: int, layout: str) -> N:
        return N(r.ALIGNMENT, api, prec).gemm(r.HEADLINE_MK, n, r.HEADLINE_MK, layout)

    rows = [row(p(r.CUBLASLT, "fp16", a, "nn"), tflops=t32, spread_pct=spread),
            row(p(r.CUBLASLT, "fp16", b, "nn"), tflops=t33, spread_pct=spread),
            row(p(r.CUBLASLT, "fp16", a, "nt"), tflops=nt32, spread_pct=spread),
            row(p(r.CUBLASLT, "fp16", b, "nt"), tflops=nt33, spread_pct=spread)]
    if cublas is not None:
        rows += [row(p(r.CUBLAS, "fp16", n, "nn"), tflops=t, spread_pct=spread)
                 for n, t in zip((a, b), cublas)]
    if heads is not None:
        rows += [row(N(r.ALIGNMENT, r.CUBLASLT, "fp16").gemm(128, 128, 64, "nn").arg("batch", h),
                     tflops=t, spread_pct=spread) for h, t in zip((a, b), heads)]
    if fp8_skip:
        rows.append(row(p(r.CUBLASLT, "fp8", b, "tn"),
                        error="skipped: FP8 GEMMs need m and k to be multiples of 16 and n a "
                              "multiple of 8; got m=4096 n=33 k=4096."))
    return rows


# --- Q5 --------------------------------------------------------------------------------------

def fp8_study(current=0.028, saturated_steps=3, worst_saturated=12.5) -> list[dict]:
    def n(growth: str) -> N:
        return N(r.FP8_STUDY, f"drift_growth_{growth}x", "fp8").arg("history", 16).arg("margin", 0)

    return [row(n("1.5"), current_error_mean=current, saturated_steps=saturated_steps,
                worst_saturated_pct=worst_saturated, delayed_error_mean=0.05),
            row(n("1.05"), current_error_mean=0.027, saturated_steps=0, worst_saturated_pct=0.0)]


def fp8_gpu(speedup=1.9, error=0.031, fp8_layers=4, within=1, block_speedup=1.6, skip=False):
    name = N(r.FP8, r.FP8_GEMM, "fp8").gemm(8192, 8192, 8192, "tn").arg("accum", "fast")
    if skip:
        return [row(name, error="skipped: FP8 GEMMs need compute capability 8.9 or newer (Ada, "
                                "Hopper, Blackwell); this GPU is 8.0.")]
    return [row(name, tflops=1500.0, speedup_vs_bf16=speedup, rel_error_unquantized=error,
                spread_pct=2.0),
            row(N(r.FP8, "block", "selected").arg("hidden", 4096).arg("tokens", 4096)
                .arg("layout", "tn"), fp8_layers=fp8_layers, within_budget=within,
                speedup_vs_bf16=block_speedup)]


# --- evidence that is absent, failed or filtered (issue 33 §1) ---------------------------------

def failing(rows: list[dict], start: str, error: str) -> list[dict]:
    """``rows`` with every row whose name starts with ``start`` turned into a Google Benchmark
    error row (``error`` starting "skipped:" is a skip, as the harness writes one), its counters
    gone, as a failed benchmark is written."""
    return [row(r["run_name"].removesuffix("/manual_time"), error=error)
            if r["name"].startswith(start) else r for r in rows]


def without(rows: list[dict], counter: str, start: str = "") -> list[dict]:
    """``rows`` with ``counter`` removed from every row whose name starts with ``start``: the
    results of a tcbench version that did not write it."""
    return [{k: v for k, v in r.items() if not (k == counter and r["name"].startswith(start))}
            for r in rows]


def only(rows: list[dict], *starts: str) -> list[dict]:
    """The rows whose names start with one of ``starts`` (a filtered run)."""
    return [r for r in rows if r["name"].startswith(starts)]
