"""tcbench history on a real PostgreSQL server, started for these tests (postgres_server.py).

Without PostgreSQL installed the tests skip, naming why; with TCBENCH_REQUIRE_POSTGRES=1 (CI,
where .ci/run installs it) they fail instead. Each test gets its own fresh database. The rows are
read back with psycopg directly, not through the tools' own queries.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid

import numpy as np
import pytest

import history_data as hd
from conftest import REPO, fixture, load_doc
from postgres_server import PostgresServer, PostgresUnavailable


@pytest.fixture(scope="module")
def server():
    try:
        pg = PostgresServer()
        pg.start()
    except PostgresUnavailable as exc:
        if os.environ.get("TCBENCH_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL could not start and TCBENCH_REQUIRE_POSTGRES=1: {exc}")
        pytest.skip(f"no PostgreSQL server: {exc}")
    try:
        yield pg
    finally:
        pg.stop()


@pytest.fixture
def url(server) -> str:
    return server.create_database(f"h_{uuid.uuid4().hex[:12]}")


def query(url: str, sql: str, *args) -> list[tuple]:
    """Rows of one statement (none for a statement without a result), committed."""
    import psycopg

    with psycopg.connect(url, connect_timeout=10) as conn:
        cursor = conn.execute(sql, args)
        return cursor.fetchall() if cursor.description is not None else []


def test_add_the_same_run_twice_and_check(cli, url):
    code, out, err = cli("history", "add", fixture("gpu_a.json"), fixture("gpu_b.json"),
                         "--db", url)
    assert code == 0, err
    assert "2 run(s) added" in out and f"in {url}" in out
    counts = query(url, "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM results), "
                        "(SELECT count(*) FROM counters), (SELECT count(*) FROM run_values)")
    code, out, err = cli("history", "add", fixture("gpu_a.json"), "--db", url)
    assert code == 0 and "0 run(s) added" in out and "1 already there" in out
    assert query(url, "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM results), "
                      "(SELECT count(*) FROM counters), "
                      "(SELECT count(*) FROM run_values)") == counts
    ctx = load_doc("gpu_a.json")["context"]
    assert query(url, "SELECT git_sha, gpu_uuid, driver_version, quick, repetitions FROM runs "
                      "WHERE gpu_name = %s", ctx["gpu_name"]) == [
        (ctx["git_sha"], ctx["gpu_uuid"], ctx["driver_version"], False, 5)]
    code, out, err = cli("history", "check", "--db", url, "--json")
    assert code == 0, err
    assert json.loads(out)["runs"] == 2


def test_one_schema_for_both_databases(cli, url, tmp_path):
    """The same tables and columns, created from the one SQLAlchemy definition."""
    sqlite_db = tmp_path / "h.sqlite"
    assert cli("history", "add", fixture("gpu_a.json"), "--db", sqlite_db)[0] == 0
    assert cli("history", "add", fixture("gpu_a.json"), "--db", url)[0] == 0
    with sqlite3.connect(sqlite_db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        lite = {t: [r[1] for r in conn.execute(f"PRAGMA table_info({t})")] for t in tables}
    pg_rows = query(url, "SELECT table_name, column_name FROM information_schema.columns "
                         "WHERE table_schema = 'public' ORDER BY table_name, ordinal_position")
    pg: dict[str, list[str]] = {}
    for name, column in pg_rows:
        pg.setdefault(name, []).append(column)
    assert pg == lite
    # And the same rows: the run id is the content's, whichever database keeps it.
    sql = ("SELECT run_id, name, status, median, p10, p90, results.repetitions FROM runs "
           "JOIN results ON results.run = runs.id JOIN benchmarks ON benchmarks.id = "
           "results.benchmark")
    with sqlite3.connect(sqlite_db) as conn:
        lite_rows = sorted(conn.execute(sql).fetchall(), key=str)
    assert sorted(query(url, sql), key=str) == lite_rows and len(lite_rows) == 20


def test_two_adds_at_the_same_moment(tmp_path, url):
    names = hd.names(8)
    docs = hd.step_history(18, names, np.random.default_rng(8))
    paths = hd.write_runs(tmp_path / "runs", docs)
    procs = hd.concurrent_adds(url, [paths[:12], paths[6:]], tmp_path, REPO)
    for p in procs:
        assert p.returncode == 0, p.stderr
    assert query(url, "SELECT count(*), count(DISTINCT run_id) FROM runs") == [(18, 18)]
    assert query(url, "SELECT count(*) FROM results") == [(18 * len(names),)]
    assert query(url, "SELECT count(*) FROM benchmarks") == [(len(names),)]


def test_bad_input_writes_nothing(cli, url):
    code, out, err = cli("history", "add", fixture("gpu_a.json"), fixture("plain.json"),
                         "--db", url)
    assert code == 2 and "has no tcbench provenance" in err
    # Nothing was written, not even the schema: the inputs are checked first.
    assert query(url, "SELECT count(*) FROM information_schema.tables "
                      "WHERE table_schema = 'public'") == [(0,)]


def test_a_database_that_is_not_tcbench_s_is_refused(cli, url):
    query(url, "CREATE TABLE accounts (id serial PRIMARY KEY, owner text)")  # commits on close
    code, out, err = cli("history", "add", fixture("gpu_a.json"), "--db", url)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "is not a tcbench history database (it holds tables accounts" in err
    assert query(url, "SELECT table_name FROM information_schema.tables "
                      "WHERE table_schema = 'public'") == [("accounts",)]


def test_an_older_schema_is_migrated(cli, url):
    assert cli("history", "add", fixture("gpu_a.json"), "--db", url)[0] == 0
    want = sorted(query(url, "SELECT run, key, value FROM run_values"))
    arrays = query(url, "SELECT * FROM run_arrays")
    query(url, "DROP TABLE run_values")  # what schema 1 was
    query(url, "DROP TABLE run_arrays")
    query(url, "ALTER TABLE runs DROP COLUMN incomplete")
    query(url, "UPDATE schema_version SET version = 1")
    code, out, err = cli("history", "check", "--db", url)
    assert code == 0, err
    assert query(url, "SELECT component, version FROM schema_version") == [("tcbench-history", 5)]
    assert query(url, "SELECT incomplete FROM runs") == [(None,)]
    assert sorted(query(url, "SELECT run, key, value FROM run_values")) == want
    assert query(url, "SELECT * FROM run_arrays") == arrays  # schema 4's, built from results


def test_an_unknown_database_name_is_one_sentence(cli, server):
    code, out, err = cli("history", "add", fixture("gpu_a.json"), "--db", server.url("missing"))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("tcbench: cannot use the history database postgresql://") and \
        'database "missing" does not exist' in err
