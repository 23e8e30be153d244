"""The history's databases (history/store.py): SQLite and PostgreSQL store the same runs, and every
database error is one sentence.

The same hostile run (long provenance text, long names, control characters, NUL, quotes and
SQL in every text field, a long skip message) is added to an SQLite file and to a database on the
real PostgreSQL server the tests start; every table is read back through a plain SQLAlchemy
``SELECT *`` (no query of the tools) and the rows must be equal. Before the fix, PostgreSQL refused
that run (``String(64)`` and ``String(16)`` columns) with an internal error that dumped the SQL
and its parameters, while SQLite stored it; a damaged SQLite page escaped as an internal error
from the reader that uses the driver's own cursor.
"""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import properties as p
from conftest import fixture, load_doc, write

LONG = 300
TABLES = ("schema_version", "runs", "benchmarks", "results", "counters", "run_values")
NASTY = "x'; DROP TABLE runs; --\"\\%_\x00\x1b[2K\u202e\U0001f600"

SINGLE = fixture("gpu_a_single.json")


def hostile_run() -> dict:
    doc = load_doc("gpu_a.json")
    ctx = doc["context"]
    ctx.update({
        "git_sha": "f" * LONG,  # schema 2: String(64)
        "tcbench_version": "0.2.0+" + "dev." * 60,
        "compute_capability": "9.0a-" + "sm" * 40,  # schema 2: String(16)
        "driver_version": NASTY * 10,
        "cuda_runtime": "13.0" + " " * 100 + "x",
        "cublaslt_version": NASTY,
        "gpu_uuid": "GPU-" + "0" * 200,
        "host_name": "h" * 1000,  # longer than the one limit: cut to 512, whole in the context
        "gpu_name": "GPU \u00e9\u4e2d\U0001f600 " + NASTY + "y" * 200,
        "k" * 600: 1.5,  # a context key longer than the limit: in the context JSON only
        "nested": {"deep": [NASTY, {"x": 1}]},
        "sm_count": "132",
        "nul\x00key": "7",
        "date": "2026-02-01T03:04:05.123456+05:30",
    })
    bases = sorted({row["run_name"].removesuffix("/manual_time") for row in doc["benchmarks"]})
    # the first name exactly 500 characters long; the others carry every hostile character
    renamed = {b: (b + "/" + "z" * 500)[:500] if i == 0 else f"{b}/{NASTY}"
               for i, b in enumerate(bases)}
    for row in doc["benchmarks"]:
        base = row["run_name"].removesuffix("/manual_time")
        row["run_name"] = row["run_name"].replace(base, renamed[base])
        row["name"] = row["name"].replace(base, renamed[base])
        row.pop("tcbench_args", None)  # names BenchName cannot build: an older file's rows
        if row.get("skipped") or row.get("error_occurred"):
            row["error_message"] = row["skip_message"] = NASTY * 500  # > 1000 characters
        if row.get("run_type") == "iteration" and "tflops" in row:
            row["counter" + NASTY] = 1.25
            row["c" * 400] = 2.5
    return doc


def read_all(url: str) -> dict[str, list[dict]]:
    """Every row of every table, through SQLAlchemy's plain SELECT * (its types normalise the
    drivers' values: datetimes, booleans), sorted; ``runs.added`` (the time of the add) left out."""
    import sqlalchemy as sa

    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    md = sa.MetaData()
    out = {}
    try:
        with engine.connect() as conn:
            md.reflect(conn)
            for name in TABLES:
                table = md.tables[name]
                cols = [c for c in table.c if c.name != "added"]
                rows = conn.execute(sa.select(*cols)).mappings().all()
                out[name] = sorted(({k: _norm(v) for k, v in r.items()} for r in rows), key=repr)
    finally:
        engine.dispose()
    return out


def _norm(value):
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and value[:4].isdigit() and len(value) == 26 and value[10] == " ":
        return value.replace(" ", "T")  # SQLite's DATETIME text
    return value


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def psycopg_url(url: str) -> str:
    return url.replace("postgresql://", "postgresql+psycopg://", 1)


