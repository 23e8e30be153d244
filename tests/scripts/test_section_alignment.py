"""The alignment report section on bench_alignment-shaped fixture data (synthetic numbers)."""

from __future__ import annotations

import json

import matplotlib.image as mpimg
import pytest

from conftest import FIXTURES, fixture, main, table_rows
from tcbench_tools.results import load
from tcbench_tools.sections import alignment


@pytest.fixture(scope="module")
def full_runs():
    """Full sweeps for two fictional GPUs (H: 132 SMs with FP8; A: 108 SMs without)."""
    return [FIXTURES / "alignment_h.json", FIXTURES / "alignment_a.json"]


def _rows_by_name(path) -> dict:
    doc = json.loads(path.read_text())
    return {r["name"].removesuffix("/manual_time"): r for r in doc["benchmarks"]}


@pytest.fixture(scope="module")
def report(full_runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    assert main(["report", str(full_runs[0]), str(full_runs[1]), "--out", str(out)]) == 0
    return out


def test_every_precision_gets_an_n_sweep_plot_with_the_model(report):
    names = sorted(p.name for p in report.glob("section_alignment_*.png"))
    for prec in ("tf32", "fp16", "bf16", "int8", "fp8"):
        assert f"section_alignment_fixture_gpu_h_n_sweep_{prec}.png" in names
    # GPU A has no FP8: no FP8 sweep plot, and its skips are reported, not plotted as zeros.
    assert "section_alignment_fixture_gpu_a_n_sweep_fp8.png" not in names
    for gpu in ("h", "a"):
        assert f"section_alignment_fixture_gpu_{gpu}_pairs.png" in names  # its detail
    # The comparison: one plot each for every GPU (issue 36: not one per GPU).
    for plot in ("pairs", "m_k", "model"):
        assert f"section_alignment_{plot}.png" in names
    for png in report.glob("section_alignment_*.png"):
        img = mpimg.imread(png)
        assert img.shape[0] > 300 and img.shape[1] > 600, png.name
        assert img.std() > 0.05, png.name  # not a blank canvas


def test_pairs_table_matches_the_fixture(report, full_runs):
    md = (report / "report.md").read_text()
    assert "## Alignment: 32 vs 33 and every dimension around it" in md
    rows = table_rows(md, "### Pairs")
    h = _rows_by_name(full_runs[0])
    fp16 = next(r for r in rows if r[:3] == ["Fixture GPU H", "fp16", "32 / 33"])
    a, b = (h[f"alignment/cublaslt/fp16/m:4096/n:{n}/k:4096/layout:nn"]["tflops"] for n in (32, 33))
    assert fp16[3] == f"{a:.4g}" and fp16[4] == f"{b:.4g}"
    assert fp16[5] == f"{b / a:.3g}"
    model = (h["alignment/cublaslt/fp16/m:4096/n:33/k:4096/layout:nn"]["model_tflops"] /
             h["alignment/cublaslt/fp16/m:4096/n:32/k:4096/layout:nn"]["model_tflops"])
    assert fp16[7] == f"{model:.3g}"
    # FP8 at N = 33 is refused by cuBLASLt's rule: the row says so instead of a number.
    fp8 = next(r for r in rows if r[:3] == ["Fixture GPU H", "fp8", "32 / 33"])
    assert fp8[4] == "-" and fp8[-1] == "skipped"
    # Every precision and pair on GPU H, four pairs on the INT8 TOP/s scale too.
    assert sum(1 for r in rows if r[0] == "Fixture GPU H") == 5 * 4


def test_padding_table_gives_a_verdict(report, full_runs):
    rows = table_rows((report / "report.md").read_text(), "### Padding N = 33")
    h = _rows_by_name(full_runs[0])
    row = next(r for r in rows if r[:3] == ["Fixture GPU H", "fp16", "40"])
    bench = h["alignment/pad_to_40/fp16/m:4096/n:33/k:4096/layout:nn"]
    wins = bench["time_median_us"] < bench["unpadded_us"]
    assert row[-1] == ("padding wins" if wins else "unaligned wins")
    assert row[5] == f"{bench['copy_us']:.4g}"
    # FP8 cannot run N = 33 at all, so padding is the only way and wins by default.
    fp8 = next(r for r in rows if r[:3] == ["Fixture GPU H", "fp8", "48"])
    assert fp8[-1] == "padding wins (N = 33 cannot run)"
    # GPU A has no FP8: the row carries the skip reason.
    fp8a = next(r for r in rows if r[:3] == ["Fixture GPU A", "fp8", "48"])
    assert fp8a[-1].startswith("skipped: this GPU has no FP8")


def test_quick_mode_file_renders_pairs_and_padding_without_sweeps(cli, tmp_path):
    out = tmp_path / "q"
    code, _, err = cli("report", fixture("alignment_quick.json"), "--out", out)
    assert code == 0, err
    names = {p.name for p in out.glob("section_alignment_*.png")}
    assert names == {"section_alignment_fixture_gpu_h_pairs.png", "section_alignment_pairs.png",
                     "section_alignment_model.png"}
    md = (out / "report.md").read_text()
    assert "### Padding N = 33" in md and "### Pairs" in md


def test_older_fixtures_with_a_k_sweep_still_render(cli, tmp_path):
    # gpu_a.json holds alignment/cublaslt/fp16 at k = 4095, 4096, 4097 without the model
    # counters: the M/K plot is drawn from the measured points alone.
    out = tmp_path / "old"
    code, _, err = cli("report", fixture("gpu_a.json"), "--out", out)
    assert code == 0, err
    assert (out / "section_alignment_m_k.png").exists()


def test_layout_nt_is_its_own_series(full_runs):
    """cuBLASLt runs fp16 as layout:nn and layout:nt (B N-contiguous): one variant name, two
    series, never merged (the fixture's NT case pays the unaligned-B penalty at N = 33)."""
    rows = _rows_by_name(full_runs[0])
    points = alignment._points(load(full_runs[0]))
    for layout, series in (("nn", alignment.MAIN), ("nt", alignment.B_N_CONTIGUOUS)):
        name = f"alignment/cublaslt/fp16/m:4096/n:33/k:4096/layout:{layout}"
        assert points[(series, "fp16", "n")][33].value == rows[name]["tflops"]
    assert points[(alignment.MAIN, "fp16", "n")][33].value != \
        points[(alignment.B_N_CONTIGUOUS, "fp16", "n")][33].value
    # int8 and fp8 run TN only: one cuBLASLt series each.
    assert (alignment.MAIN, "int8", "n") in points
    assert not any(s == alignment.B_N_CONTIGUOUS and p in ("int8", "fp8") for s, p, _ in points)


def test_the_model_is_scored_against_every_measured_row(report, full_runs):
    """predicted_tflops against the measurement: a plot per GPU and the median model_ratio for
    aligned and misaligned rows (the fixture's made-up model: 0.9 of its roofline, 0.5 off the
    16-byte grid; its made-up measurement: 0.85 of the roofline, 10 % lost off the grid)."""
    img = mpimg.imread(report / "section_alignment_model.png")  # both GPUs in one scatter
    assert img.shape[0] > 300 and img.std() > 0.05
    md = (report / "report.md").read_text()
    assert "predicted vs measured" in md
    rows = table_rows(md, "### How the model did on this GPU")
    h = next(r for r in rows if r[0] == "Fixture GPU H")
    runs = json.loads(full_runs[0].read_text())["benchmarks"]
    scored = [r for r in runs if "predicted_tflops" in r]
    assert int(h[1]) == len(scored)
    # Aligned rows: 0.9 / 0.85 wherever neither the fictional penalty nor the model's applies.
    assert abs(float(h[2]) - 0.9 / 0.85) < 0.02
    assert float(h[3]) < float(h[2])
