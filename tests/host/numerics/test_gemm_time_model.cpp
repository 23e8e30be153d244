// The GEMM time model's arithmetic (numerics/gemm_time_model.hpp) on constants chosen so every
// expected number can be worked by hand: a GPU of 100 SMs at 100 TFLOP/s (1 TFLOP/s per SM) and
// 1 TB/s, ceiling 1, no launch cost, one tile unless a test says otherwise. Every compute-bound
// time ends with the last wave's output write: min(C bytes, 100 tiles' worth) / 1 TB/s.
#include "tcbench/numerics/gemm_time_model.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tn = tcbench::numerics;

namespace {

tn::TimeModelGpu gpu() {
  return {100, 100e12, 1e12, 1.0};
}

tn::TimeModelConstants plain() {
  tn::TimeModelConstants c;
  c.fixed_us = 0;
  c.tile_half = 0;  // every tile at full speed
  c.wave_depth = 1;
  c.stream_k = false;
  c.k_step_bytes = 2;             // no K padding for 16-bit data
  c.min_split_k_depth = 1 << 30;  // no split-K
  c.bandwidth_efficiency = 1;
  c.batched_efficiency = 1;
  c.tiles = {{128, 128}};
  return c;
}

tn::GemmTimeProblem fp16(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
  tn::GemmTimeProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  return p;
}

}  // namespace

TEST(GemmTimeModel, AlignmentIsTheLeadingDimensionOfEachOperand) {
  // mk/kn: A leads with K, B with N, C with N (C is row-major).
  auto p = fp16(4096, 33, 4095);
  tn::OperandAlignment a = tn::operand_alignment(p);
  EXPECT_EQ(a.a, 2);         // 4095 x 2 bytes
  EXPECT_EQ(a.b, 2);         // 33 x 2
  EXPECT_EQ(a.c, 2);         // 33 x 2
  p.a_k_contiguous = false;  // km: A leads with M = 4096
  p.b_n_contiguous = false;  // nk: B leads with K = 4095
  a = tn::operand_alignment(p);
  EXPECT_EQ(a.a, 16);
  EXPECT_EQ(a.b, 2);
  EXPECT_EQ(a.c, 2);
  // 4, 8 and 16 bytes, capped at 16.
  EXPECT_EQ(tn::operand_alignment(fp16(64, 66, 64)).b, 4);
  EXPECT_EQ(tn::operand_alignment(fp16(64, 68, 64)).b, 8);
  EXPECT_EQ(tn::operand_alignment(fp16(64, 4096, 64)).b, 16);
  // A batch of packed matrices: each starts m*k elements after the last (33 x 2 x 64 = 4224
  // bytes: 16-byte aligned; 33 x 33 x 2 = 2178: 2).
  EXPECT_EQ(tn::operand_alignment(fp16(33, 64, 64, 2)).a, 16);
  EXPECT_EQ(tn::operand_alignment(fp16(33, 33, 64, 2)).c, 2);
  // The batch count itself is in no leading dimension or stride.
  EXPECT_EQ(tn::operand_alignment(fp16(64, 64, 64, 33)).all(), 16);
  // FP4 rows of an odd count end mid-byte: alignment 1.
  auto f4 = fp16(64, 64, 33);
  f4.a_bits = f4.b_bits = 4;
  EXPECT_EQ(tn::operand_alignment(f4).a, 1);
}

TEST(GemmTimeModel, OneWaveOfTilesTakesOneTileTime) {
  // 1024^3: 8 x 8 = 64 tiles on 100 SMs, under one wave: one tile's time,
  // 2 x 128 x 128 x 1024 / 1e12 = 33.554432 us, then C (2 MiB) written, 2.097152 us; the memory
  // time is 3 x 2 MiB / 1 TB/s = 6.29 us.
  const auto t = tn::predict_gemm_time(fp16(1024, 1024, 1024), gpu(), plain());
  EXPECT_NEAR(t.seconds * 1e6, 33.554432 + 2.097152, 1e-9);
  EXPECT_NEAR(t.memory_seconds * 1e6, 6.291456, 1e-9);
  EXPECT_EQ(t.regime, "compute");
  EXPECT_DOUBLE_EQ(t.waves, 0.64);
  EXPECT_NEAR(t.flops_per_s, 2.0 * 1024 * 1024 * 1024 / 35.651584e-6, 1);
  // The bound knows nothing of tiles: min(100 TFLOP/s, 1 TB/s x 341.3 FLOP/B) = 100 TFLOP/s.
  EXPECT_DOUBLE_EQ(t.bound_flops_per_s, 100e12);
}

