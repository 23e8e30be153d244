// Padding arithmetic and the roofline prediction, against numbers worked by hand for the
// transformer-sized layer the alignment benchmark sweeps (M = K = 4096, FP16, N = 33 run as 40
// or 48) on an H100 SXM's datasheet rates (989.4 TFLOP/s dense FP16, 3.35 TB/s).
#include <gtest/gtest.h>

#include <stdexcept>

#include "tcbench/numerics/gemm_padding.hpp"

namespace tn = tcbench::numerics;

namespace {

constexpr tn::GpuRates kH100{989.4e12, 3.35e12};
constexpr tn::GpuShape kH100Sms{132, 1};
constexpr tn::TileShape kTile128x64{128, 64};
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

TEST(Roofline, SkinnyLayerIsMemoryBound) {
  // 4096 x 33 x 4096 FP16 moves at least (4096*4096 + 4096*33) * 2 + 4096*33 * 2 = 34,095,104
  // bytes: 10.18 us at 3.35 TB/s. Compute with 128x64 tiles: 32 tiles on 132 SMs, tile
  // efficiency 33/64, wave efficiency 32/132: 1.107e9 / (989.4e12 * 0.125) = 8.95 us.
  const auto p = tn::predict_gemm(kLayer33, kTile128x64, kH100Sms, kH100, 2);
  EXPECT_DOUBLE_EQ(tn::gemm_min_bytes(kLayer33, 2), 34095104.0);
  EXPECT_NEAR(p.memory_seconds, 10.1776e-6, 1e-10);
  EXPECT_NEAR(p.compute_seconds, 8.9533e-6, 1e-10);
  EXPECT_TRUE(p.memory_bound);
  EXPECT_DOUBLE_EQ(p.seconds, p.memory_seconds);
  EXPECT_NEAR(p.flops_per_s, 1107296256.0 / 10.1776e-6, 1e-4 * p.flops_per_s);
  // 4096^3 is compute bound with every tile full; 32 x 64 = 2048 tiles = 15.5 waves of 132.
  const auto big =
      tn::predict_gemm({4096, 4096, 4096, tn::Element::fp16}, kTile128x64, kH100Sms, kH100, 2);
  EXPECT_FALSE(big.memory_bound);
  EXPECT_DOUBLE_EQ(big.efficiency.wave_efficiency, 2048.0 / (16.0 * 132.0));
  EXPECT_DOUBLE_EQ(big.relative_to_peak, 2048.0 / (16.0 * 132.0));
  EXPECT_THROW(tn::predict_gemm(kLayer33, kTile128x64, kH100Sms, {0, 1}, 2), std::invalid_argument);
}

TEST(Roofline, SplitKFillsTheMachine) {
  // Four K splits of the 32 tiles give 128 CTAs: wave efficiency 128/132.
  const auto e = tn::model_gemm(kLayer33, kTile128x64, kH100Sms, 4);
  EXPECT_EQ(e.tiles, 32);
  EXPECT_EQ(e.ctas, 128);
  EXPECT_EQ(e.waves, 1);
  EXPECT_DOUBLE_EQ(e.waves_exact, 128.0 / 132.0);
  EXPECT_DOUBLE_EQ(e.wave_efficiency, 128.0 / 132.0);
  EXPECT_THROW(tn::model_gemm(kLayer33, kTile128x64, kH100Sms, 0), std::invalid_argument);
}

TEST(Padding, BreakEvenForTheSkinnyLayer) {
  // All three shapes are memory bound, so the break-even is a ratio of bytes:
  // (34,209,792 [N=40] + 598,016 [copy]) / 34,095,104 [N=33] = 1.0209. Padding to 40 wins only
  // if the unaligned N=33 kernel is more than 2.1 % slower than the aligned path would be.
  const auto p = tn::predict_padding(kLayer33, tn::GemmDim::n, 40, kTile128x64, kH100Sms, kH100, 2);
  EXPECT_TRUE(p.unpadded.memory_bound);
  EXPECT_TRUE(p.padded.memory_bound);
  EXPECT_NEAR(p.copy_seconds, 598016.0 / 3.35e12, 1e-15);
  EXPECT_NEAR(p.break_even_slowdown, (34209792.0 + 598016.0) / 34095104.0, 1e-12);
  // As 48 costs more bytes still: (34,340,864 + 663,552) / 34,095,104.
  const auto q = tn::predict_padding(kLayer33, tn::GemmDim::n, 48, kTile128x64, kH100Sms, kH100, 2);
  EXPECT_NEAR(q.break_even_slowdown, (34340864.0 + 663552.0) / 34095104.0, 1e-12);
  EXPECT_GT(q.break_even_slowdown, p.break_even_slowdown);
}

TEST(Padding, BreakEvenWhenComputeBound) {
  // 4096 x 4095 x 4096 with 128x128 tiles on 132 SMs: 32 x 32 = 1024 tiles either way, so
  // padding N to 4096 costs no GEMM time in the model (the last tile column already computes
  // the zero column), only the copy of B: read 4096*4095*2, write 4096*4096*2 bytes.
  const tn::GemmShape s{4096, 4095, 4096, tn::Element::fp16};
  const auto p = tn::predict_padding(s, tn::GemmDim::n, 4096, {128, 128}, kH100Sms, kH100, 2);
  EXPECT_FALSE(p.unpadded.memory_bound);
  EXPECT_DOUBLE_EQ(p.padded.seconds, p.unpadded.seconds);
  const double copy = (4096.0 * 4095 * 2 + 4096.0 * 4096 * 2) / 3.35e12;
  EXPECT_NEAR(p.copy_seconds, copy, 1e-15);
  EXPECT_NEAR(p.break_even_slowdown, 1.0 + copy / p.unpadded.seconds, 1e-12);
}

}  // namespace
