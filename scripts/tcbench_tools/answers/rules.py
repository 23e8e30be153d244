"""The written rules (docs/concepts/answers.md), one function per question and half.

A rule reads only measured numbers (through answers.evidence), decides one of the four verdicts,
and says in one sentence what it compared with what threshold. A half with no evidence is "not
measured", with what was missing. The thresholds are named constants here and in the docs.

Benchmarks are found by the parts of their names (``ResultSet.find`` through ``ev.ran``) or by a
name built as the C++ builds it (``BenchName``, ``ResultSet.get``): no name or name pattern is
written here by hand, and a name key the schema does not know raises where the rule asks for it
(tests/scripts/test_answers_queries.py).

Each GPU rule declares the rows its verdict rests on as queries (``Q<n>_EVIDENCE``, read through
``Question.evidence``): gpu_check's tier 1 runs the quick rows they match, and nothing else
(``gpu_check/plan.py``). Rows a rule reads beyond them add caveats in later tiers.
"""

from __future__ import annotations

import functools
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
from tcbench_tools.names import ANY, BenchName, Query, is_square, one_of, prefix
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
TENSOR_PEAK = "tensor_peak"
CUBLASLT, CUBLAS, WMMA, SIMT = "cublaslt", "cublas", "wmma", "simt"
TRAIN_MODES = ("fp32", "fp16_noscale", "fp16_static", "fp16_dynamic", "bf16_noscale")

# Q4: the published pairs decide when at least this share of them show the misaligned GEMM slower.
Q4_PUBLISHED_DIRECTION = 0.9

HOST_STUDIES = "host studies (CPU)"
MEASURED = "measured on this GPU"  # the GPU halves: this run's benchmarks
# Where the published measurements live, as the answers name it (published.DATA_DIR).
PUBLISHED_DATA = f"{published.DATA_DIR.parent.name}/{published.DATA_DIR.name}/"
MODEL = "model (no measurement)"


def _answer(qid: str, scope: str, gpu: str | None) -> Answer:
    """A GPU half rests on that run's measurements; a host half says its basis itself."""
    return Answer(qid, BY_ID[qid].claim, NOT_MEASURED, scope, gpu,
                  basis=MEASURED if scope == GPU else "")


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
    acc_name = schema.TOP1_ACCURACY_PCT
    fp32_name = BenchName(INT8_STUDY, "fp32", "fp32")
    fp32_row = rs.get(fp32_name)
    rows = {b.parsed.variant: b for b in ev.ran(rs, INT8_STUDY, (prefix("ptq_"), "qat"), "int8")}
    if fp32_row is None and not rows:
        a.why = "no host INT8 study in these results: tcbench_studies --study int8 makes it"
        return a
    fp32 = ev.center_of(fp32_row, acc_name)
    acc = {v: b.center(acc_name) for v, b in rows.items()}
    acc = {v: x for v, x in acc.items() if x is not None}
    calibrated = {v: x for v, x in acc.items() if v.startswith("ptq_") and v != "ptq_bad_clip"}
    if fp32 is None:
        a.why = (ev.lacks(fp32_row, acc_name) if fp32_row is not None and fp32_row.ok
                 else ev.none_ran("FP32 row of the INT8 study", [fp32_row] if fp32_row else []))
        return a
    calibrated_rows = [b for v, b in rows.items() if v.startswith("ptq_") and v != "ptq_bad_clip"]
    if not calibrated or "qat" not in acc:
        missing = [b for b in calibrated_rows + [rows.get("qat")] if b is not None
                   and b.center(acc_name) is None]
        a.why = (ev.lacks(missing[0], acc_name) if missing
                 else "no calibrated PTQ or QAT row of the INT8 study in these results")
        return a
    best = max(calibrated, key=calibrated.get)
    worst = min(calibrated, key=calibrated.get)
    a.evidence = [Evidence(str(fp32_name), acc_name, fp32),
                  Evidence(rows[best].name, acc_name, calibrated[best]),
                  Evidence(rows["qat"].name, acc_name, acc["qat"]),
                  Evidence(rows[worst].name, acc_name, calibrated[worst])]
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
    if "ptq_bad_clip" in acc:  # a deliberately bad amax: it shows the risk, it tests nothing
        a.notes.append(f"a badly chosen amax (ptq_bad_clip) drops to {acc['ptq_bad_clip']:.2f} %"
                       f" (FP32 {fp32:.2f} %)")
    return a


# The rows Q1's GPU verdict rests on: cuBLASLt's INT8 and FP16 GEMMs on TN squares.
Q1_EVIDENCE = {p: Query(INT8_GEMM, CUBLASLT, p, {"layout": "tn"}, is_square)
               for p in ("int8", "fp16")}


def q1_gpu(rs: ResultSet) -> Answer:
    a = _answer("q1", GPU, _gpu_name(rs))
    a.rule = ("holds when cuBLASLt's INT8 GEMM on the largest square (else, in a run without "
              "one, on the largest INT8 GEMM it has) runs faster than FP16 on the same TN problem "
              "by more than the two benchmarks' noise (speedup_vs_fp16 > 1 + noise) with an IMMA "
              "kernel")
    squares = ev.rows(rs, Q1_EVIDENCE["int8"])
    row = ev.largest(squares, ev.volume)
    fell_back = row is None
    if fell_back:  # a run with no square (a custom filter) offers its largest INT8 GEMM
        row = ev.largest(ev.ran(rs, INT8_GEMM, CUBLASLT, "int8"), ev.volume)
    if row is None:
        tried = [b for b in rs.find(INT8_GEMM, CUBLASLT, "int8") if not b.ok]
        a.why = (ev.none_ran("INT8 GEMM", tried) if tried
                 else "no int8_gemm results in this run: bench_int8_gemm makes them")
        return a
    counter = schema.speedup_vs("fp16")
    speedup = row.center(counter)
    fp16 = rs.get(replace(BenchName.of(row.parsed), precision="fp16"))
    if speedup is None:
        a.why = (f"{row.name} has no {counter}: its FP16 baseline did not run ({ev.why_not(fp16)})"
                 if ev.why_not(fp16) else ev.lacks(row, counter))
        return a
    noise = max(ev.noise(row), ev.noise(fp16) if fp16 is not None and fp16.ok else 0.0)
    a.evidence = [Evidence(row.name, counter, speedup)]
    if row.center(schema.TOPS) is not None:
        a.evidence.append(Evidence(row.name, schema.TOPS, row.center(schema.TOPS)))
    a.evidence.append(Evidence(row.name, "noise", noise, "fraction"))
    where = (f"on {ev.shape(row)}, the largest INT8 GEMM measured, as no square ran" if fell_back
             else f"on the largest square, {ev.shape(row)}")
    said = f"INT8 is x{speedup:.2f} FP16 {where}"
    faster = speedup > 1.0 + noise
    if faster:
        said += f", faster by more than the noise of {noise:.1%}"
    elif speedup < 1.0 - noise:
        said += f": slower than FP16 by more than the noise of {noise:.1%}"
    else:
        said += f": within the noise of {noise:.1%}, not faster"
    impl = ev.label(row)
    if not faster:
        a.verdict = FAILS
        a.caveats.append(said)
    else:
        a.notes.append(said)
        a.verdict = HOLDS
    if impl and not impl.startswith("IMMA"):
        a.verdict = FAILS
        a.caveats.insert(0, f"cuBLASLt chose {impl}, not an IMMA kernel")
    elif not impl and a.verdict == HOLDS:
        a.verdict = CAVEAT
        a.caveats.append("cuBLASLt's kernel is not named in this result (no label): IMMA use is "
                         "not confirmed")
    mlp = ev.ran(rs, INT8_GEMM, "mlp", "int8", tokens=ANY, layout="tn")
    small = min(mlp, key=lambda b: b.parsed.numeric_args().get("tokens", 0), default=None)
    if small is not None and a.verdict in (HOLDS, CAVEAT):
        s = small.center(counter)
        if s is not None and s < 1.0:
            a.verdict = CAVEAT
            a.evidence.append(Evidence(small.name, counter, s))
            a.caveats.append(f"on the study MLP's small layers at {small.parsed.args['tokens']} "
                             f"tokens INT8 is x{s:.2f} FP16: too little work to fill the GPU")
    return a


