#include "tcbench/nvml.hpp"

#include <dlfcn.h>
#include <nvml.h>

#include <cstdio>
#include <cstdlib>

namespace tcbench::nvml {

// The entry points tcbench calls, typed by nvml.h's own declarations. Only the first three are
// required; a library without one of the others (an older driver) answers that call with
// NVML_ERROR_FUNCTION_NOT_FOUND.
struct Library::Api {
  decltype(&nvmlInit_v2) init = nullptr;
  decltype(&nvmlShutdown) shutdown = nullptr;
  decltype(&nvmlDeviceGetHandleByPciBusId_v2) handle_by_pci_bus_id = nullptr;
  decltype(&nvmlDeviceGetClockInfo) clock_info = nullptr;
  decltype(&nvmlDeviceGetMaxClockInfo) max_clock_info = nullptr;
  decltype(&nvmlDeviceGetClock) clock = nullptr;
  decltype(&nvmlDeviceGetPowerUsage) power_usage = nullptr;
  decltype(&nvmlDeviceGetTotalEnergyConsumption) total_energy = nullptr;
  decltype(&nvmlDeviceGetTemperatureV) temperature_v = nullptr;
  decltype(&nvmlDeviceGetCurrentClocksEventReasons) event_reasons = nullptr;
  // The names drivers before R535 export, for the same calls (deprecated in nvml.h 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  decltype(&nvmlDeviceGetTemperature) temperature = nullptr;
  decltype(&nvmlDeviceGetCurrentClocksThrottleReasons) throttle_reasons = nullptr;
#pragma GCC diagnostic pop
  decltype(&nvmlDeviceGetEnforcedPowerLimit) enforced_power_limit = nullptr;
  decltype(&nvmlDeviceGetPowerManagementDefaultLimit) default_power_limit = nullptr;
  decltype(&nvmlDeviceGetPersistenceMode) persistence_mode = nullptr;
  decltype(&nvmlDeviceGetEccMode) ecc_mode = nullptr;
  decltype(&nvmlDeviceGetMigMode) mig_mode = nullptr;
  decltype(&nvmlDeviceSetGpuLockedClocks) set_locked_clocks = nullptr;
  decltype(&nvmlDeviceResetGpuLockedClocks) reset_locked_clocks = nullptr;
};

namespace {

template <typename Fn>
void bind(void* lib, Fn& fn, const char* symbol) {
  fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
}

Status status_of(const char* call, nvmlReturn_t rc) {
  return Status{static_cast<int>(rc), call};
}

Status missing(const char* call) {
  return Status{NVML_ERROR_FUNCTION_NOT_FOUND, call};
}

// Reads one value through `fn(handle, args..., &out)`; `convert` turns the out parameter into
// the result's type.
template <typename T, typename Out, typename Fn, typename Convert, typename... Args>
Result<T> read(const char* call, Fn fn, nvmlDevice_t dev, Convert convert, Args... args) {
  Result<T> r;
  if (fn == nullptr) {
    r.status = missing(call);
    return r;
  }
  Out out{};
  r.status = status_of(call, fn(dev, args..., &out));
  if (r.status.ok()) r.value = convert(out);
  return r;
}

template <typename T>
T same(T v) {
  return v;
}

}  // namespace

std::string status_name(int code) {
  switch (static_cast<nvmlReturn_t>(code)) {
#define TCB_NVML_STATUS_(s) \
  case s:                   \
    return #s;
    TCB_NVML_STATUS_(NVML_SUCCESS)
    TCB_NVML_STATUS_(NVML_ERROR_UNINITIALIZED)
    TCB_NVML_STATUS_(NVML_ERROR_INVALID_ARGUMENT)
    TCB_NVML_STATUS_(NVML_ERROR_NOT_SUPPORTED)
    TCB_NVML_STATUS_(NVML_ERROR_NO_PERMISSION)
    TCB_NVML_STATUS_(NVML_ERROR_ALREADY_INITIALIZED)
    TCB_NVML_STATUS_(NVML_ERROR_NOT_FOUND)
    TCB_NVML_STATUS_(NVML_ERROR_INSUFFICIENT_SIZE)
    TCB_NVML_STATUS_(NVML_ERROR_INSUFFICIENT_POWER)
    TCB_NVML_STATUS_(NVML_ERROR_DRIVER_NOT_LOADED)
    TCB_NVML_STATUS_(NVML_ERROR_TIMEOUT)
    TCB_NVML_STATUS_(NVML_ERROR_IRQ_ISSUE)
    TCB_NVML_STATUS_(NVML_ERROR_LIBRARY_NOT_FOUND)
    TCB_NVML_STATUS_(NVML_ERROR_FUNCTION_NOT_FOUND)
    TCB_NVML_STATUS_(NVML_ERROR_CORRUPTED_INFOROM)
    TCB_NVML_STATUS_(NVML_ERROR_GPU_IS_LOST)
    TCB_NVML_STATUS_(NVML_ERROR_RESET_REQUIRED)
    TCB_NVML_STATUS_(NVML_ERROR_OPERATING_SYSTEM)
    TCB_NVML_STATUS_(NVML_ERROR_LIB_RM_VERSION_MISMATCH)
    TCB_NVML_STATUS_(NVML_ERROR_IN_USE)
    TCB_NVML_STATUS_(NVML_ERROR_MEMORY)
    TCB_NVML_STATUS_(NVML_ERROR_NO_DATA)
    TCB_NVML_STATUS_(NVML_ERROR_VGPU_ECC_NOT_SUPPORTED)
    TCB_NVML_STATUS_(NVML_ERROR_INSUFFICIENT_RESOURCES)
    TCB_NVML_STATUS_(NVML_ERROR_FREQ_NOT_SUPPORTED)
    TCB_NVML_STATUS_(NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
    TCB_NVML_STATUS_(NVML_ERROR_DEPRECATED)
    TCB_NVML_STATUS_(NVML_ERROR_NOT_READY)
    TCB_NVML_STATUS_(NVML_ERROR_GPU_NOT_FOUND)
    TCB_NVML_STATUS_(NVML_ERROR_INVALID_STATE)
    TCB_NVML_STATUS_(NVML_ERROR_RESET_TYPE_NOT_SUPPORTED)
    TCB_NVML_STATUS_(NVML_ERROR_UNKNOWN)
#undef TCB_NVML_STATUS_
  }
  return "NVML_ERROR_" + std::to_string(code);
}

bool Status::not_supported() const {
  return code == NVML_ERROR_NOT_SUPPORTED;
}
bool Status::no_permission() const {
  return code == NVML_ERROR_NO_PERMISSION;
}
bool Status::function_missing() const {
  return code == NVML_ERROR_FUNCTION_NOT_FOUND;
}
std::string Status::describe() const {
  if (function_missing()) return "this NVML has no " + call;
  return call + " returned " + status_name(code);
}

void detail::DlTraits::destroy(void* handle) noexcept {
  if (dlclose(handle) != 0) {
    const char* why = dlerror();
    std::fprintf(stderr, "tcbench: dlclose of the NVML library failed: %s\n",
                 why ? why : "no reason given");
  }
}

std::string library_path() {
  return environment::nvml_library().value_or(std::string(kDriverLibrary));
}

Library::Opened Library::open() {
  return open(library_path());
}

Library::Opened Library::open(const std::string& path) {
  dlerror();
  UniqueHandle<detail::DlTraits> handle(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!handle) {
    const char* why = dlerror();
    return {nullptr, "NVML cannot be loaded (" + std::string(why ? why : path) + ")"};
  }
  auto api = std::make_unique<Api>();
  void* lib = handle.get();
  bind(lib, api->init, "nvmlInit_v2");
  bind(lib, api->shutdown, "nvmlShutdown");
  bind(lib, api->handle_by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
  const char* lacks = api->init == nullptr                   ? "nvmlInit_v2"
                      : api->shutdown == nullptr             ? "nvmlShutdown"
                      : api->handle_by_pci_bus_id == nullptr ? "nvmlDeviceGetHandleByPciBusId_v2"
                                                             : nullptr;
  if (lacks != nullptr)
    return {nullptr, path + " is not a usable NVML library: it has no " + lacks};
  bind(lib, api->clock_info, "nvmlDeviceGetClockInfo");
  bind(lib, api->max_clock_info, "nvmlDeviceGetMaxClockInfo");
  bind(lib, api->clock, "nvmlDeviceGetClock");
  bind(lib, api->power_usage, "nvmlDeviceGetPowerUsage");
  bind(lib, api->total_energy, "nvmlDeviceGetTotalEnergyConsumption");
  bind(lib, api->temperature_v, "nvmlDeviceGetTemperatureV");
  bind(lib, api->temperature, "nvmlDeviceGetTemperature");
  bind(lib, api->event_reasons, "nvmlDeviceGetCurrentClocksEventReasons");
  bind(lib, api->throttle_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  bind(lib, api->enforced_power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  bind(lib, api->default_power_limit, "nvmlDeviceGetPowerManagementDefaultLimit");
  bind(lib, api->persistence_mode, "nvmlDeviceGetPersistenceMode");
  bind(lib, api->ecc_mode, "nvmlDeviceGetEccMode");
  bind(lib, api->mig_mode, "nvmlDeviceGetMigMode");
  bind(lib, api->set_locked_clocks, "nvmlDeviceSetGpuLockedClocks");
  bind(lib, api->reset_locked_clocks, "nvmlDeviceResetGpuLockedClocks");
  const nvmlReturn_t rc = api->init();
  if (rc != NVML_SUCCESS)
    return {nullptr, "NVML cannot be used: " + status_of("nvmlInit_v2", rc).describe()};
  return {std::shared_ptr<const Library>(new Library(path, std::move(handle), std::move(api))), ""};
}

Library::Library(std::string path, UniqueHandle<detail::DlTraits> handle, std::unique_ptr<Api> api)
    : path_(std::move(path)), handle_(std::move(handle)), api_(std::move(api)) {}

Library::~Library() {
  const nvmlReturn_t rc = api_->shutdown();
  if (rc != NVML_SUCCESS)
    std::fprintf(stderr, "tcbench: %s\n", status_of("nvmlShutdown", rc).describe().c_str());
}

Result<Device> Library::device_by_pci_bus_id(const std::string& bus_id) const {
  Result<Device> r;
  nvmlDevice_t dev = nullptr;
  r.status = status_of("nvmlDeviceGetHandleByPciBusId_v2",
                       api_->handle_by_pci_bus_id(bus_id.c_str(), &dev));
  if (r.status.ok()) r.value = Device(shared_from_this(), dev);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Device

Result<unsigned> Device::sm_clock_mhz() const {
  return read<unsigned, unsigned>("nvmlDeviceGetClockInfo", lib_->api().clock_info, handle_,
                                  same<unsigned>, NVML_CLOCK_SM);
}
Result<unsigned> Device::max_sm_clock_mhz() const {
  return read<unsigned, unsigned>("nvmlDeviceGetMaxClockInfo", lib_->api().max_clock_info, handle_,
                                  same<unsigned>, NVML_CLOCK_SM);
}
Result<unsigned> Device::max_graphics_clock_mhz() const {
  return read<unsigned, unsigned>("nvmlDeviceGetMaxClockInfo", lib_->api().max_clock_info, handle_,
                                  same<unsigned>, NVML_CLOCK_GRAPHICS);
}
Result<unsigned> Device::app_sm_clock_mhz() const {
  return read<unsigned, unsigned>("nvmlDeviceGetClock", lib_->api().clock, handle_, same<unsigned>,
                                  NVML_CLOCK_SM, NVML_CLOCK_ID_APP_CLOCK_TARGET);
}
Result<unsigned> Device::default_app_sm_clock_mhz() const {
  return read<unsigned, unsigned>("nvmlDeviceGetClock", lib_->api().clock, handle_, same<unsigned>,
                                  NVML_CLOCK_SM, NVML_CLOCK_ID_APP_CLOCK_DEFAULT);
}
Result<unsigned> Device::power_mw() const {
  return read<unsigned, unsigned>("nvmlDeviceGetPowerUsage", lib_->api().power_usage, handle_,
                                  same<unsigned>);
}
Result<unsigned long long> Device::energy_mj() const {
  return read<unsigned long long, unsigned long long>("nvmlDeviceGetTotalEnergyConsumption",
                                                      lib_->api().total_energy, handle_,
                                                      same<unsigned long long>);
}

Result<int> Device::temperature_c() const {
  const Library::Api& api = lib_->api();
  Result<int> r;
  if (api.temperature_v != nullptr) {
    nvmlTemperature_t t{};
    t.version = nvmlTemperature_v1;
    t.sensorType = NVML_TEMPERATURE_GPU;
    r.status = status_of("nvmlDeviceGetTemperatureV", api.temperature_v(handle_, &t));
    if (r.status.ok()) r.value = t.temperature;
    // A library that knows the name but not this struct version: try the older call.
    if (r.status.code != NVML_ERROR_ARGUMENT_VERSION_MISMATCH || api.temperature == nullptr)
      return r;
  }
  return read<int, unsigned>(
      "nvmlDeviceGetTemperature", api.temperature, handle_,
      [](unsigned v) { return static_cast<int>(v); }, NVML_TEMPERATURE_GPU);
}

Result<unsigned long long> Device::clocks_event_reasons() const {
  const Library::Api& api = lib_->api();
  if (api.event_reasons == nullptr && api.throttle_reasons != nullptr)
    return read<unsigned long long, unsigned long long>("nvmlDeviceGetCurrentClocksThrottleReasons",
                                                        api.throttle_reasons, handle_,
                                                        same<unsigned long long>);
  return read<unsigned long long, unsigned long long>("nvmlDeviceGetCurrentClocksEventReasons",
                                                      api.event_reasons, handle_,
                                                      same<unsigned long long>);
}

Result<unsigned> Device::enforced_power_limit_mw() const {
  return read<unsigned, unsigned>("nvmlDeviceGetEnforcedPowerLimit",
                                  lib_->api().enforced_power_limit, handle_, same<unsigned>);
}
Result<unsigned> Device::default_power_limit_mw() const {
  return read<unsigned, unsigned>("nvmlDeviceGetPowerManagementDefaultLimit",
                                  lib_->api().default_power_limit, handle_, same<unsigned>);
}
Result<bool> Device::persistence_mode() const {
  return read<bool, nvmlEnableState_t>(
      "nvmlDeviceGetPersistenceMode", lib_->api().persistence_mode, handle_,
      [](nvmlEnableState_t s) { return s == NVML_FEATURE_ENABLED; });
}

Result<bool> Device::ecc_enabled() const {
  Result<bool> r;
  const auto fn = lib_->api().ecc_mode;
  if (fn == nullptr) {
    r.status = missing("nvmlDeviceGetEccMode");
    return r;
  }
  nvmlEnableState_t current{}, pending{};
  r.status = status_of("nvmlDeviceGetEccMode", fn(handle_, &current, &pending));
  if (r.status.ok()) r.value = current == NVML_FEATURE_ENABLED;
  return r;
}

Result<bool> Device::mig_enabled() const {
  Result<bool> r;
  const auto fn = lib_->api().mig_mode;
  if (fn == nullptr) {
    r.status = missing("nvmlDeviceGetMigMode");
    return r;
  }
  unsigned current = 0, pending = 0;
  r.status = status_of("nvmlDeviceGetMigMode", fn(handle_, &current, &pending));
  if (r.status.ok()) r.value = current == NVML_DEVICE_MIG_ENABLE;
  return r;
}

Status Device::lock_gpu_clocks(unsigned min_mhz, unsigned max_mhz) const {
  const auto fn = lib_->api().set_locked_clocks;
  if (fn == nullptr) return missing("nvmlDeviceSetGpuLockedClocks");
  return status_of("nvmlDeviceSetGpuLockedClocks", fn(handle_, min_mhz, max_mhz));
}

Status Device::lock_gpu_clocks_to_tdp() const {
  return lock_gpu_clocks(NVML_CLOCK_LIMIT_ID_TDP, NVML_CLOCK_LIMIT_ID_TDP);
}

Status Device::reset_gpu_locked_clocks() const {
  const auto fn = lib_->api().reset_locked_clocks;
  if (fn == nullptr) return missing("nvmlDeviceResetGpuLockedClocks");
  return status_of("nvmlDeviceResetGpuLockedClocks", fn(handle_));
}

}  // namespace tcbench::nvml
