// A stand-in for the driver's libnvidia-ml.so.1, loaded by tcbench through TCBENCH_NVML_LIBRARY
// (the same dlopen path as the real one), so the sampler, the context and the clock policy are
// tested on machines without a GPU. It exports the entry points tcbench calls, with nvml.h's
// signatures, and plays the GPU that TCBENCH_FAKE_NVML describes (comma-separated key=value;
// read at nvmlInit_v2):
//
//   sm_mhz=1980 power_mw=350000 temp_c=60 reasons=0     a steady GPU
//   throttle_after=N                                    after N SM-clock reads the GPU throttles:
//     throttle_mhz=1500 throttle_power_mw=250000 throttle_temp_c=88 throttle_reasons=0x8
//   energy=counter|unsupported                          nvmlDeviceGetTotalEnergyConsumption
//   lock=ok|no_permission|not_supported                 nvmlDeviceSetGpuLockedClocks
//   init=ok|driver_not_loaded  max_mhz=1980  app_mhz=1755  app_default_mhz=1755
//   power_limit_mw=700000 default_power_limit_mw=700000 persistence=1 ecc=1
//   mig=disabled|enabled|unsupported
//
// The energy counter integrates the current power over real time, as a GPU's does. Calls that
// change the GPU (locks, resets, init, shutdown) are appended to the file TCBENCH_FAKE_NVML_LOG
// names, one line each, so a test can check that a lock was undone. Built a second time with
// TCBENCH_FAKE_NVML_NO_ENERGY for an older NVML that lacks the energy entry point altogether.
#include <nvml.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

struct Gpu {
  std::map<std::string, std::string> script;
  unsigned long long clock_reads = 0;
  double energy_mj = 0;
  std::chrono::steady_clock::time_point last;
  bool initialized = false;
};

std::mutex g_mutex;
Gpu g_gpu;
nvmlDevice_st* const kHandle = reinterpret_cast<nvmlDevice_st*>(0x600d);

std::string get(const char* key, const char* fallback) {
  const auto it = g_gpu.script.find(key);
  return it == g_gpu.script.end() ? fallback : it->second;
}
unsigned long long number(const char* key, unsigned long long fallback) {
  const auto it = g_gpu.script.find(key);
  return it == g_gpu.script.end() ? fallback : std::strtoull(it->second.c_str(), nullptr, 0);
}

bool throttled() {
  return g_gpu.script.count("throttle_after") != 0 &&
         g_gpu.clock_reads > number("throttle_after", 0);
}
unsigned long long current(const char* key, const char* throttled_key,
                           unsigned long long fallback) {
  const unsigned long long steady = number(key, fallback);
  return throttled() ? number(throttled_key, steady) : steady;
}

// Energy since the last call at the power in force then (the power changes only at a read).
void advance() {
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - g_gpu.last).count();
  g_gpu.energy_mj +=
      static_cast<double>(current("power_mw", "throttle_power_mw", 350000)) * seconds;
  g_gpu.last = now;
}

void log(const std::string& line) {
  const char* path = std::getenv("TCBENCH_FAKE_NVML_LOG");
  if (path == nullptr) return;
  if (FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
  }
}

nvmlReturn_t device_call(nvmlDevice_t dev) {
  if (!g_gpu.initialized) return NVML_ERROR_UNINITIALIZED;
  if (dev != kHandle) return NVML_ERROR_INVALID_ARGUMENT;
  advance();
  return NVML_SUCCESS;
}

#define TCB_FAKE_DEVICE_CALL_(dev)          \
  const std::lock_guard tcb_lock_(g_mutex); \
  if (nvmlReturn_t rc = device_call(dev); rc != 0) return rc

}  // namespace

