#include "tcbench/gemm_prediction.hpp"

#include "tcbench/error.hpp"
#include "tcbench/gemm_spec.hpp"

#include <string>

namespace tcbench {

numerics::ElementType model_element_type(cudaDataType_t t) {
  using numerics::ElementType;
  switch (t) {
    case CUDA_R_64F:
      return ElementType::fp64;
    case CUDA_R_32F:
      return ElementType::fp32;
    case CUDA_R_16F:
      return ElementType::fp16;
    case CUDA_R_16BF:
      return ElementType::bf16;
    case CUDA_R_8I:
      return ElementType::int8;
    case CUDA_R_32I:
      return ElementType::fp32;  // 4 bytes; the model only needs the size of an output
    case CUDA_R_8F_E4M3:
      return ElementType::fp8_e4m3;
    case CUDA_R_8F_E5M2:
      return ElementType::fp8_e5m2;
    default:
      throw InvalidArgument("the efficiency model has no element type for " + data_type_name(t));
  }
}

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
  return numerics::predict_gemm({g.m, g.n, g.k, model_element_type(g.input), g.batch}, tile,
                                {gpu.sm_count, 1}, rates,
                                numerics::element_bytes(model_element_type(g.output)), split_k);
}

}  // namespace tcbench
