"""The command line of the GPU check (scripts/gpu_check.sh hands over to it).

    gpu_check.sh [OUTDIR] [--archive FILE] [--tier 1|2|3]   the check (docs/gpu-check.md)
    gpu_check.sh --plan [BIN_DIR] [--tier 1|2|3]            its steps and predicted seconds
    gpu_check.sh --bundle [DIR] [--arch 90a]                make a bundle (build machine)

Variables: TCBENCH_CHECK_ARCHIVE (--archive), TCBENCH_CHECK_TIER (--tier),
TCBENCH_CHECK_BUDGET_S (default 450), TCBENCH_STEP_TIMEOUT_S (the most one step may take,
default 180), TCBENCH_TORCH_PYTHON (the Python with PyTorch, default python3), TCBENCH_PRESET (a
source tree's build, default release) and TCBENCH_BUILD_TIMEOUT_S (its limit, default 3600);
TCBENCH_BUNDLE_ARCHS, TCBENCH_BUNDLE_BUILD_DIR, TCBENCH_BUNDLE_JOBS for --bundle.

Exit codes: 0 everything passed; 1 a test, a benchmark or a step failed (timeout, crash), or
the archive could not be written (FAILED); 2 usage, an OUTDIR that cannot be created or is
someone else's, an archive that cannot be written or would overwrite another output, an
incomplete bundle or a box that cannot run it (REFUSED, before any GPU step); 3 nothing failed
but a step of the tiers asked for did not run: the budget, or the GPU gone mid-check
(INCOMPLETE: never a pass); 77 no GPU (and nothing failed or measured); 128 + N interrupted by
signal N.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from tcbench_tools.arguments import ascii_int
from tcbench_tools.gpu_check import bundle, run
from tcbench_tools.printable import printable

REPO = Path(__file__).resolve().parents[3]  # scripts/tcbench_tools/gpu_check -> the tree
CLOCK_POLICY_REFUSAL = (
    "--clock-policy {value} is refused: the check measures the clocks the driver sets and never "
    "changes a GPU setting (clocks locked on a borrowed box would outlive a killed check); lock "
    "clocks with a benchmark binary's own --clock-policy on a box you own.")


class Usage(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one sentence and exit 2, not argparse's usage block
        raise Usage(message)


def parser() -> Parser:
    p = Parser(prog="gpu_check.sh", add_help=True,
               description="The GPU-run check: tier 1 (the five answers), tier 2 (device tests), "
                           "tier 3 (the rest of the quick suite). See docs/gpu-check.md.")
    p.add_argument("outdir", nargs="?", type=Path,
                   help="the output folder (default results/gpu-check-<stamp>/); with --bundle, "
                        "the bundle folder (default build/gpu-check-bundle); with --plan, the "
                        "folder of the binaries (default: the bundle's, or the newest build's)")
    p.add_argument("--archive",
                   help="a .tar.gz of OUTDIR rewritten after every step, summary.txt and box.txt "
                        "beside it (TCBENCH_CHECK_ARCHIVE)")
    p.add_argument("--tier", default=os.environ.get("TCBENCH_CHECK_TIER", "3"),
                   help="stop after this tier: 1, 2 or 3 (TCBENCH_CHECK_TIER; default 3)")
    p.add_argument("--plan", action="store_true",
                   help="print the steps and their predicted seconds and exit (no GPU needed)")
    p.add_argument("--markdown", action="store_true",
                   help="with --plan: the figures README.md and docs/gpu-check.md show")
    p.add_argument("--clock-policy", default="as-is",
                   help="as-is only: the check never changes a GPU setting")
    p.add_argument("--bundle", action="store_true",
                   help="make a bundle in OUTDIR for a GPU box (on a build machine)")
    p.add_argument("--arch", help="--bundle: CUDA architectures, e.g. 90a (default: the visible "
                                  "GPU's, else 90a; TCBENCH_BUNDLE_ARCHS)")
    return p


def seconds(name: str, default: str) -> float:
    value = os.environ.get(name, default)
    number = ascii_int(value)  # "²" passed str.isdigit() and then int() raised (issue 34)
    if number is None or number < 1:
        raise Usage(f"{name} must be a whole number of seconds (as TCBENCH_CHECK_BUDGET_S and "
                    f"TCBENCH_STEP_TIMEOUT_S must), got '{printable(value)}'")
    return float(number)


def main(argv: list[str]) -> int:
    try:
        args = parser().parse_args(argv)
        if args.clock_policy.replace("_", "-") != "as-is":
            raise Usage(CLOCK_POLICY_REFUSAL.format(value=args.clock_policy).rstrip("."))
        if args.bundle:
            if args.plan or args.archive is not None or args.markdown:
                raise Usage("--bundle takes only a folder and --arch")
            return bundle.make(REPO, args.outdir, args.arch)
        if args.arch:
            raise Usage("--arch is for --bundle")
        if args.tier not in ("1", "2", "3"):
            raise Usage(f"--tier must be 1, 2 or 3, got '{args.tier}'")
        tier = int(args.tier)
        if args.markdown and not args.plan:
            raise Usage("--markdown is for --plan")
        if args.plan:
            return run.plan_only(REPO, tier, args.outdir, args.markdown)
        archive = args.archive if args.archive is not None else \
            os.environ.get("TCBENCH_CHECK_ARCHIVE")
        if archive is not None and not archive.strip():
            raise Usage("the archive's name is empty (--archive or TCBENCH_CHECK_ARCHIVE set but "
                        "empty): give a file name such as $OUT/gpu-check.tgz, or leave both unset")
        budget = seconds("TCBENCH_CHECK_BUDGET_S", "450")
        step_cap = seconds("TCBENCH_STEP_TIMEOUT_S", "180")
        build_limit = seconds("TCBENCH_BUILD_TIMEOUT_S", "3600")
    except Usage as exc:
        print(f"gpu_check: {exc}.", file=sys.stderr)
        return 2
    out = args.outdir or REPO / "results" / f"gpu-check-{time.strftime('%Y%m%d-%H%M%S')}"
    archive = Path(archive).absolute() if archive is not None else None
    opts = run.Options(out=out.absolute(), archive=archive,
                       tier=tier, budget=budget, step_cap=step_cap,
                       torch_python=os.environ.get("TCBENCH_TORCH_PYTHON", "python3"),
                       preset=os.environ.get("TCBENCH_PRESET", "release"), build_limit=build_limit)
    return run.Check(opts, REPO).run()
