"""The history database: one schema for SQLite and PostgreSQL, created and migrated here.

The schema is written once in SQLAlchemy Core (``Table`` objects, no ORM): the same definitions
create the tables on both databases, and the queries are Core expressions that SQLAlchemy turns
into each dialect's SQL. Only two things differ per database, and both live in this module: how
a writer takes the database for itself (SQLite: ``BEGIN IMMEDIATE``, which holds the file's
write lock for the whole transaction; PostgreSQL: a transaction-scoped advisory lock), and the
driver (the standard library's sqlite3; psycopg 3 for PostgreSQL).

Every write runs in one transaction under that lock, so two writers (two CI jobs adding runs at
the same moment) take turns, and a writer that fails leaves nothing behind.

``schema_version`` holds one row, ``component = 'tcbench-history'``, with the version of the
layout. A database with tables but without that row is not tcbench's and is refused; an older
version is migrated step by step (``MIGRATIONS``) inside the same locked transaction; a newer one
is refused (a newer tcbench wrote it).

Versions:
  1. runs, benchmarks, results, counters.
  2. run_values: every numeric context value of a run that has no column of its own (clocks,
     power, peaks, later keys); migrating from 1 fills it from each run's stored context.
  3. every text column unbounded TEXT (2 gave PostgreSQL VARCHAR(N) lengths that SQLite never
     enforced, so a run SQLite stored could fail on PostgreSQL); migrating from 2 widens them on
     PostgreSQL and changes nothing on SQLite.
  4. run_arrays: each run's usable results as packed arrays (arrays.py), which check and the
     dashboard read instead of millions of result rows; migrating from 3 builds them from
     results.
  5. runs.incomplete: why a run is incomplete (a result file cut short, a run stopped before
     every binary ran), NULL for a whole run; check takes such a run as no evidence of a
     change. Migrating from 4 fills it from each run's context (tcbench_incomplete).
"""

from __future__ import annotations

import errno
import importlib.util
import json
import math
import os
import re
import stat
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tcbench_tools import files
from tcbench_tools.errors import InputError
from tcbench_tools.history import dburl
from tcbench_tools.printable import printable

COMPONENT = "tcbench-history"
SCHEMA_VERSION = 5
# pg_advisory_xact_lock key of every tcbench history writer ('tcbh' in ASCII).
PG_LOCK_KEY = 0x74636268
LOCK_WAIT_S = 120  # how long a writer waits for another one before it gives up
# How long a writer lets SQLite's quick_check run before it writes (Store._quick_check).
QUICK_CHECK_S = 0.5
DEFAULT_SQLITE = Path("results") / "history.sqlite"  # relative to the repository
ENV_DB = "TCBENCH_HISTORY_DB"
# The one limit on text, applied by ``history add`` before either database sees it: a name that
# keys an index (benchmark, GPU, counter, context key) may have this many characters, since a
# PostgreSQL B-tree entry holds at most 2704 bytes (512 characters are at most 2048 in UTF-8);
# a provenance column keeps this many (the run's context JSON keeps every value whole). Every
# text column is unbounded TEXT in both databases.
TEXT_LIMIT = 512

# The URL schemes accepted for --db / TCBENCH_HISTORY_DB, and the SQLAlchemy driver of each.
_SCHEMES = {"sqlite": "sqlite", "postgresql": "postgresql+psycopg",
            "postgres": "postgresql+psycopg", "postgresql+psycopg": "postgresql+psycopg"}


POSTGRESQL_REQUIREMENTS = Path(__file__).resolve().parents[2] / "requirements-postgresql.txt"


def _need_driver(where: str) -> None:
    """PostgreSQL's driver is not in the tools' set (scripts/requirements.txt): say how to get
    it."""
    if importlib.util.find_spec("psycopg") is None:
        raise InputError(f"{where} is a PostgreSQL database, and its driver (psycopg) is not "
                         f"installed in {sys.prefix}: install it with `{sys.executable} -m pip "
                         f"install -r {POSTGRESQL_REQUIREMENTS}` (pinned there), or use an SQLite "
                         "file.")


