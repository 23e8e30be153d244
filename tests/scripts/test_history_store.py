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
from conftest import (
    REPO,
    STORED,
    assert_one_line_error,
    fixture,
    load_doc,
    tcbench,
    write,
)
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
    (lambda t: (t / "empty-dir").mkdir() or t / "empty-dir", "holds no run: no results.json"),
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
            needles=("lies under a path that is not a folder",))
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
            needles=("has schema version 99, newer than this tcbench knows (5)",))
    assert dump(db) == before


SCHEMAS = STORED / "history_schemas"  # a real database of each older version, as SQL text


def restored(tmp_path: Path, version: int, edit: str = "") -> Path:
    """A fresh SQLite file holding the checked-in database of ``version`` (its make_dumps.py says
    how each was made, with the code of the commit that introduced it), then ``edit`` (SQL)."""
    db = tmp_path / f"v{version}.sqlite"
    with sqlite3.connect(db) as conn:
        conn.executescript((SCHEMAS / f"v{version}.sql").read_text() + edit)
    return db


def table_rows(db: Path, name: str, leave_out: tuple[str, ...] = ()) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        columns = [c[1] for c in conn.execute(f"PRAGMA table_info({name})")
                   if c[1] not in leave_out]
        return sorted(conn.execute(f"SELECT {', '.join(columns)} FROM {name}").fetchall())


def layout(db: Path) -> dict[str, list[tuple]]:
    """Every table's columns: name, SQLite's type affinity (a VARCHAR(N) of schema 2 is TEXT to
    SQLite), not null, primary key position."""
    def affinity(declared: str) -> str:
        return "TEXT" if "CHAR" in declared or declared == "TEXT" else declared

    with sqlite3.connect(db) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {n: [(c[1], affinity(c[2]), c[3], c[5])
                    for c in conn.execute(f"PRAGMA table_info({n})")] for n in sorted(names)}


def numeric_context(context: str) -> dict[str, float]:
    """What run_values holds for a run, computed here from its stored context: every value that
    is a finite number, or text that reads as one in ASCII, except the four with a column."""
    out = {}
    for key, raw in json.loads(context).items():
        if key in ("sm_clock_mhz", "mem_clock_mhz", "power_draw_w", "power_limit_w"):
            continue
        if isinstance(raw, str) and raw.strip() and raw.strip().isascii():
            try:
                raw = float(raw)
            except ValueError:
                continue
        if isinstance(raw, (int, float)) and not isinstance(raw, bool) and np.isfinite(raw):
            out[key] = float(raw)
    return out


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_every_older_schema_migrates_in_place(cli, tmp_path, version):
    """A database of each older version, written by the code of the commit that introduced it,
    is migrated on its next check: the layout a new database has, every row kept, what a later
    version added built from what is there, and the run its context marks incomplete marked."""
    db = restored(tmp_path, version)
    old = {n: table_rows(db, n) for n in ("runs", "benchmarks", "results", "counters")}
    code, out, err = cli("history", "check", "--db", db)
    assert code == 0, err
    assert "INCOMPLETE: 1 run(s)" in out
    fresh = tmp_path / "fresh.sqlite"
    assert cli("history", "add", fixture("gpu_a_single.json"), "--db", fresh)[0] == 0
    assert layout(db) == layout(fresh)
    version_of = "SELECT version FROM schema_version"
    assert rows(db, version_of) == rows(fresh, version_of) == [(5,)]
    for name, before in old.items():
        assert table_rows(db, name, leave_out=("incomplete",)) == before, name
    contexts = dict(rows(db, "SELECT id, context FROM runs"))
    for run, context in contexts.items():
        values = dict(rows(db, "SELECT key, value FROM run_values WHERE run = ?", run))
        assert values == pytest.approx(numeric_context(context)) and len(values) > 20
    for run, ids, median in rows(db, "SELECT run, benchmarks, median FROM run_arrays"):
        ok = rows(db, "SELECT benchmark, median FROM results WHERE run = ? AND status = 'ok' "
                      "ORDER BY benchmark", run)
        assert list(np.frombuffer(ids, "<i4")) == [b for b, _ in ok]
        assert list(np.frombuffer(median, "<f8")) == [m for _, m in ok]
    assert sorted(r[0] for r in rows(db, "SELECT run FROM run_arrays")) == sorted(contexts)
    marked = rows(db, "SELECT incomplete FROM runs ORDER BY time")
    assert marked == [(None,), ("run-1.json: its run stopped early (interrupted (SIGINT): 1 of 2 "
                                "binaries ran)",)]
    assert cli("history", "add", fixture("gpu_b.json"), "--db", db)[0] == 0
    assert rows(db, "SELECT count(*) FROM runs") == [(3,)]


def test_version_1_from_its_commit_fills_run_values_as_version_2_stored_them(cli, tmp_path):
    """Versions 1 and 2 were made by the same commit from the same runs: migrating 1 must give
    the run_values 2 wrote when the runs were added."""
    v1, v2 = restored(tmp_path, 1), restored(tmp_path, 2)
    assert cli("history", "check", "--db", v1)[0] == 0
    assert table_rows(v1, "run_values") == table_rows(v2, "run_values")


