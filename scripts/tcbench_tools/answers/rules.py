"""The written rules (docs/concepts/answers.md), one function per question and half.

A rule reads only measured numbers (through answers.evidence), decides one of the four verdicts,
and says in one sentence what it compared with what threshold. A half with no evidence is "not
measured", with what was missing. The thresholds are named constants here and in the docs.

Benchmarks are found by the parts of their names (``ResultSet.find`` through ``ev.ran``) or by a
name built as the C++ builds it (``BenchName``, ``ResultSet.get``): no name or name pattern is
written here by hand, and a name key the schema does not know raises where the rule asks for it
(tests/scripts/test_answers_queries.py).
"""

from __future__ import annotations

import math
from dataclasses import replace

from tcbench_tools import published, schema
from tcbench_tools.answers import evidence as ev
from tcbench_tools.answers.model import (
    BY_ID,
    CAVEAT,
    FAILS,
    GPU,
    HOLDS,
    HOST,
    NOT_MEASURED,
    Answer,
    Evidence,
)
from tcbench_tools.errors import InputError
from tcbench_tools.names import ANY, BenchName, is_square, prefix
from tcbench_tools.results import Benchmark, ResultSet

# Q1: "little accuracy lost" = within this many points of top-1 accuracy of FP32.
Q1_ACCURACY_POINTS = 1.0
# Q2: unscaled FP16 "suffers" when it ends above this multiple of the FP32 loss; a fix "works"
# when it ends within Q2_FIXED of it.
Q2_SUFFERS = 2.0
Q2_FIXED = 1.1
# Q3: the SIMT kernel reads below Q3_SIMT_MAX % and a Tensor Core GEMM above Q3_TENSOR_MIN %;
# the metric "tracks" TFLOP/s when the rank correlation over the GEMM rows is at least
# Q3_TRACKS (and "roughly" at least Q3_ROUGHLY).
Q3_SIMT_MAX = 5.0
Q3_TENSOR_MIN = 50.0
Q3_TRACKS = 0.7
Q3_ROUGHLY = 0.4
# The small-GEMM caveat: its reading is at least this many percent and twice its % of peak.
Q3_SMALL_MIN = 10.0
# Q5: the per-layer error budget of the selector (studies/precision_selector.hpp) and the largest
# mean cast error per-tensor current scaling may have (E4M3 rounding alone is about 3 %).
Q5_BUDGET = 0.05
Q5_CAST_ERROR = 0.04

# The topics and variants the rules read (the benchmarks' own, as their names spell them).
INT8_STUDY, INT8_GEMM = "int8_study", "int8_gemm"
LOSS_STUDY, LOSS_SCALING = "loss_scaling_study", "loss_scaling"
TENSOR_UTIL = "tensor_util"
ALIGNMENT_MODEL, ALIGNMENT = "alignment_model", "alignment"
FP8_STUDY, FP8 = "fp8_study", "fp8"
FP8_GEMM = "gemm_e4m3xe4m3_bf16"  # E4M3 x E4M3 -> BF16 through cuBLASLt
CUBLASLT, CUBLAS, WMMA = "cublaslt", "cublas", "wmma"
TRAIN_MODES = ("fp32", "fp16_noscale", "fp16_static", "fp16_dynamic", "bf16_noscale")

# Q4: the published pairs decide when at least this share of them show the misaligned GEMM slower.
Q4_PUBLISHED_DIRECTION = 0.9

HOST_STUDIES = "host studies (CPU)"
MODEL = "model (no measurement)"


def _answer(qid: str, scope: str, gpu: str | None) -> Answer:
    return Answer(qid, BY_ID[qid].claim, NOT_MEASURED, scope, gpu)


def _gpu_name(rs: ResultSet) -> str:
    return rs.label


def _pct(x: float) -> str:
    return f"{x:.2f}"


# --- Q1: INT8 --------------------------------------------------------------------------------


