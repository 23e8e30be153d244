#!/usr/bin/env python3
"""The floors of docs/architecture.md as a test: no file includes a header of a floor it may not
use.

docs/architecture.md's floor table is the input: each row names a floor, its folders and the
floors it may use. Every `#include "tcbench/..."` in a floor's sources is resolved to the floor
whose include root holds that header; an include of a floor outside the row's "may use" list, or of
a tcbench header no floor holds, is reported with file and line, and the exit status is 1.
The compiler already refuses most upward includes (each library has its own include root and
sees a lower floor only by linking it); this test also catches a sideways include that a link
happens to allow, and keeps the document true.

Usage: check_floors.py REPO_ROOT
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from doc_table import table_rows

TABLE_HEADER = re.compile(
    r"^\|\s*floor\s*\|\s*folder\s*\|\s*library\s*\|\s*holds\s*\|\s*may use\s*\|")
INCLUDE = re.compile(r'^\s*#\s*include\s+"(tcbench/[^"]+)"')
SOURCES = (".cpp", ".hpp", ".cu", ".cuh", ".h")


def read_table(doc: Path) -> list[tuple[str, list[str], set[str]]]:
    """(floor, folders, floors it may use) per row of the floor table."""
    rows = []
    for cells in table_rows(doc, TABLE_HEADER):
        floor = cells[0].lower()
        folders = re.findall(r"`([^`]+)`", cells[1])
        may_use = {u.strip().lower() for u in re.sub(r"\(.*?\)", "", cells[4]).split(",")}
        may_use.discard("")
        may_use.discard("nothing")
        rows.append((floor, folders, may_use))
    if not rows:
        raise SystemExit("check_floors: no floor table (| floor | folder | library | holds | "
                         f"may use |) in {doc}")
    return rows


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = Path(argv[1]).resolve()
    rows = read_table(root / "docs" / "architecture.md")
    floors = {name for name, _, _ in rows}
    problems: list[str] = []
    for name, _, may_use in rows:
        for use in may_use - floors:
            problems.append(f"docs/architecture.md: floor '{name}' may use '{use}', which is no "
                            "floor of the table")

    # Which floor holds each header: the include/ folder under each of its folders.
    owner: dict[str, str] = {}
    files_of: dict[str, list[Path]] = {}
    for name, folders, _ in rows:
        files_of[name] = []
        for folder in folders:
            base = root / folder
            if not base.is_dir():
                problems.append(f"docs/architecture.md: floor '{name}' names {folder}, which is "
                                "not a folder")
                continue
            files_of[name] += sorted(p for p in base.rglob("*")
                                     if p.suffix in SOURCES and p.is_file())
            inc = base / "include"
            for header in inc.rglob("*") if inc.is_dir() else []:
                if header.is_file():
                    key = header.relative_to(inc).as_posix()
                    if key in owner and owner[key] != name:
                        problems.append(f"{key} is in two floors' include roots "
                                        f"({owner[key]}, {name})")
                    owner[key] = name

    # A file belongs to the deepest floor folder that contains it (common/ holds several floors).
    def floor_of(path: Path) -> str | None:
        best, depth = None, -1
        for name, folders, _ in rows:
            for folder in folders:
                base = (root / folder).resolve()
                if path.is_relative_to(base) and len(base.parts) > depth:
                    best, depth = name, len(base.parts)
        return best

    allowed = {name: may_use | {name} for name, _, may_use in rows}
    checked = 0
    for name in files_of:
        for path in files_of[name]:
            if floor_of(path) != name:
                continue  # a deeper floor's file inside this folder
            checked += 1
            rel = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8", errors="replace")
            for number, line in enumerate(text.splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                header = m.group(1)
                used = owner.get(header)
                if used is None:
                    problems.append(f"{rel}:{number}: includes {header}, which no floor's "
                                    "include root holds")
                elif used not in allowed[name]:
                    uses = ", ".join(sorted(allowed[name] - {name})) or "nothing"
                    problems.append(f"{rel}:{number}: floor '{name}' includes {header} of floor "
                                    f"'{used}', which it may not use (docs/architecture.md: "
                                    f"{uses})")
    for p in problems:
        print(p)
    print(f"check_floors: {checked} files of {len(rows)} floors, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
