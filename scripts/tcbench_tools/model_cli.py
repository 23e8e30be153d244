"""The ``tcbench model`` command line (predict, check): its options only. model_cmd.py holds the
commands; it is imported when one runs, not by every tcbench command (it brings the studies,
answers and published-data modules, about 0.13 s that `history add` and the others need not
wait for)."""

from __future__ import annotations

import argparse
from pathlib import Path


def _command(name: str, args: argparse.Namespace) -> int:
    from tcbench_tools import model_cmd

    return getattr(model_cmd, name)(args)


def add_parser(sub) -> None:
    m = sub.add_parser("model", help="the GEMM time model without a GPU: predict, check",
                       description="The GEMM time model (docs/concepts/alignment.md, 'The model') "
                                   "on rows of GEMMs, and its accuracy on published "
                                   "measurements (data/published/).",
                       epilog="Exit codes: 0 done; 1 (check) outside its gate; 2 usage or input "
                              "error (one sentence).")
    msub = m.add_subparsers(dest="model_command", metavar="SUBCOMMAND", required=True)
    p = msub.add_parser(
        "predict", help="predict each row of a CSV file",
        description="Reads rows gpu,precision,m,n,k,batch,layout_a,layout_b (C[m,n] = A B, C "
                    "row-major; layout_a mk: A stored [m][k], or km; layout_b kn or nk; gpu a "
                    "peak-table name such as 'H100 SXM'; precision fp16, bf16, tf32, fp8, int8, "
                    "...), or rows gpu,name with a tcbench benchmark name (alignment/cublaslt/"
                    "fp16/m:4096/n:33/k:4096/layout:nn: cuBLAS's column-major m and n). Writes "
                    "them back with the equivalent benchmark name, predicted_tflops, "
                    "predicted_us, bound_tflops (a bound, not a prediction), the tile, schedule "
                    "and regime assumed, and model_basis (fitted, transferred from ..., or "
                    "bound). The header line is optional for the first form (a first line "
                    "naming gpu and precision, or gpu and name, is one; then columns may come in "
                    "any order, an optional c_type column names the output type, and an input "
                    "column named like an output column comes back as input_<name>); fields are "
                    "trimmed, names and layouts matched without regard to case.",
        epilog="Exit codes: 0 written; 2 an unknown GPU or precision, a bad row or file (one "
               "sentence naming the line).")
    p.add_argument("input", metavar="IN.csv", help="the rows ('-': standard input)")
    p.add_argument("--out", metavar="OUT.csv", help="write here instead of standard output")
    p.add_argument("--tool", type=Path, help=argparse.SUPPRESS)
    p.set_defaults(func=lambda a, extra: _command("cmd_predict", a))
    c = msub.add_parser(
        "check", help="accuracy on published measurements",
        description="Predicted over measured TFLOP/s per GPU and precision, the rows the "
                    "constants were fitted on apart from the held-out ones, and the alignment "
                    "pairs, on the published measurements (default: data/published/). Exit 1 "
                    "when the median over the held-out aligned GEMMs of >= 100 us leaves "
                    "[0.85, 1.15].",
        epilog="Exit codes: 0 within the gate; 1 outside it; 2 bad data or no rows (each "
               "problem named).")
    c.add_argument("data", nargs="*", type=Path, metavar="DATA",
                   help="CSV files or folders of published measurements")
    c.add_argument("--json", action="store_true", help="the tables as JSON")
    c.add_argument("--tool", type=Path, help=argparse.SUPPRESS)
    c.set_defaults(func=lambda a, extra: _command("cmd_check", a))
