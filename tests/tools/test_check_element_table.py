#!/usr/bin/env python3
"""check_element_table.py must fail on a format limit written outside the element table: copy
the product folders into a temporary folder, plant E4M3's max and FP16's unit roundoff in a
numerics source (and a marked coincidence, which must pass), and expect exit 1 naming both
lines; the unchanged copy must pass.

Usage: test_check_element_table.py CHECK_ELEMENT_TABLE_PY REPO_ROOT
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
        clean = run(check, root)
        if clean.returncode != 0:
            print("the unchanged copy fails:\n" + clean.stdout + clean.stderr)
            return 1
        victim = root / "common" / "numerics" / "src" / "gemm_time_model.cpp"
        victim.write_text("constexpr float kMax = 448.0f;  // E4M3\n"
                          "double u(double x) { return x * 0x1p-11; }\n"
                          "double w(double x) { return x * 0x1p-11; }  // not a format limit\n"
                          "/* 65504.0 in a comment */ int v = 65504;\n" + victim.read_text())
        planted = run(check, root)
        want = ("gemm_time_model.cpp:1: 448.0f is a limit",
                "gemm_time_model.cpp:2: 0x1p-11 is a limit",
                "gemm_time_model.cpp:4: 65504 is a limit")
        if planted.returncode != 1 or not all(w in planted.stdout for w in want) or \
                "gemm_time_model.cpp:3:" in planted.stdout:
            print("the planted limits were not reported as expected:\n" + planted.stdout +
                  planted.stderr)
            return 1
    print("check_element_table reports planted limits and passes the tree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
