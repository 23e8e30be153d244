// When a GPU under constant load has reached its steady state, judged from the SM clock and the
// board power NVML reads while it runs (docs/methodology.md, "Burst and sustained").
//
// A GPU that starts a long run of GEMMs from idle boosts first; then the power limiter (and, in
// a poorly cooled box, temperature) pulls the clock down until the board holds its cap. Published
// example: cuBLAS BF16/FP8 GEMMs hold an H200's 700 W cap at about 1.2-1.4 GHz against a 1980 MHz
// boost (tile-ai/TileOPs, src/tileops/perf/profiles/h200.yaml and PR #1980). The rule below says
// when that settling is over, so that a "sustained" figure is timed after it:
//
//   at a moment t, with the two windows W1 = (t - 2w, t - w] and W2 = (t - w, t] (w = 2 s):
//   clock   |median clock(W2) - median clock(W1)| <= 1 % of median clock(W1), and
//   power   median power(W2) within 2 % of the enforced power limit (the board holds its cap),
//           or |median power(W2) - median power(W1)| <= 2 % of median power(W1) (flat: a GPU
//           below its cap, held by locked clocks or its own maximum clock).
//
// Medians make a one-reading spike (a clock dip, a power blip) irrelevant: it moves a window's
// median by at most one rank. A window with fewer than min_readings clock readings is not judged.
// Past limit_seconds the answer is "no steady state within N s". An idle GPU settles by the same
// rule with no limit (the power flat), which is how a burst row waits for idle.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace tcbench::numerics {

// One NVML reading: seconds since the load (or the idle) began; an unanswered quantity is empty.
struct ClockPowerReading {
  double seconds = 0;
  std::optional<double> sm_clock_mhz;
  std::optional<double> power_w;
};

struct SteadyRule {
  double window_seconds = 2.0;    // w: each of the two windows compared
  double clock_tolerance = 0.01;  // relative, between the windows' median clocks
  double power_tolerance = 0.02;  // relative, to the limit or between the windows' median powers
  double limit_seconds = 60.0;    // no steady state within this long: the rule gives up
  std::size_t min_readings = 5;   // clock readings per window for a judgement

  // Why the rule cannot be applied (a non-positive window, a negative tolerance, a limit shorter
  // than the two windows), one sentence; nullopt when it can.
  std::optional<std::string> why_invalid() const;
};

// How the power condition held (or why it was not asked).
enum class PowerCondition {
  at_limit,  // within the tolerance of the enforced limit
  flat,      // within the tolerance of the window before
  not_read,  // no power readings: the clock alone decided
  moving,    // neither: not steady
};
std::string_view name(PowerCondition c);

// The rule at one moment.
struct SteadyCheck {
  double at_seconds = 0;  // t, the end of the last window
  bool judged = false;    // both windows held min_readings clock readings
  bool steady = false;
  double clock_mhz = 0, clock_before_mhz = 0;     // the medians of W2 and W1
  std::optional<double> power_w, power_before_w;  // the same for power
  PowerCondition power = PowerCondition::not_read;
  std::string why_not;  // one clause when not steady: "the SM clock moved 2.3 % (1318 -> 1288 MHz)"
};

// The rule at moment t over `readings` (ordered by time; readings outside the two windows are
// not looked at). Throws std::invalid_argument for an invalid rule or readings out of order.
SteadyCheck check_steady(std::span<const ClockPowerReading> readings, double t,
                         std::optional<double> power_limit_w, const SteadyRule& rule);

struct SteadyVerdict {
  bool steady = false;
  // When the rule first held; without a steady state, the last moment judged (0 when none was).
  double at_seconds = 0;
  SteadyCheck check;     // the check at that moment
  std::string sentence;  // "steady after 6.2 s: ..." or "no steady state within 60 s: ..."
};

// The first moment (a reading's time, from 2w on and up to limit_seconds) at which the rule holds.
SteadyVerdict find_steady(std::span<const ClockPowerReading> readings,
                          std::optional<double> power_limit_w, const SteadyRule& rule);

// The verdict's sentence for a check at the end of a search (steady or given up at the limit).
std::string steady_sentence(const SteadyCheck& check, const SteadyRule& rule,
                            std::optional<double> power_limit_w);

}  // namespace tcbench::numerics
