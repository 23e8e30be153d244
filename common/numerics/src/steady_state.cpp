#include "tcbench/numerics/steady_state.hpp"

#include "tcbench/numerics/order_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

namespace tcbench::numerics {
namespace {

std::string fmt(const char* format, double a, double b = 0, double c = 0, double d = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, format, a, b, c, d);
  return buf;
}

// The readings with seconds in (from, to]: `readings` is ordered by time.
std::span<const ClockPowerReading> between(std::span<const ClockPowerReading> readings, double from,
                                           double to) {
  const auto first =
      std::partition_point(readings.begin(), readings.end(),
                           [&](const ClockPowerReading& r) { return r.seconds <= from; });
  const auto last = std::partition_point(
      first, readings.end(), [&](const ClockPowerReading& r) { return r.seconds <= to; });
  return {first, last};
}

struct WindowValues {
  std::vector<double> clocks, powers;
};

WindowValues values_of(std::span<const ClockPowerReading> window) {
  WindowValues v;
  for (const ClockPowerReading& r : window) {
    if (r.sm_clock_mhz && std::isfinite(*r.sm_clock_mhz)) v.clocks.push_back(*r.sm_clock_mhz);
    if (r.power_w && std::isfinite(*r.power_w)) v.powers.push_back(*r.power_w);
  }
  return v;
}

double relative_change(double now, double before) {
  return before != 0 ? std::fabs(now - before) / std::fabs(before) : INFINITY;
}

void require_valid(const SteadyRule& rule) {
  if (auto why = rule.why_invalid()) throw std::invalid_argument("steady-state rule: " + *why);
}

void require_ordered(std::span<const ClockPowerReading> readings) {
  const auto bad = std::adjacent_find(
      readings.begin(), readings.end(), [](const ClockPowerReading& a, const ClockPowerReading& b) {
        return !(b.seconds >= a.seconds);  // NaN times are out of order too
      });
  if (bad != readings.end())
    throw std::invalid_argument(
        fmt("steady-state rule: readings out of time order (%.3f s, then "
            "%.3f s)",
            bad->seconds, (bad + 1)->seconds));
}

}  // namespace

std::optional<std::string> SteadyRule::why_invalid() const {
  if (!(window_seconds > 0) || !std::isfinite(window_seconds))
    return fmt("the window must be a positive number of seconds, not %g", window_seconds);
  if (!(clock_tolerance >= 0) || !(power_tolerance >= 0))
    return fmt("the tolerances must be >= 0, not %g (clock) and %g (power)", clock_tolerance,
               power_tolerance);
  if (!(limit_seconds >= 2 * window_seconds))
    return fmt("the limit, %g s, is shorter than the two %g s windows the rule compares",
               limit_seconds, window_seconds);
  if (min_readings < 1) return std::string("a window needs at least one reading");
  return std::nullopt;
}

std::string_view name(PowerCondition c) {
  switch (c) {
    case PowerCondition::at_limit:
      return "at_limit";
    case PowerCondition::flat:
      return "flat";
    case PowerCondition::not_read:
      return "not_read";
    case PowerCondition::moving:
      return "moving";
  }
  return "?";
}