# --- Q2: loss scaling ------------------------------------------------------------------------

# The modes a verdict needs; BF16 (bf16_noscale) and the static scale add to it when they ran.
Q2_REQUIRED = ("fp32", "fp16_noscale", "fp16_dynamic")


def _q2(a: Answer, rs: ResultSet, topic: str, ratio_of) -> Answer:
    """``ratio_of(b, fp32)``: (final loss over FP32's, None) or (None, why it is missing)."""
    tried = {m: rs.find(topic, f"train_{m}", steps=ANY) for m in TRAIN_MODES}
    runs = {m: next(iter(ev.ran(rs, topic, f"train_{m}", steps=ANY)), None) for m in TRAIN_MODES}
    if not any(tried.values()):
        a.why = f"no five-mode training run, {topic}/train_*, in these results"
        return a
    for m in Q2_REQUIRED:
        if runs[m] is None:
            a.why = ev.none_ran(f"{topic}/train_{m} row", tried[m])
            return a
    ratio, missing = {}, {}
    for m, b in runs.items():
        if b is not None:
            ratio[m], missing[m] = ratio_of(b, runs["fp32"])
    for m in Q2_REQUIRED[1:]:
        if ratio[m] is None:
            a.why = missing[m]
            return a
    lost = {m: b.center(schema.UNDERFLOW_PCT) for m, b in runs.items() if b is not None}
    for m in ("fp16_noscale", "fp16_dynamic", "bf16_noscale", "fp16_static"):
        if ratio.get(m) is not None:
            a.evidence.append(Evidence(runs[m].name, schema.FINAL_LOSS_VS_FP32, ratio[m]))
            if lost.get(m) is not None:
                a.evidence.append(Evidence(runs[m].name, schema.UNDERFLOW_PCT, lost[m]))
    suffers = ratio["fp16_noscale"] > Q2_SUFFERS
    fixed = ratio["fp16_dynamic"] <= Q2_FIXED
    bf16 = ratio.get("bf16_noscale")
    if not suffers:
        a.verdict = FAILS
        a.caveats.append(f"FP16 without scaling ends at x{ratio['fp16_noscale']:.2f} the FP32 "
                         "loss: its gradients did not underflow enough to matter here")
    elif not fixed:
        a.verdict = FAILS
        a.caveats.append(f"dynamic loss scaling still ends at x{ratio['fp16_dynamic']:.2f} the "
                         "FP32 loss")
    elif bf16 is not None and bf16 > Q2_FIXED:
        a.verdict = CAVEAT
        a.caveats.append(f"BF16 without scaling ends at x{bf16:.2f} the FP32 loss: its 8-bit "
                         "mantissa costs accuracy although nothing underflows")
    else:
        a.verdict = HOLDS
    if bf16 is None:  # optional (no BF16 before compute capability 8.0): the FP16 modes decide
        if runs["bf16_noscale"] is not None:
            why = missing["bf16_noscale"]
        else:
            failed = [b for b in tried["bf16_noscale"] if not b.ok]
            why = (ev.why_not(failed[0]) if failed
                   else f"no {topic}/train_bf16_noscale row in these results")
        said = (f"BF16 not measured: {why.rstrip('.')}; the claim's BF16 half is not tested "
                "here")
        if a.verdict in (HOLDS, CAVEAT):
            a.verdict = CAVEAT
            a.caveats.insert(0, said)
        else:
            a.notes.append(said)
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

    def ratio(b: Benchmark, _fp32: Benchmark) -> tuple[float | None, str | None]:
        x = b.center(schema.FINAL_LOSS_VS_FP32)
        return (x, None) if x is not None else (None, ev.lacks(b, schema.FINAL_LOSS_VS_FP32))

    a = _q2(a, rs, LOSS_STUDY, ratio)
    landing_name = BenchName(LOSS_STUDY, "landing_mlp", "fp16").arg("scale_log2", 0)
    landing = ev.center_of(rs.get(landing_name), schema.UNDERFLOW_PCT)
    if landing is not None and a.verdict != NOT_MEASURED:
        a.evidence.append(Evidence(str(landing_name), schema.UNDERFLOW_PCT, landing))
    return a


# The rows Q2's GPU verdict rests on: the GPU's five-mode training run.
Q2_EVIDENCE = {"train": Query(LOSS_SCALING, one_of(*(f"train_{m}" for m in TRAIN_MODES)), None,
                              {"steps": ANY})}


