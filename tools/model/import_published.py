"""How data/published/*.csv were made: their rows read from the sources' own files.

A fitting tool, not part of tcbench: run by hand (not by CI) with local clones of the source
repositories; the output is committed, and every row names the commit, path and line (or the
thread) it came from, so anyone can check it:

    python3 tools/model/import_published.py repos \\
        --cookbook PATH/EleutherAI-cookbook.git --mamf PATH/ml-engineering.git \\
        --wayne PATH/blackwell-tensorcore-kernels.git --out data/published/gemm.csv
    python3 tools/model/import_published.py xla --repo PATH/xla.git --out data/published/xla.csv
    python3 tools/model/import_published.py threads --out data/published/threads.csv

What each source measured (read from the scripts at the cited commits):
- EleutherAI/cookbook, the raw sweeps of Anthony et al. 2024 ("The Case for Co-Designing Model
  Architectures with Hardware", arXiv 2401.14489), `sizing/results/` at e6b8f2b (the files are
  unchanged since 27dff48, where the scripts that wrote them are):
  * `gemm_data/mm/*/a100.out`: `benchmark_mm(m, n, k)` of `sizing/benchmarks/mm_flops.py`,
    torch.mm of A (m x n) and B (n x k), both row-major, FP16: printed m x n x k is the GEMM's
    M x K x N. Time: the mean of 100 calls after 50 warm-up calls, each call followed by
    torch.cuda.synchronize(), host wall clock (time.time()).
  * `gemm_data/bmm/*/a100.out`: `benchmark_bmm(b, m, n, k)` of `bmm_flops.py`, torch.bmm of
    A (b, m, n) and B (b, n, k): printed b x m x n x k is batch x M x K x N. Time: the largest of
    the 199 per-call host wall-clock intervals after the first 50 (each call synchronized).
  * `transformer_data/vocab_{h,v}_sweep.out`: the output format of `benchmark_mm_b(m, n, k, b)` of
    `mm_flops.py` ("m x n x k, b=b"), F.linear of A (b, m, n) with B (k, n): C = A B^T, so M = m,
    K = n, N = k and B is stored N x K. Time: the mean of 100 synchronized calls after 50, host
    wall clock. (The script that called it for these sweeps is not in the repository.)
  The GPU is named only as "a100" (the files' names). The form factor is inferred: the sweeps'
  best, 261.0 TFLOP/s, is above the best-shape table's A100 PCIe figure (252.9), so A100 SXM;
  and the memory: the skinny sweep (N = 64..128, reading A's 226 MB) runs at about 1.3 TB/s
  once the host overhead is taken off, 85 % of the 40 GB part's 1555 GB/s and 65 % of the 80 GB
  part's 2039, a fraction no streaming kernel stays at, so the SXM4 40 GB part.
- stas00/ml-engineering `compute/accelerator/README.md` at 744d01e, "Maximum Achievable Matmul
  FLOPS comparison table": the best shape per GPU ("MxNxK"), the mean of 100 iterations after 50,
  CUDA events, L2 flushed between iterations (mamf-finder.py: A m x k contiguous, B n x k
  transposed, so B is stored N x K). Rows whose GPU is not in tcbench's peak table (GH200, GB200,
  B300, non-NVIDIA) are left out.
- waynehacking8/blackwell-tensorcore-kernels `results/bench_sm90a.csv` at c289bde: H100 cuBLAS
  rows (cublasGemmEx, row-major A M x K and B K x N, FP32 output), the mean of 10 calls after one
  warm-up (src/main.cu). Held out: the model is fitted on A100 data and the best-shape table only.
- openxla/xla `xla/service/gpu/model/matmul_interpolator_data.h` at e97611c4c41c: XLA's
  default matmul performance table, written by `xla/tools/matmul_perf_table_gen.cc`. Each entry
  is one XLA dot of lhs [b, m, k] and rhs [b, k, n] (row-major: A mk, B kn), compiled with XLA's
  passes (so cuBLAS/cuBLASLt or a Triton GEMM, whichever XLA's autotuner chose), run once to
  warm up and then 5 times with each of two argument sets; the time is the median of the CUPTI
  kernel durations of those 10 runs (HloOpProfiler's kernel tracer). Key "sm_90" is the H100
  (the commit that last measured it, b2766086, is "Update Latency-hiding scheduler cost model
  for GEMMS on H100"), "sm_100_B200" the B200. "f32xf32->f32" runs on TF32 Tensor Cores (XLA's
  default precision; H100's 4096^3 reaches 403 TFLOP/s, six times its FP32 rate): precision tf32.
  Left out: the H100's FP8 entries (4096^3 at 2424 TFLOP/s, above the dense FP8 peak of 1979:
  H100 cuBLASLt takes FP8 only with A and B K-contiguous, so XLA adds transposes, and the median
  over all kernels of a run mixes them in), and the E4M3 x E5M2 entries (tcbench's fp8 is
  E4M3 x E4M3). A dot that XLA split into two kernels (split-K and its reduction) has the same
  flaw; nothing in the table says which did, so such rows stay, and the model's error shows them.
- GitHub threads (issue and pull-request texts, each row's `source` is the thread's URL and its
  `reference` the script): the numbers are transcribed from the thread as printed there.
  * zzc0721/torch-performance-test-data issues #78, #79, #95, #108: test.py at 6e2382c (the
    version that added the TF32 rows these issues print), torch.mm of two row-major n x n
    matrices, 10 warm-up calls, then CUDA events around 30 back-to-back calls: the mean.
  * pytorch/pytorch#181718: RTX 4090 BF16 square matmuls near 2048 and the kernels cuBLAS chose
    (the issue's "Examples" table).
  * tile-ai/TileOPs#2148: H200 torch.bmm ("torch-cublas") baselines.
  * pytorch/ao#2427: B200 BF16 nn.Linear reference of benchmarks/float8/bench_matmul.py (C =
    A W^T, W stored N x K), GPU kernel time (the script's default use_gpu_kernel_time).

Standard library only.
"""

