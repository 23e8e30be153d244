"""tcbench fleet's readers: bad input, manifests, task records and Slurm's records, without a
cluster; then property-based tests of the same readers, the last against the real single-node
Slurm the tests start. The end-to-end runs on a real Slurm are in test_fleet_slurm.py.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import properties as p
from conftest import fixture, load_doc, script, tcbench, write
from slurm_cluster import SlurmCluster, SlurmUnavailable
from tcbench_tools.errors import exit_text
from tcbench_tools.fleet import slurm
from tcbench_tools.fleet.state import (
    CANCELLED,
    DONE,
    FAILED,
    LOST,
    NO_FILES,
    NO_GPU,
    Manifest,
    PartitionJob,
    resolve,
    write_manifest,
)


@pytest.fixture
def no_slurm(monkeypatch, tmp_path):
    """A PATH without any Slurm command."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


def test_submit_without_sbatch(cli, no_slurm, tmp_path):
    code, out, err = cli("fleet", "submit", "--partition", "a100", "--out", tmp_path / "f")
    assert code == 2
    assert err.strip() == ("tcbench: sbatch is not on PATH: tcbench fleet needs the Slurm client "
                           "commands (sbatch, squeue, sinfo, scontrol; Slurm >= 22.05) on this "
                           "machine.")
    assert not (tmp_path / "f").exists()


@pytest.mark.parametrize("partition, message", [
    ("a100,,h100", "--partition 'a100,,h100' has an empty name (give P or P1,P2,...)."),
    ("a100,a100", "--partition 'a100,a100' names a partition twice."),
    ("gpu partition", "--partition: 'gpu partition' is not a Slurm partition name."),
    ("report", "--partition: 'report' would clash with the fleet's own report/ folder; tcbench "
               "fleet cannot use a partition of that name."),
])
def test_submit_bad_partition_list(cli, tmp_path, partition, message):
    code, out, err = cli("fleet", "submit", "--partition", partition, "--out", tmp_path / "f")
    assert code == 2 and err.strip() == f"tcbench: {message}"


def test_submit_bad_gres_and_counts(cli, tmp_path, capsys):
    code, out, err = cli("fleet", "submit", "--partition", "a", "--gres", "gpu:1:2:3")
    assert code == 2 and err.strip() == ("tcbench: --gres 'gpu:1:2:3' is not a GRES request "
                                         "such as gpu:1 or gpu:a100:1 (or 'none').")
    for bad in ("0", "x"):
        with pytest.raises(SystemExit) as exc:
            cli("fleet", "submit", "--partition", "a", "--nodes-per-partition", bad)
        assert exc.value.code == 2
    assert "--nodes-per-partition" in capsys.readouterr().err


def test_flags_after_dashes_only_for_submit(cli, tmp_path):
    code, out, err = cli("fleet", "status", tmp_path, "--", "--benchmark_filter=x")
    assert code == 2 and "only for 'run', 'fleet submit' and 'profile'" in err


def test_status_and_collect_need_a_fleet_folder(cli, tmp_path):
    for action in ("status", "collect"):
        code, out, err = cli("fleet", action, tmp_path)
        assert code == 2
        assert err.strip() == (f"tcbench: {tmp_path} is not a fleet folder: it has no "
                               "_fleet/manifest.json (give the --out folder of `tcbench fleet "
                               "submit`).")
        code, out, err = cli("fleet", action, tmp_path / "nothing")
        assert code == 2 and "is not a folder" in err
    (tmp_path / "_fleet").mkdir()
    (tmp_path / "_fleet" / "manifest.json").write_text("{\"version\": 1, \"jobs\": 3}")
    code, out, err = cli("fleet", "status", tmp_path)
    assert code == 2 and "jobs must be a list of 1 to 100 partition jobs (it is 3)" in err


def test_status_without_squeue(cli, no_slurm, tmp_path):
    (tmp_path / "_fleet").mkdir()
    write_manifest(tmp_path, [PartitionJob("a100", "12", 1)], {})
    code, out, err = cli("fleet", "status", tmp_path)
    assert code == 2 and err.startswith("tcbench: squeue is not on PATH")