def q2_gpu(rs: ResultSet) -> Answer:
    a = _answer("q2", GPU, _gpu_name(rs))
    a.rule = (f"the host rule on the GPU's own five-mode run (cuBLASLt GEMMs): unscaled FP16 "
              f"above x{Q2_SUFFERS:g} the FP32 loss, dynamic scaling within x{Q2_FIXED:g}, and "
              f"unscaled BF16 within x{Q2_FIXED:g} where the GPU has BF16 (a caveat says when it "
              "was not measured)")

    def ratio(b: Benchmark, fp32: Benchmark) -> tuple[float | None, str | None]:
        x, base = b.center(schema.FINAL_LOSS), fp32.center(schema.FINAL_LOSS)
        if x is None or base is None:
            return None, ev.lacks(b if x is None else fp32, schema.FINAL_LOSS)
        if base <= 0:
            return None, f"{fp32.name}'s {schema.FINAL_LOSS} is {base:g}: no ratio to it"
        return x / base, None

    a = _q2(a, rs, LOSS_SCALING, ratio)
    unscale = ev.ran(rs, LOSS_SCALING, "unscale", "fp32", elements=ANY)
    if unscale and a.verdict != NOT_MEASURED:
        cost = unscale[0].center(schema.UNSCALE_PCT_OF_STEP)
        if cost is not None:
            a.evidence.append(Evidence(unscale[0].name, schema.UNSCALE_PCT_OF_STEP, cost))
            a.notes.append(f"the check-and-unscale pass costs {cost:.1f} % of an FP16 training "
                           "step's GEMMs")
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


# The rows Q3's GPU verdict rests on: the ladder from SIMT FFMA to FP8, with CUPTI counters.
Q3_EVIDENCE = {"ladder": Query(TENSOR_UTIL, one_of(SIMT, WMMA, CUBLASLT))}


def q3_gpu(rs: ResultSet) -> Answer:
    a = _answer("q3", GPU, _gpu_name(rs))
    a.rule = (f"holds when the tensor-pipe metric separates the paths (the SIMT FFMA kernel below "
              f"{Q3_SIMT_MAX:g} %, the best cuBLASLt Tensor Core GEMM above {Q3_TENSOR_MIN:g} %) "
              f"and tracks throughput across the Tensor Core GEMM rows (Spearman rank "
              f"correlation with pct_of_peak >= {Q3_TRACKS:g}; the SIMT row's % of peak is "
              "against the FP32 pipe and is no tracking point); a part these rows cannot test "
              "is a caveat")
    active = schema.TENSOR_ACTIVE_PCT
    rows = [b for b in ev.ran(rs, TENSOR_UTIL) if b.parsed.variant not in ("memory", "train_step")]
    measured = [b for b in rows if b.center(active) is not None]
    simt = next((b for b in measured if b.parsed.variant == SIMT), None)
    tc = [b for b in measured if b.parsed.variant != SIMT]
    if not tc:
        refused = {ev.label(b).partition("counters skipped: ")[2] for b in rows} - {""}
        tc_rows = [b for b in rows if b.parsed.variant != SIMT]
        tried = [b for b in rs.find(TENSOR_UTIL) if not b.ok
                 and b.parsed.variant not in ("memory", "train_step", SIMT)]
        if refused:
            a.why = "the tensor-pipe counters were not read: " + "; ".join(sorted(refused))
        elif tc_rows:
            others = len(tc_rows) - 1
            a.why = ev.lacks(tc_rows[0], active) + (f"; nor do the {others} other Tensor Core "
                                                    "rows" if others else "")
        elif tried:
            a.why = ev.none_ran("Tensor Core GEMM of tensor_util", tried)
        else:
            a.why = "no Tensor Core rows of tensor_util in this run: bench_tensor_util makes them"
        return a
    pct = {b.name: b.center(active) for b in measured}
    best = max((b for b in tc if b.parsed.variant == CUBLASLT), key=lambda b: pct[b.name],
               default=None)
    if simt is not None:
        a.evidence.append(Evidence(simt.name, active, pct[simt.name]))
    if best is not None:
        a.evidence.append(Evidence(best.name, active, pct[best.name]))
    pairs = [(pct[b.name], b.center(schema.PCT_OF_PEAK)) for b in tc]
    pairs = [(x, y) for x, y in pairs if y is not None]
    rho = spearman([x for x, _ in pairs], [y for _, y in pairs])
    if rho is not None:
        a.evidence.append(Evidence(f"{TENSOR_UTIL} Tensor Core GEMM rows ({len(pairs)}; % of "
                                   "each precision's Tensor Core peak)",
                                   f"spearman({active}, {schema.PCT_OF_PEAK})", rho,
                                   "rank correlation"))
    low = None if simt is None else pct[simt.name] < Q3_SIMT_MAX
    high = None if best is None else pct[best.name] > Q3_TENSOR_MIN
    if low is None and high is None and rho is None:
        a.why = (f"too few rows to test anything: no SIMT row and no cuBLASLt GEMM with {active}, "
                 f"and {len(pairs)} Tensor Core row(s) with {schema.PCT_OF_PEAK} (a rank "
                 "correlation needs 3)")
        return a
    if low is False:
        a.caveats.append(f"the SIMT FFMA kernel reads {pct[simt.name]:.1f} % busy tensor pipes: "
                         "the metric does not separate it from the Tensor Core GEMMs here")
    if high is False:
        a.caveats.append(f"the best cuBLASLt GEMM reads only {pct[best.name]:.0f} % busy tensor "
                         "pipes: the metric does not show its Tensor Core use here")
    if rho is not None and rho < Q3_ROUGHLY:
        a.caveats.append(f"it barely follows throughput (rank correlation {rho:.2f} over the "
                         "Tensor Core rows)")
    if a.caveats:
        a.verdict = FAILS
        return a
    a.verdict = HOLDS if rho is not None and rho >= Q3_TRACKS else CAVEAT
    if low is None:
        a.caveats.append(f"no SIMT row with {active}: whether the metric separates FFMA work from "
                         "Tensor Core work is not tested here")
    if high is None:
        a.caveats.append(f"no cuBLASLt GEMM with {active}: whether a library GEMM near peak reads "
                         "busy pipes is not tested here")
    if rho is None:  # a rank correlation needs 3 rows: too few is untested, not refuted
        a.caveats.append(f"only {len(pairs)} Tensor Core row(s) with {schema.PCT_OF_PEAK}: "
                         "whether the metric tracks throughput is not tested here "
                         "(bench_tensor_util's full list has enough)")
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
    step_caveats, step_evidence, step_notes = _whole_steps(rs)
    a.evidence += step_evidence
    a.caveats += step_caveats
    a.notes += step_notes
    # Where bench_sustained ran the best GEMM's precision too: the utilization at the clock a
    # job really runs (the sustained window's clock and rate per clock; its burst row is no
    # steady state). Its rows carry no CUPTI counters: a note, never a verdict.
    steady = [b for b in ev.ran(rs, "sustained", CUBLASLT, best.parsed.precision,
                                regime="sustained") if (b.center(schema.STEADY) or 0) >= 1
              ] if best is not None else []
    at_clock = [(b, b.center(schema.PCT_OF_PEAK_AT_CLOCK), b.center(schema.SM_CLOCK_MHZ))
                for b in steady]
    at_clock = [(b, pct, mhz) for b, pct, mhz in at_clock if pct is not None and mhz is not None]
    if at_clock:
        b, pct, mhz = at_clock[0]
        a.evidence += [Evidence(b.name, schema.PCT_OF_PEAK_AT_CLOCK, pct),
                       Evidence(b.name, schema.SM_CLOCK_MHZ, mhz)]
        datasheet = b.center(schema.PCT_OF_PEAK)
        a.notes.append(f"at the steady state under the power cap ({mhz:.0f} MHz) the "
                       f"{best.parsed.precision} cuBLASLt GEMM reaches {pct:.0f} % of the Tensor "
                       "Core rate at that clock"
                       + (f", {datasheet:.0f} % of the datasheet's" if datasheet is not None
                          else "")
                       + ": busy pipes at a lower clock deliver fewer TFLOP/s")
    if str(rs.context.get("compute_capability", "")).startswith("9."):
        a.caveats.append("on Hopper wgmma, HGMMA and QGMMA in SASS, is counted in its own "
                         "sub-pipe, tensor_hmma_hgmma_qgmma_pct, and FP8 mma.sync is emulated "
                         "through FP16")
    if a.caveats:  # the statement needs its caveat to be true here
        a.verdict = CAVEAT
    return a


