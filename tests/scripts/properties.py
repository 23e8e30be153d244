"""The shared pieces of the property-based tests (test_properties_*.py, Hypothesis).

The property every reader of outside input keeps, whatever the input: the command ends with a
result or with one sentence and a documented exit code; never a traceback, exit 70 (a bug in the
tools), a hang (``time_limit`` per example), a Python warning on the terminal, or output that
carries a control character; a page written as HTML, or Markdown, never carries markup from the
input.

Profiles (docs/ci.md): ``ci``, the default, runs a fixed, small number of examples per test,
derandomized (the same inputs on every run, so that CI is repeatable) and without an example
database; ``thorough`` (``TCBENCH_HYPOTHESIS=thorough``) runs 25 times as many, randomized, and
keeps the failing examples it finds in ``.hypothesis/`` (git-ignored) to try first next time.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import signal
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

from conftest import FIXTURES, REPO

PROFILE_VARIABLE = "TCBENCH_HYPOTHESIS"
PROFILE = os.environ.get(PROFILE_VARIABLE, "ci")
_SCALE = {"ci": 1, "thorough": 25}
if PROFILE not in _SCALE:
    raise SystemExit(f"{PROFILE_VARIABLE}={PROFILE!r} is neither ci nor thorough")
_COMMON = dict(deadline=None, print_blob=True,  # the time limit is time_limit's, below
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                      HealthCheck.data_too_large, HealthCheck.filter_too_much,
                                      HealthCheck.large_base_example])
settings.register_profile("ci", derandomize=True, database=None, **_COMMON)
settings.register_profile("thorough", derandomize=False,
                          database=DirectoryBasedExampleDatabase(str(REPO / ".hypothesis")),
                          **_COMMON)
settings.load_profile(PROFILE)

HANG_S = 30.0  # one example that runs longer than this is a hang


def examples(n: int) -> int:
    """The number of examples a test runs: n in the ci profile, 25 n in the thorough one."""
    return n * _SCALE[PROFILE]


# ---------------------------------------------------------------------------------------------
# A time limit per example, and the tools run in-process


class Hang(BaseException):
    """Raised by time_limit (a BaseException: the CLI's catch-all must not turn it into 70)."""


@contextlib.contextmanager
def time_limit(seconds: float = HANG_S):
    def alarm(signum, frame):
        raise Hang(f"still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    warned: list[str]


def run_cli(*argv: object, seconds: float = HANG_S) -> Outcome:
    """``tcbench ARGV`` in this process, within ``seconds``: its exit code, its stdout and
    stderr, and the Python warnings it would have printed (RuntimeWarning, UserWarning, ...;
    deprecations are hidden outside __main__ and so not counted)."""
    from tcbench_tools.cli import main

    return run_cli_main(main, [str(a) for a in argv], seconds)


def run_cli_main(main, argv: list[str], seconds: float = HANG_S) -> Outcome:
    """As run_cli, for any command line's main(argv) (gpu_check's)."""
    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with time_limit(seconds), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse's usage errors
                code = exc.code if isinstance(exc.code, int) else 2
    shown = [f"{w.category.__name__}: {w.message}" for w in caught
             if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning))]
    return Outcome(code, out.getvalue(), err.getvalue(), shown)


def printable_text(text: str) -> bool:
    """Nothing a terminal would act on: every character printable, or a line break."""
    return all(ch == "\n" or ch.isprintable() for ch in text)


def check(o: Outcome, codes: set[int], what: object = "", prefix: str = "tcbench") -> None:
    """The property: a documented exit code (never 70), no traceback, no warning, no control
    character, and a refusal (exit 2) ends in one sentence on stderr (``prefix: ...``)."""
    where = f"{what}: exit {o.code}; stdout {o.out[-600:]!r}; stderr {o.err[-600:]!r}"
    assert o.code in codes and o.code != 70, where
    assert "Traceback" not in o.out + o.err, where
    assert not o.warned, (o.warned, where)
    assert printable_text(o.out) and printable_text(o.err), where
    if o.code == 2:
        lines = [ln for ln in o.err.splitlines() if ln.strip()]
        assert lines, where
        assert lines[-1].startswith(prefix) and lines[-1].rstrip().endswith(
            (".", ")")), where
        assert sum(ln.startswith(f"{prefix}: ") for ln in lines) <= 1, where


# The markup of NASTY below, which only the input can have brought (the pages have images and
# scripts of their own).
RAW_MARKUP = ("<img src=x", "onerror=alert", "<script>alert", "javascript:alert")


def check_html(path: Path) -> None:
    """An HTML page made from hostile input carries none of its markup."""
    text = path.read_text(errors="replace")
    for raw in RAW_MARKUP:
        assert raw not in text, (path, raw)


# Raw HTML and links in Markdown (the escaping rule: docs/comparing-gpus.md, "Text from result
# files is shown as text"): what a viewer would render from the input.
RAW_MARKDOWN = ("<img", "<script", "</script", "](javascript:")


def check_markdown(path: Path) -> None:
    """A Markdown document made from hostile input: printable, and none of its markup raw."""
    text = path.read_text(errors="replace")
    assert printable_text(text), path
    for raw in RAW_MARKDOWN:
        assert raw not in text.lower(), (path, raw, [ln for ln in text.splitlines()
                                                     if raw in ln.lower()][:3])


def workdir(root: Path) -> Path:
    """A fresh folder for one example (the test's tmp_path is shared by all its examples)."""
    return Path(tempfile.mkdtemp(dir=root))


# ---------------------------------------------------------------------------------------------
# Hostile values

