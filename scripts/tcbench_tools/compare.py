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
  fails the significance test is reported as ``noise``. When ``alpha`` is below the smallest
  p-value the U test can reach with the repetitions at hand (2/252 for 5 vs 5), the test cannot
  detect anything: those benchmarks fall back to the noise band, with a warning.

The gate (docs/ci.md, section 4, has the table) never passes silently:

* ``REGRESSED`` and ``FAILED`` (ran in the baseline, fails with an error in the candidate) fail.
* ``MISSING`` (ran in the baseline, absent from the candidate), ``SKIPPED NOW`` (ran in the
  baseline, ``skipped:`` in the candidate) and ``NOT COMPARABLE`` (no metric, unknown time unit, a
  median that is zero or negative, or renamed: a baseline name of the first grammar, tcbench 0.1,
  whose benchmark the candidate holds under its current name, e.g. with the GEMM layout) fail
  unless ``--allow-missing``, ``--allow-skipped`` or ``--allow-not-comparable`` (or the config
  keys of the same names) opt out.
* ``NOT COMPARABLE: THROTTLED``: a candidate benchmark that ran under a hardware or thermal
  slowdown (``hw_slowdown``, ``sw_thermal``, ``hw_thermal``, ``hw_power_brake``) or at an SM clock
  more than 5 % below the baseline's (tcbench_tools/power.py reads the clocks NVML recorded)
  fails unless ``--allow-throttled`` (config ``allow_throttled``): its time says more about the
  box than about the code. The clock ratio is printed beside every slowdown.
* A candidate run that did not finish or lost a binary's results, and a comparison in which no
  benchmark was compared at all, always fail.
* ``INVALID INPUT`` (in either file, a value no measurement gives: not a finite number, a time
  or throughput of zero or less, any counter outside its physical range as schema.py states it,
  e.g. a pct_of_peak above 200 or a negative rel_error) makes the exit code 2; the row names the
  benchmark, the field and the repetition.
* Listed, never failing: improved, unchanged, noise, now runs (skipped or failed in the baseline,
  runs in the candidate: its value is shown), skipped (in the candidate after a baseline failure,
  or on both sides), failed on both, only in candidate, only in baseline (skipped or failed
  there: no measurement is lost).
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from scipy import stats

from tcbench_tools import arguments, files, power, regex_guard, schema, synthetic
from tcbench_tools.doc import Code, Doc, Strong
from tcbench_tools.errors import InputError, exit_text
from tcbench_tools.names import NAMES_V2_SINCE, upgrade_v1
from tcbench_tools.printable import printable_lines
from tcbench_tools.results import Benchmark, ResultSet, Sample
from tcbench_tools.schema import HIGHER, PCT_OF_PEAK, SPREAD_PCT, counter
from tcbench_tools.tables import fmt_num, fmt_pct, fmt_time, text_table

MIN_REPETITIONS_UTEST = 5
NOISE_FACTOR = 2.0

REGRESSED = "REGRESSED"
FAILED = "FAILED"
MISSING = "MISSING"
SKIPPED_NOW = "SKIPPED NOW"
NOT_COMPARABLE = "NOT COMPARABLE"
THROTTLED = "NOT COMPARABLE: THROTTLED"
INVALID = "INVALID INPUT"
IMPROVED = "improved"
UNCHANGED = "unchanged"
NOISE = "noise"
FIXED = "now runs"
SKIPPED = "skipped"
BOTH_FAILED = "failed on both"
ONLY_CAND = "only in candidate"
ONLY_BASE = "only in baseline"  # did not run in the baseline either: no measurement is lost
COMPARED = (REGRESSED, IMPROVED, UNCHANGED, NOISE)
# Failing statuses a user may accept, with the flag (and config key) that does it.
OPT_OUTS = {MISSING: "allow_missing", SKIPPED_NOW: "allow_skipped",
            NOT_COMPARABLE: "allow_not_comparable", THROTTLED: "allow_throttled"}

EXIT_PASS, EXIT_GATE_FAIL, EXIT_INPUT_ERROR = 0, 1, 2


