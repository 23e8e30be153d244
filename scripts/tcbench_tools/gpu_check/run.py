"""The check itself: every step of the plan through process.supervise (the implementation
``tcbench run`` uses), in its own process group, under its own time limit and the budget.

A step starts only when its predicted seconds (cost.py, re-made after every step with what the
steps so far measured) fit in what is left of the budget, with the closing steps' share kept
back; it runs at most to the budget's end. Its outcome is one word and a note: ok, skipped,
FAILED (exit N), CRASHED (SIGSEGV), TIMEOUT (its own limit), CUT (the budget's end: the verdict
is INCOMPLETE, not FAILED), NO OUTPUT, GARBAGE OUTPUT (at listing), NOT STARTED (why),
INTERRUPTED. summary.txt is rewritten atomically when a step starts and ends, and with
``--archive`` the whole output folder is packed after every step; SIGINT, SIGTERM and SIGHUP stop
the running step's group, mark it INTERRUPTED and end the check with 128 + the signal.

The check writes only what it creates: an OUTDIR that exists, is not empty and holds no
``MARKER`` (a folder an earlier check made) is refused, as is an archive that would overwrite
one of its other outputs or cannot be written; both before any GPU step. ``box.txt`` is written
first (box.py). The bench steps write into ``OUT/results/``, which ends as a run folder of
``tcbench run``'s layout (``merge_results``: one results.json, a step cut short with its finished
rows marked). Standard library only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tcbench_tools import process, runfile, runner
from tcbench_tools.errors import TIMEOUT_CODE, InputError
from tcbench_tools.gpu_check import archive, box, bundle, cost, gpu_state, summary
from tcbench_tools.gpu_check.plan import (
    TORCH_MIN_TIME,
    TORCH_SIZE,
    Plan,
    Step,
    make_plan,
    render,
    signal_name,
)
from tcbench_tools.partial import row_file
from tcbench_tools.printable import printable
from tcbench_tools.results import load_file

QUICK_MIN_TIME = runner.QUICK_MIN_TIME  # the quick suite's time per benchmark
MARKER = ".tcbench-gpu-check"  # in every OUTDIR the check made: the folder is the check's own
# Files the check writes beside the archive: an archive of one of these names would be overwritten.
BESIDE_ARCHIVE = ("summary.txt", "box.txt")
STATE_LIMIT = 60.0  # seconds for one GPU state record (three nvidia-smi queries, 20 s each)
ANSWERS_LIMIT = 180.0  # the host studies and the answers (their own limit, outside the budget)
TORCH_PROBE_LIMIT = 60.0  # `import torch` and torch.cuda.is_available()
BUILD_LIMIT = 3600.0  # a source tree's `tcbench test` step (it compiles; outside the budget)
SAFETY = 1.25  # a step starts when 1.25 x its prediction + START_MARGIN fits in the budget left
START_MARGIN = 5.0
FAILED_WORDS = ("FAILED", "CRASHED", "KILLED", "TIMEOUT", "NO OUTPUT", "GARBAGE OUTPUT",
                "NOT RUNNABLE")
# Exit codes (cli.py's docstring and docs/gpu-check.md §4 say the same).
EXIT_PASSED, EXIT_FAILED, EXIT_REFUSED, EXIT_INCOMPLETE, EXIT_NO_GPU = 0, 1, 2, 3, 77


@dataclass
class Options:
    out: Path
    archive: Path | None = None
    tier: int = 3
    budget: float = 450.0
    step_cap: float = 180.0
    torch_python: str = "python3"
    preset: str = "release"
    build_limit: float = BUILD_LIMIT  # TCBENCH_BUILD_TIMEOUT_S


def now() -> float:
    return time.time()


def step_code(status: str) -> int | str:
    """A bench step's outcome as runner.Outcome's code: 0, the exit status, -N for signal N,
    runner's TIMEOUT_CODE for a step stopped at its limit or the budget's end."""
    if status == "ok":
        return 0
    if status.startswith(("TIMEOUT", "CUT", "INTERRUPTED")):
        return TIMEOUT_CODE
    if status.startswith(("CRASHED", "KILLED")):
        name = status.split("(", 1)[-1].rstrip(")")
        return -signal.Signals[name].value if name in signal.Signals.__members__ else -1
    found = re.search(r"exit (-?[0-9]+)", status)
    return int(found.group(1)) if found else 1


def last_output(log: Path, lines: int = 2) -> str:
    try:
        text = log.read_bytes()[-8192:].decode("utf-8", errors="replace")
    except OSError:
        return ""
    kept = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return " ".join(kept[-lines:])[:300]


def gtest_counts(log: Path) -> str:
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return "no log"
    counts = {}
    for word in ("PASSED", "FAILED", "SKIPPED"):
        found = re.findall(rf"^\[  {word}\s*\] (\d+) test", text, re.MULTILINE)
        counts[word] = sum(int(n) for n in found)
    return f"{counts['PASSED']} passed, {counts['FAILED']} failed, {counts['SKIPPED']} skipped"


class StartWatch:
    """When a benchmark binary had started: its row file's first line is the run's context,
    written once the CUDA context, cuBLAS and NVML are up (common/bench/src/reporter.cpp). Looked
    at on supervise's ticks; the file's mtime dates the line while it is the only one."""

    def __init__(self, rows: Path):
        self.rows, self.at = rows, None

    def tick(self, _elapsed: float) -> None:
        if self.at is not None:
            return
        try:
            data = self.rows.read_bytes()[:1 << 20]
            if data.count(b"\n") == 1 and data.endswith(b"\n"):
                self.at = self.rows.stat().st_mtime
            elif data.count(b"\n") > 1:
                self.at = time.time()  # seen late: an upper bound
        except OSError:
            pass

    def seconds(self, begin: float | None) -> float | None:
        return None if self.at is None or begin is None else max(0.0, self.at - begin)


def torch_ran(torch_json: Path) -> str:
    """Which PyTorch, CUDA and cuBLAS the torch step ran (torch.json)."""
    try:
        doc = json.loads(torch_json.read_text())
        blas = doc.get("cublas") or {}
        return (f"torch {printable(str(doc.get('torch_version')))} (CUDA "
                f"{printable(str(doc.get('cuda')))}) ran cuBLAS "
                f"{printable(str(blas.get('wheel') or blas.get('library') or 'unknown'))}")
    except (OSError, ValueError, AttributeError):
        return "torch.json unreadable"


class Check:
    def __init__(self, opts: Options, repo: Path):
        self.opts, self.repo = opts, repo
        self.out = opts.out
        self.bundle = not (repo / "CMakeLists.txt").is_file()
        self.bin_dir = (repo / "bin" if self.bundle
                        else repo / "build" / opts.preset / "bin")
        self.model = cost.Model()
        self.steps: list[Step] = [Step("GPU state before", "state", 0)]
        if not self.bundle:
            self.steps.append(Step(f"tests (tcbench test --preset {opts.preset})", "tests", 0))
        self.plan: Plan | None = None
        self.begin = now()
        self.budget_from = self.begin  # the budget counts from after a source tree's build
        self.gpu_line = ""
        self.no_gpu: str | None = None  # why the first binary found no GPU
        self.no_gpu_step = ""
        self.verdict: str | None = None
        self.sampler = gpu_state.Sampler(self.out / "gpu-samples.csv")
        self.archive_note = ""
        self.archive_failed = False
        self.notes: list[str] = []  # what the preflight did or found (restored modes, CUPTI)
        self.torch_missing: str | None = None
        # The box's own environment, for its PyTorch (whose wheels find their own CUDA libraries
        # through RUNPATH, which an LD_LIBRARY_PATH entry would override: the libnvJitLink
        # undefined-symbol failure), and the steps' own: CUDA's library folders appended for the
        # bundle's binaries, built elsewhere.
        self.box_env = dict(os.environ)
        self.env = dict(os.environ)
        dirs = bundle.cuda_library_dirs()
        if dirs:
            self.env["LD_LIBRARY_PATH"] = ":".join(
                [p for p in self.env.get("LD_LIBRARY_PATH", "").split(":") if p] + dirs)

    # --- bookkeeping ------------------------------------------------------------------------

    def where_from(self) -> str:
        if not self.bundle:
            return "source tree"
        return (f"bundle {bundle.manifest_field(self.repo, 'git_sha') or '?'}, built for "
                f"{bundle.manifest_field(self.repo, 'cuda_architectures') or '?'}")

    def text(self) -> str:
        o = self.opts
        lines = [f"== tcbench gpu_check ({self.where_from()}) -> {self.out}"]
        if self.gpu_line:
            lines.append(f"   GPU: {self.gpu_line.splitlines()[-1]}")
        lines.append(f"   budget {o.budget:g} s (TCBENCH_CHECK_BUDGET_S), each step at most "
                     f"{o.step_cap:g} s (TCBENCH_STEP_TIMEOUT_S); tiers 1-{o.tier}"
                     + (f"; archive {o.archive}" if o.archive else ""))
        lines += [f"   note: {n}" for n in self.notes]
        if self.plan is not None:
            lines += render(self.plan)
        lines.append("-- steps (tier, planned s, seconds, outcome):")
        lines += [summary.step_line(s) for s in self.all_steps()]
        used = now() - self.budget_from
        lines.append(f"   {'total':<38} {'':>2} {'':>5} {now() - self.begin:>5.0f}  "
                     f"budget {o.budget:g} s, {used:.0f} s of it used")
        if self.plan is not None:
            lines += summary.tiers_lines(self.plan, o.tier)
            lines += summary.never_ran_lines(self.plan)
        failed_tests = self.failed_tests()
        lines += [f"   {t}" for t in failed_tests[:20]]
        after = self.out / "results" / "nvidia-smi-after.txt"
        if after.is_file():
            csv = [ln for ln in after.read_text(errors="replace").splitlines()
                   if ln.startswith("index,") or re.match(r"^\d+, ", ln)]
            lines += ["-- GPU after the run:", *(f"   {ln}" for ln in csv[:2])]
        lines += summary.tables(self.out, self.plan)
        if self.archive_note:
            lines.append(self.archive_note)
        lines.append(self.verdict or "-- (check in progress: this summary is rewritten after "
                                     "every step)")
        return "\n".join(lines) + "\n"

    def all_steps(self) -> list[Step]:
        return self.steps + (self.plan.steps if self.plan else [])

    def failed_tests(self) -> list[str]:
        found = []
        for log in sorted((self.out / "logs").glob("*.log")):
            try:
                text = log.read_text(errors="replace")
            except OSError:
                continue
            found += re.findall(r"^\[  FAILED  \] [A-Za-z]\S*", text, re.MULTILINE)
            found += re.findall(r"^.*\(Failed\)\s*$", text, re.MULTILINE)
        return sorted(set(found))

    def write_summary(self) -> None:
        summary.write(self.out / "summary.txt", self.text())

    def save(self) -> None:
        """summary.txt, and with --archive the archive and the summary beside it."""
        self.write_summary()
        if self.opts.archive is None:
            return
        try:
            size = archive.write(self.out, self.opts.archive)
            archive.copy_summary(self.out / "summary.txt", self.opts.archive)
            self.archive_note = (f"-- archive: {self.opts.archive} ({size / 2**20:.1f} MiB, the "
                                 "whole output folder as of the last step)")
        except OSError as exc:
            self.archive_failed = True
            self.archive_note = f"-- archive: cannot write {self.opts.archive}: {exc}"
            self.write_summary()

    def log(self, step: Step) -> Path:
        return self.out / "logs" / f"{step.file_stem}.log"

    def say(self, text: str) -> None:
        print(f"gpu_check: {text}", flush=True)

    # --- running one step -------------------------------------------------------------------

    def left(self) -> float:
        closing = sum(s.predicted for s in (self.plan.tier(4) if self.plan else []))
        return self.opts.budget - (now() - self.budget_from) - closing - START_MARGIN

    def own_limit(self, step: Step) -> float:
        if step.cap is not None:
            return min(self.opts.step_cap, step.cap)
        return min(self.opts.step_cap, max(30.0, 3.0 * step.predicted + 20.0))

    def fits(self, step: Step) -> tuple[bool, float, bool]:
        """(may start, its limit, whether the budget cut that limit)."""
        left = self.left()
        # A step with its own cap is priced at its worst case: the cap, not a margin, bounds it.
        need = (step.cap if step.cap is not None else SAFETY * step.predicted) + START_MARGIN
        if need > left:
            step.status = "NOT STARTED"
            step.note = (f"budget: needs about {need:.0f} s, {max(0, left):.0f} s of the "
                         f"{self.opts.budget:g} s budget left")
            return False, 0.0, False
        own = self.own_limit(step)
        return True, min(own, left), left < own

    def supervised(self, step: Step, cmd: list[str], limit: float, cut: bool,
                   env: dict | None = None, on_tick=None) -> int | None:
        """Runs `cmd` for `step` into its log; sets its status for timeouts and signals and
        returns the exit status (None when it was stopped at its limit)."""
        log = self.log(step)
        step.status, step.limit = "RUNNING", limit
        step.begin = now()
        step.note = f"started {time.strftime('%H:%M:%SZ', time.gmtime())}, limit {limit:.0f} s"
        self.save()
        self.say(f"{step.name}: running (planned {step.predicted:.0f} s, limit {limit:.0f} s)")
        try:
            with open(log, "wb") as fh:
                done = process.supervise(cmd, timeout=limit, stdout=fh, stderr=fh,
                                         stdin=subprocess.DEVNULL, on_tick=on_tick,
                                         env=env or self.env)
        except OSError as exc:
            step.status, step.note = "NOT RUNNABLE", f"cannot start: {exc.strerror or exc}"
            step.seconds = 0.0
            return 126
        except process.Interrupted as stop:
            step.seconds = now() - step.begin
            step.status = "INTERRUPTED"
            step.note = (f"by {signal.Signals(stop.signum).name}; its process group was stopped;"
                         f" last output: {last_output(log)}")
            raise
        finally:
            step.end = now()
            with open(self.out / "steps.tsv", "a") as fh:
                fh.write(f"{step.name}\t{step.begin:.0f}\t{step.end:.0f}\n")
        step.seconds = done.seconds
        if done.timed_out or done.code == 124:
            step.status = "CUT" if cut else "TIMEOUT"
            where = (f"the end of the {self.opts.budget:g} s budget" if cut
                     else f"its {limit:.0f} s limit")
            step.note = (f"stopped with its process group at {where}; "
                         f"last output: {last_output(log)}")
            return None
        if done.code < 0:
            word = "CRASHED" if -done.code in (signal.SIGSEGV, signal.SIGBUS, signal.SIGILL,
                                               signal.SIGFPE, signal.SIGABRT) else "KILLED"
            step.status = f"{word} ({signal_name(-done.code)})"
            step.note = f"last output: {last_output(log)}"
        return done.code

    def run_step(self, step: Step) -> None:
        if step.status != "pending":
            return  # decided at planning (a listing that failed, --tier)
        if step.kind == "state":
            self.run_state(step)
            return
        if step.kind == "answers":
            self.run_answers(step)
            return
        if self.no_gpu is not None:
            step.status, step.note = "NOT STARTED", f"no GPU visible (see {self.no_gpu_step})"
            return
        getattr(self, f"run_{step.kind}")(step)

    def run_state(self, step: Step) -> None:
        step.status, step.begin = "RUNNING", now()
        name = "before" if "before" in step.name else "after"
        if name == "after":
            self.sampler.stop()
        try:
            # In the run folder: the GPU's state belongs with the rows it measured.
            line = gpu_state.record(self.out / "results" / f"nvidia-smi-{name}.txt")
        except OSError as exc:
            step.status, step.note = "FAILED", f"cannot write the record: {exc}"
            return
        finally:
            step.end = now()
            step.seconds = step.end - step.begin
        process.check_stop()
        if name == "before":
            self.gpu_line = line
            self.sampler.start()
        step.status, step.note = "ok", f"results/nvidia-smi-{name}.txt"

    def run_tests(self, step: Step) -> None:
        code = self.supervised(step, [str(self.repo / "scripts" / "tcbench"), "test",
                                      "--preset", self.opts.preset], self.opts.build_limit,
                                 False)
        self.budget_from = now()  # the budget is for checking, not building
        if step.status == "RUNNING":
            verdict = re.findall(r"^tcbench test \(.*$", self.log(step).read_text(errors="replace"),
                                 re.MULTILINE)
            step.status = "ok" if code == 0 else f"FAILED (exit {code})"
            step.note = verdict[-1] if verdict else last_output(self.log(step), 1)

    def bench_command(self, step: Step, json_path: Path, quick: bool = True) -> list[str]:
        cmd = [str(step.binary)]
        if quick:
            cmd += ["--quick", f"--benchmark_min_time={QUICK_MIN_TIME}"]
        elif step.kind == "cublaslt":
            cmd.append(f"--benchmark_min_time={TORCH_MIN_TIME}")
        if step.filter:
            cmd.append(f"--benchmark_filter={step.filter}")
        return cmd + [f"--benchmark_out={json_path}", "--benchmark_out_format=json",
                      "--benchmark_report_aggregates_only=false"]

    def run_bench(self, step: Step, quick: bool = True, json_path: Path | None = None) -> None:
        ok, limit, cut = self.fits(step)
        if not ok:
            return
        json_path = json_path or self.out / "results" / f"{step.file_stem}.json"
        predicted = step.predicted
        started = StartWatch(row_file(json_path))
        code = self.supervised(step, self.bench_command(step, json_path, quick), limit, cut,
                               env=dict(self.env, **step.env) if step.env else None,
                               on_tick=started.tick)
        rows = self.read_rows(step, json_path)
        self.learn_gpu(json_path)
        if step.status == "RUNNING":
            if code == 77:
                self.no_gpu = last_output(self.log(step), 1).removeprefix(str(self.bin_dir) + "/")
                self.no_gpu_step = step.name
                step.status, step.note = "skipped", f"exit 77: {self.no_gpu}"
                return
            if code == 0 and not step.finished_rows:
                step.status = "NO OUTPUT"
                step.note = f"exit 0 but no results; last output: {last_output(self.log(step))}"
                return
            step.status = "ok" if code == 0 else f"FAILED (exit {code})"
            if code == 2:
                step.note = f"it refused its arguments: {last_output(self.log(step), 1)}"
        rows_note = f"{len(step.finished_rows)} of {len(step.rows)} benchmarks"
        if step.never_ran:
            rows_note += f" ({len(step.never_ran)} never ran)"
        step.note = "; ".join(x for x in (rows_note, step.note if step.status != "ok" else "")
                              if x)
        if rows and step.seconds and step.kind != "regime":  # a regime step is priced as a bound
            self.model.learn(rows, step.seconds, predicted, started.seconds(step.begin))

    def run_regime(self, step: Step) -> None:
        """The burst and sustained rows: without --quick (which skips them), under the step's
        environment (its sustained limit) and cap."""
        self.run_bench(step, quick=False)

    def merge_results(self) -> None:
        """results/ as tcbench run leaves a run folder (runner.merge): the bench steps' files
        become one results.json, each row once, a step cut short with its finished rows marked.
        Until then (a check killed midway) the step files are the run, read the same way."""
        outcomes = []
        for s in self.plan.steps if self.plan else []:
            path = self.out / "results" / f"{s.file_stem}.json"
            ran = path.is_file() or row_file(path).is_file()
            if s.kind not in ("bench", "regime") or not ran:
                continue
            outcomes.append(runner.Outcome(s.binary.name, step_code(s.status), s.seconds or 0.0,
                                           path, s.note))
        if not outcomes:
            return
        try:
            runner.merge(outcomes, self.out / "results" / runfile.MERGED)
        except (InputError, OSError) as exc:
            self.notes.append(f"results/ not merged (its step files are the run): {exc}")

    def learn_gpu(self, json_path: Path) -> None:
        """The cost model's GPU from the first result file that names it (its context): later
        steps are priced for this GPU's own peaks, SMs and skip rules, not the H200's."""
        if self.model.gpu is not cost.H200:
            return
        try:
            context = load_file(json_path).context
        except (InputError, OSError):
            return
        gpu = cost.gpu_from_context(context)
        if gpu is not None:
            self.model = cost.with_gpu(self.model, gpu)
            if self.plan is not None:
                self.plan.model = self.model

    def read_rows(self, step: Step, json_path: Path) -> list[dict]:
        """The rows a bench step left (a file cut short too); sets finished_rows, never_ran."""
        try:
            rs = load_file(json_path)
        except (InputError, OSError):
            step.finished_rows, step.never_ran = [], list(step.rows)
            return []
        step.finished_rows = list(rs.benchmarks)
        done = set(rs.benchmarks)
        step.never_ran = [n for n in step.rows if n not in done]
        return [row for b in rs.benchmarks.values() for row in b.iterations]

    def run_device(self, step: Step) -> None:
        ok, limit, cut = self.fits(step)
        if not ok:
            return
        xml = self.out / "device-tests" / f"{step.binary.name}.xml"
        code = self.supervised(step, [str(step.binary), f"--gtest_output=xml:{xml}"], limit, cut)
        counts = gtest_counts(self.log(step))
        if step.status == "RUNNING":
            step.status = "ok" if code == 0 else f"FAILED (exit {code})"
            step.note = counts if code == 0 else f"{counts}; {last_output(self.log(step), 1)}"
        else:
            step.note = f"{counts}; {step.note}"

    def torch_script(self) -> Path:
        return self.repo / "scripts" / "gpu_check_torch.py"

    def run_cublaslt(self, step: Step) -> None:
        if step.binary is None or not step.binary.is_file():
            self.torch_missing = f"no cuBLASLt result to compare with (no {step.binary})"
            step.status, step.note = "skipped", self.torch_missing
            return
        try:
            probe = process.capture([self.opts.torch_python, "-c", ("import sys, torch; "
                                     "sys.exit(0 if torch.cuda.is_available() else 1)")],
                                    TORCH_PROBE_LIMIT, env=self.box_env)
            has_torch = probe.code == 0
        except OSError:
            has_torch = False
        process.check_stop()
        if not has_torch:
            self.torch_missing = (f"'{self.opts.torch_python}' has no PyTorch with CUDA "
                                  "(TCBENCH_TORCH_PYTHON)")
            step.status, step.note = "skipped", f"nothing to compare with: {self.torch_missing}"
            return
        (self.out / "torch").mkdir(exist_ok=True)
        self.run_bench(step, quick=False, json_path=self.out / "torch" / "tcbench.json")
        if step.status != "ok":
            self.torch_missing = "no cuBLASLt result to compare with"

    def run_torch(self, step: Step) -> None:
        if self.torch_missing:
            step.status, step.note = "skipped", self.torch_missing
            return
        ok, limit, cut = self.fits(step)
        if not ok:
            return
        torch_json = self.out / "torch" / "torch.json"
        code = self.supervised(step, [self.opts.torch_python, str(self.torch_script()), "time",
                                      "--size", str(TORCH_SIZE), "--out", str(torch_json)],
                               limit, cut, env=self.box_env)
        if step.status != "RUNNING":
            return
        if code != 0:
            step.status, step.note = f"FAILED (exit {code})", last_output(self.log(step))
            return
        step.status, step.note = "ok", f"torch/torch.json; {torch_ran(torch_json)}"
        ratio = self.out / "torch" / "ratio.json"
        try:
            with open(self.out / "torch" / "ratio.txt", "wb") as fh:
                process.supervise([sys.executable, str(self.torch_script()), "compare",
                                   str(torch_json), str(self.out / "torch" / "tcbench.json"),
                                   "--out", str(ratio)], timeout=60, stdout=fh, stderr=fh,
                                  stdin=subprocess.DEVNULL, env=self.box_env)
        except OSError as exc:
            step.note += f"; the comparison could not run: {exc}"

    def run_answers(self, step: Step) -> None:
        env = dict(self.env, PYTHONPATH=str(self.repo / "scripts"))
        code = self.supervised(step, [sys.executable, "-m", "tcbench_tools.answers.gpu_check",
                                      str(self.out), str(self.bin_dir)], ANSWERS_LIMIT, False,
                               env=env)
        if step.status == "RUNNING":
            line = last_output(self.log(step), 1)
            step.status = "ok" if code == 0 else f"FAILED (exit {code})"
            step.note = f"answers.md; {line}" if code == 0 else line

    # --- the whole check --------------------------------------------------------------------

    def archive_problem(self) -> str | None:
        """Why --archive cannot be written as the check's own file, as one sentence: a folder,
        a path inside OUTDIR (which it packs) or named as a file written beside it, or a folder
        that cannot be written. Found before any step; None when it can be."""
        a = self.opts.archive
        if a is None:
            return None
        out = self.out.absolute().resolve()
        where = a.absolute().resolve()
        if a.is_dir():
            return (f"the archive {a} is a folder: give a file name in it (e.g. "
                    f"{a / 'gpu-check.tgz'})")
        if where == out or out in where.parents:
            return f"the archive {a} is inside OUTDIR {self.out}, which it packs: put it outside"
        if a.name in BESIDE_ARCHIVE:
            return (f"the archive {a} would be overwritten by the {a.name} the check writes beside "
                    "it: give it another name (e.g. gpu-check.tgz)")
        probe = a.parent / f".{a.name}.probe-{os.getpid()}"
        try:
            a.parent.mkdir(parents=True, exist_ok=True)
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            return f"the archive's folder {a.parent} cannot be written ({exc.strerror or exc})"
        return None

    def prepare_out(self) -> str | None:
        """Creates OUT, or takes one an earlier check made (its MARKER) and removes what that
        check left; one sentence when it cannot. Any other folder that is not empty is someone
        else's: refused, nothing touched."""
        try:
            if self.out.is_dir() and any(self.out.iterdir()) and not (self.out / MARKER).is_file():
                return (f"OUTDIR {self.out} exists, is not empty and is no folder a check made (it "
                        f"has no {MARKER}): give a new or empty folder, since the check rewrites "
                        "what it holds")
        except OSError as exc:
            return (f"cannot read the output folder {self.out} ({exc.strerror or exc}): give an "
                    "OUTDIR you can write")
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            (self.out / MARKER).write_text("made by scripts/gpu_check.sh: the check may rewrite "
                                           "this folder\n")
            for name in ("summary.txt", "steps.tsv", "gpu-samples.csv", "answers.md",
                         "answers.html", "answers.json", "box.txt"):
                (self.out / name).unlink(missing_ok=True)
            for sub in ("logs", "plan", "results", "device-tests", "torch", "studies"):
                if (self.out / sub).is_dir():
                    shutil.rmtree(self.out / sub)
                (self.out / sub).mkdir()
        except OSError as exc:
            return (f"cannot create the output folder {self.out} ({exc.strerror or exc}): give an "
                    "OUTDIR you can write")
        return None

    def box_path(self) -> Path:
        return (self.opts.archive.parent if self.opts.archive else self.out) / "box.txt"

    def write_box(self) -> None:
        """box.txt, first: beside the archive (its folder was just proven writable), or in OUT."""
        why = box.write(self.box_path(), self.repo, self.env, self.box_env,
                        self.opts.torch_python, self.where_from())
        if why:
            self.notes.append(f"box.txt: {why}")

    def finish_verdict(self) -> int:
        steps = [s for s in self.all_steps() if s.kind != "answers"]
        failed = [s for s in steps if s.status.startswith(FAILED_WORDS)]
        tests_failed = any(s.kind in ("device", "tests") for s in failed)
        bench_failed = [s for s in failed if s.kind in ("bench", "regime", "cublaslt", "torch")]
        timeouts = [s for s in failed if s.status == "TIMEOUT"]
        crashed = [s for s in failed if s.status.startswith("CRASHED")]
        killed = [s for s in failed if s.status.startswith("KILLED")]
        ran_gpu = any(s.kind in ("bench", "regime") and s.status == "ok" for s in steps)
        # What a tier asked for did not run: cut at the budget's end, not started (the budget, or
        # the GPU gone after steps had measured), or the step that found the GPU gone. Only
        # --tier leaves steps out on purpose.
        vanished = self.no_gpu is not None and ran_gpu
        left = [s.name for s in steps if s.status == "CUT" or (
            s.status == "NOT STARTED" and not s.note.startswith("--tier")) or (
            vanished and s.name == self.no_gpu_step)]
        if failed or self.archive_failed:
            parts = []
            if tests_failed:
                parts.append("tests failed")
            if [s for s in bench_failed if s not in timeouts + crashed + killed]:
                parts.append("a benchmark binary failed")
            if timeouts:
                parts.append(f"{len(timeouts)} step(s) timed out")
            if crashed:
                parts.append(f"{len(crashed)} step(s) crashed")
            if killed:
                parts.append(f"{len(killed)} step(s) killed by a signal")
            other = [s for s in failed if s.status.startswith(("NO OUTPUT", "GARBAGE",
                                                               "NOT RUNNABLE"))]
            if other:
                parts.append(f"{len(other)} binary(ies) gave no usable output "
                             f"({', '.join(s.name for s in other)})")
            if self.archive_failed:
                parts.append(f"the archive {self.opts.archive} could not be written")
            if left:
                parts.append(f"and {len(left)} step(s) did not run")
            code, text = EXIT_FAILED, "FAILED: " + "; ".join(parts)
        elif self.no_gpu is not None and not ran_gpu:
            code, text = EXIT_NO_GPU, f"SKIPPED: no GPU visible (nothing measured): {self.no_gpu}"
        elif left:
            why = (f"the GPU was gone from {self.no_gpu_step} on ({self.no_gpu})" if vanished
                   else f"they did not fit the {self.opts.budget:g} s budget")
            code, text = EXIT_INCOMPLETE, (f"INCOMPLETE: {len(left)} step(s) of the tiers asked "
                                           f"for did not run, {why}: {', '.join(left)}")
        else:
            code = EXIT_PASSED
            text = "PASSED" + (f" (tiers 1-{self.opts.tier})" if self.opts.tier < 3 else "")
        self.verdict = f"-- {text} (exit {code})"
        return code

    def run(self) -> int:
        refusal = self.archive_problem()
        if refusal is None and self.opts.archive is not None:
            self.write_box()  # first, so that every later refusal still brings it back
        refusal = refusal or bundle.bundle_problem(self.repo)
        if refusal is None:
            restored, refusal = bundle.restore_modes(self.repo)
            if restored:
                self.notes.append(restored)
                print(f"gpu_check: {restored}", file=sys.stderr, flush=True)
        refusal = refusal or self.prepare_out()
        if refusal:
            print(f"gpu_check: {refusal}; nothing was run.", file=sys.stderr)
            return EXIT_REFUSED
        if self.opts.archive is None:
            self.write_box()
        else:
            try:
                shutil.copyfile(self.box_path(), self.out / "box.txt")  # into the archive too
            except OSError:
                pass
        self.out = self.out.resolve()
        self.sampler.path = self.out / "gpu-samples.csv"
        self.begin = self.budget_from = now()  # the budget is for the steps
        with process.forward_signals():
            try:
                return self._run()
            except process.Interrupted as stop:
                return self.interrupted(stop.signum)
            finally:
                self.sampler.stop()

    def _run(self) -> int:
        self.save()
        self.run_step(self.steps[0])
        if self.bundle:
            refusal, note = bundle.loading_problem(self.repo, self.env)
            if note:
                self.notes.append(note)
                self.say(note)
            if refusal:
                print(f"gpu_check: {refusal}", file=sys.stderr)
                self.verdict = f"-- REFUSED (exit {EXIT_REFUSED}): {refusal}"
                self.save()
                return EXIT_REFUSED
        self.save()
        for step in self.steps[1:]:
            self.run_step(step)
            self.save()
        process.check_stop()
        self.plan = make_plan(self.bin_dir, self.model, device_tests=self.bundle,
                              stop_after=self.opts.tier, out=self.out, env=self.env)
        self.save()
        for step in self.plan.steps:
            self.run_step(step)
            if step.done and step.seconds is not None:
                self.say(f"{step.name}: {step.status} in {step.seconds:.0f} s (planned "
                         f"{step.predicted:.0f} s); {now() - self.budget_from:.0f} s of the "
                         f"{self.opts.budget:g} s budget used")
            self.plan.replan()
            self.save()
        self.merge_results()
        code = self.finish_verdict()
        self.save()
        if self.archive_failed and code == EXIT_PASSED:  # the last rewrite failed: say so
            code = self.finish_verdict()
            self.write_summary()
        print(self.text(), end="")
        return code

    def interrupted(self, signum: int) -> int:
        name = signal.Signals(signum).name
        for s in self.all_steps():
            if s.status == "pending":
                s.status, s.note = "NOT STARTED", f"the check was interrupted by {name}"
        code = 128 + signum
        self.verdict = f"-- INTERRUPTED by {name} (exit {code}): the steps above are what ran"
        self.save()
        print(f"gpu_check: interrupted by {name}; partial summary in {self.out / 'summary.txt'}",
              file=sys.stderr)
        return code


