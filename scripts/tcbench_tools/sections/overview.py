"""The report's general parts, one ``render_*`` each: the title (with the synthetic-data banner),
the introduction, the GPUs and their runs, peak vs best achieved, the best result per topic and
precision, every sweep, and what was skipped or failed.

``report.build`` calls them around the topic sections (the other modules of this package); like
those, each appends blocks to a ``doc.Doc`` and returns the PNGs it wrote. Unlike them, they
run for every report whatever the topics, so they have no ``TOPIC``.

Every table has one row per GPU (or per precision and GPU): 20 GPUs make a longer table, never
a wider one. Every best figure names the benchmark that achieved it (abbreviated, the full name
as its title) and links to the sweep it belongs to (``SweepIndex``): in HTML to the sweep's
heading, in Markdown to its PNG.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tcbench_tools import plots, power, power_report, schema, summary, synthetic
from tcbench_tools.doc import Cell
from tcbench_tools.names import precision_order, short, short_path
from tcbench_tools.results import THROUGHPUT_UNITS, ResultSet, pct_of_peak
from tcbench_tools.schema import GBPS, TFLOPS, TOPS
from tcbench_tools.sections import _fp8_accumulator
from tcbench_tools.sections._common import percentiles, save, slug
from tcbench_tools.sections._glance import problems_anchor
from tcbench_tools.summary import Best
from tcbench_tools.tables import fmt_num

MIN_SWEEP_POINTS = 3
_GEMM_METRICS = (TFLOPS, TOPS)
_PEAK_META = re.compile(r"(^|_)(source|max_clock)$")
# The GPUs table: context keys, one column each, a row per GPU.
GPU_COLUMNS = (("compute capability", "compute_capability"), ("SMs", "sm_count"),
               ("driver", "driver_version"), ("CUDA runtime", "cuda_runtime"),
               ("cuBLASLt", "cublaslt_version"), ("peaks from", "peak_source"))

# summary.best_results: (topic, precision, metric, regime)
BestBy = dict[tuple[str, str, str, str], Best]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def render_title(doc, synthetic_paths: list[str]) -> None:
    """The report's title, and the banner when any input is synthetic test data."""
    doc.heading(1, "tcbench report")
    if synthetic_paths:
        doc.banner(synthetic.banner(synthetic_paths))


# ---------------------------------------------------------------------------------------------
# GPUs and runs


def _file_cell(rs: ResultSet):
    shown = short_path(rs.path)
    return Cell(shown, title=rs.path) if shown != rs.path else rs.path


def _date(context: dict) -> str:
    raw = context.get("date")
    if not isinstance(raw, str) or not raw:
        return "-"
    # Google Benchmark's ISO date: "2026-01-01T00:00:00+00:00" -> "2026-01-01 00:00 +00:00".
    m = re.match(r"^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d)(?::\d\d(?:\.\d+)?)?(.*)$", raw)
    return f"{m.group(1)} {m.group(2)} {m.group(3)}".strip() if m else raw


def _mode(context: dict) -> str:
    quick = str(context.get(schema.QUICK, "")).lower()
    return {"true": "quick", "false": "full"}.get(quick, "-")


def repetitions(rs: ResultSet) -> str:
    """How many repetitions the benchmarks that ran have: "5", or "1-5" when they differ."""
    counts = []
    for bench in rs.benchmarks.values():
        sample = bench.sample("time") if bench.ok else None
        if sample is not None:
            counts.append(sample.count)
    if not counts:
        return "-"
    low, high = min(counts), max(counts)
    return str(low) if low == high else f"{low}-{high}"


def measured_clock(rs: ResultSet) -> str:
    """The median SM clock NVML saw while the benchmarks ran (their sm_clock_mhz counters), with
    the range; "-" when the results have no clock counters."""
    clocks = [p.clock_mhz for b in rs.benchmarks.values() if b.ok
              and (p := power.of(b, rs.context)).clock_mhz is not None]
    if not clocks:
        return "-"
    return (f"{statistics.median(clocks):.0f} MHz ({min(clocks):.0f}-{max(clocks):.0f})"
            if min(clocks) != max(clocks) else f"{clocks[0]:.0f} MHz")


def _tcbench(context: dict) -> str:
    version, sha = context.get(schema.VERSION), context.get("git_sha")
    if not version and not sha:
        return "-"
    return f"{version or '?'} ({str(sha)[:12]})" if sha else str(version)


