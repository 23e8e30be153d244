#include "tcbench/bench/regime.hpp"

#include "tcbench/environment.hpp"
#include "tcbench/numerics/order_statistics.hpp"
#include "tcbench/numerics/steady_state.hpp"
#include "tcbench/schema.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

namespace tcbench::bench {
namespace {

using Clock = std::chrono::steady_clock;
namespace tn = numerics;

double since(Clock::time_point origin) {
  return std::chrono::duration<double>(Clock::now() - origin).count();
}

std::string fmt(const char* format, double a, double b = 0, double c = 0, double d = 0) {
  char buf[200];
  std::snprintf(buf, sizeof buf, format, a, b, c, d);
  return buf;
}

// The sampler's readings from `from` seconds on, as the rule reads them: seconds since `from`.
std::vector<tn::ClockPowerReading> readings_since(const std::vector<PowerSample>& all,
                                                  double from) {
  std::vector<tn::ClockPowerReading> out;
  for (const PowerSample& s : all)
    if (s.seconds >= from) out.push_back({s.seconds - from, s.sm_clock_mhz, s.power_w});
  return out;
}

std::vector<PowerSample> readings_between(const std::vector<PowerSample>& all, double from,
                                          double to) {
  std::vector<PowerSample> out;
  for (const PowerSample& s : all)
    if (s.seconds >= from && s.seconds <= to) out.push_back(s);
  return out;
}

// The energy counter in joules, when NVML has it.
std::optional<double> energy_joules(const nvml::Device& device) {
  const nvml::Result<unsigned long long> e = device.energy_mj();
  if (!e.ok()) return std::nullopt;
  return joules_from_millijoules(*e.value);
}

std::optional<double> energy_between(std::optional<double> start, std::optional<double> end) {
  if (!start || !end || !(*end > *start)) return std::nullopt;
  return *end - *start;
}

// Seconds of one launch, from a few back to back (the queue depth and the burst's size).
double seconds_per_launch(cudaStream_t stream, const std::function<void(cudaStream_t)>& work) {
  Event start, stop;
  constexpr int kRuns = 3;
  start.record(stream);
  for (int i = 0; i < kRuns; ++i) work(stream);
  stop.record(stream);
  stop.synchronize();
  return std::max(1e-6, static_cast<double>(stop.elapsed_ms_since(start)) * 1e-3 / kRuns);
}

std::string idle_phrase(const Idle& idle) {
  std::string s = fmt("after %.1f s idle", idle.seconds);
  if (idle.clock_mhz) s += fmt(" at %.0f MHz", *idle.clock_mhz);
  if (idle.power_w) s += fmt(", %.0f W", *idle.power_w);
  if (!idle.settled)
    s += fmt(" (the clock and power were not flat within %g s: another process on the GPU?)",
             idle.seconds);
  return s;
}

}  // namespace

std::string_view name(Regime r) {
  switch (r) {
    case Regime::standard:
      return "standard";
    case Regime::burst:
      return "burst";
    case Regime::sustained:
      return "sustained";
  }
  return "?";
}

BackToBack::BackToBack(cudaStream_t stream, std::function<void(cudaStream_t)> work, int depth)
    : stream_(stream), work_(std::move(work)), depth_(std::max(depth, 1)) {
  events_.resize(static_cast<std::size_t>(depth_) + 1);
  events_[0].record(stream_);  // the start of launch 0
}

double BackToBack::next() {
  const std::size_t ring = events_.size();
  // Launch i ends at event (i + 1) % ring; the oldest unread start, completed_ % ring, is never
  // overwritten: at most depth_ = ring - 1 launches are in flight.
  while (launched_ - completed_ < static_cast<std::size_t>(depth_)) {
    work_(stream_);
    events_[(launched_ + 1) % ring].record(stream_);
    ++launched_;
  }
  const Event& end = events_[(completed_ + 1) % ring];
  end.synchronize();
  const double seconds =
      static_cast<double>(end.elapsed_ms_since(events_[completed_ % ring])) * 1e-3;
  ++completed_;
  return seconds;
}

void BackToBack::drain() {
  if (launched_ > completed_) events_[launched_ % events_.size()].synchronize();
  completed_ = launched_;
}

Idle wait_for_idle(const PowerSampler& sampler, double window_s, double limit_s) {
  tn::SteadyRule rule;
  rule.window_seconds = window_s;
  rule.limit_seconds = std::max(limit_s, 2 * window_s);
  if (auto why = rule.why_invalid()) throw InvalidArgument("wait_for_idle: " + *why);
  Idle idle;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::duration<double>(kCheckEverySeconds));
    idle.seconds = since(sampler.started());
    if (idle.seconds >= 2 * rule.window_seconds) {
      // No power limit: an idle GPU is far below it, so only "flat" can hold.
      const tn::SteadyCheck c = tn::check_steady(readings_since(sampler.readings(), 0.0),
                                                 idle.seconds, std::nullopt, rule);
      if (c.judged) {
        idle.clock_mhz = c.clock_mhz;
        idle.power_w = c.power_w;
      }
      if (c.steady) {
        idle.settled = true;
        return idle;
      }
    }
    if (idle.seconds >= rule.limit_seconds) return idle;
  }
}

