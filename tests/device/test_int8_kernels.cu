// The INT8 kernels against the host: the quantization pipeline must equal the host-tested
// numerics functions bit for bit (same header code), and the IMMA GEMM must equal a CPU int32
// GEMM exactly (int8 x int8 -> int32 has no rounding, so any difference is a bug). Skips
// without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gpu_test.hpp"
#include "tcbench/cuda_owners.hpp"
#include "tcbench/error.hpp"
#include "tcbench/kernels/gemm_wmma.hpp"
#include "tcbench/kernels/int8_quant.hpp"
#include "tcbench/numerics/calibration.hpp"
#include "tcbench/numerics/formats.hpp"
#include "tcbench/numerics/quantization.hpp"

namespace tn = tcbench::numerics;
namespace tk = tcbench::kernels;
using tcbench::DeviceBuffer;
using tcbench::GemmProblem;

namespace {

std::vector<float> activations_with_outliers(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> bulk(0.0f, 1.0f);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> xs(n);
  for (float& x : xs) x = u(rng) < 1e-3f ? 50.0f * bulk(rng) : bulk(rng);
  return xs;
}

float from_bits(unsigned b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

template <typename T>
DeviceBuffer<T> to_device(const std::vector<T>& host) {
  DeviceBuffer<T> d(host.size());
  d.upload(host);
  return d;
}

// Reference: D(i, j) = sum_l A(l, i) * B(l, j) with A stored k x m (TN), in int32.
std::vector<std::int32_t> cpu_gemm_tn(const GemmProblem& p, const std::vector<std::int8_t>& a,
                                      const std::vector<std::int8_t>& b) {
  std::vector<std::int32_t> d(static_cast<std::size_t>(p.ldd * p.n), 0);
  for (std::int64_t j = 0; j < p.n; ++j)
    for (std::int64_t i = 0; i < p.m; ++i) {
      std::int32_t acc = 0;
      for (std::int64_t l = 0; l < p.k; ++l)
        acc += std::int32_t{a[static_cast<std::size_t>(l + i * p.lda)]} *
               std::int32_t{b[static_cast<std::size_t>(l + j * p.ldb)]};
      d[static_cast<std::size_t>(i + j * p.ldd)] = acc;
    }
  return d;
}

TEST(GemmWmmaInt8Rules, TnOnlyAndTuringOrNewer) {
  GemmProblem tn{.m = 64, .n = 64, .k = 64, .trans_a = true};
  tn.resolve();
  EXPECT_FALSE(tk::wmma_unsupported_reason(7, 5, tcbench::Precision::int8, tn).has_value());
  EXPECT_FALSE(tk::wmma_unsupported_reason(12, 0, tcbench::Precision::int8, tn).has_value());
  const auto old = tk::wmma_unsupported_reason(7, 0, tcbench::Precision::int8, tn);
  ASSERT_TRUE(old.has_value());
  EXPECT_NE(old->find("7.5"), std::string::npos);
  GemmProblem nn{.m = 64, .n = 64, .k = 64};
  nn.resolve();
  const auto layout = tk::wmma_unsupported_reason(9, 0, tcbench::Precision::int8, nn);
  ASSERT_TRUE(layout.has_value());
  EXPECT_NE(layout->find("TN"), std::string::npos);
  EXPECT_THROW(tk::gemm_wmma_int8(nn, nullptr, nullptr, nullptr, nullptr),
               tcbench::InvalidArgument);
}

TEST(GemmWmmaInt8, EqualsCpuInt32Exactly) {
  TCB_REQUIRE_GPU(dev);
  if (auto why = tk::wmma_unsupported_reason(dev.spec.cc_major, dev.spec.cc_minor,
                                             tcbench::Precision::int8,
                                             GemmProblem{.m = 4, .n = 4, .k = 4, .trans_a = true}))
    GTEST_SKIP() << *why;
  struct Shape {
    std::int64_t m, n, k, pad;
  };
  // Full tiles, ragged edges in every dimension, K not a multiple of 32, padded leading dims.
  for (const Shape s : {Shape{64, 64, 64, 0}, Shape{260, 259, 264, 0}, Shape{33, 17, 70, 0},
                        Shape{128, 96, 1024, 12}}) {
    GemmProblem p{.m = s.m, .n = s.n, .k = s.k, .trans_a = true};
    p.lda = s.k + s.pad;
    p.ldb = s.k + s.pad;
    p.ldd = s.m + s.pad;
    p.resolve();
    std::mt19937 rng(static_cast<unsigned>(s.m * 7 + s.n * 3 + s.k));
    std::uniform_int_distribution<int> v(-128, 127);  // -128 too: the GEMM must take it
    std::vector<std::int8_t> a(static_cast<std::size_t>(p.lda * p.m)),
        b(static_cast<std::size_t>(p.ldb * p.n));
    for (auto& x : a) x = static_cast<std::int8_t>(v(rng));
    for (auto& x : b) x = static_cast<std::int8_t>(v(rng));
    auto da = to_device(a);
    auto db = to_device(b);
    DeviceBuffer<std::int32_t> dd(static_cast<std::size_t>(p.ldd * p.n));
    TCB_CUDA(cudaMemset(dd.get(), 0xFF, dd.bytes()));  // poison: -1 everywhere
    tk::gemm_wmma_int8(p, da.get(), db.get(), dd.get(), nullptr);
    TCB_CUDA(cudaDeviceSynchronize());
    const std::vector<std::int32_t> got = dd.download(), want = cpu_gemm_tn(p, a, b);
    std::size_t mismatches = 0;
    for (std::int64_t j = 0; j < p.n; ++j)
      for (std::int64_t i = 0; i < p.m; ++i) {
        const auto idx = static_cast<std::size_t>(i + j * p.ldd);
        mismatches += got[idx] != want[idx];
      }
    EXPECT_EQ(mismatches, 0u) << p.describe();
  }
}

TEST(Int8QuantKernels, HistogramAndAmaxEqualHost) {
  TCB_REQUIRE_GPU(dev);
  std::vector<float> xs = activations_with_outliers(1 << 20, 1);
  xs[5] = NAN;
  xs[6] = INFINITY;
  xs[7] = -INFINITY;
  const float range = 40.0f;  // some outliers land beyond it: the last bin
  tn::AbsHistogram host(range);
  host.add(xs);
  auto dx = to_device(xs);
  DeviceBuffer<tn::HistCount> counts(tn::kCalibBins), bad(1);
  DeviceBuffer<unsigned> max_bits(1);
  TCB_CUDA(cudaMemset(counts.get(), 0, counts.bytes()));
  TCB_CUDA(cudaMemset(bad.get(), 0, bad.bytes()));
  TCB_CUDA(cudaMemset(max_bits.get(), 0, max_bits.bytes()));
  tk::abs_histogram(dx.get(), xs.size(), range, tn::kCalibBins, counts.get(), bad.get(),
                    max_bits.get(), nullptr);
  TCB_CUDA(cudaDeviceSynchronize());
  tn::AbsHistogram device(range);
  device.add_counts(counts.download(), from_bits(max_bits.download()[0]), bad.download()[0]);
  EXPECT_EQ(device, host);  // every count, the max seen and the 3 non-finite values
  EXPECT_EQ(device.non_finite(), 3u);

  // amax without the non-finite values equals the host's; with a NaN it is NaN (sticky).
  const std::vector<float> finite(xs.begin() + 8, xs.end());
  auto df = to_device(finite);
  DeviceBuffer<unsigned> amax_bits(1);
  TCB_CUDA(cudaMemset(amax_bits.get(), 0, amax_bits.bytes()));
  tk::amax(df.get(), finite.size(), amax_bits.get(), nullptr);
  EXPECT_EQ(from_bits(amax_bits.download()[0]), tn::amax(finite));
  TCB_CUDA(cudaMemset(amax_bits.get(), 0, amax_bits.bytes()));
  tk::amax(dx.get(), xs.size(), amax_bits.get(), nullptr);
  EXPECT_TRUE(std::isnan(from_bits(amax_bits.download()[0])));
}

TEST(Int8QuantKernels, QuantizeAndDequantizeEqualHost) {
  TCB_REQUIRE_GPU(dev);
  std::vector<float> xs = activations_with_outliers(1 << 18, 2);
  xs[0] = NAN;
  xs[1] = INFINITY;
  xs[2] = -INFINITY;
  xs[3] = 0.5f * 0.03f;  // at (or next to) a rounding tie
  const float scale = 0.03f;
  auto dx = to_device(xs);
  DeviceBuffer<std::int8_t> dq(xs.size());
  tk::quantize_per_tensor(dx.get(), xs.size(), scale, dq.get(), nullptr);
  const std::vector<std::int8_t> q = dq.download();
  std::size_t bad = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) bad += q[i] != tn::quantize_int8(xs[i], scale);
  EXPECT_EQ(bad, 0u);

  DeviceBuffer<float> dy(xs.size());
  tk::dequantize(dq.get(), xs.size(), scale, dy.get(), nullptr);
  const std::vector<float> y = dy.download();
  bad = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const float want = tn::dequantize_int8(q[i], scale);
    bad += std::memcmp(&y[i], &want, sizeof want) != 0;
  }
  EXPECT_EQ(bad, 0u);

