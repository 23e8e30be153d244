"""How long each step of the check will take: a cost model of the harness (a model, not a
measurement; docs/gpu-check.md, "How long it takes").

A benchmark row costs what the harness does for it (common/bench/src/measure.cpp, gemm_bench.cpp):

    process start (once per binary invocation)
    + setup x body calls        Google Benchmark calls a body 2-5 times to size a run; every call
                                allocates and fills its operands (the host-side operands of
                                block scaling are made once: once.hpp's latest())
    + windows x (warm-up + samples x (median + per-sample overhead))
                                one window per repetition (measure()'s rule); samples: at least 10
                                and at least --benchmark_min_time of medians, at most 10,000; the
                                overhead is the L2 flush (a memset of twice the L2) and the host
                                round trip of each sample's events
    + verification and baselines, once per configuration (a baseline is one more window)
    + CUPTI replays (tensor counters: the chip's passes x the profiled runs x the median)

The median of a row starts from the binaries' own ``--plan``: the least median the GPU's datasheet
peak and bandwidth allow for the row's work (common/bench/src/plan.cpp). The model divides it by a
published efficiency (docs/gpu-check.md cites each) and the SMs' wave quantization. The H200's row
and its bounds are what ``bench_* --quick --plan=H200`` printed (``PLAN_FILE``, which
tests/scripts/test_gpu_check_plan.py holds to the binaries); shapes no row lists (baselines, the
study layers) use the same peaks. Element sizes are the schema's (schema.json's precisions). During
the check, `Model.learn` re-estimates the per-sample overhead and a speed factor from the rows that
ran, and the plan is made again. The plan starts with the H200's row; the first benchmark step's
result file names the GPU (its context: SMs, compute capability, peaks, bandwidth), and every later
prediction uses that GPU's own row (``gpu_from_context``, ``with_gpu``). Per-process start-up is
learned from the steps too: the time until a binary's row file gets its first line (the context,
written once the CUDA context and NVML are up). A listed name the model cannot price (``n:0``,
``m:1e400``) costs ``UNPRICED_SECONDS`` and is named, never fatal. Burst and sustained rows are
priced at their bound (``regime_row_seconds``): their idle and load are limits, not work. Standard
library only.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from tcbench_tools import runner, schema
from tcbench_tools.names import BenchName, parse

# What `bench_* --quick --plan=H200` printed, every binary: {"gpu": its first line, "median_s":
# {row: the median bound, or null}}. TCBENCH_UPDATE_PLAN=1 makes test_gpu_check_plan rewrite it.
PLAN_FILE = Path(__file__).with_name("plan_h200.json")

QUICK_MIN_TIME = float(runner.QUICK_MIN_TIME)  # --benchmark_min_time of the quick suite
UNPRICED_SECONDS = 0.2  # a row this model does not know, or cannot price
WARMUP = 0.05  # SamplingPolicy::warmup_seconds
MIN_SAMPLES, MAX_SAMPLES = 10, 10_000  # SamplingPolicy


@dataclass(frozen=True)
class Gpu:
    """The GPU the plan is made for (a model; H200 SXM unless the box says otherwise)."""

    name: str
    sms: int
    # Dense TFLOP/s (TOP/s for int8) and GB/s, as the binaries wrote them (--plan's first line,
    # or a result's context).
    peak: dict[str, float]
    dram_gbps: float
    fp64_simt_tflops: float
    # The fraction of peak cuBLASLt reaches on large GEMMs: BF16/FP16 77-80 %, FP8 71-73 %,
    # TF32 83 % on H100/H200 (mamf-finder's sweeps, stas00/ml-engineering; waynehacking8's cuBLAS
    # runs at 8192^3).
    library_efficiency: dict[str, float]
    cupti_passes: int  # CUPTI 13.0's passes for the chip's metric set (test_range_plan: GH100 8)
    cc: tuple[int, int] = (9, 0)


LIBRARY_EFFICIENCY = {"tf32": 0.83, "fp16": 0.78, "fp16_acc16": 0.78, "bf16": 0.78, "fp8": 0.72,
                      "int8": 0.72, "fp32": 0.8}
CUPTI_PASSES = 8  # CUPTI 13.0's passes for GH100's metric set (test_range_plan)


def gpu_from_plan(head: dict) -> Gpu:
    """The Gpu of --plan's first line (the datasheet row the binaries know)."""
    peak = {str(k): float(v) for k, v in head["peak_tflops"].items()}
    major, minor = (int(x) for x in str(head["compute_capability"]).split("."))
    return Gpu(name=f"NVIDIA {head['gpu']} (model)", sms=int(head["sm_count"]), peak=peak,
               dram_gbps=float(head["peak_gbps"]), fp64_simt_tflops=max(peak["fp64"] / 2, 1e-3),
               library_efficiency=LIBRARY_EFFICIENCY, cupti_passes=CUPTI_PASSES,
               cc=(major, minor))


