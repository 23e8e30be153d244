"""Loading Google Benchmark JSON result files into one small model the commands share.

A result file is what ``--benchmark_out=F --benchmark_out_format=json`` writes: a ``context``
object and a ``benchmarks`` list of rows. Rows of one benchmark are grouped by name: the
``iteration`` rows (one per repetition) and the ``aggregate`` rows (mean, median, stddev, cv).
A row with ``error_occurred`` is a skip when its message starts with ``skipped:`` and a failure
otherwise; Google Benchmark 1.8's ``"skipped": true`` rows (``SkipWithMessage``) are skips too.
tcbench adds its own context keys (GPU, versions, peaks), the schema the file is written in
(``tcbench_schema``: its counters' ranges are this file's, schema.of_context) and each row's
typed arguments (``tcbench_args``, which must build the row's name: ``Benchmark.parsed``); a file
of tcbench 0.2 or older has neither, and plain Google Benchmark output loads too.

Nothing here folds a bad value into statistics: a metric whose values are not finite numbers, or
outside their physical range (a real_time of zero or less; schema.py for the counters: a negative
TFLOP/s, a pct_of_peak above 200, an accuracy above 100 %), or whose time unit is unknown, has a
``Defect`` that says why, and ``sample()`` returns None for it; ``Benchmark.impossible`` names the
first impossible value of any metric of a benchmark (the gate's INVALID INPUT, the rows the report
leaves out). A field of the wrong JSON type (``"error_occurred": "false"``, a string repetition
index), two rows for the same repetition of one benchmark in a file (two runs concatenated),
folders that mix GPUs and a ``results.json`` older than the per-binary files it merged are input
errors. Only regular files of at most 256 MiB are read (files.py), and every string a file brings
(names, messages, labels, context values) is loaded with its control characters escaped
(printable.py), so no result file can write terminal escapes or extra lines into an output.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from tcbench_tools import files, names, partial, runfile, schema
from tcbench_tools.errors import InputError
from tcbench_tools.names import BenchName, ParsedName, parse, strip_time_suffix
from tcbench_tools.printable import printable

# Keys tcbench adds to Google Benchmark's context; any one of them marks a tcbench result.
TCBENCH_KEYS = (schema.VERSION, *schema.GPU_MODEL)
# Throughput counters in order of preference, with their display units.
THROUGHPUT_UNITS = {metric: schema.unit(metric) for metric in schema.THROUGHPUT}

# Fields Google Benchmark writes in a row itself (plus tcbench run's binary tag); every other
# numeric field of a row is a user counter (tflops, pct_of_peak, rel_error, ...).
GBENCH_FIELDS = frozenset((
    "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
    "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit",
    "aggregate_name", "aggregate_unit", "error_occurred", "error_message", "skipped",
    "skip_message", "label", "big_o", "rms", schema.ROW_BINARY, schema.ARGS_KEY))

# Seconds per unit of Google Benchmark's "time_unit".
TIME_SCALE = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
SKIP_PREFIX = "skipped:"
# The JSON type each of Google Benchmark's own fields must have when present; a value of another
# type is an input error (a string "false" must not read as a failure, nor any other
# non-boolean as a success).
BOOL_FIELDS = ("error_occurred", "skipped")
STRING_FIELDS = ("run_name", "run_type", "aggregate_name", "aggregate_unit", "error_message",
                 "skip_message", "label", "time_unit", schema.ROW_BINARY, "big_o")
COUNT_FIELDS = ("family_index", "per_family_instance_index", "repetitions", "repetition_index",
                "threads", "iterations")
RUN_TYPES = ("iteration", "aggregate")
# The aggregates that stand for a benchmark's centre (checked like a repetition when a file has
# no repetitions); stddev and cv are spreads, not values of the metric.
CENTER_AGGREGATES = ("median", "mean")


def pct_of_peak(achieved: float | None, peak: float | None) -> float | None:
    """``achieved`` as a percentage of ``peak``: the C++ formula (``tcbench::bench::pct_of_peak``,
    100 * achieved / peak), for results that lack the counter. None without a positive peak or
    without a value."""
    if achieved is None or peak is None or not peak > 0:
        return None
    return 100.0 * achieved / peak


def number(raw: object) -> float | None:
    """A JSON number as a float (an integer beyond float range becomes +-inf); None otherwise."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return None
    try:
        return float(raw)
    except OverflowError:
        return math.inf if raw > 0 else -math.inf


