"""tcbench run on a machine without a GPU (issue 33 §4, the review's D1, D8, D10): it builds the
studies preset every time (incrementally), as tcbench model does; an interrupt keeps the studies
that finished and answers from them; the GPU-only options say they do nothing; the last lines say
how to get the GPU halves and how long the check takes by its plan; the first --help waits for no
pip install. Stand-in tools and cmake (conftest.py); the real tcbench_studies where it is built."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import answers_data as ad
from conftest import REPO, cmake_calls
from tcbench_tools import next_steps, schema

HOST_DOC = ad.doc(ad.HOST_CONTEXT, ad.int8_study() + ad.loss_host() + ad.alignment_model()
                  + ad.fp8_study())


@pytest.fixture
def no_gpu(monkeypatch, tmp_path):
    """The driver's answer on this machine: no libcuda (the probe is on, as a user's run)."""
    monkeypatch.delenv("TCBENCH_GPU_PROBE")
    monkeypatch.setenv("TCBENCH_LIBCUDA", str(tmp_path / "no-libcuda.so.1"))


def stand_in_studies(path: Path, doc: dict = HOST_DOC, sleep: float = 0.0) -> Path:
    """A tcbench_studies that writes ``doc`` to --out (then sleeps ``sleep`` s, as a long study
    would after its first one finished)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\nimport json, sys, time\n"
                    f"json.dump({doc!r}, open(sys.argv[sys.argv.index('--out') + 1], 'w'))\n"
                    "print('[1/4] int8: 10 results in 1.0 s', file=sys.stderr, flush=True)\n"
                    f"time.sleep({sleep})\n")
    path.chmod(0o755)
    return path


def checkout(tmp_path: Path, configured: bool = True) -> Path:
    """A source tree that has built the studies preset once: its tool is there (a stand-in)."""
    repo = tmp_path / "checkout"
    repo.mkdir()
    (repo / "CMakeLists.txt").write_text("# stand-in\n")
    shutil.copy(REPO / "CMakePresets.json", repo / "CMakePresets.json")
    build = repo / "build" / "studies"
    stand_in_studies(build / "bin" / "tcbench_studies")
    model = build / "bin" / "tcbench_model"
    model.write_text(f"#!{sys.executable}\nimport sys\nprint('gpu,precision,peak_tflops')\n")
    model.chmod(0o755)
    if configured:
        (build / "CMakeCache.txt").write_text("")
        (build / "build.ninja").write_text("")
    return repo


def test_run_builds_the_studies_preset_every_time(cli, tmp_path, monkeypatch, no_gpu,
                                                  fake_cmake):
    """D1: before, an existing tcbench_studies ran as it was, however old its sources were."""
    repo = checkout(tmp_path)
    monkeypatch.setenv("TCBENCH_REPO", str(repo))
    code, out, err = cli("run", "--out", tmp_path / "run")
    assert code == 77, err
    calls = cmake_calls(fake_cmake)
    assert [c[:3] for c in calls] == [["--build", "--preset", "studies"]]  # configured already
    assert calls[0][-2:] == ["--target", "tcbench_studies_tool"]  # not tcbench_model: run's tool
    assert "build (studies preset: the host studies only, incremental)" in out
    assert (tmp_path / "run" / "studies.json").is_file()
    # A tree that was never configured is configured first.
    (tmp_path / "fresh").mkdir()
    fresh = checkout(tmp_path / "fresh", configured=False)
    monkeypatch.setenv("TCBENCH_REPO", str(fresh))
    fake_cmake.unlink()
    assert cli("run", "--out", tmp_path / "run2")[0] == 77
    assert [c[:2] for c in cmake_calls(fake_cmake)] == [["--preset", "studies"],
                                                       ["--build", "--preset"]]


def test_model_builds_the_studies_preset_too(cli, tmp_path, monkeypatch, fake_cmake):
    """The lead's note on D1: tcbench model ran a stale tcbench_model the same way."""
    from tcbench_tools import model_cmd

    repo = checkout(tmp_path)
    monkeypatch.setenv("TCBENCH_REPO", str(repo))
    tool = model_cmd.find_or_build_tool()
    assert tool == repo / "build" / "studies" / "bin" / "tcbench_model"
    assert [c[:3] for c in cmake_calls(fake_cmake)] == [["--build", "--preset", "studies"]]


def test_no_build_uses_the_tool_as_it_is(cli, tmp_path, monkeypatch, no_gpu, fake_cmake):
    repo = checkout(tmp_path)
    monkeypatch.setenv("TCBENCH_REPO", str(repo))
    assert cli("run", "--no-build", "--out", tmp_path / "run")[0] == 77
    assert cmake_calls(fake_cmake) == []


