// The block quantization kernels (kernels/block_quant.cu) against the host, byte for byte: the
// codes equal numerics::quantize() (packed with pack_fp4 for NVFP4), the whole scale tensor,
// padding included, equals to_cublas_scales(), and NVFP4's tensor scale equals the host's s_enc.
// Inputs have outlier channels (every 61st column 100x the rest), a zero block, a block of tiny
// values (scales near the bottom of E8M0 and UE4M3), a value MX clamps and, in their own cases,
// NaN, Inf and 1e30; shapes leave partial 128-row tiles, partial 1x128 tiles and partial MX
// blocks, and one is large enough for the grid-stride loop to wrap. Outputs are poisoned first.
// The argument checks and the size arithmetic run without a GPU; the rest skips without one.
#include "gpu_test.hpp"

#include "tcbench/cuda_owners.hpp"
#include "tcbench/error.hpp"
#include "tcbench/kernels/block_quant.hpp"
#include "tcbench/numerics/block_quantize.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace tcbench {
namespace {

namespace tn = tcbench::numerics;
namespace tk = tcbench::kernels;
using tn::ElementFormat;
using tn::Granularity;

enum class Specials { none, nan_and_inf };

std::vector<float> operand(std::int64_t rows, std::int64_t cols, std::uint32_t seed,
                           Specials specials) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  auto at = [&](std::int64_t r, std::int64_t c) -> float& {
    return x[static_cast<std::size_t>(r * cols + c)];
  };
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) at(r, c) = normal(rng) * (c % 61 == 7 ? 100.0f : 1.0f);
  const std::int64_t last = rows - 1;
  for (std::int64_t c = 0; c < std::min<std::int64_t>(cols, 32); ++c) at(0, c) = 0.0f;  // zeros
  for (std::int64_t c = 32; c < std::min<std::int64_t>(cols, 64); ++c)  // tiny: E8M0/UE4M3 floor
    at(0, c) = normal(rng) * 0x1p-120f;
  // Past the max of what MX's floor(log2) scale maps onto E4M3 (x / 2^6 = 469 > 448: clamped);
  // with the specials, beyond every format (NVFP4's tensor scale is then 1 and its block scale
  // saturates at 448).
  if (cols > 64) at(0, 64) = specials == Specials::none ? 30000.0f : 1e30f;
  if (specials == Specials::nan_and_inf && rows > 1) {
    at(last, 0) = NAN;
    at(last, cols - 1) = -INFINITY;
  }
  return x;
}

struct Result {
  std::vector<std::uint8_t> codes, scales;
  float tensor_scale = 0.0f;
};

Result on_device(const std::vector<float>& x, std::int64_t rows, std::int64_t cols, Granularity g,
                 ElementFormat f, tn::MxRule rule, cudaStream_t s) {
  DeviceBuffer<float> dx(x.size());
  dx.upload(x, s);
  DeviceBuffer<std::uint8_t> codes(tk::block_quant_code_bytes(g, rows, cols));
  DeviceBuffer<std::uint8_t> scales(tk::block_quant_scale_bytes(g, rows, cols));
  DeviceValue<float> tensor_scale;
  DeviceValue<unsigned> amax;
  TCB_CUDA(cudaMemsetAsync(codes.get(), 0xA5, codes.bytes(), s));  // poison
  TCB_CUDA(cudaMemsetAsync(scales.get(), 0xA5, scales.bytes(), s));
  tensor_scale.set(NAN, s);
  tk::block_quantize(dx.get(), rows, cols, g, f, rule,
                     {codes.get(), scales.get(), tensor_scale.ptr(), amax.ptr()}, s);
  TCB_CUDA(cudaStreamSynchronize(s));
  return {codes.download(s), scales.download(s), tensor_scale.get(s)};
}

std::string first_mismatches(const std::vector<std::uint8_t>& dev,
                             const std::vector<std::uint8_t>& host, const char* what) {
  if (dev.size() != host.size())
    return std::string(what) + ": " + std::to_string(dev.size()) + " bytes, the host has " +
           std::to_string(host.size());
  std::string out;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < host.size(); ++i)
    if (dev[i] != host[i] && ++bad <= 5)
      out += std::string(what) + " byte " + std::to_string(i) + ": device " +
             std::to_string(dev[i]) + ", host " + std::to_string(host[i]) + "\n";
  if (bad > 5) out += std::to_string(bad) + " bytes differ in all\n";
  return out;
}

