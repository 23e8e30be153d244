"""tcbench report: tables with the right numbers, valid PNGs, a self-contained HTML page."""

from __future__ import annotations

import base64
import json
import re

import matplotlib.image as mpimg
import numpy as np
import pytest

import answers_data as ad
import many_gpus
from conftest import PNG_SIGNATURE, fixture, load_doc, renamed, table_rows, write
from tcbench_tools import report
from tcbench_tools.labels import unique_labels
from tcbench_tools.results import load, without_invalid
from tcbench_tools.sections import overview
from tcbench_tools.sections._glance import SHORT

GPUS = ["Fixture GPU A", "Fixture GPU B", "Fixture GPU C"]


@pytest.fixture
def three_gpus(cli, tmp_path):
    out = tmp_path / "rep"
    code, stdout, err = cli("report", fixture("gpu_a.json"), fixture("gpu_b.json"),
                            fixture("gpu_c.json"), "--out", out)
    assert code == 0, err
    return out, stdout, err


def by_gpu(rows: list[list[str]], precision: str) -> dict[str, list[str]]:
    """The rows of one precision in a table of (precision, [unit,] GPU, ...) rows, by GPU."""
    gpu = 2 if rows and rows[0][1] in ("TFLOP/s", "TOP/s", "GB/s") else 1
    return {r[gpu]: r[gpu + 1:] for r in rows if r[0] == precision}


def test_topic_table_has_best_result_pct_speedup_and_benchmark_per_gpu(three_gpus):
    out, stdout, err = three_gpus
    assert err == ""
    md = (out / "report.md").read_text()
    rows = table_rows(md, "### Topic: fp16_vs_fp32")
    # A row per precision and GPU: best, % peak, x FP32, the benchmark. Best of the 1024..4096
    # sweep = the 4096 point: 80 % of each card's fixture peak.
    fp32, fp16 = by_gpu(rows, "fp32"), by_gpu(rows, "fp16")
    assert [fp32[g][:3] for g in GPUS] == [["16", "80.0", "1.00"], ["48", "80.0", "1.00"],
                                            ["6.4", "80.0", "1.00"]]
    assert [fp16[g][:3] for g in GPUS] == [["256", "80.0", "16.00"], ["800", "80.0", "16.67"],
                                            ["51.2", "80.0", "8.00"]]
    # The benchmark that achieved it, abbreviated, linked to its sweep, the full name its title.
    assert fp16["Fixture GPU A"][3] == (
        "[cublaslt 4096\u00b3 nn](sweep_04_fp16_vs_fp32_cublaslt_fp16_m_n_k_layout_nn.png "
        '"fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096/layout:nn")')
    # GPU C lacks tf32 (its peak_tf32 is 0): "n/a", not a zero and not a missing result.
    assert by_gpu(rows, "tf32")["Fixture GPU C"] == ["n/a"] * 4
    int8 = by_gpu(table_rows(md, "### Topic: int8_gemm"), "int8")
    # No FP32 row in this topic: no baseline, so no x column (it said "x FP32" over nothing).
    assert int8["Fixture GPU A"] == ["448", "70.0", "cublaslt 4096\u00b3 tn"]
    headers = md.split("### Topic: int8_gemm", 1)[1].split("\n| precision |", 1)[1]
    assert headers.startswith(" unit | GPU | best | % peak | benchmark |")
    fp8 = by_gpu(table_rows(md, "### Topic: fp8"), "fp8")
    assert fp8["Fixture GPU A"] == ["n/a"] * 3 and fp8["Fixture GPU B"][:2] == ["1200", "60.0"]


def test_the_tensor_util_table_names_its_fp32_baseline(cli, tmp_path):
    """Issue 36 (D7): FP16 at 42.7x "FP32" divided by tcbench's SIMT kernel at 30 % of its
    peak; the column says so, and a cuBLASLt FP32 row gets a column of its own."""
    doc = load_doc("tensor_util.json")
    simt = next(r for r in doc["benchmarks"] if r["run_name"].startswith("tensor_util/simt/fp32"))
    lib = renamed(simt, simt["run_name"].removesuffix("/manual_time").replace("/simt/",
                                                                                  "/cublaslt/"))
    lib["tflops"] = simt["tflops"] * 2.5
    doc["benchmarks"].append(lib)
    code, _, err = cli("report", write(tmp_path, "tu.json", doc), "--out", tmp_path / "rep")
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    part = md.split("### Topic: tensor_util", 1)[1].split("\n### ", 1)[0]
    header = next(line for line in part.splitlines() if line.startswith("| precision |"))
    assert header == ("| precision | unit | GPU | best | % peak | x cuBLASLt FP32 | "
                      "x SIMT FP32 kernel | benchmark |")
    fp16 = next(r for r in table_rows(md, "### Topic: tensor_util") if r[0] == "fp16")
    best = float(fp16[3])
    assert float(fp16[6]) == pytest.approx(best / simt["tflops"], abs=0.01)  # 37.81
    assert float(fp16[6]) == pytest.approx(2.5 * float(fp16[5]), rel=0.01)


