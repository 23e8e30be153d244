"""``tcbench fleet status`` and ``collect``: the tasks' states, and one report of every GPU.

collect hands the finished tasks' results to the cross-GPU report (``tcbench_tools.report``)
with one column per task that measured a GPU. Two tasks on the same GPU model (two nodes, or two
GPUs of one node) stay two columns, each labelled with its node and GPU index: they
are separate cards, and merging them as repetitions would hide a slow one. A "Fleet tasks"
section at the end of the report lists every task, including those that failed, found no GPU or
have not finished.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

from tcbench_tools import files, report
from tcbench_tools.doc import Code
from tcbench_tools.errors import EXIT_FAIL, EXIT_NO_GPU, EXIT_OK, InputError
from tcbench_tools.fleet.state import (
    ACTIVE,
    DONE,
    FAILED,
    NO_GPU,
    PROBLEMS,
    Manifest,
    Task,
    count_text,
    fill_gpu_names,
    gather,
    load_manifest,
)
from tcbench_tools.results import ResultSet, load
from tcbench_tools.runfile import files_in
from tcbench_tools.tables import text_table

EXIT_NOT_FINISHED = 75  # sysexits EX_TEMPFAIL: tasks still pending or running, try again later
WAIT_INTERVAL = 2.0  # seconds between polls of `status --wait`


def _where(t: Task) -> str:
    return t.folder if t.state == DONE else t.detail


def status_table(tasks: list[Task]) -> str:
    rows = [[t.task_id, t.partition, t.node or "-", t.gpu or "-", t.gpu_name or "-", t.state,
             _where(t)] for t in tasks]
    return text_table(["task", "partition", "node", "GPU", "GPU name", "state",
                       "folder / detail"], rows)


def _states(root: Path) -> tuple[Manifest, list[Task]]:
    m = load_manifest(root)
    tasks = gather(m)
    fill_gpu_names(m, tasks)
    return m, tasks


def status(root: Path, wait: bool, timeout: float) -> int:
    m, tasks = _states(root)
    if wait:
        begin = time.monotonic()
        shown = ""
        while any(t.state in ACTIVE for t in tasks):
            line = count_text(tasks)
            if line != shown:
                print(f"tcbench fleet: {line} ({time.monotonic() - begin:.0f} s)", flush=True)
                shown = line
            if time.monotonic() - begin > timeout:
                print(status_table(tasks))
                active = sum(t.state in ACTIVE for t in tasks)
                print(f"tcbench fleet: {active} task(s) still pending or running after "
                      f"{timeout:g} s.", file=sys.stderr)
                return EXIT_NOT_FINISHED
            time.sleep(WAIT_INTERVAL)
            m, tasks = _states(root)
    print(status_table(tasks))
    print(f"\n{len(tasks)} task(s): {count_text(tasks)}.")
    return EXIT_OK


def _column_labels(done: list[tuple[Task, ResultSet]]) -> list[str]:
    """The GPU name, plus node-GPU where several tasks measured the same model (and the
    partition too when that alone is not unique)."""
    names = [t.gpu_name or rs.label for t, rs in done]
    seen = Counter(names)
    short = [f"{name} ({Path(t.folder).name})" if seen[name] > 1 else name
             for (t, _), name in zip(done, names)]
    clash = Counter(short)
    return [f"{name} ({t.folder})" if clash[label] > 1 else label
            for (t, _), name, label in zip(done, names, short)]


def _fleet_section(m: Manifest, tasks: list[Task], labels: dict[str, str]) -> report.Doc:
    doc = report.Doc()
    doc.heading(2, "Fleet tasks")
    doc.para(f"Submitted {m.settings.get('submitted', '?')} by ", Code("tcbench fleet submit"),
             f": {len(tasks)} task(s), {count_text(tasks)}. One column per task that measured a "
             "GPU; tasks on the same GPU model are separate columns labelled with "
             "node-GPU (not merged as repetitions).")
    rows = [[t.task_id, t.partition, t.node or "-", t.gpu or "-", t.state,
             labels.get(t.task_id, t.detail)] for t in tasks]
    doc.table(["task", "partition", "node", "GPU", "state", "column / detail"], rows, set())
    return doc


def _add_to_history(db, done: list[tuple[Task, ResultSet]]) -> None:
    """Every finished task's run into the history (one transaction; the same run twice once)."""
    from tcbench_tools.history import ingest, text

    runs = [ingest.to_run(rs, {}) for _, rs in done]
    added, present = ingest.add(db, runs)
    print(f"tcbench fleet: {len(added)} run(s) added to the history in {db.where}, "
          f"{len(present)} already there.")
    note = text.synthetic_note(added + present)  # as history add says it
    if note:
        print(f"tcbench fleet: {note}")


def collect(root: Path, out: Path | None, history: str | None = None) -> int:
    db = None
    if history:  # a URL that cannot be a database fails here, before anything is written
        from tcbench_tools.history import store

        db = store.Store(history)
    m, tasks = _states(root)
    finished = [t for t in tasks if t.state not in ACTIVE]
    active = [t for t in tasks if t.state in ACTIVE]
    if not finished:
        print(f"tcbench fleet: nothing has finished yet ({count_text(tasks)}): run collect "
              f"again once `tcbench fleet status {root}` shows finished tasks.", file=sys.stderr)
        return EXIT_NOT_FINISHED

    done: list[tuple[Task, ResultSet]] = []
    for t in tasks:
        if t.state != DONE:
            continue
        try:
            folder = root / t.folder
            outside = [f for f in files_in(folder) if not files.inside(root, f)]
            if outside:
                raise InputError(f"{outside[0]} leads outside the fleet folder {root} (a "
                                 "symbolic link): no file outside it is read.")
            done.append((t, load(folder)))
        except InputError as exc:
            t.state, t.detail = FAILED, f"its results are unusable: {exc}"
    labels: dict[str, str] = {}
    out = out or root / "report"
    if done:
        sets = []
        for (t, rs), label in zip(done, _column_labels(done)):
            labels[t.task_id] = label
            sets.append(ResultSet(rs.path, {**rs.context, "gpu_name": label}, rs.benchmarks))
        md, page, images = report.write(sets, out, appendix=_fleet_section(m, tasks, labels))
        print(f"tcbench fleet: {len(sets)} GPU column(s) -> {md}, {page} and {len(images)} plots.")
        if db is not None:
            _add_to_history(db, done)
    for t in tasks:
        if t.state in PROBLEMS:
            print(f"tcbench fleet: task {t.task_id} (partition {t.partition}"
                  f"{', node ' + t.node if t.node else ''}) {t.state}: {t.detail}", file=sys.stderr)
        elif t.state == NO_GPU:
            print(f"tcbench fleet: task {t.task_id} (partition {t.partition}, node {t.node}) "
                  f"found no GPU: {t.detail}", file=sys.stderr)
    if active:
        print(f"tcbench fleet: {len(active)} task(s) still pending or running: the report is "
              "partial; collect again when they have finished.", file=sys.stderr)
    problems = [t for t in tasks if t.state in PROBLEMS]
    if problems:
        print(f"tcbench fleet: {len(problems)} of {len(tasks)} task(s) did not deliver results.",
              file=sys.stderr)
        return EXIT_FAIL
    if active:
        return EXIT_NOT_FINISHED
    if not done:
        print("tcbench fleet: no task found a GPU: nothing was measured, no report written.",
              file=sys.stderr)
        return EXIT_NO_GPU
    return EXIT_OK
