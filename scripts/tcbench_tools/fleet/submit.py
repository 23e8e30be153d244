"""``tcbench fleet submit``: one Slurm job array per partition, one array task per GPU.

Every task runs ``tcbench run`` from one bundle (or the given ``--bin-dir``) on the node Slurm
picked, into ``<out>/<partition>/<node>-<gpu index>/``, with the GPU Slurm assigned
(``CUDA_VISIBLE_DEVICES`` as Slurm sets it, ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` so that index means
what nvidia-smi means). The batch script is written to ``<out>/_fleet/task.sbatch`` so that a
user can read exactly what ran. A Slurm job's partition is fixed at submission, hence one
``sbatch`` per partition rather than one array across partitions.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from tcbench_tools import build, runner
from tcbench_tools.arguments import ascii_int
from tcbench_tools.errors import EXIT_OK, InputError
from tcbench_tools.fleet import slurm
from tcbench_tools.fleet.state import FLEET_DIR, PartitionJob, manifest_path, write_manifest
from tcbench_tools.printable import printable

JOB_NAME = "tcbench-fleet"
RESERVED = {FLEET_DIR, "report"}  # folder names in <out> that are not partitions
_NAME = re.compile(r"[A-Za-z0-9_.-]+", re.ASCII)  # fullmatch: "$" would let "a\n" through
_GRES = re.compile(r"[A-Za-z0-9_]+(:[A-Za-z0-9_.-]+)?(:[0-9]+)?", re.ASCII)

SCRIPT = """#!/bin/bash
# One task of a tcbench fleet run, written by `tcbench fleet submit` on {date} (docs/fleet.md).
# Submitted once per partition as a job array: every task measures the GPU Slurm gave it.
set -u
out={out}
tcbench={tcbench}

node="${{SLURMD_NODENAME:-$(hostname -s)}}"
# The node's indices of the GPUs Slurm assigned (gres.conf order); Slurm sets
# CUDA_VISIBLE_DEVICES to match, and PCI bus order makes CUDA's numbering nvidia-smi's.
gpus="${{SLURM_JOB_GPUS:-${{CUDA_VISIBLE_DEVICES:-}}}}"
gpu="${{gpus//,/+}}"
gpu="${{gpu:-all}}"
export CUDA_DEVICE_ORDER=PCI_BUS_ID
task="${{SLURM_ARRAY_JOB_ID}}_${{SLURM_ARRAY_TASK_ID}}"

# Two tasks that Slurm gives the same GPU, one after the other, keep separate folders.
folder="${{SLURM_JOB_PARTITION}}/${{node}}-${{gpu}}"
mkdir -p "$out/${{SLURM_JOB_PARTITION}}"
if ! mkdir "$out/$folder" 2>/dev/null; then
  folder="${{folder}}-${{task}}"
  mkdir -p "$out/$folder"
fi

gpu_name=""
if command -v nvidia-smi >/dev/null 2>&1; then
  # Under device cgroups the job sees only its GPU, as index 0: then -i fails, ask for all.
  names="$(nvidia-smi --query-gpu=name --format=csv,noheader -i "${{gpus%%,*}}" 2>/dev/null)" ||
    names="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)" || names=""
  gpu_name="${{names%%$'\n'*}}"
fi

