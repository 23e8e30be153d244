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
Standard library only.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tcbench_tools import process
from tcbench_tools.errors import InputError
from tcbench_tools.gpu_check import archive, bundle, cost, gpu_state, summary
from tcbench_tools.gpu_check.plan import (
    TORCH_MIN_TIME,
    TORCH_SIZE,
    Plan,
    Step,
    make_plan,
    render,
    signal_name,
)
from tcbench_tools.results import load_file

QUICK_MIN_TIME = "0.05"  # as runner.QUICK_MIN_TIME: the quick suite's time per benchmark
STATE_LIMIT = 60.0  # seconds for one GPU state record (three nvidia-smi queries, 20 s each)
ANSWERS_LIMIT = 180.0  # the host studies and the answers (their own limit, outside the budget)
TORCH_PROBE_LIMIT = 60.0  # `import torch` and torch.cuda.is_available()
BUILD_LIMIT = 3600.0  # a source tree's `tcbench test` step (it compiles; outside the budget)
SAFETY = 1.25  # a step starts when 1.25 x its prediction + START_MARGIN fits in the budget left
START_MARGIN = 5.0
FAILED_WORDS = ("FAILED", "CRASHED", "KILLED", "TIMEOUT", "NO OUTPUT", "GARBAGE OUTPUT",
                "NOT RUNNABLE")


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
        self.torch_missing: str | None = None
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
        after = self.out / "nvidia-smi-after.txt"
        if after.is_file():
            csv = [ln for ln in after.read_text(errors="replace").splitlines()
                   if ln.startswith("index,") or re.match(r"^\d+, ", ln)]
            lines += ["-- GPU after the run:", *(f"   {ln}" for ln in csv[:2])]
        lines += summary.tables(self.out)
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
        return min(self.opts.step_cap, max(30.0, 3.0 * step.predicted + 20.0))

    def fits(self, step: Step) -> tuple[bool, float, bool]:
        """(may start, its limit, whether the budget cut that limit)."""
        left = self.left()
        need = SAFETY * step.predicted + START_MARGIN
        if need > left:
            step.status = "NOT STARTED"
            step.note = (f"budget: needs about {need:.0f} s, {max(0, left):.0f} s of the "
                         f"{self.opts.budget:g} s budget left")
            return False, 0.0, False
        own = self.own_limit(step)
        return True, min(own, left), left < own

    def supervised(self, step: Step, cmd: list[str], limit: float, cut: bool,
                   env: dict | None = None) -> int | None:
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
                                         stdin=subprocess.DEVNULL,
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
            line = gpu_state.record(self.out / f"nvidia-smi-{name}.txt")
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
        step.status, step.note = "ok", f"nvidia-smi-{name}.txt"

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
        cmd += (["--quick", f"--benchmark_min_time={QUICK_MIN_TIME}"] if quick
                else [f"--benchmark_min_time={TORCH_MIN_TIME}"])
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
        code = self.supervised(step, self.bench_command(step, json_path, quick), limit, cut)
        rows = self.read_rows(step, json_path)
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
        if rows and step.seconds:
            self.model.learn(rows, step.seconds, predicted)

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
                                    TORCH_PROBE_LIMIT, env=self.env)
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
                               limit, cut)
        if step.status != "RUNNING":
            return
        if code != 0:
            step.status, step.note = f"FAILED (exit {code})", last_output(self.log(step))
            return
        step.status, step.note = "ok", "torch/torch.json"
        ratio = self.out / "torch" / "ratio.json"
        try:
            with open(self.out / "torch" / "ratio.txt", "wb") as fh:
                process.supervise([sys.executable, str(self.torch_script()), "compare",
                                   str(torch_json), str(self.out / "torch" / "tcbench.json"),
                                   "--out", str(ratio)], timeout=60, stdout=fh, stderr=fh,
                                  stdin=subprocess.DEVNULL, env=self.env)
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

    def prepare_out(self) -> str | None:
        """Creates OUT and removes what an earlier check left in it; one sentence when it
        cannot."""
        try:
            self.out.mkdir(parents=True, exist_ok=True)
            for name in ("summary.txt", "steps.tsv", "nvidia-smi-before.txt",
                         "nvidia-smi-after.txt", "gpu-samples.csv", "answers.md", "answers.html",
                         "answers.json"):
                (self.out / name).unlink(missing_ok=True)
            for sub in ("logs", "plan", "results", "device-tests", "torch", "studies"):
                if (self.out / sub).is_dir():
                    shutil.rmtree(self.out / sub)
                (self.out / sub).mkdir()
            probe = self.out / ".gpu-check-write-test"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            return (f"cannot create the output folder {self.out} ({exc.strerror or exc}): give an "
                    "OUTDIR you can write")
        return None

    def finish_verdict(self) -> int:
        steps = [s for s in self.all_steps() if s.kind != "answers"]
        failed = [s for s in steps if s.status.startswith(FAILED_WORDS)]
        tests_failed = any(s.kind in ("device", "tests") for s in failed)
        bench_failed = [s for s in failed if s.kind in ("bench", "cublaslt", "torch")]
        timeouts = [s for s in failed if s.status == "TIMEOUT"]
        crashed = [s for s in failed if s.status.startswith("CRASHED")]
        killed = [s for s in failed if s.status.startswith("KILLED")]
        left = [s.name for s in steps if s.status == "CUT" or (
            s.status == "NOT STARTED" and s.note.startswith("budget:"))]
        ran_gpu = any(s.kind == "bench" and s.status == "ok" for s in steps)
        if failed:
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
            if left:
                parts.append(f"and {len(left)} step(s) did not fit the budget")
            code, text = 1, "FAILED: " + "; ".join(parts)
        elif self.no_gpu is not None and not ran_gpu:
            code, text = 77, f"SKIPPED: no GPU visible (nothing measured): {self.no_gpu}"
        elif left:
            code, text = 1, (f"INCOMPLETE: {len(left)} step(s) did not fit the "
                             f"{self.opts.budget:g} s budget: {', '.join(left)}")
        else:
            code = 0
            text = "PASSED" + (f" (tiers 1-{self.opts.tier})" if self.opts.tier < 3 else "")
        self.verdict = f"-- {text} (exit {code})"
        return code

    def run(self) -> int:
        refusal = bundle.bundle_problem(self.repo)
        if refusal:
            print(f"gpu_check: {refusal}; nothing was run.", file=sys.stderr)
            return 2
        refusal = self.prepare_out()
        if refusal:
            print(f"gpu_check: {refusal}; nothing was run.", file=sys.stderr)
            return 2
        self.out = self.out.resolve()
        self.sampler.path = self.out / "gpu-samples.csv"
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
            refusal = bundle.loading_problem(self.repo)
            if refusal:
                print(f"gpu_check: {refusal}", file=sys.stderr)
                self.verdict = f"-- REFUSED (exit 2): {refusal}"
                self.save()
                return 2
        self.save()
        for step in self.steps[1:]:
            self.run_step(step)
            self.save()
        process.check_stop()
        self.plan = make_plan(self.bin_dir, self.model, device_tests=self.bundle,
                              stop_after=self.opts.tier, out=self.out)
        self.save()
        for step in self.plan.steps:
            self.run_step(step)
            if step.done and step.seconds is not None:
                self.say(f"{step.name}: {step.status} in {step.seconds:.0f} s (planned "
                         f"{step.predicted:.0f} s); {now() - self.budget_from:.0f} s of the "
                         f"{self.opts.budget:g} s budget used")
            self.plan.replan()
            self.save()
        code = self.finish_verdict()
        self.save()
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


