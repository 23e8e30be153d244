"""The tensor_util report section on fixtures (synthetic numbers in Google Benchmark's JSON
shape): the scatter, the counter table, the instructions' ceiling and the summary line."""

from __future__ import annotations

import pytest

from conftest import fixture
from tcbench_tools.report import Doc
from tcbench_tools.results import load
from tcbench_tools.sections import modules, tensor_util


def render_all(doc, sets, labels, out_dir):
    """The section's comparison, then each GPU's own part (Per-GPU detail in the report)."""
    images = tensor_util.render(doc, sets, labels, out_dir)
    for rs, label in zip(sets, labels):
        images += tensor_util.render_gpu(doc, rs, label, out_dir)
    return images



@pytest.fixture
def h_gpu():
    return load(str(fixture("tensor_util.json")))


def test_section_is_found_by_topic():
    assert tensor_util in modules()
    assert tensor_util.TOPIC == "tensor_util"


def test_points_pair_tensor_active_with_pct_of_peak_and_leave_bandwidth_out(h_gpu):
    pts = {p.name: p for p in tensor_util.points(h_gpu)}
    assert pts["cublaslt/fp16"].pct_of_peak == 76.8
    assert pts["cublaslt/fp16"].tensor_active == 80.0
    assert pts["simt/fp32"].tensor_active == 0.0
    assert "cublaslt_small/fp16 256x256x256" in pts
    assert not any(name.startswith("memory/") for name in pts)  # gbps: % of DRAM, not compute
    assert not any(name.startswith("wmma/bf16") for name in pts)  # skipped


def test_ceiling_is_the_best_instruction_per_precision(h_gpu):
    ceiling = tensor_util.instruction_ceiling(h_gpu)
    assert ceiling["fp16"] == (950.0, "wgmma_m64n256k16")  # not mma.sync's 640
    assert ceiling["int8"] == (1850.0, "wgmma_m64n256k32")
    assert "bf16" not in ceiling


def test_summary_line_reads_cublaslt_against_the_ceiling(h_gpu):
    line = tensor_util.summary_line(h_gpu)
    # fp16 first: 760 / 950 = 80%; then tf32 380/330 = 115% (only mma.sync measured for TF32),
    # int8 1300/1850 = 70%, fp8 1400/1900 = 74%. bf16 has no ceiling in the fixture: left out.
    assert line == ("cuBLASLt reached 80% of what the instructions can do (fp16: 760 of 950 "
                    "TFLOP/s, wgmma_m64n256k16); tf32 115% (of mma_m16n8k8), int8 70% (of "
                    "wgmma_m64n256k32), fp8 74% (of wgmma_m64n256k32).")


def test_render_writes_the_png_tables_and_the_line(h_gpu, tmp_path):
    doc = Doc()
    images = render_all(doc, [h_gpu], ["Fixture GPU H"], tmp_path)
    assert [p.name for p in images] == ["section_tensor_util_fixture_gpu_h.png"]
    assert images[0].stat().st_size > 10_000
    md = doc.markdown()
    assert "| benchmark | throughput | pct_of_peak | tensor_active_pct |" in md
    assert "| memory/fp32 134217728 | 3000.0 gbps | 62.5 | 0.0 |" in md
    # A skipped row: no number, its reason in the note column (not in the throughput column).
    assert "| wmma/bf16 8192x8192x8192 | skipped | - | - |" in md
    assert "| skipped: fixture: a skipped configuration |" in md
    assert "| wgmma_m64n256k16/fp16 | 950.0 tflops | 98.5 | 90.8 | 96.0 | 1740 | 1980 |" in md
    assert "**cuBLASLt reached 80% of what the instructions can do" in md


def test_refused_counters_are_reported_once_and_throughput_still_shown(tmp_path):
    rs = load(str(fixture("tensor_util_nocounters.json")))
    doc = Doc()
    images = render_all(doc, [rs], ["Fixture GPU R"], tmp_path)
    md = doc.markdown()
    assert md.count("Counters were not collected:") == 1
    assert "NVreg_RestrictProfilingToAdminUsers=0. Throughput was still measured." in md
    assert images == []  # no tensor_active_pct: nothing to scatter
    assert "| cublaslt/fp16 8192x8192x8192 | 760.0 tflops | 70.0 |" in md


def test_report_command_includes_the_section(cli, tmp_path):
    code, out, err = cli("report", fixture("tensor_util.json"), "--out", tmp_path / "rep")
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    assert f"## {tensor_util.TITLE}" in md
    assert (tmp_path / "rep" / "section_tensor_util_fixture_gpu_h.png").exists()
