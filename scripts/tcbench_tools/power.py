"""Clocks, power and throttling beside every number: what the harness's NVML sampler wrote, read
and judged one way for ``compare``, ``report``, ``run``'s summary and ``run --device all``.

While a benchmark's samples run, a background thread reads the GPU every 10 ms through NVML
(common/runtime/include/tcbench/power.hpp) and the benchmark gets these counters (schema.hpp):

* ``sm_clock_mhz``: the median SM clock; ``power_w``: the board power (the energy counter's delta
  over the window, else the mean of the power readings); ``energy_j``: energy of one run;
* ``tflops_per_w`` / ``tops_per_w`` / ``gbps_per_w``: the rate per watt;
  ``pct_of_peak_at_clock``: the rate against SMs x the measured clock x ops/clock;
* ``temp_c_max``: the hottest reading; ``throttle``: the union of the clock-event reasons, a bit
  mask whose names the result file's context carries (``throttle_reasons``, the same table as
  ``tcbench_context --schema``).

A result without these counters (no NVML, an older tcbench, plain Google Benchmark output) is
read as "not known", never as "not throttled". Standard library only: ``run`` and gpu_check's
summary import this module.

``python3 -m tcbench_tools.power RESULTS`` prints the one-line clock and power summary of the
heaviest benchmark (the one that drew the most power), for scripts such as gpu_check.
"""

from __future__ import annotations

import math
import statistics
import sys
from dataclasses import dataclass, field

from tcbench_tools import schema
from tcbench_tools.results import Benchmark, ResultSet, number
from tcbench_tools.schema import (
    ENERGY_J,
    GBPS,
    GBPS_PER_W,
    PCT_OF_PEAK_AT_CLOCK,
    POWER_W,
    SM_CLOCK_MHZ,
    TEMP_C_MAX,
    TFLOPS,
    TFLOPS_PER_W,
    THROTTLE,
    TOPS,
    TOPS_PER_W,
)

# The rate counter each efficiency counter divides (results.THROUGHPUT_UNITS' keys).
EFFICIENCY = {TFLOPS: TFLOPS_PER_W, TOPS: TOPS_PER_W, GBPS: GBPS_PER_W}
EFFICIENCY_UNITS = {TFLOPS_PER_W: "TFLOP/s/W", TOPS_PER_W: "TOP/s/W", GBPS_PER_W: "GB/s/W"}

# The clock-event reasons and their bits, as the shipped schema states them (schema.hpp's
# kThrottleReasons, whose bits the C++ checks against nvml.h). A result file's context key
# ``throttle_reasons`` says the same for the binary that wrote it and wins where present
# (tests/scripts/test_power.py checks both against nvidia-ml-py's constants).
REASONS = tuple((name, bit) for name, bit, _ in schema.shipped().throttle_reasons)
# The hardware (or, for temperature, the driver) cut the clock: a timing under these says more
# about the box than about the code, so the gate calls it not comparable.
HARD = ("hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake")
# Any reason the clock was held below its maximum while work ran: marked in the report. Idle
# and the application-clock setting describe no limit on the work.
LIMITING = ("sw_power_cap", "hw_slowdown", "sync_boost", "sw_thermal", "hw_thermal",
            "hw_power_brake", "display_clock_setting", "board_limit", "reliability")
# A candidate whose clock is more than this far below the baseline's is not comparable.
CLOCK_TOLERANCE = 0.05


def reason_table(context: dict | None = None) -> dict[str, int]:
    """{name: bit}: the file's own ``throttle_reasons`` ("gpu_idle:0x1,...") when it has a
    readable one, else this version's table."""
    raw = (context or {}).get("throttle_reasons")
    if isinstance(raw, str) and raw:
        table = {}
        for item in raw.split(","):
            name, _, bit = item.partition(":")
            try:
                value = int(bit, 0)
            except ValueError:
                break
            if not name or value <= 0 or value & (value - 1):
                break
            table[name] = value
        else:
            return table
    return dict(REASONS)


def decode(mask: int, table: dict[str, int] | None = None) -> list[str]:
    """The reason names of a mask, in bit order; an unnamed bit reads ``bit_<n>``."""
    table = table or dict(REASONS)
    by_bit = {bit: name for name, bit in table.items()}
    return [by_bit.get(1 << b, f"bit_{b}") for b in range(64) if mask >> b & 1]


