"""Benchmark names: ``topic/variant/precision[/key:value]...`` (schema.py has the vocabulary).

A row tcbench writes carries its name's parts typed, as ``tcbench_args`` (``{"topic": "int8_gemm",
"variant": "cublaslt", "precision": "int8", "m": 4096, ..., "layout": "tn"}``): ``from_args``
reads them, and results.py checks that they build the row's name. ``parse`` splits a name, for
files written before tcbench_args (tcbench 0.2 and older) and for names that come without a row.

GEMM names carry their layout after m, n and k: ``fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/
k:4096/layout:nn`` (cuBLAS column-major convention: ``tn`` = A transposed, B not). Google
Benchmark may append ``/manual_time`` (or ``/real_time``) and, for aggregate rows,
``_mean``/``_median``/``_stddev``/``_cv``; the key the tools match on drops the time suffix.

``BenchName`` builds a name as the C++ ``tcbench::BenchName`` does (schema.hpp), and ``Query``
(``ResultSet.find``) matches parsed names by their parts: the tools never write a benchmark name,
or a pattern for one, by hand, and a key the schema does not know fails where it is used.

``upgrade_v1`` maps a name of the first grammar (tcbench 0.1: no layout, ``n:`` for element
counts, ``h:``/``t:``, the ``cublaslt_bT`` variant) to the name the same benchmark has now, so
that ``compare`` can say a baseline was renamed instead of calling it missing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from tcbench_tools import schema
from tcbench_tools.schema import PRECISIONS

NAMES_V2_SINCE = "tcbench 0.2"  # the release whose names carry the GEMM layout
_TIME_SUFFIXES = ("/manual_time", "/real_time", "/process_time")


def strip_time_suffix(name: str) -> str:
    for suffix in _TIME_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def precision_order(precision: str) -> tuple[int, str]:
    """Sort key: the known precisions in the precision table's order, anything else after,
    alphabetically."""
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

    @property
    def layout(self) -> str | None:
        """The GEMM layout (``nn``, ``nt``, ``tn``, ``tt``), None when the name has none."""
        return self.args.get("layout")

    def numeric_args(self) -> dict[str, float]:
        return {k: v for k, v in ((k, _number(t)) for k, t in self.args.items()) if v is not None}

    def word_args(self) -> dict[str, str]:
        """The arguments that are not numbers (layout, accum, in, recipe, layer, ...)."""
        return {k: t for k, t in self.args.items() if _number(t) is None}


def from_args(args: object, keys: tuple[str, ...] | None = None) -> ParsedName:
    """The ParsedName of a row's ``tcbench_args``: topic, variant and precision, then the keys in
    their order, each value as the name writes it (4096 -> "4096"). ``keys``: the name keys of
    the file's schema (default: the shipped ones). ValueError, in words, for an object that is
    not what BenchName writes (a member missing or of another type, a key the schema lacks, a
    value a name could not hold)."""
    if not isinstance(args, dict):
        raise ValueError("is not an object")
    parts, found = [], {}
    for what in schema.NAME_FIELDS:
        value = args.get(what)
        if not isinstance(value, str):
            raise ValueError(f"has no {what} string")
        parts.append(_plain(what, value))
    for key, value in args.items():
        if key in schema.NAME_FIELDS:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ValueError(f"has {key} {str(value)[:20]!r}, neither a whole number nor a word")
        if key not in (keys if keys is not None else schema.KEYS):
            raise ValueError(f"has {key!r}, which is no name key of the file's schema")
        found[key] = _plain(key, value)
    return ParsedName(*parts, found)


def parse(name: str) -> ParsedName:
    """Split a (suffix-free) benchmark name into topic, variant, precision and ``key:value`` args.

    Plain Google Benchmark names (``BM_Foo/64``) parse too: topic ``BM_Foo``, no variant.
    The precision is the first component after the topic that names a known precision; failing
    that, the third component when it is not an argument; failing that, ``-``.
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


# ---------------------------------------------------------------------------------------------
# Building names and matching them


class UnknownKey(ValueError):
    """A name key that schema.KEYS does not have: a query or a name written for a key the C++ has
    renamed or dropped (tests/scripts/test_schema.py keeps KEYS equal to the C++ keys)."""


def _known(key: str) -> str:
    if key not in schema.KEYS:
        raise UnknownKey(f"{key!r} is not a benchmark name key (schema.KEYS: "
                         f"{', '.join(schema.KEYS)})")
    return key


_PLAIN = re.compile(r"[A-Za-z0-9_.-]+")


