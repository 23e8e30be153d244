"""summary.txt: what the check did and found, rewritten (atomically) after every step.

    == tcbench gpu_check (<where from>) -> OUT
    -- plan: per tier, predicted seconds (cost.py's model, re-made after every step)
    -- steps: tier, planned and measured seconds, outcome, note
    -- tiers: each tier's time against its plan; a tier that could not finish, with what it left out
    -- rows that never ran
    -- per topic: run / passed verification / skipped / failed, the reasons
    -- cuBLASLt vs torch.matmul (with both cuBLAS versions)
    -- tensor peaks: % of the SMs x measured clock model first, then of the datasheet
    -- tier 1's rows with the SM clock and power of their own timed windows (burst or capped)
    -- power readings from windows under 1 s; the GPU during the heaviest step
    -- VERDICT (exit N), or "(check in progress ...)"

The tables read OUT/results/ (partial files too: results.load_file), OUT/torch/ratio.json,
OUT/steps.tsv and OUT/gpu-samples.csv; a missing or unreadable input is a line, never a
traceback. Standard library only.
"""

from __future__ import annotations

import json
import os
import statistics
from collections import Counter
from pathlib import Path

from tcbench_tools import partial, power, runfile, schema
from tcbench_tools.errors import InputError
from tcbench_tools.gpu_check.plan import Plan, Step
from tcbench_tools.results import Benchmark, load_file

MAX_LISTED = 8  # failures, skip reasons and never-ran rows shown per table
POWER_WINDOW_S = 1.0  # NVML averages power over 1 s on Ampere and newer (docs/gpu-check.md §10)


def step_line(s: Step) -> str:
    planned = f"{s.predicted:.0f}" if s.predicted else "-"
    took = f"{s.seconds:.0f}" if s.seconds is not None else "-"
    tier = {0: "-", 4: "c"}.get(s.tier, str(s.tier))
    return f"   {s.name:<38} {tier:>2} {planned:>5} {took:>5}  {s.status:<12} {s.note}".rstrip()


def tiers_lines(plan: Plan, stop_after: int) -> list[str]:
    lines = ["-- tiers (measured against planned seconds):"]
    for t in (1, 2, 3):
        steps = plan.tier(t)
        if not steps:
            continue
        ran = [s for s in steps if s.seconds is not None]
        took = sum(s.seconds for s in ran)
        left = [s.name for s in steps if s.status.startswith(("NOT STARTED", "CUT"))
                and not s.note.startswith("--tier")]
        if t > stop_after:
            state = f"not run (--tier {stop_after})"
        elif left:
            state = f"INCOMPLETE: left out {', '.join(left)}"
        elif all(s.done for s in steps):
            bad = [s for s in steps if s.status.split(" ")[0] in (
                "FAILED", "CRASHED", "KILLED", "TIMEOUT", "NO", "GARBAGE", "NOT")]
            state = f"done, {len(bad)} step(s) not ok" if bad else "done"
        else:
            state = "in progress"
        lines.append(f"   tier {t}: {state}; {took:.0f} s of {plan.predicted(steps):.0f} s "
                     "planned")
    return lines


def never_ran_lines(plan: Plan) -> list[str]:
    missing = [(s, n) for s in plan.steps for n in s.never_ran]
    if not missing:
        return []
    per = Counter(s.name for s, _ in missing)
    lines = [f"-- rows that never ran: {len(missing)} ("
             + ", ".join(f"{name} {n}" for name, n in per.items()) + ")"]
    lines += [f"   {s.name}: {n}" for s, n in missing[:MAX_LISTED]]
    if len(missing) > MAX_LISTED:
        lines.append(f"   ... and {len(missing) - MAX_LISTED} more (the plan/ listings name all)")
    return lines


def result_files(out: Path) -> dict[str, list[Path]]:
    """results/<binary>[.tN].json grouped by binary; once the check merged them, results.json
    under each binary it holds (topic_table keeps each binary's rows)."""
    found: dict[str, list[Path]] = {}
    for path in sorted((out / "results").glob("bench_*.json")):
        found.setdefault(path.name.split(".")[0], []).append(path)
    merged = out / "results" / runfile.MERGED
    try:
        binaries = runfile.context_list(load_file(merged).context, schema.RUN_BINARIES)
    except (InputError, OSError):
        binaries = []
    for binary in binaries:
        found.setdefault(binary, []).insert(0, merged)
    return found


