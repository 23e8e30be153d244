"""``tcbench model``: the GEMM time model without a GPU.

``predict IN.csv [--out OUT.csv]`` runs the model (the C++ of gemm_prediction.hpp, through the
host tool tcbench_model that the studies preset builds) on rows of GEMMs. ``check [DATA...]``
scores it against published measurements (data/published/ by default): predicted over measured
TFLOP/s per GPU and precision, the rows the constants were fitted on apart from the held-out
ones, and the alignment pairs; it exits 1 when the median over the held-out aligned GEMMs of at
least 100 us leaves [0.85, 1.15] (the rows it was fitted on are no evidence).

Host-timed sources (a wall clock around each synchronized call) measured more than the GPU did:
``check`` adds each such series' per-call overhead (the constants' scope measurement, fitted on
that series; ``tcbench_model constants`` prints them) to the model's device time before
comparing. Standard library only.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tcbench_tools import build, files, published, studies
from tcbench_tools.doc import Doc
from tcbench_tools.errors import EXIT_FAIL, EXIT_OK, InputError
from tcbench_tools.printable import printable, printable_lines

TOOL = "tcbench_model"
GATE = (0.85, 1.15)  # held-out aligned GEMMs of >= 100 us: the median predicted/measured
SIZE_CLASSES = (("< 10 us", 0.0, 10.0), ("10-100 us", 10.0, 100.0), (">= 100 us", 100.0, 1e30))
PAIR_WITHIN = 1.5  # a pair's predicted slowdown is "right" within this factor of the measured


def find_or_build_tool(tool: Path | None = None) -> Path:
    """An explicit --tool; in a source tree the studies preset's tcbench_model, built now
    (studies.ensure_tools: incremental, so never a tool older than its sources); in an installed
    bundle (no sources) its bin/tcbench_model."""
    if tool is not None:
        if not (tool.is_file()):
            raise InputError(f"--tool {tool}: no such file.")
        return tool
    repo = build.repo_root()
    if studies.is_source_tree(repo):
        return studies.build_tool(repo, TOOL, who="tcbench model", quiet_stdout=True)
    found = studies.find_tool(repo, [repo / "bin"], elsewhere=False, name=TOOL)
    if found is None:
        raise InputError(f"no {TOOL} in {repo / 'bin'} and no sources to build it from: give "
                         "--tool.")
    return found


def run_tool(tool: Path, args: list[str], stdin: str | None = None) -> str:
    try:
        done = subprocess.run([str(tool), *args], input=stdin, capture_output=True, text=True,
                              timeout=600, check=False)
    except subprocess.TimeoutExpired:
        raise InputError(f"{tool.name} ran past 600 s.") from None
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
        message = message.split(": ", 1)[1] if message.startswith(str(tool)) else message
        raise InputError(message or f"{tool.name} failed (exit {done.returncode}).")
    return done.stdout


def peaks(tool: Path) -> dict[tuple[str, str], float]:
    """(peak-table GPU name, precision) -> dense datasheet TFLOP/s, from the C++ peak table."""
    out = {}
    for row in csv.DictReader(io.StringIO(run_tool(tool, ["gpus"]))):
        out[(row["gpu"], row["precision"])] = float(row["peak_tflops"])
    return out


def geforce_gpus(tool: Path) -> set[str]:
    """The peak-table GPUs that are GeForce boards (they boost above the datasheet's clock)."""
    return {row["gpu"] for row in csv.DictReader(io.StringIO(run_tool(tool, ["gpus"])))
            if row["geforce"] == "1"}


def constants(tool: Path) -> list[dict]:
    """The compiled-in model constants, as rows scope, name, value, provenance."""
    return list(csv.DictReader(io.StringIO(run_tool(tool, ["constants"]))))


def host_overheads(tool: Path) -> dict[str, float]:
    """series -> per-call host overhead in us (the constants' scope measurement)."""
    out = {}
    for row in constants(tool):
        if row["scope"].strip() == "measurement":
            name = row["name"].strip()
            if name.startswith("host_overhead_us:"):
                out[name.split(":", 1)[1]] = float(row["value"])
    return out


def host_overhead(overheads: dict[str, float], series: str) -> float:
    """The overhead of the longest key that is the series or a prefix of it ("cookbook-mm" for
    "cookbook-mm-ksweep_low"); 0 when none is."""
    keys = [k for k in overheads if series == k or series.startswith(k + "-")]
    return overheads[max(keys, key=len)] if keys else 0.0


@dataclass
class Scored:
    row: published.Measurement
    predicted_us: float | None  # the model's time plus the host overhead of host-timed rows
    model_us: float | None
    aligned: bool
    alignment: str
    regime: str
    note: str

    @property
    def ratio(self) -> float | None:
        """predicted / measured TFLOP/s (> 1: the model is optimistic)."""
        return None if self.predicted_us is None else self.row.measured_us / self.predicted_us


def predict_rows(tool: Path, rows: list[published.Measurement]) -> list[dict]:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["gpu", "precision", "m", "n", "k", "batch", "layout_a", "layout_b", "c_type"])
    for r in rows:
        w.writerow([r.model_gpu, r.precision, r.m, r.n, r.k, r.batch, r.layout_a, r.layout_b,
                    r.c_type])
    with tempfile.TemporaryDirectory(prefix="tcbench-model-") as tmp:
        src = Path(tmp) / "rows.csv"
        src.write_text(buf.getvalue(), encoding="utf-8")
        out = run_tool(tool, ["predict", str(src)])
    return list(csv.DictReader(io.StringIO(out)))


