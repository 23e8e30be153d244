// The FP8 scaling kernels (kernels/fp8_scaling.cu) against the host numerics, bit for bit:
// every cast byte equals scaled_cast_fp8 on the host, every amax equals numerics::amax (NaN
// sticky), every scale equals delayed/current_scale_from_amax and the DelayedScaler's update.
// Inputs include NaN, +-Inf, values that saturate, subnormals of both formats and of FP32, and
// lengths that leave a tail past the float4 loop. Skips without a GPU.
#include "gpu_test.hpp"

#include "tcbench/cuda_owners.hpp"
#include "tcbench/kernels/convert.hpp"
#include "tcbench/kernels/fp8_scaling.hpp"
#include "tcbench/random_fill.hpp"

#include <gtest/gtest.h>

#include <cuda_bf16.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace tcbench {
namespace {

namespace tn = tcbench::numerics;
namespace tk = tcbench::kernels;

// Random bit patterns (every class of float), values around the FP8 limits, and specials.
std::vector<float> awkward_inputs(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::uint32_t> bits;
  std::uniform_real_distribution<float> range(-600.0f, 600.0f);
  std::vector<float> xs;
  const float specials[] = {0.0f,    -0.0f,    INFINITY, -INFINITY, NAN,      448.0f,
                            464.0f,  465.0f,   -480.0f,  57344.0f,  61440.0f, 61441.0f,
                            0x1p-9f, 0x1p-10f, 0x1p-11f, 0x1p-16f,  0x1p-17f, 0x1p-140f,
                            FLT_MAX, 1.0f,     -1.0f,    0.3f};
  for (float s : specials) xs.push_back(s);
  while (xs.size() < n) {
    const std::uint32_t b = bits(rng);
    float f;
    std::memcpy(&f, &b, sizeof f);
    xs.push_back(xs.size() % 3 == 0 ? f : range(rng));
  }
  xs.resize(n);
  return xs;
}

bool same_float(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

struct Gpu {
  Stream stream;
  cudaStream_t get() const { return stream.get(); }
};

std::vector<__nv_fp8_storage_t> host_cast(const std::vector<float>& xs, float scale,
                                          tn::Fp8Format f, tn::Saturation sat) {
  std::vector<__nv_fp8_storage_t> out(xs.size());
  tn::cast_to_fp8(xs, scale, f, out, sat);
  return out;
}

std::size_t count_mismatches(const std::vector<__nv_fp8_storage_t>& dev,
                             const std::vector<__nv_fp8_storage_t>& host,
                             const std::vector<float>& xs, const char* what) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < host.size(); ++i)
    if (dev[i] != host[i] && ++bad <= 5)
      ADD_FAILURE() << what << ": x=" << std::hexfloat << xs[i] << " host 0x" << std::hex
                    << int(host[i]) << " device 0x" << int(dev[i]);
  return bad;
}

TEST(Fp8Kernels, ScaledCastMatchesHostBitForBit) {
  TCB_REQUIRE_GPU(dev);
  Gpu gpu;
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{4099}, std::size_t{1} << 20}) {
    const std::vector<float> xs = awkward_inputs(n, static_cast<std::uint32_t>(n));
    DeviceBuffer<float> x(n), scale(1);
    DeviceBuffer<__nv_fp8_storage_t> out(n);
    x.upload(xs, gpu.get());
    for (float s : {1.0f, 3.0f, 0.0078125f, 448.0f / 600.0f}) {
      scale.upload(std::vector<float>{s}, gpu.get());
      for (tn::Fp8Format f : {tn::Fp8Format::e4m3, tn::Fp8Format::e5m2})
        for (tn::Saturation sat : {tn::Saturation::satfinite, tn::Saturation::none}) {
          TCB_CUDA(cudaMemsetAsync(out.get(), 0x55, n, gpu.get()));  // poison
          tk::scaled_cast(x.get(), n, scale.get(), f, sat, out.get(), gpu.get());
          EXPECT_EQ(count_mismatches(out.download(gpu.get()), host_cast(xs, s, f, sat), xs,
                                     "scaled_cast"),
                    0u)
              << "n=" << n << " scale=" << s << " format=" << int(f) << " sat=" << int(sat);
        }
    }
  }
}