def topic_table(out: Path) -> list[str]:
    lines = ["-- per topic (quick suite): run / passed verification / skipped / failed"]
    rows, skips, failures, counter_errors = [], Counter(), [], []
    for binary, paths in result_files(out).items():
        topic = binary.removeprefix("bench_")
        benches: dict[str, Benchmark] = {}
        notes = []
        for path in paths:
            try:
                rs = load_file(path)
            except InputError as exc:
                if partial.row_file(path).is_file() and partial.cut_short(path.read_text(
                        errors="replace")):
                    notes.append(f"{path.name}: cut short before its first benchmark finished")
                else:
                    why = str(exc).replace(str(path), path.name)
                    notes.append(f"{path.name} is unusable ({why[:100]})")
                continue
            benches.update({k: b for k, b in rs.benchmarks.items() if b.binary in (None, binary)})
            if rs.partial:
                notes.append(f"{path.name}: cut short, {len(rs.benchmarks)} rows kept")
        if not benches:
            rows.append((topic, "-", "-", "-", "-", "; ".join(notes) or "no results"))
            continue
        ok = [b for b in benches.values() if b.ok]
        skipped = [b for b in benches.values() if b.skipped]
        failed = [(n, b) for n, b in benches.items() if b.failed]
        skips.update(f"{topic}: {b.skip_reason}" for b in skipped)
        failures += [(n, b.error) for n, b in failed]
        counter_errors += [(n, b) for n, b in benches.items()
                           if b.ok and b.sample(schema.COUNTERS_ERROR) is not None]
        rows.append((topic, str(len(benches)), str(len(ok)), str(len(skipped)),
                     str(len(failed)), "; ".join(notes)))
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
    for name, b in counter_errors[:MAX_LISTED]:
        label = next((r.get("label", "") for r in b.iterations), "")
        note = label.partition("counters error: ")[2] or "see its label"
        lines.append(f"   COUNTERS FAILED {name} (timing kept): {note}")
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
             f"   cuBLAS: torch {doc.get('torch_cublas') or 'unknown'}; tcbench "
             f"{doc.get('tcbench_cublaslt') or 'unknown'}" + {
                 True: "",
                 False: " (not the same library: a ratio can be a library version, not the "
                        "harness)",
                 None: " (not known to be the same library: a ratio can be a library version)",
             }[doc.get("same_cublas")],
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
    head = ("-- tensor peaks (% of SMs x the measured clock x ops/clock, then % of the datasheet "
            "and the clock the datasheet implies):")
    paths = result_files(out).get("bench_tensor_peak", [])
    if not paths:
        return [head, "   not measured (see bench_tensor_peak above)"]
    benches: dict[str, Benchmark] = {}
    for path in paths:
        try:
            benches.update(load_file(path).benchmarks)
        except InputError as exc:
            return [head, f"   {path.name} is unusable: {exc}"]
    lines = [head]
    # Skips share their sentence (every tcgen05 row of a Hopper box says the same): one line per
    # sentence, with how many rows and the first of them, after the measured rows.
    skips: dict[str, list[str]] = {}
    for name, b in sorted(benches.items()):
        if b.skipped:
            skips.setdefault(b.skip_reason, []).append(name)
            continue
        if not b.ok:
            lines.append(f"   {name:<40} {b.error}")
            continue
        metric = b.throughput_metric()
        rate = b.sample(metric) if metric else None
        at_clock = b.sample(schema.PCT_OF_CLOCK_MODEL)
        sheet = b.sample(schema.PCT_OF_DATASHEET)
        mhz = b.sample(schema.CLOCK_MHZ_MEASURED)
        parts = [f"{rate.center:8.1f} {metric}" if rate else "       -"]
        parts.append(f"{at_clock.center:5.1f} % at {mhz.center:.0f} MHz" if at_clock and mhz
                     else "(no clock model)")
        if sheet:
            text = f"{sheet.center:5.1f} % of the datasheet"
            if at_clock and mhz and sheet.center > 0:
                # The datasheet's figure is SMs x f x ops/clock at the clock it assumes:
                # f = measured clock x (% at clock / % of datasheet).
                text += f" (which implies {mhz.center * at_clock.center / sheet.center:.0f} MHz)"
            parts.append(text)
        lines.append(f"   {name:<40} " + ", ".join(parts))
    for reason, names in skips.items():
        more = f" and {len(names) - 1} more" if len(names) > 1 else ""
        lines.append(f"   {names[0] + more:<40} skipped: {reason}")
    return lines


def context_number(context: dict, key: str) -> float | None:
    """A context value (a string) as a positive finite number, else None ("unknown", "none")."""
    try:
        value = float(context.get(key))
    except (TypeError, ValueError, OverflowError):
        return None
    return value if 0 < value < float("inf") else None


# A clock within this fraction of the GPU's maximum is its boost (burst) clock.
BOOST_FRACTION = 0.97


