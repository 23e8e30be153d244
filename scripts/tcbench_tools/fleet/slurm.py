"""The Slurm client commands ``tcbench fleet`` uses, and what their output means.

Only the documented, stable output forms are read (Slurm >= 22.05):
- ``sinfo -h -o %R``: one partition name per line.
- ``sbatch --parsable``: ``JOBID`` or ``JOBID;CLUSTER``.
- ``squeue --me -h -r -o '%F|%K|%T|%N|%r'``: array job id, array task id, state, nodes, reason;
  ``-r`` prints each array task on its own line, pending ones included.
- ``sacct -n -P -X -o JobID,State,ExitCode,NodeList``: ``JOBID_TASK|STATE|EXIT:SIGNAL|NODES``,
  the record of finished tasks when the cluster keeps accounting (slurmdbd).
- ``scontrol -o show job ID``: one line of ``Key=Value`` per task; the controller keeps a
  finished job for MinJobAge seconds (300 by default), the fallback when sacct has no record.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass

from tcbench_tools.arguments import ascii_int
from tcbench_tools.errors import InputError
from tcbench_tools.printable import printable

TIMEOUT = 60  # seconds for one client call: a controller that does not answer is an error

# squeue states of a task that has not finished (man squeue, JOB STATE CODES).
PENDING_STATES = {"PENDING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "RESV_DEL_HOLD",
                  "CONFIGURING", "SPECIAL_EXIT", "RESIZING"}
RUNNING_STATES = {"RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT"}


@dataclass
class QueueEntry:
    """A task that squeue still lists."""

    state: str  # PENDING, RUNNING, ...
    node: str  # "" while pending
    reason: str  # why it waits (Resources, Priority, JobHeldUser, ...)

    @property
    def pending(self) -> bool:
        return self.state not in RUNNING_STATES


@dataclass
class FinalRecord:
    """How Slurm says a task ended (sacct or scontrol)."""

    state: str  # COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, ...
    exit_code: int | None
    signal: int | None
    node: str
    source: str  # "sacct" or "scontrol"


def require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise InputError(f"{tool} is not on PATH: tcbench fleet needs the Slurm client commands "
                         "(sbatch, squeue, sinfo, scontrol; Slurm >= 22.05) on this machine.")
    return path


def _call(args: list[str], what: str) -> subprocess.CompletedProcess:
    require(args[0])
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise InputError(f"{args[0]} did not answer within {TIMEOUT} s ({what}): is the Slurm "
                         "controller up?") from None
    except OSError as exc:
        raise InputError(f"cannot run {args[0]} ({what}): {exc.strerror or exc}.") from None


def _first_error(proc: subprocess.CompletedProcess) -> str:
    lines = [ln.strip() for ln in (proc.stderr + "\n" + proc.stdout).splitlines() if ln.strip()]
    # "sbatch: error: Batch job submission failed: ..." is the line that says why.
    for line in reversed(lines):
        if "error" in line.lower():
            return re.sub(r"^\w+: error: ", "", line)
    return lines[-1] if lines else f"exit code {proc.returncode}"


def partitions() -> list[str]:
    proc = _call(["sinfo", "-h", "-o", "%R"], "listing partitions")
    if proc.returncode != 0:
        raise InputError(f"sinfo could not list the partitions: {_first_error(proc)}")
    return sorted({ln.strip() for ln in proc.stdout.splitlines() if ln.strip()})


def sbatch(args: list[str]) -> str:
    """Submit; returns the job id. A refusal is an InputError with sbatch's own reason."""
    proc = _call(["sbatch", "--parsable", *args], "submitting")
    if proc.returncode != 0:
        raise InputError(f"sbatch refused the job: {_first_error(proc)}")
    job_id = proc.stdout.strip().split(";", 1)[0]
    if not ascii_int(job_id):
        raise InputError(f"sbatch printed {printable(proc.stdout.strip()[:80])!r}, not a job id.")
    return job_id


def scancel(job_ids: list[str]) -> None:
    if job_ids:
        _call(["scancel", *job_ids], "cancelling")