def test_bundle_must_be_a_bundle(tmp_path):
    from tcbench_tools.errors import InputError
    from tcbench_tools.fleet.submit import resolve_programs

    with pytest.raises(InputError, match="is not a tcbench bundle"):
        resolve_programs(tmp_path, None, tmp_path)
    with pytest.raises(InputError, match="give --bundle or --bin-dir, not both"):
        resolve_programs(tmp_path, tmp_path, tmp_path)
    with pytest.raises(InputError, match="holds no benchmark binaries"):
        resolve_programs(None, tmp_path, tmp_path)


# --- Slurm's records -> task states -----------------------------------------------------------

# sacct -n -P -X -o JobID,State,ExitCode,NodeList, as Slurm 22.05 prints it: a pending array
# range, a task cancelled by root, a timeout (signal 0, exit 0), a node failure, a batch step.
SACCT = """\
41_[2-3]|PENDING|0:0|None assigned
41_0|CANCELLED by 0|0:15|gpu-a-01
41_1|TIMEOUT|0:0|gpu-a-02
42_0|NODE_FAIL|0:0|gpu-h-07
42_1|COMPLETED|0:0|gpu-h-08
42_1.batch|COMPLETED|0:0|gpu-h-08
"""


def test_sacct_records():
    recs = slurm.parse_sacct(SACCT)
    assert sorted(recs) == [("41", 0), ("41", 1), ("42", 0), ("42", 1)]
    assert recs[("41", 0)].state == "CANCELLED" and recs[("41", 0)].signal == 15
    assert recs[("41", 1)].state == "TIMEOUT" and recs[("41", 1)].node == "gpu-a-02"
    assert recs[("42", 0)].state == "NODE_FAIL"


def test_scontrol_records():
    text = ("JobId=44 ArrayJobId=43 ArrayTaskId=1 JobName=tcbench-fleet JobState=FAILED "
            "Reason=NonZeroExitCode ExitCode=77:0 NodeList=gpu-b-03 BatchHost=gpu-b-03\n"
            "JobId=43 ArrayJobId=43 ArrayTaskId=2-5 JobState=PENDING ExitCode=0:0 "
            "NodeList=(null)\n")
    recs = slurm.parse_scontrol(text)
    assert list(recs) == [("43", 1)]
    assert recs[("43", 1)].exit_code == 77 and recs[("43", 1)].node == "gpu-b-03"


def _manifest(tmp_path) -> tuple[Manifest, PartitionJob]:
    job = PartitionJob("a100", "41", 2)
    (tmp_path / "_fleet" / "logs").mkdir(parents=True)
    return Manifest(tmp_path, [job]), job


def test_states_from_the_tasks_own_record(tmp_path):
    m, job = _manifest(tmp_path)
    started = {"partition": "a100", "node": "gpu-a-01", "gpu": "3", "folder": "a100/gpu-a-01-3"}
    (tmp_path / "_fleet" / "logs" / "41_0.out").write_text(
        "tcbench: no CUDA GPU is visible (bench_x: ...): nothing was measured.\n")
    t = resolve(m, job, 0, {**started, "exit": "77"}, None, None)
    assert t.state == NO_GPU and t.detail.startswith("tcbench: no CUDA GPU is visible")
    t = resolve(m, job, 0, {**started, "exit": "0"}, None, None)
    assert t.state == NO_FILES and "a100/gpu-a-01-3/results.json is missing" in t.detail
    (tmp_path / "a100" / "gpu-a-01-3").mkdir(parents=True)
    (tmp_path / "a100" / "gpu-a-01-3" / "results.json").write_text("{}")
    assert resolve(m, job, 0, {**started, "exit": "0"}, None, None).state == DONE
    t = resolve(m, job, 1, {**started, "exit": "1"}, None, None)
    assert t.state == FAILED and "(log: _fleet/logs/41_1.out)" in t.detail


