#!/usr/bin/env python3
"""check_py_floors.py must fail on an upward import and on a module in no row: copy the tools and
the document into a temporary folder, plant `from tcbench_tools import report` (the report floor)
in schema.py (the bottom floor) and a new module no row names, and expect exit 1 naming both; the
unchanged copy must pass.

Usage: test_check_py_floors.py CHECK_PY_FLOORS_PY REPO_ROOT
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def run(check: str, root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, check, str(root)], capture_output=True, text=True)


def main() -> int:
    check, repo = sys.argv[1], Path(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        tools = root / "scripts" / "tcbench_tools"
        shutil.copytree(repo / "scripts" / "tcbench_tools", tools,
                        ignore=shutil.ignore_patterns("__pycache__"))
        (root / "docs").mkdir()
        shutil.copy(repo / "docs" / "architecture.md", root / "docs")
        clean = run(check, root)
        if clean.returncode != 0:
            print("the unchanged copy fails:\n" + clean.stdout + clean.stderr)
            return 1
        victim = tools / "schema.py"
        victim.write_text("from tcbench_tools import report\n" + victim.read_text())
        (tools / "stray.py").write_text('"""A module no row names."""\n')
        planted = run(check, root)
        want = ("schema.py:1: `schema` (floor 'text and vocabulary') imports `report` of the "
                "floor above, 'the report'", "module `stray` is in no row")
        if planted.returncode != 1 or not all(w in planted.stdout for w in want):
            print("the planted problems were not reported:\n" + planted.stdout + planted.stderr)
            return 1
    print("check_py_floors reports a planted upward import and a module in no row, and passes "
          "the tools")
    return 0


if __name__ == "__main__":
    sys.exit(main())