extern "C" {

nvmlReturn_t DECLDIR nvmlInit_v2(void) {
  const std::lock_guard lock(g_mutex);
  g_gpu = Gpu{};
  const char* script = std::getenv("TCBENCH_FAKE_NVML");
  std::string text = script ? script : "";
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const std::size_t eq = item.find('=');
    if (eq != std::string::npos) g_gpu.script[item.substr(0, eq)] = item.substr(eq + 1);
    start = end + 1;
  }
  if (get("init", "ok") == "driver_not_loaded") return NVML_ERROR_DRIVER_NOT_LOADED;
  g_gpu.initialized = true;
  g_gpu.last = std::chrono::steady_clock::now();
  log("init");
  return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlShutdown(void) {
  const std::lock_guard lock(g_mutex);
  if (!g_gpu.initialized) return NVML_ERROR_UNINITIALIZED;
  g_gpu.initialized = false;
  log("shutdown");
  return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, nvmlDevice_t* device) {
  const std::lock_guard lock(g_mutex);
  if (!g_gpu.initialized) return NVML_ERROR_UNINITIALIZED;
  if (bus_id == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *device = kHandle;
  return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                            unsigned int* clock) {
  TCB_FAKE_DEVICE_CALL_(device);
  if (type != NVML_CLOCK_SM && type != NVML_CLOCK_GRAPHICS) return NVML_ERROR_NOT_SUPPORTED;
  ++g_gpu.clock_reads;
  *clock = static_cast<unsigned>(current("sm_mhz", "throttle_mhz", 1980));
  return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t,
                                               unsigned int* clock) {
  TCB_FAKE_DEVICE_CALL_(device);
  *clock = static_cast<unsigned>(number("max_mhz", 1980));
  return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetClock(nvmlDevice_t device, nvmlClockType_t, nvmlClockId_t id,
                                        unsigned int* mhz) {
  TCB_FAKE_DEVICE_CALL_(device);
  if (id == NVML_CLOCK_ID_APP_CLOCK_TARGET)
    *mhz = static_cast<unsigned>(number("app_mhz", 1755));
  else if (id == NVML_CLOCK_ID_APP_CLOCK_DEFAULT)
    *mhz = static_cast<unsigned>(number("app_default_mhz", 1755));
  else
    return NVML_ERROR_NOT_SUPPORTED;
  return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  TCB_FAKE_DEVICE_CALL_(device);
  *power = static_cast<unsigned>(current("power_mw", "throttle_power_mw", 350000));
  return NVML_SUCCESS;
}

#ifndef TCBENCH_FAKE_NVML_NO_ENERGY
nvmlReturn_t DECLDIR nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                                         unsigned long long* energy) {
  TCB_FAKE_DEVICE_CALL_(device);
  if (get("energy", "counter") != "counter") return NVML_ERROR_NOT_SUPPORTED;
  *energy = static_cast<unsigned long long>(g_gpu.energy_mj);
  return NVML_SUCCESS;
}
#endif

nvmlReturn_t DECLDIR nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t* t) {
  TCB_FAKE_DEVICE_CALL_(device);
  if (t->version != nvmlTemperature_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  t->temperature = static_cast<int>(current("temp_c", "throttle_temp_c", 60));
  return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                            unsigned long long* reasons) {
  TCB_FAKE_DEVICE_CALL_(device);
  *reasons = number("reasons", 0) | (throttled() ? number("throttle_reasons", 0x8) : 0);
  return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit) {
  TCB_FAKE_DEVICE_CALL_(device);
  *limit = static_cast<unsigned>(number("power_limit_mw", 700000));
  return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device,
                                                              unsigned int* limit) {
  TCB_FAKE_DEVICE_CALL_(device);
  *limit = static_cast<unsigned>(number("default_power_limit_mw", 700000));
  return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  TCB_FAKE_DEVICE_CALL_(device);
  *mode = number("persistence", 1) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t* current_mode,
                                          nvmlEnableState_t* pending) {
  TCB_FAKE_DEVICE_CALL_(device);
  *current_mode = *pending = number("ecc", 1) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current_mode,
                                          unsigned int* pending) {
  TCB_FAKE_DEVICE_CALL_(device);
  const std::string mig = get("mig", "disabled");
  if (mig == "unsupported") return NVML_ERROR_NOT_SUPPORTED;
  *current_mode = *pending = mig == "enabled" ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
  return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned int min_mhz,
                                                  unsigned int max_mhz) {
  TCB_FAKE_DEVICE_CALL_(device);
  const std::string lock = get("lock", "ok");
  auto bound = [](unsigned v) {
    return v == NVML_CLOCK_LIMIT_ID_TDP ? std::string("tdp") : std::to_string(v);
  };
  log("lock " + bound(min_mhz) + " " + bound(max_mhz) + " -> " + lock);
  if (lock == "no_permission") return NVML_ERROR_NO_PERMISSION;
  if (lock == "not_supported") return NVML_ERROR_NOT_SUPPORTED;
  return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device) {
  TCB_FAKE_DEVICE_CALL_(device);
  log("reset");
  return NVML_SUCCESS;
}

// Not NVML: how many SM-clock reads the stand-in has answered since nvmlInit_v2, so a test can
// wait for the throttling point deterministically.
unsigned long long tcbench_fake_nvml_clock_reads(void) {
  const std::lock_guard lock(g_mutex);
  return g_gpu.clock_reads;
}

}  // extern "C"