def _sa():
    """SQLAlchemy, imported on first use: the other commands do not need it."""
    import sqlalchemy

    return sqlalchemy


# --------------------------------------------------------------------------------------------
# Schema
# --------------------------------------------------------------------------------------------

def _build_metadata():
    sa = _sa()
    md = sa.MetaData()
    sa.Table("schema_version", md,
             sa.Column("component", sa.Text, primary_key=True),
             sa.Column("version", sa.Integer, nullable=False))
    sa.Table("runs", md,
             sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
             # sha256 of the run's canonical content (ingest.run_id): the same run twice is one.
             sa.Column("run_id", sa.Text, nullable=False, unique=True),
             sa.Column("time", sa.DateTime, nullable=False),  # the run's start, UTC
             sa.Column("added", sa.DateTime, nullable=False),  # when history add stored it, UTC
             sa.Column("git_sha", sa.Text),
             sa.Column("tcbench_version", sa.Text),
             sa.Column("gpu_name", sa.Text, nullable=False),
             sa.Column("gpu_uuid", sa.Text),
             sa.Column("compute_capability", sa.Text),
             sa.Column("driver_version", sa.Text),
             sa.Column("cuda_runtime", sa.Text),
             sa.Column("cublaslt_version", sa.Text),
             sa.Column("quick", sa.Boolean, nullable=False),
             sa.Column("repetitions", sa.Integer),
             sa.Column("sm_clock_mhz", sa.Float),
             sa.Column("mem_clock_mhz", sa.Float),
             sa.Column("power_draw_w", sa.Float),
             sa.Column("power_limit_w", sa.Float),
             sa.Column("host", sa.Text),
             sa.Column("source", sa.Text),  # the path it was added from
             sa.Column("context", sa.Text, nullable=False),  # the whole context, JSON
             # Why the run is incomplete (cut short, stopped early); NULL: a whole run.
             sa.Column("incomplete", sa.Text),
             sa.Index("runs_by_series", "gpu_name", "quick", "time"))
    sa.Table("benchmarks", md,
             sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
             sa.Column("name", sa.Text, nullable=False, unique=True))
    sa.Table("results", md,
             sa.Column("run", sa.Integer, sa.ForeignKey("runs.id"), primary_key=True),
             sa.Column("benchmark", sa.Integer, sa.ForeignKey("benchmarks.id"), primary_key=True),
             # ok; skipped or failed (message says why); unusable (no usable time, e.g. unit)
             sa.Column("status", sa.Text, nullable=False),
             sa.Column("median", sa.Float),  # seconds, over the repetitions
             sa.Column("p10", sa.Float),  # seconds; NULL when only aggregates were written
             sa.Column("p90", sa.Float),
             sa.Column("repetitions", sa.Integer),
             sa.Column("cv", sa.Float),
             sa.Column("message", sa.Text),
             sqlite_with_rowid=False)
    sa.Table("counters", md,
             sa.Column("run", sa.Integer, primary_key=True),
             sa.Column("benchmark", sa.Integer, primary_key=True),
             sa.Column("name", sa.Text, primary_key=True),
             sa.Column("value", sa.Float, nullable=False),  # median over the repetitions
             sa.ForeignKeyConstraint(["run", "benchmark"], ["results.run", "results.benchmark"]),
             sqlite_with_rowid=False)
    sa.Table("run_values", md,
             sa.Column("run", sa.Integer, sa.ForeignKey("runs.id"), primary_key=True),
             sa.Column("key", sa.Text, primary_key=True),
             sa.Column("value", sa.Float, nullable=False),
             sqlite_with_rowid=False)
    # The usable results of each run as little-endian arrays (arrays.py), written with them.
    sa.Table("run_arrays", md,
             sa.Column("run", sa.Integer, sa.ForeignKey("runs.id"), primary_key=True),
             sa.Column("benchmarks", sa.LargeBinary, nullable=False),  # int32 benchmark ids
             sa.Column("median", sa.LargeBinary, nullable=False),  # float64 seconds
             sa.Column("p10", sa.LargeBinary, nullable=False),  # float64 seconds, NaN: unknown
             sa.Column("p90", sa.LargeBinary, nullable=False))
    return md


