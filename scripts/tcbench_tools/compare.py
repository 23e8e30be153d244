"""``tcbench compare BASELINE CANDIDATE``: per-benchmark verdicts and a CI exit code.

Decision rule (docs/ci.md explains it for users):

* The metric is real time per iteration (lower is better), or with ``--normalize-peak`` the
  ``pct_of_peak`` counter (higher is better; for comparing different GPUs).
* ``slowdown`` is how much worse the candidate's median is, as a fraction: for time
  ``cand / base - 1``, for % of peak ``base / cand - 1`` (the same number a time ratio gives).
* A benchmark **regresses** when ``slowdown > threshold`` (default 5 %, per-benchmark overrides
  from ``--config``) **and** the change is real:
  - both sides have >= ``MIN_REPETITIONS_UTEST`` (5) raw repetitions: a two-sided Mann-Whitney U
    test (``scipy.stats.mannwhitneyu``) on the two sets of repetitions gives ``p < alpha`` (0.05);
  - otherwise, where at least one side has >= 2 repetitions: the slowdown exceeds the noise band
    ``2 x max(CV_base, CV_cand)``, CV being each side's coefficient of variation (sample stddev /
    mean; Google Benchmark's ``_cv`` aggregate when only aggregates were written);
  - with a single sample on each side, tcbench's in-run spread counter ``spread_pct``
    ((p90 - p10) / median over the run's timed iterations) measures the noise: the band is
    ``2 x max(spread) / 2.563`` (2.563 = (p90 - p10) / sigma of a normal distribution);
  - with a single sample and no spread counter (plain Google Benchmark output) nothing measures
    the noise: the threshold alone decides.
* Improvements use the same rule in the other direction. A change beyond the threshold that
  fails the significance test is reported as ``noise``.
* A benchmark that ran in the baseline and fails (an error that is not ``skipped:``) in the
  candidate counts as ``FAILED``. Regressions and failures make the exit code 1.
* Benchmarks on one side only, skipped ones and ones that failed on both sides are listed.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from scipy import stats

from tcbench_tools.errors import InputError
from tcbench_tools.results import IDENTITY_KEYS, Benchmark, ResultSet, Sample
from tcbench_tools.tables import fmt_num, fmt_pct, fmt_time, markdown_table, text_table

MIN_REPETITIONS_UTEST = 5
NOISE_FACTOR = 2.0

REGRESSED = "REGRESSED"
FAILED = "FAILED"
IMPROVED = "improved"
UNCHANGED = "unchanged"
NOISE = "noise"
FIXED = "now runs"
SKIPPED = "skipped"
BOTH_FAILED = "failed on both"
ONLY_BASE = "only in baseline"
ONLY_CAND = "only in candidate"
NOT_COMPARABLE = "not comparable"
FAILING = (REGRESSED, FAILED)


@dataclass
class Options:
    threshold: float = 0.05  # fraction
    alpha: float = 0.05
    overrides: list[tuple[str, re.Pattern, float]] = field(default_factory=list)
    normalize_peak: bool = False

    def threshold_for(self, name: str) -> float:
        for _, pattern, value in self.overrides:
            if pattern.search(name):
                return value
        return self.threshold


@dataclass
class Row:
    name: str
    status: str
    base: float | None = None
    cand: float | None = None
    slowdown: float | None = None  # > 0: candidate worse
    threshold: float | None = None
    basis: str = ""
    note: str = ""


@dataclass
class Comparison:
    rows: list[Row]
    warnings: list[str]
    metric: str

    def count(self, status: str) -> int:
        return sum(1 for r in self.rows if r.status == status)

    @property
    def failing(self) -> list[Row]:
        return [r for r in self.rows if r.status in FAILING]


# ---------------------------------------------------------------------------------------------
# Threshold configuration


def parse_percent(value: object, where: str) -> float:
    """``5``, ``5.0`` or ``"5%"`` -> 0.05."""
    text = str(value).strip()
    if isinstance(value, bool):
        raise InputError(f"{where}: {value!r} is not a percentage.")
    try:
        number = float(text[:-1] if text.endswith("%") else text)
    except ValueError:
        raise InputError(f"{where}: {value!r} is not a percentage (write e.g. 5 or \"5%\").") from None
    if not math.isfinite(number) or number <= 0 or number >= 1000:
        raise InputError(f"{where}: {value!r} must be a percentage above 0.")
    return number / 100.0


def load_config(path: str, options: Options) -> None:
    """Read ``--config``: JSON or TOML, ``{"default": 5, "alpha": 0.05, "thresholds": {regex: %}}``.

    A flat mapping ``{regex: percent}`` works too. The first regex that matches (``re.search``)
    a benchmark name, in file order, gives its threshold.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the config file {path}: {getattr(exc, 'strerror', None) or exc}.") from None
    if file.suffix == ".toml":
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"{path} is not valid TOML ({exc}).") from None
    else:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); "
                             "name a TOML config *.toml.") from None
    if not isinstance(doc, dict):
        raise InputError(f"{path}: the config must map benchmark-name regexes to thresholds.")
    if "thresholds" in doc:
        mapping = doc["thresholds"]
        if not isinstance(mapping, dict):
            raise InputError(f"{path}: 'thresholds' must map regexes to percentages.")
        if "default" in doc:
            options.threshold = parse_percent(doc["default"], f"{path}: default")
        if "alpha" in doc:
            alpha = doc["alpha"]
            if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
                raise InputError(f"{path}: alpha must be a number between 0 and 1.")
            options.alpha = float(alpha)
        unknown = set(doc) - {"thresholds", "default", "alpha"}
        if unknown:
            raise InputError(f"{path}: unknown key(s) {', '.join(sorted(unknown))} "
                             "(expected thresholds, default, alpha).")
    else:
        mapping = doc
    for regex, value in mapping.items():
        try:
            pattern = re.compile(regex)
        except re.error as exc:
            raise InputError(f"{path}: {regex!r} is not a valid regular expression ({exc}).") from None
        options.overrides.append((regex, pattern, parse_percent(value, f"{path}: {regex!r}")))


