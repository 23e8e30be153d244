"""``tcbench run --device all``: a node's GPUs side by side, the way an operator finds the one
degraded GPU in an 8-GPU box.

The quick suite runs on each visible GPU (nvidia-smi's list, narrowed by CUDA_VISIBLE_DEVICES
when that is set), one after another by default or all at once with ``--parallel``, each as its
own ``tcbench run --device N --quick`` into ``<out>/gpu<N>/`` (its own logs, results.json and
signal handling: SIGINT and SIGTERM reach every one, and what finished is kept). The summary
then compares every benchmark across the GPUs that ran it: a GPU more than 5 % below the node's
median on the same benchmark (throughput, else time) is flagged with its SM clock, power and
throttle reasons, and the command exits 1. Written to ``<out>/node_summary.txt`` too.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from tcbench_tools import power
from tcbench_tools.errors import EXIT_FAIL, EXIT_NO_GPU, EXIT_OK, InputError
from tcbench_tools.results import THROUGHPUT_UNITS, ResultSet, load
from tcbench_tools.runner import RunOptions, prepare_out_dir
from tcbench_tools.tables import fmt_num, text_table

SLOW_FRACTION = 0.05  # below the node median by more than this: flagged
MAX_LISTED = 5  # flagged benchmarks listed per GPU (the worst first) before "and N more"
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass
class Gpu:
    index: str  # nvidia-smi's index: what --device N means
    name: str
    uuid: str


def visible_gpus() -> list[Gpu]:
    """The GPUs ``nvidia-smi -L`` lists, narrowed by CUDA_VISIBLE_DEVICES (indices or UUIDs)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        raise InputError("--device all needs nvidia-smi to list the node's GPUs, and it is not "
                         "on PATH.")
    try:
        proc = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(f"--device all: nvidia-smi -L failed ({exc}).") from None
    gpus = []
    for line in proc.stdout.splitlines():
        m = re.match(r"GPU (\d+): (.*?) \(UUID: ((?:GPU|MIG)-[^)\s]+)\)", line.strip())
        if m:
            gpus.append(Gpu(*m.groups()))
    if proc.returncode != 0 or not gpus:
        raise InputError("--device all: nvidia-smi lists no GPU "
                         f"(exit {proc.returncode}: {proc.stderr.strip()[:200] or 'no output'}).")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        wanted = [v.strip() for v in visible.split(",") if v.strip()]
        gpus = [g for g in gpus if g.index in wanted or g.uuid in wanted]
        if not gpus:
            raise InputError(f"--device all: CUDA_VISIBLE_DEVICES={visible!r} names none of the "
                             "GPUs nvidia-smi lists.")
    return gpus


def _child_command(opts: RunOptions, bin_dir: Path, gpu: Gpu, out: Path,
                   binaries: list[Path]) -> list[str]:
    cmd = [sys.executable, "-m", "tcbench_tools", "run", "--no-build", "--bin-dir", str(bin_dir),
           "--device", gpu.index, "--quick", "--out", str(out)]
    for b in binaries:
        cmd += ["--bench", b.name]
    if opts.filter:
        cmd += ["--filter", opts.filter]
    if opts.repetitions:
        cmd += ["--repetitions", str(opts.repetitions)]
    if opts.clock_policy:
        cmd += ["--clock-policy", opts.clock_policy]
    if opts.timeout is not None:
        cmd += ["--timeout", repr(opts.timeout)]
    if opts.extra_args:
        cmd += ["--", *opts.extra_args]
    return cmd


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    scripts = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = scripts + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("CUDA_VISIBLE_DEVICES", None)  # each child sets its own (--device)
    return env


class _Children:
    """The per-GPU runs, with SIGINT/SIGTERM/SIGHUP passed on to every one of them."""

    def __init__(self):
        self.procs: list[subprocess.Popen] = []
        self.signum: int | None = None
        self.previous = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self.previous = {s: signal.signal(s, self._on_signal) for s in FORWARDED}
        return self

    def __exit__(self, *exc):
        for s, old in self.previous.items():
            signal.signal(s, old)

    def _on_signal(self, signum, _frame):
        self.signum = self.signum or signum
        for p in self.procs:
            if p.returncode is None:
                try:
                    os.kill(p.pid, signum)
                except OSError:
                    pass

    def start(self, cmd: list[str], log: Path | None) -> subprocess.Popen:
        if self.signum is not None:
            raise KeyboardInterrupt
        out = open(log, "wb") if log else None  # noqa: SIM115 - closed in wait()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT if out else None,
                                stdin=subprocess.DEVNULL, env=_child_env())
        proc.log_file = out  # type: ignore[attr-defined]
        self.procs.append(proc)
        return proc

    @staticmethod
    def wait(proc: subprocess.Popen) -> int:
        while True:
            try:
                code = proc.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                continue
        if proc.log_file:  # type: ignore[attr-defined]
            proc.log_file.close()  # type: ignore[attr-defined]
        return code