# The task's own record, read by `tcbench fleet status` and `collect`.
marker="$out/{fleet_dir}/tasks/$task"
{{
  echo "partition=${{SLURM_JOB_PARTITION}}"
  echo "node=$node"
  echo "gpu=$gpu"
  echo "gpu_name=$gpu_name"
  echo "folder=$folder"
  echo "started=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}} >"$marker"
echo "tcbench fleet: task $task on $node, GPU $gpu${{gpu_name:+ ($gpu_name)}}," \
  "results in $out/$folder"

"$tcbench" run --out "$out/$folder" {run_args}
code=$?
{{
  echo "exit=$code"
  echo "finished=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
}} >>"$marker"
exit "$code"
"""  # noqa: E501 - the script's lines are as long as they need


def parse_partitions(text: str) -> list[str]:
    names = [p.strip() for p in text.split(",")]
    if not names or any(not p for p in names):
        raise InputError(f"--partition {text!r} has an empty name (give P or P1,P2,...).")
    for p in names:
        if not _NAME.fullmatch(p):
            raise InputError(f"--partition: {printable(p)!r} is not a Slurm partition name.")
        if p in RESERVED:
            raise InputError(f"--partition: {p!r} would clash with the fleet's own "
                             f"{p}/ folder; tcbench fleet cannot use a partition of that name.")
    if len(set(names)) != len(names):
        raise InputError(f"--partition {text!r} names a partition twice.")
    return names


def check_gres(text: str) -> str | None:
    """``none`` -> no GRES request; else Slurm's name[:type][:count] form, with a count of 1 or
    more (Slurm reads a last field of digits as the count: ``gpu:0`` asks for no GPU)."""
    if text == "none":
        return None
    if not _GRES.fullmatch(text):
        raise InputError(f"--gres {printable(text)!r} is not a GRES request such as gpu:1 or "
                         "gpu:a100:1 (or 'none').")
    fields = text.split(":")
    count = ascii_int(fields[-1]) if len(fields) > 1 else None
    if count == 0:
        raise InputError(f"--gres {text!r} requests 0 of {fields[0]}: every task would run "
                         "without a GPU and could only end 'no GPU' (give a count of 1 or more, "
                         "or 'none' to request nothing).")
    return text


def _is_bundle(root: Path) -> bool:
    return not (root / "CMakeLists.txt").exists() and (root / "bin").is_dir()


def build_bundle(dest: Path) -> Path:
    """Build every architecture of the ci preset's list (TCBENCH_CUDA_ARCHS=all) in release
    mode and install the bundle into ``dest`` (on the shared file system)."""
    repo = build.repo_root()
    build_dir = repo / "build" / "fleet"
    steps = [("configure", build.configure_args("release")
              + ["-B", str(build_dir), "-DTCBENCH_CUDA_ARCHS=all"]),
             ("build", ["cmake", "--build", str(build_dir), "--parallel",
                        str(os.cpu_count() or 1)]),
             ("install", ["cmake", "--install", str(build_dir), "--prefix", str(dest)])]
    for title, cmd in steps:
        print(f"tcbench fleet: {title} the bundle ...", flush=True)
        try:
            code = subprocess.call(cmd, cwd=repo)
        except FileNotFoundError:
            raise InputError("cmake is not installed or not on PATH: build a bundle elsewhere "
                             "and pass --bundle.") from None
        if code != 0:
            raise InputError(f"building the bundle failed at the {title} step (exit {code}); "
                             "nothing was submitted.")
    return dest


def prepare_tools(tcbench: Path) -> None:
    """Create the bundle's Python environment once here, so that tasks do not all try at once
    on the shared file system (nor need network access on the compute nodes)."""
    if tcbench.resolve() == (build.repo_root() / "scripts" / "tcbench").resolve():
        return  # the tools running this command: their environment exists
    proc = subprocess.run([str(tcbench), "--version"], capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise InputError(f"{tcbench} could not prepare its Python environment: {tail}")


def resolve_programs(bundle: Path | None, bin_dir: Path | None,
                     share: Path) -> tuple[Path, Path]:
    """(the tcbench entry point tasks run, the folder of bench_* binaries)."""
    repo = build.repo_root()
    if bundle is not None and bin_dir is not None:
        raise InputError("give --bundle or --bin-dir, not both.")
    if bin_dir is not None:
        bins = bin_dir.resolve()
        runner.discover(bins)  # one sentence when it holds no benchmarks
        return repo / "scripts" / "tcbench", bins
    if bundle is None and _is_bundle(repo):
        bundle = repo  # running from an unpacked bundle: tasks run it too
    if bundle is None:
        bundle = build_bundle(share.resolve() / "bundle")
    bundle = bundle.resolve()
    tcbench = bundle / "scripts" / "tcbench"
    if not tcbench.is_file() or not (bundle / "bin").is_dir():
        raise InputError(f"{bundle} is not a tcbench bundle (it needs bin/ and scripts/tcbench: "
                         "`cmake --install` or an unpacked CPack tarball).")
    runner.discover(bundle / "bin")
    return tcbench, bundle / "bin"


def write_script(out: Path, tcbench: Path, bins: Path, quick: bool, extra: list[str]) -> Path:
    args = ["--bin-dir", str(bins)] + (["--quick"] if quick else [])
    if extra:
        args += ["--", *extra]
    text = SCRIPT.format(date=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                         out=shlex.quote(str(out)), tcbench=shlex.quote(str(tcbench)),
                         fleet_dir=FLEET_DIR, run_args=" ".join(shlex.quote(a) for a in args))
    path = out / FLEET_DIR / "task.sbatch"
    path.write_text(text)
    path.chmod(0o755)
    return path


def submit(partition: str, gres: str, nodes: int, quick: bool, out: Path,
           bundle: Path | None, bin_dir: Path | None, share: Path | None, time_limit: str | None,
           sbatch_args: list[str], extra: list[str]) -> int:
    names = parse_partitions(partition)
    gres_request = check_gres(gres)
    slurm.require("sbatch")
    out = out.resolve()
    if manifest_path(out).exists():
        raise InputError(f"{out} already holds a fleet run ({FLEET_DIR}/manifest.json): give a new "
                         "--out folder.")
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file, not a folder.")
    known = slurm.partitions()
    unknown = [p for p in names if p not in known]
    if unknown:
        raise InputError(f"no partition named {', '.join(unknown)} on this cluster (sinfo lists: "
                         f"{', '.join(known) or 'none'}).")
    try:
        for sub in ("tasks", "logs"):
            (out / FLEET_DIR / sub).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {out / FLEET_DIR}: {exc.strerror or exc}.") from None
    tcbench, bins = resolve_programs(bundle, bin_dir, share or out)
    prepare_tools(tcbench)
    script = write_script(out, tcbench, bins, quick, extra)

    common = [f"--array=0-{nodes - 1}", f"--job-name={JOB_NAME}", f"--chdir={out}",
              f"--output={out / FLEET_DIR / 'logs' / '%A_%a.out'}"]
    if gres_request:
        common.append(f"--gres={gres_request}")
    if time_limit:
        common.append(f"--time={time_limit}")
    jobs: list[PartitionJob] = []
    for p in names:
        try:
            job_id = slurm.sbatch([f"--partition={p}", *common, *sbatch_args, str(script)])
        except InputError as exc:
            slurm.scancel([j.job_id for j in jobs])
            done = (f"; the {len(jobs)} job(s) already submitted were cancelled" if jobs else "")
            raise InputError(f"partition {p}: {exc}{done}") from None
        jobs.append(PartitionJob(p, job_id, nodes))
    settings = {"submitted": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "gres": gres_request, "quick": quick, "extra_args": extra,
                "tcbench": str(tcbench), "bin_dir": str(bins), "sbatch_args": sbatch_args}
    write_manifest(out, jobs, settings)

    total = sum(j.tasks for j in jobs)
    print(f"tcbench fleet: submitted {total} task(s) as {len(jobs)} job array(s):")
    for j in jobs:
        print(f"  partition {j.partition}: job {j.job_id} ({j.tasks} task(s))")
    ids = ",".join(j.job_id for j in jobs)
    print(f"Follow:  tcbench fleet status {out}    (or: squeue -j {ids})\n"
          f"Wait:    tcbench fleet status {out} --wait\n"
          f"Report:  tcbench fleet collect {out}    (writes {out / 'report'})")
    sys.stdout.flush()
    return EXIT_OK
