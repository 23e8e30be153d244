// The one door to NVML, the driver's management library: the device's context (MIG mode, power
// limits, clocks, persistence, ECC), the power sampler and the clock policy all go through it.
//
// NVML is loaded at run time with dlopen, never linked: every binary must start (and list its
// benchmarks) on a machine without a driver. TCBENCH_NVML_LIBRARY names another library to load
// instead of the driver's libnvidia-ml.so.1: the tests load a scripted stand-in through the same
// path. The entry points' types come from the real nvml.h (nvidia-nvml-dev), included by the
// implementation only. Every call's status is checked: a failure is a Status that names the call
// and the status (NVML_ERROR_NO_PERMISSION ...), never a silent zero.
#pragma once

#include "tcbench/environment.hpp"
#include "tcbench/unique_handle.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct nvmlDevice_st;  // nvml.h's opaque device (nvmlDevice_t is a pointer to it)

namespace tcbench::nvml {

inline constexpr std::string_view kLibraryEnv = environment::kNvmlLibrary;
inline constexpr std::string_view kDriverLibrary = "libnvidia-ml.so.1";

// The outcome of one NVML call: code 0 (NVML_SUCCESS) or the nvmlReturn_t it returned.
struct Status {
  int code = 0;
  std::string call;  // "nvmlDeviceGetPowerUsage"
  bool ok() const { return code == 0; }
  bool not_supported() const;     // NVML_ERROR_NOT_SUPPORTED
  bool no_permission() const;     // NVML_ERROR_NO_PERMISSION
  bool function_missing() const;  // NVML_ERROR_FUNCTION_NOT_FOUND: this library lacks the symbol
  // "nvmlDeviceGetPowerUsage returned NVML_ERROR_NOT_SUPPORTED"
  std::string describe() const;
};

// The name of an nvmlReturn_t ("NVML_ERROR_NO_PERMISSION"; "NVML_ERROR_<code>" when unknown).
std::string status_name(int code);

// A value read through NVML, or the Status that says why there is none.
template <typename T>
struct Result {
  std::optional<T> value;
  Status status;
  bool ok() const { return value.has_value(); }
};

class Library;

namespace detail {
struct DlTraits {  // a dlopen handle
  using handle_type = void*;
  static void destroy(void* handle) noexcept;
};
}  // namespace detail

// One GPU as NVML sees it. Copies share the library, which stays loaded and initialized until
// the last copy (and the last Library handle) is gone.
class Device {
 public:
  Result<unsigned> sm_clock_mhz() const;              // nvmlDeviceGetClockInfo(NVML_CLOCK_SM)
  Result<unsigned> max_sm_clock_mhz() const;          // nvmlDeviceGetMaxClockInfo(NVML_CLOCK_SM)
  Result<unsigned> max_graphics_clock_mhz() const;    // ... (NVML_CLOCK_GRAPHICS): what locks set
  Result<unsigned> app_sm_clock_mhz() const;          // nvmlDeviceGetClock(SM, APP_CLOCK_TARGET)
  Result<unsigned> default_app_sm_clock_mhz() const;  // nvmlDeviceGetClock(SM, APP_CLOCK_DEFAULT)
  Result<unsigned> power_mw() const;                  // nvmlDeviceGetPowerUsage, milliwatts
  Result<unsigned long long> energy_mj() const;       // nvmlDeviceGetTotalEnergyConsumption, mJ
  Result<int> temperature_c() const;                  // the GPU die sensor, degrees C
  Result<unsigned long long> clocks_event_reasons() const;  // the throttle reasons' bit mask
  Result<unsigned> enforced_power_limit_mw() const;
  Result<unsigned> default_power_limit_mw() const;
  Result<bool> persistence_mode() const;
  Result<bool> ecc_enabled() const;  // the current ECC mode
  Result<bool> mig_enabled() const;  // the current MIG mode
  // Locked GPU (graphics) clocks: nvmlDeviceSetGpuLockedClocks, needs root.
  Status lock_gpu_clocks(unsigned min_mhz, unsigned max_mhz) const;
  // Locked at the TDP clock (NVML_CLOCK_LIMIT_ID_TDP for both bounds): the base clock.
  Status lock_gpu_clocks_to_tdp() const;
  Status reset_gpu_locked_clocks() const;

 private:
  friend class Library;
  Device(std::shared_ptr<const Library> lib, nvmlDevice_st* handle)
      : lib_(std::move(lib)), handle_(handle) {}
  std::shared_ptr<const Library> lib_;
  nvmlDevice_st* handle_ = nullptr;
};

// The loaded and initialized library: dlopen + nvmlInit_v2, and nvmlShutdown + dlclose when the
// last user lets go.
class Library : public std::enable_shared_from_this<Library> {
 public:
  struct Opened {
    std::shared_ptr<const Library> library;  // null when NVML cannot be used
    std::string why_not;                     // one sentence when it cannot
  };
  // The library TCBENCH_NVML_LIBRARY names, else the driver's libnvidia-ml.so.1.
  static Opened open();
  static Opened open(const std::string& path);

  // The GPU with this PCI bus id ("00000000:17:00.0", as CUDA reports it).
  Result<Device> device_by_pci_bus_id(const std::string& bus_id) const;
  const std::string& path() const { return path_; }

  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  struct Api;  // the entry points, typed from nvml.h (nvml.cpp)
  const Api& api() const { return *api_; }

 private:
  Library(std::string path, UniqueHandle<detail::DlTraits> handle, std::unique_ptr<Api> api);
  std::string path_;
  UniqueHandle<detail::DlTraits> handle_;  // closed after ~Library has shut NVML down
  std::unique_ptr<Api> api_;
};

// The library path open() loads: $TCBENCH_NVML_LIBRARY when set and not empty, else the driver's.
std::string library_path();

}  // namespace tcbench::nvml