def test_states_from_slurm_when_the_task_recorded_no_exit(tmp_path):
    m, job = _manifest(tmp_path)
    recs = slurm.parse_sacct(SACCT)
    started = {"partition": "a100", "node": "gpu-a-01", "gpu": "0", "folder": "a100/gpu-a-01-0"}
    t = resolve(m, job, 0, started, None, recs[("41", 0)])
    assert t.state == CANCELLED and t.detail == "cancelled while running"
    t = resolve(m, job, 0, {}, None, recs[("41", 0)])
    assert t.state == CANCELLED and t.detail == "cancelled before it started"
    # scancel's SIGTERM may reach `tcbench run` first: the script then records exit 143.
    t = resolve(m, job, 0, {**started, "exit": "143"}, None, recs[("41", 0)])
    assert t.state == CANCELLED and t.detail == "cancelled while running"
    t = resolve(m, job, 1, {**started, "exit": "143"}, None, recs[("41", 1)])
    assert t.state == FAILED and "TIMEOUT" in t.detail and "killed by signal 15" in t.detail
    t = resolve(m, job, 1, started, None, recs[("41", 1)])
    assert t.state == FAILED and t.detail.startswith("Slurm says TIMEOUT (exit 0)")
    # Slurm ran it on a node, yet nothing arrived here: not a shared file system.
    t = resolve(m, job, 1, {}, None, slurm.FinalRecord("COMPLETED", 0, 0, "gpu-a-02", "sacct"))
    assert t.state == NO_FILES and "gpu-a-02" in t.detail and "share" in t.detail
    t = resolve(m, job, 1, {}, None, None)
    assert t.state == LOST and "no longer knows" in t.detail
    queued = slurm.QueueEntry("PENDING", "", "Priority")
    t = resolve(m, job, 1, {}, queued, None)
    assert (t.state, t.detail) == ("pending", "Priority")


def test_manifest_round_trip(tmp_path):
    (tmp_path / "_fleet").mkdir()
    path = write_manifest(tmp_path, [PartitionJob("a100", "7", 2), PartitionJob("h100", "8", 2)],
                          {"quick": True})
    doc = json.loads(path.read_text())
    assert doc["jobs"][1] == {"partition": "h100", "job_id": "8", "tasks": 2}


@pytest.fixture
def empty_queue(tmp_path, monkeypatch):
    """An squeue on PATH that lists no task (every task of the tests recorded its exit)."""
    tools = tmp_path / "slurm_bin"
    tools.mkdir()
    (tools / "squeue").write_text("#!/bin/sh\nexit 0\n")
    (tools / "squeue").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")


def fleet_with_task(root: Path, folder: str) -> None:
    (root / "_fleet" / "tasks").mkdir(parents=True)
    (root / "_fleet" / "logs").mkdir()
    write_manifest(root, [PartitionJob("a100", "41", 1)], {"submitted": "2026-01-01"})
    (root / "_fleet" / "tasks" / "41_0").write_text(
        f"partition=a100\nnode=gpu-a-01\ngpu=0\ngpu_name=\nfolder={folder}\nexit=0\n")


@pytest.mark.parametrize("folder", ["../outside", "/ABS", "a100/link-out", ""])
def test_collect_reads_no_task_folder_outside_the_fleet_folder(cli, tmp_path, empty_queue,
                                                              folder):
    """Before: folder=../outside (or an absolute path) was followed, and any results.json on the
    machine was reported under that task's GPU."""
    outside = tmp_path / "outside"
    outside.mkdir()
    doc = load_doc("gpu_b.json")
    write(outside, "results.json", doc)
    root = tmp_path / "fleet"
    if folder == "/ABS":
        folder = str(outside)
    if folder == "a100/link-out":
        (root / "a100").mkdir(parents=True)
        (root / "a100" / "link-out").symlink_to(outside)
    fleet_with_task(root, folder)
    code, out, err = cli("fleet", "collect", root)
    assert code == 1, out + err
    assert "task 41_0 (partition a100, node gpu-a-01) failed: its record names the results " \
           f"folder {folder!r}" in err
    assert "no file outside it is read" in err
    assert not (root / "report" / "report.md").exists() or \
        doc["context"]["gpu_name"] not in (root / "report" / "report.md").read_text()


