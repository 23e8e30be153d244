"""tcbench compare: verdicts, exit codes and the noise rule, on Google Benchmark JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import fixture, load_doc, noisy, renamed, scaled, with_times, write
from tcbench_tools import compare
from tcbench_tools.results import parse_doc

FP16 = "fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096/layout:nn"
INT8 = "int8_gemm/cublaslt/int8/m:4096/n:4096/k:4096/layout:tn"
WMMA = "fp16_vs_fp32/wmma/fp16/m:1024/n:1024/k:1024/layout:nn"
FP8 = "fp8/gemm_e4m3xe4m3_bf16/fp8/m:4096/n:4096/k:4096/layout:tn/accum:fast"
# The fixture benchmark that fails in gpu_a.json (a cuBLASLt error).
FAILING = "tensor_util/cublaslt/fp16/m:8192/n:8192/k:8192/layout:nn"


def statuses(comp: compare.Comparison) -> dict[str, str]:
    return {r.name: r.status for r in comp.rows}


def test_identical_pair_passes(cli):
    code, out, err = cli("compare", fixture("gpu_a.json"), fixture("gpu_a.json"))
    assert code == 0
    assert "REGRESSED" not in out
    assert "tcbench compare: PASS" in out
    assert err == ""


def test_ten_percent_slowdown_with_low_noise_fails_and_names_the_benchmark(cli, tmp_path):
    cand = write(tmp_path, "cand.json", scaled(load_doc("gpu_a.json"), {FP16: 1.10}))
    code, out, _ = cli("compare", fixture("gpu_a.json"), cand)
    assert code == 1
    regressions = out.split("Regressions and failures:")[1]
    assert FP16 in regressions
    assert "+10.0%" in regressions
    assert regressions.count(": REGRESSED") == 1
    assert "FAIL: 1 REGRESSED, 17 unchanged" in regressions
    assert "U test" in regressions


def test_three_percent_change_is_under_the_default_threshold(cli, tmp_path):
    doc = load_doc("gpu_a.json")
    names = {r["run_name"].removesuffix("/manual_time") for r in doc["benchmarks"]}
    cand = write(tmp_path, "cand.json", scaled(doc, {n: 1.03 for n in names}))
    code, out, _ = cli("compare", fixture("gpu_a.json"), cand)
    assert code == 0
    assert "+3.0%" in out
    # ... and the same change fails when the threshold is lowered below it.
    code, _, _ = cli("compare", fixture("gpu_a.json"), cand, "--threshold", "2")
    assert code == 1


def test_improvement_is_reported_and_passes(cli, tmp_path):
    cand = write(tmp_path, "cand.json", scaled(load_doc("gpu_a.json"), {FP16: 0.8}))
    code, out, _ = cli("compare", fixture("gpu_a.json"), cand)
    assert code == 0
    assert "1 improved" in out


def _aa_false_alarm_rate(rng, reps: int, cv: float, trials: int, names: int = 5) -> float:
    template = load_doc("gpu_a.json")
    keys = [FP16, INT8, WMMA, "fp16_vs_fp32/cublaslt/bf16/m:4096/n:4096/k:4096/layout:nn",
            "fp16_vs_fp32/cublaslt/fp32/m:2048/n:2048/k:2048/layout:nn"][:names]
    alarms = 0
    for _ in range(trials):
        base = parse_doc(with_times(template, {k: noisy(rng, 1e-3, cv, reps) for k in keys}))
        cand = parse_doc(with_times(template, {k: noisy(rng, 1e-3, cv, reps) for k in keys}))
        comp = compare.compare(base, cand, compare.Options())
        alarms += sum(1 for k in keys if statuses(comp)[k] == compare.REGRESSED)
    return alarms / (trials * len(keys))


@pytest.mark.parametrize("reps,cv", [(5, 0.05), (10, 0.08), (20, 0.10), (3, 0.05), (2, 0.03)])
def test_noisy_a_a_pairs_rarely_raise_false_alarms(reps, cv):
    rng = np.random.default_rng(20240601 + reps)
    rate = _aa_false_alarm_rate(rng, reps, cv, trials=200)
    assert rate < 0.05, f"false-alarm rate {rate:.3f} with {reps} repetitions, cv {cv}"


def test_a_a_with_a_single_sample_falls_back_to_the_threshold():
    template = load_doc("gpu_a.json")
    base = parse_doc(with_times(template, {FP16: [1.0e-3]}))
    cand = parse_doc(with_times(template, {FP16: [1.06e-3]}))
    row = next(r for r in compare.compare(base, cand, compare.Options()).rows if r.name == FP16)
    assert row.status == compare.REGRESSED
    assert row.basis.startswith("threshold only")


def test_ten_percent_slowdown_hidden_in_noise_is_found_with_20_repetitions():
    rng = np.random.default_rng(7)
    template = load_doc("gpu_a.json")
    found = 0
    trials = 100
    for _ in range(trials):
        base = parse_doc(with_times(template, {FP16: noisy(rng, 1e-3, 0.08, 20)}))
        cand = parse_doc(with_times(template, {FP16: noisy(rng, 1.1e-3, 0.08, 20)}))
        comp = compare.compare(base, cand, compare.Options())
        found += statuses(comp)[FP16] == compare.REGRESSED
    assert found / trials >= 0.8, f"found {found} of {trials}"


def test_same_slowdown_in_the_same_noise_is_not_called_with_three_repetitions():
    # With few repetitions and 8 % noise, a 10 % change is inside the noise band (2 x CV):
    # the tool says "noise" rather than guessing.
    template = load_doc("gpu_a.json")
    base = parse_doc(with_times(template, {FP16: [0.92e-3, 1.0e-3, 1.08e-3]}))
    cand = parse_doc(with_times(template, {FP16: [1.01e-3, 1.1e-3, 1.19e-3]}))
    row = next(r for r in compare.compare(base, cand, compare.Options()).rows if r.name == FP16)
    assert row.status == compare.NOISE
    assert row.basis.startswith("noise band")


def test_added_removed_errored_and_skipped_benchmarks_are_listed(cli, tmp_path):
    doc = load_doc("gpu_a.json")
    cand = json.loads(json.dumps(doc))
    rows = []
    for row in cand["benchmarks"]:
        key = row["run_name"].removesuffix("/manual_time")
        if key == WMMA:
            continue  # removed
        if key == INT8:
            if row["run_type"] == "aggregate":
                continue
            row = {k: row[k] for k in ("name", "run_name", "run_type", "repetitions",
                                       "repetition_index", "threads", "time_unit")}
            row.update(error_occurred=True, error_message="cublasLtMatmul failed: "
                       "CUBLAS_STATUS_NOT_SUPPORTED", iterations=0, real_time=0.0, cpu_time=0.0)
        rows.append(row)
    extra = next(r for r in doc["benchmarks"] if r["run_name"].startswith(FP16))
    rows.append(renamed(extra, "fp16_vs_fp32/cublaslt/fp16/m:8192/n:8192/k:8192/layout:nn"))
    cand["benchmarks"] = rows
    code, out, _ = cli("compare", fixture("gpu_a.json"), write(tmp_path, "c.json", cand))
    assert code == 1  # the newly failing INT8 benchmark
    lines = {line.split()[0]: line for line in out.splitlines() if line and "/" in line.split()[0]}
    assert "MISSING (not in the candidate)" in lines[WMMA]
    assert "only in candidate" in lines["fp16_vs_fp32/cublaslt/fp16/m:8192/n:8192/k:8192/layout:nn"]
    assert "FAILED" in lines[INT8] and "CUBLAS_STATUS_NOT_SUPPORTED" in lines[INT8]
    assert "skipped" in lines[FP8] and "FP8 needs compute capability 8.9" in lines[FP8]
    assert "failed on both" in lines[FAILING]
    summary = out.strip().splitlines()[-1]
    for part in ("1 FAILED", "1 MISSING", "1 only in candidate", "1 skipped",
                 "1 failed on both"):
        assert part in summary


def test_a_benchmark_skipped_in_the_baseline_that_runs_now_shows_its_value(cli):
    base = parse_doc(load_doc("gpu_a.json"))
    cand = parse_doc(load_doc("gpu_b.json"))
    comp = compare.compare(base, cand, compare.Options())
    row = next(r for r in comp.rows if r.name == FP8)
    assert row.status == compare.FIXED and not row.failing  # listed, not compared, not failing
    assert row.cand == cand.benchmarks[FP8].sample("time").center and row.base is None
    assert row.note.startswith("baseline: skipped: FP8 needs compute capability 8.9")
    code, out, _ = cli("compare", fixture("gpu_a.json"), fixture("gpu_b.json"))
    assert code == 0
    line = next(line for line in out.splitlines() if line.startswith(FP8))
    # The candidate's time (1200 TFLOP/s at 4096^3 is 114.5 us), not "-".
    assert line.split()[1:4] == ["-", "114.5", "us"] and "now runs (baseline: skipped:" in line
    assert "1 now runs" in out.strip().splitlines()[-1]


def test_a_benchmark_that_failed_in_the_baseline_and_runs_now_is_fixed(cli, tmp_path):
    """FIXED ("now runs"): the baseline's error row, a measurement in the candidate."""
    doc = load_doc("gpu_a.json")
    fp16_rows = [r for r in doc["benchmarks"] if r["run_name"].startswith(FP16 + "/")]
    cand = dict(doc, benchmarks=[r for r in doc["benchmarks"] if not r["name"].startswith(FAILING)])
    for row in fp16_rows:  # FAILING now measures what FP16 measured
        cand["benchmarks"].append(renamed(row, FAILING))
    base_set, cand_set = parse_doc(doc), parse_doc(cand)
    assert base_set.benchmarks[FAILING].failed and cand_set.benchmarks[FAILING].ok
    comp = compare.compare(base_set, cand_set, compare.Options())
    row = next(r for r in comp.rows if r.name == FAILING)
    assert row.status == compare.FIXED and not row.failing
    assert row.cand == cand_set.benchmarks[FP16].sample("time").center
    assert row.note == "baseline: error: cublasLtMatmul failed: CUBLAS_STATUS_EXECUTION_FAILED " \
                       "(fp16 m=8192 n=8192 k=8192)"
    assert comp.exit_code == 0
    # With --normalize-peak the value shown is the candidate's % of peak.
    peak = compare.compare(base_set, cand_set, compare.Options(normalize_peak=True))
    assert next(r for r in peak.rows if r.name == FAILING).cand == pytest.approx(80.0, rel=0.02)
    code, out, _ = cli("compare", fixture("gpu_a.json"), write(tmp_path, "c.json", cand))
    assert code == 0 and "1 now runs" in out.strip().splitlines()[-1]
    assert f"{FAILING}  " in out and "now runs (baseline: error: cublasLtMatmul failed" in out