def render_gpus(doc, sets: list[ResultSet], labels: list[str]) -> None:
    """Two tables, a row per GPU each: the GPU and its software, then the run (the header a
    reader needs before comparing: when, how long, with which tcbench, at which clock)."""
    doc.heading(2, "GPUs")
    named = any(label != str(rs.context.get("gpu_name", label)) for rs, label in zip(sets, labels))
    headers = ["GPU", *(["model"] if named else []), *(h for h, _ in GPU_COLUMNS)]
    rows = []
    for rs, label in zip(sets, labels):
        row = [label, *([str(rs.context.get("gpu_name", "-"))] if named else [])]
        row += [str(rs.context.get(key, "-")) for _, key in GPU_COLUMNS]
        rows.append(row)
    doc.table(headers, rows, set(), cls="compact")
    doc.heading(3, "Runs")
    doc.para("Per GPU: when it ran (Google Benchmark's date), on which host, the quick or full "
             "suite, the repetitions per benchmark, the tcbench version and commit, and the SM "
             "clock NVML measured while the benchmarks ran (median and range; - without the "
             "clock counters).")
    rows = [[label, str(rs.context.get("host_name", "-")), _date(rs.context), _mode(rs.context),
             repetitions(rs), _tcbench(rs.context), measured_clock(rs), _file_cell(rs)]
            for rs, label in zip(sets, labels)]
    doc.table(["GPU", "host", "run date", "mode", "repetitions", "tcbench", "SM clock (measured)",
               "file"], rows, {4}, cls="compact")


# ---------------------------------------------------------------------------------------------
# Sweeps: found once, so that best results can link to theirs


@dataclass
class Sweep:
    topic: str
    variant: str
    precision: str
    metric: str
    axis: str
    fixed: str  # "n:4096, k:4096" or ""
    lines: dict[str, list[plots.Point]]
    members: set[tuple[str, str]] = field(default_factory=set)  # (GPU label, benchmark name)
    anchor: str = ""  # the HTML id of its heading
    file: str = ""  # its PNG beside report.md

    @property
    def title(self) -> str:
        fixed = f" ({self.fixed})" if self.fixed else ""
        return f"{self.topic}/{self.variant}/{self.precision}{fixed}: " \
               f"{THROUGHPUT_UNITS[self.metric]} vs {self.axis}"


def _join(*parts: str) -> str:
    return ", ".join(p for p in parts if p)


def _point(x: float, sample) -> plots.Point:
    spread = percentiles(sample.values)
    return plots.Point(x, sample.center, *(spread or (None, None)))


