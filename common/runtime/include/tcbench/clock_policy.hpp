// The SM clock policy of a run (--clock-policy): as the driver sets them, locked at the base
// (TDP) clock, or locked at the maximum. Locking goes through NVML's locked-clocks call, which
// needs root; where it is refused the run stays as-is and one sentence says why.
//
// A lock is restored (nvmlDeviceResetGpuLockedClocks) when its ClockLock ends: at the end of the
// run, on an exception, at exit(), and on SIGINT, SIGTERM or SIGHUP through SignalRestorer. NVML
// cannot read a lock set before the run, so a restore means "unlocked", not "as before"; a
// process killed by SIGKILL or a crash cannot restore anything (`nvidia-smi -rgc` does).
#pragma once

#include "tcbench/nvml.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace tcbench {

enum class ClockPolicy { as_is, base, max };
std::string_view name(ClockPolicy p);                                  // "as-is", "base", "max"
std::optional<ClockPolicy> parse_clock_policy(std::string_view text);  // the same words

// Applies a policy in its constructor, restores in its destructor. Not movable: the signal
// watcher and the exit handler refer to the one lock held in the process by its address.
class ClockLock {
 public:
  // `device` is empty when NVML is unavailable; `why_no_nvml` then says why.
  ClockLock(ClockPolicy requested, const std::optional<nvml::Device>& device,
            std::string_view why_no_nvml = "");
  ~ClockLock();
  ClockLock(const ClockLock&) = delete;
  ClockLock& operator=(const ClockLock&) = delete;

  ClockPolicy requested() const { return requested_; }
  ClockPolicy in_force() const { return in_force_; }
  // What happened, one sentence: the lock taken, or why the run stays as-is.
  const std::string& note() const { return note_; }
  // The locked range as the context shows it: "1980" (MHz), "tdp", or "none".
  const std::string& locked() const { return locked_; }
  // Resets the lock once (later calls do nothing); false when NVML refused (it says so on
  // stderr, with the command that resets by hand).
  bool restore() noexcept;

 private:
  ClockPolicy requested_, in_force_ = ClockPolicy::as_is;
  std::string note_, locked_ = "none";
  std::optional<nvml::Device> device_;  // set while a lock is held
};

// From now on SIGINT, SIGTERM and SIGHUP restore the ClockLock that holds a lock (if any) before
// the process ends by that signal, so a parent still sees "killed by SIGTERM". The signals are
// blocked in the calling thread and waited for on a thread of their own, so the restoring runs
// as ordinary code, never inside a signal handler. Call it first thing in main, before any other
// thread starts (threads inherit the mask: CUDA's, the power sampler's); later calls do nothing.
void restore_clocks_on_signals();

}  // namespace tcbench
