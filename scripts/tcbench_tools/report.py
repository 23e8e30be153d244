"""``tcbench report FILE...``: one result file per GPU -> a generation comparison.

Writes ``<out>/report.md`` with PNG plots beside it and a self-contained ``<out>/report.html``
(the same content, plots embedded as base64 data URIs). Per topic and precision it shows each
GPU's best throughput (median over repetitions of the fastest benchmark), its % of that card's
peak and its speed-up over FP32 on the same card and topic; a bar chart of peak vs achieved per
precision; and a line plot of every sweep (benchmarks that differ in one numeric argument, or in
several that stay equal, as in square m=n=k sweeps), one line per GPU.
"""

from __future__ import annotations

import base64
import html
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tcbench_tools import power_report, summary
from tcbench_tools.errors import InputError
from tcbench_tools.names import precision_order
from tcbench_tools.results import THROUGHPUT_UNITS, ResultSet
from tcbench_tools.tables import fmt_num, markdown_table

MIN_SWEEP_POINTS = 3
_GEMM_METRICS = ("tflops", "tops")
_PEAK_META = re.compile(r"(^|_)(source|max_clock)$")


# ---------------------------------------------------------------------------------------------
# A tiny document model, rendered to Markdown and to HTML


@dataclass
class Doc:
    blocks: list[tuple] = field(default_factory=list)

    def heading(self, level: int, text: str) -> None:
        self.blocks.append(("h", level, text))

    def para(self, text: str) -> None:
        self.blocks.append(("p", text))

    def table(self, headers: list[str], rows: list[list[str]], right: set[int]) -> None:
        self.blocks.append(("table", headers, rows, right))

    def image(self, path: Path, alt: str, caption: bool = True) -> None:
        """``caption=False`` when a heading right above already says what the image shows."""
        self.blocks.append(("img", path, alt, caption))

    def bullets(self, items: list[str]) -> None:
        if items:
            self.blocks.append(("ul", items))

    def markdown(self) -> str:
        out = []
        for block in self.blocks:
            kind = block[0]
            if kind == "h":
                out.append("#" * block[1] + " " + block[2])
            elif kind == "p":
                out.append(block[1])
            elif kind == "table":
                out.append(markdown_table(block[1], block[2], block[3]))
            elif kind == "img":
                out.append(f"![{block[2]}]({block[1].name})")
            elif kind == "ul":
                out.append("\n".join(f"- {item}" for item in block[1]))
            out.append("")
        return "\n".join(out)

    def html(self, title: str) -> str:
        esc = html.escape
        body = []
        for block in self.blocks:
            kind = block[0]
            if kind == "h":
                body.append(f"<h{block[1]}>{esc(block[2])}</h{block[1]}>")
            elif kind == "p":
                body.append(f"<p>{_inline_code(esc(block[1]))}</p>")
            elif kind == "table":
                _, headers, rows, right = block
                cls = lambda i: ' class="num"' if i in right else ""  # noqa: E731
                head = "".join(f"<th{cls(i)}>{esc(h)}</th>" for i, h in enumerate(headers))
                lines = "".join("<tr>" + "".join(f"<td{cls(i)}>{esc(c)}</td>" for i, c in enumerate(r))
                                + "</tr>" for r in rows)
                body.append(f'<div class="wide"><table><thead><tr>{head}</tr></thead>'
                            f"<tbody>{lines}</tbody></table></div>")
            elif kind == "img":
                data = base64.b64encode(block[1].read_bytes()).decode("ascii")
                caption = f"<figcaption>{esc(block[2])}</figcaption>" if block[3] else ""
                body.append(f'<figure><img alt="{esc(block[2])}" src="data:image/png;base64,{data}">'
                            f"{caption}</figure>")
            elif kind == "ul":
                body.append("<ul>" + "".join(f"<li>{_inline_code(esc(i))}</li>" for i in block[1])
                            + "</ul>")
        # Wide tables (many GPUs, long paths) wrap their cells and scroll inside their own box
        # rather than widening the page.
        style = ("body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}"
                 "div.wide{max-width:100%;overflow-x:auto}"
                 "table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;"
                 "padding:.25em .6em;overflow-wrap:anywhere}td.num,th.num{text-align:right}"
                 "img{max-width:100%}code{background:#f4f4f4;padding:0 .2em}")
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>{esc(title)}</title><style>{style}</style></head><body>\n"
                + "\n".join(body) + "\n</body></html>\n")