def _bytes(precision: str) -> tuple[float, float]:
    """(input, output) bytes per element of a precision's GEMM (the schema's; FP16's else)."""
    p = schema.shipped().precision(precision) or schema.shipped().precision("fp16")
    return p.input_bytes, p.output_bytes


_RECORDED = json.loads(PLAN_FILE.read_text(encoding="utf-8"))
H200 = gpu_from_plan(_RECORDED["gpu"])
H200_BOUNDS: dict[str, float] = {k: float(v) for k, v in _RECORDED["median_s"].items() if v}

# Our own kernels against the datasheet: a plain WMMA kernel reaches about 6 % of H100's FP16
# peak (waynehacking8's naive WMMA, 60.9 of 989 TF/s); the SIMT FFMA kernel about half of FP32.
OWN_KERNEL_EFFICIENCY = {"wmma": 0.08, "imma": 0.08, "simt": 0.5}


@dataclass
class Model:
    """The assumptions a plan is made with; `learn` updates them from what ran."""

    gpu: Gpu = H200
    # Each listed row's median bound from --plan on `gpu` (H200_BOUNDS; empty for another GPU).
    bounds: dict[str, float] = field(default_factory=lambda: H200_BOUNDS)
    # Seconds of host and GPU time per sample besides the work: with the L2 flush a memset of
    # 2 x 50 MB (about 35 us at 3 TB/s) plus the events' round trip; without it, the round trip.
    # Assumed until the check has measured it (learn()).
    overhead_flush: float = 50e-6
    overhead_plain: float = 12e-6
    process_start: float = 2.0  # CUDA context, cuBLAS/cuBLASLt handles, NVML: per invocation
    call_setup: float = 3e-3  # allocation, fill and a cuBLASLt plan per body call
    speed: float = 1.0  # measured / modelled medians (learn()); > 1: the GPU is slower
    learned_from: int = 0  # rows the estimates above were learned from
    starts_seen: int = 0  # binary start-ups process_start was learned from

    # --- one run of the work ----------------------------------------------------------------

    def gemm_seconds(self, precision: str, m: float, n: float, k: float, batch: float = 1.0,
                     variant: str = "cublaslt") -> float:
        g = self.gpu
        p = precision if precision in g.peak else "fp16"
        if g.peak[p] <= 0:
            return self.speed * 4e-6  # no such path on this GPU: refused at once
        if variant in OWN_KERNEL_EFFICIENCY:
            eff = OWN_KERNEL_EFFICIENCY[variant]
        else:
            eff = g.library_efficiency.get(p, 0.75)
        # Wave quantization: 128 x 128 tiles on the SMs; a partial last wave runs at its share.
        tiles = math.ceil(m / 128) * math.ceil(n / 128) * batch
        waves = math.ceil(tiles / g.sms)
        filled = tiles / (waves * g.sms)
        compute = 2.0 * m * n * k * batch / (g.peak[p] * 1e12 * eff * filled)
        into, out = _bytes(precision)
        moved = ((m * k + n * k) * into + m * n * out) * batch
        memory = moved / (g.dram_gbps * 1e9 * 0.85)
        return self.speed * (max(compute, memory) + 4e-6)

    def stream_seconds(self, nbytes: float) -> float:
        """A memory-bound kernel moving `nbytes` (at 85 % of DRAM bandwidth, plus a launch)."""
        return self.speed * (nbytes / (self.gpu.dram_gbps * 1e9 * 0.85) + 4e-6)

    # --- the harness around it ----------------------------------------------------------------

    def samples(self, median: float, min_time: float = QUICK_MIN_TIME) -> int:
        if median <= 0:
            return MAX_SAMPLES
        return int(min(MAX_SAMPLES, max(MIN_SAMPLES, math.ceil(min_time / median))))

    def window(self, median: float, flush: bool = True, min_time: float = QUICK_MIN_TIME) -> float:
        """Warm-up plus samples: one measure() or sample_work()."""
        overhead = self.overhead_flush if flush else self.overhead_plain
        return max(WARMUP, median) + self.samples(median, min_time) * (median + overhead)

    @staticmethod
    def body_calls(median: float, min_time: float = QUICK_MIN_TIME) -> int:
        """Google Benchmark 1.7's sizing of a manual-time benchmark that reports `median` per
        iteration (benchmark_runner.cc, PredictNumItersNeeded): 1 iteration, then x10 while the
        time is under a tenth of min_time, then what fills it; 5 calls at 10 us, 3 at 0.9 ms,
        2 at 6 ms (the counts tests/bench/test_measure_windows.cpp checks)."""
        if median <= 0:
            return 1
        iters, calls = 1, 1
        while iters * median < min_time and calls < 20:
            seconds = iters * median
            multiplier = min_time * 1.4 / max(seconds, 1e-9)
            if seconds / min_time <= 0.1:
                multiplier = min(multiplier, 10.0)
            iters = max(int(multiplier * iters), iters + 1)
            calls += 1
        return calls

    def learn(self, rows: list[dict], step_seconds: float, predicted: float,
              startup: float | None = None) -> None:
        """Update the per-process start-up, the per-sample overhead and the speed factor from
        one finished step: `rows` are its Google Benchmark rows (with samples and
        time_median_us), `step_seconds` its wall time, `predicted` what this model said and
        `startup` the seconds until its binary had started (its row file's first line; None when
        not seen). The samples' own time is known from the rows; what the step took beyond it,
        its start-up and the modelled setup is the samples' overhead."""
        assumed_start = self.process_start
        if startup is not None and math.isfinite(startup) and startup >= 0:
            measured = min(STARTUP_RANGE[1], max(STARTUP_RANGE[0], startup))
            self.process_start = _blend(self.process_start, measured, self.starts_seen, 1,
                                        prior=STARTUP_PRIOR)
            self.starts_seen += 1
            predicted += (startup - assumed_start)  # what the step spent starting, not sampling
        timed = [(r[schema.SAMPLES], r[schema.TIME_MEDIAN_US] * 1e-6,
                  parse(r.get("run_name", r["name"])))
                 for r in rows
                 if _number(r.get(schema.SAMPLES)) and _number(r.get(schema.TIME_MEDIAN_US))]
        if not timed:
            return
        # Speed: the measured medians against the modelled ones (geometric mean).
        ratios = []
        for _, median, name in timed:
            try:
                modelled = self.row_median(name)
            except (ArithmeticError, ValueError):
                continue
            if modelled and modelled > 0 and median > 0:
                ratios.append(math.log(median / (modelled / self.speed)))
        if ratios:
            measured = min(20.0, max(0.05, math.exp(sum(ratios) / len(ratios))))
            self.speed = _blend(self.speed, measured, self.learned_from, len(ratios))
        samples = sum(n for n, _, _ in timed)
        sampling = sum(n * m for n, m, _ in timed)
        other = predicted - sum(n * (m + self.overhead_flush) for n, m, _ in timed)
        spare = step_seconds - sampling - max(0.0, other) - len(timed) * WARMUP
        if samples >= 100:
            per = min(OVERHEAD_RANGE[1], max(OVERHEAD_RANGE[0], spare / samples))
            new = _blend(self.overhead_flush, per, self.learned_from, len(timed))
            self.overhead_plain *= new / self.overhead_flush
            self.overhead_flush = new
        self.learned_from += len(timed)

    # --- rows -----------------------------------------------------------------------------------

    def row_median(self, name) -> float | None:
        """The modelled median of one run of a row's work, or None for rows that report a
        time computed elsewhere (training runs, sums of cached baselines)."""
        p = name if not isinstance(name, str) else parse(name)
        a = p.numeric_args()
        bound = self.bounds.get(str(BenchName.of(p))) if self.bounds else None
        if bound and {"m", "n", "k"} <= a.keys() and self.gpu.peak.get(p.precision, 0) > 0:
            # --plan's bound: its compute part at the library's (or our kernel's) efficiency,
            # a partial last wave of 128 x 128 tiles at its share; all of it at 85 % of DRAM.
            eff = OWN_KERNEL_EFFICIENCY.get(p.variant,
                                            self.gpu.library_efficiency.get(p.precision, 0.75))
            batch = a.get("batch", 1)
            tiles = math.ceil(a["m"] / 128) * math.ceil(a["n"] / 128) * batch
            filled = tiles / (math.ceil(tiles / self.gpu.sms) * self.gpu.sms)
            compute = 2 * a["m"] * a["n"] * a["k"] * batch / (self.gpu.peak[p.precision] * 1e12)
            return self.speed * (max(compute / (eff * filled), bound / 0.85) + 4e-6)
        if bound and "elements" in a:
            return self.speed * (bound / 0.85 + 4e-6)  # 85 % of DRAM bandwidth, plus a launch
        if {"m", "n", "k"} <= a.keys():
            return self.gemm_seconds(p.precision, a["m"], a["n"], a["k"], a.get("batch", 1),
                                     p.variant)
        if "elements" in a:
            return self.stream_seconds(a["elements"] * (8 if p.topic != "loss_scaling" else 12))
        return None


