"""Where each task of a fleet run stands: its own files first, then what Slurm says.

A fleet folder holds ``_fleet/manifest.json`` (written by ``fleet submit``: the partitions, their
array job ids and task counts) and, per task, ``_fleet/tasks/<job>_<task>``: ``key=value`` lines
the task writes when it starts (partition, node, gpu, gpu_name, folder) and ``exit=N`` when
``tcbench run`` returns. A task's own exit record is the most direct evidence; Slurm (squeue for
tasks not finished, then sacct, then scontrol) says the rest: pending, running, cancelled, timed
out, node failure. A task Slurm says has ended but that left no files means the folder is not on
a file system the compute nodes share.

Neither file is trusted: the manifest's every field is checked for type and range (one sentence,
exit 2), a task's folder must lie inside the fleet folder (``folder=../elsewhere``, an absolute
path or a symbolic link out of it fails that task with a sentence, and no file outside is read),
both are read with a size bound, and a record's values are printed with their control characters
escaped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from tcbench_tools import files
from tcbench_tools.arguments import ascii_int
from tcbench_tools.errors import EXIT_NO_GPU, InputError
from tcbench_tools.files import last_line  # a log's last non-empty line
from tcbench_tools.fleet import slurm
from tcbench_tools.printable import printable

FLEET_DIR = "_fleet"
MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
MAX_TASKS = 1000  # array tasks per partition (fleet submit --nodes-per-partition)
MAX_JOBS = 100  # partitions in one fleet
# A Slurm partition name (submit checks it too); fullmatch, as "$" would let "a100\n" through.
PARTITION_NAME = re.compile(r"[A-Za-z0-9_.-]+", re.ASCII)
# The settings submit records, with the JSON types each must have.
SETTINGS_TYPES = {"submitted": (str,), "gres": (str, type(None)), "quick": (bool,),
                  "extra_args": (list,), "tcbench": (str,), "bin_dir": (str,),
                  "sbatch_args": (list,)}

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


def _shown(value: object) -> str:
    return printable(json.dumps(value)[:60])


def _check_job(path: Path, index: int, job: object) -> PartitionJob:
    where = f"{path}: jobs[{index}]"
    if not isinstance(job, dict):
        raise InputError(f"{where} is {_shown(job)}, not an object with partition, job_id and "
                         "tasks.")
    for key in ("partition", "job_id", "tasks"):
        if key not in job:
            raise InputError(f"{where} has no {key}.")
    partition, job_id, tasks = job["partition"], job["job_id"], job["tasks"]
    if not isinstance(partition, str) or not PARTITION_NAME.fullmatch(partition) \
            or partition in (FLEET_DIR, "report"):
        raise InputError(f"{where}: partition {_shown(partition)} is not a Slurm partition name.")
    if isinstance(job_id, int) and not isinstance(job_id, bool):
        job_id = str(job_id)
    if not ascii_int(job_id):  # ASCII digits ("²" passes str.isdigit), and never job 0
        raise InputError(f"{where}: job_id {_shown(job_id)} is not a Slurm job id (a whole "
                         "number from 1, in digits 0-9).")
    if isinstance(tasks, bool) or not isinstance(tasks, int) or not 1 <= tasks <= MAX_TASKS:
        raise InputError(f"{where}: tasks {_shown(tasks)} must be a whole number from 1 to "
                         f"{MAX_TASKS} (fleet submit's limit).")
    return PartitionJob(partition, job_id, tasks)


def load_manifest(root: Path) -> Manifest:
    """The manifest, every field checked for its type and range (an InputError naming it)."""
    path = manifest_path(root)
    if not root.is_dir():
        raise InputError(f"{root} is not a folder (give the --out folder of `tcbench fleet "
                         "submit`).")
    if not path.exists():
        raise InputError(f"{root} is not a fleet folder: it has no {FLEET_DIR}/{MANIFEST} "
                         "(give the --out folder of `tcbench fleet submit`).")
    try:
        doc = json.loads(files.read_text(path, files.RECORD_LIMIT, "fleet manifest"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InputError(f"{path} is not a fleet manifest (not JSON: "
                         f"{str(exc).split(':')[0]}).") from None
    if not isinstance(doc, dict):
        raise InputError(f"{path} is not a fleet manifest (it is not a JSON object).")
    if doc.get("version") != MANIFEST_VERSION or isinstance(doc.get("version"), bool):
        raise InputError(f"{path} is not a fleet manifest of this tcbench (version "
                         f"{_shown(doc.get('version'))}; this tcbench reads version "
                         f"{MANIFEST_VERSION}).")
    settings = doc.get("settings", {})
    if not isinstance(settings, dict):
        raise InputError(f"{path}: settings is {_shown(settings)}, not an object.")
    for key, types in SETTINGS_TYPES.items():
        if key in settings and not isinstance(settings[key], types):
            names = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            raise InputError(f"{path}: settings.{key} is {_shown(settings[key])}, which must be "
                             f"{names}.")
    for key in ("extra_args", "sbatch_args"):
        if not all(isinstance(a, str) for a in settings.get(key, [])):
            raise InputError(f"{path}: settings.{key} must be a list of strings.")
    jobs = doc.get("jobs")
    if not isinstance(jobs, list) or not jobs or len(jobs) > MAX_JOBS:
        raise InputError(f"{path}: jobs must be a list of 1 to {MAX_JOBS} partition jobs (it is "
                         f"{_shown(jobs)}).")
    checked = [_check_job(path, i, j) for i, j in enumerate(jobs)]
    ids = [j.job_id for j in checked]
    if len(set(ids)) != len(ids):
        raise InputError(f"{path}: a job id appears twice in jobs.")
    return Manifest(root, checked, settings)


def write_manifest(root: Path, jobs: list[PartitionJob], settings: dict) -> Path:
    path = manifest_path(root)
    doc = {"version": MANIFEST_VERSION, "settings": settings,
           "jobs": [{"partition": j.partition, "job_id": j.job_id, "tasks": j.tasks} for j in jobs]}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(path)
    return path


def read_marker(path: Path) -> dict[str, str]:
    """A task's ``key=value`` record (at most 1 MiB, values made printable); {} when absent or
    unreadable."""
    try:
        text = files.read_text(path, files.RECORD_LIMIT, "task record", errors="replace")
    except InputError:
        return {}
    return {key: printable(value) for key, value in
            (line.split("=", 1) for line in text.splitlines() if "=" in line)}


def folder_problem(m: Manifest, partition: str, folder: str) -> str | None:
    """Why a task's recorded results folder cannot be read (a sentence without its full stop),
    or None: it must be <partition>/<node>-<gpu> inside the fleet folder, links resolved."""
    where = f"its record names the results folder {folder!r}"
    parts = Path(folder).parts
    if not folder or Path(folder).is_absolute() or ".." in parts or len(parts) != 2 \
            or parts[0] != partition:
        return (f"{where}, which is not {partition}/<node>-<gpu> inside the fleet folder "
                f"{m.root}: no file outside it is read")
    if (m.root / folder).exists() and not files.inside(m.root, m.root / folder):
        return (f"{where}, which leads outside the fleet folder {m.root} (a symbolic link): no "
                "file outside it is read")
    return None


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
    """The exit status the task recorded (``exit=N``, N in ASCII digits); None without one."""
    return ascii_int(marker.get("exit", "").strip())


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
        if t.exit_code == 0 and (why := folder_problem(m, t.partition, t.folder)):
            t.state, t.detail = FAILED, why
        elif t.exit_code == 0:
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
                doc = json.loads(files.read_text(m.root / t.folder / "results.json",
                                                 files.RESULTS_LIMIT, "result file"))
                t.gpu_name = printable(doc.get("context", {}).get("gpu_name") or "")
            except (InputError, UnicodeDecodeError, ValueError, RecursionError, AttributeError):
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
