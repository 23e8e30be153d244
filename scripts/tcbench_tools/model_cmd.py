"""``tcbench model``: the GEMM time model without a GPU.

``predict IN.csv [--out OUT.csv]`` runs the model (the C++ of gemm_prediction.hpp, through the
host tool tcbench_model that the studies preset builds) on rows of GEMMs. ``check [DATA...]``
scores it against published measurements (data/published/ by default): predicted over measured
TFLOP/s per source and size class, and the alignment pairs; it exits 1 when the median over the
aligned GEMMs of at least 100 us leaves [0.85, 1.15] (the CI gate of issue 32).

Host-timed sources (a wall clock around each synchronized call) measured more than the GPU did:
``check`` adds each such series' per-call overhead (data/model/gemm_model.csv, scope
measurement, fitted on that series) to the model's device time before comparing. Standard
library only.
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
from tcbench_tools.errors import EXIT_FAIL, EXIT_OK, InputError
from tcbench_tools.printable import printable_lines

TOOL = "tcbench_model"
CONSTANTS = Path(__file__).resolve().parents[2] / "data" / "model" / "gemm_model.csv"
GATE = (0.85, 1.15)  # aligned GEMMs of >= 100 us: the median predicted/measured must stay inside
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
        built = studies.ensure_tools(repo, who="tcbench model", quiet_stdout=True) / TOOL
        if not built.is_file():
            raise InputError(f"the studies build finished without {built}.")
        return built
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


def host_overheads(path: Path = CONSTANTS) -> dict[str, float]:
    """series -> per-call host overhead in us (scope measurement of the constants file)."""
    out = {}
    text = files.read_text(path, files.CONFIG_LIMIT, "model constants file")
    for row in csv.DictReader(io.StringIO(text)):
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


def predict_rows(tool: Path, rows: list[published.Measurement],
                 constants: Path | None = None) -> list[dict]:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["gpu", "precision", "m", "n", "k", "batch", "layout_a", "layout_b", "c_type"])
    for r in rows:
        w.writerow([r.model_gpu, r.precision, r.m, r.n, r.k, r.batch, r.layout_a, r.layout_b,
                    r.c_type])
    with tempfile.TemporaryDirectory(prefix="tcbench-model-") as tmp:
        src = Path(tmp) / "rows.csv"
        src.write_text(buf.getvalue(), encoding="utf-8")
        args = ["predict", str(src)] + (["--constants", str(constants)] if constants else [])
        out = run_tool(tool, args)
    return list(csv.DictReader(io.StringIO(out)))


def score(tool: Path, rows: list[published.Measurement], constants: Path | None = None,
          overheads: dict[str, float] | None = None) -> list[Scored]:
    overheads = host_overheads(constants or CONSTANTS) if overheads is None else overheads
    out = []
    for r, p in zip(rows, predict_rows(tool, rows, constants)):
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
    return r.source.split("@", 1)[0] if "@" in r.source else r.source


def build_report(scored: list[Scored]) -> Report:
    rep = Report()
    rep.not_covered = sum(1 for s in scored if s.predicted_us is None)
    ok = [s for s in scored if s.predicted_us is not None]
    groups: dict[tuple, list[float]] = {}
    for s in ok:
        us = s.row.measured_us
        cls = next(c for c, lo, hi in SIZE_CLASSES if lo <= us < hi)
        for src in (source_of(s.row), "all"):
            groups.setdefault((s.row.use, src, "aligned" if s.aligned else "misaligned", cls),
                              []).append(s.ratio)
            groups.setdefault((s.row.use, src, "all", "all sizes"), []).append(s.ratio)
    order = {"fit": 0, "held_out": 1}
    for (use, src, kind, cls), xs in sorted(groups.items(), key=lambda kv: (
            order[kv[0][0]], kv[0][1] == "all", kv[0][1], kv[0][2], kv[0][3])):
        sm = summarize(xs)
        rep.accuracy.append({"data": use, "source": src, "alignment": kind, "size": cls,
                             "rows": sm.rows, "median": sm.median, "p10": sm.p10, "p90": sm.p90})
    by: dict[tuple, list[Pair]] = {}
    for p in pairs(ok):
        for src in (source_of(p.misaligned.row), "all"):
            by.setdefault((p.misaligned.row.use, src), []).append(p)
    for (use, src), ps in sorted(by.items(), key=lambda kv: (order[kv[0][0]], kv[0][1] == "all",
                                                              kv[0][1])):
        rep.pairs.append({
            "data": use, "source": src, "pairs": len(ps),
            "direction_right": sum(p.direction_right for p in ps) / len(ps),
            "within_1_5x": sum(p.within for p in ps) / len(ps),
            "measured_slowdown_median": quantile([p.measured for p in ps], 0.5),
            "predicted_slowdown_median": quantile([p.predicted for p in ps], 0.5)})
    gate_rows = [s.ratio for s in ok if s.aligned and s.row.measured_us >= 100]
    sm = summarize(gate_rows)
    rep.gate = {"rows": len(gate_rows), "median": sm.median if sm else None,
                "range": list(GATE),
                "pass": bool(sm) and GATE[0] <= sm.median <= GATE[1]}
    return rep


def markdown(rep: Report) -> str:
    lines = [("Accuracy of the GEMM time model: predicted / measured TFLOP/s (1 = exact; > 1: the "
              "model is optimistic). data: fit = what the constants were fitted on; held_out = "
              "never fitted on."), "",
             "| data | source | alignment | measured time | rows | median | p10 | p90 |",
             "|---|---|---|---|---|---|---|---|"]
    for a in rep.accuracy:
        lines.append(f"| {a['data']} | {a['source']} | {a['alignment']} | {a['size']} | "
                     f"{a['rows']} | {a['median']:.2f} | {a['p10']:.2f} | {a['p90']:.2f} |")
    lines += ["", ("Alignment pairs: a misaligned GEMM and its nearest 16-byte-aligned neighbour "
                   "of the same sweep; slowdown = aligned over misaligned TFLOP/s."), "",
              ("| data | source | pairs | direction right | within 1.5x | measured slowdown "
               "(median) | predicted slowdown (median) |"), "|---|---|---|---|---|---|---|"]
    for p in rep.pairs:
        lines.append(f"| {p['data']} | {p['source']} | {p['pairs']} | "
                     f"{p['direction_right']:.0%} | {p['within_1_5x']:.0%} | "
                     f"{p['measured_slowdown_median']:.2f} | "
                     f"{p['predicted_slowdown_median']:.2f} |")
    g = rep.gate
    verdict = "pass" if g["pass"] else "FAIL"
    median = f"{g['median']:.3f}" if g["median"] is not None else "none"
    lines += ["", (f"Gate: aligned GEMMs of >= 100 us, {g['rows']} rows, median {median}, must "
                   f"be in [{GATE[0]}, {GATE[1]}]: {verdict}.")]
    if rep.not_covered:
        lines.append(f"{rep.not_covered} rows the model does not cover (no prediction).")
    return "\n".join(lines) + "\n"


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
    problems = published.check(rows, peaks(tool))
    if problems:
        for p in problems[:20]:
            print(f"tcbench model check: {p}", file=sys.stderr)
        raise InputError(f"{len(problems)} problems in the published data (above).")
    rep = build_report(score(tool, rows))
    if args.json:
        print(json.dumps({"accuracy": rep.accuracy, "pairs": rep.pairs, "gate": rep.gate,
                          "not_covered": rep.not_covered}, indent=1))
    else:
        sys.stdout.write(markdown(rep))
    return EXIT_OK if rep.gate["pass"] else EXIT_FAIL
