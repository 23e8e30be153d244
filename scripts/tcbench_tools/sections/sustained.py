"""Report section for bench_sustained: burst vs sustained (docs/concepts/sustained.md).

Benchmark names it reads: ``sustained/<variant>/<precision>[/m:M/n:N/k:K/layout:L]/regime:R``,
R burst (the first launches after idle) or sustained (at the steady state), ``variant`` cublaslt
or a tensor-peak kernel. Counters: the rate (``tflops`` / ``tops``), ``sm_clock_mhz``,
``power_w``, ``throttle``, ``pct_of_peak_at_clock``, ``steady``, ``settle_s``, ``trace_s``, and
the sustained row's trace ``clock_at_NN`` / ``power_at_NN``.

Across GPUs: each sustained cuBLASLt rate beside the datasheet and beside the bound at the
sustained clock (SMs x clock x ops per SM per clock, read back from ``pct_of_peak_at_clock``),
so the gap to the datasheet splits into what the clock lost and what the kernel lost; then the
published burst and sustained rates (data/sustained/published.csv). Per GPU: burst vs
sustained per case, and the sustained runs' clock and power over time.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from tcbench_tools import files, plots, power, schema
from tcbench_tools.doc import Strong
from tcbench_tools.errors import InputError
from tcbench_tools.names import precision_order
from tcbench_tools.results import Benchmark, ResultSet
from tcbench_tools.sections._common import plt, save
from tcbench_tools.tables import fmt_num

TOPIC = "sustained"
TITLE = "Burst and sustained: the first launches, and the steady state under the power cap"

BURST, SUSTAINED = "burst", "sustained"
PUBLISHED = Path(__file__).resolve().parents[3] / "data" / "sustained" / "published.csv"
PUBLISHED_COLUMNS = ("id", "gpu", "precision", "datasheet_tflops", "burst_fraction",
                     "sustained_fraction", "power_limit_w", "sustained_clock_mhz", "source")


def pairs(rs: ResultSet) -> dict[tuple[str, str], dict[str, Benchmark]]:
    """{(variant, precision): {regime: benchmark}} of the rows that ran, cuBLASLt first, then
    the kernels, each by precision."""
    out: dict[tuple[str, str], dict[str, Benchmark]] = {}
    for b in rs.find(TOPIC, ran=True, regime=(BURST, SUSTAINED)):
        p = b.parsed
        out.setdefault((p.variant, p.precision), {})[p.args["regime"]] = b
    return dict(sorted(out.items(), key=lambda kv: (kv[0][0] != "cublaslt", kv[0][0],
                                                    precision_order(kv[0][1]))))


def rate(b: Benchmark | None) -> tuple[float | None, str]:
    """The row's throughput and its unit (TFLOP/s, TOP/s)."""
    metric = b.throughput_metric() if b is not None else None
    if metric is None:
        return None, ""
    return b.center(metric), "TOP/s" if metric == schema.TOPS else "TFLOP/s"


def steady_text(b: Benchmark) -> str:
    """"steady after 7.4 s", or "no steady state within 60 s" (settle_s is the limit then)."""
    steady, settle = b.center(schema.STEADY), b.center(schema.SETTLE_S)
    if steady is None:
        return "-"
    if steady >= 1:
        return f"steady after {settle:.1f} s" if settle is not None else "steady state held"
    return "no steady state" + (f" within {settle:.0f} s" if settle is not None else "")


def _fmt(x: float | None, spec: str = "") -> str:
    return "-" if x is None else (format(x, spec) if spec else fmt_num(x))


def load_published(path: Path = PUBLISHED) -> list[dict[str, str]]:
    """The published rows, checked for their columns and numbers; a bad file is one sentence."""
    text = files.read_text(path, files.CONFIG_LIMIT, "published sustained rates")
    rows = list(csv.DictReader(io.StringIO(text)))
    for i, row in enumerate(rows, start=2):
        missing = [c for c in PUBLISHED_COLUMNS if not (row.get(c) or "").strip()]
        if missing:
            raise InputError(f"{path.name} line {i}: no {', '.join(missing)}.")
        for c in ("datasheet_tflops", "burst_fraction", "sustained_fraction"):
            try:
                value = float(row[c])
            except ValueError:
                value = -1.0
            if not value > 0 or (c.endswith("fraction") and value > 1):
                raise InputError(f"{path.name} line {i}: {c} is {row[c]!r}, not a positive "
                                 "number (a fraction at most 1).")
    return rows