TEST(GemmTimeModel, FixedCostAndWaveDepth) {
  auto c = plain();
  c.fixed_us = 5;
  // 1536 x 1280: 12 x 10 = 120 tiles = 1.2 waves. Depth 1: 2 waves; depth 0.5: 1.6. The last
  // wave's output: 100 tiles x 128 x 128 x 2 bytes = 3.2768 us.
  const double tile_us = 33.554432;
  EXPECT_NEAR(tn::predict_gemm_time(fp16(1536, 1280, 1024), gpu(), c).seconds * 1e6,
              5 + 2 * tile_us + 3.2768, 1e-9);
  c.wave_depth = 0.5;
  EXPECT_NEAR(tn::predict_gemm_time(fp16(1536, 1280, 1024), gpu(), c).seconds * 1e6,
              5 + 1.6 * tile_us + 3.2768, 1e-9);
  // Under one wave depth changes nothing: a CTA takes its whole time.
  c.wave_depth = 0;
  EXPECT_NEAR(tn::predict_gemm_time(fp16(128, 128, 1024), gpu(), c).seconds * 1e6,
              5 + tile_us + 0.032768, 1e-9);
  // A GEMM that is mostly launch is labelled so.
  c.fixed_us = 100;
  EXPECT_EQ(tn::predict_gemm_time(fp16(128, 128, 1024), gpu(), c).regime, "launch");
}

TEST(GemmTimeModel, BothOrientationsOfATileAreTried) {
  auto c = plain();
  c.tiles = {{256, 64}};
  // 64 x 25600 x 1024: as 256x64, 400 tiles (4 waves of 33.55 us), 3/4 of each padding; as
  // 64x256, 100 tiles, one wave. (A bandwidth of 100 TB/s keeps the memory time out of it.)
  auto fast = gpu();
  fast.dram_bytes_per_s = 100e12;
  const auto t = tn::predict_gemm_time(fp16(64, 25600, 1024), fast, c);
  EXPECT_EQ(t.tile.m, 64);
  EXPECT_EQ(t.tile.n, 256);
  EXPECT_NEAR(t.seconds * 1e6, 33.554432 + 0.032768, 1e-9);
}

TEST(GemmTimeModel, SplitKWhereTheOutputIsSmallAndKLong) {
  auto c = plain();
  c.min_split_k_depth = 1024;
  c.split_k_fixed_us = 1;
  // 128 x 128 x 16384: one tile, 536.87 us alone; split 16 ways (K 1024 each) 16 CTAs of
  // 33.55 us, plus the reduction: 2 x 16 x 128 x 128 x 4 bytes / 1 TB/s = 2.097 us, plus 1 us.
  const auto t = tn::predict_gemm_time(fp16(128, 128, 16384), gpu(), c);
  EXPECT_EQ(t.split_k, 16);
  EXPECT_NEAR(t.reduce_seconds * 1e6, 2.097152 + 1, 1e-9);
  EXPECT_NEAR(t.seconds * 1e6, 33.554432 + 0.032768 + 3.097152, 1e-9);
  // Not deeper than min_split_k_depth: K = 2048 splits at most twice.
  EXPECT_LE(tn::predict_gemm_time(fp16(128, 128, 2048), gpu(), c).split_k, 2);
}

TEST(GemmTimeModel, StreamKRemovesThePartialWave) {
  auto c = plain();
  c.stream_k = true;
  c.stream_k_overhead = 0.1;
  // 120 tiles = 1.2 waves: data-parallel 2 tile times, stream-K 1.2 x 1.1 = 1.32.
  const auto t = tn::predict_gemm_time(fp16(1536, 1280, 1024), gpu(), c);
  EXPECT_TRUE(t.stream_k);
  EXPECT_NEAR(t.seconds * 1e6, 1.32 * 33.554432 + 3.2768, 1e-9);
  // A full wave: data-parallel wins (no overhead).
  EXPECT_FALSE(tn::predict_gemm_time(fp16(1280, 1280, 1024), gpu(), c).stream_k);
}

TEST(GemmTimeModel, AlignmentSlowsTheKernelAndCeilingScalesIt) {
  auto c = plain();
  c.align_inputs[1] = 0.25;  // 2-byte inputs: a quarter of the rate
  c.align_output[2] = 0.5;   // 4-byte output: half
  // K = 1025 (2-byte A and B rows): 4x the compute time of the aligned 1025 (K 1025 elements).
  const double aligned_us = 2.0 * 128 * 128 * 1025 / 1e12 * 1e6;
  EXPECT_NEAR(tn::predict_gemm_time(fp16(1024, 1024, 1025), gpu(), c).seconds * 1e6,
              4 * aligned_us + 2.097152, 1e-6);
  // N = 1026 (4-byte C and B): the smaller factor of inputs (B: 4 bytes, 1) and output (0.5).
  // Tiles: 8 x 9 = 72 under one wave.
  EXPECT_NEAR(tn::predict_gemm_time(fp16(1024, 1026, 1024), gpu(), c).seconds * 1e6,
              2 * 33.554432 + 2.101248, 1e-9);
  // The ceiling divides the compute time.
  auto g = gpu();
  g.ceiling = 0.8;
  EXPECT_NEAR(tn::predict_gemm_time(fp16(1024, 1024, 1024), g, plain()).seconds * 1e6,
              33.554432 / 0.8 + 2.097152, 1e-9);
}

