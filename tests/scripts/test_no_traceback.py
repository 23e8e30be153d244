"""No input makes the tools print a traceback, and exit 1 keeps its one meaning (a regression or
a failed benchmark): unusable outputs, extreme JSON, odd configs, random corruption of real
files, and a read-only checkout of the wrapper (issue 13, section 2)."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, assert_one_line_error, fixture, load_doc, make_fake, tcbench, write

GOOD = str(fixture("gpu_a.json"))
FP16 = "fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096/layout:nn"


def unwritable_dir(tmp_path: Path) -> Path | None:
    """A folder this process cannot create files in (root ignores permission bits: /sys then)."""
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        return locked
    probe = Path("/sys/tcbench-probe")
    try:
        probe.mkdir()
    except OSError:
        return Path("/sys")
    probe.rmdir()
    return None


@pytest.mark.parametrize("command", ["report", "run"])
@pytest.mark.parametrize("where", ["a file", "under a file", "read-only"])
def test_an_unusable_out_folder_is_one_sentence(tmp_path, command, where):
    a_file = tmp_path / "taken"
    a_file.write_text("x")
    if where == "a file":
        out = a_file
    elif where == "under a file":
        out = a_file / "sub"
    else:
        parent = unwritable_dir(tmp_path)
        if parent is None:
            pytest.skip("no unwritable folder on this machine")
        out = parent / "out"
    if command == "report":
        proc = tcbench("report", GOOD, "--out", str(out))
        assert_one_line_error(proc, "cannot write the report into")
    else:
        bins = tmp_path / "bin"
        make_fake(bins, "bench_int8_gemm", topic="int8_gemm")
        proc = tcbench("run", "--bin-dir", str(bins), "--out", str(out))
        assert_one_line_error(proc, f"cannot use {out} as the output folder")


def test_integers_beyond_float_range(tmp_path):
    text = fixture("gpu_a.json").read_text()
    doc = json.loads(text)
    first = next(r for r in doc["benchmarks"] if r["run_name"].startswith(FP16))
    marker = "123456.789"
    first["real_time"] = float(marker)
    huge = write(tmp_path, "huge.json", doc)
    huge.write_text(huge.read_text().replace(marker, "1" + "0" * 400, 1))  # 1e400, as an integer
    proc = tcbench("compare", GOOD, str(huge))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{FP16}: INVALID INPUT (candidate: real_time of repetition 0 is an integer beyond " \
           "float range)" in proc.stdout
    # Longer than Python's integer-parsing limit (4300 digits): not JSON Python can read.
    longer = tmp_path / "longer.json"
    longer.write_text(huge.read_text().replace("1" + "0" * 400, "1" + "0" * 5000, 1))
    assert_one_line_error(tcbench("compare", GOOD, str(longer)), "is not usable JSON")


def test_deeply_nested_json(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text('{"context": {}, "benchmarks": ' + "[" * 100000 + "]" * 100000 + "}")
    assert_one_line_error(tcbench("compare", GOOD, str(deep)), "nested too deeply")
    config = tmp_path / "deep_config.json"
    config.write_text("[" * 100000 + "]" * 100000)
    assert_one_line_error(tcbench("compare", GOOD, GOOD, "--config", str(config)),
                          "cannot be read as a config")


def test_a_regex_too_deep_to_compile(tmp_path):
    config = tmp_path / "gate.json"
    config.write_text(json.dumps({"thresholds": {"(" * 5000 + ")" * 5000: 5}}))
    assert_one_line_error(tcbench("compare", GOOD, GOOD, "--config", str(config)),
                          "is not a usable regular expression (RecursionError")


# Values a corrupted or hand-edited result file may hold where a number or a string belongs.
ODD_VALUES = [None, "abc", "", True, 10 ** 400, -1, 0, float("nan"), float("inf"), [], {}, [1],
              {"a": 1}, "nan", 1e308, -1e308]
ROW_KEYS = ["name", "run_name", "run_type", "repetitions", "repetition_index", "real_time",
            "cpu_time", "time_unit", "iterations", "aggregate_name", "error_occurred",
            "error_message", "skipped", "skip_message", "tflops", "tops", "gbps", "pct_of_peak",
            "spread_pct", "tcbench_binary"]
CONTEXT_KEYS = ["gpu_name", "compute_capability", "peak_fp16", "peak_source", "peak_gbps",
                "tcbench_binaries", "tcbench_sources", "tcbench_lost_binaries",
                "tcbench_failed_binaries", "tcbench_incomplete", "date"]


def corrupted(rng: random.Random, doc: dict) -> dict:
    out = copy.deepcopy(doc)
    for _ in range(rng.randint(2, 10)):
        if rng.random() < 0.2:
            target, key = out["context"], rng.choice(CONTEXT_KEYS)
        else:
            target, key = rng.choice(out["benchmarks"]), rng.choice(ROW_KEYS)
        if rng.random() < 0.15:
            target.pop(key, None)
        else:
            target[key] = copy.deepcopy(rng.choice(ODD_VALUES))
    return out


def test_random_corruption_never_ends_in_a_traceback(cli, tmp_path):
    rng = random.Random(13)
    base = load_doc("gpu_a.json")
    seen = set()
    for trial in range(60):
        bad = write(tmp_path, f"bad{trial}.json", corrupted(rng, base))
        for pair in ((GOOD, bad), (bad, GOOD), (bad, bad)):
            code, _, err = cli("compare", *pair)
            assert code in (0, 1, 2) and "internal error" not in err, (trial, err)
            seen.add(code)
        if trial % 20 == 0:
            code, _, err = cli("report", bad, GOOD, "--out", tmp_path / "rep")
            assert code in (0, 2) and "internal error" not in err, (trial, err)
    # Since issue 24 a wrong JSON type or an impossible value is an input error (2) wherever it
    # lands, so random corruption ends in 0 or 2; a corruption the loader accepts still reaches
    # the gate's verdict (1), as a failed repetition does:
    assert {0, 2} <= seen
    failed = load_doc("gpu_a.json")
    failed["benchmarks"][0]["error_occurred"] = True
    assert cli("compare", GOOD, write(tmp_path, "failed.json", failed))[0] == 1


def test_the_wrapper_runs_from_a_read_only_checkout_with_a_current_venv(tmp_path):
    """scripts/tcbench takes its lock only when the venv must change: with a current venv a
    checkout where .venv/.tcbench.lock cannot be opened for writing still runs compare."""
    repo = tmp_path / "checkout"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "tcbench", repo / "scripts" / "tcbench")
    shutil.copy(REPO / "scripts" / "requirements.txt", repo / "scripts" / "requirements.txt")
    (repo / "scripts" / "tcbench_tools").symlink_to(REPO / "scripts" / "tcbench_tools")
    venv_bin = repo / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (venv_bin / "python").chmod(0o755)
    digest = hashlib.sha256((repo / "scripts" / "requirements.txt").read_bytes()).hexdigest()
    (repo / ".venv" / ".tcbench-requirements.sha256").write_text(digest + "\n")
    # Opening the lock for writing fails whoever runs this (root included): it is a folder.
    (repo / ".venv" / ".tcbench.lock").mkdir()
    proc = subprocess.run([str(repo / "scripts" / "tcbench"), "compare", GOOD, GOOD],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "tcbench compare: PASS" in proc.stdout