@dataclass
class GpuRun:
    gpu: Gpu
    out: Path
    code: int | None = None
    results: ResultSet | None = None
    problem: str = ""


def run_node(binaries: list[Path], opts: RunOptions, bin_dir: Path, parallel: bool = False,
             stream=None) -> int:
    stream = stream or sys.stdout
    gpus = visible_gpus()
    prepare_out_dir(opts.out_dir)
    runs = [GpuRun(g, opts.out_dir / f"gpu{g.index}") for g in gpus]
    how = "all at once" if parallel else "one after another"
    stream.write(f"tcbench run --device all: the quick suite on {len(gpus)} GPU(s), {how}; "
                 f"results in {opts.out_dir}/gpu<N>/\n")
    stream.flush()
    interrupted = None
    with _Children() as children:
        try:
            if parallel:
                procs = []
                for r in runs:
                    r.out.mkdir(parents=True, exist_ok=True)
                    procs.append(children.start(_child_command(opts, bin_dir, r.gpu, r.out,
                                                               binaries), r.out / "run.log"))
                for r, p in zip(runs, procs):
                    r.code = children.wait(p)
            else:
                for r in runs:
                    stream.write(f"\n=== GPU {r.gpu.index}: {r.gpu.name} ({r.gpu.uuid})\n")
                    stream.flush()
                    r.code = children.wait(children.start(
                        _child_command(opts, bin_dir, r.gpu, r.out, binaries), None))
                    if children.signum is not None:
                        break
        except KeyboardInterrupt:
            pass
        interrupted = children.signum
    for r in runs:
        merged = r.out / "results.json"
        if merged.is_file():
            try:
                r.results = load(merged)
            except InputError as exc:
                r.problem = str(exc)
        elif r.code is not None:
            log = r.out / "run.log" if parallel else r.out / "logs"
            r.problem = f"no results (exit {r.code}; log: {log})"
        else:
            r.problem = "not run"
    text = summary(runs)
    stream.write("\n" + text + "\n")
    stream.flush()
    try:
        (opts.out_dir / "node_summary.txt").write_text(text + "\n")
    except OSError as exc:
        print(f"tcbench: cannot write {opts.out_dir / 'node_summary.txt'}: {exc}", file=sys.stderr)
    if interrupted is not None:
        print(f"tcbench: interrupted by {signal.Signals(interrupted).name}: what finished is in "
              f"{opts.out_dir}.", file=sys.stderr)
        return 128 + interrupted
    if runs and all(r.code == EXIT_NO_GPU for r in runs):
        print("tcbench: no CUDA GPU is visible on any of them: nothing was measured.",
              file=sys.stderr)
        return EXIT_NO_GPU
    failed = [r for r in runs if r.code != 0 or r.results is None]
    slow = {f.gpu for f in flag_slow(runs)}
    if failed or slow:
        print(f"tcbench run --device all: failed: {len(failed)} GPU run(s) did not finish cleanly, "
              f"{len(slow)} GPU(s) below the node median.", file=sys.stderr)
        return EXIT_FAIL
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# The comparison across GPUs


def _metric(bench) -> tuple[str, float, bool] | None:
    """(metric, value, higher is better): the throughput counter, else the time."""
    metric = bench.throughput_metric()
    sample = bench.sample(metric) if metric else None
    if sample is not None and sample.center > 0:
        return metric, sample.center, True
    sample = bench.sample("time")
    if sample is not None and sample.center > 0:
        return "time", sample.center, False
    return None


@dataclass
class Flag:
    gpu: str  # index
    benchmark: str
    metric: str
    value: float
    median: float
    shortfall: float  # fraction below the median (0.3: 30 % slower)
    power: power.Power