def find_sweeps(sets: list[ResultSet], labels: list[str]) -> list[Sweep]:
    """Benchmarks that differ in one numeric argument (or in several that stay equal, as m=n=k),
    per (topic, variant, precision, metric) and the words the names hold (layout:nn and layout:nt
    are two sweeps, as are accum:fast and accum:split). Each point carries the median and the
    p10-p90 spread of its repetitions."""
    # (topic, variant, precision, metric, words) -> [(gpu, numeric args, sample, name)]
    groups: dict[tuple, list[tuple]] = defaultdict(list)
    for rs, label in zip(sets, labels):
        for bench in rs.benchmarks.values():
            if _fp8_accumulator.owns(bench):
                continue  # the FP8 accumulator section plots these against K, as errors
            metric = bench.throughput_metric()
            sample = bench.sample(metric) if metric else None
            if sample is None:
                continue
            p = bench.parsed
            groups[(p.topic, p.variant, p.precision, metric, tuple(p.word_args().items()))].append(
                (label, p.numeric_args(), sample, bench.name))
    sweeps = []
    for (topic, variant, precision, metric, words), entries in groups.items():
        worded = ", ".join(f"{k}:{v}" for k, v in words)
        names = list(dict.fromkeys(k for _, args, _, _ in entries for k in args))  # name order
        varying = [k for k in names if len({args.get(k) for _, args, _, _ in entries}) > 1]
        if not varying:
            continue
        candidates: list[tuple[str, str, list[tuple]]] = []
        if len(varying) > 1:
            # Square sweeps: every varying argument equal within each benchmark (m = n = k).
            square = [(g, args[varying[0]], s, n) for g, args, s, n in entries
                      if all(k in args for k in varying)
                      and len({args[k] for k in varying}) == 1]
            fixed = ", ".join(f"{k}:{entries[0][1][k]:g}" for k in names
                              if k not in varying and k in entries[0][1])
            candidates.append(("=".join(varying), _join(fixed, worded), square))
        for axis in varying:
            by_rest: dict[tuple, list[tuple]] = defaultdict(list)
            for g, args, s, n in entries:
                if axis in args:
                    rest = tuple((k, args.get(k)) for k in names if k != axis)
                    by_rest[rest].append((g, args[axis], s, n))
            for rest, pts in by_rest.items():
                if len(pts) < MIN_SWEEP_POINTS:
                    continue  # too short to be a sweep on any GPU (cheap at 100k benchmarks)
                fixed = ", ".join(f"{k}:{val:g}" for k, val in rest if val is not None)
                candidates.append((axis, _join(fixed, worded), pts))
        for axis, fixed, pts in candidates:
            xs: dict[str, set[float]] = defaultdict(set)
            for g, x, _, _ in pts:
                xs[g].add(x)
            if max((len(v) for v in xs.values()), default=0) < MIN_SWEEP_POINTS:
                continue
            # A GPU with one point of a sweep another GPU ran ran a neighbouring benchmark, not
            # this sweep: a lone dot would read as a measurement of it.
            pts = [e for e in pts if len(xs[e[0]]) >= 2]
            lines: dict[str, list[plots.Point]] = defaultdict(list)
            for g, x, s, _ in pts:
                lines[g].append(_point(x, s))
            sweeps.append(Sweep(topic, variant, precision, metric, axis, fixed,
                                {g: sorted(p, key=lambda q: q.x) for g, p in lines.items()},
                                {(g, n) for g, _, _, n in pts}))
    sweeps.sort(key=lambda s: (s.topic, s.variant, precision_order(s.precision), s.axis, s.fixed))
    for i, sw in enumerate(sweeps, start=1):
        sw.anchor = f"sweep-{i:02d}"
        tag = slug(f"{sw.topic}_{sw.variant}_{sw.precision}_{sw.axis}_{sw.fixed}")
        sw.file = f"sweep_{i:02d}_{tag}.png"
    return sweeps


class SweepIndex:
    """The report's sweeps, found once, and which sweep each GPU's benchmark belongs to (the
    one with the most points for it, the first of those on a tie)."""

    def __init__(self, sets: list[ResultSet], labels: list[str]):
        self.sweeps = find_sweeps(sets, labels)
        self._of: dict[tuple[str, str], Sweep] = {}
        for sw in self.sweeps:
            for label, name in sw.members:
                have = self._of.get((label, name))
                if have is None or len(sw.lines[label]) > len(have.lines[label]):
                    self._of[(label, name)] = sw

    def of(self, label: str, benchmark: str) -> Sweep | None:
        return self._of.get((label, benchmark))

    def cell(self, label: str, benchmark: str):
        """The benchmark, abbreviated, its full name as the title, linked to its sweep."""
        sw = self.of(label, benchmark)
        return Cell(short(benchmark), title=benchmark, anchor=sw.anchor if sw else None,
                    file=sw.file if sw else None)


# ---------------------------------------------------------------------------------------------
# Best results