def _describe(raw: object) -> str:
    """How a value that is not a finite number reads in an error message."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        return "an integer beyond float range"
    value = number(raw)
    if value is None:
        return f"not a number ({json.dumps(raw)[:40]})"
    return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")


@dataclass(frozen=True)
class Defect:
    """Why a benchmark's metric cannot be used. ``invalid``: a value is there but is not a finite
    number (an input error); otherwise the metric is absent or in a unit the tools do not know."""

    invalid: bool
    reason: str


@dataclass
class Sample:
    """One metric of one benchmark: raw repetitions when the file has them, else aggregates."""

    values: list[float]  # raw per-repetition values; empty when only aggregates were written
    center: float  # median
    count: int  # repetitions behind the center
    cv: float | None  # coefficient of variation (stddev / mean, sample stddev); None if unknown


@dataclass
class Benchmark:
    name: str  # run name without Google Benchmark's /manual_time suffix: the matching key
    source: str  # file it came from
    iterations: list[dict] = field(default_factory=list)
    aggregates: dict[str, dict] = field(default_factory=dict)
    error: str | None = None
    # Its name's parts as the row says them (tcbench_args; None in files written before them)
    args: ParsedName | None = None
    # The binary that wrote it (tcbench run tags every merged row, error rows too)
    binary: str | None = None
    # The vocabulary its file carries (the shipped one for older files): ranges and units.
    schema: schema.Schema = field(default_factory=schema.shipped, repr=False, compare=False)
    # sample() per metric, computed once: reports ask for the same ones many times.
    _samples: dict[str, Sample | None] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def parsed(self) -> ParsedName:
        """Its topic, variant, precision and keys: the row's tcbench_args, else (older files)
        its name split."""
        return self.args if self.args is not None else parse(self.name)

    @property
    def skipped(self) -> bool:
        return self.error is not None and self.error.startswith(SKIP_PREFIX)

    @property
    def failed(self) -> bool:
        return self.error is not None and not self.skipped

    @property
    def ok(self) -> bool:
        return self.error is None and (bool(self.iterations) or bool(self.aggregates))

    @property
    def skip_reason(self) -> str:
        return self.error[len(SKIP_PREFIX):].strip() if self.skipped else ""

    def has(self, metric: str) -> bool:
        rows = self.iterations or list(self.aggregates.values())
        return any(metric in row for row in rows) if metric != "time" else bool(rows)

    def counter_names(self) -> list[str]:
        """Its user counters, sorted: the fields of its rows that hold a number (or a non-finite
        value where a number belongs) and are not Google Benchmark's own."""
        rows = self.iterations or list(self.aggregates.values())
        return sorted({key for row in rows for key, value in row.items()
                       if key not in GBENCH_FIELDS and number(value) is not None})

    @cached_property
    def _throughput_metric(self) -> str | None:
        return next((m for m in THROUGHPUT_UNITS if self.has(m)), None)

    def throughput_metric(self) -> str | None:
        return self._throughput_metric

    def _center_row(self) -> tuple[str, dict] | None:
        for name in ("median", "mean"):
            if name in self.aggregates:
                return f"the {name} aggregate", self.aggregates[name]
        return None

    def defect(self, metric: str = "time") -> Defect | None:
        """Why ``metric`` (``time`` or a counter) cannot be compared, or None when it can."""
        if not self.ok:
            return Defect(False, "it did not run")
        if self.iterations:
            rows = [(f"repetition {row.get('repetition_index', i)}", row)
                    for i, row in enumerate(self.iterations)]
        else:
            center = self._center_row()
            if center is None:
                return Defect(False, "it has neither repetitions nor a median or mean aggregate")
            rows = [center]
        field_name = "real_time" if metric == "time" else metric
        if metric != "time" and not any(metric in row for _, row in rows):
            return Defect(False, f"it has no {metric} counter")
        for where, row in rows:
            if metric == "time":
                unit = row.get("time_unit", "ns")
                if _time_scale(row) is None:
                    return Defect(False, f"its time unit {json.dumps(unit)[:20]} is not one of "
                                         "ns, us, ms, s")
            if field_name not in row:
                return Defect(True, f"{where} has no {field_name}")
            value = number(row[field_name])
            if value is None or not math.isfinite(value):
                return Defect(True, f"{field_name} of {where} is {_describe(row[field_name])}")
            impossible = (self.schema.out_of_range(metric, value) if metric != "time"
                          else None if value > 0 else "outside its physical range (> 0)")
            if impossible:
                shown = (f"{value:g} {row.get('time_unit', 'ns')}" if metric == "time"
                         else f"{value:g}")
                return Defect(True, f"{field_name} of {where} is {shown}, {impossible}")
        return None

    def impossible(self) -> str | None:
        """The first value of this benchmark that no correct measurement gives, as "<field> of
        repetition <i> is <value>, <why>": a real_time that is not a number greater than zero, a
        counter of the schema that is not a finite number or lies outside its physical range
        (schema.py; other programs' counters only need to be finite). The repetitions are
        checked, else the median and mean aggregates; a counter absent from a row is not a value
        and is not checked here. None when every value is possible (or it did not run)."""
        if not self.ok:
            return None
        if self.iterations:
            rows = [(f"repetition {row.get('repetition_index', i)}", row)
                    for i, row in enumerate(self.iterations)]
        else:
            rows = [(f"the {a} aggregate", self.aggregates[a]) for a in CENTER_AGGREGATES
                    if a in self.aggregates]
        fields = {key for _, row in rows for key in row
                  if key == "real_time" or key not in GBENCH_FIELDS}
        first = ("real_time", *schema.THROUGHPUT, schema.PCT_OF_PEAK)  # then the rest, by name
        for key in sorted(fields, key=lambda k: (first.index(k) if k in first else 99, k)):
            known = key == "real_time" or self.schema.counter(key) is not None
            for where, row in rows:
                if key not in row:
                    continue
                value = number(row[key])
                if value is None:
                    if known:
                        return f"{key} of {where} is {_describe(row[key])}"
                    continue
                if not math.isfinite(value):
                    return f"{key} of {where} is {_describe(row[key])}"
                if key == "real_time":
                    if value > 0:
                        continue
                    why, shown = "outside its physical range (> 0)", \
                        f"{value:g} {row.get('time_unit', 'ns')}"
                else:
                    why, shown = self.schema.out_of_range(key, value), f"{value:g}"
                if why:
                    return f"{key} of {where} is {shown}, {why}"
        return None

    def center(self, metric: str = "time") -> float | None:
        """The benchmark's value of ``metric`` (``time`` in seconds, or a counter): the median of
        its repetitions, else its median (or mean) aggregate. None when it did not run, lacks the
        metric or the metric has a defect (``defect``): never a value that is not finite."""
        sample = self.sample(metric)
        return sample.center if sample is not None else None

    def sample(self, metric: str = "time") -> Sample | None:
        """Per-repetition values of ``time`` (real time, seconds) or of a user counter; None when
        the metric is absent or has a defect (see ``defect``)."""
        if metric not in self._samples:
            self._samples[metric] = self._sample(metric)
        return self._samples[metric]

    def _sample(self, metric: str) -> Sample | None:
        if not self.has(metric) or self.defect(metric) is not None:
            return None
        if self.iterations:
            values = [_value(row, metric) for row in self.iterations]
            return Sample(values, _median(values), len(values), _cv(values))
        _, center_row = self._center_row()
        count = number(center_row.get("repetitions"))
        count = int(count) if count is not None and math.isfinite(count) and count >= 1 else 1
        cv = None
        if "cv" in self.aggregates:
            cv = number(self.aggregates["cv"].get("real_time" if metric == "time" else metric))
        elif "stddev" in self.aggregates and "mean" in self.aggregates:
            sd = _value(self.aggregates["stddev"], metric)
            mean = _value(self.aggregates["mean"], metric)
            cv = sd / mean if sd is not None and mean else None
        if cv is not None and not math.isfinite(cv):
            cv = None
        return Sample([], _value(center_row, metric), count, cv)


