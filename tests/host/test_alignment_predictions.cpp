// What docs/concepts/alignment.md says the model predicts for the GEMMs bench_alignment runs, on
// tcbench's reference GPUs (H100 SXM and A100 SXM 80GB): the GEMM time model (predict_time)
// through the layout tcbench runs (query_of), and the quantization bound the benchmark evaluates
// with cuBLASLt's tile (quantization_bound). The page's tables themselves are written by
// tools/model/alignment_tables.py (through `tcbench_model`) and checked by
// tests/scripts/test_alignment_tables.py.
#include <gtest/gtest.h>

#include <cstdint>

#include "tcbench/error.hpp"
#include "tcbench/gemm_prediction.hpp"
#include "tcbench/studies/alignment_model.hpp"

namespace tn = tcbench::numerics;
using tcbench::Precision;

namespace {

namespace ts = tcbench::studies;

const tcbench::GpuSpec& h100() {
  return ts::model_gpus()[0].spec;
}
const tcbench::GpuSpec& a100() {
  return ts::model_gpus()[1].spec;
}

double rate(const tcbench::GpuSpec& g, Precision p, std::int64_t m, std::int64_t n, std::int64_t k,
            std::int64_t batch = 1, bool nt = false) {
  const auto pred = ts::predict_as_run(g, p, m, n, k, batch, nt);
  EXPECT_TRUE(pred.not_covered.empty()) << pred.not_covered;
  return pred.time.flops_per_s;
}

TEST(AlignmentPredictions, TcbenchsColumnMajorGemmsAsRowMajorQueries) {
  // NN (fp16): D^T = B^T A^T, B K-contiguous first, A M-contiguous second, M and N swapped.
  tcbench::GemmSpec nn = tcbench::GemmSpec::for_precision(Precision::fp16, 4096, 33, 4095);
  auto q = tcbench::query_of(nn, Precision::fp16);
  EXPECT_EQ(q.m, 33);
  EXPECT_EQ(q.n, 4096);
  EXPECT_EQ(q.k, 4095);
  EXPECT_TRUE(q.a_k_contiguous);
  EXPECT_TRUE(q.b_n_contiguous);
  // TN (int8, fp8): A is K-contiguous, so the second operand is too.
  q = tcbench::query_of(tcbench::GemmSpec::for_precision(Precision::fp8, 64, 32, 128),
                        Precision::fp8);
  EXPECT_TRUE(q.a_k_contiguous);
  EXPECT_FALSE(q.b_n_contiguous);
  EXPECT_EQ(q.c_type, CUDA_R_16BF);
  // layout:nt (B stored N-contiguous): the first operand leads with N.
  nn.problem.trans_b = true;
  nn.batch_count = 33;
  q = tcbench::query_of(nn, Precision::fp16);
  EXPECT_FALSE(q.a_k_contiguous);
  EXPECT_EQ(q.batch, 33);
  // The leading dimensions that result are the cuBLAS ones: lda = m, ldb = k, ldd = m for NN.
  const auto al = ts::predict_as_run(h100(), Precision::fp16, 4096, 33, 4095).time.alignment;
  EXPECT_EQ(al.a, 2);   // B: ldb = K = 4095
  EXPECT_EQ(al.b, 16);  // A: lda = M = 4096
  EXPECT_EQ(al.c, 16);  // D: ldd = M = 4096
}

TEST(AlignmentPredictions, HeadlineFacts) {
  for (const tcbench::GpuSpec* g : {&h100(), &a100()}) {
    // N = 33 in NN is no leading dimension: per useful FLOP it costs at most its tile padding,
    // and the skinny layer is memory bound, so 33 is not predicted slower than 32.
    EXPECT_GE(rate(*g, Precision::fp16, 4096, 33, 4096), rate(*g, Precision::fp16, 4096, 32, 4096))
        << g->name;
    EXPECT_EQ(ts::predict_as_run(*g, Precision::fp16, 4096, 33, 4096).time.regime, "memory");
    // With B N-contiguous (layout:nt) N leads B: 33 is 2-byte aligned; on the A100 (whose
    // misaligned kernels the fit saw) that is predicted slower per FLOP, elsewhere not faster.
    EXPECT_LT(
        rate(*g, Precision::fp16, 4096, 33, 4096, 1, true),
        (g == &a100() ? 0.9 : 1.001) * rate(*g, Precision::fp16, 4096, 32, 4096, 1, true) * 33 / 32)
        << g->name;
    // K or M odd breaks a leading dimension in NN: slower than 4096, several times on the A100
    // (its fitted 2-byte factor), less on the H100 (Hopper's: one published row).
    const double base = rate(*g, Precision::fp16, 4096, 4096, 4096);
    const double cliff = g == &a100() ? 2.0 : 1.2;
    EXPECT_GT(base / rate(*g, Precision::fp16, 4096, 4096, 4095), cliff) << g->name;
    EXPECT_GT(base / rate(*g, Precision::fp16, 4095, 4096, 4096), cliff) << g->name;
    // 4094 (4-byte rows) costs no more than 4095 (2-byte), give or take the K padding.
    EXPECT_GE(rate(*g, Precision::fp16, 4096, 4096, 4094),
              0.999 * rate(*g, Precision::fp16, 4096, 4096, 4095));
    // N = 8193 is no leading dimension in NN either: within a few percent of 8192.
    EXPECT_GT(rate(*g, Precision::fp16, 4096, 8193, 4096),
              0.95 * rate(*g, Precision::fp16, 4096, 8192, 4096));
  }
  // FP8 with K = 4095: in TN both A and B lead with K, 4095 bytes: cuBLASLt refuses it, and the
  // model says so instead of predicting.
  const auto fp8 = ts::predict_as_run(h100(), Precision::fp8, 4096, 4096, 4095);
  EXPECT_NE(fp8.not_covered.find("refuses fp8"), std::string::npos);
}

TEST(AlignmentPredictions, BatchedHeadsHaveNoCliffOnTheAlignedPath) {
  // 33 attention heads of 128 x 128 x 64 against 32: the batch is in no leading dimension or
  // stride (128 x 64 x 2 bytes per matrix), so per head it costs what 32 heads cost, give or
  // take the last wave.
  for (const tcbench::GpuSpec* g : {&h100(), &a100()}) {
    const double r32 = rate(*g, Precision::fp16, 128, 128, 64, 32);
    const double r33 = rate(*g, Precision::fp16, 128, 128, 64, 33);
    EXPECT_GT(r33, 0.9 * r32) << g->name;
    EXPECT_EQ(ts::predict_as_run(*g, Precision::fp16, 128, 128, 64, 33).time.alignment.all(), 16);
    // Head dimension 65 as K of S = Q K^T is B's leading dimension: 2-byte, slower per FLOP.
    EXPECT_LT(rate(*g, Precision::fp16, 128, 128, 65, 32), r32);
  }
}

TEST(GemmPrediction, RatesAndTypesFromTcbenchsTables) {
  // The datasheet figures of peaks.cpp and 2 x 2619 MHz x 5120 bits / 8 = 3352 GB/s.
  const auto h = tcbench::gpu_rates(h100(), Precision::fp16);
  EXPECT_DOUBLE_EQ(h.flops_per_s, 989.4e12);
  EXPECT_NEAR(h.bytes_per_s, 3352.3e9, 0.1e9);
  EXPECT_DOUBLE_EQ(tcbench::gpu_rates(a100(), Precision::int8).flops_per_s, 624e12);
  EXPECT_EQ(tcbench::gpu_rates(a100(), Precision::fp8).flops_per_s, 0.0);  // no FP8 path
  tcbench::GemmQuery fp8;
  fp8.precision = Precision::fp8;
  fp8.m = 4096;
  fp8.n = 32;
  fp8.k = 4096;
  EXPECT_THROW(tcbench::quantization_bound(a100(), fp8, {128, 64}, 1), tcbench::InvalidArgument);
  EXPECT_EQ(tn::element_bytes(tcbench::element_of(CUDA_R_32I)), 4);
  EXPECT_EQ(tn::element_bytes(tcbench::element_of(CUDA_R_8F_E4M3)), 1);
  EXPECT_EQ(tcbench::element_of(CUDA_R_16BF), tn::Element::bf16);
  EXPECT_THROW(tcbench::element_of(CUDA_C_32F), tcbench::InvalidArgument);
  // The quantization bound the benchmark evaluates with cuBLASLt's tile (model_tflops): the
  // guide's A100 example, N = 1536 of M = 2304, K = 4096 with 256x128 tiles, is one full wave.
  tcbench::GemmQuery g;
  g.m = 2304;
  g.n = 1536;
  g.k = 4096;
  const auto q = tcbench::quantization_bound(a100(), g, {256, 128}, 1);
  EXPECT_DOUBLE_EQ(q.quantization.ctas, 108);
  EXPECT_DOUBLE_EQ(q.quantization.wave_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(q.flops_per_s, 312e12);  // one full wave of full tiles: the datasheet rate
}

}  // namespace
