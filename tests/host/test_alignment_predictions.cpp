// The "what you should see" tables of docs/concepts/alignment.md, generated from the efficiency
// model (gemm_model, gemm_padding) and tcbench's own peak table (H100 SXM and A100 SXM 80GB),
// so every predicted number on that page is reproducible. The test fails when the page and the
// model disagree and prints the fresh tables; to print them on demand:
//   TCBENCH_PRINT_TABLES=1 build/dev/bin/test_alignment_predictions
// and paste each between its <!-- predicted:NAME --> ... <!-- /predicted:NAME --> markers.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tcbench/numerics/gemm_model.hpp"
#include "tcbench/numerics/gemm_padding.hpp"
#include "tcbench/gemm_lt.hpp"
#include "tcbench/gemm_prediction.hpp"
#include "tcbench/studies/alignment_model.hpp"

namespace tn = tcbench::numerics;
using tcbench::Precision;

#ifndef TCBENCH_SOURCE_DIR
#error "tests/CMakeLists.txt passes the source directory as TCBENCH_SOURCE_DIR"
#endif

namespace {

namespace ts = tcbench::studies;

struct Gpu {
  const char* label;
  tcbench::GpuSpec spec;
};
// The model's reference GPUs (studies/alignment_model.cpp): H100 SXM first, A100 SXM 80GB.
const Gpu kH100{"H100 SXM", ts::model_gpus()[0].spec};
const Gpu kA100{"A100 SXM 80GB", ts::model_gpus()[1].spec};

using Config = ts::AssumedTile;
Config assumed(std::int64_t m, std::int64_t n, const Gpu& g) {
  return ts::assumed_tile(m, n, g.spec);
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
std::string yes(bool b) {
  return b ? "yes" : "no";
}

tn::GemmTimePrediction predict(std::int64_t m, std::int64_t n, std::int64_t k, Precision p,
                               const Gpu& g) {
  return ts::predict_assumed(m, n, k, p, g.spec);
}

// Table 1: FP16, M = K = 4096, N swept: the tile, waves, model efficiency and roofline.
std::string n_table() {
  std::ostringstream o;
  o << "| GPU | N | tile (assumed) x split-K | CTAs | waves | tile eff. | wave eff. | bound | "
       "predicted TFLOP/s | % of peak |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Gpu* g : {&kH100, &kA100}) {
    for (std::int64_t n : {1, 8, 16, 32, 33, 40, 48, 64, 65, 96, 128, 129, 160, 8192, 8193}) {
      const Config c = assumed(4096, n, *g);
      const auto p = predict(4096, n, 4096, Precision::fp16, *g);
      o << "| " << g->label << " | " << n << " | " << c.tile.m << "x" << c.tile.n << " x "
        << c.split_k << " | " << p.efficiency.ctas << " | " << fmt("%.2f", p.efficiency.waves_exact)
        << " | " << fmt("%.3f", p.efficiency.tile_efficiency) << " | "
        << fmt("%.3f", p.efficiency.wave_efficiency) << " | "
        << (p.memory_bound ? "memory" : "compute") << " | " << fmt("%.1f", p.flops_per_s / 1e12)
        << " | " << fmt("%.1f", 100 * p.relative_to_peak) << " |\n";
    }
  }
  return o.str();
}

// Table 2: the headline pairs for every precision on both GPUs, as predicted rates and the
// ratio (TFLOP/s of the odd size over the even one; 1.00 = no loss predicted).
std::string pairs_table() {
  std::ostringstream o;
  o << "| GPU | precision | 32 | 33 | 33/32 | 64 | 65 | 65/64 | 128 | 129 | 129/128 | 8192 | 8193 "
       "| 8193/8192 |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Gpu* g : {&kH100, &kA100}) {
    for (Precision p :
         {Precision::fp16, Precision::bf16, Precision::tf32, Precision::int8, Precision::fp8}) {
      o << "| " << g->label << " | " << tcbench::name(p) << " |";
      if (!(tcbench::gpu_rates(g->spec, p).flops_per_s > 0)) {
        for (int i = 0; i < 12; ++i) o << " - |";
        o << "\n";
        continue;
      }
      for (std::int64_t n : {32, 64, 128, 8192}) {
        const double a = predict(4096, n, 4096, p, *g).flops_per_s / 1e12;
        const double b = predict(4096, n + 1, 4096, p, *g).flops_per_s / 1e12;
        o << " " << fmt("%.1f", a) << " | " << fmt("%.1f", b) << " | " << fmt("%.2f", b / a)
          << " |";
      }
      o << "\n";
    }
  }
  return o.str();
}

