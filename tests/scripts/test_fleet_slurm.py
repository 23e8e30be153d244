"""tcbench fleet against a real single-node Slurm (slurm_cluster.py) started for this module.

The benchmark binaries are stand-ins that write fixture JSON, chosen by the partition the task
runs in (SLURM_JOB_PARTITION): "ampere" -> Fixture GPU A, "hopper" -> Fixture GPU B. In the
"nogpu" partition they run a real tcbench benchmark binary when one is built
(build/*/bin/bench_fp16_vs_fp32: it exits 77 here, as there is no driver), else print that
binary's no-GPU sentence and exit 77 themselves. "crash" fails, "hang" sleeps until cancelled.

The daemons start once per module (a few seconds); the tests skip, saying why, when they cannot
start, and fail instead when TCBENCH_REQUIRE_SLURM=1 (CI, where they must run).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, fixture
from slurm_cluster import SlurmCluster, SlurmUnavailable
from tcbench_tools.sections._glance import SHORT

PARTITIONS = ["ampere", "hopper", "nogpu", "crash", "hang"]
NO_GPU_SENTENCE = ("no CUDA GPU available: no NVIDIA driver is loaded "
                   "(cudaErrorInsufficientDriver); nothing to measure.")

STAND_IN = '''#!{python}
import json, os, sys, time
TOPIC, REAL = {topic!r}, {real!r}
# Per partition, fixture files: the first one's context, each benchmark from the first file
# that has it.
FIXTURES = {{"ampere": {gpu_a!r}, "hopper": {gpu_b!r}}}
partition = os.environ.get("SLURM_JOB_PARTITION", "")
if partition == "nogpu":
    if REAL:
        os.execv(REAL, [REAL] + sys.argv[1:])
    print(os.path.basename(sys.argv[0]) + ": " + {sentence!r}, file=sys.stderr)
    sys.exit(77)
if "--benchmark_list_tests=true" in sys.argv:
    sys.exit(1)  # the runner then shows no per-benchmark progress; fine for a stand-in
if partition == "crash":
    print("tcbench: cublasLtMatmul failed: CUBLAS_STATUS_EXECUTION_FAILED", file=sys.stderr)
    sys.exit(1)
if partition == "hang":
    time.sleep(300)
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--benchmark_out="))
seen = {{"argv": sys.argv[1:], "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "cuda_device_order": os.environ.get("CUDA_DEVICE_ORDER")}}
json.dump(seen, open(out + ".seen", "w"))
docs = [json.load(open(path)) for path in FIXTURES[partition]]
doc, seen = {{"context": docs[0]["context"], "benchmarks": []}}, set()
for d in docs:
    rows = [b for b in d["benchmarks"] if b["name"].startswith(TOPIC + "/")]
    doc["benchmarks"] += [b for b in rows if b["run_name"] not in seen]
    seen |= {{b["run_name"] for b in rows}}
json.dump(doc, open(out, "w"))
'''


def real_binary() -> str:
    for preset in ("ci", "release", "dev"):
        path = REPO / "build" / preset / "bin" / "bench_fp16_vs_fp32"
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return ""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("slurm")
    c = SlurmCluster(root, PARTITIONS)
    try:
        c.start()
    except SlurmUnavailable as exc:
        c.stop()
        if os.environ.get("TCBENCH_REQUIRE_SLURM") == "1":
            pytest.fail(f"Slurm could not start and TCBENCH_REQUIRE_SLURM=1: {exc}")
        pytest.skip(f"Slurm could not start here: {exc}")
    yield c
    c.stop()


@pytest.fixture(scope="module")
def bins(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("bin")
    for topic in ("fp16_vs_fp32", "alignment", "loss_scaling"):
        path = folder / f"bench_{topic}"
        # GPU A's tasks also train (loss_scaling.json, GPU A's too): their Q2 has a verdict.
        path.write_text(STAND_IN.format(python=sys.executable, topic=topic, real=real_binary(),
                                        gpu_a=[str(fixture("gpu_a.json")),
                                               str(fixture("loss_scaling.json"))],
                                        gpu_b=[str(fixture("gpu_b.json"))],
                                        sentence=NO_GPU_SENTENCE))
        path.chmod(0o755)
    return folder


@pytest.fixture(scope="module")
def bundle(tmp_path_factory, bins) -> Path:
    """An installed-bundle layout (bin/, scripts/tcbench) without a C++ build: the stand-ins,
    with the real bench_fp16_vs_fp32 in their place when the tree has been built; the scripts
    and Python environment are this checkout's (linked, so nothing is installed)."""
    env = Path(sys.prefix)
    if not (env / ".tcbench-requirements.sha256").is_file():
        pytest.skip(f"the bundle test needs pytest to run from the tools' environment, not {env}")
    folder = tmp_path_factory.mktemp("bundle")
    shutil.copytree(bins, folder / "bin")
    if real_binary():
        (folder / "bin" / "bench_fp16_vs_fp32").unlink()
        (folder / "bin" / "bench_fp16_vs_fp32").symlink_to(real_binary())
    (folder / "scripts").symlink_to(REPO / "scripts")
    (folder / ".venv").symlink_to(env)
    return folder


