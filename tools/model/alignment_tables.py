"""The "what you should see" tables of docs/concepts/alignment.md, written from the GEMM time model
(through tcbench_model) and its accuracy on the published measurements (``tcbench model check``).

    .venv/bin/python tools/model/alignment_tables.py [--tool PATH] [--write]

prints every table between its ``<!-- predicted:NAME -->`` markers, or (``--write``) puts them into
the page; tests/scripts/test_alignment_tables.py fails when the page and the model disagree. Every
number is labelled as what it is: model (a prediction, with the spread model check measured),
bound, or published (with its source). Standard library only. A developers' tool beside fit.py,
not part of the product: only who changes the model or the page runs it.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
from tcbench_tools import model_cmd, published, schema  # noqa: E402
from tcbench_tools.doc import Doc  # noqa: E402

# The predict CSV's column is the counter the benchmarks write: one name.
PREDICTED = schema.PREDICTED_TFLOPS

PAGE = REPO / "docs" / "concepts" / "alignment.md"
# The fit's leave-one-GPU-out scores (fit.py --write); test_alignment_tables.py checks that it was
# made from the data as they are.
FIT_REPORT = REPO / "data" / "model" / "fit_report.json"
GPUS = (("H100 SXM", "NVIDIA H100 80GB HBM3"), ("A100 SXM 80GB", "NVIDIA A100-SXM4-80GB"))
HEADER = ["gpu", "precision", "m", "n", "k", "batch", "layout_a", "layout_b"]
# The precisions tcbench runs TN (A K-contiguous; the precision table's a_k_major), the rest NN.
TN = tuple(row["name"] for row in csv.DictReader(io.StringIO(
    published.VOCABULARY.read_text(encoding="utf-8"))) if row.get("a_k_major") == "1")


def markdown_table(headers: list[str], rows: list[list[str]], right: set[int]) -> str:
    """One table as Markdown (doc.py writes it: every cell escaped)."""
    doc = Doc()
    doc.table(headers, rows, right)
    return doc.markdown()


def as_run(precision: str, m: int, n: int, k: int, batch: int = 1, nt: bool = False) -> dict:
    """bench_alignment's column-major GEMM as the model's row-major row (gemm_prediction.hpp's
    query_of): D^T = B^T A^T, so M and N swap; B (K-contiguous, or N-contiguous for layout:nt)
    comes first, A (M-contiguous, or K-contiguous in TN) second."""
    return {"precision": precision, "m": n, "n": m, "k": k, "batch": batch,
            "layout_a": "km" if nt else "mk", "layout_b": "nk" if precision in TN else "kn"}


class Model:
    """Predictions through the C++ tool, many rows per call."""

    def __init__(self, tool: Path):
        self.tool = tool

    def run(self, rows: list[dict]) -> list[dict]:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=HEADER, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        out = model_cmd.run_tool(self.tool, ["predict", "-"], buf.getvalue())
        return list(csv.DictReader(io.StringIO(out)))


def f1(x: str | float) -> str:
    return f"{float(x):.1f}"


def spread(scored: list[model_cmd.Scored]) -> dict[str, tuple[float, float]]:
    """size class -> (p10, p90) of predicted/measured over the held-out rows (the model's error
    where it was not fitted), all alignments."""
    out: dict[str, list[float]] = {}
    for s in scored:
        if s.row.use == "held_out" and s.ratio is not None:
            cls = next(c for c, lo, hi in model_cmd.SIZE_CLASSES
                       if lo <= s.row.measured_us < hi)
            out.setdefault(cls, []).append(s.ratio)
    return {c: (model_cmd.quantile(xs, .1), model_cmd.quantile(xs, .9)) for c, xs in out.items()}


def likely(pred: dict, bars: dict[str, tuple[float, float]]) -> str:
    """The measured rate a p10-p90 error of model check implies: pred / p90 .. pred / p10, with
    the spread of the prediction's size class (the nearest larger class the data have)."""
    us = float(pred["predicted_us"])
    classes = [c for c, _, _ in model_cmd.SIZE_CLASSES]
    at = next(i for i, (c, lo, hi) in enumerate(model_cmd.SIZE_CLASSES) if lo <= us < hi)
    cls = next(c for c in classes[at:] + classes[:at][::-1] if c in bars)
    lo, hi = bars[cls]
    t = float(pred[PREDICTED])
    return f"{t / hi:.0f}-{t / lo:.0f}"