// BF16 inputs (what TE usually casts from): the kernels widen exactly, so the host reference is
// the same cast of the BF16 values as floats.
TEST(Fp8Kernels, Bf16InputsMatchHostBitForBit) {
  TCB_REQUIRE_GPU(dev);
  Gpu gpu;
  for (std::size_t n : {std::size_t{5}, std::size_t{65539}}) {
    const std::vector<float> raw = awkward_inputs(n, 31);
    std::vector<__nv_bfloat16> xb(n);
    std::vector<float> xs(n);
    for (std::size_t i = 0; i < n; ++i) {
      xb[i] = __float2bfloat16_rn(raw[i]);
      xs[i] = __bfloat162float(xb[i]);
    }
    DeviceBuffer<__nv_bfloat16> x(n);
    DeviceBuffer<float> scale(1);
    DeviceBuffer<__nv_fp8_storage_t> out(n);
    DeviceBuffer<unsigned> amax(1);
    x.upload(xb, gpu.get());
    scale.upload(std::vector<float>{0.75f}, gpu.get());
    for (tn::Fp8Format f : {tn::Fp8Format::e4m3, tn::Fp8Format::e5m2}) {
      tk::scaled_cast(x.get(), n, scale.get(), f, tn::Saturation::satfinite, out.get(), gpu.get());
      EXPECT_EQ(count_mismatches(out.download(gpu.get()),
                                 host_cast(xs, 0.75f, f, tn::Saturation::satfinite), xs,
                                 "scaled_cast bf16"),
                0u);
      tk::reset_amax(amax.get(), gpu.get());
      TCB_CUDA(cudaMemsetAsync(out.get(), 0x55, n, gpu.get()));
      tk::scaled_cast_record_amax(x.get(), n, scale.get(), f, out.get(), amax.get(), gpu.get());
      EXPECT_EQ(count_mismatches(out.download(gpu.get()),
                                 host_cast(xs, 0.75f, f, tn::Saturation::satfinite), xs,
                                 "scaled_cast_record_amax bf16"),
                0u);
      EXPECT_TRUE(same_float(tn::amax_from_bits(amax.download(gpu.get())[0]), tn::amax(xs)));
    }
    tk::reset_amax(amax.get(), gpu.get());
    tk::amax_reduce(x.get(), n, amax.get(), gpu.get());
    EXPECT_TRUE(same_float(tn::amax_from_bits(amax.download(gpu.get())[0]), tn::amax(xs)));
  }
}

TEST(Fp8Kernels, NanNeverBecomesFinite) {
  TCB_REQUIRE_GPU(dev);
  Gpu gpu;
  const std::vector<float> xs = {NAN, -NAN, 1.0f, NAN, 2.0f};
  DeviceBuffer<float> x(xs.size()), scale(1);
  DeviceBuffer<__nv_fp8_storage_t> out(xs.size());
  DeviceBuffer<unsigned> amax(1);
  x.upload(xs, gpu.get());
  scale.upload(std::vector<float>{100.0f}, gpu.get());
  tk::reset_amax(amax.get(), gpu.get());
  tk::scaled_cast_record_amax(x.get(), xs.size(), scale.get(), tn::Fp8Format::e4m3, out.get(),
                              amax.get(), gpu.get());
  const auto q = out.download(gpu.get());
  for (std::size_t i : {0u, 1u, 3u})
    EXPECT_TRUE(std::isnan(tn::fp8_to_float(q[i], tn::Fp8Format::e4m3))) << i;
  EXPECT_TRUE(std::isnan(tn::amax_from_bits(amax.download(gpu.get())[0])));
}