from __future__ import annotations

import argparse
import csv
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from tcbench_tools.published import COLUMNS  # noqa: E402

COOKBOOK_COMMIT = "e6b8f2b"
COOKBOOK_SCRIPTS = "27dff48"  # where mm_flops.py and bmm_flops.py that wrote the files are
MAMF_COMMIT = "744d01e"
WAYNE_COMMIT = "c289bde"
XLA_COMMIT = "e97611c4c41c"
PAPER = "Anthony et al. 2024, arXiv 2401.14489"

FIELDS = COLUMNS  # the data file's columns, as its loader reads them


def git_show(repo: Path, commit: str, path: str) -> list[str]:
    out = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], check=True,
                         capture_output=True, text=True).stdout
    return out.splitlines()


THROUGHPUT = re.compile(r"Throughput \(in TFLOP/s\) for ([\dx]+)(?:, b=(\d+))?: ([\d.]+)$")


def cookbook_rows(repo: Path) -> list[dict]:
    rows = []
    sweeps = [
        ("mm", "gemm_data/mm/m_sweep/a100.out", "torch.mm", "mean of 100", "mk", "kn"),
        ("mm", "gemm_data/mm/ksweep_low/a100.out", "torch.mm", "mean of 100", "mk", "kn"),
        ("mm", "gemm_data/mm/ksweep_high/a100.out", "torch.mm", "mean of 100", "mk", "kn"),
        ("bmm", "gemm_data/bmm/bsweep/a100.out", "torch.bmm", "worst of 199", "mk", "kn"),
        ("bmm", "gemm_data/bmm/msweep/a100.out", "torch.bmm", "worst of 199", "mk", "kn"),
        ("linear", "transformer_data/vocab_h_sweep.out", "torch.nn.functional.linear",
         "mean of 100", "mk", "nk"),
        ("linear", "transformer_data/vocab_v_sweep.out", "torch.nn.functional.linear",
         "mean of 100", "mk", "nk"),
    ]
    for kind, rel, library, summary, la, lb in sweeps:
        path = f"sizing/results/{rel}"
        slug = rel.split("/")[-2] if kind != "linear" else Path(rel).stem
        for lineno, line in enumerate(git_show(repo, COOKBOOK_COMMIT, path), start=1):
            hit = THROUGHPUT.match(line.strip())
            if not hit:
                continue
            dims = [int(x) for x in hit.group(1).split("x")]
            if kind == "bmm":
                batch, m, k, n = dims
            elif kind == "mm":
                (m, k, n), batch = dims, 1
            else:
                (m, k, n), batch = dims, int(hit.group(2) or 1)
            script = "bmm_flops.py" if kind == "bmm" else "mm_flops.py"
            rows.append({
                "id": f"cookbook-{kind}-{slug}-{m}x{n}x{k}x{batch}",
                "gpu": "A100 SXM", "device": "NVIDIA A100-SXM4-40GB", "precision": "fp16",
                "c_type": "fp16",
                "m": m, "n": n, "k": k, "batch": batch, "layout_a": la, "layout_b": lb,
                "measured_us": "", "measured_tflops": hit.group(3), "summary": summary,
                "timing": "host wall clock, synchronize per call",
                "library": f"PyTorch {library} (cuBLAS)", "version": "not stated", "use": "fit",
                "source": f"EleutherAI/cookbook@{COOKBOOK_COMMIT}:{path}#L{lineno}",
                "reference": f"{PAPER}; script sizing/benchmarks/{script}@{COOKBOOK_SCRIPTS}",
                "notes": "GPU stated as a100; SXM inferred (best 261.0 TFLOP/s > A100 PCIe "
                         "best-shape 252.9); 40 GB inferred (the N = 64..128 sweep streams A "
                         "at about 1.3 TB/s: 85 % of the 40 GB part's 1555 GB/s, 65 % of the "
                         "80 GB part's 2039)"})
    return rows


