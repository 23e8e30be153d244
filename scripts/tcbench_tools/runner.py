"""``tcbench run``: run every benchmark binary once, merge their JSON, print a summary.

Each binary ``bench_<topic>`` is run one after the other (never concurrently: they share the GPU)
with ``--benchmark_out=<out>/<binary>.json``. Its console output goes to ``<out>/logs/``.
Exit status of a binary: 0 ran; 77 no CUDA GPU (one line on stderr): the whole run stops, since
every other binary would say the same; anything else: that binary failed, the others still run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from tcbench_tools import summary
from tcbench_tools.errors import EXIT_FAIL, EXIT_NO_GPU, EXIT_OK, EXIT_USAGE, InputError
from tcbench_tools.results import load_file

QUICK_MIN_TIME = "0.05"  # seconds; Google Benchmark 1.7 takes a plain number
NO_MATCH = "no benchmark matched the filter"


@dataclass
class RunOptions:
    out_dir: Path
    quick: bool = False
    filter: str | None = None
    repetitions: int | None = None
    device: str | None = None
    extra_args: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    binary: str
    code: int
    seconds: float
    json_path: Path | None = None
    message: str = ""  # last stderr line on failure


def discover(bin_dir: Path) -> list[Path]:
    """Executable files named bench_* in bin_dir, sorted by name; bench_test_* are the harness's
    host tests (GoogleTest), not benchmarks."""
    if not bin_dir.is_dir():
        raise InputError(f"{bin_dir} does not exist: build first (tcbench run builds unless "
                         "--no-build) or point --bin-dir at the folder with the bench_* binaries.")
    found = sorted(p for p in bin_dir.glob("bench_*")
                   if p.is_file() and os.access(p, os.X_OK) and p.suffix not in (".json", ".log")
                   and not p.name.startswith("bench_test_"))
    if not found:
        raise InputError(f"{bin_dir} holds no benchmark binaries (bench_*).")
    return found


def command(binary: Path, opts: RunOptions, json_path: Path) -> list[str]:
    cmd = [str(binary), f"--benchmark_out={json_path}", "--benchmark_out_format=json",
           "--benchmark_report_aggregates_only=false"]
    if opts.filter:
        cmd.append(f"--benchmark_filter={opts.filter}")
    if opts.repetitions:
        cmd.append(f"--benchmark_repetitions={opts.repetitions}")
    if opts.quick:
        cmd += ["--quick", f"--benchmark_min_time={QUICK_MIN_TIME}"]
    return cmd + opts.extra_args


def _clock(seconds: float) -> str:
    return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"


def _last_line(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1] if lines else ""


LIST_TIMEOUT = 120  # seconds for --benchmark_list_tests (device init and registration only)
NON_TTY_EVERY = 30  # seconds between progress lines when the output is a log, not a terminal


def list_benchmarks(binary: Path, opts: RunOptions, env: dict) -> set[str] | None:
    """The names this run of ``binary`` will execute, for progress counts; None when the binary
    cannot list them (the real run then reports why)."""
    cmd = [str(binary), "--benchmark_list_tests=true"]
    if opts.filter:
        cmd.append(f"--benchmark_filter={opts.filter}")
    if opts.quick:
        cmd.append("--quick")
    try:
        proc = subprocess.run(cmd + opts.extra_args, capture_output=True, text=True, env=env,
                              stdin=subprocess.DEVNULL, timeout=LIST_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    names = {line.strip() for line in proc.stdout.splitlines() if line.strip()}
    return {n.removesuffix("/manual_time") for n in names} or None


def finished_benchmarks(out_log: Path, names: set[str]) -> int:
    """How many of ``names`` Google Benchmark's console output already reports."""
    try:
        text = out_log.read_text(errors="replace")
    except OSError:
        return 0
    seen = set()
    for line in text.splitlines():
        token = line.split(" ", 1)[0]
        base = token.split("/manual_time", 1)[0]
        if base in names:
            seen.add(base)
    return len(seen)


class Progress:
    """One status line, rewritten in place on a terminal; start, end and periodic lines
    otherwise. Inside a binary it counts finished benchmarks when the binary could list them."""

    def __init__(self, stream: TextIO, total: int):
        self.stream, self.total = stream, total
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.started = time.monotonic()
        self.last_line = 0.0

    def tick(self, index: int, name: str, seconds: float, done: int | None = None,
             of: int | None = None) -> None:
        inner = f"  {done}/{of} benchmarks" if of else ""
        if self.tty:
            left = self.total - index
            self.stream.write(f"\r[{index}/{self.total}] {name}{inner}  {_clock(seconds)}  "
                              f"({left} left after this, total {_clock(time.monotonic() - self.started)})\033[K")
            self.stream.flush()
        elif seconds - self.last_line >= NON_TTY_EVERY:
            self.last_line = seconds
            self.stream.write(f"[{index}/{self.total}] {name}:{inner or ' running'}, "
                              f"{_clock(seconds)} elapsed\n")
            self.stream.flush()

    def start(self, index: int, name: str) -> None:
        if not self.tty:
            self.stream.write(f"[{index}/{self.total}] {name}: running ...\n")
            self.stream.flush()

    def done(self, index: int, outcome: Outcome, detail: str) -> None:
        text = (f"[{index}/{self.total}] {outcome.binary}: {detail} in "
                f"{_clock(outcome.seconds)} ({self.total - index} left)")
        if self.tty:
            text = "\r" + text + "\033[K"
        self.stream.write(text + "\n")
        self.stream.flush()


