"""``tcbench run``: run every benchmark binary once, merge their JSON, print a summary.

Each binary ``bench_<topic>`` is run one after the other (never concurrently: they share the GPU)
with ``--benchmark_out=<out>/<binary>.json``. Its console output goes to ``<out>/logs/``.
Exit status of a binary: 0 ran; 77 no CUDA GPU (one line on stderr) or 2 (it rejected its
arguments): the whole run stops, since every other binary would say the same; anything else: that
binary failed, the others still run. A failed binary's JSON is kept whenever it parses (a binary
exits 1 when one benchmark fails verification: the others' rows and the failure itself are
results), and so are the finished rows of a binary cut short (time limit, signal, interrupt: read
from its row file, partial.py), marked. ``results.json`` records which binaries failed
(``tcbench_failed_binaries``), which left no usable results (``tcbench_lost_binaries``), which
were cut short and what they never ran (``tcbench_cut_short``, ``tcbench_never_ran``), a hash of
every file it merged (``tcbench_sources``) and, when the run stopped early, why
(``tcbench_incomplete``), so that ``compare`` never mistakes a partial run for a pass. Once
``results.json`` reads back, the per-binary files it merged go: a run folder stores each row once
(docs/architecture.md, "The run folder"); until then they are what survives a kill.

A run first removes every file it owns in its output folder (results.json, bench_*.json and their
row files bench_*.jsonl, logs/bench_*.log): a rerun that produces nothing leaves nothing stale
behind. Each binary runs in its own process group (process.py): SIGINT, SIGTERM and SIGHUP are
forwarded to it; the run waits for it, merges what finished and exits 128 + the signal number (130,
143). A binary still running after ``--timeout`` seconds is stopped with its group, recorded as
TIMEOUT with its last output line, and the run goes on; the build step (``build()``) runs the same
way, so an interrupt stops ninja too.

Nothing is skipped in silence, and exit 0 means every binary ran: a ``bench_*`` that is not
executable or is a dangling link, a binary killed by a signal or stopped at its time limit, one
whose JSON holds no usable rows, and a merged file that cannot be read back are each named, count
as lost (their benchmarks too, when the binary could list them) and make the run exit 1. A run
measures one GPU: binaries whose context names different GPUs are refused in the merge.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from tcbench_tools import files, partial, process, runfile, schema, summary
from tcbench_tools.arguments import ascii_int
from tcbench_tools.errors import (
    EXIT_FAIL,
    EXIT_NO_GPU,
    EXIT_OK,
    EXIT_USAGE,
    TIMEOUT_CODE,
    InputError,
    exit_text,
)
from tcbench_tools.printable import printable
from tcbench_tools.process import Interrupted, forward_signals  # noqa: F401 - cli, node use them
from tcbench_tools.results import load_file, parse_doc
from tcbench_tools.runfile import MixedGpus

# --quick's sampling budget per benchmark, in seconds (schema.hpp's kQuickMinSeconds, stated by
# the schema), as Google Benchmark 1.7 takes it: a plain number.
QUICK_MIN_TIME = f"{schema.shipped().sampling['quick_min_seconds']:g}"
NO_MATCH = "no benchmark matched the filter"
# --timeout's default per binary, in seconds, times --repetitions: generous (a full alignment
# sweep takes about half an hour per repetition on a fast GPU), so that only a hang reaches it.
DEFAULT_TIMEOUT_QUICK = 15 * 60.0
DEFAULT_TIMEOUT_FULL = 2 * 3600.0
EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND = 126, 127  # the shell's codes for these


def default_timeout(quick: bool, repetitions: int | None) -> float:
    """--timeout when it is not given (seconds per binary)."""
    return (DEFAULT_TIMEOUT_QUICK if quick else DEFAULT_TIMEOUT_FULL) * max(1, repetitions or 1)


def build(preset: str, repo: Path) -> int:
    """Configure and build ``preset`` for ``tcbench run``: each step in its own process group,
    SIGINT, SIGTERM and SIGHUP passed on to it (ninja stops compiling when the run is
    interrupted). EXIT_OK, or the code to exit with: 1 a step failed, 128 + N interrupted by
    signal N (nothing was run)."""
    from tcbench_tools import build as cmake

    cmake.check_preset(preset, repo)
    steps = (("configure", cmake.configure_args(preset)),
             ("build", ["cmake", "--build", "--preset", preset, "--parallel",
                        str(os.cpu_count() or 1)]))
    with forward_signals():
        for title, cmd in steps:
            print(f"tcbench run: {title} ({preset}) ...", flush=True)
            try:
                done = process.supervise(cmd, cwd=repo)
            except FileNotFoundError:
                raise InputError("cmake is not installed or not on PATH.") from None
            except Interrupted as stop:
                print(f"tcbench: interrupted by {signal.Signals(stop.signum).name} during the "
                      f"{title} step: nothing was run.", file=sys.stderr)
                return 128 + stop.signum
            if done.code != 0:
                print(f"tcbench: the {title} step failed ({exit_text(done.code)}): nothing was "
                      "run.", file=sys.stderr)
                return EXIT_FAIL
    return EXIT_OK


_UUID = r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"
# ASCII digits (re.ASCII): "\d" alone also matches "٣", which CUDA_VISIBLE_DEVICES does not.
DEVICE_PATTERN = re.compile(
    rf"[0-9]{{1,18}}|GPU-{_UUID}|MIG-{_UUID}|MIG-GPU-{_UUID}/[0-9]+/[0-9]+", re.ASCII)


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
    gpus = [ln for ln in proc.stdout.splitlines() if re.match(r"GPU [0-9]+:", ln)]
    if proc.returncode != 0 or not gpus:
        return  # no driver answer: the binaries will say so themselves
    uuids = re.findall(r"UUID: ((?:GPU|MIG)-[^)\s]+)", proc.stdout)
    if (index := ascii_int(device)) is not None:
        if index >= len(gpus):
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
    timeout: float | None = None  # seconds per binary; None: default_timeout()

    def time_limit(self) -> float:
        return self.timeout if self.timeout is not None else default_timeout(self.quick,
                                                                              self.repetitions)


@dataclass
class Outcome:
    binary: str
    code: int | str  # exit status, -N killed by signal N, TIMEOUT_CODE past --timeout
    seconds: float
    json_path: Path | None = None
    message: str = ""  # why it failed: its last output line, the signal, the time limit
    expected: int | None = None  # how many benchmarks it listed (None: it could not list them)

    @property
    def killed(self) -> bool:
        """Stopped by a signal or at its time limit: whatever it wrote is not a result."""
        return self.code == TIMEOUT_CODE or (isinstance(self.code, int) and self.code < 0)


def discover(bin_dir: Path) -> list[Path]:
    """The bench_<topic> entries of bin_dir, sorted by name: names without an extension (a topic
    has none; bench_x.json or notes.txt beside them are not programs); bench_test_* are the
    harness's host tests (GoogleTest), not benchmarks. An entry that cannot run (not executable,
    a dangling link, a folder) is kept: run_one names it and counts it as lost, never skips it
    in silence."""
    if not bin_dir.is_dir():
        raise InputError(f"{bin_dir} does not exist: build first (tcbench run builds unless "
                         "--no-build) or point --bin-dir at the folder with the bench_* binaries.")
    found = sorted(p for p in bin_dir.glob("bench_*")
                   if not p.suffix and not p.name.startswith("bench_test_"))
    if not found:
        raise InputError(f"{bin_dir} holds no benchmark binaries (bench_*).")
    return found


def not_runnable(binary: Path) -> tuple[int, str] | None:
    """(exit code, why) when ``binary`` cannot be run at all; None when it can."""
    if binary.is_symlink() and not binary.exists():
        try:
            target = os.readlink(binary)
        except OSError:
            target = "?"
        return EXIT_NOT_FOUND, f"it is a dangling symbolic link (to {target}): not run"
    if binary.is_dir():
        return EXIT_NOT_EXECUTABLE, "it is a folder, not a program: not run"
    if not binary.is_file():
        return EXIT_NOT_EXECUTABLE, "it is not a regular file: not run"
    if not os.access(binary, os.X_OK):
        mode = binary.stat().st_mode & 0o777
        return EXIT_NOT_EXECUTABLE, (f"it is not executable (mode {mode:03o}; an artifact "
                                     f"download may have dropped the bit: chmod +x {binary}): "
                                     "not run")
    return None


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


_last_line = files.last_line  # a log's last non-empty line (fleet's state.py uses it too)


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
    # A file, not a pipe: a long list must not fill a pipe nobody reads while we wait.
    with tempfile.TemporaryFile() as listing:
        try:
            done = process.supervise(cmd + opts.extra_args, timeout=LIST_TIMEOUT, stdout=listing,
                                     stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                     env=env)
        except OSError:
            return None
        if done.code != 0 or done.timed_out:
            return None
        listing.seek(0)
        stdout = listing.read(16 << 20).decode("utf-8", errors="replace")
    names = {printable(line.strip()) for line in stdout.splitlines() if line.strip()}
    return {n.removesuffix("/manual_time") for n in names} or None


PROGRESS_LOG_LIMIT = 16 << 20  # bytes of a binary's console log read for its progress count


def finished_benchmarks(out_log: Path, names: set[str]) -> int:
    """How many of ``names`` Google Benchmark's console output already reports (read from its
    first 16 MiB only: a binary that floods its stdout must not make every progress tick read
    the whole log)."""
    try:
        with open(out_log, "rb") as fh:
            text = fh.read(PROGRESS_LOG_LIMIT).decode("utf-8", errors="replace")
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
                              f"({left} left after this, total "
                              f"{_clock(time.monotonic() - self.started)})\033[K")
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


def _output(json_path: Path) -> Path | None:
    """The binary's --benchmark_out file when it wrote one (or its row file did), else None.
    Google Benchmark 1.7 leaves an empty file when the filter matches nothing: removed."""
    if json_path.is_file() and json_path.stat().st_size > 0:
        return json_path
    if partial.row_file(json_path).is_file():
        return json_path  # killed before the JSON's first bytes: its row file may hold rows
    json_path.unlink(missing_ok=True)
    return None


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
    refused = not_runnable(binary)
    if refused is not None:
        return Outcome(name, refused[0], 0.0, message=refused[1])
    names = list_benchmarks(binary, opts, env)
    expected = len(names) if names else None
    out_log, err_log = logs / f"{name}.stdout.log", logs / f"{name}.stderr.log"
    limit = opts.time_limit()

    def tick(seconds: float) -> None:
        done = finished_benchmarks(out_log, names) if names else None
        progress.tick(index, name, seconds, done, expected)

    with open(out_log, "wb") as out, open(err_log, "wb") as err:
        try:
            done = process.supervise(command(binary, opts, json_path), timeout=limit,
                                     on_tick=tick, stdout=out, stderr=err,
                                     stdin=subprocess.DEVNULL, env=env)
        except OSError as exc:
            return Outcome(name, EXIT_NOT_EXECUTABLE, 0.0, message=f"cannot start: "
                           f"{exc.strerror or exc}", expected=expected)
        except Interrupted as stop:
            # Cut short: its finished rows are kept, marked (merge reads them from its row file).
            stop.outcome = Outcome(name, -stop.signum, 0.0, _output(json_path), expected=expected,
                                   message=f"interrupted by {signal.Signals(stop.signum).name}")
            raise
    code = TIMEOUT_CODE if done.timed_out else done.code
    outcome = Outcome(name, code, done.seconds, expected=expected)
    last = _last_line(err_log) or _last_line(out_log)
    # Kept whatever the exit code, cut short too: merge() reads the finished rows of a file cut
    # short from its row file (partial.py), marks them, and drops a file it cannot read.
    outcome.json_path = _output(json_path)
    if outcome.killed:
        what = (f"TIMEOUT: still running after {limit:g} s (--timeout), stopped with its "
                "process group" if done.timed_out else exit_text(code))
        outcome.message = what + (f"; last output: {last}" if last else "")
        return outcome
    if code != 0:
        outcome.message = last or f"exit code {code}"
    elif outcome.json_path is None:
        outcome.message = (NO_MATCH if opts.filter else "exited 0 but wrote no JSON")
    return outcome


def _lost(o: Outcome) -> bool:
    """A binary that ran and left no usable results (a filter that matched nothing is not lost)."""
    return o.json_path is None and not (o.code == 0 and o.message == NO_MATCH)


def _usable(o: Outcome) -> runfile.Part | None:
    """The binary's output as a part of the run when it is usable Google Benchmark output with at
    least one row (results.parse_doc, the loader compare uses); a file cut short gives its
    finished rows, marked (partial.recover). Else None, with the reason in o.message."""
    try:
        try:
            doc = json.loads(files.read_text(o.json_path, files.RESULTS_LIMIT, "result file"))
            cut, planned = "", []
        except (InputError, ValueError, RecursionError):
            recovered = partial.recover(o.json_path)
            if recovered is None:
                raise
            doc, cut, planned = recovered
        rs = parse_doc(doc, o.json_path)  # escapes the rows' control characters in place
    except (InputError, ValueError, RecursionError) as exc:
        why = str(exc).rstrip(".")
        o.message = "; ".join(filter(None, [o.message, f"its JSON output is unusable ({why})"]))
        o.json_path = None
        return None
    if o.killed and not cut:  # whole JSON, yet stopped: its rows are kept, marked all the same
        cut = (f"{o.json_path.name} was written by a binary then {o.message.split(';')[0]}; its "
               f"{len(rs.benchmarks)} benchmark(s) were kept")
    never_ran = [name for name in planned if name not in rs.benchmarks]
    return runfile.Part(o.binary, o.json_path, doc, cut, never_ran)


def merge(outcomes: list[Outcome], out_path: Path, incomplete: str | None = None) -> Path | None:
    """Write the run's results.json (runfile.merge: the first binary's context, every binary's
    benchmarks, and what the run knows about its own failures); None when no binary left a
    usable row. MixedGpus when two binaries saw different GPUs (nothing is written then)."""
    parts = [part for o in outcomes if o.json_path is not None and (part := _usable(o))]
    failed = [f"{o.binary}:{o.code}" for o in outcomes if o.code != 0]
    lost = [o.binary for o in outcomes if _lost(o)]
    doc = runfile.merge(parts, failed, lost, incomplete)
    if doc is None:
        return None
    runfile.write(doc, out_path)
    try:
        load_file(out_path)
    except InputError:
        return out_path  # the caller says it cannot be read back; the parts stay
    runfile.drop_parts([p.path for p in parts])
    return out_path


def prepare_out_dir(out_dir: Path) -> None:
    """Create the output folder and remove every file a run owns in it (results.json,
    bench_*.json, logs/bench_*.log), so that nothing of an earlier run can pass for this one."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "logs").mkdir(exist_ok=True)
        owned = [out_dir / "results.json", *out_dir.glob("bench_*.json"),
                 *out_dir.glob("bench_*.jsonl"), *(out_dir / "logs").glob("bench_*.log")]
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
    try:
        merged = (merge(outcomes, opts.out_dir / runfile.MERGED, incomplete=why) if measured
                  else None)
    except MixedGpus as exc:
        return f"{exc}; no results.json was written"
    if merged is None:
        return "nothing was measured"
    return (f"stopped after {len(measured)} of {total} binaries; partial results in {merged}, "
            "marked incomplete")