def render_peak_vs_achieved(doc, sets: list[ResultSet], labels: list[str], best: list[BestBy],
                            out_dir: Path, sweeps: SweepIndex) -> list[Path]:
    """Per precision, each card's peak beside its best GEMM-style throughput and the benchmark
    that reached it: a row per precision and GPU, and one bar panel per precision."""
    peak: dict[tuple[str, str], float] = {}
    achieved: dict[tuple[str, str], Best] = {}
    for rs, label, b in zip(sets, labels, best):
        for (topic, prec, metric, _), item in b.items():
            # tensor_peak measures the instructions' ceiling, not an achieved GEMM.
            if metric in _GEMM_METRICS and topic != "tensor_peak":
                have = achieved.get((label, prec))
                if have is None or item.value > have.value:
                    achieved[(label, prec)] = item
        for key in rs.context:
            prec = key[len("peak_"):]
            # peak_<p> only: not peak_gbps, peak_source, peak_<p>_max_clock or peak_<p>_source.
            if key.startswith("peak_") and not _PEAK_META.search(prec) and prec != GBPS \
                    and rs.peak(prec):
                peak[(label, prec)] = rs.peak(prec)
    shown = sorted({p for (_, p) in achieved}, key=precision_order)
    if not shown:
        return []
    doc.heading(2, "Peak vs best achieved")
    rows, missing = [], {}
    with_gemms = {label for label, _ in achieved}  # a GPU without any GEMM result has no row
    for prec in shown:
        for rs, label in zip(sets, labels):
            if label not in with_gemms:
                continue
            pk, got = peak.get((label, prec)), achieved.get((label, prec))
            if got is None:
                missing[(label, prec)] = "not supported" if rs.lacks(prec) else "no data"
                rows.append([prec, label, "n/a" if rs.lacks(prec) else fmt_num(pk)] +
                            ["n/a" if rs.lacks(prec) else "-"] * 3)
                continue
            rows.append([prec, label, fmt_num(pk), fmt_num(got.value),
                         _pct(pct_of_peak(got.value, pk)), sweeps.cell(label, got.benchmark)])
    path = plots.peak_vs_achieved(shown, [g for g in labels if g in with_gemms], peak,
                                  {k: v.value for k, v in achieved.items()},
                                  out_dir / "peak_vs_achieved.png", missing)
    doc.image(path, "Best achieved (solid) inside the peak (outline), one panel per precision, "
                    "a bar per GPU")
    doc.collapsed_table("Peak vs best achieved: the numbers",
                        ["precision", "GPU", "peak", "best", "% of peak", "benchmark"], rows,
                        {2, 3, 4})
    return [path]


def baseline_name(variant: str) -> str:
    """What an FP32 speed-up is over: the library (cuBLASLt, cuBLAS) or tcbench's own kernel
    ("SIMT FP32 kernel"): FP16 at 42.7x a SIMT kernel at 30 % of its peak is not a hardware
    ratio, so the column says which it is."""
    if variant == "cublaslt":
        return "cuBLASLt FP32"
    if variant == "cublas":
        return "cuBLAS FP32"
    return f"{variant.upper() if variant == 'simt' else variant} FP32 kernel"


def fp32_baselines(rs: ResultSet, topic: str) -> dict[str, float]:
    """The best FP32 TFLOP/s of the topic's GEMMs per baseline (baseline_name), library first
    (a whole training step is no baseline)."""
    out: dict[str, float] = {}
    for bench in rs.find(topic, precision="fp32", ran=True,
                         where=lambda p: {"m", "n", "k"} <= p.args.keys()):
        value = bench.center(TFLOPS) if bench.throughput_metric() == TFLOPS else None
        if value is None or value <= 0 or bench.impossible() is not None:
            continue
        name = baseline_name(bench.parsed.variant)
        out[name] = max(out.get(name, 0.0), value)
    return dict(sorted(out.items(), key=lambda kv: (not kv[0].startswith("cuBLAS"), kv[0])))


def render_topic_tables(doc, sets: list[ResultSet], labels: list[str], best: list[BestBy],
                        sweeps: SweepIndex) -> None:
    """Per topic, a row per precision and GPU: best, % of peak, the speed-up over each FP32
    baseline the topic ran (named: cuBLASLt FP32, SIMT FP32 kernel), the benchmark; each topic's
    table collapsed under its heading."""
    topics = sorted({k[0] for b in best for k in b})
    if not topics:
        return
    doc.heading(2, "Best result per topic and precision")
    doc.prose("Throughput is the median over repetitions of the best benchmark per topic and "
              "precision (the benchmark column names it and links to its sweep); % of peak is "
              "relative to each card's own peak (`peaks from` in the GPUs table says whether it "
              "is the datasheet figure or the max-clock one); an `x` column (`x cuBLASLt FP32`, "
              "`x SIMT FP32 kernel`) is the speed-up over the best FP32 result of the baseline it "
              "names, in the same topic on the same card (the library's, or tcbench's own SIMT "
              "kernel, which is no hardware ratio); n/a: "
              "the card does not support that precision (its peak is 0).")
    ran = [{bench.parsed.topic for bench in rs.benchmarks.values()} for rs in sets]
    for topic in topics:
        keys = sorted({(k[1], k[2], k[3]) for b in best for k in b if k[0] == topic},
                      key=lambda pm: (precision_order(pm[0]), pm[1], pm[2]))
        bases = [fp32_baselines(rs, topic) for rs in sets]
        names = list(dict.fromkeys(n for b in bases for n in b))
        rows = []
        for prec, metric, regime in keys:
            for rs, label, b, topics_ran, base in zip(sets, labels, best, ran, bases):
                if topic not in topics_ran:
                    continue  # the GPU did not run this topic: no row, rather than dashes
                item = b.get((topic, prec, metric, regime))
                head = [f"{prec} ({regime})" if regime else prec, THROUGHPUT_UNITS[metric],
                        label]
                if item is None:
                    rows.append(head + ["n/a" if rs.lacks(prec) else "-"] * (3 + len(names)))
                    continue
                speedups = [f"{item.value / base[n]:.2f}" if n in base and metric in
                            _GEMM_METRICS else "-" for n in names]
                rows.append(head + [fmt_num(item.value) + power_report.mark(rs, item.benchmark),
                                    _pct(item.pct_of_peak), *speedups,
                                    sweeps.cell(label, item.benchmark)])
        doc.collapsed_table(f"Topic: {topic}", ["precision", "unit", "GPU", "best", "% peak",
                                                *(f"x {n}" for n in names), "benchmark"],
                            rows, set(range(3, 5 + len(names))))


