#include "tcbench/gemm_prediction.hpp"

#include "tcbench/error.hpp"
#include "tcbench/gemm_spec.hpp"

#include <string>

namespace tcbench {

numerics::GpuRates gpu_rates(const GpuSpec& gpu, Precision p) {
  const Peak pk = peak(gpu, p);
  return {pk.supported ? pk.denominator() * 1e12 : 0.0, peak_memory_gbps(gpu) * 1e9};
}

numerics::GemmTimePrediction predict_on(const GpuSpec& gpu, Precision p, const ModelledGemm& g,
                                        numerics::TileShape tile, int split_k) {
  const numerics::GpuRates rates = gpu_rates(gpu, p);
  if (!(rates.flops_per_s > 0) || !(rates.bytes_per_s > 0))
    throw InvalidArgument("no " + std::string(name(p)) + " rate or bandwidth for " + gpu.name +
                          " in the peak table, so the efficiency model cannot predict its time");
  return numerics::predict_gemm({g.m, g.n, g.k, element_of(g.input), g.batch}, tile,
                                {gpu.sm_count, 1}, rates,
                                numerics::element_bytes(element_of(g.output)), split_k);
}

}  // namespace tcbench