@dataclass
class Options:
    threshold: float = 0.05  # fraction
    alpha: float = 0.05
    overrides: list[tuple[str, re.Pattern, float]] = field(default_factory=list)
    normalize_peak: bool = False
    allow_missing: bool = False
    allow_skipped: bool = False
    allow_not_comparable: bool = False
    allow_throttled: bool = False

    def threshold_for(self, name: str) -> float:
        for _, pattern, value in self.overrides:
            if pattern.search(name):
                return value
        return self.threshold

    def allows(self, status: str) -> bool:
        key = OPT_OUTS.get(status)
        return key is not None and getattr(self, key)


@dataclass
class Row:
    name: str
    status: str
    base: float | None = None
    cand: float | None = None
    slowdown: float | None = None  # > 0: candidate worse
    threshold: float | None = None
    clock_ratio: float | None = None  # candidate SM clock / baseline's, when both recorded
    basis: str = ""
    note: str = ""
    failing: bool = False  # counts against the gate (set by compare())

    @property
    def verdict(self) -> str:
        allowed = self.status in OPT_OUTS and not self.failing
        text = f"{self.status.lower()} (allowed)" if allowed else self.status
        return text + (f" ({self.note})" if self.note else "")


@dataclass
class Comparison:
    rows: list[Row]
    warnings: list[str]
    metric: str
    problems: list[str] = field(default_factory=list)  # gate failures that are not one row
    # "baseline (path)" / "candidate (path)" for each input that carries tcbench_synthetic
    synthetic: list[str] = field(default_factory=list)

    @property
    def synthetic_banner(self) -> str | None:
        """The line that opens the output when an input is a test fixture (as report's banner)."""
        if not self.synthetic:
            return None
        return (f"{synthetic.MARK}: {' and '.join(self.synthetic)} carr"
                f"{'y' if len(self.synthetic) > 1 else 'ies'} the context key {synthetic.KEY}: "
                "test fixtures, not measurements; no verdict below is about a real GPU.")

    def count(self, status: str, failing: bool | None = None) -> int:
        return sum(1 for r in self.rows
                   if r.status == status and (failing is None or r.failing == failing))

    @property
    def failing(self) -> list[Row]:
        return [r for r in self.rows if r.failing]

    @property
    def invalid(self) -> list[Row]:
        return [r for r in self.rows if r.status == INVALID]

    @property
    def verdict(self) -> str:
        if self.invalid:
            return "INPUT ERROR"
        return "FAIL" if self.failing or self.problems else "PASS"

    @property
    def exit_code(self) -> int:
        if self.invalid:
            return EXIT_INPUT_ERROR
        return EXIT_GATE_FAIL if self.failing or self.problems else EXIT_PASS


# ---------------------------------------------------------------------------------------------
# Threshold configuration


def parse_percent(value: object, where: str) -> float:
    """``5``, ``5.0`` or ``"5%"`` -> 0.05 (``arguments.percent``), else an InputError naming
    ``where``."""
    try:
        return arguments.percent(value)
    except ValueError as exc:
        raise InputError(f"{where}: {exc}.") from None


CONFIG_KEYS = ("default", "alpha", "thresholds", *OPT_OUTS.values())


