"""cuBLAS rows beside the cuBLASLt rows of the very same problem (issue 25), for the sections that
have both (fp16_vs_fp32, alignment).

A ``cublas`` benchmark and its cuBLASLt twin differ in the variant segment only:
``alignment/cublas/fp16/m:128/n:128/k:65/layout:nn/batch:33`` and
``alignment/cublaslt/fp16/m:128/n:128/k:65/layout:nn/batch:33``. Each row shows both throughputs,
the cuBLAS row's ``vs_cublaslt`` counter (cuBLASLt's time over cuBLAS's, measured by the binary on
the same problem: > 1 means cuBLAS is faster) and both labels (cuBLASLt's names the kernel class
and, in bench_alignment, the tile; cuBLAS's names the API and the math mode).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from tcbench_tools.names import BenchName, ParsedName, parse, precision_order
from tcbench_tools.results import Benchmark, ResultSet
from tcbench_tools.schema import VS_CUBLASLT
from tcbench_tools.sections._common import label as bench_label
from tcbench_tools.tables import fmt_num

CUBLAS = "cublas"
CUBLASLT = "cublaslt"
HEADERS = ["GPU", "precision", "problem", "cuBLASLt", "cuBLAS", VS_CUBLASLT, "cuBLASLt ran",
           "cuBLAS ran"]
RIGHT = {3, 4, 5}  # the number columns (extra columns are numbers too: 6, 7, ...)


def twin_name(name: str) -> str:
    """The cuBLASLt benchmark of a cuBLAS benchmark's problem (the variant segment swapped)."""
    parsed = parse(name)
    if parsed.variant != CUBLAS:
        raise ValueError(f"{name!r} is not a {CUBLAS} benchmark")
    return str(replace(BenchName.of(parsed), variant=CUBLASLT))


def problem_text(parsed: ParsedName) -> str:
    """``4096 x 33 x 4096 nn`` or ``128 x 128 x 65 nn, batch 33``."""
    a = parsed.args
    text = f"{a.get('m', '?')} x {a.get('n', '?')} x {a.get('k', '?')} {a.get('layout', '')}"
    return text.strip() + (f", batch {a['batch']}" if "batch" in a else "")


def _rate(bench: Benchmark | None) -> float | None:
    if bench is None or not bench.ok:
        return None
    metric = bench.throughput_metric()
    return bench.center(metric) if metric else None


def _ran(bench: Benchmark | None) -> str:
    if bench is None:
        return "not in this run"
    if bench.skipped:
        return f"skipped: {bench.skip_reason}"
    if bench.failed:
        return f"FAILED: {bench.error}"
    return bench_label(bench) or "-"


def _sort_key(parsed: ParsedName) -> tuple:
    numeric = parsed.numeric_args()
    return (precision_order(parsed.precision), numeric.get("batch", 1), numeric.get("m", 0),
            numeric.get("n", 0), numeric.get("k", 0), parsed.layout or "")


# An extra column: its header and its cell from (the cuBLASLt twin or None, the cuBLAS row).
Extra = tuple[str, Callable[[Benchmark | None, Benchmark], str]]


def headers(extra: tuple[Extra, ...] = ()) -> list[str]:
    return HEADERS[:6] + [h for h, _ in extra] + HEADERS[6:]


def rows(rs: ResultSet, gpu: str, topic: str,
         keep: Callable[[ParsedName], bool] = lambda _: True,
         extra: tuple[Extra, ...] = ()) -> list[list[str]]:
    """One row per ``topic/cublas/...`` benchmark that ``keep`` accepts, in precision order, with
    the ``extra`` columns after vs_cublaslt (``headers(extra)`` names them)."""
    found = rs.find(topic, CUBLAS, where=keep)
    out = []
    for bench in sorted(found, key=lambda b: _sort_key(b.parsed)):
        twin = rs.get(twin_name(bench.name))
        out.append([gpu, bench.parsed.precision, problem_text(bench.parsed), fmt_num(_rate(twin)),
                    fmt_num(_rate(bench)),
                    fmt_num(bench.center(VS_CUBLASLT), 3),
                    *(cell(twin, bench) for _, cell in extra), _ran(twin), _ran(bench)])
    return out