# ---------------------------------------------------------------------------------------------
# The decision


def _significance(base: Sample, cand: Sample, slowdown: float, alpha: float,
                  within_run_cvs: list[float] | None = None) -> tuple[bool, str]:
    """Whether a change of ``slowdown`` (either sign) is beyond noise, and why."""
    if (len(base.values) >= MIN_REPETITIONS_UTEST and len(cand.values) >= MIN_REPETITIONS_UTEST):
        # Two-sided, as Google Benchmark's compare.py: "the two runs differ"; the medians give
        # the direction. A same-distribution pair then passes as a regression with probability
        # at most alpha / 2 (and only if its medians also differ by more than the threshold).
        p = float(stats.mannwhitneyu(cand.values, base.values, alternative="two-sided").pvalue)
        return p < alpha, f"U test p={p:.3g}"
    cvs = [s.cv for s in (base, cand) if s.cv is not None and s.count >= 2]
    if cvs:
        band = NOISE_FACTOR * max(cvs)
        return abs(slowdown) > band, f"noise band {band * 100:.1f}%"
    if within_run_cvs:
        band = NOISE_FACTOR * max(within_run_cvs)
        return abs(slowdown) > band, f"in-run noise band {band * 100:.1f}%"
    return True, "threshold only (1 sample each)"


# (p90 - p10) of a normal distribution, in standard deviations: turns tcbench's spread_pct
# counter into a coefficient of variation.
P10_P90_SIGMAS = float(2 * stats.norm.ppf(0.9))


def _within_run_cvs(*benches: Benchmark) -> list[float]:
    """Each side's in-run CV from its spread_pct counter, when every side has one."""
    cvs = []
    for bench in benches:
        spread = bench.sample("spread_pct")
        if spread is None:
            return []
        cvs.append(spread.center / 100.0 / P10_P90_SIGMAS)
    return cvs


def _compare_one(name: str, b: Benchmark, c: Benchmark, options: Options) -> Row:
    metric = "pct_of_peak" if options.normalize_peak else "time"
    threshold = options.threshold_for(name)
    base, cand = b.sample(metric), c.sample(metric)
    if base is None or cand is None:
        missing = "baseline" if base is None else "candidate"
        return Row(name, NOT_COMPARABLE, threshold=threshold,
                   note=f"the {missing} has no {metric if metric != 'time' else 'real_time'}")
    if not (base.center > 0 and cand.center > 0):
        return Row(name, NOT_COMPARABLE, base.center, cand.center, threshold=threshold,
                   note="a median is zero or negative")
    higher_is_better = options.normalize_peak
    ratio = cand.center / base.center
    slowdown = (1.0 / ratio - 1.0) if higher_is_better else (ratio - 1.0)
    speedup = (ratio - 1.0) if higher_is_better else (1.0 / ratio - 1.0)
    row = Row(name, UNCHANGED, base.center, cand.center, slowdown, threshold)
    significant, row.basis = _significance(base, cand, slowdown, options.alpha,
                                           _within_run_cvs(b, c))
    if slowdown > threshold:
        row.status = REGRESSED if significant else NOISE
    elif speedup > threshold:
        row.status = IMPROVED if significant else NOISE
    return row


