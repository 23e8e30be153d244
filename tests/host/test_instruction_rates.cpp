// The per-instruction rate table (common/facts/src/instruction_rates.cpp) against the peak table
// and the datasheets it cites: every kind that runs at its precision's rate has the peak table's
// number, the B200 datasheet's dense figures follow from 148 SMs at the implied ~1.86 GHz, the
// kinds that differ (FP4 through .kind::f8f6f4, B300's NVFP4, no .kind::i8 on 10.3) differ
// exactly as documented, and every row names its source.
#include "tcbench/instruction_rates.hpp"
#include "tcbench/peaks.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

namespace tcbench {
namespace {

using K = TensorKind;
using P = Precision;

double rate(K kind, int major, int minor, bool geforce = false) {
  return instruction_ops_per_clock_per_sm(kind, major, minor, geforce);
}

TEST(InstructionRates, Tcgen05KindsRunAtThePeakTablesRatesOfTheirPrecision) {
  for (auto [major, minor] : {std::pair{10, 0}, {10, 3}}) {
    EXPECT_EQ(rate(K::tcgen05_f16, major, minor),
              ops_per_clock_per_sm(major, minor, P::fp16, false));
    EXPECT_EQ(rate(K::tcgen05_f16, major, minor),
              ops_per_clock_per_sm(major, minor, P::bf16, false));
    EXPECT_EQ(rate(K::tcgen05_tf32, major, minor),
              ops_per_clock_per_sm(major, minor, P::tf32, false));
    EXPECT_EQ(rate(K::tcgen05_f8f6f4, major, minor),
              ops_per_clock_per_sm(major, minor, P::fp8, false));
    EXPECT_EQ(rate(K::tcgen05_f8f6f4, major, minor),
              ops_per_clock_per_sm(major, minor, P::fp6, false));
    EXPECT_EQ(rate(K::tcgen05_mxf8f6f4, major, minor),
              ops_per_clock_per_sm(major, minor, P::fp8, false));
    EXPECT_EQ(rate(K::tcgen05_mxf4nvf4, major, minor),
              ops_per_clock_per_sm(major, minor, P::fp4, false));
  }
  EXPECT_EQ(rate(K::tcgen05_i8, 10, 0), ops_per_clock_per_sm(10, 0, P::int8, false));
}

TEST(InstructionRates, TheKindsThatDifferFromTheirPrecision) {
  // .kind::f8f6f4 runs FP4 at the FP8 rate: half the FP4 figure, which only mxf4nvf4 reaches.
  EXPECT_EQ(2 * rate(K::tcgen05_f8f6f4, 10, 0), ops_per_clock_per_sm(10, 0, P::fp4, false));
  // B300's NVFP4 is 1.5x B200's per SM; its other kinds are B200's.
  EXPECT_EQ(rate(K::tcgen05_mxf4nvf4, 10, 3), 1.5 * rate(K::tcgen05_mxf4nvf4, 10, 0));
  EXPECT_EQ(rate(K::tcgen05_f16, 10, 3), rate(K::tcgen05_f16, 10, 0));
  // No .kind::i8 on 10.3, no tcgen05 off 10.x, no GeForce kinds off 12.x.
  EXPECT_EQ(rate(K::tcgen05_i8, 10, 3), 0.0);
  EXPECT_EQ(rate(K::tcgen05_f16, 9, 0), 0.0);
  EXPECT_EQ(rate(K::tcgen05_f16, 12, 0), 0.0);
  EXPECT_EQ(rate(K::mma_f8f6f4, 10, 0), 0.0);
}

TEST(InstructionRates, GeForceBlackwellKindsAndTheirHalving) {
  for (bool geforce : {false, true}) {
    EXPECT_EQ(rate(K::mma_f8f6f4, 12, 0, geforce), ops_per_clock_per_sm(12, 0, P::fp8, geforce));
    EXPECT_EQ(rate(K::mma_mxf8f6f4, 12, 0, geforce), ops_per_clock_per_sm(12, 0, P::fp8, geforce));
    EXPECT_EQ(rate(K::mma_mxf4nvf4, 12, 0, geforce), ops_per_clock_per_sm(12, 0, P::fp4, geforce));
  }
  EXPECT_EQ(rate(K::mma_f8f6f4, 12, 0, true), 1024.0);    // FP32 accumulate, halved on GeForce
  EXPECT_EQ(rate(K::mma_mxf4nvf4, 12, 0, true), 4096.0);  // FP4, not halved
  EXPECT_EQ(rate(K::mma_f8f6f4, 12, 1, true), 2048.0);    // GB10 has no GeForce halving row
}

TEST(InstructionRates, B200DatasheetFollowsFrom148SmsAtTheImpliedClock) {
  // HGX B200, dense (sparse halved), TFLOP/s: 2250 FP16/BF16, 1100 TF32, 4500 FP8/FP6/INT8,
  // 9000 FP4; 148 SMs at 1.86 GHz. Datasheets round: 3% (TF32's 1100 is 2.5% under).
  const auto tflops = [](K kind) { return 148 * 1.86e9 * rate(kind, 10, 0) / 1e12; };
  EXPECT_NEAR(tflops(K::tcgen05_f16), 2250, 2250 * 0.03);
  EXPECT_NEAR(tflops(K::tcgen05_tf32), 1100, 1100 * 0.03);
  EXPECT_NEAR(tflops(K::tcgen05_f8f6f4), 4500, 4500 * 0.03);
  EXPECT_NEAR(tflops(K::tcgen05_i8), 4500, 4500 * 0.03);
  EXPECT_NEAR(tflops(K::tcgen05_mxf4nvf4), 9000, 9000 * 0.03);
}

TEST(InstructionRates, EveryRowHasASourceAndOneRowPerKindAndChip) {
  std::set<std::pair<int, int>> seen;
  for (const InstructionRate& r : instruction_rates()) {
    EXPECT_FALSE(r.source.empty()) << kind_name(r.kind);
    EXPECT_GT(r.ops, 0) << kind_name(r.kind);
    EXPECT_TRUE(seen.insert({static_cast<int>(r.kind), 100 * r.cc_major + r.cc_minor}).second)
        << kind_name(r.kind) << " on " << r.cc_major << "." << r.cc_minor << " twice";
  }
  std::set<std::string_view> names;
  for (K k :
       {K::tcgen05_f16, K::tcgen05_tf32, K::tcgen05_f8f6f4, K::tcgen05_i8, K::tcgen05_mxf8f6f4,
        K::tcgen05_mxf4nvf4, K::mma_f8f6f4, K::mma_mxf8f6f4, K::mma_mxf4nvf4})
    EXPECT_TRUE(names.insert(kind_name(k)).second) << kind_name(k);
  EXPECT_EQ(kind_name(K::tcgen05_f8f6f4), "tcgen05.mma.kind::f8f6f4");
}

}  // namespace
}  // namespace tcbench