def test_peak_vs_achieved_table(three_gpus):
    out, _, _ = three_gpus
    md = (out / "report.md").read_text()
    rows = table_rows(md, "## Peak vs best achieved")
    fp16 = by_gpu(rows, "fp16")
    assert [fp16[g][:3] for g in GPUS] == [["320", "256", "80.0"], ["1000", "800", "80.0"],
                                            ["64", "51.2", "80.0"]]
    assert fp16["Fixture GPU B"][3].startswith("[cublaslt 4096\u00b3 nn](sweep_")
    # peak_<p>_max_clock and peak_<p>_source are not precisions
    assert not any(r[0].endswith(("max_clock", "source")) for r in rows)
    assert by_gpu(rows, "fp8")["Fixture GPU A"] == ["n/a"] * 4  # no FP8 (peak_fp8 = 0)


def test_the_gpus_and_their_runs_are_rows(three_gpus):
    out, _, _ = three_gpus
    md = (out / "report.md").read_text()
    gpus = {r[0]: r for r in table_rows(md.split("### Runs")[0], "## GPUs")}
    assert list(gpus) == GPUS and gpus["Fixture GPU B"][1:4] == ["9.0", "132", "13.1"]
    runs = {r[0]: r[1:] for r in table_rows(md, "### Runs")}
    # host, run date, mode, repetitions, tcbench, measured SM clock, file
    assert runs["Fixture GPU A"] == ["fixture-host", "2026-01-01 00:00 +00:00", "full", "5",
                                     "0.2.0 (0123456789ab)", "-", "gpu_a.json"]


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
    # A best result links to its sweep's heading, its full name in the title.
    link = re.search(r'<a href="#(sweep-\d+)" title="fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/'
                     r'k:4096/layout:nn">cublaslt 4096\u00b3 nn</a>', html)
    assert link and f'<h4 id="{link.group(1)}">fp16_vs_fp32/cublaslt/fp16' in html


def test_skips_and_failures_are_listed(three_gpus):
    out, _, _ = three_gpus
    md = (out / "report.md").read_text()
    section = md.split("## Skipped and failed")[1].split("\n## ")[0]
    # Each skip reason once, with the GPUs it applies to and how many benchmarks each.
    assert "| tf32 is not supported on compute capability 7.5 | Fixture GPU C (3) |" in section
    assert ("| Fixture GPU A | FAILED | tensor_util/cublaslt/fp16/m:8192/n:8192/k:8192/layout:nn | "
            "error: cublasLtMatmul failed: CUBLAS_STATUS_") in section
    # The first screen's health line of each GPU links to its entry.
    html = (out / "report.html").read_text()
    assert '<span id="problems-01">Fixture GPU A</span>' in html
    glance = html.split('<table class="compact glance">', 1)[1].split("</table>", 1)[0]
    assert 'href="#problems-01"' in glance and "1 FAILED" in glance


