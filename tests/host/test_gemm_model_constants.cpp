// The GEMM time model's data and its callers: the CSV reader, the constants file (embedded and
// malformed ones), the GPUs the model knows by name, and predict_v2's coverage rules.
#include "tcbench/csv.hpp"
#include "tcbench/error.hpp"
#include "tcbench/gemm_model_constants.hpp"
#include "tcbench/gemm_prediction.hpp"
#include "tcbench/peaks.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

using tcbench::ArchFamily;
using tcbench::InvalidArgument;
using tcbench::ModelConstants;
using tcbench::Precision;

TEST(Csv, QuotesLineEndsAndLimits) {
  const auto r = tcbench::parse_csv(
      "a,b\r\n\"x, y\",\"say \"\"hi\"\"\"\n\n  \"spaced\" ,z\nlast,\"multi\nline\"", "t.csv");
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[1].fields[0], "x, y");
  EXPECT_EQ(r[1].fields[1], "say \"hi\"");
  EXPECT_EQ(r[1].line, 2u);
  EXPECT_EQ(r[2].fields[0], "spaced");
  EXPECT_EQ(r[2].line, 4u);
  EXPECT_EQ(r[3].fields[1], "multi\nline");
  EXPECT_EQ(tcbench::parse_csv("a,,c,\n", "t")[0].fields.size(), 4u);
  EXPECT_EQ(tcbench::parse_csv("\xEF\xBB\xBFgpu,x\n", "t")[0].fields[0], "gpu");  // BOM
  EXPECT_THROW(tcbench::parse_csv("a,\"open\n", "t"), InvalidArgument);
  EXPECT_THROW(tcbench::parse_csv("\"a\"b\n", "t"), InvalidArgument);
  EXPECT_THROW(tcbench::parse_csv(std::string(70, ','), "t"), InvalidArgument);
  EXPECT_THROW(tcbench::parse_csv(std::string(5000, 'x'), "t"), InvalidArgument);
  EXPECT_EQ(tcbench::csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(tcbench::csv_field("q\""), "\"q\"\"\"");
  EXPECT_EQ(tcbench::csv_field("plain"), "plain");
}

TEST(ModelConstants, TheEmbeddedFileParsesAndEveryRowHasProvenance) {
  const ModelConstants& c = ModelConstants::embedded();
  for (ArchFamily f : {ArchFamily::turing, ArchFamily::ampere, ArchFamily::ada, ArchFamily::hopper,
                       ArchFamily::blackwell, ArchFamily::blackwell_rtx}) {
    std::string basis;
    const auto k = c.family(f, &basis);
    EXPECT_FALSE(k.tiles.empty()) << name(f);
    EXPECT_GT(k.fixed_us, 0) << name(f);
    for (int i = 0; i < 4; ++i) {
      EXPECT_GT(k.align_inputs[i], 0);
      EXPECT_LE(k.align_inputs[i], 1);
    }
    EXPECT_NE(basis.find(std::string(name(f))), std::string::npos);
  }
  // Hopper and Blackwell have stream-K; Ampere's kernels are data-parallel.
  EXPECT_TRUE(c.family(ArchFamily::hopper).stream_k);
  EXPECT_FALSE(c.family(ArchFamily::ampere).stream_k);
  // The text is the file's: a header and no row without provenance (parse() refuses those).
  const std::string_view text = tcbench::embedded_model_constants_text();
  EXPECT_TRUE(text.starts_with("scope,name,value,provenance"));
}

TEST(ModelConstants, CeilingsComeFromTheBestShapeTableOrSayWhatTheyBorrow) {
  const ModelConstants& c = ModelConstants::embedded();
  const auto h100 = c.ceiling("H100 SXM", ArchFamily::hopper, Precision::bf16);
  EXPECT_TRUE(h100.basis.starts_with("H100 SXM bf16")) << h100.basis;
  EXPECT_GT(h100.best, 0.7);
  EXPECT_LT(h100.best, 0.95);
  EXPECT_LT(h100.typical, h100.best);
  // FP16 reads the BF16 row.
  EXPECT_EQ(c.ceiling("H100 SXM", ArchFamily::hopper, Precision::fp16).best, h100.best);
  // H200 has only an FP8 row: its BF16 ceiling is Hopper's (the table: "H200 is the same").
  EXPECT_TRUE(c.ceiling("H200", ArchFamily::hopper, Precision::bf16).basis.starts_with("hopper"));
  EXPECT_TRUE(c.ceiling("H200", ArchFamily::hopper, Precision::fp8).basis.starts_with("H200 fp8"));
  // TF32 has no row anywhere: the GPU's BF16 one, said so.
  EXPECT_TRUE(c.ceiling("H100 SXM", ArchFamily::hopper, Precision::tf32)
                  .basis.starts_with("H100 SXM bf16"));
}

