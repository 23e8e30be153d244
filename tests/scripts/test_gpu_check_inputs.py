"""scripts/gpu_check.sh refuses what it cannot work with in one sentence, exit 2, before any step
(issue 24): an OUTDIR that cannot be created, and a bundle that is incomplete (no MANIFEST.txt,
no bin/, or a file MANIFEST.txt lists that is missing or of another size), a box whose glibc is
older than the binaries need, and a box without Python >= 3.11. Before, an uncreatable OUTDIR
printed dozens of bash errors, ran every step and exited 1, and a bundle without its MANIFEST.txt
was taken for a source tree and reported as "tests failed".

The stand-in bundle and GPU box are gpu_check_standins.py's.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

import pytest

from gpu_check_standins import (
    DEVICE_OK,
    add_bench,
    environment,
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


def _list_in_manifest(bundle: Path, *paths: str, sizes: dict[str, int] | None = None) -> None:
    lines = []
    for path in paths:
        data = (bundle / path).read_bytes()
        size = (sizes or {}).get(path, len(data))
        lines.append(f"{hashlib.sha256(data).hexdigest()} {size} {path}\n")
    with open(bundle / "MANIFEST.txt", "a") as fh:
        fh.writelines(lines)


def test_a_bundle_missing_a_file_its_manifest_lists_is_incomplete(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    add_bench(bundle, "bench_alpha")
    add_bench(bundle, "bench_beta")
    _list_in_manifest(bundle, "bin/bench_alpha", "bin/bench_beta",
                      sizes={"bin/bench_beta": 999999})
    (bundle / "bin" / "bench_alpha").unlink()  # a copy that stopped half-way
    proc = run_check(bundle, tmp_path / "check", environment(tmp_path), timeout=60)
    refused(proc, "bundle incomplete: 1 file(s) MANIFEST.txt lists are missing and 1 differ in "
                  "size (first: bin/bench_alpha is missing)")


def test_a_complete_listed_bundle_is_not_refused(tmp_path: Path):
    """The listing check accepts what it lists when every file is there at its size (the check
    then runs; its own verdict is test_gpu_check_steps.py's business)."""
    bundle = make_bundle(tmp_path)
    add_bench(bundle, "bench_alpha")
    _list_in_manifest(bundle, "bin/bench_alpha", "scripts/gpu_check.sh")
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
