"""The host studies in a run: build tcbench_studies if needed, run it, write
``<out>/studies.json``, then the answers (``answers.md``, ``answers.html``) and their verdicts.

``tcbench run`` calls this on every run: after the benchmarks when there is a GPU, instead of them
when there is none (then only the studies are built, with the ``studies`` preset: one virtual
architecture, no tests, no benchmarks, so a fresh clone answers in a minute or two instead of
building every architecture). Standard library only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tcbench_tools import answers, process
from tcbench_tools.answers import render
from tcbench_tools.errors import InputError, exit_text

PRESET = "studies"
TOOL = "tcbench_studies"


def find_tool(repo: Path, bin_dirs: list[Path], elsewhere: bool = True,
              name: str = TOOL) -> Path | None:
    """An already built tcbench_studies (or another host tool of the studies preset, ``name``):
    beside the benchmarks, then (``elsewhere``) in an installed bundle or the studies preset's
    build folder."""
    dirs = [*bin_dirs, *((repo / "bin", repo / "build" / PRESET / "bin") if elsewhere else ())]
    for d in dirs:
        tool = d / name
        if tool.is_file() and os.access(tool, os.X_OK):
            return tool
    return None


def configure_args() -> list[str]:
    """The studies preset needs no Python package, no nvml.h and no cuobjdump: host code only."""
    return ["cmake", "--preset", PRESET]


def build_tool(repo: Path, configure_args: list[str]) -> Path:
    """Configure and build the studies preset (only tcbench_studies and what it links)."""
    for title, cmd in (("configure", configure_args),
                       ("build", ["cmake", "--build", "--preset", PRESET, "--parallel",
                                  str(os.cpu_count() or 1)])):
        print(f"tcbench run: {title} ({PRESET}: the host studies only) ...", flush=True)
        try:
            code = subprocess.call(cmd, cwd=repo)
        except FileNotFoundError:
            raise InputError("cmake is not installed or not on PATH.") from None
        if code != 0:
            raise InputError(f"building the host studies failed at the {title} step (exit "
                             f"{code}); see the output above.")
    tool = repo / "build" / PRESET / "bin" / TOOL
    if not tool.is_file():
        raise InputError(f"the studies build finished without {tool}.")
    return tool


# Seconds tcbench_studies may run (a few minutes on two cores): past it, it is stopped with its
# process group, so that a hung study cannot hang `tcbench run` after its measurements.
STUDIES_TIMEOUT = 3600.0


def run_studies(tool: Path, out_dir: Path) -> Path:
    """Runs every study (progress on stderr, one line per study) into out_dir/studies.json, in
    its own process group under STUDIES_TIMEOUT, with SIGINT, SIGTERM and SIGHUP passed on
    (process.py; an interrupt raises process.Interrupted)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / answers.STUDIES_FILE
    with process.forward_signals():
        done = process.supervise([str(tool), "--out", str(path)], timeout=STUDIES_TIMEOUT,
                                 stdin=subprocess.DEVNULL)
    if done.timed_out:
        path.unlink(missing_ok=True)
        raise InputError(f"{tool.name} was still running after {STUDIES_TIMEOUT:g} s and was "
                         "stopped with its process group: no host studies.")
    if done.code != 0:
        raise InputError(f"{tool.name} failed ({exit_text(done.code)}); see its message above.")
    return path


def write_answers(out_dir: Path, inputs: list[Path]) -> list[answers.Answer]:
    """answers.md and answers.html in out_dir, from the run's results and studies."""
    result = answers.answer_all(answers.load_inputs(inputs))
    (out_dir / "answers.md").write_text(render.markdown(result), encoding="utf-8")
    (out_dir / "answers.html").write_text(render.page_html(result), encoding="utf-8")
    return result


def print_verdicts(result: list[answers.Answer], out_dir: Path) -> None:
    print("\nThe five questions (docs/concepts/answers.md):")
    print(render.console(result))
    print(f"Details: {out_dir / 'answers.md'} and {out_dir / 'answers.html'}", flush=True)


def host_only(repo: Path, out_dir: Path, configure_args: list[str] | None,
              bin_dirs: list[Path]) -> None:
    """The run of a machine without a GPU: the studies, their answers, the verdicts.
    ``configure_args`` None: do not build (--no-build, or an installed bundle)."""
    tool = find_tool(repo, bin_dirs)
    if tool is None:
        if configure_args is None:
            print(f"tcbench run: no {TOOL} here and building is off: no host studies either.",
                  file=sys.stderr)
            return
        tool = build_tool(repo, configure_args)
    path = run_studies(tool, out_dir)
    result = write_answers(out_dir, [path])
    print_verdicts(result, out_dir)


def after_gpu_run(repo: Path, out_dir: Path, bin_dirs: list[Path]) -> None:
    """The studies beside a GPU run (never fatal: the measurements stand without them). Only the
    tcbench_studies built with these benchmarks is used, and only when the run left results: a
    run that lost everything gets no answers that would read as if it had measured something."""
    if not (out_dir / "results.json").is_file():
        return
    tool = find_tool(repo, bin_dirs, elsewhere=False)
    inputs = [out_dir / "results.json"]
    try:
        if tool is not None:
            inputs.append(run_studies(tool, out_dir))
        else:
            print("tcbench run: no tcbench_studies beside the benchmarks: the answers have no "
                  "host half.", file=sys.stderr)
        if inputs:
            print_verdicts(write_answers(out_dir, inputs), out_dir)
    except InputError as exc:
        print(f"tcbench run: the answers were not written: {exc}", file=sys.stderr)
