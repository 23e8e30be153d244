"""Result files as results.load reads them: impossible values, wrong JSON types, files that are not
regular or too big, link loops, and hostile text that must reach no terminal or Markdown raw.
Then property-based tests: result files and folders changed at random, read by every command."""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import properties as p
from conftest import (
    FIXTURES,
    REPO,
    assert_one_line_error,
    bounded,
    fixture,
    load_doc,
    tcbench,
    with_fields,
    write,
)

FP16 = "fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096/layout:nn"
GOOD = str(fixture("gpu_a.json"))


def test_the_report_leaves_out_and_lists_a_benchmark_with_an_impossible_value(cli, tmp_path):
    """Before: a benchmark whose rel_error was negative stayed in every table (and a negative
    tflops in the aggregates of a file without repetitions became a card's best)."""
    doc = with_fields(load_doc("gpu_a.json"), FP16, 1, rel_error=-0.5)
    code, _, err = cli("report", write(tmp_path, "bad.json", doc), "--out", tmp_path / "rep")
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    assert (f"| Fixture GPU A | INVALID | {FP16} | rel_error of repetition 1 is -0.5, outside "
            "its physical range (>= 0) (left out) |") in md
    body = md.split("## Skipped and failed")[0]
    assert FP16 not in body  # in no table, no plot, no best-of
    # An aggregates-only file: the median row is checked like a repetition.
    agg = load_doc("gpu_a_aggregates.json")
    for row in agg["benchmarks"]:
        if row["run_name"].startswith("fp16_vs_fp32/cublaslt/fp16/") and row.get(
                "aggregate_name") in ("median", "mean"):
            row["tflops"] = -159.8
    code, _, err = cli("report", write(tmp_path, "agg.json", agg), "--out", tmp_path / "rep2")
    assert code == 0, err
    md = (tmp_path / "rep2" / "report.md").read_text()
    assert "-159.8" not in md.split("## Skipped and failed")[0]
    assert "tflops of the median aggregate is -159.8" in md


@pytest.mark.parametrize("field,value,words", [
    ("error_occurred", "false", 'has error_occurred "false", which must be true or false'),
    ("error_occurred", 0, "has error_occurred 0, which must be true or false"),
    ("skipped", "yes", 'has skipped "yes", which must be true or false'),
    ("repetition_index", "2", 'has repetition_index "2", which must be a whole number'),
    ("run_type", "iter", 'has run_type "iter", which must be "iteration" or "aggregate"'),
    ("error_message", 5, "has error_message 5, which must be a string"),
])
def test_a_field_of_the_wrong_json_type_is_an_input_error(tmp_path, field, value, words):
    """Before: "error_occurred": "false" read as a failure (exit 1), 0 as a success."""
    doc = load_doc("gpu_a.json")
    doc["benchmarks"][0][field] = value
    proc = tcbench("compare", str(fixture("gpu_a.json")), str(write(tmp_path, "t.json", doc)))
    assert proc.returncode == 2, proc.stdout
    line = proc.stderr.strip()
    assert line.startswith("tcbench: ") and words in line and "entry 0 of 'benchmarks'" in line


def test_a_context_key_of_tcbench_with_the_wrong_type_is_an_input_error(tmp_path):
    """A tcbench_lost_binaries that is not a string read as "no binary lost"."""
    doc = load_doc("gpu_a.json")
    doc["context"]["tcbench_lost_binaries"] = ["bench_int8_gemm"]
    proc = tcbench("compare", str(fixture("gpu_a.json")), str(write(tmp_path, "t.json", doc)))
    assert proc.returncode == 2
    assert "the context's tcbench_lost_binaries is [\"bench_int8_gemm\"], which must be a string" \
        in proc.stderr


def host_studies_file(tmp_path: Path) -> Path:
    """A result file of tcbench_studies (the host studies: context tcbench_kind host-studies,
    real_time = the study's wall time per row), from the build when there is one."""
    build = os.environ.get("TCBENCH_BUILD_DIR")
    tools = [Path(build) / "bin" / "tcbench_studies"] if build else \
        sorted(REPO.glob("build/*/bin/tcbench_studies"), key=lambda p: p.stat().st_mtime)[-1:]
    if not tools or not tools[0].is_file():
        pytest.skip("no build with tcbench_studies (scripts/tcbench test builds one)")
    out = tmp_path / "studies.json"
    subprocess.run([str(tools[0]), "--study", "alignment", "--study", "fp8", "--out", str(out)],
                   check=True, capture_output=True, timeout=300)
    assert json.loads(out.read_text())["context"]["tcbench_kind"] == "host-studies"
    return out


