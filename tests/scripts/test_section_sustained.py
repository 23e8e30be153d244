"""tcbench report, burst and sustained (issue 47): per GPU burst vs sustained with clocks and the
ratio, the sustained runs' clock and power over time, across GPUs the sustained rate beside the
datasheet and the bound at the sustained clock, and the published rates. The fixtures
(sustained_h, sustained_a) are generated and synthetic."""

from __future__ import annotations

import pytest

from conftest import fixture
from tcbench_tools.errors import InputError
from tcbench_tools.results import load
from tcbench_tools.sections import modules, sustained


def table(md: str, heading: str) -> dict[str, list[str]]:
    part = md.split(heading + "\n", 1)[1].split("\n### ", 1)[0]
    lines = [ln for ln in part.splitlines() if ln.startswith("| ")][2:]
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]
    return {" ".join(r[:2]): r for r in rows}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from tcbench_tools.cli import main

    out = tmp_path_factory.mktemp("sustained") / "rep"
    assert main(["report", str(fixture("sustained_h.json")), str(fixture("sustained_a.json")),
                 "--out", str(out)]) == 0
    return out


def test_section_is_found_by_topic():
    assert sustained in modules() and sustained.TOPIC == "sustained"


def test_across_gpus_splits_the_gap_into_clock_and_kernel(report):
    md = (report / "report.md").read_text()
    rows = table(md, "### Sustained cuBLASLt GEMMs across GPUs (measured)")
    # H: 710 at 1640 MHz; 132 SMs x 1640 MHz x 4096 = 886.7; datasheet 1000.
    assert rows["bf16 Fixture GPU H (sustained)"][2:9] == [
        "710 TFLOP/s", "1640", "1000", "71.0", "886.7", "113.3", "176.7"]
    # A's cap never binds: 108 SMs x 1410 MHz x 2048 = 311.9, the clock loses 8.1 of 320.
    assert rows["fp16 Fixture GPU A (sustained)"][6:8] == ["311.9", "8.131"]
    assert rows["int8 Fixture GPU H (sustained)"][-1] == "no steady state within 60 s"
    published = table(md, "### Published burst and sustained rates (not measured by tcbench)")
    assert published["H200 bf16"][2:6] == ["989.5", "759.9", "700.3", "0.92"]
    assert "tile-ai/TileOPs@131707b" in published["H200 fp8"][-1]


def test_per_gpu_burst_vs_sustained_and_the_trace(report):
    md = (report / "report.md").read_text()
    rows = table(md, "### Fixture GPU H (sustained): burst vs sustained (measured)")
    assert rows["cublaslt bf16"][2:] == ["TFLOP/s", "770", "1780", "710", "1640", "0.92", "693",
                                         "sw_power_cap", "steady after 7.4 s"]
    assert rows["cublaslt int8"][-1] == "no steady state within 60 s"
    assert rows["wgmma_m64n256k16 bf16"][7] == "0.89"
    assert table(md, "### Fixture GPU A (sustained): burst vs sustained (measured)")[
        "cublaslt bf16"][9] == "none"
    for gpu in ("h", "a"):
        assert (report / f"section_sustained_trace_fixture_gpu_{gpu}_sustained.png").is_file()


def test_trace_points_at_their_slices():
    rs = load(fixture("sustained_h.json"))
    row = sustained.pairs(rs)[("cublaslt", "bf16")]["sustained"]
    clock = sustained._trace(row, "clock_at_<NN>")
    assert len(clock) == 50
    assert clock[0][0] == pytest.approx(0.5 * 9.4 / 50) and clock[-1][0] == pytest.approx(
        49.5 * 9.4 / 50)
    assert clock[0][1] > clock[-1][1] == pytest.approx(1640, abs=2)


def test_a_bad_published_file_is_one_sentence(tmp_path):
    bad = tmp_path / "published.csv"
    text = sustained.PUBLISHED.read_text().replace("0.7680", "7.68", 1)
    bad.write_text(text)
    with pytest.raises(InputError, match=r"line 2: burst_fraction is '7.68', not a positive"):
        sustained.load_published(bad)
    bad.write_text(text.replace("H200", "", 1))
    with pytest.raises(InputError, match="line 2: no gpu"):
        sustained.load_published(bad)