def _across_gpus(doc, sets: list[ResultSet], labels: list[str]) -> None:
    rows = []
    for rs, label in zip(sets, labels):
        for (variant, prec), by in pairs(rs).items():
            b = by.get(SUSTAINED)
            if variant != "cublaslt" or b is None:
                continue
            value, unit = rate(b)
            sheet = rs.peak(prec)
            at_clock = b.center(schema.PCT_OF_PEAK_AT_CLOCK)
            bound = value * 100.0 / at_clock if value and at_clock else None
            clock_loss = sheet - bound if sheet and bound else None
            kernel_loss = bound - value if bound and value else None
            rows.append([prec, label, f"{_fmt(value)} {unit}", _fmt(b.center(
                schema.SM_CLOCK_MHZ), ".0f"), _fmt(sheet), _fmt(
                100 * value / sheet if value and sheet else None, ".1f"), _fmt(bound),
                _fmt(clock_loss), _fmt(kernel_loss), steady_text(b)])
    if not rows:
        return
    rows.sort(key=lambda r: precision_order(r[0]))
    doc.heading(3, "Sustained cuBLASLt GEMMs across GPUs (measured)")
    doc.para("The sustained rate beside the datasheet (the context's peak) and beside the bound "
             "at the sustained clock: SMs x that clock x the precision's ops per SM per clock. "
             "The gap to the datasheet splits in two: the datasheet less the bound is what the "
             "clock lost; the bound less the rate is what the kernel lost (below zero: the "
             "clock ran above the datasheet's). A row without a steady state is no steady-state "
             "figure.")
    doc.table(["precision", "GPU", "sustained", "clock MHz", "datasheet", "% datasheet",
               "SMs x clock x rate", "lost to the clock", "lost to the kernel", "steady state"],
              rows, {3, 4, 5, 6, 7, 8})


def _published(doc) -> None:
    try:
        rows = load_published()
    except InputError as exc:
        doc.para(f"No published rates: {exc}")
        return
    if not rows:
        return
    doc.heading(3, "Published burst and sustained rates (not measured by tcbench)")
    doc.para("Published cuBLAS peak GEMMs, each source cited per row; the rates are the "
             "source's fractions of the datasheet (data/sustained/published.csv).")
    out = []
    for r in rows:
        sheet = float(r["datasheet_tflops"])
        burst, sus = sheet * float(r["burst_fraction"]), sheet * float(r["sustained_fraction"])
        out.append([r["gpu"], r["precision"], fmt_num(sheet), fmt_num(burst), fmt_num(sus),
                    f"{sus / burst:.2f}", r["power_limit_w"], r["sustained_clock_mhz"],
                    r["source"]])
    doc.table(["GPU", "precision", "datasheet", "burst", "sustained", "sustained / burst",
               "power cap W", "sustained clock MHz", "published in"], out, {2, 3, 4, 5, 6})


def render(doc, sets: list[ResultSet], labels: list[str], out_dir: Path) -> list[Path]:
    doc.para("Each case timed twice: a burst right after the GPU idled, and a sustained window "
             "once the clock and power settled under the power cap (or a limit passed). Each "
             "GPU's own table and its clock and power over time are in its part of Per-GPU "
             "detail. See docs/concepts/sustained.md for what to expect.")
    without: dict[str, list[str]] = {}
    for rs, label in zip(sets, labels):
        rows = rs.find(TOPIC)
        if rows and not any(b.ok for b in rows):
            reasons = "; ".join(sorted({b.skip_reason or (b.error or "") for b in rows}))
            without.setdefault(reasons, []).append(label)
    for reasons, where in without.items():
        doc.para(*[part for i, g in enumerate(where) for part in ((", " if i else ""), Strong(g))
                   if part], f": no burst or sustained result: {reasons}")
    _across_gpus(doc, sets, labels)
    _published(doc)
    return []


def _context_watts(raw: object) -> float | None:
    """The context's power limit ("700.0"), or None for "unknown" or anything else."""
    try:
        value = float(str(raw))
    except ValueError:
        return None
    return value if 0 < value < 1e5 else None


