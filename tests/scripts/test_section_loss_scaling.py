"""The loss_scaling report section on a fixture (fixtures/loss_scaling.json): the shape
bench_loss_scaling writes, with the host run's numbers (docs/concepts/loss-scaling.md) as values."""

from __future__ import annotations

import copy

import matplotlib.image as mpimg

from conftest import fixture, load_doc, write
from tcbench_tools.results import load
from tcbench_tools.sections import loss_scaling


def table_rows(markdown: str, heading: str) -> list[list[str]]:
    section = markdown.split(heading + "\n", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [[c.strip() for c in r.strip("|").split("|")] for r in rows[2:]]


def test_landing_points_add_underflow_and_overflow():
    pts = loss_scaling.landing_points(load(fixture("loss_scaling.json")))
    assert set(pts) == {("lognormal", "fp16"), ("lognormal", "bf16"), ("mlp", "fp16"),
                        ("mlp", "bf16")}
    lognormal = {k: (lost, under) for k, lost, under in pts[("lognormal", "fp16")]}
    assert [k for k, _, _ in pts[("lognormal", "fp16")]] == [0, 4, 8, 12, 16, 20, 24]
    assert lognormal[0] == (8.84, 8.84)
    assert lognormal[24] == (1.985, 0.0)  # nothing underflows at 2^24; 1.985 % overflow
    assert all(lost == 0.0 for _, lost, _ in pts[("mlp", "bf16")])


def test_curve_points_map_to_steps():
    runs = loss_scaling.training_runs(load(fixture("loss_scaling.json")))
    assert set(runs) == set(loss_scaling.MODES)
    curve = runs["fp32"]["curve"]
    assert len(curve) == 16
    # point i sits at step round(i * 399 / 15): 0, 27, 53, ..., 399
    assert [s for s, _ in curve[:3]] == [0, 27, 53] and curve[-1][0] == 399
    assert curve[-1][1] == 9.54209e-10
    assert runs["fp16_dynamic"]["scale"][0] == (0, 65536.0)


def test_report_draws_both_plots_and_the_tables(cli, tmp_path):
    out = tmp_path / "rep"
    code, _, err = cli("report", fixture("loss_scaling.json"), "--out", out)
    assert code == 0, err
    md = (out / "report.md").read_text()
    assert f"## {loss_scaling.TITLE}" in md
    rows = {r[0]: r for r in table_rows(md, "### Training with and without loss scaling")}
    # mode, GPU, final loss, x FP32, lost %, skipped, ms/step: a row per mode and GPU
    assert rows["fp16_noscale"][1:] == ["Fixture GPU A", "4.18e-07", "437.79", "45.4", "0",
                                        "0.180"]
    assert rows["fp16_dynamic"][3] == "1.00" and rows["fp16_dynamic"][4] == "1.5"
    assert rows["bf16_noscale"][4] == "0.0"
    cost = table_rows(md, "### Cost of the fused check-and-unscale")
    assert cost[-1] == ["1,000,000,000", "Fixture GPU A", "1660", "83.0", "4.10"]
    pngs = sorted(p.name for p in out.glob("section_loss_scaling_*.png"))
    assert pngs == ["section_loss_scaling_curves.png", "section_loss_scaling_landing.png"]
    for name in pngs:
        img = mpimg.imread(out / name)
        assert img.shape[0] > 300 and img.shape[1] > 500
        assert img[..., :3].std() > 0.05  # something was drawn


def test_a_mode_missing_on_one_gpu_shows_as_a_dash(cli, tmp_path):
    doc = load_doc("loss_scaling.json")
    other = copy.deepcopy(doc)
    other["context"]["gpu_name"] = "Fixture GPU B"
    other["benchmarks"] = [b for b in other["benchmarks"] if "train_bf16" not in b["name"]]
    out = tmp_path / "rep"
    code, _, err = cli("report", write(tmp_path, "a.json", doc), write(tmp_path, "b.json", other),
                       "--out", out)
    assert code == 0, err
    rows = {(r[0], r[1]): r[2:] for r in table_rows((out / "report.md").read_text(),
                                                    "### Training with and without loss scaling")}
    assert rows[("bf16_noscale", "Fixture GPU B")] == ["-"] * 5
    assert rows[("bf16_noscale", "Fixture GPU A")][0] != "-"
    # One figure of every GPU's curves, a panel per mode (issue 36: not one figure per GPU).
    assert [p.name for p in out.glob("section_loss_scaling_curves*.png")] == [
        "section_loss_scaling_curves.png"]


def test_no_section_without_the_topic(cli, tmp_path):
    doc = load_doc("gpu_a.json")
    doc["benchmarks"] = [b for b in doc["benchmarks"] if not b["name"].startswith("loss_scaling/")]
    path = write(tmp_path, "no_topic.json", doc)
    assert loss_scaling.landing_points(load(path)) == {}
    assert loss_scaling.training_runs(load(path)) == {}
    out = tmp_path / "rep"
    code, _, err = cli("report", path, "--out", out)
    assert code == 0, err
    assert loss_scaling.TITLE not in (out / "report.md").read_text()
    assert not list(out.glob("section_loss_scaling_*.png"))


def test_unscale_rows_of_another_fixture_are_read_too(cli, tmp_path):
    # gpu_a.json holds one unscale size, the smallest bench_loss_scaling lists.
    out = tmp_path / "rep"
    code, _, err = cli("report", fixture("gpu_a.json"), "--out", out)
    assert code == 0, err
    cost = table_rows((out / "report.md").read_text(), "### Cost of the fused check-and-unscale")
    assert cost[0][:2] == ["10,000,000", "Fixture GPU A"]