def _plain(what: str, value: object) -> str:
    text = str(value)
    if not _PLAIN.fullmatch(text):
        raise ValueError(f"benchmark name {what} {text!r} must be letters, digits, '_', '-' or '.'")
    return text


@dataclass(frozen=True)
class BenchName:
    """A benchmark name, built as ``tcbench::BenchName`` builds it (schema.hpp):
    ``BenchName("fp16_vs_fp32", "cublaslt", "fp16").gemm(4096, 4096, 4096, "nn")`` is
    ``fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096/layout:nn``; ``.arg("batch", 32)`` appends
    ``/batch:32``. ``precision`` is a precision of the table or one of the few mixes a row names
    instead (``selected``). ``str()`` gives the name."""

    topic: str
    variant: str
    precision: str
    args: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        for what in ("topic", "variant", "precision"):
            _plain(what, getattr(self, what))

    @classmethod
    def of(cls, parsed: ParsedName) -> BenchName:
        """The name ``parsed`` was parsed from (its arguments in their order)."""
        return cls(parsed.topic, parsed.variant, parsed.precision, tuple(parsed.args.items()))

    def arg(self, key: str, value: object) -> BenchName:
        return replace(self, args=(*self.args, (_known(key), _plain(key, value))))

    def gemm(self, m: int, n: int, k: int, layout: str) -> BenchName:
        """m, n, k and the layout (schema.LAYOUTS), in the order every GEMM name has them."""
        if layout not in schema.LAYOUTS:
            raise ValueError(f"layout {layout!r} is not one of {', '.join(schema.LAYOUTS)}")
        return self.arg("m", m).arg("n", n).arg("k", k).arg("layout", layout)

    def __str__(self) -> str:
        return "/".join((self.topic, self.variant, self.precision,
                         *(f"{key}:{value}" for key, value in self.args)))


class _Any:
    def __repr__(self) -> str:
        return "ANY"


ANY = _Any()  # a name key that is there, whatever its value
# What one part of a query matches: None (anything; for a key: the key is absent), ANY (a key
# that is there), a value (compared as the name writes it: 4096 matches "4096"), several values
# (a tuple, set or frozenset), or a test of the text.
Match = object


def matches(want: Match, have: str | None) -> bool:
    """Whether a name part ``have`` (None: the name lacks it) is what ``want`` asks for."""
    if want is ANY:
        return have is not None
    if have is None:
        return want is None
    if want is None:
        return False
    if callable(want):
        return bool(want(have))
    if isinstance(want, (tuple, set, frozenset)):
        return any(matches(w, have) for w in want)
    return str(want) == have


@dataclass(frozen=True)
class Query:
    """What ``ResultSet.find`` looks for: parts of a parsed name (see ``matches``); ``topic``,
    ``variant`` and ``precision`` left None match any."""

    topic: Match = None
    variant: Match = None
    precision: Match = None
    args: dict = field(default_factory=dict)
    where: Callable[[ParsedName], bool] | None = None

    def __post_init__(self) -> None:
        for key in self.args:
            _known(key)

    def matches(self, parsed: ParsedName) -> bool:
        for want, have in ((self.topic, parsed.topic), (self.variant, parsed.variant),
                           (self.precision, parsed.precision)):
            if want is not None and not matches(want, have):
                return False
        if not all(matches(want, parsed.args.get(key)) for key, want in self.args.items()):
            return False
        return self.where is None or bool(self.where(parsed))


def is_square(parsed: ParsedName) -> bool:
    """A GEMM with m = n = k."""
    a = parsed.args
    return "m" in a and a.get("m") == a.get("n") == a.get("k")


def one_of(*values: object) -> frozenset[str]:
    """Several values for one part of a query (``variant=one_of("cublaslt", "wmma")``)."""
    return frozenset(str(v) for v in values)


def prefix(start: str) -> Callable[[str], bool]:
    """A part that begins with ``start`` (``variant=prefix("ptq_")``)."""
    return lambda text: text.startswith(start)