def plan_only(repo: Path, tier: int, bin_dir: Path | None = None, markdown: bool = False) -> int:
    """--plan: the steps and their predicted seconds, without running anything (no GPU needed:
    it only lists the binaries). From a bundle, its binaries; in a source tree those of BIN_DIR,
    else the lists recorded in data/gpu_check/quick_lists.json (what `tcbench run` plans from,
    so a fresh clone plans without building), else the newest build's. --markdown prints the
    figures README.md and docs/gpu-check.md show (next_steps.plan_block)."""
    from tcbench_tools import next_steps

    if markdown:
        print("\n".join(next_steps.plan_block(repo)))
        return 0
    check = Check(Options(out=Path("."), tier=tier), repo)
    refusal = bundle.bundle_problem(repo)
    if refusal:
        print(f"gpu_check: {refusal}; nothing was planned.", file=sys.stderr)
        return EXIT_REFUSED
    if bin_dir is None and not check.bundle:
        got = next_steps.make(repo, stop_after=tier)
        if got is None:
            print("gpu_check: no recorded lists (data/gpu_check/quick_lists.json) and no built "
                  "benchmark binaries: nothing to plan (give a folder of binaries).",
                  file=sys.stderr)
            return EXIT_REFUSED
        made, lists = got
    else:
        check.bin_dir = bin_dir or check.bin_dir
        if not any(check.bin_dir.glob("bench_*")):
            print(f"gpu_check: no benchmark binaries in {check.bin_dir}: nothing to plan (give "
                  "the folder of the binaries, or plan from a source tree).", file=sys.stderr)
            return EXIT_REFUSED
        made = make_plan(check.bin_dir, check.model, stop_after=tier, env=check.env,
                         device_tests=check.bundle or any(check.bin_dir.glob("device_*")))
        lists = f"the binaries in {check.bin_dir}"
    print(f"== tcbench gpu_check --plan ({check.where_from()}; {lists})")
    print("\n".join(render(made)))
    quick = [s for s in made.steps if s.kind == "bench" and s.tier in (1, 3)]
    print(f"   the quick suite (tiers 1 and 3's benchmarks): {made.predicted(quick):.0f} s")
    print("-- steps (tier, planned s, benchmarks or tests):")
    for s in made.steps:
        what = (f"{len(s.rows)} benchmarks" if s.rows else f"{s.tests} tests" if s.tests
                else s.why)
        state = "" if s.status == "pending" else f"  [{s.status}: {s.note}]"
        print(f"   {s.name:<38} {({4: 'c'}).get(s.tier, s.tier)!s:>2} {s.predicted:>5.0f}  "
              f"{what}{state}".rstrip())
    return EXIT_PASSED
