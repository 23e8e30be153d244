"""tcbench report, block-scaling section, on fixtures/block_scaling_{h,b}.json: synthetic numbers
(context tcbench_synthetic) in the shape bench_block_scaling writes, for a Hopper-class and a
Blackwell-class fictional GPU (fixtures/gen/recipes.py)."""

from __future__ import annotations

import matplotlib.image as mpimg

from conftest import fixture
from tcbench_tools.sections import block_scaling, modules


def section(md: str) -> str:
    """The section and the GPUs' own block-scaling tables (in Per-GPU detail, issue 36)."""
    return (md.split("## " + block_scaling.TITLE + "\n", 1)[1].split("\n## ", 1)[0] +
            md.split("\n## Per-GPU detail\n", 1)[1])


def rows_after(text: str, heading: str) -> list[list[str]]:
    part = text.split(heading + "\n", 1)[1].split("\n### ", 1)[0]
    lines = [ln for ln in part.splitlines() if ln.startswith("| ")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:]]


def test_section_is_found_by_topic():
    assert block_scaling in modules() and block_scaling.TOPIC == "block_scaling"


def test_pareto_front_keeps_only_unbeaten_points():
    pts = [(1.0, 0.04), (1.03, 0.031), (0.5625, 0.15), (2.0, 0.003), (1.03, 0.04), (0.53, 0.3)]
    assert block_scaling.pareto(pts) == [5, 2, 0, 1, 3]  # (1.03, 0.04) is beaten by (1.0, 0.04)


def test_report_tables_skips_and_plots(cli, tmp_path):
    out = tmp_path / "rep"
    code, _, err = cli("report", fixture("block_scaling_h.json"), fixture("block_scaling_b.json"),
                       "--out", out)
    assert code == 0, err
    md = section((out / "report.md").read_text())
    assert md.count("synthetic test data") == 2

    hopper = {r[0]: r for r in rows_after(md, "### Fixture GPU H (block scaling): granularities "
                                              "at the largest measured size")}
    assert set(hopper) == {"BF16", "FP8 per tensor", "FP8 row-wise", "FP8 1x128",
                           "FP8 128x128 / 1x128"}
    assert hopper["FP8 1x128"][1:] == ["8192x8192x8192", "1100", "50.0", "1.57", "0.85",
                                       "1.0312", "4.00e-04", "3.20e-02"]
    assert "MXFP8: Scale mode mx (...) is documented by cuBLAS for compute capability 10.0" in md
    assert "MXFP4: Scale mode mx (CUDA_R_4F_E2M1" in md and "MXFP6: cuBLASLt has no FP6" in md

    blackwell = {r[0]: r for r in rows_after(md, "### Fixture GPU BW (block scaling): "
                                                 "granularities at the largest measured size")}
    assert set(blackwell) == {"BF16", "FP8 per tensor", "MXFP8", "NVFP4"}
    assert blackwell["NVFP4"][2:6] == ["6000", "50.0", "3.33", "1.76"]

    # The quantize kernels: GB/s and their time beside the same granularity's GEMM. 8192^2 FP32
    # read + codes and scales written is 5.03 bytes per element: 120.6 us at 2800 GB/s, and the
    # 1x128 GEMM's 2 * 8192^3 FLOP at 1100 TFLOP/s take 999.6 us: 12.1 %.
    quant = {(r[0], r[1]): r for r in rows_after(md, "### Fixture GPU H (block scaling): making "
                                                     "the scales (quantize kernels)")}
    assert quant[("FP8 1x128", "8192x8192")][2:] == ["120.6", "2800", "70.0", "12.1"]
    assert quant[("MXFP8", "8192x8192")][5] == "-"  # no MX GEMM on Hopper to compare with
    assert [k[0] for k in quant][:4] == ["FP8 1x128", "FP8 128x128", "MXFP8", "NVFP4"]
    # The quantize rows never enter the GEMM table.
    assert not any(k.startswith("quantize") for k in hopper)

    for png in ("section_block_scaling_accuracy_vs_bytes.png", "section_block_scaling_speed.png"):
        img = mpimg.imread(out / png)
        assert img.shape[0] > 300 and img.shape[1] > 600
        assert f"({png})" in md
