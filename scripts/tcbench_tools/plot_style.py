"""How the report tells series apart: a colour, a marker and a line style per series, never the
colour of a reference line (peaks, models and the diagonal are black or grey). In a report of up
to twenty GPUs each GPU keeps one style in every plot, its index among the report's GPUs
(``report_gpus``): before, styles went by position in each plot, and a GPU changed colour
between sections. With more GPUs than colours, and outside a report, styles go by position in
the plot (the first series gets the first style, and so on), so that no two series of a plot
share a colour.

The palette's first nine colours are Paul Tol's "muted" scheme, designed to stay distinguishable
under the common colour-vision deficiencies (https://personal.sron.nl/~pault/#sec:qualitative):
a plot of up to nine series uses only them. The eleven after them were chosen greedily, each the
sRGB colour (on a 1/15 grid, CIELAB L* 25-80, chroma >= 25, at least 15 from white, black, the
greys and the synthetic mark's red) farthest by CIEDE2000 from every colour before it. Any two
of the twenty are at least ``MIN_DELTA_E`` apart by CIEDE2000 (the closest pair is Tol's own wine
and purple); tests/scripts/test_report_plots.py checks it with coloraide, itself checked against
Sharma, Wu and Dalal's published CIEDE2000 test pairs. So within one plot of up to twenty series
every series has its own colour, whichever GPUs the plot holds (a GPU's colour followed its
index among all the report's GPUs before, so GPU 02 and GPU 11 shared one in a plot of four).

Marker and line style are the second channel (cycles of 9 and 3, both coprime to 20): series i
and j of one plot (i != j, both below 180) never share all three, two that share a colour (from
the 21st series on) differ in marker, and lines stay apart in greyscale print. No matplotlib
import here (``tcbench run`` may import the tools without it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

PALETTE = ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255",
           "#AA4499",  # Tol's muted
           "#774400", "#EE7700", "#EEAAFF", "#0077AA", "#00DD44", "#8877FF", "#FFAA99", "#881111",
           "#006666", "#666600", "#FF22FF")  # the greedy extension (CIEDE2000 >= 15 to all above)
MIN_DELTA_E = 15.0  # CIEDE2000 between any two colours of PALETTE
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">")
LINESTYLES = ("-", "--", "-.")
REFERENCE = "black"  # peaks, models, diagonals: never a series colour
# The widest figure the report page shows at its natural size: doc.py's column is 1200 px less
# its padding, about 1120 px, and plots are saved at 110 dpi (sections/_common.py); 10 in leaves
# the tight bounding box room for an outside label. A wider figure was shrunk to fit, its 8 pt
# value labels to about 7 px.
PAGE_WIDTH_IN = 10.0
MARK_COLOR = "#CC3311"  # the SYNTHETIC DATA mark (Tol's vibrant red)
NO_DATA = "0.55"  # the grey of "no data" / "skipped" texts where a result is missing


@dataclass(frozen=True)
class SeriesStyle:
    color: str
    marker: str
    linestyle: str

    def line_kwargs(self, points: int = 0, max_marked: int = 64) -> dict:
        """Keyword arguments for ``Axes.plot``; no markers on lines with very many points. Solid
        lines are drawn below dashed ones, so that a dashed line lying exactly on a solid one
        (two GPUs with the same numbers) still shows, the solid one through its gaps."""
        return {"color": self.color, "linestyle": self.linestyle,
                "marker": self.marker if points <= max_marked else None,
                "zorder": 2.0 + 0.1 * LINESTYLES.index(self.linestyle)}


def fit_columns(panels: int, panel_in: float, extra_in: float = 0.0, most: int = 4) -> int:
    """How many panels of ``panel_in`` inches fit in a row beside ``extra_in`` (row labels, an
    outside legend) within PAGE_WIDTH_IN: at least one, at most ``most`` and ``panels``."""
    fit = int((PAGE_WIDTH_IN - extra_in) // panel_in)
    return max(1, min(panels, most, fit))


def series_style(index: int) -> SeriesStyle:
    """The style of a plot's ``index``-th series."""
    return SeriesStyle(PALETTE[index % len(PALETTE)], MARKERS[index % len(MARKERS)],
                       LINESTYLES[index % len(LINESTYLES)])


_REPORT_GPUS: dict[str, int] = {}  # the report being drawn: GPU label -> its index


@contextmanager
def report_gpus(labels: list[str]) -> Iterator[None]:
    """While a report is drawn: each of its GPUs (when they are no more than the palette's
    colours) keeps the style of its index in every plot."""
    global _REPORT_GPUS
    before = _REPORT_GPUS
    _REPORT_GPUS = ({label: i for i, label in enumerate(dict.fromkeys(labels))}
                    if len(labels) <= len(PALETTE) else {})
    try:
        yield
    finally:
        _REPORT_GPUS = before


def styles_for(labels: list[str]) -> dict[str, SeriesStyle]:
    """One style per series of one plot: a report's GPU by its index in the report
    (``report_gpus``), else by position among ``labels`` (pass the plot's own series, so that
    its colours are the palette's first and most distinct ones)."""
    labels = list(dict.fromkeys(labels))
    if labels and all(label in _REPORT_GPUS for label in labels):
        return {label: series_style(_REPORT_GPUS[label]) for label in labels}
    return {label: series_style(i) for i, label in enumerate(labels)}