def _median(values: list[float]) -> float:
    """The median of finite values, never overflowing: of two middle values near the largest
    float, their mean is taken halved first (statistics.median's (a + b) / 2 is inf)."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[mid])
    a, b = ordered[mid - 1], ordered[mid]
    middle = a + (b - a) / 2
    return float(middle if math.isfinite(middle) else a / 2 + b / 2)


def _cv(values: list[float]) -> float | None:
    """Sample standard deviation over the mean (scipy.stats.variation with ddof=1), computed on
    the values divided by the largest, so that no finite values overflow (1e300 squared is
    beyond float range); None for one value, a mean of zero or a result that is not finite.
    With math.fsum: statistics.stdev sums exact fractions, 50 times slower (a run of 2000
    benchmarks with 3 counters asks for 8000 of them)."""
    scale = max(abs(v) for v in values)
    if len(values) < 2 or scale == 0:
        return None
    unit = [v / scale for v in values]
    mean = math.fsum(unit) / len(unit)
    if mean == 0:
        return None
    cv = math.sqrt(math.fsum((v - mean) ** 2 for v in unit) / (len(unit) - 1)) / abs(mean)
    return cv if math.isfinite(cv) else None


def _time_scale(row: dict) -> float | None:
    unit = row.get("time_unit", "ns")
    return TIME_SCALE.get(unit) if isinstance(unit, str) else None


def _value(row: dict, metric: str) -> float | None:
    if metric == "time":
        value, scale = number(row.get("real_time")), _time_scale(row)
        return value * scale if value is not None and scale is not None else None
    return number(row.get(metric))


@dataclass
class ResultSet:
    """One run: the context and the benchmarks of one file (or of a folder's files)."""

    path: str
    context: dict
    benchmarks: dict[str, Benchmark]
    # Benchmarks left out because they hold impossible values (without_invalid): name -> why.
    invalid: dict[str, str] = field(default_factory=dict)
    # A file cut short (its binary was stopped or killed): why, in one sentence, and the planned
    # benchmarks that never ran (from its row file; empty when the plan is unknown).
    partial: str | None = None
    never_ran: list[str] = field(default_factory=list)
    # The vocabulary the file carries (tcbench_schema), else the one the tools ship.
    schema: schema.Schema = field(default_factory=schema.shipped, repr=False)

    @property
    def has_tcbench_context(self) -> bool:
        return any(key in self.context for key in TCBENCH_KEYS)

    @property
    def label(self) -> str:
        name = self.context.get("gpu_name")
        label = name.strip() if isinstance(name, str) and name.strip() else Path(self.path).stem
        return label if len(label) <= 60 else label[:57] + "..."

    def context_list(self, key: str) -> list[str]:
        """A comma-separated context value (``tcbench_binaries`` ...) as a list."""
        return runfile.context_list(self.context, key)

    def get(self, name: str | BenchName) -> Benchmark | None:
        """The benchmark of this name (a string, or a ``names.BenchName``), or None."""
        return self.benchmarks.get(str(name))

    def find(self, topic: names.Match = None, variant: names.Match = None,
             precision: names.Match = None, *, ran: bool = False,
             where: Callable[[ParsedName], bool] | None = None,
             **args: names.Match) -> list[Benchmark]:
        """The benchmarks whose parsed names match, in the order of the file: ``topic``,
        ``variant``, ``precision`` and each ``key=`` of ``args`` (a name key of schema.KEYS:
        ``layout="tn"``, ``m=4096``, ``tokens=names.ANY``) match as ``names.matches`` says (a
        value, several in a tuple or set, a test, ``names.ANY``: present; None for a key: absent);
        ``where`` tests the whole ParsedName (``names.is_square``); ``ran``: only those that ran.
        A key the schema does not know raises names.UnknownKey: a query for a renamed key fails
        where it is made, instead of finding nothing."""
        query = names.Query(topic, variant, precision, args, where)
        return [b for b in self.benchmarks.values()
                if query.matches(b.parsed) and (b.ok or not ran)]

    def peak(self, precision_or_gbps: str) -> float | None:
        raw = self.context.get(f"peak_{precision_or_gbps}")
        try:
            value = float(raw)
        except (TypeError, ValueError, OverflowError):
            return None
        return value if value > 0 and math.isfinite(value) else None

    def lacks(self, precision: str) -> bool:
        """The context says the card has no peak for ``precision`` (``peak_<p>`` is 0): the GPU
        does not support it, as opposed to a result that is merely absent."""
        raw = self.context.get(f"peak_{precision}")
        try:
            return raw is not None and float(raw) == 0.0
        except (TypeError, ValueError, OverflowError):
            return False


def without_invalid(rs: ResultSet) -> ResultSet:
    """``rs`` without the benchmarks that hold an impossible value (``Benchmark.impossible``),
    which are listed in ``invalid`` instead: the report leaves them out of every table and plot
    rather than showing, say, a negative TFLOP/s as a card's best."""
    keep, invalid = {}, dict(rs.invalid)
    for name, bench in rs.benchmarks.items():
        why = bench.impossible()
        if why is None:
            keep[name] = bench
        else:
            invalid[name] = why
    return ResultSet(rs.path, rs.context, keep, invalid, rs.partial, list(rs.never_ran),
                     rs.schema)


def _read_json(path: Path) -> object:
    try:
        text = files.read_text(path, files.RESULTS_LIMIT, "result file")
    except UnicodeDecodeError:
        raise InputError(f"{path} is not JSON (it is not UTF-8 text).") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path} is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}).") from None
    except RecursionError:
        raise InputError(f"{path} is not Google Benchmark output (its JSON is nested too "
                         "deeply to read).") from None
    except ValueError as exc:  # e.g. an integer literal longer than Python's digit limit
        raise InputError(f"{path} is not usable JSON ({str(exc).split(':')[0]}).") from None