def test_the_host_studies_load_compare_and_report_without_a_single_invalid_row(cli, tmp_path):
    studies = host_studies_file(tmp_path)
    code, out, err = cli("compare", studies, studies)
    assert code == 0, out + err
    assert "INVALID" not in out
    code, _, err = cli("report", studies, "--out", tmp_path / "rep")
    assert code == 0, err
    assert "INVALID" not in (tmp_path / "rep" / "report.md").read_text()


def test_a_device_a_fifo_or_a_huge_file_is_refused_at_once(tmp_path):
    good = str(fixture("gpu_a.json"))
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as fh:
        fh.truncate(300 << 20)  # sparse: no disk used
    for bad, words in (("/dev/zero", "/dev/zero is a character device, not a regular result "
                                     "file"),
                       (str(fifo), "is a FIFO (named pipe), not a regular result file"),
                       (str(huge), "is 300.0 MiB, more than the 256 MiB a result file may be")):
        for args in (("compare", good, bad), ("report", bad, "--out", str(tmp_path / "r"))):
            begin = time.monotonic()
            proc = bounded(*args)
            assert time.monotonic() - begin < 30
            assert proc.returncode == 2, (args, proc.stderr)
            assert words in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


FAKE_PASS = "\x1b[2K\r\x1b[32mtcbench compare: PASS: 18 unchanged.\x1b[0m"


def test_no_control_character_of_a_results_file_reaches_a_terminal_or_markdown(cli, tmp_path):
    """Before: the escape sequences were printed raw, erasing the line and painting a PASS."""
    doc = load_doc("gpu_a.json")
    evil = f"{FP16}{FAKE_PASS}\n## PASS"
    for row in doc["benchmarks"]:
        if row["run_name"].startswith(FP16):
            row["run_name"] = row["run_name"].replace(FP16, evil)
            row["name"] = row["name"].replace(FP16, evil)
            row.pop("tcbench_args", None)  # a name BenchName cannot build: an older file's row
    doc["context"]["gpu_name"] = "GPU\x1b]0;owned\x07\u202eA"
    doc["benchmarks"][-1].update(error_occurred=True, error_message="verification failed\r"
                                                                    "\x1b[32mPASS")
    bad = write(tmp_path, "evil.json", doc)
    md = tmp_path / "summary.md"
    code, out, err = cli("compare", fixture("gpu_a.json"), bad, "--markdown", md)
    assert code == 1
    for text in (out, err, md.read_text()):
        assert "\x1b" not in text and "\r" not in text and "\u202e" not in text
        assert not any(line.startswith(("tcbench compare: PASS", "## PASS"))
                       for line in text.splitlines())
    assert "\\x1b[2K\\r\\x1b[32mtcbench compare: PASS" in out  # visible, escaped
    code, _, err = cli("report", bad, "--out", tmp_path / "rep")
    assert code == 0, err
    for name in ("report.md", "report.html"):
        text = (tmp_path / "rep" / name).read_text()
        assert "\x1b" not in text and "\r" not in text and "\u202e" not in text
        assert "\n## PASS" not in text


def test_an_error_message_naming_a_hostile_name_is_escaped(tmp_path):
    doc = load_doc("gpu_a.json")
    doc["benchmarks"][1]["name"] = "x\x1b[2K\rtcbench compare: PASS"
    doc["benchmarks"][1]["repetition_index"] = "1"
    proc = tcbench("compare", str(fixture("gpu_a.json")), str(write(tmp_path, "e.json", doc)))
    assert proc.returncode == 2
    assert "\x1b" not in proc.stderr and "\r" not in proc.stderr and "\\x1b[2K" in proc.stderr


def test_a_symbolic_link_loop_is_called_one(tmp_path):
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    proc = tcbench("compare", str(fixture("gpu_a.json")), str(loop))
    assert proc.returncode == 2
    assert "is a symbolic link loop" in proc.stderr and "no such file" not in proc.stderr
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "gone.json")
    proc = tcbench("compare", str(fixture("gpu_a.json")), str(dangling))
    assert proc.returncode == 2 and "is a dangling symbolic link" in proc.stderr


