"""Benchmark names: ``topic/variant/precision/m:4096/n:4096/k:4096`` (DESIGN.md Section 6).

Google Benchmark may append ``/manual_time`` (or ``/real_time``) and, for aggregate rows,
``_mean``/``_median``/``_stddev``/``_cv``; the key the tools match on drops the time suffix.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "fp16_acc16", "bf16", "int8", "fp8")
_TIME_SUFFIXES = ("/manual_time", "/real_time", "/process_time")


def strip_time_suffix(name: str) -> str:
    for suffix in _TIME_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def precision_order(precision: str) -> tuple[int, str]:
    """Sort key: the known precisions in DESIGN order, anything else after, alphabetically."""
    if precision in PRECISIONS:
        return (PRECISIONS.index(precision), precision)
    return (len(PRECISIONS), precision)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


@dataclass(frozen=True)
class ParsedName:
    topic: str
    variant: str
    precision: str
    args: dict[str, str] = field(default_factory=dict)

    def numeric_args(self) -> dict[str, float]:
        return {k: v for k, v in ((k, _number(t)) for k, t in self.args.items()) if v is not None}


def parse(name: str) -> ParsedName:
    """Split a (suffix-free) benchmark name into topic, variant, precision and ``key:value`` args.

    Plain Google Benchmark names (``BM_Foo/64``) parse too: topic ``BM_Foo``, no variant.
    The precision is the first component that names a known precision; failing that, the third
    component when it is not an argument; failing that, ``-``.
    """
    parts = strip_time_suffix(name).split("/")
    words = [p for p in parts if ":" not in p]
    args = {}
    for part in parts:
        if ":" in part:
            key, _, value = part.partition(":")
            args[key] = value
    topic = parts[0]
    variant = words[1] if len(words) > 1 else "-"
    precision = next((w for w in words[1:] if w in PRECISIONS), None)
    if precision is None:
        precision = words[2] if len(words) > 2 else "-"
    return ParsedName(topic, variant, precision, args)
