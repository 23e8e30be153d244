"""Q5's accumulator rule (docs/concepts/answers.md, issue 46): on the generated accumulator
fixtures (synthetic), fast accumulation that loses more than the E4M3 rounding is a caveat, an
accumulator below FP32 that does not is a note, and missing or refused rows say what was not
measured without changing the verdict."""

from __future__ import annotations

from conftest import load_doc
from tcbench_tools import schema
from tcbench_tools.answers import CAVEAT, HOLDS, rules
from tcbench_tools.results import parse_doc


def answer(name: str, keep=lambda row: True):
    doc = load_doc(name)
    doc["benchmarks"] = [r for r in doc["benchmarks"] if keep(r)]
    return rules.q5_gpu(parse_doc(doc))


def bits(a) -> dict[str, float]:
    return {e.source: e.value for e in a.evidence if e.metric == schema.ACCUMULATOR_BITS}


def test_fast_accumulation_losing_more_than_the_rounding_is_a_caveat():
    a = answer("fp8_accum_h.json")
    assert a.verdict == CAVEAT
    # K = 16384: 4.50 % against 3.64 %; K = 4096 (2.10 % against 3.61 %) is no loss.
    assert a.caveats == ["fast accumulation loses more than the FP8 rounding itself: at K = 16384 "
                         "its own error against FP64 is 4.50%, the E4M3 rounding 3.64%; promote "
                         "partial sums to FP32 (split accumulation) at that depth"]
    assert bits(a) == {"fp8/accum_bits_cublaslt/fp8/accum:fast": 13.0,
                       "fp8/accum_bits_wgmma/fp8": 13.0}
    promoted = [e for e in a.evidence if e.source.endswith("k:16384/layout:tn/promote:128")]
    assert [e.value for e in promoted] == [8e-5]


def test_a_wide_accumulator_holds_without_a_note():
    a = answer("fp8_accum_bw.json")
    assert a.verdict == HOLDS and a.caveats == []
    assert bits(a) == {"fp8/accum_bits_cublaslt/fp8/accum:fast": 25.0,
                       "fp8/accum_bits_tcgen05/fp8": 25.0}
    assert not any("accumulator" in n for n in a.notes)


def test_a_narrow_accumulator_without_the_loss_is_a_note():
    a = answer("fp8_accum_h.json", lambda r: "k:16384/" not in r["name"])
    assert a.verdict == HOLDS
    assert ("the FP8 accumulator keeps fewer bits than FP32 (cublaslt/fast: 13 fraction bits, "
            "truncated toward zero; wgmma: 13 fraction bits, truncated toward zero), but fast "
            "accumulation loses less than the E4M3 rounding at K = 4096") in a.notes


def test_refused_or_missing_rows_are_not_measured_and_decide_nothing():
    def refused(row):
        if "/accum_bits_" in row["name"] and not row.get("error_occurred"):
            row.update(error_occurred=True, error_message="error: the accumulator of wgmma: "
                                                          "the probes cannot tell")
        return "/accum_error_" not in row["name"]

    a = answer("fp8_accum_h.json", refused)
    assert a.verdict == HOLDS and a.caveats == []
    note = next(n for n in a.notes if n.startswith("the accumulator: not measured: "))
    assert ("no FP8 bit detection (fp8 accum_bits_cublaslt or a kernel's) ran: 3 failed, "
            "2 skipped") in note
    assert "the probes cannot tell" in note
    assert "no K of 4096, 16384 has both cuBLASLt rows" in note