def size_label(x: float, digits: int = 3) -> str:
    """A size as a reader takes it in: 4096, 2^28 (powers of two from 2^17), 10M, 1.5G (decimal,
    ``digits`` significant); a plot's tick and a name's element count alike."""
    if not math.isfinite(x) or x < 100_000:
        return f"{x:g}"
    if math.log2(x).is_integer():
        return f"2^{int(math.log2(x))}"
    scale, suffix = next(s for s in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")) if x >= s[0])
    return f"{x / scale:.{digits}g}{suffix}"


def short_path(path: str) -> str:
    """A result file as the report names it: its file name, with its folder when it is a run's
    ``results.json`` (``run_0105/results.json``); the full path goes in a title."""
    parts = path.replace("\\", "/").rstrip("/").split("/")
    return "/".join(parts[-2:]) if parts[-1] == "results.json" else parts[-1]


def short(name: str) -> str:
    """A benchmark name without its topic and precision (the tables around it say them), with
    its GEMM shape compact: ``fp16_vs_fp32/cublaslt/fp16/m:8192/n:8192/k:8192/layout:nn`` ->
    ``cublaslt 8192³ nn``; ``.../m:4096/n:33/k:4096/layout:tn`` -> ``cublaslt 4096x33x4096 tn``;
    ``loss_scaling/unscale/fp32/elements:10000000`` -> ``unscale 10M elements``. Words are
    separated by spaces, so that a table cell can wrap between them (never inside one)."""
    p = parse(name)
    words = [p.variant] if p.variant != "-" else []
    args = p.args
    gemm = {"m", "n", "k"} <= args.keys()
    for key, value in args.items():
        if gemm and key == "m":
            m, n, k = args["m"], args["n"], args["k"]
            words.append(f"{m}\u00b3" if m == n == k else f"{m}x{n}x{k}")
        elif gemm and key in ("n", "k"):
            continue
        elif key == "layout":
            words.append(value)
        elif key == "elements":
            count = _number(value)
            whole = count is not None and count.is_integer() and count >= 100_000
            words.append(f"{size_label(count, 4) if whole else value} elements")
        else:
            words.append(f"{key}:{value}")
    return " ".join(words) or name


# ---------------------------------------------------------------------------------------------
# The first grammar (tcbench 0.1), for telling a renamed baseline from a missing benchmark

# The topics whose names changed; loss_scaling and tensor_peak kept theirs.
_RENAMED_TOPICS = ("fp16_vs_fp32", "int8_gemm", "fp8", "alignment", "tensor_util")
# v1 GEMMs that were timed NN and are TN now, like the INT8 and FP8 GEMMs they are compared with.
_WAS_NN = {("int8_gemm", variant, p) for variant in ("cublaslt", "mlp")
           for p in ("fp32", "tf32", "fp16", "bf16")}
_WAS_NN |= {("fp8", "gemm", p) for p in ("bf16", "fp16")}


@dataclass(frozen=True)
class Upgrade:
    """What a v1 name is called now, and what changed, in words ("has no layout": each reads
    after "the old name")."""

    name: str
    changes: list[str]
    timed_differently: bool  # v1 timed it NN, now TN: the old time is of another GEMM


def _v2_layout(topic: str, variant: str, precision: str) -> str:
    if variant == "cublaslt_bT":
        return "nt"
    if topic in ("int8_gemm", "fp8") or precision in ("int8", "fp8"):
        return "tn"  # IMMA and FP8 GEMMs need both operands K-contiguous
    return "nn"


def upgrade_v1(name: str) -> Upgrade | None:
    """The current name of a v1 benchmark name, per the rename table of the name grammar v2;
    None for a name that is not an old name (already current, unchanged, or not tcbench's)."""
    parts = strip_time_suffix(name).split("/")
    if len(parts) < 4 or parts[0] not in _RENAMED_TOPICS or any(":" in p for p in parts[:3]) \
            or any(":" not in p for p in parts[3:]):
        return None
    topic, variant, precision = parts[:3]
    args = [tuple(part.split(":", 1)) for part in parts[3:]]
    keys = {k for k, _ in args}
    if "layout" in keys:
        return None
    layout = _v2_layout(topic, variant, precision)
    gemm = {"m", "n", "k"} <= keys
    layer_args = topic == "fp8" and {"h", "t"} <= keys
    out: list[str] = []
    for key, value in args:
        if key == "n" and not gemm:
            key = "elements"
        elif layer_args and key in ("h", "t"):
            key = {"h": "hidden", "t": "tokens"}[key]
        out.append(f"{key}:{value}")
        # The layout goes right after k (GEMMs) or after the token count (MLP, FP8 layers).
        if key == "k" and gemm or key == "tokens" and (layer_args or variant == "mlp"):
            out.append(f"layout:{layout}")
    changes = []
    if variant == "cublaslt_bT":
        changes.append("says cublaslt_bT (cublaslt with layout:nt now)")
    elif f"layout:{layout}" in out:
        changes.append("has no layout")
    if "n" in keys and not gemm:
        changes.append("counts elements as n: (elements: now)")
    if layer_args:
        changes.append("has h:/t: (hidden:/tokens: now)")
    if not changes:
        return None
    new = "/".join([topic, "cublaslt" if variant == "cublaslt_bT" else variant, precision, *out])
    return Upgrade(new, changes, (topic, variant, precision) in _WAS_NN)
