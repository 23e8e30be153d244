"""tcbench report: tables with the right numbers, valid PNGs, a self-contained HTML page."""

from __future__ import annotations

import base64
import re

import matplotlib.image as mpimg
import pytest
from conftest import PNG_SIGNATURE, fixture, table_rows

from tcbench_tools.sections import overview
from tcbench_tools.results import load

@pytest.fixture
def three_gpus(cli, tmp_path):
    out = tmp_path / "rep"
    code, stdout, err = cli("report", fixture("gpu_a.json"), fixture("gpu_b.json"),
                            fixture("gpu_c.json"), "--out", out)
    assert code == 0, err
    return out, stdout, err


def test_topic_table_has_best_result_pct_and_speedup_per_gpu(three_gpus):
    out, stdout, err = three_gpus
    assert err == ""
    md = (out / "report.md").read_text()
    rows = {r[0]: r for r in table_rows(md, "## Topic: fp16_vs_fp32")}
    # precision, unit, then (value, % peak, x FP32) for GPU A, B, C. Best of the 1024..4096
    # sweep = the 4096 point: 80 % of each card's fixture peak.
    assert rows["fp32"] == ["fp32", "TFLOP/s", "16", "80.0", "1.00", "48", "80.0", "1.00",
                            "6.4", "80.0", "1.00"]
    assert rows["fp16"] == ["fp16", "TFLOP/s", "256", "80.0", "16.00", "800", "80.0", "16.67",
                            "51.2", "80.0", "8.00"]
    # GPU C lacks tf32 (its peak_tf32 is 0): "n/a", not a zero and not a missing result.
    assert rows["tf32"][8:] == ["n/a", "n/a", "n/a"]
    int8 = table_rows(md, "## Topic: int8_gemm")[0]
    assert int8[:5] == ["int8", "TOP/s", "448", "70.0", "-"]  # no FP32 in that topic
    fp8 = table_rows(md, "## Topic: fp8")[0]
    assert fp8[2:5] == ["n/a", "n/a", "n/a"] and fp8[5:7] == ["1200", "60.0"]


def test_peak_vs_achieved_table(three_gpus):
    out, _, _ = three_gpus
    md = (out / "report.md").read_text()
    rows = {r[0]: r for r in table_rows(md, "## Peak vs best achieved")}
    assert rows["fp16"][1:] == ["320", "256", "80.0", "1000", "800", "80.0", "64", "51.2", "80.0"]
    # peak_<p>_max_clock and peak_<p>_source are not precisions
    assert not any(k.endswith(("max_clock", "source")) for k in rows)
    assert rows["fp8"][1:4] == ["n/a", "n/a", "n/a"]  # GPU A has no FP8 (peak_fp8 = 0)
    assert "## GPUs" in md and "Fixture GPU B" in md and "13.1" in md


def test_pngs_exist_and_are_valid_images(three_gpus):
    out, _, _ = three_gpus
    pngs = sorted(out.glob("*.png"))
    names = [p.name for p in pngs]
    assert "peak_vs_achieved.png" in names
    # Square sweeps (m=n=k) of the four cuBLASLt precisions and the k sweep of alignment.
    assert sum("fp16_vs_fp32_cublaslt" in n for n in names) == 4
    assert sum("alignment_cublaslt_fp16_k" in n for n in names) == 1
    md = (out / "report.md").read_text()
    for png in pngs:
        assert png.read_bytes()[:8] == PNG_SIGNATURE
        image = mpimg.imread(png)
        assert image.shape[0] > 100 and image.shape[1] > 100
        assert f"]({png.name})" in md


def test_html_is_self_contained(three_gpus):
    out, _, _ = three_gpus
    html = (out / "report.html").read_text()
    pngs = sorted(out.glob("*.png"))
    uris = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(uris) == len(pngs)
    assert {base64.b64decode(u) for u in uris} == {p.read_bytes() for p in pngs}
    assert ".png\"" not in html  # no reference to a file beside it
    assert "<td class=\"num\">16.67</td>" in html
    assert "<strong>Fixture GPU A</strong>" in html


def test_skips_and_failures_are_listed(three_gpus):
    out, _, _ = three_gpus
    md = (out / "report.md").read_text()
    section = md.split("## Skipped and failed")[1]
    assert "skipped (3): tf32 is not supported on compute capability 7.5" in section
    assert "FAILED `tensor_util/cupti/fp16/m:4096/n:4096/k:4096/layout:nn`" in section


def test_sweep_detection():
    sets = [load(fixture("gpu_a.json")), load(fixture("gpu_c.json"))]
    sweeps = overview.find_sweeps(sets, ["A", "C"])
    by_title = {s.title: s for s in sweeps}
    square = by_title["fp16_vs_fp32/cublaslt/fp16 (layout:nn): TFLOP/s vs m=n=k"]
    assert square.lines["A"] == [(1024, 160.0), (2048, 224.0), (4096, 256.0)]
    assert [x for x, _ in square.lines["C"]] == [1024, 2048, 4096]
    align = by_title["alignment/cublaslt/fp16 (m:4096, n:4096, layout:nn): TFLOP/s vs k"]
    assert [x for x, _ in align.lines["A"]] == [4095, 4096, 4097]
    # tf32 exists only on A (skipped on C): one line.
    assert set(by_title["fp16_vs_fp32/cublaslt/tf32 (layout:nn): TFLOP/s vs m=n=k"].lines) == {"A"}
    # Single-size benchmarks are not sweeps.
    assert not any(s.topic == "int8_gemm" for s in sweeps)


def test_plain_file_is_labelled_by_file_name_with_a_warning(cli, tmp_path):
    code, _, err = cli("report", fixture("plain.json"), fixture("gpu_b.json"), "--out", tmp_path)
    assert code == 0
    assert "plain.json has no tcbench context" in err
    md = (tmp_path / "report.md").read_text()
    assert "| plain |" in md


def test_same_gpu_twice_gets_distinct_labels(cli, tmp_path):
    code, _, _ = cli("report", fixture("gpu_a.json"), fixture("gpu_a_single.json"),
                     "--out", tmp_path)
    assert code == 0
    md = (tmp_path / "report.md").read_text()
    assert "Fixture GPU A (gpu_a.json)" in md and "Fixture GPU A (gpu_a_single.json)" in md


def test_rewriting_a_report_folder_drops_stale_plots(cli, tmp_path):
    (tmp_path / "sweep_99_old.png").write_bytes(b"old")
    code, _, _ = cli("report", fixture("gpu_a.json"), "--out", tmp_path)
    assert code == 0
    assert not (tmp_path / "sweep_99_old.png").exists()
    assert (tmp_path / "peak_vs_achieved.png").is_file()