@pytest.mark.parametrize("field", ["iterations", "repetitions", "threads"])
def test_a_count_of_zero_in_a_results_row_is_refused(cli, tmp_path, field):
    """Before: a measured row with 0 iterations (or 0 repetitions, 0 threads) was compared as
    any other; an error or skip row may still say 0 iterations, as Google Benchmark writes it."""
    doc = load_doc("gpu_a_single.json")
    doc["benchmarks"][0][field] = 0
    code, out, err = cli("compare", write(tmp_path, "z.json", doc), write(tmp_path, "z.json", doc))
    assert code == 2 and f"has {field} 0, which no run of a benchmark gives" in err, err
    assert err.count("\n") == 1
    ok = load_doc("gpu_a_single.json")
    assert any(r.get("error_occurred") and r["iterations"] == 0 for r in ok["benchmarks"])
    assert cli("compare", write(tmp_path, "ok.json", ok), write(tmp_path, "ok.json", ok))[0] == 0


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("bad")
    files = {
        "not_json": FIXTURES / "bad" / "not_json.json",
        "not_gbench": FIXTURES / "bad" / "not_gbench.json",
        "empty": FIXTURES / "bad" / "empty.json",
        "list": d / "list.json",
        "no_name": d / "no_name.json",
        "binary": d / "binary.json",
        "empty_dir": d / "empty_dir",
    }
    files["list"].write_text("[1, 2]")
    files["no_name"].write_text(json.dumps({"context": {}, "benchmarks": [{"real_time": 1}]}))
    files["binary"].write_bytes(b"\xff\xfe\x00garbage")
    files["empty_dir"].mkdir()
    return files


@pytest.mark.parametrize("command", ["compare-baseline", "compare-candidate", "report"])
@pytest.mark.parametrize("case,needle", [
    ("missing", "no such file or folder"),
    ("not_json", "is not JSON (Expecting value at line 2"),
    ("not_gbench", "is not Google Benchmark output (no 'benchmarks' list)"),
    ("empty", "holds no benchmarks"),
    ("list", "is not Google Benchmark output"),
    ("no_name", "has no name"),
    ("binary", "is not JSON (it is not UTF-8 text)"),
    ("empty_dir", "no results.json and no *.json files"),
])
def test_bad_input_files(bad_files, tmp_path, command, case, needle):
    path = str(tmp_path / "absent.json") if case == "missing" else str(bad_files[case])
    if command == "compare-baseline":
        proc = tcbench("compare", path, GOOD)
    elif command == "compare-candidate":
        proc = tcbench("compare", GOOD, path)
    else:
        proc = tcbench("report", GOOD, path, "--out", str(tmp_path / "r"))
    assert_one_line_error(proc, needle)


def test_duplicate_benchmarks_in_a_folder(tmp_path):
    (tmp_path / "a.json").write_text(fixture("gpu_a.json").read_text())
    (tmp_path / "b.json").write_text(fixture("gpu_a.json").read_text())
    assert_one_line_error(tcbench("compare", str(tmp_path), GOOD), "appears in both")


def test_integers_beyond_float_range(tmp_path):
    text = fixture("gpu_a.json").read_text()
    doc = json.loads(text)
    first = next(r for r in doc["benchmarks"] if r["run_name"].startswith(FP16))
    marker = "123456.789"
    first["real_time"] = float(marker)
    huge = write(tmp_path, "huge.json", doc)
    huge.write_text(huge.read_text().replace(marker, "1" + "0" * 400, 1))  # 1e400, as an integer
    proc = tcbench("compare", GOOD, str(huge))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{FP16}: INVALID INPUT (candidate: real_time of repetition 0 is an integer beyond " \
           "float range)" in proc.stdout
    # Longer than Python's integer-parsing limit (4300 digits): not JSON Python can read.
    longer = tmp_path / "longer.json"
    longer.write_text(huge.read_text().replace("1" + "0" * 400, "1" + "0" * 5000, 1))
    assert_one_line_error(tcbench("compare", GOOD, str(longer)), "is not usable JSON")


