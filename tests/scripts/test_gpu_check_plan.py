"""The check's plan (tcbench_tools.gpu_check.plan, cost.py) without a GPU: that tier 1 is enough for
every GPU verdict, the targets the cost model holds the real quick suite to on an H200, Google
Benchmark's sizing as the model counts it, and what learning from a step changes.

The quick lists are the real binaries' (data/gpu_check/quick_lists.json; checked against a
build's binaries when there is one). Synthetic rows, not measurements.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import answers_data as data
from conftest import built_bin_dir, fixture
from gpu_check_standins import (
    REPO,
    add_bench,
    device_tests,
    make_bundle,
    quick_lists,
    recorded_device_tests,
    verdict_rows,
    write_exec,
)
from tcbench_tools.answers import NOT_MEASURED, rules
from tcbench_tools.gpu_check import cost, plan
from tcbench_tools.results import parse_doc


def tier1_rows() -> dict[str, list[str]]:
    got = {b: plan.tier1_of(names).rows for b, names in quick_lists().items()}
    return {b: rows for b, rows in got.items() if rows}


def test_the_quick_lists_fixture_is_what_the_binaries_list():
    try:
        bin_dir = built_bin_dir()
    except pytest.skip.Exception:
        pytest.skip("no build with the benchmark binaries")
    regenerate = f"regenerate the fixture: python3 tests/scripts/gpu_check_standins.py {bin_dir}"
    for binary, names in quick_lists().items():
        got = plan.list_benchmarks(bin_dir / binary)
        assert got.problem is None, (binary, got.detail)
        assert got.names == names, f"{binary}: {regenerate}"
    built = sorted(p.name for p in bin_dir.glob("device_*") if not p.suffix)
    assert built == sorted(recorded_device_tests()), regenerate
    for binary, names in recorded_device_tests().items():
        assert device_tests(bin_dir / binary) == names, f"{binary}: {regenerate}"


def recorded_plan(**kw) -> plan.Plan:
    lists = {**quick_lists(), **recorded_device_tests()}
    return plan.make_plan(REPO / "build" / "no-binaries", cost.Model(), device_tests=True,
                          recorded=lists, **kw)


GPU_FIELDS = ("gpu", "source", "compute_capability", "sm_count", "peak_gbps", "peak_tflops")


def binaries_plan(bin_dir: Path) -> dict:
    """What every benchmark binary's `--quick --plan=H200` prints, as cost.PLAN_FILE holds it."""
    import json
    import os

    head, bounds = None, {}
    for binary in plan.binaries(bin_dir, "bench_"):
        out = subprocess.run([str(binary), "--quick", "--plan=H200"], capture_output=True,
                             text=True, timeout=60, check=True).stdout.splitlines()
        first = json.loads(out[0])
        assert head is None or {k: first[k] for k in GPU_FIELDS} == head, binary
        head = {k: first[k] for k in GPU_FIELDS}
        assert first["rows"] == len(out) - 1, binary
        bounds.update((row["name"], row["median_s"]) for row in map(json.loads, out[1:]))
    doc = {"gpu": head, "median_s": bounds}
    if os.environ.get("TCBENCH_UPDATE_PLAN") == "1":
        cost.PLAN_FILE.write_text(json.dumps(doc, indent=1) + "\n")
    return doc


def test_the_recorded_h200_plan_is_what_the_binaries_print():
    """The cost model's H200 (peaks, SMs, bandwidth) and each quick row's median bound come from
    the binaries' --plan=H200 (cost.PLAN_FILE); no peak is copied by hand."""
    import json

    try:
        bin_dir = built_bin_dir()
    except pytest.skip.Exception:
        pytest.skip("no build with the benchmark binaries")
    recorded = json.loads(cost.PLAN_FILE.read_text())
    assert binaries_plan(bin_dir) == recorded, "TCBENCH_UPDATE_PLAN=1 rewrites it"
    assert set(recorded["median_s"]) == {n for names in quick_lists().values() for n in names}
    assert cost.H200.peak["fp16"] == recorded["gpu"]["peak_tflops"]["fp16"] > 0


