"""scripts/tcbench, the wrapper: which Python it runs, and what it says when it cannot."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys

from conftest import REPO, fixture

GOOD = str(fixture("gpu_a.json"))


def test_the_wrapper_names_an_interpreter_this_user_cannot_execute(tmp_path):
    """Before: "is the checkout read-only?" when the venv's python was not executable."""
    import hashlib

    repo = tmp_path / "checkout"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "tcbench", repo / "scripts" / "tcbench")
    shutil.copy(REPO / "scripts" / "requirements.txt", repo / "scripts" / "requirements.txt")
    venv_bin = repo / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text("#!/bin/sh\nexit 0\n")
    (venv_bin / "python").chmod(0o644)  # what another user's umask or a copy leaves
    digest = hashlib.sha256((repo / "scripts" / "requirements.txt").read_bytes()).hexdigest()
    (repo / ".venv" / ".tcbench-requirements.sha256").write_text(digest + "\n")
    proc = subprocess.run([str(repo / "scripts" / "tcbench"), "--version"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    assert "read-only" not in proc.stderr
    assert f"{venv_bin / 'python'} is not executable by" in proc.stderr


def test_the_wrapper_refuses_an_unknown_python_env_mode():
    proc = subprocess.run([str(REPO / "scripts" / "tcbench"), "--version"], capture_output=True,
                          text=True, timeout=60, env=dict(os.environ, TCBENCH_PYTHON_ENV="sytem"))
    assert proc.returncode == 2
    assert "TCBENCH_PYTHON_ENV='sytem' is neither venv nor system" in proc.stderr


def test_the_wrapper_runs_from_a_read_only_checkout_with_a_current_venv(tmp_path):
    """scripts/tcbench takes its lock only when the venv must change: with a current venv a
    checkout where .venv/.tcbench.lock cannot be opened for writing still runs compare."""
    repo = tmp_path / "checkout"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "tcbench", repo / "scripts" / "tcbench")
    shutil.copy(REPO / "scripts" / "requirements.txt", repo / "scripts" / "requirements.txt")
    (repo / "scripts" / "tcbench_tools").symlink_to(REPO / "scripts" / "tcbench_tools")
    venv_bin = repo / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (venv_bin / "python").chmod(0o755)
    digest = hashlib.sha256((repo / "scripts" / "requirements.txt").read_bytes()).hexdigest()
    (repo / ".venv" / ".tcbench-requirements.sha256").write_text(digest + "\n")
    # Opening the lock for writing fails whoever runs this (root included): it is a folder.
    (repo / ".venv" / ".tcbench.lock").mkdir()
    proc = subprocess.run([str(repo / "scripts" / "tcbench"), "compare", GOOD, GOOD],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "tcbench compare: PASS" in proc.stdout