Trace trace_of(std::span<const PowerSample> readings, double from, double to, int points) {
  Trace t;
  t.seconds = to - from;
  const auto n = static_cast<std::size_t>(std::max(points, 1));
  t.clock_mhz.assign(n, std::nullopt);
  t.power_w.assign(n, std::nullopt);
  if (!(t.seconds > 0)) return t;
  std::vector<std::vector<double>> clocks(n), powers(n);
  for (const PowerSample& s : readings) {
    if (s.seconds < from || s.seconds > to) continue;
    const auto i = std::min(
        n - 1, static_cast<std::size_t>((s.seconds - from) / t.seconds * static_cast<double>(n)));
    if (s.sm_clock_mhz) clocks[i].push_back(*s.sm_clock_mhz);
    if (s.power_w) powers[i].push_back(*s.power_w);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!clocks[i].empty()) t.clock_mhz[i] = tn::median(clocks[i]);
    if (!powers[i].empty()) t.power_w[i] = tn::median(powers[i]);
  }
  return t;
}

std::string clock_policy_phrase(const PowerContext& c, std::optional<std::uint64_t> reasons) {
  std::string s;
  if (c.locked_sm_clock_mhz != "none")
    s = "SM clock locked at " +
        (c.locked_sm_clock_mhz == "tdp" ? std::string("the TDP (base) clock")
                                        : c.locked_sm_clock_mhz + " MHz") +
        " by --clock-policy=" + c.clock_policy;
  else if (c.app_sm_clock_mhz != c.app_sm_clock_default_mhz &&
           c.app_sm_clock_mhz.find_first_not_of("0123456789") == std::string::npos &&
           c.app_sm_clock_default_mhz.find_first_not_of("0123456789") == std::string::npos)
    s = "application clocks " + c.app_sm_clock_mhz + " MHz (default " + c.app_sm_clock_default_mhz +
        "), set before the run";
  else
    s = "clocks as the driver sets them";
  // A lock a user set (nvidia-smi -lgc) is not readable through NVML; the reason bit says the
  // clock was held at an application or locked setting while timing.
  for (const ThrottleReason& r : throttle_reasons())
    if (reasons && (*reasons & r.bit) && r.name == "applications_clocks_setting")
      s += "; held at an application or locked clock (applications_clocks_setting)";
  return s;
}

