"""tcbench compare (compare.py) as a CI gate: every way a comparison could pass without comparing
anything fails, is an input error, or passes only by an explicit opt-out. Its inputs too:
impossible rows, and threshold configs (not regular files, patterns that could backtrack)."""

from __future__ import annotations

import copy
import json
import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import properties as p
from conftest import (
    assert_one_line_error,
    bounded,
    fixture,
    load_doc,
    scaled,
    tcbench,
    with_fields,
    with_times,
    write,
)
from tcbench_tools import compare
from tcbench_tools.results import parse_doc

FP16 = "fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096/layout:nn"
INT8 = "int8_gemm/cublaslt/int8/m:4096/n:4096/k:4096/layout:tn"
WMMA = "fp16_vs_fp32/wmma/fp16/m:1024/n:1024/k:1024/layout:nn"
BASE = fixture("gpu_a.json")
GOOD = str(fixture("gpu_a.json"))
SINGLE = fixture("gpu_a_single.json")


def key(row: dict) -> str:
    return row["run_name"].removesuffix("/manual_time")


def without(doc: dict, *names: str) -> dict:
    out = copy.deepcopy(doc)
    out["benchmarks"] = [r for r in out["benchmarks"] if key(r) not in names]
    return out


def edited(doc: dict, name: str, **fields) -> dict:
    """A copy in which every row of ``name`` gets ``fields`` (None deletes a field)."""
    out = copy.deepcopy(doc)
    for row in out["benchmarks"]:
        if key(row) == name:
            for field, value in fields.items():
                if value is None:
                    row.pop(field, None)
                else:
                    row[field] = value
    return out


def as_skipped_gb18(doc: dict, name: str, message: str) -> dict:
    """``name`` as Google Benchmark >= 1.8 writes a SkipWithMessage: ``"skipped": true`` rows
    with zero times and no aggregates."""
    out = copy.deepcopy(doc)
    rows = []
    for row in out["benchmarks"]:
        if key(row) == name:
            if row["run_type"] == "aggregate":
                continue
            row = {k: row[k] for k in ("name", "family_index", "per_family_instance_index",
                                       "run_name", "run_type", "repetitions", "repetition_index",
                                       "threads", "time_unit")}
            row.update(skipped=True, skip_message=message, iterations=0, real_time=0,
                       cpu_time=0)
        rows.append(row)
    out["benchmarks"] = rows
    return out


def summary(out: str) -> str:
    return out.strip().splitlines()[-1]


# --- missing benchmarks --------------------------------------------------------------------


def test_a_benchmark_missing_from_the_candidate_fails_unless_allowed(cli, tmp_path):
    cand = write(tmp_path, "c.json", without(load_doc("gpu_a.json"), WMMA))
    code, out, _ = cli("compare", BASE, cand)
    assert code == 1
    assert "FAIL: 1 MISSING, 17 unchanged" in summary(out)
    assert f"  {WMMA}: MISSING (not in the candidate)" in out.split("Regressions and failures:")[1]
    code, out, _ = cli("compare", BASE, cand, "--allow-missing")
    assert code == 0
    assert "PASS: 1 missing (allowed), 17 unchanged" in summary(out)
    config = tmp_path / "gate.toml"
    config.write_text("allow_missing = true\n")
    assert cli("compare", BASE, cand, "--config", config)[0] == 0


def test_nothing_compared_always_fails_even_with_every_opt_out(cli, tmp_path):
    # Every benchmark renamed (a filter typo, a renamed family): 20 only in the baseline,
    # 20 only in the candidate, nothing compared.
    doc = load_doc("gpu_a.json")
    for row in doc["benchmarks"]:
        for field in ("name", "run_name"):
            row[field] = "renamed_" + row[field]
        row.pop("tcbench_args")  # names no binary writes
    cand = write(tmp_path, "c.json", doc)
    code, out, _ = cli("compare", BASE, cand, "--allow-missing", "--allow-skipped",
                       "--allow-not-comparable")
    assert code == 1
    assert "no benchmark was compared (20 in the baseline, 20 in the candidate" in summary(out)
    assert summary(out).startswith("tcbench compare: FAIL:")