MAMF_ROW = re.compile(r"^\|\s*NVIDIA (\S+(?: \S+)?)\s*\|\s*([\d.]+)\s*\|\s*(\d+)\s*\|\s*[\d.]+%\s*"
                      r"\|\s*(\d+)x(\d+)x(\d+)\s*\|\s*(\S+)\s*\|\s*([^|]*)\|")
# The table's accelerator names -> tcbench's peak-table names (GH200, GB200 and B300 have none).
MAMF_GPUS = {"A100 SXM": "A100 SXM", "A100 PCIe": "A100 PCIe", "H100 SXM": "H100 SXM",
             "H200 SXM": "H200", "B200 SXM": "B200"}


# The GPUs whose best-shape rows are their held-out source (each GPU keeps one source out of the
# fit; the B200's long-kernel rows, pytorch/ao#2427, are fitted instead).
MAMF_HELD_OUT = {"B200"}


def mamf_rows(repo: Path) -> list[dict]:
    path = "compute/accelerator/README.md"
    lines = git_show(repo, MAMF_COMMIT, path)
    rows, precision = [], None
    for lineno, line in enumerate(lines, start=1):
        if line.startswith("**BF16**"):
            precision = "bf16"
        elif line.startswith("**FP8"):
            precision = "fp8"
        elif line.startswith("Caveat emptor"):
            precision = None
        hit = MAMF_ROW.match(line)
        if precision is None or not hit or hit.group(1) not in MAMF_GPUS:
            continue
        name, tflops, _, m, n, k, torch, notes = hit.groups()
        gpu = MAMF_GPUS[name]
        rows.append({
            "id": f"mamf-{precision}-{gpu.replace(' ', '_')}",
            "gpu": gpu, "device": "", "precision": precision, "c_type": precision,
            "m": int(m), "n": int(n), "k": int(k), "batch": 1, "layout_a": "mk",
            "layout_b": "nk", "measured_us": "", "measured_tflops": tflops,
            "summary": "mean of 100 (the best shape of a sweep)",
            "timing": "CUDA events, L2 flushed per iteration",
            "library": "PyTorch torch.mm" + (" (torch._scaled_mm)" if precision == "fp8" else ""),
            "version": f"torch {torch}", "use": "held_out" if gpu in MAMF_HELD_OUT else "fit",
            "source": f"stas00/ml-engineering@{MAMF_COMMIT}:{path}#L{lineno}",
            "reference": "Maximum Achievable Matmul FLOPS comparison table (mamf-finder.py)",
            "notes": f"accelerator stated as NVIDIA {name}" + (f"; {notes.strip()}"
                                                               if notes.strip() else "")})
    return rows


