#include "tcbench/power.hpp"

#include "tcbench/error.hpp"
#include "tcbench/timing.hpp"

#include <algorithm>

namespace tcbench {

std::optional<double> energy_delta_joules(unsigned long long start_mj, unsigned long long end_mj) {
  if (end_mj <= start_mj) return std::nullopt;
  return joules_from_millijoules(end_mj - start_mj);
}

PowerSummary summarize(std::span<const PowerSample> samples, std::optional<double> energy_joules,
                       double window_seconds) {
  PowerSummary s;
  s.samples = samples.size();
  s.seconds = window_seconds;
  std::vector<double> clocks, powers;
  for (const PowerSample& p : samples) {
    if (p.sm_clock_mhz) clocks.push_back(*p.sm_clock_mhz);
    if (p.power_w) powers.push_back(*p.power_w);
    if (p.temp_c) s.temp_c_max = std::max(s.temp_c_max.value_or(*p.temp_c), *p.temp_c);
    if (p.reasons) s.throttle = s.throttle.value_or(0) | *p.reasons;
  }
  if (!clocks.empty()) s.sm_clock_mhz = compute_stats(clocks).median;
  if (energy_joules && *energy_joules > 0 && window_seconds > 0) {
    s.power_w = *energy_joules / window_seconds;
    s.power_from_energy = true;
  } else if (!powers.empty()) {
    s.power_w = compute_stats(powers).mean;
  }
  return s;
}

PowerSampler::PowerSampler(nvml::Device device, std::chrono::microseconds period)
    : device_(std::move(device)), period_(period) {
  if (period_ <= std::chrono::microseconds::zero())
    throw InvalidArgument("the power sampler's period must be positive");
}

PowerSampler::~PowerSampler() {
  if (thread_.joinable()) (void)stop();
}

PowerSample PowerSampler::read(double seconds) {
  PowerSample s;
  s.seconds = seconds;
  // Each quantity independently: a GPU that cannot report one still reports the others.
  if (const auto r = device_.sm_clock_mhz(); r.ok())
    s.sm_clock_mhz = *r.value;
  else
    clock_failure_ = r.status;
  if (const auto r = device_.power_mw(); r.ok())
    s.power_w = watts_from_milliwatts(*r.value);
  else
    power_failure_ = r.status;
  if (const auto r = device_.temperature_c(); r.ok())
    s.temp_c = *r.value;
  else
    temp_failure_ = r.status;
  if (const auto r = device_.clocks_event_reasons(); r.ok())
    s.reasons = *r.value;
  else
    reasons_failure_ = r.status;
  return s;
}

void PowerSampler::start() {
  if (thread_.joinable()) throw InvalidArgument("the power sampler is already running");
  samples_.clear();
  clock_failure_ = power_failure_ = temp_failure_ = reasons_failure_ = std::nullopt;
  stopping_ = false;
  energy_start_ = device_.energy_mj();
  start_ = std::chrono::steady_clock::now();
  thread_ = std::thread([this] { loop(); });
}

void PowerSampler::loop() {
  using clock = std::chrono::steady_clock;
  auto next = start_;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    const auto now = clock::now();
    PowerSample s = read(std::chrono::duration<double>(now - start_).count());
    lock.lock();
    samples_.push_back(s);
    // Every period from the start; after a slow read, the next one at once (never a burst).
    next = std::max(next + period_, clock::now());
    wake_.wait_until(lock, next, [this] { return stopping_; });
  }
}

std::vector<PowerSample> PowerSampler::readings() const {
  const std::lock_guard lock(mutex_);
  return samples_;
}

PowerSummary PowerSampler::stop() {
  if (!thread_.joinable()) return summarize({}, std::nullopt, 0.0);
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  const nvml::Result<unsigned long long> energy_end = device_.energy_mj();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();

  std::optional<double> joules;
  std::string energy_note;
  if (!energy_start_.ok() || !energy_end.ok()) {
    energy_note = (energy_start_.ok() ? energy_end : energy_start_).status.describe();
  } else {
    joules = energy_delta_joules(*energy_start_.value, *energy_end.value);
    if (!joules)
      energy_note = "the energy counter did not advance over the " +
                    std::to_string(static_cast<int>(seconds * 1e3)) + " ms window";
  }
  PowerSummary s = summarize(samples_, joules, seconds);
  auto note = [&](bool absent, const std::optional<nvml::Status>& why, const char* what) {
    if (absent && why) s.notes.push_back(why->describe() + ": no " + what);
  };
  note(!s.sm_clock_mhz, clock_failure_, "sm_clock_mhz");
  note(!s.temp_c_max, temp_failure_, "temp_c_max");
  note(!s.throttle, reasons_failure_, "throttle");
  if (!s.power_w) {
    note(true, power_failure_, "power_w");
  } else if (!s.power_from_energy && !energy_note.empty()) {
    s.notes.push_back(energy_note + ": power_w is the mean of the power readings");
  }
  return s;
}

}  // namespace tcbench
