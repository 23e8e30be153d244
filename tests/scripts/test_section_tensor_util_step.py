"""The tensor_util report section's whole-step part on fixtures/tensor_util_step_{h,a}.json:
synthetic numbers (context tcbench_synthetic) in the shape bench_tensor_util's train_step rows
write, for a Hopper-class and an Ampere-class GPU: the rows, the stacked bars per GPU (whose
stack is the time-weighted mix the benchmark writes), the table and the synthetic label."""

from __future__ import annotations

import copy

import pytest

from conftest import fixture, load_doc
from tcbench_tools import schema
from tcbench_tools.report import Doc
from tcbench_tools.results import load, parse_doc
from tcbench_tools.sections import tensor_util


def render_all(doc, sets, labels, out_dir):
    """The section's comparison, then each GPU's own part (Per-GPU detail in the report)."""
    images = tensor_util.render(doc, sets, labels, out_dir)
    for rs, label in zip(sets, labels):
        images += tensor_util.render_gpu(doc, rs, label, out_dir)
    return images



@pytest.fixture
def h_gpu():
    return load(str(fixture("tensor_util_step_h.json")))


def test_step_rows_narrow_width_first_tensor_paths_before_ffma(h_gpu):
    rows = tensor_util.step_rows(h_gpu)
    assert [r.name for r in rows] == [
        "fp16 h64 t256", "bf16 h64 t256", "tf32 h64 t256", "fp32 h64 t256",
        "fp16 h4096 t4096", "bf16 h4096 t4096", "tf32 h4096 t4096", "fp32 h4096 t4096"]
    wide = rows[4]
    assert wide.tflops == 480.0 and wide.tensor_active == 58.0
    assert wide.time_pct == {"forward": 31.0, "backward": 42.0, "unscale": 6.0,
                             "optimizer": 20.0, "gaps": 1.0}
    assert wide.phase_pct["backward"] == 78.0


def test_the_stacked_contributions_are_the_benchmarks_mix(h_gpu):
    # 0.31 x 70 + 0.42 x 78 = 21.70 + 32.76 = 54.46 for the wide FP16 step, by hand.
    wide = tensor_util.step_rows(h_gpu)[4]
    parts = tensor_util.contributions(wide)
    assert parts["forward"] == pytest.approx(21.70)
    assert parts["backward"] == pytest.approx(32.76)
    assert parts["unscale"] == parts["optimizer"] == 0.0
    for row in tensor_util.step_rows(h_gpu):
        assert sum(tensor_util.contributions(row).values()) == pytest.approx(row.mix), row.name
        assert sum(row.time_pct.values()) == pytest.approx(100.0), row.name


def test_render_draws_one_stacked_bar_image_per_gpu_and_labels_synthetic_data(tmp_path):
    sets = [load(str(fixture(f"tensor_util_step_{k}.json"))) for k in ("h", "a")]
    doc = Doc()
    images = render_all(doc, sets, [s.label for s in sets], tmp_path)
    steps = [p.name for p in images if "_steps_" in p.name]
    assert steps == ["section_tensor_util_steps_fixture_gpu_h_training_step.png",
                     "section_tensor_util_steps_fixture_gpu_a_training_step.png"]
    assert all((tmp_path / name).stat().st_size > 20_000 for name in steps)
    md = doc.markdown()
    assert md.count("is synthetic test data (context tcbench_synthetic)") == 2
    assert ("| fp16 h4096 t4096 | 480.00 | 58.0 | 54.5 | 74.6 | 70.0 | 78.0 | 0.0 | 0.0 | 31.0 "
            "| 42.0 | 6.0 | 20.0 | 1.0 |") in md
    assert "| fp32 h4096 t4096 | 55.00 | 0.0 | 0.0 | 0.0 |" in md
    # The steps join the scatter under their own name, with their width.
    assert any(p.name == "train_step/fp16 h4096 t4096" for p in tensor_util.points(sets[0]))


def test_rows_without_counters_still_plot_their_time(h_gpu, tmp_path):
    rs = copy.deepcopy(h_gpu)
    for bench in rs.benchmarks.values():
        for row in bench.iterations:
            for ph in schema.STEP_PHASES:
                row.pop(schema.tensor_active_in(ph), None)
            for key in (schema.TENSOR_ACTIVE_PCT, schema.STEP_TENSOR_MIX_PCT,
                        schema.GEMM_PHASES_CEILING_PCT):
                row.pop(key, None)
    rows = tensor_util.step_rows(rs)
    assert len(rows) == 8 and rows[0].phase_pct == {} and rows[0].tensor_active is None
    doc = Doc()
    images = render_all(doc, [rs], ["no counters"], tmp_path)
    assert any("_steps_" in p.name for p in images)
    assert "| fp16 h4096 t4096 | 480.00 | - | - | - | - | - | - | - | 31.0 |" in doc.markdown()


def test_rows_without_their_time_shares_are_left_out(h_gpu):
    rs = copy.deepcopy(h_gpu)
    name = "tensor_util/train_step/fp16/hidden:4096/tokens:4096"
    for row in rs.benchmarks[name].iterations:
        row.pop(schema.time_share(schema.GAPS))
    assert "fp16 h4096 t4096" not in [r.name for r in tensor_util.step_rows(rs)]


def test_a_real_result_file_is_not_called_synthetic(tmp_path):
    doc = Doc()
    real = load_doc("tensor_util.json")
    del real["context"]["tcbench_synthetic"]  # as a run writes it: every fixture carries the key
    render_all(doc, [parse_doc(real)], ["Fixture GPU H"], tmp_path)
    assert "synthetic test data" not in doc.markdown()
    render_all(doc, [load(str(fixture("tensor_util.json")))], ["Fixture GPU H"], tmp_path)
    assert "synthetic test data" in doc.markdown()


def test_report_command_writes_the_step_images(cli, tmp_path):
    code, _, err = cli("report", fixture("tensor_util_step_h.json"),
                       fixture("tensor_util_step_a.json"), "--out", tmp_path / "rep")
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "one training step by phase" in md
    assert (tmp_path / "rep" / "section_tensor_util_steps_fixture_gpu_h_training_step.png").exists()
