"""A run's environment: the hardware and software identity its context records, beside the GPU
model and the mode that already separate series.

A CI pool that mixes machines (another SM count, power limit, clock policy, host class) or a
runner whose driver or CUDA libraries were updated measures other levels with the same code.
Runs of one GPU model and mode whose identities differ are kept in separate series, so that such
a difference is never a change point (nor a regression that fails the gate); the dashboard marks
where a new identity first appears (``describe_change``). Standard library only.
"""

from __future__ import annotations

import math

# The context keys that make up the identity, with the words the dashboard uses for them. The
# GPU (gpu_name, compute capability) and quick/full are the series' own key already.
KEYS = (("sm_count", "SMs"), ("gpu_mig_mode", "MIG"), ("power_limit_w", "power limit W"),
        ("clock_policy", "clocks"), ("locked_sm_clock_mhz", "locked SM MHz"),
        ("ecc_mode", "ECC"), ("driver_version", "driver"), ("cuda_runtime", "CUDA"),
        ("cublaslt_version", "cuBLASLt"), ("num_cpus", "host CPUs"))
NUMBERS = frozenset({"sm_count", "power_limit_w", "locked_sm_clock_mhz", "num_cpus"})
MISSING = "-"  # a key the run's context does not record

Identity = tuple[str, ...]  # one value per KEYS entry, in its order


def _value(key: str, raw) -> str:
    """The key's value as one comparable text: a number in one spelling ("400.0" and 400
    alike); a version or a word as written."""
    if raw is None or isinstance(raw, (dict, list)):
        return MISSING
    if isinstance(raw, bool):
        return str(raw).lower()
    text = str(raw).strip()
    if key not in NUMBERS:
        return text[:80] or MISSING
    try:
        number = float(text)
    except ValueError:
        return text[:80] or MISSING
    return f"{number:g}" if math.isfinite(number) else text[:80]


def of(context: dict) -> Identity:
    return tuple(_value(key, context.get(key)) for key, _ in KEYS)


def describe(identity: Identity) -> str:
    """``SMs 132, driver 550.54, ...``: every recorded part."""
    return ", ".join(f"{label} {value}" for (_, label), value in zip(KEYS, identity)
                     if value != MISSING)


def describe_change(old: Identity | None, new: Identity) -> str:
    """What differs from ``old`` (``driver 550.54 -> 560.28``), or the whole identity when
    there is no earlier one."""
    if old is None:
        return describe(new)
    parts = [f"{label} {a} -> {b}" for (_, label), a, b in zip(KEYS, old, new) if a != b]
    return ", ".join(parts) or "same"
