// GEMM efficiency model against NVIDIA's "Matrix Multiplication Background User's Guide":
// Sec. 3.2's wave-quantization setup (A100: 108 SMs; 256x128 tiles, one CTA per SM, so a wave
// is 108 tiles; M = 2304, K = 4096, N varied; "utilization will be highest when the number of
// tiles is an integer multiple of 108 or just below"), Sec. 3.1's tile quantization, and
// Table 1's dimension multiples. Tile counts below are derived from those parameters.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>

#include "tcbench/numerics/gemm_model.hpp"

namespace tn = tcbench::numerics;

namespace {

constexpr tn::TileShape kTile256x128{256, 128};
constexpr tn::GpuShape kA100{108, 1};

tn::GemmEfficiency a100(std::int64_t m, std::int64_t n, std::int64_t k) {
  return tn::model_gemm({m, n, k, tn::Element::fp16}, kTile256x128, kA100);
}

TEST(GemmModel, GuideWaveExampleOneFullWave) {
  // M = 2304 is 9 tile rows; N = 1536 is 12 tile columns: 9 x 12 = 108 tiles, one full wave.
  const auto e = a100(2304, 1536, 4096);
  EXPECT_EQ(e.tiles_m, 9);
  EXPECT_EQ(e.tiles_n, 12);
  EXPECT_EQ(e.tiles, 108);
  EXPECT_EQ(e.wave_size, 108);
  EXPECT_EQ(e.waves, 1);
  EXPECT_DOUBLE_EQ(e.waves_exact, 1.0);
  EXPECT_DOUBLE_EQ(e.tile_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(e.wave_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(e.predicted_relative_throughput, 1.0);
}

TEST(GemmModel, GuideWaveExampleOneMoreTileColumnNeedsASecondWave) {
  // N = 1664: 9 x 13 = 117 tiles, 2 waves, the second 9/108 full.
  const auto e = a100(2304, 1664, 4096);
  EXPECT_EQ(e.tiles, 117);
  EXPECT_EQ(e.waves, 2);
  EXPECT_DOUBLE_EQ(e.wave_efficiency, 117.0 / 216.0);
  EXPECT_DOUBLE_EQ(e.tile_efficiency, 1.0);
  // N = 1537: the same 117 tiles, and the 13th tile column is 1/128 used.
  const auto f = a100(2304, 1537, 4096);
  EXPECT_EQ(f.tiles, 117);
  EXPECT_DOUBLE_EQ(f.tile_efficiency, 1537.0 / 1664.0);
  EXPECT_LT(f.predicted_relative_throughput, e.predicted_relative_throughput);
}

TEST(GemmModel, GuideWaveSweepPeaksAtMultiplesOf108Tiles) {
  // Over N = 128 .. 4096 in tile steps, full efficiency only where 9 * N / 128 is a multiple of
  // 108 (N = 1536, 3072), and every such point is a local maximum of the sawtooth.
  for (std::int64_t n = 128; n <= 4096; n += 128) {
    const auto e = a100(2304, n, 4096);
    const bool full = e.tiles % 108 == 0;
    EXPECT_EQ(e.predicted_relative_throughput == 1.0, full) << n;
    EXPECT_EQ(full, n == 1536 || n == 3072) << n;
    if (full && n + 128 <= 4096) {
      EXPECT_LT(a100(2304, n + 128, 4096).predicted_relative_throughput, 1.0);
    }
  }
  // "An integer multiple of 108 or just below": 1408 gives 99 tiles, 92% of one wave.
  EXPECT_NEAR(a100(2304, 1408, 4096).wave_efficiency, 99.0 / 108.0, 1e-12);
}

TEST(GemmModel, SquareOutputsOnA100) {
  // [derived] 1792 x 1792: 7 x 14 = 98 tiles, one wave; 2048 x 1792: 8 x 14 = 112 tiles,
  // two waves, the second 4/108 (~4%) full.
  const auto a = a100(1792, 1792, 4096);
  EXPECT_EQ(a.tiles, 98);
  EXPECT_EQ(a.waves, 1);
  EXPECT_DOUBLE_EQ(a.wave_efficiency, 98.0 / 108.0);
  const auto b = a100(2048, 1792, 4096);
  EXPECT_EQ(b.tiles, 112);
  EXPECT_EQ(b.waves, 2);
  EXPECT_DOUBLE_EQ(b.wave_efficiency, 112.0 / 216.0);
  EXPECT_NEAR(b.waves_exact - 1.0, 0.037, 0.001);
}

TEST(GemmModel, TileQuantization) {
  // One row past a tile boundary launches a whole extra row of tiles: 256 x 256 with 128 x 128
  // tiles is 4 tiles, 257 x 256 is 6, with 257 * 256 / (384 * 256) of their work useful.
  const tn::GpuShape big{1000, 1};
  const auto a = tn::model_gemm({256, 256, 64, tn::Element::fp16}, {128, 128}, big);
  const auto b = tn::model_gemm({257, 256, 64, tn::Element::fp16}, {128, 128}, big);
  EXPECT_EQ(a.tiles, 4);
  EXPECT_EQ(b.tiles, 6);
  EXPECT_DOUBLE_EQ(a.tile_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(b.tile_efficiency, 257.0 / 384.0);
}

TEST(GemmModel, ThirtyTwoVersusThirtyThree) {
  // FP16 batch (N) 32 vs 33 with a 32-wide tile in N: 33 needs two tile columns, about twice
  // the tile work for 3% more useful work, and 33 * 2 bytes = 66 breaks the 16-byte rule.
  const tn::TileShape tile{128, 32};
  const tn::GpuShape h100{132, 1};
  const auto a = tn::model_gemm({4096, 32, 4096, tn::Element::fp16}, tile, h100);
  const auto b = tn::model_gemm({4096, 33, 4096, tn::Element::fp16}, tile, h100);
  EXPECT_EQ(a.tiles_n, 1);
  EXPECT_EQ(b.tiles_n, 2);
  EXPECT_DOUBLE_EQ(a.tile_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(b.tile_efficiency, 33.0 / 64.0);
  EXPECT_TRUE(a.align_n.bytes16);
  EXPECT_TRUE(a.align_n.mult8);
  EXPECT_TRUE(a.align_n.mult16);
  EXPECT_FALSE(a.align_n.mult64);
  EXPECT_FALSE(b.align_n.bytes16);
  EXPECT_FALSE(b.align_n.mult8);
  EXPECT_TRUE(a.align_m.bytes128 && a.align_m.mult128);
  // Weight gradient: the batch is K, and K = 33 breaks the K-contiguous rule the same way.
  EXPECT_FALSE(tn::model_gemm({4096, 4096, 33, tn::Element::fp16}, tile, h100).align_k.bytes16);
}

TEST(Alignment, ClassesPerElementType) {
  using T = tn::Element;
  EXPECT_TRUE(tn::classify_alignment(8, T::fp16).bytes16);
  EXPECT_FALSE(tn::classify_alignment(8, T::int8).bytes16);  // INT8 needs 16 elements
  EXPECT_TRUE(tn::classify_alignment(16, T::int8).bytes16);
  EXPECT_TRUE(tn::classify_alignment(16, T::e4m3).bytes16);
  EXPECT_TRUE(tn::classify_alignment(4, T::tf32).bytes16);
  EXPECT_FALSE(tn::classify_alignment(4, T::fp16).bytes16);
  EXPECT_TRUE(tn::classify_alignment(2, T::fp64).bytes16);
  EXPECT_TRUE(tn::classify_alignment(4096, T::bf16).mult128);
  const auto odd = tn::classify_alignment(4095, T::bf16);
  EXPECT_FALSE(odd.bytes16 || odd.mult8 || odd.mult16 || odd.mult64 || odd.mult128);
  // GPT-2's vocabulary 50257 vs the padded 50304 = 393 * 128.
  EXPECT_FALSE(tn::classify_alignment(50257, T::fp16).bytes16);
  const auto padded = tn::classify_alignment(50304, T::fp16);
  EXPECT_TRUE(padded.bytes16 && padded.bytes128 && padded.mult64 && padded.mult128);
  EXPECT_EQ(tn::element_bytes(T::tf32), 4);
  EXPECT_EQ(tn::element_bytes(T::e5m2), 1);
}

TEST(Alignment, BytesClass) {
  using T = tn::Element;
  EXPECT_EQ(tn::alignment_bytes(33, T::fp16), 2);  // 66 bytes
  EXPECT_EQ(tn::alignment_bytes(32, T::fp16), 64);
  EXPECT_EQ(tn::alignment_bytes(40, T::fp16), 16);  // 80 bytes: the 16-byte rule, no more
  EXPECT_EQ(tn::alignment_bytes(64, T::fp16), 128);
  EXPECT_EQ(tn::alignment_bytes(8192, T::fp16), 128);  // capped
  EXPECT_EQ(tn::alignment_bytes(4092, T::fp16), 8);
  EXPECT_EQ(tn::alignment_bytes(4095, T::int8), 1);
  EXPECT_EQ(tn::alignment_bytes(4092, T::tf32), 16);
  EXPECT_EQ(tn::alignment_bytes(33, T::e4m3), 1);
  // Consistent with the classes: >= 16 exactly when bytes16, 128 exactly when bytes128.
  for (std::int64_t d = 1; d <= 300; ++d) {
    for (T t : {T::fp16, T::int8, T::tf32, T::fp64}) {
      const auto c = tn::classify_alignment(d, t);
      ASSERT_EQ(tn::alignment_bytes(d, t) >= 16, c.bytes16) << d;
      ASSERT_EQ(tn::alignment_bytes(d, t) == 128, c.bytes128) << d;
    }
  }
  EXPECT_THROW(tn::alignment_bytes(0, T::fp16), std::invalid_argument);
}

TEST(Alignment, GuideTable1Multiples) {
  using T = tn::Element;
  EXPECT_EQ(tn::efficient_multiple(T::int8), 16);
  EXPECT_EQ(tn::efficient_multiple(T::fp16), 8);
  EXPECT_EQ(tn::efficient_multiple(T::tf32), 4);
  EXPECT_EQ(tn::efficient_multiple(T::fp64), 2);
  EXPECT_EQ(tn::a100_efficient_multiple(T::int8), 128);
  EXPECT_EQ(tn::a100_efficient_multiple(T::fp16), 64);
  EXPECT_EQ(tn::a100_efficient_multiple(T::tf32), 32);
  EXPECT_EQ(tn::a100_efficient_multiple(T::fp64), 16);
}

TEST(GemmModel, EfficiencyIsOneExactlyWhenEverythingDivides) {
  std::mt19937 rng(123);
  const tn::TileShape tiles[] = {{256, 128}, {128, 128}, {128, 64}, {64, 64}, {128, 256}};
  const int sms[] = {40, 72, 108, 132, 148};
  std::uniform_int_distribution<std::int64_t> dim(1, 6000);
  std::uniform_int_distribution<int> pick(0, 4), ctas(1, 3), aligned(0, 3);
  for (int i = 0; i < 20000; ++i) {
    const tn::TileShape t = tiles[pick(rng)];
    const tn::GpuShape g{sms[pick(rng)], ctas(rng)};
    std::int64_t m = dim(rng), n = dim(rng);
    if (aligned(rng) == 0) {  // make a quarter of the cases exactly tile-aligned
      m = (m / t.m + 1) * t.m;
      n = (n / t.n + 1) * t.n;
    }
    const auto e = tn::model_gemm({m, n, 64, tn::Element::bf16}, t, g);
    ASSERT_GT(e.predicted_relative_throughput, 0.0);
    ASSERT_LE(e.tile_efficiency, 1.0);
    ASSERT_LE(e.wave_efficiency, 1.0);
    ASSERT_LE(e.predicted_relative_throughput, 1.0);
    ASSERT_GE(e.waves * e.wave_size, e.tiles);
    ASSERT_LT((e.waves - 1) * e.wave_size, e.tiles);
    const bool divides = m % t.m == 0 && n % t.n == 0 && e.tiles % e.wave_size == 0;
    ASSERT_EQ(e.predicted_relative_throughput == 1.0, divides) << m << " " << n;
  }
  // A constructed case that fills whole waves: 132 SMs x 2 CTAs = 264 = 12 x 22 tiles.
  const auto full =
      tn::model_gemm({12 * 128, 22 * 128, 64, tn::Element::fp16}, {128, 128}, {132, 2});
  EXPECT_EQ(full.tiles, 264);
  EXPECT_EQ(full.waves, 1);
  EXPECT_DOUBLE_EQ(full.predicted_relative_throughput, 1.0);
}

// Strided batches (issue 25: attention-shaped batches of 32/33 and 64/65 heads): the batch is a
// third grid dimension, CTAs = tiles x batch x splits. Hand-computed cases on H100 (132 SMs) and
// A100 (108 SMs), one CTA per SM, 128 x 64 tiles, heads of 128 x 128 x 64 (2 tiles each).
TEST(GemmModel, BatchIsAThirdGridDimension) {
  const tn::TileShape t{128, 64};
  const auto heads = [&](std::int64_t batch, int sms, int split = 1) {
    return tn::model_gemm({128, 128, 64, tn::Element::fp16, batch}, t, {sms, 1}, split);
  };
  const auto h32 = heads(32, 132);
  EXPECT_EQ(h32.tiles, 2);  // per matrix
  EXPECT_EQ(h32.batch, 32);
  EXPECT_EQ(h32.ctas, 64);
  EXPECT_EQ(h32.waves, 1);
  EXPECT_DOUBLE_EQ(h32.waves_exact, 64.0 / 132.0);
  EXPECT_DOUBLE_EQ(h32.wave_efficiency, 64.0 / 132.0);
  EXPECT_DOUBLE_EQ(h32.tile_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(heads(33, 132).wave_efficiency, 0.5);            // 66 of 132
  EXPECT_DOUBLE_EQ(heads(66, 132).wave_efficiency, 1.0);            // 132: one full wave
  EXPECT_EQ(heads(67, 132).waves, 2);                               // 134 CTAs
  EXPECT_DOUBLE_EQ(heads(67, 132).wave_efficiency, 134.0 / 264.0);  // the cliff after 66
  EXPECT_DOUBLE_EQ(heads(33, 132, 2).wave_efficiency, 1.0);         // 2 x 33 x 2 = 132
  EXPECT_DOUBLE_EQ(heads(54, 108).wave_efficiency, 1.0);            // A100: 108 of 108
  EXPECT_DOUBLE_EQ(heads(55, 108).wave_efficiency, 110.0 / 216.0);  // and 110 of 216
  EXPECT_DOUBLE_EQ(heads(65, 108).wave_efficiency, 130.0 / 216.0);
  // The batch does not change a matrix's tile quantization: head dim 65 as N is 65 of 128
  // columns of its two tiles, whatever the batch.
  const auto n65 = tn::model_gemm({128, 65, 128, tn::Element::fp16, 33}, t, {132, 1});
  EXPECT_DOUBLE_EQ(n65.tile_efficiency, 65.0 / 128.0);
  EXPECT_EQ(n65.ctas, 66);
  EXPECT_THROW(heads(0, 132), std::invalid_argument);
}

// Property: when M is a multiple of the tile's rows, a batch of b matrices launches exactly the
// CTAs of one matrix with b times the rows (the tiles stack), so the two have one wave count.
TEST(GemmModel, ABatchIsTheStackedMatrixWhenTheTilesDivide) {
  std::mt19937 rng(25);
  std::uniform_int_distribution<std::int64_t> tiles_m(1, 8), dim(1, 700), batch(1, 80);
  for (int i = 0; i < 500; ++i) {
    const std::int64_t m = 128 * tiles_m(rng), n = dim(rng), k = dim(rng), b = batch(rng);
    const auto stacked = tn::model_gemm({m * b, n, k}, {128, 64}, {132, 1});
    const auto batched = tn::model_gemm({m, n, k, tn::Element::fp16, b}, {128, 64}, {132, 1});
    EXPECT_EQ(batched.ctas, stacked.ctas) << m << " " << n << " " << b;
    EXPECT_DOUBLE_EQ(batched.waves_exact, stacked.waves_exact);
    EXPECT_DOUBLE_EQ(batched.predicted_relative_throughput, stacked.predicted_relative_throughput);
  }
}

TEST(GemmModel, ABatchMovesBatchTimesTheBytesAndFlops) {
  // One head: A 128 x 64 and B 64 x 128 in FP16 (16384 B each), D 128 x 128 in FP16 (32768 B).
  const tn::GemmShape one{128, 128, 64, tn::Element::fp16};
  const tn::GemmShape heads{128, 128, 64, tn::Element::fp16, 32};
  EXPECT_DOUBLE_EQ(tn::gemm_min_bytes(one, 2), 65536.0);
  EXPECT_DOUBLE_EQ(tn::gemm_min_bytes(heads, 2), 32 * 65536.0);
  const tn::GpuRates h100{989.4e12, 3352.3e9};
  const auto p = tn::predict_gemm(heads, {128, 64}, {132, 1}, h100, 2);
  EXPECT_TRUE(p.memory_bound);  // 32 FLOP/B, far below H100's ~295
  EXPECT_DOUBLE_EQ(p.memory_seconds, 32 * 65536.0 / 3352.3e9);
  EXPECT_DOUBLE_EQ(p.flops_per_s, 32 * 2.0 * 128 * 128 * 64 / p.seconds);
  EXPECT_DOUBLE_EQ(p.compute_seconds, 32 * 2.0 * 128 * 128 * 64 / (989.4e12 * (64.0 / 132.0)));
}

TEST(GemmModel, RejectsNonPositiveInputs) {
  EXPECT_THROW(tn::model_gemm({0, 1, 1}, {}, {108, 1}), std::invalid_argument);
  EXPECT_THROW(tn::model_gemm({1, 1, -1}, {}, {108, 1}), std::invalid_argument);
  EXPECT_THROW(tn::model_gemm({1, 1, 1}, {0, 128}, {108, 1}), std::invalid_argument);
  EXPECT_THROW(tn::model_gemm({1, 1, 1}, {}, {0, 1}), std::invalid_argument);
  EXPECT_THROW(tn::model_gemm({1, 1, 1}, {}, {108, 0}), std::invalid_argument);
}

}  // namespace

namespace {

TEST(GemmModel, GuideArithmeticIntensityExamples) {
  // The guide's Sec. 2 arithmetic intensity for FP16 (2MNK FLOP over 2(MK + NK + MN) bytes):
  // 8192 x 128 x 8192 -> 124.1 FLOP/B (below V100's 138.9 ops:byte, memory limited), and
  // 8192^3 -> 2730.7 FLOP/B. gemm_min_bytes counts exactly those bytes.
  const tn::GemmShape skinny{8192, 128, 8192, tn::Element::fp16};
  EXPECT_NEAR(2.0 * 8192 * 128 * 8192 / tn::gemm_min_bytes(skinny, 2), 124.1, 0.05);
  const tn::GemmShape cube{8192, 8192, 8192, tn::Element::fp16};
  EXPECT_NEAR(2.0 * 8192 * 8192 * 8192 / tn::gemm_min_bytes(cube, 2), 2730.7, 0.05);
  // So on a GPU whose ops:byte ratio is 138.9 (V100: 125 TFLOP/s over 900 GB/s) the first is
  // memory bound and the second compute bound. (64 SMs, so that 128x128 tiles fill whole waves
  // in both shapes and only the roofline decides.)
  const tn::GpuRates v100{125e12, 0.9e12};
  EXPECT_NEAR(v100.flops_per_s / v100.bytes_per_s, 138.9, 0.05);
  const auto a = tn::predict_gemm(skinny, {128, 128}, {64, 1}, v100, 2);
  EXPECT_DOUBLE_EQ(a.efficiency.predicted_relative_throughput, 1.0);
  EXPECT_TRUE(a.memory_bound);
  EXPECT_NEAR(a.relative_to_peak, 124.12 / 138.89, 1e-3);
  EXPECT_FALSE(tn::predict_gemm(cube, {128, 128}, {64, 1}, v100, 2).memory_bound);
}

}  // namespace