def test_deeply_nested_json(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text('{"context": {}, "benchmarks": ' + "[" * 100000 + "]" * 100000 + "}")
    assert_one_line_error(tcbench("compare", GOOD, str(deep)), "nested too deeply")
    config = tmp_path / "deep_config.json"
    config.write_text("[" * 100000 + "]" * 100000)
    assert_one_line_error(tcbench("compare", GOOD, GOOD, "--config", str(config)),
                          "cannot be read as a config")


ODD_VALUES = [None, "abc", "", True, 10 ** 400, -1, 0, float("nan"), float("inf"), [], {}, [1],
              {"a": 1}, "nan", 1e308, -1e308]


ROW_KEYS = ["name", "run_name", "run_type", "repetitions", "repetition_index", "real_time",
            "cpu_time", "time_unit", "iterations", "aggregate_name", "error_occurred",
            "error_message", "skipped", "skip_message", "tflops", "tops", "gbps", "pct_of_peak",
            "spread_pct", "tcbench_binary"]


CONTEXT_KEYS = ["gpu_name", "compute_capability", "peak_fp16", "peak_source", "peak_gbps",
                "tcbench_binaries", "tcbench_sources", "tcbench_lost_binaries",
                "tcbench_failed_binaries", "tcbench_incomplete", "date"]


def corrupted(rng: random.Random, doc: dict) -> dict:
    out = copy.deepcopy(doc)
    for _ in range(rng.randint(2, 10)):
        if rng.random() < 0.2:
            target, key = out["context"], rng.choice(CONTEXT_KEYS)
        else:
            target, key = rng.choice(out["benchmarks"]), rng.choice(ROW_KEYS)
        if rng.random() < 0.15:
            target.pop(key, None)
        else:
            target[key] = copy.deepcopy(rng.choice(ODD_VALUES))
    return out


def test_random_corruption_never_ends_in_a_traceback(cli, tmp_path):
    rng = random.Random(13)
    base = load_doc("gpu_a.json")
    seen = set()
    for trial in range(60):
        bad = write(tmp_path, f"bad{trial}.json", corrupted(rng, base))
        for pair in ((GOOD, bad), (bad, GOOD), (bad, bad)):
            code, _, err = cli("compare", *pair)
            assert code in (0, 1, 2) and "internal error" not in err, (trial, err)
            seen.add(code)
        if trial % 20 == 0:
            code, _, err = cli("report", bad, GOOD, "--out", tmp_path / "rep")
            assert code in (0, 2) and "internal error" not in err, (trial, err)
    # Since issue 24 a wrong JSON type or an impossible value is an input error (2) wherever it
    # lands, so random corruption ends in 0 or 2; a corruption the loader accepts still reaches
    # the gate's verdict (1), as a failed repetition does:
    assert {0, 2} <= seen
    failed = load_doc("gpu_a.json")
    failed["benchmarks"][0]["error_occurred"] = True
    assert cli("compare", GOOD, write(tmp_path, "failed.json", failed))[0] == 1


# ---------------------------------------------------------------------------------------------
# Property-based tests of the result-file readers: a real result file
# changed at random (any JSON value in any field, rows dropped, doubled or renamed, hostile names,
# dates that cannot be, bytes that are not UTF-8, a byte order mark, a file cut short, random
# bytes), and folders of such files (with links out, FIFOs, subfolders and stray files), read by
# every command that reads them: results.load, compare, answers, report, history add (SQLite and
# the real PostgreSQL) and history check. The property is properties.check's.

SINGLE = fixture("gpu_a_single.json")


def write_file(folder: Path, data: bytes, name: str = "run.json") -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


@settings(max_examples=p.examples(60))
@given(data=p.result_bytes())
def test_load_gives_a_result_set_or_an_input_error(tmp_path, data):
    from tcbench_tools.errors import InputError
    from tcbench_tools.results import load

    path = write_file(p.workdir(tmp_path), data)
    with p.time_limit():
        try:
            rs = load(path)
        except InputError as exc:
            assert p.printable_text(str(exc).replace("\n", "\\n")), exc
        else:
            for name in rs.benchmarks:  # what load hands on is printable (printable.py)
                assert p.printable_text(name) and "\n" not in name, name


@settings(max_examples=p.examples(40))
@given(data=p.result_bytes(), side=st.sampled_from(["candidate", "baseline", "both"]))
def test_compare(tmp_path, data, side):
    work = p.workdir(tmp_path)
    bad = write_file(work, data)
    pair = {"candidate": (SINGLE, bad), "baseline": (bad, SINGLE), "both": (bad, bad)}[side]
    o = p.run_cli("compare", *pair, "--markdown", work / "summary.md")
    p.check(o, {0, 1, 2}, side)
    if (work / "summary.md").exists():
        p.check_markdown(work / "summary.md")


@settings(max_examples=p.examples(20))
@given(data=p.result_bytes(), as_json=st.booleans())
def test_answers(tmp_path, data, as_json):
    work = p.workdir(tmp_path)
    bad = write_file(work, data)
    o = p.run_cli("answers", bad, *(["--json"] if as_json else []), "--out", work / "answers")
    p.check(o, {0, 2})
    if (work / "answers" / "answers.html").exists():
        p.check_html(work / "answers" / "answers.html")
        p.check_markdown(work / "answers" / "answers.md")


@settings(max_examples=p.examples(2))
@given(data=p.result_bytes())
def test_report(tmp_path, data):
    """The report draws every plot (seconds per example): two examples in the ci profile."""
    work = p.workdir(tmp_path)
    bad = write_file(work, data)
    o = p.run_cli("report", bad, SINGLE, "--out", work / "report", seconds=120)
    p.check(o, {0, 2})
    if o.code == 0:
        p.check_html(work / "report" / "report.html")
        p.check_markdown(work / "report" / "report.md")


@pytest.fixture(params=["sqlite", "postgresql"])
def history_db(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "h.sqlite")
    return request.getfixturevalue("pg_url")


@settings(max_examples=p.examples(20))
@given(data=st.lists(p.result_bytes(), min_size=1, max_size=2))
def test_history_add_and_check(tmp_path, history_db, data):
    work = p.workdir(tmp_path)
    files = [write_file(work, d, f"run{i}.json") for i, d in enumerate(data)]
    o = p.run_cli("history", "add", *files, "--db", history_db)
    p.check(o, {0, 2})
    o = p.run_cli("history", "check", "--db", history_db)
    p.check(o, {0, 1, 2})


# ---------------------------------------------------------------------------------------------
# Folders of result files

ENTRY_NAMES = st.sampled_from(["results.json", "bench_a.json", "bench_b.json", "studies.json",
                               "notes.txt", ".hidden.json", "x.JSON", "results"]) | \
    p.hostile_text.filter(lambda s: s not in ("", ".", "..") and "/" not in s and "\x00" not in s
                          and len(s.encode("utf-8", "surrogatepass")) < 200).map(
        lambda s: s.encode("utf-8", "surrogatepass").decode("utf-8", "replace") + ".json")


@st.composite
def folder(draw):
    """(name, kind, bytes) entries of a run folder."""
    entries = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["file", "file", "good", "dir", "link_out", "dangling",
                                     "fifo", "loop"]))
        entries.append((draw(ENTRY_NAMES), kind,
                        draw(p.result_bytes()) if kind == "file" else b""))
    return entries


