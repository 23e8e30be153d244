#!/usr/bin/env python3
"""The Python floors of docs/architecture.md as a test: every module of scripts/tcbench_tools is
in exactly one row of the table, and no module imports a module of a floor above its own.

The table (| floor | modules | holds |, in the section "The Python tools") lists the floors
bottom up; each module is named in backticks, dotted below the package (`answers.gpu_check`), and
a package ending in `/` (`history/`) stands for every module in it that no row names by itself.
Every `import tcbench_tools...` and `from tcbench_tools... import ...` of every module, at the top
of the file or inside a function, must resolve to a module of its own floor or a lower one. A
module in no row, a row naming no module, or an upward import is reported with file and line,
and the exit status is 1.

Usage: check_py_floors.py REPO_ROOT
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from doc_table import table_rows

TABLE_HEADER = re.compile(r"^\|\s*floor\s*\|\s*modules\s*\|\s*holds\s*\|")
PACKAGE = "tcbench_tools"


def read_table(doc: Path) -> list[tuple[str, list[str]]]:
    """(floor, module entries) per row, bottom floor first."""
    rows = [(cells[0], re.findall(r"`([^`]+)`", cells[1]))
            for cells in table_rows(doc, TABLE_HEADER)]
    if not rows:
        raise SystemExit(f"check_py_floors: no Python floor table (| floor | modules | holds |) "
                         f"in {doc}")
    return rows


def modules_in(root: Path) -> dict[str, Path]:
    """Every module of the package by dotted name below it (a package by its __init__)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and parts[-1] != "__main__":
            out[".".join(parts)] = path
    return out


def imported(tree: ast.AST, modules: dict[str, Path]) -> list[tuple[int, str]]:
    """(line, module) for each tcbench_tools module the file imports."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    found.append((node.lineno, alias.name[len(PACKAGE) + 1:]))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module == PACKAGE or node.module.startswith(PACKAGE + ".")):
            base = node.module[len(PACKAGE) + 1:]
            for alias in node.names:
                sub = f"{base}.{alias.name}" if base else alias.name
                found.append((node.lineno, sub if sub in modules else base))
    return [(line, name) for line, name in found if name]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = Path(argv[1]).resolve()
    tools = root / "scripts" / PACKAGE
    rows = read_table(root / "docs" / "architecture.md")
    modules = modules_in(tools)
    problems: list[str] = []

    # Each module's floor: the row naming it, else the row naming the package it is in.
    level: dict[str, int] = {}
    named: dict[str, str] = {}
    for index, (floor, entries) in enumerate(rows):
        for entry in entries:
            if entry.endswith("/"):
                continue
            if entry not in modules:
                problems.append(f"docs/architecture.md: floor '{floor}' names `{entry}`, which is "
                                f"no module of scripts/{PACKAGE}")
            elif entry in named:
                problems.append(f"docs/architecture.md: `{entry}` is in two floors "
                                f"({named[entry]}, {floor})")
            else:
                level[entry], named[entry] = index, floor
    for index, (floor, entries) in enumerate(rows):
        for entry in entries:
            if not entry.endswith("/"):
                continue
            package = entry.rstrip("/").replace("/", ".")
            members = [m for m in modules if m == package or m.startswith(package + ".")]
            if not members:
                problems.append(f"docs/architecture.md: floor '{floor}' names `{entry}`, which is "
                                f"no package of scripts/{PACKAGE}")
            for m in members:
                if m not in level:
                    level[m], named[m] = index, floor
    for name, path in modules.items():
        if name not in level:
            problems.append(f"{path.relative_to(root).as_posix()}: module `{name}` is in no row "
                            "of docs/architecture.md's Python floor table")

    for name, path in modules.items():
        if name not in level:
            continue
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        for line, target in imported(tree, modules):
            if target not in modules:
                problems.append(f"{rel}:{line}: imports {PACKAGE}.{target}, which is no module")
            elif target in level and level[target] > level[name]:
                problems.append(f"{rel}:{line}: `{name}` (floor '{named[name]}') imports "
                                f"`{target}` of the floor above, '{named[target]}'")
    for p in problems:
        print(p)
    print(f"check_py_floors: {len(modules)} modules in {len(rows)} floors, "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