def n_sweep(model: Model, bars) -> str:
    ns = (1, 8, 16, 32, 33, 40, 48, 64, 65, 96, 128, 129, 160, 8192, 8193)
    rows = [{"gpu": dev, **as_run("fp16", 4096, n, 4096)} for _, dev in GPUS for n in ns]
    preds = model.run(rows)
    rows = [[label, str(n), f1(p[PREDICTED]), likely(p, bars), f1(p["bound_tflops"]),
             f"{p['tile']} x {p[schema.SPLIT_K]}", p["regime"], f"{float(p['predicted_us']):.2f}"]
            for (label, _), chunk in zip(GPUS, (preds[:len(ns)], preds[len(ns):]))
            for n, p in zip(ns, chunk)]
    return markdown_table(["GPU", "N", "predicted TFLOP/s (model)", "likely measured, p10-p90",
                           "bound TFLOP/s", "tile x split-K (assumed)", "regime", "predicted us"],
                          rows, {1, 2, 4, 7})


def cell(p: dict) -> str:
    if p[PREDICTED]:
        return f1(p[PREDICTED])
    return "refused" if "refuses" in p["note"] else "-"


def pairs(model: Model) -> str:
    precisions = ("fp16", "bf16", "tf32", "int8", "fp8")
    pair_ns = (32, 64, 128, 8192)
    lines = []
    for label, dev in GPUS:
        for prec in precisions:
            for nt in ((False, True) if prec == "fp16" else (False,)):
                rows = [{"gpu": dev, **as_run(prec, 4096, n + d, 4096, nt=nt)}
                        for n in pair_ns for d in (0, 1)]
                preds = model.run(rows)
                layout = "nt" if nt else ("tn" if prec in TN else "nn")
                cells = []
                for i in range(len(pair_ns)):
                    a, b = preds[2 * i], preds[2 * i + 1]
                    cells += [cell(a), cell(b)]
                    both = a[PREDICTED] and b[PREDICTED]
                    cells.append(f"{float(b[PREDICTED]) / float(a[PREDICTED]):.2f}"
                                 if both else "-")
                lines.append([label, prec, layout, *cells])
    headers = ["GPU", "precision", "layout"] + [h for n in pair_ns
                                                for h in (str(n), str(n + 1), f"{n + 1}/{n}")]
    return markdown_table(headers, lines, set(range(3, len(headers))))


def m_k(model: Model) -> str:
    values = (4088, 4092, 4094, 4095, 4096, 4097, 4100, 4104)
    rows = []
    for dim in ("M", "K"):
        for v in values:
            m, k = (v, 4096) if dim == "M" else (4096, v)
            rows.append({"gpu": GPUS[0][1], **as_run("fp16", m, 4096, k)})
    preds = model.run(rows)
    base = float(next(p for r, p in zip(rows, preds) if r["m"] == 4096 and r["k"] == 4096
                      and r["n"] == 4096)[PREDICTED])
    lines = []
    i = 0
    for dim in ("M", "K"):
        for v in values:
            p = preds[i]
            i += 1
            # The model's row is tcbench's D^T = B^T A^T: its a is tcbench's B, its b is A.
            al = {x[0]: x[1:] for x in p["alignment"].split()}
            lines.append([dim, str(v), f"{al['b']} / {al['a']} / {al['c']}", f1(p[PREDICTED]),
                          f"{float(p[PREDICTED]) / base:.2f}"])
    return markdown_table(["swept", "value", "alignment A / B / D (bytes)",
                           "predicted TFLOP/s (model)", "vs 4096"], lines, {1, 3, 4})


