// The GEMM efficiency model (numerics/gemm_model.hpp) fed from what tcbench actually runs: the
// element sizes of the cuBLASLt data types (element_of, gemm_spec.hpp), the GPU's rates from the
// peak table, and a tile (the one cuBLASLt reports, translated by numerics/lt_tiles.hpp, or an
// assumed one).
#pragma once

#include "tcbench/numerics/gemm_model.hpp"
#include "tcbench/peaks.hpp"
#include "tcbench/precision.hpp"

#include <library_types.h>

#include <cstdint>

namespace tcbench {

// The GPU's dense rate for `p` (pct_of_peak's denominator: the datasheet figure for known
// products, else the max-clock model) and its DRAM bandwidth. flops_per_s is 0 where the GPU
// has no such path.
numerics::GpuRates gpu_rates(const GpuSpec& gpu, Precision p);

struct ModelledGemm {
  std::int64_t m = 0, n = 0, k = 0;
  cudaDataType_t input = CUDA_R_16F;   // A and B
  cudaDataType_t output = CUDA_R_16F;  // D
  std::int64_t batch = 1;              // matrices of a strided batch
};

// predict_gemm() for this GPU at one CTA per SM. Throws InvalidArgument when the GPU has no
// rate for `p`, and std::invalid_argument for non-positive sizes.
numerics::GemmTimePrediction predict_on(const GpuSpec& gpu, Precision p, const ModelledGemm& g,
                                        numerics::TileShape tile, int split_k = 1);

}  // namespace tcbench