def _mask(raw: object) -> int | None:
    value = number(raw)
    if value is None or not math.isfinite(value) or value < 0 or value != int(value) \
            or value >= 2 ** 64:
        return None
    return int(value)


@dataclass
class Power:
    """What one benchmark's counters say (medians over its repetitions); None: not recorded."""

    clock_mhz: float | None = None
    power_w: float | None = None
    energy_j: float | None = None
    temp_c_max: float | None = None
    throttle: int | None = None  # union over the repetitions
    reasons: list[str] = field(default_factory=list)
    efficiency: tuple[str, float] | None = None  # (counter, value), e.g. ("tflops_per_w", 1.3)
    pct_of_peak_at_clock: float | None = None

    @property
    def known(self) -> bool:
        return self.clock_mhz is not None or self.power_w is not None or self.throttle is not None

    @property
    def limiting(self) -> list[str]:
        return [r for r in self.reasons if r in LIMITING]

    @property
    def hard(self) -> list[str]:
        return [r for r in self.reasons if r in HARD]

    def describe(self) -> str:
        """``1410 MHz, 300 W, 88 C, throttle: hw_slowdown`` (only what is known)."""
        parts = []
        if self.clock_mhz is not None:
            parts.append(f"{self.clock_mhz:.0f} MHz")
        if self.power_w is not None:
            parts.append(f"{self.power_w:.0f} W")
        if self.temp_c_max is not None:
            parts.append(f"{self.temp_c_max:.0f} C")
        if self.throttle is not None:
            parts.append("throttle: " + (",".join(self.limiting) or "none"))
        return ", ".join(parts) or "no clock or power recorded"


def of(bench: Benchmark, context: dict | None = None) -> Power:
    """The clock, power and throttling of one benchmark."""
    p = Power(bench.center(SM_CLOCK_MHZ), bench.center(POWER_W), bench.center(ENERGY_J))
    rows = bench.iterations or ([bench.aggregates["median"]] if "median" in bench.aggregates
                                else [])
    temps = [t for t in (number(r.get(TEMP_C_MAX)) for r in rows)
             if t is not None and math.isfinite(t)]
    p.temp_c_max = max(temps) if temps else None
    masks = [m for m in (_mask(r.get(THROTTLE)) for r in rows if THROTTLE in r) if m is not None]
    if masks:
        p.throttle = 0
        for m in masks:
            p.throttle |= m
        p.reasons = decode(p.throttle, reason_table(context))
    for counter in (TFLOPS_PER_W, TOPS_PER_W, GBPS_PER_W):
        value = bench.center(counter)
        if value is not None:
            p.efficiency = (counter, value)
            break
    p.pct_of_peak_at_clock = bench.center(PCT_OF_PEAK_AT_CLOCK)
    return p


def clock_ratio(base: Power, cand: Power) -> float | None:
    """Candidate clock / baseline clock, when both were recorded."""
    if base.clock_mhz and cand.clock_mhz and base.clock_mhz > 0:
        return cand.clock_mhz / base.clock_mhz
    return None


@dataclass
class Judgement:
    clock_ratio: float | None
    problem: str | None  # why the candidate is not comparable: throttled
    note: str = ""  # worth saying, not failing (a throttled baseline)


def judge(base: Benchmark, cand: Benchmark, base_context: dict | None = None,
          cand_context: dict | None = None, tolerance: float = CLOCK_TOLERANCE,
          same_silicon: bool = True) -> Judgement:
    """Whether a timing comparison of ``cand`` against ``base`` is one of silicon and code, not of
    clocks: a candidate that ran under a hardware or thermal slowdown, or (``same_silicon``: one
    GPU model on both sides) at a clock more than ``tolerance`` below the baseline's, is not
    comparable. Two GPU models run at their own clocks: only the slowdowns count then."""
    b, c = of(base, base_context), of(cand, cand_context)
    ratio = clock_ratio(b, c)
    problems = []
    if c.hard:
        problems.append(f"the candidate ran under {', '.join(c.hard)}")
    if same_silicon and ratio is not None and ratio < 1.0 - tolerance:
        problems.append(f"its SM clock, {c.clock_mhz:.0f} MHz, is {(1 - ratio) * 100:.1f}% below "
                        f"the baseline's {b.clock_mhz:.0f} MHz")
    note = f"the baseline ran under {', '.join(b.hard)}" if b.hard else ""
    return Judgement(ratio, "; ".join(problems) or None, note)


