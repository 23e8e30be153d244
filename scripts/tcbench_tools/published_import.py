"""How data/published/gemm.csv was made: its rows read from the sources' own files.

Run once by hand (not by CI) with local clones of the source repositories; the output is
committed, and every row names the commit, path and line it came from, so anyone can check it:

    python3 -m tcbench_tools.published_import \\
        --cookbook PATH/EleutherAI-cookbook.git --mamf PATH/ml-engineering.git \\
        --wayne PATH/blackwell-tensorcore-kernels.git --out data/published/gemm.csv

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

Standard library only.
"""

from __future__ import annotations

import argparse
import csv
import re
import subprocess
import sys
from pathlib import Path

from tcbench_tools.published import COLUMNS

COOKBOOK_COMMIT = "e6b8f2b"
COOKBOOK_SCRIPTS = "27dff48"  # where mm_flops.py and bmm_flops.py that wrote the files are
MAMF_COMMIT = "744d01e"
WAYNE_COMMIT = "c289bde"
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
            "version": f"torch {torch}", "use": "fit",
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cookbook", type=Path, required=True, help="git dir of EleutherAI/cookbook")
    ap.add_argument("--mamf", type=Path, required=True, help="git dir of stas00/ml-engineering")
    ap.add_argument("--wayne", type=Path, required=True,
                    help="git dir of waynehacking8/blackwell-tensorcore-kernels")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    rows = cookbook_rows(args.cookbook) + mamf_rows(args.mamf) + wayne_rows(args.wayne)
    with open(args.out, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} rows -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
