"""A run on disk: the one place that knows how every mode writes its run folder (``tcbench run``,
its ``--device all``, fleet tasks, the GPU check), where they are (``run_folders``) and how a run
folder reads back as one run (docs/architecture.md, "The run folder").

While a run goes, a run folder holds one ``<binary>.json`` per benchmark binary (Google
Benchmark's output, read by results.load_file) and its row file; at its end ``results.json``,
which ``merge`` makes of them, and the merged files go (``drop_parts``): every binary's rows,
each tagged with the binary that wrote it (``schema.ROW_BINARY``), under the first binary's
context plus the run keys of schema.py (``schema.RUN_KEYS``: the binaries merged, a hash of each
file, which failed, which left no usable results, why the run stopped early). Reading a folder
(results.load) takes its ``results.json`` when there is one, refused when it is stale (a later
run into the folder did not finish: ``check_fresh``), and else unites the folder's files
(``union``). Either way a run measures one GPU: ``check_one_gpu`` compares the GPU identity
(``schema.GPU_IDENTITY``) of every file, for the writer and for the reader alike.

Standard library only: ``tcbench run`` imports this.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from tcbench_tools import files, partial, schema
from tcbench_tools.errors import InputError

MERGED = "results.json"  # the merged run file in a run folder


# ---------------------------------------------------------------------------------------------
# One GPU per run


class MixedGpus(InputError):
    """Two files (or binaries) of one run name different GPUs: the merge or the read is refused.
    ``str()`` is the sentence for a run's binaries; ``in_folder`` the one for a folder."""

    def __init__(self, keys: list[str], first: tuple[str, Mapping], other: tuple[str, Mapping]):
        self.keys, self.first, self.other = keys, first, other
        super().__init__(self.run_text())

    def run_text(self) -> str:
        (name, seen), (binary, context) = self.first, self.other
        return (f"the binaries of this run saw different GPUs ({', '.join(self.keys)} differ): "
                f"{name} ran on {_gpu_text(seen)}, {binary} on {_gpu_text(context)}; a run "
                "measures one GPU (was a device lost, MIG reconfigured or CUDA_VISIBLE_DEVICES "
                "changed between binaries?)")

    def in_folder(self, folder: Path | str) -> str:
        key = self.keys[0]
        (a, seen), (b, context) = self.first, self.other
        return (f"{folder} mixes GPUs ({key.replace('_', ' ')}: {a} has {str(seen[key])!r}, {b} "
                f"has {str(context[key])!r}): use one folder per GPU.")


def _gpu_text(context: Mapping) -> str:
    name = context.get("gpu_name", "an unnamed GPU")
    more = [f"compute capability {context['compute_capability']}"
            if "compute_capability" in context else "",
            *(f"{key} {context[key]}" for key in schema.GPU_IDENTITY[2:] if key in context)]
    return f"{name!r} (" + ", ".join(filter(None, more)) + ")"


def check_one_gpu(sources: list[tuple[str, Mapping]]) -> None:
    """``sources``: (file or binary, its context), in order. MixedGpus when one of them names a
    GPU other than the first source that states the same identity key: a key a context lacks is
    no evidence either way."""
    first: dict[str, tuple[str, Mapping]] = {}  # identity key -> the first source that has it
    for source, context in sources:
        for key in schema.GPU_IDENTITY:
            if key not in context:
                continue
            holder = first.setdefault(key, (source, context))
            if str(holder[1][key]) != str(context[key]):
                seen = holder[1]
                keys = [k for k in schema.GPU_IDENTITY
                        if k in seen and k in context and str(seen[k]) != str(context[k])]
                raise MixedGpus(keys, holder, (source, context))


# ---------------------------------------------------------------------------------------------
# Writing: results.json


@dataclass(frozen=True)
class Part:
    """One binary's output in a run: its Google Benchmark document, already checked to be
    usable (results.parse_doc)."""

    binary: str
    path: Path
    doc: dict
    cut: str = ""  # cut short: the sentence that says so (partial.recover)
    never_ran: list[str] = field(default_factory=list)  # cut short: its planned rows not run


def fingerprint(path: Path) -> str:
    """A short content hash of a merged file (``schema.RUN_SOURCES``)."""
    data = files.read_bytes(path, files.RESULTS_LIMIT, "result file")
    return hashlib.sha256(data).hexdigest()[:16]


def merge(parts: list[Part], failed: list[str], lost: list[str],
          incomplete: str | None = None) -> dict | None:
    """The merged run document: the first part's context with the run keys, every part's rows
    tagged with its binary. ``failed``: ``binary:exit code`` of each binary that did not exit 0;
    ``lost``: the binaries that left no usable results; ``incomplete``: why the run stopped
    early. None when no part has a row; MixedGpus when two parts saw different GPUs."""
    check_one_gpu([(p.binary, _context(p.doc)) for p in parts])
    rows = [{**row, schema.ROW_BINARY: p.binary} for p in parts for row in p.doc["benchmarks"]
            if isinstance(row, dict)]
    if not parts or not rows:
        return None
    context = dict(_context(parts[0].doc))
    context[schema.RUN_BINARIES] = ",".join(dict.fromkeys(p.binary for p in parts))
    context[schema.RUN_SOURCES] = ",".join(f"{p.path.name}:{fingerprint(p.path)}" for p in parts
                                           if p.path.is_file())
    cut = [p for p in parts if p.cut]
    for key, items in ((schema.RUN_FAILED, failed), (schema.RUN_LOST, lost),
                       (schema.RUN_NEVER_RAN, [n for p in cut for n in p.never_ran])):
        if items:
            context[key] = ",".join(items)
    if cut:
        context[schema.RUN_CUT] = "; ".join(p.cut for p in cut)
    if incomplete:
        context[schema.RUN_INCOMPLETE] = incomplete
    return {"context": context, "benchmarks": rows}


