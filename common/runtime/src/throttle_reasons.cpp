// The clock-event reasons of schema.hpp, with nvml.h's bit values (the macros, not copies).
#include "tcbench/schema.hpp"

#include <nvml.h>

#include <array>
#include <bit>
#include <cstdio>

namespace tcbench {
namespace {

constexpr std::uint64_t bit(unsigned long long v) {
  return static_cast<std::uint64_t>(v);
}

// nvml.h spells some of these nvmlClocksThrottleReason* only (the hardware slowdowns), the rest
// nvmlClocksEventReason*; the values are the same family of bits.
constexpr std::array kReasons = {
    ThrottleReason{"gpu_idle", bit(nvmlClocksEventReasonGpuIdle), "nothing runs: clocks idle"},
    ThrottleReason{"applications_clocks_setting",
                   bit(nvmlClocksEventReasonApplicationsClocksSetting),
                   "clocks held at the application (or locked) setting"},
    ThrottleReason{"sw_power_cap", bit(nvmlClocksEventReasonSwPowerCap),
                   "the driver holds power under the enforced power limit"},
    ThrottleReason{"hw_slowdown", bit(nvmlClocksThrottleReasonHwSlowdown),
                   "hardware slowdown (clocks halved or worse): temperature, power brake or "
                   "fast power trigger"},
    ThrottleReason{"sync_boost", bit(nvmlClocksEventReasonSyncBoost),
                   "held to the slowest GPU of a sync-boost group"},
    ThrottleReason{"sw_thermal", bit(nvmlClocksEventReasonSwThermalSlowdown),
                   "the driver keeps GPU or memory under its maximum operating temperature"},
    ThrottleReason{"hw_thermal", bit(nvmlClocksThrottleReasonHwThermalSlowdown),
                   "hardware thermal slowdown (clocks halved or worse)"},
    ThrottleReason{"hw_power_brake", bit(nvmlClocksThrottleReasonHwPowerBrakeSlowdown),
                   "external power brake (the system's power supply)"},
    ThrottleReason{"display_clock_setting", bit(nvmlClocksEventReasonDisplayClockSetting),
                   "limited by the display clock setting"},
    ThrottleReason{"board_limit", bit(nvmlClocksEventReasonBoardLimit),
                   "the board's operating limit policy"},
    ThrottleReason{"reliability", bit(nvmlClocksEventReasonReliability), "the reliability policy"},
};

static_assert(
    [] {
      for (std::size_t i = 0; i < kReasons.size(); ++i)
        if (!std::has_single_bit(kReasons[i].bit) ||
            (i > 0 && kReasons[i].bit <= kReasons[i - 1].bit))
          return false;
      return true;
    }(),
    "one bit per reason, in bit order");

}  // namespace

std::span<const ThrottleReason> throttle_reasons() {
  return kReasons;
}

std::string throttle_names(std::uint64_t mask) {
  if (mask == 0) return "none";
  std::string out;
  for (int b = 0; b < 64; ++b) {
    const std::uint64_t m = std::uint64_t{1} << b;
    if ((mask & m) == 0) continue;
    std::string name = "bit_" + std::to_string(b);
    for (const ThrottleReason& r : kReasons)
      if (r.bit == m) name = std::string(r.name);
    out += (out.empty() ? "" : ",") + name;
  }
  return out;
}

std::string throttle_reason_table() {
  std::string out;
  for (const ThrottleReason& r : kReasons) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(r.bit));
    out += (out.empty() ? "" : ",") + std::string(r.name) + ":" + hex;
  }
  return out;
}

}  // namespace tcbench
