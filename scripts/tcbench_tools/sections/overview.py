"""The report's general parts, one ``render_*`` each: the introduction, the GPUs, peak vs best
achieved, the best result per topic and precision, every sweep, and what was skipped or failed.

``report.build`` calls them around the topic sections (the other modules of this package); like
those, each appends blocks to a ``report.Doc`` and returns the PNGs it wrote. Unlike them, they
run for every report whatever the topics, so they have no ``TOPIC``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from tcbench_tools import plots, power_report, summary
from tcbench_tools.names import precision_order
from tcbench_tools.results import THROUGHPUT_UNITS, ResultSet, pct_of_peak
from tcbench_tools.schema import TFLOPS, TOPS
from tcbench_tools.sections._common import slug
from tcbench_tools.summary import Best
from tcbench_tools.tables import fmt_num

MIN_SWEEP_POINTS = 3
_GEMM_METRICS = (TFLOPS, TOPS)
_PEAK_META = re.compile(r"(^|_)(source|max_clock)$")
# Context keys of the GPUs table, one row each (a column per GPU: the table grows down, not
# across, with the keys).
GPU_KEYS = ("compute_capability", "sm_count", "driver_version", "cuda_runtime", "cublaslt_version",
            "peak_source", "tcbench_version", "git_sha")

BestBy = dict[tuple[str, str, str], Best]  # summary.best_results: (topic, precision, metric)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def render_intro(doc, sets: list[ResultSet]) -> None:
    doc.heading(1, "tcbench report")
    doc.para(f"{len(sets)} result file(s). Throughput is the median over repetitions of the best "
             "benchmark per topic and precision; % of peak is relative to each card's own peak "
             "(`peak_source` says whether it is the datasheet figure or the max-clock one); "
             "x FP32 is the speed-up over the best FP32 result of the same topic on the same card; "
             "n/a: the card does not support that precision (its peak is 0).")


def render_gpus(doc, sets: list[ResultSet], labels: list[str]) -> None:
    doc.heading(2, "GPUs")
    doc.table(["GPU", *labels],
              [["gpu_name", *(str(rs.context.get("gpu_name", "-")) for rs in sets)],
               ["file", *(rs.path for rs in sets)],
               *([key, *(str(rs.context.get(key, "-")) for rs in sets)] for key in GPU_KEYS)],
              set())


def render_peak_vs_achieved(doc, sets: list[ResultSet], labels: list[str], best: list[BestBy],
                            out_dir: Path) -> list[Path]:
    """Per precision, each card's peak beside its best GEMM-style throughput."""
    peak: dict[tuple[str, str], float] = {}
    achieved: dict[tuple[str, str], float] = {}
    for rs, label, b in zip(sets, labels, best):
        for (topic, prec, metric), item in b.items():
            # tensor_peak measures the instructions' ceiling, not an achieved GEMM.
            if metric in _GEMM_METRICS and topic != "tensor_peak":
                achieved[(label, prec)] = max(achieved.get((label, prec), 0.0), item.value)
        for key in rs.context:
            prec = key[len("peak_"):]
            # peak_<p> only: not peak_gbps, peak_source, peak_<p>_max_clock or peak_<p>_source.
            if key.startswith("peak_") and not _PEAK_META.search(prec) and prec != "gbps" \
                    and rs.peak(prec):
                peak[(label, prec)] = rs.peak(prec)
    shown = sorted({p for (_, p) in achieved}, key=precision_order)
    if not shown:
        return []
    doc.heading(2, "Peak vs best achieved")
    headers = ["precision"]
    for label in labels:
        headers += [f"{label} peak", f"{label} best", f"{label} %"]
    rows = []
    for prec in shown:
        row = [prec]
        for rs, label in zip(sets, labels):
            pk, got = peak.get((label, prec)), achieved.get((label, prec))
            if rs.lacks(prec) and got is None:
                row += ["n/a"] * 3
                continue
            row += [fmt_num(pk), fmt_num(got), _pct(pct_of_peak(got, pk))]
        rows.append(row)
    doc.table(headers, rows, set(range(1, len(headers))))
    path = plots.peak_vs_achieved(shown, labels, peak, achieved, out_dir / "peak_vs_achieved.png")
    doc.image(path, "Peak (pale) vs best achieved (solid) per precision and GPU")
    return [path]


def render_topic_tables(doc, sets: list[ResultSet], labels: list[str],
                        best: list[BestBy]) -> None:
    """Per topic, per precision, the GPUs side by side: best, % of peak, x FP32."""
    for topic in sorted({k[0] for b in best for k in b}):
        doc.heading(2, f"Topic: {topic}")
        keys = sorted({(k[1], k[2]) for b in best for k in b if k[0] == topic},
                      key=lambda pm: (precision_order(pm[0]), pm[1]))
        headers = ["precision", "unit"]
        for label in labels:
            headers += [f"{label}", f"{label} % peak", f"{label} x FP32"]
        rows = []
        for prec, metric in keys:
            row = [prec, THROUGHPUT_UNITS[metric]]
            for rs, b in zip(sets, best):
                item = b.get((topic, prec, metric))
                if item is None and rs.lacks(prec):
                    row += ["n/a"] * 3
                    continue
                base = b.get((topic, "fp32", TFLOPS))
                speedup = "-"
                if item is not None and base is not None and metric in _GEMM_METRICS:
                    speedup = f"{item.value / base.value:.2f}"
                row += [fmt_num(item.value) + power_report.mark(rs, item.benchmark) if item else "-",
                        _pct(item.pct_of_peak if item else None), speedup]
            rows.append(row)
        doc.table(headers, rows, set(range(2, len(headers))))