def load_config(path: str, options: Options) -> None:
    """Read ``--config``: JSON or TOML with the top-level keys ``default`` (percent), ``alpha``,
    ``allow_missing``, ``allow_skipped``, ``allow_not_comparable`` (booleans) and ``thresholds``
    (a table ``{regex: percent}``). The first regex that matches (``re.search``) a benchmark name,
    in file order, gives its threshold. Any other key is an error: a regex at the top level would
    otherwise be read as something else (or ignored) without a word.
    """
    file = Path(path)
    try:
        text = files.read_text(file, files.CONFIG_LIMIT, "config file")
    except InputError as exc:
        raise InputError(f"cannot read the config file: {exc}") from None
    except UnicodeDecodeError:
        raise InputError(f"cannot read the config file {path}: it is not UTF-8 text.") from None
    try:
        # The extension decides, in any case (thresholds.TOML is TOML too).
        doc = tomllib.loads(text) if file.suffix.lower() == ".toml" else json.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path} is not valid TOML ({exc}).") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); "
                         "name a TOML config *.toml.") from None
    except (RecursionError, ValueError) as exc:
        raise InputError(f"{path} cannot be read as a config ({type(exc).__name__}).") from None
    if not isinstance(doc, dict):
        raise InputError(f"{path}: the config must be a table of keys "
                         f"({', '.join(CONFIG_KEYS)}).")
    unknown = [key for key in doc if key not in CONFIG_KEYS]
    if unknown:
        raise InputError(f"{path}: unknown key(s) {', '.join(repr(k) for k in unknown)} (the "
                         f"keys are {', '.join(CONFIG_KEYS)}; per-benchmark thresholds go under "
                         "'thresholds').")
    if "default" in doc:
        options.threshold = parse_percent(doc["default"], f"{path}: default")
    if "alpha" in doc:
        alpha = doc["alpha"]
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
            raise InputError(f"{path}: alpha must be a number between 0 and 1.")
        options.alpha = float(alpha)
    for key in OPT_OUTS.values():
        if key in doc:
            if not isinstance(doc[key], bool):
                raise InputError(f"{path}: {key} must be true or false.")
            setattr(options, key, doc[key])
    mapping = doc.get("thresholds", {})
    if not isinstance(mapping, dict):
        raise InputError(f"{path}: 'thresholds' must map regexes to percentages.")
    for regex, value in mapping.items():
        try:
            pattern = re.compile(regex)
        except re.error as exc:
            raise InputError(f"{path}: {regex!r} is not a valid regular expression "
                             f"({exc}).") from None
        except Exception as exc:  # noqa: BLE001 - OverflowError, RecursionError: still bad input
            raise InputError(f"{path}: {regex[:60]!r} is not a usable regular expression "
                             f"({type(exc).__name__}: {exc}).") from None
        # re backtracks: a pattern such as (a+)+ could hang the gate on a benchmark name.
        try:
            costly = regex_guard.cost_problem(regex)
        except RecursionError:
            costly = "it is nested too deeply"
        if costly:
            raise InputError(f"{path}: the threshold pattern {regex[:60]!r} is refused: {costly}; "
                             "write a simpler one (e.g. literal text between single .* ).")
        options.overrides.append((regex, pattern, parse_percent(value, f"{path}: {regex!r}")))


# ---------------------------------------------------------------------------------------------
# The decision


@functools.cache
def smallest_p(n_base: int, n_cand: int) -> float:
    """The smallest two-sided p-value the U test gives for these sample sizes (two completely
    separated samples, no ties): 2 / C(10, 5) = 0.0079 for 5 vs 5."""
    return float(stats.mannwhitneyu(range(n_base), range(n_base, n_base + n_cand),
                                    alternative="two-sided").pvalue)


def _significance(base: Sample, cand: Sample, slowdown: float, alpha: float,
                  within_run_cvs: list[float] | None = None) -> tuple[bool, str]:
    """Whether a change of ``slowdown`` (either sign) is beyond noise, and why."""
    unreachable = ""
    if len(base.values) >= MIN_REPETITIONS_UTEST and len(cand.values) >= MIN_REPETITIONS_UTEST:
        floor = smallest_p(len(base.values), len(cand.values))
        if alpha > floor:
            # Two-sided, as Google Benchmark's compare.py: "the two runs differ"; the medians give
            # the direction. A same-distribution pair then passes as a regression with
            # probability at most alpha / 2 (and only if its medians also differ by more than the
            # threshold).
            p = float(stats.mannwhitneyu(cand.values, base.values, alternative="two-sided").pvalue)
            return p < alpha, f"U test p={p:.3g}"
        unreachable = (f"; the U test cannot reach p<{alpha:g} with {len(base.values)} vs "
                       f"{len(cand.values)} repetitions")
    cvs = [s.cv for s in (base, cand) if s.cv is not None and s.count >= 2]
    if cvs:
        band = NOISE_FACTOR * max(cvs)
        return abs(slowdown) > band, f"noise band {band * 100:.1f}%{unreachable}"
    if within_run_cvs:
        band = NOISE_FACTOR * max(within_run_cvs)
        return abs(slowdown) > band, f"in-run noise band {band * 100:.1f}%{unreachable}"
    return True, "threshold only (1 sample each)"


# (p90 - p10) of a normal distribution, in standard deviations: turns tcbench's spread_pct
# counter into a coefficient of variation.
P10_P90_SIGMAS = float(2 * stats.norm.ppf(0.9))


def _within_run_cvs(*benches: Benchmark) -> list[float]:
    """Each side's in-run CV from its spread_pct counter, when every side has one."""
    cvs = []
    for bench in benches:
        spread = bench.sample(SPREAD_PCT)
        if spread is None:
            return []
        cvs.append(spread.center / 100.0 / P10_P90_SIGMAS)
    return cvs


