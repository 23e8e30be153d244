"""Property-based tests of the benchmark binaries' readers of outside input: the TCBENCH_*
variables (read once, by common/src/environment.cpp) and --benchmark_filter
(common/bench/name_filter.cpp), with generated values, on a built bench_alignment and
tcbench_context (subprocesses: few examples). Whatever the value: the binary lists its
benchmarks (exit 0), finds no GPU (77), or refuses the value in one line (exit 2); within a
time limit; and its output is printable ASCII (a value is echoed escaped). Before, a value's
escape sequences and newlines were echoed as they were.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import properties as p
from conftest import REPO

TOOLS = ("bench_alignment", "tcbench_context")
TIMEOUT_S = 30


def bin_dir() -> Path:
    """$TCBENCH_BUILD_DIR/bin (CI: it must hold them), else the newest build/*/bin that has
    both binaries."""
    build = os.environ.get("TCBENCH_BUILD_DIR")
    if build:
        folder = Path(build) / "bin"
        missing = [t for t in TOOLS if not (folder / t).is_file()]
        if missing:
            pytest.fail(f"TCBENCH_BUILD_DIR={build} lacks bin/{missing[0]}")
        return folder
    found = sorted((f.parent for f in REPO.glob("build/*/bin/bench_alignment")
                    if (f.parent / "tcbench_context").is_file()),
                   key=lambda d: (d / "bench_alignment").stat().st_mtime, reverse=True)
    if not found:
        pytest.skip("no build with bench_alignment and tcbench_context (scripts/tcbench test "
                    "builds them)")
    return found[0]


@pytest.fixture(scope="module")
def tools() -> Path:
    return bin_dir()


def environment_value(text: str) -> bool:
    return "\x00" not in text


value = st.one_of(p.hostile_text, st.sampled_from(
    ["33,100,1000", "33,0", "33,", ",", "-1", "3000000000", "1" * 40, "on", "off", "maybe",
     "0", "yes", "/nonexistent/libnvidia-ml.so", "/tmp", "/dev/null", "libnvidia-ml.so.1",
     "33,\x1b[2K", "1\n2"]), st.lists(st.integers(-3, 5000).map(str), max_size=8).map(",".join)
                  ).filter(environment_value)


def run(tool: Path, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("TCBENCH_")}
    full.update(env)
    encoded = {k: v.encode("utf-8", "surrogateescape") for k, v in full.items()}
    return subprocess.run([str(tool), *[a.encode("utf-8", "surrogateescape") for a in args]],
                          capture_output=True, timeout=TIMEOUT_S, env=encoded,
                          stdin=subprocess.DEVNULL)


def check(proc: subprocess.CompletedProcess, what: object) -> None:
    where = (what, proc.returncode, proc.stdout[-400:], proc.stderr[-400:])
    assert proc.returncode in (0, 2, 77), where
    for stream in (proc.stdout, proc.stderr):
        assert all(b == 0x0A or 0x20 <= b < 0x7F for b in stream), where
    if proc.returncode in (2, 77):
        lines = proc.stderr.decode().strip().splitlines()
        assert len(lines) == 1 and lines[0].endswith((".", ")")), where


def safe_text(s: str) -> bool:
    try:
        s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return False
    return "\x00" not in s


@settings(max_examples=p.examples(10))
@given(alignment=value, counters=value, nvml=value, which=st.sampled_from(TOOLS),
       listing=st.booleans())
def test_tcbench_variables(tools, alignment, counters, nvml, which, listing):
    env = {k: v for k, v in (("TCBENCH_ALIGNMENT_N", alignment), ("TCBENCH_COUNTERS", counters),
                             ("TCBENCH_NVML_LIBRARY", nvml)) if safe_text(v)}
    args = ["--benchmark_list_tests"] if listing and which == "bench_alignment" else []
    check(run(tools / which, args, env), env)


filter_text = st.one_of(
    p.hostile_text,
    st.sampled_from(["alignment/", "^alignment/cublaslt/fp16/m:4096/n:.*/layout:nn", "(a+)+$",
                     "(", "[", "a{1000}", "(a{1000}){1000}", "x" * 5000, "[[:alpha:]-z]",
                     "\\", "^$", ".*", "cublas(lt)?/", "(((((((((((a)))))))))))", "a|b|"]),
    st.lists(st.sampled_from(list("()[]{}*+?|^$.\\,0123456789az:/-")), max_size=16).map(
        "".join)).filter(safe_text)


@settings(max_examples=p.examples(15))
@given(pattern=filter_text, listing=st.booleans())
def test_benchmark_filter(tools, pattern, listing):
    args = [f"--benchmark_filter={pattern}"] + (["--benchmark_list_tests"] if listing else [])
    check(run(tools / "bench_alignment", args, {}), pattern)
