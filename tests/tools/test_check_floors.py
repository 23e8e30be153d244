#!/usr/bin/env python3
"""check_floors.py must fail on an upward include: copy the tree's floors and the document into a
temporary folder, plant `#include "tcbench/gemm_spec.hpp"` (facts) in a numerics source, and expect
exit 1 naming the file; the unchanged copy must pass.

Usage: test_check_floors.py CHECK_FLOORS_PY REPO_ROOT
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
        for folder in ("common", "kernels", "benchmarks"):
            shutil.copytree(repo / folder, root / folder)
        (root / "docs").mkdir()
        shutil.copy(repo / "docs" / "architecture.md", root / "docs")
        clean = run(check, root)
        if clean.returncode != 0:
            print("the unchanged copy fails:\n" + clean.stdout + clean.stderr)
            return 1
        victim = root / "common" / "numerics" / "src" / "gemm_time_model.cpp"
        victim.write_text('#include "tcbench/gemm_spec.hpp"\n' + victim.read_text())
        planted = run(check, root)
        want = "gemm_time_model.cpp:1: floor 'numerics' includes tcbench/gemm_spec.hpp"
        if planted.returncode != 1 or want not in planted.stdout:
            print("the planted upward include was not reported:\n" + planted.stdout
                  + planted.stderr)
            return 1
    print("check_floors reports a planted upward include and passes the tree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
