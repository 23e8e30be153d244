// mma.sync fragment layouts: each formula covers its tile exactly once (a bijection from
// (lane, element) to (row, col)), and agrees with entries read off the PTX ISA's fragment
// figures for m16n8k8 (tf32), m16n8k16 (f16), m16n8k32 (s8/e4m3) and m16n8k64 (packed e2m1 of
// mma.sync .kind::mxf4nvf4, the layout the PTX ISA gives .u4/.s4 m16n8k64).
#include "tcbench/numerics/mma_fragments.hpp"

#include <gtest/gtest.h>

#include <set>
#include <utility>

namespace tcbench::numerics {
namespace {

using Cell = std::pair<int, int>;

Cell cell(RowCol rc) {
  return {rc.row, rc.col};
}

// elements_per_reg v: A is 16 x 8v with 4 registers, B is 8v x 8 with 2 registers.
class Fragments : public ::testing::TestWithParam<int> {};

TEST_P(Fragments, ABAndCCoverTheirTilesExactlyOnce) {
  const int v = GetParam(), k = 8 * v;
  std::set<Cell> a, b, c;
  for (int lane = 0; lane < 32; ++lane) {
    for (int e = 0; e < 4 * v; ++e) {
      const RowCol rc = mma_a_element(lane, e, v);
      ASSERT_TRUE(rc.row >= 0 && rc.row < 16 && rc.col >= 0 && rc.col < k) << lane << " " << e;
      EXPECT_TRUE(a.insert(cell(rc)).second) << "A (" << rc.row << "," << rc.col << ") twice";
    }
    for (int e = 0; e < 2 * v; ++e) {
      const RowCol rc = mma_b_element(lane, e, v);
      ASSERT_TRUE(rc.row >= 0 && rc.row < k && rc.col >= 0 && rc.col < 8) << lane << " " << e;
      EXPECT_TRUE(b.insert(cell(rc)).second) << "B (" << rc.row << "," << rc.col << ") twice";
    }
    for (int e = 0; e < 4; ++e) EXPECT_TRUE(c.insert(cell(mma_c_element(lane, e))).second);
  }
  EXPECT_EQ(a.size(), static_cast<std::size_t>(16 * k));
  EXPECT_EQ(b.size(), static_cast<std::size_t>(k * 8));
  EXPECT_EQ(c.size(), 128u);
}

INSTANTIATE_TEST_SUITE_P(Tf32F16S8E2m1, Fragments, ::testing::Values(1, 2, 4, 8));

TEST(Fragments, F16M16n8k16MatchesThePtxFigure) {
  // Lane 0: a0,a1 at row 0 cols 0,1; a2,a3 at row 8; a4..a7 the same 8 columns further.
  EXPECT_EQ(cell(mma_a_element(0, 0, 2)), Cell(0, 0));
  EXPECT_EQ(cell(mma_a_element(0, 1, 2)), Cell(0, 1));
  EXPECT_EQ(cell(mma_a_element(0, 2, 2)), Cell(8, 0));
  EXPECT_EQ(cell(mma_a_element(0, 5, 2)), Cell(0, 9));
  EXPECT_EQ(cell(mma_a_element(0, 7, 2)), Cell(8, 9));
  // Lane 5: groupID 1, threadID_in_group 1.
  EXPECT_EQ(cell(mma_a_element(5, 0, 2)), Cell(1, 2));
  EXPECT_EQ(cell(mma_b_element(5, 0, 2)), Cell(2, 1));
  EXPECT_EQ(cell(mma_b_element(5, 3, 2)), Cell(11, 1));
  EXPECT_EQ(cell(mma_c_element(5, 0)), Cell(1, 2));
  EXPECT_EQ(cell(mma_c_element(5, 3)), Cell(9, 3));
  EXPECT_EQ(cell(mma_c_element(31, 3)), Cell(15, 7));
}

TEST(Fragments, Tf32M16n8k8MatchesThePtxFigure) {
  EXPECT_EQ(cell(mma_a_element(0, 1, 1)), Cell(8, 0));
  EXPECT_EQ(cell(mma_a_element(0, 2, 1)), Cell(0, 4));
  EXPECT_EQ(cell(mma_a_element(6, 3, 1)), Cell(9, 6));
  EXPECT_EQ(cell(mma_b_element(6, 0, 1)), Cell(2, 1));
  EXPECT_EQ(cell(mma_b_element(6, 1, 1)), Cell(6, 1));
}

TEST(Fragments, S8M16n8k32MatchesThePtxFigure) {
  EXPECT_EQ(cell(mma_a_element(0, 3, 4)), Cell(0, 3));
  EXPECT_EQ(cell(mma_a_element(0, 4, 4)), Cell(8, 0));
  EXPECT_EQ(cell(mma_a_element(0, 8, 4)), Cell(0, 16));
  EXPECT_EQ(cell(mma_a_element(1, 15, 4)), Cell(8, 23));
  EXPECT_EQ(cell(mma_b_element(1, 0, 4)), Cell(4, 0));
  EXPECT_EQ(cell(mma_b_element(1, 7, 4)), Cell(23, 0));
}

TEST(Fragments, E2m1M16n8k64MatchesThePtxFigure) {
  // Eight elements per register: a0..a7 row groupID, a8..a15 row groupID + 8, a16..a31 the same
  // rows 32 columns further; b0..b7 rows 8 t .. 8 t + 7, b8..b15 32 rows further.
  EXPECT_EQ(cell(mma_a_element(0, 7, 8)), Cell(0, 7));
  EXPECT_EQ(cell(mma_a_element(0, 8, 8)), Cell(8, 0));
  EXPECT_EQ(cell(mma_a_element(0, 16, 8)), Cell(0, 32));
  EXPECT_EQ(cell(mma_a_element(5, 31, 8)), Cell(9, 47));
  EXPECT_EQ(cell(mma_b_element(1, 0, 8)), Cell(8, 0));
  EXPECT_EQ(cell(mma_b_element(1, 8, 8)), Cell(40, 0));
  EXPECT_EQ(cell(mma_b_element(31, 15, 8)), Cell(63, 7));
}

TEST(PeakInputs, SmallIntegersNotAllZero) {
  int nonzero = 0;
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 32; ++c) {
      EXPECT_GE(peak_input_a(r, c), -1);
      EXPECT_LE(peak_input_a(r, c), 1);
      EXPECT_GE(peak_input_b(c, r), -1);
      EXPECT_LE(peak_input_b(c, r), 1);
      nonzero += peak_input_a(r, c) != 0;
    }
  EXPECT_GT(nonzero, 16 * 32 / 2);
}

TEST(PeakInputs, AccumulatorAfterTheLoop) {
  // Growing chains: 2 instructions per trip plus one; alternating (FP16 accumulate): +B, -B
  // cancel, the last +B remains.
  EXPECT_EQ(peak_accumulator(3.0, 0, false), 3.0);
  EXPECT_EQ(peak_accumulator(3.0, 10, false), 63.0);
  EXPECT_EQ(peak_accumulator(-2.0, 1000, true), -2.0);
  // A checked loop stays exact in FP32 (|product| <= k = 32) below 2^18 trips, not at 2^18.
  EXPECT_LE(peak_accumulator(32.0, (1 << 18) - 1, false), 16777216.0);
  EXPECT_GT(peak_accumulator(32.0, 1 << 18, false), 16777216.0);
}

}  // namespace
}  // namespace tcbench::numerics
