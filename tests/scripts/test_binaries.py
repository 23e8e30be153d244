"""The built benchmark binaries speak for themselves, without a GPU: ``--help`` starts with
tcbench's part (what the topic shows, --quick, --clock-policy, the TCBENCH_* variables, the exit
codes, a concept page that exists), then Google Benchmark's; the flags tcbench checks are checked
the same way directly and through ``tcbench run``; and every benchmark a fixture names is one the
binaries list, so that the fixtures cannot drift from the binaries again.

Found like test_schema finds tcbench_context ($TCBENCH_BUILD_DIR in CI, else the newest build).
"""

from __future__ import annotations

import json
import re
import subprocess
from functools import cache
from pathlib import Path

import factory
import pytest

from conftest import FIXTURES, REPO, built_bin_dir, tcbench, topics
from tcbench_tools import schema
from tcbench_tools.names import ANY, BenchName, Query, from_args, one_of, prefix

TOPICS = topics()
# A fixture row whose benchmark no binary lists must be a skip row saying so: its message starts
# with this (a deliberate case, such as a shape the binary never registers).
DELIBERATE = "skipped: fixture:"


def run(binary: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(built_bin_dir() / binary), *args], capture_output=True, text=True,
                          timeout=120)


@cache
def listed(topic: str) -> frozenset[str]:
    """Every name bench_<topic> lists, in the full and the quick suite (without /manual_time)."""
    names = set()
    for quick in ([], ["--quick"]):
        proc = run(f"bench_{topic}", *quick, "--benchmark_list_tests")
        assert proc.returncode == 0, (topic, proc.stderr)
        names |= {line.strip().removesuffix("/manual_time") for line in proc.stdout.splitlines()
                  if line.strip()}
    assert names, topic
    return frozenset(names)


# ---------------------------------------------------------------------------------------------
# --help


@pytest.mark.parametrize("topic", TOPICS)
def test_help_starts_with_what_the_topic_shows_then_google_benchmarks_flags(topic):
    proc = run(f"bench_{topic}", "--help")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    first = text.splitlines()[0]
    assert first == f"bench_{topic} (tcbench)", first
    ours, _, theirs = text.partition("Google Benchmark's own flags:\n")
    assert theirs.lstrip().startswith("benchmark [--benchmark_list_tests"), theirs[:200]
    for needle in ("--quick", "--clock-policy=as-is|base|max", "--benchmark_min_time=S",
                   "TCBENCH_NVML_LIBRARY", "Exit codes: 0", "1 a benchmark failed",
                   "2 usage error", "77 no CUDA GPU"):
        assert needle in ours, (topic, needle)
    page = re.search(r"Concept page: (docs/concepts/[a-z0-9-]+\.md)", ours)
    assert page and (REPO / page.group(1)).is_file(), (topic, page)
    # The topic's own paragraph: several lines of text before the concept page.
    paragraph = ours.split("Concept page:")[0].splitlines()[1:]
    assert len(" ".join(paragraph).split()) >= 25, paragraph
    assert all(len(line) <= 100 for line in ours.splitlines())
    # -h is the same page (it was "unrecognized command-line flag: -h", exit 2).
    assert run(f"bench_{topic}", "-h").stdout == text


def test_each_topic_names_its_own_variables():
    assert "TCBENCH_ALIGNMENT_N=" in run("bench_alignment", "--help").stdout
    for topic in ("tensor_util", "tensor_peak"):
        assert "TCBENCH_COUNTERS=off" in run(f"bench_{topic}", "--help").stdout
    assert "TCBENCH_COUNTERS" not in run("bench_fp16_vs_fp32", "--help").stdout
    sustained = run("bench_sustained", "--help").stdout
    assert "TCBENCH_SUSTAINED_LIMIT_S=60" in sustained and "TCBENCH_IDLE_LIMIT_S=10" in sustained
    # Each topic says something of its own.
    paragraphs = {t: run(f"bench_{t}", "--help").stdout.split("Concept page:")[0] for t in TOPICS}
    assert len(set(paragraphs.values())) == len(TOPICS)


# ---------------------------------------------------------------------------------------------
# Flags: one verdict, directly and through tcbench run


