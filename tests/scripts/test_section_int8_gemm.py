"""The int8_gemm report section: speed-up bars per INT8 variant with the accuracy beside them.

Fixtures int8_gemm_a.json / int8_gemm_b.json (fixtures/gen/recipes.py) hold fictional
numbers in bench_int8_gemm's names and counters: the MLP's small GEMMs are launch-bound, so at
8192 tokens INT8 is 5.15x FP32 on GPU A and 2.12x on B (not the peaks' ratio), about 1x at 32
tokens, and each variant's host accuracy is fixed.
"""

from __future__ import annotations

import matplotlib.image as mpimg
import pytest

from conftest import PNG_SIGNATURE, fixture, table_rows
from tcbench_tools.results import load
from tcbench_tools.sections import int8_gemm


@pytest.fixture
def report_md(cli, tmp_path):
    out = tmp_path / "rep"
    code, _, err = cli("report", fixture("int8_gemm_a.json"), fixture("int8_gemm_b.json"),
                       "--out", out)
    assert code == 0, err
    return out, (out / "report.md").read_text()


def test_deployment_bars_share_one_int8_speedup_and_keep_each_accuracy():
    tokens, bars = int8_gemm.deployment_bars(load(fixture("int8_gemm_a.json")))
    assert tokens == 8192  # the largest batch
    names = [b[0] for b in bars]
    assert names[:4] == ["FP32", "TF32", "FP16", "BF16"]
    assert names[4:] == ["INT8 ptq_bad_clip", "INT8 ptq_entropy", "INT8 ptq_max", "INT8 ptq_mse",
                         "INT8 ptq_p99.9", "INT8 ptq_p99.99", "INT8 qat"]
    by_name = {b[0]: b for b in bars}
    assert by_name["FP32"][1:] == (1.0, 94.0, 100.0)
    # The fixture's layer times (make_int8_fixture.py): 39.66 us in FP32, 7.763 us in FP16,
    # 7.704 us in INT8 over the three GEMMs.
    assert by_name["FP16"][1:] == (pytest.approx(39.657 / 7.763, rel=1e-3), 94.0, 99.9)
    assert by_name["TF32"][2:] == (None, None)  # TF32 is not evaluated on the host
    assert [b[1] for b in bars[4:]] == pytest.approx([39.657 / 7.704] * 7, rel=1e-3)
    assert by_name["INT8 ptq_max"][2:] == (92.0, 96.0)
    assert by_name["INT8 qat"][2:] == (94.5, 99.0)


def test_section_tables(report_md):
    _, md = report_md
    assert "## INT8 inference: speed-up and accuracy per calibrator" in md
    rows = table_rows(md, "### Deployment: speed-up vs FP32 and accuracy")
    assert ["Fixture GPU A", "8192", "INT8 ptq_bad_clip", "5.15", "91.00", "94.00"] in rows
    assert ["Fixture GPU B", "8192", "INT8 ptq_p99.99", "2.12", "94.50", "99.00"] in rows
    mlp = table_rows(md, "### MLP layers per batch size")
    # 32 tokens: every path at its launch floor, INT8 no faster than FP32.
    assert ["Fixture GPU B", "32", "int8", "6.741", "0.9346", "0.9065"] in mlp
    gemms = table_rows(md, "### INT8 GEMMs")
    assert ["Fixture GPU A", "imma", "1024x1024x1024", "134.4", "21", "0.6774", "-"] in gemms
    assert ["Fixture GPU A", "cublaslt_requant", "1024x1024x1024", "332.8", "52", "-",
            "-"] in gemms
    quant = table_rows(md, "### Quantization kernels (DRAM bandwidth)")
    assert ["Fixture GPU A", "quantize_per_tensor", "67108864", "1600", "80"] in quant
    # The non-TN/size rule violation is a skip with its sentence, not a number.
    skipped = md.split("## Skipped and failed")[1]
    assert "INT8 needs m and k to be multiples of 4" in skipped


def test_section_png(report_md):
    out, md = report_md
    png = out / "section_int8_gemm_speedup_accuracy.png"
    assert png.read_bytes()[:8] == PNG_SIGNATURE
    image = mpimg.imread(png)
    assert image.shape[0] > 300 and image.shape[1] > 1000  # two GPUs side by side
    assert f"]({png.name})" in md


def test_results_without_mlp_rows_render_tables_only(cli, tmp_path):
    # gpu_a.json has int8_gemm GEMMs but no deployment rows: no plot, no crash.
    out = tmp_path / "rep"
    code, _, err = cli("report", fixture("gpu_a.json"), "--out", out)
    assert code == 0, err
    md = (out / "report.md").read_text()
    assert "## INT8 inference" in md
    assert "### Deployment" not in md
    assert not list(out.glob("section_int8_gemm_*.png"))