TEST(Fp8Kernels, AmaxMatchesHostIncludingNanAndInf) {
  TCB_REQUIRE_GPU(dev);
  Gpu gpu;
  for (std::size_t n : {std::size_t{3}, std::size_t{4097}, std::size_t{3} << 20}) {
    std::vector<float> xs(n);
    std::mt19937 rng(static_cast<std::uint32_t>(n));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float& v : xs) v = normal(rng);
    DeviceBuffer<float> x(n);
    DeviceBuffer<unsigned> amax(1);
    // Plain, then with an Inf, then with a NaN late in the tensor (the last block's tail).
    for (int variant = 0; variant < 3; ++variant) {
      if (variant == 1) xs[n / 2] = -INFINITY;
      if (variant == 2) xs[n - 1] = NAN;
      x.upload(xs, gpu.get());
      tk::reset_amax(amax.get(), gpu.get());
      tk::amax_reduce(x.get(), n, amax.get(), gpu.get());
      const float got = tn::amax_from_bits(amax.download(gpu.get())[0]);
      EXPECT_TRUE(same_float(got, tn::amax(xs)))
          << "n=" << n << " variant " << variant << ": " << got << " vs " << tn::amax(xs);
    }
  }
}

TEST(Fp8Kernels, AmaxAccumulatesAcrossCallsUntilReset) {
  TCB_REQUIRE_GPU(dev);
  Gpu gpu;
  DeviceBuffer<float> a(4), b(4);
  DeviceBuffer<unsigned> amax(1);
  a.upload(std::vector<float>{1, -5, 2, 0}, gpu.get());
  b.upload(std::vector<float>{3, 0, -4, 1}, gpu.get());
  tk::reset_amax(amax.get(), gpu.get());
  tk::amax_reduce(a.get(), 4, amax.get(), gpu.get());
  tk::amax_reduce(b.get(), 4, amax.get(), gpu.get());
  EXPECT_EQ(tn::amax_from_bits(amax.download(gpu.get())[0]), 5.0f);
  tk::reset_amax(amax.get(), gpu.get());
  tk::amax_reduce(b.get(), 4, amax.get(), gpu.get());
  EXPECT_EQ(tn::amax_from_bits(amax.download(gpu.get())[0]), 4.0f);
}

// The delayed-scaling pass: casting with the previous scale while recording amax, then the
// scale update, must equal the host DelayedScaler (history length 1) step by step.
TEST(Fp8Kernels, DelayedPassAndUpdateFollowTheHostScaler) {
  TCB_REQUIRE_GPU(dev);
  Gpu gpu;
  const std::size_t n = 10001;
  std::vector<float> base = awkward_inputs(n, 7);
  for (float& v : base)
    if (!std::isfinite(v) || std::fabs(v) > 1e4f) v = 1.0f;  // a finite, growing tensor
  tn::DelayedScaler host({.amax_history_len = 1, .margin = 1}, tn::TensorRole::forward);
  DeviceBuffer<float> x(n), scale(1), scale_inv(1);
  DeviceBuffer<__nv_fp8_storage_t> out(n);
  DeviceBuffer<unsigned> amax(1);
  scale.upload(std::vector<float>{1.0f}, gpu.get());  // TE's initial scale
  std::vector<float> xs(n);
  for (int step = 0; step < 4; ++step) {
    for (std::size_t i = 0; i < n; ++i) xs[i] = base[i] * std::exp2f(float(step));
    x.upload(xs, gpu.get());
    tk::reset_amax(amax.get(), gpu.get());
    tk::scaled_cast_record_amax(x.get(), n, scale.get(), tn::Fp8Format::e4m3, out.get(), amax.get(),
                                gpu.get());
    EXPECT_EQ(count_mismatches(
                  out.download(gpu.get()),
                  host_cast(xs, host.scale(), tn::Fp8Format::e4m3, tn::Saturation::satfinite), xs,
                  "scaled_cast_record_amax"),
              0u)
        << "step " << step;
    EXPECT_TRUE(same_float(tn::amax_from_bits(amax.download(gpu.get())[0]), tn::amax(xs)));
    tk::compute_scale(amax.get(), tk::ScaleRule::delayed, host.fp8_max(), host.config().margin,
                      scale.get(), scale_inv.get(), gpu.get());
    host.record_amax(tn::amax(xs));
    host.update();
    EXPECT_EQ(scale.download(gpu.get())[0], host.scale()) << "step " << step;
    EXPECT_EQ(scale_inv.download(gpu.get())[0], host.scale_inv()) << "step " << step;
  }
}

