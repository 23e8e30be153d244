"""One schema, written by the C++ and read by Python: every result file carries it
(tcbench_schema) and each row its typed arguments (tcbench_args); scripts/tcbench_tools/schema.json,
which the tools use for files that carry none, is exactly what ``tcbench_context --schema``
prints (this test fails on drift, and rewrites it with TCBENCH_UPDATE_SCHEMA=1); the fixtures'
context carries exactly the keys, in the formats, that the benchmarks write.

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
from functools import cache
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO
from tcbench_tools import names, results, schema, synthetic
from tcbench_tools.errors import InputError

# Keys Google Benchmark itself writes into "context".
GBENCH_KEYS = {"date", "host_name", "executable", "num_cpus", "mhz_per_cpu",
               "cpu_scaling_enabled", "caches", "load_avg", "library_build_type",
               "json_schema_version", "library_version"}
# Keys only fixtures carry: the C++ never writes them (checked below), so a real run cannot.
FIXTURE_ONLY_KEYS = {synthetic.KEY}
# Every generated fixture but plain.json (Google Benchmark's output alone) and tensor_util.json
# and tensor_util_nocounters.json, which keep an older context on purpose (no NVML keys).
TCBENCH_FIXTURES = sorted(p.name for p in FIXTURES.glob("*.json")
                          if p.name not in ("plain.json", "tensor_util.json",
                                            "tensor_util_nocounters.json"))


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


@cache
def cpp_context() -> dict[str, str]:
    out = subprocess.run([str(context_tool()), "--cc", "8.0"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


@pytest.mark.parametrize("name", TCBENCH_FIXTURES)
def test_fixture_context_has_exactly_the_keys_cpp_writes(name):
    cpp = set(cpp_context()) | {schema.CONTEXT_KEY}  # the reporter adds the schema
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
# The shipped schema is the C++'s, and the loader reads what a file carries


# Fields of a Google Benchmark row that are not counters (and tcbench's own row keys).
GBENCH_ROW_FIELDS = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
                     "repetitions", "repetition_index", "threads", "iterations", "real_time",
                     "cpu_time", "time_unit", "label", "error_occurred", "error_message",
                     "aggregate_name", "aggregate_unit", "skipped", "skip_message",
                     "tcbench_binary", "tcbench_args"}
ALL_FIXTURES = sorted(p.name for p in FIXTURES.glob("*.json"))


@pytest.fixture(scope="module")
def cpp_schema() -> dict:
    tool = context_tool()
    proc = subprocess.run([str(tool), "--schema"], capture_output=True, text=True)
    assert proc.returncode == 0, f"{tool} --schema failed ({proc.returncode}): {proc.stderr}"
    return json.loads(proc.stdout)


def test_the_shipped_schema_is_what_the_cpp_prints(cpp_schema):
    """schema.json is tcbench_context --schema's output, whole: a counter, key, precision or
    range changed in the C++ alone fails here (TCBENCH_UPDATE_SCHEMA=1 rewrites the file)."""
    if os.environ.get("TCBENCH_UPDATE_SCHEMA") == "1":
        # As the tool prints it (one row per line), not re-indented.
        out = subprocess.run([str(context_tool()), "--schema"], capture_output=True, text=True,
                             check=True).stdout
        schema.SCHEMA_FILE.write_text(out if out.endswith("\n") else out + "\n")
    shipped = json.loads(schema.SCHEMA_FILE.read_text())
    assert shipped == cpp_schema, (
        f"{schema.SCHEMA_FILE} differs from `tcbench_context --schema`: regenerate it with "
        "TCBENCH_UPDATE_SCHEMA=1 (review the diff: a renamed counter breaks older files)")
    assert schema.shipped().version == cpp_schema["schema_version"]


def test_a_counter_renamed_in_the_cpp_is_drift(cpp_schema):
    """What the test above catches: the C++ renaming one counter (here tflops) only."""
    renamed = json.loads(json.dumps(cpp_schema))
    for c in renamed["counters"]:
        if c["name"] == "tflops":
            c.update(name="tflop_s", pattern="^tflop_s$")
    assert renamed != json.loads(schema.SCHEMA_FILE.read_text())
    assert schema.Schema(renamed).counter("tflops") is None
    assert schema.Schema(renamed).counter("tflop_s").unit == "TFLOP/s"


def test_the_module_names_counters_from_the_shipped_schema():
    assert schema.TFLOPS == "tflops" and schema.PCT_OF_PEAK == "pct_of_peak"
    assert schema.STEP_PHASES == ("forward", "backward", "unscale", "optimizer")
    assert schema.GAPS == "gaps"
    assert schema.speedup_vs("fp16") == "speedup_vs_fp16"
    with pytest.raises(ValueError):
        schema.speedup_vs("fp2")
    with pytest.raises(AttributeError):
        _ = schema.TFLOP_S  # a counter the schema lacks is no attribute
    with pytest.raises(AttributeError):
        _ = schema.SPEEDUP_VS_FP16  # families are named through their functions
    assert [p.name for p in schema.shipped().precisions] == list(schema.PRECISIONS)
    assert schema.shipped().precision("fp4").input_bytes == 0.5
    assert schema.shipped().precision("int8").output_bytes == 4
    assert schema.shipped().precision("fp8").layout == "tn"


def test_a_files_own_schema_decides_its_counters_ranges():
    """A counter the tools have never seen: the file's schema gives its range, so an impossible
    value of it is refused without an edit to the tools (the shipped schema lacks it)."""
    raw = json.loads(schema.SCHEMA_FILE.read_text())
    raw["counters"].append({"name": "new_share", "pattern": "^new_share$", "unit": "%",
                            "better": "higher", "low": 0, "low_inclusive": True, "high": 100,
                            "doc": "a counter added after these tools"})
    doc = json.loads((FIXTURES / "gpu_a_single.json").read_text())
    doc["context"][schema.CONTEXT_KEY] = raw
    row = next(r for r in doc["benchmarks"] if "tflops" in r)
    row["new_share"] = 250.0
    rs = results.parse_doc(doc)
    bench = rs.benchmarks[names.strip_time_suffix(row["run_name"])]
    assert rs.schema.counter("new_share").unit == "%"
    assert schema.counter("new_share") is None  # the shipped schema does not know it
    assert "new_share of repetition 0 is 250, outside its physical range (>= 0 and <= 100)" \
        == bench.impossible()
    del doc["context"][schema.CONTEXT_KEY]  # the same row in a file without a schema passes
    assert results.parse_doc(doc).benchmarks[bench.name].impossible() is None


@pytest.mark.parametrize("broken", [[], {"schema_version": 2}, {"schema_version": "2"},
                                    {"names": {}, "schema_version": 2}])
def test_a_malformed_schema_is_one_sentence(broken):
    doc = json.loads((FIXTURES / "gpu_a_single.json").read_text())
    doc["context"][schema.CONTEXT_KEY] = broken
    with pytest.raises(InputError, match=r"context's tcbench_schema is not a tcbench schema \("):
        results.parse_doc(doc, "bad.json")


@pytest.mark.parametrize("name", [n for n in ALL_FIXTURES if n != "plain.json"])
def test_every_fixture_carries_the_schema_once_and_each_row_its_arguments(name):
    """The generated fixtures are written by the C++ writer: the schema once, in the context;
    tcbench_args in every row, building the row's name (the reader checks that too)."""
    text = (FIXTURES / name).read_text()
    assert text.count(f'"{schema.CONTEXT_KEY}"') == 1
    doc = json.loads(text)
    assert schema.Schema(doc["context"][schema.CONTEXT_KEY]).version == schema.SCHEMA_VERSION
    for row in doc["benchmarks"]:
        parsed = names.from_args(row[schema.ARGS_KEY])
        assert str(names.BenchName.of(parsed)) == names.strip_time_suffix(row["run_name"])


