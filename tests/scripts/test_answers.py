"""tcbench answers: every rule of docs/concepts/answers.md gives each verdict it can give on result
documents built for it (answers_data.py), the JSON has the promised shape, the real host studies
(tcbench_studies) give the verdicts the concept pages state, and the no-GPU run prints them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import answers_data as ad
from conftest import REPO, write
from tcbench_tools import published, schema
from tcbench_tools.answers import CAVEAT, FAILS, HOLDS, NOT_MEASURED, answer_all, render, rules
from tcbench_tools.names import BenchName, from_args
from tcbench_tools.results import parse_doc


def host(rows):
    return parse_doc(ad.doc(ad.HOST_CONTEXT, rows))


def gpu(rows, **context):
    return parse_doc(ad.doc({**ad.GPU_CONTEXT, **context}, rows))


# --- Q1 --------------------------------------------------------------------------------------

def test_q1_host_every_verdict():
    assert rules.q1_host(host(ad.int8_study(worst=93.8))).verdict == HOLDS
    caveat = rules.q1_host(host(ad.int8_study()))
    assert caveat.verdict == CAVEAT and "ptq_max loses 1.20 points" in caveat.caveats[0]
    assert rules.q1_host(host(ad.int8_study(best=92.0, worst=91.0, qat=92.5))).verdict == FAILS
    missing = rules.q1_host(host([]))
    assert missing.verdict == NOT_MEASURED and "int8" in missing.why


def test_q1_gpu_every_verdict():
    assert rules.q1_gpu(gpu(ad.int8_gpu())).verdict == HOLDS
    small = rules.q1_gpu(gpu(ad.int8_gpu(mlp_speedup=0.7)))
    assert small.verdict == CAVEAT and "32 tokens" in small.caveats[0]
    # 1.03x with 2 % spread on each side: within the noise band.
    slow = rules.q1_gpu(gpu(ad.int8_gpu(speedup=1.015)))
    assert slow.verdict == FAILS and "within the noise" in slow.caveats[-1]
    assert rules.q1_gpu(gpu(ad.int8_gpu(label="HMMA int8->fp32"))).verdict == FAILS
    assert rules.q1_gpu(gpu([])).verdict == NOT_MEASURED


# --- Q2 --------------------------------------------------------------------------------------

def test_q2_host_every_verdict():
    assert rules.q2_host(host(ad.loss_host(static=1.05))).verdict == HOLDS
    assert rules.q2_host(host(ad.loss_host())).verdict == CAVEAT  # static 2^10 still x2.6
    assert rules.q2_host(host(ad.loss_host(noscale=1.2))).verdict == FAILS  # nothing underflowed
    assert rules.q2_host(host(ad.loss_host(dynamic=3.0))).verdict == FAILS  # scaling did not help
    bf16 = rules.q2_host(host(ad.loss_host(static=1.05, bf16=1.5)))
    assert bf16.verdict == CAVEAT and "BF16" in bf16.caveats[0]
    assert rules.q2_host(host([])).verdict == NOT_MEASURED


def test_q2_gpu_uses_the_gpus_own_losses():
    a = rules.q2_gpu(gpu(ad.loss_gpu()))
    assert a.verdict == HOLDS
    assert any(e.metric == "final_loss_vs_fp32" and e.value == pytest.approx(400.0)
               for e in a.evidence)
    assert "2.5 %" in a.notes[-1]  # the unscale pass's cost qualifies no verdict: a note
    assert rules.q2_gpu(gpu(ad.loss_gpu(noscale=1.5))).verdict == FAILS


# --- Q3 --------------------------------------------------------------------------------------

def test_q3_every_verdict():
    assert rules.q3_gpu(gpu(ad.tensor_util())).verdict == CAVEAT  # Hopper's sub-pipe note
    assert rules.q3_gpu(gpu(ad.tensor_util(), compute_capability="8.0")).verdict == HOLDS
    rough = rules.q3_gpu(gpu(ad.tensor_util(peaks=(55.0, 25.0, 88.0, 80.0)),
                             compute_capability="8.0"))
    assert rough.verdict == CAVEAT and "roughly (rank correlation 0.60)" in rough.caveats[0]
    assert rules.q3_gpu(gpu(ad.tensor_util(simt=20.0))).verdict == FAILS
    # One Tensor Core row separates the paths but cannot show tracking: a caveat, not a
    # refutation (SIMT and WMMA only: test_answers_evidence.py).
    few = rules.q3_gpu(gpu([ad.tensor_util()[0], ad.tensor_util()[4]], compute_capability="8.0"))
    assert few.verdict == CAVEAT and "only 1 Tensor Core row(s)" in few.caveats[0]
    refused = rules.q3_gpu(gpu(ad.tensor_util(counters=False)))
    assert refused.verdict == NOT_MEASURED and "INSUFFICIENT_PRIVILEGES" in refused.why


def test_q3_small_gemm_caveat_only_when_it_reads_busier_than_it_runs():
    ampere = {"compute_capability": "8.0"}
    busy = rules.q3_gpu(gpu(ad.tensor_util(small=(40.0, 4.0)), **ampere))
    assert busy.verdict == CAVEAT and "40 % busy pipes at 4 % of peak" in busy.caveats[0]
    assert rules.q3_gpu(gpu(ad.tensor_util(small=(3.0, 1.5)), **ampere)).verdict == HOLDS


def test_q3_whole_steps_say_what_share_is_not_tensor_work():
    ampere = {"compute_capability": "8.0"}
    a = rules.q3_gpu(gpu(ad.tensor_util() + ad.train_steps(), **ampere))
    assert a.verdict == CAVEAT
    assert ("a whole FP16 training step (hidden 4096) reads 58 % busy tensor pipes: 27 % of its "
            "time is unscale, optimizer and gaps" in a.caveats[0])
    assert "its GEMMs would reach 75 %" in a.caveats[0]
    ffma = rules.q3_gpu(gpu(ad.tensor_util() + ad.train_steps(ffma=9.0), **ampere))
    assert any("FP32 (FFMA) training step reads 9 %" in c for c in ffma.caveats)
    flat = rules.q3_gpu(gpu(ad.tensor_util() + ad.train_steps(wide_fp16=(10.0, 480.0)), **ampere))
    assert any("does not rise with TFLOP/s from hidden 64 to 4096" in c for c in flat.caveats)
    # The step rows never enter the GEMM rows' rank correlation.
    assert rules.q3_gpu(gpu(ad.tensor_util(), **ampere)).verdict == HOLDS


def test_spearman_matches_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    xs, ys = [1.0, 5.0, 3.0, 3.0, 9.0, 2.0], [2.0, 7.0, 1.0, 4.0, 8.0, 3.0]
    assert rules.spearman(xs, ys) == pytest.approx(scipy_stats.spearmanr(xs, ys).statistic)


# --- Q4 --------------------------------------------------------------------------------------

def test_q4_host_the_published_pairs_decide_and_the_model_covers_the_rest():
    """With data/published/'s pairs (every A100 misaligned GEMM slower, the RTX 4090's odd squares
    not): holds with a caveat; the caveats say where 33 loses (published, per GPU), and that a
    batch in no leading dimension has only the model (no measurement) to go on."""
    a = rules.q4_host(host(ad.alignment_model(nt=(65.6, 49.4))))
    assert a.verdict == CAVEAT
    assert a.basis.startswith("model (no measurement) and published measurements (A100 SXM, "
                              "RTX 4090; EleutherAI/cookbook@e6b8f2b, pytorch/pytorch#181718)")
    # The one-line caveat gives both halves: where 33 loses (published, per GPU), and where the
    # model alone says it does not (issue 43 §5); no parenthesis in it.
    assert a.caveats[0].startswith(
        "33 loses where it is a leading dimension on most of these GPUs: 392 of 396 published "
        "GEMMs that broke the 16-byte rule ran slower than their aligned neighbour, A100 SXM 392 "
        "of 392 and RTX 4090 0 of 4, median x")
    assert a.caveats[0].endswith(
        "; as a batch in no leading dimension it does not, by the GEMM time model alone: 33 at "
        "67.7 against 32 at 65.6 useful TFLOP/s on h100_sxm")
    assert "(" not in a.caveats[0]
    assert "no published pair varies only a batch" in a.caveats[1]
    assert a.caveats[2].startswith("the published pairs' median slowdown by alignment: ")
    assert "layout:nt" in a.caveats[3] and "x0.75" in a.caveats[3]
    assert any(e.metric == "share slower misaligned" and e.value == 392 / 396
               and e.unit == "fraction" for e in a.evidence)
    # No model rows: the published pairs still decide, and the caveat says the case is open.
    alone = rules.q4_host(host([]))
    assert alone.verdict == CAVEAT and "not decided here" in alone.caveats[0]


def test_q4_host_without_published_data_the_model_decides(monkeypatch):
    monkeypatch.setattr(rules, "_published_pairs", list)
    assert rules.q4_host(host(ad.alignment_model())).verdict == FAILS  # 33 >= 32 per FLOP
    assert rules.q4_host(host(ad.alignment_model(t33=50.0))).verdict == HOLDS
    assert rules.q4_host(host(ad.alignment_model())).basis == "model (no measurement)"
    assert rules.q4_host(host([])).verdict == NOT_MEASURED


def test_q4_host_published_pairs_that_do_not_lose_refute_it(monkeypatch):
    rows = published.load()
    fake = [published.Pair(p.misaligned, p.aligned) for p in published.pairs(rows)]  # swapped
    monkeypatch.setattr(rules, "_published_pairs", lambda: fake)
    assert rules.q4_host(host(ad.alignment_model())).verdict == FAILS


def test_q5_host_cites_the_best_shape_table():
    a = rules.q5_host(host(ad.fp8_study()))
    assert "published measurements (B200, H100 SXM" in a.basis
    ratios = {e.source.split(": ")[1]: e.value for e in a.evidence
              if e.metric == "FP8 / BF16 best rate"}
    assert abs(ratios["mamf-fp8-H100_SXM / mamf-bf16-H100_SXM"] - 1402.6 / 794.5) < 1e-9
    assert abs(ratios["mamf-fp8-B200 / mamf-bf16-B200"] - 3432.5 / 1745.0) < 1e-9
    assert any("x1.77 on H100 SXM" in n for n in a.notes)


def test_q4_gpu_every_verdict():
    assert rules.q4_gpu(gpu(ad.alignment_gpu(t33=80.0))).verdict == HOLDS
    nt = rules.q4_gpu(gpu(ad.alignment_gpu()))
    assert nt.verdict == CAVEAT and "layout:nt" in " ".join(nt.caveats)
    assert "FP8 refuses N = 33" in nt.caveats[-1]
    none = rules.q4_gpu(gpu(ad.alignment_gpu(nt33=89.5, fp8_skip=False)))
    assert none.verdict == FAILS and "within the noise" in none.caveats[0]
    assert rules.q4_gpu(gpu([])).verdict == NOT_MEASURED


def test_q4_gpu_asks_cublas_too():
    both = rules.q4_gpu(gpu(ad.alignment_gpu(t33=80.0, cublas=(100.0, 79.0))))
    assert both.verdict == HOLDS and both.notes[1] == "so does cuBLAS (cublasGemmEx): x0.79"
    assert any(e.source == "alignment/cublas/fp16/m:4096/n:33/k:4096/layout:nn" and e.value == 79.0
               for e in both.evidence)
    lt_only = rules.q4_gpu(gpu(ad.alignment_gpu(t33=80.0, cublas=(100.0, 100.5))))
    assert lt_only.verdict == CAVEAT and "cuBLASLt's heuristic only" in lt_only.caveats[0]
    heads = rules.q4_gpu(gpu(ad.alignment_gpu(t33=80.0, heads=(50.0, 40.0))))
    assert heads.notes[1] == "in the batched sense too: 33 heads of 128x128x64 (cublaslt): x0.80"
    even = rules.q4_gpu(gpu(ad.alignment_gpu(t33=80.0, heads=(50.0, 51.0))))
    assert not any("batched" in c for c in even.caveats + even.notes)
    lost = rules.q4_gpu(gpu(ad.alignment_gpu(nt33=89.5, fp8_skip=False, cublas=(100.0, 70.0))))
    assert lost.verdict == CAVEAT and "cuBLAS (cublasGemmEx): x0.70" in lost.caveats[0]


# --- Q5 --------------------------------------------------------------------------------------

def test_q5_host_every_verdict():
    assert rules.q5_host(host(ad.fp8_study(saturated_steps=0))).verdict == HOLDS
    assert rules.q5_host(host(ad.fp8_study())).verdict == CAVEAT
    assert rules.q5_host(host(ad.fp8_study(current=0.09))).verdict == FAILS
    assert rules.q5_host(host([])).verdict == NOT_MEASURED


def test_q5_gpu_every_verdict():
    assert rules.q5_gpu(gpu(ad.fp8_gpu())).verdict == HOLDS
    kept = rules.q5_gpu(gpu(ad.fp8_gpu(fp8_layers=3)))
    assert kept.verdict == CAVEAT and "kept 1 of the block's 4 GEMMs" in kept.caveats[0]
    assert rules.q5_gpu(gpu(ad.fp8_gpu(speedup=1.01))).verdict == FAILS
    assert rules.q5_gpu(gpu(ad.fp8_gpu(error=0.2))).verdict == FAILS
    no_fp8 = rules.q5_gpu(gpu(ad.fp8_gpu(skip=True)))
    assert no_fp8.verdict == NOT_MEASURED and "8.9" in no_fp8.why


# --- the command ------------------------------------------------------------------------------

def test_json_has_the_promised_shape_and_all_four_verdicts(cli, tmp_path, monkeypatch):
    monkeypatch.setattr(rules, "_published_pairs", list)  # Q4's host half: the model alone
    studies = write(tmp_path, "studies.json",
                    ad.doc(ad.HOST_CONTEXT, ad.int8_study(worst=93.8) + ad.loss_host()
                           + ad.alignment_model() + ad.fp8_study()))
    run = write(tmp_path, "results.json",
                ad.doc(ad.GPU_CONTEXT, ad.int8_gpu() + ad.alignment_gpu(t33=80.0)))
    code, out, err = cli("answers", studies, run, "--json")
    assert code == 0, err
    doc = json.loads(out)
    qs = doc["questions"]
    assert {q["id"] for q in qs} == {"q1", "q2", "q3", "q4", "q5"}
    for q in qs:
        assert set(q) >= {"id", "claim", "verdict", "gpu", "evidence", "caveats"}
        assert q["gpu"] in (None, "Answers GPU")
        for e in q["evidence"]:
            assert set(e) == {"source", "metric", "value", "unit"}
            assert isinstance(e["value"], (int, float)) or e["value"] is None
    assert {q["verdict"] for q in qs} == {HOLDS, CAVEAT, FAILS, NOT_MEASURED}


def test_a_run_folder_reads_results_and_studies(cli, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    write(run, "studies.json", ad.doc(ad.HOST_CONTEXT, ad.int8_study()))
    write(run, "results.json", ad.doc(ad.GPU_CONTEXT, ad.int8_gpu()))
    code, out, _ = cli("answers", run, "--out", tmp_path / "out")
    assert code == 0
    # answers_data's files are synthetic: the banner first, the mark on every source.
    assert out.startswith("SYNTHETIC DATA: the answers without a GPU and the answers of Answers "
                          "GPU come from files that carry the context key tcbench_synthetic")
    assert "without a GPU (synthetic data), host studies (CPU): holds with a caveat" in out
    assert "Answers GPU (synthetic data), measured on this GPU: holds" in out
    md = (tmp_path / "out" / "answers.md").read_text()
    assert md.count("\n## Q") == 5
    assert (tmp_path / "out" / "answers.html").read_text().startswith("<!DOCTYPE html>")


def test_names_from_a_results_file_cannot_carry_markup_or_terminal_codes():
    a = answer_all([gpu(ad.int8_gpu(), gpu_name="GPU\x1b[32mPASS</td><script>")])
    page = render.page_html(a)
    # The page's one script is doc.py's own (opening a collapsed part); the name's is text.
    assert page.count("<script>") == 1 and "PASS&lt;/td&gt;&lt;script&gt;" in page
    assert "\x1b" not in page
    assert "\x1b" not in render.console(a) and "\x1b" not in render.markdown(a)


def test_bad_input_is_one_sentence(cli, tmp_path):
    code, _, err = cli("answers", tmp_path / "nope.json")
    assert code == 2 and err.count("\n") == 1 and "no such file" in err


# --- the real host studies and the no-GPU run ------------------------------------------------

def studies_tool() -> Path | None:
    found = sorted(REPO.glob("build/*/bin/tcbench_studies"), key=lambda p: p.stat().st_mtime,
                   reverse=True)
    return found[0] if found else None


def test_the_real_host_studies_give_the_verdicts_the_pages_state(tmp_path):
    tool = studies_tool()
    if tool is None:
        pytest.skip("no build with tcbench_studies (scripts/tcbench test builds one)")
    out = tmp_path / "studies.json"
    subprocess.run([str(tool), "--out", str(out)], check=True, capture_output=True, timeout=300)
    # The file says what it holds: the schema once (the one the tools ship) and each row's
    # arguments, typed, building its name.
    text = out.read_text()
    assert text.count(f'"{schema.CONTEXT_KEY}"') == 1
    doc = json.loads(text)
    assert doc["context"][schema.CONTEXT_KEY] == json.loads(schema.SCHEMA_FILE.read_text())
    assert all(str(BenchName.of(from_args(r[schema.ARGS_KEY]))) == r["name"]
               for r in doc["benchmarks"])
    by_id = {a.id: a for a in answer_all([parse_doc(json.loads(out.read_text()))])
             if a.scope == "host"}
    # docs/concepts/int8-calibration.md: p99.99 beats FP32, max loses 0.98 points (within 1).
    assert by_id["q1"].verdict == HOLDS
    # loss-scaling.md: no scaling 410x, static 2^10 2.81x, dynamic 1.002x, BF16 1.02x.
    assert by_id["q2"].verdict == CAVEAT
    # alignment.md: the published pairs lose; 33 in no leading dimension: the model's >= 32.
    assert by_id["q4"].verdict == CAVEAT
    # fp8-scaling.md: current scaling ~3 %, delayed saturates under growth.
    assert by_id["q5"].verdict == CAVEAT
    # The README's two sample blocks are what a run without a GPU prints (the verdicts, then
    # the next step timed by the check's plan).
    from tcbench_tools import next_steps

    printed = render.console(answer_all([parse_doc(json.loads(out.read_text()))])) + "\n"
    blocks = re.findall(r"```text\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    assert blocks[0] == printed, "regenerate the README's sample: scripts/tcbench answers"
    assert blocks[1] == "\n".join(next_steps.lines(REPO)) + "\n"


def test_run_without_a_gpu_says_so_first_and_answers(tmp_path, monkeypatch):
    """The no-GPU path with a stand-in tcbench_studies (the real one is tested above): the first
    line says "no GPU" before anything is built, the answers are written, exit 77."""
    monkeypatch.delenv("TCBENCH_GPU_PROBE")
    monkeypatch.setenv("TCBENCH_LIBCUDA", str(tmp_path / "no-libcuda.so.1"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    doc = ad.doc(ad.HOST_CONTEXT, ad.int8_study() + ad.loss_host() + ad.alignment_model()
                 + ad.fp8_study())
    stand_in = bin_dir / "tcbench_studies"
    stand_in.write_text(f"#!{sys.executable}\nimport json, sys\n"
                        f"json.dump({doc!r}, open(sys.argv[sys.argv.index('--out') + 1], 'w'))\n")
    stand_in.chmod(0o755)
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(REPO / "scripts"))
    proc = subprocess.run([sys.executable, "-m", "tcbench_tools", "run", "--bin-dir", str(bin_dir),
                           "--out", str(out)], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 77, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("tcbench run: no GPU (no CUDA GPU available: "
                                                  "no NVIDIA driver is loaded")
    md = (out / "answers.md").read_text()
    assert md.count("\n## Q") == 5 and "GPU: not measured" in md
    assert ("Q4 Batch 32 vs 33:\n  without a GPU (synthetic data), model (no measurement) and "
            "published measurements (A100 SXM, RTX 4090; EleutherAI/cookbook@e6b8f2b, "
            "pytorch/pytorch#181718): holds with a caveat" in proc.stdout)
    assert (out / "studies.json").is_file()


# --- the report's first section ---------------------------------------------------------------

def test_the_report_opens_with_the_verdict_table(cli, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    write(run, "results.json", ad.doc(ad.GPU_CONTEXT, ad.int8_gpu() + ad.alignment_gpu(t33=80.0)))
    write(run, "studies.json", ad.doc(ad.HOST_CONTEXT, ad.int8_study() + ad.alignment_model()))
    other = write(tmp_path, "other.json", ad.doc({**ad.GPU_CONTEXT, "gpu_name": "Other GPU"},
                                                 ad.int8_gpu(speedup=1.005)))
    code, _, err = cli("report", run / "results.json", other, "--out", tmp_path / "rep")
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    headings = [line for line in md.splitlines() if line.startswith("## ")]
    assert headings[0] == "## At a glance"  # the report's first screen (issue 36)
    table = md[md.index("| source |"):]
    table = table[:table.index("\n\n")]
    rows = [r for r in table.splitlines() if r.startswith("| ") and "---" not in r][1:]
    # the studies.json beside the run is the host half; each GPU is one row.
    assert [r.split(" | ")[0] for r in rows] == ["| without a GPU", "| Answers GPU",
                                                 "| Other GPU"]
    assert rows[1].split(" | ")[1] == "holds" and rows[2].split(" | ")[1] == "does not hold"
    assert rows[1].split(" | ")[4] == "holds"  # Q4: 33 at 80 % of 32's TFLOP/s
    # "not measured" for the same reason on both GPUs is one row naming both.
    assert md.count("| Q2 | no five-mode training run, loss_scaling/train\\_\\*, in these "
                    "results | Answers GPU, Other GPU |") == 1
    # the table is the picture too: no second, image copy of it (issue 36)
    assert not (tmp_path / "rep" / "answers_verdicts.png").exists()
    # the host studies are not a GPU in the rest of the report
    gpus = md[md.index("## GPUs"):]
    assert "host-studies" not in gpus.split("\n\n")[1]


def test_the_wrapper_runs_a_gpu_less_machine_without_building_the_python_environment(
        tmp_path, monkeypatch):
    """scripts/tcbench run on a fresh checkout without a GPU: no .venv is created (the host
    studies need only the standard library), and the first line says "no GPU"."""
    monkeypatch.delenv("TCBENCH_GPU_PROBE")
    monkeypatch.setenv("TCBENCH_LIBCUDA", str(tmp_path / "no-libcuda.so.1"))
    checkout = tmp_path / "checkout"
    shutil.copytree(REPO / "scripts", checkout / "scripts",
                    ignore=shutil.ignore_patterns("__pycache__"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    doc = ad.doc(ad.HOST_CONTEXT, ad.int8_study() + ad.loss_host())
    stand_in = bin_dir / "tcbench_studies"
    stand_in.write_text(f"#!{sys.executable}\nimport json, sys\n"
                        f"json.dump({doc!r}, open(sys.argv[sys.argv.index('--out') + 1], 'w'))\n")
    stand_in.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["TCBENCH_PYTHON"] = sys.executable
    proc = subprocess.run([str(checkout / "scripts" / "tcbench"), "run", "--bin-dir", str(bin_dir),
                           "--out", str(tmp_path / "run")], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 77, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("tcbench run: no GPU")
    assert not (checkout / ".venv").exists()
    assert (tmp_path / "run" / "answers.md").is_file()