TEST(Fp8Kernels, ComputeScaleFollowsTransformerEngineRules) {
  TCB_REQUIRE_GPU(dev);
  Gpu gpu;
  DeviceBuffer<unsigned> amax(1);
  DeviceBuffer<float> scale(1), scale_inv(1);
  for (float a : {0.0f, 1.0f, 3.5f, 1e-44f, 1e30f, INFINITY, NAN})
    for (tk::ScaleRule rule : {tk::ScaleRule::delayed, tk::ScaleRule::current})
      for (float max : {448.0f, 57344.0f}) {
        const float prev = 7.0f;
        amax.upload(std::vector<unsigned>{tn::amax_to_bits(a)}, gpu.get());
        scale.upload(std::vector<float>{prev}, gpu.get());
        tk::compute_scale(amax.get(), rule, max, 2, scale.get(), scale_inv.get(), gpu.get());
        const float want = rule == tk::ScaleRule::delayed
                               ? tn::delayed_scale_from_amax(a, max, 2, prev)
                               : tn::current_scale_from_amax(a, max);
        EXPECT_TRUE(same_float(scale.download(gpu.get())[0], want)) << a << " " << int(rule);
        EXPECT_TRUE(same_float(scale_inv.download(gpu.get())[0], 1.0f / want));
      }
}

TEST(Fp8Kernels, LaunchersRejectBadPointersWithASentence) {
  TCB_REQUIRE_GPU(dev);
  Gpu gpu;
  DeviceBuffer<float> x(8), scale(1);
  DeviceBuffer<__nv_fp8_storage_t> out(8);
  DeviceBuffer<unsigned> amax(1);
  EXPECT_THROW(tk::scaled_cast(x.get() + 1, 4, scale.get(), tn::Fp8Format::e4m3,
                               tn::Saturation::satfinite, out.get(), gpu.get()),
               InvalidArgument);
  EXPECT_THROW(tk::scaled_cast(x.get(), 4, nullptr, tn::Fp8Format::e4m3, tn::Saturation::satfinite,
                               out.get(), gpu.get()),
               InvalidArgument);
  EXPECT_THROW(tk::amax_reduce(x.get(), 8, nullptr, gpu.get()), InvalidArgument);
  EXPECT_THROW(tk::compute_scale(amax.get(), tk::ScaleRule::current, 0.0f, 0, scale.get(),
                                 scale.get(), gpu.get()),
               InvalidArgument);
  EXPECT_NO_THROW(tk::amax_reduce(x.get(), 0, amax.get(), gpu.get()));  // empty: nothing to do
}

// The activation conversion the block benchmark uses: bit-exact with the host's convert_sample.
TEST(ConvertKernel, MatchesHostConvertSample) {
  TCB_REQUIRE_GPU(dev);
  Gpu gpu;
  const std::size_t n = 100003;
  const std::vector<float> xs = awkward_inputs(n, 5);
  DeviceBuffer<float> x(n);
  DeviceBuffer<__half> h(n);
  DeviceBuffer<__nv_bfloat16> b(n);
  x.upload(xs, gpu.get());
  tk::convert(x.get(), n, h.get(), gpu.get());
  tk::convert(x.get(), n, b.get(), gpu.get());
  const auto hd = h.download(gpu.get());
  const auto bd = b.download(gpu.get());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    bad += !same_float(__half2float(hd[i]), __half2float(convert_sample<__half>(xs[i])));
    bad += !same_float(__bfloat162float(bd[i]),
                       __bfloat162float(convert_sample<__nv_bfloat16>(xs[i])));
  }
  EXPECT_EQ(bad, 0u);
}

}  // namespace
}  // namespace tcbench