def build(root: Path, entries) -> Path:
    run = root / "run"
    run.mkdir()
    outside = root / "outside.json"
    outside.write_bytes(SINGLE.read_bytes())
    for name, kind, data in entries:
        path = run / name
        if os.path.lexists(path):
            continue
        if kind == "file":
            path.write_bytes(data)
        elif kind == "good":
            path.write_bytes(SINGLE.read_bytes())
        elif kind == "dir":
            path.mkdir()
            (path / "results.json").write_bytes(SINGLE.read_bytes())
        elif kind == "link_out":
            path.symlink_to(outside)
        elif kind == "dangling":
            path.symlink_to(root / "gone.json")
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "loop":
            path.symlink_to(path)
    return run


@settings(max_examples=p.examples(20))
@given(entries=folder())
def test_a_folder_of_result_files(tmp_path, entries):
    work = p.workdir(tmp_path)
    run = build(work, entries)
    p.check(p.run_cli("compare", SINGLE, run), {0, 1, 2}, entries)
    p.check(p.run_cli("answers", run), {0, 2}, entries)
    p.check(p.run_cli("history", "add", run, "--db", work / "h.sqlite"), {0, 2}, entries)


finite_time = st.floats(min_value=5e-324, max_value=1.7976931348623157e308, allow_nan=False,
                        allow_infinity=False)


@settings(max_examples=p.examples(60))
@given(base=st.lists(finite_time, min_size=1, max_size=6),
       cand=st.lists(finite_time, min_size=1, max_size=6),
       units=st.tuples(st.sampled_from(["ns", "us", "ms", "s"]),
                       st.sampled_from(["ns", "us", "ms", "s"])))
