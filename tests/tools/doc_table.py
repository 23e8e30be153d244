"""The body rows of a Markdown table in a document, found by its header line: one home for the
table reading that check_floors.py (C++ floors) and check_py_floors.py (Python floors) share."""

from __future__ import annotations

import re
from pathlib import Path


def table_rows(doc: Path, header: re.Pattern) -> list[list[str]]:
    """The cells of each row after the first line that `header` matches, to the table's end;
    the separator row is skipped."""
    rows, inside = [], False
    for line in doc.read_text(encoding="utf-8").splitlines():
        if header.match(line):
            inside = True
            continue
        if not inside:
            continue
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if set(cells[0]) <= set("-: "):
            continue  # the separator row
        rows.append(cells)
    return rows
