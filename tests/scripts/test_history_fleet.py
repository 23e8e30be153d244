"""tcbench fleet collect --history URL: the finished tasks' runs go into the history too.

A fleet folder as fleet submit and its tasks leave it (manifest, task records, results), and an
``squeue`` on PATH that lists nothing (every task has recorded its exit), so no cluster is needed;
the end-to-end Slurm tests are in test_fleet_slurm.py.
"""

from __future__ import annotations

import json
import shutil
import sqlite3

from conftest import fixture

TASKS = (("a100", "node1", "gpu_c.json"), ("h100", "node2", "fp8_gpu_h.json"))


def test_collect_adds_the_runs_to_the_history(cli, tmp_path, monkeypatch):
    root = tmp_path / "fleet"
    (root / "_fleet" / "tasks").mkdir(parents=True)
    jobs = []
    for i, (partition, node, name) in enumerate(TASKS):
        job = str(100 + i)
        jobs.append({"partition": partition, "job_id": job, "tasks": 1})
        folder = root / partition / f"{node}-0"
        folder.mkdir(parents=True)
        shutil.copy(fixture(name), folder / "results.json")
        doc = json.loads(fixture(name).read_text())
        (root / "_fleet" / "tasks" / f"{job}_0").write_text(
            f"partition={partition}\nnode={node}\ngpu=0\ngpu_name={doc['context']['gpu_name']}\n"
            f"folder={partition}/{node}-0\nexit=0\n")
    (root / "_fleet" / "manifest.json").write_text(json.dumps(
        {"version": 1, "settings": {"submitted": "2026-01-01"}, "jobs": jobs}))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "squeue").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "squeue").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    db = tmp_path / "h.sqlite"
    code, out, err = cli("fleet", "collect", root, "--history", db)
    assert code == 0, err
    assert f"2 run(s) added to the history in {db}, 0 already there." in out
    # Both fixtures carry tcbench_synthetic: collect says so, in history add's words (issue 33).
    assert "tcbench fleet: SYNTHETIC DATA: 2 of the 2 run(s) (" in out
    with sqlite3.connect(db) as conn:
        gpus = sorted(r[0] for r in conn.execute("SELECT gpu_name FROM runs"))
    assert gpus == ["Fixture GPU C", "Fixture GPU H (fp8)"]  # the GPU names, not report labels
    # history add of the fleet folder finds the same runs: the same content, the same run ids.
    code, out, err = cli("history", "add", root, "--db", db)
    assert code == 0 and "0 run(s) added" in out and "2 already there" in out
