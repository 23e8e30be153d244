"""tcbench history add on SQLite: what a run stores, the same run twice, bad input, the schema's
versions, foreign databases, and two adds at the same moment.

The database is read back with the standard library's sqlite3, not through the tools' own
queries, and the expected numbers come from the fixture rows through numpy.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

import history_data as hd
from conftest import REPO, assert_one_line_error, fixture, load_doc, tcbench, write
from tcbench_tools import results
from tcbench_tools.history import ingest
from tcbench_tools.results import TIME_SCALE

FP32 = "fp16_vs_fp32/cublaslt/fp32/m:1024/n:1024/k:1024/layout:nn"
SKIPPED = "fp8/gemm_e4m3xe4m3_bf16/fp8/m:4096/n:4096/k:4096/layout:tn/accum:fast"


def rows(db: Path, sql: str, *args) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, args).fetchall()


def dump(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return list(conn.iterdump())


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "h.sqlite"


def refused(cli, *args, needles: tuple[str, ...] = ()) -> str:
    """Run the CLI in-process; assert exit 2 with one sentence on stderr; return it."""
    code, out, err = cli(*args)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, (code, out, err)
    assert lines[0].startswith("tcbench: ") and lines[0].endswith("."), lines[0]
    for needle in needles:
        assert needle in lines[0]
    return lines[0]


def test_default_database_is_results_history_sqlite(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("TCBENCH_REPO", str(tmp_path))
    monkeypatch.delenv("TCBENCH_HISTORY_DB", raising=False)
    code, out, err = cli("history", "add", fixture("gpu_a.json"))
    assert code == 0, err
    default = tmp_path / "results" / "history.sqlite"
    assert default.is_file() and f"in {default}" in out
    assert rows(default, "SELECT count(*) FROM runs") == [(1,)]


def test_environment_variable_and_db_option(cli, tmp_path, monkeypatch):
    from_env, given = tmp_path / "env.sqlite", tmp_path / "given.sqlite"
    monkeypatch.setenv("TCBENCH_HISTORY_DB", f"sqlite:///{from_env}")
    assert cli("history", "add", fixture("gpu_a.json"))[0] == 0
    assert cli("history", "add", fixture("gpu_b.json"), "--db", given)[0] == 0
    assert rows(from_env, "SELECT gpu_name FROM runs") == [("Fixture GPU A",)]
    assert rows(given, "SELECT gpu_name FROM runs") == [("Fixture GPU B",)]


def test_provenance_of_a_run(cli, db):
    code, out, err = cli("history", "add", fixture("gpu_a.json"), "--db", db)
    assert code == 0, err
    ctx = load_doc("gpu_a.json")["context"]
    (run,) = rows(db, "SELECT run_id, time, git_sha, tcbench_version, gpu_name, gpu_uuid, "
                      "driver_version, cuda_runtime, cublaslt_version, quick, repetitions, "
                      "sm_clock_mhz, mem_clock_mhz, host, compute_capability FROM runs")
    assert len(run[0]) == 64 and int(run[0], 16) >= 0  # a sha256
    assert run[1].startswith("2026-01-01 00:00:00")  # the context's date, UTC
    assert run[2:9] == (ctx["git_sha"], ctx["tcbench_version"], ctx["gpu_name"], ctx["gpu_uuid"],
                        ctx["driver_version"], ctx["cuda_runtime"], ctx["cublaslt_version"])
    assert run[9] == 0 and run[10] == 5  # full mode, 5 repetitions
    assert run[11:] == (1980.0, 2619.0, "fixture-host", "8.0")
    values = dict(rows(db, "SELECT key, value FROM run_values"))
    assert values["peak_fp16"] == 320.0 and values["sm_count"] == 132.0
    assert values["num_cpus"] == 2.0
    assert "gpu_name" not in values and "sm_clock_mhz" not in values  # text, or a column


def test_per_benchmark_statistics_and_counters(cli, db):
    assert cli("history", "add", fixture("gpu_a.json"), "--db", db)[0] == 0
    reps = [r for r in load_doc("gpu_a.json")["benchmarks"]
            if r["run_name"] == f"{FP32}/manual_time" and r["run_type"] == "iteration"]
    seconds = np.array([r["real_time"] * TIME_SCALE[r["time_unit"]] for r in reps])
    ((status, median, p10, p90, count),) = rows(
        db, "SELECT status, median, p10, p90, r.repetitions FROM results r JOIN benchmarks b "
            "ON b.id = r.benchmark WHERE b.name = ?", FP32)
    assert status == "ok" and count == len(reps) == 5
    assert median == pytest.approx(float(np.median(seconds)), rel=1e-12)
    assert p10 == pytest.approx(float(np.percentile(seconds, 10)), rel=1e-12)
    assert p90 == pytest.approx(float(np.percentile(seconds, 90)), rel=1e-12)
    counters = dict(rows(db, "SELECT c.name, c.value FROM counters c JOIN benchmarks b "
                             "ON b.id = c.benchmark WHERE b.name = ?", FP32))
    assert set(counters) == {"tflops", "pct_of_peak", "rel_error"}
    for name, value in counters.items():
        assert value == pytest.approx(float(np.median([r[name] for r in reps])), rel=1e-12)
    ((status, message),) = rows(db, "SELECT status, message FROM results r JOIN benchmarks b "
                                    "ON b.id = r.benchmark WHERE b.name = ?", SKIPPED)
    assert status == "skipped" and message.startswith("FP8 needs compute capability 8.9")


def test_aggregates_only_have_no_band(cli, db):
    assert cli("history", "add", fixture("gpu_a_aggregates.json"), "--db", db)[0] == 0
    doc = load_doc("gpu_a_aggregates.json")
    want = next(r for r in doc["benchmarks"] if r["run_name"] == f"{FP32}/manual_time"
                and r.get("aggregate_name") == "median")
    ((median, p10, p90, count),) = rows(
        db, "SELECT median, p10, p90, r.repetitions FROM results r JOIN benchmarks b "
            "ON b.id = r.benchmark WHERE b.name = ?", FP32)
    assert median == pytest.approx(want["real_time"] * TIME_SCALE[want["time_unit"]], rel=1e-12)
    assert p10 is None and p90 is None and count == want["repetitions"]


def test_a_run_keeps_its_context_without_the_schema_it_carries(cli, db):
    """The schema is the vocabulary (about 15 kB in every file), not a fact of the run."""
    assert cli("history", "add", fixture("gpu_b.json"), "--db", db)[0] == 0
    ((raw,),) = rows(db, "SELECT context FROM runs")
    stored = json.loads(raw)
    assert "tcbench_schema" not in stored and stored["gpu_name"] == "Fixture GPU B"


def test_numeric_context_keys_it_does_not_know_are_kept(cli, tmp_path, db):
    doc = load_doc("gpu_a.json")
    doc["context"].update({"sm_clock": "1755", "power_w": 412.5, "fan": "auto",
                           "power_draw_w": "398.25"})
    path = write(tmp_path, "later.json", doc)
    assert cli("history", "add", path, "--db", db)[0] == 0
    values = dict(rows(db, "SELECT key, value FROM run_values"))
    assert values["sm_clock"] == 1755.0 and values["power_w"] == 412.5
    assert "fan" not in values and "power_draw_w" not in values  # not a number; a column
    assert rows(db, "SELECT power_draw_w FROM runs") == [(398.25,)]


def test_the_same_run_twice_changes_nothing(cli, tmp_path, db):
    assert cli("history", "add", fixture("gpu_a.json"), fixture("gpu_b.json"), "--db", db)[0] == 0
    before = dump(db)
    copy = tmp_path / "elsewhere" / "copy.json"
    copy.parent.mkdir()
    shutil.copy(fixture("gpu_a.json"), copy)
    code, out, err = cli("history", "add", fixture("gpu_a.json"), copy, "--db", db)
    assert code == 0, err
    assert "0 run(s) added" in out and "2 already there" in out
    assert dump(db) == before
    # The same measurements re-serialized (other key order and spacing) are the same run.
    doc = load_doc("gpu_b.json")
    resaved = tmp_path / "resaved.json"
    resaved.write_text(json.dumps({"benchmarks": doc["benchmarks"], "context": doc["context"]},
                                  indent=4))
    assert cli("history", "add", resaved, "--db", db)[0] == 0
    assert dump(db) == before


def test_a_run_given_twice_in_one_add_is_stored_once(cli, tmp_path, db):
    copy = tmp_path / "copy.json"
    shutil.copy(fixture("gpu_a.json"), copy)
    code, out, err = cli("history", "add", fixture("gpu_a.json"), copy, "--db", db)
    assert code == 0 and "1 run(s) added" in out and "1 already there" in out
    assert rows(db, "SELECT count(*) FROM runs") == [(1,)]


def test_the_time_is_kept_in_utc(cli, tmp_path, db):
    doc = load_doc("gpu_a.json")
    doc["context"]["date"] = "2026-01-01T02:30:00+02:00"
    assert cli("history", "add", write(tmp_path, "tz.json", doc), "--db", db)[0] == 0
    assert rows(db, "SELECT time FROM runs")[0][0].startswith("2026-01-01 00:30:00")
    doc["context"]["date"] = "yesterday"
    refused(cli, "history", "add", write(tmp_path, "bad.json", doc), "--db", db,
            needles=("its context date 'yesterday' is not an ISO 8601 time",))


def test_a_changed_run_is_another_run(cli, tmp_path, db):
    doc = load_doc("gpu_a.json")
    assert cli("history", "add", write(tmp_path, "a.json", doc), "--db", db)[0] == 0
    doc["benchmarks"][0]["real_time"] *= 1.01
    assert cli("history", "add", write(tmp_path, "b.json", doc), "--db", db)[0] == 0
    assert rows(db, "SELECT count(DISTINCT run_id) FROM runs") == [(2,)]


def _nan_time(tmp_path: Path) -> Path:
    doc = load_doc("gpu_a.json")
    doc["benchmarks"][0]["real_time"] = float("nan")
    return write(tmp_path, "nan.json", doc)


def _zero_time(tmp_path: Path) -> Path:
    doc = load_doc("gpu_a.json")
    doc["benchmarks"][2]["real_time"] = 0
    return write(tmp_path, "zero.json", doc)


def _no_quick(tmp_path: Path) -> Path:
    doc = load_doc("gpu_a.json")
    del doc["context"]["tcbench_quick"]
    return write(tmp_path, "noquick.json", doc)


def _nan_counter(tmp_path: Path) -> Path:
    doc = load_doc("gpu_a.json")
    doc["benchmarks"][1]["tflops"] = float("inf")
    return write(tmp_path, "inf.json", doc)


@pytest.mark.parametrize("bad, needle", [
    (lambda t: fixture("bad/not_json.json"), "is not JSON"),
    (lambda t: fixture("bad/not_gbench.json"), "is not Google Benchmark output"),
    (lambda t: fixture("bad/empty.json"), "holds no benchmarks"),
    (lambda t: fixture("plain.json"), "has no tcbench provenance"),
    (_no_quick, "quick or a full run is unknown"),
    (_nan_time, "is NaN"),
    (_zero_time, "is 0 ms, outside its physical range (> 0)"),
    (_nan_counter, "tflops of repetition 1 is +Inf"),
    (lambda t: t / "nothing-here", "no such file or folder"),
    (lambda t: (t / "empty-dir").mkdir() or t / "empty-dir", "no results.json and no *.json"),
])
def test_bad_input_is_one_sentence_and_writes_nothing(cli, tmp_path, db, bad, needle):
    assert cli("history", "add", fixture("gpu_b.json"), "--db", db)[0] == 0
    before = dump(db)
    # The good file named first is not stored either: every input is checked before writing.
    refused(cli, "history", "add", fixture("gpu_a.json"), bad(tmp_path), "--db", db,
            needles=(needle,))
    assert dump(db) == before


def test_bad_input_in_a_separate_process(tmp_path, db):
    """As a user runs it: one sentence, exit 2, no traceback, no database file."""
    assert_one_line_error(tcbench("history", "add", str(fixture("plain.json")), "--db", str(db)),
                          "has no tcbench provenance")
    assert not db.exists()


def test_unusable_databases_are_one_sentence(cli, tmp_path):
    closed = hd.free_port()
    refused(cli, "history", "add", fixture("gpu_a.json"), "--db",
            f"postgresql://tcbench:secret@127.0.0.1:{closed}/history",
            needles=(f"cannot use the history database postgresql://tcbench:***@127.0.0.1:{closed}"
                     "/history", "Connection refused"))
    a_file = tmp_path / "file"
    a_file.write_text("x")
    refused(cli, "history", "add", fixture("gpu_a.json"), "--db", a_file / "h.sqlite",
            needles=("cannot create the folder of",))
    refused(cli, "history", "add", fixture("gpu_a.json"), "--db", a_file,
            needles=("is not an SQLite database",))
    assert a_file.read_text() == "x"
    refused(cli, "history", "add", fixture("gpu_a.json"), "--db", tmp_path,
            needles=("is a folder, not an SQLite database file",))
    for url, needle in (("mysql://u@h/db", "must be SQLite or PostgreSQL, not 'mysql'"),
                        ("sqlite://", "names no SQLite file"),
                        ("postgresql://u@h:notaport/db", "is not a database URL")):
        refused(cli, "history", "check", "--db", url, needles=(needle,))
    refused(cli, "history", "check", "--db", tmp_path / "none.sqlite",
            needles=("there is no history database at",))
    assert not (tmp_path / "none.sqlite").exists()


@pytest.mark.parametrize("command", [["add", str(fixture("gpu_a.json"))], ["check"],
                                     ["dashboard", "--out", "DASH"]])
def test_a_database_that_is_not_tcbench_s_is_refused(cli, tmp_path, command):
    db = tmp_path / "other.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("CREATE TABLE schema_version (version INTEGER)")  # someone else's
        conn.execute("INSERT INTO users (name) VALUES ('ada')")
    before = db.read_bytes()
    command = [c.replace("DASH", str(tmp_path / "dash")) for c in command]
    refused(cli, "history", *command, "--db", db,
            needles=("is not a tcbench history database (it holds tables schema_version, users "
                     "and no tcbench schema_version)",))
    assert db.read_bytes() == before and not (tmp_path / "dash").exists()


def test_a_newer_schema_is_refused(cli, db):
    assert cli("history", "add", fixture("gpu_a.json"), "--db", db)[0] == 0
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    before = dump(db)
    refused(cli, "history", "add", fixture("gpu_b.json"), "--db", db,
            needles=("has schema version 99, newer than this tcbench knows (4)",))
    assert dump(db) == before


def test_an_older_schema_is_migrated(cli, db):
    """Schema 1 had no run_values; migrating fills it from each run's stored context, exactly
    as schema 2 stores it when a run is added."""
    assert cli("history", "add", fixture("gpu_a.json"), "--db", db)[0] == 0
    want = sorted(rows(db, "SELECT run, key, value FROM run_values"))
    assert len(want) > 20
    arrays = rows(db, "SELECT * FROM run_arrays")
    with sqlite3.connect(db) as conn:  # what schema 1 was
        conn.execute("DROP TABLE run_values")
        conn.execute("DROP TABLE run_arrays")
        conn.execute("UPDATE schema_version SET version = 1")
    code, out, err = cli("history", "check", "--db", db)
    assert code == 0, err
    assert rows(db, "SELECT component, version FROM schema_version") == [("tcbench-history", 4)]
    assert sorted(rows(db, "SELECT run, key, value FROM run_values")) == want
    assert rows(db, "SELECT * FROM run_arrays") == arrays  # schema 4's, built from results
    assert cli("history", "add", fixture("gpu_b.json"), "--db", db)[0] == 0
    assert rows(db, "SELECT count(*) FROM runs") == [(2,)]


def test_the_schema_is_created_with_its_version(cli, db):
    assert cli("history", "add", fixture("gpu_a.json"), "--db", db)[0] == 0
    tables = {r[0] for r in rows(db, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"schema_version", "runs", "benchmarks", "results", "counters", "run_values",
                      "run_arrays"}
    assert rows(db, "SELECT component, version FROM schema_version") == [("tcbench-history", 4)]


def test_a_run_folder_a_gpu_check_folder_and_a_fleet_folder(cli, tmp_path, db):
    # A tcbench run folder without results.json: its per-binary files are one run.
    run = tmp_path / "run"
    run.mkdir()
    doc = load_doc("gpu_a.json")
    half = len(doc["benchmarks"]) // 2
    cut = next(i for i in range(half, len(doc["benchmarks"]))
               if doc["benchmarks"][i]["run_name"] != doc["benchmarks"][i - 1]["run_name"])
    write(run, "bench_one.json", {"context": doc["context"], "benchmarks": doc["benchmarks"][:cut]})
    write(run, "bench_two.json", {"context": doc["context"], "benchmarks": doc["benchmarks"][cut:]})
    # A gpu_check.sh output folder: results/ and the GPU state it recorded before the suite.
    check = tmp_path / "gpu-check"
    (check / "results").mkdir(parents=True)
    shutil.copy(fixture("gpu_b.json"), check / "results" / "results.json")
    uuid = load_doc("gpu_b.json")["context"]["gpu_uuid"]
    (check / "nvidia-smi-before.txt").write_text(
        "== 2026-01-01T00:00:00Z\n(nvidia-smi's table)\n"
        "index, name, pci.bus_id, uuid, driver_version, pstate, clocks.current.sm [MHz], "
        "clocks.current.memory [MHz], clocks.max.sm [MHz], clocks.max.memory [MHz], "
        "temperature.gpu, power.draw [W], power.limit [W], clocks_event_reasons.active\n"
        f"0, Fixture GPU B, 00000000:17:00.0, {uuid}, 580.65.06, P0, 1755 MHz, 2619 MHz, "
        "1980 MHz, 2619 MHz, 41, 83.17 W, 700.00 W, 0x0000000000000001\n")
    (check / "summary.txt").write_text("PASSED\n")
    # A fleet folder: every task folder with a results.json.
    fleet = tmp_path / "fleet"
    (fleet / "_fleet").mkdir(parents=True)
    (fleet / "_fleet" / "manifest.json").write_text('{"version": 1, "jobs": []}')
    for task, name in (("a100/node1-0", "gpu_c.json"), ("h100/node2-0", "fp8_gpu_h.json")):
        (fleet / task).mkdir(parents=True)
        shutil.copy(fixture(name), fleet / task / "results.json")
    (fleet / "a100" / "node3-0").mkdir()  # a task that wrote nothing
    code, out, err = cli("history", "add", run, check, fleet, "--db", db)
    assert code == 0, err
    assert "4 run(s) added" in out
    by_gpu = dict(rows(db, "SELECT gpu_name, source FROM runs"))
    assert set(by_gpu) == {"Fixture GPU A", "Fixture GPU B", "Fixture GPU C",
                           "Fixture GPU H (fp8)"}
    assert by_gpu["Fixture GPU A"] == str(run)
    count = rows(db, "SELECT count(*) FROM results r JOIN runs u ON u.id = r.run "
                     "WHERE u.gpu_name = 'Fixture GPU A'")
    assert count == [(len({r["run_name"] for r in doc["benchmarks"]}),)]
    ((draw, limit),) = rows(db, "SELECT power_draw_w, power_limit_w FROM runs "
                                "WHERE gpu_name = 'Fixture GPU B'")
    assert (draw, limit) == (83.17, 700.0)
    smi = dict(rows(db, "SELECT key, value FROM run_values v JOIN runs u ON u.id = v.run "
                        "WHERE u.gpu_name = 'Fixture GPU B' AND key LIKE 'nvidia_smi.%'"))
    assert smi["nvidia_smi.clocks.current.sm_MHz"] == 1755.0
    assert smi["nvidia_smi.temperature.gpu"] == 41.0
    # The fleet folder again: its runs are there already.
    assert cli("history", "add", fleet, "--db", db)[1].startswith("tcbench history: 0 run(s)")


def test_an_empty_fleet_folder_is_one_sentence(cli, tmp_path, db):
    fleet = tmp_path / "fleet"
    (fleet / "_fleet").mkdir(parents=True)
    (fleet / "_fleet" / "manifest.json").write_text('{"version": 1, "jobs": []}')
    refused(cli, "history", "add", fleet, "--db", db,
            needles=("is a fleet folder with no finished task",))
    assert not db.exists()


def test_two_adds_at_the_same_moment(tmp_path, db):
    """Two processes add 12 runs each, one transaction per run, started together; 6 runs are in
    both: all 18 land once, with all their rows."""
    names = hd.names(8)
    docs = hd.step_history(18, names, np.random.default_rng(7))
    paths = hd.write_runs(tmp_path / "runs", docs)
    procs = hd.concurrent_adds(str(db), [paths[:12], paths[6:]], tmp_path, REPO)
    for p in procs:
        assert p.returncode == 0, p.stderr
    added = sum(int(line.split()[2]) for p in procs for line in p.stdout.splitlines()
                if " run(s) added" in line)
    assert added == 18
    assert rows(db, "SELECT count(*), count(DISTINCT run_id) FROM runs") == [(18, 18)]
    assert rows(db, "SELECT count(*) FROM results") == [(18 * len(names),)]
    assert rows(db, "SELECT count(*) FROM benchmarks") == [(len(names),)]


def test_runs_read_in_a_child_are_the_runs_read_here(cli, tmp_path, db, monkeypatch):
    """A large input is read in a forked child (and hashed in a child of that one) while add
    imports the database layer: the same runs come back as read in this process, and a bad
    value is the same one sentence with nothing written. (The thresholds are lowered to 0 here,
    so that the fixtures take that path.)"""
    paths = [fixture("gpu_a.json"), fixture("gpu_b.json")]
    here = ingest.read(paths)
    monkeypatch.setattr(ingest, "READ_IN_CHILD_FROM", 0)
    monkeypatch.setattr(ingest, "HASH_IN_CHILD_FROM", 0)
    child = ingest.read(paths)
    assert [r.run_id for r in child] == [r.run_id for r in here] == [
        ingest.run_id(results.load(p)) for p in paths]
    assert [(r.results, r.context, r.columns) for r in child] == [
        (r.results, r.context, r.columns) for r in here]
    assert cli("history", "add", *paths, "--db", db)[0] == 0
    before = dump(db)
    refused(cli, "history", "add", _nan_time(tmp_path), "--db", db, needles=("is NaN",))
    assert dump(db) == before


def test_add_says_when_runs_are_synthetic(cli, tmp_path, db):
    """A run whose context carries tcbench_synthetic is stored, and add says so in one line, as
    compare and report mark such inputs; a run without it gets no such line."""
    code, out, err = cli("history", "add", fixture("gpu_a.json"), fixture("gpu_b.json"),
                         "--db", db)
    assert code == 0, err
    (line,) = [ln for ln in out.splitlines() if "SYNTHETIC DATA" in ln]
    assert line == ("tcbench history: SYNTHETIC DATA: 2 of the 2 run(s) (gpu_a.json, gpu_b.json) "
                    "carry the context key tcbench_synthetic: test fixtures, not measurements; "
                    "the history keeps them, and its dashboard marks them.")
    real = load_doc("gpu_c.json")
    del real["context"]["tcbench_synthetic"]
    code, out, err = cli("history", "add", write(tmp_path, "real.json", real), "--db", db)
    assert code == 0 and "SYNTHETIC" not in out + err
