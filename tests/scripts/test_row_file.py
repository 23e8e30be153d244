"""Nothing a binary finished is lost when it is cut short: the harness's row file beside
--benchmark_out (common/bench/src/reporter.cpp) and the readers (results.load_file, partial.py).

The kill tests run tcbench_row_probe, a GPU-less binary on the harness's own registration and
reporters (tests/tools/row_probe.cpp), and stop it in the middle of its run; the rest are the
readers on files cut by hand.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO
from tcbench_tools import partial, schema
from tcbench_tools.errors import InputError
from tcbench_tools.results import load_file


def probe() -> Path:
    found = sorted(REPO.glob("build/*/bin/tcbench_row_probe"), key=lambda p: p.stat().st_mtime,
                   reverse=True)
    build = os.environ.get("TCBENCH_BUILD_DIR")
    if build:
        found = [Path(build) / "bin" / "tcbench_row_probe"]
    if not found or not found[0].is_file():
        pytest.skip("no build with tcbench_row_probe")
    return found[0]


def start(tmp_path: Path, rows: int = 30, ms: int = 80) -> tuple[subprocess.Popen, Path, Path]:
    out = tmp_path / "bench_probe.json"
    log = tmp_path / "probe.log"
    proc = subprocess.Popen([str(probe()), f"--probe-rows={rows}", f"--probe-ms={ms}",
                             "--benchmark_min_time=0.01", f"--benchmark_out={out}",
                             "--benchmark_out_format=json"],
                            stdout=log.open("w"), stderr=subprocess.STDOUT)
    return proc, out, log


def finished_in(log: Path) -> set[str]:
    return {m.group(1)
            for m in re.finditer(r"^(probe/\S+)/manual_time\s", log.read_text(), re.MULTILINE)}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_binary_killed_in_the_middle_keeps_every_finished_row(tmp_path: Path, sig):
    proc, out, log = start(tmp_path)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(finished_in(log)) < 6:
        time.sleep(0.05)
    proc.send_signal(sig)
    proc.wait(timeout=20)
    printed = finished_in(log)
    assert 6 <= len(printed) < 30
    with pytest.raises(json.JSONDecodeError):
        json.loads(out.read_text())  # Google Benchmark's own file is cut short
    rs = load_file(out)
    # Every row the binary reported finished is there, with its counter, and the rest are named.
    assert printed <= set(rs.benchmarks), printed - set(rs.benchmarks)
    for name in printed:
        i = int(name.rsplit(":", 1)[1])
        assert rs.benchmarks[name].sample("gbps").center == i + 1.0
    assert rs.partial and "bench_probe.jsonl" in rs.partial and "cut short" in rs.partial
    assert len(rs.benchmarks) + len(rs.never_ran) == 30
    assert set(rs.never_ran).isdisjoint(rs.benchmarks)


def test_a_run_that_ends_writes_the_same_rows_to_both_files(tmp_path: Path):
    proc, out, _ = start(tmp_path, rows=4, ms=5)
    assert proc.wait(timeout=30) == 0
    whole = load_file(out)
    assert whole.partial is None
    lines = [json.loads(x) for x in partial.row_file(out).read_text().splitlines()]
    assert lines[0]["tcbench_planned"] == [f"probe/sleep/fp32/elements:{i}" for i in range(4)]
    assert lines[-1] == {"tcbench_finished": True}
    assert [r["name"] for r in lines[1:-1]] == [r["name"] for r in
                                                json.loads(out.read_text())["benchmarks"]]


def test_both_files_carry_the_schema_once_and_each_row_its_arguments(tmp_path: Path):
    """The harness's two writers (--benchmark_out's JSON, the row file): tcbench_schema once, in
    the context, the one tcbench_context --schema prints (the shipped schema.json); tcbench_args
    in every row, right after its name, typed (elements a number) and building the name."""
    proc, out, _ = start(tmp_path, rows=3, ms=5)
    assert proc.wait(timeout=30) == 0
    shipped = json.loads(schema.SCHEMA_FILE.read_text())
    rows_file = partial.row_file(out)
    for path in (out, rows_file):
        text = path.read_text()
        assert text.count(f'"{schema.CONTEXT_KEY}"') == 1, path.name
        assert text.count(f'"{schema.ARGS_KEY}"') == 3, path.name
    doc = json.loads(out.read_text())
    lines = [json.loads(x) for x in rows_file.read_text().splitlines()]
    assert doc["context"][schema.CONTEXT_KEY] == lines[0]["context"][schema.CONTEXT_KEY] == shipped
    for row in doc["benchmarks"] + lines[1:-1]:
        assert list(row)[:2] == ["name", schema.ARGS_KEY]
        i = int(row["name"].split(":")[1].split("/")[0])
        assert row[schema.ARGS_KEY] == {"topic": "probe", "variant": "sleep",
                                        "precision": "fp32", "elements": i}
    assert load_file(out).benchmarks["probe/sleep/fp32/elements:2"].parsed.args == \
        {"elements": "2"}


def gb_text(rows: int) -> str:
    body = ",\n".join(json.dumps({"name": f"t/v/fp16/n:{i}/manual_time", "run_type": "iteration",
                                  "real_time": 1.0, "time_unit": "ms", "tflops": 10.0 + i})
                      for i in range(rows))
    return '{\n  "context": {"date": "2026-01-01"},\n  "benchmarks": [\n' + body + "\n  ]\n}\n"


def test_a_truncated_json_without_a_row_file_is_repaired_to_its_last_complete_row(tmp_path):
    text = gb_text(5)
    cut = text[: text.index('"t/v/fp16/n:4') + 10]  # in the middle of the fifth row
    path = tmp_path / "bench_x.json"
    path.write_text(cut)
    rs = load_file(path)
    assert sorted(rs.benchmarks) == [f"t/v/fp16/n:{i}" for i in range(4)]
    assert "cut short" in rs.partial and rs.never_ran == []


def test_a_stale_row_file_of_another_run_is_not_used(tmp_path: Path):
    path = tmp_path / "bench_x.json"
    path.write_text(gb_text(3)[:-len("\n  ]\n}\n")])  # only the closing brackets missing
    partial.row_file(path).write_text(json.dumps({"context": {"date": "2025-05-05"},
                                                  "tcbench_planned": ["other/row"]}) + "\n"
                                      + json.dumps({"name": "other/row", "real_time": 1.0}) + "\n")
    rs = load_file(path)
    assert "other/row" not in rs.benchmarks and len(rs.benchmarks) == 3


def test_a_file_with_nothing_complete_is_still_an_input_error(tmp_path: Path):
    path = tmp_path / "bench_x.json"
    path.write_text('{"context": {"dat')
    with pytest.raises(InputError):
        load_file(path)


def test_compare_and_report_name_what_a_cut_short_candidate_never_ran(tmp_path: Path):
    from conftest import tcbench
    from tcbench_tools import report

    base, cand = tmp_path / "base.json", tmp_path / "bench_x.json"
    base.write_text(gb_text(5))
    cand.write_text(gb_text(3)[:-len("\n  ]\n}\n")])
    rows = [json.loads(x) for x in re.findall(r"\{[^{}]*\}", gb_text(5))[1:]]
    partial.row_file(cand).write_text("\n".join(
        [json.dumps({"context": {"date": "2026-01-01"},
                     "tcbench_planned": [r["name"].removesuffix("/manual_time") for r in rows]}),
         *(json.dumps(r) for r in rows[:3])]) + "\n")
    proc = tcbench("compare", str(base), str(cand))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    verdict = proc.stdout.strip().splitlines()[-1]
    assert "the candidate was cut short" in verdict
    assert "2 planned benchmark(s) never ran: t/v/fp16/n:3 and t/v/fp16/n:4" in verdict
    doc = report.Doc()
    report.render_cut_short(doc, [load_file(cand)], ["candidate"])
    text = doc.markdown()
    assert "## Cut short" in text and "`t/v/fp16/n:3`, `t/v/fp16/n:4`" in text


def test_a_json_wrong_in_the_middle_is_not_taken_for_one_cut_short(tmp_path: Path):
    """Only a file that ends too early is recovered: one with a bad token inside stays an input
    error, row file or not."""
    path = tmp_path / "bench_x.json"
    path.write_text(gb_text(3).replace('"real_time": 1.0', '"real_time": 1.0.0', 1))
    partial.row_file(path).write_text(json.dumps({"context": {}, "tcbench_planned": []}) + "\n")
    with pytest.raises(InputError):
        load_file(path)
    assert partial.cut_short(gb_text(3)[:-3]) and partial.cut_short("")
    assert not partial.cut_short(gb_text(3) + "{}")


def row_lines(context: dict, rows: list[dict], planned: list[str] | None = None,
              finished: bool = False) -> list[str]:
    """One run of a row file, as the harness writes it."""
    head = {"context": context, "tcbench_planned": planned or [r["name"].removesuffix(
        "/manual_time") for r in rows]}
    return [json.dumps(head), *(json.dumps(r) for r in rows)] + (
        [json.dumps({"tcbench_finished": True})] if finished else [])


def gb_rows(first: int, count: int, seconds: float = 1.0) -> list[dict]:
    return [{"name": f"t/v/fp16/n:{i}/manual_time", "run_type": "iteration",
             "real_time": seconds, "time_unit": "ms"} for i in range(first, first + count)]


@pytest.mark.parametrize("order", ["this run first", "the other run first"])
def test_a_second_run_in_a_row_file_never_joins_this_ones_rows(tmp_path: Path, order):
    """A row file is one run: another run's context line and rows (another GPU's, joined by
    hand) are that run's, whichever comes first; the cut file reads only its own."""
    path = tmp_path / "bench_x.json"
    ours = {"date": "2026-01-01", "gpu_name": "GPU A", "gpu_uuid": "GPU-a"}
    other = {"date": "2026-01-01", "gpu_name": "GPU B", "gpu_uuid": "GPU-b"}
    path.write_text(json.dumps({"context": ours, "benchmarks": gb_rows(0, 2)})[:-3])
    mine, theirs = row_lines(ours, gb_rows(0, 2)), row_lines(other, gb_rows(2, 3, 9.0))
    lines = mine + theirs if order == "this run first" else theirs + mine
    partial.row_file(path).write_text("\n".join(lines) + "\n")
    rs = load_file(path)
    assert sorted(rs.benchmarks) == ["t/v/fp16/n:0", "t/v/fp16/n:1"]
    assert rs.context["gpu_name"] == "GPU A"


def test_a_row_file_with_two_runs_that_may_be_this_files_is_refused(tmp_path: Path):
    path = tmp_path / "bench_x.json"
    ctx = {"date": "2026-01-01", "gpu_name": "GPU A"}
    path.write_text(json.dumps({"context": ctx, "benchmarks": gb_rows(0, 2)})[:-3])
    partial.row_file(path).write_text("\n".join(row_lines(ctx, gb_rows(0, 2))
                                                + row_lines(ctx, gb_rows(5, 1))) + "\n")
    with pytest.raises(InputError) as err:
        load_file(path)
    assert "holds 2 runs (context lines 1, 4)" in str(err.value)
    assert "a row file is one run" in str(err.value)
    # Cut before its own context ends, the file cannot say which run is its: refused too.
    path.write_text('{"context": {"da')
    with pytest.raises(InputError, match="its context is cut too"):
        load_file(path)