def _whole_steps(rs: ResultSet) -> tuple[list[str], list[Evidence], list[str]]:
    """What the train_step rows add to Q3 (issue 26): the claim is about training, and a whole
    step is GEMMs plus the unscale, optimizer and launch gaps around them. The caveats say what
    share of the step is not tensor work, and whether the metric still separates the FFMA step
    from the Tensor Core steps and rises with TFLOP/s from the small MLP to the wide one. A row
    whose width is not a number, or without the tensor-pipe counter, is no evidence; a share the
    row lacks is named in a note, never read as 0 %."""
    def hidden(b: Benchmark) -> float | None:
        return b.parsed.numeric_args().get("hidden")

    steps = [b for b in ev.ran(rs, TENSOR_UTIL, "train_step")
             if b.center(schema.TENSOR_ACTIVE_PCT) is not None and hidden(b) is not None]
    if not steps:
        return [], [], []
    caveats, evidence, notes = [], [], []
    tensor_steps = [b for b in steps if b.parsed.precision != "fp32"]
    ffma = [b for b in steps if b.parsed.precision == "fp32"]
    pct = {b.name: b.center(schema.TENSOR_ACTIVE_PCT) for b in steps}
    wide = max(tensor_steps, key=lambda b: (hidden(b), b.parsed.precision == "fp16"), default=None)
    if wide is not None:
        shares = {schema.time_share(p): wide.center(schema.time_share(p))
                  for p in (*schema.STEP_PHASES[2:], schema.GAPS)}
        absent = [c for c, v in shares.items() if v is None]
        ceiling = wide.center(schema.GEMM_PHASES_CEILING_PCT)
        evidence.append(Evidence(wide.name, schema.TENSOR_ACTIVE_PCT, pct[wide.name]))
        text = (f"a whole {wide.parsed.precision.upper()} training step (hidden "
                f"{hidden(wide):g}) reads {pct[wide.name]:.0f} % busy tensor pipes")
        if not absent:
            text += (f": {sum(shares.values()):.0f} % of its time is unscale, optimizer and "
                     "gaps, which use no tensor pipe")
        else:
            notes.append(f"{wide.name} has no {', '.join(absent)}: the share of its time that "
                         "uses no tensor pipe is not known here")
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
    return caveats, evidence, notes


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


def _model_gpu(rs: ResultSet, slug: str) -> str:
    """The reference GPU of an alignment_model row as its label names it ("A100 SXM"), else its
    slug."""
    row = rs.get(_headline(BenchName(ALIGNMENT_MODEL, slug, "fp16"), "nn", ALIGNED_N))
    name = ev.label(row).split(",")[0].strip() if row is not None else ""
    return name or slug


CUBLAS_FP16 = "cuBLAS (cublasGemmEx)"
NO_PADDING = ("in tcbench's NN/TN layouts N is never a leading dimension, so N = 33 breaks no "
              "16-byte rule: what 33 can cost is tile and wave quantization, and since cuBLAS 11 "
              "no padding is required")


@functools.cache
def _published_pairs() -> tuple[published.Pair, ...]:
    """The published alignment pairs (data/published/), or none where the data are not there;
    read once per process (the files are part of the checkout)."""
    try:
        return tuple(published.pairs(published.load()))
    except (InputError, OSError):
        return ()


