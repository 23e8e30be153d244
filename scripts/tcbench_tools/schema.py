"""What a result file's names and counters mean: loaded, never restated.

Every result file tcbench writes carries its vocabulary once, in its context, as
``tcbench_schema`` (``schema_json()`` of common/facts/include/tcbench/schema.hpp: the name keys
with their types, the precisions with their element formats and bits, every counter with its
unit, direction and physical range, the throttle reasons, the sampling budgets), and each row its
name's parts, typed, as ``tcbench_args``. ``of_context`` loads a file's own schema; a file written
before tcbench_schema existed (schema version 1, tcbench 0.2 and older) is read with the schema the
tools ship, ``schema.json`` beside this module: ``tcbench_context --schema``'s output, which
tests/scripts/test_schema.py regenerates and compares (it fails on drift).

The module-level names are the shipped schema's, the vocabulary the tools are written against:
``schema.counter(name)``, ``schema.PRECISIONS``, ``schema.KEYS``, ... A fixed counter is named as
an upper-case attribute (``schema.TFLOPS`` is ``"tflops"``), looked up in the shipped schema, so a
counter the C++ renames fails at import instead of silently finding nothing, and a new counter
needs no edit here. The context keys the tools read by name and the keys ``tcbench run`` adds
(runfile.py) are this module's own.

Each counter has a physical range (``low``/``high``, None = unbounded): a value outside it cannot
come from a correct measurement, and the tools refuse it like a NaN (results.Benchmark.defect).
``better`` says which way is an improvement ("higher", "lower", or "none" for a description such as
a tile size). Standard library only: ``tcbench run`` imports this.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

from tcbench_tools.errors import InputError

SCHEMA_FILE = Path(__file__).resolve().with_name("schema.json")
CONTEXT_KEY = "tcbench_schema"  # the context's schema object
ARGS_KEY = "tcbench_args"  # each row's typed arguments
NAME_FIELDS = ("topic", "variant", "precision")  # tcbench_args' members beside the keys

# ---------------------------------------------------------------------------------------------
# The context: the keys the tools read by name, and what tcbench run adds to a merged run

# Written by the C++ (tcbench_context prints them; tests/scripts/test_schema.py checks it).
VERSION = "tcbench_version"
QUICK = "tcbench_quick"  # "true" for a --quick run
# Written by tcbench_studies: "host-studies" for the host studies' results (answers/evidence.py),
# and the studies a file holds and the ones its run was asked for (comma-separated; a run
# stopped part way leaves the finished ones: studies.py marks such a file incomplete).
KIND = "tcbench_kind"
STUDIES_DONE = "tcbench_studies_done"
STUDIES_PLANNED = "tcbench_studies_planned"
# The sha256 of the tcbench_studies that wrote a studies.json (it reads no other input): a later
# run with the same tool reuses the file instead of computing it again (studies.py).
STUDIES_TOOL_SHA256 = "tcbench_studies_sha256"
# The GPU model, and what tells one GPU (or MIG instance) from another of the same model: a run
# measures one GPU, so the files of one run agree on every one of these they state
# (runfile.check_one_gpu, for tcbench run's merge and for reading a folder alike).
GPU_MODEL = ("gpu_name", "compute_capability")
GPU_IDENTITY = (*GPU_MODEL, "gpu_uuid", "gpu_mig_mode", "sm_count")
# The software a measurement depends on beside the GPU model (compare warns when it changed).
SOFTWARE = ("driver_version", "cuda_runtime", "cublaslt_version")

# Added by tcbench run to the context of the results.json it merges (runfile.merge):
RUN_BINARIES = "tcbench_binaries"  # the binaries merged, comma-separated, in run order
RUN_SOURCES = "tcbench_sources"  # <file>:<content hash> of each file merged
RUN_FAILED = "tcbench_failed_binaries"  # <binary>:<exit code> of each that did not exit 0
RUN_LOST = "tcbench_lost_binaries"  # the binaries that left no usable results
RUN_INCOMPLETE = "tcbench_incomplete"  # why the run stopped before every binary ran
RUN_CUT = "tcbench_cut_short"  # the binaries cut short whose finished rows were kept, and how
RUN_NEVER_RAN = "tcbench_never_ran"  # the rows those binaries had planned and never ran
RUN_KEYS = (RUN_BINARIES, RUN_SOURCES, RUN_FAILED, RUN_LOST, RUN_INCOMPLETE, RUN_CUT,
            RUN_NEVER_RAN)
# ... and to each merged row: the binary that wrote it (not a counter).
ROW_BINARY = "tcbench_binary"

# The one third name segment that is neither a precision nor a precision's mix of layers: the FP8
# transformer block's per-layer selection (BenchName's mix constructor; fp8/block/<mix>/...).
MIX_SELECTED = "selected"

HIGHER, LOWER, NONE = "higher", "lower", "none"


# ---------------------------------------------------------------------------------------------
# The schema's rows


@dataclass(frozen=True)
class Counter:
    """One counter, or one family of counters (``speedup_vs_<precision>``, ``loss_at_<NN>``)."""

    name: str  # the counter's name; a family's has a <placeholder>
    pattern: str  # full-match regular expression for the names it covers
    unit: str
    better: str  # HIGHER, LOWER or NONE
    low: float | None = None  # physically possible range; None: unbounded
    low_inclusive: bool = True
    high: float | None = None  # always inclusive
    doc: str = ""

    @property
    def family(self) -> bool:
        return "<" in self.name

    def matches(self, counter: str) -> bool:
        return re.fullmatch(self.pattern, counter) is not None

    def in_range(self, value: float) -> bool:
        if self.low is not None and (value < self.low
                                     or (value == self.low and not self.low_inclusive)):
            return False
        return self.high is None or value <= self.high

    def range_text(self) -> str:
        """The range in words: "> 0", ">= 0 and <= 100", "any value"."""
        parts = []
        if self.low is not None:
            parts.append(f"{'>=' if self.low_inclusive else '>'} {self.low:g}")
        if self.high is not None:
            parts.append(f"<= {self.high:g}")
        return " and ".join(parts) or "any value"

    @property
    def stem(self) -> str:
        """What every member's name starts with (``accuracy_``)."""
        return self.name[: self.name.index("<")]

    def member(self, suffix: object) -> str:
        """The family member ``<stem><suffix>`` (``speedup_vs_fp16``); ValueError when the
        family's pattern refuses it."""
        name = self.stem + str(suffix)
        if not self.matches(name):
            raise ValueError(f"{name!r} is not a member of the counter family {self.name}")
        return name

    def suffixes(self) -> tuple[str, ...]:
        """The members' suffixes of a family whose pattern lists them (``(a|b)``), else ()."""
        found = re.search(r"\(([a-z0-9_|]+)\)\$$", self.pattern)
        return tuple(found.group(1).split("|")) if found else ()


