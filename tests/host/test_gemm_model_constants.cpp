// The GEMM time model's data and its callers: the CSV reader, the constants (compiled in, and
// malformed ones), the GPUs the model knows by name, and predict_time's coverage rules.
#include "tcbench/csv.hpp"
#include "tcbench/error.hpp"
#include "tcbench/gemm_model_constants.hpp"
#include "tcbench/gemm_prediction.hpp"
#include "tcbench/peaks.hpp"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

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

TEST(ModelConstants, TheCompiledInSetResolvesEveryFamilyAndEveryRowHasProvenance) {
  const ModelConstants& c = ModelConstants::embedded();
  for (ArchFamily f : tcbench::all_families()) {
    const auto k = c.family(f, Precision::bf16);
    EXPECT_FALSE(k.tiles.empty()) << name(f);
    EXPECT_GT(k.fixed_us, 0) << name(f);
    EXPECT_GT(k.sustained_fraction, 0) << name(f);
    EXPECT_LE(k.sustained_fraction, 1) << name(f);
    for (int i = 0; i < 4; ++i) {
      EXPECT_GT(k.align_inputs[i], 0);
      EXPECT_LE(k.align_inputs[i], 1);
    }
  }
  // Hopper and Blackwell have stream-K; Ampere's kernels are data-parallel.
  EXPECT_TRUE(c.family(ArchFamily::hopper, Precision::bf16).stream_k);
  EXPECT_FALSE(c.family(ArchFamily::ampere, Precision::bf16).stream_k);
  // Turing has no rows of its own: everything from Ampere, and the lookup says so.
  std::map<std::string, std::string> borrowed;
  (void)c.family(ArchFamily::turing, Precision::fp16, &borrowed);
  EXPECT_EQ(borrowed.at("tiles"), "ampere");
  EXPECT_EQ(borrowed.at("fixed_us"), "ampere");
  // The printed set is CSV with a header and a provenance on every row.
  const std::string text = c.csv();
  EXPECT_TRUE(text.starts_with("scope,name,value,provenance\n"));
  const auto rows = tcbench::parse_csv(text, "constants");
  for (std::size_t r = 1; r < rows.size(); ++r) {
    ASSERT_EQ(rows[r].fields.size(), 4u);
    EXPECT_FALSE(rows[r].fields[3].empty()) << rows[r].fields[1];
  }
}

TEST(ModelConstants, CeilingsArePerFamilyAndPrecisionAndSayWhatTheyBorrow) {
  const ModelConstants& c = ModelConstants::embedded();
  const auto h100 = c.ceiling("H100 SXM", ArchFamily::hopper, Precision::bf16);
  EXPECT_EQ(h100.basis, "hopper bf16");
  EXPECT_TRUE(h100.own);
  EXPECT_GT(h100.value, 0.5);
  EXPECT_LE(h100.value, 1.0);
  // FP16 reads the BF16 rows; TF32 has rows of its own on Hopper, not BF16's.
  EXPECT_EQ(c.ceiling("H100 SXM", ArchFamily::hopper, Precision::fp16).value, h100.value);
  EXPECT_EQ(c.ceiling("H100 SXM", ArchFamily::hopper, Precision::tf32).basis, "hopper tf32");
  // A GPU's own row wins over its family's (H200's FP8 best shape).
  EXPECT_EQ(c.ceiling("H200", ArchFamily::hopper, Precision::fp8).basis, "H200 fp8");
  // Ada has BF16 rows only: its TF32 ceiling is BF16's, said so.
  const auto ada = c.ceiling("RTX 4090", ArchFamily::ada, Precision::tf32);
  EXPECT_FALSE(ada.own);
  EXPECT_NE(ada.basis.find("transferred"), std::string::npos) << ada.basis;
}