def test_arguments_that_disagree_with_the_name_are_refused():
    doc = json.loads((FIXTURES / "gpu_a_single.json").read_text())
    doc["benchmarks"][0][schema.ARGS_KEY]["m"] = 2048
    with pytest.raises(InputError, match="tcbench_args that build another name"):
        results.parse_doc(doc, "x.json")
    doc["benchmarks"][0][schema.ARGS_KEY] = {"topic": "fp16_vs_fp32", "variant": 3}
    with pytest.raises(InputError, match="tcbench_args that has no variant string"):
        results.parse_doc(doc, "x.json")


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
    counter_names = {c.name for c in schema.shipped().counters if "<" not in c.name}
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


DOCS_WITH_TABLES = [REPO / "README.md", REPO / "docs" / "methodology.md"]
# The docs' counter tables: generated from the schema between <!-- schema:counters [name ...] -->
# and <!-- /schema:counters --> markers, by this test alone (TCBENCH_UPDATE_SCHEMA=1 rewrites them).
TABLE_MARKER = re.compile(r"(<!-- schema:counters(?P<names>(?: [a-z0-9_<>]+)*) -->\n)"
                          r"(?P<body>.*?)(<!-- /schema:counters -->)", re.S)


def counter_table(names: tuple[str, ...], of: schema.Schema) -> str:
    """A Markdown table of the named counters (every counter when ``names`` is empty): name,
    unit, which way is better, the physically possible values and the C++ definition's doc."""
    rows = [of.family(n) if "<" in n else of.counter(n) for n in names] or list(of.counters)
    lines = ["| Counter | Unit | Better | Possible values | Meaning |", "|---|---|---|---|---|"]
    for c in rows:
        lines.append(f"| `{c.name}` | {c.unit or '-'} | {c.better} | {c.range_text()} | "
                     f"{c.doc.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def with_counter_tables(text: str, of: schema.Schema | None = None) -> str:
    """``text`` with every marked counter table regenerated."""
    return TABLE_MARKER.sub(lambda m: m.group(1) + counter_table(
        tuple(m.group("names").split()), of or schema.shipped()) + m.group(4), text)


def test_the_docs_counter_tables_are_the_schemas():
    """README.md and docs/methodology.md §7 show counters between <!-- schema:counters -->
    markers, generated from the shipped schema: a new counter, unit or range reaches them with
    TCBENCH_UPDATE_SCHEMA=1, never by hand. methodology.md lists every counter."""
    for path in DOCS_WITH_TABLES:
        text = path.read_text()
        if os.environ.get("TCBENCH_UPDATE_SCHEMA") == "1":
            path.write_text(with_counter_tables(text))
            text = path.read_text()
        assert TABLE_MARKER.search(text), path.name
        assert with_counter_tables(text) == text, (
            f"{path.name}'s counter table differs from the schema: regenerate it with "
            "TCBENCH_UPDATE_SCHEMA=1")
    every = (REPO / "docs" / "methodology.md").read_text()
    assert all(f"| `{c.name}` |" in every for c in schema.shipped().counters)


def test_a_counter_the_cpp_adds_reaches_the_table_without_an_edit():
    raw = json.loads(schema.SCHEMA_FILE.read_text())
    raw["counters"].append({"name": "new_share", "pattern": "^new_share$", "unit": "%",
                            "better": "higher", "low": 0, "low_inclusive": True, "high": 100,
                            "doc": "a counter added after these tools"})
    text = (REPO / "docs" / "methodology.md").read_text()
    table = with_counter_tables(text, schema.Schema(raw))
    assert ("| `new_share` | % | higher | >= 0 and <= 100 | a counter added after these tools |"
            in table)
