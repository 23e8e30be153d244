"""A stand-in GPU box for tests/scripts/test_gpu_check_*.py: a bundle in a temporary folder
(MANIFEST.txt, bin/ with stand-in binaries, scripts/ from this checkout), a stand-in nvidia-smi
that logs every call, and stand-in benchmark binaries that behave like the harness: they list
their quick names, honour --benchmark_filter (with Google Benchmark's leading '-'), print a
console line and append a row-file line per finished benchmark, and write the Google Benchmark
JSON at the end. A stand-in can crash, hang, be killed half-way, or list garbage, as a first GPU
run can. Synthetic test data, not measurements."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

from tcbench_tools.results import GBENCH_FIELDS

REPO = Path(__file__).resolve().parents[1].parent
QUICK_LISTS = Path(__file__).resolve().parents[2] / "data" / "gpu_check" / "quick_lists.json"

# Every call is appended to $TCBENCH_TEST_SMI_LOG; the sampler's query gets numbers, the state
# queries a CSV (it answers like the real one; a setter would be an unknown flag here).
FAKE_NVIDIA_SMI = """#!/bin/sh
[ -n "$TCBENCH_TEST_SMI_LOG" ] && printf '%s\\n' "$*" >> "$TCBENCH_TEST_SMI_LOG"
case "$*" in
  *--help-query-gpu*) echo '"clocks_event_reasons.active"' ;;
  *clocks.sm,power.draw,power.limit*) echo '1755, 612.50, 700.00, 61, 100' ;;
  *--query-gpu=*) echo 'index, name, pci.bus_id, uuid, clocks.current.sm [MHz]'
                  echo '0, NVIDIA H100 80GB HBM3, 00000000:19:00.0, GPU-1234, 1980 MHz' ;;
  *) echo 'Fake NVIDIA-SMI 580.00' ;;
esac
"""

DEVICE_OK = """#!/bin/sh
if [ "$1" = "--gtest_list_tests" ]; then printf 'Suite.\\n  One\\n  Two\\n  Three\\n'; exit 0; fi
for a in "$@"; do
  case $a in --gtest_output=xml:*) echo '<testsuites/>' > "${a#--gtest_output=xml:}" ;; esac
