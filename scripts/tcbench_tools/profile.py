"""``tcbench profile BINARY [-- FLAGS]``: the tensor-pipe counters of a benchmark binary, read by
Nsight Compute instead of tcbench's in-process CUPTI collection, to cross-check the numbers.

The metric list is the benchmarks' own: ``tcbench_metrics`` (built beside the ``bench_*``
binaries from common/profiling) prints the current GPU's list as JSON, and ncu is run with
exactly those names::

    ncu --metrics <list> --csv --clock-control none --target-processes all BINARY FLAGS

``--clock-control none`` leaves the GPU's clocks as the benchmarks see them (ncu locks them to
base clock by default). The benchmark binary is told ``TCBENCH_COUNTERS=off`` so that ncu, not
its own CUPTI session, owns the counters. ncu's CSV (the "details" page: one row per kernel
launch and metric) is averaged per kernel and printed with the benchmarks' counter names.

``--nvtx-range NAME`` profiles only the kernels inside the binary's NVTX push/pop range NAME
(``ncu --nvtx --nvtx-include NAME/``; bench_tensor_util wraps one whole training step of every
train_step row in ``tcbench_step``), adds the weights ``sm__cycles_active.avg`` and
``gpu__time_duration.sum`` (``--print-units base``), and prints one more row: every launch of the
range as ONE number, the way a CUPTI range over those kernels reads it. A
``pct_of_peak_sustained_active`` metric is the counter's sum over the active SM cycles' sum, so
its launches are weighted by their active cycles; an ``_elapsed`` one by their duration.

Exit codes: 0 printed; 1 ncu or the binary failed; 2 bad arguments; 3 ncu is not installed;
77 no CUDA GPU.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tcbench_tools.arguments import ascii_int
from tcbench_tools.errors import EXIT_FAIL, EXIT_NO_GPU, EXIT_OK, InputError

EXIT_NO_NCU = 3

NCU_MISSING = ("Nsight Compute (ncu) is not installed or not on PATH: install it (CUDA toolkit "
               "component 'nsight-compute') or pass --ncu PATH; the in-process counters of the "
               "benchmarks need no ncu.")
PERMISSION = ("ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM): run as "
              "root or load the driver with NVreg_RestrictProfilingToAdminUsers=0.")

# The details page's fixed columns (ncu --csv; newer versions append rule columns after these).
KERNEL_COLUMN, ID_COLUMN = "Kernel Name", "ID"
METRIC_COLUMNS = ("Metric Name", "Metric Unit", "Metric Value")


@dataclass(frozen=True)
class Metric:
    counter: str  # tcbench's counter name, e.g. tensor_active_pct
    name: str     # the ncu/CUPTI metric name


@dataclass
class MetricList:
    chip: str
    family: str
    metrics: list[Metric]


# The weights of --nvtx-range's one-number row, and the units ncu may print them in.
ACTIVE_CYCLES = "sm__cycles_active.avg"
DURATION = "gpu__time_duration.sum"
WEIGHTS = (ACTIVE_CYCLES, DURATION)
UNIT_SCALE = {"cycle": 1.0, "Kcycle": 1e3, "Mcycle": 1e6, "Gcycle": 1e9, "nsecond": 1e-9,
              "usecond": 1e-6, "msecond": 1e-3, "second": 1.0}


@dataclass
class Launch:
    """One profiled kernel launch: its name and metric values (and units) by metric name."""
    launch_id: str
    kernel: str
    values: dict[str, float] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)


@dataclass
class KernelSummary:
    kernel: str
    launches: int
    means: dict[str, float]  # by counter name


def find_ncu(explicit: str | None = None) -> Path | None:
    """ncu from --ncu, PATH, the CUDA toolkit, or the newest /opt/nvidia/nsight-compute/*."""
    if explicit:
        path = Path(explicit)
        return path if path.is_file() and os.access(path, os.X_OK) else None
    found = shutil.which("ncu")
    if found:
        return Path(found)
    candidates = [Path("/usr/local/cuda/bin/ncu")]
    candidates += sorted(Path("/opt/nvidia/nsight-compute").glob("*/ncu"), reverse=True)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    return None


def parse_metric_list(text: str) -> MetricList:
    """The JSON tcbench_metrics prints."""
    try:
        doc = json.loads(text)
        metrics = [Metric(m["counter"], m["name"]) for m in doc["metrics"]]
        return MetricList(doc["chip"], doc.get("family", ""), metrics)
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise InputError(f"tcbench_metrics printed something that is not its metric list "
                         f"({exc}).") from None


