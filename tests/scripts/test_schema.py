"""One schema, written by C++ and read by Python: the fixtures' context must carry exactly the
keys, in the formats, that the benchmarks write, and scripts/tcbench_tools/schema.py must name
exactly the counters, precisions and name keys the C++ defines (tcbench_context prints both
without a GPU).

The fixtures once said driver_version "13000" where the binaries write "13.0", and lacked the
peak_<p>_max_clock and peak_<p>_source keys; these tests fail on such drift.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import tokenize
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO
from tcbench_tools import names, schema, synthetic

# Keys Google Benchmark itself writes into "context".
GBENCH_KEYS = {"date", "host_name", "executable", "num_cpus", "mhz_per_cpu",
               "cpu_scaling_enabled", "caches", "load_avg", "library_build_type",
               "json_schema_version", "library_version"}
# Keys only fixtures carry: the C++ never writes them (checked below), so a real run cannot.
FIXTURE_ONLY_KEYS = {synthetic.KEY}
TCBENCH_FIXTURES = ["gpu_a.json", "gpu_b.json", "gpu_c.json", "gpu_a_single.json",
                    "gpu_a_aggregates.json", "loss_scaling.json", "fp8_gpu_h.json",
                    "alignment_quick.json", "int8_gemm_a.json", "int8_gemm_b.json"]


def context_tool() -> Path:
    build = os.environ.get("TCBENCH_BUILD_DIR")
    if build:
        tool = Path(build) / "bin" / "tcbench_context"
        if not tool.is_file():
            pytest.fail(f"TCBENCH_BUILD_DIR={build} has no bin/tcbench_context: the C++ side of "
                        "the schema was not built")
        return tool
    # The most recently built one: a stale build dir must not speak for the current C++.
    found = sorted(REPO.glob("build/*/bin/tcbench_context"), key=lambda p: p.stat().st_mtime,
                   reverse=True)
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
    assert fixture - cpp - FIXTURE_ONLY_KEYS == set(), f"{name} has keys the C++ never writes"
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


def every_fixture() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*.json"))


@pytest.mark.parametrize("path", every_fixture(), ids=lambda p: p.name)
def test_every_fixture_says_it_is_synthetic(path):
    """Fixture numbers are made up: each file says so, and a report that reads it marks it."""
    context = json.loads(path.read_text())["context"]
    assert context.get(synthetic.KEY) == "true", f"{path.name} lacks {synthetic.KEY}: \"true\""


def test_a_real_run_cannot_carry_the_synthetic_key():
    """The C++ context has no such key, and no C++ source names it: only fixtures carry it."""
    assert FIXTURE_ONLY_KEYS.isdisjoint(cpp_context())
    sources = [p for folder in ("common", "benchmarks", "kernels", "tests/tools")
               for p in (REPO / folder).rglob("*") if p.suffix in (".cpp", ".hpp", ".cu", ".cuh")]
    assert sources
    assert [p for p in sources if synthetic.KEY in p.read_text(errors="replace")] == []


def test_every_precision_is_stated_even_when_the_gpu_lacks_it():
    cpp = cpp_context()  # compute capability 8.0: no FP8
    assert cpp["peak_fp8"] == "0" and cpp["peak_fp8_source"] == "none"
    assert float(cpp["peak_fp16"]) > 0


# ---------------------------------------------------------------------------------------------
# Names and counters: tcbench_context --schema (C++) against scripts/tcbench_tools/schema.py

# Fields of a Google Benchmark row that are not counters (and tcbench run's binary tag).
GBENCH_ROW_FIELDS = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
                     "repetitions", "repetition_index", "threads", "iterations", "real_time",
                     "cpu_time", "time_unit", "label", "error_occurred", "error_message",
                     "aggregate_name", "aggregate_unit", "skipped", "skip_message",
                     "tcbench_binary"}
ALL_FIXTURES = [*TCBENCH_FIXTURES, "plain.json", "tensor_util.json", "tensor_util_nocounters.json",
                "tensor_util_step_h.json", "tensor_util_step_a.json"]


@pytest.fixture(scope="module")
def cpp_schema() -> dict:
    tool = context_tool()
    proc = subprocess.run([str(tool), "--schema"], capture_output=True, text=True)
    assert proc.returncode == 0, f"{tool} --schema failed ({proc.returncode}): {proc.stderr}"
    return json.loads(proc.stdout)


def python_counters() -> dict[str, dict]:
    return {c.name: {"pattern": c.pattern, "unit": c.unit, "better": c.better, "low": c.low,
                     "low_inclusive": c.low_inclusive, "high": c.high} for c in schema.COUNTERS}


def test_every_counter_is_on_both_sides(cpp_schema):
    cpp = {c["name"] for c in cpp_schema["counters"]}
    python = set(python_counters())
    assert cpp - python == set(), "counters the C++ writes and tcbench_tools/schema.py lacks"
    assert python - cpp == set(), "counters schema.py names and the C++ never writes (renamed?)"
    assert len(cpp_schema["counters"]) == len(cpp)  # no name twice


def test_each_counter_has_the_cpp_pattern_unit_direction_and_range(cpp_schema):
    python = python_counters()
    for c in cpp_schema["counters"]:
        cpp = {k: c[k] for k in ("pattern", "unit", "better", "low", "low_inclusive", "high")}
        assert python[c["name"]] == cpp, c["name"]


def test_precisions_are_the_cpp_table_in_its_order(cpp_schema):
    assert [{"name": p.name, "integer": p.integer, "rate_counter": p.rate_counter}
            for p in schema.PRECISION_TABLE] == cpp_schema["precisions"]
    assert names.PRECISIONS == tuple(p["name"] for p in cpp_schema["precisions"])


def test_the_name_grammar_is_the_cpp_one(cpp_schema):
    assert cpp_schema["schema_version"] == schema.SCHEMA_VERSION
    assert cpp_schema["names"] == {"grammar": schema.GRAMMAR, "keys": list(schema.KEYS),
                                   "gemm_keys": list(schema.GEMM_KEYS),
                                   "layouts": list(schema.LAYOUTS)}


def test_a_counter_renamed_on_one_side_fails_the_comparison(cpp_schema):
    """What the tests above catch: the C++ renaming one counter (here tflops) only."""
    renamed = [dict(c, name="tflop_s", pattern="^tflop_s$") if c["name"] == "tflops" else c
               for c in cpp_schema["counters"]]
    cpp = {c["name"] for c in renamed}
    assert cpp - set(python_counters()) == {"tflop_s"}
    assert set(python_counters()) - cpp == {"tflops"}


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_fixture_counters_are_schema_counters_in_their_range(name):
    for row in json.loads((FIXTURES / name).read_text())["benchmarks"]:
        for key, value in row.items():
            if key in GBENCH_ROW_FIELDS:
                continue
            assert schema.counter(key) is not None, f"{name}: {row['name']} has {key!r}"
            if row.get("aggregate_name") in ("stddev", "cv"):
                continue  # spreads, not values of the counter
            assert schema.out_of_range(key, value) is None, (name, row["name"], key, value)


COUNTER_LITERAL = re.compile(r"""^[rRbBuUfF]*(['"])(?P<text>[a-z0-9_]+)(\{|\1$)""")
# Strings equal to a counter name that mean something else.
NOT_COUNTERS = {("sections/fp8.py", "selected"),  # the FP8 block's "selected" mix
                ("sections/overview.py", "gbps"),  # the context key peak_gbps
                ("node.py", "throttle"),  # a table heading
                # The run context's sm_clock_mhz (cudaDevAttrClockRate), a history column; the
                # counter of the same name is the median clock NVML saw while timing.
                *(("history/" + f, "sm_clock_mhz")
                  for f in ("dashboard.py", "ingest.py", "page.py", "series.py", "store.py"))}


def test_the_tools_name_counters_only_through_schema_py():
    """No counter name as a string literal outside schema.py (docstrings and comments aside):
    a literal would not follow a rename that the tests above make schema.py follow."""
    tools = REPO / "scripts" / "tcbench_tools"
    counter_names = {c.name for c in schema.COUNTERS if "<" not in c.name}
    families = ("speedup_vs_", "accuracy_", "agreement_", "loss_at_", "scale_at_",
                "tensor_active_pct_", "time_pct_")
    found = []
    for path in sorted(tools.rglob("*.py")):
        rel = path.relative_to(tools).as_posix()
        if rel == "schema.py":
            continue
        tokens = list(tokenize.generate_tokens(io.StringIO(path.read_text()).readline))
        for i, tok in enumerate(tokens):
            if tok.type != tokenize.STRING:
                continue
            prev = next((t for t in reversed(tokens[:i]) if t.type not in (
                tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                tokenize.COMMENT)), None)
            if prev is None or prev.type in (tokenize.NEWLINE, tokenize.INDENT) or \
                    prev.string in (":",) and tok.string.startswith(('"""', "'''")):
                continue  # a docstring
            m = COUNTER_LITERAL.match(tok.string)
            if not m:
                continue
            text = m.group("text")
            if (text in counter_names or text.startswith(families)) and \
                    (rel, text) not in NOT_COUNTERS:
                found.append(f"{rel}:{tok.start[0]}: {tok.string}")
    assert found == []