def q1_host(rs: ResultSet) -> Answer:
    a = _answer("q1", HOST, None)
    a.basis = HOST_STUDIES
    a.rule = (f"holds when the best calibrated PTQ variant and QAT each stay within "
              f"{Q1_ACCURACY_POINTS:g} point of FP32's top-1 accuracy on the host MLP; a "
              "calibrator that loses more is a caveat")
    fp32_name = BenchName(INT8_STUDY, "fp32", "fp32")
    fp32 = ev.center_of(rs.get(fp32_name), schema.TOP1_ACCURACY_PCT)
    rows = {b.parsed.variant: b for b in ev.ran(rs, INT8_STUDY, (prefix("ptq_"), "qat"), "int8")}
    acc = {v: b.center(schema.TOP1_ACCURACY_PCT) for v, b in rows.items()}
    acc = {v: x for v, x in acc.items() if x is not None}
    calibrated = {v: x for v, x in acc.items() if v.startswith("ptq_") and v != "ptq_bad_clip"}
    if fp32 is None or not calibrated or "qat" not in acc:
        a.why = "no host INT8 study in these results (tcbench_studies --study int8)"
        return a
    best = max(calibrated, key=calibrated.get)
    worst = min(calibrated, key=calibrated.get)
    a.evidence = [Evidence(str(fp32_name), schema.TOP1_ACCURACY_PCT, fp32),
                  Evidence(rows[best].name, schema.TOP1_ACCURACY_PCT, calibrated[best]),
                  Evidence(rows["qat"].name, schema.TOP1_ACCURACY_PCT, acc["qat"]),
                  Evidence(rows[worst].name, schema.TOP1_ACCURACY_PCT, calibrated[worst])]
    drop_best, drop_qat = fp32 - calibrated[best], fp32 - acc["qat"]
    if drop_best > Q1_ACCURACY_POINTS and drop_qat > Q1_ACCURACY_POINTS:
        a.verdict = FAILS
        a.caveats.append(f"even the best calibrator ({best}) loses {drop_best:.2f} points and "
                         f"QAT {drop_qat:.2f}")
        return a
    a.verdict = HOLDS
    if fp32 - calibrated[worst] > Q1_ACCURACY_POINTS:
        a.verdict = CAVEAT
        a.caveats.append(f"the calibrator matters: {worst} loses {fp32 - calibrated[worst]:.2f} "
                         f"points on activations with outliers, {best} "
                         f"{'gains' if drop_best < 0 else 'loses'} {abs(drop_best):.2f}")
    if "ptq_bad_clip" in acc:
        a.caveats.append(f"a badly chosen amax (ptq_bad_clip) drops to {acc['ptq_bad_clip']:.2f} %"
                         f" (FP32 {fp32:.2f} %)")
    return a


def q1_gpu(rs: ResultSet) -> Answer:
    a = _answer("q1", GPU, _gpu_name(rs))
    a.rule = ("holds when cuBLASLt's INT8 GEMM (IMMA) on the largest square runs faster than FP16 "
              "on the same TN problem by more than the two benchmarks' noise "
              "(speedup_vs_fp16 > 1 + noise)")
    # The largest square; a run with no square (a custom filter) offers its largest INT8 GEMM.
    squares = ev.ran(rs, INT8_GEMM, CUBLASLT, "int8", layout="tn", where=is_square)
    row = ev.largest(squares or ev.ran(rs, INT8_GEMM, CUBLASLT, "int8"), ev.volume)
    if row is None:
        skipped = [b for b in rs.find(INT8_GEMM, CUBLASLT, "int8") if not b.ok]
        if skipped:
            a.verdict = FAILS
            a.caveats.append(f"no INT8 GEMM ran: {skipped[0].skip_reason or skipped[0].error}")
        else:
            a.why = "no int8_gemm results (bench_int8_gemm) in this run"
        return a
    speedup = row.center(schema.speedup_vs("fp16"))
    fp16 = rs.get(replace(BenchName.of(row.parsed), precision="fp16"))
    if speedup is None:
        a.why = f"{row.name} has no speedup_vs_fp16 (its FP16 baseline did not run)"
        return a
    noise = max(ev.noise(row), ev.noise(fp16) if fp16 is not None and fp16.ok else 0.0)
    a.evidence = [Evidence(row.name, schema.speedup_vs("fp16"), speedup),
                  Evidence(row.name, schema.TOPS, row.center(schema.TOPS) or math.nan),
                  Evidence(row.name, "noise", noise)]
    impl = ev.label(row)
    native = impl.startswith("IMMA")
    a.verdict = HOLDS if speedup > 1.0 + noise and native else FAILS
    if not native:
        a.caveats.append(f"cuBLASLt chose {impl or 'an unnamed kernel'}, not an IMMA one")
    if speedup <= 1.0 + noise:
        a.caveats.append(f"INT8 is x{speedup:.2f} FP16 here, within the noise ({noise:.1%})")
    mlp = ev.ran(rs, INT8_GEMM, "mlp", "int8", tokens=ANY, layout="tn")
    small = min(mlp, key=lambda b: b.parsed.numeric_args().get("tokens", 0), default=None)
    if small is not None and a.verdict == HOLDS:
        s = small.center(schema.speedup_vs("fp16"))
        if s is not None and s < 1.0:
            a.verdict = CAVEAT
            a.evidence.append(Evidence(small.name, schema.speedup_vs("fp16"), s))
            a.caveats.append(f"on the study MLP's small layers at {small.parsed.args['tokens']} "
                             f"tokens INT8 is x{s:.2f} FP16: too little work to fill the GPU")
    return a


# --- Q2: loss scaling ------------------------------------------------------------------------


