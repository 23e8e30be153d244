// The alignment topic's predictions without a GPU: the GEMM time model (gemm_prediction.hpp,
// predict_time) for the GEMMs bench_alignment runs, on two reference GPUs of tcbench's peak table.
// The "what you should see" tables of docs/concepts/alignment.md (`tcbench model`) and the host
// half of the alignment question (tcbench_studies) come from here; every number is a model's.
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
// H100 SXM and A100 SXM 80GB as the time model knows them (model_products()).
std::span<const ModelGpu> model_gpus();

// The GEMM bench_alignment runs for p (GemmSpec::for_precision: NN for the float types, TN for
// INT8 and FP8; `b_transposed` for its layout:nt rows, B stored N-contiguous), m x n x k and a
// strided batch, through the time model.
ModelPrediction predict_as_run(const GpuSpec& gpu, Precision p, std::int64_t m, std::int64_t n,
                               std::int64_t k, std::int64_t batch = 1, bool b_transposed = false);

}  // namespace tcbench::studies