def test_the_real_binaries_take_each_tier_1_filter_and_list_exactly_its_rows():
    try:
        bin_dir = built_bin_dir()
    except pytest.skip.Exception:
        pytest.skip("no build with the benchmark binaries")
    for step in plan.make_plan(bin_dir, cost.Model(), device_tests=False).steps:
        if step.kind in ("bench", "regime") and step.filter and step.binary is not None:
            out = subprocess.run([str(step.binary), "--quick", "--benchmark_list_tests",
                                  f"--benchmark_filter={step.filter}"], capture_output=True,
                                 text=True, timeout=60, check=True).stdout.split()
            assert [n.removesuffix("/manual_time") for n in out] == step.rows, step.name


def test_answers_datas_gpu_rows_are_rows_the_binaries_list():
    """answers_data builds its names from the rules' parts: each GPU one is a row of the full
    suite (a renamed key or variant would fail here, not pass on a name no binary has)."""
    try:
        bin_dir = built_bin_dir()
    except pytest.skip.Exception:
        pytest.skip("no build with the benchmark binaries")
    made = (data.int8_gpu() + data.loss_gpu() + data.tensor_util(small=(1.0, 2.0))
            + data.train_steps() + data.alignment_gpu(cublas=(1.0, 2.0), heads=(1.0, 2.0))
            + data.fp8_gpu())
    names = {r["run_name"].removesuffix("/manual_time") for r in made}
    listed = set()
    for topic in sorted({n.split("/", 1)[0] for n in names}):
        out = subprocess.run([str(bin_dir / f"bench_{topic}"), "--benchmark_list_tests"],
                             capture_output=True, text=True, timeout=60, check=True).stdout
        listed |= {n.removesuffix("/manual_time") for n in out.split()}
    assert sorted(names - listed) == []


def test_tier_1_is_small_and_its_filters_name_exactly_its_rows():
    rows = tier1_rows()
    # 25 rows for the five answers and the peaks, 5 for the FP8 accumulator's bit detection
    assert sum(len(v) for v in rows.values()) <= 30
    made = recorded_plan()
    assert made.unmatched == []  # every declared query matches a quick row
    # Each tier-1 filter matches its rows and no other; the tier-3 filter is the negation:
    # together they are the whole quick list, once.
    for step in made.tier(1):
        if step.binary is None:
            continue
        names = quick_lists()[step.binary.name]
        assert [n for n in names if plan.matches(step.filter, n)] == step.rows
        rest = [n for n in names if plan.matches("-" + step.filter, n)]
        assert sorted(rest + step.rows) == sorted(names), step.name


def test_tier_1_is_the_union_of_the_questions_evidence(monkeypatch):
    """Tier 1 follows from the declarations: Q5's query for the accumulator's bit detection
    (issue 46) brings exactly the rows it matches into bench_fp8's tier-1 step; without it they
    go back to tier 3 and nothing else moves."""
    with_bits = {s.name: s.rows for s in recorded_plan().tier(1)}
    q5 = {key: q for key, q in rules.Q5_EVIDENCE.items() if key != "accum_bits"}
    monkeypatch.setitem(rules.EVIDENCE, "q5", q5)
    without = {s.name: s.rows for s in recorded_plan().tier(1)}
    added = [n for n in quick_lists()["bench_fp8"] if n.startswith("fp8/accum_bits_")
             and n.split("/")[2] == "fp8"]
    assert len(added) == 5  # cuBLASLt fast and split, mma.sync, wgmma, tcgen05 (not the controls)
    assert sorted(with_bits.pop("bench_fp8 [t1]")) == sorted(without.pop("bench_fp8 [t1]") + added)
    assert with_bits == without


def test_a_query_that_matches_no_listed_row_is_named_in_the_plan(monkeypatch):
    from tcbench_tools.names import Query

    q5 = dict(rules.Q5_EVIDENCE, typo=Query(rules.FP8, "gemm_e4m3xe4m3_bf17"))
    monkeypatch.setitem(rules.EVIDENCE, "q5", q5)
    made = recorded_plan()
    assert made.unmatched == [("Q5: FP8 with per-tensor scaling", "typo")]
    text = "\n".join(plan.render(made))
    assert "1 declared evidence quer(ies) match no listed row" in text and "(typo)" in text