@dataclass(frozen=True)
class Precision:
    """One row of the C++ precision table: its operands' element formats and storage bits."""

    name: str
    integer: bool  # integer math: throughput in TOP/s
    rate_counter: str  # the throughput counter its GEMMs report: "tops" or "tflops"
    a: str  # element formats of A, B, C and D (element.hpp's names: "e4m3", "bf16", ...)
    b: str
    c: str
    d: str
    a_bits: int
    b_bits: int
    c_bits: int
    d_bits: int
    a_k_major: bool  # A must be K-contiguous: its GEMMs run TN
    halved_on_geforce: bool

    @property
    def input_bytes(self) -> float:
        """Bytes of one A element in memory (FP4: 0.5)."""
        return self.a_bits / 8

    @property
    def output_bytes(self) -> float:
        return self.d_bits / 8

    @property
    def layout(self) -> str:
        """The layout its GEMMs run by default: "tn" when A must be K-contiguous, else "nn"."""
        return "tn" if self.a_k_major else "nn"


@dataclass(frozen=True)
class Key:
    name: str
    type: str  # "integer" (tcbench_args holds a JSON number) or "text"
    doc: str = ""


_NUMBER = (int, float)


def _need(raw: object, kind: type | tuple, what: str) -> object:
    if not isinstance(raw, kind) or isinstance(raw, bool) and kind is not bool:
        raise ValueError(what)
    return raw