# The per-sample overhead a step may teach: 2 us (an event pair's floor) to 1 ms.
OVERHEAD_RANGE = (2e-6, 1e-3)
# The start-up a step may teach: 0.1 s to 60 s; the assumption counts as one start seen, so the
# first measured start-up moves it halfway and the third most of the way.
STARTUP_RANGE = (0.1, 60.0)
STARTUP_PRIOR = 1


def _blend(old: float, new: float, old_weight: int, new_weight: int, prior: int = 20) -> float:
    """The estimate after `new_weight` more observations: a weighted mean with what `old_weight`
    observations (and the assumption, worth `prior` of them) said before."""
    a, b = old_weight + prior, max(1, new_weight)
    return (old * a + new * b) / (a + b)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


@dataclass
class RowCost:
    """What one row costs, in seconds, and what it shares with the rows beside it."""

    own: float  # its windows, setup per body call, verification
    shared: dict[str, float] = field(default_factory=dict)  # once per step: baselines, studies


def row_cost(model: Model, raw_name: str) -> RowCost:
    """The seconds one quick-suite row costs on `model`'s GPU (see the module docstring)."""
    p = parse(raw_name)
    a = p.numeric_args()
    topic, variant, prec = p.topic, p.variant, p.precision
    median = model.row_median(p)
    shared: dict[str, float] = {}

    def gemm_window(precision: str, m, n, k, batch=1.0, v="cublaslt") -> float:
        return model.window(model.gemm_seconds(precision, m, n, k, batch, v))

    if topic == "loss_scaling" and variant.startswith("train_"):
        # 100 steps of the small MLP on cuBLASLt (about 0.3 ms each) and a host step to check
        # the first loss: reported as time per step, no window.
        return RowCost(100 * 3e-4 + 0.05)
    if topic == "loss_scaling" and variant.startswith("landing_"):
        shared["landing gradients (host)"] = 0.3
        return RowCost(model.window(model.stream_seconds(4e6 * 2)) + 0.01, shared)
    if skipped_on(model.gpu, p) or model.gpu.peak.get(prec, 1.0) <= 0:
        return RowCost(0.01)  # refused by the documented rule, or no such path, before any work
    if topic == "fp8" and (variant == "block" or variant.startswith("layer_")):
        # Every layer and block row reads one measurement per (hidden, tokens): 4 layers x 5
        # options, each a verified cuBLASLt window, plus the recipes' quantization windows.
        h, t = a.get("hidden", 4096), a.get("tokens", 4096)
        layers = [(3 * h, t, h), (h, t, h), (4 * h, t, h), (h, t, 4 * h)]
        block = 0.0
        for m, n, k in layers:
            for option in ("bf16", "fp16", "fp8", "fp8", "fp8"):
                block += gemm_window(option, m, n, k) + 0.01
            block += 2 * model.window(model.stream_seconds(n * k * 3))
        shared[f"fp8 block study {h:g}x{t:g}"] = block + 0.5  # + the study's error pass
        return RowCost(0.002, shared)
    if topic == "fp8" and variant.startswith("recipe_"):
        return RowCost(model.window(model.stream_seconds(a.get("elements", 1.6e7) * 3)) + 0.02)
    if topic == "fp8" and variant.startswith("overhead_"):
        m, n, k = a["m"], a["n"], a["k"]
        shared[f"fp8 recipe windows {variant}"] = 2 * model.window(model.stream_seconds(m * k * 3))
        shared[f"baseline fp8 {m:g}x{n:g}x{k:g}"] = gemm_window("fp8", m, n, k)
        return RowCost(0.002, shared)
    if topic == "int8_gemm" and variant == "mlp":
        # The three layer GEMMs of the study MLP at this many tokens, in this precision and its
        # baselines: cached windows shared by the five mlp rows; the host study once.
        tokens = a.get("tokens", 8192)
        for q in ("fp32", "tf32", "fp16", "bf16", "int8"):
            for m, k in ((512, 256), (512, 512), (10, 512)):
                shared[f"baseline {q} {m}x{tokens:g}x{k}"] = gemm_window(q, m, tokens, k)
        shared["int8 study (host)"] = 1.5
        return RowCost(0.002, shared)
    if topic == "tensor_util" and variant == "train_step":
        hidden, tokens = a.get("hidden", 64), a.get("tokens", 256)
        # Five GEMMs of hidden x tokens x hidden per step (forward, backward), plus the
        # unscale, optimizer and launch gaps: about 60 us of small kernels.
        gemm = 5 * model.gemm_seconds(prec, hidden, tokens, hidden,
                                      variant="simt" if prec == "fp32" else "cublaslt")
        step = gemm + 60e-6
        replays = 2 * model.gpu.cupti_passes
        check = 0.05 + 5 * 2 * hidden * tokens * hidden / (model.gpu.fp64_simt_tflops * 1e12)
        return RowCost(model.window(step, flush=False) + 20 * step + replays * (step + 2e-3)
                       + check + 0.3)
    if topic == "tensor_peak":
        # A fixed-length register-only loop of 2 ms (--quick), no flush; the exact check of a
        # short launch first; counters over one run per replay pass.
        run = 2e-3 * model.speed
        calls = Model.body_calls(run)
        return RowCost(model.window(run, flush=False) + calls * 5e-3
                       + model.gpu.cupti_passes * (run + 2e-3) + 0.05)
    if median is None:
        return RowCost(UNPRICED_SECONDS)  # a row this model does not know: a small fixed cost

    # A GEMM or a memory-bound kernel with its own window.
    calls = Model.body_calls(median)
    own = model.window(median) + calls * model.call_setup
    if {"m", "n", "k"} <= a.keys():
        m, n, k, batch = a["m"], a["n"], a["k"], a.get("batch", 1.0)
        own += 2 * median + 256 * n * k * 2 / (model.gpu.fp64_simt_tflops * 1e12)  # verify
        for base in _baselines(topic, variant, prec, a):
            bp, bn = base
            shared[f"baseline {bp} {m:g}x{bn:g}x{k:g}x{batch:g}"] = gemm_window(bp, m, bn, k,
                                                                                  batch)
        if topic == "block_scaling":
            # The host-side operands, made once per configuration: the FP32 originals (once
            # per shape), quantized, packed and dequantized on the host, then uploaded.
            shared[f"block scaling originals {m:g}"] = 2.0 * (m * k / 6.7e7)
            own += 2.5 * (m * k / 6.7e7) + calls * 0.06
        if topic == "fp8" or topic == "block_scaling":
            own += 2 * median  # the second reference (unquantized originals)
        if topic == "tensor_util":
            own += model.gpu.cupti_passes * (3 * median + 2e-3) + 0.05
        if topic == "alignment" and variant.startswith("pad_to_"):
            own += 3 * gemm_window(prec, m, n, k)
    return RowCost(own, shared)


