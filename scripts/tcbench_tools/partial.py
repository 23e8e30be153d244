"""What a benchmark binary cut short leaves readable (results.load_file's fallback).

Google Benchmark writes ``--benchmark_out``'s JSON as it goes and closes its brackets only at
the end: a binary stopped at a time limit (SIGTERM), killed or crashed leaves a file no JSON parser
reads, and every benchmark it had finished would be lost with it. Two ways back, in this order:

1. The row file beside it (common/bench/include/tcbench/bench/reporter.hpp): ``bench_x.json`` ->
   ``bench_x.jsonl``, JSON Lines written and flushed as each benchmark finishes: first
   ``{"context": {...}, "tcbench_planned": [names]}``, then one Google Benchmark row per line,
   last ``{"tcbench_finished": true}``. A last line cut in the middle is dropped. The planned
   names say which rows never ran.
2. The truncated JSON itself, repaired: its context and every complete row of its
   ``benchmarks`` list, up to the first that is cut (the planned rows are unknown then).

Standard library only; the files are read with files.py's limits.
"""

from __future__ import annotations

import json
from pathlib import Path

from tcbench_tools import files
from tcbench_tools.errors import InputError

ROWS_SUFFIX = ".jsonl"
FINISHED = "tcbench_finished"
PLANNED = "tcbench_planned"


def row_file(path: Path) -> Path:
    """The row file of a ``--benchmark_out`` file (reporter.hpp's row_file_path)."""
    name = path.name
    return path.with_name(name + "l" if name.endswith(".json") and name != ".json"
                          else name + ROWS_SUFFIX)


def _text(path: Path) -> str | None:
    try:
        return files.read_text(path, files.RESULTS_LIMIT, "result file")
    except (InputError, OSError, UnicodeDecodeError):
        return None


def read_rows(path: Path) -> tuple[dict, list[dict], list[str], bool] | None:
    """(context, rows, planned names, finished) of a row file; None when it has no context
    line."""
    text = _text(path)
    if text is None:
        return None
    context, rows, planned, finished = None, [], [], False
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue  # the line a kill cut in the middle
        if not isinstance(value, dict):
            continue
        if context is None and isinstance(value.get("context"), dict):
            context = value["context"]
            names = value.get(PLANNED)
            planned = [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
        elif value.get(FINISHED) is True:
            finished = True
        elif isinstance(value.get("name"), str):
            rows.append(value)
    if context is None:
        return None
    return context, rows, planned, finished


def repair(text: str) -> tuple[dict, list[dict]] | None:
    """The context and the complete rows of a Google Benchmark JSON cut short; None when not
    even its context is complete."""
    decoder = json.JSONDecoder()
    at = text.find('"context"')
    if at < 0:
        return None
    colon = text.find(":", at)
    try:
        context, end = decoder.raw_decode(text, _skip(text, colon + 1))
    except (ValueError, RecursionError):
        return None
    if not isinstance(context, dict):
        return None
    rows = []
    start = text.find('"benchmarks"', end)
    bracket = text.find("[", start) if start >= 0 else -1
    if bracket >= 0:
        pos = bracket + 1
        while True:
            pos = _skip(text, pos)
            if pos < len(text) and text[pos] == ",":
                pos = _skip(text, pos + 1)
            if pos >= len(text) or text[pos] != "{":
                break
            try:
                row, pos = decoder.raw_decode(text, pos)
            except (ValueError, RecursionError):
                break  # the row the cut went through
            if isinstance(row, dict):
                rows.append(row)
    return context, rows


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def cut_short(text: str) -> bool:
    """Whether `text` fails as JSON only because it ends too early: a prefix of a document
    (empty, or the parser ran out of text), not one that is wrong in the middle (an integer too
    long to read, a bad token, a complete document with something after it)."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip())
    except (ValueError, RecursionError):
        return False
    return False


def recover(path: Path) -> tuple[dict, str, list[str]] | None:
    """(a Google Benchmark document, the sentence that says it is partial, the planned names) for
    a result file cut short, or None when it is not one (its JSON is wrong, not short) or when
    nothing in it or beside it can be read."""
    text = _text(path)
    if text is None or not cut_short(text):
        return None
    repaired = repair(text)
    rows_path = row_file(path)
    got = read_rows(rows_path) if rows_path.is_file() else None
    if got is not None and repaired is not None:
        # A row file of another run (left from an earlier one) must not stand in for this file.
        date = repaired[0].get("date")
        if date is not None and got[0].get("date") not in (None, date):
            got = None
    if got is not None:
        context, rows, planned, finished = got
        if not rows:
            return None
        ended = "" if finished else ", whose run was cut short"
        return ({"context": context, "benchmarks": rows},
                (f"{path.name} is not complete JSON; its {len(rows)} finished row(s) were read "
                f"from {rows_path.name}{ended}"), planned)
    if repaired is not None and repaired[1]:
        context, rows = repaired
        return ({"context": context, "benchmarks": rows},
                (f"{path.name} was cut short; its {len(rows)} complete row(s) were kept (no usable "
                f"{rows_path.name} beside it, so the rows that never ran are not known)"), [])
    return None
