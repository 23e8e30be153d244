"""Property-based tests of the fleet readers: fleet manifests and task
records written at random (any JSON in any field, hostile names, folders that lead outside,
exit codes in other digits), Slurm's own output (squeue, sacct, scontrol lines at random), and
``fleet status`` / ``fleet collect`` on a generated fleet folder against the real single-node
Slurm the tests start (slurm_cluster.py). The property is properties.check's.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import properties as p
from conftest import fixture
from slurm_cluster import SlurmCluster, SlurmUnavailable

PARTITIONS = ["a100", "h100"]
RECORD_KEYS = ["partition", "node", "gpu", "gpu_name", "folder", "started", "exit", "finished"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = SlurmCluster(tmp_path_factory.mktemp("slurm"), PARTITIONS)
    try:
        c.start()
    except SlurmUnavailable as exc:
        c.stop()
        if os.environ.get("TCBENCH_REQUIRE_SLURM") == "1":
            pytest.fail(f"Slurm could not start and TCBENCH_REQUIRE_SLURM=1: {exc}")
        pytest.skip(f"Slurm could not start here: {exc}")
    yield c
    c.stop()


slurm_text = st.lists(st.one_of(
    p.hostile_text,
    st.builds("|".join, st.lists(st.sampled_from(["41", "41_0", "41_[0-3]", "0", "²", "٣",
                                                   "RUNNING", "PENDING", "CANCELLED by 0",
                                                   "0:15", "1:0", "n1", "", "(null)"])
                                 | p.hostile_text, max_size=6)),
    st.builds(" ".join, st.lists(st.builds("{}={}".format, st.sampled_from(
        ["JobId", "ArrayJobId", "ArrayTaskId", "JobState", "ExitCode", "NodeList"]) |
        p.hostile_text, st.sampled_from(["41", "0", "1-3", "FAILED", "77:0", "(null)", "²"]) |
        p.hostile_text), max_size=7))), max_size=6).map("\n".join)


@settings(max_examples=p.examples(60))
@given(text=slurm_text)
def test_slurm_output_is_read_or_skipped(text):
    from tcbench_tools.fleet import slurm

    with p.time_limit():
        records = {**slurm.parse_sacct(text), **slurm.parse_scontrol(text)}
        queued = slurm.parse_queue(text, {"41", "0"})
    for (job, task), rec in records.items():
        assert job.isascii() and job.isdigit() and isinstance(task, int)
        assert p.printable_text(rec.state + rec.node) and "\n" not in rec.state + rec.node
    for entry in queued.values():
        assert p.printable_text(entry.state + entry.node + entry.reason)


record_value = st.one_of(p.hostile_text, st.sampled_from(
    ["a100", "a100/n1-0", "a100/../../etc", "/etc", "a100/n1-0/../..", "h100/n2-1", "0", "77",
     "143", "٠", "²", "-1", "1" * 30, "n1", "0+1", "Fixture GPU C"]))


@st.composite
def fleet(draw):
    """A fleet folder's files: the manifest (a plausible one changed at random, or any JSON, or
    bytes), and per task a record, a log line and a results file of some kind."""
    jobs = []
    for i in range(draw(st.integers(1, 2))):
        job = {"partition": draw(p.mostly(st.sampled_from(PARTITIONS), p.hostile_text)),
               "job_id": draw(p.mostly(st.sampled_from([str(900000 + i), 900000 + i]),
                                     st.sampled_from(["0", "²", ""]) | p.hostile_text)),
               "tasks": draw(p.mostly(st.sampled_from([1, 2]), st.sampled_from(
                   [0, -1, True, 10 ** 12, "1"]) | p.json_leaf))}
        if not draw(p.mostly(st.just(True), st.just(False))):
            job[draw(st.sampled_from(["partition", "job_id", "tasks"]))] = draw(p.json_value)
        jobs.append(job)
    manifest = {"version": draw(p.mostly(st.just(1), st.sampled_from([2, "1", True]))),
                "settings": draw(p.mostly(st.sampled_from([{}, {"quick": True}]),
                                        st.sampled_from([{"quick": "yes"}, [], None]))),
                "jobs": jobs}
    how = draw(p.mostly(st.just("doc"), st.sampled_from(["json", "bytes"])))
    data = (p.dump(manifest, "ascii") if how == "doc" else
            p.dump(draw(p.json_value), "raw") if how == "json" else draw(st.binary(max_size=40)))
    records = []
    for _ in range(draw(st.integers(0, 3))):
        lines = [f"{draw(st.sampled_from(RECORD_KEYS) | p.hostile_text)}={draw(record_value)}"
                 for _ in range(draw(st.integers(0, 6)))]
        records.append((draw(st.sampled_from(["900000_0", "900000_1", "900001_0"])),
                        "\n".join(lines), draw(st.sampled_from(
                            ["good", "bad", "link_out", "none"])), draw(p.result_bytes())))
    return data, records


def build(root: Path, data: bytes, records) -> Path:
    fleet_dir = root / "fleet"
    for sub in ("tasks", "logs"):
        (fleet_dir / "_fleet" / sub).mkdir(parents=True)
    (fleet_dir / "_fleet" / "manifest.json").write_bytes(data)
    for task, text, results, raw in records:
        (fleet_dir / "_fleet" / "tasks" / task).write_bytes(text.encode("utf-8", "surrogatepass"))
        (fleet_dir / "_fleet" / "logs" / f"{task}.out").write_bytes(raw[-200:])
        folder = None
        for line in text.splitlines():
            if line.startswith("folder="):
                folder = line.split("=", 1)[1]
        if not folder or results == "none" or "\x00" in folder:
            continue
        target = fleet_dir / folder
        try:
            target.mkdir(parents=True, exist_ok=True)
            dest = target / "results.json"
            if results == "good":
                shutil.copy(fixture("gpu_c.json"), dest)
            elif results == "bad":
                dest.write_bytes(raw)
            else:
                dest.symlink_to(fixture("gpu_b.json"))
        except (OSError, ValueError):
            pass  # a folder this file system refuses: the record names it all the same
    return fleet_dir


@settings(max_examples=p.examples(15))
@given(generated=fleet(), action=st.sampled_from(["status", "collect", "collect", "history"]))
def test_fleet_status_and_collect(tmp_path, cluster, monkeypatch, generated, action):
    monkeypatch.setenv("SLURM_CONF", str(cluster.conf))
    work = p.workdir(tmp_path)
    root = build(work, *generated)
    args = {"status": ["status", root],
            "collect": ["collect", root, "--out", work / "report"],
            "history": ["collect", root, "--out", work / "report", "--history",
                        work / "h.sqlite"]}[action]
    o = p.run_cli("fleet", *args, seconds=120)
    p.check(o, {0, 1, 2, 75, 77}, action)
    if (work / "report" / "report.html").exists():
        p.check_html(work / "report" / "report.html")
        p.check_markdown(work / "report" / "report.md")
    outside = fixture("gpu_b.json").read_text()
    if (work / "report" / "report.md").exists():  # nothing read through a link out
        assert json.loads(outside)["context"]["gpu_name"] not in \
            (work / "report" / "report.md").read_text()


@settings(max_examples=p.examples(40))
@given(generated=fleet())
def test_manifest_and_records_are_read_or_refused(tmp_path, generated):
    from tcbench_tools.errors import InputError
    from tcbench_tools.fleet.state import load_manifest, read_marker

    root = build(p.workdir(tmp_path), *generated)
    with p.time_limit():
        try:
            m = load_manifest(root)
        except InputError as exc:
            assert p.printable_text(str(exc)), exc
        else:
            for j in m.jobs:
                assert j.job_id.isascii() and j.job_id.isdigit() and int(j.job_id) >= 1
                assert 1 <= j.tasks <= 1000
        for record in (root / "_fleet" / "tasks").iterdir():
            for key, value in read_marker(record).items():
                assert p.printable_text(value) and "\n" not in value
