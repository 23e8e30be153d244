// Padding arithmetic against numbers worked by hand for the transformer-sized layer the
// alignment benchmark sweeps (M = K = 4096, FP16, N = 33 run as 40 or 48).
#include <gtest/gtest.h>

#include <stdexcept>

#include "tcbench/numerics/gemm_padding.hpp"

namespace tn = tcbench::numerics;

namespace {

constexpr tn::GemmShape kLayer33{4096, 33, 4096, tn::Element::fp16};

TEST(Padding, RoundUp) {
  EXPECT_EQ(tn::round_up(33, 8), 40);
  EXPECT_EQ(tn::round_up(33, 16), 48);
  EXPECT_EQ(tn::round_up(32, 8), 32);
  EXPECT_EQ(tn::round_up(1, 16), 16);
  EXPECT_EQ(tn::round_up(8193, 128), 8320);
  EXPECT_THROW(tn::round_up(0, 8), std::invalid_argument);
  EXPECT_THROW(tn::round_up(33, 0), std::invalid_argument);
}

TEST(Padding, ThirtyThreeAsFortyAndFortyEight) {
  // Useful work 2 * 4096 * 33 * 4096 = 1,107,296,256 FLOP. As 40: 1,342,177,280 (7/33 = 21.2 %
  // extra); as 48: 1,610,612,736 (15/33 = 45.5 % extra).
  const auto p40 = tn::padding_cost(kLayer33, tn::GemmDim::n, 40);
  EXPECT_EQ(p40.padded.n, 40);
  EXPECT_EQ(p40.padded.m, 4096);
  EXPECT_DOUBLE_EQ(p40.useful_flops, 1107296256.0);
  EXPECT_DOUBLE_EQ(p40.padded_flops, 1342177280.0);
  EXPECT_DOUBLE_EQ(p40.extra_flops, 234881024.0);
  EXPECT_DOUBLE_EQ(p40.extra_flop_fraction, 7.0 / 33.0);
  // Padding N copies B only (K x N): read 4096 * 33 * 2 = 270,336 B, write 4096 * 40 * 2.
  EXPECT_DOUBLE_EQ(p40.copy_read_bytes, 270336.0);
  EXPECT_DOUBLE_EQ(p40.copy_write_bytes, 327680.0);
  EXPECT_DOUBLE_EQ(p40.copy_bytes, 598016.0);
  const auto p48 = tn::padding_cost(kLayer33, tn::GemmDim::n, 48);
  EXPECT_DOUBLE_EQ(p48.padded_flops, 1610612736.0);
  EXPECT_DOUBLE_EQ(p48.extra_flop_fraction, 15.0 / 33.0);
  EXPECT_DOUBLE_EQ(p48.copy_bytes, 270336.0 + 393216.0);
}

TEST(Padding, WhichOperandsACopyTouches) {
  // K pads both A (M x K) and B (K x N); M pads A only. INT8: one byte per element.
  const tn::GemmShape s{100, 20, 30, tn::Element::int8};
  const auto k = tn::padding_cost(s, tn::GemmDim::k, 32);
  EXPECT_DOUBLE_EQ(k.copy_read_bytes, 100.0 * 30 + 30.0 * 20);
  EXPECT_DOUBLE_EQ(k.copy_write_bytes, 100.0 * 32 + 32.0 * 20);
  const auto m = tn::padding_cost(s, tn::GemmDim::m, 112);
  EXPECT_DOUBLE_EQ(m.copy_read_bytes, 100.0 * 30);
  EXPECT_DOUBLE_EQ(m.copy_write_bytes, 112.0 * 30);
  EXPECT_DOUBLE_EQ(m.extra_flop_fraction, 12.0 / 100.0);
  // No padding: nothing extra, but the copy is still a copy.
  EXPECT_DOUBLE_EQ(tn::padding_cost(s, tn::GemmDim::n, 20).extra_flops, 0.0);
  EXPECT_THROW(tn::padding_cost(s, tn::GemmDim::n, 19), std::invalid_argument);
  EXPECT_THROW(tn::padding_cost({0, 1, 1}, tn::GemmDim::n, 8), std::invalid_argument);
}

}  // namespace