@pytest.mark.parametrize("suffix,text", [
    (".json", json.dumps({"default": 5, "thresholds": {"^int8_gemm/": 15, "fp16/m:4096": "2%"}})),
    (".toml", '''default = 5\n[thresholds]\n"^int8_gemm/" = 15\n"fp16/m:4096" = "2%"\n'''),
])
def test_per_benchmark_threshold_overrides(cli, tmp_path, suffix, text):
    config = tmp_path / f"thresholds{suffix}"
    config.write_text(text)
    # INT8 10 % slower: a regression at 5 %, not at its own 15 %.
    cand = write(tmp_path, "int8.json", scaled(load_doc("gpu_a.json"), {INT8: 1.10}))
    assert cli("compare", fixture("gpu_a.json"), cand)[0] == 1
    assert cli("compare", fixture("gpu_a.json"), cand, "--config", config)[0] == 0
    # FP16 3 % slower: fine at 5 %, a regression at its own 2 %.
    cand = write(tmp_path, "fp16.json", scaled(load_doc("gpu_a.json"), {FP16: 1.03}))
    assert cli("compare", fixture("gpu_a.json"), cand)[0] == 0
    code, out, _ = cli("compare", fixture("gpu_a.json"), cand, "--config", config)
    assert code == 1
    assert FP16 in out.split("Regressions and failures:")[1]