_METADATA = None


def metadata():
    global _METADATA
    if _METADATA is None:
        _METADATA = _build_metadata()
    return _METADATA


def table(name: str):
    return metadata().tables[name]


# The tables each schema version has (a migration adds the difference).
TABLES_BY_VERSION = {
    1: ("schema_version", "runs", "benchmarks", "results", "counters"),
    2: ("schema_version", "runs", "benchmarks", "results", "counters", "run_values"),
    3: ("schema_version", "runs", "benchmarks", "results", "counters", "run_values"),
    4: ("schema_version", "runs", "benchmarks", "results", "counters", "run_values",
        "run_arrays"),
    5: ("schema_version", "runs", "benchmarks", "results", "counters", "run_values",
        "run_arrays"),
}


def create_tables(conn, version: int = SCHEMA_VERSION) -> None:
    """The tables of ``version`` and its schema_version row (tests build older databases so)."""
    md = metadata()
    md.create_all(conn, tables=[md.tables[n] for n in TABLES_BY_VERSION[version]])
    conn.execute(table("schema_version").insert().values(component=COMPONENT, version=version))


# A number written as text: ASCII digits only (float() would also take "1_000", "١٢" or "nan").
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def numeric_values(context: dict, skip: frozenset[str] = frozenset()) -> dict[str, float]:
    """The context's values that are finite numbers (or strings that read as one, in ASCII)."""
    out = {}
    for key, raw in context.items():
        if key in skip or isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
            continue
        if isinstance(raw, str) and not _DECIMAL.fullmatch(raw.strip(" ")):
            continue
        try:
            value = float(raw)
        except (ValueError, OverflowError):
            continue
        if math.isfinite(value) and len(str(key)) <= TEXT_LIMIT:
            out[str(key)] = value
    return out


# Context keys with a column of their own in runs (not repeated in run_values).
COLUMN_KEYS = frozenset({"sm_clock_mhz", "mem_clock_mhz", "power_draw_w", "power_limit_w"})


# Each migration step builds what its version adds for the runs that lack it, and leaves what is
# there: a database labelled older than the tables it holds (a later table copied in, or kept
# when the label was changed by hand) migrates too, instead of failing on a duplicate row.


def _runs_without(conn, name: str) -> set[int]:
    """The runs that have no row in the per-run table ``name`` yet."""
    sa = _sa()
    runs, other = table("runs"), table(name)
    have = sa.select(other.c.run).distinct()
    return set(conn.execute(sa.select(runs.c.id).where(runs.c.id.not_in(have))).scalars())


def _v1_to_v2(conn) -> None:
    sa = _sa()
    md = metadata()
    md.create_all(conn, tables=[md.tables["run_values"]])
    runs, values = table("runs"), table("run_values")
    todo = _runs_without(conn, "run_values")
    rows = []
    for run, context in conn.execute(sa.select(runs.c.id, runs.c.context)):
        if run not in todo:
            continue
        try:
            doc = json.loads(context)
        except ValueError:
            continue
        if isinstance(doc, dict):
            rows += [{"run": run, "key": k, "value": v}
                     for k, v in numeric_values(doc, COLUMN_KEYS).items()]
    if rows:
        conn.execute(values.insert(), rows)


# The columns schema 2 declared VARCHAR(N) (PostgreSQL enforced the length; SQLite does not).
_V2_LENGTHS = {"schema_version": ("component",),
               "runs": ("run_id", "git_sha", "tcbench_version", "gpu_name", "gpu_uuid",
                        "compute_capability", "driver_version", "cuda_runtime",
                        "cublaslt_version", "host"),
               "benchmarks": ("name",), "results": ("status",), "counters": ("name",),
               "run_values": ("key",)}