class Schema:
    """One schema document (``schema_json()``), checked as it is read."""

    def __init__(self, raw: object) -> None:
        doc = _need(raw, dict, "it is not a JSON object")
        self.raw = doc
        self.version = _need(doc.get("schema_version"), int, "it has no schema_version number")
        names = _need(doc.get("names"), dict, "it has no names object")
        self.grammar = _need(names.get("grammar"), str, "its names have no grammar")
        self.keys = tuple(self._key(k) for k in _need(names.get("keys"), list, "no keys list"))
        self.gemm_keys = tuple(_need(names.get("gemm_keys"), list, "its names lack gemm_keys"))
        self.layouts = tuple(_need(names.get("layouts"), list, "its names lack layouts"))
        self.precisions = tuple(self._precision(p) for p in
                                _need(doc.get("precisions"), list, "it has no precisions list"))
        self.scale_modes = tuple(doc.get("scale_modes", ()))
        self.counters = tuple(self._counter(c) for c in
                              _need(doc.get("counters"), list, "it has no counters list"))
        self.throttle_reasons = tuple(
            (_need(r.get("name"), str, "a throttle reason has no name"),
             _need(r.get("bit"), int, "a throttle reason has no bit"), str(r.get("doc", "")))
            for r in doc.get("throttle_reasons", ()) if isinstance(r, dict))
        self.sampling = {k: float(v) for k, v in dict(doc.get("sampling", {})).items()
                         if isinstance(v, _NUMBER) and not isinstance(v, bool)}
        self._by_name = {c.name: c for c in self.counters}
        self._found: dict[str, Counter | None] = {}

    @staticmethod
    def _key(raw: object) -> Key:
        if isinstance(raw, str):  # schema version 1: the names alone
            return Key(raw, "integer" if raw in _V1_INTEGER_KEYS else "text")
        raw = _need(raw, dict, "a key is not an object")
        return Key(_need(raw.get("name"), str, "a key has no name"),
                   _need(raw.get("type"), str, "a key has no type"), str(raw.get("doc", "")))

    @staticmethod
    def _precision(raw: object) -> Precision:
        raw = _need(raw, dict, "a precision is not an object")
        name = _need(raw.get("name"), str, "a precision has no name")
        if "a" not in raw:  # schema version 1: name, integer, rate counter only
            raise ValueError(f"precision {name} has no element formats")
        text = {f: _need(raw.get(f), str, f"precision {name} has no {f}")
                for f in ("rate_counter", "a", "b", "c", "d")}
        bits = {f: _need(raw.get(f), int, f"precision {name} has no {f}")
                for f in ("a_bits", "b_bits", "c_bits", "d_bits")}
        flags = {f: _need(raw.get(f), bool, f"precision {name} has no {f}")
                 for f in ("integer", "a_k_major", "halved_on_geforce")}
        return Precision(name=name, **text, **bits, **flags)

    @staticmethod
    def _counter(raw: object) -> Counter:
        raw = _need(raw, dict, "a counter is not an object")
        name = _need(raw.get("name"), str, "a counter has no name")
        pattern = _need(raw.get("pattern"), str, f"counter {name} has no pattern")
        try:
            re.compile(pattern)
        except re.error:
            raise ValueError(f"counter {name}'s pattern is not a regular expression") from None
        low, high = raw.get("low"), raw.get("high")
        for bound in (low, high):
            if bound is not None:
                _need(bound, _NUMBER, f"counter {name} has a range bound that is not a number")
        return Counter(name, pattern, _need(raw.get("unit"), str, f"counter {name} has no unit"),
                       _need(raw.get("better"), str, f"counter {name} has no direction"),
                       None if low is None else float(low), bool(raw.get("low_inclusive", True)),
                       None if high is None else float(high), str(raw.get("doc", "")))

    # --- lookups

    @cached_property
    def key_names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.keys)

    @cached_property
    def precision_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.precisions)

    def key(self, name: str) -> Key | None:
        return next((k for k in self.keys if k.name == name), None)

    def precision(self, name: str) -> Precision | None:
        return next((p for p in self.precisions if p.name == name), None)

    def counter(self, name: str) -> Counter | None:
        """The entry for a counter name (a family's for its members); None when unknown."""
        if name not in self._found:
            exact = self._by_name.get(name)
            self._found[name] = exact or next((c for c in self.counters if c.matches(name)), None)
        return self._found[name]

    def family(self, name: str) -> Counter:
        """The family called ``name`` (``speedup_vs_<precision>``); KeyError if there is none."""
        found = self._by_name.get(name)
        if found is None or not found.family:
            raise KeyError(f"the schema has no counter family {name}")
        return found

    def unit(self, name: str) -> str:
        found = self.counter(name)
        return found.unit if found is not None else ""

    def out_of_range(self, name: str, value: float) -> str | None:
        """Why ``value`` cannot be a ``name`` counter ("outside its physical range (> 0)"), or
        None when it can (or the counter is not in the schema: other programs' counters pass)."""
        found = self.counter(name)
        if found is None or not math.isfinite(value) or found.in_range(value):
            return None
        return f"outside its physical range ({found.range_text()})"

    def rate_counter(self, precision: str) -> str:
        """``tops`` for integer precisions, ``tflops`` for the rest (and for unknown names)."""
        row = self.precision(precision)
        return row.rate_counter if row is not None else "tflops"