done
echo '[==========] 3 tests ran.'
echo '[  PASSED  ] 3 tests.'
"""

# A device test that hangs, with a child of its own: both must be gone after its step.
DEVICE_HANGS = """#!/bin/sh
if [ "$1" = "--gtest_list_tests" ]; then printf 'Wgmma.\\n  FirstLaunch\\n'; exit 0; fi
echo '[ RUN      ] Wgmma.FirstLaunch'
sleep 1000 &
echo "$$ $!" > "{pids}"
wait
"""

DEVICE_SEGFAULTS = """#!/bin/sh
if [ "$1" = "--gtest_list_tests" ]; then printf 'Cupti.\\n  Replay\\n'; exit 0; fi
echo '[ RUN      ] Cupti.Replay'
kill -SEGV $$
"""

DEVICE_FAILS = """#!/bin/sh
if [ "$1" = "--gtest_list_tests" ]; then printf 'Fake.\\n  Fails\\n'; exit 0; fi
echo '[  FAILED  ] 1 test, listed below:'
echo '[  FAILED  ] Fake.Fails'
exit 1
"""

# The stand-in benchmark binary. SPEC (filled in per binary): names, rows (counters and labels
# by name), seconds per row, and what goes wrong: "crash_list", "garbage_list", "empty_list",
# "crash_run", "hang", "kill_after" (SIGKILL after that many rows), "exit" (the exit code);
# "full_only": names registered without --quick only (the torch comparison's 8192^3 rows);
# "start_delay": seconds before the row file's first line (a slow start-up); "context": more
# context keys.
BENCH = r'''#!{python}
import json, os, re, signal, sys, time
SPEC = json.loads({spec!r})
args = sys.argv[1:]
log = os.environ.get("TCBENCH_TEST_ARGV_LOG")
if log:
    with open(log, "a") as fh:
        fh.write(json.dumps([os.path.basename(sys.argv[0]), *args]) + "\n")
if os.environ.get("TCBENCH_TEST_ENV_LOG"):
    with open(os.environ["TCBENCH_TEST_ENV_LOG"], "a") as fh:
        fh.write(os.path.basename(sys.argv[0]) + " " + os.environ.get("LD_LIBRARY_PATH", "") + "\n")
names = SPEC["names"] + ([] if "--quick" in args else SPEC.get("full_only", []))
for key in SPEC.get("echo_env", []):
    print(f"{{key}}={{os.environ.get(key)}}", flush=True)
if any(a.startswith("--benchmark_list_tests") for a in args):
    if SPEC.get("crash_list"):
        os.kill(os.getpid(), signal.SIGSEGV)
    if SPEC.get("garbage_list"):
        sys.stdout.buffer.write(b"\x89\xff garbage at start \x00\x01\n")
        sys.exit(0)
    if SPEC.get("empty_list"):
        sys.exit(0)
    print("\n".join(n + "/manual_time" for n in names))
    sys.exit(0)
flt = next((a.split("=", 1)[1] for a in args if a.startswith("--benchmark_filter=")), "")
negate = flt.startswith("-")
pattern = flt[1:] if negate else flt
chosen = [n for n in names if (re.search(pattern, n + "/manual_time") is not None) != negate]
out = next(a.split("=", 1)[1] for a in args if a.startswith("--benchmark_out="))
rows_path = out[:-5] + ".jsonl" if out.endswith(".json") else out + ".jsonl"
context = {{"gpu_name": "Fake GPU", "compute_capability": "9.0", "tcbench_synthetic": "true",
           "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "cublaslt_version": "130000",
           "max_sm_clock_mhz": "1980", "power_limit_w": "700.00", **SPEC.get("context", {{}})}}
# A misbehaviour applies to every run, or with "only_negated" to tier 3's (a negated filter or
# none).
if SPEC.get("only_negated") and flt and not negate:
    SPEC = dict(SPEC, crash_run=False, hang=False, kill_after=None)
if SPEC.get("crash_run"):
    print("starting", flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)
rows_file = open(rows_path, "w")
time.sleep(SPEC.get("start_delay", 0.0))  # the CUDA context, cuBLAS, NVML
rows_file.write(json.dumps({{"context": context, "tcbench_planned": chosen}}) + "\n")
rows_file.flush()
json_file = open(out, "w")
json_file.write('{{\n  "context": ' + json.dumps(context) + ',\n  "benchmarks": [\n')
json_file.flush()
if SPEC.get("hang"):
    print("hanging", flush=True)
    time.sleep(1000)
written = []
for i, name in enumerate(chosen):
    if SPEC.get("kill_after") is not None and i == SPEC["kill_after"]:
        print(f"killed after {{i}} rows", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(SPEC.get("seconds", 0.0))
    extra = dict(SPEC.get("rows", {{}}).get(name, SPEC.get("default", {{}})))
    row = {{"name": name + "/manual_time", "run_name": name + "/manual_time",
           "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1,
           "iterations": 1, "real_time": extra.pop("real_time", 1.0), "cpu_time": 1.0,
           "time_unit": "ms", **extra}}
    print(name + "/manual_time", "1.0 ms", flush=True)
    rows_file.write(json.dumps(row) + "\n")
    rows_file.flush()
    json_file.write(("    " if not written else ",\n    ") + json.dumps(row))
    written.append(row)
json_file.write("\n  ]\n}}\n")
json_file.close()
rows_file.write('{{"tcbench_finished": true}}\n')
rows_file.close()
sys.exit(SPEC.get("exit", 0))
'''

# The bundle's tcbench_studies: a host-studies file with the INT8 study's rows (Q1's host half).
FAKE_STUDIES = """#!{python}
import json, sys
out = sys.argv[sys.argv.index("--out") + 1]
rows = [dict(name=n, run_name=n, run_type="iteration", repetitions=1, iterations=1,
             real_time=1.0, cpu_time=1.0, time_unit="s", top1_accuracy_pct=a)
        for n, a in (("int8_study/fp32/fp32", 94.3), ("int8_study/ptq_max/int8", 93.1),
                     ("int8_study/ptq_p99.99/int8", 95.2), ("int8_study/qat/int8", 95.1))]