def _v2_to_v3(conn) -> None:
    if conn.dialect.name != "postgresql":
        return  # SQLite's VARCHAR(N) is TEXT already
    sa = _sa()
    for name, columns in _V2_LENGTHS.items():
        conn.execute(sa.text(f"ALTER TABLE {name} " + ", ".join(
            f"ALTER COLUMN {c} TYPE TEXT" for c in columns)))


def _v3_to_v4(conn) -> None:
    from tcbench_tools.history import arrays

    sa = _sa()
    md = metadata()
    md.create_all(conn, tables=[md.tables["run_arrays"]])
    res = table("results")
    keys = sorted(_runs_without(conn, "run_arrays"))
    for chunk in range(0, len(keys), 200):  # a few hundred runs' rows in memory at a time
        part = keys[chunk:chunk + 200]
        rows: dict[int, list] = {k: [] for k in part}
        for run, bench, median, p10, p90 in conn.execute(
                sa.select(res.c.run, res.c.benchmark, res.c.median, res.c.p10, res.c.p90).where(
                    res.c.status == "ok", res.c.run.in_(part))):
            rows[run].append((bench, median, p10, p90))
        conn.execute(table("run_arrays").insert(),
                     [{"run": k, **arrays.pack(v)} for k, v in rows.items()])


def _v4_to_v5(conn) -> None:
    from tcbench_tools import schema

    sa = _sa()
    if "incomplete" not in {c["name"] for c in sa.inspect(conn).get_columns("runs")}:
        conn.execute(sa.text("ALTER TABLE runs ADD COLUMN incomplete TEXT"))
    from tcbench_tools.names import short_path

    runs = table("runs")
    marked = []
    for key, context, source in conn.execute(sa.select(
            runs.c.id, runs.c.context, runs.c.source).where(runs.c.incomplete.is_(None))):
        try:
            why = json.loads(context).get(schema.RUN_INCOMPLETE)
        except (ValueError, AttributeError):
            continue
        if isinstance(why, str) and why.strip():  # as ingest.incomplete words it
            text = f"{short_path(source or '-')}: its run stopped early ({why.strip()})"
            marked.append({"key": key, "why": printable(text)[:TEXT_LIMIT]})
    if marked:
        conn.execute(runs.update().where(runs.c.id == sa.bindparam("key")).values(
            incomplete=sa.bindparam("why")), marked)


MIGRATIONS = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4, 4: _v4_to_v5}  # from version N to N + 1


# --------------------------------------------------------------------------------------------
# Connecting
# --------------------------------------------------------------------------------------------

def default_url() -> str:
    from tcbench_tools.build import repo_root

    return os.environ.get(ENV_DB) or str(repo_root() / DEFAULT_SQLITE)