// Table 3: M and K around 4096 (FP16, N = 4096, H100): which rule each value meets, and what
// the model predicts. For the column-major NN layout, M is the leading dimension of A and D and
// K that of B; for TN (INT8, FP8) K leads A and B.
std::string mk_table() {
  std::ostringstream o;
  o << "| swept | value | 16-byte fp16 | multiple of 8 / 16 | tiles | model eff. | predicted "
       "TFLOP/s |\n|---|---|---|---|---|---|---|\n";
  for (const char* dim : {"M", "K"}) {
    for (std::int64_t v : {4088, 4092, 4095, 4096, 4097, 4100, 4104}) {
      const bool is_m = dim[0] == 'M';
      const std::int64_t m = is_m ? v : 4096, k = is_m ? 4096 : v;
      const auto p = predict(m, 4096, k, Precision::fp16, kH100);
      const auto a = tn::classify_alignment(v, tn::Element::fp16);
      o << "| " << dim << " | " << v << " | " << yes(a.bytes16) << " | " << yes(a.mult8) << " / "
        << yes(a.mult16) << " | " << p.efficiency.tiles << " | "
        << fmt("%.3f", p.efficiency.predicted_relative_throughput) << " | "
        << fmt("%.1f", p.flops_per_s / 1e12) << " |\n";
    }
  }
  return o.str();
}

// Table 4: running N = 33 as 40 or 48 (FP16, M = K = 4096), copy included.
std::string padding_table() {
  std::ostringstream o;
  o << "| GPU | as | extra FLOPs | pad-copy bytes | copy (us) | GEMM 33 (us) | GEMM padded (us) | "
       "break-even slowdown |\n|---|---|---|---|---|---|---|---|\n";
  for (const Gpu* g : {&kH100, &kA100}) {
    for (std::int64_t to : {40, 48}) {
      const Config c = assumed(4096, 33, *g);
      const auto p = tn::predict_padding(
          {4096, 33, 4096, tn::Element::fp16}, tn::GemmDim::n, to, c.tile, {g->spec.sm_count, 1},
          tcbench::gpu_rates(g->spec, Precision::fp16), 2, c.split_k);
      o << "| " << g->label << " | " << to << " | "
        << fmt("%.1f %%", 100 * p.cost.extra_flop_fraction) << " | "
        << fmt("%.0f", p.cost.copy_bytes) << " | " << fmt("%.2f", p.copy_seconds * 1e6) << " | "
        << fmt("%.2f", p.unpadded.seconds * 1e6) << " | " << fmt("%.2f", p.padded.seconds * 1e6)
        << " | " << fmt("%.3f", p.break_even_slowdown) << " |\n";
    }
  }
  return o.str();
}

// Table 5: strided batches shaped like attention (FP16, sequence 128): S = Q K^T (128 x 128 x d)
// and O = P V (128 x d x 128) for 32, 33, 64 and 65 heads of head dimension d = 64 and 65, with
// the assumed 128x64 tile and no split-K.
struct Batched {
  const char* form;
  std::int64_t m, n, k;
};
constexpr Batched kBatchedShapes[] = {{"S = QK^T", 128, 128, 64},
                                      {"S = QK^T", 128, 128, 65},
                                      {"O = PV", 128, 64, 128},
                                      {"O = PV", 128, 65, 128}};
constexpr std::int64_t kHeadCounts[] = {32, 33, 64, 65};

tn::GemmTimePrediction predict_batched(const Batched& b, std::int64_t heads, const Gpu& g) {
  return ts::predict_assumed(b.m, b.n, b.k, Precision::fp16, g.spec, heads);
}

std::string batched_table() {
  std::ostringstream o;
  o << "| GPU | GEMM | m x n x k | heads | CTAs | waves | tile eff. | wave eff. | bound | "
       "predicted TFLOP/s | predicted us |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Gpu* g : {&kH100, &kA100}) {
    for (const Batched& b : kBatchedShapes) {
      for (std::int64_t h : kHeadCounts) {
        const auto p = predict_batched(b, h, *g);
        o << "| " << g->label << " | " << b.form << " | " << b.m << " x " << b.n << " x " << b.k
          << " | " << h << " | " << p.efficiency.ctas << " | "
          << fmt("%.2f", p.efficiency.waves_exact) << " | "
          << fmt("%.3f", p.efficiency.tile_efficiency) << " | "
          << fmt("%.3f", p.efficiency.wave_efficiency) << " | "
          << (p.memory_bound ? "memory" : "compute") << " | " << fmt("%.1f", p.flops_per_s / 1e12)
          << " | " << fmt("%.2f", p.seconds * 1e6) << " |\n";
      }
    }
  }
  return o.str();
}

std::map<std::string, std::string> tables() {
  return {{"n-sweep", n_table()},
          {"pairs", pairs_table()},
          {"m-k", mk_table()},
          {"padding", padding_table()},
          {"batched", batched_table()}};
}

