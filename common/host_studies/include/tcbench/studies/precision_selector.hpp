// Per-layer precision choice: given, for each layer of a model, the measured time and error of
// every way it can run (FP8 with a scaling recipe, BF16, FP16), pick for each layer the fastest
// option whose error stays within a budget.
//
// This is what Transformer Engine leaves to its user: TE manages FP8 scales inside the regions
// the user wraps in te.autocast, but the user decides which layers run in FP8 (see
// docs/concepts/fp8-scaling.md). The selector makes that decision from measurements.
//
// Rules, in order:
//   1. An option is eligible when its error is finite and <= the budget (NaN never passes).
//   2. Among eligible options the fastest wins; equal times go to the smaller error, then to
//      the option listed first (callers list their preference order).
//   3. A layer with no eligible option falls back to its most accurate option (smallest error;
//      equal errors: the faster, then the first listed), so the block still has a precision to
//      run in, and is reported as over budget with a sentence saying by how much.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tcbench/numerics/fp8_scaling.hpp"
#include "tcbench/precision.hpp"

namespace tcbench::studies {

// Studies are loops and data on top of the numerics vocabulary (formats, quantization,
// calibration, scaling rules): its names are this namespace's too.
using namespace tcbench::numerics;

// Default budget on each layer's relative Frobenius error against an FP32 reference of the
// unquantized inputs. 5% admits E4M3 GEMMs whose inputs per-tensor scaling represents well
// (about 3-4% for uniform data, see the selector tests) and rejects layers whose outliers push
// the bulk of the tensor into FP8's subnormals or whose E5M2 operand costs too much precision.
// Justified in docs/concepts/fp8-scaling.md.
inline constexpr double kDefaultLayerErrorBudget = 0.05;

// One measured way to run a layer.
struct PrecisionOption {
  Precision precision = Precision::bf16;
  std::optional<Fp8Recipe> recipe;  // what else distinguishes it (FP8 options only)
  double seconds = 0;         // measured time of the layer's GEMM (plus its scaling work for FP8)
  double rel_error = 0;       // vs the FP32 reference of the unquantized inputs
  std::string label() const;  // "fp8/delayed", "bf16"
};

struct LayerMeasurements {
  std::string layer;  // "qkv", "attn_out", "mlp_up", "mlp_down"
  std::vector<PrecisionOption> options;
  // The fastest option in `precision` (and `recipe`, when given); null when there is none.
  const PrecisionOption* fastest(Precision precision, std::optional<Fp8Recipe> recipe = {}) const;
};

struct LayerChoice {
  std::string layer;
  std::size_t option = 0;  // index into that layer's options
  PrecisionOption chosen;
  bool within_budget = true;
  std::string reason;  // one sentence: why this option
};

struct Selection {
  double budget = kDefaultLayerErrorBudget;
  std::vector<LayerChoice> layers;
  double total_seconds = 0;  // sum of the chosen options' times
  bool within_budget() const;
  std::size_t over_budget_count() const;
};

// Throws std::invalid_argument, naming the layer and option, for a budget that is not a
// positive finite number, a layer without options, or a time that is negative, NaN or Inf.
Selection select_precisions(std::span<const LayerMeasurements> layers,
                            double budget = kDefaultLayerErrorBudget);

// The fastest option of `precision` (and `recipe` when given) in each layer, as a Selection, for
// comparing the selected mix with all-BF16 or all-FP8. Layers lacking that precision throw
// std::invalid_argument. within_budget is set against `budget` as above.
Selection uniform_selection(std::span<const LayerMeasurements> layers, Precision precision,
                            std::optional<Fp8Recipe> recipe = {},
                            double budget = kDefaultLayerErrorBudget);

}  // namespace tcbench::studies
