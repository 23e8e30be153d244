#include "tcbench/studies/alignment_model.hpp"

#include "tcbench/gemm_spec.hpp"

#include <array>

namespace tcbench::studies {

std::span<const ModelGpu> model_gpus() {
  // A function-local static: other translation units' statics may read it during their own
  // initialization (a namespace-scope table would not be built yet).
  static const std::array<ModelGpu, 2> gpus{{
      {"H100 SXM", "h100_sxm", find_model_product("NVIDIA H100 80GB HBM3")->spec},
      {"A100 SXM 80GB", "a100_sxm", find_model_product("NVIDIA A100-SXM4-80GB")->spec},
  }};
  return gpus;
}

ModelPrediction predict_as_run(const GpuSpec& gpu, Precision p, std::int64_t m, std::int64_t n,
                               std::int64_t k, std::int64_t batch, bool b_transposed) {
  GemmSpec spec = GemmSpec::for_precision(p, m, n, k);
  spec.problem.trans_b = b_transposed;
  spec.batch_count = static_cast<std::int32_t>(batch);
  return predict_time(gpu, query_of(spec, p));
}

}  // namespace tcbench::studies
