"""gpu_check.sh end to end on a stand-in GPU box: a bundle at a path with spaces whose stand-in
binaries list the real quick suite and report rows that give every answer a verdict, while one
binary crashes, one hangs and one is killed half-way. The check, run the way docs/gpu-check.md
tells a borrowed box to (OUTDIR outside the copy-back folder, --archive into it, the console log
beside it), must show tier 1 and its answers within their planned time, every finished row in
the answers, an archive holding the whole OUTDIR, and at most 3 files to bring back."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from gpu_check_standins import (
    DEVICE_OK,
    add_bench,
    add_studies,
    environment,
    make_bundle,
    quick_lists,
    torch_python,
    verdict_rows,
    write_exec,
)
from tcbench_tools import results
from tcbench_tools.gpu_check import plan

SECONDS_PER_ROW = 0.01  # the stand-ins' time per benchmark (a GPU's would be 0.1-1 s)
KILLED_AFTER = 4  # rows bench_tensor_util finishes before it is SIGKILLed


def test_a_borrowed_box_run_brings_back_every_finished_row_in_three_files(tmp_path: Path):
    box = tmp_path / "borrowed box"
    bundle = make_bundle(box / "unpacked here")
    lists = quick_lists()
    tier1 = {n for names in lists.values() for n in plan.tier1_of(names).rows}
    rows = verdict_rows(tier1)
    default = {"tflops": 100.0, "samples": 500, "time_median_us": 100.0}
    for binary, names in lists.items():
        spec = {"seconds": SECONDS_PER_ROW, "rows": rows, "default": default}
        if binary == "bench_tensor_util":
            spec.update(kill_after=KILLED_AFTER)  # both its tier-1 and tier-3 runs
        if binary == "bench_block_scaling":
            spec.update(crash_run=True, only_negated=True)  # a tier-3 crash
        if binary == "bench_alignment":
            spec.update(hang=True, only_negated=True)  # a tier-3 hang
        if binary == "bench_fp16_vs_fp32":
            spec.update(full_only=[f"fp16_vs_fp32/cublaslt/{p}/m:8192/n:8192/k:8192/layout:nn"
                                   for p in ("bf16", "fp16")])
        add_bench(bundle, binary, names, **spec)
    for name in ("device_test_tensor_peak", "device_test_gemm_paths", "device_test_block_quant"):
        write_exec(bundle / "bin" / name, DEVICE_OK)
    add_studies(bundle)

    copy_back = box / "OUT"  # what the box copies back: at most 8 files, two folders deep
    copy_back.mkdir()
    out = box / "gc"  # OUTDIR outside it
    env = environment(tmp_path, TCBENCH_STEP_TIMEOUT_S="6",
                      TCBENCH_TORCH_PYTHON=str(torch_python(tmp_path)))
    begin = time.monotonic()
    with open(copy_back / "console.txt", "w") as console:
        proc = subprocess.run([str(bundle / "scripts" / "gpu_check.sh"), "--archive",
                               str(copy_back / "gpu-check.tgz"), str(out)], env=env,
                              stdout=console, stderr=subprocess.STDOUT, timeout=300, check=False)
    took = time.monotonic() - begin
    summary = (out / "summary.txt").read_text()
    console = (copy_back / "console.txt").read_text()
    assert proc.returncode == 1, console  # a crash, a timeout and a kill are failures
    assert took < 90, f"{took:.0f} s"

    # What went wrong is named, and the check went on.
    def line(step: str) -> str:
        m = re.search(rf"^   {re.escape(step)}\s.*$", summary.split("-- steps", 1)[1], re.MULTILINE)
        assert m, step
        return m.group(0)

    assert "CRASHED (SIGSEGV)" in line("bench_block_scaling [t3]")
    assert "TIMEOUT" in line("bench_alignment [t3]") and "its 6 s limit" in line(
        "bench_alignment [t3]")
    assert "KILLED (SIGKILL)" in line("bench_tensor_util [t1]")
    assert f"{KILLED_AFTER} of 7 benchmarks (3 never ran)" in line("bench_tensor_util [t1]")
    assert " ok " in line("bench_fp16_vs_fp32 [t3]") and " ok " in line("torch.matmul 8192^3")
    assert " ok " in line("answers") and " ok " in line("GPU state after")

    # Tier 1 and its answers within their planned time, before the device tests.
    t1 = re.search(r"^   tier 1: ([^;]+); (\d+) s of (\d+) s planned", summary, re.MULTILINE)
    assert t1 and t1.group(1) == "done, 1 step(s) not ok", summary  # the killed one
    assert int(t1.group(2)) <= int(t1.group(3)), summary
    steps = summary.split("-- steps", 1)[1]
    assert steps.index("answers (tier 1)") < steps.index("device_test_tensor_peak")
    assert " ok " in line("answers (tier 1)")

    # Every GPU half has a verdict, and every row a binary finished is in what the answers read.
    answers = json.loads((out / "answers.json").read_text())["questions"]
    gpu = {a["id"]: a["verdict"] for a in answers if a["scope"] == "gpu"}
    assert set(gpu) == {"q1", "q2", "q3", "q4", "q5"}
    assert "not measured" not in gpu.values(), gpu
    finished = {m.group(1) for m in re.finditer(r"^(\S+)/manual_time 1\.0 ms$",
                                                (out / "logs" / "bench_tensor_util.t1.log")
                                                .read_text(), re.MULTILINE)}
    assert len(finished) == KILLED_AFTER
    # results/ is a run folder as tcbench run leaves one: each row once, in results.json, the
    # killed and crashed binaries' finished rows kept and marked cut short.
    run = results.load(out / "results")
    lost = run.context_list("tcbench_lost_binaries")
    assert lost == ["bench_alignment"]  # stopped before its first row: nothing to merge
    assert sorted(p.name for p in (out / "results").iterdir()) == [
        "bench_alignment.t3.json", "bench_alignment.t3.jsonl", "nvidia-smi-after.txt",
        "nvidia-smi-before.txt", "results.json"]
    assert finished <= set(run.benchmarks)
    assert "bench_tensor_util.t1.json" in run.partial
    assert "tensor_util/cublaslt/fp8/m:2048/n:2048/k:2048/layout:tn" in run.never_ran
    for binary, names in lists.items():
        for log in (out / "logs").glob(f"{binary}.t*.log"):
            printed = re.findall(r"^(\S+)/manual_time 1\.0 ms$", log.read_text(), re.MULTILINE)
            assert set(printed) <= set(run.benchmarks), (log.name,
                                                         set(printed) - set(run.benchmarks))
    # ...and the rows the killed and crashed binaries never ran are named.
    answers_md = (out / "answers.md").read_text()
    assert "## Rows that never ran" in answers_md
    assert "`tensor_util/cublaslt/fp8/m:2048/n:2048/k:2048/layout:tn`" in answers_md
    assert "-- rows that never ran:" in summary

    # The archive holds the whole output folder, as it was at the end.
    with tarfile.open(copy_back / "gpu-check.tgz") as tar:
        packed = {m.name: m.size for m in tar.getmembers() if m.isfile()}
    on_disk = {f"gc/{p.relative_to(out).as_posix()}": p.stat().st_size
               for p in out.rglob("*") if p.is_file()}
    assert packed == on_disk
    # Four files to bring back: the archive, the summary and box.txt beside it, the console.
    assert sorted(p.name for p in copy_back.iterdir()) == ["box.txt", "console.txt",
                                                           "gpu-check.tgz", "summary.txt"]
    assert "gc/box.txt" in packed and "LD_LIBRARY_PATH (the steps'):" in (
        copy_back / "box.txt").read_text()
    assert (copy_back / "summary.txt").read_text() == summary
    assert summary.rstrip().splitlines()[-1].startswith("-- FAILED")
    assert "Traceback" not in console
    assert sys.executable  # the box's own Python ran it (TCBENCH_PYTHON)
