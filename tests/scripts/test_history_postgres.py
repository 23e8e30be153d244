"""tcbench history on a real PostgreSQL server, started for these tests (postgres_server.py).

Without PostgreSQL installed the tests skip, naming why; with TCBENCH_REQUIRE_POSTGRES=1 (CI,
where .ci/run installs it) they fail instead. Each test gets its own fresh database. The rows are
read back with psycopg directly, not through the tools' own queries.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

import history_data as hd
from conftest import REPO, fixture, load_doc
from postgres_server import SUPERUSER, PostgresServer, PostgresUnavailable


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


# ---------------------------------------------------------------------------------------------
# A server that fails mid-add: one sentence, nothing from the driver's logger, no SQL. Each add
# is a process of its own, as a user runs it: in pytest's process its logging plugin would catch
# the driver's records before they reached the terminal.

def one_sentence(proc, *needles: str) -> str:
    """The add failed with exit 2 and one line on stderr that holds no connection parameters
    (a driver's log record names host=, port=, user=, database=) and no SQL."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("tcbench: ") and line.endswith("."), line
    for word in ("host=", "user=", "database=", "LINE ", "INSERT", "CREATE TABLE", "SELECT",
                 "Traceback", "psycopg", "sqlalchemy"):
        assert word not in line, (word, line)
    for needle in needles:
        assert needle in line, (needle, line)
    return line


def adding(url: str, path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO / "scripts"))
    return subprocess.Popen([sys.executable, "-m", "tcbench_tools", "history", "add", str(path),
                             "--db", url], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def finished(proc: subprocess.Popen) -> subprocess.CompletedProcess:
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def big_run(tmp_path) -> Path:
    """One run of 2000 benchmarks: its results go in by the driver's pipeline (executemany)."""
    doc = hd.run_doc({n: [1e-4, 1.1e-4] for n in hd.names(2000)})
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc))
    return path


def waiting_backend(url: str, holder, timeout: float = 30.0) -> int:
    """The server process of the add that waits on a lock the holder has."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = holder.execute("SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                               "AND datname = current_database() AND pid <> pg_backend_pid()"
                               ).fetchall()
        if found:
            return found[0][0]
        time.sleep(0.05)
    raise AssertionError("the add never waited on the lock")


def test_a_permission_refused_mid_add_is_one_sentence(cli, server, url, tmp_path):
    """A role that may read the history and add runs, but not their results: the refusal comes
    inside the driver's pipeline, whose failure psycopg logged (host, port, user and database)
    before the sentence. And a role that may not create the tables: PostgreSQL's message ended
    with the statement (LINE 2: CREATE TABLE schema_version ...)."""
    import psycopg

    role = f"r_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
    as_role = url.replace(f"{SUPERUSER}@", f"{role}@")
    one_sentence(subprocess.run([sys.executable, "-m", "tcbench_tools", "history", "add",
                                 str(fixture("gpu_a.json")), "--db", as_role],
                                capture_output=True, text=True,
                                env=dict(os.environ, PYTHONPATH=str(REPO / "scripts"))),
                 "refused the operation: permission denied for schema public.")
    assert cli("history", "add", fixture("gpu_a.json"), "--db", url)[0] == 0
    query(url, f"GRANT USAGE ON SCHEMA public TO {role}")
    query(url, f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
    query(url, f"GRANT INSERT ON runs, benchmarks TO {role}")
    query(url, f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}")
    line = one_sentence(finished(adding(as_role, big_run(tmp_path))),
                        "permission denied for table results.")
    assert line.startswith(f"tcbench: the history database {as_role} refused the operation")
    assert query(url, "SELECT count(*) FROM runs") == [(1,)]  # nothing of the refused run


def test_the_server_ending_the_connection_mid_add_is_one_sentence(server, url, tmp_path):
    """The add's connection ended by the server while a statement of the add waits on a lock
    (pg_terminate_backend, as an administrator or a restart does): PostgreSQL's message ended
    with the statement (LINE 2: FROM runs)."""
    import psycopg

    assert finished(adding(url, fixture("gpu_b.json"))).returncode == 0
    with psycopg.connect(url) as holder:
        holder.execute("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE")
        proc = adding(url, fixture("gpu_a.json"))
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (waiting_backend(url, admin),))
        one_sentence(finished(proc), "terminating connection due to administrator command.")


def test_the_server_dying_mid_add_is_one_sentence(tmp_path):
    """A server of its own, stopped the way a crash stops it (pg_ctl stop -m immediate: every
    server process ends at once, nothing is written) while the add waits for the history's
    lock."""
    import psycopg

    pg = PostgresServer()
    try:
        pg.start()
    except PostgresUnavailable as exc:
        if os.environ.get("TCBENCH_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL could not start and TCBENCH_REQUIRE_POSTGRES=1: {exc}")
        pytest.skip(f"no PostgreSQL server: {exc}")
    try:
        url = pg.create_database("dies")
        holder = psycopg.connect(url, autocommit=True)
        holder.execute("SELECT pg_advisory_lock(%s)", (0x74636268,))  # store.PG_LOCK_KEY
        proc = adding(url, big_run(tmp_path))
        waiting_backend(url, holder)
        pg.crash()
        one_sentence(finished(proc), f"cannot use the history database {url}:")
    finally:
        pg.stop()


def test_a_disk_that_fills_mid_add_is_one_sentence(cli, server, url, tmp_path):
    """The history's tables on a 1 MiB file system (a tmpfs tablespace), filled by a run of
    2000 benchmarks: the server refuses to extend a file inside the driver's pipeline, which
    psycopg logged (host, port, user, database) before the sentence."""
    mount = server.small_tablespace("tiny", "1m")
    if mount is None:
        pytest.skip("mounting a 1 MiB tmpfs for a tablespace needs CAP_SYS_ADMIN here")
    import psycopg

    database = url.rsplit("/", 1)[1]
    try:
        query(server.url(), f'ALTER DATABASE "{database}" SET default_tablespace = tiny')
        line = one_sentence(finished(adding(url, big_run(tmp_path))), "No space left on device")
        assert line.endswith("; check free disk space.")
    finally:
        try:
            with psycopg.connect(server.url(), autocommit=True) as conn:
                conn.execute(f'DROP DATABASE "{database}"')
        finally:
            server.drop_tablespace("tiny", mount)
