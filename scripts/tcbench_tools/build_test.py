"""``tcbench test``: configure, build and test with a CMake preset, then run the Python tests.

Steps: ``cmake --preset P`` (passing this environment's Python and the cuobjdump that the
nvidia-cuda-cuobjdump wheel installed), ``cmake --build --preset P --parallel N``,
``ctest --preset P`` and ``pytest tests/scripts`` (the tools' own tests; the SASS and device
tests belong to CTest). pytest runs even when the C++ side failed, since it needs no build.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from tcbench_tools.errors import EXIT_FAIL, EXIT_OK, EXIT_USAGE

PRESETS = ("dev", "ci", "release")


def repo_root() -> Path:
    env = os.environ.get("TCBENCH_REPO")
    return Path(env) if env else Path(__file__).resolve().parents[2]


def cuobjdump() -> Path | None:
    """The cuobjdump of the nvidia-cuda-cuobjdump wheel in this environment, if installed."""
    for key in ("purelib", "platlib"):
        candidate = Path(sysconfig.get_paths()[key]) / "nvidia" / "cu13" / "bin" / "cuobjdump"
        if candidate.is_file():
            return candidate
    return None


def configure_args(preset: str) -> list[str]:
    args = ["cmake", "--preset", preset, f"-DPython3_EXECUTABLE={sys.executable}"]
    tool = cuobjdump()
    if tool is not None:
        args.append(f"-DTCBENCH_CUOBJDUMP={tool}")
    else:
        print("tcbench: warning: no cuobjdump in the Python environment (nvidia-cuda-cuobjdump); "
              "CMake will look for one itself.", file=sys.stderr)
    return args


def _step(title: str, cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> int:
    print(f"\n=== tcbench test: {title}: {' '.join(cmd)}", flush=True)
    begin = time.monotonic()
    try:
        code = subprocess.call(cmd, cwd=cwd, env=env)
    except FileNotFoundError:
        print(f"tcbench: {cmd[0]} is not installed or not on PATH.", file=sys.stderr)
        return 127
    print(f"=== {title}: {'ok' if code == 0 else f'FAILED (exit {code})'} "
          f"in {time.monotonic() - begin:.0f} s", flush=True)
    return code


def run_tests(preset: str, jobs: int | None, python_only: bool) -> int:
    root = repo_root()
    if preset not in PRESETS:
        print(f"tcbench: unknown preset {preset!r} (choose {', '.join(PRESETS)}).", file=sys.stderr)
        return EXIT_USAGE
    results: list[tuple[str, int]] = []
    if not python_only:
        jobs = jobs or os.cpu_count() or 1
        steps = [("configure", configure_args(preset)),
                 ("build", ["cmake", "--build", "--preset", preset, "--parallel", str(jobs)]),
                 ("ctest", ["ctest", "--preset", preset])]
        for title, cmd in steps:
            code = _step(title, cmd, root)
            results.append((title, code))
            if code != 0:
                break  # the later C++ steps need this one
    env = dict(os.environ)
    if not python_only:
        # tests/scripts/test_schema.py compares the fixtures with what this build's C++ writes.
        env["TCBENCH_BUILD_DIR"] = str(root / "build" / preset)
    results.append(("pytest", _step("pytest", [sys.executable, "-m", "pytest", "tests/scripts"],
                                     root, env)))
    failed = [f"{t} (exit {c})" for t, c in results if c != 0]
    skipped = []
    if not python_only and len(results) < 4:
        skipped = [t for t in ("configure", "build", "ctest") if t not in dict(results)]
    done = ", ".join(t for t, c in results if c == 0)
    if failed:
        extra = f"; not run: {', '.join(skipped)}" if skipped else ""
        print(f"\ntcbench test ({preset}): FAILED: {', '.join(failed)}{extra}; passed: {done or 'none'}.")
        return EXIT_FAIL
    print(f"\ntcbench test ({preset}): PASSED ({done}).")
    return EXIT_OK
