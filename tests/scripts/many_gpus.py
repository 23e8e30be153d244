"""Result files for many fictional GPUs, for the report's scale and browser tests.

``fleet(n, folder)`` writes n result files, one per made-up GPU ("Fixture GPU 01" ...), each the
union of the committed fixtures' benchmarks (every topic: fp16_vs_fp32, int8_gemm, alignment,
fp8, loss_scaling, tensor_util, tensor_peak, block_scaling), the first file that names a
benchmark winning. GPU i takes the context of one of three fixture GPUs in turn (compute
capability 8.0, 9.0 or 7.5: so some lack FP8, TF32 or BF16) and a speed factor between 0.5 and
2: its peaks, rates and bandwidths are multiplied by it and its times divided by it, so its share
of peak stays the fixture's. A row from a file of another fixture GPU is first brought to this
GPU's peaks (its rate times the ratio of the two peaks), and dropped when this GPU lacks the
precision. Every number is fictional test data, not a measurement (the files
keep ``tcbench_synthetic``). ``nine(folder)`` is the review's case: the nine fixture files as
they are.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from conftest import FIXTURES

# Per base GPU: the fixtures merged into each fictional GPU of that kind, first file first.
KINDS = {
    "a": ["gpu_a.json", "int8_gemm_a.json", "alignment_quick.json", "loss_scaling.json",
          "tensor_util_nocounters.json"],  # alignment and tensor_util: GPU H's, ported
    "b": ["gpu_b.json", "int8_gemm_b.json", "alignment_quick.json", "fp8_gpu_h.json",
          "loss_scaling.json", "tensor_util.json", "block_scaling_h.json"],
    "c": ["gpu_c.json", "loss_scaling.json"],
}
NINE = ["gpu_a.json", "gpu_b.json", "gpu_c.json", "alignment_quick.json", "fp8_gpu_h.json",
        "loss_scaling.json", "tensor_util.json", "int8_gemm_a.json", "int8_gemm_b.json"]
# Counters that scale with the GPU's speed; times scale inversely. Everything else (shares of
# peak, errors, accuracies, speed-ups within one GPU) stays.
RATES = ("tflops", "tops", "gbps", "model_tflops")
TIMES = ("real_time", "cpu_time", "time_median_us", "time_per_step_us", "gemm_us", "copy_us",
         "unpadded_us", "block_time_us")


def _load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def _peak(context: dict, what: str) -> float:
    try:
        return float(context.get(f"peak_{what}", 0))
    except ValueError:
        return 0.0


def _scaled_row(row: dict, speed: float) -> dict:
    out = dict(row)
    for key in RATES:
        if isinstance(out.get(key), (int, float)) and out.get("aggregate_name") != "cv":
            out[key] = out[key] * speed
    for key in TIMES:
        if isinstance(out.get(key), (int, float)) and out.get("aggregate_name") != "cv":
            out[key] = out[key] / speed
    return out


def _ported(row: dict, source: dict, target: dict) -> dict | None:
    """``row`` of a file with context ``source`` as the GPU of context ``target`` would run it:
    its rate scaled by the ratio of the two peaks; None when the target lacks the precision."""
    parts = row["run_name"].split("/")
    precision = parts[2] if len(parts) > 2 else ""
    what = "gbps" if "gbps" in row else precision
    have, want = _peak(source, what), _peak(target, what)
    if f"peak_{what}" in target and want == 0.0:
        return None  # the target GPU does not support the precision
    return _scaled_row(row, want / have) if have > 0 and want > 0 else row


def gpu_document(index: int, n: int) -> dict:
    kind = "abc"[index % 3]
    speed = 0.5 * 4 ** (index / max(1, n - 1))  # 0.5 .. 2, geometric
    files = KINDS[kind]
    context = copy.deepcopy(_load(files[0])["context"])
    name = f"Fixture GPU {index + 1:02d}"
    context.update({"gpu_name": name, "gpu_ordinal": str(index), "host_name": f"node{index // 4}",
                    "gpu_uuid": f"GPU-00000000-0000-0000-0000-{index:012d}"})
    for key, raw in list(context.items()):
        if key.startswith("peak_") and not key.endswith("_source"):
            try:
                context[key] = f"{float(raw) * speed:.4g}"
            except ValueError:
                pass
    base = _load(files[0])["context"]
    rows, seen = [], set()
    for file in files:
        doc = _load(file)
        names = {r["run_name"] for r in doc["benchmarks"]}
        for row in doc["benchmarks"]:
            if row["run_name"] in seen:
                continue
            ported = _ported(row, doc["context"], base) if file != files[0] else row
            if ported is not None:
                rows.append(_scaled_row(ported, speed))
        seen |= names
    return {"context": context, "benchmarks": rows}


def fleet(n: int, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        path = folder / f"gpu{i + 1:02d}.json"
        path.write_text(json.dumps(gpu_document(i, n)))
        paths.append(path)
    return paths


def nine() -> list[Path]:
    return [FIXTURES / name for name in NINE]