def test_the_same_hostile_run_is_stored_alike_in_both(cli, tmp_path, pg_url):
    run = write(tmp_path, "hostile.json", hostile_run())
    lite = tmp_path / "h.sqlite"
    for db in (lite, pg_url):
        code, out, err = cli("history", "add", run, fixture("gpu_b.json"), "--db", db)
        assert code == 0, err
        assert out.startswith("tcbench history: 2 run(s) added")
    got_lite, got_pg = read_all(sqlite_url(lite)), read_all(psycopg_url(pg_url))
    assert got_lite == got_pg
    hostile = next(r for r in got_lite["runs"] if r["gpu_name"].startswith("GPU \u00e9"))
    ctx = json.loads(hostile["context"])
    assert ctx["git_sha"] == hostile["git_sha"] == "f" * LONG  # whole, in both
    assert len(ctx["host_name"]) == 1000 and len(hostile["host"]) == 512  # the one limit
    assert len(hostile["compute_capability"]) > 16
    assert hostile["time"] == "2026-01-31T21:34:05.123456"  # UTC
    assert "\x00" not in repr(got_lite)  # printable: NUL is written \x00, which PostgreSQL takes
    assert "k" * 600 in ctx and not any(v["key"] == "k" * 600 for v in got_lite["run_values"])
    names = [b["name"] for b in got_lite["benchmarks"]]
    assert max(map(len, names)) == 500 and any("DROP TABLE" in n for n in names)
    # the history reads the same series back from both
    for db in (lite, pg_url):
        code, out, err = cli("history", "check", "--json", "--db", db)
        assert code == 0, err
        assert json.loads(out)["runs"] == 2


def test_a_name_beyond_the_one_limit_is_one_sentence_before_either_database(cli, tmp_path,
                                                                            pg_url):
    doc = load_doc("gpu_a.json")
    for row in doc["benchmarks"][:3]:
        row["name"] = row["run_name"] = "fp16_vs_fp32/" + "n" * 600
        row.pop("tcbench_args", None)
    for key, value, needle in (("benchmarks", doc["benchmarks"], "has a name of 613 characters, "
                                                               "more than the 512"),
                               ("gpu_name", "G" * 513, "its gpu_name has 513 characters")):
        bad = load_doc("gpu_a.json")
        if key == "gpu_name":
            bad["context"]["gpu_name"] = value
        else:
            bad["benchmarks"] = value
        path = write(tmp_path, f"{key}.json", bad)
        for db in (tmp_path / "h.sqlite", pg_url):
            code, out, err = cli("history", "add", path, "--db", db)
            assert code == 2 and needle in err and err.count("\n") == 1, err
    assert not (tmp_path / "h.sqlite").exists()


def test_a_database_error_is_one_short_sentence_without_sql(cli, pg_url):
    """A refusal by the server itself (here a trigger a DBA might add) is exit 2 with the
    server's first line; before, exit 70 with the INSERT statement and every parameter."""
    import psycopg

    assert cli("history", "add", fixture("gpu_a.json"), "--db", pg_url)[0] == 0
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION "
                     "'no new runs: %', repeat('x', 3000); END $$ LANGUAGE plpgsql")
        conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON runs FOR EACH ROW "
                     "EXECUTE FUNCTION refuse()")
    code, out, err = cli("history", "add", fixture("gpu_b.json"), "--db", pg_url)
    assert code == 2, err
    line = err.strip()
    assert line.startswith("tcbench: the history database postgresql://") and \
        "refused the operation: no new runs: xxx" in line and line.endswith("xx [cut].")
    assert len(line) < 400 and "INSERT" not in line and "parameters" not in line
    assert err.count("\n") == 1


