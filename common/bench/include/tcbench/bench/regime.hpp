// Burst and sustained windows: what a GEMM gets in its first moments after idle, and what a
// training job gets once the power cap (or the temperature) has pulled the clock down
// (docs/methodology.md, "Burst and sustained"). measure() takes one when MeasureOptions::regime
// asks for it; the harness owns it like every other window.
//
// Both start the same way: NVML is read every 10 ms while the GPU idles, until its SM clock and
// board power are flat (the steady-state rule of tcbench/numerics/steady_state.hpp on 1 s
// windows, no limit on the power), or TCBENCH_IDLE_LIMIT_S (10 s) or the sustained limit, the
// shorter, has passed. Then
//   burst      the first launches after that idle, back to back: one wake-up launch, then at
//              least 10 timed ones and at least 20 ms of them;
//   sustained  launches back to back (the GPU never waits for the host) until the rule holds on
//              2 s windows (clock within 1 %, power at the limit or flat), or the limit
//              TCBENCH_SUSTAINED_LIMIT_S (60 s) passes; then a timed window of 2 s.
// Every launch is timed between two events with no L2 flush between them: the work runs as a
// job runs it. The window's clock, power, temperature and reasons are NVML's over that window,
// and a sustained row carries its trace (the median clock and power of 50 slices of the load).
// Nothing changes a GPU setting: the clock policy is reported as found.
#pragma once

#include "tcbench/bench/env.hpp"
#include "tcbench/power.hpp"
#include "tcbench/timing.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcbench::bench {

enum class Regime : std::uint8_t {
  standard,   // warm-up, then samples (measure.hpp)
  burst,      // the first launches after idle
  sustained,  // back to back until the steady state, then a timed window
};
std::string_view name(Regime r);  // "standard", "burst", "sustained"

// The idle and the load of a burst or sustained window.
inline constexpr double kIdleWindowSeconds = 1.0;  // the idle rule's windows
inline constexpr int kBurstLaunches = 10;          // timed launches in a burst, at least
inline constexpr double kBurstSeconds = 0.020;     // ... and at least this much of them
inline constexpr double kQueueSeconds = 0.030;     // work kept queued ahead of the GPU
inline constexpr double kCheckEverySeconds = 0.1;  // how often the steady state is judged
inline constexpr int kTracePoints = 50;            // slices of a sustained row's trace

// The idle before the load: NVML's clock and power flat over two windows, or the limit.
struct Idle {
  double seconds = 0;                        // how long the GPU idled (since the sampler started)
  bool settled = false;                      // false: the limit passed first
  std::optional<double> clock_mhz, power_w;  // the last window's medians
};
// Waits while `sampler` (started) reads an idle GPU, judging every kCheckEverySeconds, until the
// steady-state rule on `window_s` windows (no power limit: the power flat) holds or `limit_s`
// passes (at least two windows).
Idle wait_for_idle(const PowerSampler& sampler, double window_s, double limit_s);

// A sustained row's trace: [from, to] seconds of the sampler in `points` slices, each the median
// of the readings in it (empty: none fell in it).
struct Trace {
  double seconds = 0;  // to - from
  std::vector<std::optional<double>> clock_mhz, power_w;
};
Trace trace_of(std::span<const PowerSample> readings, double from, double to,
               int points = kTracePoints);

struct RegimeReport {
  Regime regime = Regime::standard;
  Idle idle;
  int launches = 0;             // timed launches in the window
  double window_s = 0;          // the timed window's length
  bool steady = false;          // sustained: the steady-state rule held
  double settle_s = 0;          // sustained: load before the steady state (or the limit)
  double limit_s = 0;           // sustained: the limit it searched within
  std::string steady_sentence;  // sustained: the rule's verdict, one sentence
  // Sustained: the load from its first launch to the end of the timed window.
  Trace trace;
  // The row's label, one sentence: "burst: 21 launches (22.1 ms) after 3.1 s idle at 345 MHz,
  // 58 W; clocks as the driver sets them; reasons: none".
  std::string sentence;
};

struct RegimeWindow {
  SampleStats seconds;  // per launch
  PowerSummary power;   // NVML over the timed window
  RegimeReport report;
};

// Takes a burst or sustained window of `work` on env's stream. Throws Skipped, with the reason,
// where NVML cannot read the SM clock (the idle and the steady state are judged from it).
RegimeWindow take_regime_window(const Env& env, const std::function<void(cudaStream_t)>& work,
                                Regime regime);

// The clock policy as the run found it, for a row's label: "clocks as the driver sets them",
// "SM clock locked at 1980 MHz by --clock-policy=max", "application clocks 1410 MHz (default
// 1755)" (a user's setting), and a window that ran held at an application or locked clock.
std::string clock_policy_phrase(const PowerContext& context, std::optional<std::uint64_t> reasons);

// Kept in flight: `work` launched back to back on `stream` with an event after each launch, at
// most `depth` launches ahead of the one the host waits for, so the GPU never idles between
// them. Public for the harness test.
class BackToBack {
 public:
  BackToBack(cudaStream_t stream, std::function<void(cudaStream_t)> work, int depth);
  // Tops the queue up to `depth` launches, waits for the oldest, returns its time in seconds.
  double next();
  // Waits for the launches still in flight (their times are not returned).
  void drain();

 private:
  cudaStream_t stream_;
  std::function<void(cudaStream_t)> work_;
  int depth_;
  std::vector<Event> events_;  // a ring of depth + 1: event i % size ends launch i - 1
  std::size_t launched_ = 0, completed_ = 0;
};

}  // namespace tcbench::bench