TEST(GemmTimeModel, MemoryBoundAndBatched) {
  auto c = plain();
  c.bandwidth_efficiency = 0.5;
  // 8192 x 8 x 8192: A alone is 128 MiB; 134.4 MB + tiny / (0.5 TB/s) = 268.7 us, far above the
  // compute time of 64 tiles (8 x 128 x 128... one wave: 2 x 128 x 128 x 8192 / 1e12 = 268.4 us).
  const auto t = tn::predict_gemm_time(fp16(8192, 8, 8192), gpu(), c);
  const double bytes = (8192.0 * 8192 + 8192.0 * 8 + 8192.0 * 8) * 2;
  EXPECT_NEAR(t.memory_seconds, bytes / 0.5e12, 1e-12);
  EXPECT_EQ(t.regime, "memory");
  // A batch of 4 with a batched efficiency of 0.5: 4 x 64 = 256 tiles, 2.56 -> 3 waves, each
  // tile at half the rate; the last wave's output is 100 tiles' worth, 3.2768 us.
  c = plain();
  c.batched_efficiency = 0.5;
  EXPECT_NEAR(tn::predict_gemm_time(fp16(1024, 1024, 1024, 4), gpu(), c).seconds * 1e6,
              3 * 2 * 33.554432 + 3.2768, 1e-9);
}

TEST(GemmTimeModel, KIsPaddedToTheTileStep) {
  auto c = plain();
  c.k_step_bytes = 64;  // 32 FP16 elements per step: K = 1000 runs as 1024
  EXPECT_NEAR(tn::predict_gemm_time(fp16(1024, 1024, 1000), gpu(), c).seconds * 1e6,
              33.554432 + 2.097152, 1e-9);
}

TEST(GemmTimeModel, RefusesNonsense) {
  EXPECT_THROW(tn::predict_gemm_time(fp16(0, 8, 8), gpu(), plain()), std::invalid_argument);
  EXPECT_THROW(tn::predict_gemm_time(fp16(8, 8, 8, 0), gpu(), plain()), std::invalid_argument);
  auto g = gpu();
  g.ceiling = 0;
  EXPECT_THROW(tn::predict_gemm_time(fp16(8, 8, 8), g, plain()), std::invalid_argument);
  auto c = plain();
  c.tiles.clear();
  EXPECT_THROW(tn::predict_gemm_time(fp16(8, 8, 8), gpu(), c), std::invalid_argument);
}

// Tile and wave quantization against NVIDIA's "Matrix Multiplication Background User's Guide",
// section 3.2's wave example: A100, 108 SMs, 256x128 tiles, one CTA per SM, M = 2304, K = 4096,
// N varied ("utilization will be highest when the number of tiles is an integer multiple of 108
// or just below"); section 3.1's tile quantization.
TEST(Quantize, TheGuidesWaveExample) {
  const tn::TimeModelTile t{256, 128};
  // N = 1536: 9 x 12 = 108 tiles, one full wave.
  auto q = tn::quantize(fp16(2304, 1536, 4096), t, 108);
  EXPECT_DOUBLE_EQ(q.tiles, 108);
  EXPECT_DOUBLE_EQ(q.waves, 1);
  EXPECT_DOUBLE_EQ(q.efficiency(), 1);
  // N = 1664: 117 tiles, the second wave 9/108 full.
  q = tn::quantize(fp16(2304, 1664, 4096), t, 108);
  EXPECT_DOUBLE_EQ(q.wave_efficiency, 117.0 / 216.0);
  EXPECT_DOUBLE_EQ(q.tile_efficiency, 1);
  // N = 1537: the same 117 tiles, the 13th tile column 1/128 used.
  q = tn::quantize(fp16(2304, 1537, 4096), t, 108);
  EXPECT_DOUBLE_EQ(q.tile_efficiency, 1537.0 / 1664.0);
  // "Or just below": 1408 gives 99 tiles, 92 % of one wave.
  EXPECT_DOUBLE_EQ(tn::quantize(fp16(2304, 1408, 4096), t, 108).wave_efficiency, 99.0 / 108.0);
  // Over N = 128 .. 4096 in tile steps, full efficiency only at 1536 and 3072.
  for (std::int64_t n = 128; n <= 4096; n += 128)
    EXPECT_EQ(tn::quantize(fp16(2304, n, 4096), t, 108).efficiency() == 1.0, n == 1536 || n == 3072)
        << n;
}