def test_an_older_postgresql_schema_with_lengths_is_widened(cli, tmp_path, pg_url):
    """Schema 2 on PostgreSQL had VARCHAR(N) columns: migrating to 3 makes them TEXT, and the run
    that did not fit is stored."""
    import psycopg

    assert cli("history", "add", fixture("gpu_b.json"), "--db", pg_url)[0] == 0
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for table, column, length in (("runs", "git_sha", 64), ("runs", "compute_capability", 16),
                                      ("benchmarks", "name", 1024), ("counters", "name", 128)):
            conn.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE VARCHAR({length})")
        conn.execute("DROP TABLE run_arrays")  # schema 2 had none
        conn.execute("UPDATE schema_version SET version = 2")
    run = write(tmp_path, "hostile.json", hostile_run())
    code, out, err = cli("history", "add", run, "--db", pg_url)
    assert code == 0, err
    with psycopg.connect(pg_url) as conn:
        types = dict(conn.execute("SELECT column_name, data_type FROM information_schema.columns "
                                  "WHERE table_name = 'runs'").fetchall())
        version = conn.execute("SELECT version FROM schema_version").fetchone()[0]
    assert version == 5 and types["git_sha"] == types["compute_capability"] == "text"


def damaged(tmp_path: Path, tables: tuple[str, ...] = ("results", "run_arrays")) -> Path:
    """A history whose tables' first pages are overwritten (the file's header is intact, so
    SQLite opens it, and a reader of such a page fails: 'database disk image is malformed')."""
    db = tmp_path / "h.sqlite"
    for name in ("gpu_a.json", "gpu_b.json", "gpu_c.json"):
        write(tmp_path, "x.json", load_doc(name))
        from tcbench_tools.cli import main

        assert main(["history", "add", str(tmp_path / "x.json"), "--db", str(db)]) == 0
    with sqlite3.connect(db) as conn:
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        roots = [r for (r,) in conn.execute(
            f"SELECT rootpage FROM sqlite_master WHERE name IN ({','.join('?' * len(tables))})",
            tables)]
    assert len(roots) == len(tables)
    with open(db, "r+b") as fh:
        for root in roots:
            fh.seek((root - 1) * page)
            fh.write(b"\xff" * 64)
    return db


@pytest.mark.parametrize("command", [["check"], ["check", "--json"], ["dashboard", "--out", "D"],
                                     ["add", str(fixture("fp8_gpu_h.json"))]])
def test_a_damaged_sqlite_page_is_one_sentence(cli, tmp_path, command, capsys):
    db = damaged(tmp_path)
    capsys.readouterr()
    command = [str(tmp_path / "dash") if c == "D" else c for c in command]
    code, out, err = cli("history", *command, "--db", db)
    assert code == 2, err
    if command[0] == "add":  # a writer runs SQLite's quick_check first
        assert err.startswith(f"tcbench: {db} is damaged: SQLite's quick_check found '")
        assert err.strip().endswith("; restore it from a copy, or give another --db.")
        assert len(err.strip().splitlines()) == 1
    else:
        assert err.strip() == (f"tcbench: {db} is damaged or not an SQLite database (database "
                               "disk image is malformed); restore it from a copy, or give "
                               "another --db.")
    assert not (tmp_path / "dash").exists()


@pytest.mark.parametrize("tables", [("counters",), ("run_values",), ("runs_by_series",)])
def test_damage_where_check_never_reads_is_found_before_a_write(cli, tmp_path, tables, capsys):
    """A damaged page in a table or index that check and the dashboard never read: they pass,
    and the next add names the damage in one sentence (SQLite's quick_check), writing nothing.
    Before, add wrote into the damaged file and said nothing."""
    db = damaged(tmp_path, tables)
    capsys.readouterr()
    assert cli("history", "check", "--db", db)[0] == 0
    before = db.read_bytes()
    code, out, err = cli("history", "add", fixture("fp8_gpu_h.json"), "--db", db)
    assert code == 2 and out == "", (code, out, err)
    (line,) = err.strip().splitlines()
    assert line.startswith(f"tcbench: {db} is damaged: SQLite's quick_check found '")
    assert db.read_bytes() == before


def test_the_check_before_a_write_is_bounded_in_time(cli, tmp_path, monkeypatch):
    """quick_check stops at its time limit and the write goes on: a large history is checked as
    far as the time allows, never for minutes before an add."""
    from tcbench_tools.history import store

    db = tmp_path / "h.sqlite"
    assert cli("history", "add", fixture("gpu_a.json"), "--db", db)[0] == 0
    monkeypatch.setattr(store, "QUICK_CHECK_S", 0.0)
    assert cli("history", "add", fixture("gpu_b.json"), "--db", db)[0] == 0


