// The GEMM time model (numerics/gemm_time_model.hpp) fed from what tcbench actually runs: the
// element sizes of the cuBLASLt data types (gemm_spec.hpp), the GPU's rates from the peak table,
// and the constants (gemm_model_constants.hpp). predict_time() is what a library GEMM takes,
// scored against published measurements by `tcbench model check`; the benchmarks, the host
// studies and `tcbench model predict` all call it. quantization_bound() is the tile and wave
// arithmetic of one given tile under the roofline, which bench_alignment evaluates with the tile
// cuBLASLt chose: a bound, not a prediction.
#pragma once

#include "tcbench/gemm_model_constants.hpp"
#include "tcbench/gemm_spec.hpp"
#include "tcbench/numerics/gemm_time_model.hpp"
#include "tcbench/peaks.hpp"
#include "tcbench/precision.hpp"

#include <library_types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tcbench {

// The GPU's dense rate for `p` (pct_of_peak's denominator: the datasheet figure for known
// products, else the max-clock model) and its DRAM bandwidth. flops_per_s is 0 where the GPU
// has no such path.
struct GpuRates {
  double flops_per_s = 0;
  double bytes_per_s = 0;
};
GpuRates gpu_rates(const GpuSpec& gpu, Precision p);

// The GPUs the time model knows by name: every product of the peak table (peaks.cpp), with the
// SM count, clocks and memory its datasheet gives (the bandwidth is 2 x memory clock x bus / 8,
// as peak_memory_gbps computes it). A product with two memory versions has one row each; the
// first row of a canonical name is the one the bare name means.
struct ModelProduct {
  std::string_view canonical;  // the peak table's name: "A100 SXM"
  GpuSpec spec;                // spec.name: the cudaDeviceProp name ("NVIDIA A100-SXM4-80GB")
  std::string_view memory_source;
};
std::span<const ModelProduct> model_products();
// By canonical name or CUDA device name, ignoring case and repeated or surrounding blanks.
const ModelProduct* find_model_product(std::string_view name);

// One GEMM as the time model's callers state it: C[m, n] = A B, C row-major; layout_a "mk" (A
// K-contiguous) or "km"; layout_b "kn" (B N-contiguous) or "nk".
struct GemmQuery {
  Precision precision = Precision::fp16;
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  bool a_k_contiguous = true, b_n_contiguous = true;
  std::optional<cudaDataType_t> c_type;  // default: the precision table's D type
};

struct ModelPrediction {
  // Set when the model gives no number: the reason, one sentence ("cuBLASLt refuses FP8 ...").
  std::string not_covered;
  numerics::GemmTimePrediction time;
  ArchFamily family = ArchFamily::ampere;
  double ceiling = 0;           // fraction of the datasheet rate used (typical shape)
  std::string ceiling_basis;    // where the ceiling came from
  std::string constants_basis;  // which family's constants were used
  // What the number stands on: "fitted" (the family's own constants and ceiling, fitted on
  // published data), "transferred from <family>: ..." saying what was borrowed, or "bound: ..."
  // when the model's time was under the roofline bound's and the bound is returned.
  std::string coverage;
  // A caveat that goes with the number, when there is one (a layout cuBLASLt would not take
  // without a transpose the model does not price).
  std::string note;
};

// The row-major query of one of tcbench's own (column-major) GEMMs: D (m x n, ld m) = op(A) op(B)
// is the row-major D^T (n x m) = op(B)^T op(A)^T, so M and N swap, B becomes the first operand
// (K-contiguous unless B is transposed) and A the second (M-contiguous unless A is transposed,
// as in TN). Leading dimensions are taken tight; the batch is spec.batch_count.
GemmQuery query_of(const GemmSpec& spec, Precision p);

// The time model for `q` on `gpu`. `product` is the peak-table name for the ceiling lookup
// (known_product(gpu.name) when empty). Never throws for a shape it does not cover: it says so
// in not_covered. InvalidArgument for non-positive sizes.
ModelPrediction predict_time(const GpuSpec& gpu, const GemmQuery& q, std::string_view product = {},
                             const ModelConstants& constants = ModelConstants::embedded());

// The tile and wave quantization of `tile` (one CTA per SM, `split_k` K partitions) on `gpu`, and
// the bound it implies: the datasheet rate times the quantization efficiency, under the roofline.
struct QuantizationBound {
  numerics::TileQuantization quantization;
  double flops_per_s = 0;  // a bound, never a prediction
};
// InvalidArgument when the GPU has no rate for the precision.
QuantizationBound quantization_bound(const GpuSpec& gpu, const GemmQuery& q,
                                     numerics::TimeModelTile tile, int split_k);

}  // namespace tcbench
