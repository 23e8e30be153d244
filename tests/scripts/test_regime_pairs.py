"""Burst and sustained in the regression gate and the best results (issue 47): a burst row never
pairs with a sustained one, a sustained row without a steady state is not comparable (one
line, no verdict), summary.best_results keeps the two regimes apart, and Q3 reads the
sustained window where it exists. On the generated sustained_h fixture (synthetic)."""

from __future__ import annotations

from conftest import load_doc
from tcbench_tools import compare, summary
from tcbench_tools.results import parse_doc

INT8 = "sustained/cublaslt/int8/m:8192/n:8192/k:8192/layout:tn/regime:sustained"
BF16 = "sustained/cublaslt/bf16/m:8192/n:8192/k:8192/layout:nn/regime:"


def regime_only(regime: str):
    doc = load_doc("sustained_h.json")
    doc["benchmarks"] = [r for r in doc["benchmarks"]
                         if r["tcbench_args"]["regime"] == regime]
    return parse_doc(doc)


def test_no_steady_state_is_not_comparable_in_one_line():
    rs = parse_doc(load_doc("sustained_h.json"))
    rows = {r.name: r for r in compare.compare(rs, rs, compare.Options()).rows}
    assert rows[INT8].status == compare.NOT_COMPARABLE
    assert rows[INT8].note == ("baseline: no steady state within 60 s: a sustained row without "
                               "one is not comparable; candidate: no steady state within 60 s: "
                               "a sustained row without one is not comparable")
    assert rows[BF16 + "sustained"].status == compare.UNCHANGED
    assert rows[BF16 + "burst"].status == compare.UNCHANGED


def test_burst_never_pairs_with_sustained():
    comp = compare.compare(regime_only("burst"), regime_only("sustained"), compare.Options())
    assert not any(r.status in compare.COMPARED for r in comp.rows)
    statuses = {r.name: r.status for r in comp.rows}
    assert statuses[BF16 + "burst"] == compare.MISSING
    assert statuses[BF16 + "sustained"] == compare.ONLY_CAND


def test_best_results_are_keyed_on_regime():
    best = summary.best_results(parse_doc(load_doc("sustained_h.json")))
    burst, sus = best[("sustained", "bf16", "tflops", "burst")], \
        best[("sustained", "bf16", "tflops", "sustained")]
    # The wgmma peak kernel beats cuBLASLt in both regimes: 890 burst, 790 sustained.
    assert (burst.value, sus.value) == (890.0, 790.0)
    assert sus.benchmark == "sustained/wgmma_m64n256k16/bf16/regime:sustained"
    assert "sustained (burst)" in summary.render(parse_doc(load_doc("sustained_h.json")))


def test_q3_reads_the_sustained_window_where_it_exists():
    from tcbench_tools import schema
    from tcbench_tools.answers import rules

    util, sus = load_doc("tensor_util_step_h.json"), load_doc("sustained_h.json")
    without = rules.q3_gpu(parse_doc(util))
    util["benchmarks"] += sus["benchmarks"]
    a = rules.q3_gpu(parse_doc(util))
    assert a.verdict == without.verdict and a.caveats == without.caveats
    # fp16 (the best cuBLASLt row's precision): 670 TFLOP/s at 1610 MHz on 132 SMs x 4096.
    assert ("at the steady state under the power cap (1610 MHz) the fp16 cuBLASLt GEMM reaches "
            "77 % of the Tensor Core rate at that clock, 67 % of the datasheet's: busy pipes at "
            "a lower clock deliver fewer TFLOP/s") in a.notes
    assert {e.metric for e in a.evidence} - {e.metric for e in without.evidence} == {
        schema.PCT_OF_PEAK_AT_CLOCK, schema.SM_CLOCK_MHZ}