def _not_a_file(tmp_path: Path, kind: str) -> Path:
    """A --db path to something that is not a regular file (or none yet) of SQLite's."""
    import os
    import socket

    here = tmp_path / "h.sqlite"
    if kind == "fifo":
        os.mkfifo(here)
    elif kind == "fifo journal":  # SQLite reads a hot journal before it reads the database
        assert main_add(here) == 0
        os.mkfifo(f"{here}-journal")
    elif kind == "device":
        here.symlink_to("/dev/zero")
    elif kind == "device wal":
        assert main_add(here) == 0
        Path(f"{here}-wal").symlink_to("/dev/null")
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(here))
        sock.close()
    elif kind == "folder":
        here.mkdir()
    elif kind == "loop":
        here.symlink_to(here)
    elif kind == "loop of two":
        (tmp_path / "a").symlink_to(tmp_path / "b")
        (tmp_path / "b").symlink_to(tmp_path / "a")
        here = tmp_path / "a"
    elif kind == "under a loop":
        (tmp_path / "l").symlink_to(tmp_path / "l")
        here = tmp_path / "l" / "h.sqlite"
    elif kind == "under a file":
        (tmp_path / "f").write_text("x")
        here = tmp_path / "f" / "h.sqlite"
    return here


def main_add(db: Path) -> int:
    from tcbench_tools.cli import main

    return main(["history", "add", str(fixture("gpu_a_single.json")), "--db", str(db)])


KINDS = {"fifo": "is a FIFO (named pipe), not a regular SQLite database file",
         "fifo journal": "-journal is a FIFO (named pipe), not a regular file (SQLite's journal",
         "device": "is a character device, not a regular SQLite database file",
         "device wal": "-wal is a character device, not a regular file (SQLite's write-ahead log",
         "socket": "is a socket, not a regular SQLite database file",
         "folder": "is a folder, not an SQLite database file",
         "loop": "is a symbolic link loop", "loop of two": "is a symbolic link loop",
         "under a loop": "is a symbolic link loop", "under a file": "lies under a path that is "
                                                                   "not a folder"}


@pytest.mark.parametrize("kind", KINDS)
def test_a_database_path_that_is_not_a_file_is_one_sentence_at_once(cli, tmp_path, kind, capsys):
    """--db on a FIFO (and a FIFO as SQLite's journal) hung for ever; on a symbolic link loop it
    was exit 70; a device, a socket, a path under a file were driver errors. Each is one
    sentence and exit 2 at once, for every history command, and nothing is written. A FIFO is
    tried in a separate process with a time limit: a hang is a failure, not a stuck test."""
    import subprocess
    import sys
    import time

    from conftest import REPO

    db = _not_a_file(tmp_path, kind)
    capsys.readouterr()
    before = sorted(p.name for p in tmp_path.iterdir())
    for args in (["add", str(fixture("gpu_b.json"))], ["check"],
                 ["dashboard", "--out", str(tmp_path / "dash")]):
        begin = time.monotonic()
        if kind.startswith("fifo"):
            proc = subprocess.run([sys.executable, "-m", "tcbench_tools", "history", *args,
                                   "--db", str(db)], capture_output=True, text=True, timeout=60,
                                  env={"PYTHONPATH": str(REPO / "scripts"), "PATH": "/usr/bin"})
            code, err = proc.returncode, proc.stderr
        else:
            code, _, err = cli("history", *args, "--db", db)
        assert time.monotonic() - begin < 20
        assert code == 2, (args, code, err)
        (line,) = err.strip().splitlines()
        assert line.startswith("tcbench: ") and line.endswith(".") and KINDS[kind] in line, line
        assert sorted(p.name for p in tmp_path.iterdir()) == before
        if kind.startswith("fifo"):
            break  # one process is enough to show it does not wait (each takes a second)


def test_an_unreadable_database_is_one_sentence(cli, tmp_path, monkeypatch):
    """A history the user may not read (as root, permission bits do not bind: the refusal the
    system would give is made here)."""
    import errno
    import os

    db = tmp_path / "h.sqlite"
    assert main_add(db) == 0
    db.chmod(0)
    if os.geteuid() == 0:
        real_open = os.open

        def refusing(path, *args, **kwargs):
            if Path(path) == db:
                raise PermissionError(errno.EACCES, "Permission denied", str(path))
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(os, "open", refusing)
    for command in (["check"], ["add", str(fixture("gpu_b.json"))]):
        code, out, err = cli("history", *command, "--db", db)
        assert code == 2 and err == f"tcbench: cannot read {db}: Permission denied.\n", err