def test_min_time_with_the_seconds_suffix_is_accepted_by_both_tcbench_and_google_benchmark():
    # Google Benchmark 1.7 parses the whole command line even when only listing: "0.5s" reached
    # it and was rejected ("expected to be a double"), exit 2, although tcbench accepted it.
    for value in ("0.5s", "0.5"):
        proc = run("bench_fp16_vs_fp32", f"--benchmark_min_time={value}",
                   "--benchmark_list_tests")
        assert proc.returncode == 0, (value, proc.stderr)
        assert "fp16_vs_fp32/" in proc.stdout
    proc = run("bench_fp16_vs_fp32", "--benchmark_min_time=10x", "--benchmark_list_tests")
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("must be a number of seconds from 0 to 1000000, written "
                                        "like 0.5 or 0.5s.")


def test_an_unknown_time_unit_is_a_usage_error_directly_and_through_run(tmp_path):
    proc = run("bench_loss_scaling", "--benchmark_time_unit=fortnight")
    assert proc.returncode == 2 and proc.stdout == ""  # it printed the usage and exited 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith(
        "--benchmark_time_unit=fortnight must be ns, us, ms or s."), proc.stderr
    through = tcbench("run", "--bin-dir", str(built_bin_dir()), "--bench", "loss_scaling",
                      "--out", str(tmp_path / "run"), "--", "--benchmark_time_unit=fortnight")
    assert through.returncode == 2, (through.stdout, through.stderr)  # it was 1 ("wrote no JSON")
    assert "rejected its arguments" in through.stderr
    assert "must be ns, us, ms or s" in through.stderr


def test_a_known_time_unit_passes(tmp_path):
    proc = run("bench_loss_scaling", "--benchmark_time_unit=ms", "--benchmark_list_tests")
    assert proc.returncode == 0, proc.stderr


# ---------------------------------------------------------------------------------------------
# Fixture names exist


def fixture_documents() -> list[tuple[str, dict]]:
    """Every generated fixture (the full alignment sweeps among them)."""
    return [(p.name, json.loads(p.read_text())) for p in sorted(FIXTURES.glob("*.json"))]


def test_every_benchmark_a_fixture_names_is_one_the_binaries_list():
    by_topic = {t: listed(t) for t in TOPICS}
    drift, deliberate = [], 0
    for source, doc in fixture_documents():
        for row in doc["benchmarks"]:
            name = row["run_name"].removesuffix("/manual_time") if "run_name" in row else \
                row["name"].removesuffix("/manual_time")
            topic = name.split("/", 1)[0]
            if name in by_topic.get(topic, ()):
                continue
            if row.get("error_occurred") and str(row.get("error_message", "")).startswith(
                    DELIBERATE):
                deliberate += 1  # marked: a case no binary registers, on purpose
                continue
            drift.append(f"{source}: {name}")
    assert drift == [], f"{len(drift)} fixture rows name benchmarks no binary lists"
    assert deliberate >= 1  # the marked rows exist (and are the only exemption)


def test_the_check_fails_on_a_name_the_binaries_do_not_list():
    """What the test above catches: the drift the review found (an older unscale size)."""
    assert "loss_scaling/unscale/fp32/elements:10000000" in listed("loss_scaling")
    assert "loss_scaling/unscale/fp32/elements:16777216" not in listed("loss_scaling")
    assert "tensor_util/cupti/fp16/m:4096/n:4096/k:4096/layout:nn" not in listed("tensor_util")


# ---------------------------------------------------------------------------------------------
# The listing as a result file: the schema once, every name's typed arguments


@cache
def listing(topic: str, quick: bool) -> dict:
    proc = run(f"bench_{topic}", *(["--quick"] if quick else []), "--benchmark_list_tests",
               "--benchmark_format=json")
    assert proc.returncode == 0, (topic, proc.stderr)
    return json.loads(proc.stdout)


@pytest.mark.parametrize("topic", TOPICS)
def test_the_json_listing_carries_the_schema_and_each_names_typed_arguments(topic):
    """Every binary, without a GPU: --benchmark_list_tests --benchmark_format=json is the
    listing as a result file (tcbench_schema once, the shipped one; tcbench_args per row, which
    build its name), the same names as the text listing; and the tests' own mirror of the
    arguments (factory.args_of, which their documents use) agrees with the C++ on every one."""
    shipped = json.loads(schema.SCHEMA_FILE.read_text())
    for quick in (False, True):
        doc = listing(topic, quick)
        assert doc["context"][schema.CONTEXT_KEY] == shipped
        names = [row["name"] for row in doc["benchmarks"]]
        text = run(f"bench_{topic}", *(["--quick"] if quick else []), "--benchmark_list_tests")
        assert names == [line.removesuffix("/manual_time") for line in text.stdout.split()]
        for row in doc["benchmarks"]:
            args = row[schema.ARGS_KEY]
            assert str(BenchName.of(from_args(args))) == row["name"]
            assert args == factory.args_of(row["name"]), row["name"]
            for key in args.keys() - set(schema.NAME_FIELDS):
                want = int if schema.shipped().key(key).type == "integer" else str
                assert type(args[key]) is want, (row["name"], key)