RegimeWindow take_regime_window(const Env& env, const std::function<void(cudaStream_t)>& work,
                                Regime regime) {
  if (regime == Regime::standard)
    throw InvalidArgument("take_regime_window takes a burst or sustained window");
  const DeviceInfo& dev = env.device();
  if (!dev.nvml)
    throw Skipped(
        "burst and sustained rows judge the idle and the steady state from NVML's SM "
        "clock and power, and NVML is " +
        dev.power.nvml);
  const nvml::Device& nvml = *dev.nvml;
  if (const auto clock = nvml.sm_clock_mhz(); !clock.ok())
    throw Skipped(
        "burst and sustained rows judge the idle and the steady state from NVML's SM "
        "clock, which it does not read here (" +
        clock.status.describe() + ")");
  std::optional<double> limit_w;
  if (const auto l = nvml.enforced_power_limit_mw(); l.ok())
    limit_w = watts_from_milliwatts(*l.value);

  const cudaStream_t stream = env.stream();
  const double per_launch = seconds_per_launch(stream, work);
  const double limit_s = environment::sustained_limit_s();

  RegimeWindow out;
  RegimeReport& r = out.report;
  r.regime = regime;
  PowerSampler sampler(nvml);
  sampler.start();
  r.idle =
      wait_for_idle(sampler, kIdleWindowSeconds, std::min(environment::idle_limit_s(), limit_s));

  std::vector<double> times;
  double window_from = 0, window_to = 0;  // sampler seconds
  std::optional<double> energy_from, energy_to;
  if (regime == Regime::burst) {
    // One wake-up launch, then the timed ones, all enqueued at once: back to back, from idle.
    const int timed =
        std::clamp(static_cast<int>(std::ceil(kBurstSeconds / per_launch)), kBurstLaunches, 100000);
    std::vector<Event> ends(static_cast<std::size_t>(timed) + 1);
    energy_from = energy_joules(nvml);
    window_from = since(sampler.started());
    work(stream);  // the wake-up
    ends[0].record(stream);
    for (std::size_t i = 1; i < ends.size(); ++i) {
      work(stream);
      ends[i].record(stream);
    }
    ends.back().synchronize();
    window_to = since(sampler.started());
    energy_to = energy_joules(nvml);
    for (std::size_t i = 1; i < ends.size(); ++i)
      times.push_back(static_cast<double>(ends[i].elapsed_ms_since(ends[i - 1])) * 1e-3);
  } else {
    tn::SteadyRule rule;
    rule.limit_seconds = limit_s;
    r.limit_s = limit_s;
    const int depth = std::clamp(static_cast<int>(std::ceil(kQueueSeconds / per_launch)), 2, 256);
    BackToBack load(stream, work, depth);
    const double load_from = since(sampler.started());
    tn::SteadyCheck check;
    double next_check = load_from + kCheckEverySeconds;
    for (;;) {
      (void)load.next();
      const double now = since(sampler.started());
      if (now < next_check) continue;
      next_check = now + kCheckEverySeconds;
      const double t = now - load_from;
      if (t >= 2 * rule.window_seconds) {
        check = tn::check_steady(readings_since(sampler.readings(), load_from), t, limit_w, rule);
        if (check.steady) break;
      }
      if (t >= rule.limit_seconds) break;
    }
    window_from = since(sampler.started());
    r.settle_s = window_from - load_from;
    r.steady = check.steady;
    r.steady_sentence = tn::steady_sentence(check, rule, limit_w);
    energy_from = energy_joules(nvml);
    // The timed window: the launches that end in the next 2 s (at least 10), back to back.
    while (since(sampler.started()) - window_from < rule.window_seconds ||
           times.size() < static_cast<std::size_t>(kBurstLaunches))
      times.push_back(load.next());
    window_to = since(sampler.started());
    energy_to = energy_joules(nvml);
    load.drain();
    r.trace = trace_of(sampler.readings(), load_from, window_to);
  }
  (void)sampler.stop();
  const std::vector<PowerSample> window =
      readings_between(sampler.readings(), window_from, window_to);
  out.seconds = compute_stats(times);
  out.power = summarize(window, energy_between(energy_from, energy_to), window_to - window_from);
  r.launches = static_cast<int>(times.size());
  r.window_s = window_to - window_from;

  const std::string policy = clock_policy_phrase(dev.power, out.power.throttle);
  const std::string reasons =
      out.power.throttle ? "reasons: " + throttle_names(*out.power.throttle) : "reasons: not read";
  if (regime == Regime::burst) {
    r.sentence = fmt("burst: %.0f launches (%.1f ms) ", r.launches, 1e3 * r.window_s) +
                 idle_phrase(r.idle) + "; " + policy + "; " + reasons;
  } else {
    r.sentence =
        (r.steady ? fmt("sustained: %.1f s timed after %.1f s of load (", r.window_s, r.settle_s)
                  : fmt("sustained: NO STEADY STATE, %.1f s timed after %.1f s of load "
                        "anyway (",
                        r.window_s, r.settle_s)) +
        r.steady_sentence + "), " + idle_phrase(r.idle) + "; " + policy + "; " + reasons;
  }
  return out;
}

}  // namespace tcbench::bench