namespace {

const char* kGood =
    "scope,name,value,provenance\n"
    "all,typical_over_best,0.9,test\n"
    "ampere,fixed_us,4,test\nampere,tile_half,16,test\nampere,wave_depth,0.5,test\n"
    "ampere,stream_k,0,test\nampere,stream_k_overhead,0,test\nampere,k_step_bytes,64,test\n"
    "ampere,min_split_k_depth,256,test\nampere,split_k_fixed_us,1,test\n"
    "ampere,bandwidth_efficiency,0.8,test\nampere,batched_efficiency,0.9,test\n"
    "ampere,align_inputs_1,0.3,test\nampere,align_inputs_2,0.3,test\n"
    "ampere,align_inputs_4,0.6,test\nampere,align_inputs_8,0.6,test\n"
    "ampere,align_output_1,0.3,test\nampere,align_output_2,0.3,test\n"
    "ampere,align_output_4,0.6,test\nampere,align_output_8,0.6,test\n"
    "ampere,align_memory_1,0.8,test\nampere,align_memory_2,0.8,test\n"
    "ampere,align_memory_4,0.8,test\nampere,align_memory_8,0.8,test\n"
    "ampere,tiles,256x128 128x128,test\nampere,ceiling_best_bf16,0.9,test\n"
    "turing,inherit,ampere,t\nada,inherit,ampere,t\nhopper,inherit,ampere,t\n"
    "hopper,stream_k,1,t\nblackwell,inherit,hopper,t\nblackwell_rtx,inherit,ada,t\n"
    "measurement,host_overhead_us:x,20,t\n";

std::string with(const std::string& extra) {
  return std::string(kGood) + extra;
}

}  // namespace