def family_bandwidth_efficiency(tool: Path, family: str) -> float:
    """bandwidth_efficiency of a family from the compiled-in constants (its inherit chain)."""
    rows = {(r["scope"], r["name"]): r["value"] for r in model_cmd.constants(tool)}
    scope = family
    while scope:
        if (scope, "bandwidth_efficiency") in rows:
            return float(rows[(scope, "bandwidth_efficiency")])
        scope = rows.get((scope, "inherit"), "")
    raise ValueError(f"no bandwidth_efficiency for {family}")


def padding(model: Model, gpu_table: dict) -> str:
    lines = []
    for label, dev in GPUS:
        gbps, family = gpu_table[dev]
        bw = gbps * 1e9 * family_bandwidth_efficiency(model.tool, family)
        for nt in (False, True):
            rows = [{"gpu": dev, **as_run("fp16", 4096, n, 4096, nt=nt)} for n in (33, 40, 48)]
            p33, *padded = model.run(rows)
            for to, p in zip((40, 48), padded):
                # The copy reads B's 4096 x 33 FP16 elements and writes 4096 x to of them.
                copy_us = 4096 * (33 + to) * 2 / bw * 1e6
                total = float(p["predicted_us"]) + copy_us
                wins = "yes" if total < float(p33["predicted_us"]) else "no"
                lines.append([label, "nt" if nt else "nn", str(to),
                              f"{float(p33['predicted_us']):.2f}",
                              f"{float(p['predicted_us']):.2f}", f"{copy_us:.2f}", f"{total:.2f}",
                              wins])
    return markdown_table(["GPU", "layout", "as", "GEMM 33 (us)", "padded GEMM (us)",
                           "pad copy (us)", "padded + copy (us)", "padding wins (model)"], lines,
                          {2, 3, 4, 5, 6})


def batched(model: Model) -> str:
    shapes = (("S = QK^T", 128, 128, 64), ("S = QK^T", 128, 128, 65), ("O = PV", 128, 64, 128),
              ("O = PV", 128, 65, 128))
    heads = (32, 33, 64, 65)
    lines = []
    for label, dev in GPUS:
        rows = [{"gpu": dev, **as_run("fp16", m, n, k, h)} for _, m, n, k in shapes for h in heads]
        preds = iter(model.run(rows))
        for form, m, n, k in shapes:
            for h in heads:
                p = next(preds)
                lines.append([label, form, f"{m} x {n} x {k}", str(h), f1(p[PREDICTED]),
                              f"{float(p['predicted_us']):.2f}", p["regime"], p["alignment"]])
    return markdown_table(["GPU", "GEMM", "m x n x k", "heads", "predicted TFLOP/s (model)",
                           "predicted us", "regime", "alignment"], lines, {3, 4, 5})


def accuracy(rep: model_cmd.Report) -> str:
    return model_cmd.markdown(rep)


def published_pairs(scored: list[model_cmd.Scored]) -> str:
    """The published alignment pairs beside the model, per source sweep and alignment class."""
    ps = model_cmd.pairs([s for s in scored if s.predicted_us is not None])
    groups: dict[tuple, list[model_cmd.Pair]] = {}
    for p in ps:
        r = p.misaligned.row
        cls = min(int(x[1:]) for x in p.misaligned.alignment.split())
        groups.setdefault((r.gpu, r.series, cls), []).append(p)
    lines = []
    for (gpu, series, cls), group in sorted(groups.items()):
        meas = [p.measured for p in group]
        pred = [p.predicted for p in group]
        src = group[0].misaligned.row.source.split("#")[0]
        lines.append([gpu, f"{series} ({src})", f"{cls}-byte", str(len(group)),
                      f"{model_cmd.quantile(meas, .5):.2f} ({model_cmd.quantile(meas, .1):.2f}-"
                      f"{model_cmd.quantile(meas, .9):.2f})", f"{model_cmd.quantile(pred, .5):.2f}",
                      f"{sum(p.within for p in group) / len(group):.0%}"])
    return markdown_table(["GPU", "published sweep (source)", "misaligned class", "pairs",
                           "measured slowdown, median (p10-p90)", "model's slowdown, median",
                           "model within 1.5x"], lines, {3, 4, 5, 6})


