// Helpers for tests that need a GPU: they skip, with the reason, where there is none.
#pragma once

#include "tcbench/device_info.hpp"

#include <gtest/gtest.h>

#include <optional>

namespace tcbench::test {

// The current device, or nullopt with `reason` set when there is none.
inline std::optional<DeviceInfo> device_or_reason(std::string& reason) {
  try {
    return require_device();
  } catch (const NoDevice& e) {
    reason = e.what();
    return std::nullopt;
  }
}

}  // namespace tcbench::test

// Declares `dev` (a tcbench::DeviceInfo) or skips the test with the driver's reason.
#define TCB_REQUIRE_GPU(dev)                                                     \
  std::string tcb_skip_reason_;                                                  \
  const auto tcb_dev_opt_ = ::tcbench::test::device_or_reason(tcb_skip_reason_); \
  if (!tcb_dev_opt_) GTEST_SKIP() << tcb_skip_reason_;                           \
  [[maybe_unused]] const ::tcbench::DeviceInfo& dev = *tcb_dev_opt_
