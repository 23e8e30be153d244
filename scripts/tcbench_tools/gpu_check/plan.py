"""The check's plan: its steps as rows, in tiers, each with its predicted seconds.

    tier 1  the five answers first: the quick-suite rows that each question's declared evidence
            matches (``Question.evidence``, scripts/tcbench_tools/answers/rules.py), plus the
            Tensor Core peaks; one invocation per binary (a filter naming exactly those rows),
            then the answers, written at once
    tier 2  the device tests, one step per binary
    tier 3  the rest of the quick suite (each tier-1 binary again with the negated filter), most
            valuable first, then cuBLASLt at 8192^3 beside torch.matmul; a binary's burst and
            sustained rows (--quick skips them) are one step without --quick: the cuBLASLt BF16
            pair only, its sustained search limited so that the step takes at most 30 s
    closing the GPU's state after the run and the answers from everything

A binary is listed once (``--quick --benchmark_list_tests``, ``--gtest_list_tests``; no GPU
needed), and its listing fixes its rows in each tier; a binary that crashes, hangs, prints nothing
or something that is not benchmark names while listing is a step with that outcome, and the plan
goes on without it. Standard library only.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass, field
from pathlib import Path

from tcbench_tools import process
from tcbench_tools.gpu_check import cost
from tcbench_tools.names import ANY, BenchName, Query, one_of, parse
from tcbench_tools.printable import printable

PEAKS_WHY = "the measured Tensor Core peaks"
# Tier 3, most valuable first: what adds most to the answers, then the rest. A binary not named
# here (a new topic) comes after these, by name.
TIER3_ORDER = ("bench_tensor_util",    # Q3: whole training steps, nested CUPTI ranges
               "bench_fp8",            # Q5: the layers, recipes and formats
               "bench_block_scaling",  # Q5: what finer scales cost
               "torch",                # the harness against torch.matmul (same cuBLASLt GEMM)
               "bench_int8_gemm",      # Q1: small batches, the MLP, the quantization kernels
               "bench_alignment",      # Q4: every precision, cuBLAS, batched heads, padding
               "bench_loss_scaling",   # Q2: where gradients land, the unscale pass
               "bench_tensor_peak",    # mma.sync, the other tcgen05 kinds, the CTA pairs
               "bench_fp16_vs_fp32")   # the precision ladder
# Tier 2: the wgmma and CUPTI device tests first (their code already ran in tier 1; these check
# it exactly), then the rest by name.
TIER2_FIRST = ("device_test_tensor_peak", "device_profiling_test_range_profiler")
TORCH_SIZE = 8192
TORCH_MIN_TIME = "0.2"  # seconds of samples per cuBLASLt row beside torch's 20 samples
LIST_TIMEOUT = 30.0
MAX_NAMED = 5  # unpriced names the plan shows
# Burst and sustained rows (issue 47): --quick skips them; tier 3 runs the cuBLASLt BF16 pair
# without --quick, in at most REGIME_BUDGET seconds (its step's limit). Each idle is capped at
# 4 s (the idle rule needs 2 s), the sustained search at 13 s: 2 s start-up + 5.2 s burst + 20.3 s
# sustained = 27.5 s worst case (cost.regime_row_seconds), 29.5 s if start-up takes twice as long.
REGIME_ROWS = Query(args={"regime": one_of("burst", "sustained")})
REGIME_CHECKED = Query(variant="cublaslt", precision="bf16", args={"regime": ANY})
REGIME_BUDGET = 30.0
REGIME_LIMIT_S = 13  # TCBENCH_SUSTAINED_LIMIT_S for that step
REGIME_IDLE_S = 4  # TCBENCH_IDLE_LIMIT_S for that step
NAME_LINE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:+/-]*$")

# Seconds the model gives what is not a benchmark row (the rest is cost.py's).
DEVICE_TEST_SECONDS = 0.35  # per GoogleTest test: bit-exact kernels on small inputs
TORCH_SECONDS = 12.0  # import torch with CUDA, then 2 x (warm-up + 20 samples) at 8192^3
STATE_SECONDS = 1.5  # the nvidia-smi queries of one GPU state record
ANSWERS_SECONDS = 8.0  # the host studies (tcbench_studies) and the five answers


@dataclass
class Step:
    name: str  # unique: what the summary shows and the log file is named after
    kind: str  # state | tests | listing | bench | regime | device | cublaslt | torch | answers
    tier: int  # 0 before the tiers, 1-3, 4 closing
    binary: Path | None = None
    filter: str | None = None
    rows: list[str] = field(default_factory=list)  # the benchmarks it will run (bench)
    tests: int | None = None  # GoogleTest tests (device)
    why: str = ""  # what it is for (tier 1)
    predicted: float = 0.0
    status: str = "pending"
    note: str = ""
    seconds: float | None = None
    begin: float | None = None  # epoch seconds (steps.tsv)
    end: float | None = None
    limit: float | None = None
    finished_rows: list[str] = field(default_factory=list)
    never_ran: list[str] = field(default_factory=list)
    unpriced: list[str] = field(default_factory=list)  # rows the cost model could not price
    env: dict[str, str] = field(default_factory=dict)  # what its process gets beside the check's
    cap: float | None = None  # its own time limit, when the plan fixes one (the regime step)

    @property
    def file_stem(self) -> str:
        """Its log's and results' file name: the name with every run of other characters than
        [A-Za-z0-9_.-] made one '-' ("GPU state before" -> GPU-state-before,
        "bench_fp8 [t1]" -> bench_fp8.t1)."""
        text = re.sub(r" \[t(\d)\]$", r".t\1", self.name)
        return re.sub(r"[^A-Za-z0-9_.^-]+", "-", text).strip("-")

    @property
    def done(self) -> bool:
        return self.status not in ("pending", "RUNNING")


@dataclass
class Listing:
    names: list[str]
    problem: str | None = None  # the outcome when it could not be listed: CRASHED (SIGSEGV) ...
    detail: str = ""


def classify_exit(code: int | None) -> str | None:
    """The outcome word of a process that did not exit 0: None for 0."""
    if code is None:
        return "TIMEOUT"
    if code == 0:
        return None
    if code < 0:
        return f"CRASHED ({signal_name(-code)})"
    return f"FAILED (exit {code})"


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def list_binary(binary: Path, args: list[str], is_name, env: dict | None = None) -> Listing:
    """The names ``binary args`` prints, or why there are none (one outcome word and detail);
    `env`: the steps' environment (their library path)."""
    try:
        done = process.capture([str(binary), *args], LIST_TIMEOUT, env=env)
    except OSError as exc:
        return Listing([], "NOT RUNNABLE", exc.strerror or str(exc))
    text = done.output.decode("utf-8", errors="replace")
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    last = lines[-1][:200] if lines else ""
    word = classify_exit(done.code)
    if word == "TIMEOUT":
        return Listing([], "TIMEOUT", f"still listing after {LIST_TIMEOUT:g} s")
    if word is not None:
        return Listing([], word, f"while listing; last output: {last}" if last else "while listing")
    names = [ln.strip() for ln in lines if is_name(ln)]
    if not lines:
        return Listing([], "NO OUTPUT", "it listed nothing")
    if not names:
        return Listing([], "GARBAGE OUTPUT", f"its listing is not benchmark names: {last!r}")
    return Listing(names)