# What the quick and full suites must hold, asked of the listing's arguments (a query per case,
# as the answers ask): (topic, quick, how many, query).
LISTED = [
    # bench_alignment: the 32/33 pair of all five precisions in their own layout, through cuBLAS
    # too (fp8 is cuBLASLt-only), and the attention-shaped strided batches, both APIs.
    ("alignment", True, 5, Query("alignment", "cublaslt", one_of("fp16", "bf16", "tf32", "int8",
                                                               "fp8"),
                                 {"m": 4096, "n": 33, "k": 4096, "layout": one_of("nn", "tn"),
                                  "batch": None})),
    ("alignment", True, 4, Query("alignment", "cublas", one_of("fp16", "bf16", "tf32", "int8"),
                                 {"m": 4096, "n": 33, "k": 4096, "layout": one_of("nn", "tn")})),
    ("alignment", True, 8, Query("alignment", one_of("cublas", "cublaslt"), "fp16",
                                 {"m": 128, "n": 128, "k": one_of(64, 65), "layout": "nn",
                                  "batch": one_of(32, 33)})),
    ("alignment", False, 16, Query("alignment", one_of("cublas", "cublaslt"),
                                   one_of("fp16", "bf16"),
                                   {"m": 128, "n": one_of(64, 65), "k": 128, "layout": "nn",
                                    "batch": one_of(64, 65)})),
    # bench_fp16_vs_fp32: cuBLAS beside cuBLASLt, every precision, at each quick shape.
    ("fp16_vs_fp32", True, 15, Query("fp16_vs_fp32", "cublas",
                                     one_of("fp32", "tf32", "fp16", "fp16_acc16", "bf16"),
                                     {"m": one_of(256, 1024, 2048), "n": ANY, "k": ANY,
                                      "layout": "nn"})),
    # bench_fp8: the accumulator's bit detection lists every path (cuBLASLt fast and split, the
    # three FP8 kernels and the two 16-bit controls) without a GPU, --quick included.
    ("fp8", True, 7, Query("fp8", prefix("accum_bits_"), ANY, {})),
    # bench_sustained: a burst and a sustained row per headline GEMM, in --quick too (where they
    # skip with one sentence).
    ("sustained", True, 10, Query("sustained", "cublaslt",
                                  one_of("bf16", "fp16", "tf32", "fp8", "int8"),
                                  {"m": 8192, "n": 8192, "k": 8192, "layout": one_of("nn", "tn"),
                                   "regime": one_of("burst", "sustained")})),
    # bench_tensor_util: the whole-step rows (2 widths x fp16, bf16, tf32, fp32).
    ("tensor_util", True, 8, Query("tensor_util", "train_step", one_of("fp16", "bf16", "tf32",
                                                                     "fp32"),
                                   {"hidden": one_of(64, 4096), "tokens": one_of(256, 4096)})),
]


@pytest.mark.parametrize("topic,quick,count,query", LISTED,
                         ids=[f"{t}-{'quick' if q else 'full'}-{n}" for t, q, n, _ in LISTED])
def test_the_suites_hold_the_rows_the_questions_need(topic, quick, count, query):
    rows = [from_args(r[schema.ARGS_KEY]) for r in listing(topic, quick)["benchmarks"]]
    assert sum(1 for r in rows if query.matches(r)) == count


def test_sustained_lists_bf16_first():
    """gpu_check's budget reaches the first rows of bench_sustained first: BF16's pair."""
    rows = [from_args(r[schema.ARGS_KEY]) for r in listing("sustained", False)["benchmarks"]]
    assert [(r.precision, r.args.get("regime")) for r in rows[:2]] == [("bf16", "burst"),
                                                                      ("bf16", "sustained")]


def test_the_binaries_are_the_topics():
    assert TOPICS and all((built_bin_dir() / f"bench_{t}").is_file() for t in TOPICS)
    assert Path(built_bin_dir()).is_dir()