def clock_state(p: power.Power, max_mhz: float | None) -> str:
    """How one window's clock reads: power-capped, slowed by hardware or heat, at its boost
    clock, or below it without a reason NVML named."""
    if p.hard:
        return f"slowed ({', '.join(p.hard)})"
    if "sw_power_cap" in p.reasons:
        return "power-capped (sw_power_cap)"
    if p.clock_mhz is None or not max_mhz:
        return "clock not known"
    if p.clock_mhz >= BOOST_FRACTION * max_mhz:
        return "at boost"
    return "below boost" + (f" ({', '.join(p.limiting)})" if p.limiting else "")


def headline_table(out: Path, plan: Plan | None) -> list[str]:
    """Tier 1's rows with the SM clock and power NVML read in each row's own timed window, so
    that a burst reads as a burst and a power-capped steady state as that."""
    head = ("-- tier 1's rows: rate, then the SM clock and power NVML read in the row's own timed "
            "window (power-capped: NVML's sw_power_cap; at boost: within 3 % of the maximum "
            "clock):")
    names = [n for s in (plan.tier(1) if plan else []) for n in s.rows]
    if not names:
        return []
    found: dict[str, tuple[Benchmark, dict]] = {}
    for path in dict.fromkeys(p for paths in result_files(out).values() for p in paths):
        if ".t1." in path.name or path.name == runfile.MERGED:
            try:
                rs = load_file(path)
            except InputError:
                continue
            found.update({n: (b, rs.context) for n, b in rs.benchmarks.items()})
    lines, without = [head], 0
    for name in names:
        if name not in found:
            continue
        bench, context = found[name]
        if not bench.ok:
            continue
        p = power.of(bench, context)
        if p.clock_mhz is None and p.power_w is None:
            without += 1
            continue
        metric = bench.throughput_metric()
        rate = bench.sample(metric) if metric else None
        max_mhz = context_number(context, "max_sm_clock_mhz")
        limit = context_number(context, "power_limit_w")
        clock = (f"{p.clock_mhz:.0f} MHz" if p.clock_mhz is not None else "- MHz") + (
            f" of {max_mhz:.0f}" if max_mhz else "")
        watts = (f"{p.power_w:.0f} W" if p.power_w is not None else "- W") + (
            f" of {limit:.0f}" if limit else "")
        shown = f"{rate.center:8.1f} {metric}" if rate else "       -"
        lines.append(f"   {name:<58} {shown}, {clock}, {watts}: {clock_state(p, max_mhz)}")
    if without:
        lines.append(f"   ({without} row(s) report a time made of other windows, a training "
                     "run's or a sum of cached GEMMs: no clock or power of their own)")
    return lines if len(lines) > 1 else []


def power_note(out: Path) -> list[str]:
    """Rows whose power_w comes from a window shorter than NVML's 1 s averaging
    (docs/gpu-check.md §10)."""
    short, total = 0, 0
    for paths in result_files(out).values():
        for path in paths:
            try:
                rs = load_file(path)
            except InputError:
                continue
            for b in rs.benchmarks.values():
                power, n = b.sample(schema.POWER_W), b.sample(schema.SAMPLES)
                median = b.sample(schema.TIME_MEDIAN_US)
                if power is None or n is None or median is None:
                    continue
                total += 1
                if n.center * median.center * 1e-6 < POWER_WINDOW_S:
                    short += 1
    if not short:
        return []
    return [(f"-- power: {short} of {total} rows with power_w were timed in windows under "
            f"{POWER_WINDOW_S:g} s; NVML averages power over 1 s on Ampere and newer, so those "
            "readings lag their window (the heaviest step's 1 Hz samples below are the better "
            "figure; docs/gpu-check.md §10)")]


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
    return [head, (f"   {name}: SM clock median {statistics.median(clocks):.0f} MHz "
                  f"(min {min(clocks):.0f}, max {max(clocks):.0f}), power median {power:.0f} W "
                  f"(max {max(s[2] for s in inside):.0f} W"
                  f"{'' if limit is None else f', limit {limit:.0f} W'}), {len(inside)} samples")]


def tables(out: Path, plan: Plan | None = None) -> list[str]:
    lines = []
    for part in (topic_table, torch_table, peak_table, lambda o: headline_table(o, plan),
                 power_note, heaviest_step):
        try:
            lines += part(out)
        except Exception as exc:  # noqa: BLE001 - a table must never stop the summary
            lines.append(f"-- ({part.__name__} could not be made: {type(exc).__name__}: {exc})")
    return lines


def write(path: Path, text: str) -> None:
    """Atomically: a reader (or a kill) sees the old summary or the new one, never half."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