def _changes(base: float, cand: float, higher_is_better: bool) -> tuple[float, float]:
    """(slowdown, speedup) as fractions, for any two positive finite medians: from the log of
    their ratio, which is always finite (the ratio itself is not: 1e300 / 1e-300 is beyond
    float range, 1e-300 / 1e300 is 0, and 1 / 0 failed). A change beyond float range is inf."""
    log_ratio = math.log(cand) - math.log(base)
    worse = -log_ratio if higher_is_better else log_ratio

    def grown(x: float) -> float:  # e^x - 1, inf past float range
        return math.expm1(x) if x < _LOG_MAX else math.inf

    return grown(worse), grown(-worse)


_LOG_MAX = math.log(sys.float_info.max)


def _change_text(slowdown: float | None) -> str:
    """A slowdown as the tables show it; one beyond float range (a time of 1e300 s against one
    of 1e-300 s) says so rather than "-"."""
    if slowdown is not None and math.isinf(slowdown):
        return "beyond +1e308%" if slowdown > 0 else "beyond -1e308%"
    return fmt_pct(slowdown, signed=True)


def _compare_one(name: str, b: Benchmark, c: Benchmark, options: Options) -> Row:
    metric = PCT_OF_PEAK if options.normalize_peak else "time"
    threshold = options.threshold_for(name)
    defects = {side: bench.defect(metric) for side, bench in (("baseline", b), ("candidate", c))}
    invalid = [f"{side}: {d.reason}" for side, d in defects.items() if d is not None and d.invalid]
    if invalid:
        return Row(name, INVALID, threshold=threshold, note="; ".join(invalid))
    absent = [f"{side}: {d.reason}" for side, d in defects.items() if d is not None]
    if absent:
        return Row(name, NOT_COMPARABLE, threshold=threshold, note="; ".join(absent))
    base, cand = b.sample(metric), c.sample(metric)
    bad = [f"the {side} median is {value:g}" for side, value in
           (("baseline", base.center), ("candidate", cand.center)) if not value > 0]
    if bad:
        return Row(name, NOT_COMPARABLE, base.center, cand.center, threshold=threshold,
                   note="; ".join(bad) + " (only positive values can be compared)")
    # Time: lower is better; a counter: as the schema says (pct_of_peak: higher).
    higher_is_better = metric != "time" and counter(metric).better == HIGHER
    slowdown, speedup = _changes(base.center, cand.center, higher_is_better)
    row = Row(name, UNCHANGED, base.center, cand.center, slowdown, threshold)
    significant, row.basis = _significance(base, cand, slowdown, options.alpha,
                                           _within_run_cvs(b, c))
    if slowdown > threshold:
        row.status = REGRESSED if significant else NOISE
    elif speedup > threshold:
        row.status = IMPROVED if significant else NOISE
    return row


def _exit_codes(rs: ResultSet) -> dict[str, str]:
    """``tcbench_failed_binaries`` ("bench_a:1,bench_b:-11") as {binary: exit code}."""
    return dict(item.rsplit(":", 1) for item in rs.context_list(schema.RUN_FAILED)
                if ":" in item)


def _missing_note(b: Benchmark, candidate: ResultSet) -> str:
    """Why a baseline benchmark may be absent from the candidate, when the run says so."""
    binary = b.binary
    if binary is None or schema.RUN_BINARIES not in candidate.context:
        return "not in the candidate"
    if binary in candidate.context_list(schema.RUN_LOST):
        code = _exit_codes(candidate).get(binary, "?")
        return f"{binary} wrote no usable results in the candidate run ({exit_text(code)})"
    if binary not in candidate.context_list(schema.RUN_BINARIES):
        return f"{binary} did not run in the candidate run"
    return "not in the candidate"


