"""``tcbench run``: run every benchmark binary once, merge their JSON, print a summary.

Each binary ``bench_<topic>`` is run one after the other (never concurrently: they share the GPU)
with ``--benchmark_out=<out>/<binary>.json``. Its console output goes to ``<out>/logs/``.
Exit status of a binary: 0 ran; 77 no CUDA GPU (one line on stderr) or 2 (it rejected its
arguments): the whole run stops, since every other binary would say the same; anything else: that
binary failed, the others still run. A failed binary's JSON is kept whenever it parses (a binary
exits 1 when one benchmark fails verification: the others' rows and the failure itself are
results); ``results.json`` records which binaries failed (``tcbench_failed_binaries``), which left
no usable results (``tcbench_lost_binaries``), a hash of every file it merged
(``tcbench_sources``) and, when the run stopped early, why (``tcbench_incomplete``), so that
``compare`` never mistakes a partial run for a pass.

A run first removes every file it owns in its output folder (results.json, bench_*.json,
logs/bench_*.log): a rerun that produces nothing leaves nothing stale behind. SIGINT, SIGTERM and
SIGHUP are forwarded to the running binary; the run waits for it, merges what finished and exits
128 + the signal number (130, 143).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from tcbench_tools import summary
from tcbench_tools.errors import EXIT_FAIL, EXIT_NO_GPU, EXIT_OK, EXIT_USAGE, InputError
from tcbench_tools.results import fingerprint, load_file

QUICK_MIN_TIME = "0.05"  # seconds; Google Benchmark 1.7 takes a plain number
NO_MATCH = "no benchmark matched the filter"
STOP_GRACE = 10.0  # seconds a signalled binary gets to exit before it is killed
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(Exception):
    """A signal asked the run to stop; raised by the run itself at a point where no child is
    left behind (never from inside the signal handler, which could land in the middle of
    subprocess' own bookkeeping)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@dataclass
class _StopRequest:
    """The first signal received (and when), and the child process running now: the handler
    forwards the signal to it at once, and SIGKILLs it on a second signal."""

    signum: int | None = None
    at: float = 0.0
    child: subprocess.Popen | None = None

    def check(self) -> None:
        if self.signum is not None:
            raise Interrupted(self.signum)


_stop = _StopRequest()


def _kill(proc: subprocess.Popen, signum: int) -> None:
    if proc.returncode is None:
        try:
            os.kill(proc.pid, signum)
        except OSError:
            pass  # it has just exited


def _on_signal(signum: int, _frame) -> None:
    first = _stop.signum is None
    if first:
        _stop.signum, _stop.at = signum, time.monotonic()
    if _stop.child is not None:
        _kill(_stop.child, signum if first else signal.SIGKILL)


@contextmanager
def forward_signals() -> Iterator[None]:
    """While the suite runs, SIGINT, SIGTERM and SIGHUP go on to the running binary instead of
    killing tcbench alone (which would orphan the binary, still holding the GPU and writing into
    the output folder); the run then stops at the next safe point with ``Interrupted``."""
    _stop.signum, _stop.child = None, None
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _on_signal) for sig in FORWARDED_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextmanager
def _watched(proc: subprocess.Popen) -> Iterator[subprocess.Popen]:
    """Make ``proc`` the child a signal is forwarded to (also one that came while it started)."""
    _stop.child = proc
    try:
        if _stop.signum is not None:
            _kill(proc, _stop.signum)
        yield proc
    finally:
        _stop.child = None