def test_gpu_only_options_say_they_do_nothing_here(cli, tmp_path, no_gpu):
    """Before: --bench fp8 --quick were ignored in silence."""
    bin_dir = tmp_path / "bin"
    stand_in_studies(bin_dir / "tcbench_studies")
    code, out, _ = cli("run", "--bin-dir", bin_dir, "--out", tmp_path / "run", "--quick",
                       "--bench", "fp8", "--", "--benchmark_min_time=1")
    assert code == 77
    line = out.splitlines()[1]
    assert line.startswith("tcbench run: without a GPU --quick and --bench fp8 and the arguments "
                           "after '--' (--benchmark_min_time=1) do nothing")
    plain = cli("run", "--bin-dir", bin_dir, "--out", tmp_path / "run2")[1]
    assert "do nothing" not in plain


def test_the_last_lines_say_how_to_get_the_gpu_halves_and_how_long(cli, tmp_path, no_gpu):
    """The review: nothing named the next step, nor how long a GPU run takes. The time is the
    check's own plan (gpu_check's cost model), never a number written in the tools."""
    from tcbench_tools.gpu_check import cost, plan

    bin_dir = tmp_path / "bin"
    stand_in_studies(bin_dir / "tcbench_studies")
    code, out, _ = cli("run", "--bin-dir", bin_dir, "--out", tmp_path / "run")
    assert code == 77
    tail = out.rstrip().splitlines()[-8:]
    assert tail[0] == "To measure the GPU halves (docs/gpu-check.md):"
    assert "on your own GPU box:  scripts/gpu_check.sh " in tail[1]
    assert "scripts/gpu_check.sh --bundle build/gpu-check-bundle --arch 90a" in tail[2]
    # The whole device call (D3: its --archive and timeout were left out), the preparation
    # beside the GPU seconds, and the plan's figures.
    assert tail[4:7] == [f"    {line}" for line in next_steps.device_command()]
    lists = json.loads((REPO / next_steps.QUICK_LISTS).read_text())
    made = plan.make_plan(tmp_path / "none", cost.Model(), device_tests=True, recorded=lists)
    assert "the bundle's first build about 14 minutes on 2 cores here" in tail[7]
    assert f"tier 1 (the five answers) {made.predicted(made.tier(1)):.0f} s of GPU time" in tail[7]
    assert f"the whole check {made.predicted():.0f} s" in tail[7]
    assert "by the check's plan (its cost model for an NVIDIA H200: a prediction" in tail[7]
    md = (tmp_path / "run" / "answers.md").read_text()
    assert "## The GPU half" in md and "scripts/gpu_check.sh" in md.split("## The GPU half")[1]
    assert "The GPU half" in (tmp_path / "run" / "answers.html").read_text()


def test_the_hint_holds_without_the_check_or_its_lists(monkeypatch, tmp_path):
    monkeypatch.setattr(next_steps, "QUICK_LISTS", Path("no") / "such.json")
    got = next_steps.lines(tmp_path)  # no build, no lists: where the plan is printed instead
    assert got[-1].startswith("  how long: the bundle's first build takes minutes here; "
                              "`scripts/gpu_check.sh --plan` prints the check's plan")


def wait_for(path: Path, seconds: float = 60.0) -> None:
    end = time.monotonic() + seconds
    while not path.is_file():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.1)


