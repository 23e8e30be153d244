"""The element table (common/numerics/include/tcbench/numerics/element.hpp) is the only place a
floating-point format's limits are written: no other product file (benchmarks/, common/,
kernels/) holds a floating-point literal, or the integer 57344 or 65504, equal to a limit of a
floating-point row (max, min normal, min subnormal, epsilon, unit roundoff), outside comments and
strings. 0, 1/4, 1/2, 1 and 2 are left out: they are everywhere for other reasons; so is the
integer 448 (a cuBLASLt tile size too). The integer rows' limits are std::numeric_limits' (INT8's
quantization bound is a parameter of its own, kInt8MaxBound). A literal that equals a limit by
coincidence says so on its line with "// not a format limit" (and why).

Usage: check_element_table.py REPO   (prints one line per offending literal, then a summary)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

TABLE = Path("common/numerics/include/tcbench/numerics/element.hpp")
ROOTS = ("benchmarks", "common", "kernels")
SUFFIXES = {".hpp", ".cpp", ".cu", ".cuh", ".h", ".in"}
COMMON = {0.0, 0.25, 0.5, 1.0, 2.0}
MAX_INTEGERS = {57344, 65504}  # E5M2's and FP16's maxima, often written as integers
MARKER = "not a format limit"

NUMBER = re.compile(r"(?<![\w.])(0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*[pP][-+]?\d+"
                    r"|\d+\.\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+"
                    r"|\d+)([fFlLuU]*)(?![\w.])")
STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')


def literals(line: str):
    """(text, value, is_floating) of every numeric literal in the code part of a line."""
    code = STRING.sub('""', line).split("//")[0]
    for m in NUMBER.finditer(code):
        text, suffix = m.group(1), m.group(2)
        try:
            value = float.fromhex(text) if text[:2].lower() == "0x" else float(text)
        except ValueError:
            continue
        floating = any(c in text.lower() for c in ".ep") or "f" in suffix.lower()
        yield text + suffix, value, floating


def table_limits(repo: Path) -> set[float]:
    """Every floating literal of the table's floating-point rows (the `{E::` lines and E4M3's
    row, kE4m3; integer rows end in `true}`)."""
    values = set()
    for line in (repo / TABLE).read_text().splitlines():
        if "true}" in line:
            continue
        if line.lstrip().startswith("{E::") or "ElementInfo kE4m3{" in line:
            values |= {v for _, v, floating in literals(line) if floating}
    return values - COMMON


def problems(repo: Path) -> list[str]:
    limits = table_limits(repo)
    out = []
    for root in ROOTS:
        for path in sorted((repo / root).rglob("*")):
            if path.suffix not in SUFFIXES or path.relative_to(repo) == TABLE:
                continue
            in_block = False
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if in_block:
                    if "*/" not in line:
                        continue
                    line, in_block = line.split("*/", 1)[1], False
                if "/*" in line and "*/" not in line.split("/*", 1)[1]:
                    line, in_block = line.split("/*", 1)[0], True
                if MARKER in line:
                    continue
                for text, value, floating in literals(line):
                    if (floating and abs(value) in limits) or (
                            not floating and value in MAX_INTEGERS):
                        out.append(f"{path.relative_to(repo)}:{n}: {text} is a limit of the "
                                   f"element table; read it from {TABLE.name}: {line.strip()}")
    return out


def main(argv: list[str]) -> int:
    repo = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2]
    if len(table_limits(repo)) < 20:
        print(f"check_element_table: found too few limits in {TABLE}: has its layout changed?")
        return 1
    found = problems(repo)
    for line in found:
        print(line)
    print(f"check_element_table: {len(table_limits(repo))} limits, {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