def _run_problems(candidate: ResultSet) -> list[str]:
    """A candidate run that stopped early or lost a binary's results is never a pass."""
    problems = []
    incomplete = candidate.context.get(schema.RUN_INCOMPLETE)
    if incomplete:
        problems.append(f"the candidate run did not finish ({incomplete})")
    if candidate.partial:
        never = candidate.never_ran
        problems.append(f"the candidate was cut short ({candidate.partial})"
                        + (f"; {len(never)} planned benchmark(s) never ran: "
                           f"{_and(never[:5])}{' ...' if len(never) > 5 else ''}" if never else ""))
    codes = _exit_codes(candidate)
    for binary in candidate.context_list(schema.RUN_LOST):
        problems.append(f"binary {binary} failed in the candidate run without usable results "
                        f"({exit_text(codes.get(binary, '?'))})")
    return problems


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _renames(baseline: ResultSet, candidate: ResultSet) -> dict[str, tuple[str, str]]:
    """{baseline name: (candidate name, why)} for benchmarks that one file names in the first
    grammar (tcbench 0.1) and the other in the current one: usually an old baseline, but an
    older candidate is named too."""
    found = {}
    for name in baseline.benchmarks:
        up = upgrade_v1(name)
        if up and up.name in candidate.benchmarks and name not in candidate.benchmarks \
                and up.name not in baseline.benchmarks:
            timed = ", and the baseline timed it NN" if up.timed_differently else ""
            found[name] = (up.name, f"renamed: the baseline name {_and(up.changes)}; this "
                                    f"benchmark is now {up.name}{timed} (names carry the GEMM "
                                    f"layout since {NAMES_V2_SINCE}); refresh the baseline")
    for name in candidate.benchmarks:
        up = upgrade_v1(name)
        if up and up.name in baseline.benchmarks and name not in baseline.benchmarks \
                and up.name not in candidate.benchmarks:
            found[up.name] = (name, f"renamed: the candidate name {_and(up.changes)}: it comes "
                                    f"from a tcbench older than {NAMES_V2_SINCE}, whose names "
                                    "carry no GEMM layout; compare runs of one version")
    return found


def _impossible(bench: Benchmark, metric: str) -> str | None:
    """The first impossible value of a benchmark, the compared metric's first."""
    defect = bench.defect(metric) if bench.ok else None
    return defect.reason if defect is not None and defect.invalid else bench.impossible()


def _row(name: str, b: Benchmark | None, c: Benchmark | None, candidate: ResultSet,
         options: Options, metric: str) -> Row:
    """The one row of a benchmark, from its two sides (either may be absent)."""
    impossible = [f"{side}: {why}" for side, bench in (("baseline", b), ("candidate", c))
                  if bench is not None and (why := _impossible(bench, metric)) is not None]
    if impossible:
        # A value no measurement gives (a time or rate <= 0, a counter outside its physical
        # range) says the file is corrupt: never folded into a verdict, whatever the row.
        return Row(name, INVALID, threshold=options.threshold_for(name),
                   note="; ".join(impossible))
    if b is None:
        return Row(name, ONLY_CAND, note=c.error or "")
    if c is None and not b.ok:
        return Row(name, ONLY_BASE, note=f"baseline: {b.error}")
    if c is None:
        return Row(name, MISSING, note=_missing_note(b, candidate))
    if c.failed:
        return Row(name, BOTH_FAILED if b.failed else FAILED, note=f"candidate: {c.error}")
    if c.skipped and b.ok:
        return Row(name, SKIPPED_NOW, note=f"candidate: {c.skip_reason}")
    if c.skipped:
        side = "both" if b.skipped else "candidate"
        return Row(name, SKIPPED,
                   note=f"{side}: {c.skip_reason}" + (f"; baseline: {b.error}" if b.failed else ""))
    if not b.ok:
        # Skipped or failed in the baseline, runs now: nothing to compare with, but the
        # candidate's measurement is shown, not hidden behind the baseline's skip.
        sample = c.sample(metric)
        return Row(name, FIXED, cand=sample.center if sample else None,
                   note=f"baseline: {b.error}")
    unsettled = [f"{side}: {why}" for side, bench in (("baseline", b), ("candidate", c))
                 if (why := _unsettled(bench)) is not None]
    if unsettled:
        return Row(name, NOT_COMPARABLE, threshold=options.threshold_for(name),
                   note="; ".join(unsettled))
    return _compare_one(name, b, c, options)


def _unsettled(bench: Benchmark) -> str | None:
    """A sustained row (regime:sustained) that found no steady state is no steady-state figure:
    the sentence that says so, else None. Burst and sustained rows never pair: their names
    differ in ``regime``."""
    if bench.parsed.args.get("regime") != "sustained":
        return None
    steady = bench.center(schema.STEADY)
    if steady is None or steady >= 1:
        return None
    limit = bench.center(schema.SETTLE_S)
    return ("no steady state" + (f" within {limit:.0f} s" if limit is not None else "")
            + ": a sustained row without one is not comparable")