def _json_text(raw: object) -> str:
    return printable(json.dumps(raw)[:40])


def _check_types(path: Path, index: int, row: dict) -> None:
    """Google Benchmark's own fields must have its JSON types (BOOL_FIELDS, ...)."""
    where = f"{path}: entry {index} of 'benchmarks' ({printable(row['name'][:80])!r})"
    for key in BOOL_FIELDS:
        if key in row and not isinstance(row[key], bool):
            raise InputError(f"{where} has {key} {_json_text(row[key])}, which must be true or "
                             "false (a JSON boolean).")
    for key in STRING_FIELDS:
        if key in row and not isinstance(row[key], str):
            raise InputError(f"{where} has {key} {_json_text(row[key])}, which must be a "
                             "string.")
    for key in COUNT_FIELDS:
        value = row.get(key)
        if key in row and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise InputError(f"{where} has {key} {_json_text(value)}, which must be a whole "
                             "number of 0 or more.")
    # Counts that cannot be zero (issue 34): a row is one of 1 or more repetitions, run by 1 or
    # more threads, and a measured row ran 1 or more iterations (an error or skip row says 0).
    failed = row.get("error_occurred") is True or row.get("skipped") is True
    for key in ("repetitions", "threads") + (() if failed else ("iterations",)):
        if row.get(key) == 0 and not isinstance(row.get(key), bool):
            raise InputError(f"{where} has {key} 0, which no run of a benchmark gives"
                             f"{'' if key != 'iterations' else ' (it holds a time)'}.")
    if row.get("run_type", "iteration") not in RUN_TYPES:
        raise InputError(f"{where} has run_type {_json_text(row['run_type'])}, which must be "
                         "\"iteration\" or \"aggregate\".")