def _failure_detail(o: Outcome) -> str:
    """How a failed binary reads in its progress line."""
    if o.killed:
        return f"FAILED ({o.message})" + ("; its finished rows are kept" if o.json_path else "")
    return f"FAILED (exit {o.code}: {o.message})" + ("; results kept" if o.json_path else "")


def _lost_benchmarks(o: Outcome) -> str:
    if o.expected:
        return f"its {o.expected} benchmark{'s' if o.expected != 1 else ''} are lost"
    return "it left no usable results"


def run_suite(binaries: list[Path], opts: RunOptions, stream: TextIO | None = None) -> int:
    stream = stream or sys.stdout
    prepare_out_dir(opts.out_dir)
    progress = Progress(stream, len(binaries))
    outcomes: list[Outcome] = []
    with forward_signals():
        current = None
        try:
            for index, binary in enumerate(binaries, start=1):
                process.check_stop()
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
                    progress.done(index, outcome, _failure_detail(outcome))
        except Interrupted as stop:
            if getattr(stop, "outcome", None) is not None:
                outcomes.append(stop.outcome)
            name = signal.Signals(stop.signum).name
            stream.write("\n")
            where = _stopped_early(outcomes, opts, len(binaries),
                                   f"interrupted by {name}"
                                   + (f" during {current}" if current else ""))
            print(f"tcbench: interrupted by {name}" + (f"; stopped {current}" if current else "")
                  + f": {where}.", file=sys.stderr)
            return 128 + stop.signum

    try:
        merged = merge(outcomes, opts.out_dir / "results.json")
    except MixedGpus as exc:
        stream.write("\n")
        print(f"tcbench: {exc}: no results.json was written (the per-binary files and logs are "
              f"in {opts.out_dir}); run again on one GPU.", file=sys.stderr)
        return EXIT_FAIL
    if merged is None and outcomes and all(o.message == NO_MATCH for o in outcomes):
        print(f"tcbench: the filter {opts.filter!r} matched no benchmark in any binary.",
              file=sys.stderr)
        return EXIT_USAGE
    failed = [o for o in outcomes if o.code != 0 or _lost(o)]
    stream.write("\n")
    bench_failures, unreadable = 0, None
    if merged is not None:
        try:
            rs = load_file(merged)
        except InputError as exc:
            rs, unreadable = None, str(exc).rstrip(".")
            stream.write(f"(no summary: the merged file cannot be read back: {unreadable})\n")
        if rs is not None:
            stream.write(summary.render(rs) + "\n")
            bench_failures = sum(1 for b in rs.benchmarks.values() if b.failed)
    lost_benchmarks = 0
    for o in failed:
        if _lost(o):
            lost_benchmarks += o.expected or 0
            kept = _lost_benchmarks(o)
        else:
            kept = ("its finished rows are kept, marked cut short" if o.killed
                    else "its results are kept")
        why = f": {o.message}" if o.killed else f" ({exit_text(o.code)}): {o.message}"
        stream.write(printable(f"binary {o.binary} FAILED{why}; {kept}; log: "
                               f"{opts.out_dir / 'logs' / (o.binary + '.stderr.log')}") + "\n")
    stream.write("\n")
    if merged is not None:
        stream.write(f"Results: {merged} (logs in {opts.out_dir / 'logs'}).\n")
    else:
        stream.write(f"No results were written; logs in {opts.out_dir / 'logs'}.\n")
    stream.flush()
    if unreadable is not None:
        print(f"tcbench run: failed: the merged {merged} cannot be read back ({unreadable}), so "
              "compare would lose every binary's results.", file=sys.stderr)
        return EXIT_FAIL
    if failed or bench_failures:
        lost = f", {lost_benchmarks} benchmarks lost" if lost_benchmarks else ""
        print(f"tcbench run: failed: {len(failed)} of {len(outcomes)} binaries, "
              f"{bench_failures} benchmarks{lost}.", file=sys.stderr)
        return EXIT_FAIL
    return EXIT_OK
