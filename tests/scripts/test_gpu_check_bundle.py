"""scripts/gpu_check.sh on this machine, up to the point where a GPU is needed.

`--bundle --arch 90a` makes the self-contained folder a GPU box without build tools or network
runs; the tests check what the box will rely on: the 40 MiB limit (and the size the build's last
line states), that every binary of the build the check runs is there and nothing else, no host
symbols, that every shared library resolves inside the bundle or to CUDA's own libraries or the
C/C++ runtime, the manifest, and that the bundle's own gpu_check.sh runs from another folder (one
with a space in its path), exits 77 without a GPU and plans its tiers. The bundle is built once
per session in build/gpu-check (a Release build for one architecture), so a rerun is
incremental.

gpu_check_torch.py's comparison (tcbench / torch) is checked on synthetic Google Benchmark rows.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import gpu_check_torch  # scripts/ (pytest.ini's pythonpath)
from conftest import FIXTURES
from gpu_check_standins import (
    DEVICE_OK,
    add_bench,
    environment,
    torch_python,
    write_exec,
)

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "gpu_check.sh"
LIMIT_BYTES = 40 * 1024 * 1024
# What a bundle may leave to the box: CUDA's own libraries and the C/C++ runtime.
CUDA_LIBRARY = re.compile(r"^lib(cudart|cublas|cublasLt|cupti|nvperf\w*|cuda)\.so")
RUNTIME_LIBRARY = re.compile(
    r"^(linux-vdso|ld-linux[-\w.]*|libc|libm|libdl|librt|libpthread|libutil|libstdc\+\+|libgcc_s)\.so")


can_build = all(shutil.which(tool) for tool in ("cmake", "ninja", "ldd", "readelf")) and \
    Path(os.environ.get("CUDACXX", "/usr/local/cuda/bin/nvcc")).is_file()
needs_build = pytest.mark.skipif(not can_build, reason="needs cmake, ninja, ldd, readelf and nvcc")


def is_elf(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(4) == b"\x7fELF"


def elf_files(root: Path) -> list[Path]:
    return sorted(p for sub in ("bin", "lib") for p in (root / sub).glob("*")
                  if p.is_file() and not p.is_symlink() and is_elf(p))


def ldd(path: Path) -> list[tuple[str, str]]:
    """(soname, resolved path or 'not found') for each dependency."""
    out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=True).stdout
    deps = []
    for line in out.splitlines():
        line = line.strip()
        if "=>" in line:
            name, rest = (part.strip() for part in line.split("=>", 1))
            deps.append((name, "not found" if rest.startswith("not found") else rest.split()[0]))
        elif line.startswith("/"):
            deps.append((Path(line.split()[0]).name, line.split()[0]))
    return deps


BUILT: dict[str, str] = {}  # the --bundle run's stderr, for the size line


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("gpu-check") / "bundle"
    env = dict(os.environ, TCBENCH_BUNDLE_BUILD_DIR=str(REPO / "build" / "gpu-check"))
    proc = subprocess.run([str(SCRIPT), "--bundle", str(dest), "--arch", "90a"],
                          capture_output=True, text=True, check=False, env=env, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    BUILT["stderr"], BUILT["dest"] = proc.stderr, str(dest)
    return dest


def run_check(bundle_dir: Path, out: Path, **env_overrides: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("TCBENCH_PYTHON_ENV", None)
    env.update(env_overrides)
    return subprocess.run([str(bundle_dir / "scripts" / "gpu_check.sh"), str(out)],
                          capture_output=True, text=True, check=False, env=env, timeout=600)


@pytest.fixture()
def moved_bundle(bundle: Path, tmp_path: Path) -> Path:
    """A copy of the bundle somewhere else: the box unpacks it wherever it likes."""
    dest = tmp_path / "else where" / "tcbench-bundle"
    shutil.copytree(bundle, dest, symlinks=True)
    return dest


@needs_build
def test_bundle_is_at_most_40_mib_and_its_last_line_says_so(bundle: Path):
    total = sum(p.lstat().st_size for p in bundle.rglob("*") if p.is_file() or p.is_symlink())
    assert 0 < total <= LIMIT_BYTES, f"{total} bytes"
    last = BUILT["stderr"].strip().splitlines()[-1]
    m = re.search(r"bundle .*: (\d+) binaries, [0-9.]+ MiB \((\d+) bytes; limit 40 MiB\) for "
                  r"90a-real, in \d+ s$", last)
    assert m and int(m.group(2)) == total, last
    # The figures README.md and docs/gpu-check.md show (data/gpu_check/bundle.json) still hold.
    facts = json.loads((REPO / "data" / "gpu_check" / "bundle.json").read_text())
    assert int(m.group(1)) == facts["binaries"], "measure the bundle again: bundle.json"
    assert abs(total - facts["bytes"]) <= 0.1 * facts["bytes"], (total, "update bundle.json")
    # The device call is in the build's last lines, whole.
    from tcbench_tools import next_steps

    for line in next_steps.device_command(Path(BUILT["dest"]).name):
        assert f"gpu_check:   {line}" in BUILT["stderr"], line


@needs_build
def test_bundle_holds_only_what_the_check_runs_without_host_symbols(bundle: Path):
    names = {p.name for p in (bundle / "bin").glob("*")}
    assert "tcbench_metrics" not in names  # tcbench profile's, not the check's
    assert "tcbench_studies" in names  # the answers' host half
    assert not any(n.startswith("bench_test_") for n in names)
    assert not (bundle / "share" / "doc" / "README.md").exists()
    assert (bundle / "share" / "doc" / "gpu-check.md").is_file()
    for path in (bundle / "bin").glob("bench_*"):
        sections = subprocess.run(["readelf", "-S", "--wide", str(path)], check=False,
                                  capture_output=True, text=True).stdout
        assert ".symtab" not in sections and ".debug_info" not in sections, path.name


@needs_build
def test_bundle_has_every_benchmark_and_device_test_of_the_build(bundle: Path):
    build_bin = REPO / "build" / "gpu-check" / "bin"
    built = {p.name for p in build_bin.glob("*")
             if re.match(r"(bench|device)_", p.name) and not p.name.startswith("bench_test_")}
    shipped = {p.name for p in (bundle / "bin").glob("*")}
    assert {"bench_fp16_vs_fp32", "device_test_gemm_paths"} <= built
    assert built <= shipped, f"missing from the bundle: {sorted(built - shipped)}"
    for name in built:
        assert os.access(bundle / "bin" / name, os.X_OK), name


@needs_build
def test_every_library_resolves_inside_the_bundle_or_to_cuda_or_the_runtime(bundle: Path):
    files = elf_files(bundle)
    assert any(f.parent.name == "lib" for f in files), "no library bundled (libbenchmark?)"
    problems = []
    for path in files:
        for soname, resolved in ldd(path):
            if CUDA_LIBRARY.match(soname):
                continue  # from the box's CUDA (may be absent here: libcuda is the driver's)
            if resolved == "not found":
                problems.append(f"{path.name}: {soname} not found")
            elif RUNTIME_LIBRARY.match(soname):
                continue
            elif not Path(resolved).resolve().is_relative_to(bundle.resolve()):
                problems.append(f"{path.name}: {soname} resolves outside the bundle: {resolved}")
    assert not problems, "\n".join(problems)


@needs_build
def test_binaries_look_for_libraries_beside_them(bundle: Path):
    for path in (bundle / "bin").glob("*"):
        if not is_elf(path):
            continue
        dyn = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True,
                             check=False).stdout
        paths = re.findall(r"\((?:RUNPATH|RPATH)\).*\[(.*)\]", dyn)
        assert paths and "$ORIGIN/../lib" in paths[0].split(":"), f"{path.name}: {paths}"


@needs_build
def test_manifest_lists_every_file_with_size_sha256_and_mode(bundle: Path):
    text = (bundle / "MANIFEST.txt").read_text()
    head, _, listing = text.partition("files: sha256 bytes mode path\n")
    assert re.search(r"^cuda_architectures: \S+", head, re.MULTILINE)
    assert re.search(r"^git_sha: [0-9a-f]{7,}", head, re.MULTILINE)
    listed = {}
    for line in listing.splitlines():
        if line.startswith("size_bytes:"):
            continue
        digest, size, mode, rel = line.split(" ", 3)
        listed[rel] = (digest, int(size), int(mode, 8))
    present = {str(p.relative_to(bundle)) for p in bundle.rglob("*")
               if p.is_file() and not p.is_symlink() and p.name != "MANIFEST.txt"}
    assert set(listed) == present
    for rel, (digest, size, mode) in listed.items():
        data = (bundle / rel).read_bytes()
        assert (hashlib.sha256(data).hexdigest(), len(data)) == (digest, size), rel
        assert (bundle / rel).stat().st_mode & 0o7777 == mode, rel
    assert all(m & 0o100 for r, (_, _, m) in listed.items() if r.startswith("bin/"))


@needs_build
def test_bundle_refuses_to_make_a_bundle(bundle: Path):
    proc = subprocess.run([str(bundle / "scripts" / "gpu_check.sh"), "--bundle"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert "source tree" in proc.stderr


def check_outputs(out: Path, bundle_dir: Path) -> str:
    """Every step of the plan has its line (seconds or '-', and an outcome)."""
    summary = (out / "summary.txt").read_text()
    steps = summary.split("-- steps", 1)[1]
    devices = sorted(p.name for p in (bundle_dir / "bin").glob("device_*"))
    for step in ("GPU state before", *devices, "GPU state after", "answers"):
        assert re.search(rf"^   {re.escape(step)}\s+\S+\s+(\d+|-)\s+(\d+|-)\s+\S", steps,
                         re.MULTILINE), step
    assert re.search(r"^   total\s+\d+\s", steps, re.MULTILINE)
    assert (out / "results" / "nvidia-smi-before.txt").is_file()
    assert (out / "results" / "nvidia-smi-after.txt").is_file()
    return summary


@needs_build
def test_bundle_check_without_gpu_uses_the_boxs_python_as_it_is(moved_bundle: Path,
                                                                tmp_path: Path):
    """The documented call on a copy that lost its execute bits, in a path with spaces: exit 77
    without a GPU, with the archive, the summary and box.txt beside it."""
    out = tmp_path / "check out"
    copy_back = tmp_path / "copy back"
    for path in moved_bundle.rglob("*"):
        if path.is_file():
            path.chmod(0o644)
    env = dict(os.environ, TCBENCH_PYTHON=sys.executable)  # the box's Python: no .venv, no pip
    env.pop("TCBENCH_PYTHON_ENV", None)
    proc = subprocess.run(["sh", str(moved_bundle / "scripts" / "gpu_check.sh"), "--archive",
                           str(copy_back / "gpu-check.tgz"), str(out)], capture_output=True,
                          text=True, check=False, env=env, timeout=600)
    assert proc.returncode == 77, proc.stdout + proc.stderr
    assert "restored the execute bits of" in proc.stderr
    assert sorted(p.name for p in copy_back.iterdir()) == ["box.txt", "gpu-check.tgz",
                                                           "summary.txt"]
    assert "ldd bench_tensor_peak (the steps' LD_LIBRARY_PATH):" in (
        copy_back / "box.txt").read_text()
    summary = check_outputs(out, moved_bundle)
    assert "-- per topic (quick suite)" in summary  # the tables, made by the box's Python
    assert not (moved_bundle / ".venv").exists()
    assert "SKIPPED: no GPU" in summary
    # The first tier-1 binary found no GPU; the later GPU steps were not started, with the reason.
    assert re.search(r"^   bench_\w+ \[t1\]\s+1\s+\d+\s+\d+\s+skipped\s+exit 77: .*no CUDA",
                     summary, re.MULTILINE), summary
    assert re.search(r"^   device_\w+\s+2\s+\d+\s+-\s+NOT STARTED\s+no GPU visible", summary,
                     re.MULTILINE), summary
    # The host half of the answers still came.
    assert " ok " in re.search(r"^   answers .*$", summary, re.MULTILINE).group(0)


@needs_build
def test_the_bundles_plan_meets_the_time_targets(moved_bundle: Path):
    proc = subprocess.run([str(moved_bundle / "scripts" / "gpu_check.sh"), "--plan"],
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    tier1 = int(re.search(r"tier 1: .* (\d+) s$", proc.stdout, re.MULTILINE).group(1))
    quick = int(re.search(r"the quick suite .*: (\d+) s$", proc.stdout, re.MULTILINE).group(1))
    whole = int(re.search(r"whole check: (\d+) s planned", proc.stdout).group(1))
    assert tier1 <= 120 and quick <= 300 and whole <= 420, proc.stdout


def bare_python_env(tmp_path: Path) -> dict:
    """An environment in which this interpreter cannot import numpy, scipy or matplotlib."""
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('numpy', 'scipy', 'matplotlib'):\n"
        "            raise ModuleNotFoundError(name, name=name)\n"
        "sys.meta_path.insert(0, Block())\n")
    return dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{REPO / 'scripts'}")


def test_run_needs_only_the_standard_library(tmp_path: Path):
    """`tcbench run` (runner, results, summary) imports no third-party package: the bundle's
    check relies on it with a bare Python. Blocking numpy, scipy and matplotlib must not matter."""
    code = ("from tcbench_tools import cli, runner, summary\n"
            "from tcbench_tools.results import load\n"
            f"rs = load({str(FIXTURES / 'gpu_a.json')!r})\n"
            "samples = [b.sample() for b in rs.benchmarks.values()]\n"
            "assert any(s is not None and s.cv is not None for s in samples)\n"
            "print(summary.render(rs))\n")
    env = bare_python_env(tmp_path)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    blocked = subprocess.run([sys.executable, "-c", "import numpy"], check=False,
                             capture_output=True, text=True, env=env)
    assert blocked.returncode != 0  # the blocker works, so the first run proves something


def test_a_command_that_needs_a_missing_package_says_which(tmp_path: Path):
    fixture = str(FIXTURES / "gpu_a.json")
    proc = subprocess.run([sys.executable, "-m", "tcbench_tools", "compare", fixture, fixture],
                          capture_output=True, text=True, check=False,
                          env=bare_python_env(tmp_path))
    assert proc.returncode == 2
    assert "'compare' needs the Python package" in proc.stderr and "Traceback" not in proc.stderr


def test_run_does_not_mistake_the_harness_tests_for_benchmarks(tmp_path: Path):
    from tcbench_tools import runner

    for name in ("bench_fp16_vs_fp32", "bench_test_harness", "bench_int8_gemm"):
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
    assert [p.name for p in runner.discover(tmp_path)] == ["bench_fp16_vs_fp32", "bench_int8_gemm"]


def test_gpu_check_rejects_unknown_options():
    proc = subprocess.run([str(SCRIPT), "--frobnicate"], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["gpu_check: unrecognized arguments: --frobnicate."]


# ---- gpu_check_torch.py: tcbench / torch ----

def gbench_row(name: str, tflops: float | None = None, run_type: str = "iteration",
               error: str | None = None) -> dict:
    row = {"name": name + "/manual_time", "run_name": name + "/manual_time", "run_type": run_type,
           "repetitions": 1, "iterations": 1, "real_time": 1.0, "cpu_time": 1.0,
           "time_unit": "ms"}
    if tflops is not None:
        row["tflops"] = tflops
    if error:
        row.update(error_occurred=True, error_message=error)
    return row


def test_torch_comparison_ratio_and_verdicts():
    base = "fp16_vs_fp32/cublaslt/{}/m:8192/n:8192/k:8192"
    tcbench = {"benchmarks": [
        gbench_row(base.format("bf16"), 600.0),
        gbench_row(base.format("bf16"), 620.0),
        gbench_row(base.format("bf16"), 1.0, run_type="aggregate"),   # ignored
        gbench_row(base.format("fp16_acc16"), 900.0),                 # another precision
        # another size:
        gbench_row("fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096/layout:nn", 500.0),
        gbench_row(base.format("fp16"), 580.0),
    ]}
    torch_doc = {"size": 8192, "results": {"bf16": {"tflops": 610.0}, "fp16": {"tflops": 600.0}}}
    result = gpu_check_torch.compare(torch_doc, tcbench)
    rows = {r["precision"]: r for r in result["rows"]}
    assert rows["bf16"]["tcbench_tflops"] == pytest.approx(610.0)  # median of 600 and 620
    assert rows["bf16"]["ratio"] == pytest.approx(1.0)
    assert rows["bf16"]["verdict"] == "ok"
    assert rows["fp16"]["ratio"] == pytest.approx(580.0 / 600.0)
    assert rows["fp16"]["verdict"].startswith("BELOW TARGET")
    text = gpu_check_torch.render(result)
    assert "0.967x" in text and "1.000x" in text


def test_torch_comparison_reports_a_tcbench_error_or_absence():
    name = "fp16_vs_fp32/cublaslt/bf16/m:8192/n:8192/k:8192/layout:nn"
    tcbench = {"benchmarks": [gbench_row(name, error="skipped: needs 1.2 GB")]}
    torch_doc = {"size": 8192, "results": {"bf16": {"tflops": 600.0}, "fp16": {"tflops": 600.0}}}
    rows = {r["precision"]: r for r in gpu_check_torch.compare(torch_doc, tcbench)["rows"]}
    assert rows["bf16"]["ratio"] is None and "needs 1.2 GB" in rows["bf16"]["verdict"]
    assert rows["fp16"]["ratio"] is None and "no result" in rows["fp16"]["verdict"]


def test_torch_filter_selects_exactly_the_compared_rows():
    pattern = re.compile(gpu_check_torch.tcbench_filter(8192))
    names = {p: f"fp16_vs_fp32/cublaslt/{p}/m:8192/n:8192/k:8192/layout:nn/manual_time"
             for p in ("bf16", "fp16", "fp16_acc16", "fp32", "tf32")}
    assert {p for p, n in names.items() if pattern.search(n)} == {"bf16", "fp16"}
    assert not pattern.search("fp16_vs_fp32/cublaslt/fp16/m:8192/n:8192/k:81920/layout:nn")


def test_torch_compare_cli_writes_ratio_json(tmp_path: Path):
    torch_json, tcbench_json, out = tmp_path / "t.json", tmp_path / "b.json", tmp_path / "r.json"
    torch_json.write_text(json.dumps({"size": 8192, "results": {"bf16": {"tflops": 500.0}}}))
    tcbench_json.write_text(json.dumps({"benchmarks": [
        gbench_row("fp16_vs_fp32/cublaslt/bf16/m:8192/n:8192/k:8192/layout:nn", 495.0)]}))
    assert gpu_check_torch.main(["compare", str(torch_json), str(tcbench_json),
                                 "--out", str(out)]) == 0
    rows = {r["precision"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["bf16"]["ratio"] == pytest.approx(0.99)
    assert rows["bf16"]["verdict"] == "ok"


def fake_torch(elapsed_ms: list[float]):
    """Just enough of torch's API for gpu_check_torch.time_torch, so the code path that first
    runs on a borrowed GPU is exercised here; each Event.elapsed_time returns the next value."""
    import types

    times = iter(elapsed_ms)

    class Tensor:
        def __mul__(self, other):
            return self

        def __sub__(self, other):
            return self

        def all(self):
            return True

    class Event:
        def __init__(self, enable_timing=False):
            assert enable_timing

        def record(self):
            pass

        def synchronize(self):
            pass

        def elapsed_time(self, other):
            return next(times)

    class Generator:
        def __init__(self, device=None):
            pass

        def manual_seed(self, seed):
            return self

    calls = {"matmul": 0}

    def matmul(a, b, out=None):
        calls["matmul"] += 1
        return out

    cuda = types.SimpleNamespace(is_available=lambda: True, get_device_name=lambda d: "Fake H100",
                                 synchronize=lambda: None, Event=Event, empty_cache=lambda: None)
    matmul_flags = types.SimpleNamespace(allow_fp16_reduced_precision_reduction=True,
                                         allow_bf16_reduced_precision_reduction=True)
    torch = types.SimpleNamespace(
        __version__="2.9.0", version=types.SimpleNamespace(cuda="13.0"), cuda=cuda,
        backends=types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=matmul_flags)),
        device=lambda name: name, bfloat16="bf16", float16="fp16", Generator=Generator,
        rand=lambda *a, **k: Tensor(), empty=lambda *a, **k: Tensor(), matmul=matmul,
        isfinite=lambda t: t)
    return torch, calls


def test_torch_timing_reports_median_tflops_per_precision(monkeypatch):
    samples = 20
    bf16_ms = [2.0] * (samples - 1) + [50.0]  # one outlier: the median ignores it
    fp16_ms = [4.0] * samples
    torch, calls = fake_torch(bf16_ms + fp16_ms)
    monkeypatch.setitem(sys.modules, "torch", torch)
    doc = gpu_check_torch.time_torch(8192, min_warmup_s=0.0, samples=samples)
    assert doc["device"] == "Fake H100" and doc["torch_version"] == "2.9.0"
    assert doc["results"]["bf16"]["median_s"] == pytest.approx(2e-3)
    assert doc["results"]["bf16"]["tflops"] == pytest.approx(2 * 8192**3 / 2e-3 / 1e12)
    assert doc["results"]["fp16"]["tflops"] == pytest.approx(2 * 8192**3 / 4e-3 / 1e12)
    assert calls["matmul"] >= 2 * (samples + 1)  # warm-up plus the timed samples
    json.dumps(doc)  # what `time --out` writes must be JSON


def test_torch_timing_without_cuda_exits_77(monkeypatch):
    torch, _ = fake_torch([])
    torch.cuda.is_available = lambda: False
    monkeypatch.setitem(sys.modules, "torch", torch)
    with pytest.raises(SystemExit) as exit_info:
        gpu_check_torch.time_torch(8192)
    assert exit_info.value.code == 77


@needs_build
def test_check_on_a_stand_in_gpu_passes_and_compares_with_torch(moved_bundle: Path,
                                                                 tmp_path: Path):
    """The whole GPU path of the real bundle's check, with stand-ins for the GPU parts: device
    tests that pass, one benchmark binary that writes Google Benchmark JSON and its row file,
    and a torch whose matmul takes 2 ms. What is tested is the check's own wiring in the bundle:
    steps, filter, ratio, summary, exit 0."""
    for binary in (moved_bundle / "bin").glob("device_*"):
        write_exec(binary, DEVICE_OK)
    for other in (moved_bundle / "bin").glob("bench_*"):  # the real ones would find no GPU
        other.unlink()
    names = [f"fp16_vs_fp32/cublaslt/{p}/m:{n}/n:{n}/k:{n}/layout:nn" for p in ("bf16", "fp16")
             for n in (256, 8192)]
    add_bench(moved_bundle, "bench_fp16_vs_fp32", names, default={"tflops": 100.0},
              rows={f"fp16_vs_fp32/cublaslt/{p}/m:8192/n:8192/k:8192/layout:nn": {"tflops": t}
                    for p, t in (("bf16", 600.0), ("fp16", 500.0))})
    # The stand-ins replace files MANIFEST.txt lists (the check refuses a bundle whose listed
    # files are missing or changed in size: "bundle incomplete"), so the listing goes with them.
    manifest = moved_bundle / "MANIFEST.txt"
    text = manifest.read_text()
    manifest.write_text(text[:text.index("\nfiles: ") + 1] + "files: sha256 bytes path\n")
    out = tmp_path / "check"
    proc = subprocess.run([str(moved_bundle / "scripts" / "gpu_check.sh"), str(out)],
                          capture_output=True, text=True, check=False, timeout=600,
                          env=environment(tmp_path,
                                          TCBENCH_TORCH_PYTHON=str(torch_python(tmp_path))))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = check_outputs(out, moved_bundle)
    for binary in (moved_bundle / "bin").glob("device_*"):
        assert re.search(rf"^   {binary.name}\s+2\s+\d+\s+\d+\s+ok\s+3 passed, 0 failed, "
                         rf"0 skipped$", summary, re.MULTILINE), binary.name
    assert "-- PASSED (exit 0)" in summary
    # 2 ms for 2*8192^3 FLOP is 549.8 TFLOP/s: bf16 600 -> 1.091x ok, fp16 500 -> 0.909x below.
    assert re.search(r"bf16\s+549\.8\s+600\.0\s+1\.091x\s+ok", summary), summary
    assert re.search(r"fp16\s+549\.8\s+500\.0\s+0\.909x\s+BELOW TARGET", summary), summary
    assert json.loads((out / "torch" / "ratio.json").read_text())["rows"][0]["precision"] == "bf16"


def test_torch_comparison_names_both_cublas_versions():
    name = "fp16_vs_fp32/cublaslt/bf16/m:8192/n:8192/k:8192/layout:nn"
    tcbench = {"context": {"cublaslt_version": "130000"},
               "benchmarks": [gbench_row(name, 600.0)]}
    same = {"size": 8192, "results": {"bf16": {"tflops": 600.0}},
            "cublas": {"wheel": "nvidia-cublas 13.0.0.19", "library": "/x/libcublasLt.so.13"}}
    result = gpu_check_torch.compare(same, tcbench)
    assert result["torch_cublas"] == "nvidia-cublas 13.0.0.19"
    assert result["tcbench_cublaslt"] == "cuBLASLt 130000" and result["same_cublas"] is True
    other = dict(same, cublas={"wheel": "nvidia-cublas-cu12 12.8.4.1", "library": None})
    result = gpu_check_torch.compare(other, tcbench)
    assert result["same_cublas"] is False
    assert "not known to be the same" in gpu_check_torch.render(result)