def test_a_benchmark_that_failed_in_the_baseline_may_disappear():
    # Nothing measured is lost: listed, not failing.
    base = parse_doc(load_doc("gpu_a.json"))
    cand = parse_doc(without(load_doc("gpu_a.json"),
                             "tensor_util/cublaslt/fp16/m:8192/n:8192/k:8192/layout:nn"))
    comp = compare.compare(base, cand, compare.Options())
    row = next(r for r in comp.rows if r.name.startswith("tensor_util/"))
    assert row.status == compare.ONLY_BASE and not row.failing
    assert comp.exit_code == 0


# --- not comparable --------------------------------------------------------------------------


def test_normalize_peak_without_pct_of_peak_fails(cli, tmp_path):
    plain = load_doc("gpu_a.json")
    for row in plain["benchmarks"]:
        row.pop("pct_of_peak", None)
    stripped = write(tmp_path, "no_pct.json", plain)
    code, out, _ = cli("compare", stripped, stripped, "--normalize-peak")
    assert code == 1
    assert "18 NOT COMPARABLE" in summary(out) and "no benchmark was compared" in summary(out)
    assert "it has no pct_of_peak counter" in out
    # One benchmark without the counter: fails; allowed, the other 17 still decide.
    one = write(tmp_path, "one.json", edited(load_doc("gpu_a.json"), FP16, pct_of_peak=None))
    code, out, _ = cli("compare", BASE, one, "--normalize-peak")
    assert code == 1 and "1 NOT COMPARABLE" in summary(out)
    code, out, _ = cli("compare", BASE, one, "--normalize-peak", "--allow-not-comparable")
    assert code == 0 and "1 not comparable (allowed)" in summary(out)


# A zero or negative real_time is no longer NOT COMPARABLE but INVALID INPUT (below).
@pytest.mark.parametrize("fields,reason", [
    ({"time_unit": "fs"}, 'candidate: its time unit "fs" is not one of ns, us, ms, s'),
])
def test_not_comparable_rows_fail_with_their_true_reason(cli, tmp_path, fields, reason):
    doc = load_doc("gpu_a.json")
    for row in doc["benchmarks"]:
        if key(row) == FP16:
            row.update(fields)
    code, out, _ = cli("compare", BASE, write(tmp_path, "c.json", doc))
    assert code == 1
    line = next(ln for ln in out.splitlines() if ln.startswith(FP16))
    assert "NOT COMPARABLE" in line and reason in line
    assert "no real_time" not in line and "zero or negative" not in line


def test_google_benchmark_1_8_skipped_rows_are_skips_not_zero_times(cli, tmp_path):
    cand = write(tmp_path, "c.json", as_skipped_gb18(load_doc("gpu_a.json"), FP16,
                                                     "does not fit in device memory"))
    code, out, _ = cli("compare", BASE, cand)
    assert code == 1
    line = next(ln for ln in out.splitlines() if ln.startswith(FP16))
    assert "SKIPPED NOW (candidate: does not fit in device memory)" in line
    # Skipped on both sides: listed as skipped, passes.
    code, out, _ = cli("compare", cand, cand)
    assert code == 0 and "2 skipped" in summary(out)  # and the fixture's FP8


# --- skipped now -----------------------------------------------------------------------------


def test_a_benchmark_skipped_now_fails_unless_allowed(cli, tmp_path):
    doc = load_doc("gpu_a.json")
    for row in doc["benchmarks"]:
        if key(row) == INT8:
            row.update(error_occurred=True,
                       error_message="skipped: needs 3.1 GiB, does not fit in device memory")
    cand = write(tmp_path, "c.json", doc)
    code, out, _ = cli("compare", BASE, cand)
    assert code == 1
    assert f"{INT8}: SKIPPED NOW (candidate: needs 3.1 GiB, does not fit in device memory)" in out
    code, out, _ = cli("compare", BASE, cand, "--allow-skipped")
    assert code == 0 and "1 skipped now (allowed)" in summary(out)


# --- non-finite samples ----------------------------------------------------------------------


