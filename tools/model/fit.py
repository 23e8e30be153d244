"""Fit the GEMM time model's constants to the published measurements (run by hand, not by CI).

A fitting tool, not part of tcbench. It drives the one C++ model (tcbench_model_eval, which
runs predict_time under candidate constants) with scipy, and writes what tcbench compiles in:

    .venv/bin/python tools/model/fit.py --build build/dev            # fit, print the scores
    .venv/bin/python tools/model/fit.py --build build/dev --write    # ... and write the results

--write rewrites common/facts/src/gemm_model_constants_table.cpp (the constants, provenance per
row) and data/model/fit_report.json (the leave-one-GPU-out scores the docs show). --loo-only
skips the fit and leaves each GPU out of the compiled-in constants (rebuild after a --write).

What is fitted, per architecture family, on the rows of data/published with use = fit:
1. A family with enough rows of its own (MIN_FAMILY_ROWS) gets its own shape constants (fixed
   cost, CTA latency, tile speed, wave depth, split-K, stream-K, batch and bandwidth factors); a
   family without takes them from the family it inherits from (the row says so).
2. Every family gets ceiling_<precision> for each precision it has rows of (FP16 rows count as
   BF16's); a GPU that is not its family's main one gets its own where it has rows.
3. Alignment factors for the classes a family has misaligned rows of; the others are set from the
   nearest measured class or family, and the row says which.
4. The per-call host overhead of host-timed series (scope measurement).
The loss is the squared log of predicted over measured time, each row weighted by one over the
square root of its series' size (a series is one sweep of one source), minimised by scipy's
bounded Powell search. Families are fitted in the order they are read (ampere, ada, hopper,
blackwell), each on its own rows.

Leave one GPU out: for each GPU with rows, every row of that GPU (fitted or held out) is dropped,
its family is fitted again on what is left (a family left with too few rows takes its parent's
shapes; Ampere, which has no parent, Hopper's), and that GPU's rows are scored: how the model does
on a GPU it never saw. Held-out rows (use = held_out) are never fitted on.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import math
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
from tcbench_tools import model_cmd, published  # noqa: E402

TABLE = REPO / "common" / "facts" / "src" / "gemm_model_constants_table.cpp"
REPORT = REPO / "data" / "model" / "fit_report.json"
ORDER = ("ampere", "ada", "hopper", "blackwell")  # fitted in this order: what others read first
INHERIT = {"turing": "ampere", "ada": "ampere", "hopper": "ampere", "blackwell": "hopper",
           "blackwell_rtx": "ada"}
MIN_FAMILY_ROWS = 50
# Shape constants: name, lower bound, upper bound.
SHAPE = [("fixed_us", 0.5, 40.0), ("cta_latency_us", 0.0, 10.0), ("tile_half", 1.0, 256.0),
         ("wave_depth", 0.0, 1.0), ("min_split_k_depth", 64.0, 4096.0),
         ("split_k_fixed_us", 0.0, 30.0), ("batched_efficiency", 0.4, 1.3),
         ("bandwidth_efficiency", 0.3, 1.0), ("sustained_fraction", 0.5, 1.0),
         ("sustained_us", 10.0, 20000.0)]
STREAM_K = [("stream_k_overhead", 0.0, 0.5)]
ASSUMED = {  # scope, name, value, provenance: what the data cannot tell
    ("ampere", "stream_k"): ("0", "assumed: cuBLAS's sm_80 kernels are data-parallel"),
    ("ampere", "stream_k_overhead"): ("0", "unused without stream_k"),
    ("ampere", "sustained_fraction"): ("1", "assumed: none; the A100 sweeps show no drop"),
    ("ampere", "sustained_us"): ("1000", "unused at a sustained fraction of 1"),
    ("ampere", "k_step_bytes"): ("64", "assumed: a 32-element FP16 K step per pipeline stage"),
    ("ampere", "tiles"): ("256x128 128x128 128x64 64x64",
                          "assumed: CUTLASS's sm_80 tensor-op tile sizes, both orientations tried"),
    ("hopper", "stream_k"): ("1", "assumed: cuBLAS's sm_90 GEMMs include persistent kernels with a "
                                  "stream-K tile scheduler (CUTLASS 3's sm90 kernels)"),
    ("blackwell", "stream_k"): ("1", "assumed: as Hopper (CUTLASS 3's sm100 kernels are "
                                     "persistent)"),
    ("hopper", "k_step_bytes"): ("64", "assumed: 64 bytes of K per pipeline stage, as Ampere"),
    ("hopper", "tiles"): ("256x128 128x128 128x64 64x64",
                          "assumed: Ampere's sizes, which CUTLASS 3's sm90 kernels also have "
                          "(128x256 among them), both orientations tried"),
    ("blackwell", "k_step_bytes"): ("64", "assumed: 64 bytes of K per pipeline stage, as Ampere"),
    ("blackwell", "tiles"): ("256x128 128x128 128x64 64x64",
                             "assumed: Ampere's sizes, both orientations tried; the fitted tile "
                             "speed absorbs Blackwell's larger 2-SM tiles"),
}
ALIGN_CLASSES = (1, 2, 4, 8)
PAIR_WEIGHT = 0.5
# Where every search starts (not the compiled-in values: a fit, and a leave-one-out fit above
# all, must not start from what the left-out rows taught the last one).
INITIAL = {"fixed_us": 5.0, "cta_latency_us": 1.0, "tile_half": 32.0, "wave_depth": 0.8,
           "min_split_k_depth": 1024.0, "split_k_fixed_us": 5.0, "batched_efficiency": 0.9,
           "bandwidth_efficiency": 0.8, "sustained_fraction": 0.9, "sustained_us": 500.0,
           "stream_k_overhead": 0.05, "ceiling": 0.8, "align": 0.5, "host_overhead_us": 20.0}


def initial(name: str) -> float:
    base = name.split(":")[0]
    for prefix in ("ceiling", "align", "host_overhead_us"):
        if base.startswith(prefix):
            return INITIAL[prefix]
    return INITIAL[base]
# Per-precision shape constants ("<field>:<precision>") for a family with enough rows of that
# precision: TF32's kernels are not BF16's with half the rate.
PER_PRECISION = {"tf32": [("tile_half", 1.0, 256.0), ("cta_latency_us", 0.0, 10.0)]}


def size_class(us: float) -> str:
    return next(c for c, lo, hi in model_cmd.SIZE_CLASSES if lo <= us < hi)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass
class Data:
    rows: list[published.Measurement]
    family: dict[str, str]  # GPU name (model_gpu) -> family
    c_bits: list[int]


def tool_csv(tool: Path, *args: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(model_cmd.run_tool(tool, list(args)))))


def load(build: Path) -> tuple[Data, list[dict]]:
    tool = build / "bin" / "tcbench_model"
    rows = published.load()
    families = {}
    for g in tool_csv(tool, "gpus"):
        families[g["gpu"]] = g["family"]
        families[g["device"]] = g["family"]
    vocabulary = tool_csv(tool, "vocabulary")
    bits = {v["name"]: int(v["bits"]) for v in vocabulary if v["kind"] == "type"}
    output = {v["name"]: v["output_type"] for v in vocabulary if v["kind"] == "precision"}
    c_bits = [bits[r.c_type or output[r.precision]] for r in rows]
    return Data(rows, families, c_bits), tool_csv(tool, "constants")


class Evaluator:
    """tcbench_model_eval on a fixed set of rows: constants in, predicted microseconds out."""

    def __init__(self, build: Path, data: Data, index: list[int]):
        self.index = index
        self.tmp = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
        w = csv.writer(self.tmp, lineterminator="\n")
        w.writerow(["gpu", "precision", "m", "n", "k", "batch", "a_k", "b_n", "c_bits"])
        for i in index:
            r = data.rows[i]
            w.writerow([r.model_gpu, r.precision, r.m, r.n, r.k, r.batch,
                        int(r.layout_a == "mk"), int(r.layout_b == "kn"), data.c_bits[i]])
        self.tmp.close()
        self.proc = subprocess.Popen([str(build / "bin" / "tcbench_model_eval"), self.tmp.name],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def __call__(self, constants: dict) -> list[float]:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["scope", "name", "value", "provenance"])
        for (scope, name), (value, prov) in constants.items():
            w.writerow([scope, name, value, prov or "fit"])
        self.proc.stdin.write(buf.getvalue() + "--end--\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline().strip()
        if line.startswith("error:"):
            raise ValueError(line)
        return [float(x) for x in line.split()]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()
        Path(self.tmp.name).unlink()


def fmt(x: float) -> str:
    return f"{x:.4g}"


def family_rows(data: Data, family: str, drop_gpu: str | None) -> list[int]:
    return [i for i, r in enumerate(data.rows)
            if r.use == "fit" and data.family.get(r.model_gpu) == family and r.gpu != drop_gpu]


def main_gpu(data: Data, family: str) -> str | None:
    """The GPU with the most fit rows of the family."""
    count: dict[str, int] = {}
    for i in family_rows(data, family, None):
        count[data.rows[i].gpu] = count.get(data.rows[i].gpu, 0) + 1
    return max(count, key=count.get) if count else None


def ceiling_key(precision: str) -> str:
    return "bf16" if precision in ("fp16", "fp16_acc16") else precision


def misaligned_classes(data: Data, index: list[int]) -> tuple[set[int], set[int]]:
    """The alignment classes (bytes) of the inputs and of the output among misaligned rows."""
    inputs, output = set(), set()
    for i in index:
        a, b, c = data.rows[i].alignment
        if min(a, b) < 16:
            inputs.add(min(a, b))
        if c < 16:
            output.add(c)
    return inputs, output


def source_words(data: Data, index: list[int]) -> str:
    gpus = sorted({data.rows[i].gpu for i in index})
    sources = sorted({model_cmd.source_of(data.rows[i]) for i in index})
    return f"{len(index)} rows of {', '.join(gpus)} ({'; '.join(sources)})"


class Fit:
    """One fit of every family on the fit rows, optionally without one GPU."""

    def __init__(self, build: Path, data: Data, base: list[dict], drop_gpu: str | None = None,
                 max_evaluations: int = 2500):
        self.build, self.data, self.drop = build, data, drop_gpu
        self.max_evaluations = max_evaluations
        self.constants: dict[tuple[str, str], tuple[str, str]] = {}
        for r in base:  # start from the compiled-in set, minus what this fit decides
            key = (r["scope"], r["name"])
            self.constants[key] = (r["value"], r["provenance"])
        for key, (value, prov) in ASSUMED.items():
            self.constants.setdefault(key, (value, prov))
        self.weights = {}

    def weight(self, index: list[int]) -> list[float]:
        """One over the square root of the row's series size, then scaled so that each size class
        (model_cmd.SIZE_CLASSES by measured time) weighs the same: the many microsecond rows of a
        sweep do not drown its few long GEMMs."""
        count: dict[str, int] = {}
        for i in index:
            count[self.data.rows[i].series] = count.get(self.data.rows[i].series, 0) + 1
        w = [1.0 / math.sqrt(count[self.data.rows[i].series]) for i in index]
        classes = [size_class(self.data.rows[i].measured_us) for i in index]
        total: dict[str, float] = {}
        for c, x in zip(classes, w):
            total[c] = total.get(c, 0.0) + x
        return [x / total[c] for c, x in zip(classes, w)]

    def loss(self, evaluator: Evaluator, index: list[int], weights: list[float],
             overheads: dict[str, float], pairs: list[tuple[int, int]]) -> float:
        predicted = evaluator(self.constants)
        total, times = 0.0, {}
        for pos, (i, w, us) in enumerate(zip(index, weights, predicted)):
            r = self.data.rows[i]
            if math.isnan(us):
                continue
            if r.host_timed:
                us += model_cmd.host_overhead(overheads, r.series)
            times[pos] = us
            total += w * math.log(us / r.measured_us) ** 2
        total /= sum(weights)
        # The alignment pairs: the predicted slowdown against the measured one, each pair one
        # share of PAIR_WEIGHT (direction and size of the effect are a target of their own).
        if pairs:
            err = 0.0
            for a, m in pairs:
                if a in times and m in times:
                    ra, rm = self.data.rows[index[a]], self.data.rows[index[m]]
                    measured = (ra.flops / ra.measured_us) / (rm.flops / rm.measured_us)
                    predicted_ = (ra.flops / times[a]) / (rm.flops / times[m])
                    err += math.log(predicted_ / measured) ** 2
            total += PAIR_WEIGHT * err / len(pairs)
        return total

    def set(self, scope: str, name: str, value: float | str, prov: str) -> None:
        self.constants[(scope, name)] = (fmt(value) if isinstance(value, float) else value, prov)

    def drop_scope_fields(self, scope: str, keep: set[str]) -> None:
        for key in [k for k in self.constants if k[0] == scope and k[1] not in keep]:
            del self.constants[key]

    def run(self, families: tuple[str, ...] = ORDER) -> dict:
        from scipy.optimize import minimize  # the fit only: tcbench needs no scipy

        summary = {}
        for family in families:
            index = family_rows(self.data, family, self.drop)
            own_shape = len(index) >= MIN_FAMILY_ROWS
            stream_k = self.constants.get((family, "stream_k"),
                                          self.constants.get((INHERIT.get(family, ""), "stream_k"),
                                                             ("0", "")))[0] == "1"
            # What this family fits: shape constants when it has the rows, the ceilings of its
            # precisions, the alignment classes it has rows of, host overheads of its series.
            keep = {"inherit", "stream_k", "k_step_bytes", "tiles"} & (
                {"inherit", "stream_k"} | ({"k_step_bytes", "tiles"} if own_shape else set()))
            if family == "ampere":
                keep |= {"stream_k_overhead"}
            self.drop_scope_fields(family, keep)
            for key in [k for k in self.constants
                        if k[1].startswith("ceiling_") and k[0] not in INHERIT and
                        k[0] not in ORDER and self.data.family.get(k[0]) == family]:
                del self.constants[key]
            if family in INHERIT:
                self.set(family, "inherit", INHERIT[family],
                         f"the shapes and alignment {family} has no rows for come from "
                         f"{INHERIT[family]}")
            elif not own_shape:  # Ampere without rows (leaving the A100 out): Hopper's shapes
                for key, (value, _) in list(self.constants.items()):
                    if key[0] == "hopper" and key[1].split(":")[0] in {
                            n for n, _, _ in SHAPE + STREAM_K} | {"stream_k", "k_step_bytes",
                                                                   "tiles"}:
                        self.constants[(family, key[1])] = (
                            value, "transferred from hopper: ampere has no rows of its own here")
                for kind in ("inputs", "output", "memory"):
                    for c in ALIGN_CLASSES:
                        value = self.constants.get(("hopper", f"align_{kind}_{c}"),
                                                   ("1", ""))[0]
                        self.constants[(family, f"align_{kind}_{c}")] = (
                            value, "transferred from hopper (1 where Hopper has none)")
            params: list[tuple[str, str, float, float]] = []
            if own_shape:
                params += [(family, n, lo, hi) for n, lo, hi in SHAPE]
                if stream_k:
                    params += [(family, n, lo, hi) for n, lo, hi in STREAM_K]
                for p, fields in PER_PRECISION.items():
                    if sum(self.data.rows[i].precision == p for i in index) >= MIN_FAMILY_ROWS:
                        params += [(family, f"{n}:{p}", lo, hi) for n, lo, hi in fields]
            gpus: dict[str, dict[str, int]] = {}
            for i in index:
                r = self.data.rows[i]
                gpus.setdefault(r.gpu, {})
                p = ceiling_key(r.precision)
                gpus[r.gpu][p] = gpus[r.gpu].get(p, 0) + 1
            main = max(gpus, key=lambda g: sum(gpus[g].values())) if gpus else None
            for p in sorted({p for g in gpus.values() for p in g}):
                params.append((family, f"ceiling_{p}", 0.2, 1.0))
            for g, ps in gpus.items():
                if g != main:
                    params += [(g, f"ceiling_{p}", 0.2, 1.0) for p in ps]
            inputs, output = misaligned_classes(self.data, index)
            for c in sorted(inputs):
                params.append((family, f"align_inputs_{c}", 0.05, 1.0))
            for c in sorted(output - inputs if family == "ada" else output):
                params.append((family, f"align_output_{c}", 0.05, 1.0))
            if family == "ampere":
                params += [(family, f"align_memory_{c}", 0.05, 1.0) for c in (4, 8)]
            series = sorted({self.data.rows[i].series for i in index
                             if self.data.rows[i].host_timed})
            host = [s for s in series if s != "cookbook-linear-vocab_h_sweep"
                    and s != "cookbook-linear-vocab_v_sweep"]
            host_keys = sorted({"-".join(s.split("-")[:2]) for s in host})
            params += [("measurement", f"host_overhead_us:{k}", 0.0, 100.0) for k in host_keys]
            if not index:
                summary[family] = {"rows": 0}
                self.fill(family, index, own_shape, inputs, output)
                continue
            x0 = [min(max(initial(name), lo), hi) for _, name, lo, hi in params]
            bounds = [(lo, hi) for _, _, lo, hi in params]
            self.fill(family, index, own_shape, inputs, output)
            evaluator = Evaluator(self.build, self.data, index)
            weights = self.weight(index)
            where = {id(self.data.rows[i]): pos for pos, i in enumerate(index)}
            pairs = [(where[id(p.aligned)], where[id(p.misaligned)])
                     for p in published.pairs([self.data.rows[i] for i in index])]

            def apply(x):
                for (scope, name, _, _), v in zip(params, x):
                    self.set(scope, name, float(v), "being fitted")
                self.fill(family, index, own_shape, inputs, output)
                return {k.split(":", 1)[1]: float(v) for (s, k, _, _), v in zip(params, x)
                        if s == "measurement"}

            def objective(x):
                overheads = apply(x)
                if "cookbook-mm" in overheads:
                    overheads["cookbook-linear"] = overheads["cookbook-mm"]
                return self.loss(evaluator, index, weights, overheads, pairs)

            best = None
            for _ in range(2):  # a second pass restarts the directions from the first's end
                res = minimize(objective, x0, method="Powell", bounds=bounds,
                               options={"maxfev": self.max_evaluations, "xtol": 1e-3,
                                        "ftol": 1e-7})
                x0, best = list(res.x), res
            objective(best.x)
            evaluator.close()
            words = source_words(self.data, index)
            for scope, name, _, _ in params:
                value = self.constants[(scope, name)][0]
                self.constants[(scope, name)] = (value, f"fitted by tools/model/fit.py on {words}")
            if "cookbook-mm" in {k.split(":", 1)[1] for s, k, _, _ in params if s == "measurement"}:
                self.set("measurement", "host_overhead_us:cookbook-linear",
                         self.constants[("measurement", "host_overhead_us:cookbook-mm")][0],
                         "as host_overhead_us:cookbook-mm: the vocabulary sweeps were printed by "
                         "mm_flops.py's benchmark_mm_b, timed like its benchmark_mm (and are "
                         "47 ms GEMMs: the overhead is not identifiable in them)")
            self.fill(family, index, own_shape, inputs, output, final=True)
            summary[family] = {"rows": len(index), "loss": round(best.fun, 6),
                               "fitted": [f"{s}:{n}" for s, n, _, _ in params]}
            log(f"  {family}: {len(index)} rows, loss {best.fun:.5f}, {len(params)} constants")
        return summary

    def fill(self, family: str, index: list[int], own_shape: bool, inputs: set[int],
             output: set[int], final: bool = False) -> None:
        """The alignment classes a family has no rows for, from its nearest measured class."""
        if family not in INHERIT and not own_shape:
            return  # Ampere without rows: what run() transferred stays
        for kind, measured in (("inputs", inputs), ("output", output)):
            if family == "ada" and kind == "output":
                measured = measured | inputs
            for c in ALIGN_CLASSES:
                key = (family, f"align_{kind}_{c}")
                if c in measured and not (family == "ada" and kind == "output" and c in inputs):
                    continue
                # The nearest measured class of this family (a wider alignment is never slower
                # than a narrower one), else the family it inherits from.
                lower = [m for m in measured if m <= c]
                if family == "ada" and kind == "output" and c in inputs:
                    src = (family, f"align_inputs_{c}")
                    why = ("as align_inputs: the odd squares of the fit set make A, B and C "
                           "misaligned together, so only the slower of the two is seen")
                elif lower:
                    src = (family, f"align_{kind}_{max(lower)}")
                    why = (f"as the {max(lower)}-byte class: no {c}-byte rows in the fit set, "
                           "and a wider alignment is never slower")
                elif family == "ampere" and c == 1:
                    src = (family, f"align_{kind}_2")
                    why = "as the 2-byte class: no 1-byte (odd INT8/FP8) rows in the fit set"
                elif measured and c < min(measured):
                    src = (family, f"align_{kind}_{min(measured)}")
                    why = f"as the {min(measured)}-byte class: no {c}-byte rows in the fit set"
                elif family == "hopper":
                    src = ("ada", f"align_{kind}_{c}")
                    why = ("transferred from ada: no Hopper rows of this class; Ada's cuBLAS runs "
                           "unaligned shapes on align1/align2 kernels (pytorch/pytorch#181718's "
                           "kernel names) and Hopper's measured 2-byte row agrees")
                else:
                    self.constants.pop(key, None)  # inherited, and the basis says so
                    continue
                if src in self.constants:
                    self.constants[key] = (self.constants[src][0], why)
        if family == "ampere":
            for c in (1, 2):
                self.constants[(family, f"align_memory_{c}")] = (
                    self.constants.get((family, "align_memory_4"), ("1", ""))[0],
                    "as align_memory_4: every 1- and 2-byte-aligned row of the fit set is compute "
                    "bound")


def score_rows(build: Path, data: Data, constants: dict, index: list[int],
               overheads: dict[str, float]) -> list[model_cmd.Scored]:
    ev = Evaluator(build, data, index)
    predicted = ev(constants)
    ev.close()
    out = []
    for i, us in zip(index, predicted):
        r = data.rows[i]
        if math.isnan(us):
            continue
        total = us + (model_cmd.host_overhead(overheads, r.series) if r.host_timed else 0.0)
        out.append(model_cmd.Scored(r, total, us, r.aligned, "", "", ""))
    return out


def summary(scored: list[model_cmd.Scored]) -> dict:
    q = published.quantile
    xs = [s.ratio for s in scored]
    big = [s.ratio for s in scored if s.aligned and s.row.measured_us >= 100]
    mis = [s.ratio for s in scored if not s.aligned]
    pairs = model_cmd.pairs(scored)
    out = {"rows": len(xs)}
    if xs:
        out.update(median=round(q(xs, .5), 3), p10=round(q(xs, .1), 3), p90=round(q(xs, .9), 3))
    if big:
        out["aligned_100us"] = {"rows": len(big), "median": round(q(big, .5), 3),
                                "p10": round(q(big, .1), 3), "p90": round(q(big, .9), 3)}
    if mis:
        out["misaligned"] = {"rows": len(mis), "median": round(q(mis, .5), 3)}
    if pairs:
        out["pairs"] = {"pairs": len(pairs),
                        "direction_right": sum(p.direction_right for p in pairs),
                        "within_2x": sum(0.5 <= p.predicted / p.measured <= 2 for p in pairs)}
    return out


def overheads_of(constants: dict) -> dict[str, float]:
    return {k.split(":", 1)[1]: float(v[0]) for (s, k), v in constants.items()
            if s == "measurement"}


def data_digest() -> str:
    h = hashlib.sha256()
    for f in published.data_files():
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


HEADER = '''// Generated by tools/model/fit.py: the GEMM time model's constants
// (gemm_model_constants.hpp says what each row means). Do not edit by hand: change the fit and
// run it again.
// clang-format off
#include "tcbench/gemm_model_constants.hpp"

namespace tcbench {
namespace {
constexpr ConstantRow kRows[] = {
'''
FOOTER = '''};
}  // namespace
extern const std::span<const ConstantRow> kModelConstantRows;
const std::span<const ConstantRow> kModelConstantRows{kRows};
}  // namespace tcbench
'''


def cstr(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_table(constants: dict, path: Path = TABLE) -> None:
    def order(key):
        scope, name = key
        rank = (["measurement"] + list(ORDER) + ["turing", "blackwell_rtx"]).index(scope) \
            if scope in ["measurement", *ORDER, "turing", "blackwell_rtx"] else 99
        return (rank, scope, name)
    body = "".join(f"    {{{cstr(s)}, {cstr(n)}, {cstr(v)},\n     {cstr(p)}}},\n"
                   for (s, n), (v, p) in sorted(constants.items(), key=lambda kv: order(kv[0])))
    path.write_text(HEADER + body + FOOTER, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", type=Path, required=True, help="a build with tcbench_model(_eval)")
    ap.add_argument("--write", action="store_true", help="write the table and the report")
    ap.add_argument("--loo-only", action="store_true",
                    help="no new fit: leave each GPU out of the compiled-in one")
    ap.add_argument("--max-evaluations", type=int, default=2500)
    args = ap.parse_args(argv)
    data, base = load(args.build)
    everything = list(range(len(data.rows)))
    if args.loo_only:
        shipped = {(r["scope"], r["name"]): (r["value"], r["provenance"]) for r in base}
        report = {}  # the fit's own summary belongs to a fitting run
    else:
        log("fit on every GPU's rows")
        fit = Fit(args.build, data, base, max_evaluations=args.max_evaluations)
        report = {"families": fit.run()}
        shipped = fit.constants
        if args.write:
            write_table(shipped)
            log(f"wrote {TABLE.relative_to(REPO)}")
    scored = score_rows(args.build, data, shipped, everything, overheads_of(shipped))
    for use in ("fit", "held_out"):
        log(f"shipped model, {use}: {summary([s for s in scored if s.row.use == use])}")
    # Leave one GPU out: only its family is fitted again (no other family's fit reads its rows),
    # starting from the shipped set for the others.
    report["data_digest"] = data_digest()
    report["loo"] = []
    base_rows = [{"scope": s, "name": n, "value": v, "provenance": p}
                 for (s, n), (v, p) in shipped.items()]
    for g in sorted({r.gpu for r in data.rows}):
        family = data.family[g]
        fitted = [i for i in everything if data.rows[i].gpu == g and data.rows[i].use == "fit"]
        rest = len(family_rows(data, family, g))
        log(f"leave out {g} ({family}): {len(fitted)} fit rows, {rest} left in the family")
        loo = Fit(args.build, data, base_rows, drop_gpu=g, max_evaluations=args.max_evaluations)
        if not fitted:
            pass  # nothing of it was fitted on: the shipped set is the leave-one-out set
        elif rest >= MIN_FAMILY_ROWS and g != main_gpu(data, family):
            # A minor GPU of a family: its rows fit only its own ceiling rows, which go; the
            # family's optimum without them is the shipped one.
            for key in [k for k in loo.constants if k[0] == g]:
                del loo.constants[key]
        else:
            loo.run((family,))
        index = [i for i in everything if data.rows[i].gpu == g]
        s = summary(score_rows(args.build, data, loo.constants, index,
                               overheads_of(loo.constants)))
        s["gpu"] = g
        report["loo"].append(s)
        log(f"  {g}: {s}")
    if args.write:
        REPORT.parent.mkdir(parents=True, exist_ok=True)
        REPORT.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        log(f"wrote {REPORT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
