// Clocks, power, temperature and throttle reasons while a benchmark is timed: a background thread
// reads them through NVML every 10 ms, and summarize() turns a window's readings into the
// numbers a result file holds (MHz, W, J, degrees C, a reason mask).
//
// Power is the total-energy counter's delta over the window divided by its length when the
// counter moved (nvmlDeviceGetTotalEnergyConsumption, Volta and newer): it integrates every
// microsecond, whereas nvmlDeviceGetPowerUsage is itself an average the driver updates on its own
// schedule (one second on many recent boards). Without the counter, the mean of the power
// readings stands in.
#pragma once

#include "tcbench/nvml.hpp"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace tcbench {

inline constexpr std::chrono::milliseconds kPowerSamplePeriod{10};

// One reading; a quantity NVML did not answer is empty.
struct PowerSample {
  double seconds = 0;  // since the window opened
  std::optional<double> sm_clock_mhz, power_w, temp_c;
  std::optional<std::uint64_t> reasons;
};

struct PowerSummary {
  std::size_t samples = 0;
  double seconds = 0;                  // length of the window
  std::optional<double> sm_clock_mhz;  // median of the clock readings
  std::optional<double> power_w;       // see the file comment
  bool power_from_energy = false;      // true: from the energy counter's delta
  std::optional<double> temp_c_max;
  std::optional<std::uint64_t> throttle;  // union of the reasons read; empty if never read
  // Why a quantity is absent or how it was replaced, one sentence each ("nvmlDeviceGetPowerUsage
  // returned NVML_ERROR_NOT_SUPPORTED").
  std::vector<std::string> notes;
};

// NVML's units: milliwatts and millijoules.
constexpr double watts_from_milliwatts(unsigned long long mw) {
  return static_cast<double>(mw) / 1000.0;
}
constexpr double joules_from_millijoules(unsigned long long mj) {
  return static_cast<double>(mj) / 1000.0;
}
// The energy counter's delta in joules; empty when it did not move forward (a driver reload
// resets it; a window shorter than its update interval sees no change).
std::optional<double> energy_delta_joules(unsigned long long start_mj, unsigned long long end_mj);

// The window's numbers: the clock's median (compute_stats, the one median), the hottest
// temperature, the union of the reasons, and the power (energy / seconds when `energy_joules` is
// there, else the mean of the power readings).
PowerSummary summarize(std::span<const PowerSample> samples, std::optional<double> energy_joules,
                       double window_seconds);

// Reads `device` on a background thread between start() and stop().
class PowerSampler {
 public:
  explicit PowerSampler(nvml::Device device, std::chrono::microseconds period = kPowerSamplePeriod);
  ~PowerSampler();
  PowerSampler(const PowerSampler&) = delete;
  PowerSampler& operator=(const PowerSampler&) = delete;

  // Reads the energy counter, then starts the thread (which reads once at once, then every
  // period). Throws InvalidArgument when already running.
  void start();
  // Stops and joins the thread, reads the energy counter again, summarizes.
  PowerSummary stop();
  // The readings taken so far (a copy), while running and after stop(): what the burst and
  // sustained windows judge the idle and the steady state from.
  std::vector<PowerSample> readings() const;
  // When start() began: PowerSample::seconds counts from here.
  std::chrono::steady_clock::time_point started() const { return start_; }

 private:
  void loop();
  PowerSample read(double seconds);

  nvml::Device device_;
  std::chrono::microseconds period_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point start_;
  nvml::Result<unsigned long long> energy_start_;
  std::vector<PowerSample> samples_;
  // The last failure of each quantity (the sampler thread writes them, stop() reads them).
  std::optional<nvml::Status> clock_failure_, power_failure_, temp_failure_, reasons_failure_;
};

}  // namespace tcbench