# Schema version 1 (tcbench_context --schema before 0.3) listed the keys by name only; these are
# the ones whose values were always whole numbers.
_V1_INTEGER_KEYS = frozenset(("m", "n", "k", "batch", "tokens", "hidden", "elements", "steps",
                              "scale_log2", "history", "margin"))


@cache
def shipped() -> Schema:
    """The schema the tools ship (schema.json): for files that carry none."""
    return Schema(json.loads(SCHEMA_FILE.read_text()))


@cache
def _parsed(text: str) -> Schema:
    return Schema(json.loads(text))


def of_context(context: dict, where: str = "a result file") -> Schema:
    """The schema of a file with this context: its own ``tcbench_schema``, else the shipped one.
    A schema that is not the object the C++ writes is an input error (one sentence)."""
    raw = context.get(CONTEXT_KEY)
    if raw is None:
        return shipped()
    try:
        return _parsed(json.dumps(raw, sort_keys=True))
    except (ValueError, TypeError, AttributeError) as exc:
        raise InputError(f"{where}: its context's {CONTEXT_KEY} is not a tcbench schema "
                         f"({exc}).") from None


# ---------------------------------------------------------------------------------------------
# The shipped vocabulary, as module-level names


def _shipped_counter(name: str) -> str:
    if shipped().counter(name) is None or "<" in name:
        raise AttributeError(f"{name!r} is not a counter of the shipped schema "
                             f"({SCHEMA_FILE.name})")
    return name


def __getattr__(attr: str) -> str:
    """``schema.TFLOPS`` is ``"tflops"``: a fixed counter of the shipped schema, by its name in
    upper case; any other name is an AttributeError (ImportError for ``from schema import``)."""
    if attr.isupper() and attr.isidentifier():
        found = shipped()._by_name.get(attr.lower())
        if found is not None and not found.family:
            return found.name
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")


SCHEMA_VERSION = shipped().version
KEYS = shipped().key_names
LAYOUTS = shipped().layouts
PRECISIONS = shipped().precision_names
counter = shipped().counter
unit = shipped().unit
out_of_range = shipped().out_of_range
rate_counter = shipped().rate_counter

THROUGHPUT = tuple(_shipped_counter(n) for n in ("tflops", "tops", "gbps"))  # preference order
# The tensor-pipe counters CUPTI reads (common/profiling/src/metric_table.cpp), in report order.
PROFILE_COUNTERS = tuple(_shipped_counter(n) for n in (
    "tensor_active_pct", "tensor_hmma_pct", "tensor_imma_pct", "tensor_dmma_pct",
    "tensor_hmma_hgmma_qgmma_pct", "sm_throughput_pct", "dram_throughput_pct"))

# Families: one entry covers every name its function gives.
_SPEEDUP = shipped().family("speedup_vs_<precision>")
_ACCURACY = shipped().family("accuracy_<variant>")
_AGREEMENT = shipped().family("agreement_<variant>")
LOSS_AT = shipped().family("loss_at_<NN>").name
_SCALE_AT = shipped().family("scale_at_<NN>")
_TENSOR_ACTIVE_PHASE = shipped().family("tensor_active_pct_<phase>")
_TIME_PCT = shipped().family("time_pct_<phase>")
# A training step's phases (studies::StepPhase, in order), and the time between them.
STEP_PHASES = _TENSOR_ACTIVE_PHASE.suffixes()
GAPS = next(s for s in _TIME_PCT.suffixes() if s not in STEP_PHASES)


def speedup_vs(precision: str) -> str:
    """This benchmark's time in ``precision`` over its own (same problem, same layout)."""
    return _SPEEDUP.member(precision)


ACCURACY_STEM = _ACCURACY.stem  # "accuracy_": what every accuracy counter's name starts with


def accuracy(variant: str) -> str:
    return _ACCURACY.member(variant)


def agreement(variant: str) -> str:
    return _AGREEMENT.member(variant)


def loss_at(point: int) -> str:
    """Point ``point`` of a training run's loss curve (``loss_at_00`` ...)."""
    return shipped().family(LOSS_AT).member(f"{point:02d}")


def scale_at(point: int) -> str:
    return _SCALE_AT.member(f"{point:02d}")


def tensor_active_in(phase: str) -> str:
    """A training step phase's tensor-pipe % (``tensor_active_pct_forward`` ...)."""
    return _TENSOR_ACTIVE_PHASE.member(phase)


def time_share(phase: str) -> str:
    """A phase's share of the step's time (``time_pct_forward`` ..., ``time_pct_gaps``)."""
    return _TIME_PCT.member(phase)