# Context keys that move clocks, with how a warning names them.
CONTEXT_KEYS = {"clock_policy": "clock policy", "power_limit_w": "enforced power limit (W)",
                "app_sm_clock_mhz": "application SM clock (MHz)",
                "persistence_mode": "persistence mode", "ecc_mode": "ECC mode"}


def context_warnings(base_context: dict, cand_context: dict) -> list[str]:
    """The settings that move clocks (policy, power limit, application clocks, ...) when the two
    runs differ in them."""
    out = []
    for key, what in CONTEXT_KEYS.items():
        a, b = base_context.get(key), cand_context.get(key)
        if a is not None and b is not None and str(a) != str(b):
            out.append(f"the runs differ in {what}: baseline {a!r}, candidate {b!r}.")
    return out


# ---------------------------------------------------------------------------------------------
# Summaries of one run


def throttled(rs: ResultSet) -> list[tuple[str, Power]]:
    """[(benchmark, power)] for the benchmarks that ran with a limiting reason."""
    out = []
    for name, bench in rs.benchmarks.items():
        if bench.ok:
            p = of(bench, rs.context)
            if p.limiting:
                out.append((name, p))
    return out


def heaviest(rs: ResultSet) -> tuple[str, Power] | None:
    """The benchmark that drew the most power, with its clock and throttling."""
    best = None
    for name, bench in rs.benchmarks.items():
        if not bench.ok:
            continue
        p = of(bench, rs.context)
        if p.power_w is not None and (best is None or p.power_w > best[1].power_w):
            best = (name, p)
    return best


def run_line(rs: ResultSet) -> str | None:
    """One line for a run's summary: the clocks and power of its benchmarks and what throttled,
    or None when the run recorded none (no NVML: the context's ``nvml`` key says why)."""
    powers = [of(b, rs.context) for b in rs.benchmarks.values() if b.ok]
    clocks = [p.clock_mhz for p in powers if p.clock_mhz is not None]
    watts = [p.power_w for p in powers if p.power_w is not None]
    if not clocks and not watts:
        why = rs.context.get("nvml")
        return f"clocks and power: not recorded (NVML {why})" if isinstance(why, str) and \
            not why.startswith("available") else None
    parts = []
    if clocks:
        parts.append(f"SM clock {min(clocks):.0f}-{max(clocks):.0f} MHz "
                     f"(median {statistics.median(clocks):.0f})")
    if watts:
        parts.append(f"power up to {max(watts):.0f} W")
    hot = throttled(rs)
    reasons = sorted({r for _, p in hot for r in p.limiting})
    parts.append(f"{len(hot)} benchmark(s) throttled ({', '.join(reasons)})" if hot
                 else "no throttling seen")
    policy = rs.context.get("clock_policy")
    if isinstance(policy, str):
        parts.append(f"clock policy {policy}")
    return "clocks and power: " + "; ".join(parts) + "."


def heaviest_line(rs: ResultSet) -> str:
    """``heaviest: <benchmark>: 1755 MHz, 690 W, 71 C, throttle: sw_power_cap`` (gpu_check)."""
    found = heaviest(rs)
    if found is None:
        why = rs.context.get("nvml", "no power counters in the results")
        return f"heaviest: no clock or power recorded ({why})"
    name, p = found
    return f"heaviest: {name}: {p.describe()}"


def main(argv: list[str] | None = None) -> int:
    from tcbench_tools.errors import InputError
    from tcbench_tools.results import load

    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python3 -m tcbench_tools.power RESULTS (a result file or run folder)",
              file=sys.stderr)
        return 2
    try:
        rs = load(argv[0])
    except InputError as exc:
        print(f"tcbench: {exc}", file=sys.stderr)
        return 2
    print(heaviest_line(rs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
