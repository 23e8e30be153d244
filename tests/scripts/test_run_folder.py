"""One run folder (issue 42): every mode writes it, and every reader finds and reads it by one
path (runfile.run_folders, then results.load).

Each mode runs with stand-ins: ``tcbench run`` and ``run --device all`` with fake binaries and a
fake nvidia-smi, a fleet task as its own batch script (the Slurm variables set by hand), and the
GPU check from a stand-in bundle. Before, each wrote its own layout (the check: one file per step
and no results.json) and ``history add`` knew three of them by name.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import REPO, make_fake
from gpu_check_standins import add_bench, add_studies, environment, make_bundle
from tcbench_tools import results, runfile
from tcbench_tools.fleet import submit


def _bins(root: Path) -> Path:
    bins = root / "bin"
    make_fake(bins, "bench_fp16_vs_fp32", topic="fp16_vs_fp32")
    make_fake(bins, "bench_int8_gemm", topic="int8_gemm")
    return bins


def _fleet_task(root: Path, bins: Path) -> Path:
    """What one array task of ``fleet submit`` does on its node: its batch script, as sbatch
    would start it."""
    fleet = root / "fleet"
    (fleet / "_fleet" / "tasks").mkdir(parents=True)
    script = submit.write_script(fleet, REPO / "scripts" / "tcbench", bins, True, [])
    env = dict(os.environ, SLURMD_NODENAME="node1", SLURM_JOB_GPUS="0", SLURM_ARRAY_JOB_ID="7",
               SLURM_ARRAY_TASK_ID="0", SLURM_JOB_PARTITION="a100")
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return fleet


def _check(root: Path) -> Path:
    bundle = make_bundle(root)
    for name in ("bench_int8_gemm", "bench_fp16_vs_fp32"):
        add_bench(bundle, name, context={"tcbench_quick": "true"})  # as the binaries write it
    add_studies(bundle)
    out = root / "check"
    subprocess.run([str(bundle / "scripts" / "gpu_check.sh"), str(out)], env=environment(root),
                   capture_output=True, text=True, timeout=120, check=False)
    return out


def test_every_mode_writes_one_run_folder_that_every_reader_reads(cli, tmp_path,
                                                                 fake_nvidia_smi):
    bins = _bins(tmp_path)
    run, node = tmp_path / "run", tmp_path / "node"
    assert cli("run", "--bin-dir", bins, "--out", run)[0] == 0
    assert cli("run", "--bin-dir", bins, "--out", node, "--device", "all")[0] == 0
    fleet = _fleet_task(tmp_path, bins)
    check = _check(tmp_path)
    modes = {run: [run], node: [node / "gpu0", node / "gpu1"],
             fleet: [fleet / "a100" / "node1-0"], check: [check / "results"]}
    for parent, folders in modes.items():
        assert runfile.run_folders(parent) == folders
        for folder in folders:
            # The same layout: each row once, in results.json; no per-binary copies left.
            assert (folder / "results.json").is_file(), folder
            assert list(folder.glob("bench_*.json*")) == [], folder
            rs = results.load(folder)
            assert {b.binary for b in rs.benchmarks.values()} >= {"bench_int8_gemm"}
            code, out, err = cli("compare", folder, folder)
            assert code == 0, (folder, out, err)
        code, out, err = cli("answers", folders[-1], "--json")
        assert code == 0 and json.loads(out)["questions"], (parent, err)
    # history add finds every mode's runs by the same path: 1 + 2 + 1 + 1 folders. The
    # stand-ins of run, --device all and the fleet write the same fixture, so one run id.
    code, out, err = cli("history", "add", run, node, fleet, check, "--db", tmp_path / "h.db")
    assert code == 0, err
    assert "2 run(s) added" in out and "3 already there" in out, out
    code, out, err = cli("report", run, check / "results", "--out", tmp_path / "report")
    assert code == 0, err