@pytest.fixture
def slurm_cli(cli, cluster, monkeypatch):
    monkeypatch.setenv("SLURM_CONF", str(cluster.conf))
    return cli


def submitted_jobs(stdout: str) -> dict[str, str]:
    """partition -> job id, from submit's output lines '  partition P: job N (...)'."""
    jobs = {}
    for line in stdout.splitlines():
        if line.strip().startswith("partition "):
            name, rest = line.strip()[len("partition "):].split(": job ", 1)
            jobs[name] = rest.split()[0]
    return jobs


def markers(out: Path) -> dict[str, dict[str, str]]:
    found = {}
    for path in sorted((out / "_fleet" / "tasks").iterdir()):
        found[path.name] = dict(ln.split("=", 1) for ln in path.read_text().splitlines())
    return found


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.3)


def test_fleet_submit_status_collect(slurm_cli, bins, tmp_path):
    out = tmp_path / "fleet"
    code, stdout, err = slurm_cli("fleet", "submit", "--partition", "ampere,hopper,nogpu",
                                  "--nodes-per-partition", "2", "--quick", "--bin-dir", bins,
                                  "--out", out, "--", "--benchmark_min_time=0.01")
    assert code == 0, err
    jobs = submitted_jobs(stdout)
    assert sorted(jobs) == ["ampere", "hopper", "nogpu"]
    assert "submitted 6 task(s) as 3 job array(s)" in stdout
    assert f"tcbench fleet status {out}" in stdout
    code, _, err = slurm_cli("fleet", "submit", "--partition", "ampere", "--bin-dir", bins,
                             "--out", out)
    assert code == 2 and err.strip() == (f"tcbench: {out} already holds a fleet run "
                                         "(_fleet/manifest.json): give a new --out folder.")

    code, stdout, err = slurm_cli("fleet", "status", out, "--wait", "--timeout", "240")
    assert code == 0, err
    assert "6 task(s): 4 done, 2 no GPU." in stdout

    # Every task recorded where it ran: its partition, node, the GPU Slurm gave it, and a
    # folder <partition>/<node>-<gpu> that holds its results.
    recs = markers(out)
    assert len(recs) == 6
    for task, rec in recs.items():
        job, index = task.split("_")
        partition = next(p for p, j in jobs.items() if j == job)
        assert rec["partition"] == partition and rec["node"] == "localhost"
        assert rec["gpu"] in ("0", "1")
        assert rec["folder"].startswith(f"{partition}/localhost-{rec['gpu']}")
        assert rec["exit"] == ("77" if partition == "nogpu" else "0")
        if partition != "nogpu":
            seen = json.loads((out / rec["folder"] / "bench_alignment.json.seen").read_text())
            assert seen["cuda_visible_devices"] == rec["gpu"]  # as Slurm set it
            assert seen["cuda_device_order"] == "PCI_BUS_ID"
            assert "--quick" in seen["argv"] and "--benchmark_min_time=0.01" in seen["argv"]
    # The status table: one line per task with its node, GPU, model and state.
    table = {line.split()[0]: line for line in stdout.splitlines() if "_" in line.split(" ")[0]}
    for task, rec in recs.items():
        line = table[task]
        if rec["partition"] == "nogpu":
            assert "no GPU" in line
            if real_binary():  # the sentence came from the real binary, run by Slurm (its
                # reason depends on the machine: no driver, or a driver that sees no device)
                assert f"({real_binary()}: no CUDA GPU available: " in line
            else:
                assert NO_GPU_SENTENCE.removesuffix("; nothing to measure.") in line
        else:
            gpu = "Fixture GPU A" if rec["partition"] == "ampere" else "Fixture GPU B"
            assert gpu in line and " done " in line and rec["folder"] in line

    code, stdout, err = slurm_cli("fleet", "collect", out)
    assert code == 0, err
    assert "4 GPU column(s)" in stdout
    assert err.count("found no GPU") == 2
    md = (out / "report" / "report.md").read_text()
    # One column per task that measured a GPU; the same model twice -> labelled by folder.
    done = {t: r for t, r in recs.items() if r["partition"] != "nogpu"}
    labels = []
    for rec in done.values():
        model = "Fixture GPU A" if rec["partition"] == "ampere" else "Fixture GPU B"
        labels.append(f"{model} ({rec['folder'].split('/', 1)[1]})")
    gpus_table = md.split("## GPUs", 1)[1].split("##", 1)[0]
    # A row per task that measured a GPU (GPUs are rows): exactly those four.
    rows = [line for line in gpus_table.splitlines() if line.startswith("| Fixture GPU")]
    assert sorted(line.split("|")[1].strip() for line in rows) == sorted(labels)
    topic = md.split("## Topic: fp16_vs_fp32", 1)[1].split("\n## ", 1)[0]
    fp16 = [line.split("|")[3].strip() for line in topic.splitlines()
            if line.startswith("| fp16 | TFLOP/s |")]
    assert sorted(fp16) == sorted(labels)
    # The first screen's verdicts, row for row, are what `answers` says of each task's run (a
    # label that is not the GPU's name once made every cell "not measured": issue 43).
    glance = md.split("## At a glance\n\n", 1)[1].split("\n\n", 1)[0]
    cells = {r.split("|")[1].strip(): [c.strip() for c in r.split("|")[2:7]]
             for r in glance.splitlines()[2:]}
    for rec, label in zip(done.values(), labels):
        code, answered, err = slurm_cli("answers", out / rec["folder"], "--json")
        assert code == 0, err
        verdicts = [a["verdict"] for a in json.loads(answered)["questions"] if a["scope"] == "gpu"]
        assert cells[label] == [SHORT[v] for v in verdicts], label
        assert cells[label][1] == ("caveat" if rec["partition"] == "ampere" else "not measured")
    # The fleet section lists every task, the no-GPU ones with the binary's sentence.
    section = md.split("## Fleet tasks", 1)[1]
    for task in recs:
        assert f"| {task} |" in section
    assert section.count("| no GPU |") == 2
    assert "not merged as repetitions" in section
    html = (out / "report" / "report.html").read_text()
    assert '<h2 id="fleet-tasks">Fleet tasks</h2>' in html and html.rstrip().endswith("</html>")

    # Not on a shared file system: the tasks' files are not where collect looks. Simulated by
    # a copy of the folder that lacks one task's record and results.
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    gone = next(iter(done))
    (copy / "_fleet" / "tasks" / gone).unlink()
    shutil.rmtree(copy / done[gone]["folder"])
    code, stdout, err = slurm_cli("fleet", "collect", copy)
    assert code == 1
    assert f"task {gone} (partition {done[gone]['partition']}, node localhost) no files: " \
           "Slurm says it ended (COMPLETED, exit 0) on localhost, but it left nothing in" in err
    assert "file system the compute nodes share" in err
    assert "1 of 6 task(s) did not deliver results" in err