TEST(Quantize, BatchAndSplitKAreGridDimensionsAndHugeProblemsStayFinite) {
  // 4096 x 33 with 128x64 tiles: 32 tiles; 4 K splits fill 128 of 132 SMs.
  const auto q = tn::quantize(fp16(4096, 33, 4096), {128, 64}, 132, 4);
  EXPECT_DOUBLE_EQ(q.tiles, 32);
  EXPECT_DOUBLE_EQ(q.ctas, 128);
  EXPECT_DOUBLE_EQ(q.wave_efficiency, 128.0 / 132.0);
  EXPECT_DOUBLE_EQ(q.tile_efficiency, 33.0 / 64.0);
  EXPECT_DOUBLE_EQ(tn::quantize(fp16(128, 128, 64, 33), {128, 64}, 132).ctas, 66);
  // 2^40 per side: 2^66 tiles, more than an int64 holds.
  const std::int64_t huge = std::int64_t{1} << 40;
  EXPECT_DOUBLE_EQ(tn::quantize(fp16(huge, huge, huge), {128, 128}, 132).tiles, 0x1p66);
  EXPECT_THROW(tn::quantize(fp16(8, 8, 8), {0, 8}, 132), std::invalid_argument);
  EXPECT_THROW(tn::quantize(fp16(8, 8, 8), {8, 8}, 132, 0), std::invalid_argument);
}

TEST(GemmTimeModel, NeverFasterThanTheBoundEvenAtTheSizeLimit) {
  // 2^40 per side: the tile count overflows int64 if counted so; the rate stays at or under the
  // roofline bound, and the prediction says when it is the bound's.
  const std::int64_t huge = std::int64_t{1} << 40;
  const auto t = tn::predict_gemm_time(fp16(huge, huge, huge), gpu(), plain());
  EXPECT_GT(t.seconds, 0);
  EXPECT_LE(t.flops_per_s, t.bound_flops_per_s);
  // A constants set that claims more than the datasheet (a bandwidth efficiency of 100) and small
  // tiles: the model's 8192 x 8 x 8192 takes about 11 us, the bound's memory time 134 us. The
  // bound's is returned.
  auto c = plain();
  c.bandwidth_efficiency = 100;
  c.tiles = {{8, 8}};
  const auto v = tn::predict_gemm_time(fp16(8192, 8, 8192), gpu(), c);
  EXPECT_TRUE(v.at_bound);
  EXPECT_DOUBLE_EQ(v.flops_per_s, v.bound_flops_per_s);
  EXPECT_FALSE(tn::predict_gemm_time(fp16(1024, 1024, 1024), gpu(), plain()).at_bound);
}

TEST(GemmTimeModel, TheCtaLatencyIsPaidOncePerWaveStep) {
  auto c = plain();
  c.cta_latency_us = 2;
  // 120 tiles = 2 waves at depth 1: each wave one tile time plus 2 us.
  EXPECT_NEAR(tn::predict_gemm_time(fp16(1536, 1280, 1024), gpu(), c).seconds * 1e6,
              2 * (33.554432 + 2) + 3.2768, 1e-9);
}

TEST(Alignment, BytesClassAndThePaddingMultiple) {
  using T = tn::Element;
  EXPECT_EQ(tn::alignment_bytes(33, T::fp16), 2);  // 66 bytes
  EXPECT_EQ(tn::alignment_bytes(40, T::fp16), 16);
  EXPECT_EQ(tn::alignment_bytes(64, T::fp16), 128);
  EXPECT_EQ(tn::alignment_bytes(8192, T::fp16), 128);  // capped
  EXPECT_EQ(tn::alignment_bytes(4092, T::fp16), 8);
  EXPECT_EQ(tn::alignment_bytes(4095, T::int8), 1);
  EXPECT_EQ(tn::alignment_bytes(4092, T::tf32), 16);
  EXPECT_THROW(tn::alignment_bytes(0, T::fp16), std::invalid_argument);
  // The guide's Table 1, in elements: 16 bytes' worth.
  EXPECT_EQ(tn::efficient_multiple(T::int8), 16);
  EXPECT_EQ(tn::efficient_multiple(T::fp16), 8);
  EXPECT_EQ(tn::efficient_multiple(T::tf32), 4);
  EXPECT_EQ(tn::efficient_multiple(T::fp64), 2);
}
