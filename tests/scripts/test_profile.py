"""tcbench profile: ncu's CSV parsed from a recorded sample, the command it runs, and what happens
without ncu, without a GPU and without counter permissions (fake ncu and tcbench_metrics)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from conftest import REPO, fixture
from tcbench_tools import profile, schema

METRICS_JSON = fixture("ncu/gh100_metrics.json").read_text()
DETAILS_CSV = fixture("ncu/gh100_details.csv").read_text()
CUBLAS = ("sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_"
          "execute_segment_k_off_kernel__5x_cublas")


def test_metric_list_is_the_json_tcbench_metrics_prints():
    listed = profile.parse_metric_list(METRICS_JSON)
    assert listed.chip == "GH100" and listed.family == "Hopper"
    assert listed.metrics[0] == profile.Metric(
        "tensor_active_pct", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active")
    assert [m.counter for m in listed.metrics][-2:] == ["sm_throughput_pct", "dram_throughput_pct"]


def test_recorded_metric_list_matches_the_cpp_table():
    # The fixture was printed by tcbench_metrics; every metric in it is in metric_table.cpp and
    # every counter it maps to is a schema counter (schema.py, checked against the C++ by
    # test_schema.py), so a renamed metric or counter makes this fixture visibly stale.
    table = "".join((REPO / "common/profiling" / f).read_text() for f in (
        "src/metric_table.cpp", "include/tcbench/profiling/metric_table.hpp"))
    for m in profile.parse_metric_list(METRICS_JSON).metrics:
        assert f'"{m.name}"' in table, m.name
        assert m.counter in schema.PROFILE_COUNTERS, m.counter


def test_parse_skips_preamble_and_groups_rows_by_launch():
    launches = profile.parse_ncu_csv(DETAILS_CSV)
    assert [launch.launch_id for launch in launches] == ["0", "1", "2", "3"]
    simt, gemm1, gemm2, fill = launches
    assert simt.kernel.startswith("void tcbench::kernels::<unnamed>::gemm_simt_fp32_kernel(")
    assert simt.values["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"] == 0.0
    assert gemm1.values["sm__throughput.avg.pct_of_peak_sustained_elapsed"] == 80.61
    # "n/a" is not a number: the metric is absent, not zero.
    assert "dram__throughput.avg.pct_of_peak_sustained_elapsed" not in fill.values
    assert len(gemm2.values) == 7


def test_summary_averages_per_kernel_in_first_launch_order():
    listed = profile.parse_metric_list(METRICS_JSON)
    summary = profile.summarize(profile.parse_ncu_csv(DETAILS_CSV), listed.metrics)
    assert [s.kernel for s in summary][1] == CUBLAS
    gemm = summary[1]
    assert gemm.launches == 2
    assert gemm.means["tensor_active_pct"] == pytest.approx(80.0)
    assert gemm.means["dram_throughput_pct"] == pytest.approx(22.0)
    assert len(summary) == 3 and "dram_throughput_pct" not in summary[2].means


def test_table_uses_the_benchmark_counter_names():
    listed = profile.parse_metric_list(METRICS_JSON)
    table = profile.render_table(profile.summarize(profile.parse_ncu_csv(DETAILS_CSV),
                                                   listed.metrics), listed.metrics)
    header, rule, simt, gemm, fill = table.splitlines()
    assert header.split()[:3] == ["kernel", "launches", "tensor_active_pct"]
    assert set(rule.replace(" ", "")) == {"-"}
    assert simt.startswith("tcbench::kernels::<unnamed>::gemm_simt_fp32_kernel ")
    assert gemm.split()[1:3] == ["2", "80.0"]
    assert fill.split()[-1] == "-"


def test_numbers_with_thousands_separators():
    assert profile._number("1,234.5") == 1234.5
    assert profile._number(" 87.25 ") == 87.25
    assert profile._number("n/a") is None


def test_csv_without_a_table_or_the_details_columns_is_an_input_error():
    with pytest.raises(profile.InputError, match="no CSV table"):
        profile.parse_ncu_csv("==PROF== No kernels were profiled.\n")
    raw = '"ID","Kernel Name","sm__throughput.avg.pct_of_peak_sustained_elapsed"\n"0","k","5"\n'
    with pytest.raises(profile.InputError, match="details page"):
        profile.parse_ncu_csv(raw)


def test_short_kernel_drops_void_and_arguments_keeps_templates():
    assert profile.short_kernel("void a::k<(int)3, b<c>>(const float *, int)") == \
        "a::k<(int)3, b<c>>"
    assert profile.short_kernel(CUBLAS, width=20) == CUBLAS[:17] + "..."


def test_ncu_command_keeps_clocks_and_passes_flags_through():
    metrics = profile.parse_metric_list(METRICS_JSON).metrics
    cmd = profile.ncu_command(Path("/x/ncu"), metrics, Path("/b/bench_tensor_util"),
                              ["--benchmark_filter=cublaslt/fp16"], launch_count=20,
                              kernel_regex="gemm")
    assert cmd[:2] == ["/x/ncu", "--metrics"]
    assert cmd[2].split(",") == [m.name for m in metrics]
    i = cmd.index("--clock-control")
    assert cmd[i + 1] == "none" and "--csv" in cmd
    assert cmd[cmd.index("--launch-count") + 1] == "20"
    assert cmd[cmd.index("--kernel-name") + 1] == "regex:gemm"
    assert cmd[-2:] == ["/b/bench_tensor_util", "--benchmark_filter=cublaslt/fp16"]


# --- end to end with fakes -------------------------------------------------------------------

def _script(path: Path, body: str) -> Path:
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(0o755)
    return path


@pytest.fixture
def fakes(tmp_path, monkeypatch):
    """A bin/ with a benchmark binary and tcbench_metrics, and a fake ncu that prints the sample
    (after recording its argv and TCBENCH_COUNTERS)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    binary = _script(bin_dir / "bench_tensor_util", "print('should not run')\n")
    metrics_mode = {"mode": "ok"}

    def metrics_tool(mode: str) -> None:
        body = {"ok": f"import sys\nsys.stdout.write({METRICS_JSON!r})\n",
                "nogpu": "import sys\nsys.stderr.write("
                         "'tcbench_metrics: no CUDA GPU is visible.\\n')"
                         "\nsys.exit(77)\n"}[mode]
        _script(bin_dir / "tcbench_metrics", body)
        metrics_mode["mode"] = mode

    metrics_tool("ok")

    def ncu(mode: str = "ok") -> Path:
        record = tmp_path / "ncu.argv"
        body = f"""import json, os, sys
json.dump({{"argv": sys.argv[1:], "counters": os.environ.get("TCBENCH_COUNTERS")}},
          open({str(record)!r}, "w"))
if {mode!r} == "perm":
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
          "Performance Counters on the target device 0.")
    sys.exit(1)
sys.stdout.write(open({str(fixture('ncu/gh100_details.csv'))!r}).read())
"""
        return _script(tmp_path / "ncu", body)

    monkeypatch.setenv("PATH", "/nonexistent")
    return binary, ncu, metrics_tool, tmp_path


