"""One label per result set, as the report and the answers show a run: the GPU name, made unique
with the run's folder, path or date when two runs share one (two cards of one model, or one card
measured twice). Standard library only: ``tcbench answers`` uses it."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from tcbench_tools.errors import InputError
from tcbench_tools.results import ResultSet


def _run_name(rs: ResultSet) -> str:
    """The folder of a run's results.json, else the file (or folder) name."""
    path = Path(rs.path)
    return path.parent.name if path.name == "results.json" and path.parent.name else path.name


def unique_labels(sets: list[ResultSet], given: list[str] | None = None) -> list[str]:
    """One distinct label per result set: ``given`` (``--label``), else the GPU name (the file
    name without one); a name that repeats gets the first qualifier that tells its runs apart:
    the run's folder or file name, its last two path components, its full path, its date, or
    finally its position. Tables and plots key on labels, so two runs must never share one."""
    if given is not None:
        repeated = sorted({label for label in given if given.count(label) > 1})
        if repeated:
            raise InputError(f"--label {repeated[0]!r} is given twice: labels must be unique.")
        return list(given)
    labels = [rs.label for rs in sets]
    qualifiers = [_run_name, lambda rs: "/".join(Path(rs.path).parts[-2:]),
                  lambda rs: rs.path, lambda rs: str(rs.context.get("date", ""))]
    groups: dict[str, list[int]] = defaultdict(list)
    for i, label in enumerate(labels):
        groups[label].append(i)
    out = list(labels)
    for label, members in groups.items():
        if len(members) == 1:
            continue
        for qualify in qualifiers:
            tags = [qualify(sets[i]) for i in members]
            if all(tags) and len(set(tags)) == len(tags):
                for i, tag in zip(members, tags):
                    out[i] = f"{label} ({tag})"
                break
        else:
            for k, i in enumerate(members, start=1):
                out[i] = f"{label} #{k}"
    return out
