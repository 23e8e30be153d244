"""tcbench report, FP8 section: speed-up per shape, variants, scaling cost, the per-layer
selection table, and a GPU without FP8 reported as skipped. fixtures/fp8_gpu_h.json holds
synthetic numbers in the shape bench_fp8 writes (Google Benchmark JSON, tcbench context)."""

from __future__ import annotations

import matplotlib.image as mpimg

from conftest import fixture
from tcbench_tools.results import load
from tcbench_tools.sections import fp8, modules


def section(md: str) -> str:
    """The section and the GPUs' own FP8 tables (in Per-GPU detail, issue 36)."""
    detail = md.split("\n## Per-GPU detail\n", 1)
    return (md.split("## " + fp8.TITLE + "\n", 1)[1].split("\n## ", 1)[0] +
            (detail[1] if len(detail) > 1 else ""))


def rows_after(text: str, heading: str) -> list[list[str]]:
    part = text.split(heading + "\n", 1)[1].split("\n### ", 1)[0]
    lines = [ln for ln in part.splitlines() if ln.startswith("| ")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:]]


def test_section_is_found_by_topic():
    assert fp8 in modules() and fp8.TOPIC == "fp8"


def test_report_renders_speedup_selection_and_skip(cli, tmp_path):
    out = tmp_path / "rep"
    code, _, err = cli("report", fixture("fp8_gpu_h.json"), fixture("gpu_a.json"), "--out", out)
    assert code == 0, err
    md = section((out / "report.md").read_text())
    gpu = "Fixture GPU H (fp8)"

    speed = {r[0] + "/" + r[1]: r for r in rows_after(md, f"### {gpu}: FP8 (E4M3 x E4M3 -> BF16, "
                                                          "fast accumulation) vs BF16")}
    # Squares first, then the layer shapes; BF16, FP16, FP8 TFLOP/s, % FP8 peak, x BF16, errors.
    assert speed["8192x8192x8192/square"][2:7] == ["700", "700", "1260", "63.0", "1.80"]
    assert speed["8192x8192x8192/square"][7:] == ["4.00e-04", "3.70e-02"]
    assert speed["12288x4096x4096/qkv"][6] == "1.69"
    assert list(speed)[0] == "1024x1024x1024/square"

    variants = rows_after(md, f"### {gpu}: FP8 variants at 8192x8192x8192")
    assert [r[:2] for r in variants] == [["e4m3xe4m3_bf16", "fast"], ["e4m3xe4m3_bf16", "split"],
                                         ["e4m3xe4m3_e4m3", "fast"], ["e4m3xe5m2_bf16", "fast"]]
    assert variants[1][4] == "1.00e-05"  # split accumulation: smaller GEMM error

    overhead = rows_after(md, f"### {gpu}: cost of quantizing A and B, as % of the FP8 GEMM")
    assert overhead == [["current", "8192x8192x8192", "11.8"], ["delayed", "8192x8192x8192", "6.5"]]
    kernels = rows_after(md, f"### {gpu}: scaling kernels (memory-bound)")
    assert kernels[1] == ["amax", "bf16", "16,777,216", "3000", "89.6"]

    sel = {r[0]: r for r in rows_after(md, f"### {gpu}: precision per layer, hidden 4096, "
                                           "4096 tokens")}
    assert list(sel) == ["qkv", "attn_out", "mlp_up", "mlp_down"]
    assert [sel[k][-1] for k in sel] == ["fp8/delayed", "fp8/delayed", "fp8/delayed", "bf16"]
    header = md.split(f"### {gpu}: precision per layer, hidden 4096, 4096 tokens\n", 1)[1]
    columns = [c.strip() for c in header.splitlines()[1].strip("|").split("|")]
    assert columns == ["layer", "bf16: time, error", "fp16: time, error",
                       "fp8/current: time, error", "fp8/delayed: time, error", "chosen"]
    assert sel["mlp_down"][4] == "240 us, 7.10e-02"  # fp8/delayed: fast but over the budget
    blocks = rows_after(md, f"### {gpu}: block of these layers, hidden 4096, 4096 tokens")
    assert [b[:4] for b in blocks] == [["all BF16", "1200", "1.00", "3.10e-03"],
                                       ["all FP8", "720", "1.67", "8.30e-02"],
                                       ["selected", "880", "1.36", "4.80e-02"]]
    assert "mlp_down=bf16" in blocks[2][4]

    # The GPU without FP8 says why, in one line.
    assert "**Fixture GPU A**: no FP8 result: FP8 needs compute capability 8.9" in md
    png = out / "section_fp8_speedup.png"
    assert png.is_file() and mpimg.imread(png).shape[0] > 100


def test_section_tolerates_results_without_most_of_its_rows(cli, tmp_path):
    # The generic fixtures hold one FP8 GEMM and none of its BF16 partners, recipes or layers:
    # that one row, no speed-up invented, no empty tables, no plot.
    out = tmp_path / "rep"
    code, _, err = cli("report", fixture("gpu_b.json"), "--out", out)
    assert code == 0, err
    md = section((out / "report.md").read_text())
    assert "| 4096x4096x4096 | square | - | - | 1200 | 60.0 | - | 2.00e-02 | - |" in md
    assert "recipe" not in md.split("See docs/concepts")[1] and "block of these layers" not in md
    assert not (out / "section_fp8_speedup.png").exists()
    assert load(fixture("fp8_gpu_h.json")).label == "Fixture GPU H (fp8)"
