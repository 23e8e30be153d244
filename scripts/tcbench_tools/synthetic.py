"""Synthetic data: result files that are test fixtures, not measurements.

The test fixtures' factory (tests/scripts/fixtures/gen/) puts the context key
``tcbench_synthetic: "true"`` into every file it makes. The C++ never writes it (no run
context key of ``tcbench_context`` has that name; tests/scripts/test_schema.py allows it in
fixtures only), so a real run cannot carry it. The report refuses nothing for it: a report that
reads such a file says so in a banner at the top and with a diagonal mark on every plot, so that
a screenshot of fixture numbers cannot pass for a measurement. Standard library only.
"""

from __future__ import annotations

from tcbench_tools.names import short_path

KEY = "tcbench_synthetic"
MARK = "SYNTHETIC DATA"


def is_synthetic(context: dict) -> bool:
    """The context says its numbers are made up (``"true"``, ``true`` or ``"1"``)."""
    raw = context.get(KEY)
    return raw is True or str(raw).strip().lower() in ("true", "1")


def banner(paths: list[str]) -> str:
    """The sentence the report's banner shows for the synthetic files among its inputs: their
    file names (the full paths are in "Runs")."""
    listed = ", ".join(short_path(p) for p in paths[:5])
    listed += f" and {len(paths) - 5} more" if len(paths) > 5 else ""
    return (f"{MARK}: {len(paths)} of the input files ({listed}) carry the context key {KEY}. "
            "They are test fixtures, not measurements: no number, table or plot below that "
            "comes from them describes a real GPU.")
