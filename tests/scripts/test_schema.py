"""One schema, written by C++ and read by Python: the fixtures' context must carry exactly the
keys, in the formats, that the benchmarks write (tcbench_context prints them without a GPU).

The fixtures once said driver_version "13000" where the binaries write "13.0", and lacked the
peak_<p>_max_clock and peak_<p>_source keys; these tests fail on such drift.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO

# Keys Google Benchmark itself writes into "context".
GBENCH_KEYS = {"date", "host_name", "executable", "num_cpus", "mhz_per_cpu",
               "cpu_scaling_enabled", "caches", "load_avg", "library_build_type",
               "json_schema_version", "library_version"}
TCBENCH_FIXTURES = ["gpu_a.json", "gpu_b.json", "gpu_c.json", "gpu_a_single.json",
                    "gpu_a_aggregates.json"]


def context_tool() -> Path:
    build = os.environ.get("TCBENCH_BUILD_DIR")
    if build:
        tool = Path(build) / "bin" / "tcbench_context"
        if not tool.is_file():
            pytest.fail(f"TCBENCH_BUILD_DIR={build} has no bin/tcbench_context: the C++ side of "
                        "the schema was not built")
        return tool
    found = sorted(REPO.glob("build/*/bin/tcbench_context"))
    if not found:
        pytest.skip("no build with tcbench_context (scripts/tcbench test builds one)")
    return found[0]


def cpp_context() -> dict[str, str]:
    out = subprocess.run([str(context_tool()), "--cc", "8.0"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


@pytest.mark.parametrize("name", TCBENCH_FIXTURES)
def test_fixture_context_has_exactly_the_keys_cpp_writes(name):
    cpp = set(cpp_context())
    fixture = set(json.loads((FIXTURES / name).read_text())["context"]) - GBENCH_KEYS
    assert fixture - cpp == set(), f"{name} has keys the C++ never writes"
    assert cpp - fixture == set(), f"{name} lacks keys the C++ writes"


@pytest.mark.parametrize("name", TCBENCH_FIXTURES)
def test_fixture_context_values_have_the_cpp_formats(name):
    cpp = cpp_context()
    ctx = json.loads((FIXTURES / name).read_text())["context"]
    version = re.compile(r"^\d+\.\d+$")
    for key in ("driver_version", "cuda_runtime", "compute_capability"):
        assert version.match(cpp[key]), (key, cpp[key])
        assert version.match(ctx[key]), (name, key, ctx[key])
    for key, value in cpp.items():
        if key.endswith("_source") and key != "peak_source":
            assert value in ("datasheet", "max-clock", "none")
            assert ctx[key] in ("datasheet", "max-clock", "none"), (name, key, ctx[key])


def test_every_precision_is_stated_even_when_the_gpu_lacks_it():
    cpp = cpp_context()  # compute capability 8.0: no FP8
    assert cpp["peak_fp8"] == "0" and cpp["peak_fp8_source"] == "none"
    assert float(cpp["peak_fp16"]) > 0