json.dump({{"context": {{"tcbench_kind": "host-studies"}}, "benchmarks": rows}}, open(out, "w"))
"""

# Just enough of torch for gpu_check_torch.py's `time`: every matmul "takes" 2 ms.
FAKE_TORCH = """
import os, types
if os.environ.get("TCBENCH_TEST_ENV_LOG"):
    with open(os.environ["TCBENCH_TEST_ENV_LOG"], "a") as fh:
        fh.write("torch " + os.environ.get("LD_LIBRARY_PATH", "") + "\\n")
__version__ = "0.0-stand-in"
version = types.SimpleNamespace(cuda="13.0")
bfloat16, float16 = "bf16", "fp16"
class _T:
    def __mul__(self, o): return self
    def __sub__(self, o): return self
    def all(self): return True
class _Event:
    def __init__(self, enable_timing=False): pass
    def record(self): pass
    def synchronize(self): pass
    def elapsed_time(self, other): return 2.0
class Generator:
    def __init__(self, device=None): pass
    def manual_seed(self, s): return self
cuda = types.SimpleNamespace(is_available=lambda: True, get_device_name=lambda d: "Stand-in",
                             synchronize=lambda: None, Event=_Event, empty_cache=lambda: None)
backends = types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(
    allow_fp16_reduced_precision_reduction=True, allow_bf16_reduced_precision_reduction=True)))
device = lambda name: name
rand = empty = lambda *a, **k: _T()
matmul = lambda a, b, out=None: out
isfinite = lambda t: t
"""


def write_exec(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


def quick_lists() -> dict[str, list[str]]:
    """The real benchmark binaries' quick lists (data/gpu_check/quick_lists.json;
    test_gpu_check_plan checks it against a build's binaries when there is one)."""
    return {k: v for k, v in json.loads(QUICK_LISTS.read_text()).items()
            if k.startswith("bench_")}


def recorded_device_tests() -> dict[str, list[str]]:
    """The device test binaries' tests, as data/gpu_check/quick_lists.json records them."""
    return {k: v for k, v in json.loads(QUICK_LISTS.read_text()).items()
            if k.startswith("device_")}


