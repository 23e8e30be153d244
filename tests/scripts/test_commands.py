"""tcbench test and the build step of tcbench run: the commands they issue and their verdicts
(subprocess calls are recorded, nothing is compiled)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, cmake_calls, make_fake
from tcbench_tools import build
from tcbench_tools.errors import InputError


@pytest.fixture
def checkout(monkeypatch, tmp_path):
    """TCBENCH_REPO: a checkout holding only the repository's CMakePresets.json."""
    shutil.copy(REPO / "CMakePresets.json", tmp_path / "CMakePresets.json")
    monkeypatch.setenv("TCBENCH_REPO", str(tmp_path))
    return tmp_path


@pytest.fixture
def calls(monkeypatch, checkout):
    """Record every subprocess.call; exit codes come from ``codes`` by the command's first words."""
    record: list[list[str]] = []
    codes: dict[str, int] = {}

    def fake_call(cmd, cwd=None, env=None):
        record.append(list(cmd))
        key = " ".join(cmd[:2]) if cmd[0] != sys.executable else "pytest"
        return codes.get(key, 0)

    monkeypatch.setattr("subprocess.call", fake_call)
    return record, codes


def test_pytest_learns_the_build_dir_without_leaking_it(monkeypatch, checkout, tmp_path):
    seen = []
    monkeypatch.setattr("subprocess.call", lambda cmd, cwd=None, env=None: seen.append(env) or 0)
    monkeypatch.delenv("TCBENCH_BUILD_DIR", raising=False)
    assert build.run_tests("ci", None, python_only=False) == 0
    assert seen[-1]["TCBENCH_BUILD_DIR"] == str(tmp_path / "build" / "ci")  # the pytest step
    assert "TCBENCH_BUILD_DIR" not in os.environ  # later tests must not inherit it


def test_test_runs_configure_build_ctest_pytest(calls, capsys):
    record, _ = calls
    assert build.run_tests("dev", None, python_only=False) == 0
    configure, compile_cmd, ctest, pytest_cmd = record
    assert configure[:3] == ["cmake", "--preset", "dev"]
    assert f"-DPython3_EXECUTABLE={sys.executable}" in configure
    tool = build.find_cuobjdump()
    assert tool is not None and tool.name == "cuobjdump"  # from nvidia-cuda-cuobjdump
    assert f"-DTCBENCH_CUOBJDUMP={tool}" in configure
    assert compile_cmd[:4] == ["cmake", "--build", "--preset", "dev"]
    assert "--parallel" in compile_cmd
    jobs = os.cpu_count() or 1
    assert ctest == ["ctest", "--preset", "dev", "--parallel", str(jobs)]
    assert pytest_cmd == build.pytest_command(jobs)
    assert capsys.readouterr().out.strip().splitlines()[-1] == \
        "tcbench test (dev): PASSED (configure, build, ctest, pytest)."


def test_pytest_runs_in_at_most_four_workers_one_file_per_worker():
    plain = [sys.executable, "-m", "pytest", "tests/scripts"]
    assert build.pytest_command(1) == plain
    assert build.pytest_command(2) == plain + ["-n", "2", "--dist", "loadfile"]
    assert build.pytest_command(64) == plain + ["-n", "4", "--dist", "loadfile"]


def test_test_stops_the_cpp_side_at_the_first_failure_but_runs_pytest(calls, capsys):
    record, codes = calls
    codes["cmake --build"] = 1
    assert build.run_tests("ci", 2, python_only=False) == 1
    assert [c[0] for c in record] == ["cmake", "cmake", sys.executable]
    assert "--parallel" in record[1] and "2" in record[1]
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == ("tcbench test (ci): FAILED: build (exit 1); not run: ctest; "
                    "passed: configure, pytest.")


def test_test_fails_when_pytest_fails(calls, capsys):
    _, codes = calls
    codes["pytest"] = 1
    assert build.run_tests("release", None, python_only=True) == 1
    assert "FAILED: pytest (exit 1)" in capsys.readouterr().out


def test_run_builds_the_release_preset_then_runs_its_binaries(checkout, fake_cmake, cli,
                                                               tmp_path):
    make_fake(tmp_path / "build" / "release" / "bin", "bench_int8_gemm", topic="int8_gemm")
    code, out, err = cli("run", "--out", tmp_path / "o")
    assert code == 0, err
    record = cmake_calls(fake_cmake)
    assert record[0][:2] == ["--preset", "release"]
    assert record[1][:3] == ["--build", "--preset", "release"]
    assert "[1/1] bench_int8_gemm: done" in out


def test_run_stops_when_the_build_fails(checkout, fake_cmake, cli, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_CMAKE_BUILD", "2")
    code, _, err = cli("run", "--out", tmp_path / "o")
    assert code == 1
    assert "the build step failed (exit 2): nothing was run." in err


def test_run_no_build_uses_the_preset_bin_dir(calls, cli, tmp_path):
    record, _ = calls
    make_fake(tmp_path / "build" / "dev" / "bin", "bench_int8_gemm", topic="int8_gemm")
    code, out, _ = cli("run", "--no-build", "--preset", "dev", "--out", tmp_path / "o")
    assert code == 0
    assert record == []
    assert "bench_int8_gemm: done" in out


def test_presets_come_from_cmake_presets_json(calls, checkout):
    record, _ = calls
    with pytest.raises(InputError, match="unknown preset 'nightly': CMakePresets.json defines "
                                         "release, ci, dev"):
        build.run_tests("nightly", None, python_only=False)
    assert record == []
    doc = json.loads((checkout / "CMakePresets.json").read_text())
    doc["configurePresets"].append({"name": "nightly", "inherits": "base"})
    (checkout / "CMakePresets.json").write_text(json.dumps(doc))
    assert build.presets() == ["release", "ci", "dev", "studies", "nightly"]  # "base" is hidden
    assert build.run_tests("nightly", None, python_only=False) == 0
    assert record[0][:3] == ["cmake", "--preset", "nightly"]


def test_run_refuses_an_unknown_preset_before_building(calls, cli, tmp_path):
    record, _ = calls
    code, _, err = cli("run", "--preset", "nightly", "--out", tmp_path / "o")
    assert code == 2 and record == []
    assert err.strip() == ("tcbench: unknown preset 'nightly': CMakePresets.json defines "
                           "release, ci, dev, studies.")


def test_one_cuobjdump_discovery_for_pytest_cmake_and_check_sass(monkeypatch, tmp_path):
    tool = tmp_path / "cuda" / "bin" / "cuobjdump"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\n")
    monkeypatch.setenv("TCBENCH_CUOBJDUMP", str(tool))
    assert build.find_cuobjdump() == tool
    assert f"-DTCBENCH_CUOBJDUMP={tool}" in build.configure_args("dev")
    # What tests/sass/CMakeLists.txt runs when it was not given -DTCBENCH_CUOBJDUMP.
    out = subprocess.run([sys.executable, "-m", "tcbench_tools.build", "--find-cuobjdump"],
                         capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(REPO / "scripts"))).stdout
    assert out.strip() == str(tool)
    # Without the variable: NVIDIA's wheel in this environment (scripts/requirements-test.txt).
    monkeypatch.delenv("TCBENCH_CUOBJDUMP")
    found = build.find_cuobjdump()
    assert found is not None and found.name == "cuobjdump" and "site-packages" in str(found)