def wayne_rows(repo: Path) -> list[dict]:
    path = "results/bench_sm90a.csv"
    lines = git_show(repo, WAYNE_COMMIT, path)
    rows = []
    kinds = {"cublas_tc": ("fp16", "cuBLAS cublasGemmEx (FP16 in, FP32 out)"),
             "cublas_tf32": ("tf32", "cuBLAS cublasGemmEx (FP32 in, TF32 compute)")}
    for lineno, rec in enumerate(csv.reader(lines), start=1):
        if lineno == 1 or rec[5] not in kinds:
            continue
        device, _, m, n, k, kernel, ms, tflops = rec[:8]
        precision, library = kinds[kernel]
        rows.append({
            "id": f"wayne-{kernel}-{m}x{n}x{k}", "gpu": "H100 SXM", "device": device,
            "precision": precision, "c_type": "fp32", "m": int(m), "n": int(n), "k": int(k),
            "batch": 1, "layout_a": "mk", "layout_b": "kn",
            "measured_us": f"{float(ms) * 1000:g}", "measured_tflops": tflops,
            "summary": "mean of 10", "timing": "CUDA events (Timer, src/main.cu)",
            "library": library, "version": "CUDA 13.1 (README)", "use": "held_out",
            "source": f"waynehacking8/blackwell-tensorcore-kernels@{WAYNE_COMMIT}:{path}#L{lineno}",
            "reference": "README 'Measured on H100 80GB SXM5'",
            "notes": "held out: H100 data are not fitted on"})
    return rows


XLA_PATH = "xla/service/gpu/model/matmul_interpolator_data.h"
# Table key -> (tcbench GPU, id part, notes); dtype key -> (precision, c_type).
XLA_GPUS = {
    "sm_90": ("H100 SXM", "h100",
              "key sm_90; H100 per commit b2766086 ('Update Latency-hiding scheduler cost model "
              "for GEMMS on H100'); SXM inferred (4096^3 BF16 at 780 TFLOP/s is above the H100 "
              "PCIe's dense peak of 756)"),
    "sm_100_B200": ("B200", "b200", "key sm_100_B200"),
}
XLA_TYPES = {"bf16xbf16->bf16": ("bf16", "bf16"), "f32xf32->f32": ("tf32", "fp32"),
             "f8e4m3fnxf8e4m3fn->bf16": ("fp8", "bf16")}
XLA_LEFT_OUT = {("sm_90", "fp8")}  # above the dense peak: see the module doc
XLA_KEY = re.compile(r'^\s*key: "(sm_[^"]+)"')
XLA_DIM = re.compile(r"^\s*([bmnk]): (\d+)$")
XLA_FLOPS = re.compile(r'^\s*flops \{ key: "([^"]+)" value: (\d+) \}')


