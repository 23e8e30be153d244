"""The Python tools and their tests pass ``ruff check`` with the repository's pyproject.toml
([tool.ruff]: pycodestyle, Pyflakes, import order, 100 columns): scripts/tcbench test, and so CI,
fail on a finding. ``ruff check --fix`` repairs the import order; the rest is by hand. The C++
side's twin is the CTest format.clang_format (tests/tools/check_format.sh)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def ruff() -> str:
    """The ruff scripts/requirements-test.txt pins: beside this interpreter (the venv), else on
    PATH."""
    beside = Path(sys.executable).parent / "ruff"
    found = str(beside) if beside.is_file() else shutil.which("ruff")
    assert found, "ruff is not installed (it is pinned in scripts/requirements-test.txt)"
    return found


def test_ruff_finds_nothing():
    proc = subprocess.run([ruff(), "check", "--no-cache", "--output-format", "concise", "."],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]


def test_the_lint_settings_are_the_repositorys():
    """The check reads pyproject.toml (a ruff run elsewhere must judge by the same rules)."""
    proc = subprocess.run([ruff(), "check", "--show-settings", "scripts/tcbench_tools/cli.py"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert str(REPO / "pyproject.toml") in proc.stdout
    assert "line_length = 100" in proc.stdout