def test_first_matching_threshold_pattern_wins(tmp_path):
    config = tmp_path / "t.json"
    config.write_text(json.dumps({"thresholds": {"fp16/m:4096": 20, "fp16": 1}}))
    options = compare.Options()
    compare.load_config(str(config), options)
    assert options.threshold_for(FP16) == pytest.approx(0.20)
    assert options.threshold_for(WMMA) == pytest.approx(0.01)
    assert options.threshold_for(INT8) == pytest.approx(0.05)


def test_context_mismatch_is_warned(cli, tmp_path):
    code, _, err = cli("compare", fixture("gpu_a.json"), fixture("gpu_b.json"))
    assert "warning: the runs differ in gpu name: baseline 'Fixture GPU A', candidate " \
           "'Fixture GPU B'" in err
    assert "driver version" in err and "cublaslt version" in err
    assert "cuda runtime" not in err  # equal on both


def test_plain_google_benchmark_output_compares(cli, tmp_path):
    code, out, err = cli("compare", fixture("plain.json"), fixture("plain.json"))
    assert code == 0
    assert err == ""
    cand = write(tmp_path, "p.json", scaled(load_doc("plain.json"), {FP16: 1.2}))
    code, out, _ = cli("compare", fixture("plain.json"), cand)
    # 3 repetitions: no U test, the noise band decides; 20 % is far outside ~2 % of noise.
    assert code == 1
    assert "noise band" in out.split("Regressions and failures:")[1]
    # A plain file against a tcbench file: compared, with a warning that context is missing.
    code, _, err = cli("compare", fixture("plain.json"), fixture("gpu_a.json"))
    assert code == 0
    assert "has no tcbench context" in err


