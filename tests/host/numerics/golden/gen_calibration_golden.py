"""Golden amax values for tcbench's calibrators, from pytorch-quantization's algorithms.

    .venv/bin/python tests/host/numerics/golden/gen_calibration_golden.py    # rewrites the header

Writes calibration_golden.hpp beside this file; test_calibration.cpp compares tcbench's
calibrators with it exactly. The algorithms are re-implemented here with numpy/scipy from the
behaviour of NVIDIA pytorch-quantization's calib/histogram.py (NVIDIA/TensorRT,
tools/pytorch-quantization/pytorch_quantization/calib/histogram.py) and tensor_quant.py, as the
concept page docs/concepts/int8-calibration.md states it:

  percentile  cdf = running sum of count / total; idx = first bin with cdf >= p / 100
              (numpy searchsorted, side left); amax = edges[idx], the LOWER edge of that bin.
  entropy     the zero bin is replaced first (bins[0] = bins[1]), then for each candidate
              i = start_bin .. num_bins: P = bins[:i] with sum(bins[i:]) added to P[i-1];
              Q = bins[:i] grouped into 128 levels by np.digitize over linspace(0, i, 129), each
              level's mass spread evenly over its nonzero bins (zero bins stay zero);
              KL = scipy.stats.entropy(P, Q); the LAST argmin wins; amax = edges[i].
  mse         centres = (edges[1:] + edges[:-1]) / 2 in float32; for each candidate centre c_i,
              i = start_bin .. num_bins - 1: mse = mean(count * (fakequant(centre, c_i) - centre)^2)
              with fakequant(x, a) = rint(x * (127 / a)) clamped to +-127, / (127 / a) in float32;
              the FIRST argmin wins; amax = c_i.

The histograms come from seeded numpy draws (2048 bins over [0, max |x|], as pytorch-quantization's
first collect() makes them), so the header carries the counts and the C++ test needs no numpy.
Each golden is also checked for robustness here: the winning candidate must beat the runner-up by
more than floating-point noise, so a bit-different but correct summation order cannot flip it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy.stats import entropy as scipy_entropy

HERE = Path(__file__).resolve().parent
OUT = HERE / "calibration_golden.hpp"
NUM_BINS = 2048
START_BIN = 128
LEVELS = 128  # 2^(8 - 1): signed 8-bit, magnitude levels
PERCENTILES = (99.0, 99.9, 99.99, 99.999, 100.0)


def histogram(abs_x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.float32]:
    """Counts over 2048 equal bins of [0, max|x|] (float32 max, as the collected tensor holds)."""
    x = abs_x.astype(np.float32)
    top = np.float32(x.max())
    edges = np.linspace(0.0, float(top), NUM_BINS + 1)  # exact: top * k / 2048 in double
    counts, _ = np.histogram(x.astype(np.float64), bins=edges)
    return counts.astype(np.int64), edges, top


def amax_percentile(counts: np.ndarray, edges: np.ndarray, p: float) -> tuple[float, int]:
    cdf = np.cumsum(counts / counts.sum())
    idx = int(np.searchsorted(cdf, p / 100))
    return float(np.float32(edges[idx])), idx


def entropy_divergences(counts: np.ndarray, replace_zero_bin: bool = True) -> np.ndarray:
    bins = counts.astype(np.int64).copy()
    if replace_zero_bin:
        bins[0] = bins[1]
    out = []
    for i in range(START_BIN, len(bins) + 1):
        space = np.linspace(0, i, num=LEVELS + 1)
        level = np.digitize(np.arange(i), space) - 1
        nonzero = bins[:i] != 0
        level_mass = np.bincount(level[nonzero], weights=bins[:i][nonzero], minlength=LEVELS)
        level_bins = np.bincount(level[nonzero], minlength=LEVELS)
        q = np.zeros(i)
        q[nonzero] = level_mass[level[nonzero]] / level_bins[level[nonzero]]
        p = bins[:i].astype(np.float64)
        p[-1] += bins[i:].sum()
        out.append(scipy_entropy(p, q))
    return np.array(out)


def last_argmin(v: np.ndarray) -> int:
    return len(v) - 1 - int(np.argmin(v[::-1]))


def amax_entropy(counts, edges, replace_zero_bin=True) -> tuple[float, int, np.ndarray]:
    kl = entropy_divergences(counts, replace_zero_bin)
    best = last_argmin(kl)
    others = np.delete(kl, best)
    # Robust: the runner-up (other than an exact tie, which both sides resolve the same way)
    # must be worse by more than summation noise.
    gap = np.min(np.abs(others[others != kl[best]] - kl[best]))
    assert gap > 1e-9 * max(abs(kl[best]), 1e-3), f"entropy golden not robust (gap {gap})"
    i = START_BIN + best
    return float(np.float32(edges[i])), i, kl


def fake_quant_pq(x: np.ndarray, amax: np.float32) -> np.ndarray:
    """pytorch-quantization's fake_tensor_quant for 8 signed bits, narrow range, in float32."""
    scale = np.float32(127.0) / amax
    q = np.clip(np.rint(x * scale), -127, 127).astype(np.float32)
    return q / scale