class Store:
    """One history database: its engine and the transactions the commands use.

    The given URL is never kept or printed: ``where`` is its masked form (dburl.masked), and
    every sentence about the database is scrubbed of the URL's secrets (dburl.secrets)."""

    def __init__(self, given: str):
        sa = _sa()
        _quiet_driver_logs()
        self.where = dburl.masked(given)
        self._secrets = dburl.secrets(given)
        self.path: Path | None = None
        try:
            given.encode("utf-8")
        except UnicodeEncodeError:  # bytes of the command line that are not UTF-8
            raise InputError(f"{self.where} is not UTF-8 text, which both databases need for a "
                             "file name or a URL.") from None
        if "\x00" in given:  # the environment cannot hold one; a config or a caller can
            raise InputError(f"{self.where} holds a NUL character: not a file name or a URL.")
        if "://" not in given:  # a plain path: an SQLite file
            if dburl.looks_like_userinfo(given) or _SCHEME_WITHOUT_SLASHES.match(given):
                raise InputError(f"{self.where} looks like a database URL without its // (use "
                                 "sqlite:///PATH, postgresql://USER@HOST/DB or a file path).")
            if not given.strip():
                raise InputError(f"{self.where!r} is not a file path for the history database.")
            self.path = self._expanded(given)
            self._check_path()
            url = sa.engine.URL.create("sqlite", database=str(self.path.resolve()))
        else:
            url = self._parse(sa, given)
        self.url = url
        self.sqlite = self.path is not None
        if self.sqlite:
            self.where = dburl.masked(str(self.path))
        try:
            if self.sqlite:
                # timeout: seconds sqlite3 waits for another writer's lock (its busy handler).
                self.engine = sa.create_engine(url, poolclass=sa.pool.NullPool,
                                               connect_args={"timeout": LOCK_WAIT_S})
                sa.event.listen(self.engine, "connect", _sqlite_connect)
                sa.event.listen(self.engine, "begin", _sqlite_begin)
            else:
                _need_driver(self.where)
                self.engine = sa.create_engine(url, poolclass=sa.pool.NullPool,
                                               connect_args={"connect_timeout": 10})
        except (sa.exc.ArgumentError, ValueError, TypeError) as exc:
            raise InputError(f"{self.where} is not a usable database URL "
                             f"({self._detail(exc)}).") from None

    def _expanded(self, path: str) -> Path:
        """``~`` and ``~user`` expanded; a user without a home folder is one sentence."""
        try:
            return Path(path).expanduser()
        except RuntimeError:
            raise InputError(f"{self.where} starts with {printable(path.split('/')[0])!r}, the "
                             "home folder of a user this machine does not know.") from None

    def _parse(self, sa, given: str):
        """The SQLAlchemy URL of ``given``, with the driver the tools use; refusals name only
        the masked form."""
        usage = "use sqlite:///PATH, postgresql://USER@HOST/DB or a file path"
        try:
            url = sa.engine.make_url(given)
        except Exception:  # noqa: BLE001 - whatever the URL parser raises on outside input
            raise InputError(f"{self.where} is not a database URL ({usage}).") from None
        driver = _SCHEMES.get(url.drivername)
        if driver is None:
            raise InputError(f"the history database must be SQLite or PostgreSQL, not "
                             f"{printable(url.drivername)!r} (use sqlite:///PATH or "
                             "postgresql://USER@HOST/DB).")
        if url.host and not _host_name(url.host):
            raise InputError(f"{self.where} names a host that is not a host name or address "
                             f"({printable(url.host)[:80]!r}).")
        if url.host and "@" in url.host:
            # libpq (and SQLAlchemy) end the user info at the first '@': the rest of the
            # password would travel as the host name, and the driver would print it.
            raise InputError(f"{self.where} holds an '@' in its user info that is not "
                             "percent-encoded: write an '@' of the user name or password as "
                             "%40.")
        url = url.set(drivername=driver)
        if driver == "sqlite":
            if url.username is not None or url.password is not None or url.host or url.port:
                raise InputError(f"{self.where} names a user or host, which an SQLite database "
                                 "has not (use sqlite:///PATH).")
            if not url.database or url.database == ":memory:":
                raise InputError(f"{self.where} names no SQLite file (use sqlite:///PATH).")
            self.path = self._expanded(url.database)
            self._check_path()
        return url

    # -- errors --------------------------------------------------------------------------------

    def _detail(self, exc: BaseException) -> str:
        """The driver's own words on one line, at most 200 characters, without the URL's
        secrets and without a final full stop. SQLAlchemy appends the statement and its
        parameters (kilobytes of a run's context), and PostgreSQL the line of the statement
        where it stopped (``LINE 2: CREATE TABLE ...``): never shown. From PostgreSQL, its
        primary message and its hint."""
        orig = getattr(exc, "orig", None) or exc
        diag = getattr(orig, "diag", None)
        primary = getattr(diag, "message_primary", None) if diag is not None else None
        if isinstance(primary, str) and primary.strip():
            hint = getattr(diag, "message_hint", None)
            text = primary + (f"; {hint[:1].lower()}{hint[1:]}" if isinstance(hint, str)
                              and hint.strip() else "")
        else:
            text = str(orig)
        text = text.split("\n[SQL:")[0].split("\n(Background on")[0].split("\nLINE ")[0]
        detail = dburl.scrub(" ".join(text.split()), self._secrets).rstrip(".?! ")
        detail = printable(detail or type(orig).__name__)
        return detail if len(detail) <= 200 else detail[:190].rstrip() + " [cut]"

    def _problem(self, exc: BaseException) -> InputError:
        """The one sentence for a database error that is the database's, not the tools'."""
        sa = _sa()
        detail = self._detail(exc)
        if self.sqlite and ("not a database" in detail or "malformed" in detail):
            return InputError(f"{self.where} is damaged or not an SQLite database ({detail}); "
                              "restore it from a copy, or give another --db.")
        if self.sqlite and "locked" in detail:
            return InputError(f"the history database {self.where} stayed locked by another "
                              f"writer for {LOCK_WAIT_S} s; try again.")
        if isinstance(exc, (sa.exc.OperationalError, sa.exc.InterfaceError)) or \
                _is_dbapi(exc, "OperationalError", "InterfaceError"):
            return InputError(f"cannot use the history database {self.where}: {detail}.")
        return InputError(f"the history database {self.where} refused the operation: {detail}.")

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Every database access runs inside this: a database error, whether SQLAlchemy wraps
        it or a reader met it on the driver's own cursor, is one sentence (exit
        2) without SQL, parameters or secrets. SQLAlchemy's own failures that are no database
        error (a bug of the tools) stay internal errors, without the SQL."""
        sa = _sa()
        dbapi = getattr(self.engine.dialect, "loaded_dbapi", None) or self.engine.dialect.dbapi
        try:
            yield
        except sa.exc.DBAPIError as exc:
            raise self._problem(exc) from None
        except dbapi.Error as exc:
            raise self._problem(exc) from None
        except sa.exc.StatementError as exc:
            raise RuntimeError(f"the history database layer failed: "
                               f"{self._detail(exc)}") from None
        except UnicodeDecodeError:  # a stored text is not UTF-8: a damaged (or foreign) file
            raise InputError(f"{self.where} holds text that is not UTF-8, which no tcbench "
                             "writes (is it damaged?); restore it from a copy, or give another "
                             "--db.") from None
        except UnicodeError as exc:  # the driver encodes a host name (idna) as it connects
            raise InputError(f"cannot use the history database {self.where}: a host name or "
                             f"parameter it names cannot be encoded ({self._detail(exc)}).") \
                from None

    # -- transactions --------------------------------------------------------------------------

    def _check_path(self) -> None:
        """An SQLite history is a regular file, or none yet; so are the journal and WAL files
        SQLite keeps beside it. Anything else is one sentence at once, before SQLite opens it: a
        FIFO blocked SQLite's open for ever, a symbolic link loop was an internal error, a
        device or socket a driver error. ``stat`` neither blocks nor reads."""
        shown = dburl.masked(str(self.path))
        for path, what in ((self.path, "SQLite database file"),
                           *((Path(f"{self.path}{end}"), f"file (SQLite's {name} of {shown})")
                             for end, name in _SQLITE_SIDE_FILES)):
            try:
                mode = os.stat(path).st_mode
            except FileNotFoundError:
                continue  # none yet (or a link to a history not made yet: SQLite makes it)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise InputError(f"{dburl.masked(str(path))} is a symbolic link loop (a "
                                     "link that leads back to itself), not an SQLite database "
                                     "file.") from None
                if exc.errno == errno.ENOTDIR:
                    raise InputError(f"{shown} lies under a path that is not a folder.") from None
                raise InputError(f"cannot use the history database {shown}: "
                                 f"{exc.strerror or exc}.") from None
            if stat.S_ISDIR(mode) and path == self.path:
                raise InputError(f"{shown} is a folder, not an SQLite database file.")
            if not stat.S_ISREG(mode):
                raise InputError(f"{dburl.masked(str(path))} is {files.kind(mode)}, not a "
                                 f"regular {what}: the history is kept in regular files only.")

    def _check_sqlite_file(self) -> None:
        """SQLite takes a short file of any content for an empty database and overwrites it:
        refuse a file that is neither empty nor starts with SQLite's header."""
        self._check_path()  # again: the file may have been swapped since the command began
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            return
        except OSError as exc:
            raise InputError(f"cannot read {self.where}: {exc.strerror or exc}.") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise InputError(f"{self.where} is {files.kind(os.fstat(fd).st_mode)}, not a "
                                 "regular SQLite database file.")
            head = os.read(fd, len(_SQLITE_MAGIC))
        except OSError as exc:
            raise InputError(f"cannot read {self.where}: {exc.strerror or exc}.") from None
        finally:
            os.close(fd)
        if head and head != _SQLITE_MAGIC:
            raise InputError(f"{self.where} is not an SQLite database (it does not start with "
                             "SQLite's header).")

    def _quick_check(self) -> None:
        """SQLite's own check of every page and index (``PRAGMA quick_check``), for at most
        QUICK_CHECK_S: a damaged page in a table that check and the dashboard never read (counters,
        run_values) would otherwise go unnoticed until it is too late to restore a copy. A larger
        database is checked as far as the time allows (174 MiB took 0.55 s of CPU here). Read-only,
        on a connection of its own, before the write transaction."""
        import sqlite3

        if not self.path.is_file() or self.path.stat().st_size == 0:
            return
        deadline = time.monotonic() + QUICK_CHECK_S
        try:
            con = sqlite3.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True,
                                  timeout=LOCK_WAIT_S)
        except sqlite3.Error as exc:
            raise self._problem(exc) from None
        # Its findings quote the damaged bytes, which need not be UTF-8.
        con.text_factory = lambda raw: raw.decode("utf-8", "replace")
        try:
            con.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
            found = [str(r[0]) for r in con.execute("PRAGMA quick_check(20)").fetchall()]
        except UnicodeDecodeError as exc:  # SQLite's own message quotes bytes of a damaged schema
            found = [bytes(exc.object).decode("utf-8", "replace")]
        except sqlite3.Error as exc:
            if "interrupt" in str(exc):
                return  # out of time: the part it reached was sound
            if not isinstance(exc, sqlite3.DatabaseError) or "malformed" not in str(exc):
                raise self._problem(exc) from None
            found = [str(exc)]  # a page so damaged that the check itself stops on it
        finally:
            con.close()
        problems = [p for p in found if p != "ok"]
        if problems:
            first = printable(" ".join(problems[0].split()))[:160].rstrip(".")
            more = "" if len(problems) == 1 else (
                f" and {len(problems) - 1}{'+' if len(problems) >= 20 else ''} more")
            raise InputError(f"{self.where} is damaged: SQLite's quick_check found {first!r}"
                             f"{more}; restore it from a copy, or give another --db.")

    @contextmanager
    def writing(self) -> Iterator[object]:
        """One transaction that no other tcbench writer shares; the schema is current in it.
        An SQLite database is checked first (``_quick_check``)."""
        if self.sqlite:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InputError(f"cannot create the folder of {self.where}: "
                                 f"{exc.strerror or exc}.") from None
            self._check_sqlite_file()
            self._quick_check()
        with self._guard(), self.engine.connect() as conn:
            conn = conn.execution_options(tcbench_write=True)
            with conn.begin():
                if not self.sqlite:
                    sa = _sa()
                    conn.execute(sa.text(f"SET LOCAL lock_timeout = '{LOCK_WAIT_S}s'"))
                    conn.execute(sa.select(sa.func.pg_advisory_xact_lock(PG_LOCK_KEY)))
                ensure_schema(conn, self.where, create=True)
                yield conn

    @contextmanager
    def reading(self) -> Iterator[object]:
        """A read transaction on a database that holds a tcbench history (migrated first if it
        is an older schema); a missing or empty database is an input error."""
        if self.sqlite and not self.path.exists():
            raise InputError(f"there is no history database at {self.where} (history add "
                             "creates it; give --db or TCBENCH_HISTORY_DB for another one).")
        if self.sqlite:
            self._check_sqlite_file()
        with self._guard():
            with self.engine.connect() as conn, conn.begin():
                version = ensure_schema(conn, self.where, create=False, migrate=False)
            if version < SCHEMA_VERSION:
                with self.writing():
                    pass
            with self.engine.connect() as conn, conn.begin():
                yield conn


