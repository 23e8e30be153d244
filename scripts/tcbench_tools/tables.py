"""Plain-text tables, and the number formats every command uses (Markdown and HTML tables are
doc.py's).

Every cell is escaped before it is measured and written (printable.py): a cell can neither move
the cursor of a terminal nor add a line to a log.
"""

from __future__ import annotations

import math

from tcbench_tools.printable import printable


def text_table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    """Columns padded to width; columns in ``right`` are right-aligned (numbers)."""
    right = right or set()
    headers = [printable(h) for h in headers]
    rows = [[printable(c) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: list[str]) -> str:
        out = [c.rjust(widths[i]) if i in right else c.ljust(widths[i])
               for i, c in enumerate(cells)]
        return "  ".join(out).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])


def fmt_time(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.4g} {unit}"
    return f"{seconds / 1e-9:.4g} ns"


def fmt_num(value: float | None, digits: int = 4) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
        return f"{value:.3e}"
    return f"{value:.{digits}g}"


def fmt_pct(fraction: float | None, signed: bool = False) -> str:
    if fraction is None or not math.isfinite(fraction):
        return "-"
    return f"{fraction * 100:+.1f}%" if signed else f"{fraction * 100:.1f}%"
