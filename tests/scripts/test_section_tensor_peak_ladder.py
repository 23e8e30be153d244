"""The instruction ladder of the report's tensor-peak part (sections/_ladder.py, drawn by
tensor_util.render_gpu) on synthetic fixtures: a datacenter-Blackwell-class GPU whose wgmma and
FP8 mma.sync rows skip (tensor_peak_ladder_b.json) and the Hopper-class GPU of tensor_util.json."""

from __future__ import annotations

from conftest import fixture
from tcbench_tools.report import Doc
from tcbench_tools.results import load
from tcbench_tools.sections import _ladder, tensor_util


def blackwell():
    return load(str(fixture("tensor_peak_ladder_b.json")))


def test_generations_are_the_variant_prefixes():
    assert _ladder.generation("mma_m16n8k16") == "mma"
    assert _ladder.generation("mma_mxf4nvf4_nvf4_m16n8k64") == "mma"
    assert _ladder.generation("wgmma_m64n256k32") == "wgmma"
    assert _ladder.generation("tcgen05_2cta_f16_m256n256k16") == "tcgen05"
    assert _ladder.generation("cublaslt") is None


def test_each_precision_gets_the_best_row_of_each_generation():
    rows = dict(_ladder.ladder(blackwell()))
    assert list(dict(_ladder.ladder(blackwell()))) == ["tf32", "fp16", "bf16", "int8", "fp8",
                                                       "fp4"]  # the precision table's order
    fp16 = rows["fp16"]
    assert (fp16["mma"].value, fp16["mma"].pct_model) == (1100.0, 55.0)
    assert fp16["wgmma"] == "skipped"  # wgmma exists only on Hopper
    # The pair beats one CTA: 2200 (tcgen05_2cta) over 2150 in the same column.
    assert (fp16["tcgen05"].value, fp16["tcgen05"].variant) == (2200.0,
                                                                "tcgen05_2cta_f16_m256n256k16")
    # FP4: .kind::f8f6f4 E2M1 (4300, the FP8 rate) loses to NVFP4 (8800); mma.sync's GeForce
    # kind skips here and no wgmma row takes FP4.
    fp4 = rows["fp4"]
    assert fp4["tcgen05"].variant == "tcgen05_2cta_mxf4nvf4_nvf4_m256n256k64"
    assert fp4["mma"] == "skipped" and "wgmma" not in fp4
    assert rows["fp8"]["mma"] == "skipped"  # emulated on 10.0
    assert rows["int8"]["tcgen05"].metric == "tops"


def test_step_up_reads_the_oldest_and_newest_generation_that_ran():
    assert _ladder.step_up(blackwell()) == ("tcgen05", "mma", 2.0)
    hopper = load(str(fixture("tensor_util.json")))
    newest, oldest, ratio = _ladder.step_up(hopper)
    assert (newest, oldest) == ("wgmma", "mma")
    assert round(ratio, 4) == round(950.0 / 640.0, 4)
    assert _ladder.step_up(blackwell(), "fp8") is None  # tcgen05 alone ran


def test_the_gpus_part_shows_the_ladder_even_without_tensor_util_rows(tmp_path):
    doc = Doc()
    rs = blackwell()
    assert not rs.find(tensor_util.TOPIC)  # bench_tensor_peak alone
    tensor_util.render_gpu(doc, rs, "Fixture B200", tmp_path)
    md = doc.markdown()
    assert "| precision | mma.sync | wgmma | tcgen05.mma |" in md
    assert ("| fp16 | 1100 tflops, 55% of model (mma_m16n8k16) | skipped | 2200 tflops, 98% of "
            "model (tcgen05_2cta_f16_m256n256k16) |") in md
    assert ("| fp4 | skipped | - | 8800 tflops, 98% of model "
            "(tcgen05_2cta_mxf4nvf4_nvf4_m256n256k64) |") in md
    assert "fp16: tcgen05.mma reached x2.00 the throughput of mma.sync on this GPU." in md
    # The peak table lists the rows that ran, the skipped ones stay out of it.
    assert "| tcgen05_f8f6f4_e2m1_m128n256k32/fp4 | 4300.0 tflops | 96.0 |" in md
    assert "wgmma_m64n256k16/fp16 |" not in md


def test_the_report_renders_the_section_for_a_tensor_peak_run_alone(cli, tmp_path):
    code, _, err = cli("report", fixture("tensor_peak_ladder_b.json"), "--out", tmp_path / "rep")
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    assert f"## {tensor_util.TITLE}" in md  # the section, for a tensor_peak run alone
    assert "tcgen05.mma reached x2.00 the throughput of mma.sync" in md


def test_the_gpu_checks_peak_table_gives_a_shared_skip_sentence_one_line(tmp_path):
    """The check's summary (gpu_check/summary.py): measured rows one per line, then one line per
    skip sentence with its first row and how many more (the Blackwell fixture's two wgmma rows
    share theirs)."""
    import shutil

    from tcbench_tools.gpu_check import summary

    (tmp_path / "results").mkdir()
    shutil.copy(fixture("tensor_peak_ladder_b.json"),
                tmp_path / "results" / "bench_tensor_peak.json")
    lines = summary.peak_table(tmp_path)
    skipped = [ln for ln in lines if "skipped:" in ln]
    assert len(skipped) == 3  # wgmma (2 rows), FP8 mma.sync, the GeForce kind
    wgmma = next(ln for ln in skipped if "wgmma exists only on Hopper" in ln)
    assert "tensor_peak/wgmma_m64n256k16/fp16 and 1 more" in wgmma
    assert sum("tcgen05_" in ln and "% at 1856 MHz" in ln for ln in lines) == 10
