#include "tcbench/studies/alignment_model.hpp"

#include "tcbench/gemm_spec.hpp"
#include "tcbench/numerics/host_device.hpp"

#include <algorithm>
#include <array>

namespace tcbench::studies {
std::span<const ModelGpu> model_gpus() {
  // A function-local static: other translation units' statics may read it during their own
  // initialization (a namespace-scope table would not be built yet).
  static const std::array<ModelGpu, 2> gpus{{
      {"H100 SXM", "h100_sxm", {"NVIDIA H100 80GB HBM3", 9, 0, 132, 1980, 2619, 5120}},
      {"A100 SXM 80GB", "a100_sxm", {"NVIDIA A100-SXM4-80GB", 8, 0, 108, 1410, 1593, 5120}},
  }};
  return gpus;
}

AssumedTile assumed_tile(std::int64_t m, std::int64_t n, const GpuSpec& gpu, std::int64_t batch) {
  if (batch > 1) return {{128, 64}, 1};
  if (n > 256) return {{256, 128}, 1};
  const numerics::TileShape t{128, 64};
  const std::int64_t tiles = numerics::ceil_div(m, t.m) * numerics::ceil_div(n, t.n);
  return {t, static_cast<int>(std::max<std::int64_t>(1, gpu.sm_count / tiles))};
}

numerics::GemmTimePrediction predict_assumed(std::int64_t m, std::int64_t n, std::int64_t k,
                                             Precision p, const GpuSpec& gpu, std::int64_t batch) {
  const AssumedTile a = assumed_tile(m, n, gpu, batch);
  return predict_on(gpu, p, {m, n, k, info(p).a, info(p).d, batch}, a.tile, a.split_k);
}

}  // namespace tcbench::studies