def _renamed_row(row: Row, cand_name: str, why: str) -> Row:
    """A benchmark whose two sides carry names of different grammars: never compared (the
    layout may differ too), never silent. Rows that compare nothing keep their status and
    say the candidate's name."""
    if row.status in COMPARED:
        return Row(row.name, NOT_COMPARABLE, row.base, row.cand, threshold=row.threshold,
                   note=why)
    row.note = (row.note + "; " if row.note else "") + f"renamed: {cand_name} in the candidate"
    return row


def compare(baseline: ResultSet, candidate: ResultSet, options: Options) -> Comparison:
    metric = PCT_OF_PEAK if options.normalize_peak else "time"
    renamed = _renames(baseline, candidate)
    paired = {cand_name for cand_name, _ in renamed.values()}
    rows: list[Row] = []
    names = list(baseline.benchmarks)
    names += [n for n in candidate.benchmarks if n not in baseline.benchmarks and n not in paired]
    for name in names:
        if name in renamed:
            cand_name, why = renamed[name]
            row = _row(name, baseline.benchmarks[name], candidate.benchmarks[cand_name],
                       candidate, options, metric)
            rows.append(_renamed_row(row, cand_name, why))
        else:
            rows.append(_row(name, baseline.benchmarks.get(name), candidate.benchmarks.get(name),
                             candidate, options, metric))
    for row in rows:
        if row.status in COMPARED:
            _judge_clocks(row, baseline, candidate, options)
    for row in rows:
        row.failing = row.status in (REGRESSED, FAILED, INVALID) or (
            row.status in OPT_OUTS and not options.allows(row.status))
    comp = Comparison(rows, context_warnings(baseline, candidate, options), metric)
    comp.problems = _run_problems(candidate)
    comp.synthetic = [f"the {side} ({rs.path})" for side, rs in (("baseline", baseline),
                                                                  ("candidate", candidate))
                      if synthetic.is_synthetic(rs.context)]
    if not any(r.status in COMPARED for r in rows):
        comp.problems.append(f"no benchmark was compared ({len(baseline.benchmarks)} in the "
                             f"baseline, {len(candidate.benchmarks)} in the candidate, none "
                             "measured on both sides)")
    unreachable = [r for r in rows if "cannot reach" in r.basis]
    if unreachable:
        comp.warnings.append(
            f"alpha {options.alpha:g} is below the smallest p-value the U test can reach with "
            f"the repetitions of {len(unreachable)} benchmark(s) (e.g. 2/252 = 0.0079 for 5 vs "
            "5): they were judged by the noise band instead; use more repetitions or a larger "
            "alpha.")
    return comp


def _judge_clocks(row: Row, baseline: ResultSet, candidate: ResultSet, options: Options) -> None:
    """The clock ratio beside the time, and a throttled candidate taken out of the verdict (or,
    with --allow-throttled, judged by its time with the reason said)."""
    # Another GPU model (--normalize-peak) runs at its own clocks: only its slowdowns count.
    same_silicon = not options.normalize_peak and \
        baseline.context.get("gpu_name") == candidate.context.get("gpu_name")
    judgement = power.judge(baseline.benchmarks[row.name], candidate.benchmarks[row.name],
                            baseline.context, candidate.context, same_silicon=same_silicon)
    row.clock_ratio = judgement.clock_ratio
    notes = [row.note, judgement.note]
    if judgement.problem and not options.allow_throttled:
        row.status, notes[0] = THROTTLED, judgement.problem
    elif judgement.problem:
        notes.append(f"throttled, compared anyway: {judgement.problem}")
    row.note = "; ".join(filter(None, notes))