def queue(job_ids: set[str]) -> dict[tuple[str, int], QueueEntry]:
    """Tasks of these array jobs that squeue still lists."""
    proc = _call(["squeue", "--me", "-h", "-r", "-o", "%F|%K|%T|%N|%r"], "reading the queue")
    if proc.returncode != 0:
        raise InputError(f"squeue could not read the queue: {_first_error(proc)}")
    return parse_queue(proc.stdout, job_ids)


def parse_queue(text: str, job_ids: set[str]) -> dict[tuple[str, int], QueueEntry]:
    """squeue's ``%F|%K|%T|%N|%r`` lines of these array jobs; any other line is skipped."""
    found: dict[tuple[str, int], QueueEntry] = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        task = ascii_int(parts[1]) if len(parts) == 5 else None
        if task is None or parts[0] not in job_ids:
            continue
        found[(parts[0], task)] = QueueEntry(*(printable(p) for p in parts[2:]))
    return found


# Slurm's numbers are ASCII digits (re.ASCII: \d alone would also match "٣").
_TASK_ID = re.compile(r"^([0-9]{1,18})_([0-9]{1,18})$", re.ASCII)
_EXIT_PAIR = re.compile(r"([0-9]{1,18}):([0-9]{1,18})", re.ASCII)


def _exit_pair(text: str) -> tuple[int | None, int | None]:
    """Slurm's ExitCode field, ``EXIT:SIGNAL``."""
    m = _EXIT_PAIR.fullmatch(text.strip())
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


def parse_sacct(text: str) -> dict[tuple[str, int], FinalRecord]:
    found: dict[tuple[str, int], FinalRecord] = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) < 4:
            continue
        m = _TASK_ID.match(parts[0])
        if not m:
            continue  # a pending array's "123_[0-3]" or a step
        state = printable(parts[1].split(" ", 1)[0])  # "CANCELLED by 0" -> CANCELLED
        code, signal = _exit_pair(parts[2])
        found[(m.group(1), int(m.group(2)))] = FinalRecord(state, code, signal,
                                                           printable(parts[3]), "sacct")
    return found


def accounting(job_ids: set[str]) -> dict[tuple[str, int], FinalRecord] | None:
    """sacct's records of these jobs; None when the cluster keeps no accounting."""
    if not job_ids or shutil.which("sacct") is None:
        return None
    proc = _call(["sacct", "-n", "-P", "-X", "-j", ",".join(sorted(job_ids)),
                  "-o", "JobID,State,ExitCode,NodeList"], "reading accounting")
    if proc.returncode != 0:
        return None  # "Slurm accounting storage is disabled": fall back to scontrol
    return parse_sacct(proc.stdout)


def parse_scontrol(text: str) -> dict[tuple[str, int], FinalRecord]:
    found: dict[tuple[str, int], FinalRecord] = {}
    for line in text.splitlines():
        fields = dict(item.split("=", 1) for item in line.split() if "=" in item)
        job, task = fields.get("ArrayJobId", ""), ascii_int(fields.get("ArrayTaskId", ""))
        if ascii_int(job) is None or task is None:
            continue  # not an array task, or a pending range "0-3"
        code, signal = _exit_pair(fields.get("ExitCode", ""))
        node = printable(fields.get("NodeList", ""))
        found[(job, task)] = FinalRecord(printable(fields.get("JobState", "UNKNOWN")), code,
                                         signal, "" if node == "(null)" else node, "scontrol")
    return found


def controller_records(job_ids: set[str]) -> dict[tuple[str, int], FinalRecord]:
    """What the controller still remembers of these jobs (finished ones for MinJobAge)."""
    found: dict[tuple[str, int], FinalRecord] = {}
    for job in sorted(job_ids):
        proc = _call(["scontrol", "-o", "show", "job", job], "reading job records")
        if proc.returncode == 0:  # else "Invalid job id specified": forgotten
            found.update(parse_scontrol(proc.stdout))
    return found