def test_failed_and_cancelled_tasks(slurm_cli, bins, tmp_path, cluster):
    out = tmp_path / "fleet"
    code, stdout, err = slurm_cli("fleet", "submit", "--partition", "crash,hang",
                                  "--bin-dir", bins, "--out", out)
    assert code == 0, err
    jobs = submitted_jobs(stdout)
    wait_for(lambda: len(list((out / "_fleet" / "tasks").iterdir())) == 2, 60,
             "both tasks to start")
    assert cluster.command("scancel", jobs["hang"]).returncode == 0
    code, stdout, err = slurm_cli("fleet", "status", out, "--wait", "--timeout", "60")
    assert code == 0, err
    assert "2 task(s): 1 failed, 1 cancelled." in stdout
    code, stdout, err = slurm_cli("fleet", "collect", out)
    assert code == 1
    assert (f"task {jobs['crash']}_0 (partition crash, node localhost) failed: exit 1: " in err)
    assert f"task {jobs['hang']}_0 (partition hang, node localhost) cancelled: cancelled " \
           "while running" in err
    assert not (out / "report").exists()


def test_collect_before_anything_finished(slurm_cli, bins, tmp_path, cluster):
    out = tmp_path / "fleet"
    code, stdout, err = slurm_cli("fleet", "submit", "--partition", "ampere", "--bin-dir", bins,
                                  "--out", out, "--sbatch-arg=--hold")
    assert code == 0, err
    job = submitted_jobs(stdout)["ampere"]
    code, stdout, err = slurm_cli("fleet", "status", out)
    assert code == 0 and "1 task(s): 1 pending." in stdout
    code, stdout, err = slurm_cli("fleet", "collect", out)
    assert code == 75
    assert err.strip() == (f"tcbench fleet: nothing has finished yet (1 pending): run collect "
                           f"again once `tcbench fleet status {out}` shows finished tasks.")
    code, stdout, err = slurm_cli("fleet", "status", out, "--wait", "--timeout", "1")
    assert code == 75 and "1 task(s) still pending or running after 1 s." in err
    assert cluster.command("scancel", job).returncode == 0
    wait_for(lambda: "cancelled" in slurm_cli("fleet", "status", out)[1], 30, "the cancel")
    code, stdout, err = slurm_cli("fleet", "collect", out)
    assert code == 1 and "cancelled: cancelled before it started" in err


