"""The host studies in a run: build tcbench_studies (incrementally), run it, write
``<out>/studies.json``, then the answers (``answers.md``, ``answers.html``) and their verdicts.

``tcbench run`` calls this on every run: after the benchmarks when there is a GPU, instead of them
when there is none (then only the studies are built, with the ``studies`` preset: one virtual
architecture, no tests, no benchmarks, so a fresh clone answers in a minute or two instead of
building every architecture).

- **Always current.** In a source tree ``ensure_tools`` builds the studies preset every time, as
  the GPU path builds its preset: a no-op of about a second when nothing changed, and never a
  stale tool after the sources changed (the review's D1). ``tcbench model`` uses the same.
- **Nothing finished is lost.** tcbench_studies rewrites its file after every study, so an
  interrupt (Ctrl-C) leaves the studies that finished: the file is marked incomplete
  (``tcbench_incomplete``, as ``tcbench run`` marks a cut-short GPU run) and answered from
  (the review's D8).
- **Computed once.** The tool reads no input but itself, so a run whose tcbench_studies has the
  sha256 of a whole studies.json beside it (``results/<stamp>/``) copies that file, and says so,
  instead of computing it again (a rerun in about 2 s instead of 9).
- **The next step.** A run without a GPU ends by saying how to get the GPU halves and how long
  the check takes by its plan (next_steps.py), on the console and in answers.md/html.

Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from tcbench_tools import answers, files, next_steps, process, schema
from tcbench_tools.answers import render
from tcbench_tools.errors import InputError, exit_text
from tcbench_tools.inputs import STUDIES_FILE, load_all
from tcbench_tools.runfile import context_list

PRESET = "studies"
TOOL = "tcbench_studies"
TOOL_TARGET = "tcbench_studies_tool"  # its CMake target (common/host_studies/CMakeLists.txt)


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


def is_source_tree(repo: Path) -> bool:
    return (repo / "CMakeLists.txt").is_file()


def _configured(build_dir: Path) -> bool:
    return (build_dir / "CMakeCache.txt").is_file() and (build_dir / "build.ninja").is_file()


def ensure_tools(repo: Path, who: str = "tcbench run", quiet_stdout: bool = False,
                 target: str | None = None) -> Path:
    """The studies preset's tools (tcbench_studies, tcbench_model), built now: configured the
    first time, then ``cmake --build --preset studies`` on every call, which rebuilds what the
    sources changed and is a no-op of about a second otherwise (ninja reruns CMake itself when a
    CMakeLists.txt changed). Each step in its own process group with the run's signals passed on
    (an interrupt stops the compilers too). ``quiet_stdout``: the build's lines go to stderr
    (a command whose stdout is data, as ``tcbench model predict``). ``target``: build only it
    (run needs tcbench_studies alone). Returns the bin folder."""
    build_dir = repo / "build" / PRESET
    steps = [("build", ["cmake", "--build", "--preset", PRESET, "--parallel",
                        str(os.cpu_count() or 1), *(["--target", target] if target else [])])]
    if not _configured(build_dir):
        # Host code only: no Python package, no nvml.h and no cuobjdump to pass.
        steps.insert(0, ("configure", ["cmake", "--preset", PRESET]))
    with process.forward_signals():
        for title, cmd in steps:
            print(f"{who}: {title} ({PRESET} preset: the host studies only"
                  + (", incremental" if title == "build" else "") + ") ...", flush=True,
                  file=sys.stderr if quiet_stdout else sys.stdout)
            try:
                done = process.supervise(cmd, cwd=repo,
                                         **({"stdout": 2} if quiet_stdout else {}))  # fd 2
            except FileNotFoundError:
                raise InputError("cmake is not installed or not on PATH.") from None
            if done.code != 0:
                raise InputError(f"building the host studies failed at the {title} step "
                                 f"({exit_text(done.code)}); see the output above.")
    return build_dir / "bin"


def build_tool(repo: Path, name: str = TOOL, **build) -> Path:
    """A host tool of the studies preset, built now (``ensure_tools(repo, **build)``)."""
    tool = ensure_tools(repo, **build) / name
    if not tool.is_file():
        raise InputError(f"the studies build finished without {tool}.")
    return tool


# Seconds tcbench_studies may run (a few minutes on two cores): past it, it is stopped with its
# process group, so that a hung study cannot hang `tcbench run` after its measurements.
STUDIES_TIMEOUT = 3600.0


def _kept(path: Path, why: str) -> bool:
    """After an interrupt: whether tcbench_studies left a file of finished studies at ``path``;
    if so it is marked incomplete (why, and which studies it holds) so that nothing reads it as a
    whole run."""
    if not path.is_file():
        return False
    try:
        doc = json.loads(files.read_text(path, files.RESULTS_LIMIT, "host studies file"))
    except (InputError, ValueError, RecursionError):
        path.unlink(missing_ok=True)  # cut in the middle of a write: not a result
        return False
    if not isinstance(doc, dict) or not isinstance(doc.get("context"), dict):
        path.unlink(missing_ok=True)
        return False
    context = doc["context"]
    done = context_list(context, schema.STUDIES_DONE)
    planned = context_list(context, schema.STUDIES_PLANNED)
    left = [s for s in planned if s not in done]
    context[schema.RUN_INCOMPLETE] = (f"{why}: {len(done)} of {len(planned) or '?'} host "
                                      f"studies finished ({', '.join(done) or 'none'})"
                                      + (f"; not run: {', '.join(left)}" if left else ""))
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return True


def tool_sha256(tool: Path) -> str:
    digest = hashlib.sha256()
    with open(tool, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _complete_context(path: Path) -> dict | None:
    """The context of a whole studies.json (every planned study done), else None."""
    try:
        doc = json.loads(files.read_text(path, files.RESULTS_LIMIT, "host studies file"))
    except (InputError, OSError, ValueError, RecursionError):
        return None
    context = doc.get("context") if isinstance(doc, dict) else None
    if not isinstance(context, dict) or context.get(schema.RUN_INCOMPLETE):
        return None
    planned = context_list(context, schema.STUDIES_PLANNED)
    return context if planned and context_list(context, schema.STUDIES_DONE) == planned else None


def reusable(sha: str, out_dir: Path) -> Path | None:
    """The newest whole studies.json of a run beside ``out_dir`` (results/<stamp>/) that the same
    tcbench_studies wrote: the tool reads no other input, so it would write the same values."""
    try:
        found = [p / STUDIES_FILE for p in out_dir.parent.iterdir()
                 if p != out_dir and (p / STUDIES_FILE).is_file()]
    except OSError:
        return None
    for path in sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)[:20]:
        context = _complete_context(path)
        if context is not None and context.get(schema.STUDIES_TOOL_SHA256) == sha:
            return path
    return None


def _stamp(path: Path, sha: str) -> None:
    """Records in a fresh studies.json which tool wrote it (for the next run's reuse)."""
    doc = json.loads(files.read_text(path, files.RESULTS_LIMIT, "host studies file"))
    doc["context"][schema.STUDIES_TOOL_SHA256] = sha
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def run_studies(tool: Path, out_dir: Path) -> Path:
    """Runs every study (progress on stderr, one line per study) into out_dir/studies.json, in
    its own process group under STUDIES_TIMEOUT, with SIGINT, SIGTERM and SIGHUP passed on
    (process.py). An interrupt raises process.Interrupted; the studies that finished before it
    stay in studies.json, marked incomplete (``Interrupted.kept`` is that path, else None)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / STUDIES_FILE
    path.unlink(missing_ok=True)  # an earlier run's file must not pass for this one's
    sha = tool_sha256(tool)
    earlier = reusable(sha, out_dir)
    if earlier is not None:
        shutil.copyfile(earlier, path)
        print(f"tcbench run: host studies reused from {earlier}: {tool.name} is unchanged "
              f"(sha256 {sha[:12]}) and reads no other input.", flush=True)
        return path
    with process.forward_signals():
        try:
            done = process.supervise([str(tool), "--out", str(path)], timeout=STUDIES_TIMEOUT,
                                     stdin=subprocess.DEVNULL)
        except process.Interrupted as stop:
            stop.kept = path if _kept(path, f"interrupted by {signal.Signals(stop.signum).name}"
                                      ) else None
            raise
    if done.timed_out:
        path.unlink(missing_ok=True)
        raise InputError(f"{tool.name} was still running after {STUDIES_TIMEOUT:g} s and was "
                         "stopped with its process group: no host studies.")
    if done.code != 0:
        path.unlink(missing_ok=True)
        raise InputError(f"{tool.name} failed ({exit_text(done.code)}); see its message above.")
    if _complete_context(path) is not None:
        _stamp(path, sha)
    return path


def write_answers(out_dir: Path, inputs: list[Path],
                  closing: list[str] | None = None) -> list[answers.Answer]:
    """answers.md and answers.html in out_dir, from the run's results and studies; ``closing``:
    the lines said last (how to get the GPU half)."""
    result = answers.answer_all(load_all(inputs, "run"))
    (out_dir / "answers.md").write_text(render.markdown(result, out_dir, closing),
                                        encoding="utf-8")
    (out_dir / "answers.html").write_text(render.page_html(result, out_dir, closing),
                                          encoding="utf-8")
    return result


def print_verdicts(result: list[answers.Answer], out_dir: Path) -> None:
    print("\nThe five questions (docs/concepts/answers.md):")
    print(render.console(result))
    print(f"Details: {out_dir / 'answers.md'} and {out_dir / 'answers.html'}", flush=True)


def host_only(repo: Path, out_dir: Path, build: bool, bin_dirs: list[Path]) -> None:
    """The run of a machine without a GPU: the studies, their answers, the verdicts. ``build``:
    build the studies preset first (a source tree, unless --no-build); otherwise the tool of
    ``bin_dirs``, an installed bundle's or an earlier build's is used as it is. An interrupt
    answers from the studies that finished, then raises process.Interrupted."""
    tool = None if build else find_tool(repo, bin_dirs)
    if tool is None and build:
        tool = build_tool(repo, target=TOOL_TARGET)
    if tool is None:
        print(f"tcbench run: no {TOOL} here and building is off: no host studies either.",
              file=sys.stderr)
        return
    closing = next_steps.lines(repo)
    try:
        path = run_studies(tool, out_dir)
    except process.Interrupted as stop:
        kept = getattr(stop, "kept", None)
        if kept is not None:
            result = write_answers(out_dir, [kept], closing)
            print_verdicts(result, out_dir)
            print(f"tcbench run: interrupted by {signal.Signals(stop.signum).name}: the host "
                  f"studies that finished are kept in {kept}, marked incomplete.",
                  file=sys.stderr, flush=True)
        raise
    result = write_answers(out_dir, [path], closing)
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