def test_collect_refuses_a_results_file_that_links_out_of_the_fleet_folder(cli, tmp_path,
                                                                           empty_queue):
    secret = tmp_path / "elsewhere.json"
    write(tmp_path, "elsewhere.json", load_doc("gpu_b.json"))
    root = tmp_path / "fleet"
    (root / "a100" / "gpu-a-01-0").mkdir(parents=True)
    (root / "a100" / "gpu-a-01-0" / "results.json").symlink_to(secret)
    fleet_with_task(root, "a100/gpu-a-01-0")
    code, _, err = cli("fleet", "collect", root)
    assert code == 1 and "leads outside the fleet folder" in err


@pytest.mark.parametrize("edit,words", [
    (lambda d: d.update(settings=["quick"]), 'settings is ["quick"], not an object'),
    (lambda d: d["jobs"][0].update(tasks=-3), "tasks -3 must be a whole number from 1 to 1000"),
    (lambda d: d["jobs"][0].update(tasks=10 ** 12), "tasks 1000000000000 must be a whole number"),
    (lambda d: d["jobs"][0].update(tasks=True), "tasks true must be a whole number"),
    (lambda d: d["jobs"][0].update(job_id="../41"), 'job_id "../41" is not a Slurm job id'),
    (lambda d: d["jobs"][0].update(partition="a b"), 'partition "a b" is not a Slurm partition'),
    (lambda d: d.update(jobs={"a": 1}), "jobs must be a list of 1 to 100 partition jobs"),
    (lambda d: d["settings"].update(quick="yes"), 'settings.quick is "yes", which must be bool'),
    (lambda d: d.update(version="1"), 'version "1"; this tcbench reads version 1'),
])
def test_every_manifest_field_is_checked_in_one_sentence(tmp_path, edit, words):
    """Before: a list of settings ended in an internal error (exit 70), tasks: -3 read as 0
    tasks and tasks: 10^12 stalled status."""
    root = tmp_path / "fleet"
    (root / "_fleet").mkdir(parents=True)
    write_manifest(root, [PartitionJob("a100", "41", 2)], {"quick": True})
    path = root / "_fleet" / "manifest.json"
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    for action in ("status", "collect"):
        proc = tcbench("fleet", action, str(root))
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and words in proc.stderr, proc.stderr


def test_a_binary_message_and_a_fleet_record_are_printed_escaped(cli, tmp_path, empty_queue):
    bins = tmp_path / "bin"
    script(bins, "bench_int8_gemm", f"#!{sys.executable}\nimport sys\n"
           "print('tcbench: failed\\x1b[2K\\rPASS', file=sys.stderr)\nsys.exit(1)\n")
    code, out, err = cli("run", "--bin-dir", bins, "--out", tmp_path / "o")
    assert code == 1 and "\x1b" not in out + err and "failed\\x1b[2K\\rPASS" in out
    root = tmp_path / "fleet"
    fleet_with_task(root, "a100/gpu-a-01-0")
    marker = root / "_fleet" / "tasks" / "41_0"
    marker.write_text(marker.read_text().replace("node=gpu-a-01", "node=gpu\x1b[31m-a-01"))
    code, out, err = cli("fleet", "status", root)
    assert "\x1b" not in out + err and "gpu\\x1b[31m-a-01" in out


