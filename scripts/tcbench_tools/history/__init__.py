"""``tcbench history``: a performance history in SQLite or PostgreSQL (docs/history.md).

store.py: the schema (SQLAlchemy Core) and its migrations; ingest.py: results -> runs with
provenance; series.py: runs -> series; detect.py: change points and the gate; dashboard.py: the
static page. Only the command line below is imported with the CLI: the rest (SQLAlchemy,
ruptures, matplotlib) loads when a history command runs.
"""

from tcbench_tools.history.cli import add_parser, run

__all__ = ["add_parser", "run"]