def test_aggregates_only_files_use_the_cv_noise_band(cli, tmp_path):
    code, out, _ = cli("compare", fixture("gpu_a_aggregates.json"), fixture("gpu_a.json"))
    assert code == 0
    cand = write(tmp_path, "agg.json", scaled(load_doc("gpu_a_aggregates.json"), {FP16: 1.10}))
    code, out, _ = cli("compare", fixture("gpu_a_aggregates.json"), cand)
    assert code == 1
    assert "noise band 1.6%" in out  # 2 x the fixture's 0.79 % cv


def test_single_repetition_files_use_the_threshold_alone(cli, tmp_path):
    cand = write(tmp_path, "s.json", scaled(load_doc("gpu_a_single.json"), {FP16: 1.06}))
    code, out, _ = cli("compare", fixture("gpu_a_single.json"), cand)
    assert code == 1
    assert "threshold only" in out


def test_normalize_peak_compares_percent_of_peak_across_gpus(cli, tmp_path):
    # Both fixture GPUs reach the same fractions of their own peaks.
    code, out, err = cli("compare", fixture("gpu_a.json"), fixture("gpu_b.json"),
                         "--normalize-peak")
    assert code == 0
    assert "% of peak" in out
    assert "expected with --normalize-peak" in err
    doc = load_doc("gpu_b.json")
    for row in doc["benchmarks"]:
        if row["run_name"].startswith(INT8) and row.get("aggregate_name") != "cv":
            row["pct_of_peak"] *= 0.85
    code, out, _ = cli("compare", fixture("gpu_a.json"), write(tmp_path, "b.json", doc),
                       "--normalize-peak")
    assert code == 1
    assert INT8 in out.split("Regressions and failures:")[1]