def metric_list(binary: Path, chip: str | None) -> MetricList | int:
    """Runs tcbench_metrics beside ``binary``; its exit code when it cannot answer."""
    tool = binary.parent / "tcbench_metrics"
    if not tool.is_file():
        raise InputError(f"no tcbench_metrics beside {binary} (it is built with the benchmarks; "
                         f"build the project or pass the binary from build/<preset>/bin).")
    cmd = [str(tool)] + (["--chip", chip] if chip else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        return proc.returncode
    return parse_metric_list(proc.stdout)


def ncu_command(ncu: Path, metrics: list[Metric], binary: Path, extra: list[str],
                launch_count: int | None = None, kernel_regex: str | None = None,
                nvtx_range: str | None = None) -> list[str]:
    names = [m.name for m in metrics]
    if nvtx_range:
        names += [w for w in WEIGHTS if w not in names]
    cmd = [str(ncu), "--metrics", ",".join(names), "--csv",
           "--clock-control", "none", "--target-processes", "all"]
    if launch_count:
        cmd += ["--launch-count", str(launch_count)]
    if kernel_regex:
        cmd += ["--kernel-name", f"regex:{kernel_regex}"]
    if nvtx_range:
        cmd += ["--nvtx", "--nvtx-include", f"{nvtx_range}/", "--print-units", "base"]
    return cmd + [str(binary)] + list(extra)


def _number(text: str) -> float | None:
    """ncu prints thousands separators ("1,234.5") and "n/a" for metrics it could not collect."""
    cleaned = text.strip().replace(",", "")
    try:
        return float(cleaned)
    except ValueError:
        return None


def parse_ncu_csv(text: str) -> list[Launch]:
    """Launches from ncu's CSV details page; lines before the header (==PROF==, the binary's
    own output) are skipped."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(f'"{ID_COLUMN}",')), None)
    if start is None:
        raise InputError("ncu printed no CSV table (no line starts with \"ID\"): did it profile "
                         "any kernel? Check --benchmark_filter and --kernel-regex.")
    reader = csv.DictReader(io.StringIO("\n".join(lines[start:])))
    missing = [c for c in (ID_COLUMN, KERNEL_COLUMN, *METRIC_COLUMNS)
               if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"ncu's CSV lacks the column(s) {', '.join(missing)}: not the details "
                         f"page this tool reads (was --page raw given?).")
    launches: dict[str, Launch] = {}
    for row in reader:
        launch_id = row[ID_COLUMN]
        if ascii_int(launch_id) is None:
            continue  # a stray non-CSV line that happens to contain commas
        launch = launches.setdefault(launch_id, Launch(launch_id, row[KERNEL_COLUMN]))
        value = _number(row["Metric Value"] or "")
        if value is not None:
            launch.values[row["Metric Name"]] = value
            launch.units[row["Metric Name"]] = (row["Metric Unit"] or "").strip()
    return list(launches.values())


def _weight(launch: Launch, metric: str) -> float | None:
    """The launch's weight for ``metric`` in base units, or None when ncu gave none."""
    name = ACTIVE_CYCLES if "pct_of_peak_sustained_active" in metric else DURATION
    if name not in launch.values:
        return None
    scale = UNIT_SCALE.get(launch.units.get(name, ""), 1.0)
    return launch.values[name] * scale


def aggregate(launches: list[Launch], metrics: list[Metric]) -> dict[str, float]:
    """Every launch as one range: per counter, the mean over the launches weighted by their
    active SM cycles (pct_of_peak_sustained_active metrics) or duration (_elapsed ones), over the
    launches that have both the value and the weight."""
    out = {}
    for m in metrics:
        pairs = [(launch.values[m.name], _weight(launch, m.name)) for launch in launches
                 if m.name in launch.values]
        pairs = [(v, w) for v, w in pairs if w is not None and w > 0]
        total = sum(w for _, w in pairs)
        if total > 0:
            out[m.counter] = sum(v * w for v, w in pairs) / total
    return out


def short_kernel(name: str, width: int = 72) -> str:
    """'void ns::kernel<T>(args)' -> 'ns::kernel<T>', cut to ``width``."""
    name = name.removeprefix("void ").strip()
    if name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i]
                break
    return name if len(name) <= width else name[:width - 3] + "..."