_SQLITE_MAGIC = b"SQLite format 3\x00"
# The files SQLite keeps beside a database (a rollback journal; in WAL mode, the log and its
# shared-memory index): name ending, and what it is.
_SQLITE_SIDE_FILES = (("-journal", "journal"), ("-wal", "write-ahead log"),
                      ("-shm", "shared-memory index"))
# "postgresql:/host/db", "sqlite:x.db": a scheme without its //, not a file name.
_SCHEME_WITHOUT_SLASHES = re.compile(r"(sqlite|postgres|postgresql)(\+\w+)?:(?!//)", re.ASCII)


def _host_name(host: str) -> bool:
    """Whether a URL's host can be looked up: a name IDNA encodes, or an address; a host with
    an '@' is left to the user-info check (it is a password's second half)."""
    if "@" in host:
        return True
    try:
        host.encode("idna")
    except UnicodeError:
        return False
    return True


def _quiet_driver_logs() -> None:
    """The drivers' own log records never reach the terminal. psycopg logs what it ignores
    while it ends a failed pipeline or rollback ("error ignored terminating <psycopg.Pipeline
    (host=... port=... user=... database=...)>: pipeline aborted"), and SQLAlchemy's pool logs
    a connection it could not reset or close, with a traceback; with no handler configured,
    Python's last-resort handler printed them on stderr before the one sentence that says what
    failed (a disk full or a permission refused mid-add, a server that died)."""
    import logging

    for name in ("psycopg", "sqlalchemy"):
        logger = logging.getLogger(name)
        if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
            logger.addHandler(logging.NullHandler())
        logger.propagate = False