def test_the_guides_tier_1_table_is_generated_from_the_declarations():
    from tcbench_tools import next_steps

    block = "\n".join(next_steps.tier1_block(REPO)) + "\n"
    text = (REPO / "docs" / "gpu-check.md").read_text()
    assert block in text, "paste next_steps.tier1_block into docs/gpu-check.md"
    assert text.count(next_steps.TIER1_BEGIN) == 1


def test_tier_1_rows_alone_give_every_gpu_half_a_verdict():
    """The rows tier 1 runs, with synthetic values (answers_data), are all each GPU rule needs:
    no half says "not measured"."""
    wanted = {n for names in tier1_rows().values() for n in names}
    rows = [data.row(name, **extra) for name, extra in verdict_rows(wanted).items()]
    got = {r["name"] for r in rows}
    # The rules' evidence is a subset of tier 1; every rule then decides.
    rs = parse_doc(data.doc(data.GPU_CONTEXT, rows))
    for qid, rule in rules.GPU_RULES.items():
        answer = rule(rs)
        assert answer.verdict != NOT_MEASURED, (qid, answer.why, sorted(got))


def model_totals(model: cost.Model | None = None) -> dict[str, float]:
    model = model or cost.Model()
    lists, t1 = quick_lists(), tier1_rows()
    tier1 = sum(cost.step_seconds(model, rows) for rows in t1.values())
    rest = sum(cost.step_seconds(model, [n for n in names if n not in t1.get(b, [])])
               for b, names in lists.items())
    devices = sum(model.process_start + plan.DEVICE_TEST_SECONDS * len(tests)
                  for tests in recorded_device_tests().values())
    closing = plan.STATE_SECONDS * 2 + plan.ANSWERS_SECONDS * 2
    torch = cost.step_seconds(model, ["fp16_vs_fp32/cublaslt/bf16/m:8192/n:8192/k:8192/layout:nn",
                                      "fp16_vs_fp32/cublaslt/fp16/m:8192/n:8192/k:8192/layout:nn"])
    return {"tier1": tier1, "quick": tier1 + rest,
            "whole": tier1 + rest + devices + closing + torch + plan.TORCH_SECONDS}


def test_the_model_keeps_an_h200_check_inside_its_targets():
    """Issue 30: tier 1 <= 120 s, the quick suite <= 300 s, the whole check <= 420 s, with the
    assumed per-sample overhead; and still within the budget (450 s) if that overhead is twice
    what the model assumes."""
    t = model_totals()
    assert t["tier1"] <= 120 and t["quick"] <= 300 and t["whole"] <= 420, t
    slow = cost.Model(overhead_flush=100e-6, overhead_plain=25e-6)
    assert model_totals(slow)["whole"] <= 450, model_totals(slow)


def test_body_calls_are_google_benchmarks_sizing():
    # The counts tests/bench/test_measure_windows.cpp checks against libbenchmark 1.7.1.
    assert [cost.Model.body_calls(m) for m in (10e-6, 0.9e-3, 6e-3)] == [5, 3, 2]
    assert cost.Model.body_calls(1.0) == 1


def test_a_window_is_at_least_ten_samples_and_at_most_ten_thousand():
    m = cost.Model()
    assert m.samples(1.0) == 10 and m.samples(1e-9) == 10_000
    assert m.samples(1e-4) == 500  # 0.05 s / 100 us
    # 10 us with the flush: 5000 samples x 60 us, plus the warm-up.
    assert m.window(10e-6) == pytest.approx(0.05 + 5000 * 60e-6)


