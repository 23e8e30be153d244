"""Published GEMM measurements (data/published/*.csv): the reader and its checks.

One row per measurement, each with its source (data/published/README.md describes the columns).
``load`` reads and checks the form of every row (the columns, positive sizes, a known layout and
precision, a summary and a source on every row, one measured time or rate); ``check`` adds what
needs tcbench's own tables: a GPU of the peak table, nothing above its dense datasheet peak, no
row twice.

The text fields are cleaned once, here: control characters (a terminal escape, a NUL) leave the
text, so every writer gets plain text, which it escapes for its own format (Markdown through
mdtext, HTML through doc). A NUL anywhere is refused before the csv module reads the file. The
precisions and output types and their sizes are the C++ tables' (data/model/vocabulary.csv is
`tcbench_model vocabulary`'s output; tests/scripts/test_model.py fails when they drift).
Standard library only.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path

from tcbench_tools import files
from tcbench_tools.arguments import ascii_int
from tcbench_tools.errors import InputError

DATA_DIR = Path(__file__).resolve().parents[2] / "data" / "published"
VOCABULARY = DATA_DIR.parent / "model" / "vocabulary.csv"
COLUMNS = ("id", "gpu", "device", "precision", "c_type", "m", "n", "k", "batch", "layout_a",
           "layout_b", "measured_us", "measured_tflops", "summary", "timing", "library", "version",
           "use", "source", "reference", "notes")
REQUIRED = ("id", "gpu", "precision", "m", "n", "k", "batch", "layout_a", "layout_b", "summary",
            "timing", "library", "use", "source")
USES = ("fit", "held_out")
TEXT = ("id", "gpu", "device", "summary", "timing", "library", "version", "source", "reference",
        "notes")
# GeForce boards run above their rated boost clock (GPU Boost): a measurement may exceed the
# datasheet rate, which counts the rated clock. check() accepts that much above it for them.
GEFORCE_BOOST = 1.10


@functools.cache
def vocabulary() -> tuple[dict[str, tuple[int, str]], dict[str, int]]:
    """precision -> (input bits, default output type); output type -> bits. Read when first
    needed (a checkout without data/ still imports this module)."""
    precisions, types = {}, {}
    text = files.read_text(VOCABULARY, files.CONFIG_LIMIT, "vocabulary of the model")
    for row in csv.DictReader(io.StringIO(text)):
        if row["kind"] == "precision":
            precisions[row["name"]] = (int(row["bits"]), row["output_type"])
        else:
            types[row["name"]] = int(row["bits"])
    return precisions, types
PAIR_REACH = 64  # an aligned partner differs from the misaligned row by at most this many elements
LIMIT = 64 * files.MIB
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|"
                      r"[\x00-\x1f\x7f-\x9f]")
_THREAD = re.compile(r"https://github\.com/([^/]+/[^/]+)/(?:issues|pull)/(\d+)")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


@dataclass(frozen=True)
class Measurement:
    id: str
    gpu: str  # a peak-table name ("H100 SXM")
    device: str  # the CUDA device name when the source gives (or the row assumes) one
    precision: str
    c_type: str
    m: int
    n: int
    k: int
    batch: int
    layout_a: str  # mk (A stored [m][k]) or km
    layout_b: str  # kn (B stored [k][n]) or nk
    time_us: float | None  # column measured_us
    tflops: float | None  # column measured_tflops
    summary: str
    timing: str
    library: str
    version: str
    use: str  # fit or held_out
    source: str
    reference: str
    notes: str
    file: str
    line: int

    @property
    def flops(self) -> float:
        return 2.0 * self.m * self.n * self.k * self.batch

    @property
    def measured_us(self) -> float:
        return self.time_us if self.time_us is not None else self.flops / (self.tflops * 1e6)

    @property
    def measured_tflops(self) -> float:
        return self.tflops if self.tflops is not None else self.flops / (self.time_us * 1e6)

    @property
    def host_timed(self) -> bool:
        return self.timing.startswith("host")

    @property
    def series(self) -> str:
        """The id without its shape: one sweep of one source ("cookbook-mm-ksweep_low")."""
        parts = self.id.rsplit("-", 1)
        return parts[0] if len(parts) == 2 else self.id

    @property
    def alignment(self) -> tuple[int, int, int]:
        """Bytes (1..16) to which A's, B's and C's leading dimensions (and batch strides) are
        aligned: the rule of the time model's operand_alignment (gemm_time_model.hpp), which
        tests/scripts/test_model.py checks this against row by row."""
        def al(elements: int, bits: int) -> int:
            total = elements * bits
            if total % 8:
                return 1
            b, a = total // 8, 1
            while a < 16 and b % (2 * a) == 0:
                a *= 2
            return a
        precisions, types = vocabulary()
        ab = bb = precisions[self.precision][0]
        cb = types[self.c_type or precisions[self.precision][1]]
        a = al(self.k if self.layout_a == "mk" else self.m, ab)
        b = al(self.n if self.layout_b == "kn" else self.k, bb)
        c = al(self.n, cb)
        if self.batch > 1:
            a, b, c = min(a, al(self.m * self.k, ab)), min(b, al(self.k * self.n, bb)), \
                min(c, al(self.m * self.n, cb))
        return a, b, c

    @property
    def aligned(self) -> bool:
        return min(self.alignment) == 16

    @property
    def source_name(self) -> str:
        """The source, short: "owner/repo@commit" for a file, "owner/repo#N" for a GitHub
        thread, else the source as given."""
        thread = _THREAD.fullmatch(self.source)
        if thread:
            return f"{thread.group(1)}#{thread.group(2)}"
        return self.source.split(":", 1)[0] if "@" in self.source else self.source

    @property
    def model_gpu(self) -> str:
        """The name the model is given: the exact device when known, else the peak-table name."""
        return self.device or self.gpu


def _where(path: Path | str, line: int) -> str:
    return f"{path} line {line}"


def _positive_int(text: str, what: str, where: str) -> int:
    value = ascii_int(text)  # int() would also read "٤٠٩٦" as 4096 (issue 34)
    if value is None:
        raise InputError(f"{where}: {what} = {text!r} is not an integer (digits 0-9).")
    if value <= 0 or value > 1 << 40:
        raise InputError(f"{where}: {what} = {value} is not a positive size up to 2^40.")
    return value


def _positive_float(text: str, what: str, where: str) -> float | None:
    if text == "":
        return None
    if not _DECIMAL.fullmatch(text):  # float() would also read "١٫٥", "1_0" and "nan"
        raise InputError(f"{where}: {what} = {text!r} is not a number (digits 0-9).")
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{where}: {what} = {text!r} is not a number.") from None
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"{where}: {what} = {text!r} is not a positive finite number.")
    return value


def clean(text: str) -> str:
    """A text field of printable characters only: a terminal escape sequence goes whole, any
    other character a terminal or a viewer would act on (a control, a NUL, a line or paragraph
    separator, a bidirectional override) becomes a space."""
    text = _CONTROL.sub(" ", text)
    return " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())


def parse(text: str, origin: str) -> list[Measurement]:
    """The rows of one CSV file; InputError naming the file and line for any malformed row (the
    csv module's own refusals too: a field above its size limit)."""
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise InputError(f"{origin} line {line} holds a NUL byte: not a CSV file of "
                         "measurements.")
    try:
        return _parse(text, origin)
    except csv.Error as exc:
        raise InputError(f"{origin} is not a CSV file this reader takes ({exc}).") from None


def _parse(text: str, origin: str) -> list[Measurement]:
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(f"{origin} is empty.") from None
    if tuple(h.strip() for h in header) != COLUMNS:
        raise InputError(f"{origin}: the header must be {','.join(COLUMNS)}.")
    rows = []
    for rec in reader:
        line = reader.line_num
        where = _where(origin, line)
        if not any(f.strip() for f in rec):
            continue
        if len(rec) != len(COLUMNS):
            raise InputError(f"{where}: {len(rec)} fields, not {len(COLUMNS)}.")
        f = {c: clean(v) if c in TEXT else v.strip() for c, v in zip(COLUMNS, rec)}
        for c in COLUMNS:
            if c not in TEXT and _CONTROL.search(f[c]):
                raise InputError(f"{where}: {c} holds a control character.")
        for c in REQUIRED:
            if not f[c]:
                raise InputError(f"{where}: {c} is empty (every row needs it).")
        precisions, types = vocabulary()
        if f["precision"] not in precisions:
            raise InputError(f"{where}: precision {f['precision']!r} is not in the precision "
                             f"table ({', '.join(precisions)}).")
        if f["c_type"] and f["c_type"] not in types:
            raise InputError(f"{where}: c_type {f['c_type']!r} is not one of "
                             f"{', '.join(types)}.")
        if f["layout_a"] not in ("mk", "km") or f["layout_b"] not in ("kn", "nk"):
            raise InputError(f"{where}: layouts {f['layout_a']}/{f['layout_b']} are not mk|km and "
                             "kn|nk.")
        if f["use"] not in USES:
            raise InputError(f"{where}: use {f['use']!r} is not fit or held_out.")
        time_us = _positive_float(f.pop("measured_us"), "measured_us", where)
        tflops = _positive_float(f.pop("measured_tflops"), "measured_tflops", where)
        if time_us is None and tflops is None:
            raise InputError(f"{where}: neither measured_us nor measured_tflops is given.")
        dims = {c: _positive_int(f[c], c, where) for c in ("m", "n", "k", "batch")}
        f.update(dims)
        row = Measurement(**f, time_us=time_us, tflops=tflops, file=str(origin), line=line)
        if time_us is not None and tflops is not None:
            implied = row.flops / (time_us * 1e6)
            if abs(implied / tflops - 1) > 0.1:  # the sources round times to a few digits
                raise InputError(f"{where}: measured_us {time_us:g} and measured_tflops {tflops:g} "
                                 "disagree "
                                 f"(the time implies {implied:.1f} TFLOP/s).")
        rows.append(row)
    return rows


def data_files(paths: list[Path] | None = None) -> list[Path]:
    """The CSV files named (a folder means every *.csv in it); default: data/published/."""
    out = []
    for p in paths or [DATA_DIR]:
        if Path(p).is_dir():
            found = sorted(Path(p).glob("*.csv"))
            if not found:
                raise InputError(f"{p} holds no .csv file of published measurements.")
            out += found
        else:
            out.append(Path(p))
    return out


def load(paths: list[Path] | None = None) -> list[Measurement]:
    rows = []
    for path in data_files(paths):
        rows += parse(files.read_text(path, LIMIT, "file of published measurements"), str(path))
    return rows


def check(rows: list[Measurement], peaks: dict[tuple[str, str], float],
          geforce: set[str] = frozenset()) -> list[str]:
    """What is wrong with the rows as data tcbench relies on, one sentence each: a GPU not in
    the peak table (``peaks``: (gpu, precision) -> dense datasheet TFLOP/s, from
    ``tcbench_model gpus``), a rate above the dense peak (GEFORCE_BOOST times it for the
    ``geforce`` GPUs), an id or a measurement given twice."""
    problems = []
    ids: dict[str, Measurement] = {}
    keys: dict[tuple, Measurement] = {}
    gpus = {g for g, _ in peaks}
    for r in rows:
        where = _where(r.file, r.line)
        if r.gpu not in gpus:
            problems.append(f"{where}: GPU {r.gpu!r} is not a name of tcbench's peak table.")
        elif (r.gpu, r.precision) not in peaks:
            problems.append(f"{where}: {r.gpu} has no {r.precision} rate in the peak table.")
        elif r.measured_tflops > peaks[(r.gpu, r.precision)] * (
                GEFORCE_BOOST if r.gpu in geforce else 1.0005):
            limit = " (with GeForce boost)" if r.gpu in geforce else ""
            problems.append(f"{where}: {r.measured_tflops:.1f} TFLOP/s is above {r.gpu}'s dense "
                            f"{r.precision} datasheet peak ({peaks[(r.gpu, r.precision)]:g}"
                            f"{limit}).")
        if r.id in ids:
            first = ids[r.id]
            problems.append(f"{where}: id {r.id!r} is also on {_where(first.file, first.line)}.")
        ids.setdefault(r.id, r)
        key = (r.gpu, r.device, r.precision, r.c_type, r.m, r.n, r.k, r.batch, r.layout_a,
               r.layout_b, r.source)
        if key in keys:
            first = keys[key]
            problems.append(f"{where}: the same measurement as {_where(first.file, first.line)}.")
        keys.setdefault(key, r)
    return problems


@dataclass(frozen=True)
class Pair:
    """A misaligned GEMM and its nearest 16-byte-aligned neighbour of the same sweep."""
    aligned: Measurement
    misaligned: Measurement

    @property
    def slowdown(self) -> float:
        """Aligned over misaligned TFLOP/s (> 1: the misaligned one is slower per FLOP)."""
        return self.aligned.measured_tflops / self.misaligned.measured_tflops

    @property
    def alignment_class(self) -> int:
        return min(self.misaligned.alignment)


def pairs(rows: list[Measurement]) -> list[Pair]:
    """Each misaligned row with its nearest aligned neighbour in the same series: the same GPU,
    precision, layouts and batch, one of M, N, K different by at most PAIR_REACH elements (the
    lower one on a tie), or, in a sweep of squares (M = N = K), the nearest aligned square."""
    groups: dict[tuple, list[Measurement]] = {}
    for r in rows:
        groups.setdefault((r.series, r.model_gpu, r.precision, r.c_type, r.layout_a, r.layout_b,
                           r.batch), []).append(r)
    out = []
    for members in groups.values():
        aligned = [r for r in members if r.aligned]
        for r in members:
            if r.aligned:
                continue
            best = None
            for a in aligned:
                moved = [(d, abs(getattr(a, d) - getattr(r, d))) for d in "mnk"
                         if getattr(a, d) != getattr(r, d)]
                if a.m == a.n == a.k and r.m == r.n == r.k:
                    moved = moved[:1]  # a square's three sides move together
                if len(moved) != 1 or moved[0][1] > PAIR_REACH:
                    continue
                key = (moved[0][1], getattr(a, moved[0][0]))
                if best is None or key < best[0]:
                    best = (key, a)
            if best is not None:
                out.append(Pair(best[1], r))
    return out


def quantile(xs: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)
