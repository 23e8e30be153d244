"""Clocks, power and throttling in the tools: the reason bits against nvidia-ml-py (an independent
source) and the C++ schema, the gate's "not comparable: throttled" class, the report's energy
efficiency, the run summary's clock line, and ``run --device all`` on eight fake GPUs.

The counters are added to copies of the fixtures in memory (``with_power``): fictional test
values, not measurements.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, fixture, load_doc, scaled, table_rows, write
from tcbench_tools import compare, power
from tcbench_tools.results import parse_doc

HW_SLOWDOWN, SW_POWER_CAP, SW_THERMAL = 0x8, 0x4, 0x20


def names_like(doc: dict, prefix: str) -> list[str]:
    """Benchmark names (without /manual_time) that start with ``prefix``, in file order."""
    out = []
    for row in doc["benchmarks"]:
        name = row["run_name"].removesuffix("/manual_time")
        if name.startswith(prefix) and name not in out:
            out.append(name)
    assert out, f"no benchmark starts with {prefix!r}"
    return out


def with_power(doc: dict, clock: float = 1980.0, watts: float = 300.0, temp: float = 65.0,
               throttle: int = 0, only: dict[str, dict] | None = None) -> dict:
    """A copy of ``doc`` whose measured rows carry the NVML counters: the same values on every
    benchmark, except those named in ``only`` ({name: {counter: value}}) which get theirs."""
    out = copy.deepcopy(doc)
    for row in out["benchmarks"]:
        if row.get("error_occurred") or row.get("aggregate_name") in ("stddev", "cv"):
            continue
        name = row["run_name"].removesuffix("/manual_time")
        values = {power.SM_CLOCK_MHZ: clock, power.POWER_W: watts, power.TEMP_C_MAX: temp,
                  power.THROTTLE: throttle}
        values.update((only or {}).get(name, {}))
        row.update(values)
        for rate, per_w in power.EFFICIENCY.items():
            if rate in row:
                row[per_w] = row[rate] / values[power.POWER_W]
    return out


# ---------------------------------------------------------------------------------------------
# The reason bits: three sources agree


# nvidia-ml-py's names for the reasons (pynvml.nvmlClocksEventReason*).
PYNVML_NAMES = {"gpu_idle": "GpuIdle", "applications_clocks_setting": "ApplicationsClocksSetting",
                "sw_power_cap": "SwPowerCap", "hw_slowdown": "HwSlowdown",
                "sync_boost": "SyncBoost", "sw_thermal": "SwThermalSlowdown",
                "hw_thermal": "HwThermalSlowdown", "hw_power_brake": "HwPowerBrakeSlowdown",
                "display_clock_setting": "DisplayClockSetting", "board_limit": "BoardLimit",
                "reliability": "Reliability"}


def test_reason_bits_are_nvidia_ml_pys():
    pynvml = pytest.importorskip("pynvml")  # pinned in scripts/requirements-test.txt
    checked = []
    for name, bit in power.REASONS:
        value = getattr(pynvml, f"nvmlClocksEventReason{PYNVML_NAMES[name]}", None)
        if value is None:
            # nvidia-ml-py 13.615 predates board_limit and reliability (nvml.h 13.5 has them):
            # those two are checked against nvml.h only, by the C++ build.
            assert name in ("board_limit", "reliability"), name
            continue
        assert value == bit, name
        # The older spelling of the same constant agrees too.
        old = getattr(pynvml, f"nvmlClocksThrottleReason{PYNVML_NAMES[name]}", value)
        assert old == bit, name
        checked.append(name)
    assert len(checked) >= 9
    assert set(PYNVML_NAMES) == {n for n, _ in power.REASONS}


def _context_tool() -> Path | None:
    build = os.environ.get("TCBENCH_BUILD_DIR")
    if build:
        return Path(build) / "bin" / "tcbench_context"
    found = sorted(REPO.glob("build/*/bin/tcbench_context"), key=lambda p: p.stat().st_mtime,
                   reverse=True)
    return found[0] if found else None


def test_reason_table_is_the_cpp_schemas():
    tool = _context_tool()
    if tool is None or not tool.is_file():
        if os.environ.get("TCBENCH_BUILD_DIR"):
            pytest.fail("TCBENCH_BUILD_DIR has no bin/tcbench_context")
        pytest.skip("no build with tcbench_context (scripts/tcbench test builds one)")
    schema = json.loads(subprocess.run([str(tool), "--schema"], check=True, capture_output=True,
                                       text=True).stdout)
    assert [(r["name"], r["bit"]) for r in schema["throttle_reasons"]] == list(power.REASONS)
    context = json.loads(subprocess.run([str(tool)], check=True, capture_output=True,
                                        text=True).stdout)
    # A result file carries the table it was written with; reading it back gives the same.
    assert power.reason_table(context) == dict(power.REASONS)
    cpp_counters = {c["name"] for c in schema["counters"]}
    assert {power.SM_CLOCK_MHZ, power.POWER_W, power.ENERGY_J, power.TFLOPS_PER_W,
            power.TOPS_PER_W, power.GBPS_PER_W, power.TEMP_C_MAX, power.THROTTLE,
            power.PCT_OF_PEAK_AT_CLOCK} <= cpp_counters


def test_decoding_a_mask():
    assert power.decode(0) == []
    assert power.decode(SW_POWER_CAP | HW_SLOWDOWN) == ["sw_power_cap", "hw_slowdown"]
    assert power.decode(1 << 20) == ["bit_20"]
    # The file's own table wins; a malformed one falls back to this version's.
    assert power.decode(0x800, power.reason_table({"throttle_reasons": "new_reason:0x800"})) == \
        ["new_reason"]
    assert power.reason_table({"throttle_reasons": "x:0x3"}) == dict(power.REASONS)
    assert power.reason_table({"throttle_reasons": "garbage"}) == dict(power.REASONS)


def test_a_benchmarks_power_over_its_repetitions():
    doc = load_doc("gpu_a.json")
    name = names_like(doc, "fp16_vs_fp32/cublaslt/fp16/")[0]
    doc = with_power(doc, only={name: {power.THROTTLE: SW_POWER_CAP}})
    rows = [r for r in doc["benchmarks"] if r["run_name"].startswith(name + "/")
            and r["run_type"] == "iteration"]
    rows[0][power.THROTTLE] = HW_SLOWDOWN  # one repetition hit a slowdown
    rows[1][power.TEMP_C_MAX] = 91.0
    p = power.of(parse_doc(doc).benchmarks[name], doc["context"])
    assert p.throttle == SW_POWER_CAP | HW_SLOWDOWN  # the union, not the median
    assert p.reasons == ["sw_power_cap", "hw_slowdown"] and p.hard == ["hw_slowdown"]
    assert p.temp_c_max == 91.0  # the hottest, not the median
    assert p.clock_mhz == 1980.0 and p.power_w == 300.0
    assert p.efficiency[0] == power.TFLOPS_PER_W
    assert p.describe() == "1980 MHz, 300 W, 91 C, throttle: sw_power_cap,hw_slowdown"
    # Without counters: unknown, never "not throttled".
    plain = power.of(parse_doc(load_doc("gpu_a.json")).benchmarks[name])
    assert not plain.known and plain.throttle is None


# ---------------------------------------------------------------------------------------------
# The gate


@pytest.fixture
def pair(tmp_path):
    doc = load_doc("gpu_a.json")
    fp16 = names_like(doc, "fp16_vs_fp32/cublaslt/fp16/")
    return doc, fp16, write(tmp_path, "base.json", with_power(doc))


def test_a_candidate_under_a_hardware_slowdown_is_not_comparable(cli, tmp_path, pair):
    doc, fp16, base = pair
    cand = write(tmp_path, "cand.json", with_power(scaled(doc, {fp16[-1]: 1.3}), only={
        fp16[-1]: {power.SM_CLOCK_MHZ: 1980.0, power.THROTTLE: HW_SLOWDOWN}}))
    code, out, _ = cli("compare", base, cand)
    assert code == 1
    failures = out.split("Regressions and failures:")[1]
    assert f"{fp16[-1]}: NOT COMPARABLE: THROTTLED (the candidate ran under hw_slowdown)" \
        in failures
    assert "REGRESSED" not in out  # neither a silent regression nor a silent pass
    assert "1 NOT COMPARABLE: THROTTLED" in out.splitlines()[-1]
    # --allow-throttled (or the config key): judged by its time, with the reason said.
    code, out, _ = cli("compare", base, cand, "--allow-throttled")
    assert code == 1 and f"{fp16[-1]}: REGRESSED, +30.0%" in out
    assert "throttled, compared anyway: the candidate ran under hw_slowdown" in out
    config = write(tmp_path, "gate.json", {"allow_throttled": True})
    assert cli("compare", base, cand, "--config", config)[0] == 1  # still the +30 %
    same = write(tmp_path, "same.json", with_power(doc, only={
        fp16[-1]: {power.THROTTLE: HW_SLOWDOWN}}))
    assert cli("compare", base, same, "--allow-throttled")[0] == 0
    assert cli("compare", base, same)[0] == 1


def test_a_clock_more_than_five_percent_below_the_baseline_is_not_comparable(cli, tmp_path, pair):
    doc, fp16, base = pair
    # 1850 MHz is 6.6 % below 1980: the 7 % slowdown is the clock's, not the code's.
    slow = write(tmp_path, "slow.json", with_power(scaled(doc, {fp16[-1]: 1.07}), only={
        fp16[-1]: {power.SM_CLOCK_MHZ: 1850.0, power.THROTTLE: SW_POWER_CAP}}))
    code, out, _ = cli("compare", base, slow)
    assert code == 1
    line = next(ln for ln in out.splitlines() if ln.startswith(fp16[-1]))
    assert "0.934x" in line  # the clock ratio beside the slowdown
    assert "+7.0%" in line
    assert "its SM clock, 1850 MHz, is 6.6% below the baseline's 1980 MHz" in line
    # 1900 MHz (4 % below) and a power cap alone are within the tolerance: compared by time.
    near = write(tmp_path, "near.json", with_power(doc, only={
        fp16[-1]: {power.SM_CLOCK_MHZ: 1900.0, power.THROTTLE: SW_POWER_CAP}}))
    code, out, _ = cli("compare", base, near)
    assert code == 0 and "0.960x" in out
    # A faster clock is not a reason to refuse (it may explain an improvement: it is printed).
    fast = write(tmp_path, "fast.json", with_power(doc, clock=2100.0))
    code, out, _ = cli("compare", base, fast)
    assert code == 0 and "1.061x" in out


def test_across_gpu_models_only_slowdowns_count(cli, tmp_path):
    """--normalize-peak across GPU models: each runs at its own clock (1410 vs 1755 MHz is not a
    throttle), but a hardware slowdown still makes the candidate not comparable."""
    base = write(tmp_path, "b.json", with_power(load_doc("gpu_b.json"), clock=1755))
    a_doc = load_doc("gpu_a.json")
    cand = write(tmp_path, "a.json", with_power(a_doc, clock=1410))
    code, out, err = cli("compare", base, cand, "--normalize-peak", "--allow-missing")
    assert "THROTTLED" not in out and "0.803x" in out, err
    name = names_like(a_doc, "fp16_vs_fp32/cublaslt/fp16/")[-1]
    hot = write(tmp_path, "hot.json", with_power(a_doc, clock=1410, only={
        name: {power.THROTTLE: HW_SLOWDOWN}}))
    code, out, _ = cli("compare", base, hot, "--normalize-peak", "--allow-missing")
    assert code == 1 and f"{name}: NOT COMPARABLE: THROTTLED (the candidate ran under " \
        "hw_slowdown)" in out


def test_a_throttled_baseline_is_said_and_files_without_clocks_compare_as_before(cli, tmp_path,
                                                                                pair):
    doc, fp16, base = pair
    hot_base = write(tmp_path, "hot.json", with_power(doc, only={
        fp16[0]: {power.THROTTLE: SW_THERMAL}}))
    code, out, _ = cli("compare", hot_base, base)
    assert code == 0 and "the baseline ran under sw_thermal" in out
    code, out, _ = cli("compare", fixture("gpu_a.json"), fixture("gpu_a.json"))
    assert code == 0 and "clock ratio" in out
    assert all(" x " not in ln for ln in out.splitlines())
    comp = compare.compare(parse_doc(load_doc("gpu_a.json")), parse_doc(load_doc("gpu_a.json")),
                           compare.Options())
    assert all(r.clock_ratio is None for r in comp.rows)


def test_runs_with_different_clock_settings_are_warned_about(cli, tmp_path, pair):
    doc, _, _ = pair
    base, other = with_power(doc), with_power(doc)
    base["context"].update(clock_policy="as-is", power_limit_w="700.0")
    other["context"].update(clock_policy="max", power_limit_w="500.0")
    code, _, err = cli("compare", write(tmp_path, "b.json", base),
                       write(tmp_path, "o.json", other))
    assert code == 0
    assert ("warning: the runs differ in enforced power limit (W): baseline '700.0', candidate "
            "'500.0'.") in err
    assert "differ in clock policy: baseline 'as-is', candidate 'max'" in err


# ---------------------------------------------------------------------------------------------
# The report


def three_gpus(tmp_path) -> list[Path]:
    a = with_power(load_doc("gpu_a.json"), clock=1410, watts=400)
    b_doc = load_doc("gpu_b.json")
    fp16_b = names_like(b_doc, "fp16_vs_fp32/cublaslt/fp16/")[-1]
    b = with_power(b_doc, clock=1755, watts=700,
                   only={fp16_b: {power.THROTTLE: SW_POWER_CAP, power.SM_CLOCK_MHZ: 1650}})
    c = with_power(load_doc("gpu_c.json"), clock=1590, watts=70)
    return [write(tmp_path, f"{n}.json", d) for n, d in (("a", a), ("b", b), ("c", c))]


def test_report_shows_tflops_per_watt_clocks_power_and_throttled_results(cli, tmp_path):
    files = three_gpus(tmp_path)
    out = tmp_path / "report"
    code, _, err = cli("report", *files, "--out", out)
    assert code == 0, err
    md = (out / "report.md").read_text()
    assert "## Clocks, power and energy" in md
    # The settings, from the context: a row per GPU, the enforced power limit first.
    settings = table_rows(md.split("### TFLOP/s per W")[0], "## Clocks, power and energy")
    assert {r[0]: r[1] for r in settings} == {"Fixture GPU A": "400.0", "Fixture GPU B": "700.0",
                                             "Fixture GPU C": "70.0"}
    assert "### TFLOP/s per W, per GPU and precision" in md
    # Fixture GPU B's best FP16 GEMM: 800 TFLOP/s at 700 W (fictional numbers); a row per
    # precision and GPU: per W, at what clock and power, which benchmark.
    rows = {(r[0], r[1]): r[2:] for r in table_rows(md, "### TFLOP/s per W, per GPU and precision")}
    assert rows[("fp16", "Fixture GPU B")][:2] == ["1.14 TFLOP/s/W",
                                                   "1650 MHz, 700 W, 65 C, throttle: sw_power_cap"]
    assert rows[("fp16", "Fixture GPU A")][0] == "0.64 TFLOP/s/W"  # 256 TFLOP/s at 400 W
    assert rows[("fp16", "Fixture GPU A")][1].startswith("1410 MHz, 400 W")
    assert rows[("fp16", "Fixture GPU A")][2].startswith("cublaslt 4096\u00b3 nn")
    assert "### SM clock and power per topic" in md
    assert "1755 MHz" in md and "700 W" in md
    # The throttled result is marked where it is shown, and listed.
    assert "(throttled: sw_power_cap)" in md
    assert "### Results that ran throttled" in md and "sw_power_cap: 1" in md
    png = out / "section_power_efficiency.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "data:image/png;base64," in (out / "report.html").read_text()


def test_report_without_power_counters_says_why(cli, tmp_path):
    out = tmp_path / "report"
    code, _, _ = cli("report", fixture("gpu_a.json"), "--out", out)
    assert code == 0
    md = (out / "report.md").read_text()
    assert "No result holds clock or power counters" in md
    assert not (out / "section_power_efficiency.png").exists()


def test_efficiency_plot_has_a_bar_per_gpu_and_precision(tmp_path):
    from tcbench_tools import power_report

    fig = power_report.efficiency_figure(["fp16", "int8"], ["A", "B", "C"],
                                         {("A", "fp16"): 0.8, ("B", "fp16"): 1.1,
                                          ("C", "fp16"): 0.9, ("B", "int8"): 2.2})
    # A panel per precision, a bar per GPU that has a value, on a linear axis from 0.
    fp16, int8 = [ax for ax in fig.axes if ax.get_visible()]
    assert (fp16.get_title(), int8.get_title()) == ("fp16", "int8")
    assert sorted(round(p.get_width(), 3) for p in fp16.patches) == [0.8, 0.9, 1.1]
    assert [round(p.get_width(), 3) for p in int8.patches] == [2.2]
    assert fp16.get_xscale() == "linear" and fp16.get_xlim()[0] == 0
    assert [t.get_text() for t in fp16.get_yticklabels()] == ["A", "B", "C"]


# ---------------------------------------------------------------------------------------------
# One run: its summary line, the heaviest benchmark, --clock-policy


def test_run_summary_and_heaviest_line(tmp_path):
    from tcbench_tools import summary

    doc = load_doc("gpu_b.json")
    fp16 = names_like(doc, "fp16_vs_fp32/cublaslt/fp16/")[-1]
    doc = with_power(doc, clock=1755, watts=500, only={
        fp16: {power.POWER_W: 690.0, power.THROTTLE: SW_POWER_CAP, power.SM_CLOCK_MHZ: 1650}})
    doc["context"]["clock_policy"] = "as-is"
    rs = parse_doc(doc)
    line = power.run_line(rs)
    assert line == ("clocks and power: SM clock 1650-1755 MHz (median 1755); power up to 690 W; "
                    "1 benchmark(s) throttled (sw_power_cap); clock policy as-is.")
    assert line in summary.render(rs)
    assert power.heaviest_line(rs) == \
        f"heaviest: {fp16}: 1650 MHz, 690 W, 65 C, throttle: sw_power_cap"
    path = write(tmp_path, "results.json", doc)
    proc = subprocess.run([sys.executable, "-m", "tcbench_tools.power", str(path)],
                          capture_output=True, text=True, cwd=REPO / "scripts")
    assert proc.returncode == 0 and proc.stdout.strip() == power.heaviest_line(rs)
    no_nvml = load_doc("gpu_b.json")
    no_nvml["context"]["nvml"] = ("unavailable: NVML cannot be loaded (libnvidia-ml.so.1: no "
                                  "such file)")
    assert power.run_line(parse_doc(no_nvml)) == ("clocks and power: not recorded (NVML "
                                                  "unavailable: NVML cannot be loaded "
                                                  "(libnvidia-ml.so.1: no such file))")


# ---------------------------------------------------------------------------------------------
# run --device all: eight fake GPUs, one of them slow

FAKE_BENCH = '''#!{python}
import json, os, sys
gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "?")
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--benchmark_out="))
if "--benchmark_list_tests=true" in sys.argv:
    sys.exit(0)
doc = json.load(open({source!r}))
doc["benchmarks"] = [b for b in doc["benchmarks"] if b["name"].startswith({topic!r} + "/")]
slow = gpu == {slow!r}
doc["context"]["gpu_uuid"] = "GPU-%08d-0000-0000-0000-000000000000" % int(gpu)
for b in doc["benchmarks"]:
    if b.get("aggregate_name") in ("stddev", "cv"):
        continue
    if slow:
        b["real_time"] *= 1.3
        for k in ("tflops", "tops", "gbps"):
            if k in b:
                b[k] /= 1.3
    b.update(sm_clock_mhz=1410.0 if slow else 1980.0, power_w=450.0 if slow else 650.0,
             temp_c_max=91.0 if slow else 70.0, throttle=0x28 if slow else 0)
with open(out, "w") as fh:
    json.dump(doc, fh)
with open(out + ".argv", "w") as fh:
    json.dump({{"argv": sys.argv[1:], "cuda": gpu,
               "order": os.environ.get("CUDA_DEVICE_ORDER")}}, fh)
'''


@pytest.fixture
def eight_gpus(tmp_path, monkeypatch):
    tools = tmp_path / "tools"
    tools.mkdir()
    smi = tools / "nvidia-smi"
    lines = "".join(f"echo 'GPU {i}: NVIDIA H100 80GB HBM3 (UUID: GPU-{i:08d}-0000-0000-0000-"
                    "000000000000)'\n" for i in range(8))
    smi.write_text("#!/bin/sh\n" + lines)
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)

    def bins(slow: str | None) -> Path:
        d = tmp_path / f"bin-{slow}"
        d.mkdir()
        for name, topic in (("bench_fp16_vs_fp32", "fp16_vs_fp32"), ("bench_int8_gemm",
                                                                       "int8_gemm")):
            path = d / name
            path.write_text(FAKE_BENCH.format(python=sys.executable, source=str(
                fixture("gpu_a.json")), topic=topic, slow=slow))
            path.chmod(0o755)
        return d

    return bins


@pytest.mark.parametrize("parallel", [False, True])
def test_device_all_flags_the_one_slow_gpu(cli, tmp_path, eight_gpus, parallel):
    bins = eight_gpus(slow="5")
    out = tmp_path / "node"
    code, stdout, err = cli("run", "--bin-dir", bins, "--out", out, "--device", "all",
                            "--clock-policy", "base", *(["--parallel"] if parallel else []))
    assert code == 1, err
    assert "1 GPU(s) below the node median" in err
    for i in range(8):
        assert (out / f"gpu{i}" / "results.json").is_file()
        rec = json.loads((out / f"gpu{i}" / "bench_int8_gemm.json.argv").read_text())
        assert rec["cuda"] == str(i) and rec["order"] == "PCI_BUS_ID"
        assert "--quick" in rec["argv"] and "--clock-policy=base" in rec["argv"]
    text = (out / "node_summary.txt").read_text()
    assert text in stdout
    below = text.split("Below the node median:\n")[1].splitlines()
    assert len(below) == 6 and all(ln.startswith("  GPU 5: ") for ln in below)
    assert below[-1] == "  GPU 5: and 9 more benchmark(s)"  # 14 flagged, the worst 5 listed
    assert "TFLOP/s, 23.1% below the median" in below[0]  # 1 - 1/1.3
    assert "(1410 MHz, 450 W, 91 C, throttle: hw_slowdown,sw_thermal)" in below[0]
    row = next(ln for ln in text.splitlines() if ln.startswith("5 "))
    assert "-23.1%" in row and "1410 MHz" in row and "hw_slowdown,sw_thermal" in row
    healthy = next(ln for ln in text.splitlines() if ln.startswith("0 "))
    assert "1980 MHz" in healthy and "none" in healthy


def test_device_all_with_equal_gpus_passes(cli, tmp_path, eight_gpus):
    bins = eight_gpus(slow=None)
    code, stdout, err = cli("run", "--bin-dir", bins, "--out", tmp_path / "node", "--device",
                            "all", "--parallel")
    assert code == 0, err
    assert "No GPU is more than 5% below the node median" in stdout


def test_device_all_usage(cli, tmp_path, eight_gpus, monkeypatch):
    bins = eight_gpus(slow=None)
    code, _, err = cli("run", "--bin-dir", bins, "--out", tmp_path / "x", "--parallel")
    assert code == 2 and "--parallel runs the GPUs of --device all" in err
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,6")
    code, stdout, _ = cli("run", "--bin-dir", bins, "--out", tmp_path / "two", "--device", "all")
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "two").glob("gpu*")) == ["gpu2", "gpu6"]
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    code, _, err = cli("run", "--bin-dir", bins, "--out", tmp_path / "y", "--device", "all")
    assert code == 2 and "needs nvidia-smi" in err
