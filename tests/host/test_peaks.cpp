// The peak model against published datasheet figures (the product pages and whitepapers cited
// in common/facts/src/peaks.cpp), computed from
// each card's SM count and the clock its datasheet figures imply.
#include "tcbench/peaks.hpp"

#include <gtest/gtest.h>

#include <string>

namespace tcbench {
namespace {

using P = Precision;

GpuSpec card(std::string name, int major, int minor, int sms, double clock_mhz,
             double mem_clock_mhz = 0, int bus_bits = 0) {
  GpuSpec g;
  g.name = std::move(name);
  g.cc_major = major;
  g.cc_minor = minor;
  g.sm_count = sms;
  g.sm_clock_mhz = clock_mhz;
  g.mem_clock_mhz = mem_clock_mhz;
  g.mem_bus_bits = bus_bits;
  return g;
}

// Datasheets round (L40S lists 362 for a 366 TF model); 3% separates rounding from a wrong
// per-SM rate, which is off by 2x.
constexpr double kTol = 0.03;

void expect_model(const GpuSpec& g, P p, double published) {
  const Peak pk = peak(g, p);
  ASSERT_TRUE(pk.supported) << g.name << " " << name(p);
  EXPECT_NEAR(pk.max_clock, published, published * kTol)
      << g.name << " " << name(p) << " at " << g.sm_clock_mhz << " MHz";
}

void expect_unsupported(const GpuSpec& g, P p) {
  const Peak pk = peak(g, p);
  EXPECT_FALSE(pk.supported) << g.name << " " << name(p);
  EXPECT_EQ(pk.max_clock, 0.0);
  EXPECT_FALSE(pk.datasheet.has_value());
}

TEST(PeakModel, TeslaT4) {
  const GpuSpec g = card("Tesla T4", 7, 5, 40, 1590);
  expect_model(g, P::fp32, 8.1);
  expect_model(g, P::fp16, 65);
  expect_model(g, P::fp16_acc16, 65);
  expect_model(g, P::int8, 130);
  expect_unsupported(g, P::bf16);
  expect_unsupported(g, P::tf32);
  expect_unsupported(g, P::fp8);
}

TEST(PeakModel, A100Sxm) {
  const GpuSpec g = card("NVIDIA A100-SXM4-80GB", 8, 0, 108, 1410);
  expect_model(g, P::fp64, 19.5);  // DMMA
  expect_model(g, P::fp32, 19.5);
  expect_model(g, P::tf32, 156);
  expect_model(g, P::fp16, 312);
  expect_model(g, P::bf16, 312);
  expect_model(g, P::int8, 624);
  expect_unsupported(g, P::fp8);
}

TEST(PeakModel, A10) {
  const GpuSpec g = card("NVIDIA A10", 8, 6, 72, 1695);
  expect_model(g, P::fp32, 31.2);
  expect_model(g, P::tf32, 62.5);
  expect_model(g, P::fp16, 125);
  expect_model(g, P::bf16, 125);
  expect_model(g, P::int8, 250);
  expect_unsupported(g, P::fp8);
}

TEST(PeakModel, L4) {
  const GpuSpec g = card("NVIDIA L4", 8, 9, 58, 2040);
  expect_model(g, P::fp32, 30.3);
  expect_model(g, P::tf32, 60);
  expect_model(g, P::fp16, 121);
  expect_model(g, P::int8, 242.5);
  expect_model(g, P::fp8, 242.5);
}

TEST(PeakModel, L40S) {
  const GpuSpec g = card("NVIDIA L40S", 8, 9, 142, 2520);
  expect_model(g, P::fp32, 91.6);
  expect_model(g, P::tf32, 183);
  expect_model(g, P::fp16, 362.05);
  expect_model(g, P::bf16, 362.05);
  expect_model(g, P::int8, 733);
  expect_model(g, P::fp8, 733);
}

TEST(PeakModel, Rtx4090HalfRateFp32Accumulate) {
  const GpuSpec g = card("NVIDIA GeForce RTX 4090", 8, 9, 128, 2520);
  expect_model(g, P::fp32, 82.6);
  expect_model(g, P::tf32, 82.6);
  expect_model(g, P::fp16, 165.2);
  expect_model(g, P::bf16, 165.2);
  expect_model(g, P::fp16_acc16, 330.3);
  expect_model(g, P::int8, 660.6);
  expect_model(g, P::fp8, 330.3);  // FP32 accumulate, as tcbench runs it
}

TEST(PeakModel, H100SxmAtImpliedTensorClock) {
  // Tensor figures imply 1.83 GHz; FP32/FP64 figures use the 1.98 GHz maximum.
  const GpuSpec tensor = card("NVIDIA H100 80GB HBM3", 9, 0, 132, 1830);
  expect_model(tensor, P::tf32, 494.7);
  expect_model(tensor, P::fp16, 989.4);
  expect_model(tensor, P::bf16, 989.4);
  expect_model(tensor, P::fp16_acc16, 989.4);
  expect_model(tensor, P::int8, 1979);
  expect_model(tensor, P::fp8, 1979);
  const GpuSpec simt = card("NVIDIA H100 80GB HBM3", 9, 0, 132, 1980);
  expect_model(simt, P::fp32, 67);
  expect_model(simt, P::fp64, 67);  // DMMA
}

// pct_of_peak_at_clock's denominator: the same card at whatever clock NVML measured. The H100
// SXM datasheet's 989.4 TFLOP/s (FP16 dense) is this model at the 1830 MHz its figures imply;
// at a throttled 1500 MHz the same silicon can do 1500/1830 of it.
TEST(PeakModel, PeakAtTheMeasuredClock) {
  const GpuSpec g = card("NVIDIA H100 80GB HBM3", 9, 0, 132, 1980);
  EXPECT_NEAR(peak_at_clock(g, P::fp16, 1830), 989.4, 989.4 * 1e-4);
  EXPECT_NEAR(peak_at_clock(g, P::fp16, 1500), 989.4 * 1500 / 1830, 0.1);
  EXPECT_DOUBLE_EQ(peak_at_clock(g, P::fp16, 1980), peak(g, P::fp16).max_clock);
  EXPECT_EQ(peak_at_clock(g, P::fp16, 0), 0.0);
  EXPECT_EQ(peak_at_clock(card("Tesla T4", 7, 5, 40, 1590), P::fp8, 1590), 0.0);  // no FP8 path
}

TEST(PeakModel, H100MaxClockPeakIsAboveDatasheet) {
  const GpuSpec g = card("NVIDIA H100 80GB HBM3", 9, 0, 132, 1980);
  const Peak pk = peak(g, P::fp16);
  EXPECT_NEAR(pk.max_clock, 1070.5, 1.0);  // 132 x 4096 x 1.98 GHz
  ASSERT_TRUE(pk.datasheet.has_value());
  EXPECT_DOUBLE_EQ(*pk.datasheet, 989.4);
  EXPECT_DOUBLE_EQ(pk.denominator(), 989.4);
}

TEST(PeakModel, H100PcieAtImpliedTensorClock) {
  const GpuSpec tensor = card("NVIDIA H100 PCIe", 9, 0, 114, 1620);
  expect_model(tensor, P::tf32, 378);
  expect_model(tensor, P::fp16, 756);
  expect_model(tensor, P::int8, 1513);
  expect_model(tensor, P::fp8, 1513);
  const GpuSpec simt = card("NVIDIA H100 PCIe", 9, 0, 114, 1755);
  expect_model(simt, P::fp32, 51);
  expect_model(simt, P::fp64, 51);
}

TEST(PeakModel, H200) {
  const GpuSpec tensor = card("NVIDIA H200", 9, 0, 132, 1830);
  expect_model(tensor, P::fp16, 989);
  expect_model(tensor, P::bf16, 989);
  expect_model(tensor, P::tf32, 494.7);
  expect_model(tensor, P::int8, 1979);
  expect_model(tensor, P::fp8, 1979);
  expect_model(card("NVIDIA H200", 9, 0, 132, 1980), P::fp32, 67);
}

TEST(PeakModel, B200AtImpliedTensorClock) {
  const GpuSpec tensor = card("NVIDIA B200", 10, 0, 148, 1860);
  expect_model(tensor, P::fp16, 2250);
  expect_model(tensor, P::tf32, 1100);
  expect_model(tensor, P::int8, 4500);
  expect_model(tensor, P::fp8, 4500);
}

TEST(PeakModel, UnsupportedPrecisions) {
  for (P p : {P::bf16, P::tf32, P::fp8}) expect_unsupported(card("Tesla T4", 7, 5, 40, 1590), p);
  for (int minor : {0, 6, 7}) expect_unsupported(card("x", 8, minor, 100, 1500), P::fp8);
  EXPECT_TRUE(peak(card("x", 8, 9, 100, 1500), P::fp8).supported);
  EXPECT_TRUE(peak(card("x", 7, 5, 40, 1500), P::int8).supported);
  // A compute capability outside the table: no path is claimed rather than a guess.
  for (P p : kAllPrecisions) expect_unsupported(card("future", 13, 0, 100, 2000), p);
  expect_unsupported(card("none", 0, 0, 0, 0), P::fp32);
}

TEST(PeakModel, EveryTableArchitectureHasFp32AndFp16) {
  const std::pair<int, int> ccs[] = {{7, 5}, {8, 0},  {8, 6},  {8, 7},  {8, 9},
                                     {9, 0}, {10, 0}, {10, 3}, {12, 0}, {12, 1}};
  for (auto [ma, mi] : ccs) {
    EXPECT_GT(ops_per_clock_per_sm(ma, mi, P::fp32, false), 0) << ma << "." << mi;
    EXPECT_GT(ops_per_clock_per_sm(ma, mi, P::fp16, false), 0) << ma << "." << mi;
    EXPECT_GT(ops_per_clock_per_sm(ma, mi, P::int8, false), 0) << ma << "." << mi;
    EXPECT_EQ(ops_per_clock_per_sm(ma, mi, P::fp8, false) > 0, ma * 10 + mi >= 89)
        << ma << "." << mi;
    EXPECT_EQ(ops_per_clock_per_sm(ma, mi, P::bf16, false) > 0, ma >= 8) << ma << "." << mi;
  }
}

TEST(PeakModel, GeForceHalvesFp32AccumulateOnly) {
  for (auto [ma, mi] : {std::pair{8, 6}, std::pair{8, 9}, std::pair{12, 0}}) {
    for (P p : {P::tf32, P::fp16, P::bf16, P::fp8})
      EXPECT_DOUBLE_EQ(ops_per_clock_per_sm(ma, mi, p, true),
                       ops_per_clock_per_sm(ma, mi, p, false) / 2)
          << ma << "." << mi << " " << name(p);
    for (P p : {P::fp16_acc16, P::int8, P::fp32})
      EXPECT_DOUBLE_EQ(ops_per_clock_per_sm(ma, mi, p, true),
                       ops_per_clock_per_sm(ma, mi, p, false))
          << ma << "." << mi << " " << name(p);
  }
  EXPECT_DOUBLE_EQ(ops_per_clock_per_sm(7, 5, P::fp16, true), 512);
  // No GeForce Hopper exists; the flag must not invent one.
  EXPECT_DOUBLE_EQ(ops_per_clock_per_sm(9, 0, P::fp16, true), 4096);
}

TEST(PeakModel, GeForceDetection) {
  EXPECT_TRUE(is_geforce("NVIDIA GeForce RTX 4090"));
  EXPECT_TRUE(is_geforce("NVIDIA GeForce RTX 3080 Ti Laptop GPU"));
  EXPECT_TRUE(is_geforce("GEFORCE RTX 2080"));
  EXPECT_FALSE(is_geforce("NVIDIA RTX A6000"));
  EXPECT_FALSE(is_geforce("NVIDIA RTX 6000 Ada Generation"));
  EXPECT_FALSE(is_geforce("NVIDIA L40S"));
  // Same chip as the 4090, full-rate FP32 accumulation.
  const GpuSpec ws = card("NVIDIA RTX 6000 Ada Generation", 8, 9, 142, 2505);
  EXPECT_DOUBLE_EQ(peak(ws, P::fp16).max_clock, peak(ws, P::fp16_acc16).max_clock);
  const GpuSpec gf = card("NVIDIA GeForce RTX 4090", 8, 9, 128, 2520);
  EXPECT_DOUBLE_EQ(peak(gf, P::fp16).max_clock * 2, peak(gf, P::fp16_acc16).max_clock);
}

TEST(PeakModel, MemoryBandwidth) {
  // Memory clocks as cudaDevAttrMemoryClockRate reports them.
  EXPECT_NEAR(peak_memory_gbps(card("Tesla T4", 7, 5, 40, 1590, 5001, 256)), 320, 320 * kTol);
  EXPECT_NEAR(peak_memory_gbps(card("NVIDIA A100-SXM4-80GB", 8, 0, 108, 1410, 1593, 5120)), 2039,
              2039 * kTol);
  EXPECT_NEAR(peak_memory_gbps(card("NVIDIA A100-SXM4-40GB", 8, 0, 108, 1410, 1215, 5120)), 1555,
              1555 * kTol);
  EXPECT_NEAR(peak_memory_gbps(card("NVIDIA A10", 8, 6, 72, 1695, 6251, 384)), 600, 600 * kTol);
  EXPECT_NEAR(peak_memory_gbps(card("NVIDIA L40S", 8, 9, 142, 2520, 9001, 384)), 864, 864 * kTol);
  EXPECT_NEAR(peak_memory_gbps(card("NVIDIA GeForce RTX 4090", 8, 9, 128, 2520, 10501, 384)), 1008,
              1008 * kTol);
  EXPECT_NEAR(peak_memory_gbps(card("NVIDIA H100 80GB HBM3", 9, 0, 132, 1980, 2619, 5120)), 3352,
              3352 * kTol);
  EXPECT_NEAR(peak_memory_gbps(card("NVIDIA H200", 9, 0, 132, 1980, 3201, 6144)), 4800,
              4800 * kTol);
  // The formula itself, exactly: 2 x 1000 MHz x 512 bits / 8 = 128 GB/s.
  EXPECT_DOUBLE_EQ(peak_memory_gbps(card("x", 8, 0, 1, 1, 1000, 512)), 128.0);
  EXPECT_DOUBLE_EQ(peak_memory_gbps(GpuSpec{}), 0.0);
}

TEST(PeakModel, KnownProductsByCudaName) {
  EXPECT_EQ(known_product("NVIDIA H100 80GB HBM3"), "H100 SXM");
  EXPECT_EQ(known_product("NVIDIA H100 PCIe"), "H100 PCIe");
  EXPECT_EQ(known_product("NVIDIA H200"), "H200");
  EXPECT_EQ(known_product("NVIDIA A100-SXM4-80GB"), "A100 SXM");
  EXPECT_EQ(known_product("NVIDIA A100-SXM4-40GB"), "A100 SXM");
  EXPECT_EQ(known_product("NVIDIA A100-PCIE-40GB"), "A100 PCIe");
  EXPECT_EQ(known_product("NVIDIA A100 80GB PCIe"), "A100 PCIe");
  EXPECT_EQ(known_product("Tesla T4"), "T4");
  EXPECT_EQ(known_product("NVIDIA GeForce RTX 4090"), "RTX 4090");
  EXPECT_EQ(known_product("NVIDIA L40S"), "L40S");
  EXPECT_EQ(known_product("NVIDIA L4"), "L4");
  EXPECT_EQ(known_product("NVIDIA A10"), "A10");
  EXPECT_EQ(known_product("NVIDIA B200"), "B200");
  EXPECT_EQ(known_product("NVIDIA H200 "), "H200");  // trailing blank
  // Near misses must not borrow another product's figures.
  EXPECT_FALSE(known_product("NVIDIA A10G").has_value());
  EXPECT_FALSE(known_product("NVIDIA L40").has_value());
  EXPECT_FALSE(known_product("NVIDIA H100 NVL").has_value());
  EXPECT_FALSE(known_product("NVIDIA H200 NVL").has_value());
  EXPECT_FALSE(known_product("NVIDIA H100 80GB HBM3 MIG 1g.10gb").has_value());
  EXPECT_FALSE(known_product("").has_value());
}

TEST(PeakModel, DatasheetDenominatorForKnownProducts) {
  const GpuSpec a100 = card("NVIDIA A100-SXM4-80GB", 8, 0, 108, 1410);
  const Peak pk = peak(a100, P::fp16);
  ASSERT_TRUE(pk.datasheet.has_value());
  EXPECT_DOUBLE_EQ(pk.denominator(), 312);
  EXPECT_NE(pk.source.find("datasheet: A100 SXM"), std::string_view::npos) << pk.source;

  const GpuSpec h100 = card("NVIDIA H100 80GB HBM3", 9, 0, 132, 1980);
  EXPECT_DOUBLE_EQ(peak(h100, P::fp8).denominator(), 1979);
  EXPECT_DOUBLE_EQ(peak(h100, P::int8).denominator(), 1979);
  EXPECT_DOUBLE_EQ(peak(h100, P::tf32).denominator(), 494.7);

  const GpuSpec rtx = card("NVIDIA GeForce RTX 4090", 8, 9, 128, 2520);
  EXPECT_DOUBLE_EQ(peak(rtx, P::fp16).denominator(), 165.2);
  EXPECT_DOUBLE_EQ(peak(rtx, P::fp16_acc16).denominator(), 330.3);
}

TEST(PeakModel, MaxClockDenominatorOtherwise) {
  // Unknown name: the model is the denominator.
  const GpuSpec unknown = card("NVIDIA H100 NVL", 9, 0, 132, 1785);
  const Peak pk = peak(unknown, P::fp16);
  EXPECT_FALSE(pk.datasheet.has_value());
  EXPECT_DOUBLE_EQ(pk.denominator(), pk.max_clock);
  EXPECT_EQ(pk.source, "max-clock model");

  // A known product whose datasheet leaves a precision out (T4 lists no FP64).
  const Peak t4_fp64 = peak(card("Tesla T4", 7, 5, 40, 1590), P::fp64);
  EXPECT_TRUE(t4_fp64.supported);
  EXPECT_FALSE(t4_fp64.datasheet.has_value());
  EXPECT_EQ(t4_fp64.source, "max-clock model");

  // A known name with a different SM count (partitioned, odd SKU): the datasheet does not
  // describe this device.
  const Peak partial = peak(card("NVIDIA A100-SXM4-80GB", 8, 0, 98, 1410), P::fp16);
  EXPECT_FALSE(partial.datasheet.has_value());
  EXPECT_DOUBLE_EQ(partial.denominator(), partial.max_clock);

  // Unsupported precision on a known product: no datasheet figure either.
  EXPECT_FALSE(peak(card("NVIDIA A100-SXM4-80GB", 8, 0, 108, 1410), P::fp8).datasheet);
}

TEST(PeakModel, DatasheetsAgreeWithModelAtImpliedClocks) {
  // Each published tensor figure must be reproducible from the arch table at one clock no
  // higher than the boost clock: catches a typo in either table.
  struct Row {
    const char* name;
    int ma, mi, sms;
    double boost_mhz;
  };
  const Row rows[] = {{"Tesla T4", 7, 5, 40, 1590},
                      {"NVIDIA A100-SXM4-80GB", 8, 0, 108, 1410},
                      {"NVIDIA A10", 8, 6, 72, 1695},
                      {"NVIDIA L4", 8, 9, 58, 2040},
                      {"NVIDIA L40S", 8, 9, 142, 2520},
                      {"NVIDIA GeForce RTX 4090", 8, 9, 128, 2520},
                      {"NVIDIA H100 80GB HBM3", 9, 0, 132, 1980},
                      {"NVIDIA H100 PCIe", 9, 0, 114, 1755},
                      {"NVIDIA H200", 9, 0, 132, 1980},
                      {"NVIDIA B200", 10, 0, 148, 1965}};
  for (const Row& r : rows) {
    const GpuSpec g = card(r.name, r.ma, r.mi, r.sms, r.boost_mhz);
    for (P p : kAllPrecisions) {
      const Peak pk = peak(g, p);
      if (!pk.datasheet) continue;
      EXPECT_TRUE(pk.supported);
      // datasheet <= boost-clock model (+rounding), and >= 80% of it (Hopper's 1.62/1.755).
      EXPECT_LE(*pk.datasheet, pk.max_clock * (1 + kTol)) << r.name << " " << name(p);
      EXPECT_GE(*pk.datasheet, pk.max_clock * 0.80) << r.name << " " << name(p);
    }
  }
}

}  // namespace
}  // namespace tcbench