def flag_slow(runs: list[GpuRun], fraction: float = SLOW_FRACTION) -> list[Flag]:
    """Every (GPU, benchmark) more than ``fraction`` below the node's median on that benchmark,
    among the GPUs that ran it (two or more; with two, the median is their mean)."""
    table: dict[str, dict[str, tuple]] = {}
    for r in runs:
        if r.results is None:
            continue
        for name, bench in r.results.benchmarks.items():
            if bench.ok and (m := _metric(bench)) is not None:
                table.setdefault(name, {})[r.gpu.index] = (*m, bench, r.results.context)
    flags = []
    for name, by_gpu in table.items():
        metrics = {m for m, *_ in by_gpu.values()}
        if len(by_gpu) < 2 or len(metrics) != 1:
            continue
        median = statistics.median(v for _, v, *_ in by_gpu.values())
        for gpu, (metric, value, higher, bench, context) in by_gpu.items():
            shortfall = 1 - value / median if higher else 1 - median / value
            if shortfall > fraction:
                flags.append(Flag(gpu, name, metric, value, median, shortfall,
                                  power.of(bench, context)))
    flags.sort(key=lambda f: (-f.shortfall, f.gpu, f.benchmark))
    return flags


def _fmt(metric: str, value: float) -> str:
    if metric == "time":
        return f"{value * 1e3:.4g} ms"
    return f"{fmt_num(value)} {THROUGHPUT_UNITS.get(metric, metric)}"


def _overall(rs: ResultSet) -> power.Power:
    """A GPU's clocks over all its benchmarks: median clock, highest power and temperature, the
    union of the reasons."""
    powers = [power.of(b, rs.context) for b in rs.benchmarks.values() if b.ok]
    out = power.Power()
    clocks = [p.clock_mhz for p in powers if p.clock_mhz is not None]
    watts = [p.power_w for p in powers if p.power_w is not None]
    temps = [p.temp_c_max for p in powers if p.temp_c_max is not None]
    masks = [p.throttle for p in powers if p.throttle is not None]
    out.clock_mhz = statistics.median(clocks) if clocks else None
    out.power_w = max(watts) if watts else None
    out.temp_c_max = max(temps) if temps else None
    if masks:
        out.throttle = 0
        for m in masks:
            out.throttle |= m
        out.reasons = power.decode(out.throttle, power.reason_table(rs.context))
    return out


def summary(runs: list[GpuRun]) -> str:
    flags = flag_slow(runs)
    by_gpu: dict[str, list[Flag]] = {}
    for f in flags:
        by_gpu.setdefault(f.gpu, []).append(f)
    headers = ["GPU", "name", "uuid", "run", "benchmarks", "below median", "worst", "SM clock",
               "power", "throttle"]
    rows = []
    for r in runs:
        if r.results is None:
            rows.append([r.gpu.index, r.gpu.name, r.gpu.uuid, r.problem or f"exit {r.code}",
                         "-", "-", "-", "-", "-", "-"])
            continue
        mine = by_gpu.get(r.gpu.index, [])
        p = mine[0].power if mine else _overall(r.results)
        rows.append([r.gpu.index, r.gpu.name, r.gpu.uuid, "ok" if r.code == 0 else f"exit {r.code}",
                     str(len(r.results.benchmarks)), str(len(mine)),
                     f"-{mine[0].shortfall * 100:.1f}%" if mine else "-",
                     "-" if p.clock_mhz is None else f"{p.clock_mhz:.0f} MHz",
                     "-" if p.power_w is None else f"{p.power_w:.0f} W",
                     "-" if p.throttle is None else ",".join(p.limiting) or "none"])
    out = ["Node summary: each benchmark against the median of the GPUs that ran it; flagged: "
           f"more than {SLOW_FRACTION * 100:.0f}% below. SM clock, power and throttle: of the "
           "worst benchmark on a flagged GPU, else the median clock, highest power and every "
           "reason over its benchmarks.",
           text_table(headers, rows, right={4, 5, 6, 7, 8})]
    out.append("")
    if flags:
        out.append("Below the node median:")
        for gpu, mine in by_gpu.items():
            for f in mine[:MAX_LISTED]:
                out.append(f"  GPU {gpu}: {f.benchmark}: {_fmt(f.metric, f.value)}, "
                           f"{f.shortfall * 100:.1f}% below the median "
                           f"{_fmt(f.metric, f.median)} ({f.power.describe()})")
            if len(mine) > MAX_LISTED:
                out.append(f"  GPU {gpu}: and {len(mine) - MAX_LISTED} more benchmark(s)")
    else:
        out.append(f"No GPU is more than {SLOW_FRACTION * 100:.0f}% below the node median on "
                   "any benchmark.")
    return "\n".join(out)