def bench_name(line: str) -> bool:
    return bool(NAME_LINE.match(line.strip())) and "/" in line


def list_benchmarks(binary: Path, env: dict | None = None) -> Listing:
    got = list_binary(binary, ["--quick", "--benchmark_list_tests"], bench_name, env)
    got.names = [n.removesuffix("/manual_time") for n in got.names]
    return got


def list_tests(binary: Path, env: dict | None = None) -> Listing:
    """GoogleTest's listing: "Suite." lines, then "  Test" lines (a comment may follow)."""
    got = list_binary(binary, ["--gtest_list_tests"], lambda ln: ln.startswith("  "), env)
    if got.problem == "GARBAGE OUTPUT" or got.problem == "NO OUTPUT":
        # Something that is no GoogleTest listing: run it anyway (its own run says more).
        return Listing([], None, "")
    return got


def tier1_queries() -> list[tuple[str, str, Query]]:
    """What tier 1 runs, as (why, key, query): each question's declared evidence, then the peaks
    (answers/rules.py declares both)."""
    from tcbench_tools.answers import QUESTIONS, rules

    out = [(f"{q.id.upper()}: {q.title}", key, query)
           for q in QUESTIONS for key, query in q.evidence.items()]
    return out + [(PEAKS_WHY, key, query) for key, query in rules.PEAK_EVIDENCE.items()]