# Characters and strings that broke a reader or a writer somewhere once.
NASTY = ["\x00", "\x1b[2K\r", "\x1b]0;x\x07", "\r", "\n", "\t", "\x7f", "\x85", "\u202e",
         "\u2028", "\ufeff", "\ud800", "\udfff", "\U0001f600", "<img src=x onerror=alert(1)>",
         "</script><script>alert(1)</script>", "|", "`", "\\", "%s", "{0}", "'", '"', "../",
         "/etc/passwd", "..", "$(id)", "[x](javascript:alert(1))", "&amp;", "²", "٣", "1_0",
         " ", "", "nan", "-0", "1e400", "0x10"]

hostile_text = st.one_of(
    st.sampled_from(NASTY),
    st.text(max_size=12),
    st.lists(st.sampled_from(NASTY) | st.text(max_size=4), max_size=5).map("".join),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF,
                                   categories=["Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Lu"]),
            max_size=6),
)

json_leaf = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(2 ** 70), max_value=2 ** 70), st.just(10 ** 400),
    st.floats(allow_nan=True, allow_infinity=True), hostile_text)

json_value = st.recursive(json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(hostile_text, inner, max_size=3)), max_leaves=8)


def mostly(good, bad):
    """``good`` about nine times in ten (one_of alone does not weigh its branches so): most
    generated inputs get past the first check to the code behind it."""
    return st.sampled_from([True] * 9 + [False]).flatmap(lambda ok: good if ok else bad)


def dump(doc: object, how: str) -> bytes:
    """A JSON document as a file's bytes: as json writes it, or with its non-ASCII characters
    raw (lone surrogates then become bytes that are not UTF-8), with a byte order mark, or cut
    short."""
    if how == "ascii":
        return json.dumps(doc).encode()
    text = json.dumps(doc, ensure_ascii=False)
    data = text.encode("utf-8", "surrogatepass")
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "cut":
        return data[: max(1, len(data) * 2 // 3)]
    return data


# ---------------------------------------------------------------------------------------------
# Result files: a real file of the binaries, changed a few times


TEMPLATES = ("gpu_a_single.json", "tensor_util_nocounters.json", "int8_gemm_a.json")
_DOCS = {name: json.loads((FIXTURES / name).read_text()) for name in TEMPLATES}
CONTEXT_KEYS = ["gpu_name", "compute_capability", "date", "tcbench_version", "tcbench_quick",
                "git_sha", "gpu_uuid", "peak_fp16", "peak_source", "sm_clock_mhz",
                "tcbench_binaries", "tcbench_sources", "tcbench_lost_binaries",
                "tcbench_failed_binaries", "tcbench_incomplete", "driver_version", "host_name",
                "throttle_reasons", "num_cpus", "library_build_type", "tcbench_kind"]
ROW_KEYS = ["name", "run_name", "run_type", "repetitions", "repetition_index", "real_time",
            "cpu_time", "time_unit", "iterations", "aggregate_name", "aggregate_unit",
            "error_occurred", "error_message", "skipped", "skip_message", "tflops", "tops",
            "gbps", "pct_of_peak", "rel_error", "spread_pct", "sm_clock_mhz", "throttle",
            "family_index", "per_family_instance_index", "threads"]
DATES = ["0001-01-01T00:00:00", "9999-12-31T23:59:59+14:00", "2026-02-30T00:00:00",
         "2026-01-01T00:00:00Z", "1999-12-31T23:59:59-12:00", "2026-01-01T00:00:00+23:59"]


@st.composite
def result_doc(draw) -> object:
    doc = copy.deepcopy(_DOCS[draw(st.sampled_from(TEMPLATES))])
    rows, ctx = doc["benchmarks"], doc["context"]
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["ctx", "ctx", "ctx_del", "row", "row", "row_del", "dup",
                                     "drop", "rename", "date", "top"]))
        row = rows[draw(st.integers(0, len(rows) - 1))] if rows else {}
        if kind == "ctx":
            ctx[draw(st.sampled_from(CONTEXT_KEYS) | hostile_text)] = draw(json_value)
        elif kind == "ctx_del" and ctx:
            ctx.pop(draw(st.sampled_from(sorted(ctx))), None)
        elif kind == "row":
            row[draw(st.sampled_from(ROW_KEYS) | hostile_text)] = draw(json_value)
        elif kind == "row_del" and row:
            row.pop(draw(st.sampled_from(sorted(row))), None)
        elif kind == "dup" and rows:
            rows.append(copy.deepcopy(row))
        elif kind == "drop" and rows:
            rows.remove(row)
        elif kind == "rename" and row:
            new = draw(hostile_text)
            row["name"] = row["run_name"] = draw(st.sampled_from(
                [new, f"{row.get('run_name')}{new}", f"fp16_vs_fp32/{new}/manual_time"]))
            row.pop("tcbench_args", None)  # as an older file's row
        elif kind == "date":
            ctx["date"] = draw(st.sampled_from(DATES) | hostile_text)
        elif kind == "top":
            return draw(st.sampled_from([[], "x", None, {"context": ctx}, {"benchmarks": rows},
                                         {"context": [], "benchmarks": rows},
                                         {"context": ctx, "benchmarks": {}}]) | json_value)
    return doc


@st.composite
def result_bytes(draw) -> bytes:
    how = draw(st.sampled_from(["ascii", "ascii", "ascii", "raw", "raw", "bom", "cut", "bytes"]))
    if how == "bytes":
        return draw(st.binary(max_size=64))
    return dump(draw(result_doc()), how)