def score(tool: Path, rows: list[published.Measurement],
          overheads: dict[str, float] | None = None) -> list[Scored]:
    overheads = host_overheads(tool) if overheads is None else overheads
    out = []
    for r, p in zip(rows, predict_rows(tool, rows)):
        model_us = float(p["predicted_us"]) if p["predicted_us"] else None
        extra = host_overhead(overheads, r.series) if r.host_timed else 0.0
        out.append(Scored(r, None if model_us is None else model_us + extra, model_us,
                          p["alignment"] == "a16 b16 c16", p["alignment"], p["regime"],
                          p["note"]))
    return out


quantile = published.quantile


@dataclass
class Pair:
    aligned: Scored
    misaligned: Scored

    @property
    def measured(self) -> float:
        return self.aligned.row.measured_tflops / self.misaligned.row.measured_tflops

    @property
    def predicted(self) -> float:
        a = self.aligned.row.flops / self.aligned.predicted_us
        b = self.misaligned.row.flops / self.misaligned.predicted_us
        return a / b

    @property
    def direction_right(self) -> bool:
        return (self.predicted > 1) == (self.measured > 1)

    @property
    def within(self) -> bool:
        r = self.predicted / self.measured
        return 1 / PAIR_WITHIN <= r <= PAIR_WITHIN


def pairs(scored: list[Scored]) -> list[Pair]:
    """published.pairs() of the rows the model predicted, with the predictions beside them."""
    by_row = {id(s.row): s for s in scored if s.predicted_us is not None}
    return [Pair(by_row[id(p.aligned)], by_row[id(p.misaligned)])
            for p in published.pairs([s.row for s in by_row.values()])]


@dataclass
class Summary:
    rows: int
    median: float
    p10: float
    p90: float


def summarize(xs: list[float]) -> Summary | None:
    return Summary(len(xs), quantile(xs, 0.5), quantile(xs, 0.1), quantile(xs, 0.9)) if xs else None


@dataclass
class Report:
    accuracy: list[dict] = field(default_factory=list)
    pairs: list[dict] = field(default_factory=list)
    gate: dict = field(default_factory=dict)
    not_covered: int = 0


def source_of(r: published.Measurement) -> str:
    """The source without its commit: "owner/repo", or "owner/repo#N" for a thread."""
    return r.source_name.split("@", 1)[0]


def _summary(xs: list[float]) -> dict:
    sm = summarize(xs)
    return ({"rows": sm.rows, "median": sm.median, "p10": sm.p10, "p90": sm.p90} if sm else
            {"rows": 0, "median": None, "p10": None, "p90": None})


def build_report(scored: list[Scored]) -> Report:
    """Per data (fit, held_out), GPU and precision: predicted/measured over all rows, over the
    aligned GEMMs of >= 100 us, over the misaligned ones; per data and GPU the alignment pairs;
    each data's totals under GPU "all"."""
    rep = Report()
    rep.not_covered = sum(1 for s in scored if s.predicted_us is None)
    ok = [s for s in scored if s.predicted_us is not None]
    order = {"fit": 0, "held_out": 1}
    groups: dict[tuple, list[Scored]] = {}
    for s in ok:
        for gpu, prec in ((s.row.gpu, s.row.precision), ("all", "all")):
            groups.setdefault((s.row.use, gpu, prec), []).append(s)
    for (use, gpu, prec), members in sorted(groups.items(), key=lambda kv: (
            order[kv[0][0]], kv[0][1] == "all", kv[0][1], kv[0][2])):
        rep.accuracy.append({
            "data": use, "gpu": gpu, "precision": prec,
            "all_sizes": _summary([s.ratio for s in members]),
            "aligned_100us": _summary([s.ratio for s in members
                                       if s.aligned and s.row.measured_us >= 100]),
            "misaligned": _summary([s.ratio for s in members if not s.aligned])})
    by: dict[tuple, list[Pair]] = {}
    for p in pairs(ok):
        for gpu in (p.misaligned.row.gpu, "all"):
            by.setdefault((p.misaligned.row.use, gpu), []).append(p)
    for (use, gpu), ps in sorted(by.items(), key=lambda kv: (order[kv[0][0]], kv[0][1] == "all",
                                                              kv[0][1])):
        rep.pairs.append({
            "data": use, "gpu": gpu, "pairs": len(ps),
            "direction_right": sum(p.direction_right for p in ps) / len(ps),
            "within_1_5x": sum(p.within for p in ps) / len(ps),
            "within_2x": sum(0.5 <= p.predicted / p.measured <= 2 for p in ps) / len(ps),
            "measured_slowdown_median": quantile([p.measured for p in ps], 0.5),
            "predicted_slowdown_median": quantile([p.predicted for p in ps], 0.5)})
    gate_rows = [s.ratio for s in ok
                 if s.row.use == "held_out" and s.aligned and s.row.measured_us >= 100]
    sm = summarize(gate_rows)
    rep.gate = {"data": "held_out", "rows": len(gate_rows), "median": sm.median if sm else None,
                "range": list(GATE), "pass": bool(sm) and GATE[0] <= sm.median <= GATE[1]}
    return rep