@dataclass
class Tier1:
    """What tier 1 takes of one binary's listing."""

    rows: list[str]  # the listed names some query matches, in listed order
    whys: list[str]  # the questions (and the peaks) they are for, in query order
    hit: set[tuple[str, str]]  # the (why, key) of every query that matched a row


def tier1_of(names: list[str], queries: list[tuple[str, str, Query]] | None = None) -> Tier1:
    """The rows of one listing that tier 1 runs: those a query of ``tier1_queries`` matches."""
    queries = tier1_queries() if queries is None else queries
    got = Tier1([], [], set())
    for name in names:
        found = [(why, key) for why, key, q in queries if q.matches(parse(name))]
        if found:
            got.rows.append(name)
            got.hit.update(found)
    got.whys = list(dict.fromkeys(why for why, key, _ in queries if (why, key) in got.hit))
    return got


def name_filter(rows: list[str]) -> str:
    """The benchmark filter (POSIX ERE) that matches exactly `rows`: '.' is the one character
    with a meaning there that a benchmark name can hold."""
    return "^(" + "|".join(r.replace(".", "[.]") for r in rows) + ")/manual_time$"


def matches(pattern: str, name: str) -> bool:
    """tcbench's filter on a listed name (Python's re accepts the tier patterns' ERE)."""
    negate = pattern.startswith("-")
    found = re.search(pattern[1:] if negate else pattern, name + "/manual_time") is not None
    return found != negate


@dataclass
class Plan:
    steps: list[Step]
    model: cost.Model
    listings: dict[str, Listing]
    # Tier-1 queries (why, key) that match no listed row although every binary listed: a
    # declaration that names rows no binary has (render says so).
    unmatched: list[tuple[str, str]] = field(default_factory=list)

    def tier(self, n: int) -> list[Step]:
        return [s for s in self.steps if s.tier == n]

    def predicted(self, steps: list[Step] | None = None) -> float:
        return sum(s.predicted for s in (self.steps if steps is None else steps))

    def replan(self) -> None:
        """The steps not yet run, predicted again with what the model has learned."""
        for s in self.steps:
            if s.status == "pending":
                s.predicted = predict(self.model, s)


def predict(model: cost.Model, s: Step) -> float:
    if s.kind in ("bench", "cublaslt"):
        if not s.rows:
            return model.process_start if s.binary is not None else 0.0
        return cost.step_seconds(model, s.rows, unpriced=s.unpriced)
    if s.kind == "regime":
        return cost.regime_step_seconds(model, s.rows, REGIME_LIMIT_S, REGIME_IDLE_S)
    if s.kind == "device":
        return model.process_start + DEVICE_TEST_SECONDS * (s.tests if s.tests else 10)
    if s.kind == "torch":
        return TORCH_SECONDS
    if s.kind == "state":
        return STATE_SECONDS
    if s.kind == "answers":
        return ANSWERS_SECONDS
    return 0.0


def binaries(bin_dir: Path, prefix: str) -> list[Path]:
    """The bin_dir entries named prefix*: programs, not bench_test_* (the harness's host tests)
    nor files with an extension."""
    if not bin_dir.is_dir():
        return []
    return sorted(p for p in bin_dir.glob(prefix + "*")
                  if not p.suffix and not p.name.startswith("bench_test_") and not p.is_dir())


