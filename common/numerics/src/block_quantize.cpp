#include "tcbench/numerics/block_quantize.hpp"

#include "tcbench/numerics/formats.hpp"
#include "tcbench/numerics/scale_layout.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace tcbench::numerics {
namespace {

using Index = std::int64_t;

// NaN-sticky max |x| over rows [r0, r1) and columns [c0, c1).
float amax_of(std::span<const float> x, Index cols, Index r0, Index r1, Index c0, Index c1) {
  float a = 0.0f;
  for (Index r = r0; r < r1; ++r)
    for (Index c = c0; c < c1; ++c) a = amax_step(a, x[static_cast<std::size_t>(r * cols + c)]);
  return a;
}

std::size_t at(Index i) {
  return static_cast<std::size_t>(i);
}

}  // namespace

Index QuantizedMatrix::blocks() const {
  const Index b = block_of(granularity);
  return b == 0 ? 1 : ceil_div(cols, b);
}

float QuantizedMatrix::value(Index r, Index c) const {
  const std::uint8_t code = codes[at(r * cols + c)];
  switch (granularity) {
    case Granularity::tensor:
      return decode(code, format) * scales[0];
    case Granularity::row:
      return decode(code, format) * scales[at(r)];
    case Granularity::tile_1x128:
      return decode(code, format) * scales[at(r * blocks() + c / kTile)];
    case Granularity::block_128x128:
      return decode(code, format) * scales[at((r / kTile) * blocks() + c / kTile)];
    case Granularity::mx:
      return mx_decode(code, scale_codes[at(r * blocks() + c / kMxBlock)], format);
    case Granularity::nvfp4:
      return nvfp4_decode(code, scale_codes[at(r * blocks() + c / kNvfp4Block)], tensor_scale);
  }
  return 0.0f;
}

std::vector<float> QuantizedMatrix::dequantized() const {
  std::vector<float> out(at(rows * cols));
  for (Index r = 0; r < rows; ++r)
    for (Index c = 0; c < cols; ++c) out[at(r * cols + c)] = value(r, c);
  return out;
}

double QuantizedMatrix::bytes_per_element() const {
  const double elements = static_cast<double>(rows) * static_cast<double>(cols);
  const double scale_bytes = static_cast<double>(scales.size()) * 4.0 +
                             static_cast<double>(scale_codes.size()) +
                             (granularity == Granularity::nvfp4 ? 4.0 : 0.0);
  return element_info(format).bits / 8.0 + scale_bytes / elements;
}

