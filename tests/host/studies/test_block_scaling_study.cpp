// The block-scaling study (studies/block_scaling_study.hpp): what each granularity buys in accuracy
// and costs in bytes on activations with outlier channels, weights, gradients and their GEMM.
// The assertions are the page's claims (docs/concepts/fp8-scaling.md, "Block scaling"): finer
// scales isolate outliers, fewer element bits cost error in a fixed order, the scale bytes are
// what the formats define. DocsPageCarriesTheTable holds the page's table to the study
// (doc_tables.hpp: the markers, and how to print the fresh table).
#include "tcbench/studies/block_scaling_study.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "../doc_tables.hpp"

namespace ts = tcbench::studies;

namespace {

const std::map<std::string, ts::ScalingRow>& rows() {
  static const std::map<std::string, ts::ScalingRow> by_name = [] {
    std::map<std::string, ts::ScalingRow> m;
    for (const ts::ScalingRow& r : ts::block_scaling_study()) m[std::string(r.option.name)] = r;
    return m;
  }();
  return by_name;
}
const ts::ScalingRow& row(const std::string& name) {
  return rows().at(name);
}

TEST(BlockScalingStudy, FinerScalesIsolateOutlierChannels) {
  // Per tensor, the 100x outlier channels set the one scale; 1x128 tiles give each its own tile
  // (and map it exactly onto the max). Per-token rows all hold the outlier channels: row-wise
  // scaling cannot isolate them.
  EXPECT_LT(row("fp8_1x128").activations.rel, 0.5 * row("fp8_tensor").activations.rel);
  EXPECT_GT(row("fp8_rowwise").activations.rel, 2.0 * row("fp8_1x128").activations.rel);
  EXPECT_LT(row("fp8_1x128").gemm.rel, row("fp8_tensor").gemm.rel);
}

TEST(BlockScalingStudy, TheOcpRuleClampsTheTopOfABlockTheRoundUpRuleDoesNot) {
  // floor(log2(amax)) - emax maps amax into [2^emax, 2^(emax+1)), above E4M3's 1.75 * 2^8 (and
  // E2M1's 1.5 * 2^2) for part of the blocks: those clamp. Rounding the scale up never clamps.
  EXPECT_GT(row("mxfp8").activations.worst, 2.0 * row("fp8_tensor").activations.worst);
  EXPECT_LT(row("mxfp8_round_up").gemm.rel, row("mxfp8").gemm.rel);
  EXPECT_LT(row("mxfp4_round_up").gemm.rel, row("mxfp4").gemm.rel);
}

TEST(BlockScalingStudy, ElementBitsCostErrorInOrder) {
  EXPECT_LT(row("bf16").gemm.rel, row("fp8_1x128").gemm.rel);
  EXPECT_LT(row("mxfp6_e2m3").gemm.rel, row("mxfp4").gemm.rel);
  // E2M3 keeps one more mantissa bit than E3M2: smaller error on data inside its range.
  EXPECT_LT(row("mxfp6_e2m3").weights.rel, row("mxfp6_e3m2").weights.rel);
  // NVFP4's finer, non-power-of-two scale beats MXFP4's.
  EXPECT_LT(row("nvfp4").gemm.rel, row("mxfp4_round_up").gemm.rel);
}

TEST(BlockScalingStudy, DelayedScalingSaturatesOnAStaleAmax) {
  // Last step's outliers were not this step's: the stale amax clips this step's largest values.
  EXPECT_GT(row("fp8_tensor_delayed").activations.worst, 2.0 * row("fp8_tensor").activations.worst);
}

TEST(BlockScalingStudy, BytesPerElementIncludeTheScales) {
  EXPECT_DOUBLE_EQ(row("bf16").bytes_per_element, 2.0);
  EXPECT_NEAR(row("fp8_tensor").bytes_per_element, 1.0, 1e-5);
  EXPECT_DOUBLE_EQ(row("fp8_1x128").bytes_per_element, 1.0 + 4.0 / 128);
  EXPECT_DOUBLE_EQ(row("mxfp8").bytes_per_element, 1.0 + 1.0 / 32);
  EXPECT_DOUBLE_EQ(row("mxfp6_e2m3").bytes_per_element, 0.75 + 1.0 / 32);
  EXPECT_DOUBLE_EQ(row("mxfp4").bytes_per_element, 0.5 + 1.0 / 32);
  EXPECT_NEAR(row("nvfp4").bytes_per_element, 0.5 + 1.0 / 16, 1e-5);
  // DeepSeek-V3's mix: X pays 4 bytes per 128, W 4 per 16384.
  EXPECT_LT(row("fp8_128x128").bytes_per_element, row("fp8_1x128").bytes_per_element);
}

TEST(BlockScalingStudy, DocsPageCarriesTheTable) {
  tcbench::test::expect_page_tables(
      "docs/concepts/fp8-scaling.md", "computed",
      {{"block-scaling", ts::markdown_table(ts::block_scaling_study())}});
}

}  // namespace
