"""``tcbench test``'s steps and what ``tcbench run`` and ``fleet submit`` build with: the CMake
presets, the configure command line, and the one discovery of cuobjdump.

``tcbench test`` runs ``cmake --preset P`` (passing this environment's Python and the cuobjdump
``find_cuobjdump`` finds), ``cmake --build --preset P --parallel N``, ``ctest --preset P
--parallel N`` and ``pytest tests/scripts`` (the tools' own tests; the SASS and device tests
belong to CTest) in up to four pytest-xdist workers. pytest runs even when the C++ side failed,
since it needs no build.

``python -m tcbench_tools.build --find-cuobjdump`` prints the path (or nothing): tests/sass's
CMake uses it when it was not given ``-DTCBENCH_CUOBJDUMP``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from tcbench_tools.errors import EXIT_FAIL, EXIT_OK, InputError

PRESETS_FILE = "CMakePresets.json"


def repo_root() -> Path:
    env = os.environ.get("TCBENCH_REPO")
    return Path(env) if env else Path(__file__).resolve().parents[2]


def presets(root: Path | None = None) -> list[str]:
    """The configure presets CMakePresets.json defines (hidden ones excepted), in file order;
    empty when there is no such file (an installed bundle)."""
    path = (root or repo_root()) / PRESETS_FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        return [p["name"] for p in doc.get("configurePresets", [])
                if isinstance(p, dict) and isinstance(p.get("name"), str) and not p.get("hidden")]
    except FileNotFoundError:
        return []
    except (OSError, ValueError, AttributeError) as exc:
        raise InputError(f"cannot read the CMake presets in {path} ({exc}).") from None


def check_preset(preset: str, root: Path | None = None) -> None:
    known = presets(root)
    if not known:
        raise InputError(f"there is no {PRESETS_FILE} in {root or repo_root()}: building needs a "
                         "source checkout.")
    if preset not in known:
        raise InputError(f"unknown preset {preset!r}: {PRESETS_FILE} defines "
                         f"{', '.join(known)}.")


def _wheel_tools(site_packages: Path) -> list[Path]:
    """cuobjdump from NVIDIA's PyPI wheel (nvidia-cuda-cuobjdump): <site-packages>/nvidia/
    cu<major>/bin/cuobjdump; the newest CUDA major first."""
    found = [p for p in site_packages.glob("nvidia/cu*/bin/cuobjdump") if p.is_file()]
    return sorted(found, key=lambda p: p.parent.parent.name, reverse=True)


def find_cuobjdump() -> Path | None:
    """The CUDA disassembler for the SASS tests, the first of: $TCBENCH_CUOBJDUMP; the wheel in
    this interpreter's environment; the wheel in the checkout's .venv; the CUDA toolkit of
    $CUDACXX, $CUDA_HOME, $CUDA_PATH, nvcc on PATH or /usr/local/cuda; cuobjdump on PATH."""
    given = os.environ.get("TCBENCH_CUOBJDUMP")
    if given and Path(given).is_file():
        return Path(given)
    candidates: list[Path] = []
    for key in ("purelib", "platlib"):
        candidates += _wheel_tools(Path(sysconfig.get_paths()[key]))
    for site in sorted((repo_root() / ".venv").glob("lib/python3*/site-packages")):
        candidates += _wheel_tools(site)
    toolkit_bins = [Path(os.environ["CUDACXX"]).parent] if os.environ.get("CUDACXX") else []
    toolkit_bins += [Path(os.environ[v]) / "bin" for v in ("CUDA_HOME", "CUDA_PATH")
                     if os.environ.get(v)]
    nvcc = shutil.which("nvcc")
    toolkit_bins += [Path(nvcc).parent] if nvcc else []
    toolkit_bins.append(Path("/usr/local/cuda/bin"))
    candidates += [b / "cuobjdump" for b in toolkit_bins]
    on_path = shutil.which("cuobjdump")
    candidates += [Path(on_path)] if on_path else []
    return next((c for c in candidates if c.is_file()), None)


def configure_args(preset: str) -> list[str]:
    args = ["cmake", "--preset", preset, f"-DPython3_EXECUTABLE={sys.executable}"]
    tool = find_cuobjdump()
    if tool is not None:
        args.append(f"-DTCBENCH_CUOBJDUMP={tool}")
    else:
        print("tcbench: warning: no cuobjdump (nvidia-cuda-cuobjdump in the Python environment, "
              "or the CUDA toolkit's): the SASS tests will be skipped.", file=sys.stderr)
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


def pytest_command(jobs: int) -> list[str]:
    """pytest of tests/scripts, in min(jobs, 4) pytest-xdist workers when jobs > 1 (docs/ci.md
    gives the times). ``--dist loadfile`` keeps each file in one worker, so a module's fixture
    (the gpu_check bundle's Release build, a report rendered for its browser checks) runs once;
    a session's PostgreSQL server starts once per worker that needs one. More than four workers
    would mostly start more servers, not finish sooner: the longest file alone takes minutes."""
    cmd = [sys.executable, "-m", "pytest", "tests/scripts"]
    workers = min(jobs, 4)
    return cmd + ["-n", str(workers), "--dist", "loadfile"] if workers > 1 else cmd


def run_tests(preset: str, jobs: int | None, python_only: bool) -> int:
    root = repo_root()
    check_preset(preset, root)
    results: list[tuple[str, int]] = []
    jobs = jobs or os.cpu_count() or 1
    if not python_only:
        steps = [("configure", configure_args(preset)),
                 ("build", ["cmake", "--build", "--preset", preset, "--parallel", str(jobs)]),
                 ("ctest", ["ctest", "--preset", preset, "--parallel", str(jobs)])]
        for title, cmd in steps:
            code = _step(title, cmd, root)
            results.append((title, code))
            if code != 0:
                break  # the later C++ steps need this one
    env = dict(os.environ)
    if not python_only:
        # tests/scripts/test_schema.py compares the fixtures with what this build's C++ writes.
        env["TCBENCH_BUILD_DIR"] = str(root / "build" / preset)
    results.append(("pytest", _step("pytest", pytest_command(jobs), root, env)))
    failed = [f"{t} (exit {c})" for t, c in results if c != 0]
    skipped = []
    if not python_only and len(results) < 4:
        skipped = [t for t in ("configure", "build", "ctest") if t not in dict(results)]
    done = ", ".join(t for t, c in results if c == 0)
    if failed:
        extra = f"; not run: {', '.join(skipped)}" if skipped else ""
        print(f"\ntcbench test ({preset}): FAILED: {', '.join(failed)}{extra}; passed: "
              f"{done or 'none'}.")
        return EXIT_FAIL
    print(f"\ntcbench test ({preset}): PASSED ({done}).")
    return EXIT_OK


if __name__ == "__main__":
    if sys.argv[1:] != ["--find-cuobjdump"]:
        sys.exit("usage: python -m tcbench_tools.build --find-cuobjdump")
    print(find_cuobjdump() or "")