QuantizedMatrix quantize(std::span<const float> x, Index rows, Index cols, Granularity g,
                         ElementFormat f, MxRule rule, std::optional<float> tensor_amax) {
  if (rows <= 0 || cols <= 0 || x.size() != at(rows * cols))
    throw std::invalid_argument("quantize: " + std::to_string(x.size()) + " values for a " +
                                std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
  if (g == Granularity::nvfp4 && f != ElementFormat::e2m1)
    throw std::invalid_argument("quantize: NVFP4 elements are E2M1, not " + std::string(name(f)));
  QuantizedMatrix q;
  q.rows = rows;
  q.cols = cols;
  q.granularity = g;
  q.format = f;
  q.rule = rule;
  q.codes.resize(at(rows * cols));
  const Index nb = q.blocks();
  const Index block = block_of(g);
  switch (g) {
    case Granularity::tensor: {
      const float s = group_scale(tensor_amax.value_or(amax_of(x, cols, 0, rows, 0, cols)), f);
      for (std::size_t i = 0; i < x.size(); ++i) q.codes[i] = group_encode(x[i], s, f);
      q.scales = {1.0f / s};
      break;
    }
    case Granularity::row:
    case Granularity::tile_1x128: {
      const Index width = g == Granularity::row ? cols : kTile;
      for (Index r = 0; r < rows; ++r)
        for (Index b = 0; b < nb; ++b) {
          const Index c0 = b * width, c1 = std::min(cols, c0 + width);
          const float s = group_scale(amax_of(x, cols, r, r + 1, c0, c1), f);
          for (Index c = c0; c < c1; ++c)
            q.codes[at(r * cols + c)] = group_encode(x[at(r * cols + c)], s, f);
          q.scales.push_back(1.0f / s);
        }
      break;
    }
    case Granularity::block_128x128: {
      for (Index p = 0; p < ceil_div(rows, kTile); ++p)
        for (Index b = 0; b < nb; ++b) {
          const Index r0 = p * kTile, r1 = std::min(rows, r0 + kTile);
          const Index c0 = b * kTile, c1 = std::min(cols, c0 + kTile);
          const float s = group_scale(amax_of(x, cols, r0, r1, c0, c1), f);
          for (Index r = r0; r < r1; ++r)
            for (Index c = c0; c < c1; ++c)
              q.codes[at(r * cols + c)] = group_encode(x[at(r * cols + c)], s, f);
          q.scales.push_back(1.0f / s);
        }
      break;
    }
    case Granularity::mx:
    case Granularity::nvfp4: {
      if (g == Granularity::nvfp4)
        q.tensor_scale = nvfp4_tensor_scale(amax_of(x, cols, 0, rows, 0, cols));
      q.scale_codes.resize(at(rows * nb));
      for (Index r = 0; r < rows; ++r)
        for (Index b = 0; b < nb; ++b) {
          const Index c0 = b * block, c1 = std::min(cols, c0 + block);
          const float a = amax_of(x, cols, r, r + 1, c0, c1);
          const std::uint8_t sc = g == Granularity::mx ? mx_scale_code(a, f, rule)
                                                       : nvfp4_scale_code(a, q.tensor_scale);
          q.scale_codes[at(r * nb + b)] = sc;
          for (Index c = c0; c < c1; ++c) {
            const float v = x[at(r * cols + c)];
            q.codes[at(r * cols + c)] =
                g == Granularity::mx ? mx_encode(v, sc, f) : nvfp4_encode(v, sc, q.tensor_scale);
          }
        }
      break;
    }
  }
  return q;
}

std::vector<std::uint8_t> to_cublas_scales(const QuantizedMatrix& q) {
  const Index nb = q.blocks();
  auto put_float = [](std::vector<std::uint8_t>& out, Index i, float v) {
    std::memcpy(out.data() + at(i) * sizeof(float), &v, sizeof v);
  };
  std::vector<std::uint8_t> out;
  switch (q.granularity) {
    case Granularity::tensor:
      throw std::invalid_argument("to_cublas_scales: a per-tensor scale is a scalar, not a tensor");
    case Granularity::row:
      out.resize(at(q.rows) * sizeof(float));
      for (Index r = 0; r < q.rows; ++r) put_float(out, r, q.scales[at(r)]);
      break;
    case Granularity::tile_1x128:
      out.resize(at(vec128_elements(q.rows, q.cols)) * sizeof(float));
      for (Index r = 0; r < q.rows; ++r)
        for (Index b = 0; b < nb; ++b)
          put_float(out, vec128_offset(r, b, q.rows), q.scales[at(r * nb + b)]);
      break;
    case Granularity::block_128x128: {
      out.assign(at(blk128_elements(q.rows, q.cols)) * sizeof(float), 0);
      for (Index p = 0; p < ceil_div(q.rows, kTile); ++p)
        for (Index b = 0; b < nb; ++b)
          put_float(out, blk128_offset(p, b, q.cols), q.scales[at(p * nb + b)]);
      break;
    }
    case Granularity::mx:
    case Granularity::nvfp4: {
      const Index block = block_of(q.granularity);
      out.assign(at(block_scale_elements(q.rows, q.cols, block)), 0);
      for (Index r = 0; r < q.rows; ++r)
        for (Index b = 0; b < nb; ++b)
          out[at(block_scale_offset(r, b, q.cols, block))] = q.scale_codes[at(r * nb + b)];
      break;
    }
  }
  return out;
}

std::vector<std::uint8_t> pack_fp4(std::span<const std::uint8_t> codes) {
  std::vector<std::uint8_t> out((codes.size() + 1) / 2, 0);
  for (std::size_t i = 0; i < codes.size(); ++i)
    out[i / 2] |= static_cast<std::uint8_t>((codes[i] & 0x0Fu) << (i % 2 == 0 ? 0 : 4));
  return out;
}

}  // namespace tcbench::numerics
