"""What the report's sections (and plots.py) share: a benchmark's label and first row, file-name
slugs, and saving a figure with the headless backend (a benchmark's numbers: Benchmark.center).

matplotlib's backend is chosen here, once, before pyplot is imported: importing this module is
what makes plotting safe on a machine without a display. Only ``tcbench report`` imports it
(``tcbench run`` must work without matplotlib).
"""

from __future__ import annotations

import math
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.figure import Figure  # noqa: E402

from tcbench_tools import plot_style, synthetic  # noqa: E402
from tcbench_tools.results import Benchmark  # noqa: E402

DPI = 110
SLUG_LENGTH = 80

__all__ = ["DPI", "plt", "microseconds", "label", "first_row", "slug", "save",
           "synthetic_marks", "percentiles"]

# Set by report.build while it draws from a synthetic input (synthetic_marks): every figure
# saved meanwhile gets the diagonal mark.
_marking = False


@contextmanager
def synthetic_marks(on: bool) -> Iterator[None]:
    """While active with ``on``, ``save`` stamps "SYNTHETIC DATA" across every figure."""
    global _marking
    before, _marking = _marking, on
    try:
        yield
    finally:
        _marking = before


def mark_synthetic(fig: Figure) -> None:
    """The diagonal "SYNTHETIC DATA" across the figure, over everything. Sized so that the
    rotated text fits inside the figure (about 85 % of its width and height), and left out of
    the "tight" bounding box, so that marking a figure never changes its size."""
    width, height = fig.get_size_inches()
    angle = 25.0
    cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    # Bold sans-serif: a glyph is about 0.62 em wide and 0.75 em tall.
    length, tall = 0.62 * len(synthetic.MARK), 0.75
    em = min(0.85 * width / (length * cos + tall * sin),
             0.85 * height / (length * sin + tall * cos))
    text = fig.text(0.5, 0.5, synthetic.MARK, transform=fig.transFigure, rotation=angle,
                    ha="center", va="center", fontsize=72.0 * em, fontweight="bold",
                    color=plot_style.MARK_COLOR, alpha=0.28, zorder=1000,
                    gid="tcbench-synthetic-mark")
    text.set_in_layout(False)


def percentiles(values: list[float]) -> tuple[float, float] | None:
    """(p10, p90) of the repetitions (linear interpolation, numpy's default), None for fewer
    than two values: the spread the report's error bars draw."""
    if len(values) < 2:
        return None
    import numpy as np

    low, high = np.percentile(np.asarray(values, dtype=float), [10.0, 90.0])
    return float(low), float(high)


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
    placed outside the axes inside the image. Inside ``synthetic_marks(True)`` the figure is
    marked first."""
    try:
        if _marking:
            mark_synthetic(fig)
        fig.savefig(path, dpi=DPI, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path