def test_sweep_detection():
    sets = [load(fixture("gpu_a.json")), load(fixture("gpu_c.json"))]
    sweeps = overview.find_sweeps(sets, ["A", "C"])
    by_title = {s.title: s for s in sweeps}
    square = by_title["fp16_vs_fp32/cublaslt/fp16 (layout:nn): TFLOP/s vs m=n=k"]
    assert [(p.x, p.y) for p in square.lines["A"]] == [(1024, 160.0), (2048, 224.0),
                                                       (4096, 256.0)]
    # The spread of the five repetitions (rates 256 / [1.00, 1.01, 0.99, 1.005, 0.995]): numpy's
    # 10th and 90th percentiles, independently of the report's code.
    reps = [256 / f for f in (1.00, 1.01, 0.99, 1.005, 0.995)]
    top = square.lines["A"][-1]
    assert (top.low, top.high) == pytest.approx(tuple(np.percentile(reps, [10, 90])))
    assert [p.x for p in square.lines["C"]] == [1024, 2048, 4096]
    align = by_title["alignment/cublaslt/fp16 (m:4096, n:4096, layout:nn): TFLOP/s vs k"]
    assert [p.x for p in align.lines["A"]] == [4095, 4096, 4097]
    # tf32 exists only on A (skipped on C): one line.
    assert set(by_title["fp16_vs_fp32/cublaslt/tf32 (layout:nn): TFLOP/s vs m=n=k"].lines) == {"A"}
    # Single-size benchmarks are not sweeps.
    assert not any(s.topic == "int8_gemm" for s in sweeps)
    # Each sweep knows its members, its heading's id and its PNG: what best results link to.
    assert ("A", "fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096/layout:nn") in square.members
    assert square.anchor.startswith("sweep-") and square.file.endswith(".png")


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


# --- the first screen's verdicts are the answers' (issue 43 §1) ------------------------------

def _first_screen(files: list, labels: list[str] | None = None) -> list[list[str]]:
    """The verdict table of report's first screen for ``files`` (as cmd_report loads them), one
    [source, Q1..Q5] row per source; no plot is drawn."""
    sets = [without_invalid(load(f)) for f in files]
    doc = report.Doc()
    report.first_screen(doc, sets, unique_labels(sets, labels))
    table = doc.markdown().split("## At a glance\n\n", 1)[1].split("\n\n", 1)[0]
    return [[c.strip() for c in r.strip("|").split("|")] for r in table.splitlines()[2:]]


def _answered(cli, files: list) -> dict[str, list[str]]:
    """``tcbench answers --json`` of ``files``: each source's five short verdicts, in order."""
    code, out, err = cli("answers", *files, "--json")
    assert code == 0, err
    rows: dict[str, dict[str, str]] = {}
    for a in json.loads(out)["questions"]:
        rows.setdefault(a["label"], {})[a["id"]] = SHORT[a["verdict"]]
    return {label: [v.get(f"q{i}", "GPU only") for i in range(1, 6)]
            for label, v in rows.items()}


def _same_verdicts(cli, files: list, labels: list[str] | None = None) -> list[list[str]]:
    table = _first_screen(files, labels)
    answered = _answered(cli, files)
    gpu_rows = [r for r in table if r[0] != "without a GPU"]
    gpu_answers = [v for k, v in answered.items() if k != "without a GPU"]
    # Row for row (a --label renames a row, not its verdicts): the cells are the answers'.
    assert [r[1:6] for r in gpu_rows] == gpu_answers
    if table[0][0] == "without a GPU":  # the host row, when the inputs hold host studies
        assert table[0][1:6] == answered["without a GPU"]
    if labels is None:
        assert [r[0] for r in gpu_rows] == [k for k in answered if k != "without a GPU"]
    return table


def test_first_screen_with_a_label_shows_the_answers(cli):
    """Merge 3db0323 keyed the cells by GPU name: a --label made every cell 'not measured'."""
    table = _same_verdicts(cli, [fixture("loss_scaling.json")], ["mygpu"])
    assert table[0][0] == "mygpu" and table[0][2] == "caveat"


def test_first_screen_with_two_runs_of_one_gpu_shows_the_answers(cli, tmp_path):
    for run in ("r1", "r2"):
        (tmp_path / run).mkdir()
        write(tmp_path / run, "results.json", load_doc("loss_scaling.json"))
    write(tmp_path / "r1", "studies.json",
          ad.doc(ad.HOST_CONTEXT, ad.int8_study() + ad.loss_host()))
    table = _same_verdicts(cli, [tmp_path / "r1", tmp_path / "r2"])
    assert [r[0] for r in table] == ["without a GPU", "Fixture GPU A (r1)", "Fixture GPU A (r2)"]
    assert [r[2] for r in table] == ["caveat"] * 3  # Q2: host and both GPUs


def test_first_screen_of_the_nine_fixtures_shows_the_answers(cli):
    table = _same_verdicts(cli, many_gpus.nine())
    # Each fixture answers one question (Q1 twice): the review saw 8 of 9 rows all "not measured".
    measured = [(r[0], q) for r in table for q, cell in enumerate(r[1:6], 1)
                if cell != "not measured"]
    assert len(table) == 9 and len(measured) == 6 and {q for _, q in measured} == {1, 2, 3, 4, 5}