def test_learning_from_a_step_moves_the_overhead_toward_what_it_measured():
    m = cost.Model()
    rows = [{"name": f"x/cublaslt/fp16/m:4096/n:{n}/k:4096/layout:nn", "samples": 5000,
             "time_median_us": 10.0} for n in (32, 64)]
    predicted = cost.step_seconds(m, [r["name"] for r in rows])
    # The step took 0.5 s more than the model: 10,000 samples, 50 us more each.
    m.learn(rows, predicted + 0.5, predicted)
    assert 50e-6 < m.overhead_flush < 100e-6
    assert m.learned_from == 2
    before = m.overhead_flush
    m.learn(rows, 0.0, predicted)  # a step that took no time at all moves it down, bounded
    assert cost.OVERHEAD_RANGE[0] <= m.overhead_flush < before


def test_plan_lists_each_binary_once_and_names_one_that_hangs(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    add_bench(bundle, "bench_int8_gemm", quick_lists()["bench_int8_gemm"])
    write_exec(bundle / "bin" / "bench_hangs", "#!/bin/sh\nsleep 100\n")
    plan.LIST_TIMEOUT, saved = 2.0, plan.LIST_TIMEOUT
    try:
        p = plan.make_plan(bundle / "bin", cost.Model(), device_tests=True, out=tmp_path)
    finally:
        plan.LIST_TIMEOUT = saved
    by = {s.name: s for s in p.steps}
    assert by["bench_hangs"].status == "TIMEOUT" and "still listing" in by["bench_hangs"].note
    assert len(by["bench_int8_gemm [t1]"].rows) == 2 and len(by["bench_int8_gemm [t3]"].rows) == 37
    assert (tmp_path / "plan" / "bench_int8_gemm.txt").read_text().count("\n") == 39


def test_gpu_check_plan_prints_the_tiers_without_a_gpu(tmp_path: Path):
    bundle = make_bundle(tmp_path / "with space")
    for binary, names in quick_lists().items():
        add_bench(bundle, binary, names)
    proc = subprocess.run([str(bundle / "scripts" / "gpu_check.sh"), "--plan"],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={"PATH": "/usr/bin:/bin", "TCBENCH_PYTHON": sys.executable})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    rows = sum(len(v) for v in tier1_rows().values())
    for needle in (f"tier 1: the five answers first: 7 steps, {rows} benchmarks",
                   "tier 3: the rest of the quick suite, most valuable first",
                   "bench_fp8 [t1]", "answers (tier 1)", "torch.matmul 8192^3",
                   "the quick suite (tiers 1 and 3's benchmarks):"):
        assert needle in out, out
    assert out.index("answers (tier 1)") < out.index("bench_tensor_util [t3]")


def test_each_gpu_refuses_the_peaks_it_lacks_at_once():
    """Issue 37: the model costs a tensor_peak row as a skip where the kernel does not exist
    (kernels/tensor_peak_table.cu's rule): wgmma off 9.0, tcgen05 off 10.0/10.3 (.kind::i8 off
    10.0), mma.sync's FP8/FP6/FP4 kinds off 12.x; everything else is measured."""
    from dataclasses import replace

    from tcbench_tools.names import parse

    def skipped(cc: tuple[int, int]) -> set[str]:
        gpu = replace(cost.H200, cc=cc)
        return {n.removeprefix("tensor_peak/") for n in quick_lists()["bench_tensor_peak"]
                if cost.skipped_on(gpu, parse(n))}

    hopper, b200, b300, rtx = skipped((9, 0)), skipped((10, 0)), skipped((10, 3)), skipped((12, 0))
    tcgen05 = {n for n in quick_lists()["bench_tensor_peak"] if "/tcgen05_" in n}
    assert len(tcgen05) == 24
    assert {f"tensor_peak/{n}" for n in hopper} >= tcgen05
    assert not any(n.startswith("wgmma_") for n in hopper)
    assert not any(n.startswith("tcgen05_") for n in b200)
    assert {n for n in b300 if n.startswith("tcgen05_")} == {"tcgen05_i8_m128n256k32/int8",
                                                            "tcgen05_2cta_i8_m256n256k32/int8"}
    assert "wgmma_m64n256k16/fp16" in b200 and "mma_m16n8k32/fp8" in b200
    assert not any(n.startswith(("mma_f8f6f4_", "mma_mx")) for n in rtx)
    assert "mma_f8f6f4_e2m1_m16n8k32/fp4" in b200 and "mma_m16n8k16/fp16" not in b200


UNPRICEABLE = ["alpha/cublaslt/fp16/m:4096/n:0/k:4096/layout:nn",
               "alpha/cublaslt/fp16/m:1e400/n:64/k:64/layout:nn"]


def test_a_listed_name_the_model_cannot_price_is_planned_at_a_default_and_named(tmp_path: Path):
    """n:0 and m:1e400 made --plan and the whole check end in a traceback before any step."""
    names = ["alpha/cublaslt/fp16/m:64/n:64/k:64/layout:nn", *UNPRICEABLE]
    made = plan.make_plan(tmp_path, cost.Model(), device_tests=False,
                          recorded={"bench_alpha": names})
    step = next(s for s in made.steps if s.name == "bench_alpha [t3]")
    assert step.unpriced == UNPRICEABLE
    assert step.predicted == pytest.approx(cost.step_seconds(cost.Model(), names[:1])
                                           + 2 * cost.UNPRICED_SECONDS)
    shown = "\n".join(plan.render(made))
    assert ("2 listed name(s) the cost model cannot price, planned at 0.2 s each: "
            f"{UNPRICEABLE[0]} (bench_alpha [t3]), {UNPRICEABLE[1]} (bench_alpha [t3])") in shown
    bundle = make_bundle(tmp_path / "box")
    add_bench(bundle, "bench_alpha", names)
    env = {"PATH": "/usr/bin:/bin", "TCBENCH_PYTHON": sys.executable}
    proc = subprocess.run([str(bundle / "scripts" / "gpu_check.sh"), "--plan"], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0 and "cannot price" in proc.stdout, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


def test_plan_works_on_a_fresh_clone_from_the_lists_run_uses(tmp_path: Path):
    """`gpu_check.sh --plan` said "no benchmark binaries" and exited 2 on a fresh clone, while
    `tcbench run` printed figures from the recorded lists: both plan from them now."""
    from tcbench_tools import next_steps

    clone = tmp_path / "fresh clone"
    for part in ("scripts", "data"):
        shutil.copytree(REPO / part, clone / part,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy2(REPO / "CMakeLists.txt", clone / "CMakeLists.txt")
    proc = subprocess.run([str(clone / "scripts" / "gpu_check.sh"), "--plan"], capture_output=True,
                          text=True, timeout=60, check=False,
                          env={"PATH": "/usr/bin:/bin", "TCBENCH_PYTHON": sys.executable})
    assert proc.returncode == 0, proc.stderr
    planned = next_steps.plan(REPO)
    t1, t2, t3 = planned.tiers[1], planned.tiers[2], planned.tiers[3]
    for needle in (f"tier 1: the five answers first: {t1[0]} steps, {t1[1]} benchmarks, "
                   f"{t1[2]:.0f} s", f"tier 2: the device tests: {t2[0]} steps, {t2[1]} tests, "
                   f"{t2[2]:.0f} s", f"tier 3: the rest of the quick suite, most valuable first: "
                   f"{t3[0]} steps, {t3[1]} benchmarks, {t3[2]:.0f} s",
                   f"whole check: {planned.whole:.0f} s planned",
                   "the lists recorded in data/gpu_check/quick_lists.json", "torch.matmul 8192^3"):
        assert needle in proc.stdout, proc.stdout
    assert not (clone / "build").exists()


def test_readme_and_the_guide_show_the_plans_figures_from_one_generated_block():
    """They said 254 vs 292 s, 22 vs 24 rows, 21.7 vs 23.1 MiB; the bundle has 25 binaries."""
    from tcbench_tools import next_steps

    block = "\n".join(next_steps.plan_block(REPO)) + "\n"
    for doc in ("README.md", "docs/gpu-check.md"):
        text = (REPO / doc).read_text()
        assert block in text, f"{doc}: paste `scripts/gpu_check.sh --plan --markdown`"
        assert text.count(next_steps.BLOCK_BEGIN) == 1
    facts = next_steps.bundle_facts(REPO)
    assert facts and facts["binaries"] == 25 and 0 < facts["bytes"] <= 40 * 2**20
    assert "Measured: " in block and f"{facts['bytes'] / 2**20:.1f} MiB" in block


def test_the_device_call_fits_one_600_s_call_with_a_minute_to_spare():
    """The documented call is the whole call (execute bits, the outer limit, the archive, the
    exit status; box.txt and summary.txt come beside the archive), and by the plan it ends 60 s
    or more before 600 s even when every binary starts twice as slowly as the model assumes."""
    from tcbench_tools import next_steps
    from tcbench_tools.gpu_check import box

    call = next_steps.device_command()
    text = "\n".join(call)
    for part in ('chmod -R u+x "$B/bin" "$B/scripts"', "timeout -s TERM -k 15 540 sh",
                 '--archive "$OUT/gpu-check.tgz"', 'echo "gpu_check rc=$?" >>"$OUT/console.txt"'):
        assert part in text, text
    assert 540 + 15 <= 600 - 45  # the hard bound: SIGKILL at 555 s
    planned = next_steps.plan(REPO)
    assert planned.whole_slow_start + box.BOX_LIMIT <= 600 - 60, planned
    assert planned.whole_slow_start <= 450  # inside the check's own budget too
    guide = (REPO / "docs" / "gpu-check.md").read_text()
    assert "```sh\n" + text + "\n```" in guide
    assert all(line in "\n".join(next_steps.lines(REPO)) for line in call)


def test_the_model_prices_the_gpus_own_rows_once_a_result_names_it():
    """The plan was always the H200's: a B200's tcgen05 and MX rows were priced as instant
    skips. A result file's context (what the binary read from the device) gives the GPU's row."""
    import json

    from tcbench_tools.names import parse

    context = json.loads(fixture("tensor_peak_ladder_b.json").read_text())["context"]
    gpu = cost.gpu_from_context(context)
    assert gpu is not None and gpu.cc == (10, 0) and gpu.sms == 148
    assert gpu.peak["fp4"] == 9000.0 and gpu.dram_gbps == pytest.approx(8183.8)
    b200 = cost.with_gpu(cost.Model(), gpu)
    tcgen05 = "tensor_peak/tcgen05_f16_m128n256k16/fp16"
    assert cost.row_cost(cost.Model(), tcgen05).own == 0.01  # the H200 skips it
    assert cost.row_cost(b200, tcgen05).own > 0.05  # the B200 runs it
    assert cost.row_cost(b200, "tensor_peak/wgmma_m64n256k16/fp16").own == 0.01
    mx = next(n for n in quick_lists()["bench_block_scaling"] if "/gemm_mx" in n)
    assert cost.skipped_on(cost.H200, parse(mx)) and not cost.skipped_on(gpu, parse(mx))
    assert cost.gpu_from_context({"gpu_name": "x"}) is None  # not enough: the model stays


def test_per_process_start_up_is_learned_from_the_steps():
    m = cost.Model()
    rows = [{"name": "x/cublaslt/fp16/m:4096/n:64/k:4096/layout:nn", "samples": 500,
             "time_median_us": 100.0}]
    predicted = cost.step_seconds(m, [r["name"] for r in rows])
    m.learn(rows, predicted + 4.0, predicted, startup=6.0)  # 4 s more than assumed, all start-up
    assert m.process_start == pytest.approx(4.0) and m.starts_seen == 1
    assert m.overhead_flush == pytest.approx(50e-6, rel=0.3)  # not booked as sample overhead
    m.learn(rows, predicted + 4.0, predicted, startup=6.0)
    assert m.process_start == pytest.approx((4.0 * 2 + 6.0) / 3)


def test_every_sampled_baseline_is_cached_per_configuration():
    """A sample_work call outside once<> is sampled again on each of Google Benchmark's sizing
    calls (alignment's pad_to copy was, 5 times per row); the cost model counts one window per
    configuration."""
    import re

    offenders = []
    for path in [*(REPO / "benchmarks").glob("*.cpp"), *(REPO / "common" / "bench" / "src").glob(
            "*.cpp")]:
        text = path.read_text()
        opens = [m.end() - 1 for m in re.finditer(r"\bonce<[^>]*>\(", text)]

        def closing(i: int) -> int:
            depth = 0
            for j in range(i, len(text)):
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                if depth == 0:
                    return j
            return len(text)

        spans = [(i, closing(i)) for i in opens]
        for call in re.finditer(r"\bsample_work\(", text):
            at = call.start()
            defined = text.rfind("\n", 0, at) < at and text[text.rfind("\n", 0, at) + 1:at] \
                .startswith("SampleStats ")
            if not defined and not any(a < at < b for a, b in spans):
                offenders.append(f"{path.name}:{text.count(chr(10), 0, at) + 1}")
    assert not offenders, offenders


def test_tier_3_runs_the_bf16_burst_and_sustained_pair_without_quick_within_30_s():
    """--quick skips every burst and sustained row: tier 3 runs them in a step of their own,
    without --quick, its filter naming exactly the cuBLASLt BF16 pair of the recorded listing,
    its sustained search limited, priced at its worst case (<= 30 s, even when the binary starts
    twice as slowly) and capped there."""
    from tcbench_tools.gpu_check.run import Check, Options

    made = recorded_plan()
    listed = quick_lists()["bench_sustained"]
    [step] = [s for s in made.steps if s.binary is not None and s.binary.name == "bench_sustained"]
    assert (step.tier, step.kind, step.name) == (3, "regime", "bench_sustained [t3]")
    bf16 = [n for n in listed if n.startswith("sustained/cublaslt/bf16/")]
    assert [n.rsplit("/", 1)[1] for n in bf16] == ["regime:burst", "regime:sustained"]
    assert step.rows == bf16
    assert [n for n in listed if plan.matches(step.filter, n)] == bf16
    assert step.env == {"TCBENCH_SUSTAINED_LIMIT_S": str(plan.REGIME_LIMIT_S),
                        "TCBENCH_IDLE_LIMIT_S": str(plan.REGIME_IDLE_S)}
    assert step.predicted <= step.cap == plan.REGIME_BUDGET == 30
    # The worst case by hand: start-up, then each row's setup and idle (its cap, at most the
    # limit), the burst, and the sustained load up to the limit with its 2 s window.
    limit = plan.REGIME_LIMIT_S
    idle = min(plan.REGIME_IDLE_S, limit) + 0.1
    assert step.predicted == pytest.approx(2.0 + (1 + idle + 0.1) + (1 + idle + limit + 2.2))
    slow = cost.Model(process_start=2 * cost.Model().process_start)
    assert plan.predict(slow, step) <= 30
    check = Check(Options(out=Path(".")), REPO)
    assert check.own_limit(step) == 30
    cmd = check.bench_command(step, Path("x.json"), quick=False)
    assert not any(a.startswith(("--quick", "--benchmark_min_time")) for a in cmd), cmd
    # Where it is listed, the tier-3 steps run no other regime row (they would only skip).
    for s in made.tier(3):
        if s.kind == "bench":
            assert not any("/regime:" in n for n in s.rows), s.name


def test_a_binary_with_other_rows_beside_its_regime_rows_runs_them_quick_without_those():
    names = ["x/cublaslt/bf16/m:8192/n:8192/k:8192/layout:nn/regime:burst",
             "x/cublaslt/bf16/m:8192/n:8192/k:8192/layout:nn/regime:sustained",
             "x/cublaslt/fp16/m:8192/n:8192/k:8192/layout:nn/regime:sustained",
             "x/cublaslt/fp16/m:256/n:256/k:256/layout:nn"]
    made = plan.make_plan(REPO / "build" / "no-binaries", cost.Model(), device_tests=False,
                          recorded={"bench_x": names})
    quick, regime = [s for s in made.tier(3) if s.binary is not None]
    assert (quick.kind, quick.rows, regime.kind, regime.rows) == ("bench", names[3:], "regime",
                                                                  names[:2])
    assert [n for n in names if plan.matches(quick.filter, n)] == names[3:]