def _inline_code(text: str) -> str:
    """The two bits of Markdown the report's own text uses: `code` and **bold**."""
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)


# ---------------------------------------------------------------------------------------------
# Data


def _run_name(rs: ResultSet) -> str:
    """The folder of a run's results.json, else the file (or folder) name."""
    path = Path(rs.path)
    return path.parent.name if path.name == "results.json" and path.parent.name else path.name


def unique_labels(sets: list[ResultSet], given: list[str] | None = None) -> list[str]:
    """One distinct label per result set: ``given`` (``--label``), else the GPU name (the file
    name without one); a name that repeats gets the first qualifier that tells its runs apart:
    the run's folder or file name, its last two path components, its full path, its date, or
    finally its position. Tables and plots key on labels, so two runs must never share one."""
    if given is not None:
        repeated = sorted({label for label in given if given.count(label) > 1})
        if repeated:
            raise InputError(f"--label {repeated[0]!r} is given twice: labels must be unique.")
        return list(given)
    labels = [rs.label for rs in sets]
    qualifiers = [_run_name, lambda rs: "/".join(Path(rs.path).parts[-2:]),
                  lambda rs: rs.path, lambda rs: str(rs.context.get("date", ""))]
    groups: dict[str, list[int]] = defaultdict(list)
    for i, label in enumerate(labels):
        groups[label].append(i)
    out = list(labels)
    for label, members in groups.items():
        if len(members) == 1:
            continue
        for qualify in qualifiers:
            tags = [qualify(sets[i]) for i in members]
            if all(tags) and len(set(tags)) == len(tags):
                for i, tag in zip(members, tags):
                    out[i] = f"{label} ({tag})"
                break
        else:
            for k, i in enumerate(members, start=1):
                out[i] = f"{label} #{k}"
    return out


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


def find_sweeps(sets: list[ResultSet], labels: list[str]) -> list[Sweep]:
    # (topic, variant, precision, metric) -> [(gpu, args, value)]
    groups: dict[tuple, list[tuple[str, dict[str, float], float]]] = defaultdict(list)
    for rs, label in zip(sets, labels):
        for bench in rs.benchmarks.values():
            metric = bench.throughput_metric()
            sample = bench.sample(metric) if metric else None
            if sample is None:
                continue
            p = bench.parsed
            groups[(p.topic, p.variant, p.precision, metric)].append(
                (label, p.numeric_args(), sample.center))
    sweeps = []
    for (topic, variant, precision, metric), entries in groups.items():
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
            candidates.append(("=".join(varying), fixed, square))
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
                candidates.append((axis, fixed, pts))
        for axis, fixed, pts in candidates:
            lines: dict[str, list[tuple[float, float]]] = defaultdict(list)
            for g, x, v in pts:
                lines[g].append((x, v))
            if max((len({x for x, _ in p}) for p in lines.values()), default=0) >= MIN_SWEEP_POINTS:
                sweeps.append(Sweep(topic, variant, precision, metric, axis, fixed,
                                    {g: sorted(p) for g, p in lines.items()}))
    sweeps.sort(key=lambda s: (s.topic, s.variant, precision_order(s.precision), s.axis, s.fixed))
    return sweeps


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")[:80]


# ---------------------------------------------------------------------------------------------
# The report