def _is_dbapi(exc: BaseException, *names: str) -> bool:
    """Whether a driver's own exception (not wrapped by SQLAlchemy) is one of these DB-API
    classes (PEP 249 names them alike in sqlite3 and psycopg)."""
    return any(c.__name__ in names for c in type(exc).__mro__)


def _sqlite_connect(dbapi_conn, _record) -> None:
    # Let SQLAlchemy's begin event (below) open transactions, not the sqlite3 module.
    dbapi_conn.isolation_level = None
    dbapi_conn.execute("PRAGMA foreign_keys = ON")


def _sqlite_begin(conn) -> None:
    write = conn.get_execution_options().get("tcbench_write", False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def ensure_schema(conn, where: str, create: bool, migrate: bool = True) -> int:
    """Check that the database is tcbench's history; create it when empty and ``create``;
    migrate an older schema when ``migrate``. Returns the version it found."""
    sa = _sa()
    names = set(sa.inspect(conn).get_table_names())
    if not names:
        if not create:
            raise InputError(f"the history database {where} holds no tcbench history yet "
                             "(history add creates it).")
        create_tables(conn)
        return SCHEMA_VERSION
    version = None
    if "schema_version" in names:
        columns = {c["name"] for c in sa.inspect(conn).get_columns("schema_version")}
        if {"component", "version"} <= columns:
            sv = table("schema_version")
            version = conn.execute(sa.select(sv.c.version).where(
                sv.c.component == COMPONENT)).scalar()
    if not isinstance(version, int):
        listing = ", ".join(sorted(names)[:5]) + (", ..." if len(names) > 5 else "")
        raise InputError(f"{where} is not a tcbench history database (it holds tables "
                         f"{listing} and no tcbench schema_version); give an empty database "
                         "or one that history add created.")
    if version > SCHEMA_VERSION:
        raise InputError(f"the history database {where} has schema version {version}, newer "
                         f"than this tcbench knows ({SCHEMA_VERSION}); use a newer tcbench.")
    if version < 1:
        raise InputError(f"the history database {where} has schema version {version}, which "
                         "no tcbench wrote.")
    if migrate:
        sv = table("schema_version")
        while version < SCHEMA_VERSION:
            MIGRATIONS[version](conn)
            version += 1
            conn.execute(sv.update().where(sv.c.component == COMPONENT).values(version=version))
    return version