def xla_rows(repo: Path) -> list[dict]:
    rows, arch, dims = [], None, {}
    for lineno, line in enumerate(git_show(repo, XLA_COMMIT, XLA_PATH), start=1):
        if hit := XLA_KEY.match(line):
            arch = hit.group(1)
        elif hit := XLA_DIM.match(line):
            dims[hit.group(1)] = int(hit.group(2))
        elif (hit := XLA_FLOPS.match(line)) and arch in XLA_GPUS and hit.group(1) in XLA_TYPES:
            precision, c_type = XLA_TYPES[hit.group(1)]
            if (arch, precision) in XLA_LEFT_OUT:
                continue
            gpu, slug, notes = XLA_GPUS[arch]
            b, m, n, k = dims["b"], dims["m"], dims["n"], dims["k"]
            rows.append({
                "id": f"xla-{slug}-{precision}-{m}x{n}x{k}x{b}", "gpu": gpu, "device": "",
                "precision": precision, "c_type": c_type, "m": m, "n": n, "k": k, "batch": b,
                "layout_a": "mk", "layout_b": "kn", "measured_us": "",
                "measured_tflops": f"{int(hit.group(2)) / 1e12:.4f}",
                "summary": "median of 10 kernel runs",
                "timing": "CUPTI kernel durations (XLA HloOpProfiler kernel tracer)",
                "library": "XLA dot (cuBLAS/cuBLASLt or Triton, as XLA's autotuner chose)",
                "version": "not stated", "use": "fit",
                "source": f"openxla/xla@{XLA_COMMIT}:{XLA_PATH}#L{lineno}",
                "reference": "XLA default matmul perf table (xla/tools/matmul_perf_table_gen.cc)",
                "notes": notes + ("; f32 dot at XLA's default precision: TF32 Tensor Cores"
                                  if precision == "tf32" else "")})
    return rows


ZZC = "https://github.com/zzc0721/torch-performance-test-data/issues/"
ZZC_REF = "zzc0721/torch-performance-test-data test.py@6e2382c"
ZZC_SIZES = (1024, 2048, 4096, 8192, 10240)
# Issue -> (tcbench GPU, CUDA device name, torch, use, {precision: TFLOP/s per size}).
ZZC_ISSUES = {
    78: ("RTX 4090", "NVIDIA GeForce RTX 4090", "2.7.0+cu128", "held_out",
         {"tf32": (59.47, 69.24, 84.44, 85.65, 84.50),
          "fp16": (106.10, 159.38, 168.38, 155.50, 156.88),
          "bf16": (126.84, 164.81, 151.50, 160.17, 158.54)}),
    79: ("H100 SXM", "NVIDIA H100 80GB HBM3", "2.7.0+cu128", "fit",
         {"tf32": (119.60, 334.99, 402.15, 372.05, 376.66),
          "fp16": (179.13, 645.12, 760.04, 736.19, 668.42),
          "bf16": (176.62, 676.59, 788.72, 797.51, 719.72)}),
    95: ("H100 PCIe", "NVIDIA H100 PCIe", "2.9.0+cu128", "held_out",
         {"tf32": (91.00, 176.95, 234.80, 240.43, 225.65),
          "fp16": (201.71, 458.03, 457.32, 437.07, 449.65),
          "bf16": (217.70, 449.09, 495.93, 492.84, 471.79)}),
    108: ("A100 PCIe", "NVIDIA A100-PCIE-40GB", "2.8.0+cu128", "held_out",
          {"tf32": (61.02, 90.82, 108.32, 97.32, 102.05),
           "fp16": (83.66, 214.73, 241.49, 197.51, 205.66),
           "bf16": (94.89, 138.46, 234.14, 215.26, 211.72)}),
}
C_OF = {"tf32": "fp32", "fp16": "fp16", "bf16": "bf16"}