def _q2(a: Answer, rs: ResultSet, topic: str, ratio_of) -> Answer:
    runs = {m: next(iter(ev.ran(rs, topic, f"train_{m}", steps=ANY)), None) for m in TRAIN_MODES}
    if any(runs[m] is None for m in ("fp32", "fp16_noscale", "fp16_dynamic", "bf16_noscale")):
        a.why = f"no five-mode training run ({topic}/train_*) in these results"
        return a
    runs = {m: b for m, b in runs.items() if b is not None}
    ratio = {m: ratio_of(b, runs["fp32"]) for m, b in runs.items()}
    lost = {m: b.center(schema.UNDERFLOW_PCT) for m, b in runs.items()}
    if any(ratio[m] is None for m in ("fp16_noscale", "fp16_dynamic", "bf16_noscale")):
        a.why = "a training run has no final loss"
        return a
    for m in ("fp16_noscale", "fp16_dynamic", "bf16_noscale", "fp16_static"):
        if m in ratio and ratio[m] is not None:
            a.evidence.append(Evidence(runs[m].name, schema.FINAL_LOSS_VS_FP32, ratio[m]))
            if lost.get(m) is not None:
                a.evidence.append(Evidence(runs[m].name, schema.UNDERFLOW_PCT, lost[m]))
    suffers = ratio["fp16_noscale"] > Q2_SUFFERS
    fixed = ratio["fp16_dynamic"] <= Q2_FIXED
    bf16_fine = ratio["bf16_noscale"] <= Q2_FIXED
    if not suffers:
        a.verdict = FAILS
        a.caveats.append(f"FP16 without scaling ends at x{ratio['fp16_noscale']:.2f} the FP32 "
                         "loss: its gradients did not underflow enough to matter here")
    elif not fixed:
        a.verdict = FAILS
        a.caveats.append(f"dynamic loss scaling still ends at x{ratio['fp16_dynamic']:.2f} the "
                         "FP32 loss")
    elif not bf16_fine:
        a.verdict = CAVEAT
        a.caveats.append(f"BF16 without scaling ends at x{ratio['bf16_noscale']:.2f} the FP32 "
                         "loss: its 8-bit mantissa costs accuracy although nothing underflows")
    else:
        a.verdict = HOLDS
    static = ratio.get("fp16_static")
    if static is not None and static > Q2_FIXED and a.verdict in (HOLDS, CAVEAT):
        a.verdict = CAVEAT
        a.caveats.append(f"the factor must be large enough: a static 2^10 still ends at "
                         f"x{static:.2f} the FP32 loss"
                         + (f" with {lost['fp16_static']:.1f} % of gradients lost"
                            if lost.get("fp16_static") is not None else "")
                         + ", which is why GradScaler grows the scale until it overflows")
    return a


def q2_host(rs: ResultSet) -> Answer:
    a = _answer("q2", HOST, None)
    a.basis = HOST_STUDIES
    a.rule = (f"holds when unscaled FP16 training ends above x{Q2_SUFFERS:g} the FP32 loss, "
              f"dynamic loss scaling brings it within x{Q2_FIXED:g}, and unscaled BF16 is within "
              f"x{Q2_FIXED:g} too (host teacher-student regression, Adam)")
    a = _q2(a, rs, LOSS_STUDY, lambda b, _fp32: b.center(schema.FINAL_LOSS_VS_FP32))
    landing_name = BenchName(LOSS_STUDY, "landing_mlp", "fp16").arg("scale_log2", 0)
    landing = ev.center_of(rs.get(landing_name), schema.UNDERFLOW_PCT)
    if landing is not None and a.verdict != NOT_MEASURED:
        a.evidence.append(Evidence(str(landing_name), schema.UNDERFLOW_PCT, landing))
    return a


def q2_gpu(rs: ResultSet) -> Answer:
    a = _answer("q2", GPU, _gpu_name(rs))
    a.rule = (f"the host rule on the GPU's own five-mode run (cuBLASLt GEMMs): unscaled FP16 "
              f"above x{Q2_SUFFERS:g} the FP32 loss, dynamic scaling and unscaled BF16 within "
              f"x{Q2_FIXED:g}")

    def ratio(b: Benchmark, fp32: Benchmark) -> float | None:
        x, base = b.center(schema.FINAL_LOSS), fp32.center(schema.FINAL_LOSS)
        return x / base if x is not None and base else None

    a = _q2(a, rs, LOSS_SCALING, ratio)
    unscale = ev.ran(rs, LOSS_SCALING, "unscale", "fp32", elements=ANY)
    if unscale and a.verdict != NOT_MEASURED:
        cost = unscale[0].center(schema.UNSCALE_PCT_OF_STEP)
        if cost is not None:
            a.evidence.append(Evidence(unscale[0].name, schema.UNSCALE_PCT_OF_STEP, cost))
            a.caveats.append(f"the check-and-unscale pass costs {cost:.1f} % of an FP16 "
                             "training step's GEMMs")
    return a


# --- Q3: tensor-pipe utilization -------------------------------------------------------------


