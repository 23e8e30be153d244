#!/usr/bin/env python3
"""Disassembles built CUDA code and checks which instructions each kernel uses.

Proves without a GPU that tensor-core kernels compile to tensor-core instructions (HMMA, IMMA,
HGMMA, QGMMA) and that CUDA-core kernels do not, for every architecture the build targets.
Exit codes: 0 pass, 1 a rule failed, 77 the disassembler is not available (skipped).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SKIP = 77


def find_cuobjdump(hint: str) -> str | None:
    if hint and not hint.endswith("NOTFOUND") and Path(hint).is_file():
        return hint
    here = Path(__file__).resolve().parents[2]
    for candidate in sorted(here.glob(".venv/lib/python3*/site-packages/nvidia/cu*/bin/cuobjdump")):
        return str(candidate)
    return shutil.which("cuobjdump")


def wanted_archs(spec: str) -> list[str]:
    """'75-real;90a-real;120-virtual' -> ['sm_75', 'sm_90a'] (PTX-only entries have no SASS)."""
    archs = []
    for entry in filter(None, spec.split(";")):
        if entry.endswith("-virtual") or entry in ("native", "all", "all-major"):
            continue
        archs.append("sm_" + entry.removesuffix("-real"))
    return archs


def run(cmd: list[str], env: dict) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"check_sass: '{' '.join(cmd)}' failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def kernels_in(sass: str) -> dict[str, str]:
    """Splits cuobjdump -sass output into {mangled kernel name: its SASS text}."""
    parts = re.split(r"^\s*Function : (\S+)\s*$", sass, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def sm_number(arch: str) -> int:
    return int(re.match(r"sm_(\d+)", arch).group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cuobjdump", default="")
    ap.add_argument("--archs", required=True, help="CMAKE_CUDA_ARCHITECTURES of the build")
    ap.add_argument("--rules", required=True, type=Path)
    ap.add_argument("binaries", nargs="+", type=Path)
    args = ap.parse_args()

    tool = find_cuobjdump(args.cuobjdump)
    if not tool:
        print("check_sass: skipped: cuobjdump not found (scripts/tcbench test installs it from "
              "PyPI's nvidia-cuda-cuobjdump into .venv)")
        return SKIP
    env = dict(os.environ)
    # cuobjdump -sass runs nvdisasm, which the nvidia-cuda-nvdisasm wheel puts beside it.
    env["PATH"] = str(Path(tool).parent) + os.pathsep + env.get("PATH", "")
    rules = json.loads(args.rules.read_text())["rules"]

    wanted = wanted_archs(args.archs)
    failures, checks, checked_archs = [], 0, set()
    for binary in args.binaries:
        listing = run([tool, "-lelf", str(binary)], env)
        present = set(re.findall(r"\.(sm_\d+[af]?)\.cubin", listing))
        # "native" builds name no architecture: check every one the binary embeds.
        archs = wanted or sorted(present)
        checked_archs.update(archs)
        for arch in archs:
            if arch not in present:
                failures.append(f"{binary.name}: no {arch} code (embedded: {sorted(present)})")
                continue
            kernels = kernels_in(run([tool, "-sass", "-arch", arch, str(binary)], env))
            for rule in rules:
                if sm_number(arch) < rule["min_sm"]:
                    continue
                if "archs" in rule and arch not in rule["archs"]:  # arch-specific rules
                    continue
                matches = {k: v for k, v in kernels.items() if rule["kernel"] in k}
                if not matches:
                    failures.append(f"{binary.name} {arch}: no kernel matching '{rule['kernel']}'")
                    continue
                for name, text in matches.items():
                    opcodes = set(re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", text))
                    for op in rule["must"]:
                        checks += 1
                        if not any(o == op or o.startswith(op) for o in opcodes):
                            failures.append(f"{binary.name} {arch} {rule['kernel']}: no {op}")
                    for op in rule["must_not"]:
                        checks += 1
                        if any(o == op or o.startswith(op) for o in opcodes):
                            failures.append(f"{binary.name} {arch} {rule['kernel']}: contains {op}")
    for f in failures:
        print("FAIL:", f)
    if not checked_archs:
        print(f"check_sass: skipped: no SASS in the binaries for '{args.archs}'")
        return SKIP
    print(f"check_sass: {checks - len(failures)} of {checks} instruction checks passed over "
          f"{', '.join(sorted(checked_archs))}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