# GeForce Blackwell's mma.sync kinds (bench_tensor_peak's mma_<kind>_* rows).
GEFORCE_MMA_KINDS = ("mma_f8f6f4_", "mma_mxf8f6f4_", "mma_mxf4nvf4_")


def skipped_on(gpu: Gpu, p) -> bool:
    """Rows the GPU refuses at once (their skip rule runs before any work, kernels/
    tensor_peak_table.cu for the peaks): block-scaled MX and NVFP4 GEMMs need compute capability
    10.0, FP8 mma.sync runs natively on 8.9 and 12.x only, wgmma exists on 9.0 only, tcgen05 on
    10.0 and 10.3 (.kind::i8 on 10.0 only), mma.sync's FP8/FP6/FP4 kinds on 12.x only."""
    if p.topic == "block_scaling" and p.variant in ("gemm_mx", "gemm_nvfp4"):
        return gpu.cc < (10, 0)
    if p.topic != "tensor_peak":
        return False
    if p.variant == "mma_m16n8k32" and p.precision == "fp8":
        return gpu.cc[0] in (9, 10, 11)
    if p.variant.startswith("wgmma_"):
        return gpu.cc != (9, 0)
    if p.variant.startswith("tcgen05_"):
        return gpu.cc not in ((10, 0), (10, 3)) or (p.precision == "int8" and gpu.cc != (10, 0))
    if p.variant.startswith(GEFORCE_MMA_KINDS):
        return gpu.cc[0] != 12
    return False