def test_markdown_summary_is_written(cli, tmp_path):
    cand = write(tmp_path, "cand.json", scaled(load_doc("gpu_a.json"), {FP16: 1.10}))
    md = tmp_path / "summary.md"
    code, _, _ = cli("compare", fixture("gpu_a.json"), cand, "--markdown", md)
    assert code == 1
    text = md.read_text()
    assert text.startswith("## tcbench compare")
    assert f"- `{FP16}`: REGRESSED, +10.0%" in text
    assert "| benchmark | baseline time |" in text


def test_folders_mean_their_results_json(cli, tmp_path):
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "results.json").write_text(fixture("gpu_a.json").read_text())
    (tmp_path / "base" / "bench_other.json").write_text("not even json")  # ignored
    code, out, _ = cli("compare", tmp_path / "base", fixture("gpu_a.json"))
    assert code == 0


def _with_spread(doc: dict, name: str, spread_pct: float) -> dict:
    for row in doc["benchmarks"]:
        if row["run_name"].removesuffix("/manual_time") == name:
            row["spread_pct"] = spread_pct
    return doc


def test_single_samples_use_tcbench_in_run_spread_as_noise():
    template = load_doc("gpu_a.json")
    for spread, expected in ((40.0, compare.NOISE), (1.0, compare.REGRESSED)):
        base = parse_doc(_with_spread(with_times(template, {FP16: [1.0e-3]}), FP16, spread))
        cand = parse_doc(_with_spread(with_times(template, {FP16: [1.10e-3]}), FP16, spread))
        row = next(r for r in compare.compare(base, cand, compare.Options()).rows if r.name == FP16)
        assert row.status == expected, (spread, row.basis)
        assert row.basis.startswith("in-run noise band")


# ---------------------------------------------------------------------------------------------
# Finite extremes (issue 44 §2): any finite positive times, in any unit, on either side.

def with_real_times(doc: dict, name: str, values: list[float], unit: str) -> dict:
    """``doc`` whose benchmark ``name`` has these real_time values as written in the file (in
    ``unit``), one repetition each; its aggregate rows dropped."""
    out = with_times(doc, {name: [1e-3] * len(values)})
    rows = [r for r in out["benchmarks"] if r["run_name"].removesuffix("/manual_time") == name]
    for row, value in zip(rows, values):
        row.update(real_time=value, time_unit=unit)
    return out


@pytest.mark.parametrize("base, cand, status, shown", [
    (1e300, 1e300, "unchanged", "+0.0%"),  # was exit 70: OverflowError in the CV
    (1e-300, 1e300, "REGRESSED", "beyond +1e308%"),  # the ratio is beyond float range
    (1e300, 1e-300, "improved", "-100.0%"),  # ... and 0 the other way (1 / 0)
    (1.7e308, 1.7e308, "unchanged", "+0.0%"),  # the median of two was inf
    (5e-324, 1e-323, "REGRESSED", "+100.0%"),  # subnormals
])
def test_finite_extremes_are_compared_not_crashed_on(cli, tmp_path, base, cand, status, shown):
    doc = load_doc("gpu_a.json")
    spread = [1.0, 1.0001, 0.9999, 1.0002, 0.9998, 1.0, 1.0001, 0.9999]
    b = write(tmp_path, "b.json", with_real_times(doc, FP16, [base * f for f in spread], "s"))
    c = write(tmp_path, "c.json", with_real_times(doc, FP16, [cand * f for f in spread], "s"))
    code, out, err = cli("compare", b, c)
    assert code == (1 if status == "REGRESSED" else 0), (out, err)
    line = next(ln for ln in out.splitlines() if ln.startswith(FP16))
    assert line.rstrip().endswith(status) and f" {shown} " in line, line