def thread_rows() -> list[dict]:
    rows = []
    for issue, (gpu, device, torch, use, table) in ZZC_ISSUES.items():
        for precision, rates in table.items():
            for n, tflops in zip(ZZC_SIZES, rates):
                rows.append({
                    "id": f"zzc{issue}-{precision}-{n}x{n}x{n}x1", "gpu": gpu, "device": device,
                    "precision": precision, "c_type": C_OF[precision], "m": n, "n": n, "k": n,
                    "batch": 1, "layout_a": "mk", "layout_b": "kn", "measured_us": "",
                    "measured_tflops": f"{tflops:.2f}", "summary": "mean of 30",
                    "timing": "CUDA events around 30 back-to-back calls after 10 warm-up calls",
                    "library": "PyTorch torch.mm (cuBLAS)", "version": f"torch {torch}",
                    "use": use, "source": f"{ZZC}{issue}", "reference": ZZC_REF,
                    "notes": f"device stated as {device}" + (
                        "; TF32 through torch.backends.cuda.matmul.allow_tf32"
                        if precision == "tf32" else "")})
    # pytorch/pytorch#181718, "Examples": N, TF/s and the kernel cuBLAS ran (BF16, N x N x N).
    for n, tflops, kernel in ((2040, 155.9, "ampere_bf16_s1688gemm_bf16_128x128_ldg8_f2f"),
                              (2055, 115.6, "cutlass_75 s1688 128x128 align1"),
                              (2056, 89.6, "cutlass_80 s16816 64x64 align8"),
                              (2057, 106.8, "cutlass_75 s1688 128x128 align1"),
                              (2071, 110.9, "cutlass_75 s1688 128x128 align1"),
                              (2072, 83.6, "cutlass_80 s16816 64x64 align8"),
                              (2073, 112.0, "cutlass_75 s1688 128x128 align1")):
        rows.append({
            "id": f"pt181718-bf16-{n}x{n}x{n}x1", "gpu": "RTX 4090", "device": "",
            "precision": "bf16", "c_type": "bf16", "m": n, "n": n, "k": n, "batch": 1,
            "layout_a": "mk", "layout_b": "kn", "measured_us": "", "measured_tflops": f"{tflops}",
            "summary": "as the issue's repro (not shown in full in the thread's text)",
            "timing": "the issue's repro, with torch.profiler naming the kernel",
            "library": "PyTorch torch.matmul (cuBLAS)", "version": "not stated", "use": "fit",
            "source": "https://github.com/pytorch/pytorch/issues/181718",
            "reference": "issue 'bf16 matmul throughput drops on RTX 4090 for shapes where "
                         "N%16==8', Examples table",
            "notes": f"GPU stated as RTX 4090; kernel {kernel}"})
    # tile-ai/TileOPs#2148, BmmFwdOp table: the torch-cublas column (ms), (B, M, N, K).
    for (b, m, n, k), precision, ms in (((8, 128, 128, 128), "fp16", 0.0032),
                                        ((8, 128, 128, 128), "bf16", 0.0032),
                                        ((8, 1024, 1024, 1024), "fp16", 0.0310),
                                        ((8, 1024, 1024, 1024), "bf16", 0.0307),
                                        ((16, 512, 512, 512), "fp16", 0.0120),
                                        ((16, 512, 512, 512), "bf16", 0.0119)):
        rows.append({
            "id": f"tileops2148-{precision}-{m}x{n}x{k}x{b}", "gpu": "H200",
            "device": "NVIDIA H200", "precision": precision, "c_type": precision, "m": m,
            "n": n, "k": k, "batch": b, "layout_a": "mk", "layout_b": "kn",
            "measured_us": f"{ms * 1000:g}", "measured_tflops": "",
            "summary": "as TileOPs' benchmark harness reports (not stated in the thread)",
            "timing": "TileOPs benchmark harness (not stated in the thread)",
            "library": "PyTorch torch.bmm (cuBLAS)", "version": "torch 2.13.0, CUDA 13.2",
            "use": "held_out", "source": "https://github.com/tile-ai/TileOPs/pull/2148",
            "reference": "PR 'Accelerate H200 BMM with the shared GEMM template', BmmFwdOp "
                         "table, torch-cublas column",
            "notes": "GPU stated as NVIDIA H200; times printed to 0.1 us"})
    # meta-pytorch/float8_experimental#145, drisspg's comment of 2024-06-24: the BF16 reference
    # of an unaligned shape (M x K x N = 8193 x 2501 x 5008) on an H100: A's rows are K = 2501
    # elements (2-byte aligned) whichever way B is stored.
    rows.append({
        "id": "f8exp145-bf16-8193x5008x2501x1", "gpu": "H100 SXM", "device": "",
        "precision": "bf16", "c_type": "bf16", "m": 8193, "n": 5008, "k": 2501, "batch": 1,
        "layout_a": "mk", "layout_b": "kn", "measured_us": "", "measured_tflops": "509",
        "summary": "as the PR's benchmark reports (not stated in the thread)",
        "timing": "the PR's padding benchmark (not stated in the thread)",
        "library": "PyTorch torch.mm (cuBLAS)", "version": "not stated", "use": "fit",
        "source": "https://github.com/meta-pytorch/float8_experimental/pull/145",
        "reference": "comment 'Comparing against the aligned version', row (8193x2501x5008), "
                     "Ref Tops 5.09e+14",
        "notes": "GPU stated as H100 (the PR pads 'as required for H100s'); SXM assumed (Ref % "
                 "Peak 0.257 is 509 of the SXM's 1979 sparse TFLOP/s); B's layout not stated "
                 "(A's 2-byte rows set the class either way); the padded shape ran at 502"})
    # pytorch/ao#2427: bench_matmul.py --recipe nvfp4 on "NVIDIA B200": the bfloat16 lines.
    for n, seconds in ((1024, 5.08e-6), (1536, 7.87e-6), (2048, 1.52e-5), (3072, 3.84e-5),
                       (4096, 9.74e-5), (6144, 3.19e-4), (8192, 7.74e-4)):
        rows.append({
            "id": f"ao2427-bf16-{n}x{n}x{n}x1", "gpu": "B200", "device": "NVIDIA B200",
            "precision": "bf16", "c_type": "bf16", "m": n, "n": n, "k": n, "batch": 1,
            "layout_a": "mk", "layout_b": "nk", "measured_us": f"{seconds * 1e6:g}",
            "measured_tflops": "", "summary": "as the script's do_benchmarks reports",
            "timing": "GPU kernel time (use_gpu_kernel_time, the script's default)",
            "library": "PyTorch nn.Linear (cuBLAS)", "version": "not stated", "use": "fit",
            "source": "https://github.com/pytorch/ao/pull/2427",
            "reference": "benchmarks/float8/bench_matmul.py output in the PR description "
                         "(script read at pytorch/ao@00c0bf1)",
            "notes": "GPU stated as NVIDIA B200; times printed to 3 digits"})
    return rows


def write(rows: list[dict], out: Path) -> None:
    with open(out, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} rows -> {out}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("repos", help="EleutherAI/cookbook, the best-shape table, waynehacking8")
    r.add_argument("--cookbook", type=Path, required=True, help="git dir of EleutherAI/cookbook")
    r.add_argument("--mamf", type=Path, required=True, help="git dir of stas00/ml-engineering")
    r.add_argument("--wayne", type=Path, required=True,
                   help="git dir of waynehacking8/blackwell-tensorcore-kernels")
    x = sub.add_parser("xla", help="XLA's matmul performance table")
    x.add_argument("--repo", type=Path, required=True, help="git dir holding openxla/xla's history")
    sub.add_parser("threads", help="the rows transcribed from GitHub threads")
    for p in (r, x, sub.choices["threads"]):
        p.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    if args.what == "repos":
        rows = cookbook_rows(args.cookbook) + mamf_rows(args.mamf) + wayne_rows(args.wayne)
    elif args.what == "xla":
        rows = xla_rows(args.repo)
    else:
        rows = thread_rows()
    write(rows, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