def test_one_nan_repetition_cannot_hide_a_fifty_percent_slowdown(cli, tmp_path):
    template = load_doc("gpu_a.json")
    base = write(tmp_path, "b.json", with_times(template, {FP16: [1.0e-3] * 5}))
    cand = write(tmp_path, "c.json",
                 with_times(template, {FP16: [1.5e-3, 1.5e-3, float("nan"), 1.5e-3, 1.5e-3]}))
    code, out, err = cli("compare", base, cand)
    assert code == 2
    line = next(ln for ln in out.splitlines() if ln.startswith(FP16))
    assert "INVALID INPUT (candidate: real_time of repetition 2 is NaN)" in line
    assert err.strip().splitlines()[-1].startswith("tcbench: 1 benchmark(s) hold values no "
                                                   "measurement gives (not finite numbers")
    assert FP16 in err and "NaN" in err
    assert summary(out).startswith("tcbench compare: INPUT ERROR:")


def test_an_infinite_baseline_sample_is_named_not_folded_into_the_noise_band(tmp_path):
    template = load_doc("gpu_a.json")
    base = parse_doc(with_times(template, {FP16: [1.0e-3, 1.0e-3, float("inf")]}))
    cand = parse_doc(with_times(template, {FP16: [1.5e-3, 1.5e-3, 1.5e-3]}))
    comp = compare.compare(base, cand, compare.Options())
    row = next(r for r in comp.rows if r.name == FP16)
    assert row.status == compare.INVALID
    assert row.note == "baseline: real_time of repetition 2 is +Inf"
    assert comp.exit_code == 2


# --- configuration schema --------------------------------------------------------------------


def test_top_level_default_and_alpha_are_read_as_settings_not_regexes(cli, tmp_path):
    cand = write(tmp_path, "c.json", scaled(load_doc("gpu_a.json"), {FP16: 1.03}))
    config = tmp_path / "gate.toml"
    config.write_text("default = 2\nalpha = 0.05\n")
    options = compare.Options()
    compare.load_config(str(config), options)
    assert options.threshold == pytest.approx(0.02) and options.overrides == []
    code, out, _ = cli("compare", BASE, cand, "--config", config)
    assert code == 1 and f"{FP16}: REGRESSED, +3.0%" in out


@pytest.mark.parametrize("text,needle", [
    ('{"fp16/m:4096": 20}', "unknown key(s) 'fp16/m:4096'"),
    ('{"default": 5, "treshold": {"a": 1}}', "unknown key(s) 'treshold'"),
    ('{"allow_missing": "yes"}', "allow_missing must be true or false"),
    ('{"thresholds": {"a{4294967296}": 5}}', "is not a usable regular expression (OverflowError"),
])
def test_config_schema_is_validated(cli, tmp_path, text, needle):
    config = tmp_path / "gate.json"
    config.write_text(text)
    code, _, err = cli("compare", BASE, BASE, "--config", config)
    assert code == 2
    assert err.startswith("tcbench: ") and needle in err and "Traceback" not in err


# --- alpha below what the U test can reach ---------------------------------------------------


def test_alpha_below_the_smallest_reachable_p_falls_back_to_the_noise_band(cli, tmp_path):
    assert compare.smallest_p(5, 5) == pytest.approx(2 / 252)
    template = load_doc("gpu_a.json")
    base = write(tmp_path, "b.json", with_times(template, {FP16: [1.00e-3, 1.01e-3, 0.99e-3,
                                                                  1.005e-3, 0.995e-3]}))
    cand = write(tmp_path, "c.json", with_times(template, {FP16: [1.50e-3, 1.51e-3, 1.49e-3,
                                                                  1.505e-3, 1.495e-3]}))
    code, out, err = cli("compare", base, cand, "--alpha", "0.005")
    assert code == 1
    line = next(ln for ln in out.splitlines() if ln.startswith(FP16))
    assert "REGRESSED" in line and "noise band" in line
    assert "the U test cannot reach p<0.005 with 5 vs 5 repetitions" in line
    assert "warning: alpha 0.005 is below the smallest p-value the U test can reach" in err
    # With an alpha the test can reach, the U test decides as before.
    code, out, _ = cli("compare", base, cand, "--alpha", "0.01")
    assert code == 1 and "U test p=0.00794" in out


# --- duplicates ------------------------------------------------------------------------------