def _baselines(topic: str, variant: str, prec: str, a: dict) -> list[tuple[str, float]]:
    """(precision, n) of the baseline windows a GEMM row measures beside its own."""
    n = a["n"]
    if topic == "alignment":
        if variant == "cublas":
            return [(prec, n)]  # vs_cublaslt
        if variant == "cublaslt" and a.get("batch", 1) == 1:
            unit = 16 // int(_bytes(prec)[0] or 1)
            aligned = math.ceil(n / unit) * unit
            return [(prec, aligned)] if aligned != n else []
        return []
    if topic == "int8_gemm" and variant in ("cublaslt", "cublaslt_requant", "imma"):
        return [(b, n) for b in ("fp32", "fp16") if b != prec]
    if topic == "fp8" and prec == "fp8":
        return [("bf16", n)]
    if topic == "block_scaling" and variant.startswith("gemm_"):
        return [("bf16", n), ("fp8", n)]
    if topic == "fp16_vs_fp32" and variant == "cublas":
        return [(prec, n)]
    return []


def priced(model: Model, name: str) -> RowCost | None:
    """row_cost, or None for a name it cannot price (a zero or overflowing size, an argument it
    cannot read): such a name is planned at UNPRICED_SECONDS and named, never fatal."""
    try:
        cost = row_cost(model, name)
    except (ArithmeticError, ValueError, KeyError, TypeError, IndexError):
        return None
    values = [cost.own, *cost.shared.values()]
    if not all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in values):
        return None
    return cost