def _trace(b: Benchmark, family: str) -> list[tuple[float, float]]:
    """(seconds from the first launch, value) of a sustained row's clock_at / power_at points:
    point NN covers slice NN of trace_s, drawn at its middle."""
    trace_s = b.center(schema.TRACE_S)
    points = sorted((int(c.rsplit("_", 1)[1]), c) for c in b.counter_names()
                    if schema.shipped().family(family).matches(c))
    if not trace_s or not points:
        return []
    n = len(points)
    out = []
    for i, name in points:
        value = b.center(name)
        if value is not None:
            out.append(((i + 0.5) * trace_s / n, value))
    return out


def trace_plot(rs: ResultSet, label: str, out_dir: Path,
               by: dict[tuple[str, str], dict[str, Benchmark]]) -> Path | None:
    """The sustained runs' SM clock and board power over time, a line per case, the power
    limit dashed."""
    from tcbench_tools import plot_style
    from tcbench_tools.sections._common import slug

    lines = {f"{v} {p}": (_trace(r[SUSTAINED], "clock_at_<NN>"),
                          _trace(r[SUSTAINED], "power_at_<NN>"))
             for (v, p), r in by.items() if SUSTAINED in r}
    lines = {k: v for k, v in lines.items() if v[0] or v[1]}
    if not lines:
        return None
    fig, (clock_ax, power_ax) = plt.subplots(2, 1, figsize=(7.0, 5.2), sharex=True)
    for i, (name, (clock, watts)) in enumerate(lines.items()):
        kw = plot_style.series_style(i).line_kwargs(points=max(len(clock), len(watts)),
                                                    max_marked=12)
        clock_ax.plot([t for t, _ in clock], [c for _, c in clock], label=name, **kw)
        power_ax.plot([t for t, _ in watts], [w for _, w in watts], label=name, **kw)
    limit = _context_watts(rs.context.get("power_limit_w"))
    if limit:
        power_ax.axhline(limit, color="black", linestyle="--", linewidth=1,
                         label=f"power limit ({limit:g} W)")
        power_ax.set_ylim(0, limit * 1.1)
    clock_ax.set_ylabel("SM clock (MHz)")
    power_ax.set_ylabel("board power (W)")
    power_ax.set_xlabel("seconds from the first launch (NVML, medians per slice)")
    for ax in (clock_ax, power_ax):
        ax.grid(alpha=0.3)
    plots.legend_outside(clock_ax, power_ax.get_legend_handles_labels()[0])
    clock_ax.set_title(f"{label}: clock and power of the sustained runs (measured)",
                       fontsize="medium")
    fig.tight_layout()
    return save(fig, out_dir / f"section_sustained_trace_{slug(label)}.png")


def render_gpu(doc, rs: ResultSet, label: str, out_dir: Path) -> list[Path]:
    by = pairs(rs)
    if not by:
        return []
    table = power.reason_table(rs.context)
    rows = []
    for (variant, prec), r in by.items():
        burst, sus = r.get(BURST), r.get(SUSTAINED)
        (b_rate, unit), (s_rate, _) = rate(burst), rate(sus)
        unit = unit or rate(sus)[1]
        mask = sus.center(schema.THROTTLE) if sus is not None else None
        reasons = ", ".join(power.decode(int(mask), table)) if mask else "none"
        rows.append([variant, prec, unit, _fmt(b_rate), _fmt(ev_clock(burst), ".0f"),
                     _fmt(s_rate), _fmt(ev_clock(sus), ".0f"),
                     _fmt(s_rate / b_rate if s_rate and b_rate else None, ".2f"),
                     _fmt(sus.center(schema.POWER_W) if sus else None, ".0f"),
                     reasons if sus else "-", steady_text(sus) if sus else "-"])
    doc.heading(3, f"{label}: burst vs sustained (measured)")
    doc.table(["kernel", "precision", "unit", "burst", "burst MHz", "sustained",
               "sustained MHz", "sustained / burst", "sustained W", "throttle reasons",
               "steady state"], rows, {3, 4, 5, 6, 7, 8})
    plot = trace_plot(rs, label, out_dir, by)
    if plot is None:
        return []
    doc.image(plot, f"{label}: SM clock and board power over the sustained runs")
    return [plot]


def ev_clock(b: Benchmark | None) -> float | None:
    return b.center(schema.SM_CLOCK_MHZ) if b is not None else None