# ---------------------------------------------------------------------------------------------
# History database paths: whatever lies at the path (and beside it, as SQLite's journal, WAL and
# shared-memory files), history add and check end with a result or one sentence, at once.

_GOOD_DB: list[bytes] = []  # a real history (one run), made once


def good_history(tmp: Path) -> bytes:
    if not _GOOD_DB:
        db = tmp / "good.sqlite"
        o = p.run_cli("history", "add", SINGLE, "--db", db)
        assert o.code == 0, o.err
        _GOOD_DB.append(db.read_bytes())
    return _GOOD_DB[0]


# What a path may hold. A FIFO is left to the FIFO test above, which tries it in a
# separate process: a reader that opened one would wait in C code, where no time limit of this
# process reaches it.
MAIN_KINDS = ["none", "empty", "bytes", "header", "history", "damaged history", "folder",
              "socket", "device", "loop", "loop of two", "dangling link", "link to a history",
              "under a file", "under a loop"]
SIDE_KINDS = ["none", "none", "none", "bytes", "empty", "folder", "socket", "device", "loop"]


def make_kind(path: Path, kind: str, data: bytes, good: bytes) -> Path:
    """Something of ``kind`` at ``path``; the path --db should name (it may lie below)."""
    import socket

    if kind in ("bytes", "empty"):
        path.write_bytes(data if kind == "bytes" else b"")
    elif kind == "header":
        path.write_bytes(b"SQLite format 3\x00" + data)
    elif kind == "history":
        path.write_bytes(good)
    elif kind == "damaged history":
        raw = bytearray(good)
        for i, byte in enumerate(data[:64]):  # bytes overwritten past the 100-byte header
            raw[100 + (byte * 997 + i * 4099) % (len(raw) - 100)] = byte
        path.write_bytes(bytes(raw))
    elif kind == "folder":
        path.mkdir()
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    elif kind == "device":
        path.symlink_to("/dev/zero" if len(data) % 2 else "/dev/null")
    elif kind == "loop":
        path.symlink_to(path)
    elif kind == "loop of two":
        path.symlink_to(path.with_name("other"))
        path.with_name("other").symlink_to(path)
    elif kind == "dangling link":
        path.symlink_to(path.with_name("missing") / "h.sqlite")
    elif kind == "link to a history":
        path.with_name("real.sqlite").write_bytes(good)
        path.symlink_to(path.with_name("real.sqlite"))
    elif kind == "under a file":
        path.write_bytes(data)
        return path / "h.sqlite"
    elif kind == "under a loop":
        path.symlink_to(path)
        return path / "h.sqlite"
    return path


@settings(max_examples=p.examples(60))
@given(main=st.sampled_from(MAIN_KINDS), sides=st.lists(st.sampled_from(SIDE_KINDS),
                                                          min_size=3, max_size=3),
       data=st.binary(max_size=300), as_url=st.booleans())
# What it found: before, a link loop was exit 70 (RuntimeError from Path.resolve).
@example(main="loop", sides=["none"] * 3, data=b"", as_url=False)
@example(main="history", sides=["device", "none", "none"], data=b"", as_url=False)
def test_history_database_paths(tmp_path, main, sides, data, as_url):
    work = p.workdir(tmp_path)
    db = make_kind(work / "h.sqlite", main, data, good_history(tmp_path))
    for end, kind in zip(("-journal", "-wal", "-shm"), sides):
        side = Path(f"{db}{end}")
        if kind != "none" and side.parent.is_dir() and not os.path.lexists(side):
            make_kind(side, kind, data, b"")
    given_db = f"sqlite:///{db}" if as_url else str(db)
    for command in (["check"], ["add", SINGLE]):
        o = p.run_cli("history", *command, "--db", given_db, seconds=20)
        p.check(o, {0, 2}, (main, sides, command))
