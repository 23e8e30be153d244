// What tcbench knows about the GPU it runs on, read once per process.
#pragma once

#include "tcbench/error.hpp"
#include "tcbench/peaks.hpp"
#include "tcbench/precision.hpp"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace tcbench {

struct DeviceInfo {
  int ordinal = 0;
  GpuSpec spec;  // name, compute capability, SMs, clocks, bus width
  std::size_t l2_bytes = 0;
  std::size_t total_mem_bytes = 0;
  int driver_version = 0;  // e.g. 13000 for 13.0
  int runtime_version = 0;
  std::size_t cublaslt_version = 0;

  std::string compute_capability() const;  // "9.0"
  int cc() const { return spec.cc_major * 10 + spec.cc_minor; }
  Peak peak(Precision p) const { return tcbench::peak(spec, p); }
  double peak_gbps() const { return peak_memory_gbps(spec); }
  // Bytes free on the device right now (cudaMemGetInfo).
  std::size_t free_mem_bytes() const;
  // The keys of DESIGN Section 6 (without tcbench_version/git_sha), ready for AddCustomContext.
  std::vector<std::pair<std::string, std::string>> context() const;
};

// Reads the current device. Throws NoDevice, with the driver's reason, when there is none:
// this is the one place that decides "no GPU".
DeviceInfo require_device();

// "1.2.3" from an integer version such as 13000 (driver) or 130000 (cuBLASLt).
std::string format_cuda_version(int version);

}  // namespace tcbench