def make_plan(bin_dir: Path, model: cost.Model, *, device_tests: bool, stop_after: int = 3,
              out: Path | None = None, recorded: dict[str, list[str]] | None = None,
              env: dict | None = None) -> Plan:
    """Every step after the GPU record (and a source tree's build): the three tiers and the
    closing. Lists every binary once, with `env` (the steps' environment); writes each listing
    to out/plan/<binary>.txt.
    ``recorded``: {binary: its quick list, or a device test's test names} to plan with instead of
    listing binaries that are not built (``--plan`` on a fresh clone, a run without a GPU)."""
    steps: list[Step] = []
    listings: dict[str, Listing] = {}
    benches = (binaries(bin_dir, "bench_") if recorded is None
               else [bin_dir / name for name in sorted(recorded) if name.startswith("bench_")])
    for b in benches:
        listings[b.name] = (list_benchmarks(b, env) if recorded is None
                            else Listing(recorded[b.name]))
        if out is not None:
            (out / "plan").mkdir(parents=True, exist_ok=True)
            (out / "plan" / f"{b.name}.txt").write_text("".join(n + "\n" for n in
                                                                listings[b.name].names))
    # Tier 1: the rows each question's evidence matches, one step per binary.
    queries, hit, tier1 = tier1_queries(), set(), {}
    for b in benches:
        if listings[b.name].problem:
            continue
        got = tier1_of(listings[b.name].names, queries)
        hit |= got.hit
        if got.rows:
            tier1[b.name] = name_filter(got.rows)
            steps.append(Step(f"{b.name} [t1]", "bench", 1, b, tier1[b.name], got.rows,
                              why="; ".join(got.whys)))
    unmatched = ([(why, key) for why, key, _ in queries if (why, key) not in hit]
                 if not any(got.problem for got in listings.values()) else [])
    if steps:
        steps.append(Step("answers (tier 1)", "answers", 1, why="the five answers from tier 1"))
    # Tier 2.
    if device_tests:
        devices = (binaries(bin_dir, "device_") if recorded is None
                   else [bin_dir / name for name in sorted(recorded) if name.startswith("device_")])
        first = [d for n in TIER2_FIRST for d in devices if d.name == n]
        for d in first + [d for d in devices if d not in first]:
            got = list_tests(d, env) if recorded is None else Listing(recorded[d.name])
            tests = len(got.names) if not got.problem else None
            step = Step(d.name, "device", 2, d, tests=tests)
            if got.problem:
                step.status, step.note = got.problem, got.detail
            steps.append(step)
    # Tier 3, most valuable first; binaries that could not be listed are named here.
    order = {name: i for i, name in enumerate(TIER3_ORDER)}
    ranked = sorted([*benches, "torch"], key=lambda b: (
        order.get(b if isinstance(b, str) else b.name, len(order)), str(b)))
    for b in ranked:
        if b == "torch":
            steps += torch_steps(bin_dir, recorded)
            continue
        listing = listings[b.name]
        if listing.problem:
            steps.append(Step(b.name, "bench", 3, b, status=listing.problem, note=listing.detail))
            continue
        if b.name in tier1:
            pattern = "-" + tier1[b.name]
            rows = [n for n in listing.names if matches(pattern, n)]
            if rows:
                steps.append(Step(f"{b.name} [t3]", "bench", 3, b, pattern, rows))
        else:
            regime = [n for n in listing.names if REGIME_ROWS.matches(parse(n))]
            rest = [n for n in listing.names if n not in regime]
            if rest:
                steps.append(Step(f"{b.name} [t3]", "bench", 3, b,
                                  "-" + name_filter(regime) if regime else None, rest))
            steps += regime_steps(b, regime)
    steps.append(Step("GPU state after", "state", 4))
    steps.append(Step("answers", "answers", 4, why="the five answers from every step"))
    for s in steps:
        if s.status == "pending" and 0 < s.tier < 4 and s.tier > stop_after:
            s.status, s.note = "NOT STARTED", f"--tier {stop_after}"
        s.predicted = predict(model, s)
    return Plan(steps, model, listings, unmatched)