def _wait(proc: subprocess.Popen, timeout: float) -> int | None:
    """Wait up to ``timeout`` s; a binary still alive STOP_GRACE s after a signal is killed."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        if _stop.signum is not None and time.monotonic() - _stop.at > STOP_GRACE:
            proc.kill()
        return None


_UUID = r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"
DEVICE_PATTERN = re.compile(rf"\d+|GPU-{_UUID}|MIG-{_UUID}|MIG-GPU-{_UUID}/\d+/\d+")


def check_device(device: str) -> None:
    """``--device``: a non-negative index or a GPU/MIG UUID, and one nvidia-smi lists when it is
    installed (CUDA would otherwise see no device, and every binary would exit 77)."""
    if not DEVICE_PATTERN.fullmatch(device):
        raise InputError(f"--device {device!r} is neither a GPU index (0, 1, ...) nor a UUID as "
                         "'nvidia-smi -L' prints it (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx).")
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return
    try:
        proc = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return
    gpus = [ln for ln in proc.stdout.splitlines() if re.match(r"GPU \d+:", ln)]
    if proc.returncode != 0 or not gpus:
        return  # no driver answer: the binaries will say so themselves
    uuids = re.findall(r"UUID: ((?:GPU|MIG)-[^)\s]+)", proc.stdout)
    if device.isdigit():
        if int(device) >= len(gpus):
            raise InputError(f"--device {device}: there is no such GPU (nvidia-smi lists "
                             f"{len(gpus)}, numbered 0 to {len(gpus) - 1}).")
    elif device not in uuids:
        raise InputError(f"--device {device}: nvidia-smi lists no GPU with that UUID.")


@dataclass
class RunOptions:
    out_dir: Path
    quick: bool = False
    filter: str | None = None
    repetitions: int | None = None
    device: str | None = None
    extra_args: list[str] = field(default_factory=list)
    clock_policy: str | None = None  # as-is, base, max (--clock-policy of every binary)


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
    if opts.clock_policy:
        cmd.append(f"--clock-policy={opts.clock_policy}")
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
    _stop.check()
    try:
        proc = subprocess.Popen(cmd + opts.extra_args, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
                                env=env)
    except OSError:
        return None
    deadline = time.monotonic() + LIST_TIMEOUT
    with _watched(proc):
        while True:
            try:
                stdout, _ = proc.communicate(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                late = _stop.signum is not None and time.monotonic() - _stop.at > STOP_GRACE
                if late or time.monotonic() > deadline:
                    proc.kill()
                    proc.communicate()
                    stdout = None
                    break
    _stop.check()
    if proc.returncode != 0 or stdout is None:
        return None
    names = {line.strip() for line in stdout.splitlines() if line.strip()}
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
        # --device N means what nvidia-smi calls GPU N: CUDA's default order (fastest first)
        # can differ from the PCI bus order nvidia-smi uses.
        env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
        env["CUDA_VISIBLE_DEVICES"] = opts.device
    progress.start(index, name)
    progress.last_line = 0.0
    names = list_benchmarks(binary, opts, env)
    begin = time.monotonic()
    out_log, err_log = logs / f"{name}.stdout.log", logs / f"{name}.stderr.log"
    _stop.check()
    with open(out_log, "wb") as out, open(err_log, "wb") as err:
        try:
            proc = subprocess.Popen(command(binary, opts, json_path), stdout=out, stderr=err,
                                    stdin=subprocess.DEVNULL, env=env)
        except OSError as exc:
            return Outcome(name, 126, 0.0, message=f"cannot start: {exc.strerror or exc}")
        with _watched(proc):
            while (code := _wait(proc, 0.5)) is None:
                if _stop.signum is None:
                    done = finished_benchmarks(out_log, names) if names else None
                    progress.tick(index, name, time.monotonic() - begin, done,
                                  len(names) if names else None)
    if _stop.signum is not None:
        json_path.unlink(missing_ok=True)  # written by a binary cut short: not a result
        _stop.check()
    outcome = Outcome(name, code, time.monotonic() - begin)
    # Kept whatever the exit code: merge() drops it if it does not parse.
    if json_path.is_file() and json_path.stat().st_size > 0:
        outcome.json_path = json_path
    else:
        # Google Benchmark 1.7 leaves an empty --benchmark_out file when the filter matches nothing.
        json_path.unlink(missing_ok=True)
    if code != 0:
        outcome.message = _last_line(err_log) or _last_line(out_log) or f"exit code {code}"
    elif outcome.json_path is None:
        outcome.message = (NO_MATCH if opts.filter else "exited 0 but wrote no JSON")
    return outcome


def _lost(o: Outcome) -> bool:
    """A binary that ran and left no usable results (a filter that matched nothing is not lost)."""
    return o.json_path is None and not (o.code == 0 and o.message == NO_MATCH)


def merge(outcomes: list[Outcome], out_path: Path, incomplete: str | None = None) -> Path | None:
    """One Google Benchmark file: the first binary's context, every binary's benchmarks, and what
    the run knows about its own failures (see the module docstring)."""
    context, rows, binaries, sources = None, [], [], []
    for o in outcomes:
        if o.json_path is None:
            continue
        try:
            doc = json.loads(o.json_path.read_text())
        except (OSError, ValueError, RecursionError) as exc:
            o.message = "; ".join(filter(None, [o.message, f"its JSON output is unreadable ({exc})"]))
            o.json_path = None
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
            o.message = "; ".join(filter(None, [o.message, "its JSON output is not Google "
                                                           "Benchmark output"]))
            o.json_path = None
            continue
        if context is None:
            context = dict(doc.get("context") or {})
        binaries.append(o.binary)
        sources.append(f"{o.json_path.name}:{fingerprint(o.json_path)}")
        for row in doc["benchmarks"]:
            if isinstance(row, dict):
                row["tcbench_binary"] = o.binary
                rows.append(row)
    if context is None or not rows:
        return None
    context["tcbench_binaries"] = ",".join(binaries)
    context["tcbench_sources"] = ",".join(sources)
    failed = [f"{o.binary}:{o.code}" for o in outcomes if o.code != 0]
    lost = [o.binary for o in outcomes if _lost(o)]
    for key, items in (("tcbench_failed_binaries", failed), ("tcbench_lost_binaries", lost)):
        if items:
            context[key] = ",".join(items)
    if incomplete:
        context["tcbench_incomplete"] = incomplete
    out_path.write_text(json.dumps({"context": context, "benchmarks": rows}, indent=2) + "\n")
    return out_path


def prepare_out_dir(out_dir: Path) -> None:
    """Create the output folder and remove every file a run owns in it (results.json,
    bench_*.json, logs/bench_*.log), so that nothing of an earlier run can pass for this one."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "logs").mkdir(exist_ok=True)
        owned = [out_dir / "results.json", *out_dir.glob("bench_*.json"),
                 *(out_dir / "logs").glob("bench_*.log")]
        for path in owned:
            path.unlink(missing_ok=True)
        probe = out_dir / "logs" / ".tcbench-write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise InputError(f"cannot use {out_dir} as the output folder: "
                         f"{exc.strerror or exc}.") from None