namespace {

// A complete Ampere family and the inherits of the rest, as rows.
std::vector<std::array<std::string, 4>> good_rows() {
  std::vector<std::array<std::string, 4>> rows;
  auto add = [&](const char* s, const std::string& n, const std::string& v) {
    rows.push_back({s, n, v, "test"});
  };
  for (const char* n :
       {"fixed_us", "cta_latency_us", "tile_half", "wave_depth", "stream_k_overhead",
        "split_k_fixed_us", "bandwidth_efficiency", "batched_efficiency", "sustained_fraction",
        "sustained_us", "stream_k", "k_step_bytes", "min_split_k_depth"})
    add("ampere", n, "1");
  for (const char* a : {"align_inputs_", "align_output_", "align_memory_"})
    for (const char* cls : {"1", "2", "4", "8"}) add("ampere", std::string(a) + cls, "0.5");
  add("ampere", "tiles", "256x128 128x128");
  add("ampere", "ceiling_bf16", "0.9");
  for (const char* f : {"turing", "ada", "hopper"}) add(f, "inherit", "ampere");
  add("blackwell", "inherit", "hopper");
  add("blackwell_rtx", "inherit", "ada");
  add("measurement", "host_overhead_us:x", "20");
  return rows;
}

ModelConstants make(const std::vector<std::array<std::string, 4>>& owned) {
  std::vector<tcbench::ConstantRow> rows;
  for (const auto& r : owned) rows.push_back({r[0], r[1], r[2], r[3]});
  return ModelConstants(rows, "test rows");
}

std::string refusal(std::vector<std::array<std::string, 4>> rows) {
  try {
    (void)make(rows);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ModelConstants, PrecisionOverridesInheritanceAndWhatItRefuses) {
  auto rows = good_rows();
  rows.push_back({"hopper", "tile_half", "7", "t"});
  rows.push_back({"ampere", "tile_half:tf32", "3", "t"});
  rows.push_back({"H100 SXM", "ceiling_bf16", "0.8", "t"});
  const ModelConstants c = make(rows);
  EXPECT_EQ(c.family(ArchFamily::hopper, Precision::bf16).tiles.size(), 2u);
  // The family's own field beats an inherited precision override; the override applies where
  // the family has none.
  EXPECT_EQ(c.family(ArchFamily::hopper, Precision::tf32).tile_half, 7);
  EXPECT_EQ(c.family(ArchFamily::ampere, Precision::tf32).tile_half, 3);
  EXPECT_EQ(c.family(ArchFamily::ampere, Precision::bf16).tile_half, 1);
  std::map<std::string, std::string> borrowed;
  (void)c.family(ArchFamily::blackwell, Precision::bf16, &borrowed);
  EXPECT_EQ(borrowed.at("fixed_us"), "ampere");
  EXPECT_EQ(borrowed.at("tile_half"), "hopper");
  EXPECT_DOUBLE_EQ(c.ceiling("H100 SXM", ArchFamily::hopper, Precision::bf16).value, 0.8);
  EXPECT_DOUBLE_EQ(c.ceiling("B200", ArchFamily::blackwell, Precision::bf16).value, 0.9);
  EXPECT_DOUBLE_EQ(c.host_overheads().at("x"), 20);

  auto with = [&](std::array<std::string, 4> extra) {
    auto r = good_rows();
    r.push_back(std::move(extra));
    return refusal(r);
  };
  EXPECT_NE(with({"ampere", "fixed_us", "4", "again"}).find("given twice"), std::string::npos);
  EXPECT_NE(with({"ampere", "bogus", "1", "t"}).find("no family field"), std::string::npos);
  EXPECT_NE(with({"H100 SXM", "tiles", "1", "t"}).find("GPU scope"), std::string::npos);
  EXPECT_NE(with({"H100 SXM", "ceiling_fp7", "0.8", "t"}).find("no precision"), std::string::npos);
  EXPECT_NE(with({"H100 SXM", "ceiling_bf16", "1.5", "t"}).find("fraction"), std::string::npos);
  EXPECT_NE(with({"ampere", "fixed_us:fp7", "1", "t"}).find("must name one"), std::string::npos);
  EXPECT_NE(with({"ampere", "inherit:fp16", "ampere", "t"}).find("carry a precision"),
            std::string::npos);
  EXPECT_NE(with({"H100 SXM", "ceiling_bf16", "zero", "t"}).find("not a finite number"),
            std::string::npos);
  EXPECT_NE(with({"H100 SXM", "ceiling_bf16", "0.8", ""}).find("no provenance"), std::string::npos);
  EXPECT_NE(with({"measurement", "other", "1", "t"}).find("host_overhead_us"), std::string::npos);
  EXPECT_NE(with({"ampere", "inherit", "blackwell", "t"}).find("loops"), std::string::npos);
  auto bad_tiles = good_rows();
  for (auto& r : bad_tiles)
    if (r[1] == "tiles") r[2] = "256by128";
  EXPECT_NE(refusal(bad_tiles).find("BMxBN"), std::string::npos);
  auto no_field = good_rows();
  std::erase_if(no_field, [](const auto& r) { return r[1] == "fixed_us"; });
  EXPECT_NE(refusal(no_field).find("has no 'fixed_us'"), std::string::npos);
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
  return tcbench::predict_time(g->spec, q, g->canonical);
}

}  // namespace

TEST(PredictTime, SaysWhatItDoesNotCoverAndWhatItStandsOn) {
  EXPECT_NE(predict("A100 SXM", Precision::fp8, 4096, 4096, 4096).not_covered.find("no fp8 path"),
            std::string::npos);
  EXPECT_NE(predict("H100 SXM", Precision::fp8, 4096, 4096, 4095, true, false)
                .not_covered.find("refuses fp8"),
            std::string::npos);
  EXPECT_NE(
      predict("H100 SXM", Precision::int8, 4096, 4096, 4094, true, false).not_covered.find("int8"),
      std::string::npos);
  // Fitted: the family's own constants and ceiling.
  const auto a100 = predict("A100 SXM", Precision::fp16, 4096, 4096, 4096);
  EXPECT_TRUE(a100.not_covered.empty());
  EXPECT_EQ(a100.coverage, "fitted");
  // An aligned H100 GEMM uses none of what Hopper borrows (its memory alignment factors); a
  // misaligned one says what it borrowed.
  EXPECT_EQ(predict("H100 SXM", Precision::bf16, 4096, 4096, 4096).coverage, "fitted");
  EXPECT_NE(predict("H100 SXM", Precision::bf16, 8192, 8, 8191).coverage.find("align_memory"),
            std::string::npos);
  // Ada has only BF16 rows: a TF32 prediction says what it borrowed.
  const auto ada = predict("RTX 4090", Precision::tf32, 4096, 4096, 4096);
  EXPECT_NE(ada.coverage.find("transferred from ampere"), std::string::npos) << ada.coverage;
  EXPECT_NE(ada.coverage.find("ceiling"), std::string::npos) << ada.coverage;
  // FP8 in a layout cuBLASLt does not take on Hopper: a number, with the caveat.
  const auto kn = predict("H100 SXM", Precision::fp8, 4096, 4096, 4096, true, true);
  EXPECT_TRUE(kn.not_covered.empty());
  EXPECT_NE(kn.note.find("K-contiguous"), std::string::npos);
  EXPECT_TRUE(predict("H100 SXM", Precision::fp8, 4096, 4096, 4096, true, false).note.empty());
  EXPECT_THROW(predict("H100 SXM", Precision::fp16, 0, 1, 1), InvalidArgument);
  // At the size limit the prediction is finite and never above its bound.
  const std::int64_t huge = std::int64_t{1} << 40;
  const auto h = predict("H100 SXM", Precision::bf16, huge, huge, huge);
  EXPECT_LE(h.time.flops_per_s, h.time.bound_flops_per_s);
  EXPECT_GT(h.time.flops_per_s, 0);
}

TEST(PredictTime, WhatPublishedMeasurementsShow) {
  // A large aligned GEMM runs near, not at, the datasheet rate, and never above the bound.
  const auto big = predict("H100 SXM", Precision::bf16, 8192, 8192, 8192);
  EXPECT_GT(big.time.flops_per_s, 0.65 * 989.4e12);
  EXPECT_LT(big.time.flops_per_s, 0.9 * 989.4e12);
  EXPECT_LE(big.time.flops_per_s, big.time.bound_flops_per_s);
  // On the A100, K = 4095 (2-byte rows of A and B) is much slower than 4096; 4094 (4-byte) less.
  const double t4096 = predict("A100 SXM", Precision::fp16, 4096, 4096, 4096).time.flops_per_s;
  const double t4095 = predict("A100 SXM", Precision::fp16, 4096, 4096, 4095).time.flops_per_s;
  const double t4094 = predict("A100 SXM", Precision::fp16, 4096, 4096, 4094).time.flops_per_s;
  EXPECT_GT(t4096 / t4095, 2.5);
  EXPECT_GT(t4096 / t4094, 1.2);
  EXPECT_LT(t4096 / t4094, t4096 / t4095);
  // On the RTX 4090 an odd square runs about as fast as its aligned neighbour of the same tile
  // count (pytorch/pytorch#181718: 2055 at 115.6, 2056 at 89.6 TFLOP/s): no A100-sized cliff.
  const double r2056 = predict("RTX 4090", Precision::bf16, 2056, 2056, 2056).time.flops_per_s;
  const double r2055 = predict("RTX 4090", Precision::bf16, 2055, 2055, 2055).time.flops_per_s;
  EXPECT_LT(r2056 / r2055, 1.1);
  // N = 33 is C's leading dimension (C row-major): its rows are 66 bytes, 2-byte aligned.
  EXPECT_EQ(predict("H100 SXM", Precision::fp16, 4096, 33, 4096).time.alignment.c, 2);
  // A microsecond GEMM costs at least the launch.
  const auto tiny = predict("H100 SXM", Precision::fp16, 64, 64, 64);
  EXPECT_GE(
      tiny.time.seconds,
      tcbench::ModelConstants::embedded().family(ArchFamily::hopper, Precision::fp16).fixed_us *
          1e-6);
}
