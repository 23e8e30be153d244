"""gpu_check's inputs: scripts/gpu_check.sh refuses what it cannot use in one sentence, exit 2,
before any step: an OUTDIR that cannot be created, and a bundle that is incomplete (no MANIFEST.txt,
no bin/, or a file MANIFEST.txt lists that is missing or of another size), a box whose glibc is
older than the binaries need, and a box without Python >= 3.11. Before, an uncreatable OUTDIR
printed dozens of bash errors, ran every step and exited 1, and a bundle without its MANIFEST.txt
was taken for a source tree and reported as "tests failed".

Below them, property-based tests of the same readers: the check's variables, --tier and a
bundle's MANIFEST.txt. The stand-in bundle and GPU box are gpu_check_standins.py's.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import properties as p
from gpu_check_standins import (
    DEVICE_OK,
    add_bench,
    add_studies,
    environment,
    list_in_manifest,
    make_bundle,
    write_exec,
)


def run_check(bundle: Path, out: Path, env: dict,
              timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([str(bundle / "scripts" / "gpu_check.sh"), str(out)], env=env,
                          capture_output=True, text=True, check=False, timeout=timeout)


def refused(proc: subprocess.CompletedProcess, words: str) -> str:
    """The one line a refusal prints (asserting exit 2, the words, and nothing else said)."""
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("gpu_check: ") and lines[0].endswith("; nothing was run.")
    assert words in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("where", ["under_a_file", "is_a_file", "in_proc"])
def test_an_outdir_that_cannot_be_created_is_one_sentence_and_exit_2(tmp_path: Path, where):
    bundle = make_bundle(tmp_path)
    add_bench(bundle, "bench_alpha")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    out = {"under_a_file": blocker / "check", "is_a_file": blocker,
           "in_proc": Path("/proc/tcbench-cannot-be-here/check")}[where]
    proc = run_check(bundle, out, environment(tmp_path), timeout=60)
    line = refused(proc, f"cannot create the output folder {out} (")
    assert "give an OUTDIR you can write" in line
    assert proc.stdout == ""  # no step ran, no summary
    assert not (tmp_path / "a-file").is_dir()


def test_a_bundle_without_its_manifest_is_incomplete_not_a_source_tree(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    add_bench(bundle, "bench_alpha")
    (bundle / "MANIFEST.txt").unlink()
    out = tmp_path / "check"
    proc = run_check(bundle, out, environment(tmp_path), timeout=60)
    line = refused(proc, f"bundle incomplete: {bundle} has no MANIFEST.txt")
    assert "tests failed" not in proc.stdout + proc.stderr
    assert "--bundle made" in line
    assert not out.exists()


def test_a_bundle_without_bin_is_incomplete(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    (bundle / "bin").rmdir()
    proc = run_check(bundle, tmp_path / "check", environment(tmp_path), timeout=60)
    refused(proc, f"bundle incomplete: {bundle} has no bin/ folder")


def test_a_bundle_missing_a_file_its_manifest_lists_is_incomplete(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    add_bench(bundle, "bench_alpha")
    add_bench(bundle, "bench_beta")
    list_in_manifest(bundle, "bin/bench_alpha", "bin/bench_beta",
                      sizes={"bin/bench_beta": 999999})
    (bundle / "bin" / "bench_alpha").unlink()  # a copy that stopped half-way
    proc = run_check(bundle, tmp_path / "check", environment(tmp_path), timeout=60)
    refused(proc, "bundle incomplete: 1 file(s) MANIFEST.txt lists are missing, 1 differ in "
                  "size and 0 in content (first: bin/bench_alpha is missing)")


def test_a_complete_listed_bundle_is_not_refused(tmp_path: Path):
    """The listing check accepts what it lists when every file is there at its size (the check
    then runs; its own verdict is test_gpu_check_steps.py's business)."""
    bundle = make_bundle(tmp_path)
    add_bench(bundle, "bench_alpha")
    list_in_manifest(bundle, "bin/bench_alpha", "scripts/gpu_check.sh")
    out = tmp_path / "check"
    proc = run_check(bundle, out, environment(tmp_path), timeout=120)
    assert "bundle incomplete" not in proc.stderr
    assert proc.returncode != 2, proc.stderr
    assert (out / "summary.txt").is_file()


def test_a_box_with_an_older_glibc_is_refused_in_one_sentence(tmp_path: Path):
    bundle = make_bundle(tmp_path, needs_glibc="99.0")
    write_exec(bundle / "bin" / "device_test_a_ok", DEVICE_OK)
    out = tmp_path / "check"
    proc = run_check(bundle, out, environment(tmp_path))
    line = refused(proc, "is older than the 99.0 the bundle's binaries need (built on glibc "
                         "2.36): make the bundle on a distribution with glibc")
    assert re.match(r"gpu_check: this box's glibc [0-9.]+ is older", line), line
    assert not out.exists()


def test_without_python_311_the_launcher_says_so(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    fake = tmp_path / "old-python"
    fake.mkdir()
    for name in ("python3", "python3.13", "python3.12", "python3.11"):
        write_exec(fake / name, "#!/bin/sh\nexit 1\n")  # a Python that is too old
    env = environment(tmp_path, TCBENCH_PYTHON=str(fake / "python3"),
                      PATH=f"{fake}{os.pathsep}/usr/bin:/bin")
    proc = run_check(bundle, tmp_path / "check", env)
    refused(proc, "no Python >= 3.11 here")


def test_a_bundle_file_of_the_right_size_but_other_content_is_refused(tmp_path: Path):
    """Sizes alone missed a corrupted copy: the check compares the sha256 MANIFEST.txt lists."""
    bundle = make_bundle(tmp_path)
    path = add_bench(bundle, "bench_alpha")
    list_in_manifest(bundle, "bin/bench_alpha")
    data = bytearray(path.read_bytes())
    data[-2] ^= 0x01  # one bit, same size
    path.write_bytes(bytes(data))
    proc = run_check(bundle, tmp_path / "check", environment(tmp_path))
    refused(proc, "0 differ in size and 1 in content (first: bin/bench_alpha has another sha256 "
                  "than MANIFEST.txt lists)")
    assert not (tmp_path / "check").exists()


def test_execute_bits_a_copy_dropped_are_restored_and_said(tmp_path: Path):
    """A transfer that drops modes left every binary NOT RUNNABLE; MANIFEST.txt records each
    file's mode, and the check gives back the execute bits it may, and says so."""
    bundle = make_bundle(tmp_path)
    add_bench(bundle, "bench_alpha")
    add_studies(bundle)
    write_exec(bundle / "bin" / "device_test_a_ok", DEVICE_OK)
    list_in_manifest(bundle, "bin/bench_alpha", "bin/device_test_a_ok", "bin/tcbench_studies")
    assert "0755 bin/bench_alpha" in (bundle / "MANIFEST.txt").read_text()
    for path in (bundle / "bin").iterdir():
        path.chmod(0o644)
    out = tmp_path / "check"
    proc = subprocess.run(["sh", str(bundle / "scripts" / "gpu_check.sh"), str(out)],
                          env=environment(tmp_path), capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "restored the execute bits of 3 file(s) the copy to this box dropped" in proc.stderr
    assert "note: restored the execute bits of 3 file(s)" in (out / "summary.txt").read_text()
    assert all(os.access(p, os.X_OK) for p in (bundle / "bin").iterdir())


def test_an_outdir_that_is_someone_elses_is_refused_and_left_as_it_was(tmp_path: Path):
    """gpu_check.sh OUTDIR deleted results/, logs/ and more of any OUTDIR (`gpu_check.sh .` in a
    checkout took every stored run); it now rewrites only a folder a check made (its marker)."""
    bundle = make_bundle(tmp_path)
    add_bench(bundle, "bench_alpha")
    out = tmp_path / "my-runs"
    (out / "results").mkdir(parents=True)
    (out / "results" / "precious.json").write_text("{}\n")
    (out / "summary.txt").write_text("mine\n")
    proc = run_check(bundle, out, environment(tmp_path))
    refused(proc, f"OUTDIR {out} exists, is not empty and is no folder a check made (it has no "
                  ".tcbench-gpu-check)")
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == [
        "results", "results/precious.json", "summary.txt"]
    assert (out / "summary.txt").read_text() == "mine\n"
    # An empty folder, and a folder an earlier check made, are the check's to write.
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_check(bundle, empty, environment(tmp_path)).returncode != 2
    again = run_check(bundle, empty, environment(tmp_path))
    assert again.returncode != 2, again.stderr
    assert (empty / ".tcbench-gpu-check").is_file()


@pytest.mark.parametrize("case", ["inside_outdir", "named_summary", "named_box", "a_folder",
                                  "under_a_file", "empty_variable", "empty_option"])
def test_an_archive_that_cannot_be_the_checks_own_file_is_refused_first(tmp_path: Path, case):
    """An archive that collides with another output, is a folder, cannot be written or is named
    by an empty TCBENCH_CHECK_ARCHIVE ended PASSED (the last left a temporary file beside the
    current folder): now one sentence and exit 2 before any step, and no file anywhere."""
    bundle = make_bundle(tmp_path)
    add_bench(bundle, "bench_alpha")
    out = tmp_path / "run" / "check"
    copy_back = tmp_path / "copy-back"
    copy_back.mkdir()
    (tmp_path / "a-file").write_text("x\n")
    archive, env = {
        "inside_outdir": (out / "gpu-check.tgz", {}),
        "named_summary": (copy_back / "summary.txt", {}),
        "named_box": (copy_back / "box.txt", {}),
        "a_folder": (copy_back, {}),
        "under_a_file": (tmp_path / "a-file" / "gpu-check.tgz", {}),
        "empty_variable": (None, {"TCBENCH_CHECK_ARCHIVE": ""}),
        "empty_option": ("", {}),
    }[case]
    args = [] if archive is None else ["--archive", str(archive)]
    before = set(tmp_path.parent.iterdir())
    proc = subprocess.run([str(bundle / "scripts" / "gpu_check.sh"), *args, str(out)],
                          env=environment(tmp_path, **env), capture_output=True, text=True,
                          timeout=60, check=False, cwd=copy_back)
    words = {"inside_outdir": "is inside OUTDIR", "named_summary": "would be overwritten by the "
             "summary.txt the check writes beside it", "named_box": "would be overwritten by the "
             "box.txt", "a_folder": "is a folder: give a file name in it",
             "under_a_file": "cannot be written", "empty_variable": "the archive's name is empty",
             "empty_option": "the archive's name is empty"}[case]
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and words in lines[0], proc.stderr
    assert not out.exists()
    assert list(copy_back.iterdir()) == []  # nothing written where $OUT would be
    assert set(tmp_path.parent.iterdir()) == before  # no temporary file beside the folders
    assert not list(tmp_path.rglob(".*.tmp*")) and not list(tmp_path.rglob(".*probe*"))


def test_box_txt_is_written_first_and_survives_a_refused_check(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    add_bench(bundle, "bench_alpha")
    (bundle / "bin").rename(bundle / "not-bin")  # an incomplete copy: refused
    copy_back = tmp_path / "copy-back"
    proc = subprocess.run([str(bundle / "scripts" / "gpu_check.sh"), "--archive",
                           str(copy_back / "gpu-check.tgz"), str(tmp_path / "check")],
                          env=environment(tmp_path), capture_output=True, text=True, timeout=60,
                          check=False)
    refused(proc, "has no bin/ folder")
    box = (copy_back / "box.txt").read_text()
    for words in ("# box.txt: the GPU box as gpu_check found it", "LD_LIBRARY_PATH (the box's):",
                  "LD_LIBRARY_PATH (the steps'):", "nvidia-smi --query-gpu:",
                  "NVIDIA H100 80GB HBM3", "torch ("):
        assert words in box, box
    assert sorted(p.name for p in copy_back.iterdir()) == ["box.txt"]


def shared_library(path: Path, soname: str, needs: Path | None = None) -> None:
    """A tiny ELF shared library (gcc), optionally needing another one."""
    source = path.with_suffix(".c")
    source.write_text("int tcbench_stand_in(void) { return 1; }\n")
    cmd = ["gcc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(path), str(source)]
    if needs is not None:  # --no-as-needed: NEEDED although nothing calls it
        cmd += ["-Wl,--no-as-needed", f"-L{needs.parent}", f"-l:{needs.name}"]
    subprocess.run(cmd, check=True, capture_output=True)


needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("ldd") is None,
                               reason="needs gcc and ldd")


@needs_gcc
def test_the_loading_check_uses_the_library_path_the_steps_use(tmp_path: Path):
    """A box whose CUDA libraries are reachable only through the folders the check adds
    ($CUDA_HOME/lib64 ...) was refused: ldd ran without them. It now loads; and without CUPTI
    only the tensor-counter binaries are lost, with a note, never the check."""
    cuda = tmp_path / "cuda"
    (cuda / "lib64").mkdir(parents=True)
    shared_library(cuda / "lib64" / "libstandin_cuda.so.13", "libstandin_cuda.so.13")  # only here
    bundle = make_bundle(tmp_path / "box")
    add_bench(bundle, "bench_alpha")
    add_studies(bundle)
    (bundle / "lib").mkdir()
    shared_library(bundle / "lib" / "libneeds_blas.so", "libneeds_blas.so",
                   needs=cuda / "lib64" / "libstandin_cuda.so.13")
    env = environment(tmp_path, CUDA_HOME=str(cuda))
    env.pop("LD_LIBRARY_PATH", None)
    out = tmp_path / "check"
    proc = run_check(bundle, out, env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "cannot load" not in proc.stdout + proc.stderr
    box = (out / "box.txt").read_text()
    assert f"LD_LIBRARY_PATH (the steps'): {cuda / 'lib64'}" in box
    # Without a CUPTI library (one of nvperf's names that nothing provides, since this machine
    # has the real libcupti): a note, and the check goes on.
    shared_library(tmp_path / "libnvperf_standin.so", "libnvperf_standin.so")
    shared_library(bundle / "lib" / "libneeds_cupti.so", "libneeds_cupti.so",
                   needs=tmp_path / "libnvperf_standin.so")
    (tmp_path / "libnvperf_standin.so").unlink()
    proc = run_check(bundle, out, env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    note = ("libnvperf_standin.so not found here: the tensor-counter binaries (libneeds_cupti.so) "
            "cannot load, so their steps fail and their counters are not read; every other step "
            "runs")
    assert note in proc.stdout and f"note: {note}" in (out / "summary.txt").read_text()


# ---------------------------------------------------------------------------------------------
# Property-based tests of gpu_check's readers of outside input: its
# variables (TCBENCH_CHECK_BUDGET_S, TCBENCH_STEP_TIMEOUT_S, TCBENCH_BUILD_TIMEOUT_S) and --tier,
# read before any step, and a bundle's MANIFEST.txt. The check itself is not run (a stand-in
# takes its place once the values are read). Before, a value of "²" passed str.isdigit() and
# int() raised: a traceback on the GPU box.

VALUES = st.one_of(p.hostile_text, st.sampled_from(
    ["450", "1", "0", "-5", "²", "٣", "1_000", " 60", "60s", "1e3", "9" * 30, "", "3600"]))


@settings(max_examples=p.examples(30))
@given(budget=VALUES, step=VALUES, build=VALUES, tier=st.sampled_from(["1", "2", "3", "4", "²"]))
@example(budget="²", step="180", build="3600", tier="1")
def test_the_variables_and_the_tier(tmp_path, monkeypatch, budget, step, build, tier):
    from tcbench_tools.gpu_check import cli, run

    monkeypatch.setattr(run.Check, "run", lambda self: 0)  # the values are what is tested
    for name, value in (("TCBENCH_CHECK_BUDGET_S", budget), ("TCBENCH_STEP_TIMEOUT_S", step),
                        ("TCBENCH_BUILD_TIMEOUT_S", build)):
        monkeypatch.delenv(name, raising=False)
        try:
            if "\x00" not in value and value.encode("utf-8", "surrogateescape"):
                monkeypatch.setenv(name, value)
        except UnicodeEncodeError:
            pass  # the environment cannot hold it
    o = p.run_cli_main(cli.main, [str(p.workdir(tmp_path)), "--tier", tier])
    p.check(o, {0, 2}, (budget, step, build, tier), prefix="gpu_check")


manifest_line = st.one_of(p.hostile_text, st.builds(
    "{} {} {}".format, st.sampled_from(["sha", "x"]),
    st.sampled_from(["10", "0", "²", "٣", "-1", "1" * 25, ""]) | p.hostile_text,
    st.sampled_from(["bin/bench_x", "../outside", "/etc/passwd", "bin", ""]) | p.hostile_text))


@settings(max_examples=p.examples(40))
@given(lines=st.lists(manifest_line, max_size=5))
@example(lines=["sha ² bin/bench_x"])
def test_a_bundles_manifest(tmp_path, lines):
    from tcbench_tools.gpu_check import bundle

    root = p.workdir(tmp_path)
    (root / "bin").mkdir()
    (root / "bin" / "bench_x").write_bytes(b"0123456789")
    text = "tcbench bundle\nfiles: 1\n" + "\n".join(lines) + "\n"
    (root / "MANIFEST.txt").write_bytes(text.encode("utf-8", "surrogatepass"))
    with p.time_limit():
        why = bundle.bundle_problem(root)
    assert why is None or isinstance(why, str)