def _stopped_early(outcomes: list[Outcome], opts: RunOptions, total: int, why: str) -> str:
    """Merge what finished before the run stopped; the sentence that says where it is."""
    measured = [o for o in outcomes if o.json_path]
    merged = merge(outcomes, opts.out_dir / "results.json", incomplete=why) if measured else None
    if merged is None:
        return "nothing was measured"
    return (f"stopped after {len(measured)} of {total} binaries; partial results in {merged}, "
            "marked incomplete")


def run_suite(binaries: list[Path], opts: RunOptions, stream: TextIO | None = None) -> int:
    stream = stream or sys.stdout
    prepare_out_dir(opts.out_dir)
    progress = Progress(stream, len(binaries))
    outcomes: list[Outcome] = []
    with forward_signals():
        current = None
        try:
            for index, binary in enumerate(binaries, start=1):
                _stop.check()
                current = binary.name
                outcome = run_one(binary, opts, progress, index)
                current = None
                outcomes.append(outcome)
                if outcome.code == EXIT_NO_GPU:
                    progress.done(index, outcome, "no GPU")
                    reason = (outcome.message or "the binary exited with code 77").rstrip(".")
                    # The binaries end their own line with "; nothing to measure"; say it once.
                    reason = reason.removesuffix("; nothing to measure")
                    where = _stopped_early(outcomes, opts, len(binaries),
                                           f"stopped at {binary.name}: no CUDA GPU visible")
                    if where == "nothing was measured":
                        print(f"tcbench: no CUDA GPU is visible ({reason}): nothing was measured.",
                              file=sys.stderr)
                    else:
                        print(f"tcbench: no CUDA GPU is visible any more ({reason}): {where}.",
                              file=sys.stderr)
                    return EXIT_NO_GPU
                if outcome.code == EXIT_USAGE:
                    progress.done(index, outcome, f"rejected its arguments ({outcome.message})")
                    where = _stopped_early(outcomes, opts, len(binaries),
                                           f"{binary.name} rejected its arguments")
                    print(f"tcbench: {binary.name} rejected its arguments (exit 2: "
                          f"{outcome.message.rstrip('.')}); check the flags after '--': {where}.",
                          file=sys.stderr)
                    return EXIT_USAGE
                if outcome.code == 0 and outcome.json_path:
                    progress.done(index, outcome, "done")
                elif outcome.code == 0:
                    progress.done(index, outcome, outcome.message)
                else:
                    kept = "; results kept" if outcome.json_path else ""
                    progress.done(index, outcome,
                                  f"FAILED (exit {outcome.code}: {outcome.message}){kept}")
        except Interrupted as stop:
            name = signal.Signals(stop.signum).name
            stream.write("\n")
            where = _stopped_early(outcomes, opts, len(binaries),
                                   f"interrupted by {name}" + (f" during {current}" if current else ""))
            print(f"tcbench: interrupted by {name}" + (f"; stopped {current}" if current else "")
                  + f": {where}.", file=sys.stderr)
            return 128 + stop.signum

    merged = merge(outcomes, opts.out_dir / "results.json")
    if merged is None and all(o.message == NO_MATCH for o in outcomes):
        print(f"tcbench: the filter {opts.filter!r} matched no benchmark in any binary.",
              file=sys.stderr)
        return EXIT_USAGE
    failed = [o for o in outcomes if o.code != 0 or _lost(o)]
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
        kept = "its results are kept" if o.json_path else "it left no usable results"
        stream.write(f"binary {o.binary} FAILED (exit {o.code}): {o.message}; {kept}; "
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
