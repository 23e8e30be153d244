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
"""

from __future__ import annotations

import json
import math
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tcbench_tools.errors import InputError

COMPONENT = "tcbench-history"
SCHEMA_VERSION = 2
# pg_advisory_xact_lock key of every tcbench history writer ('tcbh' in ASCII).
PG_LOCK_KEY = 0x74636268
LOCK_WAIT_S = 120  # how long a writer waits for another one before it gives up
DEFAULT_SQLITE = Path("results") / "history.sqlite"  # relative to the repository
ENV_DB = "TCBENCH_HISTORY_DB"

# The URL schemes accepted for --db / TCBENCH_HISTORY_DB, and the SQLAlchemy driver of each.
_SCHEMES = {"sqlite": "sqlite", "postgresql": "postgresql+psycopg",
            "postgres": "postgresql+psycopg", "postgresql+psycopg": "postgresql+psycopg"}


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
             sa.Column("component", sa.String(64), primary_key=True),
             sa.Column("version", sa.Integer, nullable=False))
    sa.Table("runs", md,
             sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
             # sha256 of the run's canonical content (ingest.run_id): the same run twice is one.
             sa.Column("run_id", sa.String(64), nullable=False, unique=True),
             sa.Column("time", sa.DateTime, nullable=False),  # the run's start, UTC
             sa.Column("added", sa.DateTime, nullable=False),  # when history add stored it, UTC
             sa.Column("git_sha", sa.String(64)),
             sa.Column("tcbench_version", sa.String(64)),
             sa.Column("gpu_name", sa.String(256), nullable=False),
             sa.Column("gpu_uuid", sa.String(128)),
             sa.Column("compute_capability", sa.String(16)),
             sa.Column("driver_version", sa.String(64)),
             sa.Column("cuda_runtime", sa.String(64)),
             sa.Column("cublaslt_version", sa.String(64)),
             sa.Column("quick", sa.Boolean, nullable=False),
             sa.Column("repetitions", sa.Integer),
             sa.Column("sm_clock_mhz", sa.Float),
             sa.Column("mem_clock_mhz", sa.Float),
             sa.Column("power_draw_w", sa.Float),
             sa.Column("power_limit_w", sa.Float),
             sa.Column("host", sa.String(256)),
             sa.Column("source", sa.Text),  # the path it was added from
             sa.Column("context", sa.Text, nullable=False),  # the whole context, JSON
             sa.Index("runs_by_series", "gpu_name", "quick", "time"))
    sa.Table("benchmarks", md,
             sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
             sa.Column("name", sa.String(1024), nullable=False, unique=True))
    sa.Table("results", md,
             sa.Column("run", sa.Integer, sa.ForeignKey("runs.id"), primary_key=True),
             sa.Column("benchmark", sa.Integer, sa.ForeignKey("benchmarks.id"), primary_key=True),
             # ok; skipped or failed (message says why); unusable (no usable time, e.g. unit)
             sa.Column("status", sa.String(16), nullable=False),
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
             sa.Column("name", sa.String(128), primary_key=True),
             sa.Column("value", sa.Float, nullable=False),  # median over the repetitions
             sa.ForeignKeyConstraint(["run", "benchmark"], ["results.run", "results.benchmark"]),
             sqlite_with_rowid=False)
    sa.Table("run_values", md,
             sa.Column("run", sa.Integer, sa.ForeignKey("runs.id"), primary_key=True),
             sa.Column("key", sa.String(256), primary_key=True),
             sa.Column("value", sa.Float, nullable=False),
             sqlite_with_rowid=False)
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
}


def create_tables(conn, version: int = SCHEMA_VERSION) -> None:
    """The tables of ``version`` and its schema_version row (tests build older databases so)."""
    md = metadata()
    md.create_all(conn, tables=[md.tables[n] for n in TABLES_BY_VERSION[version]])
    conn.execute(table("schema_version").insert().values(component=COMPONENT, version=version))


def numeric_values(context: dict, skip: frozenset[str] = frozenset()) -> dict[str, float]:
    """The context's values that are finite numbers (or strings that read as one)."""
    out = {}
    for key, raw in context.items():
        if key in skip or isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
            continue
        try:
            value = float(raw)
        except (ValueError, OverflowError):
            continue
        if math.isfinite(value) and len(str(key)) <= 256:
            out[str(key)] = value
    return out


# Context keys with a column of their own in runs (not repeated in run_values).
COLUMN_KEYS = frozenset({"sm_clock_mhz", "mem_clock_mhz", "power_draw_w", "power_limit_w"})


def _v1_to_v2(conn) -> None:
    sa = _sa()
    md = metadata()
    md.create_all(conn, tables=[md.tables["run_values"]])
    runs, values = table("runs"), table("run_values")
    rows = []
    for run, context in conn.execute(sa.select(runs.c.id, runs.c.context)):
        try:
            doc = json.loads(context)
        except ValueError:
            continue
        if isinstance(doc, dict):
            rows += [{"run": run, "key": k, "value": v}
                     for k, v in numeric_values(doc, COLUMN_KEYS).items()]
    if rows:
        conn.execute(values.insert(), rows)


