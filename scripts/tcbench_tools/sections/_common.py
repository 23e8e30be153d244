"""What the report's sections (and plots.py) share: reading a benchmark's numbers and label,
file-name slugs, and saving a figure with the headless backend.

matplotlib's backend is chosen here, once, before pyplot is imported: importing this module is
what makes plotting safe on a machine without a display. Only ``tcbench report`` imports it
(``tcbench run`` must work without matplotlib).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.figure import Figure  # noqa: E402

from tcbench_tools.results import Benchmark  # noqa: E402

DPI = 110
SLUG_LENGTH = 80

__all__ = ["DPI", "plt", "value", "microseconds", "label", "first_row", "slug", "save"]


def value(bench: Benchmark | None, metric: str) -> float | None:
    """The median of ``metric`` (``time`` in seconds, or a counter) over the benchmark's
    repetitions; None when the benchmark is absent, lacks the metric or holds no finite value."""
    if bench is None:
        return None
    sample = bench.sample(metric)
    if sample is None or sample.center is None or not math.isfinite(sample.center):
        return None
    return sample.center


def microseconds(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e6


def first_row(bench: Benchmark) -> dict:
    """The first repetition (or aggregate) row: where the counter names and the label are."""
    rows = bench.iterations or list(bench.aggregates.values())
    return rows[0] if rows else {}


def label(bench: Benchmark) -> str:
    """The benchmark's label (``state.SetLabel``), or ""."""
    return str(first_row(bench).get("label", ""))


def slug(text: str) -> str:
    """A file-name part: lower case letters and digits joined by ``_``, at most 80 characters."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:SLUG_LENGTH]


def save(fig: Figure, path: Path) -> Path:
    """Write ``fig`` as a PNG and close it (also when writing fails). "tight" keeps a legend
    placed outside the axes inside the image."""
    try:
        fig.savefig(path, dpi=DPI, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path
