"""Loading Google Benchmark JSON result files into one small model the commands share.

A result file is what ``--benchmark_out=F --benchmark_out_format=json`` writes: a ``context``
object and a ``benchmarks`` list of rows. Rows of one benchmark are grouped by name: the
``iteration`` rows (one per repetition) and the ``aggregate`` rows (mean, median, stddev, cv).
A row with ``error_occurred`` is a skip when its message starts with ``skipped:`` and a failure
otherwise. tcbench adds its own context keys (GPU, versions, peaks); plain Google Benchmark output
without them loads too.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path


from tcbench_tools.errors import InputError
from tcbench_tools.names import ParsedName, parse, strip_time_suffix

# Context keys that say which machine and software produced a result (compare warns on change).
IDENTITY_KEYS = ("gpu_name", "compute_capability", "driver_version", "cuda_runtime",
                 "cublaslt_version")
# Keys tcbench adds to Google Benchmark's context; any one of them marks a tcbench result.
TCBENCH_KEYS = ("tcbench_version", "gpu_name", "compute_capability")
# Throughput counters in order of preference, with their display units.
THROUGHPUT_UNITS = {"tflops": "TFLOP/s", "tops": "TOP/s", "gbps": "GB/s"}

_TIME_SCALE = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_STRUCTURAL = {
    "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
    "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit",
    "aggregate_name", "aggregate_unit", "error_occurred", "error_message", "label", "big_o",
    "rms", "complexity_n",
}
SKIP_PREFIX = "skipped:"


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

    @property
    def parsed(self) -> ParsedName:
        return parse(self.name)

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

    def throughput_metric(self) -> str | None:
        return next((m for m in THROUGHPUT_UNITS if self.has(m)), None)

    def sample(self, metric: str = "time") -> Sample | None:
        """Per-repetition values of ``time`` (real time, seconds) or of a user counter."""
        if not self.ok or not self.has(metric):
            return None
        if self.iterations:
            values = [_value(row, metric) for row in self.iterations]
            values = [v for v in values if v is not None]
            if not values:
                return None
            # The standard library only (no numpy/scipy): `run` must work with any Python >= 3.11,
            # e.g. a GPU box's PyTorch Python without network (scripts/gpu_check.sh).
            cv = None
            mean = math.fsum(values) / len(values)
            if len(values) >= 2 and mean != 0:
                var = math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)
                cv = math.sqrt(var) / mean  # sample stddev / mean, as scipy.stats.variation(ddof=1)
            return Sample(values, float(statistics.median(values)), len(values), cv)
        center_row = self.aggregates.get("median") or self.aggregates.get("mean")
        if center_row is None or _value(center_row, metric) is None:
            return None
        count = int(center_row.get("repetitions", 1) or 1)
        cv = None
        if "cv" in self.aggregates:
            cv_row = self.aggregates["cv"]
            cv = float(cv_row.get("real_time" if metric == "time" else metric, math.nan))
        elif "stddev" in self.aggregates and "mean" in self.aggregates:
            sd, mean = _value(self.aggregates["stddev"], metric), _value(self.aggregates["mean"], metric)
            cv = sd / mean if sd is not None and mean else None
        if cv is not None and not math.isfinite(cv):
            cv = None
        return Sample([], _value(center_row, metric), count, cv)


def _value(row: dict, metric: str) -> float | None:
    if metric == "time":
        raw = row.get("real_time")
        scale = _TIME_SCALE.get(row.get("time_unit", "ns"))
        if not isinstance(raw, (int, float)) or scale is None:
            return None
        return float(raw) * scale
    raw = row.get(metric)
    return float(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) else None


@dataclass
class ResultSet:
    """One run: the context and the benchmarks of one file (or of a folder's files)."""

    path: str
    context: dict
    benchmarks: dict[str, Benchmark]

    @property
    def has_tcbench_context(self) -> bool:
        return any(key in self.context for key in TCBENCH_KEYS)

    @property
    def label(self) -> str:
        name = self.context.get("gpu_name")
        return str(name) if name else Path(self.path).stem

    def peak(self, precision_or_gbps: str) -> float | None:
        raw = self.context.get(f"peak_{precision_or_gbps}")
        try:
            value = float(raw)
        except (TypeError, ValueError):
            return None
        return value if value > 0 and math.isfinite(value) else None


def _read_json(path: Path) -> object:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path} is not JSON (it is not UTF-8 text).") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}.") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path} is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}).") from None


def _group(path: Path, rows: list) -> dict[str, Benchmark]:
    benchmarks: dict[str, Benchmark] = {}
    for index, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            raise InputError(f"{path} is not Google Benchmark output "
                             f"(entry {index} of 'benchmarks' has no name).")
        run_type = row.get("run_type", "iteration")
        run_name = row.get("run_name")
        if not isinstance(run_name, str):
            run_name = row["name"]
            agg = row.get("aggregate_name")
            if run_type == "aggregate" and agg and run_name.endswith("_" + agg):
                run_name = run_name[: -len(agg) - 1]
        key = strip_time_suffix(run_name)
        bench = benchmarks.setdefault(key, Benchmark(key, str(path)))
        if row.get("error_occurred"):
            if bench.error is None:
                bench.error = str(row.get("error_message") or "error (no message)")
            continue
        if not isinstance(row.get("real_time"), (int, float)):
            raise InputError(f"{path} is not Google Benchmark output "
                             f"({row['name']!r} has no numeric real_time).")
        if run_type == "aggregate":
            bench.aggregates[str(row.get("aggregate_name", "?"))] = row
        else:
            bench.iterations.append(row)
    return benchmarks


def load_file(path: Path) -> ResultSet:
    return parse_doc(_read_json(path), path)


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
    return ResultSet(str(path), context, _group(path, doc["benchmarks"]))


def files_in(path: Path) -> list[Path]:
    """A file is itself; a folder means its results.json, or else every *.json in it."""
    if path.is_dir():
        merged = path / "results.json"
        if merged.is_file():
            return [merged]
        found = sorted(p for p in path.glob("*.json") if p.is_file())
        if not found:
            raise InputError(f"{path} is a folder with no results.json and no *.json files.")
        return found
    if not path.exists():
        raise InputError(f"{path}: no such file or folder.")
    return [path]


def load(path: str | Path) -> ResultSet:
    """Load one result file, or a folder of them (merged into one run)."""
    path = Path(path)
    files = files_in(path)
    sets = [load_file(f) for f in files]
    if len(sets) == 1:
        return sets[0]
    merged: dict[str, Benchmark] = {}
    for rs in sets:
        for key, bench in rs.benchmarks.items():
            if key in merged:
                raise InputError(f"{path}: benchmark {key!r} appears in both "
                                 f"{merged[key].source} and {bench.source}.")
            merged[key] = bench
    return ResultSet(str(path), sets[0].context, merged)