def compare(baseline: ResultSet, candidate: ResultSet, options: Options) -> Comparison:
    rows: list[Row] = []
    names = list(baseline.benchmarks)
    names += [n for n in candidate.benchmarks if n not in baseline.benchmarks]
    for name in names:
        b, c = baseline.benchmarks.get(name), candidate.benchmarks.get(name)
        if b is None:
            rows.append(Row(name, ONLY_CAND, note=c.error or ""))
        elif c is None:
            rows.append(Row(name, ONLY_BASE, note=b.error or ""))
        elif c.failed:
            status = BOTH_FAILED if b.failed else FAILED
            rows.append(Row(name, status, note=f"candidate: {c.error}"))
        elif c.skipped or b.skipped:
            side = "both" if (c.skipped and b.skipped) else (
                "candidate" if c.skipped else "baseline")
            reason = (c if c.skipped else b).skip_reason
            note = f"{side}: {reason}"
            if b.failed:
                note += f"; baseline: {b.error}"
            rows.append(Row(name, SKIPPED, note=note))
        elif b.failed:
            row = _compare_one(name, b, c, options)
            rows.append(Row(name, FIXED, cand=row.cand, note=f"baseline: {b.error}"))
        else:
            rows.append(_compare_one(name, b, c, options))
    metric = "pct_of_peak" if options.normalize_peak else "time"
    return Comparison(rows, context_warnings(baseline, candidate, options), metric)


def context_warnings(baseline: ResultSet, candidate: ResultSet, options: Options) -> list[str]:
    warnings = []
    for rs, other in ((baseline, candidate), (candidate, baseline)):
        if not rs.has_tcbench_context and other.has_tcbench_context:
            warnings.append(f"{rs.path} has no tcbench context (GPU, driver, library versions): "
                            "cannot check that both runs used the same machine.")
    for key in IDENTITY_KEYS:
        a, b = baseline.context.get(key), candidate.context.get(key)
        if a is not None and b is not None and str(a) != str(b):
            what = key.replace("_", " ")
            hint = (" (expected with --normalize-peak)" if key == "gpu_name" and options.normalize_peak
                    else "")
            warnings.append(f"the runs differ in {what}: baseline {a!r}, candidate {b!r}{hint}.")
    if options.normalize_peak:
        for key in ("peak_source",):
            a, b = baseline.context.get(key), candidate.context.get(key)
            if a is not None and b is not None and a != b:
                warnings.append(f"the % of peak denominators differ: baseline {key}={a!r}, "
                                f"candidate {key}={b!r}.")
    return warnings


# ---------------------------------------------------------------------------------------------
# Output


def _fmt_value(value: float | None, metric: str) -> str:
    if value is None:
        return "-"
    return fmt_time(value) if metric == "time" else f"{fmt_num(value)}%"


def _table(comp: Comparison) -> tuple[list[str], list[list[str]]]:
    metric_label = "time" if comp.metric == "time" else "% of peak"
    headers = ["benchmark", f"baseline {metric_label}", f"candidate {metric_label}", "slowdown",
               "threshold", "evidence", "verdict"]
    rows = []
    for r in comp.rows:
        verdict = r.status + (f" ({r.note})" if r.note else "")
        rows.append([r.name, _fmt_value(r.base, comp.metric), _fmt_value(r.cand, comp.metric),
                     fmt_pct(r.slowdown, signed=True),
                     fmt_pct(r.threshold) if r.slowdown is not None else "-",
                     r.basis or "-", verdict])
    return headers, rows


def summary_line(comp: Comparison) -> str:
    order = [REGRESSED, FAILED, IMPROVED, UNCHANGED, NOISE, FIXED, SKIPPED, BOTH_FAILED,
             ONLY_BASE, ONLY_CAND, NOT_COMPARABLE]
    parts = [f"{comp.count(s)} {s}" for s in order if comp.count(s)]
    verdict = "FAIL" if comp.failing else "PASS"
    return f"tcbench compare: {verdict}: " + ", ".join(parts) + "."


def render_text(comp: Comparison) -> str:
    headers, rows = _table(comp)
    out = [text_table(headers, rows, right={1, 2, 3, 4})]
    if comp.failing:
        out.append("")
        out.append("Regressions and failures:")
        out += [f"  {r.name}: {r.status}" + (f", {fmt_pct(r.slowdown, True)} ({r.basis})"
                                            if r.slowdown is not None else f" ({r.note})")
                for r in comp.failing]
    out.append("")
    out.append(summary_line(comp))
    return "\n".join(out)


def render_markdown(comp: Comparison, baseline: str, candidate: str) -> str:
    headers, rows = _table(comp)
    lines = ["## tcbench compare", "",
             f"Baseline `{baseline}`, candidate `{candidate}`; metric: "
             + ("real time per iteration (lower is better)." if comp.metric == "time"
                else "% of the card's peak (higher is better)."), "",
             f"**{summary_line(comp)}**", ""]
    for w in comp.warnings:
        lines.append(f"> warning: {w}")
    if comp.warnings:
        lines.append("")
    if comp.failing:
        lines.append("Regressions and failures:")
        lines.append("")
        lines += [f"- `{r.name}`: {r.status}"
                  + (f", {fmt_pct(r.slowdown, True)} ({r.basis})" if r.slowdown is not None
                     else f" ({r.note})") for r in comp.failing]
        lines.append("")
    lines.append(markdown_table(headers, rows, right={1, 2, 3, 4}))
    lines.append("")
    return "\n".join(lines)