def _cells(s: dict) -> list[str]:
    if not s["rows"]:
        return ["0", "-", "-", "-"]
    return [str(s["rows"]), f"{s['median']:.2f}", f"{s['p10']:.2f}", f"{s['p90']:.2f}"]


def markdown(rep: Report) -> str:
    doc = Doc()
    doc.para("Accuracy of the GEMM time model: predicted / measured TFLOP/s (1 = exact; > 1: the "
             "model is optimistic). data: fit = rows the constants were fitted on; held_out = "
             "rows never fitted on (the evidence).")
    rows = []
    for a in rep.accuracy:
        mis = a["misaligned"]
        rows.append([a["data"], a["gpu"], a["precision"], *_cells(a["all_sizes"]),
                     *_cells(a["aligned_100us"]), str(mis["rows"]),
                     f"{mis['median']:.2f}" if mis["rows"] else "-"])
    doc.table(["data", "GPU", "precision", "rows", "median", "p10", "p90",
               "aligned >= 100 us: rows", "median", "p10", "p90", "misaligned: rows", "median"],
              rows, set(range(3, 13)))
    doc.para("Alignment pairs: a misaligned GEMM and its nearest 16-byte-aligned neighbour of the "
             "same sweep; slowdown = aligned over misaligned TFLOP/s.")
    doc.table(["data", "GPU", "pairs", "direction right", "within 1.5x", "within 2x",
               "measured slowdown (median)", "predicted slowdown (median)"],
              [[p["data"], p["gpu"], str(p["pairs"]), f"{p['direction_right']:.0%}",
                f"{p['within_1_5x']:.0%}", f"{p['within_2x']:.0%}",
                f"{p['measured_slowdown_median']:.2f}", f"{p['predicted_slowdown_median']:.2f}"]
               for p in rep.pairs], set(range(2, 8)))
    g = rep.gate
    verdict = "pass" if g["pass"] else "FAIL"
    median = f"{g['median']:.3f}" if g["median"] is not None else "none"
    doc.para(f"Gate: held-out aligned GEMMs of >= 100 us, {g['rows']} rows, median {median}, "
             f"must be between {GATE[0]} and {GATE[1]}: {verdict}." + (
                 f" {rep.not_covered} rows the model does not cover (no prediction)."
                 if rep.not_covered else ""))
    return doc.markdown()


def cmd_predict(args) -> int:
    tool = find_or_build_tool(args.tool)
    src = Path(args.input)
    if str(src) != "-":
        files.check_regular(src, "CSV file")
    out = run_tool(tool, ["predict", str(src)], None)
    if args.out is None:  # a terminal: the rows' control characters escaped (--out keeps them)
        sys.stdout.write(printable_lines(out))
    else:
        Path(args.out).write_text(out, encoding="utf-8")
        n = max(0, out.count("\n") - 1)
        print(f"tcbench model: {n} rows -> {args.out}", file=sys.stderr)
    return EXIT_OK


def cmd_check(args) -> int:
    tool = find_or_build_tool(args.tool)
    rows = published.load(args.data or None)
    if not rows:
        raise InputError("no measurement rows in "
                         f"{', '.join(str(p) for p in args.data) or published.DATA_DIR}: "
                         "nothing to check.")
    problems = published.check(rows, peaks(tool), geforce_gpus(tool))
    if problems:
        for p in problems[:20]:  # a file name from the command line may hold anything
            print(f"tcbench model check: {printable(p)}", file=sys.stderr)
        raise InputError(f"{len(problems)} problems in the published data (above).")
    rep = build_report(score(tool, rows))
    if args.json:
        print(json.dumps({"accuracy": rep.accuracy, "pairs": rep.pairs, "gate": rep.gate,
                          "not_covered": rep.not_covered}, indent=1))
    else:
        sys.stdout.write(markdown(rep))
    return EXIT_OK if rep.gate["pass"] else EXIT_FAIL
