// The run context's power and clock keys (PowerContext), read through NVML.
#include "tcbench/device_info.hpp"
#include "tcbench/power.hpp"
#include "tcbench/schema.hpp"

#include <cstdio>

namespace tcbench {
namespace {

template <typename T>
std::string text(const nvml::Result<T>& r, std::string (*format)(T)) {
  if (r.ok()) return format(*r.value);
  if (r.status.not_supported()) return "unsupported";
  return "unknown (" + r.status.describe() + ")";
}

std::string watts(unsigned mw) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", watts_from_milliwatts(mw));
  return buf;
}
std::string mhz(unsigned v) {
  return std::to_string(v);
}
std::string enabled(bool on) {
  return on ? "enabled" : "disabled";
}

}  // namespace

PowerContext PowerContext::read(const std::optional<nvml::Device>& device,
                                std::string nvml_status) {
  PowerContext c;
  c.nvml = std::move(nvml_status);
  if (!device) {
    const std::string unknown = "unknown (NVML unavailable)";
    c.power_limit_w = c.power_limit_default_w = c.app_sm_clock_mhz = c.app_sm_clock_default_mhz =
        c.max_sm_clock_mhz = c.persistence_mode = c.ecc_mode = unknown;
    return c;
  }
  c.power_limit_w = text(device->enforced_power_limit_mw(), watts);
  c.power_limit_default_w = text(device->default_power_limit_mw(), watts);
  c.app_sm_clock_mhz = text(device->app_sm_clock_mhz(), mhz);
  c.app_sm_clock_default_mhz = text(device->default_app_sm_clock_mhz(), mhz);
  c.max_sm_clock_mhz = text(device->max_sm_clock_mhz(), mhz);
  c.persistence_mode = text(device->persistence_mode(), enabled);
  c.ecc_mode = text(device->ecc_enabled(), enabled);
  return c;
}

void PowerContext::set_clock_policy(const ClockLock& lock) {
  clock_policy = std::string(name(lock.in_force()));
  clock_policy_requested = std::string(name(lock.requested()));
  clock_policy_note = lock.note();
  locked_sm_clock_mhz = lock.locked();
}

std::vector<std::pair<std::string, std::string>> PowerContext::keys() const {
  return {{"nvml", nvml},
          {"power_limit_w", power_limit_w},
          {"power_limit_default_w", power_limit_default_w},
          {"max_sm_clock_mhz", max_sm_clock_mhz},
          {"app_sm_clock_mhz", app_sm_clock_mhz},
          {"app_sm_clock_default_mhz", app_sm_clock_default_mhz},
          {"locked_sm_clock_mhz", locked_sm_clock_mhz},
          {"persistence_mode", persistence_mode},
          {"ecc_mode", ecc_mode},
          {"clock_policy", clock_policy},
          {"clock_policy_requested", clock_policy_requested},
          {"clock_policy_note", clock_policy_note},
          {"throttle_reasons", throttle_reason_table()}};
}

}  // namespace tcbench