def regime_steps(binary: Path, names: list[str]) -> list[Step]:
    """The burst and sustained step of a binary whose listing has `names` of them: the cuBLASLt
    BF16 ones, without --quick, their idle and sustained search limited, REGIME_BUDGET at most."""
    rows = [n for n in names if REGIME_CHECKED.matches(parse(n))]
    if not rows:
        return []
    return [Step(f"{binary.name} [t3]", "regime", 3, binary, name_filter(rows), rows,
                 why="burst and sustained, cuBLASLt BF16",
                 env={"TCBENCH_SUSTAINED_LIMIT_S": str(REGIME_LIMIT_S),
                      "TCBENCH_IDLE_LIMIT_S": str(REGIME_IDLE_S)}, cap=REGIME_BUDGET)]


def torch_steps(bin_dir: Path, recorded: dict[str, list[str]] | None = None) -> list[Step]:
    """cuBLASLt at 8192^3 (bf16, fp16) from bench_fp16_vs_fp32, then torch.matmul (planned from
    the recorded lists too: the box's PyTorch decides only whether they run)."""
    binary = bin_dir / "bench_fp16_vs_fp32"
    if not (binary.is_file() if recorded is None else binary.name in recorded):
        return []
    topic, size = binary.name.removeprefix("bench_"), TORCH_SIZE
    rows = [str(BenchName(topic, "cublaslt", p).gemm(size, size, size, "nn"))
            for p in ("bf16", "fp16")]
    return [Step(f"cuBLASLt {TORCH_SIZE}^3 (for torch)", "cublaslt", 3, binary,
                 name_filter(rows), rows),
            Step(f"torch.matmul {TORCH_SIZE}^3", "torch", 3)]


def render(plan: Plan) -> list[str]:
    """The plan per tier, for --plan and the summary's head."""
    m = plan.model
    lines = [f"-- plan ({m.gpu.name}; per-sample overhead {m.overhead_flush * 1e6:.0f} us with the "
             f"L2 flush, {m.overhead_plain * 1e6:.0f} us without"
             + (f", learned from {m.learned_from} rows, medians x{m.speed:.2f} the model"
                if m.learned_from else ", assumed")
             + f"; start-up {m.process_start:.1f} s per binary"
             + (f", learned from {m.starts_seen} starts" if m.starts_seen else ", assumed") + "):"]
    titles = {1: "tier 1: the five answers first", 2: "tier 2: the device tests",
              3: "tier 3: the rest of the quick suite, most valuable first",
              4: "closing: the GPU's state after, the answers"}
    for t in (1, 2, 3, 4):
        steps = plan.tier(t)
        if not steps:
            continue
        rows = sum(len(s.rows) for s in steps)
        tests = sum(s.tests or 0 for s in steps)
        what = ", ".join(x for x in (f"{rows} benchmarks" if rows else "",
                                     f"{tests} tests" if tests else "") if x)
        lines.append(f"   {titles[t]}: {len(steps)} steps{', ' + what if what else ''}, "
                     f"{plan.predicted(steps):.0f} s")
    lines.append(f"   whole check: {plan.predicted():.0f} s planned")
    if plan.unmatched:
        lines.append(f"   tier 1: {len(plan.unmatched)} declared evidence quer(ies) match no "
                     "listed row (answers/rules.py): "
                     + ", ".join(f"{why} ({key})" for why, key in plan.unmatched))
    unpriced = [(s.name, n) for s in plan.steps for n in s.unpriced]
    if unpriced:
        shown = ", ".join(f"{printable(n)} ({step})" for step, n in unpriced[:MAX_NAMED])
        more = f" and {len(unpriced) - MAX_NAMED} more" if len(unpriced) > MAX_NAMED else ""
        lines.append(f"   {len(unpriced)} listed name(s) the cost model cannot price, planned at "
                     f"{cost.UNPRICED_SECONDS:g} s each: {shown}{more}")
    return lines