namespace {

// check_steady on a valid rule and ordered readings.
SteadyCheck check(std::span<const ClockPowerReading> readings, double t,
                  std::optional<double> power_limit_w, const SteadyRule& rule) {
  SteadyCheck c;
  c.at_seconds = t;
  const double w = rule.window_seconds;
  const WindowValues before = values_of(between(readings, t - 2 * w, t - w));
  const WindowValues last = values_of(between(readings, t - w, t));
  if (before.clocks.size() < rule.min_readings || last.clocks.size() < rule.min_readings) {
    c.why_not =
        fmt("fewer than %.0f SM clock readings in a %g s window (%.0f, then %.0f)",
            static_cast<double>(rule.min_readings), w, static_cast<double>(before.clocks.size()),
            static_cast<double>(last.clocks.size()));
    return c;
  }
  c.judged = true;
  c.clock_before_mhz = median(before.clocks);
  c.clock_mhz = median(last.clocks);
  const double clock_change = relative_change(c.clock_mhz, c.clock_before_mhz);
  const bool clock_ok = clock_change <= rule.clock_tolerance;

  if (before.powers.size() >= rule.min_readings && last.powers.size() >= rule.min_readings) {
    c.power_before_w = median(before.powers);
    c.power_w = median(last.powers);
    if (power_limit_w && *power_limit_w > 0 &&
        relative_change(*c.power_w, *power_limit_w) <= rule.power_tolerance)
      c.power = PowerCondition::at_limit;
    else if (relative_change(*c.power_w, *c.power_before_w) <= rule.power_tolerance)
      c.power = PowerCondition::flat;
    else
      c.power = PowerCondition::moving;
  }
  c.steady = clock_ok && c.power != PowerCondition::moving;
  if (!clock_ok) {
    c.why_not =
        fmt("the SM clock's median moved %.1f %% between the last two %g s windows "
            "(%.0f -> %.0f MHz)",
            100 * clock_change, w, c.clock_before_mhz, c.clock_mhz);
  } else if (c.power == PowerCondition::moving) {
    c.why_not =
        fmt("the power's median moved %.1f %% between the last two %g s windows "
            "(%.0f -> %.0f W)",
            100 * relative_change(*c.power_w, *c.power_before_w), w, *c.power_before_w, *c.power_w);
    if (power_limit_w && *power_limit_w > 0)
      c.why_not += fmt(", %.1f %% from the %.0f W limit",
                       100 * relative_change(*c.power_w, *power_limit_w), *power_limit_w);
  }
  return c;
}

}  // namespace

SteadyCheck check_steady(std::span<const ClockPowerReading> readings, double t,
                         std::optional<double> power_limit_w, const SteadyRule& rule) {
  require_valid(rule);
  require_ordered(readings);
  return check(readings, t, power_limit_w, rule);
}

std::string steady_sentence(const SteadyCheck& c, const SteadyRule& rule,
                            std::optional<double> power_limit_w) {
  if (!c.steady) {
    const std::string why = c.why_not.empty() ? "not judged" : c.why_not;
    return fmt("no steady state within %g s: ", rule.limit_seconds) + why;
  }
  std::string s =
      fmt("steady after %.1f s: the SM clock's median %.0f MHz is within %g %% of the "
          "%g s before",
          c.at_seconds, c.clock_mhz, 100 * rule.clock_tolerance, rule.window_seconds);
  switch (c.power) {
    case PowerCondition::at_limit:
      s += fmt(", the power %.0f W at the %.0f W limit", *c.power_w, power_limit_w.value_or(0));
      break;
    case PowerCondition::flat:
      s += fmt(", the power flat at %.0f W", *c.power_w);
      break;
    case PowerCondition::not_read:
      s += " (NVML read no power: the clock alone decided)";
      break;
    case PowerCondition::moving:
      break;
  }
  return s;
}

SteadyVerdict find_steady(std::span<const ClockPowerReading> readings,
                          std::optional<double> power_limit_w, const SteadyRule& rule) {
  require_valid(rule);
  require_ordered(readings);
  SteadyVerdict v;
  const double first_moment = 2 * rule.window_seconds;
  for (std::size_t i = 0; i < readings.size(); ++i) {
    const double t = readings[i].seconds;
    if (t < first_moment) continue;
    if (t > rule.limit_seconds) break;
    if (i + 1 < readings.size() && readings[i + 1].seconds == t) continue;  // judge t once
    // Only the readings up to t: a moment is judged on what NVML had said by then.
    SteadyCheck c = check(readings.first(i + 1), t, power_limit_w, rule);
    if (!c.judged) {
      if (!v.check.judged) v.check = c;  // keep the first reason until a moment is judged
      continue;
    }
    v.at_seconds = t;
    v.check = std::move(c);
    if (v.check.steady) {
      v.steady = true;
      break;
    }
  }
  v.sentence = steady_sentence(v.check, rule, power_limit_w);
  // Readings that end before the limit: say how far they went, not "within the limit".
  const double read = readings.empty() ? 0 : readings.back().seconds;
  if (!v.steady && read < rule.limit_seconds)
    v.sentence =
        fmt("no steady state in the %.1f s read (the limit is %g s): ", read, rule.limit_seconds) +
        (v.check.why_not.empty() ? "not judged" : v.check.why_not);
  return v;
}

}  // namespace tcbench::numerics
