"""The names, context keys and counters the benchmarks write, as the tools read them: the Python
mirror of the C++ schema (``tcbench::BenchName`` and ``tcbench::counters`` in
common/facts/include/tcbench/schema.hpp, and the precision table in
common/facts/include/tcbench/precision.hpp), and the keys ``tcbench run`` adds to a merged run
(runfile.py).

``tcbench_context --schema`` prints the C++ side as JSON, without a GPU;
tests/scripts/test_schema.py fails when this file and that output differ in any counter (either
direction), pattern, unit, direction or range, in the precision list or in the name grammar. The
tools import counter names from here, never as string literals.

Each counter has a physical range (``low``/``high``, None = unbounded): a value outside it cannot
come from a correct measurement, and the tools refuse it like a NaN (results.Benchmark.defect).
``better`` says which way is an improvement ("higher", "lower", or "none" for a description such as
a tile size). Standard library only: ``tcbench run`` imports this.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache

SCHEMA_VERSION = 1

# ---------------------------------------------------------------------------------------------
# Names: topic/variant/precision[/key:value]...

GRAMMAR = "topic/variant/precision[/key:value]..."
# The closed vocabulary of argument keys (a new key is a schema change on both sides).
KEYS = ("m", "n", "k", "layout", "batch", "tokens", "hidden", "elements", "steps", "scale_log2",
        "accum", "layer", "in", "recipe", "history", "margin", "promote",
        "regime")
# A GEMM name carries these, in this order (layout after k, so that filters such as
# "cublaslt/fp16/m:4096/" match).
GEMM_KEYS = ("m", "n", "k", "layout")
# layout:<op_a><op_b> in cuBLAS's column-major convention: "tn" = A transposed, B not (both
# operands K-contiguous, what IMMA and FP8 cuBLASLt GEMMs require).
LAYOUTS = ("nn", "nt", "tn", "tt")
# The one third segment that is neither a precision nor a precision's mix of layers: the FP8
# transformer block's per-layer selection (BenchName's mix constructor; fp8/block/<mix>/...).
MIX_SELECTED = "selected"

# ---------------------------------------------------------------------------------------------
# The context: the keys the tools read by name, and what tcbench run adds to a merged run

# Written by the C++ (tcbench_context prints them; tests/scripts/test_schema.py checks it).
VERSION = "tcbench_version"
QUICK = "tcbench_quick"  # "true" for a --quick run
# Written by tcbench_studies: "host-studies" for the host studies' results (answers/evidence.py),
# and the studies a file holds and the ones its run was asked for (comma-separated; a run
# stopped part way leaves the finished ones: studies.py marks such a file incomplete).
KIND = "tcbench_kind"
STUDIES_DONE = "tcbench_studies_done"
STUDIES_PLANNED = "tcbench_studies_planned"
# The sha256 of the tcbench_studies that wrote a studies.json (it reads no other input): a later
# run with the same tool reuses the file instead of computing it again (studies.py).
STUDIES_TOOL_SHA256 = "tcbench_studies_sha256"
# The GPU model, and what tells one GPU (or MIG instance) from another of the same model: a run
# measures one GPU, so the files of one run agree on every one of these they state
# (runfile.check_one_gpu, for tcbench run's merge and for reading a folder alike).
GPU_MODEL = ("gpu_name", "compute_capability")
GPU_IDENTITY = (*GPU_MODEL, "gpu_uuid", "gpu_mig_mode", "sm_count")
# The software a measurement depends on beside the GPU model (compare warns when it changed).
SOFTWARE = ("driver_version", "cuda_runtime", "cublaslt_version")

# Added by tcbench run to the context of the results.json it merges (runfile.merge):
RUN_BINARIES = "tcbench_binaries"  # the binaries merged, comma-separated, in run order
RUN_SOURCES = "tcbench_sources"  # <file>:<content hash> of each file merged
RUN_FAILED = "tcbench_failed_binaries"  # <binary>:<exit code> of each that did not exit 0
RUN_LOST = "tcbench_lost_binaries"  # the binaries that left no usable results
RUN_INCOMPLETE = "tcbench_incomplete"  # why the run stopped before every binary ran
RUN_KEYS = (RUN_BINARIES, RUN_SOURCES, RUN_FAILED, RUN_LOST, RUN_INCOMPLETE)
# ... and to each merged row: the binary that wrote it (not a counter).
ROW_BINARY = "tcbench_binary"

# ---------------------------------------------------------------------------------------------
# Precisions: one row each of the C++ table, in its order


@dataclass(frozen=True)
class Precision:
    name: str
    integer: bool  # integer math: throughput in TOP/s
    rate_counter: str  # the throughput counter its GEMMs report: "tops" or "tflops"


TFLOPS = "tflops"
TOPS = "tops"
GBPS = "gbps"

PRECISION_TABLE = (
    Precision("fp64", False, TFLOPS),
    Precision("fp32", False, TFLOPS),
    Precision("tf32", False, TFLOPS),
    Precision("fp16", False, TFLOPS),
    Precision("fp16_acc16", False, TFLOPS),
    Precision("bf16", False, TFLOPS),
    Precision("int8", True, TOPS),
    Precision("fp8", False, TFLOPS),
    Precision("fp4", False, TFLOPS),
    Precision("fp6", False, TFLOPS),
)
PRECISIONS = tuple(p.name for p in PRECISION_TABLE)


def rate_counter(precision: str) -> str:
    """``tops`` for integer precisions, ``tflops`` for the rest (and for unknown names)."""
    row = next((p for p in PRECISION_TABLE if p.name == precision), None)
    return row.rate_counter if row is not None else TFLOPS


# ---------------------------------------------------------------------------------------------
# Counters

HIGHER, LOWER, NONE = "higher", "lower", "none"


@dataclass(frozen=True)
class Counter:
    """One counter, or one family of counters (``speedup_vs_<precision>``, ``loss_at_<NN>``)."""

    name: str  # the counter's name; a family's has a <placeholder>
    pattern: str  # full-match regular expression for the names it covers
    unit: str
    better: str  # HIGHER, LOWER or NONE
    low: float | None = None  # physically possible range; None: unbounded
    low_inclusive: bool = True
    high: float | None = None  # always inclusive

    def matches(self, counter: str) -> bool:
        return re.fullmatch(self.pattern, counter) is not None

    def in_range(self, value: float) -> bool:
        if self.low is not None and (value < self.low
                                     or (value == self.low and not self.low_inclusive)):
            return False
        return self.high is None or value <= self.high

    def range_text(self) -> str:
        """The range in words: "> 0", ">= 0 and <= 100", "any value"."""
        parts = []
        if self.low is not None:
            parts.append(f"{'>=' if self.low_inclusive else '>'} {self.low:g}")
        if self.high is not None:
            parts.append(f"<= {self.high:g}")
        return " and ".join(parts) or "any value"


def _fixed(name: str, unit: str, better: str, low: float | None, low_inclusive: bool,
           high: float | None = None) -> Counter:
    return Counter(name, f"^{re.escape(name)}$", unit, better, low, low_inclusive, high)


# The harness (common/bench/src/measure.cpp, gemm_bench.cpp): every timed benchmark.
SAMPLES = "samples"
TIME_MEDIAN_US = "time_median_us"
TIME_P10_US = "time_p10_us"
TIME_P90_US = "time_p90_us"
SPREAD_PCT = "spread_pct"
PCT_OF_PEAK = "pct_of_peak"
REL_ERROR = "rel_error"
WAVES = "waves"
VS_CUBLASLT = "vs_cublaslt"  # cuBLAS rows: cuBLASLt's time on the same problem / the cuBLAS time
# bench_alignment
ALIGN_M_BYTES = "align_m_bytes"
ALIGN_N_BYTES = "align_n_bytes"
ALIGN_K_BYTES = "align_k_bytes"
MODEL_EFFICIENCY = "model_efficiency"
MODEL_TFLOPS = "model_tflops"
MODEL_WAVES = "model_waves"
PREDICTED_TFLOPS = "predicted_tflops"  # the GEMM time model (model, no measurement)
MODEL_RATIO = "model_ratio"  # predicted_tflops / the measured rate
TILE_M = "tile_m"
TILE_N = "tile_n"
SPLIT_K = "split_k"
SLOWDOWN_VS_ALIGNED = "slowdown_vs_aligned"
PADDED_N = "padded_n"
COPY_US = "copy_us"
GEMM_US = "gemm_us"
UNPADDED_US = "unpadded_us"
PADDING_WINS = "padding_wins"
# bench_loss_scaling
UNDERFLOW_PCT = "underflow_pct"
SUBNORMAL_PCT = "subnormal_pct"
OVERFLOW_PCT = "overflow_pct"
NORMAL_PCT = "normal_pct"
VALUES = "values"
FINAL_LOSS = "final_loss"
FINAL_SCALE = "final_scale"
SKIPPED_STEPS = "skipped_steps"
TIME_PER_STEP_US = "time_per_step_us"
GEMM_US_PER_STEP = "gemm_us_per_step"
STEPS_RUN = "steps_run"
CURVE_POINTS = "curve_points"
STEP_GEMM_MS = "step_gemm_ms"
UNSCALE_PCT_OF_STEP = "unscale_pct_of_step"
TOKENS_PER_STEP = "tokens_per_step"
TENSORS = "tensors"
# bench_fp8
REL_ERROR_UNQUANTIZED = "rel_error_unquantized"
AMAX_D = "amax_d"
RECIPE_US = "recipe_us"
OVERHEAD_PCT = "overhead_pct"
TIME_US = "time_us"
SELECTED = "selected"
BLOCK_TIME_US = "block_time_us"
BLOCK_REL_ERROR = "block_rel_error"
FP8_LAYERS = "fp8_layers"
WITHIN_BUDGET = "within_budget"
BUDGET = "budget"
ACCUMULATOR_BITS = "accumulator_bits"
ACCUMULATOR_AT_LEAST = "accumulator_at_least"
ACCUMULATOR_ROUNDING = "accumulator_rounding"
ACCUMULATOR_STEP = "accumulator_step"
PROMOTION_INTERVAL = "promotion_interval"
# bench_block_scaling
BYTES_PER_ELEMENT = "bytes_per_element"
# bench_tensor_peak
CLOCK_MHZ_MEASURED = "clock_mhz_measured"
CLOCK_MHZ_ATTRIBUTE = "clock_mhz_attribute"
INSTRUCTIONS = "instructions"
PCT_OF_CLOCK_MODEL = "pct_of_clock_model"
PCT_OF_MAX_CLOCK_MODEL = "pct_of_max_clock_model"
PCT_OF_DATASHEET = "pct_of_datasheet"
# The tensor-pipe counters CUPTI reads (common/profiling/src/metric_table.cpp), in report order.
TENSOR_ACTIVE_PCT = "tensor_active_pct"
TENSOR_HMMA_PCT = "tensor_hmma_pct"
TENSOR_IMMA_PCT = "tensor_imma_pct"
TENSOR_DMMA_PCT = "tensor_dmma_pct"
TENSOR_HMMA_HGMMA_QGMMA_PCT = "tensor_hmma_hgmma_qgmma_pct"
SM_THROUGHPUT_PCT = "sm_throughput_pct"
DRAM_THROUGHPUT_PCT = "dram_throughput_pct"
PROFILE_COUNTERS = (TENSOR_ACTIVE_PCT, TENSOR_HMMA_PCT, TENSOR_IMMA_PCT, TENSOR_DMMA_PCT,
                    TENSOR_HMMA_HGMMA_QGMMA_PCT, SM_THROUGHPUT_PCT, DRAM_THROUGHPUT_PCT)
PROFILE_PASSES = "profile_passes"
COUNTERS_ERROR = "counters_error"  # 1 when the row's CUPTI counters failed (its label says why)
# A whole training step (bench_tensor_util train_step rows) and its phases
STEP_TENSOR_MIX_PCT = "step_tensor_mix_pct"
GEMM_PHASES_CEILING_PCT = "gemm_phases_ceiling_pct"
STEP_GFLOP = "step_gflop"
STEP_PHASES = ("forward", "backward", "unscale", "optimizer")  # studies::StepPhase, in order
GAPS = "gaps"  # time_pct_gaps: the step's time between its phases
# Clocks, power and energy while timing (NVML; common/runtime/include/tcbench/power.hpp)
SM_CLOCK_MHZ = "sm_clock_mhz"
POWER_W = "power_w"
ENERGY_J = "energy_j"
TFLOPS_PER_W = "tflops_per_w"
TOPS_PER_W = "tops_per_w"
GBPS_PER_W = "gbps_per_w"
TEMP_C_MAX = "temp_c_max"
THROTTLE = "throttle"
PCT_OF_PEAK_AT_CLOCK = "pct_of_peak_at_clock"
# Burst and sustained (bench_sustained: regime:burst and regime:sustained rows)
IDLE_S = "idle_s"
SETTLE_S = "settle_s"
STEADY = "steady"
WINDOW_S = "window_s"
TRACE_S = "trace_s"
# tcbench_studies: the host studies (common/host_studies/tools/tcbench_studies.cpp)
TOP1_ACCURACY_PCT = "top1_accuracy_pct"
TOP1_AGREEMENT_PCT = "top1_agreement_pct"
FINAL_LOSS_VS_FP32 = "final_loss_vs_fp32"
SATURATED_STEPS = "saturated_steps"
WORST_SATURATED_PCT = "worst_saturated_pct"
UNDERFLOW_STEPS = "underflow_steps"
DELAYED_ERROR_MEAN = "delayed_error_mean"
DELAYED_ERROR_WORST = "delayed_error_worst"
CURRENT_ERROR_MEAN = "current_error_mean"

# Families: one entry covers every name the function gives.
SPEEDUP_VS = "speedup_vs_<precision>"
ACCURACY = "accuracy_<variant>"
AGREEMENT = "agreement_<variant>"
LOSS_AT = "loss_at_<NN>"
SCALE_AT = "scale_at_<NN>"
TENSOR_ACTIVE_PHASE = "tensor_active_pct_<phase>"
TIME_PCT = "time_pct_<phase>"
CLOCK_AT = "clock_at_<NN>"
POWER_AT = "power_at_<NN>"
_VARIANT = r"[a-z0-9_.]+"  # INT8 deployment variants: fp32, ptq_max, ptq_p99.9, qat, ...


def speedup_vs(precision: str) -> str:
    """This benchmark's time in ``precision`` over its own (same problem, same layout)."""
    return f"speedup_vs_{precision}"