def _peaks_for(sweep: Sweep, sets: list[ResultSet], labels: list[str]) -> dict[str, float]:
    """Each GPU's peak for the sweep's metric (DRAM for GB/s), where its context has one."""
    out = {}
    for rs, label in zip(sets, labels):
        value = rs.peak(GBPS if sweep.metric == GBPS else sweep.precision)
        if value and label in sweep.lines:
            out[label] = value
    return out


def render_sweeps(doc, sets: list[ResultSet], labels: list[str], out_dir: Path,
                  sweeps: SweepIndex) -> list[Path]:
    """Every sweep, a line per GPU, grouped by topic, each topic's group collapsed (a best
    result's link opens its sweep); the topic sections above draw each topic's comparison."""
    if not sweeps.sweeps:
        return []
    doc.heading(2, "Sweeps")
    doc.para("Each point is the median over repetitions, its error bar the 10th to the 90th "
             "percentile of the repetitions; a line per GPU, and beside it the same lines as % of "
             "each GPU's own peak. One collapsed group per topic.")
    images = []
    by_topic: dict[str, list[Sweep]] = defaultdict(list)
    for sw in sweeps.sweeps:
        by_topic[sw.topic].append(sw)
    for topic, group in by_topic.items():
        with doc.details(f"Sweeps: {topic}", level=3, anchor=f"sweeps-{slug(topic)}",
                         note=f"{len(group)} plot{'s' if len(group) != 1 else ''}") as inner:
            for sw in group:
                fig = plots.sweep_figure(sw.title, sw.axis, THROUGHPUT_UNITS[sw.metric],
                                         sw.lines, peaks=_peaks_for(sw, sets, labels),
                                         titled=False)
                note = fig.caption_note
                path = save(fig, out_dir / sw.file)
                images.append(path)
                inner.heading(4, sw.title, anchor=sw.anchor)
                inner.image(path, sw.title, caption=False)
                if note:
                    inner.para(note)
    return images


def render_problems(doc, sets: list[ResultSet], labels: list[str]) -> None:
    """What did not run: the skip reasons once each, with the GPUs they apply to; every failure
    and impossible value with its GPU (the first row of each GPU is where its health line in the
    first screen links to)."""
    doc.heading(2, "Skipped and failed")
    skipped: dict[str, list[str]] = defaultdict(list)
    failed = []
    for i, (rs, label) in enumerate(zip(sets, labels)):
        errors, skips = summary.problems(rs)
        for reason, n in skips.most_common():
            skipped[reason].append(f"{label} ({n})")
        mine = [("FAILED", name, msg) for name, msg in errors]
        mine += [("INVALID", name, f"{why} (left out)") for name, why in summary.invalid(rs)]
        for k, (what, name, msg) in enumerate(mine):
            first = Cell(label, ident=problems_anchor(i)) if k == 0 else label
            failed.append([first, what, name, msg])
    if not skipped and not failed:
        doc.para("Every benchmark ran on every GPU." if sets else "No benchmark ran.")
        return
    if failed:
        doc.heading(3, "Failed", anchor="failed")
        doc.table(["GPU", "", "benchmark", "why"], failed, set(), cls="compact")
    if skipped:
        doc.heading(3, "Skipped", anchor="skipped")
        doc.table(["reason", "GPUs (benchmarks skipped)"],
                  [[reason, ", ".join(where)] for reason, where in
                   sorted(skipped.items(), key=lambda kv: (-len(kv[1]), kv[0]))], set())
