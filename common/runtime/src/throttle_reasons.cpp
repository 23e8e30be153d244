// The clock-event reasons of schema.hpp (kThrottleReasons) against nvml.h's bits: the schema
// states them without nvml.h (the host studies and tcbench_studies have none), and this file,
// compiled with nvml.h, fails the build if one of them ever differs.
#include "tcbench/schema.hpp"

#include <nvml.h>

#include <cstdint>
#include <string_view>

namespace tcbench {
namespace {

constexpr bool has(std::string_view name, unsigned long long bit) {
  for (const ThrottleReason& r : kThrottleReasons)
    if (r.name == name) return r.bit == static_cast<std::uint64_t>(bit);
  return false;
}

// nvml.h spells some of these nvmlClocksThrottleReason* only (the hardware slowdowns), the rest
// nvmlClocksEventReason*; the values are the same family of bits.
static_assert(has("gpu_idle", nvmlClocksEventReasonGpuIdle));
static_assert(has("applications_clocks_setting", nvmlClocksEventReasonApplicationsClocksSetting));
static_assert(has("sw_power_cap", nvmlClocksEventReasonSwPowerCap));
static_assert(has("hw_slowdown", nvmlClocksThrottleReasonHwSlowdown));
static_assert(has("sync_boost", nvmlClocksEventReasonSyncBoost));
static_assert(has("sw_thermal", nvmlClocksEventReasonSwThermalSlowdown));
static_assert(has("hw_thermal", nvmlClocksThrottleReasonHwThermalSlowdown));
static_assert(has("hw_power_brake", nvmlClocksThrottleReasonHwPowerBrakeSlowdown));
static_assert(has("display_clock_setting", nvmlClocksEventReasonDisplayClockSetting));
static_assert(has("board_limit", nvmlClocksEventReasonBoardLimit));
static_assert(has("reliability", nvmlClocksEventReasonReliability));
// ... and nothing else: a reason a newer nvml.h adds to its mask fails here until it has a row.
constexpr std::uint64_t all_bits() {
  std::uint64_t out = 0;
  for (const ThrottleReason& r : kThrottleReasons) out |= r.bit;
  return out;
}
static_assert(all_bits() == static_cast<std::uint64_t>(nvmlClocksEventReasonAll));

}  // namespace
}  // namespace tcbench