def fake_quant_tcbench(x: np.ndarray, amax: np.float32) -> np.ndarray:
    """tcbench's fake_quant_int8: scale = amax / 127, q = rint(x / scale), x' = q * scale."""
    scale = amax / np.float32(127.0)
    q = np.clip(np.rint(x / scale), -127, 127).astype(np.float32)
    return q * scale


def amax_mse(counts, edges) -> tuple[float, int]:
    e = edges.astype(np.float32)
    centres = (e[1:] + e[:-1]) / np.float32(2)
    c = counts.astype(np.float64)
    mse = {fq.__name__: [] for fq in (fake_quant_pq, fake_quant_tcbench)}
    for i in range(START_BIN, len(centres)):
        for fq in (fake_quant_pq, fake_quant_tcbench):
            d = (fq(centres, centres[i]) - centres).astype(np.float64)
            mse[fq.__name__].append(np.mean(d * d * c))
    picks = {k: int(np.argmin(v)) for k, v in mse.items()}
    assert len(set(picks.values())) == 1, \
        f"quantizer conventions disagree on the MSE argmin: {picks}"
    v = np.array(mse["fake_quant_pq"])
    best = picks["fake_quant_pq"]
    gap = np.min(np.abs(np.delete(v, best) - v[best]))
    assert gap > 1e-9 * v[best], f"mse golden not robust (gap {gap})"
    i = START_BIN + best
    return float(centres[i]), i


def cases(rng: np.random.Generator) -> dict[str, np.ndarray]:
    n = 1_000_000
    gauss = rng.standard_normal(n)
    # Post-ReLU: about half the values exactly 0, the common INT8 activation.
    post_relu = np.maximum(rng.standard_normal(n) * 1.5 + 0.1, 0.0)
    # Heavy-tailed: Student t with 3 degrees of freedom.
    heavy = np.abs(rng.standard_t(3, n))
    # Gaussian bulk with 0.01 % outliers near 40 sigma.
    outliers = np.abs(gauss)
    k = n // 10_000
    outliers[:k] = rng.uniform(30.0, 40.0, k)
    return {"post_relu": post_relu, "heavy_tailed": heavy, "outliers": outliers}


def kl_literal(v: float) -> str:
    """KL is +inf where Q misses mass that P has."""
    return "kInf" if np.isinf(v) else repr(float(v))


def f32(v: float) -> str:
    """A float literal that round-trips exactly (hex float)."""
    return float(np.float32(v)).hex() + "f"


def main() -> int:
    rng = np.random.default_rng(20260801)
    lines = [
        "// Generated by gen_calibration_golden.py from pytorch-quantization's calibration",
        "// algorithms (numpy/scipy re-implementation). Do not edit; rerun the generator.",
        "#pragma once",
        "",
        "#include <array>",
        "#include <cstdint>",
        "#include <limits>",
        "",
        "namespace tcbench_golden {",
        "",
        "inline constexpr double kInf = std::numeric_limits<double>::infinity();",
        "struct PercentileGolden { double percentile; float amax; int bin; };",
        "struct KlSample { int candidate_bins; double kl; };",
        "",
    ]
    for name, data in cases(rng).items():
        counts, edges, top = histogram(data)
        ent, ent_i, kl = amax_entropy(counts, edges)
        ent_old, ent_old_i, _ = amax_entropy(counts, edges, replace_zero_bin=False)
        mse, mse_i = amax_mse(counts, edges)
        pct = [(p, *amax_percentile(counts, edges, p)) for p in PERCENTILES]
        print(f"{name}: max {top:.6g} entropy {ent:.6g} (bin {ent_i}; without bins[0]=bins[1]: "
              f"{ent_old:.6g}) mse {mse:.6g} (bin {mse_i}) "
              + " ".join(f"p{p:g} {a:.6g}" for p, a, _ in pct))
        kl_samples = [(START_BIN + j, kl[j]) for j in range(0, len(kl), 64)]
        kl_samples.append((ent_i, kl[ent_i - START_BIN]))
        lines += [
            f"namespace {name} {{",
            f"inline constexpr float kRangeMax = {f32(top)};",
            f"inline constexpr float kEntropyAmax = {f32(ent)};  // candidate {ent_i} bins",
            f"inline constexpr float kEntropyAmaxWithoutZeroBinFix = {f32(ent_old)};",
            f"inline constexpr float kMseAmax = {f32(mse)};  // centre of bin {mse_i}",
            f"inline constexpr std::array<PercentileGolden, {len(pct)}> kPercentile{{{{",
            *[f"    {{{p!r}, {f32(a)}, {i}}}," for p, a, i in pct],
            "}};",
            f"inline constexpr std::array<KlSample, {len(kl_samples)}> kKl{{{{",
            *[f"    {{{i}, {kl_literal(v)}}}," for i, v in kl_samples],
            "}};",
            f"inline constexpr std::array<std::uint64_t, {NUM_BINS}> kCounts{{{{",
        ]
        for row in range(0, NUM_BINS, 12):
            lines.append("    " + ", ".join(str(int(c)) for c in counts[row:row + 12]) + ",")
        lines += ["}};", f"}}  // namespace {name}", ""]
    lines += ["}  // namespace tcbench_golden", ""]
    OUT.write_text("\n".join(lines))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