def _ranks(xs: list[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0
        i = j + 1
    return ranks


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Spearman's rank correlation (ties averaged), as scipy.stats.spearmanr computes it."""
    if len(xs) < 3:
        return None
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    return num / den if den > 0 else None


def q3_gpu(rs: ResultSet) -> Answer:
    a = _answer("q3", GPU, _gpu_name(rs))
    a.rule = (f"holds when the tensor-pipe metric separates the paths (SIMT FFMA below "
              f"{Q3_SIMT_MAX:g} %, a cuBLASLt Tensor Core GEMM above {Q3_TENSOR_MIN:g} %) and "
              f"tracks throughput across the GEMM rows (Spearman rank correlation with "
              f"pct_of_peak >= {Q3_TRACKS:g})")
    rows = [b for b in ev.ran(rs, TENSOR_UTIL) if b.parsed.variant not in ("memory", "train_step")]
    measured = [b for b in rows if b.center(schema.TENSOR_ACTIVE_PCT) is not None]
    if not measured:
        notes = {ev.label(b).partition("counters skipped: ")[2] for b in rows} - {""}
        a.why = ("the tensor-pipe counters were not read: " + "; ".join(sorted(notes))
                 if notes else "no tensor_util results (bench_tensor_util) in this run")
        return a
    simt = next((b for b in measured if b.parsed.variant == "simt"), None)
    tc = [b for b in measured if b.parsed.variant in (CUBLASLT, WMMA)]
    pct = {b.name: b.center(schema.TENSOR_ACTIVE_PCT) for b in measured}
    if simt is not None:
        a.evidence.append(Evidence(simt.name, schema.TENSOR_ACTIVE_PCT, pct[simt.name]))
    best = max(tc, key=lambda b: pct[b.name], default=None)
    if best is not None:
        a.evidence.append(Evidence(best.name, schema.TENSOR_ACTIVE_PCT, pct[best.name]))
    pairs = [(pct[b.name], b.center(schema.PCT_OF_PEAK)) for b in measured]
    pairs = [(x, y) for x, y in pairs if y is not None]
    rho = spearman([x for x, _ in pairs], [y for _, y in pairs])
    if rho is not None:
        a.evidence.append(Evidence(f"{TENSOR_UTIL}/* GEMM rows", "spearman(tensor_active_pct, "
                                   "pct_of_peak)", rho))
    separates = (simt is not None and best is not None and pct[simt.name] < Q3_SIMT_MAX
                 and pct[best.name] > Q3_TENSOR_MIN)
    if not separates or (rho is not None and rho < Q3_ROUGHLY):
        a.verdict = FAILS
        if not separates:
            a.caveats.append("the metric does not separate the SIMT kernel from the Tensor Core "
                             "GEMMs here")
        if rho is not None and rho < Q3_ROUGHLY:
            a.caveats.append(f"it barely follows throughput (rank correlation {rho:.2f})")
        return a
    a.verdict = HOLDS if rho is not None and rho >= Q3_TRACKS else CAVEAT
    if rho is None:  # a rank correlation needs 3 rows: too few is untested, not refuted
        a.caveats.append(f"only {len(pairs)} GEMM row(s) with pct_of_peak: whether the metric "
                         "tracks throughput is not tested here (bench_tensor_util's full list "
                         "has enough)")
    elif rho < Q3_TRACKS:
        a.caveats.append(f"it follows throughput only roughly (rank correlation {rho:.2f}): busy "
                         "tensor pipes are necessary, not sufficient, for a high TFLOP/s")
    small = next((b for b in measured if b.parsed.variant == "cublaslt_small"), None)
    small_peak = small.center(schema.PCT_OF_PEAK) if small is not None else None
    # A GEMM too small to fill the GPU reads busy pipes on the few SMs it occupies: the caveat
    # is shown when its reading is well above its share of the GPU's throughput.
    if (small is not None and small_peak is not None and pct[small.name] >= Q3_SMALL_MIN
            and pct[small.name] > 2.0 * small_peak):
        a.caveats.append(f"a small GEMM ({small.parsed.args.get('m')}^3) reads "
                         f"{pct[small.name]:.0f} % busy pipes at {small_peak:.0f} % of peak: "
                         "the denominator is the active cycles of the SMs it occupies, not the "
                         "whole GPU")
    step_caveats, step_evidence = _whole_steps(rs)
    a.evidence += step_evidence
    a.caveats += step_caveats
    if rs.context.get("compute_capability", "").startswith("9."):
        a.caveats.append("on Hopper wgmma (HGMMA/QGMMA) is counted in its own sub-pipe "
                         "(tensor_hmma_hgmma_qgmma_pct), and FP8 mma.sync is emulated through "
                         "FP16")
    if a.caveats:  # the statement needs its caveat to be true here
        a.verdict = CAVEAT
    return a


def _whole_steps(rs: ResultSet) -> tuple[list[str], list[Evidence]]:
    """What the train_step rows add to Q3 (issue 26): the claim is about training, and a whole
    step is GEMMs plus the unscale, optimizer and launch gaps around them. The caveats say what
    share of the step is not tensor work, and whether the metric still separates the FFMA step
    from the Tensor Core steps and rises with TFLOP/s from the small MLP to the wide one."""
    steps = [b for b in ev.ran(rs, TENSOR_UTIL, "train_step")
             if b.center(schema.TENSOR_ACTIVE_PCT) is not None]
    if not steps:
        return [], []
    caveats, evidence = [], []

    def hidden(b: Benchmark) -> float:
        return float(b.parsed.args.get("hidden", 0))

    tensor_steps = [b for b in steps if b.parsed.precision != "fp32"]
    ffma = [b for b in steps if b.parsed.precision == "fp32"]
    pct = {b.name: b.center(schema.TENSOR_ACTIVE_PCT) for b in steps}
    wide = max(tensor_steps, key=lambda b: (hidden(b), b.parsed.precision == "fp16"), default=None)
    if wide is not None:
        non_tensor = sum(wide.center(schema.time_share(p)) or 0.0
                         for p in (*schema.STEP_PHASES[2:], schema.GAPS))
        ceiling = wide.center(schema.GEMM_PHASES_CEILING_PCT)
        evidence.append(Evidence(wide.name, schema.TENSOR_ACTIVE_PCT, pct[wide.name]))
        text = (f"a whole {wide.parsed.precision.upper()} training step (hidden "
                f"{hidden(wide):g}) reads {pct[wide.name]:.0f} % busy tensor pipes: "
                f"{non_tensor:.0f} % of its time is unscale, optimizer and gaps, which use no "
                "tensor pipe")
        if ceiling is not None:
            evidence.append(Evidence(wide.name, schema.GEMM_PHASES_CEILING_PCT, ceiling))
            text += f", and even with those free its GEMMs would reach {ceiling:.0f} %"
        caveats.append(text)
    busy_ffma = [b for b in ffma if pct[b.name] >= Q3_SIMT_MAX]
    if busy_ffma:
        caveats.append(f"the FP32 (FFMA) training step reads {pct[busy_ffma[0].name]:.0f} % busy "
                       "tensor pipes: the metric does not separate the paths in a whole step")
    # From the small MLP to the wide one, a precision's step must gain tensor-pipe % with TFLOP/s.
    for prec in sorted({b.parsed.precision for b in tensor_steps}):
        mine = sorted((b for b in tensor_steps if b.parsed.precision == prec), key=hidden)
        rates = [b.center(schema.TFLOPS) for b in mine]
        if len(mine) < 2 or None in rates:
            continue
        if (rates[-1] > rates[0]) != (pct[mine[-1].name] > pct[mine[0].name]):
            caveats.append(f"in {prec.upper()} training steps the tensor-pipe % does not rise "
                           f"with TFLOP/s from hidden {hidden(mine[0]):g} to "
                           f"{hidden(mine[-1]):g}")
    return caveats, evidence


# --- Q4: alignment ---------------------------------------------------------------------------


# The headline problem: M = K = 4096, N = 32 against N = 33.
HEADLINE_MK, ALIGNED_N, ODD_N = 4096, 32, 33


def _headline(base: BenchName, layout: str, n: int) -> BenchName:
    return base.gemm(HEADLINE_MK, n, HEADLINE_MK, layout)


def _pair(rs: ResultSet, base: BenchName, layout: str, metric: str) -> tuple[float, float] | None:
    """(rate at N = 32, rate at N = 33) of ``base`` (topic, variant, precision) on the headline
    problem in ``layout``."""
    a, b = (ev.center_of(rs.get(_headline(base, layout, n)), metric) for n in (ALIGNED_N, ODD_N))
    return (a, b) if a is not None and b is not None else None


CUBLAS_FP16 = "cuBLAS (cublasGemmEx)"
NO_PADDING = ("in tcbench's NN/TN layouts N is never a leading dimension, so N = 33 breaks no "
              "16-byte rule: what 33 can cost is tile and wave quantization, and since cuBLAS 11 "
              "no padding is required")


def _published_pairs() -> list[published.Pair]:
    """The published alignment pairs (data/published/), or none where the data are not there."""
    try:
        return published.pairs(published.load())
    except (InputError, OSError):
        return []


def _published_label(rows: list[published.Measurement]) -> str:
    gpus = sorted({r.gpu for r in rows})
    sources = sorted({r.source.split(":", 1)[0] for r in rows})
    return f"published measurements ({', '.join(gpus)}; {', '.join(sources)})"


def q4_host(rs: ResultSet) -> Answer:
    a = _answer("q4", HOST, None)
    a.rule = (f"published measurements decide: holds with a caveat when at least "
              f"{Q4_PUBLISHED_DIRECTION:.0%} of the published pairs (a GEMM whose leading "
              "dimension breaks the 16-byte rule against its aligned neighbour of the same sweep) "
              "ran slower misaligned, and the GEMM time model covers what no pair varies (a "
              "batch in no leading dimension); does not hold when fewer did. Without published "
              "pairs the model decides alone: holds when it predicts N = 33 slower per useful "
              "FLOP than N = 32 (FP16, M = K = 4096, NN) by more than 1 % on every reference GPU")
    model_pairs = {}
    for g in sorted({b.parsed.variant for b in ev.ran(rs, ALIGNMENT_MODEL, precision="fp16")}):
        for layout in ("nn", "nt"):
            pair = _pair(rs, BenchName(ALIGNMENT_MODEL, g, "fp16"), layout,
                         schema.PREDICTED_TFLOPS)
            if pair is not None:
                model_pairs[(g, layout)] = pair
    for (g, layout), (t32, t33) in sorted(model_pairs.items()):
        if layout == "nn":
            base = BenchName(ALIGNMENT_MODEL, g, "fp16")
            a.evidence += [Evidence(f"{MODEL}: {_headline(base, layout, n)}",
                                    schema.PREDICTED_TFLOPS, t)
                           for n, t in ((ALIGNED_N, t32), (ODD_N, t33))]
    pairs = _published_pairs()
    misaligned = [p.misaligned for p in pairs]
    if pairs:
        label = _published_label(misaligned)
        slower = sum(p.slowdown > 1 for p in pairs) / len(pairs)
        median = published.quantile([p.slowdown for p in pairs], 0.5)
        a.evidence += [Evidence(f"{label}: {len(pairs)} pairs", "share slower misaligned", slower),
                       Evidence(f"{label}: {len(pairs)} pairs", "median slowdown", median)]
        by_class = {}
        for p in pairs:
            by_class.setdefault("2-byte" if p.alignment_class <= 2 else "4- and 8-byte",
                                []).append(p.slowdown)
        for cls, xs in sorted(by_class.items()):
            a.evidence.append(Evidence(f"{label}: {len(xs)} {cls} pairs", "median slowdown",
                                       published.quantile(xs, 0.5)))
        a.basis = f"{MODEL} and {label}"
    elif model_pairs:
        a.basis = MODEL
    if not pairs and not model_pairs:
        a.why = ("no alignment model predictions in these results (tcbench_studies --study "
                 "alignment) and no published measurements (data/published/)")
        return a
    nn = {g: p for (g, layout), p in model_pairs.items() if layout == "nn"}
    nt = {g: p for (g, layout), p in model_pairs.items() if layout == "nt"}
    if pairs:
        a.verdict = CAVEAT if slower >= Q4_PUBLISHED_DIRECTION else FAILS
        classes = ", ".join(f"{cls} x{published.quantile(xs, 0.5):.2f}"
                            for cls, xs in sorted(by_class.items()))
        a.caveats.append(f"{label}: {sum(p.slowdown > 1 for p in pairs)} of {len(pairs)} GEMMs "
                         "whose leading dimension broke the 16-byte rule ran slower than their "
                         f"aligned neighbour, median x{median:.2f} ({classes}): where 33 is a "
                         "leading dimension, it loses")
        if nn:
            g, (t32, t33) = next(iter(sorted(nn.items())))
            a.caveats.append(
                "no published pair varies only a batch that is in no leading dimension (N of "
                "PyTorch's forward GEMM, in cuBLASLt's NN and TN): for that case there is only "
                f"the {MODEL}, which gives 33 at {t33:.1f} against 32 at {t32:.1f} useful "
                f"TFLOP/s on {g} (memory bound: 33 costs its tile padding, nothing more)")
        else:
            a.caveats.append("no published pair varies only a batch that is in no leading "
                             "dimension, and no model prediction was given for it: that case is "
                             "not decided here")
    else:
        verdicts = [t33 < t32 * (1 - ev.NOISE_FLOOR) for t32, t33 in nn.values()]
        a.verdict = HOLDS if verdicts and all(verdicts) else FAILS if not any(verdicts) else CAVEAT
        a.caveats.append(f"{MODEL} only (no published measurements given): 33 is predicted at "
                         "least as fast per useful FLOP as 32 where N is no leading dimension; "
                         "33 loses where K or M is odd, with B N-contiguous (layout:nt), in FP8 "
                         "(n must be a multiple of 8) and in a plain WMMA kernel")
    if nt:
        g, (t32, t33) = next(iter(sorted(nt.items())))
        a.caveats.append(f"with B N-contiguous (layout:nt) N leads B: the {MODEL} gives 33 "
                         f"x{t33 / t32:.2f} the useful TFLOP/s of 32 on {g}")
    a.caveats.append(NO_PADDING)
    return a


def q4_gpu(rs: ResultSet) -> Answer:
    a = _answer("q4", GPU, _gpu_name(rs))
    a.rule = ("holds when cuBLASLt's FP16 GEMM (M = K = 4096, NN) at N = 33 delivers fewer useful "
              "TFLOP/s than at N = 32 by more than the two benchmarks' noise; the other layouts, "
              "precisions and kernels make the caveats")
    lt_fp16 = BenchName(ALIGNMENT, CUBLASLT, "fp16")
    pair = _pair(rs, lt_fp16, "nn", schema.TFLOPS)
    if pair is None:
        a.why = f"no {lt_fp16} N = 32/33 pair in this run (bench_alignment)"
        return a

    def noise_of(base: BenchName, layout: str) -> float:
        return max(ev.noise(rs.get(_headline(base, layout, n))) for n in (ALIGNED_N, ODD_N))

    def loses(base: BenchName, layout: str, metric: str) -> tuple[bool, float] | None:
        p = _pair(rs, base, layout, metric)
        if p is None:
            return None
        ratio = p[1] / p[0]
        return ratio < 1.0 - noise_of(base, layout), ratio

    t32, t33 = pair
    noise = noise_of(lt_fp16, "nn")
    a.evidence = [Evidence(str(_headline(lt_fp16, "nn", ALIGNED_N)), schema.TFLOPS, t32),
                  Evidence(str(_headline(lt_fp16, "nn", ODD_N)), schema.TFLOPS, t33),
                  Evidence(f"{lt_fp16} n:{ODD_N} vs n:{ALIGNED_N}", "noise", noise)]
    primary = t33 < t32 * (1.0 - noise)
    others = {}
    for label, base, layout in (
            ("B N-contiguous (layout:nt)", lt_fp16, "nt"),
            ("our WMMA kernel", BenchName(ALIGNMENT, WMMA, "fp16"), "nn"),
            ("BF16", BenchName(ALIGNMENT, CUBLASLT, "bf16"), "nn"),
            ("TF32", BenchName(ALIGNMENT, CUBLASLT, "tf32"), "nn"),
            ("INT8", BenchName(ALIGNMENT, CUBLASLT, "int8"), "tn"),
            (CUBLAS_FP16, BenchName(ALIGNMENT, CUBLAS, "fp16"), "nn")):
        r = loses(base, layout, schema.rate_counter(base.precision))
        if r is not None:
            others[label] = r
    # The batched sense (issue 25): 33 attention heads of 128 x 128 x 64 against 32, per API.
    for api in (CUBLASLT, CUBLAS):
        batches = [rs.get(BenchName(ALIGNMENT, api, "fp16").gemm(128, 128, 64, "nn")
                          .arg("batch", h)) for h in (ALIGNED_N, ODD_N)]
        heads = [ev.center_of(b, schema.TFLOPS) for b in batches]
        if None not in heads:
            lose = heads[1] < heads[0] * (1.0 - max(ev.noise(b) for b in batches))
            others[f"33 heads of 128x128x64 ({api})"] = (lose, heads[1] / heads[0])
    if CUBLAS_FP16 in others:
        cublas = BenchName(ALIGNMENT, CUBLAS, "fp16")
        a.evidence += [Evidence(str(_headline(cublas, "nn", n)), schema.TFLOPS, v)
                       for n, v in zip((ALIGNED_N, ODD_N), _pair(rs, cublas, "nn", schema.TFLOPS))]
    fp8 = ev.why_not(rs.get(_headline(BenchName(ALIGNMENT, CUBLASLT, "fp8"), "tn", ODD_N)))
    a.caveats.append(NO_PADDING)
    if primary:
        a.verdict = HOLDS
        a.caveats.insert(0, f"33 delivers x{t33 / t32:.2f} the useful TFLOP/s of 32 (noise "
                            f"{noise:.1%})")
        # The API most users call (issue 25): does the answer hold with cuBLAS too?
        batched = [f"{k} (x{r:.2f})" for k, (lose, r) in others.items()
                   if k.startswith("33 heads") and lose]
        if batched:
            a.caveats.insert(1, "in the batched sense too: " + ", ".join(batched))
        classic = others.get(CUBLAS_FP16)
        if classic is not None and classic[0]:
            a.caveats.insert(1, f"so does {CUBLAS_FP16}: x{classic[1]:.2f}")
        elif classic is not None:
            a.verdict = CAVEAT
            a.caveats.insert(1, f"with {CUBLAS_FP16} 33 delivers x{classic[1]:.2f} the useful "
                                "TFLOP/s of 32, within the noise or better: it holds with "
                                "cuBLASLt's heuristic only")
    else:
        losing = [f"{k} (x{r:.2f})" for k, (lose, r) in others.items() if lose]
        a.verdict = CAVEAT if losing or fp8 else FAILS
        a.caveats.insert(0, f"with cuBLASLt FP16 NN, 33 delivers x{t33 / t32:.2f} the useful "
                            f"TFLOP/s of 32: within the noise ({noise:.1%}) or better")
        if losing:
            a.caveats.append("33 does lose with " + ", ".join(losing))
    if fp8:
        a.caveats.append(f"FP8 refuses N = 33 outright: {fp8}")
    return a


# --- Q5: FP8 ---------------------------------------------------------------------------------

NO_TE_SELECTOR = ("Transformer Engine does not choose FP8/BF16 per layer by itself: the user "
                  "marks te.autocast regions and picks a recipe; tcbench's selector makes the "
                  "per-layer choice from measured time and error")


def _published_fp8_speedups() -> list[tuple[published.Measurement, published.Measurement]]:
    """(BF16, FP8) rows of the best-shape table for each GPU that has both."""
    try:
        rows = [r for r in published.load() if r.id.startswith("mamf-")]
    except (InputError, OSError):
        return []
    bf16 = {r.gpu: r for r in rows if r.precision == "bf16"}
    return [(bf16[r.gpu], r) for r in rows if r.precision == "fp8" and r.gpu in bf16]


def q5_host(rs: ResultSet) -> Answer:
    a = _answer("q5", HOST, None)
    a.basis = HOST_STUDIES
    a.rule = (f"holds when per-tensor current scaling keeps the mean E4M3 cast error at or below "
              f"{Q5_CAST_ERROR:.0%} in every drift scenario; delayed scaling (TE's default) "
              "saturating in some is a caveat")
    rows = ev.ran(rs, FP8_STUDY, prefix("drift_"), "fp8", history=ANY, margin=ANY)
    if not rows:
        a.why = "no FP8 scaling study in these results (tcbench_studies --study fp8)"
        return a
    cur = [(b, b.center(schema.CURRENT_ERROR_MEAN)) for b in rows]
    cur = [(b, x) for b, x in cur if x is not None]
    worst_b, worst = max(cur, key=lambda t: t[1])
    a.evidence.append(Evidence(worst_b.name, schema.CURRENT_ERROR_MEAN, worst))
    sat = [(b, b.center(schema.WORST_SATURATED_PCT)) for b in rows
           if (b.center(schema.SATURATED_STEPS) or 0) > 0]
    if worst > Q5_CAST_ERROR:
        a.verdict = FAILS
        a.caveats.append(f"current scaling's mean cast error reaches {worst:.1%}")
        return a
    a.verdict = HOLDS
    if sat:
        b, pct = max(sat, key=lambda t: t[1] or 0.0)
        a.verdict = CAVEAT
        a.evidence.append(Evidence(b.name, schema.WORST_SATURATED_PCT, pct or 0.0))
        a.caveats.append(f"delayed scaling (last steps' amax) saturates when a tensor's range "
                         f"grows or jumps between steps: up to {pct:.2f} % of a step's elements "
                         "clamp "
                         f"({b.parsed.variant.removeprefix('drift_')}, history "
                         f"{b.parsed.args.get('history')}, margin {b.parsed.args.get('margin')}); "
                         "a margin or current scaling avoids it")
    speedups = _published_fp8_speedups()
    if speedups:
        label = _published_label([r for pair in speedups for r in pair])
        a.basis = f"{HOST_STUDIES} and {label}"
        for b, f in speedups:
            a.evidence.append(Evidence(f"{label}: {f.id} / {b.id}", "FP8 / BF16 best rate",
                                       f.measured_tflops / b.measured_tflops))
        slow = [f.gpu for b, f in speedups if f.measured_tflops <= b.measured_tflops]
        ratios = ", ".join(f"x{f.measured_tflops / b.measured_tflops:.2f} on {f.gpu}"
                           for b, f in speedups)
        if slow:
            a.verdict = CAVEAT if a.verdict == HOLDS else a.verdict
            a.caveats.insert(0, f"{label}: FP8's best shape is not faster than BF16's on "
                                f"{', '.join(slow)}")
        a.caveats.append(f"{label}: FP8 reaches {ratios} BF16's best rate (the best shapes "
                         "only: the speed-up at a model's own GEMM sizes is what bench_fp8 "
                         "measures)")
    a.caveats.append(NO_TE_SELECTOR)
    return a


def q5_gpu(rs: ResultSet) -> Answer:
    a = _answer("q5", GPU, _gpu_name(rs))
    a.rule = (f"holds when cuBLASLt's E4M3 GEMM on the largest square is faster than BF16 on the "
              f"same TN problem by more than the noise, its error against the unquantized "
              f"operands stays within the selector's budget ({Q5_BUDGET:.0%}), and the "
              "per-layer selection of the transformer block is faster than all-BF16 within that "
              "error budget")
    head = ev.ran(rs, FP8, FP8_GEMM, "fp8", layout="tn", accum="fast", where=is_square)
    row = ev.largest(head, ev.volume)
    if row is None:
        skipped = [b for b in rs.find(FP8, FP8_GEMM) if not b.ok]
        a.why = (f"no FP8 GEMM ran: {skipped[0].skip_reason or skipped[0].error}" if skipped
                 else "no fp8 results (bench_fp8) in this run")
        return a
    speedup = row.center(schema.speedup_vs("bf16"))
    err = row.center(schema.REL_ERROR_UNQUANTIZED)
    if speedup is None or err is None:
        a.why = f"{row.name} lacks speedup_vs_bf16 or rel_error_unquantized"
        return a
    noise = ev.noise(row)
    a.evidence = [Evidence(row.name, schema.speedup_vs("bf16"), speedup),
                  Evidence(row.name, schema.REL_ERROR_UNQUANTIZED, err),
                  Evidence(row.name, "noise", noise)]
    ok = speedup > 1.0 + noise and err <= Q5_BUDGET
    sel = ev.ran(rs, FP8, "block", schema.MIX_SELECTED, hidden=ANY, tokens=ANY, layout="tn")
    a.verdict = HOLDS if ok else FAILS
    if not ok:
        a.caveats.append(f"FP8 is x{speedup:.2f} BF16 with {err:.1%} error")
    if sel:
        s = sel[0]
        within = s.center(schema.WITHIN_BUDGET)
        sp = s.center(schema.speedup_vs("bf16"))
        layers = s.center(schema.FP8_LAYERS)
        if sp is not None:
            a.evidence.append(Evidence(s.name, schema.speedup_vs("bf16"), sp))
        if layers is not None:
            a.evidence.append(Evidence(s.name, schema.FP8_LAYERS, layers))
        if ok and (within != 1 or sp is None or sp <= 1.0):
            a.verdict = CAVEAT
            a.caveats.append("the per-layer selection of the block is not both faster than "
                             "BF16 and within budget")
        elif ok and layers is not None and layers < 4:
            a.verdict = CAVEAT
            a.caveats.append(f"the selector kept {4 - int(layers)} of the block's 4 GEMMs in "
                             "BF16/FP16: FP8 is not the fastest within budget everywhere")
    a.caveats.append(NO_TE_SELECTOR)
    return a


HOST_RULES = {"q1": q1_host, "q2": q2_host, "q4": q4_host, "q5": q5_host}
GPU_RULES = {"q1": q1_gpu, "q2": q2_gpu, "q3": q3_gpu, "q4": q4_gpu, "q5": q5_gpu}