def _context(doc: dict) -> dict:
    context = doc.get("context")
    return context if isinstance(context, dict) else {}


def write(doc: dict, path: Path) -> Path:
    """Written whole or not at all (a temporary file, then a rename): a kill mid-write never
    leaves a results.json cut short in place of the per-binary files it merges."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    os.replace(tmp, path)
    return path


def drop_parts(parts: list[Path]) -> None:
    """Once results.json holds their rows and reads back: each binary's JSON and row file go,
    so a run folder stores each row once. Until then they are what survives a kill."""
    for path in parts:
        path.unlink(missing_ok=True)
        partial.row_file(path).unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------------
# Reading a run folder


def context_list(context: Mapping, key: str) -> list[str]:
    """A comma-separated run key (``tcbench_binaries`` ...) as a list."""
    value = context.get(key)
    return [v for v in value.split(",") if v] if isinstance(value, str) else []


def files_in(path: Path) -> list[Path]:
    """A file is itself; a folder means its results.json, or else its bench_*.json (a run cut
    short before its merge), or else every *.json in it. Anything
    else (a FIFO, a device, a symbolic link loop) is refused when it is read (files.py)."""
    st = files.path_stat(path)
    try:
        if stat.S_ISDIR(st.st_mode):
            merged = path / MERGED
            if merged.exists() or merged.is_symlink():
                return [merged]
            # A run cut short before its merge: its binaries' files, not the answers or host
            # studies a run writes beside them; any other folder: every result file in it.
            found = sorted(path.glob("bench_*.json")) or sorted(path.glob("*.json"))
            if not found:
                raise InputError(f"{path} is a folder with no results.json and no *.json files.")
            return found
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}.") from None
    return [path]


def is_run_folder(folder: Path) -> bool:
    """A run folder: its results.json, or the per-binary files of a run cut short before its
    merge (``bench_*.json``)."""
    return (folder / MERGED).is_file() or any(folder.glob("bench_*.json"))


def run_folders(path: Path) -> list[Path]:
    """The runs a path holds, the one place that knows where every mode puts them: a file or a
    run folder is one run; any other folder holds the run folders one or two levels down (``tcbench
    run --device all``'s ``gpu<N>/``, the check's ``results/``, fleet's
    ``<partition>/<node>-<gpu>/``, a folder of runs), links out of it skipped; else a folder of
    result files is one run."""
    path = Path(path)
    if not path.is_dir() or is_run_folder(path):
        return [path]
    found: list[Path] = []
    try:
        for pattern in ("*/", "*/*/"):
            found += sorted(f for f in path.glob(pattern)
                            if f.is_dir() and files.inside(path, f) and is_run_folder(f)
                            and not any(run in f.parents for run in found))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}.") from None
    if not found and not any(path.glob("*.json")):
        raise InputError(f"{path} holds no run: no results.json or *.json files in it or in its "
                         "folders two levels down (has the run finished?).")
    return found or [path]


def check_fresh(context: Mapping, file: Path) -> None:
    """Refuse a merged results.json beside a per-binary file it merged that has changed since: a
    later run into the folder rewrote it and did not finish. A run drops the files it merged once
    results.json reads back (``drop_parts``), so a file that is gone is no evidence."""
    sources = dict(item.rsplit(":", 1) for item in context_list(context, schema.RUN_SOURCES)
                   if ":" in item)
    try:
        for name, want in sources.items():
            part = file.parent / name
            if part.is_file() and fingerprint(part) != want:
                raise InputError(f"{file} is stale: {name} was rewritten after it was merged "
                                 "(a later run into the same folder did not finish); run again.")
    except OSError as exc:
        raise InputError(f"cannot read {file.parent}: {exc.strerror or exc}.") from None


B = TypeVar("B")


def union(folder: Path, parts: list[tuple[str, Mapping[str, B]]]) -> dict[str, B]:
    """The benchmarks of a folder's files as one run: ``parts`` are (file, its benchmarks by
    name); a name in two files is refused (two runs of one benchmark are not one run)."""
    merged: dict[str, B] = {}
    source: dict[str, str] = {}
    for file, benchmarks in parts:
        for key, bench in benchmarks.items():
            if key in merged:
                raise InputError(f"{folder}: benchmark {key!r} appears in both {source[key]} and "
                                 f"{file}.")
            merged[key], source[key] = bench, file
    return merged