def build(sets: list[ResultSet], out_dir: Path,
          labels: list[str] | None = None) -> tuple[Doc, list[Path]]:
    from tcbench_tools import plots  # matplotlib only when a report is made

    labels = unique_labels(sets, labels)
    best = [summary.best_results(rs) for rs in sets]
    doc = Doc()
    images: list[Path] = []
    doc.heading(1, "tcbench report")
    doc.para(f"{len(sets)} result file(s). Throughput is the median over repetitions of the best "
             "benchmark per topic and precision; % of peak is relative to each card's own peak "
             "(`peak_source` says whether it is the datasheet figure or the max-clock one); "
             "x FP32 is the speed-up over the best FP32 result of the same topic on the same card; "
             "n/a: the card does not support that precision (its peak is 0).")

    doc.heading(2, "GPUs")
    # One column per GPU (a row per property): the table grows down, not across, with the keys.
    keys = ["compute_capability", "sm_count", "driver_version", "cuda_runtime",
            "cublaslt_version", "peak_source", "tcbench_version", "git_sha"]
    doc.table(["GPU", *labels],
              [["gpu_name", *(str(rs.context.get("gpu_name", "-")) for rs in sets)],
               ["file", *(rs.path for rs in sets)],
               *([key, *(str(rs.context.get(key, "-")) for rs in sets)] for key in keys)], set())

    # Peak vs best achieved, per precision (GEMM-style throughput only).
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
    if shown:
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
                row += [fmt_num(pk), fmt_num(got),
                        f"{got / pk * 100:.1f}" if pk and got else "-"]
            rows.append(row)
        doc.table(headers, rows, set(range(1, len(headers))))
        path = plots.peak_vs_achieved(shown, labels, peak, achieved, out_dir / "peak_vs_achieved.png")
        images.append(path)
        doc.image(path, "Peak (pale) vs best achieved (solid) per precision and GPU")

    # Per topic, per precision, side by side.
    topics = sorted({k[0] for b in best for k in b})
    for topic in topics:
        doc.heading(2, f"Topic: {topic}")
        keys_t = sorted({(k[1], k[2]) for b in best for k in b if k[0] == topic},
                        key=lambda pm: (precision_order(pm[0]), pm[1]))
        headers = ["precision", "unit"]
        for label in labels:
            headers += [f"{label}", f"{label} % peak", f"{label} x FP32"]
        rows = []
        for prec, metric in keys_t:
            row = [prec, THROUGHPUT_UNITS[metric]]
            for rs, b in zip(sets, best):
                item = b.get((topic, prec, metric))
                if item is None and rs.lacks(prec):
                    row += ["n/a"] * 3
                    continue
                base = b.get((topic, "fp32", "tflops"))
                speedup = "-"
                if item is not None and base is not None and metric in _GEMM_METRICS:
                    speedup = f"{item.value / base.value:.2f}"
                row += [fmt_num(item.value) + power_report.mark(rs, item.benchmark) if item else "-",
                        f"{item.pct_of_peak:.1f}" if item and item.pct_of_peak is not None else "-",
                        speedup]
            rows.append(row)
        doc.table(headers, rows, set(range(2, len(headers))))

    images += power_report.render(doc, sets, labels, out_dir)

    sweeps = find_sweeps(sets, labels)
    if sweeps:
        doc.heading(2, "Sweeps")
        for i, sw in enumerate(sweeps, start=1):
            name = f"sweep_{i:02d}_{_slug(f'{sw.topic}_{sw.variant}_{sw.precision}_{sw.axis}_{sw.fixed}')}.png"
            path = plots.sweep(sw.title, sw.axis, THROUGHPUT_UNITS[sw.metric], sw.lines, out_dir / name)
            images.append(path)
            doc.heading(3, sw.title)
            doc.image(path, sw.title, caption=False)

    # Topic sections (tcbench_tools/sections/<topic>.py): the plots and tables each concept needs.
    from tcbench_tools import sections

    present = {bench.parsed.topic for rs in sets for bench in rs.benchmarks.values()}
    for mod in sections.modules():
        if mod.TOPIC in present:
            doc.heading(2, mod.TITLE)
            images += mod.render(doc, sets, labels, out_dir)

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
    return doc, images


def write(sets: list[ResultSet], out_dir: Path,
          labels: list[str] | None = None) -> tuple[Path, Path, list[Path]]:
    for rs in sets:
        if not rs.has_tcbench_context:
            print(f"tcbench report: warning: {rs.path} has no tcbench context: labelled "
                  f"{rs.label!r}, and % of peak is only shown where the benchmarks report it.",
                  file=sys.stderr)
    labels = unique_labels(sets, labels)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for stale in [*out_dir.glob("sweep_*.png"), *out_dir.glob("section_*.png"),
                      out_dir / "peak_vs_achieved.png"]:
            stale.unlink(missing_ok=True)  # plots of an earlier report in the same folder
        doc, images = build(sets, out_dir, labels)
        md = out_dir / "report.md"
        md.write_text(doc.markdown())
        page = out_dir / "report.html"
        page.write_text(doc.html("tcbench report"))
    except OSError as exc:
        raise InputError(f"cannot write the report into {out_dir}: {exc.strerror or exc}.") from None
    return md, page, images