def _clean_strings(row: dict) -> None:
    """Control characters of a row's strings escaped (printable.py), in place."""
    for key, value in row.items():
        if isinstance(value, str) and not value.isprintable():
            row[key] = printable(value)


def _clean_context(path: Path, context: dict) -> dict:
    """The context with its keys and string values made printable; tcbench's own keys (the run's
    bookkeeping, the GPU's identity) must be strings."""
    out = {}
    for key, value in context.items():
        name = printable(key)
        if name == schema.CONTEXT_KEY:
            out[name] = value  # checked where it is read (schema.of_context)
            continue
        if (name.startswith("tcbench_") or name in schema.GPU_MODEL) and not isinstance(value, str):
            raise InputError(f"{path}: the context's {name} is {_json_text(value)}, which must be "
                             "a string.")
        out[name] = printable(value) if isinstance(value, str) else value
    return out


def _duplicate(path: Path, key: str, what: str) -> InputError:
    return InputError(f"{path} holds {what} of benchmark {key!r} twice: two runs of it are in one "
                      "file (concatenated output?); keep one run per file.")


def _args(path: Path, index: int, row: dict, key: str,
          file_schema: schema.Schema) -> ParsedName | None:
    """The row's tcbench_args, checked to build the name it is the row of (key)."""
    if schema.ARGS_KEY not in row:
        return None
    where = f"{path}: entry {index} of 'benchmarks' ({printable(row['name'][:80])!r})"
    try:
        parsed = names.from_args(row[schema.ARGS_KEY], file_schema.key_names)
    except ValueError as exc:
        raise InputError(f"{where} has {schema.ARGS_KEY} that {printable(str(exc))}.") from None
    if str(BenchName.of(parsed)) != key:
        raise InputError(f"{where} has {schema.ARGS_KEY} that build another name "
                         f"({printable(str(BenchName.of(parsed))[:80])!r}).")
    return parsed