def _published_label(rows: list[published.Measurement]) -> str:
    gpus = sorted({r.gpu for r in rows})
    sources = sorted({r.source_name for r in rows})
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
        a.evidence += [Evidence(f"{label}: {len(pairs)} pairs", "share slower misaligned", slower,
                                "fraction"),
                       Evidence(f"{label}: {len(pairs)} pairs", "median slowdown", median, "x")]
        by_class = {}
        for p in pairs:
            by_class.setdefault("2-byte" if p.alignment_class <= 2 else "4- and 8-byte",
                                []).append(p.slowdown)
        for cls, xs in sorted(by_class.items()):
            a.evidence.append(Evidence(f"{label}: {len(xs)} {cls} pairs", "median slowdown",
                                       published.quantile(xs, 0.5), "x"))
        a.basis = f"{MODEL} and {label}"
    elif model_pairs:
        a.basis = MODEL
    if not pairs and not model_pairs:
        a.why = ("no alignment model predictions in these results, which tcbench_studies --study "
                 f"alignment makes, and no published measurements in {PUBLISHED_DATA}")
        return a
    nn = {g: p for (g, layout), p in model_pairs.items() if layout == "nn"}
    nt = {g: p for (g, layout), p in model_pairs.items() if layout == "nt"}
    if pairs:
        a.verdict = CAVEAT if slower >= Q4_PUBLISHED_DIRECTION else FAILS
        classes = ", ".join(f"{cls} x{published.quantile(xs, 0.5):.2f}"
                            for cls, xs in sorted(by_class.items()))
        per_gpu = " and ".join(
            f"{g} {sum(p.slowdown > 1 for p in pairs if p.misaligned.gpu == g)} of "
            f"{sum(p.misaligned.gpu == g for p in pairs)}"
            for g in sorted({p.misaligned.gpu for p in pairs}))
        lead = (("33 loses where it is a leading dimension on most of these GPUs: "
                 if a.verdict == CAVEAT else "where 33 is a leading dimension, only ")
                + f"{sum(p.slowdown > 1 for p in pairs)} of {len(pairs)} published GEMMs that "
                "broke the 16-byte rule ran slower than their aligned neighbour, "
                f"{per_gpu}, median x{median:.2f}")
        if nn:  # the limiting half: a batch in no leading dimension, the model's alone
            g, (t32, t33) = next(iter(sorted(nn.items())))
            g = _model_gpu(rs, g)
            loses = t33 < t32 * (1 - ev.NOISE_FLOOR)
            a.caveats.append(f"{lead}; as a batch in no leading dimension it "
                             f"{'loses too' if loses else 'does not'}, by the GEMM time model "
                             f"alone: 33 at {t33:.1f} against 32 at {t32:.1f} useful TFLOP/s on "
                             f"{g}")
            a.caveats.append(
                "no published pair varies only a batch that is in no leading dimension, such as "
                "N of PyTorch's forward GEMM in cuBLASLt's NN and TN: that case rests on the "
                f"{MODEL}, where 33 is memory bound and costs its tile padding, nothing more")
        else:
            a.caveats.append(f"{lead}; no published pair varies only a batch that is in no "
                             "leading dimension, and no model prediction was given for it: that "
                             "case is not decided here")
        a.caveats.append(f"the published pairs' median slowdown by alignment: {classes}")
    else:
        if not nn:  # the layout:nt rows alone answer another question (N leads B there)
            a.why = ("no NN prediction of the GEMM time model, alignment_model/<gpu>/fp16 with "
                     f"layout:nn, and no published measurements in {PUBLISHED_DATA}")
            return a
        slower = [t33 < t32 * (1 - ev.NOISE_FLOOR) for t32, t33 in nn.values()]
        a.verdict = HOLDS if all(slower) else FAILS if not any(slower) else CAVEAT
        said = "; ".join(f"33 at {t33:.1f} against 32 at {t32:.1f} useful TFLOP/s on {g}"
                         for g, (t32, t33) in sorted(nn.items()))
        (a.notes if a.verdict == HOLDS else a.caveats).append(
            "the GEMM time model alone, as no published measurements were given, where N is no "
            f"leading dimension: {said}")
        a.notes.append("33 loses where K or M is odd, with B N-contiguous (layout:nt), in FP8 (n "
                       "must be a multiple of 8) and in a plain WMMA kernel")
    if nt:
        g, (t32, t33) = next(iter(sorted(nt.items())))
        (a.notes if a.verdict == HOLDS else a.caveats).append(
            f"with B N-contiguous (layout:nt) N leads B: the {MODEL} gives 33 x{t33 / t32:.2f} "
            f"the useful TFLOP/s of 32 on {g}")
    a.notes.append(NO_PADDING)
    return a


# The rows Q4's GPU verdict rests on: cuBLASLt's FP16 NN pair at N = 32 and 33.
Q4_EVIDENCE = {"pair": Query(ALIGNMENT, CUBLASLT, "fp16",
                             {"m": HEADLINE_MK, "n": one_of(ALIGNED_N, ODD_N), "k": HEADLINE_MK,
                              "layout": "nn", "batch": None})}


