"""Benchmark names: the grammar v2 (GEMM layout after m, n, k; elements:, hidden:, tokens:) and
the map from the first grammar's names, row by row of its rename table."""

from __future__ import annotations

import pytest

from tcbench_tools.names import parse, short_path, upgrade_v1


def test_a_v2_gemm_name_exposes_its_layout_and_sizes():
    p = parse("fp8/gemm_e4m3xe4m3_bf16/fp8/m:4096/n:4096/k:4096/layout:tn/accum:fast/manual_time")
    assert (p.topic, p.variant, p.precision) == ("fp8", "gemm_e4m3xe4m3_bf16", "fp8")
    assert p.layout == "tn"
    assert p.numeric_args() == {"m": 4096, "n": 4096, "k": 4096}
    assert p.word_args() == {"layout": "tn", "accum": "fast"}
    assert parse("loss_scaling/unscale/fp32/elements:1000").layout is None


@pytest.mark.parametrize("name,precision", [
    ("alignment/pad_to_40/fp16/m:4096/n:33/k:4096/layout:nn", "fp16"),
    ("fp8/block/selected/hidden:4096/tokens:4096/layout:tn", "selected"),  # the mix, 3rd word
    ("int8_gemm/mlp/int8/tokens:32/layout:tn", "int8"),
    ("tensor_peak/mma_m16n8k16/fp16", "fp16"),
    ("BM_Plain/64", "-"),
])
def test_the_precision_is_found_whatever_the_keys(name, precision):
    assert parse(name).precision == precision


# Each row of the rename table of the name grammar v2 (old -> new), one example each.
RENAMES = [
    ("fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096",
     "fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096/layout:nn"),
    ("fp16_vs_fp32/simt/fp32/m:1024/n:1024/k:1024",
     "fp16_vs_fp32/simt/fp32/m:1024/n:1024/k:1024/layout:nn"),
    ("int8_gemm/cublaslt/fp32/m:128/n:8192/k:128",  # TN for every precision now
     "int8_gemm/cublaslt/fp32/m:128/n:8192/k:128/layout:tn"),
    ("int8_gemm/imma/int8/m:128/n:8192/k:128", "int8_gemm/imma/int8/m:128/n:8192/k:128/layout:tn"),
    ("int8_gemm/mlp/fp16/tokens:8192", "int8_gemm/mlp/fp16/tokens:8192/layout:tn"),
    ("int8_gemm/quantize_per_tensor/int8/n:67108864",
     "int8_gemm/quantize_per_tensor/int8/elements:67108864"),
    ("fp8/gemm_e4m3xe5m2_bf16/fp8/m:8192/n:8192/k:8192/accum:split/layer:qkv",
     "fp8/gemm_e4m3xe5m2_bf16/fp8/m:8192/n:8192/k:8192/layout:tn/accum:split/layer:qkv"),
    ("fp8/gemm/bf16/m:4096/n:4096/k:16384/layer:mlp_down",
     "fp8/gemm/bf16/m:4096/n:4096/k:16384/layout:tn/layer:mlp_down"),
    ("fp8/recipe_amax/fp8/n:16777216/in:fp32", "fp8/recipe_amax/fp8/elements:16777216/in:fp32"),
    ("fp8/overhead_current/fp8/m:8192/n:8192/k:8192",
     "fp8/overhead_current/fp8/m:8192/n:8192/k:8192/layout:tn"),
    ("fp8/layer_mlp_up/fp8/h:4096/t:4096/recipe:current",
     "fp8/layer_mlp_up/fp8/hidden:4096/tokens:4096/layout:tn/recipe:current"),
    ("fp8/block/selected/h:4096/t:4096", "fp8/block/selected/hidden:4096/tokens:4096/layout:tn"),
    ("alignment/cublaslt/tf32/m:4096/n:33/k:4096",
     "alignment/cublaslt/tf32/m:4096/n:33/k:4096/layout:nn"),
    ("alignment/cublaslt/fp8/m:4096/n:32/k:4096",
     "alignment/cublaslt/fp8/m:4096/n:32/k:4096/layout:tn"),
    ("alignment/cublaslt_bT/bf16/m:4096/n:33/k:4096",
     "alignment/cublaslt/bf16/m:4096/n:33/k:4096/layout:nt"),
    ("alignment/wmma/fp16/m:4096/n:33/k:4096", "alignment/wmma/fp16/m:4096/n:33/k:4096/layout:nn"),
    ("alignment/pad_to_48/int8/m:4096/n:33/k:4096",
     "alignment/pad_to_48/int8/m:4096/n:33/k:4096/layout:tn"),
    ("tensor_util/cublaslt_small/fp16/m:256/n:256/k:256",
     "tensor_util/cublaslt_small/fp16/m:256/n:256/k:256/layout:nn"),
    ("tensor_util/cublaslt/int8/m:8192/n:8192/k:8192",
     "tensor_util/cublaslt/int8/m:8192/n:8192/k:8192/layout:tn"),
    ("tensor_util/memory/fp32/n:268435456", "tensor_util/memory/fp32/elements:268435456"),
]


@pytest.mark.parametrize("old,new", RENAMES)
def test_every_row_of_the_rename_table(old, new):
    assert upgrade_v1(old).name == new
    assert upgrade_v1(old + "/manual_time").name == new  # Google Benchmark's suffix is dropped
    assert upgrade_v1(new) is None  # a current name is not an old one


@pytest.mark.parametrize("name", [
    "loss_scaling/landing_mlp/fp16/scale_log2:16",  # loss_scaling and tensor_peak kept theirs
    "loss_scaling/unscale/fp32/elements:10000000",
    "tensor_peak/wgmma_m64n256k16/fp16",
    "BM_Foo/1/2/3",
    "mytopic/cublaslt/fp16/m:1/n:1/k:1",  # not a topic of tcbench's
])
def test_names_that_did_not_change(name):
    assert upgrade_v1(name) is None


def test_what_changed_is_said_and_the_layout_change_of_the_16_bit_baselines_is_known():
    up = upgrade_v1("fp8/layer_qkv/bf16/h:4096/t:4096")
    assert up.changes == ["has no layout", "has h:/t: (hidden:/tokens: now)"]
    assert not up.timed_differently  # the block study timed its BF16 layers TN already
    assert upgrade_v1("fp8/gemm/fp16/m:1024/n:1024/k:1024").timed_differently  # NN then
    assert upgrade_v1("int8_gemm/mlp/fp32/tokens:32").timed_differently
    assert not upgrade_v1("int8_gemm/mlp/int8/tokens:32").timed_differently
    assert upgrade_v1("alignment/cublaslt_bT/fp16/m:4096/n:33/k:4096").changes == [
        "says cublaslt_bT (cublaslt with layout:nt now)"]


@pytest.mark.parametrize("path, shown", [
    ("/home/me/runs/h100_0105/results.json", "h100_0105/results.json"),  # a run folder's file
    ("results.json", "results.json"),
    ("/tmp/pytest-of-root/pytest-158/reports0/fleet/gpu01.json", "gpu01.json"),
    ("C:\\runs\\a100\\results.json", "a100/results.json"),
    ("gpu_a.json", "gpu_a.json"),
])
def test_a_result_file_is_shown_by_its_name_and_a_runs_folder(path, shown):
    assert short_path(path) == shown