def leave_one_out() -> str:
    """The fit's leave-one-GPU-out scores: each GPU's rows predicted by constants fitted on every
    other GPU's rows only."""
    report = json.loads(FIT_REPORT.read_text(encoding="utf-8"))

    def cells(s: dict | None) -> list[str]:
        if not s:
            return ["-"] * 4
        return [str(s["rows"]), f"{s['median']:.2f}", f"{s['p10']:.2f}", f"{s['p90']:.2f}"]

    lines = []
    for s in report["loo"]:
        mis, pairs = s.get("misaligned"), s.get("pairs")
        mis_cells = [str(mis["rows"]), f"{mis['median']:.2f}"] if mis else ["-", "-"]
        pair_cell = f"{pairs['within_2x']} of {pairs['pairs']}" if pairs else "-"
        lines.append([s["gpu"], *cells(s), *cells(s.get("aligned_100us")), *mis_cells,
                      pair_cell])
    return markdown_table(["GPU left out", "rows", "median", "p10", "p90",
                           "aligned >= 100 us: rows", "median", "p10", "p90", "misaligned: rows",
                           "median", "alignment pairs within 2x"], lines, set(range(1, 11)))


def held_out_rows(scored: list[model_cmd.Scored], preds: dict[int, dict]) -> str:
    """Every held-out row (never fitted on) with the shipped model's prediction."""
    lines = []
    for s in scored:
        r = s.row
        if r.use != "held_out" or s.predicted_us is None:
            continue
        lines.append([r.gpu, model_cmd.source_of(r), r.precision,
                      f"{r.m} x {r.n} x {r.k} x {r.batch}", f"{r.measured_tflops:.1f}",
                      f"{r.flops / s.predicted_us / 1e6:.1f}", f"{s.ratio:.2f}",
                      preds[id(r)]["model_basis"]])
    return markdown_table(["GPU", "source", "precision", "m x n x k x batch",
                           "measured TFLOP/s (published)", "predicted TFLOP/s (model)",
                           "predicted / measured", "basis"], lines, {4, 5, 6})


def tables(tool: Path) -> dict[str, str]:
    model = Model(tool)
    rows = published.load()
    scored = model_cmd.score(tool, rows)
    preds = {id(r): p for r, p in zip(rows, model_cmd.predict_rows(tool, rows))}
    rep = model_cmd.build_report(scored)
    bars = spread(scored)
    gpu_table = {}
    for r in csv.DictReader(io.StringIO(model_cmd.run_tool(tool, ["gpus"]))):
        gpu_table[r["device"]] = (float(r["memory_gbps"]), r["family"])
    return {"n-sweep": n_sweep(model, bars), "pairs": pairs(model), "m-k": m_k(model),
            "padding": padding(model, gpu_table), "batched": batched(model),
            "accuracy": accuracy(rep), "published-pairs": published_pairs(scored),
            "leave-one-out": leave_one_out(), "held-out": held_out_rows(scored, preds)}


def between(text: str, name: str) -> str | None:
    tag = re.escape(name)
    m = re.search(rf"<!-- predicted:{tag} -->\n(.*?)<!-- /predicted:{tag} -->", text, re.DOTALL)
    return m.group(1) if m else None


def write(text: str, fresh: dict[str, str]) -> str:
    for name, table in fresh.items():
        tag = re.escape(name)
        pattern = rf"(<!-- predicted:{tag} -->\n).*?(<!-- /predicted:{tag} -->)"
        text, n = re.subn(pattern, lambda m, t=table: m.group(1) + t + m.group(2), text,
                          flags=re.DOTALL)
        if n != 1:
            raise ValueError(f"{PAGE} has no <!-- predicted:{name} --> markers")
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tool", type=Path)
    ap.add_argument("--write", action="store_true", help=f"update {PAGE}")
    args = ap.parse_args(argv)
    fresh = tables(model_cmd.find_or_build_tool(args.tool))
    if args.write:
        PAGE.write_text(write(PAGE.read_text(encoding="utf-8"), fresh), encoding="utf-8")
        print(f"wrote {len(fresh)} tables into {PAGE}", file=sys.stderr)
    else:
        for name, table in fresh.items():
            print(f"<!-- predicted:{name} -->\n{table}<!-- /predicted:{name} -->\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
