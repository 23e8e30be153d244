"""What a run without a GPU says last: how to get the GPU halves, with the one command for the
user's own GPU box and for a borrowed one (docs/gpu-check.md), and how long the check takes by its
own plan (gpu_check's cost model, ``gpu_check.sh --plan``): never a number written here.

The plan needs each benchmark binary's quick list. A machine without a GPU built only the host
studies, so the lists come from the newest build that has the binaries, else from the lists the
repository records for the check's tests (``QUICK_LISTS``, which test_gpu_check_plan holds to the
binaries); without either, the lines say where the plan is printed instead. Standard library only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

GUIDE = "docs/gpu-check.md"
QUICK_LISTS = Path("data") / "gpu_check" / "quick_lists.json"
BUNDLE = "build/gpu-check-bundle"
BUNDLE_ARCH = "90a"  # gpu_check's default family: H100/H200 (docs/gpu-check.md §1)


@dataclass(frozen=True)
class Planned:
    gpu: str  # the GPU the cost model plans for
    tier1: float  # seconds: the five answers first
    quick: float  # seconds: the quick suite's benchmarks (tiers 1 and 3)
    whole: float | None  # seconds: every step, where the device tests could be listed too
    lists: str  # where the benchmark lists came from


def _built_bin_dir(repo: Path) -> Path | None:
    built = sorted((p.parent for p in repo.glob("build/*/bin/bench_*")),
                   key=lambda d: d.stat().st_mtime, reverse=True)
    return built[0] if built else None


def plan(repo: Path) -> Planned | None:
    """The check's plan for this checkout, or None when it cannot be made here."""
    try:
        from tcbench_tools.gpu_check import cost
        from tcbench_tools.gpu_check import plan as check_plan
    except ImportError:  # an older checkout, or a copy of the tools without gpu_check
        return None
    model = cost.Model()
    recorded_path = repo / QUICK_LISTS
    recorded = None
    if recorded_path.is_file():
        try:
            doc = json.loads(recorded_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = None
        if isinstance(doc, dict) and all(isinstance(v, list) for v in doc.values()):
            recorded = {str(k): [str(n) for n in v] for k, v in doc.items()}
    bin_dir = _built_bin_dir(repo)
    if recorded is not None:  # fast and the same everywhere: no binary is started
        made = check_plan.make_plan(repo / "build" / "no-binaries", model, device_tests=False,
                                    recorded=recorded)
        lists = f"the quick lists recorded in {QUICK_LISTS.as_posix()}"
        whole = None
    elif bin_dir is not None:
        made = check_plan.make_plan(bin_dir, model,
                                    device_tests=any(bin_dir.glob("device_*")))
        lists, whole = f"the binaries in {bin_dir}", made.predicted()
    else:
        return None
    quick = [s for s in made.steps if s.kind == "bench" and s.tier in (1, 3)]
    return Planned(model.gpu.name, made.predicted(made.tier(1)), made.predicted(quick), whole,
                   lists)


def lines(repo: Path) -> list[str]:
    """The closing lines of a run without a GPU (and of its answers.md/html)."""
    out = [f"To measure the GPU halves ({GUIDE}):",
           "  on your own GPU box:  scripts/gpu_check.sh  (builds the release preset and runs "
           "every test first)",
           f"  on a borrowed one:    scripts/gpu_check.sh --bundle {BUNDLE} --arch "
           f"{BUNDLE_ARCH}  here ({BUNDLE_ARCH}: H100/H200; the box's GPU family),",
           "                        then gpu-check-bundle/scripts/gpu_check.sh OUTDIR  on the box"]
    try:
        planned = plan(repo)
    except Exception as exc:  # noqa: BLE001 - a hint must never fail the run it ends
        planned = None
        out.append(f"  how long: `scripts/gpu_check.sh --plan` prints the check's plan (it could "
                   f"not be made here: {type(exc).__name__})")
    if planned is not None:
        whole = f", every step {planned.whole:.0f} s" if planned.whole is not None else ""
        gpu = planned.gpu.removesuffix(" (model)")
        out.append(f"  how long: tier 1 (the five answers) {planned.tier1:.0f} s of GPU time, the "
                   f"quick suite {planned.quick:.0f} s{whole}, by the check's plan (its cost "
                   f"model for an {gpu}: a prediction; scripts/gpu_check.sh --plan)")
    elif len(out) == 4:
        out.append("  how long: `scripts/gpu_check.sh --plan` prints the check's plan once the "
                   "benchmark binaries are built (or from a bundle)")
    return out
