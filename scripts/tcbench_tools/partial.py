"""What a benchmark binary cut short leaves readable (results.load_file's fallback).

Google Benchmark writes ``--benchmark_out``'s JSON as it goes and closes its brackets only at
the end: a binary stopped at a time limit (SIGTERM), killed or crashed leaves a file no JSON parser
reads, and every benchmark it had finished would be lost with it. Two ways back, in this order:

1. The row file beside it (common/bench/include/tcbench/bench/reporter.hpp): ``bench_x.json`` ->
   ``bench_x.jsonl``, JSON Lines written and flushed as each benchmark finishes: first
   ``{"context": {...}, "tcbench_planned": [names]}``, then one Google Benchmark row per line,
   last ``{"tcbench_finished": true}``. A last line cut in the middle is dropped. The planned
   names say which rows never ran. A row file is one run: a second context line starts another
   run (files joined by hand), whose rows never join the first's; the run read is the one with
   the cut file's date and GPU, and a row file with several such runs is refused.
2. The truncated JSON itself, repaired: its context and every complete row of its
   ``benchmarks`` list, up to the first that is cut (the planned rows are unknown then).

Standard library only; the files are read with files.py's limits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from tcbench_tools import files, schema
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


@dataclass
class RowRun:
    """One run of a row file: the lines from a context line up to the next one (or the end)."""

    context: dict
    line: int  # the line number of its context line
    rows: list[dict] = field(default_factory=list)
    planned: list[str] = field(default_factory=list)
    finished: bool = False


def read_runs(path: Path) -> list[RowRun] | None:
    """The runs of a row file, one per context line, in order; None when it cannot be read.
    A binary writes one context line, so a second one is a second run (files joined by hand, or
    another binary's rows): its rows are its own, never the first run's. Lines before the first
    context line belong to no run."""
    text = _text(path)
    if text is None:
        return None
    runs: list[RowRun] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue  # the line a kill cut in the middle
        if not isinstance(value, dict):
            continue
        if isinstance(value.get("context"), dict):
            names = value.get(PLANNED)
            runs.append(RowRun(value["context"], number, planned=[
                n for n in names if isinstance(n, str)] if isinstance(names, list) else []))
        elif not runs:
            continue
        elif value.get(FINISHED) is True:
            runs[-1].finished = True
        elif isinstance(value.get("name"), str):
            runs[-1].rows.append(value)
    return runs


def same_run(a: dict, b: dict) -> bool:
    """Whether two contexts may be one run's: the same date and the same GPU (each identity key
    that both state; a key one of them lacks is no evidence either way)."""
    return all(str(a[k]) == str(b[k]) for k in ("date", *schema.GPU_IDENTITY) if k in a and k in b)


def _run_of(path: Path, rows_path: Path, runs: list[RowRun], context: dict | None) -> RowRun | None:
    """The run of the row file that belongs to ``path`` (whose repaired context is ``context``,
    None when even that was cut): the one run, or the one run with its date and GPU. None when
    no run matches (a row file left from an earlier run); an InputError when more than one may
    be its run, since a row file is one run and another run's rows must never join this one."""
    matching = runs if context is None else [r for r in runs if same_run(context, r.context)]
    if len(matching) <= 1:
        return matching[0] if matching else None
    lines = ", ".join(str(r.line) for r in matching[:5]) + (", ..." if len(matching) > 5 else "")
    why = ("its context is cut too" if context is None
           else "they have its date and GPU")
    raise InputError(f"{path.name} is cut short, and its row file {rows_path.name} holds "
                     f"{len(matching)} runs (context lines {lines}) that may be its run "
                     f"({why}): a row file is one run, so none of them is read.")


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
    # A binary killed before its JSON's first bytes left only its row file.
    text = _text(path) if path.exists() else ""
    if text is None or not cut_short(text):
        return None
    repaired = repair(text)
    rows_path = row_file(path)
    runs = read_runs(rows_path) if rows_path.is_file() else None
    # A row file of another run (left from an earlier one) must not stand in for this file.
    got = _run_of(path, rows_path, runs, repaired[0] if repaired else None) if runs else None
    if got is not None and got.rows:
        ended = "" if got.finished else ", whose run was cut short"
        return ({"context": got.context, "benchmarks": got.rows},
                (f"{path.name} is not complete JSON; its {len(got.rows)} finished row(s) were "
                 f"read from {rows_path.name}{ended}"), got.planned)
    if repaired is not None and repaired[1]:
        context, rows = repaired
        return ({"context": context, "benchmarks": rows},
                (f"{path.name} was cut short; its {len(rows)} complete row(s) were kept (no usable "
                f"{rows_path.name} beside it, so the rows that never ran are not known)"), [])
    return None