std::string page() {
  std::ifstream in(std::string(TCBENCH_SOURCE_DIR) + "/docs/concepts/alignment.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string between_markers(const std::string& text, const std::string& name) {
  const std::string open = "<!-- predicted:" + name + " -->\n";
  const std::string close = "<!-- /predicted:" + name + " -->";
  const auto a = text.find(open);
  const auto b = text.find(close);
  if (a == std::string::npos || b == std::string::npos || b < a) return "(markers missing)";
  return text.substr(a + open.size(), b - a - open.size());
}

TEST(AlignmentPredictions, DocsPageCarriesTheModelsTables) {
  const std::string text = page();
  ASSERT_FALSE(text.empty()) << "cannot read docs/concepts/alignment.md";
  for (const auto& [name, table] : tables())
    EXPECT_EQ(between_markers(text, name), table)
        << "docs/concepts/alignment.md table '" << name << "' is stale; the model says:\n"
        << table;
}

TEST(AlignmentPredictions, Print) {
  if (std::getenv("TCBENCH_PRINT_TABLES") == nullptr) GTEST_SKIP() << "set TCBENCH_PRINT_TABLES=1";
  for (const auto& [name, table] : tables())
    std::printf("<!-- predicted:%s -->\n%s<!-- /predicted:%s -->\n\n", name.c_str(), table.c_str(),
                name.c_str());
}

TEST(AlignmentPredictions, HeadlineFacts) {
  // What the page's prose says, asserted: on the aligned path 33 does not lose to 32 per useful
  // FLOP (same tiles, same bytes to within 0.8 %), and the skinny layer is memory bound on both.
  for (const Gpu* g : {&kH100, &kA100}) {
    const auto a = predict(4096, 32, 4096, Precision::fp16, *g);
    const auto b = predict(4096, 33, 4096, Precision::fp16, *g);
    EXPECT_TRUE(a.memory_bound && b.memory_bound) << g->label;
    EXPECT_GT(b.flops_per_s, a.flops_per_s) << g->label;
    // 8193 vs 8192 with 256x128 tiles: one more tile column (65 vs 64), tile efficiency
    // 8193/8320, compute bound.
    const auto c = predict(4096, 8193, 4096, Precision::fp16, *g);
    EXPECT_FALSE(c.memory_bound);
    EXPECT_DOUBLE_EQ(c.efficiency.tile_efficiency, 8193.0 / 8320.0);
  }
  // M = 4097 needs a 33rd row of 256-row tiles: 17 x 32 = 544 tiles instead of 512.
  EXPECT_EQ(predict(4097, 4096, 4096, Precision::fp16, kH100).efficiency.tiles, 17 * 32);
}

TEST(AlignmentPredictions, BatchedHeadlineFacts) {
  // What the page says of the attention-shaped batches: every one is memory bound on both GPUs
  // (about 32 FLOP per byte), so on the aligned path 33 heads cost 33/32 of 32 heads' time and no
  // more: no cliff in the prediction, although the CTAs (1 or 2 per head) leave a wave part-empty.
  for (const Gpu* g : {&kH100, &kA100}) {
    for (const Batched& b : kBatchedShapes) {
      for (std::int64_t h : {32, 64}) {
        const auto even = predict_batched(b, h, *g), odd = predict_batched(b, h + 1, *g);
        EXPECT_TRUE(even.memory_bound && odd.memory_bound) << g->label << " " << b.form;
        EXPECT_NEAR(odd.seconds / even.seconds, static_cast<double>(h + 1) / static_cast<double>(h),
                    1e-12);
        EXPECT_EQ(odd.efficiency.ctas, even.efficiency.ctas + even.efficiency.tiles);  // a head's
      }
    }
  }
  // Head dimension 65 as N (O = PV) half-fills the second 64-column tile of every head.
  const Batched pv65{"O = PV", 128, 65, 128};
  EXPECT_DOUBLE_EQ(predict_batched(pv65, 32, kH100).efficiency.tile_efficiency, 65.0 / 128.0);
  // H100's 132 SMs hold 66 heads of 2 CTAs in one wave: the 67th opens a second one.
  const Batched qk{"S = QK^T", 128, 128, 64};
  EXPECT_DOUBLE_EQ(predict_batched(qk, 66, kH100).efficiency.wave_efficiency, 1.0);
  EXPECT_EQ(predict_batched(qk, 67, kH100).efficiency.waves, 2);
}

}  // namespace

namespace {

TEST(GemmPrediction, RatesAndTypesFromTcbenchsTables) {
  // The datasheet figures of peaks.cpp and 2 x 2619 MHz x 5120 bits / 8 = 3352 GB/s.
  const auto h = tcbench::gpu_rates(kH100.spec, Precision::fp16);
  EXPECT_DOUBLE_EQ(h.flops_per_s, 989.4e12);
  EXPECT_NEAR(h.bytes_per_s, 3352.3e9, 0.1e9);
  EXPECT_DOUBLE_EQ(tcbench::gpu_rates(kA100.spec, Precision::int8).flops_per_s, 624e12);
  EXPECT_EQ(tcbench::gpu_rates(kA100.spec, Precision::fp8).flops_per_s, 0.0);  // no FP8 path
  EXPECT_THROW(tcbench::predict_on(kA100.spec, Precision::fp8, {4096, 32, 4096}, {128, 64}),
               tcbench::InvalidArgument);
  EXPECT_EQ(tn::element_bytes(tcbench::element_of(CUDA_R_32I)), 4);
  EXPECT_EQ(tn::element_bytes(tcbench::element_of(CUDA_R_8F_E4M3)), 1);
  EXPECT_EQ(tcbench::element_of(CUDA_R_16BF), tn::Element::bf16);
  EXPECT_THROW(tcbench::element_of(CUDA_C_32F), tcbench::InvalidArgument);
}

}  // namespace
