"""`tcbench model predict` and `tcbench model check` (scripts/tcbench_tools/model_cmd.py) over the
C++ host tool, and the published measurements they read (data/published, published.py)."""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path

import pytest

from conftest import REPO, assert_one_line_error, model_tool, tcbench
from tcbench_tools import model_cmd, published

HEADER = "gpu,precision,m,n,k,batch,layout_a,layout_b"


def predict(tmp_path: Path, text: str, *extra: str):
    src = tmp_path / "in.csv"
    src.write_text(text, encoding="utf-8")
    return tcbench("model", "predict", str(src), "--tool", str(model_tool()), *extra)


def rows_of(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_predict_writes_every_row_back_with_the_prediction(tmp_path):
    out = tmp_path / "out.csv"
    proc = predict(tmp_path, f"{HEADER}\nH100 SXM,bf16,8192,8192,8192,1,mk,nk\n"
                             "A100 SXM,fp16,4096,4096,4095,1,mk,kn\n", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = rows_of(out.read_text())
    assert [r["gpu"] for r in rows] == ["H100 SXM", "A100 SXM"]
    h100, a100 = rows
    tflops, us = float(h100["predicted_tflops"]), float(h100["predicted_us"])
    assert tflops == pytest.approx(2 * 8192 ** 3 / (us * 1e-6) / 1e12, rel=1e-3)
    assert 500 < tflops < float(h100["bound_tflops"]) <= 989.4 + 1e-6
    assert h100["regime"] == "compute" and h100["alignment"] == "a16 b16 c16"
    assert h100["model_basis"].startswith("transferred")  # Hopper: Ampere's constants, said so
    # K = 4095: A's rows are 8190 bytes, 2-byte aligned: far slower per FLOP than 4096.
    assert a100["alignment"] == "a2 b16 c16" and a100["model_basis"] == "fitted"
    assert float(a100["predicted_tflops"]) < 150


def test_predict_header_is_optional_and_fields_forgiving(tmp_path):
    with_header = predict(tmp_path, f"{HEADER}\nH100 SXM,fp16,4096,4096,4096,1,mk,kn\n")
    bare = predict(tmp_path, " h100 sxm , FP16 ,4096, 4096 ,4096.0,, MK ,KN \n")
    assert with_header.returncode == 0 and bare.returncode == 0, bare.stderr
    a, b = rows_of(with_header.stdout)[0], rows_of(bare.stdout)[0]
    assert a["predicted_us"] == b["predicted_us"]
    # Columns in any order under a header, an optional c_type, extra columns passed through.
    proc = predict(tmp_path, "tag,layout_b,layout_a,batch,k,n,m,precision,gpu,c_type,"
                             "predicted_tflops\n"
                             "mine,kn,mk,1,4096,4096,4096,fp16,NVIDIA H100 80GB HBM3,fp32,\n")
    assert proc.returncode == 0, proc.stderr
    row = rows_of(proc.stdout)[0]
    assert row["tag"] == "mine"
    assert float(row["predicted_tflops"]) > 0  # an empty output column of the input is filled
    assert proc.stdout.splitlines()[0].count("predicted_tflops") == 1
    # An FP32 output writes twice the bytes: a little slower.
    assert float(row["predicted_us"]) > float(a["predicted_us"])


def test_predict_says_what_it_does_not_cover(tmp_path):
    proc = predict(tmp_path, f"{HEADER}\nA100 SXM,fp8,4096,4096,4096,1,mk,nk\n"
                             "H100 SXM,fp8,4096,33,4096,1,mk,nk\n"
                             "H100 SXM,fp8,4096,4096,4096,1,mk,kn\n")
    assert proc.returncode == 0, proc.stderr
    a100, odd, kn = rows_of(proc.stdout)
    assert a100["predicted_tflops"] == "" and "no fp8 path" in a100["note"]
    assert odd["predicted_tflops"] == "" and "refuses fp8" in odd["note"]
    assert kn["predicted_tflops"] != "" and "K-contiguous" in kn["note"]


@pytest.mark.parametrize("row, needle", [
    ("H900,fp16,64,64,64,1,mk,kn", "unknown GPU 'H900'"),
    ("H100 SXM,fp12,64,64,64,1,mk,kn", "unknown precision 'fp12'"),
    ("H100 SXM,fp16,0,64,64,1,mk,kn", "m = '0'"),
    ("H100 SXM,fp16,64,6.5,64,1,mk,kn", "n = '6.5'"),
    ("H100 SXM,fp16,64,64,1e99,1,mk,kn", "k = '1e99'"),
    ("H100 SXM,fp16,64,64,64,-1,mk,kn", "batch = '-1'"),
    ("H100 SXM,fp16,64,64,64,1,row,kn", "layout_a = 'row'"),
    ("H100 SXM,fp16,64,64,64,1,mk,\"nk", "never closed"),
])
def test_predict_refuses_a_bad_row_in_one_sentence(tmp_path, row, needle):
    proc = predict(tmp_path, f"{HEADER}\nH100 SXM,fp16,64,64,64,1,mk,kn\n{row}\n")
    assert_one_line_error(proc, needle, "line 3")


def test_predict_refuses_a_header_without_a_column_and_a_missing_file(tmp_path):
    assert_one_line_error(predict(tmp_path, "gpu,precision,m,n\nH100 SXM,fp16,1,1\n"),
                          "lacks k")
    assert_one_line_error(tcbench("model", "predict", str(tmp_path / "none.csv"), "--tool",
                                  str(model_tool())), "none.csv")


def test_predict_is_quick_on_thousands_of_rows(tmp_path):
    lines = [HEADER] + [f"H100 SXM,bf16,{64 * (i % 97 + 1)},{8 * (i % 61 + 1) + i % 3},"
                        f"{128 * (i % 31 + 1)},{1 + i % 4},mk,nk" for i in range(5000)]
    start = time.monotonic()
    proc = predict(tmp_path, "\n".join(lines) + "\n")
    assert proc.returncode == 0, proc.stderr
    assert len(rows_of(proc.stdout)) == 5000
    assert time.monotonic() - start < 20  # about a second on two cores, with Python's start-up


def test_published_data_is_well_formed_and_below_the_datasheet_peaks():
    rows = published.load()
    assert len(rows) > 600
    assert not published.check(rows, model_cmd.peaks(model_tool()))
    assert {r.use for r in rows} == {"fit", "held_out"}
    # The model is fitted on A100 data and the best-shape table only (issue 32).
    for r in rows:
        if r.use == "fit":
            assert r.gpu.startswith("A100") or r.id.startswith("mamf-"), r.id
        assert r.source and r.summary


def test_published_checks_name_what_is_wrong(tmp_path):
    good = (REPO / "data" / "published" / "gemm.csv").read_text().splitlines()
    header, first = good[0], good[1]
    fields = next(csv.reader([first]))
    fields[12] = "400"  # TFLOP/s above the A100's 312
    above = ",".join(f'"{f}"' if "," in f else f for f in fields)
    path = tmp_path / "bad.csv"
    path.write_text(f"{header}\n{first}\n{first}\n{above}\n")
    problems = published.check(published.load([path]), model_cmd.peaks(model_tool()))
    text = " ".join(problems)
    assert "also on" in text and "the same measurement" in text
    assert "above A100 SXM's dense fp16 datasheet peak" in text
    fields = next(csv.reader([first]))
    fields[18] = ""  # no source
    path.write_text(header + "\n" + ",".join(f'"{f}"' if "," in f else f for f in fields) + "\n")
    with pytest.raises(Exception, match="source is empty"):
        published.load([path])


def test_check_scores_the_model_on_the_published_data_and_passes_the_gate():
    proc = tcbench("model", "check", "--tool", str(model_tool()))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| fit | all | aligned | >= 100 us |" in proc.stdout
    assert "| held_out |" in proc.stdout
    assert "Alignment pairs" in proc.stdout and ": pass." in proc.stdout
    rep = model_cmd.build_report(model_cmd.score(model_tool(), published.load()))
    assert rep.gate["pass"] and rep.gate["rows"] > 200
    fit_pairs = next(p for p in rep.pairs if p["data"] == "fit" and p["source"] == "all")
    assert fit_pairs["pairs"] > 300 and fit_pairs["direction_right"] >= 0.9


def test_the_python_alignment_rule_is_the_cpp_one():
    """published.Measurement.alignment (the pairs of tcbench answers, without the tool) gives
    what the C++ model's operand_alignment gives, on every published row."""
    rows = published.load()
    for r, p in zip(rows, model_cmd.predict_rows(model_tool(), rows)):
        a, b, c = r.alignment
        assert p["alignment"] == f"a{a} b{b} c{c}", r.id
