#!/usr/bin/env python3
"""Disassembles built CUDA code and checks which instructions each kernel uses.

Proves without a GPU that tensor-core kernels compile to tensor-core instructions (HMMA, IMMA,
HGMMA, QGMMA) and that CUDA-core kernels do not, for every architecture the build targets; and
(--load-ccs) that every portable binary carries code that loads on every compute capability the
peak table knows. A rule may name "archs" (e.g. ["sm_90a"]) to apply there only; otherwise it
applies to every architecture from "min_sm" on.

Loop rules ("loops" in the rules file) count instructions in a kernel's hot loop: the loop (a
backward branch and its body) that holds the most tensor-core instructions. The loop must hold
a positive multiple of the tensor instructions one trip issues as the kernel's FLOP count
assumes (--peak-loops-from: tcbench_context --peak-loops), so an instruction that ptxas emulates
(FP8 mma.sync on sm_90: F2FP + HMMA + FADD) or folds (identical products computed once) fails,
and "per_trip_also" asks for other instructions per trip (wgmma.fence: WARPGROUP.ARRIVE) and
"operands" for an operand pattern on each counted instruction (a block-scaled tcgen05.mma reads
its scale factors from TMEM: UTCQMMA/UTCOMMA with a tmem[...] operand after idesc[...]). A loop
rule with "expect_fail" documents a known emulation: it passes while the count falls short and
fails the day it does not (then the instruction is native and its skip should go).
Exit codes: 0 pass, 1 a rule failed, 77 the disassembler is not available (skipped).
"""
import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

SKIP = 77


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