void expect_matches_host(std::int64_t rows, std::int64_t cols, Granularity g, ElementFormat f,
                         tn::MxRule rule, Specials specials, cudaStream_t s) {
  SCOPED_TRACE(std::string(tn::name(g)) + " " + std::string(tn::name(f)) + " " +
               std::to_string(rows) + "x" + std::to_string(cols) +
               (rule == tn::MxRule::round_up ? " round_up" : "") +
               (specials == Specials::nan_and_inf ? " with NaN/Inf" : ""));
  const std::vector<float> x =
      operand(rows, cols, static_cast<std::uint32_t>(rows * 131 + cols), specials);
  const tn::QuantizedMatrix q = tn::quantize(x, rows, cols, g, f, rule);
  const Result d = on_device(x, rows, cols, g, f, rule, s);
  EXPECT_EQ(
      first_mismatches(d.codes, g == Granularity::nvfp4 ? tn::pack_fp4(q.codes) : q.codes, "codes"),
      "");
  EXPECT_EQ(first_mismatches(d.scales, tn::to_cublas_scales(q), "scales"), "");
  if (g == Granularity::nvfp4) {
    std::uint32_t dev_bits = 0, host_bits = 0;
    std::memcpy(&dev_bits, &d.tensor_scale, 4);
    std::memcpy(&host_bits, &q.tensor_scale, 4);
    EXPECT_EQ(dev_bits, host_bits) << "tensor scale " << d.tensor_scale << " vs " << q.tensor_scale;
  }
}

struct Shape {
  std::int64_t rows, cols;
};
// Partial row tiles and 1x128 tiles and MX blocks (200 x 400), whole tiles (256 x 1024), a lone
// group of four (1 x 4), one row past a tile with a partial NVFP4 block (129 x 36), and a size
// whose warps outnumber the grid (1000 x 4096).
constexpr Shape kShapes[] = {{200, 400}, {256, 1024}, {1, 4}, {129, 36}, {1000, 4096}};

TEST(BlockQuantKernels, FineGrainedFp8MatchesHostBitForBit) {
  TCB_REQUIRE_GPU(dev);
  Stream stream;
  for (Granularity g : {Granularity::tile_1x128, Granularity::block_128x128})
    for (ElementFormat f : {ElementFormat::e4m3, ElementFormat::e5m2})
      for (const Shape& sh : kShapes)
        for (Specials sp : {Specials::none, Specials::nan_and_inf})
          expect_matches_host(sh.rows, sh.cols, g, f, tn::MxRule::ocp, sp, stream.get());
}

TEST(BlockQuantKernels, MxMatchesHostBitForBit) {
  TCB_REQUIRE_GPU(dev);
  Stream stream;
  for (ElementFormat f : {ElementFormat::e4m3, ElementFormat::e5m2})
    for (tn::MxRule rule : {tn::MxRule::ocp, tn::MxRule::round_up})
      for (const Shape& sh : kShapes)
        for (Specials sp : {Specials::none, Specials::nan_and_inf})
          expect_matches_host(sh.rows, sh.cols, Granularity::mx, f, rule, sp, stream.get());
}

TEST(BlockQuantKernels, Nvfp4MatchesHostBitForBit) {
  TCB_REQUIRE_GPU(dev);
  Stream stream;
  for (const Shape& sh : kShapes)
    for (Specials sp : {Specials::none, Specials::nan_and_inf})
      expect_matches_host(sh.rows, sh.cols, Granularity::nvfp4, ElementFormat::e2m1,
                          tn::MxRule::ocp, sp, stream.get());
}

// The outlier channels must matter: with them the 1x128 scales differ across tiles of one row,
// so a kernel that wrote one scale per row would fail the comparison above (a check of the test).
TEST(BlockQuantKernels, OutliersMakeTileScalesDiffer) {
  const std::vector<float> x = operand(4, 1024, 1, Specials::none);
  const tn::QuantizedMatrix q =
      tn::quantize(x, 4, 1024, Granularity::tile_1x128, ElementFormat::e4m3);
  std::size_t distinct_in_row1 = 0;
  for (std::int64_t b = 1; b < q.blocks(); ++b)
    distinct_in_row1 += q.scales[static_cast<std::size_t>(q.blocks() + b)] !=
                        q.scales[static_cast<std::size_t>(q.blocks())];
  EXPECT_GT(distinct_in_row1, 0u);
}