  // Per channel: 96 rows (output channels) of 1000, each with its own max scale.
  const std::size_t rows = 96, cols = 1000;
  const std::vector<float> w(xs.begin() + 8, xs.begin() + 8 + rows * cols);
  const std::vector<float> scales = tn::per_channel_scales(w, rows, cols);
  std::vector<std::int8_t> want(rows * cols);
  tn::quantize_per_channel(w, rows, cols, scales, want);
  auto dw = to_device(w);
  auto ds = to_device(scales);
  DeviceBuffer<std::int8_t> dwq(rows * cols);
  tk::quantize_per_channel(dw.get(), rows, cols, ds.get(), dwq.get(), nullptr);
  EXPECT_EQ(dwq.download(), want);
}

TEST(Int8QuantKernels, DequantizeAccumulatorsEqualHost) {
  TCB_REQUIRE_GPU(dev);
  const std::int64_t m = 100, n = 37, ld = 104;
  std::mt19937 rng(4);
  std::uniform_int_distribution<std::int32_t> v(-2000000, 2000000);
  std::vector<std::int32_t> acc(static_cast<std::size_t>(ld * n));
  for (auto& a : acc) a = v(rng);
  std::vector<float> scale_w(static_cast<std::size_t>(m));
  for (std::size_t i = 0; i < scale_w.size(); ++i) scale_w[i] = 0.001f * static_cast<float>(i + 1);
  const float scale_x = 0.0371f;
  auto dacc = to_device(acc);
  auto dsw = to_device(scale_w);
  DeviceBuffer<float> dy(acc.size());
  TCB_CUDA(cudaMemset(dy.get(), 0, dy.bytes()));
  tk::dequantize_accumulators(dacc.get(), m, n, ld, scale_x, dsw.get(), dy.get(), nullptr);
  const std::vector<float> y = dy.download();
  std::size_t bad = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      const auto idx = static_cast<std::size_t>(i + j * ld);
      const float want =
          tn::dequantize_accumulator(acc[idx], scale_x, scale_w[static_cast<std::size_t>(i)]);
      bad += std::memcmp(&y[idx], &want, sizeof want) != 0;
    }
  EXPECT_EQ(bad, 0u);
}

}  // namespace
