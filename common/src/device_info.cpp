#include "tcbench/device_info.hpp"

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
    if (!pk.supported) continue;
    const std::string key = "peak_" + std::string(name(p));
    kv.emplace_back(key, format_number(pk.denominator()));
    kv.emplace_back(key + "_max_clock", format_number(pk.max_clock));
    kv.emplace_back(key + "_source", pk.datasheet ? "datasheet" : "max-clock");
    ++(pk.datasheet ? datasheet : model);
  }
  kv.emplace_back("peak_source", model == 0 && datasheet > 0 ? "datasheet"
                                 : datasheet == 0            ? "max-clock"
                                                             : "mixed");
  return kv;
}

DeviceInfo require_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    // Clear the sticky error so later calls are not confused by it.
    (void)cudaGetLastError();
    int driver = 0;
    // Without a driver the runtime says "insufficient driver", which reads like a version
    // problem; a driver version of 0 tells the two cases apart.
    if (cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0)
      throw NoDevice(std::string("no CUDA GPU available: no NVIDIA driver is loaded (") +
                     cudaGetErrorName(status) + ")");
    throw NoDevice(std::string("no CUDA GPU available: ") + cudaGetErrorName(status) + " (" +
                   cudaGetErrorString(status) + ")");
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
  info.total_mem_bytes = prop.totalGlobalMem;
  TCB_CUDA(cudaDriverGetVersion(&info.driver_version));
  TCB_CUDA(cudaRuntimeGetVersion(&info.runtime_version));
  info.cublaslt_version = cublasLtGetVersion();
  return info;
}

}  // namespace tcbench
