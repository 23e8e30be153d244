"""The two Python sets (issue 43 §4): scripts/requirements.txt holds what the tools import and no
test package; scripts/tcbench installs it for every command but `test`, which gets the test set
(requirements-test.txt, with PostgreSQL's driver); a mistyped command installs nothing; history
names the driver's install command when a PostgreSQL URL finds none."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

SCRIPTS = REPO / "scripts"
# Import name -> distribution name, where they differ.
DIST = {"PIL": "pillow", "yaml": "pyyaml", "dateutil": "python-dateutil"}
TEST_ONLY = {"pytest", "pytest-xdist", "hypothesis", "ruff", "selenium", "cmarkgfm", "ml-dtypes",
             "nvidia-cuda-cuobjdump", "nvidia-cuda-nvdisasm", "ruptures", "psycopg",
             "nvidia-ml-py", "coloraide"}


def pins(name: str) -> dict[str, str]:
    """A requirements file's pins, distribution names normalized, its -r files followed."""
    out: dict[str, str] = {}
    for line in (SCRIPTS / name).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            out.update(pins(line[3:]))
        elif line:
            dist, version = line.split("==")
            out[re.sub(r"[-_.]+", "-", dist.split("[")[0]).lower()] = version
    return out


def imported(folder: Path) -> set[str]:
    """The top-level modules the Python files under ``folder`` import that are not the standard
    library's or the project's own."""
    own = {p.stem for p in folder.rglob("*.py")} | {p.name for p in folder.rglob("*") if p.is_dir()}
    own.add(folder.name)
    found = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m not in own}


def test_the_tools_set_holds_what_the_tools_import_and_no_test_package():
    tools, everything = pins("requirements.txt"), pins("requirements-test.txt")
    needed = {DIST.get(m, m).lower() for m in imported(SCRIPTS / "tcbench_tools")}
    needed -= {"torch"}  # gpu_check's torch step imports the box's own PyTorch, never ours
    needed -= {"psycopg"}  # imported by SQLAlchemy only for a PostgreSQL URL
    assert needed <= set(tools), needed - set(tools)
    assert not TEST_ONLY & set(tools)
    assert set(tools) <= set(everything) and TEST_ONLY <= set(everything)
    assert set(pins("requirements-postgresql.txt")) == {"psycopg", "psycopg-binary"}
    # every pin agrees where two files name one package
    assert all(everything[d] == v for d, v in tools.items())


STUB_PYTHON = """#!/bin/sh
# A base interpreter whose venv logs its pip installs and runs the tools with the real Python.
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
  mkdir -p "$3/bin"
  cat > "$3/bin/python" <<EOF
#!/bin/sh
if [ "\\$1 \\$2" = "-m pip" ]; then echo "\\$*" >> "{log}"; exit 0; fi
exec "{python}" "\\$@"
EOF
  chmod +x "$3/bin/python"
  exit 0
fi
exec "{python}" "$@"
"""


@pytest.fixture
def checkout(tmp_path):
    repo = tmp_path / "checkout"
    shutil.copytree(SCRIPTS, repo / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "CMakePresets.json", repo / "CMakePresets.json")
    log = tmp_path / "pip.log"
    stub = tmp_path / "python3"
    stub.write_text(STUB_PYTHON.format(log=log, python=sys.executable))
    stub.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["TCBENCH_PYTHON"] = str(stub)

    def run(*argv: str) -> tuple[subprocess.CompletedProcess, list[str]]:
        before = log.read_text().splitlines() if log.exists() else []
        proc = subprocess.run([str(repo / "scripts" / "tcbench"), *argv], capture_output=True,
                              text=True, env=env, timeout=120)
        after = log.read_text().splitlines() if log.exists() else []
        return proc, [line.split("--requirement ")[1] for line in after[len(before):]
                      if "--requirement" in line]

    return repo, run


def test_a_tool_command_installs_the_tools_set_and_test_the_test_set(checkout, tmp_path):
    """Before: every command installed one set of 49 packages (498 MB, with selenium, pytest,
    hypothesis and ruff) into .venv."""
    repo, run = checkout
    proc, installed = run("rnu")  # a typo needs no environment: the parser suggests 'run'
    assert proc.returncode == 2 and "did you mean 'run'?" in proc.stderr and installed == []
    assert not (repo / ".venv").exists()
    proc, installed = run("report", str(tmp_path / "absent.json"))
    assert proc.returncode == 2 and "absent.json: no such file or folder" in proc.stderr
    assert installed == [str(repo / "scripts" / "requirements.txt")]
    assert "installing the tools' packages: numpy, scipy, matplotlib, SQLAlchemy" in proc.stderr
    assert run("compare", "a", "b")[1] == []  # current: nothing installed again
    proc, installed = run("test", "--preset", "none")
    assert "unknown preset 'none'" in proc.stderr
    assert installed == [str(repo / "scripts" / "requirements-test.txt")]
    assert run("test", "--preset", "none")[1] == [] and run("report", "x")[1] == []
    # A changed tools' set is installed again, for a tool command and for test.
    with open(repo / "scripts" / "requirements.txt", "a") as fh:
        fh.write("# changed\n")
    assert run("report", "x")[1] == [str(repo / "scripts" / "requirements.txt")]
    assert run("test", "--preset", "none")[1] == [str(repo / "scripts" / "requirements-test.txt")]


def test_test_from_an_installed_bundle_says_it_needs_a_source_checkout(checkout):
    repo, run = checkout
    (repo / "scripts" / "requirements-test.txt").unlink()
    proc, installed = run("test")
    assert proc.returncode == 2 and installed == []
    assert proc.stderr.strip().endswith("requirements-test.txt is missing: `test` runs from a "
                                        "source checkout, not from an installed bundle.")


def test_a_postgresql_url_without_its_driver_says_how_to_install_it(cli, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "psycopg" else real(name, *a))
    code, _, err = cli("history", "check", "--db", "postgresql://bob:secret@db.example/perf")
    assert code == 2 and "secret" not in err
    assert ("is a PostgreSQL database, and its driver (psycopg) is not installed in "
            f"{sys.prefix}: install it with `{sys.executable} -m pip install -r "
            f"{REPO / 'scripts' / 'requirements-postgresql.txt'}` (pinned there)") in err
