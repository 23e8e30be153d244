"""The bundle: a folder a GPU box without build tools or network runs the check from.

``gpu_check.sh --bundle [DIR] [--arch 90a]`` (on a machine with the build dependencies) makes a
separate Release build for the architectures named (default: the visible GPU's family, else 90a:
H100/H200), linked with ``-s`` (no host debug info or symbols) and fatbinaries compressed for size,
and copies into DIR only what the check runs:

    bin/       every bench_* and device_* binary (not the bench_test_* host tests), tcbench_studies
    lib/       the shared libraries they need that are neither CUDA's own (cudart, cuBLAS,
               cuBLASLt, CUPTI, nvperf, the driver) nor the C/C++ runtime: libbenchmark
    scripts/   gpu_check.sh, gpu_check_torch.py and the Python tools
    share/doc/ docs/gpu-check.md
    MANIFEST.txt  what was built, how, and every file with its size and sha256

It fails (exit 1) over BUNDLE_LIMIT (40 MiB) or when a library would be missing, and says the
size in its last line. On the box, ``preflight`` refuses a bundle that does not match its
manifest, and one whose binaries cannot load. Standard library only (it runs cmake, ninja, ldd).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tcbench_tools import next_steps, process
from tcbench_tools.arguments import ascii_int

BUNDLE_LIMIT = 40 * 1024 * 1024
DEFAULT_ARCH = "90a"  # H100/H200; *_sm90a.cu kernels get 90a by the build's own rule anyway
CUDA_LIBRARY = re.compile(r"^lib(cudart|cublas|cublasLt|cupti|nvperf_[a-z_]+|cuda|nvidia-ml)\.so")
SYSTEM_LIBRARY = re.compile(r"^(linux-vdso|linux-gate|ld-linux[-a-z0-9_.]*|libc|libm|libdl|librt|"
                            r"libpthread|libutil|libstdc\+\+|libgcc_s)\.so")
REDO = "copy again the whole folder that scripts/gpu_check.sh --bundle made"


def say(text: str) -> None:
    print(f"gpu_check: {text}", file=sys.stderr, flush=True)


def is_elf(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError:
        return False


def dependencies(path: Path, env: dict | None = None) -> list[tuple[str, str]]:
    """(soname, resolved path or 'not found') of each library an ELF file needs (ldd), found with
    `env`'s LD_LIBRARY_PATH (default: this process's)."""
    try:
        got = process.capture(["ldd", str(path)], 60, env=env)
    except OSError:
        return []
    out = got.output.decode("utf-8", errors="replace") if got.code is not None else ""
    deps = []
    for line in out.splitlines():
        line = line.strip()
        if "=>" in line:
            name, rest = (part.strip() for part in line.split("=>", 1))
            deps.append((name, "not found" if rest.startswith("not found") else rest.split()[0]))
        elif line.startswith("/"):
            deps.append((Path(line.split()[0]).name, line.split()[0]))
    return deps


# --- on the GPU box ------------------------------------------------------------------------------


def manifest_field(root: Path, key: str) -> str:
    try:
        text = (root / "MANIFEST.txt").read_text(errors="replace")
    except OSError:
        return ""
    m = re.search(rf"^{re.escape(key)}: (.*)$", text, re.MULTILINE)
    return m.group(1).strip() if m else ""


@dataclass
class Listed:
    """One file of MANIFEST.txt's listing."""

    sha256: str
    size: int
    mode: int | None  # permission bits (a manifest older than the modes has none)
    path: str


