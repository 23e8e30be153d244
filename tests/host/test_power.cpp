// Clocks, power and the clock policy without a GPU: the statistics and unit conversions of a
// sampling window, the reason decoding, NVML's status names, and the loader, the sampler, the run
// context and the clock lock driven through a stand-in NVML (tests/stand_in/fake_nvml.cpp)
// loaded by the same dlopen path as the driver's (TCBENCH_NVML_LIBRARY).
#include "tcbench/clock_policy.hpp"
#include "tcbench/device_info.hpp"
#include "tcbench/nvml.hpp"
#include "tcbench/power.hpp"
#include "tcbench/schema.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

namespace tcbench {
namespace {

using namespace std::chrono_literals;

// ---------------------------------------------------------------------------------------------
// Pure: units, statistics, reasons, status names

TEST(PowerUnits, MilliwattsAndMillijoules) {
  EXPECT_DOUBLE_EQ(watts_from_milliwatts(350000), 350.0);
  EXPECT_DOUBLE_EQ(watts_from_milliwatts(1), 0.001);
  EXPECT_DOUBLE_EQ(joules_from_millijoules(1500), 1.5);
  EXPECT_DOUBLE_EQ(*energy_delta_joules(1000, 71000), 70.0);
  // A counter that did not move (a window shorter than its update) or went back (driver
  // reload) gives no energy, never zero or a wrapped-around number.
  EXPECT_FALSE(energy_delta_joules(5000, 5000));
  EXPECT_FALSE(energy_delta_joules(5000, 10));
}

PowerSample at(double t, double mhz, double watts, double temp, std::uint64_t reasons) {
  return PowerSample{t, mhz, watts, temp, reasons};
}

TEST(PowerSummary, MedianClockHottestTemperatureUnionOfReasonsEnergyPower) {
  // A run that starts throttling halfway: 2 steady readings, then 3 throttled ones.
  const std::vector<PowerSample> s = {at(0.00, 1980, 340, 60, 0x0), at(0.01, 1980, 350, 61, 0x4),
                                      at(0.02, 1500, 250, 85, 0x8), at(0.03, 1500, 250, 88, 0x8),
                                      at(0.04, 1500, 260, 87, 0x8)};
  const PowerSummary p = summarize(s, 14.0, 0.05);
  EXPECT_EQ(p.samples, 5u);
  EXPECT_DOUBLE_EQ(*p.sm_clock_mhz, 1500.0);  // numpy.median([1980, 1980, 1500, 1500, 1500])
  EXPECT_DOUBLE_EQ(*p.temp_c_max, 88.0);
  EXPECT_EQ(*p.throttle, 0x4u | 0x8u);
  EXPECT_TRUE(p.power_from_energy);
  EXPECT_DOUBLE_EQ(*p.power_w, 280.0);  // 14 J / 0.05 s
  // Without the energy counter: the mean of the power readings.
  const PowerSummary q = summarize(s, std::nullopt, 0.05);
  EXPECT_FALSE(q.power_from_energy);
  EXPECT_DOUBLE_EQ(*q.power_w, (340 + 350 + 250 + 250 + 260) / 5.0);
  // An even count takes the mean of the two middle readings, as numpy.median does.
  EXPECT_DOUBLE_EQ(*summarize(std::vector{s[0], s[2]}, std::nullopt, 0.02).sm_clock_mhz, 1740.0);
}

TEST(PowerSummary, WhatNvmlDidNotAnswerStaysAbsent) {
  const PowerSummary none = summarize({}, std::nullopt, 0.1);
  EXPECT_EQ(none.samples, 0u);
  EXPECT_FALSE(none.sm_clock_mhz || none.power_w || none.temp_c_max || none.throttle);
  PowerSample only_clock;
  only_clock.sm_clock_mhz = 1410;
  const PowerSummary p = summarize(std::vector{only_clock}, std::nullopt, 0.1);
  EXPECT_DOUBLE_EQ(*p.sm_clock_mhz, 1410.0);
  EXPECT_FALSE(p.power_w || p.temp_c_max || p.throttle);
  // A zero energy delta (the counter did not move) does not make a 0 W reading.
  EXPECT_FALSE(summarize(std::vector{only_clock}, 0.0, 0.1).power_w);
}

TEST(ThrottleReasons, NamesOfAMask) {
  EXPECT_EQ(throttle_names(0), "none");
  EXPECT_EQ(throttle_names(0x4 | 0x8), "sw_power_cap,hw_slowdown");
  EXPECT_EQ(throttle_names(0x20 | 0x40), "sw_thermal,hw_thermal");
  EXPECT_EQ(throttle_names(std::uint64_t{1} << 20), "bit_20");  // a reason newer than nvml.h
  EXPECT_EQ(throttle_reason_table().rfind("gpu_idle:0x1,applications_clocks_setting:0x2,", 0), 0u);
  // One name per bit, no name twice (the bit values are checked against nvidia-ml-py by
  // tests/scripts/test_power.py).
  std::set<std::string_view> names;
  for (const ThrottleReason& r : throttle_reasons()) EXPECT_TRUE(names.insert(r.name).second);
}

TEST(NvmlStatus, NamedAsTheHeaderNamesThem) {
  EXPECT_EQ(nvml::status_name(0), "NVML_SUCCESS");
  EXPECT_EQ(nvml::status_name(4), "NVML_ERROR_NO_PERMISSION");
  EXPECT_EQ(nvml::status_name(999), "NVML_ERROR_UNKNOWN");
  EXPECT_EQ(nvml::status_name(12345), "NVML_ERROR_12345");
  const nvml::Status s{3, "nvmlDeviceGetPowerUsage"};
  EXPECT_TRUE(s.not_supported());
  EXPECT_EQ(s.describe(), "nvmlDeviceGetPowerUsage returned NVML_ERROR_NOT_SUPPORTED");
  EXPECT_EQ((nvml::Status{13, "nvmlDeviceGetTotalEnergyConsumption"}.describe()),
            "this NVML has no nvmlDeviceGetTotalEnergyConsumption");
}

TEST(ClockPolicyWords, ParseAndName) {
  EXPECT_EQ(parse_clock_policy("as-is"), ClockPolicy::as_is);
  EXPECT_EQ(parse_clock_policy("base"), ClockPolicy::base);
  EXPECT_EQ(parse_clock_policy("max"), ClockPolicy::max);
  EXPECT_FALSE(parse_clock_policy("asis"));
  EXPECT_FALSE(parse_clock_policy("MAX"));
  EXPECT_EQ(name(ClockPolicy::as_is), "as-is");
}

// ---------------------------------------------------------------------------------------------
// Through the stand-in NVML

// The stand-in as the process's NVML, playing `script`; its change log in a fresh file.
class StandIn : public ::testing::Test {
 protected:
  void use(const std::string& script, const char* library = TCBENCH_FAKE_NVML_PATH) {
    log_ = ::testing::TempDir() + "tcbench_fake_nvml_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".log";
    std::remove(log_.c_str());
    ::setenv("TCBENCH_NVML_LIBRARY", library, 1);
    ::setenv("TCBENCH_FAKE_NVML", script.c_str(), 1);
    ::setenv("TCBENCH_FAKE_NVML_LOG", log_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("TCBENCH_NVML_LIBRARY");
    ::unsetenv("TCBENCH_FAKE_NVML");
    ::unsetenv("TCBENCH_FAKE_NVML_LOG");
  }
  nvml::Device device() {
    const nvml::Library::Opened opened = nvml::Library::open();
    EXPECT_TRUE(opened.library) << opened.why_not;
    if (!opened.library) throw std::runtime_error(opened.why_not);
    nvml::Result<nvml::Device> d = opened.library->device_by_pci_bus_id("00000000:17:00.0");
    EXPECT_TRUE(d.ok()) << d.status.describe();
    return *d.value;
  }
  std::string changes() const {
    std::ifstream in(log_);
    std::stringstream all;
    all << in.rdbuf();
    return all.str();
  }
  // The stand-in's own count of SM-clock reads (not an NVML call).
  static unsigned long long clock_reads() {
    void* lib = dlopen(TCBENCH_FAKE_NVML_PATH, RTLD_NOW | RTLD_NOLOAD);
    if (lib == nullptr) return 0;
    auto fn =
        reinterpret_cast<unsigned long long (*)()>(dlsym(lib, "tcbench_fake_nvml_clock_reads"));
    const unsigned long long n = fn ? fn() : 0;
    dlclose(lib);
    return n;
  }
  std::string log_;
};

TEST_F(StandIn, TheOverrideChoosesTheLibrary) {
  use("");
  EXPECT_EQ(nvml::library_path(), TCBENCH_FAKE_NVML_PATH);
  ::unsetenv("TCBENCH_NVML_LIBRARY");
  EXPECT_EQ(nvml::library_path(), "libnvidia-ml.so.1");
}

TEST_F(StandIn, NvmlMissingEntirelyIsOneSentenceAndNothingFails) {
  use("", "/nonexistent/libnvidia-ml.so.1");
  const nvml::Library::Opened opened = nvml::Library::open();
  EXPECT_FALSE(opened.library);
  EXPECT_NE(opened.why_not.find("NVML cannot be loaded"), std::string::npos) << opened.why_not;
  EXPECT_NE(opened.why_not.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos);
  // The run context says why, once, and every NVML key is unknown rather than a made-up value.
  const PowerContext c = PowerContext::read(std::nullopt, "unavailable: " + opened.why_not);
  for (const auto& [key, value] : c.keys()) {
    if (key == "nvml")
      EXPECT_EQ(value.find("unavailable: NVML cannot be loaded"), 0u) << value;
    else if (key.find("clock_policy") == 0 || key == "locked_sm_clock_mhz" ||
             key == "throttle_reasons")
      continue;
    else
      EXPECT_EQ(value, "unknown (NVML unavailable)") << key;
  }
  // A clock policy without NVML stays as-is and says why.
  const ClockLock lock(ClockPolicy::max, std::nullopt, c.nvml);
  EXPECT_EQ(lock.in_force(), ClockPolicy::as_is);
  EXPECT_NE(lock.note().find("needs NVML"), std::string::npos) << lock.note();
}

TEST_F(StandIn, ALibraryThatIsNotNvmlOrCannotInitialize) {
  use("", "libm.so.6");
  const nvml::Library::Opened not_nvml = nvml::Library::open();
  EXPECT_FALSE(not_nvml.library);
  EXPECT_NE(not_nvml.why_not.find("has no nvmlInit_v2"), std::string::npos) << not_nvml.why_not;
  use("init=driver_not_loaded");
  const nvml::Library::Opened no_driver = nvml::Library::open();
  EXPECT_FALSE(no_driver.library);
  EXPECT_NE(no_driver.why_not.find("nvmlInit_v2 returned NVML_ERROR_DRIVER_NOT_LOADED"),
            std::string::npos)
      << no_driver.why_not;
}

TEST_F(StandIn, ContextKeysFromNvml) {
  use("power_limit_mw=500000,default_power_limit_mw=700000,app_mhz=1410,app_default_mhz=1755,"
      "max_mhz=1980,persistence=0,ecc=1,mig=unsupported");
  const nvml::Device dev = device();
  const PowerContext c = PowerContext::read(dev, "available (stand-in)");
  EXPECT_EQ(c.power_limit_w, "500.0");  // a cap below the default: what the context must show
  EXPECT_EQ(c.power_limit_default_w, "700.0");
  EXPECT_EQ(c.app_sm_clock_mhz, "1410");
  EXPECT_EQ(c.app_sm_clock_default_mhz, "1755");
  EXPECT_EQ(c.max_sm_clock_mhz, "1980");
  EXPECT_EQ(c.persistence_mode, "disabled");
  EXPECT_EQ(c.ecc_mode, "enabled");
  EXPECT_TRUE(dev.mig_enabled().status.not_supported());
  EXPECT_EQ(changes(), "init\n");  // reading changes nothing
}

PowerSummary sample_for(const nvml::Device& dev, std::chrono::milliseconds how_long) {
  PowerSampler sampler(dev);
  sampler.start();
  std::this_thread::sleep_for(how_long);
  return sampler.stop();
}

TEST_F(StandIn, SteadyRun) {
  use("sm_mhz=1980,power_mw=350000,temp_c=61,reasons=0");
  const PowerSummary p = sample_for(device(), 200ms);
  // Every 10 ms from the start: a loaded machine may delay readings, never add any.
  EXPECT_GE(p.seconds, 0.2);
  EXPECT_GE(p.samples, 5u);
  EXPECT_LE(static_cast<double>(p.samples), p.seconds / 0.010 + 1.0);
  EXPECT_DOUBLE_EQ(*p.sm_clock_mhz, 1980.0);
  EXPECT_DOUBLE_EQ(*p.temp_c_max, 61.0);
  EXPECT_EQ(*p.throttle, 0u);  // read, and clean: not the same as absent
  // The energy counter's delta over the window: the stand-in integrates 350 W over real time,
  // so only the microseconds between its clock and the sampler's differ (and 1 mJ rounding).
  EXPECT_TRUE(p.power_from_energy);
  EXPECT_NEAR(*p.power_w, 350.0, 350.0 * 0.005);
  EXPECT_TRUE(p.notes.empty()) << p.notes.front();
}

TEST_F(StandIn, ThrottlingStartsHalfway) {
  use("sm_mhz=1980,power_mw=350000,temp_c=70,throttle_after=10,throttle_mhz=1500,"
      "throttle_power_mw=250000,throttle_temp_c=88,throttle_reasons=0x8");
  PowerSampler sampler(device(), 2ms);
  sampler.start();
  // Wait for the stand-in's count, not the clock: 10 steady readings, then at least 15 throttled.
  for (int i = 0; i < 5000 && clock_reads() < 25; ++i) std::this_thread::sleep_for(1ms);
  const PowerSummary p = sampler.stop();
  ASSERT_GE(clock_reads(), 25u);
  EXPECT_EQ(p.samples, clock_reads());        // one clock read per sample
  EXPECT_DOUBLE_EQ(*p.sm_clock_mhz, 1500.0);  // most readings were throttled
  EXPECT_EQ(*p.throttle, 0x8u);
  EXPECT_EQ(throttle_names(*p.throttle), "hw_slowdown");
  EXPECT_DOUBLE_EQ(*p.temp_c_max, 88.0);
  EXPECT_GT(*p.power_w, 250.0 * 0.99);  // between the two phases' powers
  EXPECT_LT(*p.power_w, 350.0 * 1.01);
}

TEST_F(StandIn, ReadingsWhileTheSamplerRuns) {
  use("sm_mhz=1410,power_mw=250000");
  PowerSampler sampler(device(), 2ms);
  EXPECT_TRUE(sampler.readings().empty());
  sampler.start();
  const auto began = std::chrono::steady_clock::now();
  std::vector<PowerSample> r;
  for (int i = 0; i < 5000 && r.size() < 5; ++i) {
    std::this_thread::sleep_for(1ms);
    r = sampler.readings();  // a copy, taken while the thread appends
  }
  ASSERT_GE(r.size(), 5u);
  for (std::size_t i = 1; i < r.size(); ++i) EXPECT_GE(r[i].seconds, r[i - 1].seconds);
  EXPECT_DOUBLE_EQ(*r.back().sm_clock_mhz, 1410.0);
  // Reading times count from started(), which start() set before it returned.
  EXPECT_LE(sampler.started(), began);
  EXPECT_GE(r.front().seconds, 0.0);
  const PowerSummary p = sampler.stop();
  EXPECT_EQ(sampler.readings().size(), p.samples);  // after stop: every reading it summarized
}

TEST_F(StandIn, WithoutTheEnergyCounterPowerComesFromTheReadings) {
  use("power_mw=300000,energy=unsupported");
  const PowerSummary p = sample_for(device(), 50ms);
  EXPECT_FALSE(p.power_from_energy);
  EXPECT_DOUBLE_EQ(*p.power_w, 300.0);
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_EQ(p.notes[0],
            "nvmlDeviceGetTotalEnergyConsumption returned NVML_ERROR_NOT_SUPPORTED: power_w is "
            "the mean of the power readings");
}

TEST_F(StandIn, AnNvmlThatLacksTheEnergyEntryPoint) {
  use("power_mw=300000", TCBENCH_FAKE_NVML_NO_ENERGY_PATH);
  const PowerSummary p = sample_for(device(), 50ms);
  EXPECT_FALSE(p.power_from_energy);
  EXPECT_DOUBLE_EQ(*p.power_w, 300.0);
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_NE(p.notes[0].find("this NVML has no nvmlDeviceGetTotalEnergyConsumption"),
            std::string::npos)
      << p.notes[0];
}

TEST_F(StandIn, LockingRefusedWithoutRootRunsAsIs) {
  use("lock=no_permission,max_mhz=1980");
  const nvml::Device dev = device();
  {
    const ClockLock lock(ClockPolicy::max, dev);
    EXPECT_EQ(lock.requested(), ClockPolicy::max);
    EXPECT_EQ(lock.in_force(), ClockPolicy::as_is);
    EXPECT_EQ(lock.locked(), "none");
    EXPECT_EQ(lock.note(),
              "--clock-policy=max: locking GPU clocks needs root (nvmlDeviceSetGpuLockedClocks "
              "returned NVML_ERROR_NO_PERMISSION): the run stays as-is");
    PowerContext c;
    c.set_clock_policy(lock);
    EXPECT_EQ(c.clock_policy, "as-is");
    EXPECT_EQ(c.clock_policy_requested, "max");
  }
  EXPECT_EQ(changes(), "init\nlock 1980 1980 -> no_permission\n");  // nothing to undo
}

TEST_F(StandIn, ALockIsUndoneWhenItEnds) {
  use("max_mhz=1830");
  const nvml::Device dev = device();
  {
    const ClockLock lock(ClockPolicy::max, dev);
    EXPECT_EQ(lock.in_force(), ClockPolicy::max);
    EXPECT_EQ(lock.locked(), "1830");
  }
  {
    const ClockLock lock(ClockPolicy::base, dev);
    EXPECT_EQ(lock.in_force(), ClockPolicy::base);
    EXPECT_EQ(lock.locked(), "tdp");
  }
  { const ClockLock lock(ClockPolicy::as_is, dev); }  // touches nothing
  EXPECT_EQ(changes(), "init\nlock 1830 1830 -> ok\nreset\nlock tdp tdp -> ok\nreset\n");
}

TEST_F(StandIn, ALockIsUndoneWhenAnExceptionEndsTheRun) {
  use("");
  const nvml::Device dev = device();
  try {
    const ClockLock lock(ClockPolicy::base, dev);
    throw std::runtime_error("a benchmark failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(changes(), "init\nlock tdp tdp -> ok\nreset\n");
}

using StandInDeathTest = StandIn;

TEST_F(StandInDeathTest, ALockIsUndoneAtExit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  use("");
  EXPECT_EXIT(
      {
        new ClockLock(ClockPolicy::base, device());  // never destroyed: only exit() can restore
        std::exit(3);
      },
      ::testing::ExitedWithCode(3), "");
  // Restoring let go of the last handle, so NVML was shut down too.
  EXPECT_EQ(changes(), "init\nlock tdp tdp -> ok\nreset\nshutdown\n");
}

TEST_F(StandInDeathTest, ALockIsUndoneOnSigtermAndTheProcessStillDiesOfIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  use("");
  for (int sig : {SIGTERM, SIGINT}) {
    std::remove(log_.c_str());
    EXPECT_EXIT(
        {
          restore_clocks_on_signals();  // first, as the shared main does
          const ClockLock lock(ClockPolicy::max, device());
          ::kill(::getpid(), sig);  // process-directed, as from a shell or a CI runner
          for (;;) std::this_thread::sleep_for(1s);
        },
        ::testing::KilledBySignal(sig), "the SM clocks are unlocked again");
    EXPECT_EQ(changes(), "init\nlock 1980 1980 -> ok\nreset\nshutdown\n") << "signal " << sig;
  }
}

}  // namespace
}  // namespace tcbench
