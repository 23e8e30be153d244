#!/usr/bin/env python3
"""The tables at the end of scripts/gpu_check.sh's summary.txt, from what the check left in OUT.

  gpu_check_summary.py OUT

prints, from OUT/results/bench_*.json (and, for a binary cut short, OUT/plan/ and OUT/logs/):
  - per topic: benchmarks run, passed verification (they ran: every benchmark is checked against
    a higher-precision reference before it is timed), skipped (with the reasons) and failed;
  - tcbench's cuBLASLt against torch.matmul (OUT/torch/ratio.json);
  - every tensor-peak kernel's TFLOP/s and % of the datasheet figure;
  - the SM clock and power during the heaviest step: the step with the highest median power
    among those with at least 2 samples (OUT/steps.tsv, OUT/gpu-samples.csv).
Only the standard library and tcbench_tools.results: it runs with the GPU box's own Python.
A missing or unreadable input is a line in the output, never a traceback. Exit 0, or 2 when OUT
is not a folder.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tcbench_tools.errors import InputError  # noqa: E402
from tcbench_tools.results import load_file  # noqa: E402

MAX_LISTED = 8  # failures and skip reasons shown per table


def finished_in_log(out: Path, binary: str) -> tuple[int, int] | None:
    """(finished, planned) for a binary whose JSON is unusable: its planned names (plan/) that
    its console log already reports; None without a plan."""
    plan = out / "plan" / f"{binary}.txt"
    try:
        names = {n.strip().removesuffix("/manual_time") for n in plan.read_text().splitlines()
                 if "/" in n}
        log = (out / "logs" / f"{binary}.log").read_text(errors="replace")
    except OSError:
        return None
    seen = {line.split(" ", 1)[0].split("/manual_time", 1)[0] for line in log.splitlines()}
    return len(names & seen), len(names)


def topic_table(out: Path) -> list[str]:
    lines = ["-- per topic (quick suite): run / passed verification / skipped / failed"]
    rows, skips, failures = [], Counter(), []
    binaries = sorted({p.stem for p in (out / "plan").glob("bench_*.txt")} |
                      {p.stem for p in (out / "results").glob("bench_*.json")})
    for binary in binaries:
        topic = binary.removeprefix("bench_")
        path = out / "results" / f"{binary}.json"
        rs = None
        if path.is_file() and path.stat().st_size > 0:
            try:
                rs = load_file(path)
            except InputError as exc:
                why = f"its JSON is unusable ({str(exc)[:80]})"
            else:
                why = ""
        else:
            why = "no results"
        if rs is None:
            progress = finished_in_log(out, binary)
            if progress and (out / "logs" / f"{binary}.log").is_file():
                why += f"; {progress[0]} of {progress[1]} benchmarks had finished (its log)"
            rows.append((topic, "-", "-", "-", "-", why))
            continue
        benches = rs.benchmarks.values()
        ok = sum(1 for b in benches if b.ok)
        skipped = [b for b in benches if b.skipped]
        failed = [b for b in benches if b.failed]
        skips.update(f"{topic}: {b.skip_reason}" for b in skipped)
        failures += [(name, b.error) for name, b in rs.benchmarks.items() if b.failed]
        rows.append((topic, str(len(rs.benchmarks)), str(ok), str(len(skipped)),
                     str(len(failed)), ""))
    if not rows:
        return lines + ["   (no benchmark binary has run yet)"]
    lines.append(f"   {'topic':<16} {'run':>5} {'verified':>9} {'skipped':>8} {'failed':>7}")
    for topic, run, ok, skipped, failed, why in rows:
        lines.append(f"   {topic:<16} {run:>5} {ok:>9} {skipped:>8} {failed:>7}  {why}".rstrip())
    for reason, n in skips.most_common(MAX_LISTED):
        lines.append(f"   skipped ({n}): {reason}")
    if len(skips) > MAX_LISTED:
        lines.append(f"   ... and {len(skips) - MAX_LISTED} more skip reasons")
    for name, error in failures[:MAX_LISTED]:
        lines.append(f"   FAILED {name}: {error}")
    if len(failures) > MAX_LISTED:
        lines.append(f"   ... and {len(failures) - MAX_LISTED} more failures")
    return lines


def torch_table(out: Path) -> list[str]:
    path = out / "torch" / "ratio.json"
    if not path.is_file():
        return ["-- cuBLASLt vs torch.matmul: not measured (see the torch steps above)"]
    try:
        doc = json.loads(path.read_text())
        rows = doc["rows"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"-- cuBLASLt vs torch.matmul: {path} is unreadable ({exc})"]
    size = doc.get("size", "?")
    lines = [f"-- cuBLASLt vs torch.matmul at {size}^3 (same run; TFLOP/s; target >= 0.99x):",
             f"   {'':<6} {'torch':>8} {'tcbench':>8} {'ratio':>8}"]

    def rate(value: object) -> str:
        return f"{value:.1f}" if isinstance(value, (int, float)) else "-"

    for r in rows:
        ratio = r.get("ratio")
        lines.append(f"   {r.get('precision', '?'):<6} {rate(r.get('torch_tflops')):>8} "
                     f"{rate(r.get('tcbench_tflops')):>8} "
                     f"{'-' if ratio is None else f'{ratio:.3f}x':>8}  {r.get('verdict', '')}")
    return lines


def peak_table(out: Path) -> list[str]:
    path = out / "results" / "bench_tensor_peak.json"
    head = "-- tensor peaks (% of the datasheet figure; without one, of the max-clock model):"
    if not path.is_file():
        return [head, "   not measured (see bench_tensor_peak above)"]
    try:
        rs = load_file(path)
    except InputError as exc:
        return [head, f"   {path.name} is unusable: {exc}"]
    lines = [head]
    for name, b in sorted(rs.benchmarks.items()):
        if not b.ok:
            lines.append(f"   {name:<44} {'skipped: ' + b.skip_reason if b.skipped else b.error}")
            continue
        metric = b.throughput_metric()
        rate = b.sample(metric) if metric else None
        pct = b.sample("pct_of_datasheet")
        basis = "datasheet"
        if pct is None:
            pct, basis = b.sample("pct_of_max_clock_model"), "max-clock model"
        mhz = b.sample("clock_mhz_measured")
        share = ("(no % of peak: no datasheet or model figure)" if pct is None
                 else f"{pct.center:5.1f} % of the {basis}")
        lines.append(f"   {name:<44} "
                     f"{'-' if rate is None else f'{rate.center:8.1f}'} {metric or '':<6} "
                     f"{share}"
                     f"{'' if mhz is None else f', SM clock {mhz.center:.0f} MHz in-kernel'}")
    return lines


def numbers(text: str) -> list[float] | None:
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        return None  # a header, "[N/A]" or a partial line


def heaviest_step(out: Path) -> list[str]:
    head = "-- GPU during the heaviest step (nvidia-smi once a second):"
    try:
        samples = [v for v in map(numbers, (out / "gpu-samples.csv").read_text().splitlines())
                   if v is not None and len(v) >= 3]
        steps = [line.split("\t") for line in (out / "steps.tsv").read_text().splitlines()]
    except OSError:
        return [head, "   no samples (no nvidia-smi, or no step has finished)"]
    best = None
    for step in steps:
        if len(step) != 3:
            continue
        try:
            begin, end = float(step[1]), float(step[2])
        except ValueError:
            continue
        inside = [s for s in samples if begin <= s[0] <= end]
        if len(inside) < 2:
            continue
        power = statistics.median(s[2] for s in inside)
        if best is None or power > best[0]:
            best = (power, step[0], inside)
    if best is None:
        return [head, "   no step long enough to sample (2 samples or more)"]
    power, name, inside = best
    clocks = [s[1] for s in inside]
    limit = inside[-1][3] if len(inside[-1]) > 3 else None
    return [head, f"   {name}: SM clock median {statistics.median(clocks):.0f} MHz "
                  f"(min {min(clocks):.0f}, max {max(clocks):.0f}), power median {power:.0f} W "
                  f"(max {max(s[2] for s in inside):.0f} W"
                  f"{'' if limit is None else f', limit {limit:.0f} W'}), {len(inside)} samples"]


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: gpu_check_summary.py OUT (the check's output folder)", file=sys.stderr)
        return 2
    out = Path(argv[0])
    for part in (topic_table, torch_table, peak_table, heaviest_step):
        print("\n".join(part(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
