"""The check never changes a GPU setting: no locked or application clocks, power limits,
persistence mode, compute mode, MIG or reset. Shown three ways: no NVML setter or nvidia-smi
setter is named anywhere in the check's code; a whole stand-in run passes no --clock-policy to
any binary and calls nvidia-smi only to query; and --clock-policy other than as-is is refused in
one sentence before anything runs."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from gpu_check_standins import (
    DEVICE_OK,
    REPO,
    add_bench,
    add_studies,
    environment,
    make_bundle,
    write_exec,
)

CHECK_CODE = [REPO / "scripts" / "gpu_check.sh", REPO / "scripts" / "gpu_check_torch.py",
              *sorted((REPO / "scripts" / "tcbench_tools" / "gpu_check").glob("*.py")),
              REPO / "scripts" / "tcbench_tools" / "process.py"]
# Every NVML entry point that changes state is named nvmlDeviceSet*/Reset*/Clear* (nvml.h), and
# nvidia-smi's setters are these flags.
NVML_SETTER = re.compile(r"nvml\w*(Set|Reset|Clear)\w*")
SMI_SETTERS = ("-lgc", "-rgc", "-lmc", "-rmc", "-ac", "-rac", "-pl", "-pm", "-c", "-r", "-mig",
               "--lock-gpu-clocks", "--reset-gpu-clocks", "--lock-memory-clocks",
               "--applications-clocks", "--power-limit", "--persistence-mode",
               "--compute-mode", "--gpu-reset", "--multi-instance-gpu", "-e", "--ecc-config")


def test_no_nvml_or_nvidia_smi_setter_is_named_in_the_checks_code():
    for path in CHECK_CODE:
        text = path.read_text()
        assert not NVML_SETTER.search(text), f"{path.name}: {NVML_SETTER.search(text).group(0)}"
        assert "clock-policy=base" not in text and "clock-policy=max" not in text, path.name


def test_a_whole_check_only_queries_the_gpu(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    write_exec(bundle / "bin" / "device_test_a_ok", DEVICE_OK)
    add_bench(bundle, "bench_tensor_peak", ["tensor_peak/wgmma_m64n256k16/fp16",
                                            "tensor_peak/mma_m16n8k16/fp16"])
    add_studies(bundle)
    env = environment(tmp_path)
    proc = subprocess.run([str(bundle / "scripts" / "gpu_check.sh"), "--archive",
                           str(tmp_path / "copy-back" / "gpu-check.tgz"), str(tmp_path / "check")],
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "copy-back" / "box.txt").is_file()  # its queries are in the log too
    calls = Path(env["TCBENCH_TEST_SMI_LOG"]).read_text().splitlines()
    assert calls, "nvidia-smi was never asked"
    for call in calls:
        words = call.split()
        assert not set(words) & set(SMI_SETTERS), call
        assert all(w.startswith(("--query-gpu=", "--format=", "--help-query-gpu", "-q", "-d",
                                 "-i", "PERFORMANCE")) or w.isdigit() for w in words), call
    argv_log = Path(env["TCBENCH_TEST_ARGV_LOG"]).read_text()
    argv = [json.loads(line) for line in argv_log.splitlines()]
    assert argv and not any(a.startswith("--clock-policy") for cmd in argv for a in cmd)
    assert not any(k.startswith("TCBENCH_CLOCK") for k in env)


def test_the_documented_device_call_sets_nothing_on_the_gpu():
    """The call docs/gpu-check.md §1 and `tcbench run` give: only chmod of the bundle's own files,
    the outer limit and the check; no nvidia-smi setter, no clock policy."""
    from tcbench_tools import next_steps

    words = " ".join(next_steps.device_command()).split()
    assert not set(words) & set(SMI_SETTERS)
    assert "nvidia-smi" not in words and not any("clock-policy" in w for w in words)


def test_a_clock_policy_other_than_as_is_is_refused_in_one_sentence(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    add_bench(bundle, "bench_alpha")
    env = environment(tmp_path)
    for policy in ("max", "base"):
        proc = subprocess.run([str(bundle / "scripts" / "gpu_check.sh"), "--clock-policy", policy,
                               str(tmp_path / "check")], env=env, capture_output=True, text=True,
                              timeout=60, check=False)
        assert proc.returncode == 2
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"gpu_check: --clock-policy {policy} is "
                                                        "refused: the check measures the clocks "
                                                        "the driver sets"), proc.stderr
        assert not (tmp_path / "check").exists()
    ok = subprocess.run([str(bundle / "scripts" / "gpu_check.sh"), "--clock-policy", "as-is",
                         "--plan"], env=env, capture_output=True, text=True, timeout=60,
                        check=False)
    assert ok.returncode == 0, ok.stderr
