// The loss-scaling kernels against their host references, bit for bit: classify-and-count must
// give numerics::count_landings' exact counts, and the multi-tensor check-and-unscale the exact
// bits and Inf/NaN flag of check_and_unscale applied tensor by tensor, for tensors of awkward
// sizes and alignments (scalar and 128-bit paths, chunk edges). Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "gpu_test.hpp"
#include "tcbench/cuda_owners.hpp"
#include "tcbench/kernels/loss_scaling.hpp"
#include "tcbench/numerics/loss_scaling.hpp"
#include "tcbench/studies/mixed_precision_training.hpp"

namespace tk = tcbench::kernels;
namespace tn = tcbench::numerics;
namespace ts = tcbench::studies;

namespace {

std::vector<float> sweep_scales() {
  std::vector<float> s;
  for (int e : tn::kSweepScaleLog2) s.push_back(std::ldexp(1.0f, e));
  return s;
}

void expect_counts_match(const std::vector<float>& g, const char* what) {
  const std::vector<float> scales = sweep_scales();
  tcbench::DeviceBuffer<float> d_g(g.size());
  d_g.upload(g);
  tcbench::DeviceBuffer<unsigned long long> d_counts(scales.size() * 2 * tn::kLandingCount);
  tk::count_landings(d_g.get(), g.size(), scales, d_counts.get(), nullptr);
  const std::vector<unsigned long long> counts = d_counts.download();
  for (std::size_t s = 0; s < scales.size(); ++s)
    for (int f = 0; f < 2; ++f) {
      const tn::LandingCounts want =
          tn::count_landings(g, scales[s], f == 0 ? tn::Format::fp16 : tn::Format::bf16);
      for (int l = 0; l < tn::kLandingCount; ++l)
        EXPECT_EQ(counts[(s * 2 + f) * tn::kLandingCount + l], want[l])
            << what << ": scale " << scales[s] << " format " << f << " landing "
            << tn::name(static_cast<tn::Landing>(l));
    }
}

TEST(LossScalingKernels, CountLandingsMatchesHostOnLognormalAndMlpGradients) {
  TCB_REQUIRE_GPU(dev);
  std::vector<float> g = tn::lognormal_gradients(1'000'003, 3);
  // Every edge class: zeros, Inf/NaN, values at FP16's thresholds, FP32's own limits.
  for (float x : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-25f, 0x1.000002p-25f, 0x1p-24f,
                  0x1p-14f, 65504.0f, 65519.0f, 65520.0f, 3e38f, 0x1p-149f})
    g.push_back(x);
  expect_counts_match(g, "log-normal");
  const int steps[] = {0, 100};
  expect_counts_match(ts::fp32_backward_gradients(ts::TrainingConfig{}, steps), "MLP");
}

TEST(LossScalingKernels, CountLandingsRejectsTooManyScales) {
  TCB_REQUIRE_GPU(dev);
  tcbench::DeviceBuffer<unsigned long long> d_counts(64 * tn::kLandingCount);
  const std::vector<float> nine(9, 1.0f);
  EXPECT_THROW(tk::count_landings(nullptr, 0, nine, d_counts.get(), nullptr),
               tcbench::InvalidArgument);
}

// Tensors carved out of one allocation at element offsets that make some of them misaligned
// for 128-bit access, with sizes around the chunk size.
struct Layout {
  std::size_t offset, count;
};
const Layout kLayouts[] = {{0, 1},      {4, 3},      {8, 65536},       {65544, 65537},
                           {131081, 7}, {131089, 5}, {131096, 200001}, {331100, 4}};
constexpr std::size_t kTotal = 331104;

void run_unscale_case(std::vector<float> values, float inv_scale, bool want_found) {
  tcbench::DeviceBuffer<float> d_all(values.size()), d_inv(1), d_found(1);
  d_all.upload(values);
  d_inv.upload(std::vector<float>{inv_scale});
  d_found.upload(std::vector<float>{0.0f});
  std::vector<tk::GradTensor> tensors;
  std::vector<std::span<float>> host;
  for (const Layout& l : kLayouts) {
    tensors.push_back({d_all.get() + l.offset, l.count});
    host.emplace_back(values.data() + l.offset, l.count);
  }
  const tk::MultiTensorUnscale unscale(tensors);
  EXPECT_EQ(unscale.chunks(), 12u);  // 1 + 1 + 1 + 2 + 1 + 1 + 4 + 1
  unscale.run(d_inv.get(), d_found.get(), nullptr);
  const std::vector<float> dev_out = d_all.download();
  const float found = d_found.download()[0];
  const bool host_found = tk::check_and_unscale_host(host, inv_scale);
  EXPECT_EQ(host_found, want_found);
  EXPECT_EQ(found, host_found ? 1.0f : 0.0f);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const bool both_nan = std::isnan(values[i]) && std::isnan(dev_out[i]);
    if (!both_nan && std::memcmp(&values[i], &dev_out[i], sizeof(float)) != 0 && ++mismatches <= 10)
      ADD_FAILURE() << "element " << i << ": host " << values[i] << " device " << dev_out[i];
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(LossScalingKernels, MultiTensorUnscaleMatchesHostBitForBit) {
  TCB_REQUIRE_GPU(dev);
  std::mt19937 rng(5);
  std::uniform_int_distribution<std::uint32_t> bits;
  std::vector<float> finite(kTotal);
  for (float& x : finite) {
    // Random finite floats of every exponent, subnormals included.
    do {
      const std::uint32_t b = bits(rng);
      std::memcpy(&x, &b, sizeof x);
    } while (!std::isfinite(x));
  }
  run_unscale_case(finite, tn::inverse_scale(65536.0f), false);
  run_unscale_case(finite, tn::inverse_scale(3.0f), false);  // an inexact reciprocal
  std::vector<float> one_inf = finite;
  one_inf[131096 + 199999] = INFINITY;  // deep inside the last big tensor
  run_unscale_case(one_inf, tn::inverse_scale(1024.0f), true);
  std::vector<float> one_nan = finite;
  one_nan[4 + 2] = NAN;  // in a misaligned 3-element tensor (scalar path)
  run_unscale_case(one_nan, tn::inverse_scale(1024.0f), true);
}

}  // namespace
