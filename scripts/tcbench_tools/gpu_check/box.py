"""box.txt: what the GPU box is, written before the check does anything else, so that even a
refused or killed check brings it back (docs/gpu-check.md §1): the driver, the GPU and its
clocks, persistence and compute mode, both library paths (the box's, and the one the steps run
with), where cuBLAS, CUPTI and nvperf resolve for a bundled binary, and the box's PyTorch with its
CUDA and cuBLAS. Queries only: nothing here changes a setting. Standard library only."""

from __future__ import annotations

import os
import platform
import re
import shutil
import sys
import time
from pathlib import Path

from tcbench_tools import process
from tcbench_tools.gpu_check import bundle

QUERY_TIMEOUT = 20.0  # seconds per nvidia-smi or ldconfig call
TORCH_TIMEOUT = 30.0  # `import torch` on a cold disk
BOX_LIMIT = 60.0  # seconds for the whole file, whatever hangs
# nvidia-smi --query-gpu fields, asked together (and one by one when a driver refuses one).
FIELDS = ("index,name,driver_version,pci.bus_id,persistence_mode,compute_mode,mig.mode.current,"
          "clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,"
          "enforced.power.limit,temperature.gpu")
LIBRARIES = re.compile(r"lib(cudart|cublas|cublasLt|cupti|nvperf_host|nvperf_target|nvJitLink|"
                       r"cuda|nvidia-ml)\.so")


_deadline = [0.0]  # time.monotonic() by which box.txt is done (write() sets it)


def _text(cmd: list[str], env: dict | None = None, timeout: float = QUERY_TIMEOUT) -> str:
    timeout = max(1.0, min(timeout, _deadline[0] - time.monotonic()))
    try:
        got = process.capture(cmd, timeout, env=env)
    except OSError as exc:
        return f"cannot run {cmd[0]}: {exc.strerror or exc}"
    text = got.output.decode("utf-8", errors="replace").strip()
    if got.code is None:
        return f"{text}\n(still running after {timeout:g} s: stopped)".strip()
    return text if got.code == 0 else f"{text}\n(exit {got.code})".strip()


def gpu_lines() -> list[str]:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return ["nvidia-smi: not found"]
    text = _text([smi, f"--query-gpu={FIELDS}", "--format=csv"])
    if not text.endswith(")") or "(exit " not in text.splitlines()[-1]:  # answered, or hung
        return ["nvidia-smi --query-gpu:", *(f"  {ln}" for ln in text.splitlines())]
    lines = ["nvidia-smi --query-gpu (field by field; the driver refused them together):"]
    for field in FIELDS.split(","):
        one = _text([smi, f"--query-gpu={field}", "--format=csv,noheader"])
        lines.append(f"  {field}: {' | '.join(one.splitlines())}")
    return lines


def library_lines(root: Path, steps_env: dict) -> list[str]:
    """Where a bundled CUDA binary's libraries resolve with the steps' library path (ldd), and
    what the loader cache holds."""
    lines = []
    probe = next((root / "bin" / name for name in ("bench_tensor_peak", "bench_tensor_util")
                  if (root / "bin" / name).is_file()), None)
    if probe is None:
        binaries = sorted((root / "bin").glob("bench_*")) if (root / "bin").is_dir() else []
        probe = binaries[0] if binaries else None
    if probe is not None and shutil.which("ldd"):
        lines.append(f"ldd {probe.name} (the steps' LD_LIBRARY_PATH):")
        deps = bundle.dependencies(probe, steps_env)
        lines += [f"  {name} => {where}" for name, where in deps if LIBRARIES.match(name)] or \
            ["  (ldd printed nothing)"]
    ldconfig = shutil.which("ldconfig") or ("/sbin/ldconfig" if Path("/sbin/ldconfig").is_file()
                                            else None)
    if ldconfig:
        cache = [ln.strip() for ln in _text([ldconfig, "-p"]).splitlines()
                 if LIBRARIES.search(ln)]
        lines.append("ldconfig -p (CUDA libraries in the loader cache):")
        lines += [f"  {ln}" for ln in cache[:40]] or ["  (none)"]
    return lines


def torch_lines(python: str, box_env: dict) -> list[str]:
    """The box's PyTorch as the torch step will run it (the box's own environment)."""
    code = ("import importlib.metadata as m\n"
            "import torch\n"
            "wheel = None\n"
            "for n in ('nvidia-cublas', 'nvidia-cublas-cu13', 'nvidia-cublas-cu12'):\n"
            "    try:\n"
            "        wheel = n + ' ' + m.version(n)\n"
            "        break\n"
            "    except m.PackageNotFoundError:\n"
            "        pass\n"
            "print('torch', torch.__version__, 'CUDA', torch.version.cuda,\n"
            "      'cuBLAS wheel', wheel)\n")
    text = _text([python, "-c", code], env=box_env, timeout=TORCH_TIMEOUT)
    return [f"torch ({python}): " + " | ".join(text.splitlines()[-3:])]


def write(path: Path, root: Path, steps_env: dict, box_env: dict, torch_python: str,
          where_from: str) -> str | None:
    """Writes box.txt at `path` (atomically, in at most about BOX_LIMIT s); returns why it
    could not, or None."""
    _deadline[0] = time.monotonic() + BOX_LIMIT
    lines = ["# box.txt: the GPU box as gpu_check found it before any step (docs/gpu-check.md)",
             f"date_utc: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
             f"check: {where_from}",
             f"host: {platform.node()} {platform.platform()}",
             f"python: {sys.executable} {platform.python_version()}",
             f"glibc: {os.confstr('CS_GNU_LIBC_VERSION') if hasattr(os, 'confstr') else '?'}",
             f"LD_LIBRARY_PATH (the box's): {box_env.get('LD_LIBRARY_PATH', '(unset)')}",
             f"LD_LIBRARY_PATH (the steps'): {steps_env.get('LD_LIBRARY_PATH', '(unset)')}",
             f"CUDA_HOME: {box_env.get('CUDA_HOME', '(unset)')}; nvcc: "
             f"{shutil.which('nvcc') or '(not on PATH)'}",
             f"CUDA_VISIBLE_DEVICES: {box_env.get('CUDA_VISIBLE_DEVICES', '(unset)')}"]
    lines += gpu_lines()
    lines += library_lines(root, steps_env)
    lines += torch_lines(torch_python, box_env)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text("\n".join(lines) + "\n", errors="replace")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        return f"cannot write {path}: {exc.strerror or exc}"
    return None
