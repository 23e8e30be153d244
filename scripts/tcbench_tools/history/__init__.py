"""``tcbench history``: a performance history in SQLite or PostgreSQL (docs/history.md).

store.py: the schema (SQLAlchemy Core) and its migrations; ingest.py: results -> runs with
provenance; arrays.py: each run's results packed for fast reading; identity.py: a run's
environment; series.py: runs -> series; search.py, merge.py, ranks.py: where a series changes
level; detect.py: change points and the gate; text.py: check's words; dashboard.py, page.py,
canvas.py: the static page and its plots; forked.py: the work done in forked processes. Only
the command line below is imported with the CLI: the rest (SQLAlchemy, numpy, matplotlib) loads
when a history command runs.
"""

from tcbench_tools.history.cli import add_parser, run

__all__ = ["add_parser", "run"]
