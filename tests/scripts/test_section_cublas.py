"""cuBLAS rows beside their cuBLASLt twins in the report (issue 25): the fp16_vs_fp32 section and
the alignment section's "cuBLAS beside cuBLASLt" table, on synthetic rows shaped like the ones
bench_fp16_vs_fp32 and bench_alignment write (every number is made up)."""

from __future__ import annotations

import copy
import json

import factory
import pytest

from conftest import load_doc, main, table_rows
from tcbench_tools.names import parse
from tcbench_tools.sections import _api_pairs


def _row(name: str, **counters) -> dict:
    label = counters.pop("label", "")
    us = counters.pop("us", 10.0)
    return factory.rows_of(factory.row(name, us * 1e-6, label, time_median_us=us, rel_error=1e-4,
                                       **counters), seconds_unit="us")[0]


def _skipped(name: str, why: str) -> dict:
    return factory.rows_of(factory.row(name, error=f"skipped: {why}"))[0]


FP16_LT = "fp16_vs_fp32/cublaslt/fp16/m:8192/n:8192/k:8192/layout:nn"
FP16_BLAS = "fp16_vs_fp32/cublas/fp16/m:8192/n:8192/k:8192/layout:nn"
BF16_BLAS = "fp16_vs_fp32/cublas/bf16/m:8192/n:8192/k:8192/layout:nn"  # no twin in the file
TF32_BLAS = "fp16_vs_fp32/cublas/tf32/m:8192/n:8192/k:8192/layout:nn"
PAIR_LT = "alignment/cublaslt/fp16/m:4096/n:33/k:4096/layout:nn"
PAIR_BLAS = "alignment/cublas/fp16/m:4096/n:33/k:4096/layout:nn"
HEADS_LT = "alignment/cublaslt/fp16/m:128/n:128/k:65/layout:nn/batch:33"
HEADS_BLAS = "alignment/cublas/fp16/m:128/n:128/k:65/layout:nn/batch:33"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    doc = copy.deepcopy(load_doc("gpu_a.json"))
    doc["context"]["gpu_name"] = "Fixture GPU C"
    doc["benchmarks"] = [
        _row(FP16_LT, tflops=700.0, label="HMMA fp16->fp32"),
        _row(FP16_BLAS, tflops=650.0, vs_cublaslt=0.93,
             label="cuBLAS GemmEx (CUBLAS_DEFAULT_MATH)"),
        _row(BF16_BLAS, tflops=640.0, vs_cublaslt=0.9, label="cuBLAS GemmEx (CUBLAS_DEFAULT_MATH)"),
        _skipped(TF32_BLAS, "TF32 (CUBLAS_COMPUTE_32F_FAST_TF32) needs compute capability 8.0 or "
                            "newer; this GPU is 7.5."),
        _row(PAIR_LT, tflops=100.0, model_tflops=110.0, label="HMMA fp16->fp32 tile 128x64"),
        _row(PAIR_BLAS, tflops=120.0, vs_cublaslt=1.2, label="cuBLAS GemmEx (CUBLAS_DEFAULT_MATH)"),
        _row(HEADS_LT, tflops=20.0, model_tflops=108.1, label="HMMA fp16->fp32 tile 128x64"),
        _row(HEADS_BLAS, tflops=25.0, vs_cublaslt=1.25,
             label="cuBLAS GemmStridedBatchedEx (CUBLAS_DEFAULT_MATH)"),
    ]
    folder = tmp_path_factory.mktemp("cublas")
    path = folder / "cublas.json"
    path.write_text(json.dumps(doc))
    out = folder / "report"
    assert main(["report", str(path), "--out", str(out)]) == 0
    return (out / "report.md").read_text()


def test_twin_is_the_same_name_through_cublaslt():
    assert _api_pairs.twin_name(HEADS_BLAS) == HEADS_LT
    assert _api_pairs.twin_name(FP16_BLAS) == FP16_LT
    with pytest.raises(ValueError):
        _api_pairs.twin_name(FP16_LT)
    assert _api_pairs.problem_text(parse(HEADS_BLAS)) == "128 x 128 x 65 nn, batch 33"
    assert _api_pairs.problem_text(parse(PAIR_BLAS)) == "4096 x 33 x 4096 nn"


def test_fp16_vs_fp32_section_sets_cublas_beside_cublaslt(results):
    rows = table_rows(results, "## FP16 vs FP32: cuBLAS beside cuBLASLt")
    by_prec = {r[1]: r for r in rows}
    assert list(by_prec) == ["tf32", "fp16", "bf16"]  # the precision table's order
    assert by_prec["fp16"] == ["Fixture GPU C", "fp16", "8192 x 8192 x 8192 nn", "700", "650",
                               "0.93", "HMMA fp16->fp32", "cuBLAS GemmEx (CUBLAS_DEFAULT_MATH)"]
    # A cuBLAS row without its twin says so; a skipped one carries its reason, no numbers.
    assert by_prec["bf16"][3] == "-" and by_prec["bf16"][6] == "not in this run"
    assert by_prec["tf32"][4:6] == ["-", "-"]
    assert by_prec["tf32"][7].startswith("skipped: TF32 (CUBLAS_COMPUTE_32F_FAST_TF32)")


def test_alignment_section_has_pairs_and_batches_through_both_apis(results):
    rows = table_rows(results, "### cuBLAS beside cuBLASLt")
    assert [r[2] for r in rows] == ["4096 x 33 x 4096 nn", "128 x 128 x 65 nn, batch 33"]
    pair, heads = rows
    assert pair[3:7] == ["100", "120", "1.2", "110"]  # cuBLASLt, cuBLAS, vs_cublaslt, model
    assert heads[3:7] == ["20", "25", "1.25", "108.1"]
    assert heads[-1] == "cuBLAS GemmStridedBatchedEx (CUBLAS_DEFAULT_MATH)"


def test_a_report_without_cublas_rows_says_so(cli, tmp_path):
    doc = copy.deepcopy(load_doc("gpu_a.json"))
    doc["benchmarks"] = [_row(FP16_LT, tflops=700.0)]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    code, _, err = cli("report", path, "--out", tmp_path / "r")
    assert code == 0, err
    md = (tmp_path / "r" / "report.md").read_text()
    assert "No `cublas` rows in these results" in md