@dataclass
class Sweep:
    topic: str
    variant: str
    precision: str
    metric: str
    axis: str
    fixed: str  # "n:4096, k:4096" or ""
    lines: dict[str, list[tuple[float, float]]]

    @property
    def title(self) -> str:
        fixed = f" ({self.fixed})" if self.fixed else ""
        return f"{self.topic}/{self.variant}/{self.precision}{fixed}: " \
               f"{THROUGHPUT_UNITS[self.metric]} vs {self.axis}"


def _join(*parts: str) -> str:
    return ", ".join(p for p in parts if p)


def find_sweeps(sets: list[ResultSet], labels: list[str]) -> list[Sweep]:
    """Benchmarks that differ in one numeric argument (or in several that stay equal, as m=n=k),
    per (topic, variant, precision, metric) and the words the names hold (layout:nn and layout:nt
    are two sweeps, as are accum:fast and accum:split)."""
    # (topic, variant, precision, metric, words) -> [(gpu, numeric args, value)]
    groups: dict[tuple, list[tuple[str, dict[str, float], float]]] = defaultdict(list)
    for rs, label in zip(sets, labels):
        for bench in rs.benchmarks.values():
            metric = bench.throughput_metric()
            sample = bench.sample(metric) if metric else None
            if sample is None:
                continue
            p = bench.parsed
            groups[(p.topic, p.variant, p.precision, metric, tuple(p.word_args().items()))].append(
                (label, p.numeric_args(), sample.center))
    sweeps = []
    for (topic, variant, precision, metric, words), entries in groups.items():
        worded = ", ".join(f"{k}:{v}" for k, v in words)
        names = list(dict.fromkeys(k for _, args, _ in entries for k in args))  # name order
        varying = [k for k in names if len({args.get(k) for _, args, _ in entries}) > 1]
        if not varying:
            continue
        candidates: list[tuple[str, str, list[tuple[str, float, float]]]] = []
        if len(varying) > 1:
            # Square sweeps: every varying argument equal within each benchmark (m = n = k).
            square = [(g, args[varying[0]], v) for g, args, v in entries
                      if all(k in args for k in varying)
                      and len({args[k] for k in varying}) == 1]
            fixed = ", ".join(f"{k}:{entries[0][1][k]:g}" for k in names
                              if k not in varying and k in entries[0][1])
            candidates.append(("=".join(varying), _join(fixed, worded), square))
        for axis in varying:
            by_rest: dict[tuple, list[tuple[str, float, float]]] = defaultdict(list)
            for g, args, v in entries:
                if axis in args:
                    rest = tuple((k, args.get(k)) for k in names if k != axis)
                    by_rest[rest].append((g, args[axis], v))
            for rest, pts in by_rest.items():
                if len(pts) < MIN_SWEEP_POINTS:
                    continue  # too short to be a sweep on any GPU (cheap at 100k benchmarks)
                fixed = ", ".join(f"{k}:{val:g}" for k, val in rest if val is not None)
                candidates.append((axis, _join(fixed, worded), pts))
        for axis, fixed, pts in candidates:
            lines: dict[str, list[tuple[float, float]]] = defaultdict(list)
            for g, x, v in pts:
                lines[g].append((x, v))
            if max((len({x for x, _ in p}) for p in lines.values()), default=0) >= MIN_SWEEP_POINTS:
                sweeps.append(Sweep(topic, variant, precision, metric, axis, fixed,
                                    {g: sorted(p) for g, p in lines.items()}))
    sweeps.sort(key=lambda s: (s.topic, s.variant, precision_order(s.precision), s.axis, s.fixed))
    return sweeps


def render_sweeps(doc, sets: list[ResultSet], labels: list[str], out_dir: Path) -> list[Path]:
    sweeps = find_sweeps(sets, labels)
    if not sweeps:
        return []
    doc.heading(2, "Sweeps")
    images = []
    for i, sw in enumerate(sweeps, start=1):
        tag = slug(f"{sw.topic}_{sw.variant}_{sw.precision}_{sw.axis}_{sw.fixed}")
        name = f"sweep_{i:02d}_{tag}.png"
        path = plots.sweep(sw.title, sw.axis, THROUGHPUT_UNITS[sw.metric], sw.lines, out_dir / name)
        images.append(path)
        doc.heading(3, sw.title)
        doc.image(path, sw.title, caption=False)
    return images


def render_problems(doc, sets: list[ResultSet], labels: list[str]) -> None:
    doc.heading(2, "Skipped and failed")
    any_problem = False
    for rs, label in zip(sets, labels):
        errors, skips = summary.problems(rs)
        items = [f"skipped ({n}): {reason}" for reason, n in skips.most_common()]
        items += [f"FAILED `{name}`: {msg}" for name, msg in errors]
        items += [f"INVALID `{name}`: {why} (left out)" for name, why in summary.invalid(rs)]
        if items:
            any_problem = True
            doc.para(f"**{label}**")
            doc.bullets(items)
    if not any_problem:
        doc.para("Every benchmark ran on every GPU.")