def test_profile_end_to_end_prints_the_table(fakes, cli):
    binary, ncu, _, tmp_path = fakes
    code, out, err = cli("profile", binary, "--ncu", ncu(), "--", "--benchmark_filter=fp16")
    assert code == 0, err
    assert "GH100 (Hopper), 7 metrics" in out
    assert re.search(r"^sm90_xmma_gemm\S*\s+2\s+80\.0\s+80\.0\s+0\.0", out, re.M), out
    recorded = __import__("json").loads((tmp_path / "ncu.argv").read_text())
    assert recorded["counters"] == "off"  # ncu, not the binary's CUPTI session, owns counters
    assert recorded["argv"][-2:] == [str(binary), "--benchmark_filter=fp16"]
    assert "none" == recorded["argv"][recorded["argv"].index("--clock-control") + 1]


def test_profile_without_ncu_says_so_and_exits_3(fakes, cli, monkeypatch):
    binary, _, _, _ = fakes
    monkeypatch.setattr(profile, "find_ncu", lambda explicit=None: None)
    code, out, err = cli("profile", binary)
    assert code == profile.EXIT_NO_NCU == 3
    assert out == ""
    assert err.strip() == f"tcbench profile: {profile.NCU_MISSING}"
    assert err.count("\n") == 1


def test_profile_with_a_bad_ncu_path_exits_3(fakes, cli, tmp_path):
    binary, _, _, _ = fakes
    code, _, err = cli("profile", binary, "--ncu", tmp_path / "no-such-ncu")
    assert code == 3 and "not installed" in err


def test_profile_without_a_gpu_exits_77(fakes, cli):
    binary, ncu, metrics_tool, _ = fakes
    metrics_tool("nogpu")
    code, _, err = cli("profile", binary, "--ncu", ncu())
    assert code == 77
    assert "no CUDA GPU" in err


def test_profile_without_counter_permission_gives_the_fix(fakes, cli):
    binary, ncu, _, _ = fakes
    code, _, err = cli("profile", binary, "--ncu", ncu("perm"))
    assert code == 1
    assert "NVreg_RestrictProfilingToAdminUsers=0" in err


def test_profile_of_a_missing_binary_is_a_usage_error(fakes, cli, tmp_path):
    _, ncu, _, _ = fakes
    code, _, err = cli("profile", tmp_path / "bench_nothing", "--ncu", ncu())
    assert code == 2 and "is not a file" in err