// Sizes (no GPU): the buffers the kernels fill are exactly what the host's layout writes.
TEST(BlockQuantKernels, SizesEqualTheHostLayouts) {
  for (const Shape& sh : kShapes)
    for (Granularity g : {Granularity::tile_1x128, Granularity::block_128x128, Granularity::mx,
                          Granularity::nvfp4}) {
      const ElementFormat f = g == Granularity::nvfp4 ? ElementFormat::e2m1 : ElementFormat::e4m3;
      const std::vector<float> x(static_cast<std::size_t>(sh.rows * sh.cols), 1.0f);
      const tn::QuantizedMatrix q = tn::quantize(x, sh.rows, sh.cols, g, f);
      EXPECT_EQ(tk::block_quant_scale_bytes(g, sh.rows, sh.cols), tn::to_cublas_scales(q).size());
      EXPECT_EQ(tk::block_quant_code_bytes(g, sh.rows, sh.cols),
                g == Granularity::nvfp4 ? tn::pack_fp4(q.codes).size() : q.codes.size());
    }
  // 8192 x 8192 NVFP4: 256 MiB in, 32 MiB of codes, 4 MiB of scales, the tensor scale.
  EXPECT_EQ(tk::block_quant_bytes_moved(Granularity::nvfp4, 8192, 8192),
            8192.0 * 8192 * 4 + 8192.0 * 8192 / 2 + 8192.0 * 8192 / 16 + 4);
}

// Bad arguments (no GPU): one sentence each, before any CUDA call.
TEST(BlockQuantKernels, RejectsBadArguments) {
  alignas(16) static float x[16];
  alignas(16) static std::uint8_t codes[64], scales[1024];
  static float ts;
  static unsigned amax;
  const tk::BlockQuantOutput out{codes, scales, &ts, &amax};
  auto call = [&](const float* in, std::int64_t rows, std::int64_t cols, Granularity g,
                  ElementFormat f, tk::BlockQuantOutput o) {
    tk::block_quantize(in, rows, cols, g, f, tn::MxRule::ocp, o, nullptr);
  };
  EXPECT_THROW(call(x, 1, 4, Granularity::tensor, ElementFormat::e4m3, out), InvalidArgument);
  EXPECT_THROW(call(x, 1, 4, Granularity::row, ElementFormat::e4m3, out), InvalidArgument);
  EXPECT_THROW(call(x, 1, 4, Granularity::nvfp4, ElementFormat::e4m3, out), InvalidArgument);
  EXPECT_THROW(call(x, 1, 4, Granularity::mx, ElementFormat::e2m1, out), InvalidArgument);
  EXPECT_THROW(call(x, 1, 4, Granularity::tile_1x128, ElementFormat::e3m2, out), InvalidArgument);
  EXPECT_THROW(call(x, 0, 4, Granularity::mx, ElementFormat::e4m3, out), InvalidArgument);
  EXPECT_THROW(call(x, 1, -4, Granularity::mx, ElementFormat::e4m3, out), InvalidArgument);
  EXPECT_THROW(call(x, 1, 6, Granularity::mx, ElementFormat::e4m3, out), InvalidArgument);
  EXPECT_THROW(call(x, std::int64_t{1} << 40, 8, Granularity::mx, ElementFormat::e4m3, out),
               InvalidArgument);
  EXPECT_THROW(call(x + 1, 1, 4, Granularity::mx, ElementFormat::e4m3, out), InvalidArgument);
  EXPECT_THROW(call(nullptr, 1, 4, Granularity::mx, ElementFormat::e4m3, out), InvalidArgument);
  EXPECT_THROW(call(x, 1, 4, Granularity::mx, ElementFormat::e4m3, {codes, scales + 4, &ts, &amax}),
               InvalidArgument);
  EXPECT_THROW(
      call(x, 1, 4, Granularity::nvfp4, ElementFormat::e2m1, {codes, scales, nullptr, &amax}),
      InvalidArgument);
  try {
    call(x, 1, 6, Granularity::mx, ElementFormat::e4m3, out);
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("multiple of 4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1 x 6"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tcbench
