#include "tcbench/clock_policy.hpp"

#include "tcbench/error.hpp"

#include <pthread.h>
#include <signal.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace tcbench {
namespace {

// The one lock held in this process, for the signal watcher and the exit handler.
std::mutex g_mutex;
ClockLock* g_active = nullptr;

void restore_active() noexcept {
  const std::lock_guard lock(g_mutex);
  if (g_active != nullptr) g_active->restore();
}

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

sigset_t watched() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kSignals) sigaddset(&set, s);
  return set;
}

}  // namespace

std::string_view name(ClockPolicy p) {
  switch (p) {
    case ClockPolicy::as_is:
      return "as-is";
    case ClockPolicy::base:
      return "base";
    case ClockPolicy::max:
      return "max";
  }
  return "?";
}

std::optional<ClockPolicy> parse_clock_policy(std::string_view text) {
  for (ClockPolicy p : {ClockPolicy::as_is, ClockPolicy::base, ClockPolicy::max})
    if (text == name(p)) return p;
  return std::nullopt;
}

ClockLock::ClockLock(ClockPolicy requested, const std::optional<nvml::Device>& device,
                     std::string_view why_no_nvml)
    : requested_(requested) {
  if (requested == ClockPolicy::as_is) {
    note_ = "clocks as the driver sets them (no lock requested)";
    return;
  }
  const std::string asked = "--clock-policy=" + std::string(name(requested));
  if (!device) {
    note_ = asked + " needs NVML (" +
            std::string(why_no_nvml.empty() ? "unavailable" : why_no_nvml) +
            "): the run stays as-is";
    return;
  }
  nvml::Status status;
  std::string target;
  if (requested == ClockPolicy::base) {
    status = device->lock_gpu_clocks_to_tdp();
    target = "tdp";
  } else {
    const nvml::Result<unsigned> max = device->max_graphics_clock_mhz();
    if (!max.ok()) {
      note_ = asked + " cannot find the maximum clock (" + max.status.describe() +
              "): the run stays as-is";
      return;
    }
    status = device->lock_gpu_clocks(*max.value, *max.value);
    target = std::to_string(*max.value);
  }
  if (!status.ok()) {
    const std::string why = status.no_permission()   ? "locking GPU clocks needs root"
                            : status.not_supported() ? "this GPU cannot lock its clocks"
                                                     : "NVML refused the lock";
    note_ = asked + ": " + why + " (" + status.describe() + "): the run stays as-is";
    return;
  }
  {
    const std::lock_guard lock(g_mutex);
    if (g_active != nullptr) {
      (void)device->reset_gpu_locked_clocks();
      throw InvalidArgument("a second clock lock in one process: only one run may hold one");
    }
    g_active = this;
  }
  static const bool at_exit = [] { return std::atexit(restore_active) == 0; }();
  (void)at_exit;
  device_ = device;
  in_force_ = requested;
  locked_ = target;
  note_ = "SM clocks locked at " + (target == "tdp" ? "the TDP (base) clock" : target + " MHz") +
          " with nvmlDeviceSetGpuLockedClocks; unlocked again at exit";
}

ClockLock::~ClockLock() {
  const std::lock_guard lock(g_mutex);
  if (g_active == this) g_active = nullptr;
  restore();
}

bool ClockLock::restore() noexcept {
  if (!device_) return true;
  const nvml::Status status = device_->reset_gpu_locked_clocks();
  device_.reset();
  if (status.ok()) return true;
  std::fprintf(stderr,
               "tcbench: the SM clocks are still locked (%s); unlock them with "
               "'nvidia-smi --reset-gpu-clocks'\n",
               status.describe().c_str());
  return false;
}

void restore_clocks_on_signals() {
  static std::once_flag once;
  std::call_once(once, [] {
    const sigset_t set = watched();
    const int rc = pthread_sigmask(SIG_BLOCK, &set, nullptr);
    if (rc != 0)
      throw Error(std::string("pthread_sigmask failed: ") + std::strerror(rc) +
                  "; clocks could not be restored on a signal");
    std::thread([set] {
      int sig = 0;
      while (sigwait(&set, &sig) != 0) {
      }
      {
        const std::lock_guard lock(g_mutex);
        if (g_active != nullptr && g_active->restore())
          std::fprintf(stderr, "tcbench: %s: the SM clocks are unlocked again\n", signal_name(sig));
      }
      // End the way the signal would have ended the process.
      std::signal(sig, SIG_DFL);
      sigset_t one;
      sigemptyset(&one);
      sigaddset(&one, sig);
      pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
      raise(sig);
      std::_Exit(128 + sig);  // a disposition that does not end the process (SIG_IGN inherited)
    }).detach();
  });
}

}  // namespace tcbench