def test_two_runs_concatenated_in_one_file_are_an_input_error(cli, tmp_path):
    template = load_doc("gpu_a.json")
    normal = with_times(template, {FP16: [1.0e-3] * 5})
    slow = with_times(template, {FP16: [1.5e-3] * 5})
    doc = copy.deepcopy(normal)
    doc["benchmarks"] += [r for r in slow["benchmarks"] if key(r) == FP16]
    code, _, err = cli("compare", BASE, write(tmp_path, "dup.json", doc))
    assert code == 2
    assert f"holds repetition 0 of benchmark {FP16!r} twice" in err
    # Repetitions of one run (distinct repetition_index) are fine, as in every fixture.
    assert cli("compare", BASE, write(tmp_path, "ok.json", normal))[0] in (0, 1)


# --- folders that mix GPUs -------------------------------------------------------------------


def test_a_folder_mixing_gpus_is_refused_naming_the_files(cli, tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    a, b = load_doc("gpu_a.json"), load_doc("gpu_b.json")
    a["benchmarks"] = [r for r in a["benchmarks"] if r["name"].startswith("fp16_vs_fp32/")]
    b["benchmarks"] = [r for r in b["benchmarks"] if r["name"].startswith("int8_gemm/")]
    write(folder, "bench_fp16_vs_fp32.json", a)
    write(folder, "bench_int8_gemm.json", b)
    for command in (["compare", BASE, folder], ["report", folder, "--out", tmp_path / "r"]):
        code, _, err = cli(*command)
        assert code == 2, command
        assert "mixes GPUs (gpu name: bench_fp16_vs_fp32.json has 'Fixture GPU A', " \
               "bench_int8_gemm.json has 'Fixture GPU B')" in err


# --- markdown --------------------------------------------------------------------------------


def test_markdown_appends_to_the_github_step_summary_and_replaces_other_files(cli, tmp_path,
                                                                              monkeypatch):
    # GitHub names the file step_summary_<uuid> and says so in GITHUB_STEP_SUMMARY.
    step = tmp_path / "step_summary_3f1e"
    step.write_text("## earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    assert cli("compare", BASE, BASE, "--markdown", step)[0] == 0
    text = step.read_text()
    assert text.startswith("## earlier step\n") and "## tcbench compare" in text
    other = tmp_path / "summary.md"
    other.write_text("old\n")
    assert cli("compare", BASE, BASE, "--markdown", other)[0] == 0
    assert other.read_text().startswith("## tcbench compare")


def test_decision_table_statuses_and_exit_codes():
    """The table of docs/ci.md, section 4, row by row, on one pair of files."""
    template = load_doc("gpu_a.json")
    base_doc = with_times(template, {FP16: [1.0e-3] * 5, INT8: [1.0e-3] * 5, WMMA: [1.0e-3] * 5})
    cand_doc = with_times(template, {FP16: [1.2e-3] * 5, INT8: [1.0e-3] * 5, WMMA: [1.0e-3] * 5})
    cand_doc = without(cand_doc, WMMA)
    comp = compare.compare(parse_doc(base_doc), parse_doc(cand_doc), compare.Options())
    by_name = {r.name: r for r in comp.rows}
    assert by_name[FP16].status == compare.REGRESSED and by_name[FP16].failing
    assert by_name[INT8].status == compare.UNCHANGED and not by_name[INT8].failing
    assert by_name[WMMA].status == compare.MISSING and by_name[WMMA].failing
    assert comp.exit_code == 1
    assert json.dumps(compare.CONFIG_KEYS) == json.dumps(
        ["default", "alpha", "thresholds", "allow_missing", "allow_skipped",
         "allow_not_comparable", "allow_throttled"])
    # The "not comparable: throttled" row: the candidate's INT8 ran under a hardware slowdown.
    hot = edited(cand_doc, INT8, sm_clock_mhz=1980.0, throttle=0x8)
    base_clock = edited(base_doc, INT8, sm_clock_mhz=1980.0, throttle=0)
    comp = compare.compare(parse_doc(base_clock), parse_doc(hot), compare.Options())
    row = {r.name: r for r in comp.rows}[INT8]
    assert row.status == compare.THROTTLED and row.failing and row.clock_ratio == 1.0
    allowed = compare.compare(parse_doc(base_clock), parse_doc(hot),
                              compare.Options(allow_throttled=True))
    assert {r.name: r for r in allowed.rows}[INT8].status == compare.UNCHANGED


# --- renamed benchmarks: a baseline of the first name grammar (tcbench 0.1) ------------------


def as_v1(doc: dict) -> dict:
    """``doc`` as tcbench 0.1 named it: no layout key, n: for element counts, h:/t: for the FP8
    block's hidden size and tokens, cublaslt_bT for cuBLASLt with B N-contiguous."""
    out = copy.deepcopy(doc)
    out["context"].pop("tcbench_schema")  # tcbench 0.1 wrote neither the schema nor arguments
    for row in out["benchmarks"]:
        row.pop("tcbench_args")
        for field in ("name", "run_name"):
            name = row[field]
            if "/layout:nt" in name:
                name = name.replace("/cublaslt/", "/cublaslt_bT/", 1)
            name = re.sub(r"/layout:[nt]{2}", "", name)
            name = name.replace("/hidden:", "/h:").replace("/tokens:", "/t:") \
                if name.startswith("fp8/") else name
            if not name.startswith("loss_scaling/"):
                name = name.replace("/elements:", "/n:")
            row[field] = name
    return out


def test_a_v1_baseline_is_renamed_not_missing_and_fails_the_gate(cli, tmp_path):
    old = write(tmp_path, "v1.json", as_v1(load_doc("gpu_a.json")))
    code, out, _ = cli("compare", old, BASE)
    assert code == 1
    lines = {line.split()[0]: line for line in out.splitlines() if line and "/" in line.split()[0]}
    old_fp16 = FP16.removesuffix("/layout:nn")
    assert lines[old_fp16].rstrip().endswith(
        f"NOT COMPARABLE (renamed: the baseline name has no layout; this benchmark is now {FP16} "
        "(names carry the GEMM layout since tcbench 0.2); refresh the baseline)")
    # Both medians are shown (2 * 4096^3 at 256 TFLOP/s: 536.9 us); the new name is not listed
    # again as new, nothing is "missing".
    assert lines[old_fp16].split()[1:5] == ["536.9", "us", "536.9", "us"]
    assert FP16 not in lines and "MISSING" not in out and "only in candidate" not in out
    # Every GEMM that ran (12 fp16_vs_fp32 cuBLASLt, 1 WMMA, int8, 3 alignment) is renamed; the
    # FP8 skip and the CUPTI failure keep their status under the old name, naming the new one;
    # the unchanged loss_scaling name is compared.
    assert summary(out) == ("tcbench compare: FAIL: 17 NOT COMPARABLE, 1 unchanged, 1 skipped, "
                            "1 failed on both.")
    assert lines["fp8/gemm_e4m3xe4m3_bf16/fp8/m:4096/n:4096/k:4096/accum:fast"].rstrip().endswith(
        "; renamed: fp8/gemm_e4m3xe4m3_bf16/fp8/m:4096/n:4096/k:4096/layout:tn/accum:fast in the "
        "candidate)")
    assert "loss_scaling/unscale/fp32/elements:10000000" in lines
    code, out, _ = cli("compare", old, BASE, "--allow-not-comparable")
    assert code == 0 and "17 not comparable (allowed)" in summary(out)


def test_renames_say_what_changed_for_every_v1_form(tmp_path):
    new = parse_doc(load_doc("fp8_gpu_h.json"))
    comp = compare.compare(parse_doc(as_v1(load_doc("fp8_gpu_h.json"))), new, compare.Options())
    notes = {r.name: r.note for r in comp.rows}
    statuses = {r.name: r.status for r in comp.rows}
    e5m2 = "fp8/gemm_e5m2xe5m2_bf16/fp8/m:4096/n:4096/k:4096/accum:fast"  # skipped on both sides
    assert statuses.pop(e5m2) == compare.SKIPPED
    assert set(statuses.values()) == {compare.NOT_COMPARABLE} and len(statuses) == 51
    assert notes["fp8/layer_qkv/fp8/h:4096/t:4096/recipe:delayed"].startswith(
        "renamed: the baseline name has no layout and has h:/t: (hidden:/tokens: now); this "
        "benchmark is now fp8/layer_qkv/fp8/hidden:4096/tokens:4096/layout:tn/recipe:delayed ")
    assert notes["fp8/recipe_cast/fp8/n:1048576/in:bf16"].startswith(
        "renamed: the baseline name counts elements as n: (elements: now); this benchmark is now "
        "fp8/recipe_cast/fp8/elements:1048576/in:bf16 ")
    # The 16-bit GEMMs beside the FP8 ones were timed NN under their v1 names.
    assert ", and the baseline timed it NN (" in notes["fp8/gemm/bf16/m:4096/n:4096/k:4096"]
    assert "timed it NN" not in notes["fp8/gemm_e4m3xe4m3_bf16/fp8/m:4096/n:4096/k:4096/accum:fast"]
    # alignment's B N-contiguous variant: one variant name, the layout key.
    quick = load_doc("alignment_quick.json")
    comp = compare.compare(parse_doc(as_v1(quick)), parse_doc(quick), compare.Options())
    row = next(r for r in comp.rows if r.name == "alignment/cublaslt_bT/fp16/m:4096/n:33/k:4096")
    assert row.status == compare.NOT_COMPARABLE and row.note.startswith(
        "renamed: the baseline name says cublaslt_bT (cublaslt with layout:nt now); this "
        "benchmark is now alignment/cublaslt/fp16/m:4096/n:33/k:4096/layout:nt ")


def test_an_older_candidate_is_renamed_too():
    comp = compare.compare(parse_doc(load_doc("gpu_a.json")),
                           parse_doc(as_v1(load_doc("gpu_a.json"))), compare.Options())
    row = next(r for r in comp.rows if r.name == FP16)
    assert row.status == compare.NOT_COMPARABLE and row.failing
    assert row.note.startswith("renamed: the candidate name has no layout: it comes from a tcbench "
                               "older than tcbench 0.2")
    assert comp.exit_code == 1 and not any(r.status == compare.ONLY_CAND for r in comp.rows)


def test_a_renamed_benchmark_that_fails_now_is_a_failure_not_a_rename(tmp_path):
    cand = load_doc("gpu_a.json")
    for row in cand["benchmarks"]:
        if key(row) == INT8:
            row.update(error_occurred=True, error_message="cublasLtMatmul failed")
    comp = compare.compare(parse_doc(as_v1(load_doc("gpu_a.json"))), parse_doc(cand),
                           compare.Options(allow_not_comparable=True))
    row = next(r for r in comp.rows if r.name == INT8.removesuffix("/layout:tn"))
    assert row.status == compare.FAILED and row.failing
    assert row.note == f"candidate: cublasLtMatmul failed; renamed: {INT8} in the candidate"


def row_line(out: str, name: str) -> str:
    return next(ln for ln in out.splitlines() if ln.startswith(name))


def test_a_zero_or_negative_baseline_repetition_no_longer_hides_a_regression(cli, tmp_path):
    """Before: the one bad repetition inflated the noise band to 173 % (357 % for a negative
    time), so a +52 % candidate passed as noise, on every later run of that baseline."""
    template = load_doc("gpu_a.json")
    cand = write(tmp_path, "c.json", with_times(template, {FP16: [1.52e-3] * 5}))
    for bad, shown in ((0.0, "0 ms"), (-1.0e-3, "-1 ms")):  # the fixture is in ms
        base = write(tmp_path, "b.json",
                     with_times(template, {FP16: [1e-3, 1e-3, bad, 1e-3, 1e-3]}))
        code, out, err = cli("compare", base, cand)
        assert code == 2, out
        assert (f"INVALID INPUT (baseline: real_time of repetition 2 is {shown}, outside its "
                "physical range (> 0))") in row_line(out, FP16)
        assert summary(out).startswith("tcbench compare: INPUT ERROR: 1 INVALID INPUT")
        assert "no measurement gives" in err and FP16 in err
    # The candidate side too.
    base = write(tmp_path, "b.json", with_times(template, {FP16: [1e-3] * 5}))
    cand = write(tmp_path, "c.json", with_times(template, {FP16: [1e-3, -2e-3, 1e-3, 1e-3, 1e-3]}))
    code, out, _ = cli("compare", base, cand)
    assert code == 2 and "candidate: real_time of repetition 1 is -2 ms" in row_line(out, FP16)


@pytest.mark.parametrize("field,value,why", [
    ("pct_of_peak", 500.0, "pct_of_peak of repetition 3 is 500, outside its physical range "
                           "(> 0 and <= 200)"),
    ("rel_error", -0.25, "rel_error of repetition 3 is -0.25, outside its physical range (>= 0)"),
    ("tflops", -159.8, "tflops of repetition 3 is -159.8, outside its physical range (> 0)"),
    ("tflops", 0.0, "tflops of repetition 3 is 0, outside its physical range (> 0)"),
    ("temp_c_max", 400.0, "temp_c_max of repetition 3 is 400"),
])
def test_any_counter_outside_its_range_is_invalid_input_when_time_is_compared(cli, tmp_path,
                                                                              field, value,
                                                                              why):
    """Before: only the compared metric (time) was checked; the impossible counter passed."""
    doc = with_fields(load_doc("gpu_a.json"), FP16, 3, **{field: value})
    bad = write(tmp_path, "bad.json", doc)
    code, out, _ = cli("compare", fixture("gpu_a.json"), bad)
    assert code == 2, out
    assert f"INVALID INPUT (candidate: {why}" in row_line(out, FP16)


def test_a_config_that_is_not_a_regular_file_or_too_big_is_refused(tmp_path):
    good = str(fixture("gpu_a.json"))
    fifo = tmp_path / "gate.toml"
    os.mkfifo(fifo)
    proc = bounded("compare", good, good, "--config", str(fifo))
    assert proc.returncode == 2 and \
        "is a FIFO (named pipe), not a regular config file" in proc.stderr
    proc = bounded("compare", good, good, "--config", "/dev/zero")
    assert proc.returncode == 2 and "character device" in proc.stderr


@pytest.mark.parametrize("regex,words", [
    ("(a+)+$", "applies a quantifier to a group that holds a quantifier or an alternation"),
    ("(.|x)*z", "applies a quantifier to a group"),
    (".*.*.*x", "holds 3 unbounded quantifiers"),
    ("(a)\\1", "backreference"),
])
def test_a_threshold_regex_that_could_backtrack_for_ever_is_refused(tmp_path, regex, words):
    """A neighbour of the --benchmark_filter class: compare searches every benchmark name with
    each threshold pattern (Python's re backtracks too: ".*.*.*.*x" took 93 s over 2000 names)."""
    config = write(tmp_path, "gate.json", {"thresholds": {regex: 5}})
    proc = bounded("compare", str(fixture("gpu_a.json")), str(fixture("gpu_a.json")), "--config",
                   str(config))
    assert proc.returncode == 2 and words in proc.stderr and "is refused" in proc.stderr
    ok = write(tmp_path, "ok.json", {"thresholds": {"^alignment/.*k:4095": 5,
                                                   "cublaslt/(fp16|bf16)/m:4096": 8}})
    assert bounded("compare", str(fixture("gpu_a.json")), str(fixture("gpu_a.json")),
                   "--config", str(ok)).returncode == 0


def test_a_config_named_toml_in_capitals_is_read_as_toml(tmp_path):
    config = tmp_path / "THRESHOLDS.TOML"
    config.write_text("default = 7\n")
    proc = tcbench("compare", str(fixture("gpu_a.json")), str(fixture("gpu_a.json")), "--config",
                   str(config))
    assert proc.returncode == 0, proc.stderr
    assert "7.0%" in proc.stdout


def test_a_regression_stays_exit_1_when_the_markdown_cannot_be_written(cli, tmp_path):
    template = load_doc("gpu_a.json")
    base = write(tmp_path, "b.json", with_times(template, {FP16: [1.0e-3] * 5}))
    slow = write(tmp_path, "c.json", with_times(template, {FP16: [1.5e-3] * 5}))
    unwritable = tmp_path / "no-such-folder" / "summary.md"
    code, out, err = cli("compare", base, slow, "--markdown", unwritable)
    assert code == 1, err  # before: 2, the regression hidden behind the write failure
    assert "REGRESSED" in out
    assert f"cannot write the Markdown summary {unwritable}: No such file or directory; the " \
           "verdict stands: FAIL (exit 1)." in err
    code, _, err = cli("compare", base, base, "--markdown", unwritable)
    assert code == 2 and "the comparison passed, but its summary is lost" in err


@pytest.mark.parametrize("name,text,needle", [
    ("bad_regex.json", json.dumps({"thresholds": {"fp16[": 5}}),
     "is not a valid regular expression"),
    ("bad_value.json", json.dumps({"thresholds": {"fp16": "fast"}}), "is not a percentage"),
    ("negative.json", json.dumps({"thresholds": {"fp16": -3}}), "must be a percentage above 0"),
    ("bad.json", "{nope", "is not valid JSON"),
    ("bad.toml", "[thresholds\n", "is not valid TOML"),
    ("unknown.json", json.dumps({"thresholds": {}, "limit": 3}), "unknown key(s) 'limit'"),
    ("alpha.json", json.dumps({"thresholds": {}, "alpha": 2}), "alpha must be a number"),
])
def test_bad_config_files(tmp_path, name, text, needle):
    config = tmp_path / name
    config.write_text(text)
    assert_one_line_error(tcbench("compare", GOOD, GOOD, "--config", str(config)), needle)


def test_missing_config_and_bad_threshold(tmp_path):
    assert_one_line_error(tcbench("compare", GOOD, GOOD, "--config", str(tmp_path / "x.json")),
                          "cannot read the config file")
    proc = tcbench("compare", GOOD, GOOD, "--threshold", "abc")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "argument --threshold: 'abc' is not a percentage" in proc.stderr
    assert "usage: tcbench compare" in proc.stderr


def test_markdown_to_unwritable_place(tmp_path):
    assert_one_line_error(tcbench("compare", GOOD, GOOD, "--markdown",
                                  str(tmp_path / "no" / "such" / "dir.md")), "cannot write")


def test_a_regex_too_deep_to_compile(tmp_path):
    config = tmp_path / "gate.json"
    config.write_text(json.dumps({"thresholds": {"(" * 5000 + ")" * 5000: 5}}))
    assert_one_line_error(tcbench("compare", GOOD, GOOD, "--config", str(config)),
                          "is not a usable regular expression (RecursionError")


# ---------------------------------------------------------------------------------------------
# compare --config

PATTERNS = ["^fp16_vs_fp32/", "(a+)+$", "(.|x)*z", ".*.*.*x", "(a)\\1", "(?=x)", "[", "(",
            "\\", "a{1000000}", "(a{0,255}){255}", "x" * 1001, "(?P<n>a)(?P=n)", "\x00",
            "cublaslt/(fp16|bf16)/m:4096", "/m:[0-9]+/n:[0-9]+", "(" * 200 + ")" * 200,
            "[\\d]{1,3}", "(?i)FP16", "$^", "\\b\\B"]
KEYS = ["default", "alpha", "thresholds", "allow_missing", "allow_skipped",
        "allow_not_comparable", "allow_throttled"]


def toml_value(value) -> str:
    """A TOML literal for value (strings as basic strings, escaped as JSON does)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if value == value and abs(value) != float("inf") else "nan"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(str(value))


threshold_value = st.one_of(st.integers(-5, 2000), st.floats(allow_nan=True), st.sampled_from(
    ["5%", "5", "-1%", "0%", "1e999", "abc", "", "%"]) | p.hostile_text, st.booleans(),
    st.lists(st.integers(), max_size=2))


@st.composite
def config(draw):
    doc = {}
    for key in draw(st.lists(st.sampled_from(KEYS) | p.hostile_text, max_size=4)):
        if key == "thresholds":
            doc[key] = draw(st.dictionaries(st.sampled_from(PATTERNS) | p.hostile_text,
                                            threshold_value, max_size=4))
        else:
            doc[key] = draw(threshold_value | p.json_leaf)
    how = draw(st.sampled_from(["toml", "toml", "json", "text"]))
    if how == "text":
        return "gate.toml", draw(st.text(max_size=80)).encode("utf-8", "surrogatepass")
    if how == "json":
        return "gate.json", json.dumps(doc).encode()
    lines = []
    for key, value in doc.items():
        if isinstance(value, dict):
            lines.append(f"[{json.dumps(str(key))}]")
            lines += [f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items()]
        else:
            lines.insert(0, f"{json.dumps(str(key))} = {toml_value(value)}")
    return "gate.toml", "\n".join(lines).encode("utf-8", "surrogatepass")


@settings(max_examples=p.examples(40))
@given(generated=config())
def test_compare_config(tmp_path, generated):
    name, data = generated
    path = p.workdir(tmp_path) / name
    path.write_bytes(data)
    o = p.run_cli("compare", SINGLE, SINGLE, "--config", path, seconds=20)
    p.check(o, {0, 1, 2}, data[:200])