def q4_gpu(rs: ResultSet) -> Answer:
    a = _answer("q4", GPU, _gpu_name(rs))
    lt_fp16, cublas_fp16 = BenchName(ALIGNMENT, CUBLASLT, "fp16"), BenchName(ALIGNMENT, CUBLAS,
                                                                           "fp16")
    base, library = lt_fp16, "cuBLASLt's"
    pair = _pair(rs, lt_fp16, "nn", schema.TFLOPS)
    if pair is None:  # a run with only the cuBLAS pairs answers with them, and says so
        fallback = _pair(rs, cublas_fp16, "nn", schema.TFLOPS)
        if fallback is not None:
            base, library, pair = cublas_fp16, f"{CUBLAS_FP16} FP16", fallback
    a.rule = (f"holds when {library} GEMM (M = K = 4096, NN) at N = 33 delivers fewer useful "
              "TFLOP/s than at N = 32 by more than the two benchmarks' noise"
              + (" (cuBLASLt's pair did not run: the cuBLAS pair decides)" if base is cublas_fp16
                 else "")
              + "; the other layouts, precisions, APIs and kernels make the caveats")
    if pair is None:
        tried = [b for b in (rs.get(_headline(lt_fp16, "nn", n)) for n in (ALIGNED_N, ODD_N))
                 if b is not None and not b.ok]
        a.why = (ev.none_ran(f"{lt_fp16} N = 32/33 pair", tried) if tried else
                 f"no {lt_fp16} N = 32/33 pair in this run: bench_alignment makes it")
        return a
    headline = ("cuBLASLt FP16 NN" if base is lt_fp16
                else f"{CUBLAS_FP16} FP16 NN (the pair this run has)")

    def noise_of(b: BenchName, layout: str) -> float:
        return max(ev.noise(rs.get(_headline(b, layout, n))) for n in (ALIGNED_N, ODD_N))

    def loses(b: BenchName, layout: str, metric: str) -> tuple[bool, float] | None:
        p = _pair(rs, b, layout, metric)
        if p is None or p[0] <= 0:
            return None
        ratio = p[1] / p[0]
        return ratio < 1.0 - noise_of(b, layout), ratio

    t32, t33 = pair
    noise = noise_of(base, "nn")
    a.evidence = [Evidence(str(_headline(base, "nn", ALIGNED_N)), schema.TFLOPS, t32),
                  Evidence(str(_headline(base, "nn", ODD_N)), schema.TFLOPS, t33),
                  Evidence(f"{base} n:{ODD_N} vs n:{ALIGNED_N}", "noise", noise, "fraction")]
    primary = t33 < t32 * (1.0 - noise)
    others = {}
    for label, other, layout in (
            ("B N-contiguous (layout:nt)", base, "nt"),
            ("our WMMA kernel", BenchName(ALIGNMENT, WMMA, "fp16"), "nn"),
            ("BF16", BenchName(ALIGNMENT, CUBLASLT, "bf16"), "nn"),
            ("TF32", BenchName(ALIGNMENT, CUBLASLT, "tf32"), "nn"),
            ("INT8", BenchName(ALIGNMENT, CUBLASLT, "int8"), "tn"),
            (CUBLAS_FP16, cublas_fp16, "nn")):
        if other == base and layout == "nn":
            continue  # the headline pair itself (the cuBLAS one, when it decides)
        r = loses(other, layout, schema.rate_counter(other.precision))
        if r is not None:
            others[label] = r
    # The batched sense (issue 25): 33 attention heads of 128 x 128 x 64 against 32, per API.
    for api in (CUBLASLT, CUBLAS):
        batches = [rs.get(BenchName(ALIGNMENT, api, "fp16").gemm(128, 128, 64, "nn")
                          .arg("batch", h)) for h in (ALIGNED_N, ODD_N)]
        heads = [ev.center_of(b, schema.TFLOPS) for b in batches]
        if None not in heads and heads[0] > 0:
            lose = heads[1] < heads[0] * (1.0 - max(ev.noise(b) for b in batches))
            others[f"33 heads of 128x128x64 ({api})"] = (lose, heads[1] / heads[0])
    if CUBLAS_FP16 in others:
        a.evidence += [Evidence(str(_headline(cublas_fp16, "nn", n)), schema.TFLOPS, v)
                       for n, v in zip((ALIGNED_N, ODD_N),
                                       _pair(rs, cublas_fp16, "nn", schema.TFLOPS))]
    fp8 = ev.why_not(rs.get(_headline(BenchName(ALIGNMENT, CUBLASLT, "fp8"), "tn", ODD_N)))
    if primary:
        a.verdict = HOLDS
        a.notes.append(f"with {headline}, 33 delivers x{t33 / t32:.2f} the useful TFLOP/s of 32 "
                       f"(noise {noise:.1%})")
        classic = others.get(CUBLAS_FP16)
        if classic is not None and classic[0]:
            a.notes.append(f"so does {CUBLAS_FP16}: x{classic[1]:.2f}")
        elif classic is not None:  # the API most users call (issue 25) does not lose
            a.verdict = CAVEAT
            a.caveats.append(f"with {CUBLAS_FP16} 33 delivers x{classic[1]:.2f} the useful "
                             "TFLOP/s of 32, within the noise or better: it holds with "
                             "cuBLASLt's heuristic only")
        batched = [f"{k}: x{r:.2f}" for k, (lose, r) in others.items()
                   if k.startswith("33 heads") and lose]
        if batched:
            a.notes.append("in the batched sense too: " + ", ".join(batched))
        if fp8:
            a.notes.append(f"FP8 refuses N = 33 outright: {fp8}")
    else:
        # The verdict's evidence first: what loses (a caveat) or that nothing does (refuted).
        losing = [f"{k}: x{r:.2f}" for k, (lose, r) in others.items() if lose]
        a.verdict = CAVEAT if losing or fp8 else FAILS
        if losing:
            a.caveats.append("33 does lose with " + "; ".join(losing))
        a.caveats.append(f"with {headline}, 33 delivers x{t33 / t32:.2f} the useful TFLOP/s of "
                         f"32: within the noise of {noise:.1%}, or better")
        if fp8:
            a.caveats.append(f"FP8 refuses N = 33 outright: {fp8}")
    a.notes.append(NO_PADDING)
    return a


# --- Q5: FP8 ---------------------------------------------------------------------------------

NO_TE_SELECTOR = ("Transformer Engine does not choose FP8/BF16 per layer by itself: the user "
                  "marks te.autocast regions and picks a recipe; tcbench's selector makes the "
                  "per-layer choice from measured time and error")


@functools.cache
def _published_fp8_speedups() -> tuple[tuple[published.Measurement, published.Measurement], ...]:
    """(BF16, FP8) rows of the best-shape table for each GPU that has both (read once)."""
    try:
        rows = [r for r in published.load() if r.id.startswith("mamf-")]
    except (InputError, OSError):
        return ()
    bf16 = {r.gpu: r for r in rows if r.precision == "bf16"}
    return tuple((bf16[r.gpu], r) for r in rows if r.precision == "fp8" and r.gpu in bf16)


def q5_host(rs: ResultSet) -> Answer:
    a = _answer("q5", HOST, None)
    a.basis = HOST_STUDIES
    a.rule = (f"holds when per-tensor current scaling keeps the mean E4M3 cast error at or below "
              f"{Q5_CAST_ERROR:.0%} in every drift scenario; delayed scaling (TE's default) "
              "saturating in some is a caveat")
    rows = ev.ran(rs, FP8_STUDY, prefix("drift_"), "fp8", history=ANY, margin=ANY)
    if not rows:
        tried = [b for b in rs.find(FP8_STUDY, prefix("drift_"), "fp8", history=ANY, margin=ANY)
                 if not b.ok]
        a.why = (ev.none_ran("drift scenario of the FP8 scaling study", tried) if tried else
                 "no FP8 scaling study in these results: tcbench_studies --study fp8 makes it")
        return a
    cur = [(b, b.center(schema.CURRENT_ERROR_MEAN)) for b in rows]
    without = [b for b, x in cur if x is None]
    cur = [(b, x) for b, x in cur if x is not None]
    if not cur:
        a.why = ev.lacks(without[0], schema.CURRENT_ERROR_MEAN) + (
            f"; nor do the {len(without) - 1} other drift scenarios" if len(without) > 1 else "")
        return a
    worst_b, worst = max(cur, key=lambda t: t[1])
    a.evidence.append(Evidence(worst_b.name, schema.CURRENT_ERROR_MEAN, worst))
    if worst > Q5_CAST_ERROR:
        a.verdict = FAILS
        a.caveats.append(f"current scaling's mean cast error reaches {worst:.1%} "
                         f"({worst_b.parsed.variant.removeprefix('drift_')})")
        return a
    a.verdict = HOLDS
    if without:  # a scenario without the error is untested there, not passed
        a.verdict = CAVEAT
        a.caveats.append(f"{len(without)} of {len(rows)} drift scenarios have no "
                         f"{schema.CURRENT_ERROR_MEAN} (the first: {without[0].name}): current "
                         "scaling is not tested there")
    steps = [(b, b.center(schema.SATURATED_STEPS)) for b in rows]
    if all(n is None for _, n in steps):
        a.notes.append(f"no {schema.SATURATED_STEPS} in these results: whether delayed scaling "
                       "saturates is not tested here")
    saturating = [b for b, n in steps if n is not None and n > 0]
    sat = [(b, b.center(schema.WORST_SATURATED_PCT)) for b in saturating]
    known = [(b, pct) for b, pct in sat if pct is not None]
    if known:
        b, pct = max(known, key=lambda t: t[1])
        a.verdict = CAVEAT
        a.evidence.append(Evidence(b.name, schema.WORST_SATURATED_PCT, pct))
        a.caveats.append(f"delayed scaling, by the last steps' amax, saturates when a tensor's "
                         f"range grows or jumps between steps: up to {pct:.2f} % of a step's "
                         f"elements clamp in {b.parsed.variant.removeprefix('drift_')} with "
                         f"history {b.parsed.args.get('history')} and margin "
                         f"{b.parsed.args.get('margin')}; a margin or current scaling avoids it")
    elif saturating:
        a.verdict = CAVEAT
        a.caveats.append(f"delayed scaling, by the last steps' amax, saturates in "
                         f"{len(saturating)} drift scenario(s) with {schema.SATURATED_STEPS} > 0; "
                         "how many elements clamp is not in these results: no "
                         f"{schema.WORST_SATURATED_PCT}")
    speedups = _published_fp8_speedups()
    if speedups:
        label = _published_label([r for pair in speedups for r in pair])
        a.basis = f"{HOST_STUDIES} and {label}"
        for b, f in speedups:
            a.evidence.append(Evidence(f"{label}: {f.id} / {b.id}", "FP8 / BF16 best rate",
                                       f.measured_tflops / b.measured_tflops, "x"))
        slow = [f.gpu for b, f in speedups if f.measured_tflops <= b.measured_tflops]
        ratios = ", ".join(f"x{f.measured_tflops / b.measured_tflops:.2f} on {f.gpu}"
                           for b, f in speedups)
        if slow:
            a.verdict = CAVEAT if a.verdict == HOLDS else a.verdict
            a.caveats.insert(0, f"{label}: FP8's best shape is not faster than BF16's on "
                                f"{', '.join(slow)}")
        a.notes.append(f"{label}: FP8 reaches {ratios} BF16's best rate (the best shapes only: "
                       "the speed-up at a model's own GEMM sizes is what bench_fp8 measures)")
    a.notes.append(NO_TE_SELECTOR)
    return a


