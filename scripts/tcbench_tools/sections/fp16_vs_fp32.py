"""Report section for bench_fp16_vs_fp32: the library rows through both APIs.

The topic's best throughput per precision is in the report's general "Topic: fp16_vs_fp32" table;
this section sets each ``cublas`` row (cublasGemmEx, the call most users make) beside the
``cublaslt`` row of the same precision and shape, with ``vs_cublaslt``. See
docs/concepts/fp16-vs-fp32.md for why the two APIs can differ.
"""

from __future__ import annotations

from pathlib import Path

from tcbench_tools.doc import prose
from tcbench_tools.results import ResultSet
from tcbench_tools.sections import _api_pairs

TOPIC = "fp16_vs_fp32"
TITLE = "FP16 vs FP32: cuBLAS beside cuBLASLt"


def render(doc, sets: list[ResultSet], labels: list[str], out_dir: Path) -> list[Path]:
    table = [row for rs, label in zip(sets, labels) for row in _api_pairs.rows(rs, label, TOPIC)]
    if not table:
        doc.prose("No `cublas` rows in these results (bench_fp16_vs_fp32 runs them since tcbench "
                 "issue 25): nothing to set beside cuBLASLt.")
        return []
    doc.collapsed_table(
        "cuBLAS beside cuBLASLt", _api_pairs.headers(), table, _api_pairs.RIGHT,
        intro=prose("Each GEMM through cuBLASLt (`cublasLtMatmul`, the heuristic's first "
                    "algorithm) and through cuBLAS (`cublasGemmEx`), same operands and layout, in "
                    "TFLOP/s; `vs_cublaslt` is cuBLASLt's time over cuBLAS's on that problem, "
                    "measured by the binary (> 1: cuBLAS faster). The labels say what ran: "
                    "cuBLASLt's kernel class, cuBLAS's math mode (cuBLAS does not report its "
                    "kernel)."))
    return []
