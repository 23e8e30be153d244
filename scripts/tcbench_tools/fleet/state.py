"""Where each task of a fleet run stands: its own files first, then what Slurm says.

A fleet folder holds ``_fleet/manifest.json`` (written by ``fleet submit``: the partitions, their
array job ids and task counts) and, per task, ``_fleet/tasks/<job>_<task>``: ``key=value`` lines
the task writes when it starts (partition, node, gpu, gpu_name, folder) and ``exit=N`` when
``tcbench run`` returns. A task's own exit record is the most direct evidence; Slurm (squeue for
tasks not finished, then sacct, then scontrol) says the rest: pending, running, cancelled, timed
out, node failure. A task Slurm says has ended but that left no files means the folder is not on
a file system the compute nodes share.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from tcbench_tools.fleet import slurm
from tcbench_tools.errors import EXIT_NO_GPU, InputError
from tcbench_tools.runner import _last_line as last_line  # a log's last non-empty line

FLEET_DIR = "_fleet"
MANIFEST = "manifest.json"
MANIFEST_VERSION = 1

# Task states, in the order status lists them.
DONE, NO_GPU, FAILED, CANCELLED, NO_FILES, LOST, RUNNING, PENDING = (
    "done", "no GPU", "failed", "cancelled", "no files", "lost", "running", "pending")
PROBLEMS = (FAILED, CANCELLED, NO_FILES, LOST)  # collect exits 1 when any task is in one
ACTIVE = (RUNNING, PENDING)  # collect exits 75 (come back later) when any task is in one


@dataclass
class PartitionJob:
    partition: str
    job_id: str
    tasks: int


@dataclass
class Manifest:
    root: Path  # the fleet folder
    jobs: list[PartitionJob]
    settings: dict = field(default_factory=dict)

    @property
    def job_ids(self) -> set[str]:
        return {j.job_id for j in self.jobs}

    def marker(self, job_id: str, index: int) -> Path:
        return self.root / FLEET_DIR / "tasks" / f"{job_id}_{index}"

    def log(self, job_id: str, index: int) -> Path:
        return self.root / FLEET_DIR / "logs" / f"{job_id}_{index}.out"


def manifest_path(root: Path) -> Path:
    return root / FLEET_DIR / MANIFEST


def load_manifest(root: Path) -> Manifest:
    path = manifest_path(root)
    if not root.is_dir():
        raise InputError(f"{root} is not a folder (give the --out folder of `tcbench fleet submit`).")
    if not path.is_file():
        raise InputError(f"{root} is not a fleet folder: it has no {FLEET_DIR}/{MANIFEST} "
                         "(give the --out folder of `tcbench fleet submit`).")
    try:
        doc = json.loads(path.read_text())
        jobs = [PartitionJob(str(j["partition"]), str(j["job_id"]), int(j["tasks"]))
                for j in doc["jobs"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path} is unreadable or not a fleet manifest ({exc}).") from None
    if doc.get("version") != MANIFEST_VERSION or not jobs:
        raise InputError(f"{path} is not a fleet manifest of this tcbench (version "
                         f"{doc.get('version')!r}, {len(jobs)} jobs).")
    return Manifest(root, jobs, doc.get("settings", {}))


def write_manifest(root: Path, jobs: list[PartitionJob], settings: dict) -> Path:
    path = manifest_path(root)
    doc = {"version": MANIFEST_VERSION, "settings": settings,
           "jobs": [{"partition": j.partition, "job_id": j.job_id, "tasks": j.tasks} for j in jobs]}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(path)
    return path


def read_marker(path: Path) -> dict[str, str]:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return {}
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


@dataclass
class Task:
    partition: str
    job_id: str
    index: int
    state: str
    node: str = ""
    gpu: str = ""  # the node's GPU index(es) Slurm assigned
    gpu_name: str = ""
    folder: str = ""  # relative to the fleet folder: <partition>/<node>-<gpu>
    exit_code: int | None = None
    detail: str = ""  # why: Slurm's reason, the task's last log line, what is missing

    @property
    def task_id(self) -> str:
        return f"{self.job_id}_{self.index}"


def _exit_text(rec: slurm.FinalRecord) -> str:
    if rec.signal:
        return f"signal {rec.signal}"
    return f"exit {rec.exit_code}" if rec.exit_code is not None else "no exit code"


SIGNAL_BASE = 128  # a shell's exit status for a child killed by signal N is 128 + N


def recorded_exit(marker: dict[str, str]) -> int | None:
    try:
        return int(marker["exit"])
    except (KeyError, ValueError):
        return None


def _rel(m: Manifest, path: Path) -> str:
    return str(path.relative_to(m.root))


def resolve(m: Manifest, job: PartitionJob, index: int, marker: dict[str, str],
            queued: slurm.QueueEntry | None, final: slurm.FinalRecord | None) -> Task:
    """One task's state from its own record, the queue and Slurm's final record."""
    t = Task(job.partition, job.job_id, index, LOST, marker.get("node", ""),
             marker.get("gpu", ""), marker.get("gpu_name", ""), marker.get("folder", ""))
    log = m.log(job.job_id, index)
    own = recorded_exit(marker)
    # A task killed by a signal (scancel, time limit) may still record 128+N; Slurm says why.
    killed = own is not None and own > SIGNAL_BASE and (queued is not None or final is not None)
    if "exit" in marker and not killed:  # the task itself recorded how `tcbench run` ended
        t.exit_code = own
        if t.exit_code == 0:
            t.state = DONE
            if not (m.root / t.folder / "results.json").is_file():
                t.state, t.detail = NO_FILES, (f"it exited 0 but {t.folder}/results.json is "
                                               "missing")
        elif t.exit_code == EXIT_NO_GPU:
            t.state, t.detail = NO_GPU, last_line(log) or "tcbench run exited 77"
        else:
            t.state = FAILED
            t.detail = f"exit {marker['exit']}: {last_line(log) or 'no log'} (log: {_rel(m, log)})"
        return t
    if queued is not None:
        t.node = t.node or queued.node
        if queued.pending:
            t.state, t.detail = PENDING, queued.reason
        else:
            t.state, t.detail = RUNNING, queued.state.lower()
        return t
    started = bool(marker)
    if final is not None and (final.state in slurm.PENDING_STATES
                              or final.state in slurm.RUNNING_STATES):
        # The queue changed between squeue and this record: report what the record says.
        t.node = t.node or final.node
        t.state = PENDING if final.state in slurm.PENDING_STATES else RUNNING
        t.detail = final.state.lower()
        return t
    if final is not None:
        t.node = t.node or final.node
        t.exit_code = final.exit_code
        if final.state == "CANCELLED":
            t.state = CANCELLED
            t.detail = "cancelled " + ("while running" if started else "before it started")
        elif not started and final.node and final.state in ("COMPLETED", "FAILED"):
            # It ran (Slurm names its node) yet wrote nothing here: not the folder it wrote to.
            t.state = NO_FILES
            t.detail = (f"Slurm says it ended ({final.state}, {_exit_text(final)}) on "
                        f"{final.node}, but it left nothing in {m.root}: is that folder on a "
                        "file system the compute nodes share?")
        else:
            t.state = FAILED
            own_text = (f"the task was killed by signal {own - SIGNAL_BASE}" if killed
                        else "the task recorded no exit of its own")
            t.detail = (f"Slurm says {final.state} ({_exit_text(final)}) and {own_text}; "
                        f"{last_line(log) or 'no log'}")
        return t
    if started:
        t.state, t.detail = LOST, ("it started but recorded no exit, and Slurm no longer knows "
                                   "the task (cancelled, timed out or its node failed)")
    else:
        t.state, t.detail = LOST, ("Slurm no longer knows the task and it left no files in "
                                   f"{m.root} (is that folder shared with the compute nodes?)")
    return t


def gather(m: Manifest) -> list[Task]:
    """Every task of the fleet, with its state."""
    queued = slurm.queue(m.job_ids)
    markers = {(j.job_id, i): read_marker(m.marker(j.job_id, i))
               for j in m.jobs for i in range(j.tasks)}
    # Slurm's record is needed only for tasks that are neither queued nor recorded an exit.
    unsettled = {key for key, mk in markers.items() if key not in queued
                 and ("exit" not in mk or (recorded_exit(mk) or 0) > SIGNAL_BASE)}
    finals: dict[tuple[str, int], slurm.FinalRecord] = {}
    if unsettled:
        jobs = {job for job, _ in unsettled}
        finals = slurm.accounting(jobs) or {}
        if not all(key in finals for key in unsettled):
            finals = {**slurm.controller_records(jobs), **finals}
    tasks = []
    for j in m.jobs:
        for i in range(j.tasks):
            key = (j.job_id, i)
            tasks.append(resolve(m, j, i, markers[key], queued.get(key), finals.get(key)))
    return tasks


def fill_gpu_names(m: Manifest, tasks: list[Task]) -> None:
    """Tasks whose node had no nvidia-smi: the name from the results' context."""
    for t in tasks:
        if t.state == DONE and not t.gpu_name:
            try:
                doc = json.loads((m.root / t.folder / "results.json").read_text())
                t.gpu_name = str(doc.get("context", {}).get("gpu_name") or "")
            except (OSError, ValueError, AttributeError):
                pass


def counts(tasks: list[Task]) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in tasks:
        out[t.state] = out.get(t.state, 0) + 1
    return out


def count_text(tasks: list[Task]) -> str:
    c = counts(tasks)
    order = (DONE, NO_GPU, FAILED, CANCELLED, NO_FILES, LOST, RUNNING, PENDING)
    return ", ".join(f"{c[s]} {s}" for s in order if c.get(s))