MIGRATIONS = {1: _v1_to_v2}  # from version N to N + 1


# --------------------------------------------------------------------------------------------
# Connecting
# --------------------------------------------------------------------------------------------

def default_url() -> str:
    from tcbench_tools.build import repo_root

    return os.environ.get(ENV_DB) or str(repo_root() / DEFAULT_SQLITE)


class Store:
    """One history database: its engine and the transactions the commands use."""

    def __init__(self, given: str):
        sa = _sa()
        self.given = given
        self.path: Path | None = None
        if "://" not in given:  # a plain path: an SQLite file
            self.path = Path(given).expanduser()
            url = sa.engine.URL.create("sqlite", database=str(self.path.resolve()))
        else:
            try:
                url = sa.engine.make_url(given)
            except (sa.exc.ArgumentError, ValueError):
                raise InputError(f"{given!r} is not a database URL (use sqlite:///PATH, "
                                 "postgresql://USER@HOST/DB or a file path).") from None
            driver = _SCHEMES.get(url.drivername)
            if driver is None:
                raise InputError(f"the history database must be SQLite or PostgreSQL, not "
                                 f"{url.drivername!r} (use sqlite:///PATH or "
                                 "postgresql://USER@HOST/DB).")
            shown = url.render_as_string(hide_password=True)
            url = url.set(drivername=driver)
            if driver == "sqlite":
                if not url.database or url.database == ":memory:":
                    raise InputError(f"{given!r} names no SQLite file (use sqlite:///PATH).")
                self.path = Path(url.database).expanduser()
        self.url = url
        self.sqlite = self.path is not None
        self.where = str(self.path) if self.sqlite else shown
        if self.sqlite:
            # timeout: seconds sqlite3 waits for another writer's lock (its busy handler).
            self.engine = sa.create_engine(url, poolclass=sa.pool.NullPool,
                                           connect_args={"timeout": LOCK_WAIT_S})
            sa.event.listen(self.engine, "connect", _sqlite_connect)
            sa.event.listen(self.engine, "begin", _sqlite_begin)
        else:
            self.engine = sa.create_engine(url, poolclass=sa.pool.NullPool,
                                           connect_args={"connect_timeout": 10})

    # -- errors --------------------------------------------------------------------------------

    def _problem(self, exc: Exception) -> InputError:
        """The one sentence for a database error that is the database's, not the tools'."""
        sa = _sa()
        orig = getattr(exc, "orig", None) or exc
        detail = " ".join(str(orig).split()) or type(orig).__name__
        detail = (detail if len(detail) <= 200 else detail[:197] + "...").rstrip(".?!")
        if self.sqlite and isinstance(exc, sa.exc.DatabaseError) and (
                "not a database" in detail or "malformed" in detail):
            return InputError(f"{self.where} is not an SQLite database ({detail}).")
        if self.sqlite and "locked" in detail:
            return InputError(f"the history database {self.where} stayed locked by another "
                              f"writer for {LOCK_WAIT_S} s; try again.")
        if isinstance(exc, sa.exc.OperationalError) or isinstance(exc, sa.exc.InterfaceError):
            return InputError(f"cannot use the history database {self.where}: {detail}.")
        return InputError(f"the history database {self.where} refused the operation: {detail}.")

    @contextmanager
    def _guard(self) -> Iterator[None]:
        sa = _sa()
        try:
            yield
        except (sa.exc.OperationalError, sa.exc.InterfaceError) as exc:
            raise self._problem(exc) from None
        except sa.exc.DatabaseError as exc:
            if self.sqlite:
                raise self._problem(exc) from None
            raise

    # -- transactions --------------------------------------------------------------------------

    def _check_sqlite_file(self) -> None:
        """SQLite takes a short file of any content for an empty database and overwrites it:
        refuse a file that is neither empty nor starts with SQLite's header."""
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(len(_SQLITE_MAGIC))
        except FileNotFoundError:
            return
        except IsADirectoryError:
            raise InputError(f"{self.where} is a folder, not an SQLite database file.") from None
        except OSError as exc:
            raise InputError(f"cannot read {self.where}: {exc.strerror or exc}.") from None
        if head and head != _SQLITE_MAGIC:
            raise InputError(f"{self.where} is not an SQLite database (it does not start with "
                             "SQLite's header).")

    @contextmanager
    def writing(self) -> Iterator[object]:
        """One transaction that no other tcbench writer shares; the schema is current in it."""
        if self.sqlite:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InputError(f"cannot create the folder of {self.where}: "
                                 f"{exc.strerror or exc}.") from None
            self._check_sqlite_file()
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