def test_compare_of_any_finite_times(tmp_path, base, cand, units):
    """Any finite positive times, in any unit, on either side: compare ends with a verdict or
    one sentence (the ratio of two finite times, their median or their CV once overflowed:
    exit 70)."""
    import json

    from conftest import load_doc

    work = p.workdir(tmp_path)
    paths = []
    for side, values, unit in (("b", base, units[0]), ("c", cand, units[1])):
        doc = load_doc("gpu_a_single.json")
        row = next(r for r in doc["benchmarks"] if r["run_type"] == "iteration")
        doc["benchmarks"] = [dict(row, real_time=v, time_unit=unit, repetition_index=i,
                                  repetitions=len(values)) for i, v in enumerate(values)]
        paths.append(write_file(work, json.dumps(doc).encode(), f"{side}.json"))
    o = p.run_cli("compare", *paths, "--markdown", work / "summary.md")
    p.check(o, {0, 1, 2}, (base, cand, units))


# ---------------------------------------------------------------------------------------------
# Row files (issue 44 §1): a result file cut short, read from the row file beside it, whatever
# that row file holds: several runs (context lines of other dates and GPUs), rows before any
# context, lines cut or garbled, finished markers anywhere.

ROW_CONTEXTS = [{"date": "2026-01-01T00:00:00", "gpu_name": "GPU A", "gpu_uuid": "GPU-a"},
                {"date": "2026-01-01T00:00:00", "gpu_name": "GPU B", "gpu_uuid": "GPU-b"},
                {"date": "2026-02-02T00:00:00", "gpu_name": "GPU A", "gpu_uuid": "GPU-a"},
                {"date": "2026-01-01T00:00:00"}, {}]


def _row_line(run: int, i: int) -> dict:
    """Row i of run ``run``: its name says which run wrote it."""
    return {"name": f"t/v/fp16/run:{run}/n:{i}/manual_time", "run_type": "iteration",
            "real_time": 1.0 + i, "time_unit": "ms", "iterations": 1}


@st.composite
def row_file_case(draw):
    own = draw(st.sampled_from(range(len(ROW_CONTEXTS))))
    lines, runs = [], []
    for run in range(draw(st.integers(0, 4))):
        ctx = draw(st.sampled_from(range(len(ROW_CONTEXTS))))
        runs.append(ctx)
        lines.append(json.dumps({"context": {**ROW_CONTEXTS[ctx], "tcbench_version": "1"},
                                 "tcbench_planned": [f"t/v/fp16/run:{run}/n:{i}"
                                                     for i in range(3)]}))
        for i in range(draw(st.integers(0, 3))):
            lines.append(json.dumps(_row_line(run, i)))
        if draw(st.booleans()):
            lines.append(json.dumps({"tcbench_finished": True}))
    for _ in range(draw(st.integers(0, 3))):  # stray lines anywhere
        at = draw(st.integers(0, len(lines)))
        lines.insert(at, draw(st.sampled_from(
            ['{"name": "stray/row", "real_time": 1.0}', '{"context": 5}', "[1, 2]", "{",
             '{"context": {"date": "2026-01-01T00:00:00"}, "tcbench_planned": 7}',
             '{"tcbench_finished": true}']) | p.hostile_text))
    text = "\n".join(lines)
    if draw(st.booleans()):
        text = text[:draw(st.integers(0, len(text)))]
    own_doc = {"context": {**ROW_CONTEXTS[own], "tcbench_version": "1"},
               "benchmarks": [_row_line(99, 0), _row_line(99, 1)]}
    cut = json.dumps(own_doc)
    cut = cut[:draw(st.integers(1, len(cut) - 1))]
    return cut, text, own


@settings(max_examples=p.examples(80))
@given(case=row_file_case())
def test_a_row_file_is_one_run(tmp_path, case):
    """Whatever the row file holds, the cut file reads as one run or is one sentence: its rows
    come from one context line of the row file, one with the file's date and GPU (or from the
    cut file itself), never from two runs."""
    from tcbench_tools.errors import InputError
    from tcbench_tools.results import load_file

    cut, rows_text, own = case
    work = p.workdir(tmp_path)
    path = write_file(work, cut.encode(), "bench_x.json")
    (work / "bench_x.jsonl").write_bytes(rows_text.encode("utf-8", "surrogatepass"))
    with p.time_limit():
        try:
            rs = load_file(path)
        except InputError as exc:
            assert p.printable_text(str(exc)) and "\n" not in str(exc), exc
            return
    runs = {name.split("/")[3] for name in rs.benchmarks}
    assert len(runs) == 1, sorted(rs.benchmarks)
    if runs != {"run:99"}:  # from the row file: a run whose context may be this file's
        ctx = rs.context
        mine = ROW_CONTEXTS[own]
        assert all(str(ctx[k]) == str(mine[k]) for k in mine if k in ctx), (ctx, mine)