def test_dash_dash_is_still_refused_for_compare(cli):
    code, _, err = cli("compare", "a", "b", "--", "x")
    assert code == 2 and "'run', 'fleet submit' and 'profile'" in err


# --- --nvtx-range: one training step's kernels as one range ---------------------------------

# Synthetic sample in the same layout (not a measurement): four launches of one step, with the
# weights in the units ncu may print (cycle, Kcycle; nsecond, usecond) and a thousands separator.
STEP_CSV = fixture("ncu/gh100_step_details.csv").read_text()


def test_aggregate_weights_active_metrics_by_cycles_and_elapsed_ones_by_duration():
    listed = profile.parse_metric_list(METRICS_JSON)
    whole = profile.aggregate(profile.parse_ncu_csv(STEP_CSV), listed.metrics)
    # active cycles 3000, 1000, 1,000 and 0.5 Kcycle: (80*3000 + 90*1000) / 5500 = 60
    assert whole[schema.TENSOR_ACTIVE_PCT] == pytest.approx(60.0)
    # durations 2000, 1000, 500 ns and 1.5 us: (70*2000 + 40*1000 + 80*500 + 20*1500) / 5000 = 50
    assert whole[schema.SM_THROUGHPUT_PCT] == pytest.approx(50.0)
    # (20*2000 + 85*1000 + 30*500 + 90*1500) / 5000 = 55
    assert whole[schema.DRAM_THROUGHPUT_PCT] == pytest.approx(55.0)
    # The plain per-kernel mean would say 85 for the GEMM and hide the element-wise kernels.
    gemm = profile.summarize(profile.parse_ncu_csv(STEP_CSV), listed.metrics)[0]
    assert gemm.launches == 2 and gemm.means[schema.TENSOR_ACTIVE_PCT] == pytest.approx(85.0)


def test_aggregate_leaves_out_launches_without_a_weight():
    listed = profile.parse_metric_list(METRICS_JSON)
    launches = profile.parse_ncu_csv(DETAILS_CSV)  # recorded without the weight metrics
    assert profile.aggregate(launches, listed.metrics) == {}


def test_nvtx_range_adds_the_weights_and_the_filter():
    metrics = profile.parse_metric_list(METRICS_JSON).metrics
    cmd = profile.ncu_command(Path("/x/ncu"), metrics, Path("/b/bench_tensor_util"), [],
                              nvtx_range="tcbench_step")
    names = cmd[2].split(",")
    assert names[:len(metrics)] == [m.name for m in metrics]
    assert names[len(metrics):] == ["sm__cycles_active.avg", "gpu__time_duration.sum"]
    assert cmd[cmd.index("--nvtx-include") + 1] == "tcbench_step/" and "--nvtx" in cmd
    assert cmd[cmd.index("--print-units") + 1] == "base"
    plain = profile.ncu_command(Path("/x/ncu"), metrics, Path("/b/bench_tensor_util"), [])
    assert "--nvtx" not in plain and plain[2].split(",") == [m.name for m in metrics]


@pytest.mark.parametrize("bad", ["", "a/b", "dom@range"])
def test_nvtx_range_names_are_checked(bad):
    with pytest.raises(profile.InputError, match="not a range name"):
        profile.nvtx_range_arg(bad)


def test_profile_nvtx_range_end_to_end_prints_the_weighted_row(fakes, cli, tmp_path):
    binary, _, _, _ = fakes
    record = tmp_path / "ncu.argv"
    ncu = _script(tmp_path / "ncu_step", f"""import json, sys
json.dump(sys.argv[1:], open({str(record)!r}, "w"))
sys.stdout.write(open({str(fixture('ncu/gh100_step_details.csv'))!r}).read())
""")
    code, out, err = cli("profile", binary, "--ncu", ncu, "--nvtx-range", "tcbench_step", "--",
                         "--benchmark_filter=train_step/fp16/hidden:4096/")
    assert code == 0, err
    last = [line for line in out.splitlines() if line.startswith("all in tcbench_step")]
    assert len(last) == 1, out
    assert last[0].split()[3:5] == ["4", "60.0"], last[0]  # 4 launches, tensor_active_pct 60
    assert "weighted by sm__cycles_active.avg" in out
    argv = __import__("json").loads(record.read_text())
    assert argv[argv.index("--nvtx-include") + 1] == "tcbench_step/"


def test_profile_with_a_bad_nvtx_range_is_a_usage_error(fakes, cli):
    binary, ncu, _, _ = fakes
    code, _, err = cli("profile", binary, "--ncu", ncu(), "--nvtx-range", "a/b")
    assert code == 2 and "not a range name" in err