# Numbers in manifests, task records and Slurm's output are ASCII digits: "²" passed
# str.isdigit() and int("٣") is 3, so such a task was reported lost or read as another number.
@pytest.mark.parametrize("job_id", ["²", "٣", "0", " 41", "41\n", "4_1", -41, 0, "", "x"])
def test_a_manifest_job_id_that_is_not_a_slurm_job_id_is_refused(cli, tmp_path, job_id):
    root = tmp_path / "fleet"
    (root / "_fleet").mkdir(parents=True)
    write_manifest(root, [PartitionJob("a100", "41", 1)], {})
    path = root / "_fleet" / "manifest.json"
    doc = json.loads(path.read_text())
    doc["jobs"][0]["job_id"] = job_id
    path.write_text(json.dumps(doc))
    for action in ("status", "collect"):
        code, out, err = cli("fleet", action, root)
        assert code == 2 and err.count("\n") == 1, (job_id, err)
        assert "is not a Slurm job id (a whole number from 1, in digits 0-9)" in err


@pytest.mark.parametrize("partition", ["a100\n", "a100\nx", "a 100"])
def test_a_partition_name_with_a_newline_is_refused(cli, tmp_path, partition):
    """"$" matches before a final newline: "a100\\n" passed the partition pattern."""
    if partition.strip() != "a100":  # submit strips the names it is given
        code, out, err = cli("fleet", "submit", "--partition", partition, "--out",
                             tmp_path / "f")
        assert code == 2 and "is not a Slurm partition name" in err and "\n" not in err.strip()
    root = tmp_path / "fleet"
    (root / "_fleet").mkdir(parents=True)
    write_manifest(root, [PartitionJob(partition, "41", 1)], {})
    code, out, err = cli("fleet", "status", root)
    assert code == 2 and "is not a Slurm partition name" in err


def test_slurm_output_with_numbers_that_are_not_ascii_is_not_a_task():
    assert slurm.parse_sacct("٤١_٠|COMPLETED|0:0|n1\n41_²|FAILED|1:0|n1\n41_0|FAILED|٣:0|n1\n") \
        == {("41", 0): slurm.FinalRecord("FAILED", None, None, "n1", "sacct")}
    text = "JobId=1 ArrayJobId=41 ArrayTaskId=² JobState=FAILED ExitCode=1:0 NodeList=n1\n"
    assert slurm.parse_scontrol(text) == {}


def test_squeue_lines_with_numbers_that_are_not_ascii_are_skipped(cli, tmp_path, monkeypatch):
    """Before: int("²") in the queue reader, exit 70."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "squeue").write_text("#!/bin/sh\necho '41|²|RUNNING|n1|None'\n"
                                  "echo '41|٣|RUNNING|n1|None'\necho '41|0|PENDING||Priority'\n")
    (tools / "squeue").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:/usr/bin:/bin")
    root = tmp_path / "fleet"
    (root / "_fleet").mkdir(parents=True)
    write_manifest(root, [PartitionJob("a100", "41", 1)], {})
    code, out, err = cli("fleet", "status", root)
    assert code == 0, err
    assert "1 task(s): 1 pending." in out


def test_a_recorded_exit_in_other_digits_is_not_a_number():
    assert exit_text("٣") == "exit ٣" and exit_text("-9") == "killed by signal 9 (SIGKILL)"
    assert exit_text("3") == "exit 3"


def test_a_task_record_whose_exit_is_not_ascii_is_a_failure_not_done(tmp_path):
    from tcbench_tools.fleet.state import FAILED, Manifest, resolve

    job = PartitionJob("a100", "41", 1)
    (tmp_path / "_fleet" / "logs").mkdir(parents=True)
    m = Manifest(tmp_path, [job])
    t = resolve(m, job, 0, {"partition": "a100", "folder": "a100/n-0", "exit": "٠"}, None, None)
    assert t.state == FAILED and t.exit_code is None  # "٠" read as 0 before: "done"


# ---------------------------------------------------------------------------------------------
# Property-based tests of the fleet readers: fleet manifests and task
# records written at random (any JSON in any field, hostile names, folders that lead outside,
# exit codes in other digits), Slurm's own output (squeue, sacct, scontrol lines at random), and
# ``fleet status`` / ``fleet collect`` on a generated fleet folder against the real single-node
# Slurm the tests start (slurm_cluster.py). The property is properties.check's.

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
