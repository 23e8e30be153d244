// The accuracy half of the FP8 topic's per-layer study: a transformer block's four GEMMs (QKV,
// attention out, MLP up, MLP down) at hidden size h, each run in every precision option (BF16,
// FP16, FP8 E4M3 with delayed or current scaling and fast or split accumulation) on cuBLASLt, and
// compared with an FP64 chain of the same weights and input. The errors feed the per-layer
// precision selector (tcbench/studies/precision_selector.hpp) together with the layer times that
// bench_fp8 measures. A GPU study: it knows cuBLASLt and the FP8 scaling kernels, not the harness.
//
// Layer GEMMs are column-major D (features x tokens) = W^T X with W stored k x m (PyTorch's
// [out, in] row-major), i.e. TN. The error chain computes kErrorTokens columns: this block has no
// attention mixing, so tokens are independent and 256 represent all of them.
#pragma once

#include "tcbench/gemm_lt.hpp"
#include "tcbench/precision.hpp"
#include "tcbench/studies/precision_selector.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tcbench::studies {

struct LayerShape {
  std::string name;      // "qkv", "attn_out", "mlp_up", "mlp_down"
  std::int64_t out, in;  // m and k of the layer's GEMM
};
std::vector<LayerShape> block_layers(std::int64_t hidden);

// The ways a layer can run: BF16, FP16, and FP8 with each recipe (numerics/fp8_scaling.hpp:
// delayed and current scaling with Transformer Engine's forward default, fast accumulation,
// and delayed scaling with split accumulation).
struct LayerOption {
  Precision precision;
  std::optional<numerics::Fp8Recipe> recipe;  // FP8 options only
  bool fast_accum() const { return !recipe || numerics::fast_accumulation(*recipe); }
};
std::span<const LayerOption> layer_options();

inline constexpr std::int64_t kErrorTokens = 256;

// The study's errors beside measured times: each layer's options, the per-layer selection and the
// two uniform mixes (all BF16, all FP8 with delayed scaling), and each mix's end-to-end error.
struct BlockSelection {
  std::vector<LayerMeasurements> layers;
  Selection all_bf16, all_fp8, selected;
  double error_bf16 = 0, error_fp8 = 0, error_selected = 0;
};

class Fp8BlockStudy {
 public:
  // Computes every layer's error in every option (each layer alone, on the FP64 chain's input).
  // `lt` and `stream` must outlive the study.
  Fp8BlockStudy(const LtHandle& lt, int cc_major, int cc_minor, std::int64_t hidden,
                cudaStream_t stream);
  ~Fp8BlockStudy();
  Fp8BlockStudy(const Fp8BlockStudy&) = delete;
  Fp8BlockStudy& operator=(const Fp8BlockStudy&) = delete;

  const std::vector<LayerShape>& layers() const { return layers_; }
  // Relative Frobenius error of layer `layer` run in option `option`, vs FP64.
  double layer_error(std::size_t layer, std::size_t option) const;
  // The block's end-to-end error when layer i runs in option options[i] (the same input through
  // the whole chain), vs the FP64 chain's output.
  double chain_error(std::span<const std::size_t> options) const;

  // Combines the errors with `seconds(layer, option)` (the caller's measurement of each option)
  // and runs the per-layer selector with `budget`.
  BlockSelection select(const std::function<double(std::size_t, std::size_t)>& seconds,
                        double budget = kDefaultLayerErrorBudget) const;

  // Device memory the study needs at its largest (one layer's weights in every format).
  static std::size_t bytes_needed(std::int64_t hidden);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<LayerShape> layers_;
  std::vector<std::vector<double>> errors_;  // [layer][option]
};

}  // namespace tcbench::studies