def listed_files(text: str) -> list[Listed]:
    """MANIFEST.txt's file lines: "sha256 bytes mode path" (or, before modes were recorded,
    "sha256 bytes path"); a line that is neither is skipped."""
    header, _, listing = text.partition("\nfiles: ")[2].partition("\n")
    with_mode = "mode" in header.split()
    out = []
    for line in listing.splitlines():
        parts = line.split(" ", 3 if with_mode else 2)
        if len(parts) != (4 if with_mode else 3) or not re.fullmatch(r"[0-9a-f]{64}", parts[0]):
            continue
        size = ascii_int(parts[1])  # ("²" passed isdigit)
        mode = int(parts[2], 8) if with_mode and re.fullmatch(r"0?[0-7]{3,4}", parts[2]) else None
        if size is None or (with_mode and mode is None):
            continue
        out.append(Listed(parts[0], size, mode, parts[-1]))
    return out


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def bundle_problem(root: Path) -> str | None:
    """Why `root` is neither a source tree nor a complete bundle (MANIFEST.txt, bin/, every file
    it lists at its size and sha256), as one sentence; None when it is one."""
    if (root / "CMakeLists.txt").is_file():
        return None
    manifest = root / "MANIFEST.txt"
    if not manifest.is_file():
        return (f"bundle incomplete: {root} has no MANIFEST.txt (and no CMakeLists.txt, so it is "
                f"no source tree either): {REDO}")
    if not (root / "bin").is_dir():
        return f"bundle incomplete: {root} has no bin/ folder: {REDO}"
    missing = short = changed = 0
    first = ""
    for f in listed_files(manifest.read_text(errors="replace")):
        path = root / f.path
        if not path.is_file():
            missing += 1
            first = first or f"{f.path} is missing"
        elif path.stat().st_size != f.size:
            short += 1
            first = first or f"{f.path} has {path.stat().st_size} bytes, not {f.size}"
        elif sha256_of(path) != f.sha256:
            changed += 1
            first = first or f"{f.path} has another sha256 than MANIFEST.txt lists"
    if missing + short + changed:
        return (f"bundle incomplete: {missing} file(s) MANIFEST.txt lists are missing, {short} "
                f"differ in size and {changed} in content (first: {first}): {REDO}")
    return None


EXECUTE = 0o111


def restore_modes(root: Path) -> tuple[str | None, str | None]:
    """Gives back the execute bits a copy to the box dropped: those MANIFEST.txt records (or,
    for an older manifest, every file of bin/). Returns (a note naming what was restored, a
    refusal when a file cannot be made executable); (None, None) when nothing was missing."""
    if (root / "CMakeLists.txt").is_file():
        return None, None
    try:
        listed = listed_files((root / "MANIFEST.txt").read_text(errors="replace"))
    except OSError:
        return None, None
    wanted = {f.path: f.mode & EXECUTE for f in listed if f.mode is not None and f.mode & EXECUTE}
    if not any(f.mode is not None for f in listed):  # a manifest without modes
        wanted = {p.relative_to(root).as_posix(): 0o100 for p in (root / "bin").glob("*")
                  if p.is_file()}
    restored, refused = [], []
    for rel, bits in sorted(wanted.items()):
        path = root / rel
        try:
            mode = path.stat().st_mode
            if mode & bits == bits:
                continue
            path.chmod(mode | bits)
            restored.append(rel)
        except OSError:
            refused.append(rel)
    note = (f"restored the execute bits of {len(restored)} file(s) the copy to this box dropped "
            f"(first: {restored[0]})" if restored else None)
    refusal = (f"{len(refused)} bundled program(s) lost their execute bits and cannot be given "
               f"them back here (first: {refused[0]}): copy the bundle keeping file modes, or run "
               "chmod -R u+x on its bin/ and scripts/ folders" if refused else None)
    return note, refusal


# Libraries only the tensor-counter binaries need (CUPTI and the nvperf libraries it loads): a box
# without them loses those binaries' steps, not the check.
COUNTER_LIBRARY = re.compile(r"^lib(cupti|nvperf_[a-z_]+)\.so")


def loading_problem(root: Path, env: dict | None = None) -> tuple[str | None, str | None]:
    """(why the bundle's binaries cannot load on this box, a note on the binaries that cannot
    load without CUPTI), each None when there is none. Libraries are looked up with `env`'s
    LD_LIBRARY_PATH: the one the check's steps run with. The driver's own libraries may be
    missing: that is "no GPU" (77), for the binaries to say."""
    if shutil.which("ldd") is None:
        return None, None
    without_counters: dict[str, str] = {}
    for path in sorted([*(root / "bin").glob("*"), *(root / "lib").glob("*")]):
        if not path.is_file() or not is_elf(path):
            continue
        for soname, resolved in dependencies(path, env):
            if resolved != "not found" or re.match(r"lib(cuda|nvidia-ml)\.so", soname):
                continue
            if COUNTER_LIBRARY.match(soname):
                without_counters.setdefault(path.name, soname)
                continue
            return (f"the bundle's {path.relative_to(root)} cannot load on this box ({soname} "
                    "not found): install what it names (CUDA 13's libraries: put their folder "
                    "on LD_LIBRARY_PATH)"), None
    if not without_counters:
        return None, None
    names = ", ".join(sorted(without_counters))
    missing = ", ".join(sorted(set(without_counters.values())))
    return None, (f"{missing} not found here: the tensor-counter binaries ({names}) cannot "
                  "load, so their steps fail and their counters are not read; every other step "
                  "runs")