def _group(path: Path, rows: list, file_schema: schema.Schema | None = None
           ) -> dict[str, Benchmark]:
    file_schema = file_schema or schema.shipped()
    benchmarks: dict[str, Benchmark] = {}
    seen: set[tuple] = set()  # (key, kind, repetition or aggregate name): one row each
    for index, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            raise InputError(f"{path} is not Google Benchmark output "
                             f"(entry {index} of 'benchmarks' has no name).")
        _check_types(path, index, row)
        _clean_strings(row)
        run_type = row.get("run_type", "iteration")
        run_name = row.get("run_name")
        if not isinstance(run_name, str):
            run_name = row["name"]
            agg = row.get("aggregate_name")
            if (run_type == "aggregate" and isinstance(agg, str) and agg
                    and run_name.endswith("_" + agg)):
                run_name = run_name[: -len(agg) - 1]
        key = strip_time_suffix(run_name)
        bench = benchmarks.get(key)
        if bench is None:
            bench = benchmarks[key] = Benchmark(key, str(path), schema=file_schema)
        if isinstance(row.get(schema.ROW_BINARY), str):
            bench.binary = row[schema.ROW_BINARY]
        args = _args(path, index, row, key, file_schema)
        if args is not None:
            bench.args = args
        if run_type == "aggregate":
            token = (key, "aggregate", str(row.get("aggregate_name", "?")))
            what = f"the {token[2]} aggregate"
        else:
            rep = row.get("repetition_index")
            token = (key, "repetition", str(rep))
            what = "a row without repetition_index" if rep is None else f"repetition {rep}"
        if token in seen:
            raise _duplicate(path, key, what)
        seen.add(token)
        if row.get("error_occurred") is True or row.get("skipped") is True:
            if bench.error is None:
                if row.get("error_occurred") is True:
                    bench.error = str(row.get("error_message") or "error (no message)")
                else:  # Google Benchmark >= 1.8: SkipWithMessage
                    bench.error = f"{SKIP_PREFIX} {row.get('skip_message') or 'no reason given'}"
            continue
        if number(row.get("real_time")) is None:
            raise InputError(f"{path} is not Google Benchmark output "
                             f"({row['name']!r} has no numeric real_time).")
        if run_type == "aggregate":
            bench.aggregates[token[2]] = row
        else:
            bench.iterations.append(row)
    return benchmarks


