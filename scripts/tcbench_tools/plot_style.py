"""How the report tells series apart: one colour, marker and line style per GPU (or per series
within a GPU's plot), distinct for 20 series and more, colour-blind safe, and never the colour of
a reference line (peaks, models and the diagonal are black or grey).

The colours are Paul Tol's "muted" scheme (nine colours designed to stay distinguishable under
the common colour-vision deficiencies: https://personal.sron.nl/~pault/#sec:qualitative). Colour,
marker and line style cycle with periods 9, 10 and 4, so series i and j (i != j, both below 180)
never share all three, and two of the first 36 series that share a colour (i, i + 9, i + 18,
i + 27) differ in marker and in line style too. Series keep their index across plots: GPU k looks
the same everywhere in a report. No matplotlib import here (``tcbench run`` may import the tools
without it).
"""

from __future__ import annotations

from dataclasses import dataclass

PALETTE = ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677",
           "#882255", "#AA4499")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")
LINESTYLES = ("-", "--", "-.", ":")
REFERENCE = "black"  # peaks, models, diagonals: never a series colour
MARK_COLOR = "#CC3311"  # the SYNTHETIC DATA mark (Tol's vibrant red)


@dataclass(frozen=True)
class SeriesStyle:
    color: str
    marker: str
    linestyle: str

    def line_kwargs(self, points: int = 0, max_marked: int = 64) -> dict:
        """Keyword arguments for ``Axes.plot``; no markers on lines with very many points."""
        return {"color": self.color, "linestyle": self.linestyle,
                "marker": self.marker if points <= max_marked else None}


def series_style(index: int) -> SeriesStyle:
    return SeriesStyle(PALETTE[index % len(PALETTE)], MARKERS[index % len(MARKERS)],
                       LINESTYLES[index % len(LINESTYLES)])


def styles_for(labels: list[str]) -> dict[str, SeriesStyle]:
    """One style per label, by position: the report passes its GPU labels in input order."""
    return {label: series_style(i) for i, label in enumerate(labels)}
