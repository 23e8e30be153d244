#include "tcbench/numerics/quantization.hpp"

#include <stdexcept>
#include <string>

#include "tcbench/numerics/formats.hpp"

namespace tcbench::numerics {
namespace {

void require_size(std::size_t got, std::size_t want, const char* what) {
  if (got != want)
    throw std::invalid_argument(std::string(what) + ": size " + std::to_string(got) +
                                ", expected " + std::to_string(want));
}

}  // namespace

float quantize_per_tensor(std::span<const float> xs, std::span<std::int8_t> out) {
  require_size(out.size(), xs.size(), "quantize_per_tensor output");
  const float scale = int8_scale(amax(xs));
  for (std::size_t i = 0; i < xs.size(); ++i) out[i] = quantize_int8(xs[i], scale);
  return scale;
}

std::vector<float> per_channel_scales(std::span<const float> w, std::size_t rows,
                                      std::size_t cols) {
  require_size(w.size(), rows * cols, "per_channel_scales weights");
  std::vector<float> scales(rows);
  for (std::size_t r = 0; r < rows; ++r) scales[r] = int8_scale(amax(w.subspan(r * cols, cols)));
  return scales;
}

void quantize_per_channel(std::span<const float> w, std::size_t rows, std::size_t cols,
                          std::span<const float> scales, std::span<std::int8_t> out) {
  require_size(w.size(), rows * cols, "quantize_per_channel weights");
  require_size(scales.size(), rows, "quantize_per_channel scales");
  require_size(out.size(), rows * cols, "quantize_per_channel output");
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c)
      out[r * cols + c] = quantize_int8(w[r * cols + c], scales[r]);
}

void dequantize(std::span<const std::int8_t> q, float scale, std::span<float> out) {
  require_size(out.size(), q.size(), "dequantize output");
  for (std::size_t i = 0; i < q.size(); ++i) out[i] = dequantize_int8(q[i], scale);
}

void dequantize_per_channel(std::span<const std::int8_t> q, std::size_t rows, std::size_t cols,
                            std::span<const float> scales, std::span<float> out) {
  require_size(q.size(), rows * cols, "dequantize_per_channel input");
  require_size(scales.size(), rows, "dequantize_per_channel scales");
  require_size(out.size(), rows * cols, "dequantize_per_channel output");
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c)
      out[r * cols + c] = dequantize_int8(q[r * cols + c], scales[r]);
}

}  // namespace tcbench::numerics
