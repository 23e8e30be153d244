#!/usr/bin/env python3
"""torch.matmul beside tcbench's cuBLASLt GEMM at the same shape (a step of scripts/gpu_check.sh).

  gpu_check_torch.py time --size 8192 --out torch.json
      times torch.matmul for bf16 and fp16 (FP32 accumulation, PyTorch's defaults) at
      size^3 with CUDA events; needs PyTorch with CUDA. Exit 77 when CUDA is unavailable.
  gpu_check_torch.py compare torch.json tcbench.json [--out ratio.json]
      prints, per precision, both rates and tcbench / torch; the target is >= 0.99x (the
      harness must lose nothing against what a PyTorch user gets from the same library).

torch's pip wheels bring their own cuBLAS (nvidia-cublas), while tcbench links the box's CUDA
toolkit's: `time` records torch's (the wheel's version and the libcublasLt the process loaded),
`compare` puts it beside tcbench's cublaslt_version and says when they differ, because then a
ratio below 1 can be a library version rather than the harness.

Only the standard library and (for `time`) torch: it runs with the GPU box's PyTorch Python,
which need not have numpy. Exit codes: 0 done (a ratio below target is reported, not an error),
2 unusable input, 77 no CUDA device for torch.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import re
import statistics
import sys
import time
from pathlib import Path

TARGET_RATIO = 0.99
PRECISIONS = ("bf16", "fp16")
# tcbench's names: fp16_vs_fp32/cublaslt/<precision>/m:<M>/n:<N>/k:<K>/layout:nn[/manual_time]
# (torch.matmul of row-major tensors makes an NN call of cuBLAS's column-major GEMM too)
NAME = re.compile(r"cublaslt/(?P<prec>[a-z0-9_]+)/m:(?P<m>\d+)/n:(?P<n>\d+)/k:(?P<k>\d+)")


def tcbench_filter(size: int) -> str:
    """The --benchmark_filter that selects the cuBLASLt rows this script compares with."""
    return f"cublaslt/({'|'.join(PRECISIONS)})/m:{size}/n:{size}/k:{size}(/|$)"


CUBLAS_WHEELS = ("nvidia-cublas", "nvidia-cublas-cu13", "nvidia-cublas-cu12")


def torch_cublas() -> dict:
    """torch's cuBLAS: the pip wheel's version (None when torch uses a system cuBLAS) and the
    libcublasLt this process has loaded (Linux: /proc/self/maps), after torch has run a GEMM."""
    wheel = None
    for name in CUBLAS_WHEELS:
        try:
            wheel = f"{name} {importlib.metadata.version(name)}"
            break
        except importlib.metadata.PackageNotFoundError:
            continue
    library = None
    try:
        with open("/proc/self/maps") as fh:
            library = next((line.split()[-1] for line in fh if "libcublasLt" in line), None)
    except OSError:
        pass
    return {"wheel": wheel, "library": library}


def version_number(text: str | None) -> int | None:
    """cublasLtGetVersion()'s form (major * 10000 + minor * 100 + patch) of "13.0.0.19" or
    "130000"; None when unknown."""
    if not text:
        return None
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    if m:
        return int(m[1]) * 10000 + int(m[2]) * 100 + int(m[3])
    return int(text) if text.strip().isdigit() else None


def time_torch(size: int, min_warmup_s: float = 0.05, samples: int = 20) -> dict:
    import torch  # only here: `compare` must work without torch

    if not torch.cuda.is_available():
        raise SystemExit(77)
    dev = torch.device("cuda")
    out = {"size": size, "torch_version": torch.__version__, "cuda": torch.version.cuda,
           "device": torch.cuda.get_device_name(dev),
           "allow_fp16_reduced_precision_reduction":
               torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
           "allow_bf16_reduced_precision_reduction":
               torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
           "results": {}}
    dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16}
    for prec in PRECISIONS:
        gen = torch.Generator(device=dev).manual_seed(1)
        a = torch.rand(size, size, device=dev, dtype=dtypes[prec], generator=gen) * 2 - 1
        b = torch.rand(size, size, device=dev, dtype=dtypes[prec], generator=gen) * 2 - 1
        c = torch.empty(size, size, device=dev, dtype=dtypes[prec])
        # Warm-up by time, as tcbench's harness does: at least min_warmup_s of GEMMs.
        begin = time.perf_counter()
        while True:
            torch.matmul(a, b, out=c)
            torch.cuda.synchronize()
            if time.perf_counter() - begin >= min_warmup_s:
                break
        seconds = []
        for _ in range(samples):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.matmul(a, b, out=c)
            stop.record()
            stop.synchronize()
            seconds.append(start.elapsed_time(stop) / 1e3)
        if not torch.isfinite(c).all():
            raise SystemExit(f"gpu_check_torch: torch.matmul {prec} produced non-finite values")
        median = statistics.median(seconds)
        out["results"][prec] = {"median_s": median, "samples": samples,
                                "tflops": 2.0 * size**3 / median / 1e12}
        del a, b, c
        torch.cuda.empty_cache()
    out["cublas"] = torch_cublas()
    return out


def tcbench_rates(doc: dict, size: int) -> dict[str, dict]:
    """{precision: {"tflops": median over rows} or {"error": message}} for the cuBLASLt rows
    of a Google Benchmark JSON at size^3."""
    found: dict[str, list[float]] = {}
    errors: dict[str, str] = {}
    for row in doc.get("benchmarks", []):
        if row.get("run_type") == "aggregate":
            continue
        m = NAME.search(row.get("name", ""))
        if not m or m["prec"] not in PRECISIONS or {m["m"], m["n"], m["k"]} != {str(size)}:
            continue
        if row.get("error_occurred"):
            errors[m["prec"]] = row.get("error_message", "error")
        elif isinstance(row.get("tflops"), (int, float)):
            found.setdefault(m["prec"], []).append(float(row["tflops"]))
    rates = {p: {"tflops": statistics.median(v)} for p, v in found.items()}
    for p, msg in errors.items():
        rates.setdefault(p, {"error": msg})
    return rates


def compare(torch_doc: dict, tcbench_doc: dict) -> dict:
    size = int(torch_doc["size"])
    ours = tcbench_rates(tcbench_doc, size)
    rows = []
    for prec in PRECISIONS:
        t = torch_doc.get("results", {}).get(prec, {}).get("tflops")
        o = ours.get(prec, {})
        row = {"precision": prec, "torch_tflops": t, "tcbench_tflops": o.get("tflops"),
               "ratio": None, "verdict": ""}
        if o.get("error"):
            row["verdict"] = f"tcbench: {o['error']}"
        elif o.get("tflops") is None:
            row["verdict"] = "tcbench: no result at this size"
        elif not t:
            row["verdict"] = "torch: no result"
        else:
            row["ratio"] = o["tflops"] / t
            row["verdict"] = "ok" if row["ratio"] >= TARGET_RATIO else \
                f"BELOW TARGET (>= {TARGET_RATIO:.2f}x)"
        rows.append(row)
    theirs = torch_doc.get("cublas") if isinstance(torch_doc.get("cublas"), dict) else {}
    context = tcbench_doc.get("context") if isinstance(tcbench_doc.get("context"), dict) else {}
    ours = context.get("cublaslt_version")
    torch_text = theirs.get("wheel") or (f"the system's ({theirs['library']})"
                                         if theirs.get("library") else None)
    a, b = version_number(theirs.get("wheel")), version_number(str(ours) if ours else None)
    return {"size": size, "target": TARGET_RATIO, "rows": rows,
            "torch_version": torch_doc.get("torch_version"), "device": torch_doc.get("device"),
            "torch_cublas": torch_text, "torch_cublaslt_library": theirs.get("library"),
            "tcbench_cublaslt": f"cuBLASLt {ours}" if ours else None,
            "same_cublas": (a == b) if a is not None and b is not None else None}


def render(result: dict) -> str:
    size = result["size"]
    lines = [(f"torch.matmul vs tcbench cuBLASLt at {size}x{size}x{size} (median TFLOP/s; "
             f"torch {result.get('torch_version')}, {result.get('device')}):"),
             f"  cuBLAS: torch's {result.get('torch_cublas') or 'unknown'}, tcbench's "
             f"{result.get('tcbench_cublaslt') or 'unknown'}"
             + ("" if result.get("same_cublas") else
                " (not known to be the same: a ratio can be a library version)"),
             f"  {'precision':<10}{'torch':>10}{'tcbench':>10}{'tcbench/torch':>15}  verdict"]
    for r in result["rows"]:
        t = f"{r['torch_tflops']:.1f}" if r["torch_tflops"] else "-"
        o = f"{r['tcbench_tflops']:.1f}" if r["tcbench_tflops"] else "-"
        q = f"{r['ratio']:.3f}x" if r["ratio"] is not None else "-"
        lines.append(f"  {r['precision']:<10}{t:>10}{o:>10}{q:>15}  {r['verdict']}")
    return "\n".join(lines)


def _load(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        print(f"gpu_check_torch: cannot read {path}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    t = sub.add_parser("time", help="time torch.matmul bf16 and fp16 (needs PyTorch and CUDA)")
    t.add_argument("--size", type=int, default=8192)
    t.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("compare", help="tcbench / torch per precision")
    c.add_argument("torch_json", type=Path)
    c.add_argument("tcbench_json", type=Path)
    c.add_argument("--out", type=Path)
    f = sub.add_parser("filter", help="print the tcbench --benchmark_filter for a size")
    f.add_argument("--size", type=int, default=8192)
    args = ap.parse_args(argv)
    if args.command == "filter":
        print(tcbench_filter(args.size))
        return 0
    if args.command == "time":
        args.out.write_text(json.dumps(time_torch(args.size), indent=2) + "\n")
        return 0
    result = compare(_load(args.torch_json), _load(args.tcbench_json))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
