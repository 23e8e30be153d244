"""tcbench report, the FP8 section's accumulator part (issue 46): the bits per GPU in one table
and the error-vs-K curves in one plot, from the generated accumulator fixtures (synthetic)."""

from __future__ import annotations

import matplotlib.image as mpimg

from conftest import fixture
from tcbench_tools.results import load
from tcbench_tools.sections import _fp8_accumulator as acc


def table(md: str, heading: str) -> list[list[str]]:
    part = md.split(heading + "\n", 1)[1].split("\n### ", 1)[0]
    lines = [ln for ln in part.splitlines() if ln.startswith("| ")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]


def test_bits_table_and_error_plot(cli, tmp_path):
    out = tmp_path / "rep"
    code, _, err = cli("report", fixture("fp8_accum_h.json"), fixture("fp8_accum_bw.json"),
                       "--out", out)
    assert code == 0, err
    md = (out / "report.md").read_text()
    rows = table(md, "### Accumulator bits per GPU (measured)")
    assert rows[0] == ["GPU", "cuBLASLt fast", "cuBLASLt split", "mma.sync FP8", "wgmma FP8",
                       "tcgen05 FP8", "FP16 control", "BF16 control"]
    assert rows[2] == ["Fixture GPU H (accumulator)", "13 truncated, 32/step",
                       "13 truncated, 32/step, FP32 every 128", "skipped",
                       "13 truncated, 32/step", "skipped", ">= 23 nearest even",
                       ">= 23 nearest even"]
    assert rows[3][5] == "25 truncated, 64/step"
    png = out / "section_fp8_accumulator_error.png"
    assert f"]({png.name})" in md
    html = (out / "report.html").read_text()
    assert 'alt="FP8 accumulation error against FP64 as K grows' in html
    height, width = mpimg.imread(png).shape[:2]
    assert width > 1.5 * height  # two panels side by side and the legend


def test_curves_read_errors_and_the_rounding():
    curves = acc._curves(load(fixture("fp8_accum_h.json")))
    assert curves["cuBLASLt fast accumulation"][-1] == (16384, 0.045)
    assert curves["wgmma kernel, promoted every 128"][0] == (256, 8e-5)
    assert [k for k, _ in curves["E4M3 rounding (split vs FP32 originals)"]] == [
        256, 1024, 4096, 16384]
    assert not any("promoted every 64" in s for s in curves)  # the plot draws N_C = 128 only


def test_no_accumulator_rows_no_part(cli, tmp_path):
    out = tmp_path / "rep"
    code, _, err = cli("report", fixture("fp8_gpu_h.json"), "--out", out)
    assert code == 0, err
    assert "Accumulator bits" not in (out / "report.md").read_text()
    assert not (out / "section_fp8_accumulator_error.png").exists()


def test_the_overview_draws_no_throughput_sweep_of_accumulator_rows():
    """Their own kernels' TFLOP/s is an instruction-level comparison, not a GEMM record: the
    section plots them against K as errors, and the overview's sweeps leave every one out."""
    from tcbench_tools.sections.overview import find_sweeps

    sets = [load(fixture("fp8_accum_h.json")), load(fixture("fp8_accum_bw.json"))]
    assert any(acc.owns(b) and b.throughput_metric() for rs in sets
               for b in rs.benchmarks.values())  # the rows carry a rate a sweep could draw
    sweeps = find_sweeps(sets, ["H", "BW"])
    assert not [s for s in sweeps if s.variant.startswith(("accum_bits_", "accum_error_"))]
