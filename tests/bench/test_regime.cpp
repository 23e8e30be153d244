// Burst and sustained windows on the host (tcbench/bench/regime.hpp): the wait for an idle GPU
// through the stand-in NVML (tests/stand_in/fake_nvml.cpp, loaded as the driver's library
// would be), the sustained trace's slices, and the clock policy a row names. The launches
// themselves need a GPU.
#include "tcbench/bench/regime.hpp"
#include "tcbench/device_info.hpp"
#include "tcbench/nvml.hpp"
#include "tcbench/schema.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace tcbench::bench {
namespace {

using namespace std::chrono_literals;

class StandIn : public ::testing::Test {
 protected:
  nvml::Device device(const std::string& script) {
    ::setenv("TCBENCH_NVML_LIBRARY", TCBENCH_FAKE_NVML_PATH, 1);
    ::setenv("TCBENCH_FAKE_NVML", script.c_str(), 1);
    const nvml::Library::Opened opened = nvml::Library::open();
    if (!opened.library) throw std::runtime_error(opened.why_not);
    return *opened.library->device_by_pci_bus_id("00000000:17:00.0").value;
  }
  void TearDown() override {
    ::unsetenv("TCBENCH_NVML_LIBRARY");
    ::unsetenv("TCBENCH_FAKE_NVML");
  }
};

TEST_F(StandIn, AnIdleGpuSettlesAfterTwoFlatWindows) {
  PowerSampler sampler(device("sm_mhz=345,power_mw=58000"), 2ms);
  sampler.start();
  const Idle idle = wait_for_idle(sampler, 0.2, 5.0);
  sampler.stop();
  EXPECT_TRUE(idle.settled);
  // The first moment the rule can judge is two windows in; it is judged every 0.1 s.
  EXPECT_GE(idle.seconds, 0.4);
  EXPECT_LT(idle.seconds, 3.0);  // judged at 0.4 s on an idle machine; slack for a loaded one
  EXPECT_DOUBLE_EQ(*idle.clock_mhz, 345.0);
  EXPECT_DOUBLE_EQ(*idle.power_w, 58.0);
}

TEST_F(StandIn, AClockStillFallingDelaysTheIdle) {
  // The stand-in drops its clock from 1980 to 345 MHz (and 300 to 60 W) after 50 readings, as a
  // GPU leaving a load does; at 2 ms that is well before the first judgement (two 0.5 s windows),
  // even on a loaded machine. The idle holds only once most of the earlier window lies after the
  // drop: at least 1.5 windows after it.
  PowerSampler sampler(device("sm_mhz=1980,power_mw=300000,throttle_after=50,throttle_mhz=345,"
                              "throttle_power_mw=60000,throttle_reasons=0x1"),
                       2ms);
  sampler.start();
  const Idle idle = wait_for_idle(sampler, 0.5, 10.0);
  sampler.stop();
  ASSERT_TRUE(idle.settled);
  EXPECT_DOUBLE_EQ(*idle.clock_mhz, 345.0);
  EXPECT_DOUBLE_EQ(*idle.power_w, 60.0);
  double drop = -1;
  for (const PowerSample& r : sampler.readings())
    if (drop < 0 && r.sm_clock_mhz == 345.0) drop = r.seconds;
  ASSERT_GE(drop, 0.0);
  EXPECT_GE(idle.seconds, drop + 1.5 * 0.5 - 0.02) << "the drop at " << drop << " s";
}

TEST_F(StandIn, TheIdleLimitEndsTheWait) {
  // Read every 300 ms, a 0.5 s window never holds the 5 readings a judgement needs; the limit
  // (0.1 s, raised to the two windows the rule compares) ends the wait.
  PowerSampler sampler(device("sm_mhz=345,power_mw=58000"), 300ms);
  sampler.start();
  const Idle idle = wait_for_idle(sampler, 0.5, 0.1);
  sampler.stop();
  EXPECT_FALSE(idle.settled);
  EXPECT_GE(idle.seconds, 1.0);
  EXPECT_FALSE(idle.clock_mhz);
  EXPECT_THROW(wait_for_idle(sampler, 0.0, 1.0), InvalidArgument);
}

PowerSample reading(double t, double mhz, double w) {
  PowerSample s;
  s.seconds = t;
  s.sm_clock_mhz = mhz;
  s.power_w = w;
  return s;
}

TEST(Trace, SlicesAreMediansOfTheirReadings) {
  // 4 s of readings every 0.1 s from t = 1 s: the clock 1980 MHz for the first second, then
  // 1300; the power 700 W, with a one-reading spike at 2.05 s.
  std::vector<PowerSample> r;
  for (int i = 0; i <= 40; ++i) {
    const double t = 1.0 + 0.1 * i;
    r.push_back(reading(t, t < 2.0 ? 1980 : 1300, 700));
  }
  r.push_back(reading(0.5, 100, 100));  // before the load: not in the trace
  r[11].power_w = 900;                  // t = 2.1
  const Trace t = trace_of(r, 1.0, 5.0, 4);
  EXPECT_DOUBLE_EQ(t.seconds, 4.0);
  ASSERT_EQ(t.clock_mhz.size(), 4u);
  EXPECT_DOUBLE_EQ(*t.clock_mhz[0], 1980.0);
  EXPECT_DOUBLE_EQ(*t.clock_mhz[1], 1300.0);
  EXPECT_DOUBLE_EQ(*t.power_w[1], 700.0);     // the spike is one of 10 readings: not the median
  EXPECT_DOUBLE_EQ(*t.clock_mhz[3], 1300.0);  // the last reading (t = 5 s) falls in the last slice
  // A slice no reading fell in stays empty; an empty span gives empty slices.
  const Trace sparse = trace_of(r, 1.0, 5.0, 100);
  EXPECT_FALSE(sparse.clock_mhz[1].has_value());
  EXPECT_TRUE(sparse.clock_mhz[0].has_value());
  EXPECT_EQ(trace_of(r, 5.0, 5.0).clock_mhz.size(), static_cast<std::size_t>(kTracePoints));
  EXPECT_FALSE(trace_of(r, 5.0, 5.0).clock_mhz[0].has_value());
}

std::uint64_t bit(std::string_view reason) {
  for (const ThrottleReason& r : throttle_reasons())
    if (r.name == reason) return r.bit;
  return 0;
}

TEST(ClockPolicy, TheRowNamesThePolicyAsFound) {
  PowerContext c;  // as-is, nothing known
  EXPECT_EQ(clock_policy_phrase(c, std::nullopt), "clocks as the driver sets them");
  c.app_sm_clock_mhz = "1410";
  c.app_sm_clock_default_mhz = "1755";
  EXPECT_EQ(clock_policy_phrase(c, 0),
            "application clocks 1410 MHz (default 1755), set before "
            "the run");
  c.app_sm_clock_mhz = "unknown";  // not a number: nothing to say about it
  EXPECT_EQ(clock_policy_phrase(c, 0), "clocks as the driver sets them");
  c.locked_sm_clock_mhz = "1980";
  c.clock_policy = "max";
  EXPECT_EQ(clock_policy_phrase(c, bit("sw_power_cap")),
            "SM clock locked at 1980 MHz by --clock-policy=max");
  c.locked_sm_clock_mhz = "tdp";
  c.clock_policy = "base";
  EXPECT_EQ(clock_policy_phrase(c, 0),
            "SM clock locked at the TDP (base) clock by "
            "--clock-policy=base");
  // A lock a user set before the run shows only as the reason bit while timing.
  EXPECT_EQ(clock_policy_phrase(PowerContext{}, bit("applications_clocks_setting")),
            "clocks as the driver sets them; held at an application or locked clock "
            "(applications_clocks_setting)");
}

TEST(Regime, Names) {
  EXPECT_EQ(name(Regime::burst), "burst");
  EXPECT_EQ(name(Regime::sustained), "sustained");
  EXPECT_EQ(name(Regime::standard), "standard");
}

}  // namespace
}  // namespace tcbench::bench
