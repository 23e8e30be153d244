// The accumulator kernels (kernels/fp8_accumulator*.cu): on every path this GPU has, the bit
// detection finds one accumulator model, the 16-bit controls keep FP32's bits, and the kernel's
// raw outputs on the FP8 block study's operands equal that model's emulation bit for bit, with
// and without promotion. Skips without a GPU and per path where the GPU lacks it. The host
// tests (AccPathHost) need no GPU.
#include "gpu_test.hpp"
#include "tcbench/cuda_owners.hpp"
#include "tcbench/error.hpp"
#include "tcbench/kernels/fp8_accumulator.hpp"
#include "tcbench/numerics/accumulator_probes.hpp"
#include "tcbench/studies/fp8_accumulation.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tcbench::kernels {
namespace {

namespace tn = tcbench::numerics;

// D = A B^T (row-major, m x n) through the path.
std::vector<float> run(AccPath p, const std::vector<float>& a, const std::vector<float>& b, int m,
                       int n, int k, int promote) {
  const tn::Element e = info(p).input;
  const std::vector<std::uint8_t> ha = tn::exact_bytes(e, a), hb = tn::exact_bytes(e, b);
  DeviceBuffer<std::uint8_t> da(ha.size()), db(hb.size());
  DeviceBuffer<float> d(static_cast<std::size_t>(m) * n);
  da.upload(std::span<const std::uint8_t>(ha));
  db.upload(std::span<const std::uint8_t>(hb));
  Stream stream;
  TCB_CUDA(cudaMemsetAsync(d.get(), 0xFF, d.bytes(), stream.get()));
  launch_acc_gemm(p, {da.get(), db.get(), d.get(), m, n, k, promote}, stream.get());
  TCB_CUDA(cudaStreamSynchronize(stream.get()));
  return d.download();
}

class Fp8Accumulator : public ::testing::TestWithParam<AccPath> {};

TEST_P(Fp8Accumulator, KeepsTheBitsItsProbesShowAndMatchesTheirModelBitForBit) {
  TCB_REQUIRE_GPU(dev);
  const AccPath p = GetParam();
  if (auto why = acc_path_unsupported(p, dev.spec.cc_major, dev.spec.cc_minor))
    GTEST_SKIP() << *why;
  const AccPathInfo& i = info(p);

  // The bit detection: probes padded to 512 rows, D's diagonal.
  const tn::AccumulatorProbes probes = tn::make_accumulator_probes(i.input);
  const int rows = 512, k = probes.length;
  ASSERT_LE(probes.probes.size(), static_cast<std::size_t>(rows));
  std::vector<float> a = probes.a, b = probes.b;
  a.resize(static_cast<std::size_t>(rows) * k, 0.0f);
  b.resize(a.size(), 0.0f);
  const std::vector<float> d = run(p, a, b, rows, rows, k, 0);
  std::vector<float> diagonal(probes.probes.size());
  for (std::size_t r = 0; r < diagonal.size(); ++r) diagonal[r] = d[r * rows + r];
  const tn::AccumulatorEstimate e = tn::estimate_accumulator(probes, diagonal);
  ASSERT_FALSE(e.refused) << i.ptx << ": " << e.reason;
  RecordProperty("accumulator", e.describe());
  std::printf("%s: %s\n", std::string(i.ptx).c_str(), e.describe().c_str());
  if (i.control) {
    EXPECT_GE(e.fraction_bits, tn::kFp32FractionBits) << e.describe();
  }

  // The block study's operands through the kernel, plain and promoted every 128 products.
  const int m = 128, n = 128, depth = 4096;
  const studies::Fp8Operands o = studies::fp8_study_operands(m, n, depth);
  for (int promote : {0, 128}) {
    const std::vector<float> got = run(p, o.a8, o.b8, m, n, depth, promote);
    tn::AccumulatorModel model = e.model;
    model.promotion = promote;
    int wrong = 0;
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) {
        const float* pa = o.a8.data() + static_cast<std::size_t>(r) * depth;
        const float* pb = o.b8.data() + static_cast<std::size_t>(c) * depth;
        const float want = tn::emulate_dot(
            model, [&](int l) { return static_cast<double>(pa[l]) * pb[l]; }, depth);
        const float have = got[static_cast<std::size_t>(r) * n + c];
        if (!(have == want) && wrong++ < 3)
          ADD_FAILURE() << i.ptx << " promote " << promote << " (" << r << ", " << c
                        << "): the kernel gave " << have << ", the model (" << e.describe() << ") "
                        << want;
      }
    EXPECT_EQ(wrong, 0) << i.ptx << " promote " << promote;
  }
}