def cuda_library_dirs() -> list[str]:
    """The box's CUDA library folders, wherever its toolkit is (for binaries built elsewhere)."""
    nvcc = shutil.which("nvcc")
    root = os.environ.get("CUDA_HOME") or (str(Path(nvcc).resolve().parents[1]) if nvcc else "")
    root = root or "/usr/local/cuda"
    return [d for d in (f"{root}/lib64", f"{root}/lib", f"{root}/extras/CUPTI/lib64")
            if Path(d).is_dir()]


# --- on the build machine ------------------------------------------------------------------------


def default_arch() -> str:
    """The visible GPU's family when there is one (nvidia-smi's compute_cap; Hopper gets 90a),
    else DEFAULT_ARCH."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return DEFAULT_ARCH
    try:
        got = process.capture([smi, "--query-gpu=compute_cap", "--format=csv,noheader"], 20)
    except OSError:
        return DEFAULT_ARCH
    cap = got.output.decode(errors="replace").strip().splitlines()
    if got.code != 0 or not cap or not re.fullmatch(r"\d+\.\d+", cap[0].strip()):
        return DEFAULT_ARCH
    major, minor = cap[0].strip().split(".")
    arch = f"{major}{minor}"
    return arch + "a" if arch in ("90", "100", "101", "103", "120", "121") else arch


def cuda_architectures(arch: str) -> str:
    """CMAKE_CUDA_ARCHITECTURES for --arch: "90a" -> "90a-real"; "90a,100a" -> both."""
    parts = [a.strip() for a in arch.replace(";", ",").split(",") if a.strip()]
    if not parts or not all(re.fullmatch(r"\d{2,3}[af]?(-real|-virtual)?", a) for a in parts):
        raise ValueError(f"--arch {arch!r} is not a list of CUDA architectures like 90a or "
                         "90a,100a")
    return ";".join(a if "-" in a else f"{a}-real" for a in parts)


def _run(cmd: list[str], log: Path, cwd: Path | None = None) -> bool:
    with open(log, "wb") as fh:
        return subprocess.call(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=cwd) == 0


def _tail(log: Path, n: int = 20) -> str:
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    picked = [ln for ln in lines if re.search(r"error|FAILED", ln)][:n] or lines[-n:]
    return "\n".join(picked)


def collect_libraries(dest: Path) -> bool:
    """Copies into dest/lib every library a bundled ELF needs that is neither CUDA's nor the
    runtime's and does not resolve inside dest yet, until nothing new is needed; False when one
    cannot be found."""
    (dest / "lib").mkdir(exist_ok=True)
    ok, changed = True, True
    while changed:
        changed = False
        for path in sorted([*(dest / "bin").glob("*"), *(dest / "lib").glob("*")]):
            if not path.is_file() or not is_elf(path):
                continue
            for soname, resolved in dependencies(path):
                if CUDA_LIBRARY.match(soname) or SYSTEM_LIBRARY.match(soname):
                    continue
                target = dest / "lib" / soname
                if resolved.startswith(str(dest) + "/") or target.exists():
                    continue
                if resolved == "not found":
                    say(f"{path.relative_to(dest)} needs {soname}, which is not found here")
                    ok = False
                    continue
                shutil.copyfile(resolved, target)
                target.chmod(0o755)
                say(f"bundled {soname} (from {resolved})")
                changed = True
    return ok


def needed_glibc(dest: Path) -> str:
    """The newest GLIBC_x.y symbol version any bundled ELF file needs (readelf -V)."""
    versions = set()
    for path in [*(dest / "bin").glob("*"), *(dest / "lib").glob("*")]:
        if path.is_file() and is_elf(path):
            try:
                out = subprocess.run(["readelf", "-V", "--wide", str(path)],
                                     capture_output=True, check=False, text=True,
                                     timeout=60).stdout
            except (OSError, subprocess.TimeoutExpired):
                continue
            versions |= set(re.findall(r"Name: GLIBC_([0-9.]+)", out))
    return max(versions, key=lambda v: tuple(int(x) for x in v.split(".")), default="")


MANIFEST_HEAD = "# tcbench bundle for scripts/gpu_check.sh, made by scripts/gpu_check.sh --bundle"


def own_folder(dest: Path) -> bool:
    """Whether --bundle may replace `dest`: it does not exist, is an empty folder, or is a bundle
    this command made (MANIFEST.txt's first line). Anything else is someone's data."""
    if not dest.exists() and not dest.is_symlink():
        return True
    if not dest.is_dir() or dest.is_symlink():
        return False
    if not any(dest.iterdir()):
        return True
    try:
        with open(dest / "MANIFEST.txt", encoding="utf-8", errors="replace") as fh:
            return fh.readline().rstrip("\n") == MANIFEST_HEAD
    except OSError:
        return False


def write_manifest(dest: Path, repo: Path, build: Path, archs: str, nvcc: str) -> None:
    version = re.search(r"project\(tcbench VERSION ([0-9.]+)",
                        (repo / "CMakeLists.txt").read_text())
    try:
        sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, check=False, text=True).stdout.strip()
        sha = sha or "unknown"
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, check=False, text=True).stdout
        if sha != "unknown" and dirty.strip():
            sha += "-dirty"
    except OSError:
        sha = "unknown"
    nvcc_version = re.search(r"release [0-9.]+, V[0-9.]+",
                             subprocess.run([nvcc, "--version"], capture_output=True, check=False,
                                            text=True).stdout)
    cmake_version = subprocess.run(["cmake", "--version"], capture_output=True, check=False,
                                   text=True).stdout.splitlines()[0]
    lines = [MANIFEST_HEAD,
             f"tcbench_version: {version.group(1) if version else 'unknown'}",
             f"git_sha: {sha}",
             f"made_utc: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
             f"build_dir: {build}",
             f"cuda_architectures: {archs}",
             f"nvcc: {nvcc_version.group(0) if nvcc_version else 'unknown'}",
             f"cmake: {cmake_version}",
             f"glibc: {os.confstr('CS_GNU_LIBC_VERSION').split()[-1]} (the build machine's)",
             (f"needs_glibc: {needed_glibc(dest)} (the newest GLIBC_ symbol version the bundled "
             "binaries use)"),
             ("needs_on_the_box: NVIDIA driver for CUDA 13 (R580+); CUDA 13 libcudart, libcublas, "
             "libcublasLt (and libcupti, libnvperf_* for profiling) on the loader path or in "
             "/usr/local/cuda; Python >= 3.11 (standard library only)")]
    size = sum(p.lstat().st_size for p in dest.rglob("*")
               if (p.is_file() or p.is_symlink()) and p.name != "MANIFEST.txt")
    lines += [f"size_bytes: {size} (every file but this one)", "files: sha256 bytes mode path"]
    for path in sorted(p for p in dest.rglob("*") if p.is_file() and not p.is_symlink()
                       and p.name != "MANIFEST.txt"):
        data = path.read_bytes()
        lines.append(f"{hashlib.sha256(data).hexdigest()} {len(data)} "
                     f"{path.stat().st_mode & 0o7777:04o} {path.relative_to(dest).as_posix()}")
    (dest / "MANIFEST.txt").write_text("\n".join(lines) + "\n")


def targets(build: Path) -> list[str]:
    """Every benchmark and device-test target, by name (new topics come without edits), and
    tcbench_studies_tool (the answers' host half); not bench_test_* (the harness's host tests)."""
    out = subprocess.run(["ninja", "-C", str(build), "-t", "targets", "all"],
                         capture_output=True, check=False, text=True).stdout
    found = set(re.findall(r"^((?:bench|device)_\w+|tcbench_studies_tool): phony$", out,
                           re.MULTILINE))
    return sorted(t for t in found if not t.startswith("bench_test_"))


def make(repo: Path, dest: Path | None, arch: str | None) -> int:
    if not (repo / "CMakeLists.txt").is_file():
        say(f"--bundle needs the source tree; {repo} is a bundle already.")
        return 2
    dest = (dest or repo / "build" / "gpu-check-bundle").absolute()
    build = Path(os.environ.get("TCBENCH_BUNDLE_BUILD_DIR",
                                repo / "build" / "gpu-check")).absolute()
    if build == dest or dest in build.parents:
        say(f"the bundle folder {dest} must not contain the build folder {build}.")
        return 2
    if not own_folder(dest):
        say(f"{dest} exists, is not empty and is no bundle this command made (its MANIFEST.txt "
            "would say so): give a new or empty folder; nothing was built or removed.")
        return 2
    arch = arch or os.environ.get("TCBENCH_BUNDLE_ARCHS") or default_arch()
    try:
        archs = cuda_architectures(arch)
    except ValueError as exc:
        say(str(exc))
        return 2
    nvcc = os.environ.get("CUDACXX", "/usr/local/cuda/bin/nvcc")
    jobs = os.environ.get("TCBENCH_BUNDLE_JOBS", str(os.cpu_count() or 2))
    begin = time.monotonic()
    build.parent.mkdir(parents=True, exist_ok=True)
    say(f"configure {build} (Release, CUDA architectures {archs})")
    configure = ["cmake", "-S", str(repo), "-B", str(build), "-G", "Ninja",
                 "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_CUDA_COMPILER={nvcc}",
                 f"-DCMAKE_CUDA_ARCHITECTURES={archs}", "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON",
                 "-DTCBENCH_BUILD_TESTS=ON", "-DTCBENCH_BUILD_BENCHMARKS=ON",
                 # No host symbols or debug info in what travels; device code compressed for
                 # size (nvcc --compress-mode, CUDA 12.8+): decompressed once when loaded.
                 "-DCMAKE_EXE_LINKER_FLAGS=-s", "-DCMAKE_CUDA_FLAGS=--compress-mode=size"]
    log = Path(f"{build}.configure.log")
    if not _run(configure, log):
        say(f"configure failed, see {log}\n{_tail(log)}")
        return 1
    wanted = targets(build)
    if not wanted:
        say("the build defines no bench_* or device_* target.")
        return 1
    say(f"build {len(wanted)} targets with {jobs} jobs")
    log = Path(f"{build}.build.log")
    if not _run(["cmake", "--build", str(build), "--parallel", jobs, "--target", *wanted], log):
        say(f"build failed, see {log}\n{_tail(log)}")
        return 1
    if not own_folder(dest):  # made meanwhile by someone else
        say(f"{dest} is no longer empty nor a bundle: nothing was removed.")
        return 2
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "bin").mkdir(parents=True)
    copied = 0
    for path in sorted((build / "bin").glob("*")):
        name = path.name
        wanted_file = ((name.startswith(("bench_", "device_"))
                        and not name.startswith("bench_test_"))
                       or name == "tcbench_studies")
        if wanted_file and path.is_file() and os.access(path, os.X_OK) and not path.suffix:
            shutil.copy2(path, dest / "bin" / name)
            copied += 1
    shutil.copytree(repo / "scripts", dest / "scripts",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "requirements.txt"))
    (dest / "share" / "doc").mkdir(parents=True)
    if (repo / "docs" / "gpu-check.md").is_file():
        shutil.copy2(repo / "docs" / "gpu-check.md", dest / "share" / "doc" / "gpu-check.md")
    if not collect_libraries(dest):
        say("a library the binaries need is missing (above).")
        return 1
    write_manifest(dest, repo, build, archs, nvcc)
    size = sum(p.lstat().st_size for p in dest.rglob("*") if p.is_file() or p.is_symlink())
    seconds = time.monotonic() - begin
    fits = size <= BUNDLE_LIMIT
    say(f"on the GPU box: copy {dest} there; in the folder that holds it, with $OUT the folder "
        "the box copies back, make this one call (docs/gpu-check.md):")
    for line in next_steps.device_command(dest.name):
        say(f"  {line}")
    say(f"bundle {dest}: {copied} binaries, {size / 2**20:.1f} MiB ({size} bytes; limit "
        f"{BUNDLE_LIMIT / 2**20:.0f} MiB) for {archs}, in {seconds:.0f} s"
        + ("" if fits else ": OVER THE LIMIT"))
    return 0 if fits else 1
