// Every tensor-peak kernel this GPU can run: the accumulators after the loop equal the exact
// host result for the known inputs (so the loop ran the counted number of instructions with
// the right fragments), and the in-kernel clocks are sane. Skips without a GPU and, per
// instruction, where this GPU lacks it.
#include "gpu_test.hpp"

#include "tcbench/cuda_owners.hpp"
#include "tcbench/kernels/tensor_peak.hpp"

#include <gtest/gtest.h>

#include <string>

namespace tcbench::kernels {
namespace {

class TensorPeak : public ::testing::TestWithParam<PeakInstr> {};

TEST_P(TensorPeak, AccumulatorsMatchTheHostExactly) {
  TCB_REQUIRE_GPU(dev);
  const PeakInstr instr = GetParam();
  if (auto why = peak_unsupported_reason(instr, dev.spec.cc_major, dev.spec.cc_minor))
    GTEST_SKIP() << *why;
  const PeakLaunch launch{dev.spec.sm_count * peak_blocks_per_sm(instr), 257};
  ASSERT_GT(launch.blocks, 0);
  const std::vector<std::uint8_t> a = peak_input_a(instr), b = peak_input_b(instr);
  DeviceBuffer<std::uint8_t> da(a.size()), db(b.size()), out(peak_out_bytes(instr, launch));
  DeviceBuffer<PeakClocks> clocks(static_cast<std::size_t>(launch.blocks));
  da.upload(a);
  db.upload(b);
  Stream stream;  // non-blocking: the poison must go on it, not on the legacy default stream
  TCB_CUDA(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), stream.get()));  // NaN as doubles
  launch_tensor_peak(instr, launch, {da.get(), db.get(), out.get(), clocks.get()}, stream.get());
  TCB_CUDA(cudaStreamSynchronize(stream.get()));
  const PeakCheck check = check_peak_output(instr, launch, out.download());
  EXPECT_EQ(check.mismatches, 0u) << info(instr).ptx << ": " << check.first;
  EXPECT_GT(check.checked, 0u);
  for (const PeakClocks& c : clocks.download()) {
    EXPECT_GT(c.cycles, 0);
    EXPECT_GT(c.nanos, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(All, TensorPeak, ::testing::ValuesIn(kAllPeakInstrs),
                         [](const auto& instr_param) {
                           const PeakInstrInfo& i = ::tcbench::kernels::info(instr_param.param);
                           std::string s =
                               std::string(i.variant) + "_" + std::string(name(i.precision));
                           return s;
                         });

TEST(TensorPeakHost, WgmmaNeedsHopperAndSaysSo) {
  const auto why = peak_unsupported_reason(PeakInstr::wgmma_f16_f32, 8, 0);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("9.0"), std::string::npos);
  EXPECT_NE(why->find("8.0"), std::string::npos);
  EXPECT_FALSE(peak_unsupported_reason(PeakInstr::wgmma_f16_f32, 9, 0).has_value());
  EXPECT_TRUE(peak_unsupported_reason(PeakInstr::wgmma_f16_f32, 10, 0).has_value());
  EXPECT_TRUE(peak_unsupported_reason(PeakInstr::mma_e4m3_f32, 8, 6).has_value());
  EXPECT_FALSE(peak_unsupported_reason(PeakInstr::mma_e4m3_f32, 8, 9).has_value());
  EXPECT_TRUE(peak_unsupported_reason(PeakInstr::mma_f16_f32, 7, 5).has_value());
}

TEST(TensorPeakHost, OperationCountIsInstructionsTimesShape) {
  // 2 blocks x 4 warps x 8 chains x (2 x 10 + 1) instructions x 2 * 16 * 8 * 16.
  EXPECT_DOUBLE_EQ(peak_ops(PeakInstr::mma_f16_f32, {2, 10}), 2.0 * 4 * 8 * 21 * 4096);
  // 3 blocks x 1 warpgroup x (2 x 5 + 1) x 2 * 64 * 256 * 32.
  EXPECT_DOUBLE_EQ(peak_ops(PeakInstr::wgmma_s8_s32, {3, 5}), 3.0 * 11 * 1048576);
}

TEST(TensorPeakHost, CheckerCatchesAWrongAccumulator) {
  // A correct buffer built from the host's own expectation passes; one changed element fails.
  const PeakInstr instr = PeakInstr::mma_s8_s32;
  const PeakLaunch launch{1, 3};
  std::vector<std::uint8_t> out(peak_out_bytes(instr, launch));
  const PeakCheck poisoned = check_peak_output(instr, launch, out);  // zeros
  EXPECT_GT(poisoned.mismatches, 0u);
}

}  // namespace
}  // namespace tcbench::kernels