def summarize(launches: list[Launch], metrics: list[Metric]) -> list[KernelSummary]:
    """Mean of every metric per kernel name, kernels in order of first launch."""
    order: list[str] = []
    groups: dict[str, list[Launch]] = {}
    for launch in launches:
        if launch.kernel not in groups:
            order.append(launch.kernel)
        groups.setdefault(launch.kernel, []).append(launch)
    out = []
    for kernel in order:
        group = groups[kernel]
        means = {}
        for m in metrics:
            values = [g.values[m.name] for g in group if m.name in g.values]
            if values:
                means[m.counter] = sum(values) / len(values)
        out.append(KernelSummary(kernel, len(group), means))
    return out


def render_table(summary: list[KernelSummary], metrics: list[Metric],
                 whole: KernelSummary | None = None) -> str:
    """The per-kernel table; ``whole`` (the --nvtx-range row) goes last, under a rule."""
    counters = [m.counter for m in metrics]
    rows = [["kernel", "launches", *counters]]
    for s in summary + ([whole] if whole else []):
        rows.append([short_kernel(s.kernel), str(s.launches),
                     *(f"{s.means[c]:.1f}" if c in s.means else "-" for c in counters)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, r in enumerate(rows):
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]
        if whole and n == len(rows) - 1:
            lines.append("  ".join("-" * w for w in widths))
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def run_profile(binary: Path, extra: list[str], ncu: str | None = None, chip: str | None = None,
                launch_count: int | None = None, kernel_regex: str | None = None,
                nvtx_range: str | None = None) -> int:
    tool = find_ncu(ncu)
    if tool is None:
        print(f"tcbench profile: {NCU_MISSING}", file=sys.stderr)
        return EXIT_NO_NCU
    if not binary.is_file():
        raise InputError(f"{binary} is not a file (pass a bench_* binary, e.g. "
                         f"build/release/bin/bench_tensor_util).")
    listed = metric_list(binary, chip)
    if isinstance(listed, int):
        return EXIT_NO_GPU if listed == EXIT_NO_GPU else EXIT_FAIL
    cmd = ncu_command(tool, listed.metrics, binary, extra, launch_count, kernel_regex, nvtx_range)
    print(f"tcbench profile: {listed.chip} ({listed.family}), {len(listed.metrics)} metrics: "
          f"{' '.join(cmd)}", flush=True)
    env = dict(os.environ, TCBENCH_COUNTERS="off")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    output = proc.stdout + proc.stderr
    if "ERR_NVGPUCTRPERM" in output:
        print(f"tcbench profile: {PERMISSION}", file=sys.stderr)
        return EXIT_FAIL
    try:
        launches = parse_ncu_csv(proc.stdout)
    except InputError:
        sys.stderr.write(proc.stderr[-4000:])
        if proc.returncode != 0:
            print(f"tcbench profile: ncu exited with {proc.returncode} and printed no table.",
                  file=sys.stderr)
            return EXIT_FAIL
        raise
    whole = None
    if nvtx_range:
        whole = KernelSummary(f"all in {nvtx_range}", len(launches),
                              aggregate(launches, listed.metrics))
    print(render_table(summarize(launches, listed.metrics), listed.metrics, whole))
    if whole:
        print(f"tcbench profile: the last row is every launch in NVTX range {nvtx_range} as one "
              f"range: active-cycle metrics weighted by {ACTIVE_CYCLES}, elapsed ones by "
              f"{DURATION}; compare it with the benchmark's own counters.")
    if proc.returncode != 0:
        print(f"tcbench profile: ncu exited with {proc.returncode} (the table above is what it "
              f"collected).", file=sys.stderr)
        return EXIT_FAIL
    return EXIT_OK


def nvtx_range_arg(text: str) -> str:
    """An NVTX push/pop range name for --nvtx-include: not empty, no '/' (ncu's nesting
    separator) and no '@' (its domain separator)."""
    if not text or "/" in text or "@" in text:
        raise InputError(f"--nvtx-range {text!r} is not a range name (no '/' or '@'; e.g. "
                         f"tcbench_step).")
    return text


def kernel_regex_arg(text: str) -> str:
    try:
        re.compile(text)
    except re.error as exc:
        raise InputError(f"--kernel-regex {text!r} is not a regular expression ({exc}).") from None
    return text
