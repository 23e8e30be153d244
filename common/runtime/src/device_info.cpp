#include "tcbench/device_info.hpp"

#include "tcbench/build_info.hpp"
#include "tcbench/error.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdio>

namespace tcbench {

std::string DeviceInfo::compute_capability() const {
  return std::to_string(spec.cc_major) + "." + std::to_string(spec.cc_minor);
}

std::size_t DeviceInfo::free_mem_bytes() const {
  std::size_t free_bytes = 0, total_bytes = 0;
  TCB_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

std::string format_cuda_version(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

static std::string format_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::vector<std::pair<std::string, std::string>> DeviceInfo::context() const {
  std::vector<std::pair<std::string, std::string>> kv = {
      {"gpu_name", spec.name},
      {"gpu_ordinal", std::to_string(ordinal)},
      {"gpu_pci_bus_id", pci_bus_id.empty() ? "unknown" : pci_bus_id},
      {"gpu_uuid", uuid.empty() ? "unknown" : uuid},
      {"gpu_mig_mode", mig_mode},
      {"compute_capability", compute_capability()},
      {"sm_count", std::to_string(spec.sm_count)},
      {"sm_clock_mhz", format_number(spec.sm_clock_mhz)},
      {"mem_clock_mhz", format_number(spec.mem_clock_mhz)},
      {"mem_bus_bits", std::to_string(spec.mem_bus_bits)},
      {"l2_bytes", std::to_string(l2_bytes)},
      {"driver_version", format_cuda_version(driver_version)},
      {"cuda_runtime", format_cuda_version(runtime_version)},
      {"cublaslt_version", std::to_string(cublaslt_version)},
      {"peak_gbps", format_number(peak_gbps())},
  };
  // pct_of_peak divides by the datasheet figure for known products (comparable with published
  // numbers) and by the max-clock model otherwise; the result file says which, per precision and
  // for the run as a whole ("mixed" when a datasheet lists only some precisions).
  int datasheet = 0, model = 0;
  for (Precision p : kAllPrecisions) {
    const Peak pk = peak(p);
    const std::string key = "peak_" + std::string(name(p));
    if (!pk.supported) {
      // Said explicitly, so a reader of the file can tell "this GPU lacks it" from "not measured".
      kv.emplace_back(key, "0");
      kv.emplace_back(key + "_max_clock", "0");
      kv.emplace_back(key + "_source", "none");
      continue;
    }
    kv.emplace_back(key, format_number(pk.denominator()));
    kv.emplace_back(key + "_max_clock", format_number(pk.max_clock));
    kv.emplace_back(key + "_source", pk.datasheet ? "datasheet" : "max-clock");
    ++(pk.datasheet ? datasheet : model);
  }
  kv.emplace_back("peak_source", model == 0 && datasheet > 0 ? "datasheet"
                                 : datasheet == 0            ? "max-clock"
                                                             : "mixed");
  for (auto& item : power.keys()) kv.push_back(std::move(item));
  return kv;
}

DeviceCountFailure classify_device_count_failure(cudaError_t status, int driver_version) {
  const std::string name = cudaGetErrorName(status);
  // Without a driver the runtime says "insufficient driver", which reads like a version
  // problem; a driver version of 0 tells the two cases apart.
  if (status == cudaErrorNoDevice)
    return {true, "no CUDA GPU available: the driver sees no device (" + name +
                      "; check CUDA_VISIBLE_DEVICES)"};
  if (driver_version == 0)
    return {true, "no CUDA GPU available: no NVIDIA driver is loaded (" + name + ")"};
  switch (status) {
    case cudaErrorInsufficientDriver:
      return {false, "the NVIDIA driver supports CUDA " + format_cuda_version(driver_version) +
                         "; tcbench needs CUDA 13.0 (driver R580 or newer): update the driver (" +
                         name + ")"};
    case cudaErrorSystemDriverMismatch:
      return {false,
              "the NVIDIA kernel module and the user-space driver library have different "
              "versions (usually after a driver update without a reboot): reboot or "
              "reinstall the driver (" +
                  name + ")"};
    case cudaErrorSystemNotReady:
      return {false,
              "the GPU system is not ready; on NVSwitch systems start the NVIDIA fabric "
              "manager (systemctl start nvidia-fabricmanager) (" +
                  name + ")"};
    case cudaErrorCompatNotSupportedOnDevice:
      return {false,
              "the CUDA forward-compatibility package does not support this GPU: install "
              "a driver of R580 or newer (" +
                  name + ")"};
    case cudaErrorDevicesUnavailable:
      return {false, "every GPU is busy or in exclusive-process mode held by another process (" +
                         name + ")"};
    default:
      return {false, std::string("the CUDA runtime cannot use the GPU: ") +
                         cudaGetErrorString(status) + " (" + name + ")"};
  }
}

namespace {

std::string format_uuid(const cudaUUID_t& u) {
  char buf[64];
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  std::snprintf(buf, sizeof buf,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return buf;
}

// MIG mode through NVML: "enabled", "disabled", "unsupported" (no MIG on this GPU) or "unknown".
std::string mig_mode_of(const nvml::Device& dev) {
  const nvml::Result<bool> mig = dev.mig_enabled();
  if (mig.ok()) return *mig.value ? "enabled" : "disabled";
  return mig.status.not_supported() ? "unsupported" : "unknown";
}

// The GPU CUDA calls `pci_bus_id` through NVML, loaded at run time (nvml.hpp): a sentence when
// there is none, so the context says why its NVML keys are unknown.
std::pair<std::optional<nvml::Device>, std::string> open_nvml(const std::string& pci_bus_id) {
  const nvml::Library::Opened opened = nvml::Library::open();
  if (!opened.library) return {std::nullopt, "unavailable: " + opened.why_not};
  if (pci_bus_id.empty())
    return {std::nullopt, "unavailable: CUDA gave no PCI bus id to find the GPU by"};
  nvml::Result<nvml::Device> dev = opened.library->device_by_pci_bus_id(pci_bus_id);
  if (!dev.ok()) return {std::nullopt, "unavailable: " + dev.status.describe()};
  return {std::move(dev.value), "available (" + opened.library->path() + ")"};
}

}  // namespace

DeviceInfo require_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // clear the error so later calls are not confused by it
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    const DeviceCountFailure f = classify_device_count_failure(status, driver);
    if (f.skip) throw NoDevice(f.sentence);
    throw DeviceUnusable(f.sentence);
  }
  if (count == 0) throw NoDevice("no CUDA GPU available: the driver reports 0 devices");

  DeviceInfo info;
  TCB_CUDA(cudaGetDevice(&info.ordinal));
  const int dev = info.ordinal;
  cudaDeviceProp prop{};
  TCB_CUDA(cudaGetDeviceProperties(&prop, dev));
  auto attr = [dev](cudaDeviceAttr a) {
    int v = 0;
    TCB_CUDA(cudaDeviceGetAttribute(&v, a, dev));
    return v;
  };
  info.spec.name = prop.name;
  info.spec.cc_major = attr(cudaDevAttrComputeCapabilityMajor);
  info.spec.cc_minor = attr(cudaDevAttrComputeCapabilityMinor);
  info.spec.sm_count = attr(cudaDevAttrMultiProcessorCount);
  // CUDA 13 removed clockRate/memoryClockRate from cudaDeviceProp; the attributes remain (kHz).
  info.spec.sm_clock_mhz = attr(cudaDevAttrClockRate) / 1000.0;
  info.spec.mem_clock_mhz = attr(cudaDevAttrMemoryClockRate) / 1000.0;
  info.spec.mem_bus_bits = attr(cudaDevAttrGlobalMemoryBusWidth);
  info.l2_bytes = static_cast<std::size_t>(attr(cudaDevAttrL2CacheSize));
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) == cudaSuccess) info.pci_bus_id = bus;
  info.uuid = format_uuid(prop.uuid);
  auto [nvml_device, nvml_status] = open_nvml(info.pci_bus_id);
  info.nvml = std::move(nvml_device);
  if (info.nvml) info.mig_mode = mig_mode_of(*info.nvml);
  info.power = PowerContext::read(info.nvml, std::move(nvml_status));
  TCB_CUDA(cudaDriverGetVersion(&info.driver_version));
  TCB_CUDA(cudaRuntimeGetVersion(&info.runtime_version));
  info.cublaslt_version = cublasLtGetVersion();
  return info;
}

std::vector<std::pair<std::string, std::string>> run_context(const DeviceInfo& device, bool quick) {
  std::vector<std::pair<std::string, std::string>> kv = {
      {"tcbench_version", std::string(tcbench_version())},
      {"git_sha", std::string(git_sha())},
      {"tcbench_quick", quick ? "true" : "false"}};
  for (auto& item : device.context()) kv.push_back(std::move(item));
  return kv;
}

}  // namespace tcbench