TEST(ModelConstants, AFileOfItsOwnAndWhatItRefuses) {
  const ModelConstants c = ModelConstants::parse(with("H100 SXM,ceiling_best_bf16,0.8,t\n"), "x");
  EXPECT_EQ(c.family(ArchFamily::hopper).tiles.size(), 2u);
  EXPECT_TRUE(c.family(ArchFamily::hopper).stream_k);
  std::string basis;
  (void)c.family(ArchFamily::blackwell, &basis);
  EXPECT_NE(basis.find("ampere's"), std::string::npos) << basis;
  EXPECT_DOUBLE_EQ(c.ceiling("H100 SXM", ArchFamily::hopper, Precision::bf16).typical, 0.72);
  EXPECT_DOUBLE_EQ(c.ceiling("B200", ArchFamily::blackwell, Precision::bf16).best, 0.9);

  auto refused = [](const std::string& text, const std::string& part) {
    try {
      (void)ModelConstants::parse(text, "bad.csv");
    } catch (const InvalidArgument& e) {
      return std::string(e.what()).find(part) != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(refused("scope,name\n", "header"));
  EXPECT_TRUE(refused(with("ampere,fixed_us,4,again\n"), "given twice"));
  EXPECT_TRUE(refused(with("ampere,bogus,1,t\n"), "no family field"));
  EXPECT_TRUE(refused(with("H100 SXM,tiles,1,t\n"), "GPU scope"));
  EXPECT_TRUE(refused(with("H100 SXM,ceiling_best_fp7,0.8,t\n"), "no precision"));
  EXPECT_TRUE(refused(with("H100 SXM,ceiling_best_bf16,zero,t\n"), "not a finite number"));
  EXPECT_TRUE(refused(with("H100 SXM,ceiling_best_bf16,0.8,\n"), "no provenance"));
  EXPECT_TRUE(refused(with("measurement,other,1,t\n"), "host_overhead_us"));
  EXPECT_TRUE(refused(with("ampere,inherit,blackwell,t\n"), "loops"));
  std::string no_tiles = kGood;
  no_tiles.replace(no_tiles.find("256x128 128x128"), 15, "256by128");
  EXPECT_TRUE(refused(no_tiles, "BMxBN"));
  std::string no_field = kGood;
  no_field.erase(no_field.find("ampere,fixed_us,4,test\n"), 23);
  EXPECT_TRUE(refused(no_field, "has no 'fixed_us'"));
}

TEST(ModelProducts, EveryPeakTableProductByNameWithItsDatasheetBandwidth) {
  std::set<std::string> canonical;
  for (const auto& p : tcbench::model_products()) {
    // The product's CUDA name is the peak table's, for the same canonical name and SM count.
    EXPECT_EQ(tcbench::known_product(p.spec.name).value_or(""), p.canonical) << p.spec.name;
    EXPECT_TRUE(tcbench::peak(p.spec, Precision::fp16).datasheet.has_value()) << p.spec.name;
    canonical.insert(std::string(p.canonical));
  }
  for (const char* name : {"T4", "A100 SXM", "A100 PCIe", "A10", "L4", "L40S", "RTX 4090",
                           "H100 SXM", "H100 PCIe", "H200", "B200"})
    EXPECT_TRUE(canonical.count(name)) << name;
  const auto gbps = [](const char* name) {
    return tcbench::peak_memory_gbps(tcbench::find_model_product(name)->spec);
  };
  EXPECT_NEAR(gbps("H100 SXM"), 3352, 1);
  EXPECT_NEAR(gbps("NVIDIA A100-SXM4-40GB"), 1555, 1);
  EXPECT_NEAR(gbps("A100 SXM"), 2039, 1);  // the bare name: the first (80 GB) row
  EXPECT_NEAR(gbps("H200"), 4800, 1);
  EXPECT_NEAR(gbps("B200"), 7999, 2);
  // Case, blanks and underscores do not matter; an unknown name is not guessed.
  EXPECT_EQ(tcbench::find_model_product("  h100   sxm "), tcbench::find_model_product("H100 SXM"));
  EXPECT_EQ(tcbench::find_model_product("H100_SXM"), tcbench::find_model_product("H100 SXM"));
  EXPECT_EQ(tcbench::find_model_product("H100"), nullptr);
  EXPECT_EQ(tcbench::find_model_product("H200 SXM"), tcbench::find_model_product("H200"));
  EXPECT_EQ(tcbench::find_model_product("b200 sxm"), tcbench::find_model_product("B200"));
  EXPECT_EQ(tcbench::find_model_product("H100 SXM5"), tcbench::find_model_product("H100 SXM"));
  EXPECT_EQ(tcbench::find_model_product(""), nullptr);
}

namespace {

tcbench::ModelPrediction predict(const char* gpu, Precision p, std::int64_t m, std::int64_t n,
                                 std::int64_t k, bool mk = true, bool kn = true) {
  const auto* g = tcbench::find_model_product(gpu);
  tcbench::GemmQuery q;
  q.precision = p;
  q.m = m;
  q.n = n;
  q.k = k;
  q.a_k_contiguous = mk;
  q.b_n_contiguous = kn;
  return tcbench::predict_v2(g->spec, q, g->canonical);
}

}  // namespace

TEST(PredictV2, SaysWhatItDoesNotCoverAndWhatItBorrowed) {
  EXPECT_NE(predict("A100 SXM", Precision::fp8, 4096, 4096, 4096).not_covered.find("no fp8 path"),
            std::string::npos);
  EXPECT_NE(predict("H100 SXM", Precision::fp8, 4096, 4096, 4095, true, false)
                .not_covered.find("refuses fp8"),
            std::string::npos);
  EXPECT_NE(
      predict("H100 SXM", Precision::int8, 4096, 4096, 4094, true, false).not_covered.find("INT8"),
      std::string::npos);
  const auto a100 = predict("A100 SXM", Precision::fp16, 4096, 4096, 4096);
  EXPECT_TRUE(a100.not_covered.empty());
  EXPECT_EQ(a100.coverage, "fitted");
  const auto h100 = predict("H100 SXM", Precision::bf16, 4096, 4096, 4096);
  EXPECT_NE(h100.coverage.find("ampere's"), std::string::npos) << h100.coverage;
  EXPECT_NE(
      predict("H100 SXM", Precision::tf32, 4096, 4096, 4096).coverage.find("no published tf32"),
      std::string::npos);
  // FP8 in a layout cuBLASLt does not take on Hopper: a number, with the caveat.
  const auto kn = predict("H100 SXM", Precision::fp8, 4096, 4096, 4096, true, true);
  EXPECT_TRUE(kn.not_covered.empty());
  EXPECT_NE(kn.note.find("K-contiguous"), std::string::npos);
  EXPECT_TRUE(predict("H100 SXM", Precision::fp8, 4096, 4096, 4096, true, false).note.empty());
  EXPECT_THROW(predict("H100 SXM", Precision::fp16, 0, 1, 1), InvalidArgument);
}

TEST(PredictV2, WhatPublishedMeasurementsShow) {
  // A large aligned GEMM runs near, not at, the datasheet rate, and never above the bound.
  const auto big = predict("H100 SXM", Precision::bf16, 8192, 8192, 8192);
  EXPECT_GT(big.time.flops_per_s, 0.65 * 989.4e12);
  EXPECT_LT(big.time.flops_per_s, 0.9 * 989.4e12);
  EXPECT_LE(big.time.flops_per_s, big.time.bound_flops_per_s);
  // K = 4095 (2-byte rows of A and B) is much slower than 4096; 4094 (4-byte) less so.
  const double t4096 = predict("A100 SXM", Precision::fp16, 4096, 4096, 4096).time.flops_per_s;
  const double t4095 = predict("A100 SXM", Precision::fp16, 4096, 4096, 4095).time.flops_per_s;
  const double t4094 = predict("A100 SXM", Precision::fp16, 4096, 4096, 4094).time.flops_per_s;
  EXPECT_GT(t4096 / t4095, 2.5);
  EXPECT_GT(t4096 / t4094, 1.2);
  EXPECT_LT(t4096 / t4094, t4096 / t4095);
  // N = 33 is C's leading dimension (C row-major): its rows are 66 bytes, 2-byte aligned.
  EXPECT_EQ(predict("H100 SXM", Precision::fp16, 4096, 33, 4096).time.alignment.c, 2);
  // A microsecond GEMM costs at least the launch.
  const auto tiny = predict("H100 SXM", Precision::fp16, 64, 64, 64);
  EXPECT_EQ(tiny.time.regime, "launch");
  EXPECT_GE(tiny.time.seconds,
            tcbench::ModelConstants::embedded().family(ArchFamily::hopper).fixed_us * 1e-6);
}