INSTANTIATE_TEST_SUITE_P(All, Fp8Accumulator, ::testing::ValuesIn(kAccPaths),
                         [](const auto& param) {
                           return std::string(::tcbench::kernels::info(param.param).name);
                         });

TEST(AccPathHost, EachPathRunsWhereItsInstructionIsNative) {
  // FP8 mma.sync: native on 8.9 and 12.x, emulated (refused) on 9.0 and 10.x.
  EXPECT_FALSE(acc_path_unsupported(AccPath::mma_e4m3, 8, 9).has_value());
  EXPECT_FALSE(acc_path_unsupported(AccPath::mma_e4m3, 12, 0).has_value());
  const auto hopper = acc_path_unsupported(AccPath::mma_e4m3, 9, 0);
  ASSERT_TRUE(hopper.has_value());
  EXPECT_NE(hopper->find("emulated through FP16"), std::string::npos) << *hopper;
  EXPECT_TRUE(acc_path_unsupported(AccPath::mma_e4m3, 10, 0).has_value());
  EXPECT_TRUE(acc_path_unsupported(AccPath::mma_e4m3, 8, 6).has_value());
  // The controls from 8.0; wgmma on 9.0 only.
  EXPECT_FALSE(acc_path_unsupported(AccPath::mma_f16, 8, 0).has_value());
  EXPECT_FALSE(acc_path_unsupported(AccPath::mma_bf16, 9, 0).has_value());
  EXPECT_TRUE(acc_path_unsupported(AccPath::mma_f16, 7, 5).has_value());
  EXPECT_FALSE(acc_path_unsupported(AccPath::wgmma_e4m3, 9, 0).has_value());
  EXPECT_TRUE(acc_path_unsupported(AccPath::wgmma_e4m3, 10, 0).has_value());
  // tcgen05: 10.x only (and only when the build holds it).
  EXPECT_TRUE(acc_path_unsupported(AccPath::tcgen05_e4m3, 9, 0).has_value());
  EXPECT_TRUE(acc_path_unsupported(AccPath::tcgen05_e4m3, 12, 0).has_value());
}

TEST(AccPathHost, RefusesProblemsItsKernelDoesNotTake) {
  alignas(16) static std::uint8_t buffer[64];
  float* d = reinterpret_cast<float*>(buffer);
  const AccGemm ok{buffer, buffer, d, 128, 64, 1024, 128};
  for (AccPath p : kAccPaths) EXPECT_FALSE(why_invalid(p, ok).has_value()) << info(p).name;
  AccGemm g = ok;
  g.k = 1000;
  EXPECT_TRUE(why_invalid(AccPath::wgmma_e4m3, g).has_value());
  g = ok;
  g.m = 64;  // not a multiple of tcgen05's 128
  EXPECT_TRUE(why_invalid(AccPath::tcgen05_e4m3, g).has_value());
  EXPECT_FALSE(why_invalid(AccPath::wgmma_e4m3, g).has_value());
  g = ok;
  g.promote = 48;  // not a multiple of 32
  EXPECT_TRUE(why_invalid(AccPath::mma_e4m3, g).has_value());
  EXPECT_FALSE(why_invalid(AccPath::mma_f16, g).has_value());  // k = 16: 48 is three of them
  g = ok;
  g.a = buffer + 4;
  const auto why = why_invalid(AccPath::mma_e4m3, g);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("16-byte"), std::string::npos) << *why;
  EXPECT_THROW(launch_acc_gemm(AccPath::mma_e4m3, g, nullptr), InvalidArgument);
}

}  // namespace
}  // namespace tcbench::kernels