def context_warnings(baseline: ResultSet, candidate: ResultSet, options: Options) -> list[str]:
    warnings = []
    for rs, other in ((baseline, candidate), (candidate, baseline)):
        if not rs.has_tcbench_context and other.has_tcbench_context:
            warnings.append(f"{rs.path} has no tcbench context (GPU, driver, library versions): "
                            "cannot check that both runs used the same machine.")
    for key in (*schema.GPU_MODEL, *schema.SOFTWARE):  # another card of one model: same setup
        a, b = baseline.context.get(key), candidate.context.get(key)
        if a is not None and b is not None and str(a) != str(b):
            what = key.replace("_", " ")
            hint = (" (expected with --normalize-peak)"
                    if key == "gpu_name" and options.normalize_peak
                    else "")
            warnings.append(f"the runs differ in {what}: baseline {a!r}, candidate {b!r}{hint}.")
    warnings += power.context_warnings(baseline.context, candidate.context)
    if baseline.partial:
        warnings.append(f"the baseline was cut short ({baseline.partial}): benchmarks it lacks "
                        "are not checked; refresh it from a complete run.")
    incomplete = baseline.context.get(schema.RUN_INCOMPLETE)
    if incomplete or baseline.context_list(schema.RUN_LOST):
        why = incomplete or "binaries without results: " + ", ".join(
            baseline.context_list(schema.RUN_LOST))
        warnings.append(f"the baseline run is incomplete ({why}): benchmarks it lacks are not "
                        "checked; refresh it from a complete run.")
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
               "clock ratio", "threshold", "evidence", "verdict"]
    rows = []
    for r in comp.rows:
        rows.append([r.name, _fmt_value(r.base, comp.metric), _fmt_value(r.cand, comp.metric),
                     _change_text(r.slowdown),
                     "-" if r.clock_ratio is None else f"{r.clock_ratio:.3f}x",
                     fmt_pct(r.threshold) if r.slowdown is not None else "-",
                     r.basis or "-", r.verdict])
    return headers, rows


SUMMARY_ORDER = [INVALID, REGRESSED, FAILED, MISSING, SKIPPED_NOW, NOT_COMPARABLE, THROTTLED,
                 IMPROVED,
                 UNCHANGED, NOISE, FIXED, SKIPPED, BOTH_FAILED, ONLY_BASE, ONLY_CAND]


def summary_line(comp: Comparison) -> str:
    parts = []
    for status in SUMMARY_ORDER:
        for failing in (True, False):
            n = comp.count(status, failing)
            if n:
                allowed = status in OPT_OUTS and not failing
                parts.append(f"{n} {status.lower() + ' (allowed)' if allowed else status}")
    text = f"tcbench compare: {comp.verdict}: " + ", ".join(parts)
    if comp.problems:
        text += ("; " if parts else "") + "; ".join(comp.problems)
    return text + "."


def _failure_detail(r: Row) -> str:
    if r.status == THROTTLED:
        return f"{r.status} ({r.note}); slowdown {_change_text(r.slowdown)}"
    if r.slowdown is not None:
        return f"{r.status}, {_change_text(r.slowdown)} ({r.basis})"
    return r.status + (f" ({r.note})" if r.note else "")


def render_text(comp: Comparison) -> str:
    headers, rows = _table(comp)
    out = [comp.synthetic_banner] if comp.synthetic_banner else []
    out.append(text_table(headers, rows, right={1, 2, 3, 4, 5}))
    if comp.failing or comp.problems:
        out.append("")
        out.append("Regressions and failures:")
        out += [f"  {r.name}: {_failure_detail(r)}" for r in comp.failing]
        out += [f"  {problem}" for problem in comp.problems]
    out.append("")
    out.append(summary_line(comp))
    # Names and notes come from the result files: no line may hold a control character.
    return printable_lines("\n".join(out))


def document(comp: Comparison, baseline: str, candidate: str) -> Doc:
    """The comparison as a document (a job summary's Markdown): names, notes and paths from the
    files are plain text in doc.py, so a result file cannot add markup, a link or a table row."""
    headers, rows = _table(comp)
    doc = Doc()
    doc.heading(2, "tcbench compare")
    if comp.synthetic_banner:
        doc.banner(comp.synthetic_banner)
    doc.para("Baseline ", Code(baseline), ", candidate ", Code(candidate), "; metric: "
             + ("real time per iteration (lower is better)." if comp.metric == "time"
                else "% of the card's peak (higher is better)."))
    doc.para(Strong(summary_line(comp)))
    doc.bullets([f"warning: {w}" for w in comp.warnings])
    if comp.failing or comp.problems:
        doc.para("Regressions and failures:")
        doc.bullets([(Code(r.name), f": {_failure_detail(r)}") for r in comp.failing]
                    + list(comp.problems))
    doc.table(headers, rows, right={1, 2, 3, 4, 5})
    return doc


def render_markdown(comp: Comparison, baseline: str, candidate: str) -> str:
    return document(comp, baseline, candidate).markdown()