def load_file(path: Path) -> ResultSet:
    """One Google Benchmark JSON file. A file a binary left cut short (stopped at a time limit,
    killed, crashed: Google Benchmark closes its brackets only at the end) is read from the
    binary's row file beside it, or else repaired up to its last complete row (partial.py); the
    ResultSet says so in ``partial`` and names the planned rows that never ran."""
    try:
        doc = _read_json(path)
    except InputError:
        recovered = partial.recover(Path(path))
        if recovered is None:
            raise
        doc, why, planned = recovered
        rs = parse_doc(doc, path)
        rs.partial = why
        rs.never_ran = [name for name in planned if name not in rs.benchmarks]
        return rs
    return parse_doc(doc, path)


def parse_doc(doc: object, path: str | Path = "<memory>") -> ResultSet:
    """Check that ``doc`` (parsed JSON) is Google Benchmark output and group its rows."""
    path = Path(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise InputError(f"{path} is not Google Benchmark output (no 'benchmarks' list).")
    context = doc.get("context")
    if not isinstance(context, dict):
        raise InputError(f"{path} is not Google Benchmark output (no 'context' object).")
    if not doc["benchmarks"]:
        raise InputError(f"{path} holds no benchmarks (its 'benchmarks' list is empty).")
    context = _clean_context(path, context)
    file_schema = schema.of_context(context, str(path))
    # A merged run with binaries cut short (runfile.merge) says so as a file cut short does.
    cut = context.get(schema.RUN_CUT)
    return ResultSet(str(path), context, _group(path, doc["benchmarks"], file_schema),
                     partial=cut or None,
                     never_ran=runfile.context_list(context, schema.RUN_NEVER_RAN) if cut else [],
                     schema=file_schema)


def load(path: str | Path) -> ResultSet:
    """Load one result file, or a run folder as one run (runfile.py: its results.json, checked to
    be fresh, else the union of its files, which must name one GPU)."""
    path = Path(path)
    found = runfile.files_in(path)
    if len(found) == 1:
        rs = load_file(found[0])
        if found[0].name == runfile.MERGED:
            runfile.check_fresh(rs.context, found[0])
        return rs
    # A folder without results.json: a run cut short before its merge (tcbench run or the GPU
    # check killed), or files put together by hand. A file that cannot be read is left out and
    # named as the run's cut-short note, so the others still count.
    sets, unusable = [], []
    for f in found:
        try:
            sets.append(load_file(f))
        except InputError as exc:
            unusable.append(printable(f"{f.name} is unusable ({str(exc).rstrip('.')})"))
    if not sets:
        raise InputError(f"{path} holds no readable result file: " + "; ".join(unusable) + ".")
    try:
        runfile.check_one_gpu([(Path(rs.path).name, rs.context) for rs in sets])
    except runfile.MixedGpus as mixed:
        raise InputError(mixed.in_folder(path)) from None
    merged = runfile.union(path, [(rs.path, rs.benchmarks) for rs in sets])
    cut = [rs for rs in sets if rs.partial]
    return ResultSet(str(path), sets[0].context, merged,
                     partial="; ".join([*(rs.partial for rs in cut), *unusable]) or None,
                     never_ran=[name for rs in cut for name in rs.never_ran],
                     schema=sets[0].schema)
