"""Property-based tests of the result-file readers: a real result file
changed at random (any JSON value in any field, rows dropped, doubled or renamed, hostile names,
dates that cannot be, bytes that are not UTF-8, a byte order mark, a file cut short, random
bytes), and folders of such files (with links out, FIFOs, subfolders and stray files), read by
every command that reads them: results.load, compare, answers, report, history add (SQLite and
the real PostgreSQL) and history check. The property is properties.check's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import properties as p
from conftest import fixture

GOOD = fixture("gpu_a_single.json")


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
    pair = {"candidate": (GOOD, bad), "baseline": (bad, GOOD), "both": (bad, bad)}[side]
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
    o = p.run_cli("report", bad, GOOD, "--out", work / "report", seconds=120)
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
    outside.write_bytes(GOOD.read_bytes())
    for name, kind, data in entries:
        path = run / name
        if os.path.lexists(path):
            continue
        if kind == "file":
            path.write_bytes(data)
        elif kind == "good":
            path.write_bytes(GOOD.read_bytes())
        elif kind == "dir":
            path.mkdir()
            (path / "results.json").write_bytes(GOOD.read_bytes())
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
    p.check(p.run_cli("compare", GOOD, run), {0, 1, 2}, entries)
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