def test_ctrl_c_during_the_host_studies_keeps_what_finished(tmp_path, no_gpu):
    """D8: before, an interrupt left an empty folder although the int8 study had finished."""
    bin_dir = tmp_path / "bin"
    partial = dict(HOST_DOC, context={**HOST_DOC["context"],
                                      schema.STUDIES_DONE: "int8",
                                      schema.STUDIES_PLANNED: "int8,loss_scaling,alignment,fp8"})
    partial["benchmarks"] = [r for r in HOST_DOC["benchmarks"]
                             if r["name"].startswith("int8_study/")]
    stand_in_studies(bin_dir / "tcbench_studies", partial, sleep=60)
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(REPO / "scripts"))
    proc = subprocess.Popen([sys.executable, "-m", "tcbench_tools", "run", "--bin-dir",
                             str(bin_dir), "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        wait_for(out / "studies.json")
        time.sleep(1.0)  # the run is waiting for the stand-in now
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    doc = json.loads((out / "studies.json").read_text())
    assert doc["context"][schema.RUN_INCOMPLETE] == (
        "interrupted by SIGINT: 1 of 4 host studies finished (int8); not run: loss_scaling, "
        "alignment, fp8")
    assert {r["name"].split("/")[0] for r in doc["benchmarks"]} == {"int8_study"}
    md = (out / "answers.md").read_text()
    assert "### without a GPU (synthetic data), host studies (CPU): holds with a caveat" in md
    assert ("Q1 INT8 inference:\n  without a GPU (synthetic data), host studies (CPU): holds"
            in stdout)
    assert "the host studies that finished are kept in" in stderr
    # ...and every answer file says the run stopped early, and why (issue 43 §2).
    said = ("INCOMPLETE: the answers without a GPU rest on a run that stopped early (interrupted "
            "by SIGINT: 1 of 4 host studies finished (int8); not run: loss_scaling, alignment, "
            "fp8). A \"not measured\" there may mean only that its part never ran.")
    assert said in stdout and said in md
    assert 'id="incomplete-banner"' in (out / "answers.html").read_text()
    proc = subprocess.run([sys.executable, "-m", "tcbench_tools", "answers", str(out), "--json"],
                          capture_output=True, text=True, env=env, timeout=60)
    got = json.loads(proc.stdout)
    assert got["incomplete"] is True
    assert {a["incomplete"] for a in got["questions"] if a["scope"] == "host"} == {
        doc["context"][schema.RUN_INCOMPLETE]}


def real_studies_tool() -> Path | None:
    found = sorted(REPO.glob("build/*/bin/tcbench_studies"), key=lambda p: p.stat().st_mtime,
                   reverse=True)
    return found[0] if found else None


def test_the_real_tool_writes_its_file_after_every_study(tmp_path):
    """tcbench_studies rewrites --out as each study finishes, so a Ctrl-C after the first leaves
    it (before: the file was written only at the end). The studies run at once: alignment (a
    few milliseconds) finishes long before loss_scaling (seconds)."""
    tool = real_studies_tool()
    if tool is None:
        pytest.skip("no build with tcbench_studies (scripts/tcbench test builds one)")
    out = tmp_path / "studies.json"
    # SIGINT's default action, as at a terminal: a shell that starts a job with `&` hands it
    # SIGINT ignored, and the tool (rightly) keeps a disposition it inherits.
    proc = subprocess.Popen([str(tool), "--out", str(out), "--study", "alignment", "--study",
                             "loss_scaling"], stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        for line in proc.stderr:
            if line.startswith("[2/2] alignment:") and "results in" in line:
                break
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        proc.kill()
    doc = json.loads(out.read_text())
    assert doc["context"][schema.STUDIES_DONE] == "alignment"
    assert doc["context"][schema.STUDIES_PLANNED] == "loss_scaling,alignment"
    assert {r["name"].split("/")[0] for r in doc["benchmarks"]} == {"alignment_model"}
    assert not (tmp_path / "studies.json.partial").exists()


def test_the_first_help_waits_for_no_pip_install(tmp_path):
    """D10: the first `tcbench --help` created .venv and pip-installed about 40 packages (17-30 s)
    before it printed anything; the help needs the standard library only."""
    checkout_dir = tmp_path / "checkout"
    shutil.copytree(REPO / "scripts", checkout_dir / "scripts",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["TCBENCH_PYTHON"] = sys.executable
    for argv in (["--help"], ["answers", "--help"], ["--version"], []):
        proc = subprocess.run([str(checkout_dir / "scripts" / "tcbench"), *argv],
                              capture_output=True, text=True, env=env, timeout=60)
        assert proc.returncode in (0, 2), proc.stderr  # no command: argparse's usage, exit 2
        assert "usage: tcbench" in proc.stdout + proc.stderr or "tcbench " in proc.stdout
        assert not (checkout_dir / ".venv").exists(), argv


def test_a_rerun_reuses_the_studies_of_the_same_tool(cli, tmp_path, monkeypatch, no_gpu):
    """Before: every run computed the studies again (7.5 s of a 8.4 s rerun), although neither
    tcbench_studies nor its inputs (it has none) had changed."""
    whole = dict(HOST_DOC, context={**HOST_DOC["context"], schema.STUDIES_DONE: "int8,fp8",
                                    schema.STUDIES_PLANNED: "int8,fp8"})
    tool = stand_in_studies(tmp_path / "bin" / "tcbench_studies", whole)
    with open(tool, "a") as fh:  # count the tool's runs
        fh.write(f"open({str(tmp_path / 'ran')!r}, 'a').write('x')\n")
    results = tmp_path / "results"

    def run(name: str) -> str:
        code, out, err = cli("run", "--bin-dir", tmp_path / "bin", "--out", results / name)
        assert code == 77, err
        assert "Q1 INT8 inference:" in out
        return out

    out = run("first")
    first = json.loads((results / "first" / "studies.json").read_text())
    sha = hashlib.sha256(tool.read_bytes()).hexdigest()
    assert first["context"][schema.STUDIES_TOOL_SHA256] == sha and "reused" not in out
    out = run("second")
    assert (f"tcbench run: host studies reused from {results / 'first' / 'studies.json'}: "
            f"tcbench_studies is unchanged (sha256 {sha[:12]}) and reads no other input.") in out
    assert (tmp_path / "ran").read_text() == "x"  # the tool ran once
    assert json.loads((results / "second" / "studies.json").read_text()) == first
    # A changed tool computes them again; a file of an interrupted run is never reused.
    with open(tool, "a") as fh:
        fh.write("# rebuilt\n")
    assert "reused" not in run("third") and (tmp_path / "ran").read_text() == "xx"
    for name in ("first", "second", "third"):
        doc = json.loads((results / name / "studies.json").read_text())
        doc["context"][schema.RUN_INCOMPLETE] = "interrupted by SIGINT"
        (results / name / "studies.json").write_text(json.dumps(doc))
    assert "reused" not in run("fourth") and (tmp_path / "ran").read_text() == "xxx"