def instructions(sass: str) -> set[str]:
    """Opcodes with their modifiers ("FFMA", "LDS.128", "LDS.U.128", "HMMA.16816.F32") in a
    kernel's SASS. A rule entry is a regular expression matched at the start of one of them, so
    "HMMA" matches every HMMA form and "LDS(\\.U)?\\.128" the 128-bit shared load as Turing
    ("LDS.U.128") and later architectures ("LDS.128") print it."""
    return set(re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", sass))


# Tensor-core instruction families (Turing to Blackwell); the hot loop is the one holding most.
TENSOR_OPCODE = re.compile(r"(HMMA|IMMA|QMMA|OMMA|BMMA|HGMMA|IGMMA|QGMMA|BGMMA|UTC\w*MMA)(\.|$)")


def listing(sass: str) -> list[tuple[int, str, str, str]]:
    """(address, opcode with modifiers, operands, guard predicate or "") of every instruction of
    one kernel's SASS."""
    return [(int(addr, 16), op, rest, guard) for addr, guard, op, rest in re.findall(
        r"/\*([0-9a-f]{4,})\*/\s+(?:(@!?U?P\w+)\s+)?([A-Z][A-Z0-9_.x]*)([^;]*);", sass)]


def hot_loop(sass: str, with_operands: bool = False) -> list | None:
    """Opcodes of the loop body (from a backward branch's target to the branch) that holds the
    most tensor-core instructions ((opcode, operands) pairs with `with_operands`); None when no
    loop holds any. A span with an unconditional EXIT or RET in it is not a loop: its backward
    branch is the return of an out-of-line slow path (ptxas places the retry of a cluster barrier
    or an mbarrier wait after the kernel's EXIT and jumps back), reached only from outside."""
    code = listing(sass)
    best, best_count = None, 0
    for addr, op, rest, _ in code:
        target = re.search(r"0x([0-9a-f]+)", rest)
        if not op.startswith("BRA") or not target or int(target.group(1), 16) > addr:
            continue
        span = [(o, r, g) for a, o, r, g in code if int(target.group(1), 16) <= a <= addr]
        if any(o.startswith(("EXIT", "RET")) and not g for o, _, g in span):
            continue
        body = [(o, r) for o, r, _ in span]
        count = sum(1 for o, _ in body if TENSOR_OPCODE.match(o))
        if count > best_count:
            best, best_count = body, count
    if best is None or with_operands:
        return best
    return [o for o, _ in best]


def check_loop(rule: dict, per_trip: int, sass: str) -> str | None:
    """Why the hot loop of one kernel breaks the loop rule, or None when it holds. A rule's
    "operands" (a regular expression searched in each counted instruction's operands: tcgen05's
    scale factors in TMEM, `tmem[...]` after the instruction descriptor) must hold for every one
    of them."""
    pairs = hot_loop(sass, with_operands=True)
    if pairs is None:
        return "no loop holds a tensor-core instruction"
    body = [o for o, _ in pairs]
    counted = [r for o, r in pairs if re.fullmatch(rule["tensor"], o)]
    count = len(counted)
    if "operands" in rule:
        wrong = [r.strip() for r in counted if not re.search(rule["operands"], r)]
        if wrong:
            return (f"{len(wrong)} of the hot loop's {count} {rule['tensor']} lack operands "
                    f"matching {rule['operands']!r} (first: {wrong[0]})")
    others = sorted({o for o in body
                     if TENSOR_OPCODE.match(o) and not re.fullmatch(rule["tensor"], o)})
    if count < per_trip or count % per_trip:
        seen = f"; other tensor instructions there: {', '.join(others)}" if others else ""
        return (f"the hot loop holds {count} {rule['tensor']}, but one trip issues {per_trip} "
                f"as the FLOP count assumes (emulated or folded){seen}")
    trips = count // per_trip
    for op, per in rule.get("per_trip_also", {}).items():
        have = sum(1 for o in body if re.fullmatch(op, o))
        if have < per * trips:
            return f"the hot loop ({trips} trip(s)) holds {have} {op}, fewer than {per} per trip"
    return None


def applies(rule: dict, arch: str, portable_archs: set[str]) -> bool:
    only = rule.get("archs")
    if only is not None and arch not in only:
        return False
    if only is None and sm_number(arch) < rule["min_sm"]:
        return False
    # An arch only the arch-specific binaries have (sm_90a) holds only their kernels: there, only
    # rules that name the arch apply.
    return not (only is None and arch not in portable_archs)


def about_portable_code(rule: dict, arch: str, portable_archs: set[str],
                        specific_kernels: set[str]) -> bool:
    """Whether a rule that matches nothing at ARCH is about portable code that only the
    arch-specific binaries' cubins stand for there (so it does not apply): ARCH is not one of the
    portable binaries', and either one of the rule's archs is, or the rule names portable archs
    ("sm_100", not "sm_90a") and no arch-specific binary holds its kernel. The family-specific
    Blackwell build (cubins cuobjdump calls sm_100, sm_110, sm_120) brings archs a build may not
    target portably; a rule about an arch-specific kernel still fails when the kernel is gone."""
    if arch in portable_archs:
        return False
    only = rule.get("archs") or []
    if any(a in portable_archs for a in only):
        return True
    names_portable = any(not re.search(r"[af]$", a) for a in only)
    return names_portable and not any(rule["kernel"] in k for k in specific_kernels)


def sm_number(arch: str) -> int:
    return int(re.match(r"sm_(\d+)", arch).group(1))


def loads_on(cc: tuple[int, int], cubins: set[str], ptx: set[str]) -> bool:
    """Whether code with these cubins/PTX can run on compute capability cc (CUDA's rules):
    a portable sm_XY cubin runs on X.Z for Z >= Y; an sm_XYa/f cubin only on exactly X.Y (f: the
    same family, here taken as exactly X.Y too); PTX for compute_XY JIT-compiles for any
    cc >= XY."""
    major, minor = cc
    for c in cubins:
        m = re.match(r"sm_(\d+)(\d)([af]?)$", c)
        if not m:
            continue
        cmaj, cmin, suffix = int(m.group(1)), int(m.group(2)), m.group(3)
        if suffix and (cmaj, cmin) == cc:
            return True
        if not suffix and cmaj == major and cmin <= minor:
            return True
    for p in ptx:
        m = re.match(r"(?:sm|compute)_(\d+)(\d)[af]?$", p)
        if m and (int(m.group(1)), int(m.group(2))) <= cc and not p.endswith(("a", "f")):
            return True
    return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cuobjdump", default=os.environ.get("TCBENCH_CUOBJDUMP", ""),
                    help="the disassembler (default: $TCBENCH_CUOBJDUMP); CMake passes the one "
                         "tcbench_tools.build.find_cuobjdump() found")
    ap.add_argument("--archs", required=True, help="CMAKE_CUDA_ARCHITECTURES of the build")
    ap.add_argument("--rules", required=True, type=Path)
    ap.add_argument("--load-ccs", default="",
                    help="ELF rule: 'major.minor;...' (the peak table's compute capabilities): "
                         "every portable binary must have a cubin or PTX that loads on each")
    ap.add_argument("--load-ccs-from", default="",
                    help="a program that prints the --load-ccs list (tcbench_context "
                         "--compute-capabilities)")
    ap.add_argument("--arch-specific", nargs="*", type=Path, default=[],
                    help="binaries of arch-specific kernels (sm_90a): checked for their own "
                         "architectures only, exempt from the ELF rule (their launchers Skip)")
    ap.add_argument("--peak-loops-from", default="",
                    help="a program that prints, as JSON, the tensor instructions one loop trip "
                         "of each tensor-peak kernel issues (tcbench_context --peak-loops); "
                         "needed by the rules file's \"loops\"")
    ap.add_argument("binaries", nargs="+", type=Path)
    args = ap.parse_args()

    tool = args.cuobjdump
    if not tool or not Path(tool).is_file():
        print("check_sass: skipped: no cuobjdump (scripts/tcbench test installs PyPI's "
              "nvidia-cuda-cuobjdump into .venv and passes it as -DTCBENCH_CUOBJDUMP; or set "
              "TCBENCH_CUOBJDUMP)" + (f": {tool} is not a file" if tool else ""))
        return SKIP
    env = dict(os.environ)
    # cuobjdump -sass runs nvdisasm, which the nvidia-cuda-nvdisasm wheel puts beside it.
    env["PATH"] = str(Path(tool).parent) + os.pathsep + env.get("PATH", "")
    rule_file = json.loads(args.rules.read_text())
    rules, loop_rules = rule_file["rules"], rule_file.get("loops", [])
    per_trip_of: dict[str, int] = {}
    if loop_rules:
        if not args.peak_loops_from:
            sys.exit("check_sass: the rules have loop rules; give --peak-loops-from "
                     "(tcbench_context) so that each trip's instruction count comes from the code")
        per_trip_of = json.loads(run([args.peak_loops_from, "--peak-loops"], env))

    wanted = wanted_archs(args.archs)
    failures, checks, checked_archs = [], 0, set()
    kernels_by_arch: dict[str, dict[str, str]] = {}
    portable_archs: set[str] = set()  # archs of the portable binaries: rules without "archs"
    specific_kernels: set[str] = set()  # every kernel of the arch-specific binaries
    if args.load_ccs_from:
        args.load_ccs = run([args.load_ccs_from, "--compute-capabilities"], env).strip()
    load_ccs = [tuple(int(x) for x in cc.split("."))
                for cc in filter(None, args.load_ccs.split(";"))]
    for binary in [*args.binaries, *args.arch_specific]:
        specific = binary in args.arch_specific
        listing = run([tool, "-lelf", str(binary)], env)
        present = set(re.findall(r"\.(sm_\d+[af]?)\.cubin", listing))
        listing = run([tool, "-lptx", str(binary)], env)
        ptx = set(re.findall(r"\.((?:sm|compute)_\d+[af]?)\.ptx", listing))
        # "native" builds name no architecture: check every one the binary embeds.
        archs = sorted(present) if (specific or not wanted) else wanted
        for arch in archs:
            if arch not in present:
                failures.append(f"{binary.name}: no {arch} code (embedded: {sorted(present)})")
                continue
            checked_archs.add(arch)
            if not specific:
                portable_archs.add(arch)
            found = kernels_in(run([tool, "-sass", "-arch", arch, str(binary)], env))
            kernels_by_arch.setdefault(arch, {}).update(found)
            if specific:
                specific_kernels.update(found)
        if not specific:
            for cc in load_ccs:
                checks += 1
                if not loads_on(cc, present, ptx):
                    failures.append(f"{binary.name}: no cubin or PTX loads on compute capability "
                                    f"{cc[0]}.{cc[1]} (cubins {sorted(present)}, "
                                    f"PTX {sorted(ptx)})")
    expected_failures = []
    for arch, kernels in sorted(kernels_by_arch.items()):
        for rule in loop_rules:
            if not applies(rule, arch, portable_archs):
                continue
            matches = {k: v for k, v in kernels.items() if rule["kernel"] in k}
            if not matches and about_portable_code(rule, arch, portable_archs, specific_kernels):
                continue
            if rule["peak"] not in per_trip_of:
                failures.append(f"loop rule {rule['kernel']}: --peak-loops-from knows no "
                                f"'{rule['peak']}' (it has {sorted(per_trip_of)})")
                continue
            if not matches:
                failures.append(f"{arch}: no kernel matching '{rule['kernel']}'")
                continue
            for text in matches.values():
                checks += 1
                why = check_loop(rule, int(per_trip_of[rule["peak"]]), text)
                where = f"{arch} {rule['peak']} ({rule['kernel']})"
                if rule.get("expect_fail"):
                    if why:
                        expected_failures.append(
                            f"{where}: {why} (expected: {rule['expect_fail']})")
                    else:
                        failures.append(f"{where}: the loop rule was expected to fail "
                                        f"({rule['expect_fail']}) but holds: the instruction looks "
                                        "native now; revisit its skip and this rule")
                elif why:
                    failures.append(f"{where}: {why}")
        for rule in rules:
            if not applies(rule, arch, portable_archs):
                continue
            matches = {k: v for k, v in kernels.items() if rule["kernel"] in k}
            if not matches and about_portable_code(rule, arch, portable_archs, specific_kernels):
                continue
            if not matches:
                failures.append(f"{arch}: no kernel matching '{rule['kernel']}'")
                continue
            for name, text in matches.items():
                opcodes = instructions(text)
                for op in rule["must"]:
                    checks += 1
                    if not any(re.match(op, o) for o in opcodes):
                        failures.append(f"{arch} {rule['kernel']}: no {op}")
                for op in rule["must_not"]:
                    checks += 1
                    if any(re.match(op, o) for o in opcodes):
                        failures.append(f"{arch} {rule['kernel']}: contains {op}")
    for f in expected_failures:
        print("expected failure:", f)
    for f in failures:
        print("FAIL:", f)
    if not checked_archs:
        print(f"check_sass: skipped: no SASS in the binaries for '{args.archs}'")
        return SKIP
    print(f"check_sass: {checks - len(failures)} of {checks} instruction and loadability checks "
          f"passed over {', '.join(sorted(checked_archs))}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