def step_seconds(model: Model, names: list[str], invocations: int = 1,
                 unpriced: list[str] | None = None) -> float:
    """A benchmark step: process start, every row, and what the rows share (counted once). The
    names the model cannot price are appended to `unpriced`."""
    total, shared = invocations * model.process_start, {}
    for name in names:
        cost = priced(model, name)
        if cost is None:
            total += UNPRICED_SECONDS
            if unpriced is not None and name not in unpriced:
                unpriced.append(name)
            continue
        total += cost.own
        shared.update(cost.shared)
    return total + sum(shared.values())


# A burst or sustained row's worst case (common/bench/include/tcbench/bench/regime.hpp): the idle
# wait, at most min(TCBENCH_IDLE_LIMIT_S, TCBENCH_SUSTAINED_LIMIT_S), then a burst's launches, or
# a sustained row's load up to its limit (judged every kCheckEverySeconds) and its timed window.
CHECK_EVERY_S = 0.1  # kCheckEverySeconds: the idle's and the load's judging step
STEADY_WINDOW_S = 2.0  # the steady-state rule's window, and the sustained row's timed window
BURST_S = 0.1  # a burst: the wake-up launch and >= 10 launches or 20 ms (kBurst*)
REGIME_SETUP_S = 1.0  # assumed: an 8192^3 case's operands, its verification, 3 probe launches


