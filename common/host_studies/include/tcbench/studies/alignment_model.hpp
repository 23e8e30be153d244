// The alignment topic's predictions without a GPU: the efficiency model (numerics/gemm_model)
// fed with tcbench's peak table for two reference GPUs and the tile cuBLASLt would most likely
// pick (the benchmark replaces the assumption with the tile cuBLASLt reports). The "what you
// should see" tables of docs/concepts/alignment.md and the host half of the alignment question
// (tcbench_studies) come from here.
#pragma once

#include "tcbench/gemm_prediction.hpp"
#include "tcbench/peaks.hpp"
#include "tcbench/precision.hpp"

#include <cstdint>
#include <span>
#include <string_view>

namespace tcbench::studies {

struct ModelGpu {
  std::string_view label;  // "H100 SXM"
  std::string_view slug;   // "h100_sxm": a benchmark-name component
  GpuSpec spec;
};
// H100 SXM (132 SMs, 3352 GB/s) and A100 SXM 80GB (108 SMs, 2039 GB/s), as test_peaks.cpp
// describes them; their peaks are the datasheet figures of peaks.cpp.
std::span<const ModelGpu> model_gpus();

// The tile assumed for an m x n output: 128x64 with split-K filling about one wave for a skinny
// layer (n <= 256), the guide's 256x128 otherwise. A strided batch (batch > 1) fills the GPU with
// its matrices instead: 128x64 without split-K (splitting a head dimension of 64 is assumed not
// to pay).
struct AssumedTile {
  numerics::TileShape tile;
  int split_k = 1;
};
AssumedTile assumed_tile(std::int64_t m, std::int64_t n, const GpuSpec& gpu,
                         std::int64_t batch = 1);

// predict_on() with the assumed tile and the element types tcbench runs for p, for `batch`
// matrices of m x n x k.
numerics::GemmTimePrediction predict_assumed(std::int64_t m, std::int64_t n, std::int64_t k,
                                             Precision p, const GpuSpec& gpu,
                                             std::int64_t batch = 1);

}  // namespace tcbench::studies
