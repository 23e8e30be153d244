#include "tcbench/numerics/gemm_model.hpp"
#include "tcbench/numerics/host_device.hpp"

#include <stdexcept>
#include <string>

namespace tcbench::numerics {

AlignmentClass classify_alignment(std::int64_t dim, Element t) {
  const std::int64_t bytes = dim * element_bytes(t);
  return AlignmentClass{bytes % 16 == 0, bytes % 128 == 0, dim % 8 == 0,
                        dim % 16 == 0,   dim % 64 == 0,    dim % 128 == 0};
}

int alignment_bytes(std::int64_t dim, Element t) {
  if (dim <= 0)
    throw std::invalid_argument("alignment_bytes: the dimension must be positive, got " +
                                std::to_string(dim));
  const std::int64_t bytes = dim * element_bytes(t);
  int a = 1;
  while (a < 128 && bytes % (2 * a) == 0) a *= 2;
  return a;
}

int efficient_multiple(Element t) {
  return 16 / element_bytes(t);
}
int a100_efficient_multiple(Element t) {
  return 128 / element_bytes(t);
}

namespace {

void require_positive(std::int64_t v, const char* what) {
  if (v <= 0)
    throw std::invalid_argument(std::string("model_gemm: ") + what + " must be positive, got " +
                                std::to_string(v));
}
}  // namespace

GemmEfficiency model_gemm(const GemmShape& shape, TileShape tile, GpuShape gpu, int split_k) {
  require_positive(shape.m, "M");
  require_positive(shape.n, "N");
  require_positive(shape.k, "K");
  require_positive(shape.batch, "the batch count");
  require_positive(tile.m, "tile BM");
  require_positive(tile.n, "tile BN");
  require_positive(gpu.sm_count, "SM count");
  require_positive(gpu.ctas_per_sm, "CTAs per SM");
  require_positive(split_k, "split-K");

  GemmEfficiency e;
  e.tiles_m = ceil_div(shape.m, tile.m);
  e.tiles_n = ceil_div(shape.n, tile.n);
  e.tiles = e.tiles_m * e.tiles_n;
  // Ratios of integers, formed in double: M*N stays exact far beyond any real GEMM.
  e.tile_efficiency =
      (static_cast<double>(shape.m) * static_cast<double>(shape.n)) /
      (static_cast<double>(e.tiles_m * tile.m) * static_cast<double>(e.tiles_n * tile.n));
  e.batch = shape.batch;
  e.split_k = split_k;
  e.ctas = e.tiles * shape.batch * split_k;
  e.wave_size = static_cast<std::int64_t>(gpu.sm_count) * gpu.ctas_per_sm;
  e.waves = ceil_div(e.ctas, e.wave_size);
  e.waves_exact = static_cast<double>(e.ctas) / static_cast<double>(e.wave_size);
  e.wave_efficiency = static_cast<double>(e.ctas) / static_cast<double>(e.waves * e.wave_size);
  e.predicted_relative_throughput = e.tile_efficiency * e.wave_efficiency;
  e.align_m = classify_alignment(shape.m, shape.type);
  e.align_n = classify_alignment(shape.n, shape.type);
  e.align_k = classify_alignment(shape.k, shape.type);
  return e;
}

double gemm_min_bytes(const GemmShape& shape, int output_bytes) {
  require_positive(output_bytes, "output element bytes");
  const double m = static_cast<double>(shape.m), n = static_cast<double>(shape.n),
               k = static_cast<double>(shape.k);
  return static_cast<double>(shape.batch) *
         ((m * k + k * n) * element_bytes(shape.type) + m * n * output_bytes);
}

GemmTimePrediction predict_gemm(const GemmShape& shape, TileShape tile, GpuShape gpu,
                                GpuRates rates, int output_bytes, int split_k) {
  if (!(rates.flops_per_s > 0) || !(rates.bytes_per_s > 0))
    throw std::invalid_argument("predict_gemm: the GPU's flop rate and bandwidth must be positive");
  GemmTimePrediction p;
  p.efficiency = model_gemm(shape, tile, gpu, split_k);
  const double flops = 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                       static_cast<double>(shape.k) * static_cast<double>(shape.batch);
  p.compute_seconds = flops / (rates.flops_per_s * p.efficiency.predicted_relative_throughput);
  p.memory_seconds = gemm_min_bytes(shape, output_bytes) / rates.bytes_per_s;
  p.memory_bound = p.memory_seconds > p.compute_seconds;
  p.seconds = p.memory_bound ? p.memory_seconds : p.compute_seconds;
  p.flops_per_s = flops / p.seconds;
  p.relative_to_peak = p.flops_per_s / rates.flops_per_s;
  return p;
}

}  // namespace tcbench::numerics