def make_bundle(root: Path, needs_glibc: str = "2.17") -> Path:
    bundle = root / "bundle"
    (bundle / "bin").mkdir(parents=True)
    shutil.copytree(REPO / "scripts", bundle / "scripts",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (bundle / "MANIFEST.txt").write_text(
        "# stand-in bundle\ngit_sha: 0123456789ab\ncuda_architectures: 90-real\n"
        f"glibc: 2.36 (the build machine's)\nneeds_glibc: {needs_glibc} (stand-in)\n"
        "files: sha256 bytes mode path\n")
    return bundle


def list_in_manifest(bundle: Path, *paths: str, sizes: dict[str, int] | None = None) -> None:
    """Appends files to the stand-in MANIFEST.txt's listing, as --bundle writes them (a size in
    `sizes` instead of the real one: a copy that differs)."""
    lines = []
    for path in paths:
        data = (bundle / path).read_bytes()
        size = (sizes or {}).get(path, len(data))
        mode = (bundle / path).stat().st_mode & 0o7777
        lines.append(f"{hashlib.sha256(data).hexdigest()} {size} {mode:04o} {path}\n")
    with open(bundle / "MANIFEST.txt", "a") as fh:
        fh.writelines(lines)


def add_bench(bundle: Path, name: str, names: list[str] | None = None, **spec) -> Path:
    """A stand-in bench_<topic>; without `names`, four GEMM rows of its topic."""
    topic = name.removeprefix("bench_")
    spec.setdefault("names", names or [f"{topic}/cublaslt/{p}/m:256/n:256/k:256/layout:nn"
                                       for p in ("fp16", "bf16", "fp8", "tf32")])
    path = bundle / "bin" / name
    write_exec(path, BENCH.format(python=sys.executable, spec=json.dumps(spec)))
    return path


def add_studies(bundle: Path) -> None:
    write_exec(bundle / "bin" / "tcbench_studies", FAKE_STUDIES.format(python=sys.executable))


def torch_python(root: Path) -> Path:
    site = root / "fake-torch"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(FAKE_TORCH)
    wrapper = root / "torch-python"
    write_exec(wrapper, f"#!/bin/sh\nPYTHONPATH='{site}' exec '{sys.executable}' \"$@\"\n")
    return wrapper


def environment(root: Path, **extra: str) -> dict:
    fake_bin = root / "fake-bin"
    fake_bin.mkdir(exist_ok=True)
    write_exec(fake_bin / "nvidia-smi", FAKE_NVIDIA_SMI)
    env = dict(os.environ, PATH=f"{fake_bin}{os.pathsep}{os.environ['PATH']}",
               TCBENCH_PYTHON=sys.executable,
               TCBENCH_TORCH_PYTHON=str(root / "no-torch-python"),
               TCBENCH_TEST_SMI_LOG=str(root / "nvidia-smi-calls.log"),
               TCBENCH_TEST_ARGV_LOG=str(root / "argv.log"))
    for key in ("TCBENCH_PYTHON_ENV", "TCBENCH_CHECK_ARCHIVE", "TCBENCH_CHECK_TIER",
                "TCBENCH_CHECK_BUDGET_S", "TCBENCH_STEP_TIMEOUT_S"):
        env.pop(key, None)
    env.update(extra)
    return env


def verdict_rows(names: set[str]) -> dict[str, dict]:
    """Counters and labels that give every GPU rule a verdict (answers_data's values), for those
    of `names` they apply to, renamed to the quick suite's shapes."""
    import answers_data as data

    made = (data.int8_gpu() + data.loss_gpu() + data.tensor_util() + data.alignment_gpu()
            + data.fp8_gpu())
    out = {}
    for row in made:
        name = row["run_name"].removesuffix("/manual_time")
        if name.startswith(("int8_gemm/", "loss_scaling/")):
            name = name.replace("m:8192/n:8192/k:8192/layout:tn", "m:4096/n:4096/k:4096/layout:tn")
            name = name.replace("steps:400", "steps:100")
        if name.startswith("tensor_util/"):
            name = name.replace("m:8192/n:8192/k:8192", "m:2048/n:2048/k:2048")
        if name in names:
            extra = {k: v for k, v in row.items() if k == "label" or k not in GBENCH_FIELDS}
            out[name] = extra
    return out


def device_tests(binary: Path) -> list[str]:
    """A device test binary's tests as Suite.Test (its --gtest_list_tests; no GPU needed)."""
    import subprocess

    out = subprocess.run([str(binary), "--gtest_list_tests"], check=True, capture_output=True,
                         text=True).stdout
    names, suite = [], ""
    for line in out.splitlines():
        if line.strip() and not line.startswith(" "):
            suite = line.split("#")[0].strip()
        elif line.startswith("  ") and line.strip():
            names.append(suite + line.split("#")[0].strip())
    return names


def write_quick_lists(bin_dir: Path) -> None:
    """Regenerates data/gpu_check/quick_lists.json from a build's binaries: every bench_*'s quick
    list and every device_*'s tests (the check's tier 2):
    python3 tests/scripts/gpu_check_standins.py build/<preset>/bin"""
    import subprocess

    lists = {}
    for binary in sorted(bin_dir.glob("bench_*")):
        if binary.suffix or binary.name.startswith("bench_test_"):
            continue
        out = subprocess.run([str(binary), "--quick", "--benchmark_list_tests"], check=True,
                             capture_output=True, text=True).stdout
        lists[binary.name] = [n.strip().removesuffix("/manual_time") for n in out.splitlines()
                              if n.strip()]
    for binary in sorted(bin_dir.glob("device_*")):
        if not binary.suffix and binary.is_file():
            lists[binary.name] = device_tests(binary)
    QUICK_LISTS.write_text(json.dumps(lists, indent=1) + "\n")


if __name__ == "__main__":
    write_quick_lists(Path(sys.argv[1]))