@pytest.mark.parametrize("edit", [
    "DROP TABLE run_values; UPDATE schema_version SET version = 1;",  # run_arrays left
    "UPDATE schema_version SET version = 1;",  # every later table left
    "UPDATE schema_version SET version = 3;",
])
def test_a_database_labelled_older_than_its_tables_migrates(cli, tmp_path, edit):
    """A history labelled with an older version than the tables it holds (a later table kept,
    or copied in, when the label was changed): each migration step adds only what is missing.
    Before, a version-1 label over run_arrays failed on a UNIQUE constraint of run_arrays."""
    db = restored(tmp_path, 4, edit)
    arrays = table_rows(db, "run_arrays")
    code, out, err = cli("history", "check", "--db", db)
    assert code == 0, err
    assert table_rows(db, "run_arrays") == arrays
    assert rows(db, "SELECT count(*) FROM run_values WHERE run = 1")[0][0] > 20


def test_the_schema_is_created_with_its_version(cli, db):
    assert cli("history", "add", fixture("gpu_a.json"), "--db", db)[0] == 0
    tables = {r[0] for r in rows(db, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"schema_version", "runs", "benchmarks", "results", "counters", "run_values",
                      "run_arrays"}
    assert rows(db, "SELECT component, version FROM schema_version") == [("tcbench-history", 5)]


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
    # A gpu_check.sh output folder: its run folder results/ with the GPU state before the suite.
    check = tmp_path / "gpu-check"
    (check / "results").mkdir(parents=True)
    shutil.copy(fixture("gpu_b.json"), check / "results" / "results.json")
    uuid = load_doc("gpu_b.json")["context"]["gpu_uuid"]
    (check / "results" / "nvidia-smi-before.txt").write_text(
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
            needles=("holds no run: no results.json or *.json files in it or in its folders",))
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


def _cut(doc: dict, keep: int) -> str:
    """A result file's text cut in the middle of the row after its first ``keep`` rows, as a
    binary stopped there leaves it."""
    text = json.dumps(doc, indent=1)
    at = 0
    for _ in range(keep + 1):
        at = text.index('"run_name"', at + 1)
    return text[:at + 12]


def test_a_gpu_check_output_folder_is_one_run(cli, tmp_path, db):
    """What gpu_check.sh leaves in OUTDIR (docs/gpu-check.md): its summary, steps, answers.json
    and the GPU state beside results/, which holds one file per step (tier 1 and tier 3 of a
    binary apart) and a binary's file cut short with its row file. Before, the answers.json
    beside results/ made add read OUTDIR as a run folder, and refuse it."""
    out = tmp_path / "gc"
    for sub in ("logs", "plan", "results", "device-tests", "torch", "studies"):
        (out / sub).mkdir(parents=True)
    for name, text in (("summary.txt", "-- PASSED\n"), ("steps.tsv", "step\tstatus\n"),
                       ("answers.md", "# answers\n")):
        (out / name).write_text(text)
    (out / "answers.json").write_text(json.dumps({"questions": []}))
    doc = hd.run_doc({n: [1e-4, 1.1e-4] for n in hd.names(6)}, quick=True)
    rows_of = {n: [r for r in doc["benchmarks"] if r["run_name"].startswith(n + "/")]
               for n in hd.names(6)}
    names = hd.names(6)
    for stem, part in (("bench_a.t1", names[:2]), ("bench_a.t3", names[2:4])):
        write(out / "results", f"{stem}.json",
              {"context": doc["context"], "benchmarks": [r for n in part for r in rows_of[n]]})
    cut = {"context": doc["context"], "benchmarks": [r for n in names[4:] for r in rows_of[n]]}
    (out / "results" / "bench_b.t1.json").write_text(_cut(cut, 2))  # names[4] only
    code, out_text, err = cli("history", "add", out, "--db", db)
    assert code == 0, err
    assert "1 run(s) added (5 benchmark results)" in out_text
    assert "INCOMPLETE: bench_b.t1.json was cut short" in out_text
    assert rows(db, "SELECT source FROM runs") == [(str(out / "results"),)]


def _history_with_a_regression(tmp_path: Path, cut: bool) -> tuple[list[Path], list[dict]]:
    """12 nightly runs of 4 benchmarks, the last 3 of them 30 % slower: complete, or each cut
    short after its first 6 rows (3 benchmarks of 2 repetitions kept)."""
    names = hd.names(4)
    docs = hd.step_history(12, names, np.random.default_rng(3), reps=2, cv=(0.005, 0.01),
                           steps={n: (9, 1.3) for n in names})
    paths = hd.write_runs(tmp_path / "runs", docs)
    if cut:
        for path, doc in zip(paths[9:], docs[9:]):
            path.write_text(_cut(doc, 6))
    return paths, docs


def test_a_cut_short_run_is_stored_marked_incomplete_and_is_no_evidence(cli, tmp_path, db):
    """Three result files cut short, 30 % slower than the nine whole runs before them: add says
    each was cut short (rows kept, and which never ran when the row file says), stores it marked
    incomplete, and check finds no change from them. The same three runs whole fail the gate."""
    whole = tmp_path / "whole.sqlite"
    assert cli("history", "add", *_history_with_a_regression(tmp_path / "w", False)[0],
               "--db", whole)[0] == 0
    assert cli("history", "check", "--db", whole)[0] == 1
    paths, docs = _history_with_a_regression(tmp_path / "c", True)
    # The last one has its row file: the planned benchmarks that never ran are named.
    planned = hd.names(4)
    (paths[-1].parent / (paths[-1].name + "l")).write_text("\n".join(
        [json.dumps({"context": docs[-1]["context"], "tcbench_planned": planned}),
         *(json.dumps(r) for r in docs[-1]["benchmarks"][:2])]) + "\n")
    code, out, err = cli("history", "add", *paths, "--db", db)
    assert code == 0, err
    notes = [ln for ln in out.splitlines() if "INCOMPLETE" in ln]
    assert len(notes) == 3
    assert "run-0009.json was cut short; its 6 complete row(s) were kept" in notes[0]
    assert ("run-0011.json is not complete JSON; its 2 finished row(s) were read from "
            "run-0011.jsonl" in notes[2])
    assert f"3 planned benchmark(s) never ran: {', '.join(planned[1:])}" in notes[2]
    assert all(n.endswith("stored marked incomplete, so check takes no change from it.")
               for n in notes)
    marked = rows(db, "SELECT source, incomplete FROM runs WHERE incomplete IS NOT NULL")
    assert sorted(Path(s).name for s, _ in marked) == ["run-0009.json", "run-0010.json",
                                                       "run-0011.json"]
    code, out, err = cli("history", "check", "--db", db, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["incomplete_runs"] == 3 and result["change_points"] == []
    code, out, err = cli("history", "check", "--db", db)
    assert "INCOMPLETE: 3 run(s) were cut short or stopped early" in out
    assert cli("history", "dashboard", "--db", db, "--out", tmp_path / "d")[0] == 0
    assert (tmp_path / "d" / "index.html").read_text().count("incomplete: in no series") == 3


def test_a_run_that_tcbench_run_stopped_early_is_incomplete(cli, tmp_path, db):
    """A merged results.json of a run that stopped before every binary ran (tcbench_incomplete
    in its context) is incomplete too."""
    doc = load_doc("gpu_a.json")
    doc["context"]["tcbench_incomplete"] = "interrupted (SIGINT) after 1 of 3 binaries"
    (tmp_path / "run_0105").mkdir()
    code, out, err = cli("history", "add", write(tmp_path / "run_0105", "results.json", doc),
                         "--db", db)
    assert code == 0, err
    why = ("run_0105/results.json: its run stopped early (interrupted (SIGINT) after 1 of 3 "
           "binaries)")
    assert f"INCOMPLETE: {why}; stored marked incomplete" in out
    assert rows(db, "SELECT incomplete FROM runs") == [(why,)]


@pytest.mark.parametrize("date, words", [
    ("0001-01-01T00:00:00", "lies outside the years 2000-2099 (UTC)"),
    ("0001-01-01T00:00:00+05:00", "lies outside the years a date can hold once converted to UTC"),
    ("9999-12-31T23:59:59-05:00", "lies outside the years a date can hold once converted to UTC"),
    ("9999-12-31T23:59:59", "lies outside the years 2000-2099 (UTC)"),
    ("1999-12-31T23:30:00-01:00", None),  # 2000-01-01 00:30 UTC: stored
    ("1999-12-31T23:30:00+00:00", "lies outside the years 2000-2099 (UTC)"),
    ("2100-01-01T00:00:00", "lies outside the years 2000-2099 (UTC)"),
    ("2026-13-01T00:00:00", "is not an ISO 8601 time"),
    ("2026-01-01T00:00:00+24:00", "is not an ISO 8601 time"),
])
def test_a_date_is_one_sentence_or_a_stored_run(cli, tmp_path, date, words):
    doc = load_doc("gpu_a.json")
    doc["context"]["date"] = date
    db = tmp_path / "h.sqlite"
    code, out, err = cli("history", "add", write(tmp_path, "d.json", doc), "--db", db)
    if words is None:
        assert code == 0, err
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT time FROM runs").fetchone()[0].startswith(
                "2000-01-01 00:30:00")
        return
    assert code == 2 and err.count("\n") == 1, err
    assert words in err and repr(date) in err
    assert not db.exists()


def test_a_context_number_in_other_digits_is_not_a_run_value(cli, tmp_path):
    doc = load_doc("gpu_a.json")
    doc["context"].update({"sm_count": "١٣٢", "fans": "1_000", "clock": "nan", "ok": "1.5e3"})
    db = tmp_path / "h.sqlite"
    assert cli("history", "add", write(tmp_path, "c.json", doc), "--db", db)[0] == 0
    with sqlite3.connect(db) as conn:
        values = dict(conn.execute("SELECT key, value FROM run_values"))
    assert values["ok"] == 1500.0
    assert "sm_count" not in values and "fans" not in values and "clock" not in values