# The rows Q5's GPU verdict rests on: E4M3 against BF16 on TN squares (fast accumulation), and
# the per-layer selection of the transformer block; the accumulator's bit detection.
Q5_EVIDENCE = {"gemm": Query(FP8, FP8_GEMM, "fp8", {"layout": "tn", "accum": "fast", "layer": None},
                             is_square),
               "block": Query(FP8, "block", schema.MIX_SELECTED,
                              {"hidden": ANY, "tokens": ANY, "layout": "tn"}),
               # the bits each FP8 path kept (milliseconds a row): the accumulator half below
               "accum_bits": Query(FP8, prefix("accum_bits_"), "fp8")}

# Q5's accumulator half (issue 46): the bits the FP8 path kept, and the depths whose errors are
# read. An accumulator with fewer fraction bits than FP32's 23 is named in a note.
Q5_ACCUM_KS = (4096, 16384)
FP32_FRACTION_BITS = 23
ACCUM_FAST_BITS, ACCUM_ERROR_CUBLASLT = "accum_bits_cublaslt", "accum_error_cublaslt"
# tcbench's own FP8 instruction rows, one per generation (the others skip on a GPU).
ACCUM_KERNELS = ("mma_sync", "wgmma", "tcgen05")
ROUNDINGS = {0: "truncated toward zero", 1: "floored", 2: "rounded to nearest even"}


def _bits_text(b: Benchmark) -> str:
    bits, rounding = b.center(schema.ACCUMULATOR_BITS), b.center(schema.ACCUMULATOR_ROUNDING)
    at_least = (b.center(schema.ACCUMULATOR_AT_LEAST) or 0) >= 1
    how = "" if rounding is None else ", " + ROUNDINGS.get(int(rounding), f"rounding {rounding:g}")
    return f"{'at least ' if at_least else ''}{bits:g} fraction bits{how}"


def _q5_accumulator(a: Answer, rs: ResultSet) -> None:
    """The accumulator rule (docs/concepts/answers.md, Q5): evidence, then a caveat when fast
    accumulation's own error (rel_error of accum:fast) exceeds the E4M3 rounding
    (rel_error_unquantized of accum:split) at a depth of Q5_ACCUM_KS; an accumulator below FP32
    without that loss is a note. Missing or refused rows are a note saying what was not
    measured (the accumulator half decides no verdict alone)."""
    bits_rows = (ev.ran(rs, FP8, ACCUM_FAST_BITS, "fp8", accum="fast")
                 + [b for v in ACCUM_KERNELS for b in ev.ran(rs, FP8, f"accum_bits_{v}", "fp8")])
    for b in bits_rows:
        if b.center(schema.ACCUMULATOR_BITS) is not None:
            a.evidence.append(Evidence(b.name, schema.ACCUMULATOR_BITS,
                                       b.center(schema.ACCUMULATOR_BITS)))
    losses, measured = [], []
    for k in Q5_ACCUM_KS:
        fast = ev.ran(rs, FP8, ACCUM_ERROR_CUBLASLT, "fp8", k=k, accum="fast")
        split = ev.ran(rs, FP8, ACCUM_ERROR_CUBLASLT, "fp8", k=k, accum="split")
        own = ev.center_of(fast[0] if fast else None, schema.REL_ERROR)
        rounding = ev.center_of(split[0] if split else None, schema.REL_ERROR_UNQUANTIZED)
        if own is None or rounding is None:
            continue
        measured.append(k)
        a.evidence += [Evidence(fast[0].name, schema.REL_ERROR, own),
                       Evidence(split[0].name, schema.REL_ERROR_UNQUANTIZED, rounding)]
        if own > rounding:
            losses.append(f"at K = {k} its own error against FP64 is {own:.2%}, the E4M3 "
                          f"rounding {rounding:.2%}")
        for v in ACCUM_KERNELS:
            for promote in (0, 128):
                row = ev.ran(rs, FP8, f"accum_error_{v}", "fp8", k=k, promote=promote)
                if row and row[0].center(schema.REL_ERROR) is not None:
                    a.evidence.append(Evidence(row[0].name, schema.REL_ERROR,
                                               row[0].center(schema.REL_ERROR)))
    missing = []
    if not bits_rows:
        tried = [b for b in rs.find(FP8, ("accum_bits_cublaslt",
                                          *(f"accum_bits_{v}" for v in ACCUM_KERNELS)), "fp8")
                 if not b.ok]
        missing.append(ev.none_ran(f"FP8 bit detection ({FP8} {ACCUM_FAST_BITS} or a kernel's)",
                                   tried))
    if not measured:
        missing.append(f"no K of {', '.join(map(str, Q5_ACCUM_KS))} has both cuBLASLt rows with "
                       f"their errors ({FP8} {ACCUM_ERROR_CUBLASLT}, fast and split "
                       "accumulation)")
    if missing:
        a.notes.append("the accumulator: not measured: " + "; ".join(missing))
    if losses:
        if a.verdict == HOLDS:
            a.verdict = CAVEAT
        a.caveats.append("fast accumulation loses more than the FP8 rounding itself: "
                         + "; ".join(losses) + "; promote partial sums to FP32 (split "
                         "accumulation) at that depth")
        return
    narrow = [b for b in bits_rows if (b.center(schema.ACCUMULATOR_BITS) or 99)
              < FP32_FRACTION_BITS and (b.center(schema.ACCUMULATOR_AT_LEAST) or 0) < 1]
    if narrow and measured:
        paths = "; ".join(
            "/".join([b.parsed.variant.removeprefix("accum_bits_"), *b.parsed.args.values()])
            + f": {_bits_text(b)}" for b in narrow)
        a.notes.append(f"the FP8 accumulator keeps fewer bits than FP32 ({paths}), but fast "
                       "accumulation loses less than the E4M3 rounding at K = "
                       + ", ".join(map(str, measured)))


