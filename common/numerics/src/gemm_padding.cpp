#include "tcbench/numerics/gemm_padding.hpp"

#include "tcbench/numerics/host_device.hpp"

#include <stdexcept>
#include <string>

namespace tcbench::numerics {

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  if (value <= 0 || multiple <= 0)
    throw std::invalid_argument("round_up: value and multiple must be positive, got " +
                                std::to_string(value) + " and " + std::to_string(multiple));
  return ceil_div(value, multiple) * multiple;
}

namespace {
std::int64_t& extent(GemmShape& s, GemmDim d) {
  return d == GemmDim::m ? s.m : (d == GemmDim::n ? s.n : s.k);
}
double flops(const GemmShape& s) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}
}  // namespace

PaddingCost padding_cost(const GemmShape& shape, GemmDim dim, std::int64_t padded_extent) {
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0)
    throw std::invalid_argument("padding_cost: M, N and K must be positive");
  PaddingCost c;
  c.original = shape;
  c.padded = shape;
  std::int64_t& e = extent(c.padded, dim);
  if (padded_extent < e)
    throw std::invalid_argument("padding_cost: padded " + std::string(name(dim)) + " = " +
                                std::to_string(padded_extent) + " is smaller than " +
                                std::to_string(e));
  e = padded_extent;
  c.useful_flops = flops(c.original);
  c.padded_flops = flops(c.padded);
  c.extra_flops = c.padded_flops - c.useful_flops;
  c.extra_flop_fraction = c.extra_flops / c.useful_flops;

  const double bytes = element_bytes(shape.type);
  const auto elements = [](std::int64_t rows, std::int64_t cols) {
    return static_cast<double>(rows) * static_cast<double>(cols);
  };
  const bool pads_a = dim != GemmDim::n;  // A is M x K
  const bool pads_b = dim != GemmDim::m;  // B is K x N
  if (pads_a) {
    c.copy_read_bytes += elements(c.original.m, c.original.k) * bytes;
    c.copy_write_bytes += elements(c.padded.m, c.padded.k) * bytes;
  }
  if (pads_b) {
    c.copy_read_bytes += elements(c.original.k, c.original.n) * bytes;
    c.copy_write_bytes += elements(c.padded.k, c.padded.n) * bytes;
  }
  c.copy_bytes = c.copy_read_bytes + c.copy_write_bytes;
  return c;
}

}  // namespace tcbench::numerics