def test_unknown_partition(slurm_cli, bins, tmp_path):
    code, stdout, err = slurm_cli("fleet", "submit", "--partition", "ampere,volta",
                                  "--bin-dir", bins, "--out", tmp_path / "f")
    assert code == 2
    assert err.strip() == ("tcbench: no partition named volta on this cluster (sinfo lists: "
                           "ampere, crash, hang, hopper, nogpu).")
    assert not (tmp_path / "f").exists()


def test_gres_the_nodes_lack(slurm_cli, bins, tmp_path):
    # A partition whose nodes have no (or too few) GPUs: Slurm refuses at submission.
    code, stdout, err = slurm_cli("fleet", "submit", "--partition", "hopper", "--gres", "gpu:4",
                                  "--bin-dir", bins, "--out", tmp_path / "f")
    assert code == 2
    assert err.strip() == ("tcbench: partition hopper: sbatch refused the job: Batch job "
                           "submission failed: Requested node configuration is not available")


def test_no_task_found_a_gpu(slurm_cli, bundle, tmp_path):
    out = tmp_path / "fleet"
    code, stdout, err = slurm_cli("fleet", "submit", "--partition", "nogpu", "--bundle", bundle,
                                  "--out", out)
    assert code == 0, err
    script = (out / "_fleet" / "task.sbatch").read_text()
    assert f"tcbench={bundle}/scripts/tcbench" in script and f"--bin-dir {bundle}/bin" in script
    code, stdout, err = slurm_cli("fleet", "status", out, "--wait", "--timeout", "120")
    assert code == 0 and "1 task(s): 1 no GPU." in stdout
    code, stdout, err = slurm_cli("fleet", "collect", out)
    assert code == 77
    assert err.strip().endswith("tcbench fleet: no task found a GPU: nothing was measured, no "
                                "report written.")
    assert not (out / "report").exists()


@pytest.mark.parametrize("gres", ["gpu:0", "gpu:00", "gpu:a100:0"])
def test_a_gres_count_of_zero_is_refused_before_sbatch(slurm_cli, bins, tmp_path, cluster,
                                                       gres):
    """Issue 34: Slurm takes gpu:0 (a task without a GPU, which can only end "no GPU");
    before, the job was submitted."""
    code, stdout, err = slurm_cli("fleet", "submit", "--partition", "ampere", "--gres", gres,
                                  "--bin-dir", bins, "--out", tmp_path / "f")
    assert code == 2
    assert err.strip() == (f"tcbench: --gres {gres!r} requests 0 of gpu: every task would run "
                           "without a GPU and could only end 'no GPU' (give a count of 1 or "
                           "more, or 'none' to request nothing).")
    queue = cluster.command("squeue", "-h", "-o", "%j").stdout
    assert "tcbench-fleet" not in queue and not (tmp_path / "f").exists()
