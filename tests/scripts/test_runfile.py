"""runfile.py owns the run on disk: the results.json tcbench run merges reads back as the run it
wrote, with the run keys of schema.py; and one GPU-identity check refuses a run, or a folder,
whose files name two GPUs (two cards of one model included), naming both."""

from __future__ import annotations

import copy

import pytest

from conftest import load_doc, write
from tcbench_tools import runfile, schema
from tcbench_tools.errors import InputError
from tcbench_tools.results import load, parse_doc


def _part(tmp_path, binary: str, doc: dict) -> runfile.Part:
    return runfile.Part(binary, write(tmp_path, f"{binary}.json", doc), doc)


def _split(name: str) -> tuple[dict, dict]:
    """A fixture as two binaries' files: its fp16_vs_fp32 rows and the rest."""
    doc = load_doc(name)
    a, b = copy.deepcopy(doc), copy.deepcopy(doc)
    a["benchmarks"] = [r for r in doc["benchmarks"] if r["name"].startswith("fp16_vs_fp32/")]
    b["benchmarks"] = [r for r in doc["benchmarks"] if not r["name"].startswith("fp16_vs_fp32/")]
    return a, b


def test_the_merged_file_reads_back_as_the_run_it_wrote(tmp_path):
    a, b = _split("gpu_a.json")
    parts = [_part(tmp_path, "bench_fp16_vs_fp32", a), _part(tmp_path, "bench_int8_gemm", b)]
    doc = runfile.merge(parts, failed=["bench_int8_gemm:1"], lost=[], incomplete="stopped")
    rs = parse_doc(doc)
    assert rs.context_list(schema.RUN_BINARIES) == ["bench_fp16_vs_fp32", "bench_int8_gemm"]
    sources = dict(item.split(":") for item in rs.context_list(schema.RUN_SOURCES))
    assert sources == {p.path.name: runfile.fingerprint(p.path) for p in parts}
    assert rs.context[schema.RUN_FAILED] == "bench_int8_gemm:1"
    assert schema.RUN_LOST not in rs.context and rs.context[schema.RUN_INCOMPLETE] == "stopped"
    assert set(rs.benchmarks) == set(parse_doc(load_doc("gpu_a.json")).benchmarks)
    assert {b.binary for b in rs.benchmarks.values() if b.ok} == {"bench_fp16_vs_fp32",
                                                                 "bench_int8_gemm"}
    # The folder itself (no results.json) reads as the same benchmarks.
    assert set(load(tmp_path).benchmarks) == set(rs.benchmarks)


def test_two_cards_of_one_model_are_two_gpus_for_the_merge_and_for_a_folder(tmp_path):
    a, b = _split("gpu_a.json")
    b["context"]["gpu_uuid"] = "GPU-11111111-2222-3333-4444-555555555555"
    assert a["context"]["gpu_uuid"] != b["context"]["gpu_uuid"]
    parts = [_part(tmp_path, "bench_fp16_vs_fp32", a), _part(tmp_path, "bench_int8_gemm", b)]
    with pytest.raises(runfile.MixedGpus, match=r"saw different GPUs \(gpu_uuid differ\)"):
        runfile.merge(parts, [], [])
    with pytest.raises(InputError, match=r"mixes GPUs \(gpu uuid: bench_fp16_vs_fp32.json has "):
        load(tmp_path)


def test_a_key_a_file_lacks_is_no_evidence_of_another_gpu(tmp_path):
    a, b = _split("gpu_a.json")
    del b["context"]["gpu_uuid"]
    runfile.check_one_gpu([("a", a["context"]), ("b", b["context"])])
    c = copy.deepcopy(b)
    c["context"]["gpu_uuid"] = "GPU-other"
    with pytest.raises(runfile.MixedGpus) as mixed:
        runfile.check_one_gpu([("a", a["context"]), ("b", b["context"]), ("c", c["context"])])
    assert mixed.value.keys == ["gpu_uuid"] and mixed.value.first[0] == "a"


def test_every_run_key_is_a_tcbench_key_of_the_schema():
    assert all(key.startswith("tcbench_") for key in (*schema.RUN_KEYS, schema.ROW_BINARY))
    assert schema.GPU_IDENTITY[:2] == schema.GPU_MODEL


def test_a_run_killed_before_its_merge_reads_its_binaries_files_and_names_a_bad_one(tmp_path):
    """tcbench run SIGKILLed: no results.json, each finished binary's file. The answers and host
    studies of an earlier run beside them are not its rows (before: every *.json joined the run),
    and a binary's file that cannot be read is named as the run's cut-short note, not fatal."""
    a, b = _split("gpu_a.json")
    write(tmp_path, "bench_fp16_vs_fp32.json", a)
    write(tmp_path, "bench_int8_gemm.json", b)
    (tmp_path / "bench_zz_broken.json").write_text("[1, 2]")
    write(tmp_path, "answers.json", {"questions": []})
    rs = load(tmp_path)
    assert set(rs.benchmarks) == set(parse_doc(load_doc("gpu_a.json")).benchmarks)
    assert rs.partial.startswith("bench_zz_broken.json is unusable (")
    assert runfile.run_folders(tmp_path) == [tmp_path]