def regime_row_seconds(name: str, limit_s: float, idle_s: float) -> float:
    """The longest a burst or sustained row (``regime:burst``, ``regime:sustained``) takes when
    TCBENCH_SUSTAINED_LIMIT_S is `limit_s` and TCBENCH_IDLE_LIMIT_S `idle_s` (a bound, not a
    prediction); ValueError for a name without one of those regimes."""
    regime = parse(name).args.get("regime")
    idle = min(idle_s, limit_s) + CHECK_EVERY_S
    if regime == "burst":
        return REGIME_SETUP_S + idle + BURST_S
    if regime == "sustained":
        return REGIME_SETUP_S + idle + limit_s + CHECK_EVERY_S + STEADY_WINDOW_S + BURST_S
    raise ValueError(f"{name} is no burst or sustained row")


def regime_step_seconds(model: Model, names: list[str], limit_s: float, idle_s: float) -> float:
    """A step of burst and sustained rows at its worst case: one start-up, every row's bound."""
    return model.process_start + sum(regime_row_seconds(n, limit_s, idle_s) for n in names)


def with_gpu(model: Model, gpu: Gpu) -> Model:
    """The model for another GPU: its own peaks, without the H200's --plan bounds."""
    return replace(model, gpu=gpu, bounds={} if gpu is not H200 else model.bounds)


def _context_number(context: dict, key: str) -> float | None:
    try:
        value = float(context.get(key))
    except (TypeError, ValueError, OverflowError):
        return None
    return value if math.isfinite(value) and value >= 0 else None


def gpu_from_context(context: dict) -> Gpu | None:
    """The GPU a result file's context describes (what the binary read from the device and its
    peak table: SMs, compute capability, peaks, DRAM bandwidth, L2), as the model's row; None
    when the context lacks any of them. The efficiencies and CUPTI passes stay the H200's
    (Hopper's published cuBLAS efficiencies; a model)."""
    sms = _context_number(context, "sm_count")
    gbps = _context_number(context, "peak_gbps")
    l2 = _context_number(context, "l2_bytes")
    cc = str(context.get("compute_capability", ""))
    if not sms or not gbps or l2 is None or not re.fullmatch(r"\d{1,2}\.\d", cc):
        return None
    peak = {}
    for key in context:  # every precision the binary wrote a peak for
        m = re.fullmatch(r"peak_([a-z0-9]+(?:_acc16)?)", str(key))
        value = _context_number(context, key) if m and m.group(1) != schema.GBPS else None
        if value is not None:
            peak[m.group(1)] = value
    if not set(H200.peak) <= set(peak):
        return None
    name = str(context.get("gpu_name", "the GPU")).strip()[:60] or "the GPU"
    major, minor = (int(x) for x in cc.split("."))
    return Gpu(name=f"{name} (its own peaks)", sms=int(sms), peak=peak, dram_gbps=gbps,
               fp64_simt_tflops=max(peak["fp64"] / 2, 1e-3),
               library_efficiency=H200.library_efficiency, cupti_passes=H200.cupti_passes,
               cc=(major, minor))