def q5_gpu(rs: ResultSet) -> Answer:
    a = _answer("q5", GPU, _gpu_name(rs))
    a.rule = (f"holds when cuBLASLt's E4M3 GEMM on the largest square (else the largest E4M3 GEMM "
              f"the run has) is faster than BF16 on the same TN problem by more than the noise, "
              f"its error against the unquantized operands stays within the selector's budget "
              f"({Q5_BUDGET:.0%}), and the per-layer selection of the transformer block is faster "
              "than all-BF16 within that error budget")
    head = ev.rows(rs, Q5_EVIDENCE["gemm"])
    row = ev.largest(head, ev.volume)
    fell_back = row is None
    if fell_back:
        row = ev.largest(ev.ran(rs, FP8, FP8_GEMM, "fp8"), ev.volume)
    if row is None:
        tried = [b for b in rs.find(FP8, FP8_GEMM) if not b.ok]
        a.why = (f"no FP8 GEMM ran: {ev.why_not(min(tried, key=lambda b: b.name))}" if tried
                 else "no fp8 results in this run: bench_fp8 makes them")
        return a
    counter = schema.speedup_vs("bf16")
    speedup = row.center(counter)
    err = row.center(schema.REL_ERROR_UNQUANTIZED)
    if speedup is None or err is None:
        a.why = ev.lacks(row, counter, schema.REL_ERROR_UNQUANTIZED)
        return a
    noise = ev.noise(row)
    a.evidence = [Evidence(row.name, counter, speedup),
                  Evidence(row.name, schema.REL_ERROR_UNQUANTIZED, err),
                  Evidence(row.name, "noise", noise, "fraction")]
    where = (f"on {ev.shape(row)} (no fast-accumulation TN square ran: the largest E4M3 GEMM "
             "measured)" if fell_back else f"on the largest square ({ev.shape(row)})")
    faster = speedup > 1.0 + noise
    within = err <= Q5_BUDGET
    said = (f"FP8 is x{speedup:.2f} BF16 {where}"
            + ("" if faster else f", not faster by more than the noise ({noise:.1%})")
            + f", with {err:.1%} error against the unquantized operands"
            + ("" if within else f", above the {Q5_BUDGET:.0%} budget"))
    ok = faster and within
    a.verdict = HOLDS if ok else FAILS
    (a.notes if ok else a.caveats).append(said)
    sel = ev.rows(rs, Q5_EVIDENCE["block"])
    if sel:
        s = sel[0]
        in_budget = s.center(schema.WITHIN_BUDGET)
        sp = s.center(counter)
        layers = s.center(schema.FP8_LAYERS)
        if sp is not None:
            a.evidence.append(Evidence(s.name, counter, sp))
        if layers is not None:
            a.evidence.append(Evidence(s.name, schema.FP8_LAYERS, layers))
        if ok and (in_budget is None or sp is None):
            a.verdict = CAVEAT
            a.caveats.append(f"{ev.lacks(s, schema.WITHIN_BUDGET, counter)}: the per-layer "
                             "selection is not tested here")
        elif ok and (in_budget != 1 or sp <= 1.0):
            a.verdict = CAVEAT
            a.caveats.append("the per-layer selection of the block is not both faster than "
                             "BF16 and within budget")
        elif ok and layers is not None and layers < 4:
            a.verdict = CAVEAT
            a.caveats.append(f"the selector kept {4 - int(layers)} of the block's 4 GEMMs in "
                             "BF16/FP16: FP8 is not the fastest within budget everywhere")
    elif ok:
        a.verdict = CAVEAT
        a.caveats.append("no per-layer selection of the transformer block (bench_fp8's block rows) "
                         "ran: the per-layer half of the claim is not tested here")
    _q5_accumulator(a, rs)
    a.notes.append(NO_TE_SELECTOR)
    return a


def _gpu_half(rule):
    """A GPU rule whose answer says "measured on this GPU" only when something was."""
    @functools.wraps(rule)
    def answer(rs: ResultSet) -> Answer:
        a = rule(rs)
        if a.verdict == NOT_MEASURED:
            a.basis = ""
        return a
    return answer


EVIDENCE = {"q1": Q1_EVIDENCE, "q2": Q2_EVIDENCE, "q3": Q3_EVIDENCE, "q4": Q4_EVIDENCE,
            "q5": Q5_EVIDENCE}
# Not a question's evidence: the measured Tensor Core peaks the answers are read beside (wgmma on
# Hopper, tcgen05's FP16/BF16 on datacenter Blackwell; elsewhere each skips at once). Tier 1 runs
# them too.
PEAK_EVIDENCE = {"peaks": Query(TENSOR_PEAK, lambda v: v.startswith(("wgmma_", "tcgen05_f16_")))}

HOST_RULES = {"q1": q1_host, "q2": q2_host, "q4": q4_host, "q5": q5_host}
GPU_RULES = {qid: _gpu_half(rule) for qid, rule in
             (("q1", q1_gpu), ("q2", q2_gpu), ("q3", q3_gpu), ("q4", q4_gpu), ("q5", q5_gpu))}
