// What the FP8 tensor-core accumulator costs a GEMM as K grows, and what promotion buys: the
// FP8 block study's operands (fp8_block.hpp: weights uniform(-a, a) with a = sqrt(3 / k), the
// block's input uniform(-1, 1), each quantized to E4M3 with per-tensor current scaling), their
// dot products accumulated by the published accumulator models (tensor_accumulator.hpp), and
// the error of each against FP64. CPU-computed: the models' errors, not any GPU's.
//
// The GPU half (bench_fp8's accum_error rows) runs the same operands through the tensor cores.
#pragma once

#include "tcbench/numerics/tensor_accumulator.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tcbench::studies {

// One GEMM D (m x n) = A B^T with A (m x k) and B (n x k) both K-contiguous ("TN"), as the
// FP8 block study builds its layers: A the weights, B the activations. a8 and b8 hold the E4M3
// values (x * scale, rounded); a8 * a_scale_inv dequantizes.
struct Fp8Operands {
  std::int64_t m = 0, n = 0, k = 0;
  std::vector<float> a32, b32, a8, b8;
  float a_scale_inv = 1, b_scale_inv = 1;
};
// Deterministic (fixed seeds); throws std::invalid_argument for a size below 1.
Fp8Operands fp8_study_operands(std::int64_t m, std::int64_t n, std::int64_t k);

// How one curve accumulates: a published model, or exactly (FP64) or in IEEE FP32 one product at
// a time (CUDA cores) when `model` is empty.
struct AccumulationCase {
  std::string_view variant;  // benchmark variant: "accum_13bits"
  std::optional<numerics::AccumulatorModel> model;
  bool fp64 = false;       // no model: FP64 when true, FP32 when false
  std::string_view label;  // where the model comes from
};
// FP64, FP32, 13 bits (Ada/Hopper, published) without and with promotion every 64, 128, 256 and
// 512 products, 25 bits (B200, published).
std::span<const AccumulationCase> accumulation_cases();

inline constexpr std::int64_t kAccumulationKs[] = {256, 512, 1024, 2048, 4096, 8192, 16384};

struct AccumulationError {
  std::int64_t k = 0;
  double rel_error = 0;              // vs FP64 on the same E4M3 values: the accumulation alone
  double rel_error_unquantized = 0;  // vs FP64 on the FP32 originals: what a user gets
};

// The error of every case at every K of kAccumulationKs, the K-long prefixes of one
// m x n x 16384 problem; result[c][i] is case c at kAccumulationKs[i].
std::vector<std::vector<AccumulationError>> accumulation_errors(std::int64_t m, std::int64_t n);

}  // namespace tcbench::studies