def plan_only(repo: Path, tier: int, bin_dir: Path | None = None) -> int:
    """--plan: the steps and their predicted seconds, without running anything (no GPU needed:
    it only lists the binaries). In a source tree the binaries are those of BIN_DIR, else of
    build/$TCBENCH_PRESET, else of the newest build with benchmark binaries."""
    check = Check(Options(out=Path("."), tier=tier), repo)
    refusal = bundle.bundle_problem(repo)
    if refusal:
        print(f"gpu_check: {refusal}; nothing was planned.", file=sys.stderr)
        return 2
    if bin_dir is not None:
        check.bin_dir = bin_dir
    elif not check.bundle and not any(check.bin_dir.glob("bench_*")):
        built = sorted((p.parent for p in repo.glob("build/*/bin/bench_*")),
                       key=lambda d: d.stat().st_mtime, reverse=True)
        check.bin_dir = built[0] if built else check.bin_dir
    if not any(check.bin_dir.glob("bench_*")):
        print(f"gpu_check: no benchmark binaries in {check.bin_dir}: nothing to plan (build "
              "them, give their folder, or run this from a bundle).", file=sys.stderr)
        return 2
    plan = make_plan(check.bin_dir, check.model, stop_after=tier,
                     device_tests=check.bundle or any(check.bin_dir.glob("device_*")))
    print(f"== tcbench gpu_check --plan ({check.where_from()}; {check.bin_dir})")
    print("\n".join(render(plan)))
    quick = [s for s in plan.steps if s.kind == "bench" and s.tier in (1, 3)]
    print(f"   the quick suite (tiers 1 and 3's benchmarks): {plan.predicted(quick):.0f} s")
    print("-- steps (tier, planned s, benchmarks or tests):")
    for s in plan.steps:
        what = (f"{len(s.rows)} benchmarks" if s.rows else f"{s.tests} tests" if s.tests
                else s.why)
        state = "" if s.status == "pending" else f"  [{s.status}: {s.note}]"
        print(f"   {s.name:<38} {({4: 'c'}).get(s.tier, s.tier)!s:>2} {s.predicted:>5.0f}  "
              f"{what}{state}".rstrip())
    return 0