def run_one(binary: Path, opts: RunOptions, progress: Progress, index: int) -> Outcome:
    name = binary.name
    logs = opts.out_dir / "logs"
    json_path = opts.out_dir / f"{name}.json"
    json_path.unlink(missing_ok=True)
    env = dict(os.environ)
    if opts.device is not None:
        env["CUDA_VISIBLE_DEVICES"] = opts.device
    progress.start(index, name)
    progress.last_line = 0.0
    names = list_benchmarks(binary, opts, env)
    begin = time.monotonic()
    out_log, err_log = logs / f"{name}.stdout.log", logs / f"{name}.stderr.log"
    with open(out_log, "wb") as out, open(err_log, "wb") as err:
        try:
            proc = subprocess.Popen(command(binary, opts, json_path), stdout=out, stderr=err,
                                    stdin=subprocess.DEVNULL, env=env)
        except OSError as exc:
            return Outcome(name, 126, 0.0, message=f"cannot start: {exc.strerror or exc}")
        while True:
            try:
                code = proc.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                done = finished_benchmarks(out_log, names) if names else None
                progress.tick(index, name, time.monotonic() - begin, done,
                              len(names) if names else None)
    outcome = Outcome(name, code, time.monotonic() - begin)
    if code == 0 and json_path.is_file() and json_path.stat().st_size > 0:
        outcome.json_path = json_path
    elif code == 0:
        # Google Benchmark 1.7 leaves an empty --benchmark_out file when the filter matches nothing.
        json_path.unlink(missing_ok=True)
        outcome.message = (NO_MATCH if opts.filter else "exited 0 but wrote no JSON")
    else:
        outcome.message = _last_line(err_log) or _last_line(out_log) or f"exit code {code}"
    return outcome


def merge(outcomes: list[Outcome], out_path: Path) -> Path | None:
    """One Google Benchmark file: the first binary's context, every binary's benchmarks."""
    context, rows, binaries = None, [], []
    for o in outcomes:
        if o.json_path is None:
            continue
        try:
            doc = json.loads(o.json_path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            o.message = f"its JSON output is unreadable ({exc})"
            o.json_path = None
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
            o.message = "its JSON output is not Google Benchmark output"
            o.json_path = None
            continue
        if context is None:
            context = dict(doc.get("context") or {})
        binaries.append(o.binary)
        for row in doc["benchmarks"]:
            if isinstance(row, dict):
                row["tcbench_binary"] = o.binary
                rows.append(row)
    if context is None:
        return None
    context["tcbench_binaries"] = ",".join(binaries)
    out_path.write_text(json.dumps({"context": context, "benchmarks": rows}, indent=2) + "\n")
    return out_path


def run_suite(binaries: list[Path], opts: RunOptions, stream: TextIO | None = None) -> int:
    stream = stream or sys.stdout
    opts.out_dir.mkdir(parents=True, exist_ok=True)
    (opts.out_dir / "logs").mkdir(exist_ok=True)
    progress = Progress(stream, len(binaries))
    outcomes: list[Outcome] = []
    for index, binary in enumerate(binaries, start=1):
        outcome = run_one(binary, opts, progress, index)
        outcomes.append(outcome)
        if outcome.code == EXIT_NO_GPU:
            progress.done(index, outcome, "no GPU")
            measured = [o for o in outcomes if o.json_path]
            reason = (outcome.message or "the binary exited with code 77").rstrip(".")
            # The binaries end their own line with "; nothing to measure"; say it once.
            reason = reason.removesuffix("; nothing to measure")
            if measured:
                merged = merge(outcomes, opts.out_dir / "results.json")
                print(f"tcbench: no CUDA GPU is visible any more ({reason}): stopped after "
                      f"{len(measured)} of {len(binaries)} binaries; partial results in {merged}.",
                      file=sys.stderr)
            else:
                print(f"tcbench: no CUDA GPU is visible ({reason}): nothing was measured.",
                      file=sys.stderr)
            return EXIT_NO_GPU
        if outcome.json_path:
            progress.done(index, outcome, "done")
        elif outcome.code == 0:
            progress.done(index, outcome, outcome.message)
        else:
            progress.done(index, outcome, f"FAILED (exit {outcome.code}: {outcome.message})")

    merged = merge(outcomes, opts.out_dir / "results.json")
    if merged is None and all(o.message == NO_MATCH for o in outcomes):
        print(f"tcbench: the filter {opts.filter!r} matched no benchmark in any binary.",
              file=sys.stderr)
        return EXIT_USAGE
    failed = [o for o in outcomes if o.json_path is None and o.message != NO_MATCH]
    stream.write("\n")
    bench_failures = 0
    if merged is not None:
        try:
            rs = load_file(merged)
        except InputError as exc:
            rs = None
            stream.write(f"(no summary: {exc})\n")
        if rs is not None:
            stream.write(summary.render(rs) + "\n")
            bench_failures = sum(1 for b in rs.benchmarks.values() if b.failed)
    for o in failed:
        stream.write(f"binary {o.binary} FAILED (exit {o.code}): {o.message}; "
                     f"log: {opts.out_dir / 'logs' / (o.binary + '.stderr.log')}\n")
    stream.write("\n")
    if merged is not None:
        stream.write(f"Results: {merged} (one file per binary beside it, logs in "
                     f"{opts.out_dir / 'logs'}).\n")
    else:
        stream.write(f"No results were written; logs in {opts.out_dir / 'logs'}.\n")
    stream.flush()
    if failed or bench_failures:
        print(f"tcbench run: failed: {len(failed)} of {len(outcomes)} binaries, "
              f"{bench_failures} benchmarks.", file=sys.stderr)
        return EXIT_FAIL
    return EXIT_OK
