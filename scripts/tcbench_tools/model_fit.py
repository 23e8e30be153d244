"""How data/model/gemm_model.csv's fitted constants were made (run by hand, not by CI):

    .venv/bin/python -m tcbench_tools.model_fit --tool build/dev/bin/tcbench_model

1. The Ampere constants, the A100's typical ceiling and the host overheads of the host-timed
   series: least squares of log(predicted / measured) over the fit rows of EleutherAI/cookbook
   (A100), each series weighted equally, by scipy's bounded Powell search (two passes) through
   the C++ model (tcbench_model predict --constants), so the fitted numbers are the ones the one
   implementation uses.
2. The ceilings: for each row of the best-shape table (data/published, ids mamf-*), the
   ceiling_best that makes the model (with typical_over_best = 1) reproduce the published rate at
   that shape, solved by fixed-point iteration through the same model.
3. typical_over_best = the A100's typical ceiling (step 1) over its best one (step 2): what the
   A100 sweeps reach relative to the A100's best shape, carried to every GPU.

Only rows with use = fit are read; H100, H200 and B200 measurements (held out) never are, except
the best-shape table's rows, which step 1 solves the ceilings from. Fields not listed in FITTED
keep the value and provenance the file already has (assumed, with the reason).
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import sys
import tempfile
from pathlib import Path

from tcbench_tools import model_cmd, published, schema

# The predict CSV's column is the counter the benchmarks write: one name.
PREDICTED = schema.PREDICTED_TFLOPS

FITTED = [  # scope, name, lower bound, upper bound
    # A 64x64 tile at 0.6-0.9 of a 256x128 one (the range of intensities 32..85 halves at
    # 8..64): without the bound the fit trades tile speed against wave depth freely.
    ("ampere", "tile_half", 8.0, 64.0),
    ("ampere", "wave_depth", 0.0, 1.0),
    ("ampere", "split_k_fixed_us", 0.0, 30.0),
    ("ampere", "min_split_k_depth", 64.0, 2048.0),
    ("ampere", "bandwidth_efficiency", 0.3, 1.0),
    ("ampere", "batched_efficiency", 0.5, 1.2),
    ("ampere", "align_inputs_2", 0.05, 1.0),
    ("ampere", "align_inputs_4", 0.05, 1.0),
    ("ampere", "align_inputs_8", 0.05, 1.0),
    ("ampere", "align_output_2", 0.05, 1.0),
    ("ampere", "align_output_4", 0.05, 1.0),
    ("ampere", "align_output_8", 0.05, 1.0),
    ("ampere", "align_memory_4", 0.05, 1.0),
    ("ampere", "align_memory_8", 0.05, 1.0),
    ("A100 SXM", "ceiling_typical_bf16", 0.5, 1.0),  # step 1's A100 ceiling (see main)
    ("measurement", "host_overhead_us:cookbook-mm", 0.0, 100.0),
    ("measurement", "host_overhead_us:cookbook-bmm", 0.0, 100.0),
]
# Fields the fit set cannot tell apart, each taking another's value, with the reason.
NO_1_BYTE = "no 1-byte (odd INT8/FP8) data in the fit set: the 2-byte value"
NO_MEMORY_BOUND = ("every 1- and 2-byte-aligned row of the fit set is compute bound: the 4-byte "
                   "bandwidth factor")
TIED = {("ampere", "align_inputs_1"): (("ampere", "align_inputs_2"), NO_1_BYTE),
        ("ampere", "align_output_1"): (("ampere", "align_output_2"), NO_1_BYTE),
        ("ampere", "align_memory_1"): (("ampere", "align_memory_4"), NO_MEMORY_BOUND),
        ("ampere", "align_memory_2"): (("ampere", "align_memory_4"), NO_MEMORY_BOUND),
        ("measurement", "host_overhead_us:cookbook-linear"):
            (("measurement", "host_overhead_us:cookbook-mm"),
             ("the vocabulary sweeps were printed by mm_flops.py's benchmark_mm_b, timed like its "
              "benchmark_mm (and are 47 ms GEMMs: the overhead is not identifiable in them)"))}
# The family ceiling rows the best-shape table's GPUs stand for.
FAMILY_OF_GPU = {"A100 SXM": "ampere", "H100 SXM": "hopper", "B200": "blackwell"}


def read_constants(path: Path) -> dict[tuple[str, str], list[str]]:
    rows = {}
    for r in csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))):
        rows[(r["scope"], r["name"])] = [r["value"], r["provenance"]]
    return rows


def write_constants(rows: dict[tuple[str, str], list[str]], path: Path) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["scope", "name", "value", "provenance"])
    for (scope, name), (value, prov) in rows.items():
        w.writerow([scope, name, value, prov])
    path.write_text(buf.getvalue(), encoding="utf-8")


def fmt(x: float) -> str:
    return f"{x:.4g}"


class Fitter:
    def __init__(self, tool: Path, constants: Path, rows: list[published.Measurement]):
        self.tool = tool
        self.base = read_constants(constants)
        self.best_rows = [r for r in rows if r.id.startswith("mamf-")]
        self.fit_rows = [r for r in rows if r.use == "fit" and not r.id.startswith("mamf-")]
        self.tmp = Path(tempfile.mkdtemp(prefix="tcbench-fit-")) / "constants.csv"
        self.weights = {}
        for r in self.fit_rows:
            self.weights[r.series] = self.weights.get(r.series, 0) + 1

    def constants(self, values: dict[tuple[str, str], float], typical: float | None = None):
        rows = {k: list(v) for k, v in self.base.items()}
        for key, x in values.items():
            rows.setdefault(key, ["", "being fitted"])[0] = fmt(x)
        for tied, (src, _) in TIED.items():
            rows[tied] = [rows[src][0], rows.setdefault(tied, ["", "tied"])[1]]
        if typical is not None:
            rows[("all", "typical_over_best")][0] = fmt(typical)
        write_constants(rows, self.tmp)
        return rows

    def solve_ceilings(self, values: dict) -> dict:
        """ceiling_best per best-shape row, the model at typical_over_best = 1 matching it."""
        values = dict(values)
        for _ in range(4):
            self.constants(values, typical=1.0)
            preds = model_cmd.predict_rows(self.tool, self.best_rows, self.tmp)
            for r, p in zip(self.best_rows, preds):
                key = (r.gpu, f"ceiling_best_{r.precision}")
                old = values.get(key, float(self.base.get(key, ["0.85"])[0] or 0.85))
                values[key] = min(1.0, old * r.measured_tflops / float(p[PREDICTED]))
        return values

    def loss(self, values: dict) -> float:
        values = dict(values)
        # The fit moves the A100's typical ceiling itself: the best-shape ceilings and
        # typical_over_best are solved afterwards (main), which leaves the fit rows unchanged.
        values[("A100 SXM", "ceiling_best_bf16")] = values.pop(("A100 SXM", "ceiling_typical_bf16"))
        self.constants(values, typical=1.0)
        overheads = {k.split(":", 1)[1]: v for (s, k), v in values.items() if s == "measurement"}
        for tied, (src, _) in TIED.items():
            if tied[0] == "measurement":
                overheads[tied[1].split(":", 1)[1]] = values[src]
        scored = model_cmd.score(self.tool, self.fit_rows, self.tmp, overheads)
        total = 0.0
        for s in scored:
            if s.ratio is None:
                continue
            total += math.log(s.ratio) ** 2 / self.weights[s.row.series]
        return total / len(self.weights)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="fit data/model/gemm_model.csv (see the module doc)")
    ap.add_argument("--tool", type=Path, required=True)
    ap.add_argument("--constants", type=Path, default=model_cmd.CONSTANTS)
    ap.add_argument("--max-evaluations", type=int, default=3000)
    args = ap.parse_args(argv)
    from scipy.optimize import minimize  # the fit only; the tools stay standard-library

    rows = published.load()
    f = Fitter(args.tool, args.constants, rows)
    start = {(s, n): float(f.base[(s, n)][0]) for s, n, _, _ in FITTED if (s, n) in f.base}
    if ("A100 SXM", "ceiling_best_bf16") in f.base:
        start[("A100 SXM", "ceiling_typical_bf16")] = (
            float(f.base[("A100 SXM", "ceiling_best_bf16")][0]) *
            float(f.base[("all", "typical_over_best")][0]))
    for s, n, lo, hi in FITTED:
        start.setdefault((s, n), (lo + hi) / 2)
    keys = [(s, n) for s, n, _, _ in FITTED]
    bounds = [(lo, hi) for _, _, lo, hi in FITTED]

    def objective(x):
        return f.loss(dict(zip(keys, x)))

    x0 = [min(max(start[k], lo), hi) for k, (lo, hi) in zip(keys, bounds)]
    print(f"start loss {objective(x0):.5f}", file=sys.stderr)
    res = None
    for _ in range(2):  # a second pass restarts the directions from the first one's end
        res = minimize(objective, x0, method="Powell", bounds=bounds,
                       options={"maxfev": args.max_evaluations, "xtol": 1e-3, "ftol": 1e-7})
        x0 = list(res.x)
        print(f"pass: loss {res.fun:.5f} after {res.nfev} evaluations", file=sys.stderr)
    values = dict(zip(keys, res.x))
    typical_a100 = values.pop(("A100 SXM", "ceiling_typical_bf16"))
    values = f.solve_ceilings(values)
    values[("all", "typical_over_best")] = typical_a100 / values[("A100 SXM", "ceiling_best_bf16")]
    keys = [k for k in keys if k[0] != "A100 SXM"] + [("all", "typical_over_best")]

    n = len(f.fit_rows)
    fitted = (f"fitted by scripts/tcbench_tools/model_fit.py (least squares of log predicted/"
              f"measured, series weighted equally) on the {n} A100 rows of EleutherAI/cookbook "
              "in data/published/gemm.csv (use=fit)")
    rows = f.constants(values)
    for key in keys:
        rows[key][1] = fitted
    rows[("all", "typical_over_best")][1] = (
        f"fitted: the A100's typical ceiling ({typical_a100:.4g}, {fitted}) over its best-shape "
        "ceiling (A100 SXM ceiling_best_bf16)")
    for tied, (src, why) in TIED.items():
        rows[tied][1] = f"as {src[1]}: {why}"
    for r in f.best_rows:
        key = (r.gpu, f"ceiling_best_{r.precision}")
        rows[key] = [fmt(values[key]),
                     (f"solved through the model from {r.id} ({r.measured_tflops:g} TFLOP/s at "
                      f"{r.m}x{r.n}x{r.k}, {r.source})")]
        family = FAMILY_OF_GPU.get(r.gpu)
        if family:
            rows[(family, f"ceiling_best_{r.precision}")] = [
                fmt(values[key]), f"as {r.gpu} (the best-shape table's {family} GPU)"]
    write_constants(rows, args.constants)
    print(f"wrote {args.constants}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