def accuracy(variant: str) -> str:
    return f"accuracy_{variant}"


def agreement(variant: str) -> str:
    return f"agreement_{variant}"


def loss_at(point: int) -> str:
    """Point ``point`` of a training run's loss curve (``loss_at_00`` ...)."""
    return f"loss_at_{point:02d}"


def scale_at(point: int) -> str:
    return f"scale_at_{point:02d}"


def clock_at(point: int) -> str:
    """Slice ``point`` of a sustained row's clock trace (``clock_at_00`` ...)."""
    return f"clock_at_{point:02d}"


def power_at(point: int) -> str:
    return f"power_at_{point:02d}"


def tensor_active_in(phase: str) -> str:
    """A training step phase's tensor-pipe % (``tensor_active_pct_forward`` ...)."""
    return f"tensor_active_pct_{phase}"


def time_share(phase: str) -> str:
    """A phase's share of the step's time (``time_pct_forward`` ..., ``time_pct_gaps``)."""
    return f"time_pct_{phase}"


COUNTERS = (  # in the C++ order
    # The harness: every timed benchmark.
    _fixed(SAMPLES, "count", NONE, 1, True),
    _fixed(TIME_MEDIAN_US, "us", LOWER, 0, False),
    _fixed(TIME_P10_US, "us", LOWER, 0, False),
    _fixed(TIME_P90_US, "us", LOWER, 0, False),
    _fixed(SPREAD_PCT, "%", LOWER, 0, True),
    _fixed(TFLOPS, "TFLOP/s", HIGHER, 0, False),
    _fixed(TOPS, "TOP/s", HIGHER, 0, False),
    _fixed(GBPS, "GB/s", HIGHER, 0, False),
    _fixed(PCT_OF_PEAK, "%", HIGHER, 0, False, 200),
    _fixed(REL_ERROR, "", LOWER, 0, True),
    _fixed(WAVES, "waves", NONE, 0, True),
    _fixed(VS_CUBLASLT, "x", NONE, 0, False),
    # bench_fp8
    _fixed(REL_ERROR_UNQUANTIZED, "", LOWER, 0, True),
    _fixed(AMAX_D, "", NONE, 0, True),
    _fixed(RECIPE_US, "us", LOWER, 0, False),
    _fixed(GEMM_US, "us", LOWER, 0, False),
    _fixed(OVERHEAD_PCT, "%", LOWER, 0, True),
    _fixed(TIME_US, "us", LOWER, 0, False),
    _fixed(SELECTED, "flag", NONE, 0, True, 1),
    _fixed(BLOCK_TIME_US, "us", LOWER, 0, False),
    _fixed(BLOCK_REL_ERROR, "", LOWER, 0, True),
    _fixed(FP8_LAYERS, "count", NONE, 0, True),
    _fixed(WITHIN_BUDGET, "flag", NONE, 0, True, 1),
    _fixed(BUDGET, "", NONE, 0, False),
    _fixed(ACCUMULATOR_BITS, "bits", NONE, 0, True, 64),
    _fixed(ACCUMULATOR_AT_LEAST, "flag", NONE, 0, True, 1),
    _fixed(ACCUMULATOR_ROUNDING, "code", NONE, 0, True, 2),
    _fixed(ACCUMULATOR_STEP, "count", NONE, 1, True),
    _fixed(PROMOTION_INTERVAL, "count", NONE, 0, True),
    # bench_block_scaling
    _fixed(BYTES_PER_ELEMENT, "B", LOWER, 0, False),
    # bench_alignment
    _fixed(MODEL_EFFICIENCY, "", NONE, 0, True, 1),
    _fixed(MODEL_TFLOPS, "TFLOP/s", NONE, 0, True),
    _fixed(MODEL_WAVES, "waves", NONE, 0, True),
    _fixed(PREDICTED_TFLOPS, "TFLOP/s", NONE, 0, True),
    _fixed(MODEL_RATIO, "x", NONE, 0, False),
    _fixed(TILE_M, "rows", NONE, 1, True),
    _fixed(TILE_N, "columns", NONE, 1, True),
    _fixed(SPLIT_K, "count", NONE, 1, True),
    _fixed(ALIGN_M_BYTES, "B", NONE, 1, True, 128),
    _fixed(ALIGN_N_BYTES, "B", NONE, 1, True, 128),
    _fixed(ALIGN_K_BYTES, "B", NONE, 1, True, 128),
    _fixed(SLOWDOWN_VS_ALIGNED, "x", LOWER, 0, False),
    _fixed(PADDED_N, "columns", NONE, 1, True),
    _fixed(COPY_US, "us", LOWER, 0, False),
    _fixed(UNPADDED_US, "us", LOWER, 0, False),
    _fixed(PADDING_WINS, "flag", NONE, 0, True, 1),
    # bench_loss_scaling
    _fixed(UNDERFLOW_PCT, "%", LOWER, 0, True, 100),
    _fixed(SUBNORMAL_PCT, "%", NONE, 0, True, 100),
    _fixed(OVERFLOW_PCT, "%", LOWER, 0, True, 100),
    _fixed(NORMAL_PCT, "%", HIGHER, 0, True, 100),
    _fixed(VALUES, "count", NONE, 1, True),
    _fixed(FINAL_LOSS, "", LOWER, 0, True),
    _fixed(SKIPPED_STEPS, "count", LOWER, 0, True),
    _fixed(FINAL_SCALE, "", NONE, 0, True),
    _fixed(TIME_PER_STEP_US, "us", LOWER, 0, False),
    _fixed(GEMM_US_PER_STEP, "us", LOWER, 0, False),
    _fixed(STEPS_RUN, "count", NONE, 1, True),
    _fixed(CURVE_POINTS, "count", NONE, 1, True),
    _fixed(STEP_GEMM_MS, "ms", LOWER, 0, False),
    _fixed(UNSCALE_PCT_OF_STEP, "%", LOWER, 0, True),
    _fixed(TOKENS_PER_STEP, "count", NONE, 1, True),
    _fixed(TENSORS, "count", NONE, 1, True),
    # Clocks, power and energy (NVML)
    _fixed(SM_CLOCK_MHZ, "MHz", NONE, 0, False),
    _fixed(POWER_W, "W", NONE, 0, False),
    _fixed(ENERGY_J, "J", LOWER, 0, False),
    _fixed(TFLOPS_PER_W, "TFLOP/s/W", HIGHER, 0, False),
    _fixed(TOPS_PER_W, "TOP/s/W", HIGHER, 0, False),
    _fixed(GBPS_PER_W, "GB/s/W", HIGHER, 0, False),
    _fixed(TEMP_C_MAX, "C", LOWER, -40, True, 150),
    _fixed(THROTTLE, "mask", NONE, 0, True),
    _fixed(PCT_OF_PEAK_AT_CLOCK, "%", HIGHER, 0, False, 200),
    # Burst and sustained (bench_sustained)
    _fixed(IDLE_S, "s", NONE, 0, True),
    _fixed(SETTLE_S, "s", NONE, 0, True),
    _fixed(STEADY, "flag", NONE, 0, True, 1),
    _fixed(WINDOW_S, "s", NONE, 0, False),
    _fixed(TRACE_S, "s", NONE, 0, False),
    # bench_tensor_peak
    _fixed(CLOCK_MHZ_MEASURED, "MHz", NONE, 0, False),
    _fixed(CLOCK_MHZ_ATTRIBUTE, "MHz", NONE, 0, False),
    _fixed(INSTRUCTIONS, "count", NONE, 1, True),
    _fixed(PCT_OF_CLOCK_MODEL, "%", HIGHER, 0, False, 200),
    _fixed(PCT_OF_MAX_CLOCK_MODEL, "%", HIGHER, 0, False, 200),
    _fixed(PCT_OF_DATASHEET, "%", HIGHER, 0, False, 200),
    # The CUPTI counters (bench_tensor_util)
    _fixed(PROFILE_PASSES, "count", NONE, 1, True),
    _fixed(COUNTERS_ERROR, "flag", NONE, 1, True, 1),
    *(_fixed(name, "%", NONE, 0, True, 200) for name in PROFILE_COUNTERS),
    # A whole training step (bench_tensor_util train_step rows)
    _fixed(STEP_TENSOR_MIX_PCT, "%", NONE, 0, True, 200),
    _fixed(GEMM_PHASES_CEILING_PCT, "%", NONE, 0, True, 200),
    _fixed(STEP_GFLOP, "GFLOP", NONE, 0, False),
    # The host studies (tcbench_studies)
    _fixed(TOP1_ACCURACY_PCT, "%", HIGHER, 0, True, 100),
    _fixed(TOP1_AGREEMENT_PCT, "%", HIGHER, 0, True, 100),
    _fixed(FINAL_LOSS_VS_FP32, "x", LOWER, 0, True),
    _fixed(SATURATED_STEPS, "count", LOWER, 0, True),
    _fixed(WORST_SATURATED_PCT, "%", LOWER, 0, True, 100),
    _fixed(UNDERFLOW_STEPS, "count", LOWER, 0, True),
    _fixed(DELAYED_ERROR_MEAN, "", LOWER, 0, True),
    _fixed(DELAYED_ERROR_WORST, "", LOWER, 0, True),
    _fixed(CURRENT_ERROR_MEAN, "", LOWER, 0, True),
    # Families
    Counter(SPEEDUP_VS, rf"^speedup_vs_({'|'.join(PRECISIONS)})$", "x", HIGHER, 0, False),
    Counter(ACCURACY, rf"^accuracy_{_VARIANT}$", "%", HIGHER, 0, True, 100),
    Counter(AGREEMENT, rf"^agreement_{_VARIANT}$", "%", HIGHER, 0, True, 100),
    Counter(LOSS_AT, r"^loss_at_[0-9]{2}$", "", LOWER, 0, True),
    Counter(SCALE_AT, r"^scale_at_[0-9]{2}$", "", NONE, 0, True),
    Counter(TENSOR_ACTIVE_PHASE, rf"^tensor_active_pct_({'|'.join(STEP_PHASES)})$", "%", NONE, 0,
            True, 200),
    Counter(TIME_PCT, rf"^time_pct_({'|'.join((*STEP_PHASES, GAPS))})$", "%", NONE, 0, True, 100),
    Counter(CLOCK_AT, r"^clock_at_[0-9]{2}$", "MHz", NONE, 0, False),
    Counter(POWER_AT, r"^power_at_[0-9]{2}$", "W", NONE, 0, False),
)
THROUGHPUT = (TFLOPS, TOPS, GBPS)  # in order of preference when a benchmark has several


@cache
def counter(name: str) -> Counter | None:
    """The schema entry for a counter name (a family's for its members); None when unknown."""
    exact = next((c for c in COUNTERS if c.name == name), None)
    return exact or next((c for c in COUNTERS if c.matches(name)), None)


def unit(name: str) -> str:
    found = counter(name)
    return found.unit if found is not None else ""


def out_of_range(name: str, value: float) -> str | None:
    """Why ``value`` cannot be a ``name`` counter ("outside its physical range (> 0)"), or None
    when it can (or the counter is not in the schema: other programs' counters pass)."""
    found = counter(name)
    if found is None or not math.isfinite(value) or found.in_range(value):
        return None
    return f"outside its physical range ({found.range_text()})"
