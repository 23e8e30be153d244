// What each scaling granularity buys in accuracy and costs in bytes, on the host (no GPU): the
// table of docs/concepts/fp8-scaling.md, "Block scaling: what you should see".
//
// The data are what a transformer layer's GEMMs see (deterministic: numerics/random.hpp):
//   activations X (tokens x hidden): N(0, 1) with a few outlier channels 100x the rest, as LLM
//                activations have them (the channels are K: they sit inside every token's row);
//   weights W (out x hidden): N(0, 1 / hidden);
//   gradients G (tokens x hidden): N(0, 1) x exp(2 N(0, 1)) x 1e-6, a wide dynamic range;
//   last step's X and G (what delayed scaling's amax comes from): other draws, 1 / growth the size.
// Each option quantizes them (numerics/block_quantize.hpp) and is measured against FP32: the
// relative Frobenius error ||q - x|| / ||x|| and the worst element max|q - x| / max|x|, of each
// tensor and of the layer's product X W^T (accumulated in FP64, so only the inputs' rounding is
// measured), with the storage per element, scales included. BF16 is the row to compare with.
// "Delayed" per-tensor scaling casts with the amax of the previous step's tensor (an independent
// draw of the same distribution), as Transformer Engine's delayed recipe does in steady state.
#pragma once

#include "tcbench/numerics/block_quantize.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tcbench::studies {

struct ScalingOption {
  std::string_view name;       // "fp8_1x128", "mxfp4", ...
  std::string_view what;       // one line for the table
  numerics::Granularity x, w;  // activations (and gradients), weights
  numerics::ElementFormat format;
  numerics::MxRule rule = numerics::MxRule::ocp;
  bool delayed = false;
  bool bf16 = false;  // the BF16 reference row: plain rounding, no scale
};
// The rows of the table, finest last within each element width.
std::vector<ScalingOption> scaling_options();

struct ErrorPair {
  double rel = 0;    // relative Frobenius error vs FP32
  double worst = 0;  // max |error| / max |x|
};

struct ScalingRow {
  ScalingOption option;
  double bytes_per_element = 0;  // X and W together, scales included
  ErrorPair activations, weights, gradients, gemm;
  double gemm_vs_bf16 = 0;  // the GEMM's rel error / BF16's
};

struct ScalingStudyConfig {
  std::int64_t tokens = 128, hidden = 2048, out = 1024;
  int outlier_channels = 8;
  float outlier_scale = 100.0f;
  // This step's activations and gradients over last step's, whose amax delayed scaling uses: a
  // tensor that grows, as delayed scaling's failure needs. With growth 1 (other draws of the same
  // distribution) whether the stale amax clips was a coin flip of the seed.
  float growth = 1.5f;
  std::uint64_t seed = 0x5CA1E;
};

std::vector<ScalingRow> block_scaling_study(const ScalingStudyConfig& cfg = {});

// The table as markdown rows (header included), as the concept page shows it.
std::string markdown_table(const std::vector<ScalingRow>& rows);

}  // namespace tcbench::studies
